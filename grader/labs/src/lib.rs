//! The gpu-labs labs. Each is one module tree filling in the engine's
//! [`grader_engine::lab::LabInfo`]: its item kinds and their keys, its judges and hints, its
//! references, and its worker side (the `Submission` a lab crate's harness hands over). The
//! labs stand on the engine and know nothing of the flows above them; the `grader` crate
//! registers them.

#[cfg(feature = "matmul")]
pub mod matmul;
#[cfg(feature = "training")]
pub mod training;
