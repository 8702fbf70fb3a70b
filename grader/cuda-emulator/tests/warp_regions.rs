//! Warp operations on the coroutine path (`nvrtc/coroutine.rs`): a kernel whose shuffles,
//! votes, `__syncwarp` and `__activemask` sit in its body and in device functions it calls
//! runs its threads as coroutines, scheduled warp by warp, and every operation gives what
//! CUDA documents: the same values as the host's model of a warp, on the coroutine path, on
//! fibers (`GPU_LABS_EMULATOR_FIBERS=1`) and in a checked run (fibers, with no report).

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx, compile_ptx_with_opts, CompileOptions, Ptx};

/// Outputs of each GPU thread.
const OUTS: usize = 11;

/// Blocks and threads of the launch (three warps a block).
const BLOCKS: usize = 3;
const THREADS: usize = 96;

/// Every warp operation, in device functions (one of them templated, one calling another,
/// one with a barrier) and in the kernel's body, in branches that split a warp in two
/// groups, and after some lanes have left.
const WARP_OPS: &str = r#"
#define FULL 0xffffffffu
template <typename T>
__device__ __forceinline__ T reduce(T v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ int scan8(int v) {
    int lane = threadIdx.x % 8;
    for (int d = 1; d < 8; d *= 2) {
        int u = __shfl_up_sync(FULL, v, d, 8);
        if (lane >= d) v += u;
    }
    return v;
}
__device__ int block_total(int v) {
    __shared__ int partial[32];
    int w = reduce(v);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = w;
    __syncthreads();
    int b = 0;
    for (int i = 0; i < blockDim.x / 32; i++) b += partial[i];
    return b;
}
extern "C" __global__ void warp_ops(int* out) {
    int t = threadIdx.x + blockIdx.x * blockDim.x, lane = threadIdx.x % 32;
    int* o = out + t * 11;
    int v = t * 3 + 1;
    o[0] = reduce(v);
    o[1] = scan8(v);
    o[2] = __shfl_sync(FULL, v, 5);
    o[3] = __shfl_down_sync(FULL, v, 3);
    o[4] = (int)__ballot_sync(FULL, lane % 3 == 0);
    o[5] = __any_sync(FULL, lane == 7) + 2 * __all_sync(FULL, lane < 31) + 4 * __all_sync(FULL, lane < 32);
    __syncwarp();
    if (lane < 16) o[6] = __shfl_down_sync(0xffffu, v, 1, 16);
    else o[6] = __shfl_up_sync(0xffff0000u, v, 1, 16);
    o[8] = block_total(v);
    o[9] = (int)reduce((double)v * 0.5);
    o[10] = reduce(v) + scan8(v) * reduce(lane);
    if (lane >= 24) {
        o[7] = -1;
        return;
    }
    o[7] = (int)__activemask();
}
"#;

/// What CUDA documents for each output of `warp_ops`.
fn expected() -> Vec<i32> {
    let v = |t: usize| (t * 3 + 1) as i32;
    let mut out = vec![0i32; BLOCKS * THREADS * OUTS];
    for t in 0..BLOCKS * THREADS {
        let (lane, warp0) = (t % 32, t - t % 32);
        let block0 = t - t % THREADS;
        let o = &mut out[t * OUTS..(t + 1) * OUTS];
        o[0] = (warp0..warp0 + 32).map(v).sum();
        o[1] = (t - lane % 8..=t).map(v).sum();
        o[2] = v(warp0 + 5);
        o[3] = if lane + 3 < 32 { v(t + 3) } else { v(t) };
        o[4] = (0..32).filter(|l| l % 3 == 0).map(|l| 1i32 << l).sum();
        o[5] = 1 + 4;
        o[6] = match lane {
            0..=14 => v(t + 1),
            15 | 16 => v(t),
            _ => v(t - 1),
        };
        o[7] = if lane >= 24 { -1 } else { 0x00ff_ffff };
        o[8] = (block0..block0 + THREADS).map(v).sum();
        o[9] = ((warp0..warp0 + 32)
            .map(|u| f64::from(v(u)) * 0.5)
            .sum::<f64>()) as i32;
        o[10] = o[0] + o[1] * (0..32).sum::<i32>();
    }
    out
}

/// Launches `warp_ops` and checks every output against [`expected`], naming the first that
/// differs; returns whether the kernel ran as a coroutine.
fn check_warp_ops() -> bool {
    check_warp_ops_of(compile_ptx(WARP_OPS).unwrap())
}

/// [`check_warp_ops`] for a module already compiled.
fn check_warp_ops_of(ptx: Ptx) -> bool {
    let coroutine = common::runs_as_coroutine(&ptx.to_src(), "warp_ops");
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let f = ctx
        .load_module(ptx)
        .unwrap()
        .load_function("warp_ops")
        .unwrap();
    let mut out = stream.alloc_zeros::<i32>(BLOCKS * THREADS * OUTS).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS as u32, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    common::assert_outputs(&got, &expected(), OUTS);
    coroutine
}

emulated!(
    warp_operations_in_device_functions_run_as_coroutines_with_cuda_values,
    {
        assert!(check_warp_ops(), "warp_ops took the fibers' path");
    }
);

#[test]
fn fibers_give_the_same_values() {
    const NAME: &str = "fibers_give_the_same_values";
    if common::is_child(NAME) {
        assert!(
            !check_warp_ops(),
            "GPU_LABS_EMULATOR_FIBERS=1 was not followed"
        );
        return;
    }
    common::child_passes_with(NAME, &[("GPU_LABS_EMULATOR_FIBERS", "1")]);
}

#[test]
fn a_checked_run_gives_the_same_values_and_no_report() {
    const NAME: &str = "a_checked_run_gives_the_same_values_and_no_report";
    if common::is_child(NAME) {
        check_warp_ops();
        return;
    }
    assert_eq!(common::checked_reports(NAME), Vec::<String>::new());
}

emulated!(
    device_functions_in_a_header_of_the_program_take_the_coroutine_path_too,
    {
        // The warp operations' device functions in a header on the include path, and a
        // kernel beside `warp_ops` that only fibers can run (a counting barrier): each
        // kernel takes its own path, and the header's lines are still the header's.
        let dir = std::env::temp_dir().join(format!("gpu-labs-warp-header-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kernel_at = WARP_OPS
            .find("extern \"C\" __global__ void warp_ops")
            .unwrap();
        std::fs::write(
            dir.join("warp_ops.cuh"),
            format!("#pragma once\n{}", &WARP_OPS[..kernel_at]),
        )
        .unwrap();
        let src = format!(
            "#include \"warp_ops.cuh\"\n{}\n\
             extern \"C\" __global__ void count(int* x) {{ x[0] = __syncthreads_count(x[1]); }}\n",
            &WARP_OPS[kernel_at..]
        );
        let opts = CompileOptions {
            include_paths: vec![dir.to_string_lossy().into_owned()],
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(src, opts).unwrap();
        let unit = common::translation_unit(&ptx.to_src()).expect("a translation unit");
        assert!(unit.contains("#line 1 \"warp_ops.cuh\""), "{unit}");
        assert!(
            !unit.contains("__GL_TASK count("),
            "count must stay on fibers"
        );
        assert!(check_warp_ops_of(ptx), "warp_ops took the fibers' path");
        let _ = std::fs::remove_dir_all(&dir);
    }
);
