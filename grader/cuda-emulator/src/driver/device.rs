//! The one device: "gpu-labs CPU emulator", compute capability 8.0, one multiprocessor per
//! CPU core; and the driver-wide calls (init, version, error strings).

use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, Ordering};

use super::written;
use crate::status::*;
use crate::util::{cores, write_out};

/// The device name.
pub const NAME: &str = "gpu-labs CPU emulator";
/// Shared memory per block without opt-in (48 KiB).
pub const SHARED_PER_BLOCK: usize = 48 * 1024;
/// Shared memory per block with opt-in (`cuFuncSetAttribute`).
pub const SHARED_PER_BLOCK_OPTIN: usize = 163 * 1024;
/// Maximum threads per block.
pub const MAX_THREADS: u32 = 1024;
/// Maximum block dimensions.
pub const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
/// Maximum grid dimensions.
pub const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// Whether the emulator shows its device: `GPU_LABS_EMULATOR_DEVICES=0` hides it, so that a
/// process sees a driver without a GPU (as on a machine with the driver but no device); read
/// from the configuration frozen at load ([`crate::config`]).
pub fn device_visible() -> bool {
    crate::config::get().device_visible
}

fn check_device(dev: i32) -> Result<(), CUresult> {
    if !INITIALIZED.load(Ordering::Acquire) {
        Err(NOT_INITIALIZED)
    } else if dev != 0 {
        Err(INVALID_DEVICE)
    } else {
        Ok(())
    }
}

/// Total "device" memory: the host's physical memory.
pub fn total_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    usize::try_from(pages)
        .unwrap_or(0)
        .saturating_mul(usize::try_from(size).unwrap_or(4096))
        .max(1 << 30)
}

/// Free "device" memory: the host's available memory.
pub fn free_memory() -> usize {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_AVPHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    usize::try_from(pages)
        .unwrap_or(0)
        .saturating_mul(usize::try_from(size).unwrap_or(4096))
}

/// The value of a device attribute, or `None` for an unknown attribute.
pub fn attribute(attr: i32) -> Option<i32> {
    let sms = i32::try_from(cores()).unwrap_or(1);
    Some(match attr {
        1 => MAX_THREADS as i32,
        2 => MAX_BLOCK[0] as i32,
        3 => MAX_BLOCK[1] as i32,
        4 => MAX_BLOCK[2] as i32,
        5 => MAX_GRID[0] as i32,
        6 => MAX_GRID[1] as i32,
        7 => MAX_GRID[2] as i32,
        8 => SHARED_PER_BLOCK as i32,
        9 => 65536,       // total constant memory
        10 => 32,         // warp size
        11 => i32::MAX,   // max pitch
        12 => 65536,      // registers per block
        13 => 1_410_000,  // clock rate (kHz)
        14 => 512,        // texture alignment
        15 => 1,          // gpu overlap
        16 => sms,        // multiprocessors
        17 => 0,          // kernel exec timeout
        18 => 1,          // integrated: memory is host memory
        19 => 1,          // can map host memory
        20 => 0,          // compute mode default
        21..=30 => 65536, // texture / surface sizes
        31 => 1,          // concurrent kernels
        32 => 0,          // ECC
        33..=35 => 0,     // PCI bus / device, TCC
        36 => 1_215_000,  // memory clock (kHz)
        37 => 5120,       // bus width
        38 => 40 << 20,   // L2 cache
        39 => 2048,       // threads per multiprocessor
        40 => 2,          // async engines
        41 => 1,          // unified addressing
        42..=74 => 65536, // texture / surface sizes
        75 => 8,          // compute capability major
        76 => 0,          // compute capability minor
        77 => 65536,
        78 => 1,          // stream priorities
        79 | 80 => 1,     // L1 caches
        81 => 164 * 1024, // shared memory per multiprocessor
        82 => 65536,      // registers per multiprocessor
        83 => 1,          // managed memory
        84 | 85 => 0,     // multi-GPU board
        86 => 1,          // host native atomics
        87 => 2,          // single to double perf ratio
        88 => 1,          // pageable memory access
        89 => 1,          // concurrent managed access
        90 => 1,          // compute preemption
        91 => 1,          // host pointer for registered memory
        92..=94 => 0,     // stream memory ops
        95 => 1,          // cooperative launch
        96 => 0,
        97 => SHARED_PER_BLOCK_OPTIN as i32,
        98 => 0,
        99 => 1, // host register
        100 | 101 => 1,
        102..=105 => 0,
        106 => 32, // blocks per multiprocessor
        107..=114 => 0,
        115 => 1, // memory pools, as every GPU since CUDA 11.2: cudarc then allocates and frees
        // in stream order (cuMemAllocAsync, cuMemFreeAsync), so dropping a buffer does
        // not synchronize, as on the GPUs students have
        116..=119 => 0,
        120..=140 => 0,
        _ => return None,
    })
}

/// Initialises the driver (flags must be 0).
#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: u32) -> CUresult {
    if flags != 0 {
        return INVALID_VALUE;
    }
    if !device_visible() {
        return NO_DEVICE;
    }
    INITIALIZED.store(true, Ordering::Release);
    SUCCESS
}

/// Driver version 12.8 (12080).
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut i32) -> CUresult {
    written(write_out(version, 12080))
}

/// Device `ordinal` (only 0 exists).
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(dev: *mut i32, ordinal: i32) -> CUresult {
    if let Err(e) = check_device(ordinal) {
        return e;
    }
    written(write_out(dev, 0))
}

/// One device.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut i32) -> CUresult {
    if !INITIALIZED.load(Ordering::Acquire) {
        return NOT_INITIALIZED;
    }
    written(write_out(count, 1))
}

/// The device name, truncated to `len` bytes with a NUL.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: i32, dev: i32) -> CUresult {
    if let Err(e) = check_device(dev) {
        return e;
    }
    let Ok(len) = usize::try_from(len) else {
        return INVALID_VALUE;
    };
    if name.is_null() || len == 0 {
        return INVALID_VALUE;
    }
    let n = NAME.len().min(len - 1);
    std::ptr::copy_nonoverlapping(NAME.as_ptr().cast::<c_char>(), name, n);
    *name.add(n) = 0;
    SUCCESS
}

/// Total memory of the device.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: i32) -> CUresult {
    if let Err(e) = check_device(dev) {
        return e;
    }
    written(write_out(bytes, total_memory()))
}

/// A device attribute.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(value: *mut i32, attr: i32, dev: i32) -> CUresult {
    if let Err(e) = check_device(dev) {
        return e;
    }
    match attribute(attr) {
        Some(v) if write_out(value, v) => SUCCESS,
        _ => INVALID_VALUE,
    }
}

/// Compute capability 8.0.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceComputeCapability(
    major: *mut i32,
    minor: *mut i32,
    dev: i32,
) -> CUresult {
    if let Err(e) = check_device(dev) {
        return e;
    }
    written(write_out(major, 8) && write_out(minor, 0))
}

/// A fixed UUID.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut [u8; 16], dev: i32) -> CUresult {
    if let Err(e) = check_device(dev) {
        return e;
    }
    written(write_out(uuid, *b"gpu-labs-emu-000"))
}

/// Same as [`cuDeviceGetUuid`].
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut [u8; 16], dev: i32) -> CUresult {
    cuDeviceGetUuid(uuid, dev)
}

/// PCI bus id "0000:00:00.0".
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(id: *mut c_char, len: i32, dev: i32) -> CUresult {
    if let Err(e) = check_device(dev) {
        return e;
    }
    let s = b"0000:00:00.0\0";
    match usize::try_from(len) {
        Ok(l) if l >= s.len() && !id.is_null() => {
            std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), id, s.len());
            SUCCESS
        }
        _ => INVALID_VALUE,
    }
}

/// There is no peer device.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(can: *mut i32, dev: i32, peer: i32) -> CUresult {
    if check_device(dev).is_err() || peer != 0 {
        return INVALID_DEVICE;
    }
    write_out(can, 0);
    SUCCESS
}

/// Free and total memory.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    if let Err(e) = super::context::current() {
        return e;
    }
    written(write_out(free, free_memory()) && write_out(total, total_memory()))
}

/// Name of a result code.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(e: CUresult, out: *mut *const c_char) -> CUresult {
    match driver_error(e) {
        Some((name, _)) if write_out(out, name) => SUCCESS,
        _ => INVALID_VALUE,
    }
}

/// Description of a result code.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(e: CUresult, out: *mut *const c_char) -> CUresult {
    match driver_error(e) {
        Some((_, desc)) if write_out(out, desc) => SUCCESS,
        _ => INVALID_VALUE,
    }
}

/// Profiling is a no-op.
#[no_mangle]
pub unsafe extern "C" fn cuProfilerStart() -> CUresult {
    SUCCESS
}

/// Profiling is a no-op.
#[no_mangle]
pub unsafe extern "C" fn cuProfilerStop() -> CUresult {
    SUCCESS
}
