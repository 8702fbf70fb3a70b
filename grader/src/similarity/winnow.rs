//! Winnowing (Schleimer, Wilkerson and Aiken, 2003; the method of MOSS): hash every run of
//! `k` consecutive tokens (a k-gram), then in every window of `w` consecutive k-gram hashes
//! keep the smallest (the rightmost of equal ones), each kept position once. Any run of at
//! least `w + k - 1` tokens two texts share yields at least one shared fingerprint, and no
//! run shorter than `k` tokens yields one.

/// A kept k-gram: its hash and the index of its first token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Print {
    /// The k-gram's hash.
    pub(crate) hash: u64,
    /// Where its first token is, in the token list hashed.
    pub(crate) at: usize,
}

/// The polynomial base of the rolling hash.
const BASE: u64 = 0x0000_0100_0000_01b3;

/// A 64-bit finalizer (splitmix64's), so that the window minima are spread evenly.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The hash of every k-gram of `codes`, in order (none when there are fewer than `k`).
pub(crate) fn kgrams(codes: &[u64], k: usize) -> Vec<u64> {
    if k == 0 || codes.len() < k {
        return Vec::new();
    }
    let top = (1..k).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut h = codes[..k]
        .iter()
        .fold(0u64, |h, c| h.wrapping_mul(BASE).wrapping_add(*c));
    let mut out = Vec::with_capacity(codes.len() - k + 1);
    out.push(mix(h));
    for i in k..codes.len() {
        h = h
            .wrapping_sub(codes[i - k].wrapping_mul(top))
            .wrapping_mul(BASE)
            .wrapping_add(codes[i]);
        out.push(mix(h));
    }
    out
}

/// The fingerprints of `hashes` (k-gram hashes in order) with windows of `w`: when there are
/// fewer hashes than `w`, the smallest of them.
pub(crate) fn winnow(hashes: &[u64], w: usize) -> Vec<Print> {
    let w = w.max(1);
    let mut out: Vec<Print> = Vec::new();
    let windows = hashes.len().saturating_sub(w) + 1;
    for start in 0..windows.min(hashes.len()) {
        let window = &hashes[start..(start + w).min(hashes.len())];
        // The rightmost minimum.
        let (offset, hash) = window
            .iter()
            .enumerate()
            .fold(
                (0, u64::MAX),
                |best, (i, h)| if *h <= best.1 { (i, *h) } else { best },
            );
        let at = start + offset;
        if out.last().is_none_or(|p| p.at != at) {
            out.push(Print { hash, at });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_run_of_w_plus_k_minus_1_tokens_shares_a_fingerprint() {
        let (k, w) = (5, 4);
        // Two texts that share only their middle run of w + k - 1 tokens.
        let run: Vec<u64> = (100..100 + (w + k - 1) as u64).collect();
        let a: Vec<u64> = (0..30).chain(run.clone()).chain(30..60).collect();
        let b: Vec<u64> = (500..517).chain(run).chain(600..640).collect();
        let pa: std::collections::HashSet<u64> =
            winnow(&kgrams(&a, k), w).iter().map(|p| p.hash).collect();
        let pb: Vec<u64> = winnow(&kgrams(&b, k), w).iter().map(|p| p.hash).collect();
        assert!(pb.iter().any(|h| pa.contains(h)));
        // A shared run shorter than k shares no k-gram at all.
        let c: Vec<u64> = (700..720).chain(100..104).chain(720..740).collect();
        let pc = kgrams(&c, k);
        assert!(!pc.iter().any(|h| pa.contains(h)));
    }

    #[test]
    fn rolling_hashes_are_the_hashes_of_each_kgram() {
        let codes: Vec<u64> = (0..20).map(|i| i * 7919).collect();
        let rolled = kgrams(&codes, 4);
        for (i, h) in rolled.iter().enumerate() {
            assert_eq!(*h, kgrams(&codes[i..i + 4], 4)[0]);
        }
        assert!(kgrams(&codes[..3], 4).is_empty());
        let prints = winnow(&rolled, 4);
        assert!(prints.windows(2).all(|p| p[0].at < p[1].at));
        assert_eq!(winnow(&rolled[..2], 4).len(), 1);
        assert!(winnow(&[], 4).is_empty());
    }
}
