//! # Batches: many products in one call
//!
//! CuPy's `cp.matmul` on 3-D arrays multiplies a whole batch of matrices at once:
//! `C[b] = A[b] · B[b]` for every `b`. Here a batch is an `ndarray::Array3<f32>`: A has shape
//! (batch, m, k), B has shape (batch, k, n), and C has shape (batch, m, n); `a[[b, i, j]]` is
//! row `i`, column `j` of matrix `b`, and `a.index_axis(Axis(0), b)` is matrix `b` itself.
//! Every matrix of one batch has the same shape.
//!
//! Why batch on a GPU: each kernel launch or cuBLAS call costs a few microseconds before any
//! work starts, and one small matrix keeps only a corner of the GPU busy. A loop of single
//! products pays that cost once per matrix; one call for the whole batch pays it once and
//! gives the GPU every matrix to work on at the same time.
//!
//! On the GPU the batch is stored as one block: matrix 0, then matrix 1, …, each row by row.
//! So matrix `b` of A starts `b·m·k` numbers into A, that of B `b·k·n` into B, and that of C
//! `b·m·n` into C: the "batch stride" is one whole matrix.

use crate::gpu::GpuResult;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx, Ptx};
use ndarray::{Array3, Axis};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Multiplies every matrix of a batch on the CPU: `C[b] = A[b] · B[b]`, with A of shape
/// (batch, m, k) and B of shape (batch, k, n); returns C of shape (batch, m, n).
///
/// Steps: read the sizes (`let (batch, m, k) = a.dim();` and `b.dim().2` for n); make C with
/// `Array3::zeros((batch, m, n))`; for each `b` take matrix `b` of A and of B
/// (`a.index_axis(Axis(0), b)`, a 2-D view), multiply them (ndarray's `x.dot(&y)` is allowed
/// here; so is your [`crate::matmul_fast`] on owned copies, `.to_owned()`, though a mistake in
/// it then costs this item too) and write the product into matrix `b` of C
/// (`c.index_axis_mut(Axis(0), b).assign(&product)`). The grader tries batches of one matrix,
/// of 1×1 matrices and of sizes that are not multiples of 16.
pub fn matmul_batched(a: &Array3<f32>, b: &Array3<f32>) -> Array3<f32> {
    todo!("matmul_batched: one product per matrix of the batch")
}

/// The batch on the GPU in ONE call: `C[b] = A[b] · B[b]` for every `b`, with one kernel launch
/// for the whole batch (or one strided-batched cuBLAS call), never one call per matrix. On a
/// real GPU the batched speed item measures that rule; on the emulator, which cannot measure
/// speed, the grader counts your launches and cuBLAS calls, and one call per matrix costs a
/// third of this item.
///
/// Steps: copy A and B to the GPU as they are stored (a standard-layout `Array3` is already
/// one block, matrix after matrix: `a.as_standard_layout()`, then `as_slice()`); make C with
/// `stream.alloc_zeros::<f32>(batch * m * n)`; launch one kernel over a 3-D grid:
/// `grid_dim: (n.div_ceil(16), m.div_ceil(16), batch)`, where `blockIdx.z` is the matrix and
/// the kernel starts matrix `z` at `a + z*m*k`, `b + z*k*n` and `c + z*m*n` (and skips threads
/// outside C[z]: `if (row < m && col < n)`); copy C back and make it an `Array3` with
/// `Array3::from_shape_vec((batch, m, n), c)?`.
///
/// The cuBLAS route works too: `blas.gemm_strided_batched(config, &b_dev, &a_dev, &mut c_dev)`
/// with a `cudarc::cublas::StridedBatchedConfig` (the `GemmConfig` of [`crate::matmul_cublas`]
/// for one matrix, `batch_size`, and the strides of B, A and C in that order: k·n, m·k, m·n).
pub fn matmul_batched_gpu(
    stream: &Arc<CudaStream>,
    a: &Array3<f32>,
    b: &Array3<f32>,
) -> GpuResult<Array3<f32>> {
    todo!("matmul_batched_gpu: the whole batch in one launch")
}

/// Times ONE batched multiplication of operands already on the GPU (A, B and C stored batch
/// after batch as in [`matmul_batched_gpu`]; `shape` = [batch, m, k, n]) with
/// `std::time::Instant`, and returns the time.
///
/// As in [`crate::time_gpu_matmul`]: compile and load the kernel first, then
/// `stream.synchronize()` before starting the clock (so earlier work is not counted), launch
/// the whole batch once, and `stream.synchronize()` again before reading the clock (a launch
/// returns before the GPU has finished).
pub fn time_gpu_matmul_batched(
    stream: &Arc<CudaStream>,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
    shape: [usize; 4],
) -> GpuResult<Duration> {
    todo!("time_gpu_matmul_batched: synchronize, start the clock, launch the batch, synchronize, stop")
}
