//! Less common ways of writing warp code, each run on the coroutine path (the default) and on
//! fibers (`GPU_LABS_EMULATOR_FIBERS=1`, which the rewrite does not touch), with the same
//! values required of both: a vote in a loop's condition, a shuffle of a `float2`, a `void`
//! function that waits and writes through a reference, recursion that waits, a waiting call
//! in a `return`, a template with a non-type parameter and a default argument, `static
//! __device__ __forceinline__`, and warp-synchronous shared memory with `__syncwarp`.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

/// Outputs of each GPU thread.
const OUTS: usize = 8;

/// Threads of the one block (two warps).
const THREADS: usize = 64;

const IDIOMS: &str = r#"
#define FULL 0xffffffffu
static __device__ __forceinline__ float2 swap_halves(float2 a) {
    float2 b;
    b.x = __shfl_xor_sync(FULL, a.y, 16);
    b.y = __shfl_xor_sync(FULL, a.x, 16);
    return b;
}
__device__ void add_neighbour(float& v) { v += __shfl_down_sync(FULL, v, 1); }
__device__ int rec(int v, int d) {
    if (d == 0) return v;
    return rec(v + __shfl_xor_sync(FULL, v, d), d / 2);
}
template <int W>
__device__ float part(float v, int scale = 1) {
    for (int o = W / 2; o > 0; o /= 2) v += __shfl_down_sync(FULL, v, o, W);
    return v * scale;
}
__device__ float twice(float v) { return part<8>(v, 2) + 0.5f; }
extern "C" __global__ void idioms(float* out) {
    __shared__ float s[64];
    int t = threadIdx.x, lane = t % 32;
    float* o = out + t * 8;
    int rounds = 0;
    for (int i = 0; __any_sync(FULL, i < lane % 5); i++) rounds++;
    o[0] = rounds;
    float2 h = swap_halves(make_float2(t, -t));
    o[1] = h.x;
    o[2] = h.y;
    float v = t;
    add_neighbour(v);
    o[3] = v;
    o[4] = rec(t, 16);
    o[5] = twice(t);
    s[t] = t * 2.0f;
    __syncwarp();
    o[6] = s[(t + 1) % 32 + (t / 32) * 32];
    __syncwarp();
    s[t] = -1.0f;
    o[7] = __popc(__ballot_sync(FULL, lane & 1)) + __activemask() % 7;
}
"#;

/// Runs `idioms` on one block and returns its outputs.
fn run_idioms() -> Vec<f32> {
    let ptx = compile_ptx(IDIOMS).unwrap();
    let coroutine = common::runs_as_coroutine(&ptx.to_src(), "idioms");
    assert_eq!(
        coroutine,
        std::env::var("GPU_LABS_EMULATOR_FIBERS").is_err(),
        "idioms took the other path"
    );
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let f = ctx
        .load_module(ptx)
        .unwrap()
        .load_function("idioms")
        .unwrap();
    let mut out = stream.alloc_zeros::<f32>(THREADS * OUTS).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    stream.clone_dtoh(&out).unwrap()
}

/// What CUDA documents for each output of `idioms`.
fn expected() -> Vec<f32> {
    let mut out = vec![0f32; THREADS * OUTS];
    for t in 0..THREADS {
        let (lane, warp0) = (t % 32, t - t % 32);
        let o = &mut out[t * OUTS..(t + 1) * OUTS];
        o[0] = 4.0; // the largest lane % 5 is 4
        let partner = warp0 + (lane ^ 16);
        o[1] = -(partner as f32);
        o[2] = partner as f32;
        o[3] = t as f32 + if lane < 31 { (t + 1) as f32 } else { t as f32 };
        o[4] = (warp0..warp0 + 32).sum::<usize>() as f32;
        let seg0 = t - t % 8;
        // part<8>: a down-shuffle tree over a segment of 8, lane 0 of it gets the sum; a lane
        // whose source falls past its segment gets its own value back (and so doubles it).
        let mut vals: Vec<f32> = (seg0..seg0 + 8).map(|u| u as f32).collect();
        for off in [4usize, 2, 1] {
            let prev = vals.clone();
            for (i, v) in vals.iter_mut().enumerate() {
                *v += if i + off < 8 { prev[i + off] } else { prev[i] };
            }
        }
        o[5] = vals[t - seg0] * 2.0 + 0.5;
        o[6] = ((lane + 1) % 32 + warp0) as f32 * 2.0;
        o[7] = 16.0 + (0xffff_ffffu32 % 7) as f32;
    }
    out
}

/// Checks `got` against [`expected`], naming the first output that differs.
fn check(got: &[f32]) {
    common::assert_outputs(got, &expected(), OUTS);
}

emulated!(idioms_give_cuda_values_on_the_coroutine_path, {
    check(&run_idioms());
});

#[test]
fn idioms_give_the_same_values_on_fibers() {
    const NAME: &str = "idioms_give_the_same_values_on_fibers";
    if common::is_child(NAME) {
        check(&run_idioms());
        return;
    }
    common::child_passes_with(NAME, &[("GPU_LABS_EMULATOR_FIBERS", "1")]);
}
