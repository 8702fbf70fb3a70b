//! The gpu-labs labs. Each is one module tree filling in the engine's `LabInfo`: its item
//! kinds and their keys, its judges and hints, its references, and its worker side (the
//! `Submission` a lab crate's harness hands over). The labs stand on the engine and know
//! nothing of the flows above them; the `grader` crate registers them.
//!
//! Each lab has two halves. Its worker half (the `Submission`, what its worker runs, the
//! kinds as the order carries them, the grader's stand-ins) stands on `grader-worker` only;
//! its judging half (rubric keys, judges, hints, the baselines the grader's own binary runs)
//! is behind the `judge` feature and stands on `grader-engine`. Official grading builds a
//! submission with the worker halves alone ([`harness`]).

// Tests read their own fixtures as they like; the judges read nothing from disk.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod harness;
#[cfg(all(test, feature = "judge"))]
mod judges_never_panic;
#[cfg(feature = "matmul")]
pub mod matmul;
#[cfg(feature = "training")]
pub mod training;
