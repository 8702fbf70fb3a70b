//! # Week 12 lab: matrix multiplication on the CPU
//!
//! The lab from the lesson "GPU acceleration tools": multiply large matrices, make it fast,
//! and time it the right way. Fill in the three functions below, then run `cargo test`: the
//! grader checks your results against its own, times your fast version against a plain
//! triple loop, and prints a score table with a hint for anything that is wrong.
//!
//! A matrix here is an `ndarray::Array2<f32>`: `a.nrows()` rows, `a.ncols()` columns, and
//! `a[[i, j]]` is the element in row `i`, column `j` (both counted from 0).
//!
//! For C = A · B, A is m×k and B is k×n, and C is m×n with
//! C\[i\]\[j\] = A\[i\]\[0\]·B\[0\]\[j\] + A\[i\]\[1\]·B\[1\]\[j\] + … + A\[i\]\[k−1\]·B\[k−1\]\[j\].

// Remove this line when you are done: it hides warnings about unused inputs.
#![allow(unused_variables, unused_imports)]
use ndarray::Array2;
use std::time::{Duration, Instant};

mod gpu;
pub use gpu::{
    benchmark, default_device, matmul_cublas, matmul_gpu, matmul_gpu_tiled, time_gpu_matmul,
    Benchmark, Device, GpuResult,
};

mod batched;
pub use batched::{matmul_batched, matmul_batched_gpu, time_gpu_matmul_batched};

/// Multiplies A (m×k) by B (k×n) with the textbook triple loop and returns C (m×n).
///
/// Steps: make C with `Array2::zeros((m, n))`; for every row `i` of C and every column `j` of
/// C, add up `a[[i, p]] * b[[p, j]]` for `p` from 0 to k−1, and store the sum in `c[[i, j]]`.
/// Take m, k and n from the inputs (`a.nrows()`, `a.ncols()`, `b.ncols()`): the grader tries
/// square, rectangular and 1-wide matrices.
pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
    todo!("matmul_naive: the triple loop")
}

/// Your own faster A · B: same result as [`matmul_naive`], much less time.
///
/// The grader times this against a plain triple loop on 256×256 matrices; more speedup earns
/// more points. Ideas, in the order they usually pay off:
/// 1. Loop order: with `i, p, j` (the innermost loop walking along a row of B and a row of C)
///    the memory is read in order, which caches and the compiler's vector instructions love.
/// 2. Slices instead of `[[i, j]]` indexing: get contiguous rows (`as_slice()` on a standard
///    layout array, or copy into a `Vec<f32>`) so the inner loop has no bounds checks.
/// 3. Threads: rows of C are independent, so compute them in parallel (the `rayon` crate's
///    `par_chunks_mut` splits C's rows across your cores).
/// 4. Blocking: work on tiles of the matrices that fit in the cache.
///
/// Write the loops yourself: ndarray's `dot` and other library matrix products score 0 here.
/// Sizes are not always multiples of your block size: handle the leftover rows and columns.
pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
    todo!("matmul_fast: your own faster product")
}

/// Runs `work` once and measures how long it took with `std::time::Instant`; returns what the
/// work returned and the time.
///
/// This is the lesson's `start = time.time(); …; end = time.time()` in Rust: read the clock
/// right before calling `work()`, read the elapsed time right after it returns, and measure
/// nothing else. Use it like `let (c, took) = time_cpu(|| matmul_fast(&a, &b));`.
pub fn time_cpu<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    todo!("time_cpu: start a clock, run the work, read the clock")
}
