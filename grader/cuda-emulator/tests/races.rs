//! Race detection in checked runs (`GPU_LABS_EMULATOR_RACECHECK=1`): each hazard kind is
//! reported with the two threads' indices, and correct kernels run with no report.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

/// Runs kernel `k(const float* in, float* out, int n)` of `src` on `grid`×`block` threads with
/// `n` = 4096 and prints `out[0..4]`.
fn launch(src: &str, grid: u32, block: u32) {
    let out = launch_out(src, grid, block);
    println!("out = {:?}", &out[..4]);
}

/// The input [`launch`] gives: `in[i] = i % 7`.
fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 7) as f32).collect()
}

/// [`launch`], returning `out`.
fn launch_out(src: &str, grid: u32, block: u32) -> Vec<f32> {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let n = 4096usize;
    let input = input(n);
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out).arg(&ni);
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    stream.clone_dtoh(&out).unwrap()
}

/// Runs test `name` in a checked child and returns its stderr's race lines.
fn races_of(name: &str) -> Vec<String> {
    let stderr = common::checked_child(name, &[]);
    stderr
        .lines()
        .filter(|l| {
            l.starts_with("gpu-labs emulator: kernel")
                && (l.contains("data race") || l.contains("lockstep"))
        })
        .map(str::to_string)
        .collect()
}

macro_rules! checked {
    ($name:ident, $src:expr, $grid:expr, $block:expr, |$races:ident| $check:block) => {
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                launch($src, $grid, $block);
                return;
            }
            let $races = races_of(stringify!($name));
            $check
        }
    };
}

/// Many threads add into one element with `+=` (global memory, missing atomic).
const BIAS_PLUS_EQUALS: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i % 4] += in[i];
    }
}
"#;

checked!(
    global_read_modify_write_without_atomic,
    BIAS_PLUS_EQUALS,
    4,
    256,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        assert!(
            r.contains("thread (4,0,0) of block (0,0,0) read 4 bytes (line 5)"),
            "{r}"
        );
        assert!(
            r.contains("thread (0,0,0) of block (0,0,0) wrote it (line 5)"),
            "{r}"
        );
        assert!(r.contains("atomicAdd"), "{r}");
    }
);

/// A tiled kernel without the `__syncthreads()` after the product of a tile: threads load the
/// next tile over elements others still read (shared memory, read then write, missing barrier).
const TILE_MISSING_SECOND_BARRIER: &str = r#"
#define T 16
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float tile[T];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int base = 0; base < 4 * T; base += T) {
        tile[t] = in[base + t];
        __syncthreads();
        for (int j = 0; j < T; j++) acc += tile[j];
    }
    out[blockIdx.x * T + t] = acc;
}
"#;

checked!(
    shared_write_after_read_without_barrier,
    TILE_MISSING_SECOND_BARRIER,
    2,
    16,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        // Thread 0 loads tile[0] of the second tile (line 8) while thread 1 may still be summing
        // the first (line 10): the emulator ran thread 0 first, so it saw the read second.
        assert!(
            r.contains(
                "thread (1,0,0) of block (0,0,0) read 4 bytes (line 10) in __shared__ `tile` (byte offset 0)"
            ),
            "{r}"
        );
        assert!(
            r.contains("thread (0,0,0) of block (0,0,0) wrote it (line 8)"),
            "{r}"
        );
        assert!(r.contains("Hint: put __syncthreads()"), "{r}");
    }
);

/// Thread i writes s[i] and reads its neighbour's s[i + 1] with no barrier (shared memory,
/// read after write, across warps).
const NEIGHBOUR_WITHOUT_BARRIER: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    s[t] = s[t] * 2.0f;
    float right = t < 63 ? s[t + 1] : 0.0f;
    out[t] = right;
}
"#;

checked!(
    shared_read_after_write_across_warps,
    NEIGHBOUR_WITHOUT_BARRIER,
    1,
    64,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        assert!(
            r.contains("thread (1,0,0) of block (0,0,0) wrote 4 bytes (line 7)"),
            "{r}"
        );
        assert!(
            r.contains("thread (0,0,0) of block (0,0,0) read it (line 8)"),
            "{r}"
        );
    }
);

/// Every block writes its sum to out[0] (global memory, write-write across blocks).
const EVERY_BLOCK_WRITES_ONE_ELEMENT: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    if (threadIdx.x == 0) {
        out[0] = in[blockIdx.x];
    }
}
"#;

checked!(
    global_write_write_across_blocks,
    EVERY_BLOCK_WRITES_ONE_ELEMENT,
    3,
    32,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        assert!(r.contains("thread (0,0,0) of block (1,0,0) wrote 4 bytes (line 4) at offset 0 of a device allocation"), "{r}");
        assert!(
            r.contains("thread (0,0,0) of block (0,0,0) wrote it (line 4)"),
            "{r}"
        );
        assert!(r.contains("blocks do not wait"), "{r}");
    }
);

/// The classic unrolled last-warp reduction through a `volatile` array, no __syncwarp.
const WARP_SYNCHRONOUS_REDUCTION: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        volatile float* v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"#;

checked!(
    warp_synchronous_code_is_reported,
    WARP_SYNCHRONOUS_REDUCTION,
    2,
    64,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        assert!(r.contains("relies on implicit warp lockstep"), "{r}");
        // Thread 0 ran its steps first and read v[1] (line 14); thread 1 then wrote v[1] in
        // its first step (line 9), with no __syncwarp() between.
        assert!(
            r.contains(
                "thread (1,0,0) of block (0,0,0) wrote 4 bytes (line 9) in __shared__ `s` (byte offset 4)"
            ),
            "{r}"
        );
        assert!(
            r.contains("thread (0,0,0) of block (0,0,0) read it (line 14)"),
            "{r}"
        );
        assert!(r.contains("__syncwarp()"), "{r}");
    }
);

/// Correct kernels: a tree reduction with barriers, the last warp with __syncwarp, warp
/// shuffles, atomics into one element, and a tiled loop with both barriers.
const CORRECT: &str = r#"
#define T 16
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    __shared__ float tile[T];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    for (int step = 32; step > 16; step /= 2) {
        if (t < step) s[t] += s[t + step];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t];
        for (int step = 16; step > 0; step /= 2) {
            v += s[t + step];
            __syncwarp();
            s[t] = v;
            __syncwarp();
        }
        float w = in[t];
        for (int d = 16; d > 0; d /= 2) w += __shfl_down_sync(0xffffffffu, w, d);
        if (t == 0) out[blockIdx.x] = s[0] + w;
    }
    atomicAdd(&out[100], 1.0f);
    float acc = 0.0f;
    for (int base = 0; base < 4 * T; base += T) {
        if (t < T) tile[t] = in[base + t];
        __syncthreads();
        for (int j = 0; j < T; j++) acc += tile[j];
        __syncthreads();
    }
    out[200 + blockIdx.x * 64 + t] = acc;
}
"#;

checked!(correct_kernels_have_no_report, CORRECT, 4, 64, |races| {
    assert!(races.is_empty(), "{races:?}");
});

/// `grader emulate --check races` turns the checks on (the racy kernel above is reported,
/// with its hint), `--check none` leaves them off (no report), as a user runs a program.
#[test]
fn grader_emulate_check_flag() {
    let name = "global_read_modify_write_without_atomic";
    let checked = common::run_child_by_grader(&["--check", "races"], name);
    assert!(checked.status.success());
    let stderr = String::from_utf8_lossy(&checked.stderr);
    assert!(
        stderr.contains("is a data race") && stderr.contains("atomicAdd"),
        "{stderr}"
    );
    let plain = common::run_child_by_grader(&["--check", "none"], name);
    assert!(plain.status.success());
    assert!(!String::from_utf8_lossy(&plain.stderr).contains("data race"));
}

/// The in-place (Hillis-Steele) block scan: thread t adds s[t - off] into s[t] while thread
/// t - off updates s[t - off] in the same step. Its fix is two buffers, not an atomic.
const IN_PLACE_SCAN: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t];
    __syncthreads();
    for (int off = 1; off < 64; off *= 2) {
        if (t >= off) s[t] += s[t - off];
        __syncthreads();
    }
    out[t] = s[t];
}
"#;

checked!(
    in_place_scan_gets_the_double_buffer_hint,
    IN_PLACE_SCAN,
    1,
    64,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        assert!(
        r.contains("thread (2,0,0) of block (0,0,0) read 4 bytes (line 8) in __shared__ `s` (byte offset 4)"),
        "{r}"
    );
        assert!(
            r.contains("thread (1,0,0) of block (0,0,0) wrote it (line 8)"),
            "{r}"
        );
        assert!(r.contains("double buffering"), "{r}");
        assert!(!r.contains("atomicAdd"), "{r}");
    }
);

/// The same scan with two buffers: correct, no report.
const DOUBLE_BUFFERED_SCAN: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float a[2][64];
    int t = threadIdx.x, cur = 0;
    a[0][t] = in[t];
    __syncthreads();
    for (int off = 1; off < 64; off *= 2) {
        a[1 - cur][t] = t >= off ? a[cur][t] + a[cur][t - off] : a[cur][t];
        cur = 1 - cur;
        __syncthreads();
    }
    out[t] = a[cur][t];
}
"#;

checked!(
    double_buffered_scan_is_silent,
    DOUBLE_BUFFERED_SCAN,
    1,
    64,
    |races| {
        assert!(races.is_empty(), "{races:?}");
    }
);

/// A block histogram in shared memory; `ZERO` stands for its zeroing (and the barrier after).
const HISTOGRAM: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ unsigned hist[8];
    int t = threadIdx.x;
    ZERO
    atomicAdd(&hist[(int)in[blockIdx.x * blockDim.x + t] % 8], 1u);
    __syncthreads();
    if (t < 8) out[blockIdx.x * 8 + t] = hist[t];
}
"#;

/// The uninitialized-shared-memory lines of test `name`'s checked run.
fn uninit_of(name: &str) -> Vec<String> {
    common::checked_child(name, &[])
        .lines()
        .filter(|l| l.contains("uninitialized shared memory"))
        .map(str::to_string)
        .collect()
}

#[test]
fn histogram_never_zeroed_is_reported() {
    let name = "histogram_never_zeroed_is_reported";
    if common::is_child(name) {
        launch(&HISTOGRAM.replace("ZERO", ""), 2, 64);
        return;
    }
    let found = uninit_of(name);
    assert_eq!(found.len(), 1, "{found:?}");
    let u = &found[0];
    assert!(
        u.contains("thread (0,0,0) of block (0,0,0) read 4 bytes (line 6) in __shared__ `hist` (byte offset 0)"),
        "{u}"
    );
    assert!(u.contains("Hint: set it first"), "{u}");
}

#[test]
fn zeroed_histogram_is_silent() {
    let name = "zeroed_histogram_is_silent";
    if common::is_child(name) {
        let zero = "if (t < 8) hist[t] = 0u; __syncthreads();";
        launch(&HISTOGRAM.replace("ZERO", zero), 2, 64);
        return;
    }
    assert!(uninit_of(name).is_empty());
    assert!(races_of(name).is_empty());
}

/// Every lane of a warp stores its warp's sum (the same value, after a butterfly of
/// shuffles) into one shared word, then warp 0 adds the words after a barrier: the lanes'
/// stores race, but no order of them changes what the kernel writes. A note, not a race.
const SAME_VALUE: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float partial[32];
    int t = threadIdx.x, lane = t % 32, warp = t / 32;
    float v = in[blockIdx.x * blockDim.x + t];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    partial[warp] = v;
    SYNC
    if (warp == 0) {
        float s = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
        for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
        if (lane == 0) out[blockIdx.x] = s;
    }
}
"#;

checked!(
    writes_of_one_value_by_a_warps_lanes_are_no_race,
    &SAME_VALUE.replace("SYNC", "__syncthreads();"),
    4,
    128,
    |races| {
        assert!(races.is_empty(), "{races:?}");
        let stderr = common::checked_child("writes_of_one_value_by_a_warps_lanes_are_no_race", &[]);
        assert!(
            stderr.contains("stored the value already there"),
            "{stderr}"
        );
    }
);

// Its twin without the barrier: warp 0 reads the other warps' words while they write them.
checked!(
    reading_a_warps_word_before_the_barrier_is_still_a_race,
    &SAME_VALUE.replace("SYNC", ""),
    4,
    128,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        assert!(races[0].contains("data race"), "{}", races[0]);
    }
);

/// Threads writing different values to one word race, whatever the order: still a race.
const DIFFERENT_VALUES: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float last;
    last = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = last;
}
"#;

checked!(
    writes_of_different_values_to_one_word_are_a_race,
    DIFFERENT_VALUES,
    2,
    64,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        assert!(races[0].contains("data race"), "{}", races[0]);
    }
);

/// Thread i doubles its element in place, then reads its right neighbour's, clamped at the
/// end (where it is its own), and uses that value only there: the read races with the
/// neighbour's write (within a block and across blocks), but its value is thrown away, so no
/// order of the two changes what the kernel writes. `USE` is what goes into `out[m + i]`.
const CLAMPED_NEIGHBOUR: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    int m = n / 2, i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    out[i] = in[i] * 2.0f;
    float right = out[min(i + 1, m - 1)];
    out[m + i] = USE;
}
"#;

#[test]
fn a_clamped_read_whose_value_is_thrown_away_is_a_note() {
    let name = "a_clamped_read_whose_value_is_thrown_away_is_a_note";
    let src = CLAMPED_NEIGHBOUR.replace("USE", "i + 1 < m ? in[i] : right");
    if common::is_child(name) {
        // Memory as the launch left it, not as the second run in the other order did.
        let out = launch_out(&src, 8, 256);
        let (input, m) = (input(4096), 2048);
        for i in 0..m {
            assert_eq!(out[i], 2.0 * input[i], "out[{i}]");
            let kept = if i + 1 < m { input[i] } else { 2.0 * input[i] };
            assert_eq!(out[m + i], kept, "out[{}]", m + i);
        }
        return;
    }
    let stderr = common::checked_child(name, &[]);
    assert!(!stderr.contains("data race"), "{stderr}");
    let note = stderr
        .lines()
        .find(|l| l.contains("the order does not change its results"))
        .unwrap_or_else(|| panic!("no note in {stderr}"));
    assert!(
        note.contains("thread (1,0,0) of block (0,0,0) wrote 4 bytes (line 5)"),
        "{note}"
    );
    assert!(
        note.contains("thread (0,0,0) of block (0,0,0) read it (line 6)"),
        "{note}"
    );
}

// Its twin that keeps the neighbour's value: which one it reads depends on the order.
checked!(
    a_clamped_read_whose_value_is_kept_is_still_a_race,
    &CLAMPED_NEIGHBOUR.replace("USE", "right"),
    8,
    256,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        let r = &races[0];
        assert!(r.contains("data race"), "{r}");
        assert!(
            r.contains(
                "Run again with its blocks and threads in the other order, it wrote something \
                 else at offset 8192 of a device allocation"
            ),
            "{r}"
        );
        assert!(
            r.contains(": 0 one way, 2 the other (read as floats)"),
            "{r}"
        );
    }
);

/// A block sum made the usual way (a shuffle reduction per warp, the warps' sums in shared
/// memory, warp 0 adding them and leaving the total in `partial[0]`), then every thread
/// divides by the total. `SYNC` stands for the barrier before that last read: without it,
/// warps may read `partial[0]` before or after warp 0 overwrote it with the total.
const NORMALISED_BY_BLOCK_SUM: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float partial[32];
    int t = threadIdx.x, lane = t % 32, warp = t / 32, i = blockIdx.x * blockDim.x + t;
    float v = in[i] + 1.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float s = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
        for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
        if (lane == 0) partial[0] = s;
    }
    SYNC
    out[i] = (in[i] + 1.0f) / partial[0];
}
"#;

checked!(
    reading_warp_0s_total_without_a_barrier_is_a_race,
    &NORMALISED_BY_BLOCK_SUM.replace("SYNC", ""),
    2,
    128,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        assert!(races[0].contains("data race"), "{}", races[0]);
        assert!(races[0].contains("in the other order"), "{}", races[0]);
    }
);

checked!(
    reading_warp_0s_total_after_a_barrier_is_silent,
    &NORMALISED_BY_BLOCK_SUM.replace("SYNC", "__syncthreads();"),
    2,
    128,
    |races| {
        assert!(races.is_empty(), "{races:?}");
    }
);

/// Block 1 waits for a flag that block 0 sets (blocks do not wait for each other: a race),
/// then copies what block 0 wrote. In the other order block 1 would wait forever: the second
/// run stops once it has read far more than the first, and the race stays a race.
const SPIN_ON_A_FLAG: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    volatile float* flag = out + 1000;
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        out[0] = in[3];
        *flag = 1.0f;
    } else {
        while (*flag == 0.0f) {}
        out[1] = out[0];
    }
}
"#;

checked!(
    a_wait_that_only_one_order_ends_stays_a_race,
    SPIN_ON_A_FLAG,
    2,
    32,
    |races| {
        assert_eq!(races.len(), 1, "{races:?}");
        assert!(races[0].contains("blocks do not wait"), "{}", races[0]);
        assert!(!races[0].contains("other order"), "{}", races[0]);
    }
);

/// The "last block sums the partial results" reduction: each block writes its partial sum,
/// `__threadfence()`, takes a ticket with `atomicInc`, and the block with the last ticket
/// adds every partial. Blocks are not ordered within a launch, so its read of the partials
/// races with their writes; but whichever block comes last, it reads them all written and
/// adds them in one order: the other order writes the same, a note and no race.
const LAST_BLOCK_SUMS: &str = r#"
__device__ unsigned int tickets = 0;
extern "C" __global__ void k(const float* in, float* out, int n) {
    __shared__ float s[64];
    __shared__ bool last;
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    for (int h = 32; h > 0; h /= 2) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    if (t == 0) {
        out[1 + blockIdx.x] = s[0];
        __threadfence();
        last = atomicInc(&tickets, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += out[1 + b];
        out[0] = total;
    }
}
"#;

#[test]
fn the_last_block_summing_the_partials_is_a_note() {
    let name = "the_last_block_summing_the_partials_is_a_note";
    if common::is_child(name) {
        let out = launch_out(LAST_BLOCK_SUMS, 8, 64);
        let want: f32 = input(512).iter().sum();
        assert_eq!(out[0], want);
        return;
    }
    let stderr = common::checked_child(name, &[]);
    assert!(!stderr.contains("data race"), "{stderr}");
    assert!(
        stderr.contains("the order does not change its results"),
        "{stderr}"
    );
}
