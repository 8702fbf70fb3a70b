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
    // BEGIN SOLUTION
    let ((batch, m, _), n) = (a.dim(), b.dim().2);
    let mut c = Array3::zeros((batch, m, n));
    for (z, mut c_z) in c.outer_iter_mut().enumerate() {
        c_z.assign(&a.index_axis(Axis(0), z).dot(&b.index_axis(Axis(0), z)));
    }
    c
    // END SOLUTION
    //@template todo!("matmul_batched: one product per matrix of the batch")
}

// BEGIN SOLUTION
/// One thread per element of one C[b]: blockIdx.z picks the matrix of the batch.
const BATCHED_KERNEL: &str = r#"
extern "C" __global__ void matmul_batched(const float* a, const float* b, float* c, int batch, int m, int k, int n) {
    int z = blockIdx.z;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (z < batch && row < m && col < n) {
        const float* a_z = a + (long long)z * m * k;
        const float* b_z = b + (long long)z * k * n;
        float sum = 0.0f;
        for (int p = 0; p < k; ++p) {
            sum += a_z[row * k + p] * b_z[p * n + col];
        }
        c[(long long)z * m * n + row * n + col] = sum;
    }
}
"#;

/// Loads the batched kernel on the stream's GPU, compiled once per program.
fn batched_kernel(stream: &Arc<CudaStream>) -> GpuResult<CudaFunction> {
    static COMPILED: Mutex<Option<Ptx>> = Mutex::new(None);
    let ptx = {
        let mut compiled = COMPILED
            .lock()
            .map_err(|_| "the kernel cache is poisoned")?;
        match compiled.as_ref() {
            Some(ptx) => ptx.clone(),
            None => compiled.insert(compile_ptx(BATCHED_KERNEL)?).clone(),
        }
    };
    let module = stream.context().load_module(ptx)?;
    Ok(module.load_function("matmul_batched")?)
}

/// Launches the batched kernel once for the whole batch: 16×16 blocks over each C[b], and one
/// layer of blocks per matrix (grid z = batch).
fn launch_batched(
    stream: &Arc<CudaStream>,
    kernel: &CudaFunction,
    (a, b, c): (&CudaSlice<f32>, &CudaSlice<f32>, &mut CudaSlice<f32>),
    [batch, m, k, n]: [usize; 4],
) -> GpuResult<()> {
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, batch as u32),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (batch, m, k, n) = (batch as i32, m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(kernel);
    launch
        .arg(a)
        .arg(b)
        .arg(c)
        .arg(&batch)
        .arg(&m)
        .arg(&k)
        .arg(&n);
    // SAFETY: the arguments match the kernel's parameters, and the kernel only touches
    // indices below batch·m·k, batch·k·n and batch·m·n.
    unsafe { launch.launch(config) }?;
    Ok(())
}

/// Copies a batch to the GPU as one block, matrix after matrix, row by row.
fn upload_batch(stream: &Arc<CudaStream>, x: &Array3<f32>) -> GpuResult<CudaSlice<f32>> {
    let rows = x.as_standard_layout();
    let data = rows
        .as_slice()
        .ok_or("a standard-layout array is contiguous")?;
    Ok(stream.clone_htod(data)?)
}
// END SOLUTION

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
    // BEGIN SOLUTION
    let ((batch, m, k), n) = (a.dim(), b.dim().2);
    let shape = [batch, m, k, n];
    let kernel = batched_kernel(stream)?;
    let (a_dev, b_dev) = (upload_batch(stream, a)?, upload_batch(stream, b)?);
    let mut c_dev = stream.alloc_zeros::<f32>(batch * m * n)?;
    launch_batched(stream, &kernel, (&a_dev, &b_dev, &mut c_dev), shape)?;
    let c = stream.clone_dtoh(&c_dev)?;
    Ok(Array3::from_shape_vec((batch, m, n), c)?)
    // END SOLUTION
    //@template todo!("matmul_batched_gpu: the whole batch in one launch")
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
    // BEGIN SOLUTION
    let kernel = batched_kernel(stream)?;
    stream.synchronize()?;
    let start = Instant::now();
    launch_batched(stream, &kernel, (a, b, c), shape)?;
    stream.synchronize()?;
    Ok(start.elapsed())
    // END SOLUTION
    //@template todo!("time_gpu_matmul_batched: synchronize, start the clock, launch the batch, synchronize, stop")
}
