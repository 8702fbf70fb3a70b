//! Column-major GEMM on the CPU, split by columns of C across the cores.

use std::ops::{Add, Mul};

/// Element types cuBLAS GEMM supports here.
pub trait Real:
    Copy + Send + Sync + Default + PartialEq + Add<Output = Self> + Mul<Output = Self> + 'static
{
}
impl Real for f32 {}
impl Real for f64 {}

/// One GEMM: `C = alpha * op(A) * op(B) + beta * C`, column-major, as cuBLAS defines it.
#[derive(Clone, Copy, Debug)]
pub struct Gemm<T> {
    /// Whether A is transposed.
    pub ta: bool,
    /// Whether B is transposed.
    pub tb: bool,
    /// Rows of op(A) and C.
    pub m: usize,
    /// Columns of op(B) and C.
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    pub k: usize,
    /// Scale of the product.
    pub alpha: T,
    /// Scale of C.
    pub beta: T,
    /// A's address.
    pub a: usize,
    /// Leading dimension of A.
    pub lda: usize,
    /// B's address.
    pub b: usize,
    /// Leading dimension of B.
    pub ldb: usize,
    /// C's address.
    pub c: usize,
    /// Leading dimension of C.
    pub ldc: usize,
}

impl<T: Real> Gemm<T> {
    /// Bytes spanned by A, B and C (for bounds checks): `(rows, cols, ld)` of each as stored.
    pub fn extents(&self) -> [(usize, usize, usize, usize); 3] {
        let (ar, ac) = if self.ta {
            (self.k, self.m)
        } else {
            (self.m, self.k)
        };
        let (br, bc) = if self.tb {
            (self.n, self.k)
        } else {
            (self.k, self.n)
        };
        [
            (self.a, ar, ac, self.lda),
            (self.b, br, bc, self.ldb),
            (self.c, self.m, self.n, self.ldc),
        ]
    }

    /// Computes columns `cols` of C.
    ///
    /// # Safety
    /// A, B and C must be valid for the extents above, and no one else may write the columns.
    unsafe fn columns(&self, cols: std::ops::Range<usize>) {
        let a = self.a as *const T;
        let b = self.b as *const T;
        let c = self.c as *mut T;
        for j in cols {
            let cj = std::slice::from_raw_parts_mut(c.add(j * self.ldc), self.m);
            if self.beta == T::default() {
                cj.fill(T::default());
            } else {
                for x in cj.iter_mut() {
                    *x = *x * self.beta;
                }
            }
            let bj = |l: usize| {
                if self.tb {
                    *b.add(j + l * self.ldb)
                } else {
                    *b.add(l + j * self.ldb)
                }
            };
            if self.ta {
                for (i, x) in cj.iter_mut().enumerate() {
                    let ai = std::slice::from_raw_parts(a.add(i * self.lda), self.k);
                    let mut s = T::default();
                    for (l, &v) in ai.iter().enumerate() {
                        s = s + v * bj(l);
                    }
                    *x = *x + self.alpha * s;
                }
            } else {
                for l in 0..self.k {
                    let f = self.alpha * bj(l);
                    let al = std::slice::from_raw_parts(a.add(l * self.lda), self.m);
                    for (x, &v) in cj.iter_mut().zip(al) {
                        *x = *x + v * f;
                    }
                }
            }
        }
    }

    /// Computes C using every core.
    ///
    /// # Safety
    /// As [`Gemm::columns`], for all columns.
    pub unsafe fn run(&self) {
        let workers = crate::util::cores().min(self.n.max(1));
        let per = self.n.div_ceil(workers.max(1));
        std::thread::scope(|s| {
            for w in 1..workers {
                let g = *self;
                let cols = (w * per).min(self.n)..((w + 1) * per).min(self.n);
                // SAFETY: disjoint columns, caller's guarantees.
                s.spawn(move || unsafe { g.columns(cols) });
            }
            self.columns(0..per.min(self.n));
        });
    }
}
