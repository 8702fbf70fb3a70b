//! Checked runs report a warp operation whose mask names lanes that never reach it
//! (compute-sanitizer's synccheck): a full-mask shuffle, vote or `__syncwarp` inside a branch
//! that only some lanes of the warp take. The correct twins (the same call outside the branch,
//! or a mask of the lanes that do take it, given or from `__activemask()`) run right and
//! are silent.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const WARPS: usize = 2;

/// A warp sum of `in` over the lanes below `HALF` (16) or all 32, written by lane 0 of each
/// warp: `BODY` is the kernel's middle.
const KERNEL: &str = r#"
extern "C" __global__ void k(const float* in, float* out) {
    unsigned lane = threadIdx.x % 32;
    float v = in[threadIdx.x];
    BODY
    if (lane == 0) out[threadIdx.x / 32] = v;
}
"#;

/// Runs `body` in the kernel on one block of `WARPS` warps; checks each warp's sum over its
/// first `lanes` lanes when `lanes` is some.
fn run(body: &str, lanes: Option<usize>) {
    let src = KERNEL.replace("BODY", body);
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let input: Vec<f32> = (0..WARPS * 32).map(|i| (i % 7) as f32).collect();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<f32>(WARPS).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: ((WARPS * 32) as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    if let Some(lanes) = lanes {
        for (w, got) in out.iter().enumerate() {
            let want: f32 = input[w * 32..w * 32 + lanes].iter().sum();
            assert_eq!(*got, want, "warp {w}: expected {want}, got {got}");
        }
    }
}

/// The synccheck lines of a checked run of test `name`.
fn synccheck_of(name: &str) -> Vec<String> {
    common::checked_child(name, &[])
        .lines()
        .filter(|l| l.starts_with("gpu-labs emulator: kernel") && l.contains("synccheck"))
        .map(str::to_string)
        .collect()
}

/// The line of `body`'s first line containing `needle` in the kernel's source (1-based).
fn line_of(body: &str, needle: &str) -> usize {
    let src = KERNEL.replace("BODY", body);
    1 + src
        .lines()
        .position(|l| l.contains(needle))
        .expect("needle")
}

macro_rules! synccheck {
    ($name:ident, $body:expr, $lanes:expr, |$found:ident| $check:block) => {
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                run($body, $lanes);
                return;
            }
            let plain = common::run_child(stringify!($name));
            assert!(plain.status.success(), "plain run failed");
            let $found = synccheck_of(stringify!($name));
            $check
        }
    };
}

const SHFL_IN_BRANCH: &str = "if (lane < 16) {
        for (int d = 8; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
    }";

synccheck!(
    full_mask_shuffle_in_branch_is_reported,
    SHFL_IN_BRANCH,
    None,
    |found| {
        assert_eq!(found.len(), 1, "{found:?}");
        let want = format!("line {}", line_of(SHFL_IN_BRANCH, "__shfl_down_sync"));
        let r = &found[0];
        assert!(r.contains("kernel `k` calls __shfl_down_sync"), "{r}");
        assert!(
            r.contains("thread (0,0,0) of block (0,0,0) (lane 0)"),
            "{r}"
        );
        assert!(r.contains(&want), "{want}: {r}");
        assert!(r.contains("only lanes 0-15 of its warp"), "{r}");
        assert!(r.contains("lanes 16-31 took another branch"), "{r}");
        assert!(
            r.contains("__activemask()") && r.contains("__ballot_sync"),
            "{r}"
        );
    }
);

synccheck!(
    shuffle_outside_the_branch_is_silent,
    "float s = v;
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffff, s, d);
    if (lane < 16) v = s;",
    Some(32),
    |found| {
        assert!(found.is_empty(), "{found:?}");
    }
);

synccheck!(
    partial_mask_of_the_lanes_present_is_silent,
    "if (lane < 16) {
        for (int d = 8; d > 0; d /= 2) v += __shfl_down_sync(0x0000ffff, v, d, 16);
    }",
    Some(16),
    |found| {
        assert!(found.is_empty(), "{found:?}");
    }
);

synccheck!(
    activemask_in_the_branch_is_silent,
    "if (lane < 16) {
        unsigned m = __activemask();
        for (int d = 8; d > 0; d /= 2) v += __shfl_down_sync(m, v, d, 16);
        if (lane == 0 && m != 0xffffu) v = -1.0f;
    }",
    Some(16),
    |found| {
        assert!(found.is_empty(), "{found:?}");
    }
);

synccheck!(
    ballot_before_the_branch_is_silent,
    "unsigned m = __ballot_sync(0xffffffff, lane < 16);
    if (lane < 16) {
        for (int d = 8; d > 0; d /= 2) v += __shfl_down_sync(m, v, d, 16);
    }",
    Some(16),
    |found| {
        assert!(found.is_empty(), "{found:?}");
    }
);

const SYNCWARP_IN_BRANCH: &str = "__shared__ float s[64];
    s[threadIdx.x] = v;
    __syncwarp();
    if (lane % 2 == 0) {
        __syncwarp();
        v += s[threadIdx.x + 1];
    }";

synccheck!(
    syncwarp_in_branch_is_reported,
    SYNCWARP_IN_BRANCH,
    None,
    |found| {
        assert_eq!(found.len(), 1, "{found:?}");
        let r = &found[0];
        let want = format!(
            "line {}",
            line_of(SYNCWARP_IN_BRANCH, "        __syncwarp();")
        );
        assert!(r.contains("calls __syncwarp"), "{r}");
        assert!(r.contains(&want), "{want}: {r}");
        assert!(r.contains("lanes 1, 3, 5"), "{r}");
    }
);

const VOTE_IN_BRANCH: &str = "if (lane >= 8) {
        if (__any_sync(0xffffffff, v > 5.0f)) v = 0.0f;
    }";

synccheck!(vote_in_branch_is_reported, VOTE_IN_BRANCH, None, |found| {
    assert_eq!(found.len(), 1, "{found:?}");
    let r = &found[0];
    assert!(r.contains("calls __any_sync"), "{r}");
    assert!(r.contains("only lanes 8-31 of its warp"), "{r}");
    assert!(r.contains("thread (8,0,0)"), "{r}");
});
