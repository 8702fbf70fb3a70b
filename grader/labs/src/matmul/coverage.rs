//! A GPU product right on only part of C, told from the launch the device saw: its grid and
//! block against C's rows and columns, which axis falls short, or x and y swapped between the
//! grid and the kernel. The CPU lab's block hint ("the rows left over after the last full
//! block") would take the covered extent for a block size; on the GPU the launch says why.
//!
//! A hint is given only when the result agrees with it: C right exactly on the part of it the
//! launch's threads reach (one thread an element, x over columns and y over rows, or the
//! other way round) and wrong past it. A kernel that maps its threads otherwise (a tile of
//! elements a thread, a flat index) gets no coverage hint, only the others.

use super::t;
use grader_engine::check::matmul::{reference, Reference};
use grader_worker::protocol::LaunchGeometry;
use ndarray::Array2;

/// The part of the launches a case made ([`grader_worker::protocol::Outcome::Products`]'s
/// `case_launches` and `launch_geometry`): those numbered from `case_launches[case]` to
/// `case_launches[case + 1]`.
pub(super) fn of_case<'a>(
    case: usize,
    case_launches: &[u64],
    geometry: &'a [LaunchGeometry],
) -> Vec<&'a LaunchGeometry> {
    let (Some(&start), Some(&end)) = (case_launches.get(case), case_launches.get(case + 1)) else {
        return Vec::new();
    };
    geometry
        .iter()
        .filter(|l| (start..end).contains(&l.number))
        .collect()
}

/// Most of the values past the covered part must be wrong for the hint to fit (a value left
/// at zero is wrong unless the product there is exactly zero, which random inputs never give;
/// the margin keeps a stray right value from hiding the pattern).
const WRONG_OUTSIDE: f64 = 0.99;

/// The hint for the product `got` of `a`·`b` (compared with `tolerance`, as the item does)
/// when the last of `launches` covered only part of C and C is right exactly there.
pub(super) fn hint(
    a: &Array2<f32>,
    b: &Array2<f32>,
    got: &Array2<f32>,
    tolerance: f64,
    launches: &[&LaunchGeometry],
) -> Option<String> {
    let launch = launches.last()?;
    let (m, n) = (a.nrows(), b.ncols());
    if got.dim() != (m, n) || m == 0 || n == 0 {
        return None;
    }
    let [gx, gy, _] = launch.grid.map(|d| d as usize);
    let [bx, by, _] = launch.block.map(|d| d as usize);
    let (along_x, along_y) = (gx * bx, gy * by);
    let reference = reference(a, b);
    let fits = |rows: usize, cols: usize| right_exactly_on(&reference, got, tolerance, rows, cols);
    // x over columns, y over rows (as the lab's kernels read them), else the other way round.
    let (rows, cols) = (along_y.min(m), along_x.min(n));
    let (rows, cols, what, cause) = if (rows < m || cols < n) && fits(rows, cols) {
        let mut short = Vec::new();
        if cols < n {
            short.push(t!("coverage-short-x", threads = along_x, n = n));
        }
        if rows < m {
            short.push(t!("coverage-short-y", threads = along_y, m = m));
        }
        // A grid sized for C turned on its side: x from the rows, y from the columns.
        let turned = along_x >= m && along_y >= n && m != n;
        let cause = if turned {
            t!("coverage-turned", m = m, n = n)
        } else {
            t!("coverage-too-small")
        };
        (rows, cols, short.join("; "), cause)
    } else {
        let (rows, cols) = (along_x.min(m), along_y.min(n));
        if !((rows < m || cols < n) && fits(rows, cols)) {
            return None;
        }
        (
            rows,
            cols,
            t!("coverage-swapped-what"),
            t!("coverage-swapped"),
        )
    };
    Some(t!(
        "coverage-launch",
        kernel = launch.kernel.as_str(),
        gx = gx,
        gy = gy,
        bx = bx,
        by = by,
        rows = rows,
        cols = cols,
        m = m,
        n = n,
        what = what,
        cause = cause
    ))
}

/// Whether `got` is right on its top-left `rows`×`cols` (not empty) and wrong on nearly all
/// of the rest.
fn right_exactly_on(
    reference: &Reference,
    got: &Array2<f32>,
    tolerance: f64,
    rows: usize,
    cols: usize,
) -> bool {
    if rows == 0 || cols == 0 {
        return false;
    }
    let good = |i: usize, j: usize| reference.holds(got[[i, j]], tolerance, i, j);
    let (mut outside, mut wrong_outside) = (0usize, 0usize);
    for ((i, j), _) in got.indexed_iter() {
        let inside = i < rows && j < cols;
        match (inside, good(i, j)) {
            (true, false) => return false,
            (true, true) => {}
            (false, ok) => {
                outside += 1;
                wrong_outside += usize::from(!ok);
            }
        }
    }
    outside > 0 && wrong_outside as f64 >= WRONG_OUTSIDE * outside as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(grid: [u32; 3], block: [u32; 3]) -> LaunchGeometry {
        LaunchGeometry {
            number: 0,
            grid,
            block,
            kernel: "matmul".into(),
        }
    }

    /// A·B with everything past `rows`×`cols` left at zero, as an output buffer of
    /// `alloc_zeros` the kernel never reached.
    fn covered(a: &Array2<f32>, b: &Array2<f32>, rows: usize, cols: usize) -> Array2<f32> {
        let mut c = a.dot(b);
        for ((i, j), v) in c.indexed_iter_mut() {
            if i >= rows || j >= cols {
                *v = 0.0;
            }
        }
        c
    }

    fn operands(m: usize, k: usize, n: usize) -> (Array2<f32>, Array2<f32>) {
        let value = |i: usize| ((i * 7919) % 1000) as f32 / 500.0 - 1.0 + 0.0005;
        (
            Array2::from_shape_fn((m, k), |(i, j)| value(i * k + j)),
            Array2::from_shape_fn((k, n), |(i, j)| value(i * n + j + 17)),
        )
    }

    #[test]
    fn the_launch_says_which_axis_falls_short_and_whether_x_and_y_are_swapped() {
        let (a, b) = operands(100, 37, 70);
        // grid (n / 16, m / 16): 64 columns and 96 rows reached.
        let short = covered(&a, &b, 96, 64);
        let said = hint(&a, &b, &short, 2.0, &[&launch([4, 6, 1], [16, 16, 1])]).unwrap();
        assert!(
            said.contains("64 threads along x for C's 70 columns")
                && said.contains("96 threads along y for C's 100 rows")
                && said.contains("top-left 96×64"),
            "{said}"
        );
        // grid (m.div_ceil(16), n.div_ceil(16)): sized for C on its side.
        let turned = covered(&a, &b, 80, 70);
        let said = hint(&a, &b, &turned, 2.0, &[&launch([7, 5, 1], [16, 16, 1])]).unwrap();
        assert!(
            said.contains("80 threads along y for C's 100 rows") && said.contains("x from m = 100"),
            "{said}"
        );
        // The kernel's row from x, its column from y, under a grid sized the usual way.
        let swapped = covered(&a, &b, 80, 70);
        let said = hint(&a, &b, &swapped, 2.0, &[&launch([5, 7, 1], [16, 16, 1])]).unwrap();
        assert!(said.contains("row from x"), "{said}");
        // A launch that reaches all of C, or a result that does not follow the launch: none.
        let whole = launch([5, 7, 1], [16, 16, 1]);
        assert_eq!(
            hint(&a, &b, &covered(&a, &b, 100, 70), 2.0, &[&whole]),
            None
        );
        let mut stray = short.clone();
        stray[[3, 5]] += 1.0;
        assert_eq!(
            hint(&a, &b, &stray, 2.0, &[&launch([4, 6, 1], [16, 16, 1])]),
            None
        );
        assert_eq!(hint(&a, &b, &short, 2.0, &[]), None);
    }

    #[test]
    fn a_case_owns_the_launches_numbered_between_its_counts() {
        let geometry: Vec<LaunchGeometry> = (0..5)
            .map(|i| LaunchGeometry {
                number: i,
                ..launch([1, 1, 1], [1, 1, 1])
            })
            .collect();
        let numbers = |case| -> Vec<u64> {
            of_case(case, &[0, 2, 2, 5], &geometry)
                .iter()
                .map(|l| l.number)
                .collect()
        };
        assert_eq!(numbers(0), [0, 1]);
        assert!(numbers(1).is_empty());
        assert_eq!(numbers(2), [2, 3, 4]);
        assert!(numbers(3).is_empty());
    }
}
