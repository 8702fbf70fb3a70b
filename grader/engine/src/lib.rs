//! The gpu-labs grading engine. It knows no lab: a lab fills in [`lab::LabInfo`] (its item
//! kinds, read from the rubric into [`rubric::KindSpec`]s that grade themselves), and the set
//! of labs ([`lab::Labs`]) is handed down by the `grader` crate on top.
//!
//! One item's grading reads down this crate: the rubric's item ([`rubric`]) → its kind's
//! `grade` → the supervisor starts a sandboxed worker ([`supervisor`], [`sandbox`]) under the
//! [`protocol`] → the worker runs the student's function ([`worker`]), timed by the
//! supervisor's own clock ([`stopwatch`]) → the shared checks judge what came back
//! ([`check`]) → an [`report::ItemResult`], announced as an [`event::Event`].
//!
//! The worker's side ([`protocol`], [`worker`], the stopwatch's region, [`inputs`], the
//! worker's GPU helpers, the catalogues) is the `grader-worker` crate, re-exported here under
//! the same names: it is all of the grader that links into a submission's binary in official
//! grading, and it decides nothing. Everything this crate adds is the supervisor's.

// Tests read their own fixtures as they like; the library reads through `intake` only.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub use grader_worker::{backend, inputs, protocol, report_size};
pub mod capture;
pub mod check;
pub mod context;
pub mod emulate;
pub mod event;
pub mod fingerprint;
pub mod gpu;
pub mod i18n;
pub mod intake;
pub mod kernel_compiler;
pub mod lab;
#[cfg(feature = "replay")]
pub mod replay;
pub mod report;
pub mod rubric;
pub mod sandbox;
pub mod scratch;
pub mod source_scan;
pub mod stopwatch;
pub mod supervisor;
pub mod worker;

pub use grader_worker::tr;
