//! Worker side, shared by every lab's GPU items: the result type a student's GPU function
//! returns, how its errors are put in words, and the stream the grader opens for it.

use cudarc::driver::{CudaContext, CudaStream};
use std::error::Error;
use std::sync::Arc;

/// What the student's GPU functions return: their value, or any error from CUDA, NVRTC or
/// cuBLAS.
pub type GpuResult<T> = Result<T, Box<dyn Error>>;

/// How the worker introduces a kernel's compile log, which the checks read back
/// (the engine's `check::gpu::error_result`).
pub const COMPILE_ERROR: &str = "the kernel does not compile (NVRTC_ERROR_COMPILATION):\n";

/// A student's GPU error in words: a kernel's compile log as the compiler wrote it, anything
/// else as the library describes it.
pub fn describe(e: &(dyn Error + 'static)) -> String {
    match e.downcast_ref::<cudarc::nvrtc::CompileError>() {
        Some(cudarc::nvrtc::CompileError::CompileError { log, .. }) => {
            format!("{}{}", COMPILE_ERROR, log.to_string_lossy().trim_end())
        }
        _ => e.to_string(),
    }
}

/// Opens a stream on device 0 for the student's functions; cudarc panics when the library is
/// missing, so that is caught and said.
pub fn open_stream() -> Result<Arc<CudaStream>, String> {
    std::panic::catch_unwind(|| {
        CudaContext::new(0)
            .and_then(|ctx| ctx.new_stream())
            .map_err(|e| e.to_string())
    })
    .map_err(|_| "the CUDA library could not be loaded".to_string())?
}
