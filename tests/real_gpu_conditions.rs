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
    let g = grade_in("auto", "");
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(
        g.stderr.contains("posing as a real GPU"),
        "auto picks a GPU that passed: {}",
        g.stderr
    );
}
