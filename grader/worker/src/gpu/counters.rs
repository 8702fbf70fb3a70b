//! Worker side: what the emulator counted (kernel launches, cuBLAS calls, bytes moved, where
//! values came from), read through functions only the emulator and its tracer export. On a
//! real GPU they come from the tracer ([`super::trace`]); without it there are none.

use crate::protocol::{DeviceTime, DeviceWork, EmulatorRecord};

pub use super::POSING;

/// Whether the emulator poses as a real GPU in this worker, as the supervisor set it: read once,
/// by [`freeze`] before any submission code runs, so that a submission that changes its own
/// environment (`std::env::set_var` is safe Rust) cannot switch the counting off.
static POSING_AT_START: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Takes this worker's configuration from its environment, once: called by the worker before
/// the first instruction of submission code (see [`crate::serve`]).
pub fn freeze() {
    POSING_AT_START.get_or_init(|| std::env::var_os(POSING).is_some_and(|v| v == "1"));
}

/// [`POSING_AT_START`], frozen now if nothing froze it before.
fn frozen_posing() -> bool {
    freeze();
    POSING_AT_START.get().copied().unwrap_or(false)
}

/// The library that answers the count functions: what cudarc loaded as `libcuda.so`, unless
/// that is the emulator posing as a real GPU without the tracer in front (which a real GPU
/// would not have).
pub(super) fn counting_library() -> Option<libloading::Library> {
    // SAFETY: opening the library cudarc already loaded only bumps its reference count.
    let lib = unsafe { libloading::Library::new("libcuda.so").ok()? };
    let posing = frozen_posing();
    // SAFETY: only looks the symbol up.
    let traced = unsafe { lib.get::<unsafe extern "C" fn() -> u32>(b"gpu_labs_tracer\0") }.is_ok();
    (!posing || traced).then_some(lib)
}

/// The counts since the process started, or `None` on a real GPU without the tracer.
pub fn read() -> Option<DeviceWork> {
    type Counters = unsafe extern "C" fn(*mut u64, *mut u64);
    // SAFETY: opening the library cudarc already loaded only bumps its reference count; the
    // symbol, when present, has exactly this signature (grader/cuda-emulator).
    unsafe {
        let lib = counting_library()?;
        let counters: libloading::Symbol<Counters> =
            lib.get(b"gpu_labs_emulator_counters\0").ok()?;
        let mut work = DeviceWork::default();
        counters(&mut work.launches, &mut work.blas_calls);
        type Arithmetic = unsafe extern "C" fn(*mut u64, *mut u64) -> bool;
        // The symbol, when present, has this signature (grader/cuda-emulator/src/findings.rs);
        // it answers only in checked runs, which alone count what kernels read.
        if let Ok(arithmetic) = lib.get::<Arithmetic>(b"gpu_labs_emulator_arithmetic\0") {
            let mut done = crate::protocol::Arithmetic::default();
            if arithmetic(&mut done.loaded_bytes, &mut done.multiply_adds) {
                work.arithmetic = Some(done);
            }
        }
        Some(work)
    }
}

/// Bytes copied host → device and device → host since the process started, or `None` on a
/// real GPU without the tracer.
pub fn transfers() -> Option<(u64, u64)> {
    type Transfers = unsafe extern "C" fn(*mut u64, *mut u64);
    // SAFETY: as in `read`; the symbol has this signature (grader/cuda-emulator/src/counters.rs).
    unsafe {
        let lib = counting_library()?;
        let transfers: libloading::Symbol<Transfers> =
            lib.get(b"gpu_labs_emulator_transfers\0").ok()?;
        let (mut up, mut down) = (0, 0);
        transfers(&mut up, &mut down);
        Some((up, down))
    }
}

/// Opens a provenance window (forgetting the last one), or closes it; nothing on a real GPU
/// without the tracer.
pub fn provenance_window(open: bool) {
    type Window = unsafe extern "C" fn(bool);
    // SAFETY: as in `read`; the symbol has this signature (grader/cuda-emulator/src/provenance.rs).
    unsafe {
        let Some(lib) = counting_library() else {
            return;
        };
        if let Ok(window) = lib.get::<Window>(b"gpu_labs_emulator_provenance_window\0") {
            window(open);
        }
    }
}

/// For a result's values: how many were never copied back from the device in the open window,
/// and how many were uploaded from the host in it; `None` on a real GPU without the tracer,
/// or with no window.
pub fn provenance(values: &[u32]) -> Option<(u64, u64)> {
    type Check = unsafe extern "C" fn(*const u32, usize, *mut u64, *mut u64) -> bool;
    // SAFETY: as in `read`; `values` is a live slice and the out-pointers are locals.
    unsafe {
        let lib = counting_library()?;
        let check = lib.get::<Check>(b"gpu_labs_emulator_provenance\0").ok()?;
        let (mut missing, mut uploaded) = (0, 0);
        check(values.as_ptr(), values.len(), &mut missing, &mut uploaded)
            .then_some((missing, uploaded))
    }
}

/// The emulator's record of this run ([`EmulatorRecord`]), wherever the emulator is loaded
/// (posing as a real GPU too: its findings explain a fault there as well); `None` on a real
/// GPU, with the tracer or without.
pub fn record() -> Option<EmulatorRecord> {
    type Record = unsafe extern "C" fn(*mut u8, usize) -> usize;
    // SAFETY: opening the library cudarc already loaded only bumps its reference count; the
    // symbol, when present, has exactly this signature (grader/cuda-emulator/src/findings.rs),
    // and is given a buffer of the length it is told.
    unsafe {
        // Only a library already loaded (RTLD_NOLOAD): a CPU item loads none for this.
        let lib = libloading::os::unix::Library::open(
            Some("libcuda.so"),
            libloading::os::unix::RTLD_NOW | libc::RTLD_NOLOAD,
        )
        .ok()?;
        let read = lib.get::<Record>(b"gpu_labs_emulator_record\0").ok()?;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let len = read(buf.as_mut_ptr(), buf.len());
            if len <= buf.len() {
                buf.truncate(len);
                break;
            }
            buf = vec![0u8; len];
        }
        EmulatorRecord::parse(std::str::from_utf8(&buf).ok()?)
    }
}

/// The device work so far, once every launch accepted has ended (the emulator waits for
/// them); `None` on a real GPU, with the tracer or without (it has no clock of the device's
/// own work to give).
pub fn device_time() -> Option<DeviceTime> {
    type Time = unsafe extern "C" fn(*mut u64, *mut u64);
    let work = read()?;
    // SAFETY: as in `read`; the symbol has this signature
    // (grader/cuda-emulator/src/findings.rs).
    unsafe {
        let lib = counting_library()?;
        let time = lib.get::<Time>(b"gpu_labs_emulator_device_time\0").ok()?;
        let (mut runs, mut busy_ns) = (0, 0);
        time(&mut runs, &mut busy_ns);
        Some(DeviceTime {
            work: work.launches + work.blas_calls,
            runs,
            busy_ns,
        })
    }
}

/// The device work between a reading and now.
pub fn device_time_since(before: Option<DeviceTime>) -> Option<DeviceTime> {
    let (before, now) = (before?, device_time()?);
    Some(DeviceTime {
        work: now.work.saturating_sub(before.work),
        runs: now.runs.saturating_sub(before.runs),
        busy_ns: now.busy_ns.saturating_sub(before.busy_ns),
    })
}

/// The work done between two readings.
pub fn since(before: Option<DeviceWork>) -> Option<DeviceWork> {
    let (before, now) = (before?, read()?);
    let arithmetic =
        before
            .arithmetic
            .zip(now.arithmetic)
            .map(|(before, now)| crate::protocol::Arithmetic {
                loaded_bytes: now.loaded_bytes.saturating_sub(before.loaded_bytes),
                multiply_adds: now.multiply_adds.saturating_sub(before.multiply_adds),
            });
    Some(DeviceWork {
        launches: now.launches.saturating_sub(before.launches),
        blas_calls: now.blas_calls.saturating_sub(before.blas_calls),
        not_from_device: None,
        arithmetic,
    })
}
