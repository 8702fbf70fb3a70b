//! Kernel speed under the emulator against the same loop nests compiled natively.
//! Ignored by default (timing is meaningless while other tests share the cores):
//! `cargo test --test speed -- --ignored --nocapture`.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const KERNELS: &str = r#"
extern "C" __global__ void naive(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < n; i++) sum += a[row * n + i] * b[i * n + col];
        c[row * n + col] = sum;
    }
}
#define TILE 16
extern "C" __global__ void tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int i = 0; i < TILE; i++) sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = sum;
}
"#;

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
int main(void) {
    int n = 512;
    float *a = malloc(n * n * 4), *b = malloc(n * n * 4), *c = malloc(n * n * 4);
    for (int i = 0; i < n * n; i++) { a[i] = (i % 7) * 0.5f; b[i] = (i % 5) * 0.25f; }
    double best = 1e30;
    for (int r = 0; r < 3; r++) { double t = now(); naive(a, b, c, n); t = now() - t; if (t < best) best = t; }
    printf("%f %f\n", best, c[12345]);
    return 0;
}
"#;

fn native_ms() -> f64 {
    let dir = common::profile_dir().join("speed-native");
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
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

emulated!(
    #[ignore]
    speed_vs_native,
    {
        let native = native_ms();
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let module = ctx.load_module(compile_ptx(KERNELS).unwrap()).unwrap();
        let n = 512usize;
        let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.25).collect();
        let a_d = stream.clone_htod(&a).unwrap();
        let b_d = stream.clone_htod(&b).unwrap();
        let mut c_d = stream.alloc_zeros::<f32>(n * n).unwrap();
        let ni = n as i32;
        let cfg = LaunchConfig {
            grid_dim: (32, 32, 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        let mut results = Vec::new();
        for name in ["naive", "tiled"] {
            let f = module.load_function(name).unwrap();
            let mut best = f64::MAX;
            for _ in 0..4 {
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
            let (r, col) = (12345 / n, 12345 % n);
            let want: f32 = (0..n).map(|i| a[r * n + i] * b[i * n + col]).sum();
            assert!((c[12345] - want).abs() < 1e-2 * want.abs().max(1.0));
            results.push((name, best));
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!("native -O2 naive loop nest, 1 thread: {native:.1} ms");
        for (name, ms) in &results {
            println!(
                "emulated {name} kernel ({cores} cores): {ms:.1} ms = {:.2}x native",
                ms / native
            );
        }
    }
);
