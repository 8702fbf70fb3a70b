//! "The device did the work", decided by the work itself. The worker has the emulator log a
//! student's GPU product's device work ([`log`]); after the call returns, it asks the emulator
//! to run that work again with every uploaded value of A replaced through a map φ drawn from
//! a key the emulator draws then (`grader/cuda-emulator/src/replay.rs`). The host code is not
//! run again and never sees φ, so only a product the device computed from A and B comes back
//! as φ(A)·B; the supervisor checks that with [`replaced`], the same map on its own copy of
//! the inputs.
//!
//! Which values are replaced is decided from the inputs alone ([`mapped_values`]): A's values
//! that are not also B's (a word of B is never touched) and not zero (a buffer cleared before
//! an accumulation stays cleared).

use ndarray::Array2;
use std::collections::HashSet;

use crate::protocol::Replay;

/// Replayed values the emulator gives for one returned value at most (its `CANDIDATES`).
pub const CANDIDATES: usize = 4;

/// The map the replay puts A's values through, as the emulator defines it (`phi` there): a
/// value in [-1, 1) from the key and the value's bits (splitmix64).
pub fn phi(key: u64, bits: u32) -> u32 {
    let mut z = key ^ u64::from(bits).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let unit = (z >> 40) as f32 / (1u64 << 24) as f32;
    (unit * 2.0 - 1.0).to_bits()
}

/// Test vectors of [`phi`], the same in the emulator's copy of the map: (key, bits, φ).
#[cfg(test)]
pub(crate) const PHI_VECTORS: [(u64, u32, u32); 4] = [
    (0x0, 0x0000_0000, 0x3f44_4150),
    (0x7, 0x3f80_0000, 0xbf79_eea0),
    (0xdead_beef_cafe_f00d, 0xbe80_0000, 0xbf52_36de),
    (0x75b_cd15, 0x3f00_0000, 0x3f45_a52a),
];

/// The bits of the values the replay replaces: A's, less B's and the zeros (`a` and `b` are
/// every value of the operands, of one product or a whole batch).
pub fn mapped_values<'v>(
    a: impl IntoIterator<Item = &'v f32>,
    b: impl IntoIterator<Item = &'v f32>,
) -> HashSet<u32> {
    let of_b: HashSet<u32> = b.into_iter().map(|v| v.to_bits()).collect();
    a.into_iter()
        .map(|v| v.to_bits())
        .filter(|bits| *bits & 0x7fff_ffff != 0 && !of_b.contains(bits))
        .collect()
}

/// A matrix with its values put through [`phi`] under `key` where they are in `mapped`.
pub fn replaced(a: &Array2<f32>, mapped: &HashSet<u32>, key: u64) -> Array2<f32> {
    a.mapv(|v| {
        if mapped.contains(&v.to_bits()) {
            f32::from_bits(phi(key, v.to_bits()))
        } else {
            v
        }
    })
}

/// Of the replayed values found where a returned value was copied back from (`found`, f32
/// bits), the one nearest `want`: each is what the device made of one such place in the
/// replay, and one of them is the place the value came from. NaN when there is none.
pub fn nearest(found: &[u32], want: f64) -> f32 {
    found
        .iter()
        .map(|&bits| f32::from_bits(bits))
        .min_by(|x, y| {
            (f64::from(*x) - want)
                .abs()
                .total_cmp(&(f64::from(*y) - want).abs())
        })
        .unwrap_or(f32::NAN)
}

/// Opens the emulator's log of device work for a replay (forgetting an earlier one), or
/// closes it; nothing on a real GPU. Opened around one product's call only: frees wait while
/// it is open.
pub fn log(open: bool) {
    type Log = unsafe extern "C" fn(bool);
    // SAFETY: as in [`run`]; the symbol has this signature (grader/cuda-emulator/src/replay.rs).
    unsafe {
        let Some(lib) = super::counters::counting_library() else {
            return;
        };
        if let Ok(log) = lib.get::<Log>(b"gpu_labs_emulator_replay_log\0") {
            log(open);
        }
    }
}

/// Which words a replay replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// Those uploaded while the log was open (a product's call uploads its operands).
    Uploaded,
    /// Those too in device memory as it was when the log opened (a training epoch's data set,
    /// uploaded before the epoch by the student's loader).
    UploadedAndInMemory,
}

/// Asks the emulator to replay the open log's device work with the words in `mapped`
/// replaced (`inputs` says where), for a call that returned the values `c` (in logical
/// order); `None` where there is no emulator to ask (a real GPU).
pub fn run<'v>(
    mapped: &HashSet<u32>,
    inputs: Inputs,
    c: impl IntoIterator<Item = &'v f32>,
) -> Option<Replay> {
    type Replayed = unsafe extern "C" fn(
        *const u32,
        usize,
        *const u32,
        usize,
        *mut u32,
        *mut u8,
        *mut u64,
    ) -> i32;
    let mapped: Vec<u32> = mapped.iter().copied().collect();
    let values: Vec<u32> = c.into_iter().map(|v| v.to_bits()).collect();
    let mut candidates = vec![0u32; values.len() * CANDIDATES];
    let mut counts = vec![0u8; values.len()];
    let mut key = 0u64;
    // SAFETY: opening the library cudarc already loaded only bumps its reference count; the
    // symbol, when present, has exactly this signature (grader/cuda-emulator/src/replay.rs),
    // and is given buffers of the lengths it is told.
    let code = unsafe {
        let lib = super::counters::counting_library()?;
        let name: &[u8] = match inputs {
            Inputs::Uploaded => b"gpu_labs_emulator_replay\0",
            Inputs::UploadedAndInMemory => b"gpu_labs_emulator_replay_memory_too\0",
        };
        let replay = lib.get::<Replayed>(name).ok()?;
        replay(
            mapped.as_ptr(),
            mapped.len(),
            values.as_ptr(),
            values.len(),
            candidates.as_mut_ptr(),
            counts.as_mut_ptr(),
            &mut key,
        )
    };
    if code != 0 {
        return Some(Replay::Failed(code));
    }
    let candidates: Vec<Vec<u32>> = candidates
        .chunks_exact(CANDIDATES)
        .zip(&counts)
        .map(|(found, &n)| found[..usize::from(n).min(CANDIDATES)].to_vec())
        .collect();
    Some(Replay::done(key, &candidates))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_is_the_emulators_map() {
        // The emulator's `phi` gives these (grader/cuda-emulator/src/replay.rs, same vectors).
        for (key, bits, want) in PHI_VECTORS {
            assert_eq!(phi(key, bits), want, "phi({key}, {bits:#x})");
        }
    }

    #[test]
    fn only_values_of_a_alone_are_replaced() {
        let a = Array2::from_shape_vec((2, 2), vec![0.5, 0.0, -0.25, 0.75]).unwrap();
        let b = Array2::from_shape_vec((2, 1), vec![0.75, 1.0]).unwrap();
        let mapped = mapped_values(&a, &b);
        assert_eq!(
            mapped,
            [0.5f32, -0.25].iter().map(|v| v.to_bits()).collect()
        );
        let r = replaced(&a, &mapped, 42);
        assert_eq!((r[[0, 1]], r[[1, 1]]), (0.0, 0.75));
        assert_ne!(r[[0, 0]], 0.5);
        assert!(r.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(r, replaced(&a, &mapped, 42));
        assert_ne!(r, replaced(&a, &mapped, 43));
    }
}
