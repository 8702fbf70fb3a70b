//! Result codes of the three libraries, and their names.

use std::ffi::c_char;

/// A CUDA driver result (`CUresult`).
pub type CUresult = u32;

/// `CUDA_SUCCESS`.
pub const SUCCESS: CUresult = 0;
/// `CUDA_ERROR_INVALID_VALUE`.
pub const INVALID_VALUE: CUresult = 1;
/// `CUDA_ERROR_OUT_OF_MEMORY`.
pub const OUT_OF_MEMORY: CUresult = 2;
/// `CUDA_ERROR_NOT_INITIALIZED`.
pub const NOT_INITIALIZED: CUresult = 3;
/// `CUDA_ERROR_NO_DEVICE`.
pub const NO_DEVICE: CUresult = 100;
/// `CUDA_ERROR_INVALID_DEVICE`.
pub const INVALID_DEVICE: CUresult = 101;
/// `CUDA_ERROR_INVALID_IMAGE`.
pub const INVALID_IMAGE: CUresult = 200;
/// `CUDA_ERROR_INVALID_CONTEXT`.
pub const INVALID_CONTEXT: CUresult = 201;
/// `CUDA_ERROR_INVALID_PTX`.
pub const INVALID_PTX: CUresult = 218;
/// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`: the PTX is newer than the driver.
pub const UNSUPPORTED_PTX_VERSION: CUresult = 222;
/// `CUDA_ERROR_FILE_NOT_FOUND`.
pub const FILE_NOT_FOUND: CUresult = 301;
/// `CUDA_ERROR_INVALID_HANDLE`.
pub const INVALID_HANDLE: CUresult = 400;
/// `CUDA_ERROR_NOT_FOUND`.
pub const NOT_FOUND: CUresult = 500;
/// `CUDA_ERROR_NOT_READY`.
pub const NOT_READY: CUresult = 600;
/// `CUDA_ERROR_ILLEGAL_ADDRESS`.
pub const ILLEGAL_ADDRESS: CUresult = 700;
/// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`.
pub const LAUNCH_OUT_OF_RESOURCES: CUresult = 701;
/// `CUDA_ERROR_ASSERT`.
pub const ASSERT: CUresult = 710;
/// `CUDA_ERROR_ILLEGAL_INSTRUCTION`.
pub const ILLEGAL_INSTRUCTION: CUresult = 715;
/// `CUDA_ERROR_LAUNCH_FAILED`.
pub const LAUNCH_FAILED: CUresult = 719;
/// `CUDA_ERROR_NOT_SUPPORTED`.
pub const NOT_SUPPORTED: CUresult = 801;
/// `CUDA_ERROR_UNKNOWN`.
pub const UNKNOWN: CUresult = 999;

/// `(code, name, description)` of the driver results the emulator can return.
const DRIVER_ERRORS: &[(CUresult, &std::ffi::CStr, &std::ffi::CStr)] = &[
    (SUCCESS, c"CUDA_SUCCESS", c"no error"),
    (
        INVALID_VALUE,
        c"CUDA_ERROR_INVALID_VALUE",
        c"invalid argument",
    ),
    (OUT_OF_MEMORY, c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
    (
        NOT_INITIALIZED,
        c"CUDA_ERROR_NOT_INITIALIZED",
        c"initialization error",
    ),
    (
        INVALID_DEVICE,
        c"CUDA_ERROR_INVALID_DEVICE",
        c"invalid device ordinal",
    ),
    (
        INVALID_IMAGE,
        c"CUDA_ERROR_INVALID_IMAGE",
        c"device kernel image is invalid",
    ),
    (
        INVALID_CONTEXT,
        c"CUDA_ERROR_INVALID_CONTEXT",
        c"invalid device context",
    ),
    (
        INVALID_PTX,
        c"CUDA_ERROR_INVALID_PTX",
        c"a PTX JIT compilation failed",
    ),
    (
        UNSUPPORTED_PTX_VERSION,
        c"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        c"the provided PTX was compiled with an unsupported toolchain.",
    ),
    (
        FILE_NOT_FOUND,
        c"CUDA_ERROR_FILE_NOT_FOUND",
        c"file not found",
    ),
    (
        INVALID_HANDLE,
        c"CUDA_ERROR_INVALID_HANDLE",
        c"invalid resource handle",
    ),
    (
        NOT_FOUND,
        c"CUDA_ERROR_NOT_FOUND",
        c"named symbol not found",
    ),
    (NOT_READY, c"CUDA_ERROR_NOT_READY", c"device not ready"),
    (
        ILLEGAL_ADDRESS,
        c"CUDA_ERROR_ILLEGAL_ADDRESS",
        c"an illegal memory access was encountered",
    ),
    (
        LAUNCH_OUT_OF_RESOURCES,
        c"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        c"too many resources requested for launch",
    ),
    (
        ASSERT,
        c"CUDA_ERROR_ASSERT",
        c"device-side assert triggered",
    ),
    (
        ILLEGAL_INSTRUCTION,
        c"CUDA_ERROR_ILLEGAL_INSTRUCTION",
        c"an illegal instruction was encountered",
    ),
    (
        LAUNCH_FAILED,
        c"CUDA_ERROR_LAUNCH_FAILED",
        c"unspecified launch failure",
    ),
    (
        NOT_SUPPORTED,
        c"CUDA_ERROR_NOT_SUPPORTED",
        c"operation not supported",
    ),
    (UNKNOWN, c"CUDA_ERROR_UNKNOWN", c"unknown error"),
];

/// The name (`CUDA_ERROR_...`) and description of a driver result, if it is known.
pub fn driver_error(code: CUresult) -> Option<(*const c_char, *const c_char)> {
    DRIVER_ERRORS
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, name, desc)| (name.as_ptr(), desc.as_ptr()))
}

/// An NVRTC result (`nvrtcResult`).
pub type NvrtcResult = u32;
/// `NVRTC_SUCCESS`.
pub const NVRTC_SUCCESS: NvrtcResult = 0;
/// `NVRTC_ERROR_INVALID_INPUT`.
pub const NVRTC_ERROR_INVALID_INPUT: NvrtcResult = 3;
/// `NVRTC_ERROR_INVALID_PROGRAM`.
pub const NVRTC_ERROR_INVALID_PROGRAM: NvrtcResult = 4;
/// `NVRTC_ERROR_COMPILATION`.
pub const NVRTC_ERROR_COMPILATION: NvrtcResult = 6;
/// `NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION`.
pub const NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION: NvrtcResult = 8;
/// `NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION`.
pub const NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION: NvrtcResult = 9;
/// `NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID`.
pub const NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID: NvrtcResult = 10;
/// `NVRTC_ERROR_INTERNAL_ERROR`: also what unimplemented NVRTC entry points return.
pub const NVRTC_ERROR_INTERNAL_ERROR: NvrtcResult = 11;

/// A cuBLAS status (`cublasStatus_t`).
pub type CublasStatus = u32;
/// `CUBLAS_STATUS_SUCCESS`.
pub const CUBLAS_SUCCESS: CublasStatus = 0;
/// `CUBLAS_STATUS_NOT_INITIALIZED`.
pub const CUBLAS_NOT_INITIALIZED: CublasStatus = 1;
/// `CUBLAS_STATUS_INVALID_VALUE`.
pub const CUBLAS_INVALID_VALUE: CublasStatus = 7;
/// `CUBLAS_STATUS_EXECUTION_FAILED`.
pub const CUBLAS_EXECUTION_FAILED: CublasStatus = 13;
/// `CUBLAS_STATUS_NOT_SUPPORTED`.
pub const CUBLAS_NOT_SUPPORTED: CublasStatus = 15;
