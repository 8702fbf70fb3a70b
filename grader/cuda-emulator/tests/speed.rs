//! Kernel speed under the emulator against the same loop nests compiled natively.
//! Ignored by default (timing is meaningless while other tests share the cores):
//! `cargo test --test speed -- --ignored --nocapture`.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const NAIVE: &str = r#"
extern "C" __global__ void naive(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < n; i++) sum += a[row * n + i] * b[i * n + col];
        c[row * n + col] = sum;
    }
}
"#;

/// The shared-memory tiled matmul with `tile`² threads a block and two barriers a tile.
fn tiled(name: &str, tile: u32) -> String {
    format!(
        r#"
extern "C" __global__ void {name}(const float* a, const float* b, float* c, int n) {{
    __shared__ float as[{tile}][{tile}];
    __shared__ float bs[{tile}][{tile}];
    int row = blockIdx.y * {tile} + threadIdx.y, col = blockIdx.x * {tile} + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n / {tile}; t++) {{
        as[threadIdx.y][threadIdx.x] = a[row * n + t * {tile} + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t * {tile} + threadIdx.y) * n + col];
        __syncthreads();
        for (int i = 0; i < {tile}; i++) sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }}
    c[row * n + col] = sum;
}}
"#
    )
}

/// The kernels timed here, in one module.
fn kernels() -> String {
    format!("{NAIVE}{}{}", tiled("tiled", 16), tiled("tiled32", 32))
}

const NATIVE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
__attribute__((noinline)) void naive(const float* a, const float* b, float* c, int n) {
    for (int row = 0; row < n; row++)
        for (int col = 0; col < n; col++) {
            float sum = 0.0f;
            for (int i = 0; i < n; i++) sum += a[row * n + i] * b[i * n + col];
            c[row * n + col] = sum;
        }
}
int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    float *a = malloc(n * n * 4), *b = malloc(n * n * 4), *c = malloc(n * n * 4);
    for (int i = 0; i < n * n; i++) { a[i] = (i % 7) * 0.5f; b[i] = (i % 5) * 0.25f; }
    double best = 1e30;
    for (int r = 0; r < 5; r++) { double t = now(); naive(a, b, c, n); t = now() - t; if (t < best) best = t; }
    printf("%f %f\n", best, c[12345]);
    return 0;
}
"#;

/// The best of five runs of the native naive loop nest at `n`³, one thread, `cc -O2`.
fn native_ms(n: usize) -> f64 {
    // One folder per size: the two tests run at once.
    let dir = common::profile_dir().join(format!("speed-native-{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("naive.c"), NATIVE).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = std::process::Command::new(cc)
        .args(["-O2", "-o"])
        .arg(dir.join("naive"))
        .arg(dir.join("naive.c"))
        .status()
        .unwrap();
    assert!(st.success());
    let out = std::process::Command::new(dir.join("naive"))
        .arg(n.to_string())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Runs each `(kernel, block side)` at `n`³ under the emulator (square blocks, as many as
/// cover the matrix) and returns the best of `reps` launches of each, in ms, after checking
/// three elements of its product.
fn emulated_ms(n: usize, kernels_and_blocks: &[(&str, u32)], reps: usize) -> Vec<f64> {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(kernels()).unwrap()).unwrap();
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.25).collect();
    let a_d = stream.clone_htod(&a).unwrap();
    let b_d = stream.clone_htod(&b).unwrap();
    let ni = n as i32;
    let mut results = Vec::new();
    for &(name, side) in kernels_and_blocks {
        let mut c_d = stream.alloc_zeros::<f32>(n * n).unwrap();
        let blocks = (n as u32).div_ceil(side);
        let cfg = LaunchConfig {
            grid_dim: (blocks, blocks, 1),
            block_dim: (side, side, 1),
            shared_mem_bytes: 0,
        };
        let f = module.load_function(name).unwrap();
        let mut best = f64::MAX;
        for _ in 0..reps {
            let start = stream
                .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .unwrap();
            let mut l = stream.launch_builder(&f);
            l.arg(&a_d).arg(&b_d).arg(&mut c_d).arg(&ni);
            unsafe { l.launch(cfg) }.unwrap();
            let end = stream
                .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
                .unwrap();
            best = best.min(start.elapsed_ms(&end).unwrap() as f64);
        }
        let c = stream.clone_dtoh(&c_d).unwrap();
        for k in [0, 12345 % (n * n), n * n - 1] {
            let (r, col) = (k / n, k % n);
            let want: f32 = (0..n).map(|i| a[r * n + i] * b[i * n + col]).sum();
            assert!(
                (c[k] - want).abs() < 1e-2 * want.abs().max(1.0),
                "{name}: c[{k}] = {}, expected {want}",
                c[k]
            );
        }
        results.push(best);
    }
    results
}

/// Prints each emulated time beside the native one.
fn report(n: usize, native: f64, names: &[&str], emulated: &[f64]) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("native -O2 naive loop nest at {n}^3, 1 thread: {native:.1} ms");
    for (name, ms) in names.iter().zip(emulated) {
        println!(
            "emulated {name} kernel ({cores} cores): {ms:.1} ms = {:.2}x native",
            ms / native
        );
    }
}

emulated!(
    #[ignore]
    speed_vs_native,
    {
        let native = native_ms(512);
        let ms = emulated_ms(512, &[("naive", 16), ("tiled", 16)], 4);
        report(512, native, &["naive", "tiled"], &ms);
    }
);

// The issue's speed goal for barrier regions: the shared-memory blocking kernel (32x32
// threads, two `__syncthreads()` a tile) at 256³ against one native thread running the naive
// loop nest at `-O2`, measured side by side in one run.
emulated!(
    #[ignore]
    tiled32_vs_native_256,
    {
        let native = native_ms(256);
        let ms = emulated_ms(256, &[("tiled32", 32)], 5);
        report(256, native, &["tiled32 (32x32 threads)"], &ms);
    }
);
