//! Device code's heap: what a kernel's `malloc` and `new` allocate and its `free` and `delete`
//! give back (the prelude defines those inside each module and calls here). Each block is
//! device memory of its own ([`Kind::DeviceHeap`]: guard pages, confined kernels may use it,
//! races and faults name it), lives until a kernel frees it, and counts against the heap's
//! size, CUDA's `cudaLimitMallocHeapSize` (8 MiB unless `cuCtxSetLimit` set it): past it,
//! `malloc` gives a null pointer, as on a GPU. A free of anything else (a host address, a
//! `cuMemAlloc` buffer, a block already freed) is refused here, and the prelude stops the
//! launch, so a kernel never hands the C library's `free` a pointer of its choosing.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::memory::{self, Kind};

/// CUDA's default heap size (`CU_LIMIT_MALLOC_HEAP_SIZE`).
pub const DEFAULT_SIZE: usize = 8 << 20;

static SIZE: AtomicUsize = AtomicUsize::new(DEFAULT_SIZE);
static USED: AtomicUsize = AtomicUsize::new(0);

/// Sets the heap's size (`cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, …)`): later allocations
/// count against it.
pub fn set_size(bytes: usize) {
    SIZE.store(bytes, Ordering::Relaxed);
}

/// A block of `size` bytes aligned to `align` for a kernel, or null when the heap cannot hold
/// it (or `align` is not a power of two up to a page).
///
/// # Safety
/// Called by a module's prelude; it takes plain integers.
pub unsafe extern "C" fn alloc(size: u64, align: u64) -> *mut c_void {
    let (Ok(size), Ok(align)) = (usize::try_from(size), usize::try_from(align)) else {
        return std::ptr::null_mut();
    };
    if size == 0 || !align.is_power_of_two() || align > 4096 {
        return std::ptr::null_mut();
    }
    let limit = SIZE.load(Ordering::Relaxed);
    let reserved = USED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
        used.checked_add(size).filter(|&total| total <= limit)
    });
    if reserved.is_err() {
        return std::ptr::null_mut();
    }
    match memory::alloc_aligned(size, align, Kind::DeviceHeap) {
        Some(base) => base as *mut c_void,
        None => {
            USED.fetch_sub(size, Ordering::AcqRel);
            std::ptr::null_mut()
        }
    }
}

/// Gives back the block at `addr`; its size, or 0 when `addr` is not the start of a block
/// the heap handed out and still holds.
///
/// # Safety
/// Called by a module's prelude; it takes a plain integer.
pub unsafe extern "C" fn free(addr: u64) -> u64 {
    let Ok(addr) = usize::try_from(addr) else {
        return 0;
    };
    match crate::driver::hazard::release(addr, Kind::DeviceHeap) {
        Some(size) => {
            USED.fetch_sub(size, Ordering::AcqRel);
            size as u64
        }
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_device_memory_until_freed_and_only_once() {
        // SAFETY: the functions take plain integers.
        unsafe {
            let p = alloc(100, 16);
            assert!(!p.is_null());
            assert_eq!(p as usize % 16, 0);
            assert!(memory::device_span(p as usize).is_some());
            let q = alloc(64, 256);
            assert_eq!(q as usize % 256, 0);
            assert_eq!(free(p as u64), 100);
            assert_eq!(free(p as u64), 0, "a second free");
            assert!(memory::device_span(p as usize).is_none());
            assert_eq!(free(q as u64 + 16), 0, "not the start of a block");
            assert_eq!(free(q as u64), 64);
            let host = [0u8; 64];
            assert_eq!(free(host.as_ptr() as u64), 0, "host memory");
            assert!(alloc(0, 16).is_null());
            assert!(alloc(16, 3).is_null());
            assert!(
                alloc(DEFAULT_SIZE as u64 + 1, 16).is_null(),
                "more than the heap"
            );
        }
    }
}
