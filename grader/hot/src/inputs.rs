//! Inputs derived from the run's seed. The worker and the supervisor each call these with the
//! same arguments and get bit-identical matrices, so inputs never travel between processes and
//! a failure is reproduced exactly with `--seed N`.

use ndarray::Array2;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A seed for a fresh run: different every run, printed so the run can be repeated.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    // Keep seeds short enough to type.
    (nanos ^ (u64::from(std::process::id()) << 20)) % 1_000_000_000
}

/// The random number generator for one input of one case of one item.
fn rng_for(seed: u64, item: &str, case: usize, which: &str) -> StdRng {
    // FNV-1a over the parts, each ended by a 0xff byte: stable across platforms and Rust
    // versions.
    let mut h = crate::hash::Fnv::default();
    let parts = [
        &seed.to_le_bytes()[..],
        item.as_bytes(),
        &(case as u64).to_le_bytes()[..],
        which.as_bytes(),
    ];
    for part in parts {
        h.write(part);
        h.write(&[0xff]);
    }
    StdRng::seed_from_u64(h.finish())
}

/// A `rows × cols` matrix of values uniform in [-1, 1), named `which` ("a", "b") within
/// case `case` of item `item`.
pub fn matrix(
    seed: u64,
    item: &str,
    case: usize,
    which: &str,
    rows: usize,
    cols: usize,
) -> Array2<f32> {
    uniform_matrix(
        &mut rng_for(seed, item, case, which),
        (rows, cols),
        1.0,
        false,
    )
}

/// The two operands of a product case `[m, k, n]`: A is m×k, B is k×n.
pub fn operands(
    seed: u64,
    item: &str,
    case: usize,
    [m, k, n]: [usize; 3],
) -> (Array2<f32>, Array2<f32>) {
    (
        matrix(seed, item, case, "a", m, k),
        matrix(seed, item, case, "b", k, n),
    )
}

/// A `rows × cols` matrix of draws from `rng`, row by row, each `rng.random_range(range)` in
/// f32 with `range` `-bound..=bound` (`inclusive`) or `-bound..bound`: the matmul lab's
/// operands ([`matrix`]), the training lab's inputs and layers, and its check of a student's
/// initialisation, made here so that the per-element draws are compiled optimised.
pub fn uniform_matrix(
    rng: &mut StdRng,
    (rows, cols): (usize, usize),
    bound: f32,
    inclusive: bool,
) -> Array2<f32> {
    if inclusive {
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-bound..=bound))
    } else {
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-bound..bound))
    }
}

/// `rows` class indices, each `rng.random_range(0..classes)`.
pub fn class_labels(rng: &mut StdRng, rows: usize, classes: usize) -> Vec<usize> {
    (0..rows).map(|_| rng.random_range(0..classes)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_matrix_and_another_seed_does_not() {
        let a = matrix(7, "x", 0, "a", 5, 3);
        assert_eq!(a, matrix(7, "x", 0, "a", 5, 3));
        assert_ne!(a, matrix(8, "x", 0, "a", 5, 3));
        assert_ne!(a, matrix(7, "x", 1, "a", 5, 3));
        assert_ne!(a, matrix(7, "x", 0, "b", 5, 3));
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
    }

    #[test]
    fn uniform_draws_stay_in_their_range_and_repeat_with_the_generator() {
        let draw =
            |inclusive| uniform_matrix(&mut StdRng::seed_from_u64(3), (40, 25), 0.5, inclusive);
        for inclusive in [true, false] {
            let m = draw(inclusive);
            assert_eq!(m.dim(), (40, 25));
            assert!(m.iter().all(|v| (-0.5..=0.5).contains(v)));
            assert!(m.iter().any(|v| *v < -0.4) && m.iter().any(|v| *v > 0.4));
            assert_eq!(m, draw(inclusive));
        }
        let labels = class_labels(&mut StdRng::seed_from_u64(4), 500, 10);
        assert!(labels.iter().all(|&l| l < 10));
        assert!((0..10).all(|c| labels.contains(&c)));
    }
}
