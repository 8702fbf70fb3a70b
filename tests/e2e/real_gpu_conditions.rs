//! End-to-end: the machines students and instructors really have, reproduced by the emulator
//! posing as a real GPU (`GPU_LABS_EMULATOR_AS_REAL=1`) in a given condition
//! (`GPU_LABS_EMULATOR_CONDITIONS`): the driver without the toolkit's NVRTC or cuBLAS, a
//! driver older than NVRTC. `--gpu real` stops with one line that says what to install;
//! `--gpu auto` says the same line and grades on the emulator.

use gpu_labs_e2e::{grade_with_env, solution};

/// `grader grade solution --gpu MODE` with the emulator posing as a GPU in `condition`.
fn grade_in(mode: &str, condition: &str) -> gpu_labs_e2e::Graded {
    grade_with_env(
        &solution(),
        &["--gpu", mode],
        &[
            ("GPU_LABS_EMULATOR_AS_REAL", "1"),
            ("GPU_LABS_EMULATOR_CONDITIONS", condition),
        ],
    )
}

#[test]
fn a_driver_without_nvrtc_stops_gpu_real_with_what_to_install() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_in("real", "no-nvrtc");
    assert_eq!(g.code, Some(2), "{}", g.stderr);
    assert!(
        g.stderr
            .contains("libnvrtc.so not found: install the CUDA toolkit's NVRTC")
            && g.stderr.contains("GPU_LABS_LIBNVRTC")
            && g.stderr.contains("--gpu emulate")
            && g.stderr.lines().filter(|l| l.contains("libnvrtc")).count() == 1,
        "{}",
        g.stderr
    );
}

#[test]
fn a_driver_older_than_nvrtc_is_named_as_such() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_in("real", "old-driver");
    assert_eq!(g.code, Some(2), "{}", g.stderr);
    assert!(
        g.stderr.contains("is older than NVRTC") && g.stderr.contains("update the driver"),
        "{}",
        g.stderr
    );
}

#[test]
fn auto_falls_back_to_the_emulator_saying_why_the_gpu_is_not_used() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_in("auto", "no-cublas");
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(
        g.stderr.contains(
            "GPU items on: emulated GPU (the real GPU is not usable: libcublas.so not found"
        ),
        "{}",
        g.stderr
    );
    // The emulator itself has every library: the GPU items are graded, cuBLAS included.
    for id in ["gpu_correct", "cublas_correct", "gpu_timer_sync"] {
        assert_eq!(
            g.item(id)["score"],
            g.item(id)["max_score"],
            "{id}: {}",
            g.output(id)
        );
    }
    assert!(
        g.item("gpu_speedup")["name"]
            .as_str()
            .is_some_and(|o| o.contains("not graded here")),
        "no real GPU, no GPU speedup: {}",
        g.item("gpu_speedup")
    );
}

#[test]
fn a_gpu_that_passes_its_trial_is_used() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // One item is enough to see the backend chosen (the whole lab would time the emulator's
    // GPU speedup at 1024³ for nothing).
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", &["gpu_correct"]);
    let g = grade_with_env(
        &solution(),
        &[
            "--gpu",
            "auto",
            "--assignment",
            rubric.to_str().expect("UTF-8"),
        ],
        &[
            ("GPU_LABS_EMULATOR_AS_REAL", "1"),
            ("GPU_LABS_EMULATOR_CONDITIONS", ""),
        ],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(
        g.stderr.contains("posing as a real GPU"),
        "auto picks a GPU that passed: {}",
        g.stderr
    );
}

#[test]
fn on_a_real_gpu_the_tracer_catches_host_work_as_the_emulator_does() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The emulator posing as a GPU stands for the real driver and cuBLAS; the tracer stands
    // in front of it as it would in front of them, and its counts are all the grader sees.
    let dir = gpu_labs_e2e::faulty_copy_edits(&solution(), "src/gpu.rs", &gpu_labs_e2e::HOST_WORK);
    let ids = ["cublas_correct", "gpu_correct", "gpu_tiled_correct"];
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", &ids);
    let rubric = rubric.to_str().expect("a UTF-8 path");
    let real = [("GPU_LABS_EMULATOR_AS_REAL", "1")];
    let g = grade_with_env(
        dir.path(),
        &["--gpu", "real", "--assignment", rubric],
        &real,
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(g.stderr.contains("; device work traced"), "{}", g.stderr);
    gpu_labs_e2e::assert_lost(&g, &ids);
    gpu_labs_e2e::assert_says(&g, "gpu_correct", "launched no kernel");
    gpu_labs_e2e::assert_says(
        &g,
        "gpu_tiled_correct",
        "were never copied back from GPU memory",
    );
    gpu_labs_e2e::assert_says(&g, "cublas_correct", "only passed through it");

    // With the tracer switched off, the same copy passes: what caught it was the tracer.
    let untraced = [
        ("GPU_LABS_EMULATOR_AS_REAL", "1"),
        ("GPU_LABS_TRACER", "off"),
    ];
    let g = grade_with_env(
        dir.path(),
        &["--gpu", "real", "--assignment", rubric],
        &untraced,
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(
        g.stderr
            .contains("device work not traced: tracing is off (GPU_LABS_TRACER=off)"),
        "{}",
        g.stderr
    );
    gpu_labs_e2e::assert_lost(&g, &[]);
}

#[test]
fn on_a_gpu_as_fast_as_its_launches_a_missing_synchronize_is_still_told() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // `fast-device`: each launch costs the host 2 ms, about what a small product costs the
    // emulated device, as a 10 µs product on a fast GPU is near its launch overhead. The
    // check grows the product until the device is busy 20 ms, behind work it queued itself,
    // so the margin does not rest on the launch being slow or fast.
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", &["gpu_timer_sync"]);
    let args = [
        "--gpu",
        "real",
        "--assignment",
        rubric.to_str().expect("UTF-8"),
    ];
    let env = [
        ("GPU_LABS_EMULATOR_AS_REAL", "1"),
        ("GPU_LABS_EMULATOR_CONDITIONS", "fast-device"),
    ];
    let g = grade_with_env(&solution(), &args, &env);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(g.score("gpu_timer_sync"), 3.0, "{}", g.stdout);

    let dir = gpu_labs_e2e::faulty_copy_of(
        &solution(),
        "src/gpu.rs",
        "launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;",
        "launch_product(stream, &kernel, (a, b, c), shape)?;",
    );
    let g = grade_with_env(dir.path(), &args, &env);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    gpu_labs_e2e::assert_lost(&g, &["gpu_timer_sync"]);
    gpu_labs_e2e::assert_says(&g, "gpu_timer_sync", "stopped before the GPU finished");
}
