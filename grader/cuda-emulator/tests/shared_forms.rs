//! `__shared__` memory is per block in every form a kernel can declare it: in the kernel, in a
//! device function, in a template function or class, in a template kernel (loaded through a
//! name expression), and `extern` dynamic inside a function or at file scope. Each form has a
//! correct kernel (a block reverses its slice through shared memory, with a barrier), run plain
//! and checked: the values are right and the checked run reports nothing. Its racy twin (no
//! barrier) is reported as a race in shared memory when checked.

mod common;

use common::names::compile_with_names;
use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};

const BLOCKS: u32 = 4;
const THREADS: u32 = 64;

/// Runs kernel `name` (or the name expression `expr`'s) of `src` on 4 blocks of 64 threads,
/// `(const float* in, float* out)`, and when `correct` checks that each block reversed its
/// slice.
fn run(src: &str, expr: Option<&str>, dyn_smem: u32, correct: bool) {
    let (ptx, lowered) = compile_with_names(src, expr.as_slice());
    let name = lowered.first().cloned().unwrap_or_else(|| "k".to_string());
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(ptx).unwrap();
    let f = module.load_function(&name).unwrap();
    let n = (BLOCKS * THREADS) as usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: dyn_smem,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    if correct {
        let t = THREADS as usize;
        for (i, got) in out.iter().enumerate() {
            let want = (i / t * t + t - 1 - i % t) as f32;
            assert_eq!(*got, want, "out[{i}]");
        }
    }
}

/// The race lines of a checked run's stderr.
fn race_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("gpu-labs emulator:") && l.contains("race"))
        .collect()
}

/// The body every form shares: a block reverses its slice through `s` (`SYNC` stands for the
/// barrier, or nothing in the racy twin).
macro_rules! reverse {
    () => {
        "    int t = threadIdx.x, b = blockIdx.x * blockDim.x;
    s[t] = in[b + t];
    SYNC
    out[b + t] = s[blockDim.x - 1 - t];
"
    };
}

/// One twin of a form, `correct` or racy (its barrier left out), as test `name`: the child
/// runs `src`; the parent runs it plain and checked and reads the checked run's reports.
fn twin(name: &str, correct: bool, src: &str, expr: Option<&str>, dyn_smem: u32, memory: &str) {
    if common::is_child(name) {
        let sync = if correct { "__syncthreads();" } else { ";" };
        run(&src.replace("SYNC", sync), expr, dyn_smem, correct);
        return;
    }
    let plain = common::run_child(name);
    assert!(plain.status.success(), "plain run failed");
    let stderr = common::checked_child(name, &[]);
    let races = race_lines(&stderr);
    if correct {
        assert!(races.is_empty(), "{stderr}");
        assert!(!stderr.contains("host memory"), "{stderr}");
        assert!(!stderr.contains("uninitialized"), "{stderr}");
    } else {
        assert_eq!(races.len(), 1, "{stderr}");
        assert!(races[0].contains("is a data race"), "{}", races[0]);
        assert!(races[0].contains(memory), "{}", races[0]);
        assert!(races[0].contains("of block (0,0,0)"), "{}", races[0]);
    }
}

/// One form: `$head`, the shared body, `$tail` (`SYNC` stands for the barrier). The correct
/// kernel runs plain and checked with right values and no report; the racy twin (no barrier)
/// is reported when checked, in the memory `$memory` names.
macro_rules! form {
    ($correct:ident, $racy:ident, $head:literal, $tail:literal, $expr:expr, $dyn:expr, $memory:expr) => {
        #[test]
        fn $correct() {
            let src = concat!($head, reverse!(), $tail);
            twin(stringify!($correct), true, src, $expr, $dyn, $memory);
        }

        #[test]
        fn $racy() {
            let src = concat!($head, reverse!(), $tail);
            twin(stringify!($racy), false, src, $expr, $dyn, $memory);
        }
    };
}

form!(
    static_in_kernel_is_silent,
    static_in_kernel_race_is_reported,
    r#"
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float s[64];
"#,
    r#"}
"#,
    None,
    0,
    "in __shared__ `s`"
);

form!(
    in_device_function_is_silent,
    in_device_function_race_is_reported,
    r#"
__device__ void reverse(const float* in, float* out) {
    __shared__ float s[64];
"#,
    r#"}
extern "C" __global__ void k(const float* in, float* out) { reverse(in, out); }
"#,
    None,
    0,
    "in __shared__ `s`"
);

form!(
    in_template_function_is_silent,
    in_template_function_race_is_reported,
    r#"
template <typename T, int N>
__device__ void reverse(const T* in, T* out) {
    __shared__ T s[N];
"#,
    r#"}
extern "C" __global__ void k(const float* in, float* out) { reverse<float, 64>(in, out); }
"#,
    None,
    0,
    "in __shared__ `s`"
);

form!(
    in_class_template_is_silent,
    in_class_template_race_is_reported,
    r#"
template <int N>
struct Block {
    template <typename T>
    static __device__ void reverse(const T* in, T* out) {
        __shared__ T s[N];
"#,
    r#"    }
};
extern "C" __global__ void k(const float* in, float* out) { Block<64>::reverse(in, out); }
"#,
    None,
    0,
    "in __shared__ `s`"
);

form!(
    in_template_kernel_is_silent,
    in_template_kernel_race_is_reported,
    r#"
template <typename T, int N>
__global__ void reverse(const T* in, T* out) {
    __shared__ T s[N];
"#,
    r#"}
"#,
    Some("reverse<float, 64>"),
    0,
    "in __shared__ `s`"
);

form!(
    extern_dynamic_in_kernel_is_silent,
    extern_dynamic_in_kernel_race_is_reported,
    r#"
extern "C" __global__ void k(const float* in, float* out) {
    extern __shared__ float s[];
"#,
    r#"}
"#,
    None,
    256,
    "in the dynamic shared memory"
);

form!(
    extern_dynamic_at_file_scope_is_silent,
    extern_dynamic_at_file_scope_race_is_reported,
    r#"
extern __shared__ float s[];
extern "C" __global__ void k(const float* in, float* out) {
"#,
    r#"}
"#,
    None,
    256,
    "in the dynamic shared memory"
);

form!(
    extern_dynamic_in_template_kernel_is_silent,
    extern_dynamic_in_template_kernel_race_is_reported,
    r#"
template <typename T>
__global__ void reverse(const T* in, T* out) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* s = reinterpret_cast<T*>(smem);
"#,
    r#"}
"#,
    Some("&reverse<float>"),
    256,
    "in the dynamic shared memory"
);
