//! Barrier regions as loops (`nvrtc/coroutine.rs`): a kernel whose barriers are in its own
//! body or in device functions it calls runs its threads as coroutines, with
//! `GPU_LABS_EMULATOR_FIBERS=1` as fibers; both give the same values, and a barrier only some
//! threads reach is reported on either path.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx, Ptx};

/// A block-wide sum that keeps values across barriers in loops and branches, returns early
/// after its last barrier, and uses dynamic shared memory; with a kernel without barriers
/// beside it.
const REDUCE: &str = r#"
extern "C" __global__ void block_sums(const float* x, float* sums, float* firsts, int n) {
    extern __shared__ float part[];
    unsigned t = threadIdx.x;
    float mine = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) mine += x[i];
    float first = mine;
    part[t] = mine;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) part[t] += part[t + half];
        __syncthreads();
    }
    if (t != 0) return;
    sums[blockIdx.x] = part[0];
    firsts[blockIdx.x] = first;
}
extern "C" __global__ void fill(float* y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}
"#;

/// The same sum with its barriers in a device function: fibers. (The kernel without barriers
/// is left out, as only `block_sums` runs here.)
fn reduce_in_helper() -> String {
    let sums = &REDUCE[..REDUCE
        .find("extern \"C\" __global__ void fill")
        .expect("fill")];
    format!(
        "__device__ void wait_for_block() {{ __syncthreads(); }}\n{}",
        sums.replace("__syncthreads()", "wait_for_block()")
    )
}

/// Runs `block_sums` of `ptx` on 4 blocks of 128 threads over 1000 values; checks each
/// block's sum and thread 0's own part against the host.
fn check_block_sums(ptx: Ptx) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(ptx).unwrap();
    let f = module.load_function("block_sums").unwrap();
    let (blocks, threads, n) = (4usize, 128usize, 1000usize);
    let x: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    let x_d = stream.clone_htod(&x).unwrap();
    let mut sums = stream.alloc_zeros::<f32>(blocks).unwrap();
    let mut firsts = stream.alloc_zeros::<f32>(blocks).unwrap();
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&x_d).arg(&mut sums).arg(&mut firsts).arg(&ni);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (threads as u32, 1, 1),
        shared_mem_bytes: (threads * 4) as u32,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let sums = stream.clone_dtoh(&sums).unwrap();
    let firsts = stream.clone_dtoh(&firsts).unwrap();
    let stride = blocks * threads;
    for b in 0..blocks {
        let part = |t: usize| -> f32 { x.iter().skip(b * threads + t).step_by(stride).sum() };
        let want: f32 = (0..threads).map(part).sum();
        assert_eq!(sums[b], want, "block {b}'s sum");
        assert_eq!(firsts[b], part(0), "block {b}'s thread 0 kept its own part");
    }
}

emulated!(barrier_kernels_in_their_own_body_run_as_coroutines, {
    let ptx = compile_ptx(REDUCE).unwrap();
    assert!(
        common::runs_as_coroutine(&ptx.to_src(), "block_sums"),
        "the kernel took the fibers' path"
    );
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let fill = ctx
        .load_module(ptx.clone())
        .unwrap()
        .load_function("fill")
        .unwrap();
    let mut y = stream.alloc_zeros::<f32>(100).unwrap();
    let (v, n) = (2.5f32, 100i32);
    let mut l = stream.launch_builder(&fill);
    l.arg(&mut y).arg(&v).arg(&n);
    unsafe { l.launch(LaunchConfig::for_num_elems(100)) }.unwrap();
    assert!(stream.clone_dtoh(&y).unwrap().iter().all(|&e| e == 2.5));
    check_block_sums(ptx);
});

emulated!(
    a_barrier_in_a_device_function_runs_as_a_coroutine_with_the_same_values,
    {
        let ptx = compile_ptx(reduce_in_helper()).unwrap();
        assert!(
            common::runs_as_coroutine(&ptx.to_src(), "block_sums"),
            "the device function that waits was not made a coroutine"
        );
        check_block_sums(ptx);
    }
);

/// Compiles `src`, checks that it runs as coroutines, and launches its kernel `name` on one
/// buffer of `len` floats with `(blocks, threads)`; what synchronizing then says. A faulted
/// context is left as it is (its errors are sticky).
fn launch_as_coroutines(
    src: &str,
    name: &str,
    len: usize,
    (blocks, threads): (u32, u32),
) -> Result<(), cudarc::driver::DriverError> {
    let ptx = compile_ptx(src).unwrap();
    assert!(
        common::runs_as_coroutine(&ptx.to_src(), name),
        "{name} took the fibers' path"
    );
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let f = ctx.load_module(ptx).unwrap().load_function(name).unwrap();
    let mut out = stream.alloc_zeros::<f32>(len).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.expect("the launch itself succeeds");
    let synchronized = stream.synchronize();
    if synchronized.is_err() {
        std::mem::forget((out, stream, ctx));
    }
    synchronized
}

/// Thread 0 leaves before the barrier the others wait at.
const LEAVES_EARLY: &str = r#"
extern "C" __global__ void leaves_early(float* out) {
    __shared__ float tile[64];
    if (threadIdx.x == 0) return;
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[64 - threadIdx.x];
}
"#;

emulated!(
    a_barrier_some_threads_left_before_is_reported_on_the_coroutine_path,
    {
        launch_as_coroutines(LEAVES_EARLY, "leaves_early", 64, (1, 64)).unwrap();
    },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("__syncthreads() was reached by 63 of 64 threads"),
            "{stderr}"
        );
    }
);

/// With `GPU_LABS_EMULATOR_FIBERS=1` (set for the child below) the same kernel runs as
/// fibers, with the same values.
#[test]
fn the_fibers_variable_turns_the_coroutines_off() {
    const NAME: &str = "the_fibers_variable_turns_the_coroutines_off";
    if common::is_child(NAME) {
        let ptx = compile_ptx(REDUCE).unwrap();
        assert!(
            !common::runs_as_coroutine(&ptx.to_src(), "block_sums"),
            "GPU_LABS_EMULATOR_FIBERS=1 was not followed"
        );
        check_block_sums(ptx);
        return;
    }
    common::child_passes_with(NAME, &[("GPU_LABS_EMULATOR_FIBERS", "1")]);
}

/// A barrier kernel whose thread 5 of block 1 writes one element past the end of its 4 KiB
/// buffer (on the guard page) after the barrier.
const WRITES_PAST: &str = r#"
extern "C" __global__ void writes_past(float* out) {
    __shared__ float tile[32];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x == 1 && threadIdx.x == 5) i = 1024;
    out[i] = tile[31 - threadIdx.x];
}
"#;

emulated!(
    a_fault_in_a_coroutine_is_reported_with_its_block_and_thread,
    {
        let err = launch_as_coroutines(WRITES_PAST, "writes_past", 1024, (2, 32))
            .expect_err("the fault surfaces");
        assert_eq!(
            err.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        );
    },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("kernel `writes_past` block (1,0,0) thread (5,0,0)"),
            "{stderr}"
        );
    }
);
