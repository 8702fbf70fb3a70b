//! Worker side: what the emulator counted (kernel launches, cuBLAS calls), read through a
//! function only the emulator exports. On a real GPU there is no such count.

use crate::protocol::DeviceWork;

/// The emulator's counters since the process started, or `None` on a real GPU.
pub fn read() -> Option<DeviceWork> {
    type Counters = unsafe extern "C" fn(*mut u64, *mut u64);
    // SAFETY: opening the library cudarc already loaded only bumps its reference count; the
    // symbol, when present, has exactly this signature (grader/cuda-emulator).
    unsafe {
        let lib = libloading::Library::new("libcuda.so").ok()?;
        let counters: libloading::Symbol<Counters> =
            lib.get(b"gpu_labs_emulator_counters\0").ok()?;
        let mut work = DeviceWork::default();
        counters(&mut work.launches, &mut work.blas_calls);
        Some(work)
    }
}

/// The work done between two readings.
pub fn since(before: Option<DeviceWork>) -> Option<DeviceWork> {
    let (before, now) = (before?, read()?);
    Some(DeviceWork {
        launches: now.launches.saturating_sub(before.launches),
        blas_calls: now.blas_calls.saturating_sub(before.blas_calls),
    })
}
