//! In checked runs (`GPU_LABS_EMULATOR_RACECHECK=1`, what grading uses for correctness) and
//! in confined ones (`GPU_LABS_EMULATOR_CONFINE=1`, what grading uses for every other run on
//! the emulator: timed runs), a kernel is confined to device memory: a global access outside
//! every live device allocation (a host buffer reached through an address passed as an
//! integer, a host address written, page-locked host memory) stops the launch with
//! CUDA_ERROR_ILLEGAL_ADDRESS and a report. So a product computed on the host and copied by a
//! kernel does not pass as GPU work, and a timed run's kernel cannot read or rewrite what the
//! grader's worker holds. The honest twins (the same kernels given device addresses) run
//! silent. Every test runs in both modes, and on each path of a block (a loop of threads,
//! fibers, coroutines).

mod common;

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaStream, DevicePtr, DevicePtrMut, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::compile_ptx;

/// Copies `n` floats from the address `src` (an integer) into `dst`.
const COPY_FROM_ADDRESS: &str = r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    const float* p = (const float*)src;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = p[i];
}
"#;

/// Copies `n` floats from `src` to the address `dst` (an integer).
const COPY_TO_ADDRESS: &str = r#"
extern "C" __global__ void k(const float* src, unsigned long long dst, int n) {
    float* p = (float*)dst;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = src[i];
}
"#;

/// Copies `n` floats from `src` to `dst`, both pointers.
const COPY: &str = r#"
extern "C" __global__ void k(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
"#;

/// Copies `n` floats from the address `src` to `dst` with one `memcpy` (thread 0).
const MEMCPY_FROM_ADDRESS: &str = r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) memcpy(dst, (const void*)src, n * sizeof(float));
}
"#;

const N: usize = 1000;

fn data() -> Vec<f32> {
    (0..N).map(|i| i as f32 * 0.5).collect()
}

/// What a launch of `src`'s kernel `k` with arguments (`a`, `b`, n) gave: the launch and
/// synchronisation result.
fn run(stream: &Arc<CudaStream>, src: &str, a: u64, b: u64) -> Result<(), DriverError> {
    let ctx = stream.context();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let n = N as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&a).arg(&b).arg(&n);
    unsafe { l.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    stream.synchronize()
}

/// The variable of a confined build.
const CONFINE: &str = "GPU_LABS_EMULATOR_CONFINE";

/// Runs test `name` in a checked child, then in a confined one; returns their stderrs.
fn checked(name: &str) -> Vec<String> {
    let confined = common::run_child_with(name, &[(CONFINE, "1")]);
    assert!(
        confined.status.success(),
        "child failed: {:?}",
        confined.status
    );
    assert!(String::from_utf8_lossy(&confined.stdout).contains("1 passed"));
    vec![
        common::checked_child(name, &[]),
        String::from_utf8_lossy(&confined.stderr).into_owned(),
    ]
}

/// Reads `n` floats from the address `src` after a barrier (a barrier kernel: coroutines in a
/// plain or confined build, fibers in a checked one), through shared memory.
const BARRIER_FROM_ADDRESS: &str = r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    __shared__ float tile[1024];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = 0.0f;
    __syncthreads();
    if (i < n) tile[threadIdx.x] = ((const float*)src)[i];
    __syncthreads();
    if (i < n) dst[i] = tile[threadIdx.x];
}
"#;

/// Reads `n` floats from the address `src` beside a warp shuffle (fibers), with a local
/// array whose address escapes (on the fiber's stack).
const SHUFFLE_FROM_ADDRESS: &str = r#"
__device__ float pick(const float* v, int j) { return v[j & 3]; }
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    float local[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) local[i & 3] = ((const float*)src)[i];
    float v = pick(local, i);
    v = __shfl_sync(0xffffffffu, v, threadIdx.x & 31);
    if (i < n) dst[i] = v;
}
"#;

/// The report lines of kernel `k`.
fn reports(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("gpu-labs emulator: kernel `k`"))
        .collect()
}

fn assert_illegal_address(r: Result<(), DriverError>) {
    let e = r.expect_err("the launch must fail");
    assert_eq!(
        e.0,
        cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        "{e:?}"
    );
}

#[test]
fn kernel_reading_a_host_buffer_fails() {
    if common::is_child("kernel_reading_a_host_buffer_fails") {
        let host = data();
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
        let d = dst.device_ptr_mut(&stream).0;
        assert_illegal_address(run(&stream, COPY_FROM_ADDRESS, host.as_ptr() as u64, d));
        return;
    }
    for stderr in checked("kernel_reading_a_host_buffer_fails") {
        let r = reports(&stderr);
        assert_eq!(r.len(), 1, "{stderr}");
        assert!(r[0].contains("read 4 bytes at 0x"), "{}", r[0]);
        assert!(r[0].contains("which is host memory"), "{}", r[0]);
        assert!(
            r[0].contains("a kernel can only read GPU memory"),
            "{}",
            r[0]
        );
        assert!(stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{stderr}");
    }
}

/// The same read from kernels that synchronise: a barrier kernel (coroutines in a plain build,
/// fibers when checked or confined) and a shuffle kernel (fibers) whose locals live on the
/// fiber's stack.
fn synchronising_kernel_reads_a_host_buffer(name: &str, src: &str) {
    if common::is_child(name) {
        let host = data();
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
        let d = dst.device_ptr_mut(&stream).0;
        assert_illegal_address(run(&stream, src, host.as_ptr() as u64, d));
        return;
    }
    for stderr in checked(name) {
        assert!(
            stderr.contains("a kernel can only read GPU memory"),
            "{stderr}"
        );
    }
}

#[test]
fn barrier_kernel_reading_a_host_buffer_fails() {
    synchronising_kernel_reads_a_host_buffer(
        "barrier_kernel_reading_a_host_buffer_fails",
        BARRIER_FROM_ADDRESS,
    );
}

#[test]
fn shuffle_kernel_reading_a_host_buffer_fails() {
    synchronising_kernel_reads_a_host_buffer(
        "shuffle_kernel_reading_a_host_buffer_fails",
        SHUFFLE_FROM_ADDRESS,
    );
}

#[test]
fn kernel_writing_a_host_address_fails() {
    if common::is_child("kernel_writing_a_host_address_fails") {
        let mut host = vec![0.0f32; N];
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let src = stream.clone_htod(&data()).unwrap();
        let s = src.device_ptr(&stream).0;
        assert_illegal_address(run(&stream, COPY_TO_ADDRESS, s, host.as_mut_ptr() as u64));
        assert!(
            host.iter().all(|&x| x == 0.0),
            "the kernel wrote host memory"
        );
        return;
    }
    for stderr in checked("kernel_writing_a_host_address_fails") {
        let r = reports(&stderr);
        assert_eq!(r.len(), 1, "{stderr}");
        assert!(r[0].contains("wrote 4 bytes at 0x"), "{}", r[0]);
        assert!(
            r[0].contains("a kernel can only write GPU memory"),
            "{}",
            r[0]
        );
    }
}

/// Page-locked host memory is host memory too: on a GPU a kernel could read it over the bus,
/// but then the host, not the kernel, did the work the item grades.
#[test]
fn kernel_reading_pinned_host_memory_fails() {
    if common::is_child("kernel_reading_pinned_host_memory_fails") {
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let mut pinned = unsafe { ctx.alloc_pinned::<f32>(N) }.unwrap();
        pinned.as_mut_slice().unwrap().copy_from_slice(&data());
        let p = pinned.as_ptr().unwrap() as u64;
        let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
        let d = dst.device_ptr_mut(&stream).0;
        assert_illegal_address(run(&stream, COPY, p, d));
        return;
    }
    for stderr in checked("kernel_reading_pinned_host_memory_fails") {
        let r = reports(&stderr);
        assert_eq!(r.len(), 1, "{stderr}");
        assert!(r[0].contains("page-locked host memory"), "{}", r[0]);
        assert!(
            r[0].contains("a kernel can only read GPU memory"),
            "{}",
            r[0]
        );
    }
}

/// The honest twins: the same kernels given device addresses (as integers and as pointers)
/// run silent and copy the data.
#[test]
fn same_kernels_on_device_buffers_run_silent() {
    if common::is_child("same_kernels_on_device_buffers_run_silent") {
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let src = stream.clone_htod(&data()).unwrap();
        for kernel in [
            COPY_FROM_ADDRESS,
            COPY_TO_ADDRESS,
            COPY,
            MEMCPY_FROM_ADDRESS,
            BARRIER_FROM_ADDRESS,
            SHUFFLE_FROM_ADDRESS,
        ] {
            let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
            {
                let s = src.device_ptr(&stream).0;
                let d = dst.device_ptr_mut(&stream).0;
                run(&stream, kernel, s, d).unwrap();
            }
            assert_eq!(stream.clone_dtoh(&dst).unwrap(), data());
        }
        return;
    }
    for stderr in checked("same_kernels_on_device_buffers_run_silent") {
        assert!(!stderr.contains("gpu-labs emulator:"), "{stderr}");
    }
}

/// Attacks that try to read the host buffer past the check, and what each must meet: the
/// compiler refuses the source (stdout `refused`), or the launch fails with the report.
fn attack(src: &str) {
    attack_with(src, cudarc::nvrtc::CompileOptions::default());
}

/// [`attack`] with the program's compile options (its include folders, its macros).
fn attack_with(src: &str, options: cudarc::nvrtc::CompileOptions) {
    let host = data();
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let ptx = match cudarc::nvrtc::compile_ptx_with_opts(src, options) {
        Ok(ptx) => ptx,
        Err(e) => {
            println!("refused: {e}");
            return;
        }
    };
    let module = ctx.load_module(ptx).unwrap();
    let f = module.load_function("k").unwrap();
    let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
    let n = N as i32;
    let a = host.as_ptr() as u64;
    let mut l = stream.launch_builder(&f);
    l.arg(&a).arg(&mut dst).arg(&n);
    unsafe { l.launch(LaunchConfig::for_num_elems(N as u32)) }.unwrap();
    assert_illegal_address(stream.synchronize());
}

macro_rules! attack {
    ($name:ident, $src:expr) => {
        attack!($name, $src, attack($src));
    };
    ($name:ident, $src:expr, $run:expr) => {
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                $run;
                return;
            }
            for mode in ["GPU_LABS_EMULATOR_RACECHECK", CONFINE] {
                let out = common::run_child_with(stringify!($name), &[(mode, "1")]);
                assert!(out.status.success(), "child failed: {:?}", out.status);
                let stdout = String::from_utf8_lossy(&out.stdout);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(stdout.contains("1 passed"));
                assert!(
                    stdout.contains("refused:")
                        || stderr.contains("a kernel can only read GPU memory")
                        || stderr.contains("a kernel can only write GPU memory")
                        || stderr.contains("its elements are numbered"),
                    "{mode}: {stdout}{stderr}"
                );
            }
        }
    };
}

attack!(memcpy_from_a_host_address, MEMCPY_FROM_ADDRESS);

// Device code's copies are the module's own (the prelude's end, linked -Bsymbolic): a source
// that undefines the prelude's names, calls a checked builtin, or copies a large struct reaches
// them all the same, never the C library's.
attack!(
    memcpy_after_its_name_is_undefined,
    r#"
#undef memcpy
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) memcpy(dst, (const void*)src, n * sizeof(float));
}
"#
);

attack!(
    std_memmove_after_its_name_is_undefined,
    r#"
#undef memmove
#include <cstring>
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) std::memmove(dst, (const void*)src, n * sizeof(float));
}
"#
);

attack!(
    checked_builtin_copy_after_its_name_is_undefined,
    r#"
#undef __builtin___memcpy_chk
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
        __builtin___memcpy_chk(dst, (const void*)src, n * sizeof(float), (unsigned long)-1);
}
"#
);

attack!(
    memcmp_of_a_host_buffer_after_its_name_is_undefined,
    r#"
#undef memcmp
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) dst[0] = (float)memcmp(dst, (const void*)src, n * sizeof(float));
}
"#
);

attack!(
    a_large_struct_copied_by_the_compiler,
    r#"
struct Big { float v[1000]; };
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *(Big*)dst = *(const Big*)src;
}
"#
);

attack!(
    builtin_memcpy_of_a_constant_size,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) __builtin_memcpy(dst, (const void*)src, 4000);
}
"#
);

attack!(
    memmove_from_a_host_address,
    r#"
#include <cstring>
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) std::memmove(dst, (const void*)src, n * sizeof(float));
}
"#
);

attack!(
    uninstrumented_helper,
    r#"
__attribute__((no_sanitize_thread)) __device__ float load(unsigned long long a, int i) {
    return ((const float*)a)[i];
}
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = load(src, i);
}
"#
);

attack!(
    uninstrumented_helper_through_a_pasted_name,
    r#"
#define CAT(a, b) a##b
__attribute__((CAT(no_sanitize, _thread))) __device__ float load(unsigned long long a, int i) {
    return ((const float*)a)[i];
}
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = load(src, i);
}
"#
);

attack!(
    check_switched_off_through_the_prelude_state,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    __gl::rc_now.stack_lo = 0;
    __gl::rc_now.stack_len = ~0ul;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i];
}
"#
);

attack!(
    known_span_planted_through_the_prelude_state,
    r#"
#define G(x) __g##l::x
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    G(rc::span_lo)[0] = 0;
    G(rc::span_hi)[0] = ~0ul;
    G(rc::span_n) = 1;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i];
}
"#
);

// The block runner's own state (the running launch, the argument array, the confinement's
// spans) is thread-local like a kernel's shared arrays, but in the module's initialised part
// (.tdata), which a kernel may read and never write: a pointer into a shared array moved below
// or past its bounds cannot clear or widen what the checks allow (the array indexed itself is
// stopped before, by the bounds check below).
attack!(
    shared_array_indexed_below_its_start_over_the_runtime_state,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    __shared__ unsigned long long t[4];
    unsigned long long* p = t;
    if (threadIdx.x == 0)
        for (int j = 1; j <= 4096; j++) p[-j] = j & 1 ? 0ull : ~0ull;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i];
}
"#
);

attack!(
    shared_array_indexed_past_its_end,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    __shared__ unsigned long long t[4];
    unsigned long long* p = t;
    if (threadIdx.x == 0)
        for (int j = 4; j < 4096; j++) p[j] = j & 1 ? 0ull : ~0ull;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i];
}
"#
);

// The precise form: find the confinement's record of the thread's own stack among the runtime's
// thread-locals (a pair of words around a local's address) and widen it to everything.
attack!(
    runtime_state_found_by_scanning_and_widened,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    __shared__ unsigned long long t4[4];
    unsigned long long* t = t4;
    volatile int local = 0;
    unsigned long long here = (unsigned long long)&local;
    for (int j = 2; j <= 2048; j++) {
        unsigned long long lo = t[-j], len = t[-j + 1];
        if (lo && lo < here && here - lo < len) {
            t[-j] = 0;
            t[-j + 1] = ~0ull;
        }
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i] + local;
}
"#
);

/// The grader's own busy kernel (`grader/worker/src/gpu/busy.rs`): a loop on a value read
/// from, and written back to, a device buffer.
const BUSY: &str = r#"
extern "C" __global__ void grader_busy(float* x, long long iters) {
    float v = x[threadIdx.x];
    for (long long i = 0; i < iters; ++i) {
        v = v * 0.9999f + 0.0001f;
    }
    x[threadIdx.x] = v;
}
"#;

/// A launch on a stream of its own runs on threads that existed before its module was
/// loaded (the stream's and the pool's): there too its built-in variables and locals are
/// found for what they are, checked and confined.
#[test]
fn kernel_on_a_new_stream_reads_its_own_variables() {
    if common::is_child("kernel_on_a_new_stream_reads_its_own_variables") {
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.new_stream().unwrap();
        let module = ctx.load_module(compile_ptx(BUSY).unwrap()).unwrap();
        let f = module.load_function("grader_busy").unwrap();
        let mut x = stream.clone_htod(&[1.0f32; 32]).unwrap();
        let iters = 1000i64;
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut l = stream.launch_builder(&f);
        l.arg(&mut x).arg(&iters);
        unsafe { l.launch(cfg) }.unwrap();
        stream.synchronize().unwrap();
        let mut want = 1.0f32;
        for _ in 0..iters {
            want = want * 0.9999 + 0.0001;
        }
        assert!(stream.clone_dtoh(&x).unwrap().iter().all(|&v| v == want));
        return;
    }
    for stderr in checked("kernel_on_a_new_stream_reads_its_own_variables") {
        assert!(!stderr.contains("gpu-labs emulator:"), "{stderr}");
    }
}

// The C library's formatted output can write through a pointer (`%n`), and the functions the
// prelude alone needs (a jump to a saved context, a formatted write into a buffer) could write
// anywhere: a kernel cannot call them.
/// `printf("%n", p)` stops the launch (an assertion's error), whatever `p` is, before it
/// writes anything.
#[test]
fn printf_percent_n_stops_the_launch() {
    if common::is_child("printf_percent_n_stops_the_launch") {
        let mut host = vec![7i32; 4];
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
        let d = dst.device_ptr_mut(&stream).0;
        let src = r#"
extern "C" __global__ void k(unsigned long long at, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) printf("%5d%n", n, (int*)at);
}
"#;
        let e = run(&stream, src, host.as_mut_ptr() as u64, d).expect_err("the launch fails");
        assert_eq!(
            e.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_ASSERT,
            "{e:?}"
        );
        assert_eq!(host, vec![7; 4], "printf wrote through the pointer");
        return;
    }
    for mode in [
        "GPU_LABS_EMULATOR_RACECHECK",
        CONFINE,
        "GPU_LABS_EMULATOR_DEVICES",
    ] {
        let out = common::run_child_with("printf_percent_n_stops_the_launch", &[(mode, "1")]);
        assert!(
            out.status.success(),
            "{mode}: child failed: {:?}",
            out.status
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("printf's %n"), "{mode}: {stderr}");
    }
}

attack!(
    snprintf_into_a_host_address,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) snprintf((char*)src, 16, "%d", n);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i];
}
"#
);

attack!(
    snprintf_through_std,
    r#"
#include <cstdio>
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) std::snprintf((char*)src, 16, "%d", n);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = ((const float*)src)[i];
}
"#
);

/// A kernel that reads the host buffer through a helper left uninstrumented by a macro the
/// program defines: the attribute's name is poisoned after the prelude, so the macro must
/// have been defined before it to pass.
const SNEAKY_HELPER: &str = r#"
SNEAKY __device__ float load(unsigned long long a, int i) { return ((const float*)a)[i]; }
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = load(src, i);
}
"#;

// The program's `-D` options are its macros, defined after the prelude (and its poison): not
// on the compiler's command line, before everything.
attack!(
    uninstrumented_helper_through_a_macro_option,
    SNEAKY_HELPER,
    attack_with(
        SNEAKY_HELPER,
        cudarc::nvrtc::CompileOptions {
            options: vec!["-DSNEAKY=__attribute__((no_sanitize_thread))".into()],
            ..Default::default()
        }
    )
);

/// Writes a folder holding a `cmath` that defines the sneaky macro (and includes the real
/// one), for an include path.
fn shadowing_folder() -> String {
    let dir = std::env::temp_dir().join(format!("gpu-labs-shadow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("cmath"),
        "#pragma once\n#include_next <cmath>\n#define SNEAKY __attribute__((no_sanitize_thread))\n",
    )
    .unwrap();
    dir.display().to_string()
}

// A program's include folder is searched after the system's: its `cmath` does not replace the
// one the prelude includes (where a macro it defined would come before the poison).
attack!(
    uninstrumented_helper_through_a_header_named_like_the_preludes,
    SNEAKY_HELPER,
    attack_with(
        SNEAKY_HELPER,
        cudarc::nvrtc::CompileOptions {
            include_paths: vec![shadowing_folder()],
            ..Default::default()
        }
    )
);

// A local array whose address is never taken is not instrumented by the access hooks; an
// index far past its end (the distance from a neighbour whose address is taken to the host
// buffer) would reach any address of the process. Every index of an array of known size is
// checked first, so each form stops the launch before the access: read and written, a
// member's array, a row of a two-dimensional one.
/// The start of a kernel with a local array `buf` of 8 floats and `off`, the distance in floats
/// from a neighbouring local to the host buffer `src`.
macro_rules! local_array_and_its_distance_to_src {
    () => {
        r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    float buf[8];
    for (int j = 0; j < 8; j++) buf[j] = (float)j;
    volatile int anchor = 0;
    long long off = ((long long)src - (long long)(unsigned long long)&anchor) / 4;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
"#
    };
}

attack!(
    local_array_read_far_past_its_end,
    concat!(
        local_array_and_its_distance_to_src!(),
        "    if (i < n) dst[i] = buf[off + i + (n & 7)];\n}\n"
    )
);

attack!(
    local_array_written_far_past_its_end,
    concat!(
        local_array_and_its_distance_to_src!(),
        "    if (i < n) buf[off + i + (n & 7)] = 1.0f;\n    if (i < n) dst[i] = buf[i & 7];\n}\n"
    )
);

attack!(
    member_array_of_a_local_struct_read_far_past_its_end,
    r#"
struct Pair { int tag; float v[4]; };
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    Pair p;
    p.tag = 1;
    for (int j = 0; j < 4; j++) p.v[j] = (float)j;
    volatile int anchor = 0;
    long long off = ((long long)src - (long long)(unsigned long long)&anchor) / 4;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = p.v[off + i] + p.tag;
}
"#
);

attack!(
    row_of_a_local_matrix_read_far_past_its_end,
    r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    float m[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) m[r][c] = (float)(r * 4 + c);
    volatile int anchor = 0;
    long long off = ((long long)src - (long long)(unsigned long long)&anchor) / 16;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = m[off][i & 3];
}
"#
);

/// A function of the host process (its address taken in safe Rust: `f as usize`) that copies
/// `n` floats: what a kernel given that address could call to do host work on device memory.
extern "C" fn host_copy(dst: *mut f32, src: *const f32, n: i32) {
    for i in 0..usize::try_from(n).unwrap_or(0) {
        // SAFETY: called only by the attack below, if at all, with N floats at both ends.
        unsafe { *dst.add(i) = *src.add(i) };
    }
}

/// A kernel that calls the function at `fp` (an integer) to copy the host buffer `src` into
/// device memory.
const CALL_THROUGH_A_POINTER: &str = r#"
typedef void (*Copy)(float*, const float*, int);
extern "C" __global__ void k(unsigned long long src, unsigned long long fp, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ((Copy)fp)(dst, (const float*)src, n);
}
"#;

/// A kernel cannot call through a pointer: the pointer could name any function of the
/// process (here one of the host's, which would copy the host's data into device memory
/// unchecked). The launch stops before the call, in both modes, and says what to do instead.
#[test]
fn kernel_calling_a_host_function_through_a_pointer_stops() {
    let name = "kernel_calling_a_host_function_through_a_pointer_stops";
    if common::is_child(name) {
        let host = data();
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let module = ctx
            .load_module(compile_ptx(CALL_THROUGH_A_POINTER).unwrap())
            .unwrap();
        let f = module.load_function("k").unwrap();
        let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
        let n = N as i32;
        let a = host.as_ptr() as u64;
        let fp = host_copy as *const () as usize as u64;
        let mut l = stream.launch_builder(&f);
        l.arg(&a).arg(&fp).arg(&mut dst).arg(&n);
        unsafe { l.launch(LaunchConfig::for_num_elems(N as u32)) }.unwrap();
        assert_illegal_address(stream.synchronize());
        return;
    }
    for stderr in checked(name) {
        let r = reports(&stderr);
        assert_eq!(r.len(), 1, "{stderr}");
        assert!(
            r[0].contains("called a function through a pointer (to 0x"),
            "{}",
            r[0]
        );
        assert!(r[0].contains("Call the function directly"), "{}", r[0]);
    }
}

// The runtime's entry points trust their arguments: a kernel that names one (to run blocks
// of a launch record it made, or to switch to a context it wrote) is refused when compiled.
attack!(
    runtime_entry_point_called_by_name,
    r#"
extern "C" int __gl_run_blocks(void* launch);
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) dst[0] = (float)__gl_run_blocks((void*)src);
}
"#
);

/// What `src`'s kernel `k(x, y, n)` writes to `y` from [`data`] in `x`, launched with `cfg`
/// (which must succeed).
fn each_element(src: &str, cfg: LaunchConfig) -> Vec<f32> {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let x = stream.clone_htod(&data()).unwrap();
    let mut y = stream.alloc_zeros::<f32>(N).unwrap();
    let n = N as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&x).arg(&mut y).arg(&n);
    unsafe { l.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
    stream.clone_dtoh(&y).unwrap()
}

/// A `switch` with many cases (a jump table in a plain build) is compares in a checked or
/// confined one: it runs, right and silent.
#[test]
fn kernel_with_a_dense_switch_runs_silent() {
    let name = "kernel_with_a_dense_switch_runs_silent";
    if common::is_child(name) {
        let src = r#"
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    switch (i % 9) {
        case 0: v += 1.0f; break;
        case 1: v *= 2.0f; break;
        case 2: v -= 3.0f; break;
        case 3: v = -v; break;
        case 4: v *= v; break;
        case 5: v += 5.0f; break;
        case 6: v *= 0.5f; break;
        case 7: v -= 7.0f; break;
        default: v = 8.0f;
    }
    y[i] = v;
}
"#;
        let host = data();
        let got = each_element(src, LaunchConfig::for_num_elems(N as u32));
        for (i, (&v, &g)) in host.iter().zip(&got).enumerate() {
            let want = match i % 9 {
                0 => v + 1.0,
                1 => v * 2.0,
                2 => v - 3.0,
                3 => -v,
                4 => v * v,
                5 => v + 5.0,
                6 => v * 0.5,
                7 => v - 7.0,
                _ => 8.0,
            };
            assert_eq!(g, want, "element {i}");
        }
        return;
    }
    for stderr in checked(name) {
        assert!(reports(&stderr).is_empty(), "{stderr}");
    }
}

/// The runtime's functions that a kernel could name (C linkage) and that trust their
/// arguments are poisoned, so a kernel cannot call them with arguments of its own (a launch
/// record whose callbacks it chose, a saved context to switch to). The others are what kernels
/// are meant to call, each checked, or entry points that only stop the launch.
#[test]
fn runtime_entry_points_are_poisoned() {
    let name = "runtime_entry_points_are_poisoned";
    if common::is_child(name) {
        // Meant for kernels, each checked: device code's heap and copies (`MODULE_OWN`).
        use gpu_labs_cuda_emulator::nvrtc::symbols::{symbols, MODULE_OWN, SHT_SYMTAB, STT_FUNC};
        // A kernel on the plain loop, and one on fibers (which brings the fibers' runtime).
        let elfs = [COPY, SHUFFLE_FROM_ADDRESS].map(|src| {
            let text = compile_ptx(src).unwrap().to_src();
            let so = gpu_labs_cuda_emulator::nvrtc::compile::parse_module_text(&text).unwrap();
            std::fs::read(so).unwrap()
        });
        let poisoned = gpu_labs_cuda_emulator::nvrtc::source::POISONED;
        // The C runtime's own start and end of a shared object (no name a kernel can use).
        let c_runtime = [
            "_init",
            "_fini",
            "__do_global_dtors_aux",
            "deregister_tm_clones",
            "register_tm_clones",
            "frame_dummy",
        ];
        // The compiler's constructor of the module (it starts the instrumentation: nothing).
        let constructor = |n: &str| n.starts_with("_sub_I_");
        let mut named = 0;
        // Defined here (what the C library gives is `symbols::allowed`'s business), hidden ones
        // included: the link made them local, but the translation unit could name them.
        for s in elfs.iter().flat_map(|elf| symbols(elf, SHT_SYMTAB)) {
            if s.kind != STT_FUNC || s.value == 0 || s.name.starts_with("_Z") || s.name == "k" {
                continue;
            }
            named += 1;
            let n = s.name.as_str();
            // The instrumentation's hooks (each checks its address) and the indirect-call
            // thunks (each stops the launch).
            let harmless = n.starts_with("__tsan_") || n.starts_with("__x86_indirect_thunk_");
            assert!(
                poisoned.contains(&n)
                    || MODULE_OWN.contains(&n)
                    || c_runtime.contains(&n)
                    || constructor(n)
                    || harmless,
                "`{n}` can be called by name from a kernel: poison it (source::POISONED) or say \
                 why it is safe"
            );
        }
        assert!(
            named > 40,
            "only {named} functions read: the symbol table was not"
        );
        println!("CHECKED {named}");
        return;
    }
    let out = common::run_child_with(name, &[("GPU_LABS_EMULATOR_RACECHECK", "1")]);
    assert!(out.status.success(), "child failed: {:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stdout).contains("CHECKED"));
}

/// Set by [`host_flag`]: whether a kernel made the process run it.
static HOST_FLAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A host function a kernel could jump to by rewriting a return address.
extern "C" fn host_flag() {
    HOST_FLAG.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// A kernel whose device function finds its own return address in its stack frame (the word
/// that points just past the kernel's start) and puts `fp` there, so that it "returns" into
/// the function at `fp`; `BARRIER` makes it a barrier kernel (fibers in a checked build).
const RETURN_ADDRESS_REWRITTEN: &str = r#"
__device__ __attribute__((noinline)) void smash(unsigned long long fp, unsigned long long lo, int zero) {
    volatile unsigned long long x = 0;
    // `zero` is 0, which the compiler cannot know: the loop below stays as written.
    unsigned long long* p = (unsigned long long*)((unsigned long long)&x + zero);
    for (int j = 1; j < 64; j++)
        if (p[j] - lo < 65536) {
            p[j] = fp;
            break;
        }
}
extern "C" __global__ void k(unsigned long long fp, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 1.0f;
    BARRIER
    if (i == 0) smash(fp, (unsigned long long)&k, n - 1000);
}
"#;

/// A kernel whose device function zeroes the words of its frame above a local, all but its
/// return address: the registers its caller keeps, saved there, are changed.
const SAVED_REGISTERS_REWRITTEN: &str = r#"
__device__ __attribute__((noinline)) float keep(float* dst, int i, unsigned long long lo, int zero) {
    volatile unsigned long long x = 0;
    unsigned long long* p = (unsigned long long*)((unsigned long long)&x + zero);
    int j = 1;
    for (; j < 64 && p[j] - lo >= 65536; j++) p[j] = 0;
    return dst[i] + (float)j;
}
extern "C" __global__ void k(unsigned long long fp, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = 0.5f * i, b = a * a, c = b - a, d = c * 3.0f;
    BARRIER
    if (i < n) dst[i] = keep(dst, i, (unsigned long long)&k, n - 1000) + a + b + c + d;
}
"#;

/// Runs `src` (with `BARRIER` written as `barrier`) over N threads with [`host_flag`]'s
/// address; returns the synchronisation's result.
fn run_with_host_flag(src: &str, barrier: &str) -> Result<(), DriverError> {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx
        .load_module(compile_ptx(src.replace("BARRIER", barrier)).unwrap())
        .unwrap();
    let f = module.load_function("k").unwrap();
    let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
    let n = N as i32;
    let fp = host_flag as *const () as usize as u64;
    let mut l = stream.launch_builder(&f);
    l.arg(&fp).arg(&mut dst).arg(&n);
    unsafe { l.launch(LaunchConfig::for_num_elems(N as u32)) }.unwrap();
    stream.synchronize()
}

/// A kernel that rewrites its own stack frame (a return address, or the registers its caller
/// keeps) stops when that function returns, before anything runs where it pointed, on the
/// loop of threads and on fibers, in both modes.
macro_rules! frame_rewritten {
    ($name:ident, $src:expr, $barrier:expr) => {
        #[test]
        fn $name() {
            let name = stringify!($name);
            if common::is_child(name) {
                assert_illegal_address(run_with_host_flag($src, $barrier));
                assert!(
                    !HOST_FLAG.load(std::sync::atomic::Ordering::SeqCst),
                    "the kernel ran a host function"
                );
                return;
            }
            for stderr in checked(name) {
                let r = reports(&stderr);
                assert_eq!(r.len(), 1, "{stderr}");
                assert!(r[0].contains("wrote over its own stack frame"), "{}", r[0]);
            }
        }
    };
}

frame_rewritten!(return_address_rewritten_stops, RETURN_ADDRESS_REWRITTEN, "");
frame_rewritten!(
    return_address_rewritten_on_a_fiber_stops,
    RETURN_ADDRESS_REWRITTEN,
    "__syncthreads();"
);
frame_rewritten!(
    saved_registers_rewritten_stops,
    SAVED_REGISTERS_REWRITTEN,
    ""
);
frame_rewritten!(
    saved_registers_rewritten_on_a_fiber_stops,
    SAVED_REGISTERS_REWRITTEN,
    "__syncthreads();"
);

/// The honest twins: device functions that are called (not inlined), recursion 200 deep, and
/// a barrier inside a called function, give the right values, silent, in both modes.
#[test]
fn called_and_recursive_device_functions_run_silent() {
    let name = "called_and_recursive_device_functions_run_silent";
    if common::is_child(name) {
        let src = r#"
__device__ __attribute__((noinline)) int depth(int d) { return d == 0 ? 0 : 1 + depth(d - 1); }
__device__ __attribute__((noinline)) float tile_sum(float* t, float v) {
    t[threadIdx.x] = v;
    __syncthreads();
    float s = t[threadIdx.x] + t[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
    return s;
}
extern "C" __global__ void k(const float* x, float* y, int n) {
    __shared__ float t[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float s = tile_sum(t, v);
    if (i < n) y[i] = s + (float)depth(200);
}
"#;
        let host = data();
        let cfg = LaunchConfig {
            grid_dim: ((N as u32).div_ceil(256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let got = each_element(src, cfg);
        for (i, &g) in got.iter().enumerate() {
            let block = i / 256 * 256;
            let next = block + (i - block + 1) % 256;
            let right = if next < N { host[next] } else { 0.0 };
            assert_eq!(g, host[i] + right + 200.0, "element {i}");
        }
        return;
    }
    for stderr in checked(name) {
        assert!(reports(&stderr).is_empty(), "{stderr}");
    }
}

/// Calls nested deeper than a shadow stack holds (1024) fault on its guard page: the launch
/// stops with a report that says the calls are nested too deep, and the process goes on.
#[test]
fn recursion_deeper_than_the_shadow_stack_stops_the_launch() {
    let name = "recursion_deeper_than_the_shadow_stack_stops_the_launch";
    if common::is_child(name) {
        let src = r#"
__device__ __attribute__((noinline)) int depth(int d) { return d == 0 ? 0 : 1 + depth(d - 1); }
extern "C" __global__ void k(unsigned long long src, unsigned long long dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0 && depth(n * 2) == 7) ((float*)dst)[0] = 1.0f;
}
"#;
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        assert_illegal_address(run(&stream, src, 0, 0));
        return;
    }
    for stderr in checked(name) {
        let r = reports(&stderr);
        assert_eq!(r.len(), 1, "{stderr}");
        assert!(r[0].contains("ran out of stack"), "{}", r[0]);
    }
}
