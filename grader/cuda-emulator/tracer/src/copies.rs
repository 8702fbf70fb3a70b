//! Copies between host and device, and memsets: counted (bytes each way) and, while the
//! grader holds a provenance window open, their words noted, as the emulator does.
//!
//! A copy back to pageable memory has finished when the call returns (the driver's
//! documented behaviour), so its bytes are read then. To page-locked memory it finishes
//! later, in stream order: a host function queued behind it reads the bytes when it runs.

use crate::counters::{count_copy_back, count_upload};
use crate::provenance;
use crate::status::{CUresult, INVALID_VALUE, NOT_SUPPORTED, SUCCESS};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

type Ptr = *mut c_void;
type DevicePtr = u64;

/// Page-locked host allocations made through the tracer: start → length.
static PINNED: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

/// Copies back to page-locked memory whose bytes are not read yet.
static PENDING: AtomicUsize = AtomicUsize::new(0);

/// Whether `[addr, addr + len)` lies in a page-locked allocation.
fn is_pinned(addr: usize, len: usize) -> bool {
    let Ok(pinned) = PINNED.lock() else {
        return false;
    };
    pinned
        .range(..=addr)
        .next_back()
        .is_some_and(|(start, size)| addr + len <= start + size)
}

/// The `len` bytes at `p`.
///
/// # Safety
/// They must be readable.
unsafe fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p.cast(), len)
    }
}

/// Notes an upload of `len` bytes from `src` that the driver accepted.
unsafe fn uploaded(r: CUresult, src: *const c_void, len: usize) -> CUresult {
    if r == SUCCESS {
        count_upload(len);
        if provenance::is_open() {
            provenance::note_upload(bytes(src, len));
        }
    }
    r
}

/// Notes a copy back of `len` bytes into `dst` on stream `h` that the driver accepted.
unsafe fn copied_back(r: CUresult, dst: Ptr, len: usize, h: Option<Ptr>) -> CUresult {
    if r != SUCCESS {
        return r;
    }
    count_copy_back(len);
    if !provenance::is_open() || len == 0 {
        return r;
    }
    match h {
        Some(h) if is_pinned(dst as usize, len) => {
            let range = Box::into_raw(Box::new((dst as usize, len))).cast::<c_void>();
            PENDING.fetch_add(1, Ordering::SeqCst);
            let queued = call_real!(Driver, cuLaunchHostFunc,
                fn(Ptr, Option<unsafe extern "C" fn(Ptr)>, Ptr) -> CUresult,
                NOT_SUPPORTED; h, Some(note_when_copied), range);
            if queued != SUCCESS {
                // Not queued: the bytes are noted as they are now.
                note_when_copied(range);
            }
        }
        _ => provenance::note_copy_back(bytes(dst, len)),
    }
    r
}

/// Host function queued behind a copy back to page-locked memory: notes its bytes.
unsafe extern "C" fn note_when_copied(range: Ptr) {
    let (addr, len) = *Box::from_raw(range.cast::<(usize, usize)>());
    provenance::note_copy_back(bytes(addr as *const c_void, len));
    PENDING.fetch_sub(1, Ordering::SeqCst);
}

/// `cuMemcpyHtoD_v2`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: DevicePtr, src: *const c_void, n: usize) -> CUresult {
    let r = call_real!(Driver, cuMemcpyHtoD_v2, fn(DevicePtr, *const c_void, usize) -> CUresult,
        NOT_SUPPORTED; dst, src, n);
    uploaded(r, src, n)
}

/// `cuMemcpyHtoDAsync_v2`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: DevicePtr,
    src: *const c_void,
    n: usize,
    h: Ptr,
) -> CUresult {
    // Noted before the call: from page-locked memory the driver reads the bytes later.
    let r = call_real!(Driver, cuMemcpyHtoDAsync_v2,
        fn(DevicePtr, *const c_void, usize, Ptr) -> CUresult, NOT_SUPPORTED; dst, src, n, h);
    uploaded(r, src, n)
}

/// `cuMemcpyDtoH_v2`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: Ptr, src: DevicePtr, n: usize) -> CUresult {
    let r = call_real!(Driver, cuMemcpyDtoH_v2, fn(Ptr, DevicePtr, usize) -> CUresult,
        NOT_SUPPORTED; dst, src, n);
    copied_back(r, dst, n, None)
}

/// `cuMemcpyDtoHAsync_v2`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: Ptr,
    src: DevicePtr,
    n: usize,
    h: Ptr,
) -> CUresult {
    let r = call_real!(Driver, cuMemcpyDtoHAsync_v2, fn(Ptr, DevicePtr, usize, Ptr) -> CUresult,
        NOT_SUPPORTED; dst, src, n, h);
    copied_back(r, dst, n, Some(h))
}

/// Whether `p` is device memory (the driver knows its allocation).
unsafe fn is_device(p: DevicePtr) -> bool {
    let (mut base, mut size) = (0u64, 0usize);
    call_real!(Driver, cuMemGetAddressRange_v2, fn(*mut DevicePtr, *mut usize, DevicePtr) -> CUresult,
        NOT_SUPPORTED; &mut base, &mut size, p)
        == SUCCESS
}

/// `cuMemcpyAsync` (unified addressing): counted as the copy its pointers make it.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyAsync(
    dst: DevicePtr,
    src: DevicePtr,
    n: usize,
    h: Ptr,
) -> CUresult {
    let r = call_real!(Driver, cuMemcpyAsync, fn(DevicePtr, DevicePtr, usize, Ptr) -> CUresult,
        NOT_SUPPORTED; dst, src, n, h);
    unified(r, dst, src, n, Some(h))
}

/// `cuMemcpy` (unified addressing): counted as the copy its pointers make it.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpy(dst: DevicePtr, src: DevicePtr, n: usize) -> CUresult {
    let r = call_real!(Driver, cuMemcpy, fn(DevicePtr, DevicePtr, usize) -> CUresult,
        NOT_SUPPORTED; dst, src, n);
    unified(r, dst, src, n, None)
}

unsafe fn unified(
    r: CUresult,
    dst: DevicePtr,
    src: DevicePtr,
    n: usize,
    h: Option<Ptr>,
) -> CUresult {
    match (is_device(dst), is_device(src)) {
        (true, false) => uploaded(r, src as *const c_void, n),
        (false, true) => copied_back(r, dst as Ptr, n, h),
        _ => r,
    }
}

/// Notes a memset's pattern (as a 32-bit word) when the driver accepted it.
fn filled(r: CUresult, pattern: u32) -> CUresult {
    if r == SUCCESS {
        provenance::note_fill(pattern);
    }
    r
}

/// `cuMemsetD8_v2`, noted.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: DevicePtr, v: u8, n: usize) -> CUresult {
    let r = call_real!(Driver, cuMemsetD8_v2, fn(DevicePtr, u8, usize) -> CUresult,
        NOT_SUPPORTED; dst, v, n);
    filled(r, u32::from_ne_bytes([v; 4]))
}

/// `cuMemsetD8Async`, noted.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(dst: DevicePtr, v: u8, n: usize, h: Ptr) -> CUresult {
    let r = call_real!(Driver, cuMemsetD8Async, fn(DevicePtr, u8, usize, Ptr) -> CUresult,
        NOT_SUPPORTED; dst, v, n, h);
    filled(r, u32::from_ne_bytes([v; 4]))
}

/// `cuMemsetD16_v2`, noted.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16_v2(dst: DevicePtr, v: u16, n: usize) -> CUresult {
    let r = call_real!(Driver, cuMemsetD16_v2, fn(DevicePtr, u16, usize) -> CUresult,
        NOT_SUPPORTED; dst, v, n);
    filled(r, u32::from(v) | (u32::from(v) << 16))
}

/// `cuMemsetD16Async`, noted.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16Async(dst: DevicePtr, v: u16, n: usize, h: Ptr) -> CUresult {
    let r = call_real!(Driver, cuMemsetD16Async, fn(DevicePtr, u16, usize, Ptr) -> CUresult,
        NOT_SUPPORTED; dst, v, n, h);
    filled(r, u32::from(v) | (u32::from(v) << 16))
}

/// `cuMemsetD32_v2`, noted.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dst: DevicePtr, v: u32, n: usize) -> CUresult {
    let r = call_real!(Driver, cuMemsetD32_v2, fn(DevicePtr, u32, usize) -> CUresult,
        NOT_SUPPORTED; dst, v, n);
    filled(r, v)
}

/// `cuMemsetD32Async`, noted.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(dst: DevicePtr, v: u32, n: usize, h: Ptr) -> CUresult {
    let r = call_real!(Driver, cuMemsetD32Async, fn(DevicePtr, u32, usize, Ptr) -> CUresult,
        NOT_SUPPORTED; dst, v, n, h);
    filled(r, v)
}

/// Records a page-locked allocation the driver made.
unsafe fn pinned(r: CUresult, pp: *mut Ptr, bytes: usize) -> CUresult {
    if r == SUCCESS && !pp.is_null() {
        if let Ok(mut pinned) = PINNED.lock() {
            pinned.insert(*pp as usize, bytes);
        }
    }
    r
}

/// `cuMemHostAlloc`, recorded as page-locked.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(pp: *mut Ptr, bytes: usize, flags: u32) -> CUresult {
    let r = call_real!(Driver, cuMemHostAlloc, fn(*mut Ptr, usize, u32) -> CUresult,
        NOT_SUPPORTED; pp, bytes, flags);
    pinned(r, pp, bytes)
}

/// `cuMemAllocHost_v2`, recorded as page-locked.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut Ptr, bytes: usize) -> CUresult {
    let r = call_real!(Driver, cuMemAllocHost_v2, fn(*mut Ptr, usize) -> CUresult,
        NOT_SUPPORTED; pp, bytes);
    pinned(r, pp, bytes)
}

/// `cuMemFreeHost`: once every pending copy back has been noted (its host function reads
/// the memory being freed), the real free.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: Ptr) -> CUresult {
    if p.is_null() {
        return INVALID_VALUE;
    }
    if PENDING.load(Ordering::SeqCst) > 0 {
        let _ = call_real!(Driver, cuCtxSynchronize, fn() -> CUresult, NOT_SUPPORTED;);
    }
    if let Ok(mut pinned) = PINNED.lock() {
        pinned.remove(&(p as usize));
    }
    call_real!(Driver, cuMemFreeHost, fn(Ptr) -> CUresult, NOT_SUPPORTED; p)
}
