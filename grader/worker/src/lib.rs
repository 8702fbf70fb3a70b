//! The worker side of gpu-labs grading: [`serve::serve`] reads one [`protocol::WorkOrder`]
//! from stdin, runs the student's functions on inputs derived from the order's seed
//! ([`inputs`]), and writes the values back as a [`protocol::WorkerReport`]. Timed work stops
//! at the supervisor's checkpoints ([`stopwatch`]), whose clock is the only one that counts.
//!
//! In official grading this crate, a lab's worker half and the submission are all a
//! submission's binary holds: the supervisor that starts it, the judges, the references, the
//! rubric and the sandbox's set-up live in other crates (`grader-engine`, the labs' judging
//! halves) that never link into it. So nothing here decides a grade: the supervisor checks
//! every value it sends back, and whatever it says about itself (graded or not, GPU or not)
//! fails the item.

pub mod backend;
pub mod gpu;
pub mod hex_bits;
pub mod i18n;
pub mod protocol;
pub mod report_size;
pub mod serve;
pub mod task;

/// The stopwatch's hand-over, which runs inside the grader's clock, each run's seeded inputs
/// and the stable hash they and a report's seal use: in a crate of their own, built fully
/// optimised in every profile (`grader-hot`).
pub use grader_hot::{hash, inputs, region, stopwatch};
