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

/// The speedup `grader grade` reported for `fast_speedup` (`… 1.02× faster than naive`).
fn speedup_of(g: &gpu_labs_e2e::Graded) -> f64 {
    let output = g.output("fast_speedup");
    output
        .split('×')
        .next()
        .and_then(|head| head.rsplit(|c: char| c.is_whitespace() || c == '(').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("a speedup in: {output}"))
}

/// Code that runs before `main` (a constructor, which the source rules refuse: they are
/// turned off here, as an attacker who found a way past them would have them) starts threads
/// that spin for the process's whole life. In the student's binary they cannot slow the
/// yardstick, which official grading runs in the grader's own binary: a naive loop passed off
/// as `matmul_fast` stays about 1× with or without them.
#[test]
fn code_before_main_cannot_slow_the_yardstick() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let naive_as_fast = (
        "pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        "pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n    \
         return matmul_naive(a, b);\n    #[allow(unreachable_code)]\n",
    );
    let spinners = (
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        "#[used]\n#[link_section = \".init_array\"]\nstatic SPIN: extern \"C\" fn() = {\n    \
         extern \"C\" fn spin() {\n        for _ in 0..4 {\n            \
         std::thread::spawn(|| loop {\n                std::hint::spin_loop();\n            \
         });\n        }\n    }\n    spin\n};\n\n\
         pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
    );
    let control = faulty_copy_edits(&solution(), "src/lib.rs", &[naive_as_fast]);
    let attack = faulty_copy_edits(&solution(), "src/lib.rs", &[naive_as_fast, spinners]);
    let args = ["--gpu", "off", "--only", "fast_speedup", "--seed", "7"];
    let scan_off = [("GPU_LABS_SOURCE_SCAN", "off-for-tests")];
    let honest = gpu_labs_e2e::grade_with_env(control.path(), &args, &scan_off);
    let hostile = gpu_labs_e2e::grade_with_env(attack.path(), &args, &scan_off);
    assert_eq!(hostile.code, Some(0), "{}", hostile.stderr);
    let (h, x) = (speedup_of(&honest), speedup_of(&hostile));
    eprintln!("naive as matmul_fast: {h:.2}× alone, {x:.2}× with spinners started before main");
    assert!(h < 2.0, "the control is a naive loop: {h}×");
    assert!(
        x < 2.0,
        "spinners before main bought a speedup: {x}× (alone {h}×)"
    );
    assert_eq!(
        hostile.score("fast_speedup"),
        0.0,
        "{}",
        hostile.output("fast_speedup")
    );
}
