//! The harness of official grading's build of a lab crate: the binary only serves work orders.
//! Official grading builds the grader's own `tests/grade.rs` against this crate under the name
//! `grader` (the staged manifest renames it), without the `judge` feature, so that
//! `grader::harness::main(grader::<lab>::Submission { … })` gives a binary made of the
//! submission, its lab's worker half and `grader-worker`: no supervisor, judge, rubric or
//! sandbox set-up is in it. A student's own `cargo test` uses the `grader` crate's harness,
//! which also supervises.

use grader_worker::protocol::WORKER_FLAG;
use grader_worker::serve::{exit_code, serve, LabWorker};
use std::process::ExitCode;

/// Serves the one work order on stdin when started as a worker; refuses anything else with
/// one line saying what this binary is.
pub fn main(lab: impl LabWorker + 'static) -> ExitCode {
    if std::env::args().nth(1).as_deref() != Some(WORKER_FLAG) {
        eprintln!(
            "error: this is the grader's official build of the {} lab: it only runs the items \
             `grader grade` hands it; to grade your work yourself, run `cargo test` in your \
             lab crate",
            lab.lab_name()
        );
        return ExitCode::from(2);
    }
    exit_code(serve(&lab))
}
