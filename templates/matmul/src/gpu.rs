//! # The GPU track: the same product on the GPU, with cudarc
//!
//! Every GPU function gets a `stream`: a queue of work on the GPU. Copying to the GPU,
//! launching a kernel and copying back are all put on that queue. A launch returns at once,
//! while the GPU is still working: that is why timing GPU code needs `stream.synchronize()`.
//!
//! Kernels are written in CUDA C, in a Rust string, compiled at run time with NVRTC
//! (`cudarc::nvrtc::compile_ptx`) and loaded into the GPU (`load_module`, `load_function`).
//! No GPU on your machine? `cargo test` runs your kernels on the grader's CPU emulator, which
//! also reports out-of-bounds accesses (a missing `if (row < m && col < n)`).
//!
//! The cudarc calls you need (every one returns a `Result`: add `?`):
//! - compile and load a kernel: `let ptx = compile_ptx(SOURCE)?;`, then
//!   `let module = stream.context().load_module(ptx)?;` and
//!   `let f = module.load_function("matmul")?;` (the name after `__global__ void`);
//! - copy a matrix to the GPU: `stream.clone_htod(slice)?`, where `slice` is its elements row
//!   by row (`let rows = a.as_standard_layout();` then `rows.as_slice()`); room for C:
//!   `stream.alloc_zeros::<f32>(m * n)?`;
//! - launch: `let mut launch = stream.launch_builder(&f);`, then
//!   `launch.arg(&a_dev).arg(&b_dev).arg(&mut c_dev).arg(&m).arg(&k).arg(&n);` with m, k, n as
//!   `i32` (the kernel's `int`), then `unsafe { launch.launch(config) }?;` with
//!   `LaunchConfig { grid_dim: (x, y, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 }`;
//! - copy C back: `stream.clone_dtoh(&c_dev)?` (it waits for the GPU), then
//!   `Array2::from_shape_vec((m, n), c)?`;
//! - wait for everything queued on the stream: `stream.synchronize()?`.

use crate::matmul_fast;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::compile_ptx;
use ndarray::Array2;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What every GPU function returns: its value, or any error from CUDA, NVRTC or cuBLAS
/// (use `?` on them).
pub type GpuResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Where to compute: the GPU (with the stream to use) or the CPU.
pub enum Device {
    /// A GPU was found; work goes on this stream.
    Gpu(Arc<CudaStream>),
    /// No usable GPU: compute on the CPU.
    Cpu,
}

/// Picks the GPU when there is one and falls back to the CPU otherwise (the lesson's
/// `get_default_device()`), without ever panicking because CUDA is missing.
///
/// Two things can be missing: the CUDA driver library itself (check
/// `cudarc::driver::sys::is_culib_present()` first: without it, cudarc panics) and a GPU
/// (then `CudaContext::new(0)` returns an error).
pub fn default_device() -> Device {
    todo!("default_device: the GPU if there is one, else the CPU")
}

/// A (m×k) · B (k×n) on the GPU with your own CUDA C kernel, one thread per element of C.
///
/// Steps: write the kernel as a string (`extern "C" __global__ void matmul(const float* a,
/// const float* b, float* c, int m, int k, int n)`; row = blockIdx.y * blockDim.y +
/// threadIdx.y, col likewise with x); compile and load it; copy A and B to the GPU
/// (`stream.clone_htod`); make C (`stream.alloc_zeros`); launch with 16×16 blocks and
/// enough blocks to cover C even when m and n are not multiples of 16 (`n.div_ceil(16)`),
/// so the kernel must skip threads outside C (`if (row < m && col < n)`); copy C back
/// (`stream.clone_dtoh`).
pub fn matmul_gpu(
    stream: &Arc<CudaStream>,
    a: &Array2<f32>,
    b: &Array2<f32>,
) -> GpuResult<Array2<f32>> {
    todo!("matmul_gpu: your naive CUDA kernel")
}

/// The tiled version: each block of 16×16 threads loads a 16×16 tile of A and one of B into
/// `__shared__` memory, waits for the whole block (`__syncthreads()`), multiplies the tiles,
/// waits again, and moves to the next pair of tiles. Tiles that hang over the edge of A or B
/// are padded with zeros.
pub fn matmul_gpu_tiled(
    stream: &Arc<CudaStream>,
    a: &Array2<f32>,
    b: &Array2<f32>,
) -> GpuResult<Array2<f32>> {
    todo!("matmul_gpu_tiled: the shared-memory version")
}

/// A · B with cuBLAS, the library route (what `torch.matmul` does on a GPU).
///
/// cuBLAS is column-major: it reads a matrix stored row by row as its transpose. Since
/// (A·B)ᵀ = Bᵀ·Aᵀ, asking cuBLAS for B·A on the row-major data gives C in row-major order:
/// `GemmConfig { m: n, n: m, k, lda: n, ldb: k, ldc: n, .. }` with B first.
///
/// Steps: `let blas = CudaBlas::new(stream.clone())?;`; copy A and B up and make C as in
/// [`matmul_gpu`]; fill a `GemmConfig` (no transposes: `transa` and `transb` are
/// `cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N`; alpha 1, beta 0); then
/// `unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?;` and copy C back.
pub fn matmul_cublas(
    stream: &Arc<CudaStream>,
    a: &Array2<f32>,
    b: &Array2<f32>,
) -> GpuResult<Array2<f32>> {
    todo!("matmul_cublas: one cuBLAS gemm call")
}

/// Times ONE multiplication of operands already on the GPU (A is m×k, B is k×n, C is m×n,
/// `shape` = [m, k, n]) with `std::time::Instant`, the way the lesson does, and returns the
/// time.
///
/// A launch returns before the GPU has finished, and the stream may still hold earlier work:
/// call `stream.synchronize()` before starting the clock (so earlier work is not counted) and
/// after launching (so the clock stops when the GPU is done). Compile and load the kernel
/// before starting the clock: only the multiplication should be timed.
pub fn time_gpu_matmul(
    stream: &Arc<CudaStream>,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
    shape: [usize; 3],
) -> GpuResult<Duration> {
    todo!("time_gpu_matmul: synchronize, start the clock, launch, synchronize, stop")
}

/// What [`benchmark`] measured.
pub struct Benchmark {
    /// `matmul_fast` on the CPU.
    pub cpu: Duration,
    /// One GPU multiplication (operands already on the GPU), when there is a GPU.
    pub gpu: Option<Duration>,
}

/// The lesson's lab activity: multiply two `size`×`size` matrices on the CPU (`matmul_fast`)
/// and on the GPU (`time_gpu_matmul`, when [`default_device`] finds one), print both times and
/// the speedup, and return the times.
pub fn benchmark(size: usize) -> GpuResult<Benchmark> {
    todo!("benchmark: time the CPU and the GPU, print both and the speedup")
}
