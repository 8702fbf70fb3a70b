//! `cooperative_groups.h` basics: a block sum through `this_thread_block()`, `tiled_partition<32>`
//! shuffles and `cg::reduce` on tiles of 16, votes (`ballot`, `any`, `all`) and `sync()`, run
//! plain and checked (right values, no report); its racy twin (the block's `sync()` left out)
//! is reported; what is not supported fails to compile with a message that says so.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const BLOCK_SUM: &str = r#"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* in, float* out, unsigned* votes) {
    __shared__ float partial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float v = in[blockIdx.x * block.size() + block.thread_rank()];
    for (int d = 16; d > 0; d /= 2) v += warp.shfl_down(v, d);
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
    SYNC
    if (warp.meta_group_rank() == 0) {
        float w = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0.0f;
        cg::thread_block_tile<16> half = cg::tiled_partition<16>(warp);
        w = cg::reduce(half, w, cg::plus<float>());
        w += warp.shfl_xor(w, 16);
        if (block.thread_rank() == 0) out[blockIdx.x] = w;
    }
    unsigned b = warp.ballot(block.thread_rank() % 3 == 0);
    int any = warp.any(block.thread_rank() == 5);
    int all = warp.all(block.thread_rank() < 1000);
    warp.sync();
    if (block.thread_rank() == 0) votes[blockIdx.x] = b ^ (any << 1) ^ (all << 2);
}
"#;

const BLOCKS: usize = 3;
const THREADS: usize = 128;

fn run(src: &str, check: bool) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let input: Vec<f32> = (0..BLOCKS * THREADS).map(|i| (i % 10) as f32).collect();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<f32>(BLOCKS).unwrap();
    let mut votes = stream.alloc_zeros::<u32>(BLOCKS).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out).arg(&mut votes);
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS as u32, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    let votes = stream.clone_dtoh(&votes).unwrap();
    if check {
        for (b, got) in out.iter().enumerate() {
            let want: f32 = input[b * THREADS..(b + 1) * THREADS].iter().sum();
            assert_eq!(*got, want, "block {b}");
        }
        // Lanes 0, 3, 6, ... of warp 0 vote yes; thread 5 is in it; all are below 1000.
        let ballot: u32 = (0..32).filter(|l| l % 3 == 0).map(|l| 1u32 << l).sum();
        assert_eq!(votes, vec![ballot ^ 2 ^ 4; BLOCKS]);
    }
}

#[test]
fn block_and_tiles_sum_and_vote() {
    let name = "block_and_tiles_sum_and_vote";
    if common::is_child(name) {
        run(&BLOCK_SUM.replace("SYNC", "block.sync();"), true);
        return;
    }
    assert!(common::run_child(name).status.success(), "plain run failed");
    let found = common::checked_reports(name);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn block_sum_without_block_sync_is_reported() {
    let name = "block_sum_without_block_sync_is_reported";
    if common::is_child(name) {
        run(&BLOCK_SUM.replace("SYNC", ";"), false);
        return;
    }
    // Warp 0 reads the other warps' partial sums before they wrote them: a race, and (the
    // emulator ran warp 0 first) reads of shared memory its block had not written yet.
    let found = common::checked_reports(name);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[1].contains("uninitialized shared memory"),
        "{}",
        found[1]
    );
    assert!(found[0].contains("in __shared__ `partial`"), "{}", found[0]);
    assert!(found[0].contains("put __syncthreads()"), "{}", found[0]);
}

emulated!(unsupported_groups_are_refused_by_name, {
    let src = r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(float* x) {
    cg::grid_group grid = cg::this_grid();
    x[0] = 1.0f;
}
"#;
    let Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) = compile_ptx(src) else {
        panic!("this_grid() compiled");
    };
    let log = log.to_string_lossy();
    assert!(
        log.contains("cooperative_groups this_grid() (grid-wide synchronisation) is not supported"),
        "{log}"
    );
    assert!(log.contains("supported: this_thread_block()"), "{log}");
    let completion = r#"
#include <cuda/barrier>
struct done { __device__ void operator()() const {} };
extern "C" __global__ void k(float* x) {
    __shared__ cuda::barrier<cuda::thread_scope_block, done> bar;
    bar.arrive_and_wait();
}
"#;
    let Err(cudarc::nvrtc::CompileError::CompileError { log, .. }) = compile_ptx(completion) else {
        panic!("a barrier's completion function compiled");
    };
    assert!(
        log.to_string_lossy()
            .contains("a cuda::barrier's completion function is not supported"),
        "{log:?}"
    );
});
