//! What reading a worker's report costs the supervisor, measured (issue 49): a report sealed
//! with the order's secret (as a submission that found it would seal one) at its item's bound,
//! in every shape that could cost more than its bytes, against the largest report a right
//! answer sends. Its own test binary with one test, so that nothing else runs in the process
//! whose peak memory (`VmHWM`, reset between cases) is read.

// A test reads its own process's status as it likes.
#![allow(clippy::disallowed_methods)]

use grader_engine::protocol::{
    sealed_report, Backend, GpuTimerSamples, LabOutcome, Matrix, Outcome, PanicInfo, WorkOrder,
    WorkerReport,
};
use grader_engine::report_size::{bound_for_values, NUMBERS, OTHERS};
use grader_engine::supervisor::take_report;

/// The most reading a forged report may cost above the largest right answer's.
const ABOVE_TWIN: u64 = 64 << 20;

/// A field of `/proc/self/status`, in bytes.
fn status(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("the field")
        << 10
}

/// The matrix C of the GPU timer at its largest shape (2048×2048), its values as a right
/// answer's (all kinds of bits) or as a forger's (`0` everywhere costs the same on the wire).
fn largest_c() -> Matrix {
    let side = 2048;
    Matrix {
        rows: side,
        cols: side,
        bits: (0..side * side)
            .map(|i| (i as f32 * 0.37).to_bits())
            .collect(),
    }
}

/// What taking `outcome`'s sealed report costs above the memory in use before (bytes), with
/// `then` run on what was taken (a judge's reading of a lab's outcome), and whether it was
/// taken (not refused).
fn cost(
    dir: &std::path::Path,
    outcome: Outcome,
    bound: u64,
    then: impl Fn(&Outcome),
) -> (u64, bool) {
    let order = WorkOrder {
        lab: "matmul".into(),
        item: "gpu_timer_sync".into(),
        kind: "gpu-timer".into(),
        function: "time_gpu_matmul".into(),
        seed: 1,
        task: serde_json::Value::Null,
        round: 0,
        backend: Backend::Emulated,
        nonce: 0x5eed,
        report_path: dir.join("report.json"),
        stopwatch: None,
        stopwatch_fd: None,
        yardstick: false,
        report_bytes: bound,
    };
    let report = WorkerReport {
        item: order.item.clone(),
        outcome,
        emulator: None,
    };
    let bytes = sealed_report(order.nonce, &report).expect("serializes");
    drop(report);
    std::fs::write(&order.report_path, &bytes).expect("written");
    drop(bytes);
    // The peak starts again from what is in use now.
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak resets");
    let before = status("VmRSS:");
    let taken = take_report(&order);
    let read = matches!(taken, Ok(Some(_)));
    if let Ok(Some(report)) = &taken {
        then(&report.outcome);
    }
    let peak = status("VmHWM:");
    drop(taken);
    (peak.saturating_sub(before), read)
}

/// Reads a lab's outcome as `T`, as its judge would.
fn judged<T: serde::de::DeserializeOwned>(outcome: &Outcome) {
    if let Outcome::Lab(lab) = outcome {
        let read: Result<T, _> = lab.read();
        assert!(read.is_ok(), "the judge reads it");
    }
}

/// A case: what it is, its outcome, whether it must be taken, and how its judge reads it.
type Case = (&'static str, Outcome, bool, fn(&Outcome));

/// Case `n`; case 0 is the twin.
fn case(n: usize) -> Option<Case> {
    let bound = bound_for_values(2048 * 2048, 1);
    let text = |bytes: u64| "x".repeat(bytes as usize);
    let none: fn(&Outcome) = |_| {};
    Some(match n {
        0 => (
            "the largest right answer (the timer's C at 2048×2048)",
            Outcome::GpuTimer(GpuTimerSamples {
                shape: [2048, 2048, 2048],
                queued_ms: 1.0,
                samples: Vec::new(),
                output: largest_c(),
            }),
            true,
            none,
        ),
        1 => (
            "a lab's outcome of one matrix at the bound, read by its judge",
            Outcome::Lab(LabOutcome::of(&largest_c()).expect("serializes")),
            true,
            judged::<Matrix>,
        ),
        2 => (
            "a panic whose message fills the bound",
            Outcome::Panicked(PanicInfo {
                case: Some(0),
                message: text(bound - 4096),
                location: None,
            }),
            false,
            none,
        ),
        3 => (
            "numbers up to the census's limit",
            Outcome::Lab(LabOutcome::of(&vec![u64::MAX; NUMBERS as usize]).expect("serializes")),
            true,
            judged::<Vec<u64>>,
        ),
        4 => (
            "empty values up to the census's limit, each read into a large type",
            Outcome::Lab(
                LabOutcome::of(&vec![Option::<[u64; 32]>::None; OTHERS as usize - 8])
                    .expect("serializes"),
            ),
            true,
            judged::<Vec<Option<[u64; 32]>>>,
        ),
        5 => (
            "numbers past the census's limit",
            Outcome::Lab(LabOutcome::of(&vec![0u8; NUMBERS as usize + 1]).expect("serializes")),
            false,
            none,
        ),
        _ => return None,
    })
}

/// The variable that makes this binary measure one case (in a process of its own).
const CASE: &str = "REPORT_MEMORY_CASE";

/// One case, when the test below started this process for it: prints its cost.
#[test]
fn one_case() {
    let Some(n) = std::env::var(CASE).ok().and_then(|n| n.parse().ok()) else {
        return;
    };
    let (_, outcome, _, judge) = case(n).expect("a case");
    let dir = tempfile::tempdir().expect("temp dir");
    let (cost, read) = cost(dir.path(), outcome, bound_for_values(2048 * 2048, 1), judge);
    println!("COST {cost} {read}");
}

/// Each case in a fresh process (memory freed by an earlier case would hide a later one's).
#[test]
fn a_forged_report_at_its_bound_costs_little_more_than_a_right_answer() {
    if std::env::var(CASE).is_ok() {
        return;
    }
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let measure = |n: usize| {
        let out = std::process::Command::new(std::env::current_exe().expect("this test"))
            .args(["--exact", "one_case", "--nocapture", "--test-threads", "1"])
            .env(CASE, n.to_string())
            .output()
            .expect("the case runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.split_once("COST ").map(|(_, rest)| rest))
            .unwrap_or_else(|| panic!("case {n}: {text}{}", String::from_utf8_lossy(&out.stderr)));
        let (cost, read) = line.split_once(' ').expect("two fields");
        (cost.parse::<u64>().expect("bytes"), read == "true")
    };
    let (twin, read) = measure(0);
    assert!(read, "a right answer's report is taken");
    let mut worst = 0;
    let mut n = 1;
    while let Some((what, _, taken, _)) = case(n) {
        let (cost, read) = measure(n);
        eprintln!(
            "{what}: {:.1} MiB (the twin: {:.1} MiB)",
            mib(cost),
            mib(twin)
        );
        assert_eq!(read, taken, "{what}: taken {read}");
        assert!(
            cost <= twin + ABOVE_TWIN,
            "{what}: {:.1} MiB, the twin {:.1} MiB",
            mib(cost),
            mib(twin)
        );
        worst = worst.max(cost);
        n += 1;
    }
    eprintln!(
        "worst: {:.1} MiB above a right answer's {:.1} MiB",
        mib(worst.saturating_sub(twin)),
        mib(twin)
    );
}
