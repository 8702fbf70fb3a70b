//! gpu-labs CUDA tracer: the emulator's bookkeeping in front of the real libcuda and libcublas.
//!
//! On a real GPU the grader cannot see inside the device, but it can see every call a
//! program makes to the driver and to cuBLAS. This library stands where cudarc looks for
//! `libcuda.so` and `libcublas.so` and does what the emulator does at that boundary:
//! - it counts kernel launches and cuBLAS computations, and the bytes copied each way
//!   ([`work`], [`copies`]; the emulator's own `counters`), and notes the words uploaded and
//!   copied back while the grader holds a window open (the emulator's own `provenance`), so
//!   "computed on the device, not the host" is checked on hardware as on the emulator;
//! - it refuses every entry point the emulator does not implement (the emulator's own
//!   `stubs`), so a submission cannot get past the checks on hardware through a call they do
//!   not watch (a 2-D copy, `cuGetProcAddress`), and grades do not depend on the machine.
//!
//! Everything else is the real library's: the tracer is linked against two placeholder
//! names (`libgpu_labs_real_cuda.so`, `libgpu_labs_real_cublas.so`, see `build.rs`) that the
//! grader links to the real files, so the dynamic loader finds each entry point the tracer
//! does not define in them. The tracer's own entry points call the real ones ([`real`]).
#![warn(missing_docs)]
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)] // Every exported function follows its CUDA documentation.

#[macro_use]
pub mod real;

#[path = "../../src/counters.rs"]
pub mod counters;
#[path = "../../src/provenance.rs"]
pub mod provenance;
#[allow(dead_code)] // The tracer uses a few of the codes.
#[path = "../../src/status.rs"]
pub mod status;
#[path = "../../src/stubs.rs"]
pub mod stubs;

pub mod copies;
pub mod work;

/// Tells of a call the tracer refused ([`stubs`]): on its stderr (a real GPU's run has no
/// emulator record).
pub(crate) fn refused(text: String) {
    eprintln!("{text}");
}

/// What a refused entry point says after its name ([`stubs`]).
pub(crate) const REFUSAL: &str = "is not supported by the CPU emulator, so graded code may not \
     call it on a real GPU either (grades must not depend on the machine)";

/// Marks the tracer among the libraries a process loaded: the grader takes counts from the
/// emulator posing as a real GPU (in its tests) only through the tracer, as on hardware.
#[no_mangle]
pub extern "C" fn gpu_labs_tracer() -> u32 {
    1
}
