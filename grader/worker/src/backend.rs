//! Where a worker's GPU code runs. The supervisor decides it from the GPU mode, the work
//! order carries it ([`crate::protocol`]), and the sandbox opens what it needs
//! (the engine's `sandbox`): it stands below both.

use serde::{Deserialize, Serialize};

/// Where a worker's GPU code runs, decided by the supervisor from the GPU mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    /// A real NVIDIA GPU.
    Real,
    /// The grader's CPU emulator of libcuda, libnvrtc and libcublas.
    Emulated,
    /// No GPU: GPU items are not run.
    NoGpu,
}

impl Backend {
    /// How reports name it.
    pub fn label(self) -> &'static str {
        match self {
            Backend::Real => "real GPU",
            Backend::Emulated => "emulated GPU",
            Backend::NoGpu => "no GPU",
        }
    }
}
