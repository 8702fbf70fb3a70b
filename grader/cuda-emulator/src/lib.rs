//! gpu-labs CUDA emulator: one shared object that stands in for `libcuda`, `libnvrtc` and
//! `libcublas`, so unmodified cudarc programs run on a machine without a GPU.
//!
//! Kernels written in CUDA C are compiled by the host C++ compiler against a prelude
//! ([`nvrtc`]), blocks run in parallel on a pool of worker threads and the threads of a block
//! run as cooperative fibers ([`exec`]), streams are asynchronous in-order queues
//! ([`driver::stream`]), and device memory is host memory with guard pages ([`memory`]).
#![warn(missing_docs)]
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)] // Every exported function follows its CUDA documentation.

pub mod config;
pub mod counters;
pub mod cublas;
pub mod driver;
pub mod exec;
pub mod findings;
pub mod heap;
pub mod memory;
pub mod nvrtc;
pub mod provenance;
pub mod replay;
pub mod status;
pub mod stubs;
pub mod util;

/// Tells of a call the emulator refused (a bad launch, an unsupported entry point ([`stubs`]),
/// a module it did not compile): a finding in its record.
pub(crate) fn refused(text: String) {
    findings::report(findings::Kind::Refused, text);
}

/// What an entry point the emulator does not implement says after its name ([`stubs`]).
pub(crate) const REFUSAL: &str = "is not supported by the CPU emulator";
