//! The gpu-labs grader: one engine behind three flows (a student's `cargo test`, GitHub
//! Classroom, an instructor's official grading).
//!
//! Three crates, each standing on the one below, so that cargo itself refuses a circle:
//! - `grader-engine` knows no lab: the rubric model, the worker protocol, the supervisor and
//!   its sandbox, the stopwatch, the checks every lab shares, the GPU backends, the result
//!   model and its events;
//! - `grader-labs` holds the labs (`matmul`, `training`), each filling in the engine's
//!   [`labs::LabInfo`];
//! - this crate holds the flows on top: grading one submission ([`grade`], after [`stage`]),
//!   the student harness ([`harness`]), batch, release, Classroom and Gradescope, the
//!   renderers ([`report`]), the CLI, and [`labs::LABS`], the one place that names the labs.
//!
//! The worker computes, the supervisor judges: every rubric item runs in a child process (the
//! lab crate's test binary started in worker mode, see [`worker`]); the supervisor
//! ([`supervisor`]) regenerates the inputs from the seed, computes the references itself and
//! decides pass/fail and points ([`check`]). The engine's modules are re-exported here under
//! their own names, so `grader::protocol` is `grader_engine::protocol`.

// Tests read their own fixtures as they like; the grader reads through `intake` only.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub use grader_engine::{
    capture, check, emulate, event, fingerprint, gpu, i18n, inputs, intake, protocol, sandbox,
    source_scan, stopwatch, supervisor, worker,
};

#[cfg(feature = "cli")]
pub mod batch;
pub mod calibrate;
#[cfg(feature = "cli")]
pub mod classroom;
pub mod grade;
#[cfg(feature = "cli")]
pub mod gradescope_package;
pub mod harness;
pub mod labs;
pub mod messages;
#[cfg(feature = "cli")]
pub mod release;
pub mod report;
pub mod rubric;
#[cfg(feature = "cli")]
pub mod similarity;
pub mod stage;
#[cfg(feature = "cli")]
pub mod template;
pub mod turns;

#[cfg(feature = "matmul")]
pub use labs::matmul;
#[cfg(feature = "training")]
pub use labs::training;
