//! Whether a race can change what a kernel computes: the checked launch run a second time,
//! from device memory as it was before it, with its blocks and the threads of each block in
//! the other order (last first), so that every racing pair of a read and a write happens the
//! other way round. If the second run writes every byte of device memory as the first did,
//! no order of those accesses changes the kernel's results on these inputs (a clamped read of
//! a neighbour whose value is thrown away): the race is told as a note. Otherwise it is the
//! race it looked like, and the report says what changed.
//!
//! Only launches whose races are all a read against a write are run again: two threads
//! writing different values to one place race whatever the second order gives (serial runs
//! hide lost updates: `count += 1` by every thread gives the same total either way), and so
//! does a launch the module could not log (`undo_lost`). A second run that faults, or cannot
//! be compared, leaves the race a failure.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use super::Job;
use crate::memory;

/// A word of device memory before the launch first wrote it, as the module logs it
/// (`__gl::rc::UndoWord` in the prelude).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct UndoWord {
    /// The word's address (4-byte aligned).
    pub addr: u64,
    /// Its bytes before the launch wrote them (those in `mask`, little-endian).
    pub old: u32,
    /// Which of its four bytes.
    pub mask: u32,
}

/// What a launch wrote over, in the order the module logged it.
#[derive(Debug, Default)]
pub struct Undo {
    words: Vec<UndoWord>,
    /// The launch wrote more words than [`MAX_WORDS`]: the log was dropped.
    full: bool,
}

/// A launch's [`Undo`], filled by the module as it runs.
pub type UndoLog = Mutex<Undo>;

/// How many words a log keeps at most (16 bytes each: 64 MiB), so that a launch writing a
/// large buffer does not double the memory it needs.
const MAX_WORDS: usize = 4 << 20;

/// For a checked module: the launch at `ctx` (its [`UndoLog`]) first wrote the `count` words
/// at `words`.
pub(super) unsafe extern "C" fn undo_words(ctx: *mut c_void, words: *const c_void, count: u64) {
    let Ok(count) = usize::try_from(count) else {
        return;
    };
    // SAFETY: `ctx` is the job's undo log, alive while its blocks run; the module passes
    // `count` initialised entries.
    let (Some(log), words) = (unsafe { ctx.cast::<UndoLog>().as_ref() }, unsafe {
        std::slice::from_raw_parts(words.cast::<UndoWord>(), count)
    }) else {
        return;
    };
    let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
    if log.full || log.words.len() + words.len() > MAX_WORDS {
        log.full = true;
        log.words = Vec::new();
        return;
    }
    log.words.extend_from_slice(words);
}

/// A place the two orders left different.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The word's address.
    pub addr: usize,
    /// Its bytes after the launch as it ran, and after the other order (those in `mask`).
    pub first: u32,
    /// See `first`.
    pub second: u32,
    /// Which bytes of the word the launch wrote (bit j: byte j).
    pub mask: u32,
}

/// What the other order gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every byte of device memory as the launch left it: no order of its racing accesses
    /// changed what it wrote.
    Same,
    /// This word ended differently.
    Differs(Difference),
    /// The other order faulted (an index out of bounds, for one), or memory the launch wrote
    /// is gone: the race stays what it looked like.
    Unknown,
}

/// The bits of the bytes named in byte mask `mask` (bit j: byte j of a word).
fn bits(mask: u32) -> u32 {
    (0..4)
        .filter(|j| (mask >> j) & 1 == 1)
        .fold(0, |b, j| b | 0xff << (8 * j))
}

/// Reads the bytes of `mask` in the word at `addr`, or `None` when it is not device memory.
fn read(addr: u64, mask: u32, place: &mut Place) -> Option<u32> {
    let base = place.check(addr)?;
    let mut v = 0u32;
    for j in 0..4 {
        if (mask >> j) & 1 == 1 {
            // SAFETY: `check` found the byte in a live allocation or module global.
            let b = unsafe { std::ptr::read_volatile((base + j) as *const u8) };
            v |= u32::from(b) << (8 * j);
        }
    }
    Some(v)
}

/// Writes the bytes of `mask` of `v` into the word at `addr`; false when it is not device
/// memory.
fn write(addr: u64, mask: u32, v: u32, place: &mut Place) -> bool {
    let Some(base) = place.check(addr) else {
        return false;
    };
    for j in 0..4 {
        if (mask >> j) & 1 == 1 {
            // SAFETY: as in `read`.
            unsafe { std::ptr::write_volatile((base + j) as *mut u8, (v >> (8 * j)) as u8) };
        }
    }
    true
}

/// The allocation last found, so that a log of neighbouring words asks the memory map once.
#[derive(Default)]
struct Place {
    lo: usize,
    hi: usize,
}

impl Place {
    /// `addr` as an address, when its word's bytes lie in device memory.
    fn check(&mut self, addr: u64) -> Option<usize> {
        let a = usize::try_from(addr).ok()?;
        if a >= self.lo && a + 4 <= self.hi {
            return Some(a);
        }
        // A word at the end of an allocation whose size is not a multiple of 4 reaches past
        // it: those bytes were never written, so no mask names them.
        let found = memory::containing(a, 1)?;
        (self.lo, self.hi) = (found.base, found.base + found.size);
        Some(a)
    }
}

/// How many bytes the second run may read, for a first run that read `loaded` (a spin-wait
/// on a flag that only the first order had set would read forever): four times as many and
/// 64 MiB more, since the other order may take a loop more often.
fn load_budget(loaded: u64) -> u64 {
    loaded.saturating_mul(4).saturating_add(64 << 20)
}

/// Runs `job`, which read `loaded` bytes, again in the other order from memory as it was
/// before it (its undo log), with `execute` (true when the run did not fault), compares what
/// the two runs wrote, and leaves memory as the first run left it.
pub(super) fn other_order(
    job: &Job,
    loaded: u64,
    execute: impl FnOnce(&Arc<Job>) -> bool,
) -> Outcome {
    let first_log = std::mem::take(&mut *job.undo.lock().unwrap_or_else(|e| e.into_inner()));
    if first_log.full {
        return Outcome::Unknown;
    }
    let first_log = first_log.words;
    let mut place = Place::default();
    // What the first run left, then memory as it was before the launch.
    let mut after = Vec::with_capacity(first_log.len());
    for w in &first_log {
        let Some(v) = read(w.addr, w.mask, &mut place) else {
            return Outcome::Unknown;
        };
        after.push(v);
    }
    for w in &first_log {
        write(w.addr, w.mask, w.old, &mut place);
    }
    let second = Arc::new(job.reversed(load_budget(loaded)));
    let ran = execute(&second);
    let second_log = std::mem::take(&mut *second.undo.lock().unwrap_or_else(|e| e.into_inner()));
    if second_log.full {
        // What the second run wrote cannot be put back: as the first run left it, at least
        // where the first run wrote.
        for (w, &v) in first_log.iter().zip(&after) {
            write(w.addr, w.mask, v, &mut place);
        }
        return Outcome::Unknown;
    }
    let second_log = second_log.words;
    // Every word either run wrote: what the first run left (memory before the launch where
    // it wrote nothing) against what is there now.
    let mut first: std::collections::HashMap<u64, (u32, u32)> = std::collections::HashMap::new();
    for (w, &v) in first_log.iter().zip(&after) {
        let e = first.entry(w.addr).or_insert((0, 0));
        e.0 = (e.0 & !bits(w.mask)) | (v & bits(w.mask));
        e.1 |= w.mask;
    }
    let mut differs = None;
    let mut lost = !ran;
    for w in &second_log {
        let e = first.entry(w.addr).or_insert((0, 0));
        let unwritten = bits(w.mask & !e.1);
        e.0 = (e.0 & !unwritten) | (w.old & unwritten);
        e.1 |= w.mask;
    }
    let mut words: Vec<(u64, (u32, u32))> = first.into_iter().collect();
    words.sort_unstable_by_key(|&(a, _)| a);
    for &(addr, (want, mask)) in &words {
        match read(addr, mask, &mut place) {
            Some(got) if got != want && differs.is_none() => {
                differs = Some(Difference {
                    addr: usize::try_from(addr).unwrap_or(usize::MAX),
                    first: want,
                    second: got,
                    mask,
                });
            }
            Some(_) => {}
            None => lost = true,
        }
        // Memory as the first run left it, whatever the second did.
        write(addr, mask, want, &mut place);
    }
    match (lost, differs) {
        (true, _) => Outcome::Unknown,
        (false, Some(d)) => Outcome::Differs(d),
        (false, None) => Outcome::Same,
    }
}

/// The sentence the race report ends with when the other order wrote something else.
pub fn changed(d: &Difference) -> String {
    let float = |v: u32| {
        let f = f32::from_bits(v).abs();
        f == 0.0 || (1e-30..1e30).contains(&f)
    };
    let (a, b, read_as) = if d.mask != 0xf {
        (
            format!("{:#010x}", d.first),
            format!("{:#010x}", d.second),
            "as bytes of a word",
        )
    } else if float(d.first) && float(d.second) {
        let f = f32::from_bits;
        (
            f(d.first).to_string(),
            f(d.second).to_string(),
            "read as floats",
        )
    } else {
        let i = |v: u32| (v as i32).to_string();
        (i(d.first), i(d.second), "read as 32-bit integers")
    };
    format!(
        "Run again with its blocks and threads in the other order, it wrote something else {}: \
         {a} one way, {b} the other ({read_as})",
        super::race::global_place(d.addr),
    )
}
