//! In checked runs (`GPU_LABS_EMULATOR_RACECHECK=1`, what grading uses for correctness), a
//! kernel is confined to device memory: a global access outside every live device allocation
//! (a host buffer reached through an address passed as an integer, a host address written,
//! page-locked host memory) stops the launch with CUDA_ERROR_ILLEGAL_ADDRESS and a report. So
//! a product computed on the host and copied by a kernel does not pass as GPU work. The honest
//! twins (the same kernels given device addresses) run silent.

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

/// Runs test `name` in a checked child; returns its stderr.
fn checked(name: &str) -> String {
    common::checked_child(name, &[])
}

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
    let stderr = checked("kernel_reading_a_host_buffer_fails");
    let r = reports(&stderr);
    assert_eq!(r.len(), 1, "{stderr}");
    assert!(
        r[0].contains("block (0,0,0) thread (0,0,0) read 4 bytes at 0x"),
        "{}",
        r[0]
    );
    assert!(r[0].contains("which is host memory"), "{}", r[0]);
    assert!(
        r[0].contains("a kernel can only read GPU memory"),
        "{}",
        r[0]
    );
    assert!(stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{stderr}");
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
    let stderr = checked("kernel_writing_a_host_address_fails");
    let r = reports(&stderr);
    assert_eq!(r.len(), 1, "{stderr}");
    assert!(
        r[0].contains("block (0,0,0) thread (0,0,0) wrote 4 bytes at 0x"),
        "{}",
        r[0]
    );
    assert!(
        r[0].contains("a kernel can only write GPU memory"),
        "{}",
        r[0]
    );
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
    let stderr = checked("kernel_reading_pinned_host_memory_fails");
    let r = reports(&stderr);
    assert_eq!(r.len(), 1, "{stderr}");
    assert!(r[0].contains("page-locked host memory"), "{}", r[0]);
    assert!(
        r[0].contains("a kernel can only read GPU memory"),
        "{}",
        r[0]
    );
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
    let stderr = checked("same_kernels_on_device_buffers_run_silent");
    assert!(!stderr.contains("gpu-labs emulator:"), "{stderr}");
}

/// Attacks that try to read the host buffer past the check, and what each must meet: the
/// compiler refuses the source (stdout `refused`), or the launch fails with the report.
fn attack(src: &str) {
    let host = data();
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let ptx = match compile_ptx(src) {
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
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                attack($src);
                return;
            }
            let out =
                common::run_child_with(stringify!($name), &[("GPU_LABS_EMULATOR_RACECHECK", "1")]);
            assert!(out.status.success(), "child failed: {:?}", out.status);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stdout.contains("1 passed"));
            assert!(
                stdout.contains("refused:") || stderr.contains("a kernel can only read GPU memory"),
                "{stdout}{stderr}"
            );
        }
    };
}

attack!(memcpy_from_a_host_address, MEMCPY_FROM_ADDRESS);

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
