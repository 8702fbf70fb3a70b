//! The training lab (the course's hand-written training loop): what the supervisor computes
//! itself to judge a student's layers, losses, optimizers and loops, in f64, and the data it
//! trains on without downloading anything.
//!
//! Not yet a lab the grader runs: its rubric kinds, worker side and harness come with the
//! engine's reshape (a lab is one folder). These are the references they will judge with.

pub mod compare;
pub mod data;
pub mod reference;
