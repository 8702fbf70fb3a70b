//! The worker's side of the GPU: the stream a student's function is handed ([`student`]), the
//! grader's own device work queued before a timed call ([`busy`]), and what the emulator or
//! the tracer counted while the function ran ([`counters`]).

pub mod busy;
pub mod counters;
pub mod replay;
pub mod student;

/// The variable the emulator posing as a real GPU sets in a worker (tests of the real-GPU
/// path): there, as on hardware, counts are read only through the tracer.
pub const POSING: &str = "GPU_LABS_EMULATOR_POSING";

/// The library names cudarc tries (see `cudarc::get_lib_name_candidates`), all linked to the
/// emulator so that whichever name is found first, one shared object (one state) serves all.
pub const LIB_NAMES: &[&str] = &[
    "libcuda.so",
    "libcuda.so.1",
    "libnvrtc.so",
    "libnvrtc.so.12",
    "libnvrtc.so.13",
    "libcublas.so",
    "libcublas.so.12",
    "libcublas.so.13",
];
