//! Counts of accepted device work (kernel launches, cuBLAS computations), exported as
//! `gpu_labs_emulator_counters` so the grader can tell a "GPU" function that never used the
//! device (it computed on the host and copied the result up). Real drivers have no such
//! symbol, which is how the grader knows the count is unavailable there.

use std::sync::atomic::{AtomicU64, Ordering};

static LAUNCHES: AtomicU64 = AtomicU64::new(0);
static BLAS_CALLS: AtomicU64 = AtomicU64::new(0);
static UPLOADED: AtomicU64 = AtomicU64::new(0);
static COPIED_BACK: AtomicU64 = AtomicU64::new(0);

/// Notes one accepted kernel launch.
pub fn count_launch() {
    LAUNCHES.fetch_add(1, Ordering::Relaxed);
}

/// Notes one accepted cuBLAS computation.
pub fn count_blas_call() {
    BLAS_CALLS.fetch_add(1, Ordering::Relaxed);
}

/// Notes `bytes` copied from the host to the device.
pub fn count_upload(bytes: usize) {
    UPLOADED.fetch_add(bytes as u64, Ordering::Relaxed);
}

/// Notes `bytes` copied from the device back to the host.
pub fn count_copy_back(bytes: usize) {
    COPIED_BACK.fetch_add(bytes as u64, Ordering::Relaxed);
}

/// Writes the bytes copied each way since the library was loaded, so the grader can tell a
/// training step that shuttles its parameters through the host; either pointer may be null.
///
/// # Safety
/// Each pointer must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_transfers(uploaded: *mut u64, copied_back: *mut u64) {
    if !uploaded.is_null() {
        *uploaded = UPLOADED.load(Ordering::Relaxed);
    }
    if !copied_back.is_null() {
        *copied_back = COPIED_BACK.load(Ordering::Relaxed);
    }
}

/// Writes the counts since the library was loaded; either pointer may be null.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_counters(launches: *mut u64, blas_calls: *mut u64) {
    if !launches.is_null() {
        *launches = LAUNCHES.load(Ordering::Relaxed);
    }
    if !blas_calls.is_null() {
        *blas_calls = BLAS_CALLS.load(Ordering::Relaxed);
    }
}
