//! Asynchronous copies into shared memory (`src/nvrtc/gpu_labs_async.h`), as CUDA documents
//! them: `cooperative_groups::memcpy_async` with `wait`, `cuda::memcpy_async` with a thread's
//! `cuda::pipeline` and with a block's `cuda::barrier`, and the `__pipeline_*` primitives. Each
//! correct kernel gives the right values plain and checked with no report; a kernel that reads
//! the shared tile before its copy was waited on is reported in a checked run.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const THREADS: usize = 128;
const BLOCKS: usize = 3;

/// Every kernel: block b's tile of `in`, reversed and doubled into `out`.
const GROUP: &str = r#"
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float tile[128];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, tile, in + blockIdx.x * 128, sizeof(float) * 128);
    EARLY
    cg::wait(block);
    out[blockIdx.x * 128 + threadIdx.x] = 2.0f * tile[127 - threadIdx.x];
}
"#;

const PIPELINE: &str = r#"
#include <cuda/pipeline>
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float tile[128];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[threadIdx.x], &in[blockIdx.x * 128 + threadIdx.x], sizeof(float), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = 2.0f * tile[127 - threadIdx.x];
    pipe.consumer_release();
}
"#;

const BARRIER: &str = r#"
#include <cuda/barrier>
#include <cooperative_groups.h>
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float tile[128];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cooperative_groups::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    __syncthreads();
    cuda::memcpy_async(block, tile, in + blockIdx.x * 128, sizeof(float) * 128, bar);
    bar.arrive_and_wait();
    out[blockIdx.x * 128 + threadIdx.x] = 2.0f * tile[127 - threadIdx.x];
}
"#;

const PRIMITIVES: &str = r#"
#include <cuda_pipeline.h>
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float tile[128];
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[blockIdx.x * 128 + threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = 2.0f * tile[127 - threadIdx.x];
}
"#;

/// Runs `src`'s kernel; whether its output is right.
fn right(src: &str) -> bool {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let input: Vec<f32> = (0..BLOCKS * THREADS).map(|i| i as f32 * 0.5).collect();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<f32>(BLOCKS * THREADS).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS as u32, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    (0..BLOCKS * THREADS).all(|i| {
        let (b, t) = (i / THREADS, i % THREADS);
        out[i] == 2.0 * input[b * THREADS + THREADS - 1 - t]
    })
}

/// The correct kernels, each plain and checked.
fn correct() -> [String; 4] {
    [
        GROUP.replace("EARLY", ""),
        PIPELINE.into(),
        BARRIER.into(),
        PRIMITIVES.into(),
    ]
}

#[test]
fn copies_waited_for_give_the_tile_plain_and_checked_with_no_report() {
    let name = "copies_waited_for_give_the_tile_plain_and_checked_with_no_report";
    if common::is_child(name) {
        for src in correct() {
            assert!(right(&src), "{src}");
        }
        return;
    }
    let out = common::run_child(name);
    assert!(out.status.success(), "plain run failed");
    assert_eq!(common::checked_reports(name), Vec::<String>::new());
}

#[test]
fn a_read_of_the_tile_before_its_wait_is_reported() {
    let name = "a_read_of_the_tile_before_its_wait_is_reported";
    if common::is_child(name) {
        // The value read early is what the kernel writes (were it overwritten by the later
        // store, no order of the two could change a result: a note, not a race).
        let early = GROUP
            .replace("EARLY", "float early = tile[127 - threadIdx.x];")
            .replace("2.0f * tile[127 - threadIdx.x]", "early");
        right(&early);
        return;
    }
    let found = common::checked_reports(name);
    let race = found
        .iter()
        .find(|l| l.contains("data race"))
        .expect("the read races with the copy");
    assert!(
        race.contains("wrote it (an asynchronous copy (memcpy_async)"),
        "{race}"
    );
    assert!(race.contains("only after waiting for it"), "{race}");
}
