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
    // BEGIN SOLUTION
    // SAFETY: only asks the dynamic loader whether the library can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Device::Cpu;
    }
    match CudaContext::new(0).and_then(|ctx| ctx.new_stream()) {
        Ok(stream) => Device::Gpu(stream),
        Err(_) => Device::Cpu,
    }
    // END SOLUTION
    //@template todo!("default_device: the GPU if there is one, else the CPU")
}

// BEGIN SOLUTION
/// The naive kernel: one thread per element of C.
const MATMUL_KERNEL: &str = r#"
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int m, int k, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int p = 0; p < k; ++p) {
            sum += a[row * k + p] * b[p * n + col];
        }
        c[row * n + col] = sum;
    }
}
"#;

/// The tiled kernel: each block loads 16×16 tiles of A and B into shared memory.
const TILED_KERNEL: &str = r#"
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* a, const float* b, float* c, int m, int k, int n) {
    __shared__ float tile_a[TILE][TILE];
    __shared__ float tile_b[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + threadIdx.x;
        int b_row = t * TILE + threadIdx.y;
        tile_a[threadIdx.y][threadIdx.x] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
        tile_b[threadIdx.y][threadIdx.x] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
        __syncthreads();
        for (int p = 0; p < TILE; ++p) {
            sum += tile_a[threadIdx.y][p] * tile_b[p][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[row * n + col] = sum;
    }
}
"#;

/// Loads kernel `name` of `source` on the stream's GPU, once per program and context: NVRTC
/// compiling takes far longer than a multiplication, and loading a module inside a timed call
/// would be timed too (on a real GPU a module load also waits for the work already queued, so
/// it would hide a clock started too early).
fn load_kernel(
    stream: &Arc<CudaStream>,
    source: &'static str,
    name: &str,
) -> GpuResult<CudaFunction> {
    type Loaded = (&'static str, String, Arc<CudaContext>, CudaFunction);
    static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());
    let context = stream.context();
    let mut loaded = LOADED.lock().map_err(|_| "the kernel cache is poisoned")?;
    let found = loaded
        .iter()
        .find(|(s, n, c, _)| *s == source && n == name && Arc::ptr_eq(c, context));
    if let Some((_, _, _, kernel)) = found {
        return Ok(kernel.clone());
    }
    let module = context.load_module(compile_ptx(source)?)?;
    let kernel = module.load_function(name)?;
    loaded.push((
        source,
        name.to_string(),
        Arc::clone(context),
        kernel.clone(),
    ));
    Ok(kernel)
}

/// Launches `kernel` over C (m×n) with 16×16 blocks; enough blocks to cover every element.
fn launch_product(
    stream: &Arc<CudaStream>,
    kernel: &CudaFunction,
    (a, b, c): (&CudaSlice<f32>, &CudaSlice<f32>, &mut CudaSlice<f32>),
    [m, k, n]: [usize; 3],
) -> GpuResult<()> {
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (m, k, n) = (m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(kernel);
    launch.arg(a).arg(b).arg(c).arg(&m).arg(&k).arg(&n);
    // SAFETY: the arguments match the kernel's parameters, and the kernel only touches
    // indices below m·k, k·n and m·n.
    unsafe { launch.launch(config) }?;
    Ok(())
}

/// Copies a matrix to the GPU as one row-major block.
fn upload(stream: &Arc<CudaStream>, x: &Array2<f32>) -> GpuResult<CudaSlice<f32>> {
    let rows = x.as_standard_layout();
    let data = rows
        .as_slice()
        .ok_or("a standard-layout matrix is contiguous")?;
    Ok(stream.clone_htod(data)?)
}

/// Uploads A and B, runs `source`'s kernel `name`, downloads C.
fn product_on_gpu(
    stream: &Arc<CudaStream>,
    a: &Array2<f32>,
    b: &Array2<f32>,
    (source, name): (&'static str, &str),
) -> GpuResult<Array2<f32>> {
    let shape = [a.nrows(), a.ncols(), b.ncols()];
    let kernel = load_kernel(stream, source, name)?;
    let (a_dev, b_dev) = (upload(stream, a)?, upload(stream, b)?);
    let mut c_dev = stream.alloc_zeros::<f32>(shape[0] * shape[2])?;
    launch_product(stream, &kernel, (&a_dev, &b_dev, &mut c_dev), shape)?;
    let c = stream.clone_dtoh(&c_dev)?;
    Ok(Array2::from_shape_vec((shape[0], shape[2]), c)?)
}
// END SOLUTION

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
    // BEGIN SOLUTION
    product_on_gpu(stream, a, b, (MATMUL_KERNEL, "matmul"))
    // END SOLUTION
    //@template todo!("matmul_gpu: your naive CUDA kernel")
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
    // BEGIN SOLUTION
    product_on_gpu(stream, a, b, (TILED_KERNEL, "matmul_tiled"))
    // END SOLUTION
    //@template todo!("matmul_gpu_tiled: the shared-memory version")
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
    // BEGIN SOLUTION
    use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let blas = CudaBlas::new(stream.clone())?;
    let (a_dev, b_dev) = (upload(stream, a)?, upload(stream, b)?);
    let mut c_dev = stream.alloc_zeros::<f32>(m * n)?;
    let config = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: 1.0f32,
        lda: n as i32,
        ldb: k as i32,
        beta: 0.0f32,
        ldc: n as i32,
    };
    // SAFETY: the sizes and leading dimensions describe the three buffers exactly.
    unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?;
    let c = stream.clone_dtoh(&c_dev)?;
    Ok(Array2::from_shape_vec((m, n), c)?)
    // END SOLUTION
    //@template todo!("matmul_cublas: one cuBLAS gemm call")
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
    // BEGIN SOLUTION
    let kernel = load_kernel(stream, TILED_KERNEL, "matmul_tiled")?;
    stream.synchronize()?;
    let start = Instant::now();
    launch_product(stream, &kernel, (a, b, c), shape)?;
    stream.synchronize()?;
    Ok(start.elapsed())
    // END SOLUTION
    //@template todo!("time_gpu_matmul: synchronize, start the clock, launch, synchronize, stop")
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
    // BEGIN SOLUTION
    let a = Array2::from_shape_fn((size, size), |(i, j)| ((i * 7 + j * 3) % 11) as f32 / 11.0);
    let b = Array2::from_shape_fn((size, size), |(i, j)| ((i * 5 + j) % 13) as f32 / 13.0);
    println!("Benchmarking {size}x{size} matrix multiplication...");
    let start = Instant::now();
    std::hint::black_box(matmul_fast(&a, &b));
    let cpu = start.elapsed();
    println!("CPU (matmul_fast): {:.4} s", cpu.as_secs_f64());
    let gpu = match default_device() {
        Device::Gpu(stream) => {
            let (a_dev, b_dev) = (upload(&stream, &a)?, upload(&stream, &b)?);
            let mut c_dev = stream.alloc_zeros::<f32>(size * size)?;
            let gpu = time_gpu_matmul(&stream, &a_dev, &b_dev, &mut c_dev, [size; 3])?;
            println!("GPU (tiled kernel): {:.4} s", gpu.as_secs_f64());
            println!(
                "GPU was {:.1}x faster than CPU.",
                cpu.as_secs_f64() / gpu.as_secs_f64()
            );
            Some(gpu)
        }
        Device::Cpu => {
            println!("No GPU available: GPU benchmark skipped.");
            None
        }
    };
    Ok(Benchmark { cpu, gpu })
    // END SOLUTION
    //@template todo!("benchmark: time the CPU and the GPU, print both and the speedup")
}
