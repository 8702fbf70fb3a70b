//! Each kernel's path is chosen from that kernel's own code: a warp reduction in a helper of
//! the same source (as a shared header's `warpReduceSum`) sends only the kernels that call it
//! to fibers. An element-wise kernel beside one costs what it costs alone (measured side by
//! side in one process, so a busy machine slows both alike), where on fibers it cost a
//! hundred times more; both kernels compute right, plain and checked.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const SCALE: &str = r#"
extern "C" __global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
"#;

const WARP_SUM: &str = r#"
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
extern "C" __global__ void sums(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = warp_sum(i < n ? x[i] : 0.0f);
    if (threadIdx.x % 32 == 0 && i < n) y[i / 32] = s;
}
"#;

/// Threads of the element-wise kernel.
const N: usize = 1 << 20;

/// Runs `scale` of `src` on `N` elements `reps` times; checks the values and returns the
/// fastest time (s).
fn time_scale(ctx: &std::sync::Arc<CudaContext>, src: &str, reps: usize) -> f64 {
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("scale").unwrap();
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let x_d = stream.clone_htod(&x).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N).unwrap();
    let n = N as i32;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut best = f64::MAX;
    for _ in 0..reps {
        let started = std::time::Instant::now();
        let mut l = stream.launch_builder(&f);
        l.arg(&x_d).arg(&mut y).arg(&n);
        unsafe { l.launch(cfg) }.unwrap();
        stream.synchronize().unwrap();
        best = best.min(started.elapsed().as_secs_f64());
    }
    let y = stream.clone_dtoh(&y).unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, 2.0 * (i % 1000) as f32 + 1.0, "y[{i}]");
    }
    best
}

/// The warp sums of `src`'s `sums` kernel, checked against a CPU sum.
fn check_sums(ctx: &std::sync::Arc<CudaContext>, src: &str) {
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("sums").unwrap();
    let n = 4096usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let x_d = stream.clone_htod(&x).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n / 32).unwrap();
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&x_d).arg(&mut y).arg(&ni);
    unsafe { l.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    let y = stream.clone_dtoh(&y).unwrap();
    for (w, v) in y.iter().enumerate() {
        let want: f32 = x[w * 32..w * 32 + 32].iter().sum();
        assert_eq!(*v, want, "warp {w}");
    }
}

fn run(timed: bool) {
    let ctx = CudaContext::new(0).unwrap();
    let together = format!("{WARP_SUM}{SCALE}");
    check_sums(&ctx, &together);
    let reps = if timed { 5 } else { 1 };
    let alone = time_scale(&ctx, SCALE, reps);
    let beside = time_scale(&ctx, &together, reps);
    if timed {
        println!(
            "scale: alone {:.1} ns a thread, beside a warp reduction {:.1} ns a thread",
            alone * 1e9 / N as f64,
            beside * 1e9 / N as f64
        );
        // On fibers it cost ~100× (1-3 µs a thread against ~10 ns); room for a busy machine.
        assert!(beside < alone * 4.0 + 0.005, "{beside} s against {alone} s");
    }
}

#[test]
fn a_kernel_beside_a_warp_reduction_runs_as_fast_as_alone() {
    let name = "a_kernel_beside_a_warp_reduction_runs_as_fast_as_alone";
    if common::is_child(name) {
        run(true);
        return;
    }
    let out = common::run_child(name);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn both_kernels_run_right_when_checked() {
    let name = "both_kernels_run_right_when_checked";
    if common::is_child(name) {
        run(false);
        return;
    }
    let stderr = common::checked_child(name, &[]);
    assert!(!stderr.contains("data race"), "{stderr}");
}

/// A barrier that only a macro of the program's options spells (`-DSYNC=__syncthreads()`) is
/// found all the same: the program is scanned after the preprocessor, and its kernel runs its
/// threads the way a barrier needs, checked or not.
#[test]
fn a_barrier_spelled_by_a_macro_of_the_options_is_found() {
    let name = "a_barrier_spelled_by_a_macro_of_the_options_is_found";
    if common::is_child(name) {
        let src = r#"
extern "C" __global__ void k(const float* x, float* y, int n) {
    __shared__ float t[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    t[threadIdx.x] = i < n ? x[i] : 0.0f;
    SYNC;
    if (i < n) y[i] = t[(threadIdx.x + 1) % blockDim.x];
}
"#;
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let opts = cudarc::nvrtc::CompileOptions {
            options: vec!["-DSYNC=__syncthreads()".into()],
            ..Default::default()
        };
        let ptx = cudarc::nvrtc::compile_ptx_with_opts(src, opts).unwrap();
        let module = ctx.load_module(ptx).unwrap();
        let f = module.load_function("k").unwrap();
        let n = 512usize;
        let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let x = stream.clone_htod(&host).unwrap();
        let mut y = stream.alloc_zeros::<f32>(n).unwrap();
        let count = n as i32;
        let mut l = stream.launch_builder(&f);
        l.arg(&x).arg(&mut y).arg(&count);
        let cfg = LaunchConfig {
            grid_dim: (2, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        unsafe { l.launch(cfg) }.unwrap();
        stream.synchronize().unwrap();
        let got = stream.clone_dtoh(&y).unwrap();
        for (i, &g) in got.iter().enumerate() {
            let next = i / 256 * 256 + (i % 256 + 1) % 256;
            assert_eq!(g, host[next], "element {i}");
        }
        return;
    }
    for vars in [&[][..], &[("GPU_LABS_EMULATOR_RACECHECK", "1")][..]] {
        let out = common::run_child_with(name, vars);
        assert!(
            out.status.success(),
            "{vars:?}: child failed: {:?}",
            out.status
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    }
}
