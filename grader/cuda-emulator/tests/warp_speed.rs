//! The speed of kernels with warp reductions under the emulator, against the same arithmetic
//! as one native C loop (`cc -O2`, one thread), side by side in one run: a layer norm with one
//! warp a row, the same with one element a thread (a block a row), an online softmax with one
//! warp a row, and a block sum with shared memory, barriers and a final warp shuffle. Each
//! line gives the ratio to the native loop and the cost of one GPU thread, the two goals of
//! issue 50 (within 10× of the native loop; at most 100 ns a GPU thread for a kernel with one
//! element a thread). Values are checked against a CPU reference first.
//! Ignored by default (timing is meaningless while other tests share the cores):
//! `cargo test -p gpu-labs-cuda-emulator --test warp_speed -- --ignored --nocapture`.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

/// Rows and columns of the normalised and softmaxed matrices.
const ROWS: usize = 4096;
const COLS: usize = 256;

/// Elements of the block sum.
const SUM_LEN: usize = 1 << 22;

const KERNELS: &str = r#"
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// One warp a row.
extern "C" __global__ void layernorm_warp(const float* x, float* y, int rows, int cols) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float s = 0.0f;
    for (int i = lane; i < cols; i += 32) s += xr[i];
    float mean = warp_sum(s) / cols;
    float v = 0.0f;
    for (int i = lane; i < cols; i += 32) { float d = xr[i] - mean; v += d * d; }
    float rstd = rsqrtf(warp_sum(v) / cols + 1e-5f);
    for (int i = lane; i < cols; i += 32) y[row * cols + i] = (xr[i] - mean) * rstd;
}
// One element a thread, a block a row (blockDim.x == cols, a multiple of 32, at most 1024).
extern "C" __global__ void layernorm_element(const float* x, float* y, int rows, int cols) {
    __shared__ float partial[32];
    int row = blockIdx.x, t = threadIdx.x, lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
    float xv = x[row * cols + t];
    float s = warp_sum(xv);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < warps; w++) total += partial[w];
    float mean = total / cols;
    __syncthreads();
    float d = xv - mean;
    float q = warp_sum(d * d);
    if (lane == 0) partial[warp] = q;
    __syncthreads();
    float var = 0.0f;
    for (int w = 0; w < warps; w++) var += partial[w];
    y[row * cols + t] = d * rsqrtf(var / cols + 1e-5f);
}
// One warp a row: each lane keeps a running maximum and sum, then the lanes combine.
extern "C" __global__ void softmax_online(const float* x, float* y, int rows, int cols) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float m = -INFINITY, s = 0.0f;
    for (int i = lane; i < cols; i += 32) {
        float v = xr[i];
        float m2 = fmaxf(m, v);
        s = s * expf(m - m2) + expf(v - m2);
        m = m2;
    }
    float mr = warp_max(m);
    s = warp_sum(s * expf(m - mr));
    for (int i = lane; i < cols; i += 32) y[row * cols + i] = expf(xr[i] - mr) / s;
}
// A grid-stride sum: a tree in shared memory with barriers, the last warp by shuffles.
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += x[i];
    s[t] = v;
    __syncthreads();
    for (int step = blockDim.x / 2; step >= 32; step /= 2) {
        if (t < step) s[t] += s[t + step];
        __syncthreads();
    }
    if (t < 32) {
        float w = warp_sum(s[t]);
        if (t == 0) atomicAdd(out, w);
    }
}
"#;

const NATIVE: &str = r#"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
__attribute__((noinline)) void layernorm(const float* x, float* y, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        const float* xr = x + r * cols;
        float s = 0.0f;
        for (int i = 0; i < cols; i++) s += xr[i];
        float mean = s / cols, v = 0.0f;
        for (int i = 0; i < cols; i++) { float d = xr[i] - mean; v += d * d; }
        float rstd = 1.0f / sqrtf(v / cols + 1e-5f);
        for (int i = 0; i < cols; i++) y[r * cols + i] = (xr[i] - mean) * rstd;
    }
}
__attribute__((noinline)) void softmax(const float* x, float* y, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        const float* xr = x + r * cols;
        float m = -INFINITY, s = 0.0f;
        for (int i = 0; i < cols; i++) { float m2 = fmaxf(m, xr[i]); s = s * expf(m - m2) + expf(xr[i] - m2); m = m2; }
        for (int i = 0; i < cols; i++) y[r * cols + i] = expf(xr[i] - m) / s;
    }
}
__attribute__((noinline)) float sum(const float* x, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}
int main(int argc, char** argv) {
    int rows = atoi(argv[1]), cols = atoi(argv[2]), n = atoi(argv[3]);
    float *x = malloc((size_t)rows * cols * 4), *y = malloc((size_t)rows * cols * 4), *z = malloc((size_t)n * 4);
    for (int i = 0; i < rows * cols; i++) x[i] = (i % 13) * 0.25f - 1.5f;
    for (int i = 0; i < n; i++) z[i] = (i % 7) * 0.125f;
    double best[3] = {1e30, 1e30, 1e30};
    volatile float sink = 0.0f;
    for (int r = 0; r < 5; r++) {
        double t = now(); layernorm(x, y, rows, cols); t = now() - t; if (t < best[0]) best[0] = t;
        t = now(); softmax(x, y, rows, cols); t = now() - t; if (t < best[1]) best[1] = t;
        t = now(); sink += sum(z, n); t = now() - t; if (t < best[2]) best[2] = t;
    }
    printf("%f %f %f\n", best[0], best[1], best[2]);
    return 0;
}
"#;

/// The best of five native runs, in ms: (layer norm, softmax, sum).
fn native_ms() -> [f64; 3] {
    let dir = common::profile_dir().join("warp-speed-native");
    std::fs::create_dir_all(&dir).expect("a folder");
    std::fs::write(dir.join("native.c"), NATIVE).expect("the source");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(cc)
        .args(["-O2", "-o"])
        .arg(dir.join("native"))
        .arg(dir.join("native.c"))
        .arg("-lm")
        .status()
        .expect("cc");
    assert!(built.success());
    let out = std::process::Command::new(dir.join("native"))
        .args([ROWS, COLS, SUM_LEN].map(|v| v.to_string()))
        .output()
        .expect("the native loops");
    let text = String::from_utf8_lossy(&out.stdout);
    let ms: Vec<f64> = text
        .split_whitespace()
        .map(|v| v.parse().expect("a time"))
        .collect();
    [ms[0], ms[1], ms[2]]
}

/// The CPU reference of a row-wise layer norm and softmax, in f64.
fn references(x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let mut norm = vec![0.0; x.len()];
    let mut soft = vec![0.0; x.len()];
    for r in 0..ROWS {
        let row: Vec<f64> = x[r * COLS..(r + 1) * COLS]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let mean = row.iter().sum::<f64>() / COLS as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / COLS as f64;
        let max = row.iter().cloned().fold(f64::MIN, f64::max);
        let total: f64 = row.iter().map(|v| (v - max).exp()).sum();
        for (i, v) in row.iter().enumerate() {
            norm[r * COLS + i] = (v - mean) / (var + 1e-5).sqrt();
            soft[r * COLS + i] = (v - max).exp() / total;
        }
    }
    (norm, soft)
}

/// One kernel of the benchmark: what it is called and printed as, what it reads, how it is
/// launched, what it must write, and the native loop it is held against.
struct Case<'a> {
    kernel: &'static str,
    label: &'static str,
    input: &'a cudarc::driver::CudaSlice<f32>,
    cfg: LaunchConfig,
    /// Its size arguments after the input and output: rows and columns, or (a sum) the length.
    sizes: &'a [i32],
    /// The reference of its output, element by element.
    want: &'a [f64],
    tolerance: f64,
    native_ms: f64,
}

/// The best of `reps` launches of `case`'s kernel (ms, by the stream's events) and its output.
fn best_of(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    module: &std::sync::Arc<cudarc::driver::CudaModule>,
    case: &Case,
    reps: usize,
) -> (f64, Vec<f32>) {
    let f = module.load_function(case.kernel).expect("the kernel");
    let mut out = stream
        .alloc_zeros::<f32>(case.want.len())
        .expect("an output");
    let mut best = f64::MAX;
    for _ in 0..reps {
        stream.memset_zeros(&mut out).expect("zeroed");
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = stream.record_event(flags).expect("an event");
        let mut launch = stream.launch_builder(&f);
        launch.arg(case.input).arg(&mut out);
        for size in case.sizes {
            launch.arg(size);
        }
        unsafe { launch.launch(case.cfg) }.expect("launched");
        let end = stream.record_event(flags).expect("an event");
        best = best.min(f64::from(start.elapsed_ms(&end).expect("a time")));
    }
    (best, stream.clone_dtoh(&out).expect("copied back"))
}

/// Asserts `got` is `want` within `tolerance` (absolute, or relative above 1).
fn assert_close(name: &str, got: &[f32], want: &[f64], tolerance: f64) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= tolerance * w.abs().max(1.0),
            "{name}: element {i} is {g}, expected {w}"
        );
    }
}

emulated!(
    #[ignore]
    warp_kernels_against_one_native_thread,
    {
        let native = native_ms();
        let ctx = CudaContext::new(0).expect("the emulator");
        let stream = ctx.default_stream();
        let module = ctx
            .load_module(compile_ptx(KERNELS).expect("compiled"))
            .expect("loaded");
        let x: Vec<f32> = (0..ROWS * COLS)
            .map(|i| (i % 13) as f32 * 0.25 - 1.5)
            .collect();
        let z: Vec<f32> = (0..SUM_LEN).map(|i| (i % 7) as f32 * 0.125).collect();
        let x_d = stream.clone_htod(&x).expect("uploaded");
        let z_d = stream.clone_htod(&z).expect("uploaded");
        let (norm, soft) = references(&x);
        let want_sum = [z.iter().map(|&v| f64::from(v)).sum::<f64>()];
        let sizes = [ROWS as i32, COLS as i32];
        let sum_len = [SUM_LEN as i32];
        let warps_a_block = 8u32;
        let by_warp = LaunchConfig {
            grid_dim: ((ROWS as u32).div_ceil(warps_a_block), 1, 1),
            block_dim: (32 * warps_a_block, 1, 1),
            shared_mem_bytes: 0,
        };
        let by_element = LaunchConfig {
            grid_dim: (ROWS as u32, 1, 1),
            block_dim: (COLS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let by_sum = LaunchConfig {
            grid_dim: (256, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let cases = [
            Case {
                kernel: "layernorm_warp",
                label: "layer norm, a warp a row",
                input: &x_d,
                cfg: by_warp,
                sizes: &sizes,
                want: &norm,
                tolerance: 1e-4,
                native_ms: native[0],
            },
            Case {
                kernel: "layernorm_element",
                label: "layer norm, an element a thread",
                input: &x_d,
                cfg: by_element,
                sizes: &sizes,
                want: &norm,
                tolerance: 1e-4,
                native_ms: native[0],
            },
            Case {
                kernel: "softmax_online",
                label: "online softmax, a warp a row",
                input: &x_d,
                cfg: by_warp,
                sizes: &sizes,
                want: &soft,
                tolerance: 1e-4,
                native_ms: native[1],
            },
            Case {
                kernel: "block_sum",
                label: "block sum (shared tree, barriers, warp shuffles)",
                input: &z_d,
                cfg: by_sum,
                sizes: &sum_len,
                want: &want_sum,
                tolerance: 1e-5,
                native_ms: native[2],
            },
        ];
        let reps = 3;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!("{cores} cores for the emulator; native: one thread, cc -O2; best of {reps} (emulated) and 5 (native)");
        for case in &cases {
            let (emulated, out) = best_of(&stream, &module, case, reps);
            assert_close(case.kernel, &out, case.want, case.tolerance);
            let threads = f64::from(case.cfg.grid_dim.0 * case.cfg.block_dim.0);
            println!(
                "{}: emulated {emulated:.1} ms, native {:.2} ms = {:.0}x native; {:.0} ns a GPU thread ({threads} threads)",
                case.label,
                case.native_ms,
                emulated / case.native_ms,
                emulated * 1e6 / threads
            );
        }
    }
);
