//! End-to-end: the worker only computes, the supervisor decides (issue 33). A submission whose
//! code changes the worker's own switches at run time (`std::env::set_var` is safe Rust in
//! edition 2021) changes nothing the grade depends on: the emulator's race check and the
//! device counting were taken before its first instruction; its System V objects are refused
//! and none outlives it; the speed item's yardstick runs in the grader's own binary. The honest
//! control (the solution, graded on the same items) keeps full marks.

use gpu_labs_e2e::{faulty_copy_edits, grade, ipc_objects, solution};

/// The items both submissions are graded on: the GPU products (host work, a racy kernel) and
/// the CPU items (System V objects, the speed item's yardstick).
const ITEMS: &[&str] = &[
    "naive_correct",
    "fast_speedup",
    "gpu_correct",
    "gpu_tiled_correct",
];

/// `--only ID` for every item of [`ITEMS`], with the emulator.
fn only() -> Vec<&'static str> {
    let mut args = vec!["--gpu", "emulate"];
    for id in ITEMS {
        args.extend(["--only", id]);
    }
    args
}

#[test]
fn switches_flipped_at_run_time_change_no_grade() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let before = ipc_objects();
    let hostile = faulty_copy_edits(
        &solution(),
        "src/gpu.rs",
        &[
            // Host work passed off as GPU work, with the device counting asked off.
            (
                "    product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"))\n",
                "    std::env::set_var(\"GPU_LABS_EMULATOR_POSING\", \"1\");\n    \
                 std::env::set_var(\"GPU_LABS_EMULATOR_AS_REAL\", \"1\");\n    let _ = stream;\n    \
                 Ok(crate::matmul_naive(a, b))\n",
            ),
            // A racy tiled kernel (no barrier before the next tile overwrites the shared
            // tiles), with the race check asked off first.
            (
                "        }\n        __syncthreads();\n    }\n",
                "        }\n    }\n",
            ),
            (
                "    product_on_gpu(stream, a, b, (TILED_KERNEL, \"matmul_tiled\"))\n",
                "    std::env::set_var(\"GPU_LABS_EMULATOR_RACECHECK\", \"0\");\n    \
                 std::env::set_var(\"GPU_LABS_EMULATOR_CONDITIONS\", \"fast-device\");\n    \
                 product_on_gpu(stream, a, b, (TILED_KERNEL, \"matmul_tiled\"))\n",
            ),
        ],
    );
    // The CPU product makes kernel-persistent objects with a program it starts (a segment
    // and a message queue), then computes honestly.
    let lib = hostile.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("lib.rs");
    let naive = "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n";
    assert_eq!(text.matches(naive).count(), 1);
    std::fs::write(
        &lib,
        text.replace(
            naive,
            &format!(
                "{naive}    let _ = std::process::Command::new(\"ipcmk\").args([\"-M\", \
                 \"67108864\"]).status();\n    let _ = \
                 std::process::Command::new(\"ipcmk\").arg(\"-Q\").status();\n"
            ),
        ),
    )
    .expect("write lib.rs");

    let g = grade(hostile.path(), &only());
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(g.score("gpu_correct"), 0.0, "{}", g.output("gpu_correct"));
    let says = g.output("gpu_correct");
    assert!(
        says.contains("launched no kernel") || says.contains("cannot trust"),
        "{says}"
    );
    assert_eq!(
        g.score("gpu_tiled_correct"),
        0.0,
        "{}",
        g.output("gpu_tiled_correct")
    );
    assert!(
        g.output("gpu_tiled_correct").contains("data race"),
        "{}",
        g.output("gpu_tiled_correct")
    );
    // Its honest product still counts: the refused objects cost nothing else.
    assert!(
        g.score("naive_correct") > 0.0,
        "{}",
        g.output("naive_correct")
    );
    let after = ipc_objects();
    let left: Vec<_> = after.iter().filter(|l| !before.contains(l)).collect();
    assert!(
        left.is_empty(),
        "IPC objects outlived the grading: {left:?}"
    );

    let honest = grade(&solution(), &only());
    assert_eq!(honest.code, Some(0), "{}", honest.stderr);
    for id in ITEMS {
        let item = honest.item(id);
        assert_eq!(
            item["score"].as_f64(),
            item["max_score"].as_f64(),
            "{id}: {}",
            honest.output(id)
        );
    }
    // The maximum is the same for both: nothing a worker said took an item out of it.
    assert_eq!(maximum(&g), maximum(&honest));
}

/// The sum of the items' maximums in a report.
fn maximum(g: &gpu_labs_e2e::Graded) -> f64 {
    g.json["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .filter_map(|t| t["max_score"].as_f64())
        .sum()
}
