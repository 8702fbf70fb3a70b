//! Device memory: host memory mapped with `PROT_NONE` guard pages on both sides, so a kernel
//! that runs off the end of a buffer faults at once. Device pointers are host addresses. A
//! registry of live allocations lets copies be checked and faults be explained.

use std::collections::BTreeMap;
use std::sync::{LazyLock, RwLock};

/// Alignment of device allocations: small, so that an off-by-one overflow of a buffer whose
/// size is a multiple of 16 bytes lands in the guard page (a real GPU aligns to 256).
pub const ALIGN: usize = 16;

/// What an address range was allocated as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `cuMemAlloc` and friends: guarded.
    Device,
    /// Page-locked host memory (`cuMemHostAlloc`): copies from or to it may be asynchronous.
    PinnedHost,
    /// A `__constant__` or `__device__` variable of a loaded module.
    ModuleGlobal,
    /// A block of device code's heap (a kernel's `malloc` or `new`, the `heap` module): guarded
    /// like [`Kind::Device`], freed only by a kernel's `free` or `delete`.
    DeviceHeap,
}

/// One live allocation.
#[derive(Clone, Copy, Debug)]
pub struct Allocation {
    /// First usable byte.
    pub base: usize,
    /// Usable size in bytes.
    pub size: usize,
    /// Start of the whole mapping, guard pages included (0 when not mapped by us).
    map_start: usize,
    /// Length of the whole mapping.
    map_len: usize,
    /// What it is.
    pub kind: Kind,
}

impl Allocation {
    /// Where its span starts, guard pages included (what [`device_span`] gives as `lo`).
    pub fn span_start(&self) -> usize {
        if self.map_len > 0 {
            self.map_start
        } else {
            self.base
        }
    }
}

static ALLOCATIONS: LazyLock<RwLock<BTreeMap<usize, Allocation>>> =
    LazyLock::new(|| RwLock::new(BTreeMap::new()));

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096).max(4096)
}

/// Maps `size` bytes between two guard pages, the buffer ending right before the upper guard.
pub fn alloc(size: usize, kind: Kind) -> Option<usize> {
    alloc_aligned(size, ALIGN, kind)
}

/// [`alloc`] with the buffer's start aligned to `align` (a power of two, at least [`ALIGN`]
/// is used): it then ends up to `align - 1` bytes before the upper guard.
pub fn alloc_aligned(size: usize, align: usize, kind: Kind) -> Option<usize> {
    let align = align.max(ALIGN);
    if !align.is_power_of_two() {
        return None;
    }
    let page = page_size();
    let data_len = size.checked_add(align - 1)?.checked_add(page - 1)? / page * page;
    let map_len = data_len.checked_add(2 * page)?;
    // SAFETY: an anonymous private mapping with no address hint.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return None;
    }
    let map_start = map as usize;
    let data_start = map_start + page;
    // SAFETY: the range lies inside the mapping just created.
    if unsafe {
        libc::mprotect(
            data_start as *mut _,
            data_len,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    } != 0
    {
        // SAFETY: unmapping what we mapped.
        unsafe { libc::munmap(map, map_len) };
        return None;
    }
    let base = (data_start + data_len - size) / align * align;
    let a = Allocation {
        base,
        size,
        map_start,
        map_len,
        kind,
    };
    ALLOCATIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(base, a);
    Some(base)
}

/// Unmaps an allocation of `kind` made by [`alloc`], returning it; `None` if `base` is not
/// the start of one. (What else keeps state about it, the stream check, is told by the caller:
/// `driver::hazard::release`.)
pub fn release(base: usize, kind: Kind) -> Option<Allocation> {
    let mut map = ALLOCATIONS.write().unwrap_or_else(|e| e.into_inner());
    match map.get(&base) {
        Some(a) if a.kind == kind && a.map_len > 0 => {
            let a = *a;
            map.remove(&base);
            // SAFETY: the mapping was created by `alloc` and is no longer registered.
            unsafe { libc::munmap(a.map_start as *mut _, a.map_len) };
            Some(a)
        }
        _ => None,
    }
}

/// Records a range that is not ours to map (a module global).
pub fn register(base: usize, size: usize, kind: Kind) {
    let a = Allocation {
        base,
        size,
        map_start: 0,
        map_len: 0,
        kind,
    };
    ALLOCATIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(base, a);
}

/// Forgets a range recorded with [`register`].
pub fn unregister(base: usize) {
    ALLOCATIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&base);
}

/// Every registered range now.
pub fn live() -> Vec<Allocation> {
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    map.values().copied().collect()
}

/// The allocation that contains `[addr, addr + len)`, if one does.
pub fn containing(addr: usize, len: usize) -> Option<Allocation> {
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let (_, a) = map.range(..=addr).next_back()?;
    let end = addr.checked_add(len)?;
    (addr >= a.base && end <= a.base + a.size).then_some(*a)
}

/// Whether `[addr, addr + len)` is device-accessible memory (a device allocation or global).
pub fn is_device_range(addr: usize, len: usize) -> bool {
    containing(addr, len).is_some_and(|a| a.kind != Kind::PinnedHost)
}

/// The span of the device memory that holds `addr`, as `(lo, hi)` with `lo <= addr < hi`: a
/// live allocation of kind [`Kind::Device`] (`cuMemAlloc`, `cuMemAllocManaged`...) with its
/// guard pages (an access there faults and is reported as out of bounds), or a module global.
/// `None` for anything else: host memory, including page-locked host memory
/// ([`Kind::PinnedHost`]), which checked kernels may not touch (host work is not GPU work).
pub fn device_span(addr: usize) -> Option<(usize, usize)> {
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let span = |a: &Allocation| match a.kind {
        Kind::Device | Kind::DeviceHeap if a.map_len > 0 => {
            Some((a.map_start, a.map_start + a.map_len))
        }
        Kind::Device | Kind::DeviceHeap | Kind::ModuleGlobal => Some((a.base, a.base + a.size)),
        Kind::PinnedHost => None,
    };
    let below = map.range(..=addr).next_back().map(|(_, a)| a);
    let above = map.range(addr.saturating_add(1)..).next().map(|(_, a)| a);
    below
        .into_iter()
        .chain(above)
        .filter_map(span)
        .find(|&(lo, hi)| lo <= addr && addr < hi)
}

/// Whether `[addr, addr + len)` lies in page-locked host memory.
pub fn is_pinned_host(addr: usize, len: usize) -> bool {
    containing(addr, len).is_some_and(|a| a.kind == Kind::PinnedHost)
}

/// The device allocation nearest to `addr` (containing it, or the closest one below or above).
pub fn nearest(addr: usize) -> Option<Allocation> {
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let below = map.range(..=addr).next_back().map(|(_, a)| *a);
    let above = map.range(addr.saturating_add(1)..).next().map(|(_, a)| *a);
    match (below, above) {
        (Some(b), Some(c)) => {
            let past_b = addr.saturating_sub(b.base + b.size);
            let before_c = c.base - addr;
            Some(if past_b <= before_c { b } else { c })
        }
        (b, c) => b.or(c),
    }
}

/// Describes where `addr` is relative to the nearest allocation, for fault reports, e.g.
/// "past the end of a 4096-byte allocation at 0x7f..000 (offset 4096; valid offsets are 0..4095)".
pub fn describe(addr: usize) -> String {
    if addr < 65536 {
        return format!("at address {addr:#x}, a null pointer (an argument never allocated?)");
    }
    let Some(a) = nearest(addr) else {
        return format!("at address {addr:#x}, which is not in any device allocation");
    };
    let what = match a.kind {
        Kind::Device => "allocation",
        Kind::PinnedHost => "pinned host allocation",
        Kind::ModuleGlobal => "module global",
        Kind::DeviceHeap => "block of the kernel heap (malloc or new in a kernel)",
    };
    let offset = addr as i128 - a.base as i128;
    let place = if addr >= a.base + a.size {
        "past the end of"
    } else if addr < a.base {
        "before the start of"
    } else {
        "inside"
    };
    format!(
        "{place} a {}-byte {what} at {:#x} (offset {offset}; valid offsets are 0..{})",
        a.size,
        a.base,
        a.size as i128 - 1
    )
}
