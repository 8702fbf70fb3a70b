//! How the training lab says that a student's tensor is not the reference's: the tensor's name
//! as the lesson names it (`layer1.weight`), the worst index, expected against got, and what
//! NaN or a wrong shape usually means.

use super::t;
use ndarray::{ArrayView2, Ix2};
use std::fmt;

/// How a student's f32 tensor differs from the f64 reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    /// Another shape (rows × columns).
    Shape {
        /// The tensor's name.
        name: String,
        /// The reference's shape.
        expected: (usize, usize),
        /// The student's shape.
        got: (usize, usize),
    },
    /// A NaN or an infinity where the reference has a number.
    NotFinite {
        /// The tensor's name.
        name: String,
        /// The first such index.
        index: (usize, usize),
        /// The value there.
        got: f32,
    },
    /// Values off by more than the tolerance.
    Value {
        /// The tensor's name.
        name: String,
        /// The worst index.
        index: (usize, usize),
        /// The reference's value there.
        expected: f64,
        /// The student's value there.
        got: f32,
        /// How many entries are off.
        off: usize,
        /// How many entries there are.
        of: usize,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Shape {
                name,
                expected,
                got,
            } => f.write_str(&t!(
                "mismatch-shape",
                name = name,
                rows = got.0,
                cols = got.1,
                erows = expected.0,
                ecols = expected.1
            )),
            Mismatch::NotFinite { name, index, got } => f.write_str(&t!(
                "mismatch-not-finite",
                name = name,
                i = index.0,
                j = index.1,
                got = got
            )),
            Mismatch::Value {
                name,
                index,
                expected,
                got,
                off,
                of,
            } => f.write_str(&t!(
                "mismatch-value",
                name = name,
                i = index.0,
                j = index.1,
                got = got,
                expected = format!("{expected:.6}"),
                off = off,
                of = of
            )),
        }
    }
}

/// Compares `got` with `expected`: each value within `abs + rel·|expected|` (f32 arithmetic
/// against an f64 reference). `name` is how feedback calls the tensor.
pub fn compare(
    name: &str,
    expected: ArrayView2<f64>,
    got: ArrayView2<f32>,
    rel: f64,
    abs: f64,
) -> Result<(), Mismatch> {
    if expected.dim() != got.dim() {
        return Err(Mismatch::Shape {
            name: name.to_string(),
            expected: expected.dim(),
            got: got.dim(),
        });
    }
    let mut worst: Option<((usize, usize), f64)> = None;
    let mut off = 0;
    for (index, (&e, &g)) in expected
        .indexed_iter()
        .zip(got.iter())
        .map(|((i, e), g)| (i, (e, g)))
    {
        if !g.is_finite() && e.is_finite() {
            return Err(Mismatch::NotFinite {
                name: name.to_string(),
                index,
                got: g,
            });
        }
        let excess = (f64::from(g) - e).abs() - (abs + rel * e.abs());
        if excess > 0.0 {
            off += 1;
            if worst.is_none_or(|(_, w)| excess > w) {
                worst = Some((index, excess));
            }
        }
    }
    match worst {
        None => Ok(()),
        Some((index, _)) => Err(Mismatch::Value {
            name: name.to_string(),
            index,
            expected: expected[index],
            got: got[index],
            off,
            of: expected.len(),
        }),
    }
}

/// A vector (a bias, one loss per batch) as a one-row matrix, to compare it the same way.
pub fn row<A: Clone>(values: &[A]) -> ndarray::Array<A, Ix2> {
    ndarray::Array2::from_shape_fn((1, values.len()), |(_, j)| values[j].clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn the_worst_index_is_named_with_expected_and_got() {
        let expected = array![[1.0, 2.0], [3.0, 4.0]];
        let got = array![[1.0f32, 2.1], [3.0, 4.5]];
        let m = compare("layer1.weight", expected.view(), got.view(), 1e-4, 1e-5)
            .expect_err("two values are off");
        assert_eq!(
            m.to_string(),
            "`layer1.weight`[1, 1] is 4.5, expected 4.000000 (2 of 4 values are off; this is \
             the worst)"
        );
        assert!(compare(
            "x",
            expected.view(),
            expected.mapv(|v| v as f32).view(),
            1e-6,
            1e-6
        )
        .is_ok());
    }

    #[test]
    fn a_nan_and_a_transposed_shape_are_said_as_such() {
        let expected = array![[1.0, 2.0, 3.0]];
        let nan = array![[1.0f32, f32::NAN, 3.0]];
        let m = compare("loss", expected.view(), nan.view(), 1e-4, 1e-5).expect_err("NaN");
        assert!(
            m.to_string()
                .starts_with("`loss`[0, 1] is NaN, expected a number"),
            "{m}"
        );
        let transposed = array![[1.0f32], [2.0], [3.0]];
        let m = compare(
            "layer2.weight",
            expected.view(),
            transposed.view(),
            1e-4,
            1e-5,
        )
        .expect_err("shape");
        assert!(m.to_string().contains("is 3×1, expected 1×3"), "{m}");
    }

    #[test]
    fn a_vector_compares_as_a_row() {
        let bias = row(&[0.5, -0.5]);
        assert_eq!(bias.dim(), (1, 2));
        let got = row(&[0.5f32, -0.4]);
        let m = compare("layer1.bias", bias.view(), got.view(), 1e-4, 1e-5).expect_err("off");
        assert!(
            m.to_string().starts_with("`layer1.bias`[0, 1] is -0.4"),
            "{m}"
        );
    }
}
