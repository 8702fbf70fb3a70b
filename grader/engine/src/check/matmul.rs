//! Correctness of a matrix product: an f64 reference, a per-element error bound that scales
//! with K (|C − C_ref| ≤ c·K·eps32·(|A|·|B|)ij, the reference-BLAS gauge), and on failure the
//! first bad index, expected vs got, the largest error and a diagnosis when a pattern fits.

use crate::i18n::t;
use ndarray::Array2;

/// The reference product and the magnitudes the error bound scales with.
pub struct Reference {
    /// C_ref = A·B in f64.
    pub value: Array2<f64>,
    /// |A|·|B| in f64.
    pub magnitude: Array2<f64>,
    /// The inner dimension K.
    pub k: usize,
}

/// Computes the f64 reference of A·B.
pub fn reference(a: &Array2<f32>, b: &Array2<f32>) -> Reference {
    let a64 = a.mapv(f64::from);
    let b64 = b.mapv(f64::from);
    Reference {
        value: a64.dot(&b64),
        magnitude: a64.mapv(f64::abs).dot(&b64.mapv(f64::abs)),
        k: a.ncols(),
    }
}

impl Reference {
    /// The largest error allowed at (i, j) with tolerance factor `c`.
    pub fn bound(&self, c: f64, i: usize, j: usize) -> f64 {
        // Tiny absolute floor so exact zeros (a zero row) compare sanely.
        c * self.k.max(1) as f64 * f64::from(f32::EPSILON) * self.magnitude[[i, j]] + 1e-30
    }

    /// Whether `got` is a right value at (i, j) with tolerance factor `c`.
    pub fn holds(&self, got: f32, c: f64, i: usize, j: usize) -> bool {
        got.is_finite() && (f64::from(got) - self.value[[i, j]]).abs() <= self.bound(c, i, j)
    }
}

/// A product that failed, with everything a student needs to find the bug.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// One line: what is wrong.
    pub summary: String,
    /// A hint at the likely cause, when a pattern fits.
    pub hint: Option<String>,
}

/// Compares `got` to the reference of A·B; `Ok` carries the largest error relative to its bound.
pub fn compare(
    a: &Array2<f32>,
    b: &Array2<f32>,
    got: &Array2<f32>,
    tolerance: f64,
) -> Result<f64, Mismatch> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let reference = reference(a, b);
    if got.dim() != (m, n) {
        let transposed_shape = got.dim() == (n, m);
        let hint = if transposed_shape && transposed_matches(&reference, got, tolerance) {
            Some(t!("shape-transposed-values"))
        } else if transposed_shape {
            Some(t!("shape-swapped"))
        } else {
            Some(t!("shape-size-from", m = m, k = k, n = n))
        };
        return Err(Mismatch {
            summary: t!(
                "shape-wrong",
                rows = got.nrows(),
                cols = got.ncols(),
                m = m,
                n = n
            ),
            hint,
        });
    }

    let mut first_bad: Option<(usize, usize)> = None;
    let mut bad = 0usize;
    let mut worst = (0.0f64, (0usize, 0usize));
    let mut worst_ratio = 0.0f64;
    for ((i, j), &g) in got.indexed_iter() {
        let expected = reference.value[[i, j]];
        let err = (f64::from(g) - expected).abs();
        let bound = reference.bound(tolerance, i, j);
        let ok = g.is_finite() && err <= bound;
        if !ok {
            bad += 1;
            first_bad.get_or_insert((i, j));
        }
        let err = if g.is_finite() { err } else { f64::INFINITY };
        if err > worst.0 || (worst.0 == 0.0 && !ok) {
            worst = (err, (i, j));
        }
        worst_ratio = worst_ratio.max(err / bound);
    }
    let Some((i, j)) = first_bad else {
        return Ok(worst_ratio);
    };
    let expected = reference.value[[i, j]];
    let g = got[[i, j]];
    let summary = t!(
        "value-wrong",
        i = i,
        j = j,
        expected = num(expected),
        got = num(f64::from(g)),
        bound = format!("{:.1e}", reference.bound(tolerance, i, j)),
        bad = bad,
        total = m * n,
        worst = num(worst.0),
        wi = worst.1 .0,
        wj = worst.1 .1,
    );
    let hint = diagnose(&reference, got, tolerance);
    Err(Mismatch { summary, hint })
}

/// Names a pattern in a wrong product, when one fits.
fn diagnose(reference: &Reference, got: &Array2<f32>, tolerance: f64) -> Option<String> {
    let (m, n) = got.dim();
    if let Some(((i, j), v)) = got.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Some(t!("diagnose-nan", i = i, j = j, value = v));
    }
    if got.iter().all(|&v| v == 0.0) && reference.value.iter().any(|&v| v != 0.0) {
        return Some(t!("diagnose-zeros"));
    }
    if m == n && m > 1 && transposed_matches(reference, got, tolerance) {
        return Some(t!("diagnose-transposed"));
    }
    if let Some(s) = constant_factor(reference, got, tolerance) {
        let k = reference.k;
        let extra = if (s - k as f64).abs() < 0.01 * k as f64 {
            t!("diagnose-scaled-k", k = k)
        } else {
            String::new()
        };
        return Some(t!(
            "diagnose-scaled",
            factor = format!("{s:.3}"),
            extra = extra
        ));
    }
    if let Some((rows, cols)) = leading_block(reference, got, tolerance) {
        let block = [64, 32, 16, 8]
            .into_iter()
            .find(|b| {
                (rows == m || rows.is_multiple_of(*b)) && (cols == n || cols.is_multiple_of(*b))
            })
            .unwrap_or(8);
        return Some(t!(
            "diagnose-block",
            rows = rows,
            cols = cols,
            block = block
        ));
    }
    None
}

/// The size (rows, cols) of a right top-left block of `got`, whose edges sit on multiples of
/// 8, when the values outside it are wrong: the mark of loops that stop at the last full block.
fn leading_block(
    reference: &Reference,
    got: &Array2<f32>,
    tolerance: f64,
) -> Option<(usize, usize)> {
    let (m, n) = got.dim();
    let good = |i: usize, j: usize| reference.holds(got[[i, j]], tolerance, i, j);
    let cols = (0..n).find(|&j| !good(0, j)).unwrap_or(n);
    let rows = (0..m).find(|&i| !good(i, 0)).unwrap_or(m);
    let on_edge = |x: usize, size: usize| x == size || (x > 0 && x.is_multiple_of(8));
    let fits = rows > 0
        && cols > 0
        && (rows < m || cols < n)
        && on_edge(rows, m)
        && on_edge(cols, n)
        && (0..rows).all(|i| (0..cols).all(|j| good(i, j)));
    fits.then_some((rows, cols))
}

/// Whether `got` equals the transposed reference (C[i][j] = C_ref[j][i]).
fn transposed_matches(reference: &Reference, got: &Array2<f32>, tolerance: f64) -> bool {
    let (m, n) = reference.value.dim();
    got.dim() == (n, m)
        && got.indexed_iter().all(|((i, j), &g)| {
            g.is_finite()
                && (f64::from(g) - reference.value[[j, i]]).abs()
                    <= reference.bound(tolerance, j, i)
        })
}

/// The factor s when `got` ≈ s·C_ref with s clearly not 1.
fn constant_factor(reference: &Reference, got: &Array2<f32>, tolerance: f64) -> Option<f64> {
    let dot: f64 = got
        .iter()
        .zip(reference.value.iter())
        .map(|(&g, &r)| f64::from(g) * r)
        .sum();
    let norm: f64 = reference.value.iter().map(|r| r * r).sum();
    // Any single value is "a constant factor" off: it takes a few to call it a pattern.
    if norm == 0.0 || got.len() < 4 {
        return None;
    }
    let s = dot / norm;
    if (s - 1.0).abs() < 1e-3 || s.abs() < 1e-6 {
        return None;
    }
    let fits = got.indexed_iter().all(|((i, j), &g)| {
        (f64::from(g) - s * reference.value[[i, j]]).abs()
            <= s.abs() * reference.bound(4.0 * tolerance, i, j)
    });
    fits.then_some(s)
}

/// Freivalds' check that C = A·B in O(n²) instead of O(n³): C·x against A·(B·x) for a
/// random x, each row within the same bound as the element-wise check, summed over the row.
/// A wrong C passes only by a fluke of x; used where every timed output must be checked.
pub fn freivalds(
    a: &Array2<f32>,
    b: &Array2<f32>,
    c: &Array2<f32>,
    tolerance: f64,
    x: &[f64],
) -> bool {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    if c.dim() != (m, n) || b.nrows() != k || x.len() != n || c.iter().any(|v| !v.is_finite()) {
        return false;
    }
    let bx: Vec<(f64, f64)> = (0..k)
        .map(|p| {
            (0..n).fold((0.0, 0.0), |(v, mag), j| {
                let bpj = f64::from(b[[p, j]]);
                (v + bpj * x[j], mag + bpj.abs() * x[j].abs())
            })
        })
        .collect();
    (0..m).all(|i| {
        let (abx, mag) = (0..k).fold((0.0, 0.0), |(v, mag), p| {
            let aip = f64::from(a[[i, p]]);
            (v + aip * bx[p].0, mag + aip.abs() * bx[p].1)
        });
        let cx: f64 = (0..n).map(|j| f64::from(c[[i, j]]) * x[j]).sum();
        // The reference itself is rounded too: a little slack over the f32 bound.
        (cx - abx).abs()
            <= tolerance * k.max(1) as f64 * f64::from(f32::EPSILON) * mag * 1.01 + 1e-30
    })
}

/// A number printed to be read: 6 significant digits.
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        format!("{v}")
    } else {
        format!("{v:.6}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

// The timed samples' inputs and the vector that checks them, shared by every lab whose speed
// items hand matrices over (the supervisor's speed rounds in `timed` use them too).

/// The input case of the candidate's extra run `run` (1 or more) in timed sample `s` of round
/// `round`: distinct from every sample case of every round (those stay below 2³²) and from
/// every other run, so no run's inputs come back later.
pub fn run_case(round: usize, s: usize, run: usize) -> usize {
    sample_case(round, s) + (run << 32)
}

/// The input case of timed sample `s` of round `round`: distinct for every round and sample,
/// and never 0 (the case whose output the supervisor checks in full).
pub fn sample_case(round: usize, s: usize) -> usize {
    1 + round * 10_000 + s
}

/// The random vector Freivalds' check multiplies by, from the run's seed.
pub fn verification_vector(seed: u64, item: &str, round: usize, n: usize) -> Vec<f64> {
    crate::inputs::matrix(seed, item, round, "freivalds", 1, n)
        .iter()
        .map(|&v| f64::from(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::operands;

    fn naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
        let mut c = Array2::zeros((a.nrows(), b.ncols()));
        for i in 0..a.nrows() {
            for j in 0..b.ncols() {
                let mut s = 0.0f32;
                for p in 0..a.ncols() {
                    s += a[[i, p]] * b[[p, j]];
                }
                c[[i, j]] = s;
            }
        }
        c
    }

    fn hint_for(shape: [usize; 3], spoil: impl Fn(&mut Array2<f32>)) -> String {
        let (a, b) = operands(1, "t", 0, shape);
        let mut c = naive(&a, &b);
        spoil(&mut c);
        let err = compare(&a, &b, &c, 2.0).unwrap_err();
        format!("{} | {}", err.summary, err.hint.unwrap_or_default())
    }

    #[test]
    fn a_right_product_passes_at_every_shape() {
        for shape in [[1, 1, 1], [33, 17, 45], [1, 300, 1], [129, 65, 97]] {
            let (a, b) = operands(3, "t", 0, shape);
            assert!(compare(&a, &b, &naive(&a, &b), 2.0).is_ok(), "{shape:?}");
        }
    }

    #[test]
    fn a_wrong_value_names_its_index() {
        let msg = hint_for([10, 10, 10], |c| c[[3, 4]] += 1.0);
        assert!(msg.contains("C[3][4]") && msg.contains("1 of 100"), "{msg}");
    }

    #[test]
    fn patterns_are_diagnosed() {
        assert!(hint_for([16, 8, 16], |c| *c = c.t().to_owned()).contains("transposed"));
        assert!(hint_for([16, 8, 16], |c| c.fill(0.0)).contains("every value is 0"));
        assert!(hint_for([16, 8, 16], |c| c[[2, 2]] = f32::NAN).contains("NaN"));
        assert!(hint_for([16, 8, 16], |c| c.mapv_inplace(|v| v * 8.0)).contains("K = 8"));
        assert!(!hint_for([1, 8, 1], |c| c.mapv_inplace(|v| v * 2.0)).contains("×"));
        let block = hint_for([40, 8, 40], |c| {
            c.slice_mut(ndarray::s![32.., ..]).fill(0.0);
            c.slice_mut(ndarray::s![.., 32..]).fill(0.0);
        });
        assert!(
            block.contains("top-left 32×32") && block.contains("block of 32"),
            "{block}"
        );
        let (a, b) = operands(1, "t", 0, [3, 4, 5]);
        let wrong_shape = compare(&a, &b, &naive(&a, &b).t().to_owned(), 2.0).unwrap_err();
        assert!(wrong_shape.summary.contains("5×3"));
        assert!(wrong_shape.hint.unwrap().contains("transposed"));
    }

    #[test]
    fn freivalds_accepts_a_right_product_and_rejects_a_wrong_one() {
        let (a, b) = operands(9, "t", 0, [40, 30, 20]);
        let x: Vec<f64> = crate::inputs::matrix(9, "x", 0, "x", 1, 20)
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let mut c = naive(&a, &b);
        assert!(freivalds(&a, &b, &c, 2.0, &x));
        c[[7, 3]] += 1e-3;
        assert!(!freivalds(&a, &b, &c, 2.0, &x));
        assert!(!freivalds(&a, &b, &Array2::zeros((40, 20)), 2.0, &x));
    }

    #[test]
    fn the_bound_scales_with_k() {
        let (a, b) = operands(5, "t", 0, [4, 1000, 4]);
        let exact = reference(&a, &b);
        let mut c = naive(&a, &b);
        // An error of K·eps·|A||B| / 4 is within the bound (c = 2) ...
        c[[0, 0]] = (exact.value[[0, 0]] + exact.bound(0.5, 0, 0)) as f32;
        assert!(compare(&a, &b, &c, 2.0).is_ok());
        // ... and 4 times the bound is not.
        c[[0, 0]] = (exact.value[[0, 0]] + exact.bound(8.0, 0, 0)) as f32;
        assert!(compare(&a, &b, &c, 2.0).is_err());
    }
}
