//! Where a result came from, decided by what the device did with other inputs. While the
//! grader holds a replay log open around one call of a student's GPU product
//! ([`gpu_labs_emulator_replay_log`]), the emulator logs the device work as it runs: every
//! upload with its bytes, every launch with its arguments, every cuBLAS call, copy, memset and
//! download. Frees wait for the log to close, so no address in it is reused (which is why only
//! a product's call is logged, never a training loop).
//!
//! When the call has returned, the grader names one input's values (A of a product) and asks
//! for a replay ([`gpu_labs_emulator_replay`]): the emulator draws a secret key, puts device
//! memory back as it was when the log opened, and runs the log again, every uploaded word
//! that is one of those values replaced by [`phi`] of it. The downloads of the replay, read
//! against the downloads of the real run, give for each returned value what the device made
//! of the other inputs. The supervisor, given the key, checks that the replay's C is φ(A)·B.
//!
//! This holds by construction: the submission's host code does not run in the replay, and it
//! never sees the key or φ(A), so a product computed on the host and only passed through the
//! device comes back unchanged, whatever its disguise; a kernel that computes the product from
//! A and B on the device (tiled, transposed, split, or cuBLAS) computes φ(A)·B. While the
//! replay runs, every entry point that moves data or starts work waits at a gate
//! ([`gate`]), so no thread of the submission can reach the device mid-replay.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard};

use crate::memory::{self, Kind};

/// One logged piece of device work.
pub enum Op {
    /// Host-to-device bytes written at `dst`.
    Upload {
        /// Device address.
        dst: usize,
        /// The bytes, as the real run wrote them.
        bytes: Vec<u8>,
    },
    /// Device-to-host bytes read at `src`.
    Download {
        /// Device address.
        src: usize,
        /// The bytes the real run brought back.
        real: Vec<u8>,
    },
    /// Work run again as it ran (a launch, a cuBLAS call, a device copy, a memset); false
    /// when it faulted.
    Run(Box<dyn Fn() -> bool + Send>),
}

/// The open log.
struct Log {
    ops: Vec<Op>,
    /// The contents of each device allocation and module global when the log opened.
    before: HashMap<usize, Vec<u8>>,
    /// Device allocations freed while it was open, freed for real when it closes.
    deferred: Vec<usize>,
}

static LOG: Mutex<Option<Log>> = Mutex::new(None);
/// Whether [`LOG`] holds a log (checked before any copying work).
static LOGGING: AtomicBool = AtomicBool::new(false);
/// Held shared by entry points that move data or start work, exclusively by a replay.
static GATE: RwLock<()> = RwLock::new(());

/// How many replayed values [`gpu_labs_emulator_replay`] gives for one returned value at most.
pub const CANDIDATES: usize = 4;

/// Waits while a replay runs: taken by every entry point that moves data or starts work.
pub fn gate() -> RwLockReadGuard<'static, ()> {
    GATE.read().unwrap_or_else(|e| e.into_inner())
}

/// Whether device work is being logged.
pub fn logging() -> bool {
    LOGGING.load(Ordering::Acquire)
}

fn with_log(f: impl FnOnce(&mut Log)) {
    if !logging() {
        return;
    }
    if let Some(log) = LOG.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        f(log);
    }
}

/// Logs a piece of device work as it runs.
pub fn log(op: Op) {
    with_log(|log| log.ops.push(op));
}

/// Logs work that runs again as it ran.
pub fn log_run(f: impl Fn() -> bool + Send + 'static) {
    if logging() {
        log(Op::Run(Box::new(f)));
    }
}

/// Holds a device free back until the log closes; false when none is open (the caller frees
/// now).
pub fn defer_free(base: usize) -> bool {
    let mut deferred = false;
    with_log(|log| {
        log.deferred.push(base);
        deferred = true;
    });
    deferred
}

/// The device allocations and module globals now: base and size.
fn device_memory() -> Vec<(usize, usize)> {
    memory::live()
        .into_iter()
        .filter(|a| matches!(a.kind, Kind::Device | Kind::ModuleGlobal))
        .map(|a| (a.base, a.size))
        .collect()
}

/// Copies `size` bytes at `base`.
fn read(base: usize, size: usize) -> Vec<u8> {
    // SAFETY: a live device allocation or module global of `size` bytes.
    unsafe { std::slice::from_raw_parts(base as *const u8, size) }.to_vec()
}

/// Writes `bytes` at `base`, where they differ from what is there: a module's `const` global
/// may sit in read-only memory, and it never changes.
fn write(base: usize, bytes: &[u8]) {
    // SAFETY: a live device allocation or module global of at least `bytes.len()` bytes.
    let now = unsafe { std::slice::from_raw_parts(base as *const u8, bytes.len()) };
    if now != bytes {
        // SAFETY: as above; it differs, so it is writable memory something wrote.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base as *mut u8, bytes.len()) };
    }
}

/// Waits for every queued operation of the calling thread's context.
fn settle() {
    if let Ok(ctx) = crate::driver::context::current() {
        let _ = ctx.synchronize();
    }
}

/// Opens a log, noting device memory as it is now (forgetting an earlier log), or closes it;
/// either way, frees an earlier log held back are done now.
#[no_mangle]
pub extern "C" fn gpu_labs_emulator_replay_log(open: bool) {
    let before = if open {
        settle();
        device_memory()
            .into_iter()
            .map(|(base, size)| (base, read(base, size)))
            .collect()
    } else {
        HashMap::new()
    };
    let old = {
        let mut slot = LOG.lock().unwrap_or_else(|e| e.into_inner());
        let old = slot.take();
        if open {
            *slot = Some(Log {
                ops: Vec::new(),
                before,
                deferred: Vec::new(),
            });
        }
        LOGGING.store(open, Ordering::Release);
        old
    };
    if let Some(old) = old {
        for base in old.deferred {
            crate::driver::hazard::release(base, Kind::Device);
        }
    }
}

/// The map the replay puts A's values through: a value in [-1, 1) drawn from the key and the
/// value's bits (splitmix64), the supervisor's to compute again from the key it is given.
pub fn phi(key: u64, bits: u32) -> u32 {
    let mut z = key ^ u64::from(bits).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let unit = (z >> 40) as f32 / (1u64 << 24) as f32;
    (unit * 2.0 - 1.0).to_bits()
}

/// Test vectors of [`phi`], the same in the worker's copy of the map: (key, bits, φ).
#[cfg(test)]
pub(crate) const PHI_VECTORS: [(u64, u32, u32); 4] = [
    (0x0, 0x0000_0000, 0x3f44_4150),
    (0x7, 0x3f80_0000, 0xbf79_eea0),
    (0xdead_beef_cafe_f00d, 0xbe80_0000, 0xbf52_36de),
    (0x75b_cd15, 0x3f00_0000, 0x3f45_a52a),
];

/// A key nobody can guess: from the kernel's random source.
fn fresh_key() -> Option<u64> {
    let mut key = [0u8; 8];
    // SAFETY: writes at most 8 bytes into the local array.
    let got = unsafe { libc::getrandom(key.as_mut_ptr().cast(), key.len(), 0) };
    (got == 8).then(|| u64::from_ne_bytes(key))
}

/// What a replay found.
pub enum Replayed {
    /// No log is open.
    NoWindow,
    /// A replayed operation faulted.
    Faulted,
    /// No random key could be drawn.
    NoKey,
    /// The downloads: (what the real run read, what the replay read), in order, and the key.
    Done(Vec<(Vec<u8>, Vec<u8>)>, u64),
}

/// Puts every 4-byte word of `bytes` that is in `mapped` through [`phi`] under `key`.
fn map_words(bytes: &mut [u8], mapped: &HashSet<u32>, key: u64) {
    for word in bytes.chunks_exact_mut(4) {
        let bits = u32::from_ne_bytes([word[0], word[1], word[2], word[3]]);
        if mapped.contains(&bits) {
            word.copy_from_slice(&phi(key, bits).to_ne_bytes());
        }
    }
}

/// Runs the open log again with every uploaded word in `mapped` put through [`phi`]
/// under a fresh key, and with `memory_too`, every such word of device memory as it was when
/// the log opened (inputs uploaded before: a training epoch's data set); device memory is as
/// the real run left it afterwards. The log stays open.
pub fn replay(mapped: &HashSet<u32>, memory_too: bool) -> Replayed {
    let _exclusive = GATE.write().unwrap_or_else(|e| e.into_inner());
    settle();
    let Some(key) = fresh_key() else {
        return Replayed::NoKey;
    };
    let mut slot = LOG.lock().unwrap_or_else(|e| e.into_inner());
    let Some(log) = slot.as_mut() else {
        return Replayed::NoWindow;
    };
    LOGGING.store(false, Ordering::Release);
    let memory = device_memory();
    let after: Vec<(usize, Vec<u8>)> = memory
        .iter()
        .map(|&(base, size)| (base, read(base, size)))
        .collect();
    for &(base, size) in &memory {
        match log.before.get(&base) {
            Some(bytes) if bytes.len() == size && memory_too => {
                let mut bytes = bytes.clone();
                map_words(&mut bytes, mapped, key);
                write(base, &bytes);
            }
            Some(bytes) if bytes.len() == size => write(base, bytes),
            // Made while the log was open: as a fresh allocation is.
            _ => write(base, &vec![0; size]),
        }
    }
    let mut downloads = Vec::new();
    let mut faulted = false;
    for op in &log.ops {
        match op {
            Op::Upload { dst, bytes } => {
                let mut bytes = bytes.clone();
                map_words(&mut bytes, mapped, key);
                write(*dst, &bytes);
            }
            Op::Download { src, real } => downloads.push((real.clone(), read(*src, real.len()))),
            Op::Run(run) => {
                if !run() {
                    faulted = true;
                    break;
                }
            }
        }
    }
    for (base, bytes) in &after {
        write(*base, bytes);
    }
    LOGGING.store(true, Ordering::Release);
    if faulted {
        Replayed::Faulted
    } else {
        Replayed::Done(downloads, key)
    }
}

/// For each returned word: the distinct words the replay read where the real run read it
/// (at most [`CANDIDATES`]), from the downloads' words at the same places.
pub fn candidates(downloads: &[(Vec<u8>, Vec<u8>)], values: &[u32]) -> Vec<Vec<u32>> {
    let wanted: HashSet<u32> = values.iter().copied().collect();
    let mut seen: HashMap<u32, Vec<u32>> = HashMap::new();
    let words = |b: &[u8]| {
        b.chunks_exact(4)
            .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect::<Vec<_>>()
    };
    for (real, again) in downloads {
        for (r, a) in words(real).into_iter().zip(words(again)) {
            if wanted.contains(&r) {
                let list = seen.entry(r).or_default();
                if list.len() < CANDIDATES && !list.contains(&a) {
                    list.push(a);
                }
            }
        }
    }
    values
        .iter()
        .map(|v| seen.get(v).cloned().unwrap_or_default())
        .collect()
}

/// Replays the open log's device work with every uploaded word among the `mapped_len`
/// words at `mapped` put through [`phi`] under a fresh key, and writes, for each of the `len`
/// returned words at `values`, up to [`CANDIDATES`] words the replay read where the real run
/// read that word (`candidates[i * CANDIDATES ..]`, `counts[i]` of them), and the key.
/// Returns 0 when replayed, 1 with no log open, 2 when a replayed operation faulted, 3
/// when no key could be drawn.
///
/// # Safety
/// `mapped` and `values` must point to that many readable words; `candidates` to
/// `len * CANDIDATES` writable words, `counts` to `len` writable bytes, `key` to a writable
/// word.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_replay(
    mapped: *const u32,
    mapped_len: usize,
    values: *const u32,
    len: usize,
    candidates: *mut u32,
    counts: *mut u8,
    key: *mut u64,
) -> i32 {
    replay_entry(
        mapped, mapped_len, values, len, candidates, counts, key, false,
    )
}

/// [`gpu_labs_emulator_replay`], with the words of `mapped` also replaced in device memory as
/// it was when the log opened: for inputs uploaded before it (a training epoch's data set,
/// which the student's loader uploads before the epoch).
///
/// # Safety
/// As [`gpu_labs_emulator_replay`].
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_replay_memory_too(
    mapped: *const u32,
    mapped_len: usize,
    values: *const u32,
    len: usize,
    candidates: *mut u32,
    counts: *mut u8,
    key: *mut u64,
) -> i32 {
    replay_entry(
        mapped, mapped_len, values, len, candidates, counts, key, true,
    )
}

/// Both entry points' body.
///
/// # Safety
/// As [`gpu_labs_emulator_replay`].
#[allow(clippy::too_many_arguments)]
unsafe fn replay_entry(
    mapped: *const u32,
    mapped_len: usize,
    values: *const u32,
    len: usize,
    candidates: *mut u32,
    counts: *mut u8,
    key: *mut u64,
    memory_too: bool,
) -> i32 {
    if (mapped.is_null() && mapped_len > 0)
        || (values.is_null() && len > 0)
        || candidates.is_null()
        || counts.is_null()
        || key.is_null()
    {
        return 1;
    }
    let mapped: HashSet<u32> = if mapped_len == 0 {
        HashSet::new()
    } else {
        std::slice::from_raw_parts(mapped, mapped_len)
            .iter()
            .copied()
            .collect()
    };
    let values = if len == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(values, len)
    };
    let (downloads, drawn) = match replay(&mapped, memory_too) {
        Replayed::NoWindow => return 1,
        Replayed::Faulted => return 2,
        Replayed::NoKey => return 3,
        Replayed::Done(downloads, drawn) => (downloads, drawn),
    };
    for (i, list) in self::candidates(&downloads, values).into_iter().enumerate() {
        for (j, word) in list.iter().enumerate() {
            *candidates.add(i * CANDIDATES + j) = *word;
        }
        *counts.add(i) = list.len() as u8;
    }
    *key = drawn;
    0
}

#[cfg(test)]
mod tests {
    use super::{candidates, phi};

    #[test]
    fn phi_gives_values_in_range_that_depend_on_key_and_value() {
        let one = 1.0f32.to_bits();
        let a = f32::from_bits(phi(7, one));
        assert!((-1.0..1.0).contains(&a));
        assert_ne!(phi(7, one), phi(8, one));
        assert_ne!(phi(7, one), phi(7, 0.5f32.to_bits()));
        assert_eq!(phi(7, one), phi(7, one));
        // The worker's copy of the map (grader/worker/src/gpu/replay.rs) holds to the same.
        for (key, bits, want) in super::PHI_VECTORS {
            assert_eq!(phi(key, bits), want);
        }
    }

    #[test]
    fn candidates_follow_the_places_of_the_real_downloads() {
        let bytes = |w: &[u32]| w.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>();
        let downloads = vec![
            (bytes(&[1, 2, 3]), bytes(&[10, 20, 30])),
            (bytes(&[2]), bytes(&[21])),
        ];
        let got = candidates(&downloads, &[3, 2, 9]);
        assert_eq!(got, vec![vec![30], vec![20, 21], vec![]]);
    }
}
