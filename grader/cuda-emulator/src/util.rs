//! Small helpers shared by the entry points.

use std::ffi::{c_char, CStr};

/// Writes `value` through `out` if it is not null; returns whether it could.
pub unsafe fn write_out<T>(out: *mut T, value: T) -> bool {
    if out.is_null() {
        false
    } else {
        out.write(value);
        true
    }
}

/// Reads a C string argument as UTF-8 (lossily), or `None` when it is null.
pub unsafe fn c_str<'a>(p: *const c_char) -> Option<std::borrow::Cow<'a, str>> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_string_lossy())
    }
}

/// A 128-bit FNV-1a style hash (two independent 64-bit lanes), as 32 hex digits.
pub fn hash_hex(parts: &[&[u8]]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for part in parts {
        for &byte in part.iter().chain(std::iter::once(&0xffu8)) {
            a = (a ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
            b = (b ^ u64::from(byte))
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    format!("{a:016x}{b:016x}")
}

/// Number of CPU cores the emulator uses as "multiprocessors".
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The variable that makes the emulator behave as a real machine in a given condition, for
/// tests of what the grader does there (a comma-separated list). `old-driver`: every module
/// load fails as a driver older than NVRTC does (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`).
/// `fast-device`: the host's side of every launch and cuBLAS call takes [`HOST_SIDE`], about
/// what the emulated device takes for a small product, as on a GPU whose products take
/// microseconds, near the launch overhead: the host, not the device, sets the pace. The
/// grader handles `no-nvrtc` and `no-cublas` itself, by leaving those libraries out.
pub const CONDITIONS: &str = "GPU_LABS_EMULATOR_CONDITIONS";

/// Whether the condition `name` was asked for in [`CONDITIONS`] (as the environment was when
/// the library was loaded: [`crate::config`]).
pub fn condition(name: &str) -> bool {
    crate::config::get().condition(name)
}

/// The host's side of a launch or cuBLAS call under the `fast-device` condition.
pub const HOST_SIDE: std::time::Duration = std::time::Duration::from_millis(2);

/// Under the `fast-device` condition, spends [`HOST_SIDE`] on the calling thread before work
/// is queued.
pub fn host_side_of_a_launch() {
    if condition("fast-device") {
        std::thread::sleep(HOST_SIDE);
    }
}
