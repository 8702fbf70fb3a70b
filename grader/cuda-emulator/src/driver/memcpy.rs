//! Memory entry points: allocation, copies and memsets, with the driver's host
//! synchronisation rules (pageable host memory makes copies synchronous where the driver is).

use std::ffi::c_void;

use super::context;
use super::hazard;
use super::stream::{self, OpKind, Stream};
use super::{code, written};
use crate::memory::{self, Kind};
use crate::status::*;
use crate::util::write_out;

/// Device pointer type.
pub type CUdeviceptr = u64;

#[derive(Clone, Copy)]
struct Addr(usize);
// SAFETY: addresses of device or host memory the application keeps alive for the operation.
unsafe impl Send for Addr {}

fn check_device(ptr: CUdeviceptr, len: usize) -> Result<usize, CUresult> {
    let p = usize::try_from(ptr).map_err(|_| INVALID_VALUE)?;
    if len == 0 || memory::is_device_range(p, len) {
        Ok(p)
    } else {
        Err(INVALID_VALUE)
    }
}

/// A device-to-device copy, logged for a replay ([`crate::replay`]) when it runs.
fn device_copy(dst: usize, src: usize, len: usize) -> impl FnOnce() -> Result<(), CUresult> + Send {
    let copy = copy_op(dst, src, len);
    let (d, s) = (Addr(dst), Addr(src));
    move || {
        let (d, s) = (d, s);
        crate::replay::log_run(move || {
            let (d, s) = (d, s);
            // SAFETY: the replay log holds every allocation it used until it closes.
            unsafe { std::ptr::copy(s.0 as *const u8, d.0 as *mut u8, len) };
            true
        });
        copy()
    }
}

fn copy_op(dst: usize, src: usize, len: usize) -> impl FnOnce() -> Result<(), CUresult> + Send {
    let (d, s) = (Addr(dst), Addr(src));
    move || {
        let (d, s) = (d, s);
        if len > 0 {
            hazard::touch(s.0, false, &|| "a copy (cuMemcpy*)".into());
            hazard::touch(d.0, true, &|| "a copy (cuMemcpy*)".into());
            // SAFETY: ranges checked at submission; the application keeps them alive.
            unsafe { std::ptr::copy(s.0 as *const u8, d.0 as *mut u8, len) };
        }
        Ok(())
    }
}

/// Enqueues a host-to-device copy: from pinned memory the copy reads the host buffer when it
/// runs; from pageable memory the data is staged now, as the driver does.
fn htod(
    s: &std::sync::Arc<Stream>,
    dst: usize,
    src: *const c_void,
    len: usize,
) -> Result<u64, CUresult> {
    if len > 0 && src.is_null() {
        return Err(INVALID_VALUE);
    }
    let _gate = crate::replay::gate();
    crate::counters::count_upload(len);
    if memory::is_pinned_host(src as usize, len) {
        let copy = copy_op(dst, src as usize, len);
        let d = Addr(dst);
        return s.enqueue(OpKind::Work, move || {
            let d = d;
            copy()?;
            if (crate::provenance::is_open() || crate::replay::logging()) && len > 0 {
                // SAFETY: the destination range was checked at submission and just written.
                let written = unsafe { std::slice::from_raw_parts(d.0 as *const u8, len) };
                crate::provenance::note_upload(written);
                crate::replay::log(crate::replay::Op::Upload {
                    dst: d.0,
                    bytes: written.to_vec(),
                });
            }
            Ok(())
        });
    }
    let mut staged = vec![0u8; len];
    if len > 0 {
        // SAFETY: the application passes `len` readable bytes at `src`.
        unsafe { std::ptr::copy_nonoverlapping(src.cast::<u8>(), staged.as_mut_ptr(), len) };
    }
    crate::provenance::note_upload(&staged);
    let d = Addr(dst);
    s.enqueue(OpKind::Work, move || {
        let d = d;
        hazard::touch(d.0, true, &|| "a copy from the host (cuMemcpyHtoD*)".into());
        if crate::replay::logging() {
            crate::replay::log(crate::replay::Op::Upload {
                dst: d.0,
                bytes: staged.clone(),
            });
        }
        // SAFETY: destination checked at submission.
        unsafe { std::ptr::copy_nonoverlapping(staged.as_ptr(), d.0 as *mut u8, staged.len()) };
        Ok(())
    })
}

/// Enqueues a device-to-host copy; to pageable memory it returns only when the copy is done.
fn dtoh(
    s: &std::sync::Arc<Stream>,
    dst: *mut c_void,
    src: usize,
    len: usize,
) -> Result<(), CUresult> {
    if len > 0 && dst.is_null() {
        return Err(INVALID_VALUE);
    }
    let _gate = crate::replay::gate();
    crate::counters::count_copy_back(len);
    let pinned = memory::is_pinned_host(dst as usize, len);
    let copy = copy_op(dst as usize, src, len);
    let h = Addr(dst as usize);
    let seq = s.enqueue(OpKind::Work, move || {
        let h = h;
        copy()?;
        if (crate::provenance::is_open() || crate::replay::logging()) && len > 0 {
            // SAFETY: the application keeps `len` bytes at the destination alive for the copy,
            // which has just written them.
            let read = unsafe { std::slice::from_raw_parts(h.0 as *const u8, len) };
            crate::provenance::note_copy_back(read);
            crate::replay::log(crate::replay::Op::Download {
                src,
                real: read.to_vec(),
            });
        }
        Ok(())
    })?;
    if !pinned {
        s.wait_until(seq);
        s.ctx.check()?;
    }
    Ok(())
}

/// Allocates device memory (with guard pages).
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytes: usize) -> CUresult {
    if let Err(e) = context::current().and_then(|c| c.check()) {
        return e;
    }
    if dptr.is_null() || bytes == 0 {
        return INVALID_VALUE;
    }
    match memory::alloc(bytes, Kind::Device) {
        Some(p) => {
            *dptr = p as u64;
            SUCCESS
        }
        None => OUT_OF_MEMORY,
    }
}

/// Allocates managed memory: device memory is host-accessible anyway.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(
    dptr: *mut CUdeviceptr,
    bytes: usize,
    _flags: u32,
) -> CUresult {
    cuMemAlloc_v2(dptr, bytes)
}

/// Allocates device memory; pools are not emulated, so this allocates at once.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(
    dptr: *mut CUdeviceptr,
    bytes: usize,
    s: stream::CUstream,
) -> CUresult {
    if let Err(e) = stream::resolve(s) {
        return e;
    }
    cuMemAlloc_v2(dptr, bytes)
}

/// Frees device memory after the context's queued work is done (the driver synchronises too).
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    let ctx = match context::current() {
        Ok(c) => c,
        Err(e) => return e,
    };
    let sticky = ctx.synchronize();
    if dptr == 0 {
        return code(sticky);
    }
    let held = memory::containing(dptr as usize, 0)
        .is_some_and(|a| a.base == dptr as usize && a.kind == Kind::Device)
        && crate::replay::defer_free(dptr as usize);
    if !held && hazard::release(dptr as usize, Kind::Device).is_none() {
        return INVALID_VALUE;
    }
    code(sticky)
}

/// Frees device memory when the stream reaches this point.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: CUdeviceptr, s: stream::CUstream) -> CUresult {
    let s = match stream::resolve(s) {
        Ok(s) => s,
        Err(e) => return e,
    };
    if memory::containing(dptr as usize, 0).is_none_or(|a| a.base != dptr as usize) {
        return INVALID_VALUE;
    }
    let p = Addr(dptr as usize);
    code(
        s.enqueue(OpKind::Marker, move || {
            let p = p;
            if !crate::replay::defer_free(p.0) {
                hazard::release(p.0, Kind::Device);
            }
            Ok(())
        })
        .map(drop),
    )
}

/// Allocates page-locked host memory.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    bytes: usize,
    _flags: u32,
) -> CUresult {
    if pp.is_null() || bytes == 0 {
        return INVALID_VALUE;
    }
    match memory::alloc(bytes, Kind::PinnedHost) {
        Some(p) => {
            *pp = p as *mut c_void;
            SUCCESS
        }
        None => OUT_OF_MEMORY,
    }
}

/// Allocates page-locked host memory.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytes: usize) -> CUresult {
    cuMemHostAlloc(pp, bytes, 0)
}

/// Frees page-locked host memory.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    if let Ok(c) = context::current() {
        let _ = c.synchronize();
    }
    if hazard::release(p as usize, Kind::PinnedHost).is_some() {
        SUCCESS
    } else {
        INVALID_VALUE
    }
}

/// The device address of page-locked host memory: the same address.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    dptr: *mut CUdeviceptr,
    p: *mut c_void,
    _flags: u32,
) -> CUresult {
    written(write_out(dptr, p as u64))
}

/// Base and size of the allocation containing a device pointer.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    base: *mut CUdeviceptr,
    size: *mut usize,
    dptr: CUdeviceptr,
) -> CUresult {
    match memory::containing(dptr as usize, 0) {
        Some(a) => {
            write_out(base, a.base as u64);
            write_out(size, a.size);
            SUCCESS
        }
        None => NOT_FOUND,
    }
}

/// Synchronous host-to-device copy.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
) -> CUresult {
    code((|| {
        let d = check_device(dst, n)?;
        let s = context::current()?.null_stream();
        let seq = htod(&s, d, src, n)?;
        s.wait_until(seq);
        s.ctx.check()
    })())
}

/// Asynchronous host-to-device copy.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    code((|| {
        let d = check_device(dst, n)?;
        htod(&stream::resolve(h)?, d, src, n).map(drop)
    })())
}

/// Synchronous device-to-host copy.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    code((|| {
        // Counted and noted like every copy back (the grader's checks see it too).
        let s = check_device(src, n)?;
        let st = context::current()?.null_stream();
        dtoh(&st, dst, s, n)?;
        st.wait_idle();
        st.ctx.check()
    })())
}

/// Device-to-host copy: returns when done unless the destination is page-locked.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: CUdeviceptr,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    code((|| {
        let s = check_device(src, n)?;
        dtoh(&stream::resolve(h)?, dst, s, n)
    })())
}

/// Device-to-device copy on the default stream.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    code((|| {
        let (d, s) = (check_device(dst, n)?, check_device(src, n)?);
        let _gate = crate::replay::gate();
        context::current()?
            .null_stream()
            .enqueue(OpKind::Work, device_copy(d, s, n))
            .map(drop)
    })())
}

/// Asynchronous device-to-device copy.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    code((|| {
        let (d, s) = (check_device(dst, n)?, check_device(src, n)?);
        let _gate = crate::replay::gate();
        stream::resolve(h)?
            .enqueue(OpKind::Work, device_copy(d, s, n))
            .map(drop)
    })())
}

/// Peer copy: there is one device, so a device-to-device copy.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeerAsync(
    dst: CUdeviceptr,
    _dst_ctx: context::CUcontext,
    src: CUdeviceptr,
    _src_ctx: context::CUcontext,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    cuMemcpyDtoDAsync_v2(dst, src, n, h)
}

/// Unified-addressing copy: direction inferred from the pointers.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyAsync(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    let (dd, sd) = (
        memory::is_device_range(dst as usize, n),
        memory::is_device_range(src as usize, n),
    );
    match (dd, sd) {
        (true, true) => cuMemcpyDtoDAsync_v2(dst, src, n, h),
        (true, false) => cuMemcpyHtoDAsync_v2(dst, src as *const c_void, n, h),
        (false, true) => cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, n, h),
        (false, false) => {
            std::ptr::copy(src as *const u8, dst as *mut u8, n);
            SUCCESS
        }
    }
}

/// Unified-addressing synchronous copy.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    let r = cuMemcpyAsync(dst, src, n, std::ptr::null_mut());
    if r != SUCCESS {
        return r;
    }
    code(context::current().and_then(|c| {
        c.null_stream().wait_idle();
        c.check()
    }))
}

fn memset(
    dst: CUdeviceptr,
    value: u32,
    width: usize,
    count: usize,
    h: Option<stream::CUstream>,
) -> Result<(), CUresult> {
    let len = count.checked_mul(width).ok_or(INVALID_VALUE)?;
    let d = Addr(check_device(dst, len)?);
    let _gate = crate::replay::gate();
    if !d.0.is_multiple_of(width) {
        return Err(INVALID_VALUE);
    }
    crate::provenance::note_fill(match width {
        1 => u32::from_ne_bytes([value as u8; 4]),
        2 => (value & 0xffff) | ((value & 0xffff) << 16),
        _ => value,
    });
    let s = match h {
        Some(h) => stream::resolve(h)?,
        None => context::current()?.null_stream(),
    };
    s.enqueue(OpKind::Work, move || {
        let d = d;
        if len > 0 {
            hazard::touch(d.0, true, &|| "a memset (cuMemset*)".into());
        }
        let fill = move || {
            let d = d;
            // SAFETY: the range was checked at submission (and a replay log holds it until
            // it closes).
            unsafe {
                match width {
                    1 => std::ptr::write_bytes(d.0 as *mut u8, value as u8, count),
                    2 => std::slice::from_raw_parts_mut(d.0 as *mut u16, count).fill(value as u16),
                    _ => std::slice::from_raw_parts_mut(d.0 as *mut u32, count).fill(value),
                }
            }
            true
        };
        crate::replay::log_run(fill);
        fill();
        Ok(())
    })
    .map(drop)
}

/// Sets bytes (on the default stream).
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: CUdeviceptr, v: u8, n: usize) -> CUresult {
    code(memset(dst, u32::from(v), 1, n, None))
}

/// Sets bytes asynchronously.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(
    dst: CUdeviceptr,
    v: u8,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    code(memset(dst, u32::from(v), 1, n, Some(h)))
}

/// Sets 16-bit values (on the default stream).
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16_v2(dst: CUdeviceptr, v: u16, n: usize) -> CUresult {
    code(memset(dst, u32::from(v), 2, n, None))
}

/// Sets 16-bit values asynchronously.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16Async(
    dst: CUdeviceptr,
    v: u16,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    code(memset(dst, u32::from(v), 2, n, Some(h)))
}

/// Sets 32-bit values (on the default stream).
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dst: CUdeviceptr, v: u32, n: usize) -> CUresult {
    code(memset(dst, v, 4, n, None))
}

/// Sets 32-bit values asynchronously.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(
    dst: CUdeviceptr,
    v: u32,
    n: usize,
    h: stream::CUstream,
) -> CUresult {
    code(memset(dst, v, 4, n, Some(h)))
}

/// Prefetching is a no-op: memory is already where the CPU needs it.
#[no_mangle]
pub unsafe extern "C" fn cuMemPrefetchAsync(
    _p: CUdeviceptr,
    _n: usize,
    _dev: i32,
    _h: stream::CUstream,
) -> CUresult {
    SUCCESS
}

/// Memory advice is ignored.
#[no_mangle]
pub unsafe extern "C" fn cuMemAdvise(
    _p: CUdeviceptr,
    _n: usize,
    _advice: u32,
    _dev: i32,
) -> CUresult {
    SUCCESS
}
