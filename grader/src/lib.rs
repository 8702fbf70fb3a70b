//! The gpu-labs grader: one engine behind three flows (a student's `cargo test`, GitHub
//! Classroom, an instructor's official grading).
//!
//! The worker computes, the supervisor judges: every rubric item runs in a child process
//! (the lab crate's test binary started in worker mode, see [`worker`]); the supervisor
//! ([`supervisor`]) regenerates the inputs from the seed, computes the references itself and
//! decides pass/fail and points ([`check`]). Results are one model ([`report`]) with several
//! renderings.

#[cfg(feature = "cli")]
pub mod batch;
pub mod capture;
pub mod check;
#[cfg(feature = "cli")]
pub mod classroom;
pub mod emulate;
pub mod event;
pub mod fingerprint;
pub mod gpu;
pub mod grade;
#[cfg(feature = "cli")]
pub mod gradescope_package;
pub mod harness;
pub mod inputs;
pub mod intake;
pub mod labs;
pub mod protocol;
#[cfg(feature = "cli")]
pub mod release;
pub mod report;
pub mod rubric;
pub mod sandbox;
pub mod source_scan;
pub mod stage;
pub mod stopwatch;
pub mod supervisor;
#[cfg(feature = "cli")]
pub mod template;
pub mod worker;

pub use labs::{matmul, training};
