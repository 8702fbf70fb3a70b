//! End-to-end: `scripts/real-gpu-check`, the check a maintainer runs once on a GPU machine,
//! built and run here with the emulator posing as the GPU: it passes on the solution and a
//! faulty copy, shows the synchronization check's numbers, and reports a surprise.

use std::process::Command;

#[test]
fn the_real_gpu_check_passes_here_and_reports_a_surprise() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let kit = tempfile::tempdir().expect("temp dir");
    let script = gpu_labs_e2e::workspace().join("scripts/real-gpu-check");
    // Two variants keep the test short.
    let built = Command::new(&script)
        .arg("build")
        .arg(kit.path())
        .args(["solution", "timer-without-synchronize"])
        .output()
        .expect("the script runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    // A verdict that changes is a surprise, and the script says which: one run shows both the
    // solution passing as expected and a planted surprise (the faulty copy's failure, expected
    // away), so the kit is graded once.
    std::fs::write(
        kit.path()
            .join("crates/timer-without-synchronize/expected-failures"),
        "\n",
    )
    .expect("plant a surprise");
    let run = gpu_labs_e2e::one_at_a_time(|| {
        Command::new(&script)
            .arg("run")
            .arg(kit.path())
            .env("GPU_LABS_EMULATOR_AS_REAL", "1")
            .env(
                "GPU_LABS_CACHE",
                gpu_labs_e2e::workspace().join("target/grader-cache"),
            )
            .output()
            .expect("the script runs")
    });
    let text = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{text}");
    assert!(
        text.contains("ok       solution: fails [] as expected")
            && text.contains(
                "SURPRISE timer-without-synchronize: failed [gpu_timer_sync], expected []"
            )
            && text.contains("margin: `time_gpu_matmul` measured")
            && text.contains("posing as a real GPU")
            && text.contains("device work traced")
            && text.contains("1 surprise(s)"),
        "{text}"
    );
}
