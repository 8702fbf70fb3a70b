//! The comparison of a class: each submission's fingerprints ([`super::winnow`] over its
//! normalized tokens, file by file), less every k-gram of the template and every fingerprint
//! common to much of the class; an inverted index from fingerprint to the submissions holding
//! it, so that only pairs that share something are ever counted (a class of 300 is not 44,850
//! comparisons); each pair's share of matched fingerprints, on each side.

use super::sources::Code;
use super::winnow;
use std::collections::{HashMap, HashSet};

/// Where a fingerprint is: the file's index in its [`Code`] and its first token's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Loc {
    pub(crate) file: u32,
    pub(crate) at: u32,
}

/// One submission's fingerprints: (hash, first place it is), sorted by hash, one per hash.
pub(crate) type Prints = Vec<(u64, Loc)>;

/// The hashes of every k-gram of `code` (the template: nothing in it counts, wherever a
/// window would have kept it).
pub(crate) fn every_kgram(code: &Code, k: usize) -> HashSet<u64> {
    code.files
        .iter()
        .flat_map(|f| winnow::kgrams(&codes_of(f), k))
        .collect()
}

fn codes_of(file: &super::sources::SourceFile) -> Vec<u64> {
    file.tokens.iter().map(|t| t.code).collect()
}

/// The winnowed fingerprints of `code` that are not in `template`.
pub(crate) fn prints(code: &Code, k: usize, w: usize, template: &HashSet<u64>) -> Prints {
    let mut first: HashMap<u64, Loc> = HashMap::new();
    for (file, f) in code.files.iter().enumerate() {
        for p in winnow::winnow(&winnow::kgrams(&codes_of(f), k), w) {
            if !template.contains(&p.hash) {
                let loc = Loc {
                    file: file as u32,
                    at: p.at as u32,
                };
                first.entry(p.hash).or_insert(loc);
            }
        }
    }
    let mut out: Prints = first.into_iter().collect();
    out.sort_unstable();
    out
}

/// How many fingerprints a pair shares, from the inverted index.
pub(crate) struct Counted {
    /// Each submission's fingerprints, the common ones removed.
    pub(crate) prints: Vec<Prints>,
    /// (first, second, shared), first < second, for every pair that shares any.
    pub(crate) pairs: Vec<(usize, usize, usize)>,
    /// A fingerprint held by more submissions than this was removed as common.
    pub(crate) common_limit: usize,
}

/// Removes the fingerprints held by more than `common_limit` submissions and counts, through
/// an inverted index, what each pair shares.
pub(crate) fn count(mut prints: Vec<Prints>, common_limit: usize) -> Counted {
    let mut holders: HashMap<u64, Vec<u32>> = HashMap::new();
    for (s, p) in prints.iter().enumerate() {
        for (hash, _) in p {
            holders.entry(*hash).or_default().push(s as u32);
        }
    }
    let common: HashSet<u64> = holders
        .iter()
        .filter(|(_, h)| h.len() > common_limit)
        .map(|(hash, _)| *hash)
        .collect();
    if !common.is_empty() {
        for p in &mut prints {
            p.retain(|(hash, _)| !common.contains(hash));
        }
    }
    let mut shared: HashMap<(u32, u32), usize> = HashMap::new();
    for held in holders
        .values()
        .filter(|h| h.len() >= 2 && h.len() <= common_limit)
    {
        for (i, a) in held.iter().enumerate() {
            for b in &held[i + 1..] {
                *shared.entry((*a, *b)).or_default() += 1;
            }
        }
    }
    let mut pairs: Vec<(usize, usize, usize)> = shared
        .into_iter()
        .map(|((a, b), n)| (a as usize, b as usize, n))
        .collect();
    pairs.sort_unstable();
    Counted {
        prints,
        pairs,
        common_limit,
    }
}

/// The places of the fingerprints `a` and `b` share, in `a`'s order.
pub(crate) fn matches(a: &Prints, b: &Prints) -> Vec<(Loc, Loc)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push((a[i].1, b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(at: u32) -> Loc {
        Loc { file: 0, at }
    }

    #[test]
    fn the_index_counts_shared_prints_and_drops_common_ones() {
        let a = vec![(1, loc(0)), (2, loc(5)), (9, loc(9))];
        let b = vec![(1, loc(3)), (2, loc(1)), (7, loc(2))];
        let c = vec![(1, loc(4)), (8, loc(0))];
        let counted = count(vec![a.clone(), b.clone(), c], 2);
        // Hash 1 is in all three: common, gone from each side.
        assert_eq!(counted.pairs, [(0, 1, 1)]);
        assert_eq!(counted.prints[2], [(8, loc(0))]);
        assert_eq!(
            matches(&counted.prints[0], &counted.prints[1]),
            [(loc(5), loc(1))]
        );
        assert_eq!(matches(&a, &b), [(loc(0), loc(3)), (loc(5), loc(1))]);
    }
}
