//! Ordinary cudarc programs, run under the emulator.

mod common;

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>) {
    let ctx = CudaContext::new(0).expect("context");
    let stream = ctx.default_stream();
    (ctx, stream)
}

emulated!(device_and_copies, {
    let (ctx, stream) = setup();
    assert_eq!(ctx.name().unwrap(), "gpu-labs CPU emulator");
    let host: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dev = stream.clone_htod(&host).unwrap();
    let back = stream.clone_dtoh(&dev).unwrap();
    assert_eq!(back, host);
    let zeros = stream.alloc_zeros::<u32>(77).unwrap();
    assert_eq!(stream.clone_dtoh(&zeros).unwrap(), vec![0u32; 77]);
    let copy = dev.clone();
    assert_eq!(stream.clone_dtoh(&copy).unwrap(), host);
});

fn cpu_matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
    c
}

/// Launches matmul kernel `f` (arguments a, b, c, m, n, k) on `stream` for an m×k · k×n
/// product with `block`×`block` threads per block and enough blocks to cover C, and checks C
/// against the CPU.
fn launch_and_check_matmul(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    (m, n, k): (usize, usize, usize),
    block: u32,
) {
    let (a, b) = inputs(m, n, k);
    let a_d = stream.clone_htod(&a).unwrap();
    let b_d = stream.clone_htod(&b).unwrap();
    let mut c_d = stream.alloc_zeros::<f32>(m * n).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (
            n.div_ceil(block as usize) as u32,
            m.div_ceil(block as usize) as u32,
            1,
        ),
        block_dim: (block, block, 1),
        shared_mem_bytes: 0,
    };
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let mut l = stream.launch_builder(f);
    l.arg(&a_d)
        .arg(&b_d)
        .arg(&mut c_d)
        .arg(&mi)
        .arg(&ni)
        .arg(&ki);
    unsafe { l.launch(cfg) }.unwrap();
    assert_close(
        &stream.clone_dtoh(&c_d).unwrap(),
        &cpu_matmul(&a, &b, m, n, k),
    );
}

fn inputs(m: usize, n: usize, k: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..m * k)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 8.0)
        .collect();
    let b = (0..k * n)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 4.0)
        .collect();
    (a, b)
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-3 * (1.0 + w.abs()),
            "index {i}: got {g}, want {w}"
        );
    }
}

emulated!(naive_matmul, {
    let (ctx, stream) = setup();
    let module = ctx
        .load_module(compile_ptx(common::NAIVE_MATMUL).unwrap())
        .unwrap();
    let f = module.load_function("matmul").unwrap();
    launch_and_check_matmul(&stream, &f, (37, 45, 29), 16);
});

const TILED: &str = r#"
#define TILE 16
extern "C" __global__ void tiled(const float* __restrict__ a, const float* __restrict__ b, float* c, int m, int n, int k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ac < k) ? a[row * k + ac] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (br < k && col < n) ? b[br * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; i++) sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = sum;
}
"#;

emulated!(tiled_matmul_with_syncthreads, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(TILED).unwrap()).unwrap();
    let f = module.load_function("tiled").unwrap();
    launch_and_check_matmul(&stream, &f, (50, 33, 70), 16);
});

const REDUCE: &str = r#"
__device__ __forceinline__ float warp_sum(float v) {
    for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    return v;
}
extern "C" __global__ void reduce(const float* x, float* total, int* count, int* maxv, int n) {
    extern __shared__ float partial[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x / warpSize) ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) atomicAdd(total, v);
    }
    if (i < n) { atomicAdd(count, 1); atomicMax(maxv, (int)x[i]); }
    int b = __shfl_xor_sync(0xffffffff, lane, 1);
    if (b != (lane ^ 1)) __trap();
    unsigned ballot = __ballot_sync(0xffffffff, lane < 3);
    if (ballot != 7u) __trap();
}
"#;

emulated!(reduction_with_shuffles_and_atomics, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(REDUCE).unwrap()).unwrap();
    let f = module.load_function("reduce").unwrap();
    let n = 10_000usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let x_d = stream.clone_htod(&x).unwrap();
    let mut total = stream.alloc_zeros::<f32>(1).unwrap();
    let mut count = stream.alloc_zeros::<i32>(1).unwrap();
    let mut maxv = stream.alloc_zeros::<i32>(1).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 8 * 4,
    };
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&x_d)
        .arg(&mut total)
        .arg(&mut count)
        .arg(&mut maxv)
        .arg(&ni);
    unsafe { l.launch(cfg) }.unwrap();
    let want: f32 = x.iter().sum();
    assert_eq!(stream.clone_dtoh(&total).unwrap()[0], want);
    assert_eq!(stream.clone_dtoh(&count).unwrap()[0], n as i32);
    assert_eq!(stream.clone_dtoh(&maxv).unwrap()[0], 99);
});

#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Params {
    scale: f32,
    offset: f64,
    n: i32,
    shift: [f32; 3],
}
unsafe impl cudarc::driver::DeviceRepr for Params {}

const STRUCT_AND_CONSTANT: &str = r#"
struct Params { float scale; double offset; int n; float shift[3]; };
__constant__ float coef[4];
__device__ int calls;
extern "C" __global__ void apply(Params p, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    float v = x[i];
    y[i] = p.scale * (coef[0] + coef[1] * v + coef[2] * v * v + coef[3] * v * v * v) + (float)p.offset + p.shift[2];
    atomicAdd(&calls, 1);
}
"#;

emulated!(struct_by_value_and_constant_memory, {
    let (ctx, stream) = setup();
    let module = ctx
        .load_module(compile_ptx(STRUCT_AND_CONSTANT).unwrap())
        .unwrap();
    let mut sym = module.get_global("coef", &stream).unwrap();
    assert_eq!(sym.len(), 16);
    let mut coef = unsafe { sym.transmute_mut::<f32>(4).unwrap() };
    stream
        .memcpy_htod(&[1.0f32, 2.0, 3.0, 4.0], &mut coef)
        .unwrap();
    let f = module.load_function("apply").unwrap();
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 / 1000.0).collect();
    let x_d = stream.clone_htod(&x).unwrap();
    let mut y_d = stream.alloc_zeros::<f32>(n).unwrap();
    let p = Params {
        scale: 2.0,
        offset: 0.5,
        n: n as i32,
        shift: [0.0, 0.0, 0.25],
    };
    let mut l = stream.launch_builder(&f);
    l.arg(&p).arg(&x_d).arg(&mut y_d);
    unsafe { l.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    let y = stream.clone_dtoh(&y_d).unwrap();
    for (i, (&xi, &yi)) in x.iter().zip(&y).enumerate() {
        let want = 2.0 * (1.0 + 2.0 * xi + 3.0 * xi * xi + 4.0 * xi * xi * xi) + 0.5 + 0.25;
        assert!((yi - want).abs() < 1e-4, "index {i}: {yi} vs {want}");
    }
    let calls = module.get_global("calls", &stream).unwrap();
    let calls: Vec<u8> = stream.clone_dtoh(&calls).unwrap();
    assert_eq!(i32::from_ne_bytes(calls[..4].try_into().unwrap()), n as i32);
});

const SPIN: &str = r#"
extern "C" __global__ void spin(float* out, long long iters) {
    float x = 1.0f;
    for (long long i = 0; i < iters; i++) x = x * 0.999999f + 1e-7f;
    if (threadIdx.x == 0) out[blockIdx.x] = x;
}
"#;

/// Iterations of `spin` that take about `ms` milliseconds on this machine (single thread).
fn spin_iters(ms: f64) -> i64 {
    let t = std::time::Instant::now();
    let mut x = 1.0f32;
    let n = 20_000_000i64;
    for _ in 0..n {
        x = std::hint::black_box(x * 0.999999 + 1e-7);
    }
    std::hint::black_box(x);
    (n as f64 * ms / (t.elapsed().as_secs_f64() * 1000.0)) as i64
}

emulated!(launches_are_asynchronous_and_events_time_real_work, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(SPIN).unwrap()).unwrap();
    let f = module.load_function("spin").unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let iters = spin_iters(1000.0);
    let start = stream
        .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let t0 = std::time::Instant::now();
    let mut l = stream.launch_builder(&f);
    l.arg(&mut out).arg(&iters);
    unsafe {
        l.launch(LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        })
    }
    .unwrap();
    let launch_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let end = stream
        .record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let host_ms = t0.elapsed().as_secs_f64() * 1000.0;
    assert!(
        !end.is_complete(),
        "the kernel finished before the host looked"
    );
    let device_ms = start.elapsed_ms(&end).unwrap() as f64;
    let synced_ms = t0.elapsed().as_secs_f64() * 1000.0;
    println!("launch {launch_ms:.3} ms, unsynchronized host clock {host_ms:.3} ms, events {device_ms:.1} ms, synchronized host clock {synced_ms:.1} ms");
    assert!(launch_ms < 50.0, "launch blocked for {launch_ms} ms");
    assert!(
        host_ms * 10.0 < device_ms,
        "host {host_ms} ms vs device {device_ms} ms"
    );
    assert!(
        device_ms > 200.0 && device_ms < 5000.0,
        "events measured {device_ms} ms"
    );
    assert!(synced_ms >= device_ms * 0.9);
});

emulated!(streams_and_events_order_work, {
    let (ctx, _) = setup();
    let module = ctx.load_module(compile_ptx(SPIN).unwrap()).unwrap();
    let f = module.load_function("spin").unwrap();
    let s1 = ctx.new_stream().unwrap();
    let s2 = ctx.new_stream().unwrap();
    let mut out = s1.alloc_zeros::<f32>(4).unwrap();
    let iters = spin_iters(200.0);
    let mut l = s1.launch_builder(&f);
    l.arg(&mut out).arg(&iters);
    unsafe {
        l.launch(LaunchConfig {
            grid_dim: (4, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        })
    }
    .unwrap();
    let done1 = s1.record_event(None).unwrap();
    assert_eq!(s1.context().cu_ctx(), ctx.cu_ctx());
    // s2 waits for s1's kernel: its marker event completes only after the kernel.
    s2.wait(&done1).unwrap();
    let after = s2.record_event(None).unwrap();
    assert!(!after.is_complete());
    after.synchronize().unwrap();
    assert!(done1.is_complete());
    // A copy on s2 sees s1's results once joined.
    s2.join(&s1).unwrap();
    let host = s2.clone_dtoh(&out).unwrap();
    assert!(host.iter().all(|&v| v > 0.0));
    ctx.synchronize().unwrap();
});

emulated!(compile_error_is_reported_with_student_lines, {
    let src = "extern \"C\" __global__ void k(float* x) {\n    int i = threadIdx.x;\n    x[i] = undefined_thing;\n}\n";
    match compile_ptx(src) {
        Ok(_) => panic!("compiled"),
        Err(cudarc::nvrtc::CompileError::CompileError { nvrtc, log, .. }) => {
            let log = log.to_string_lossy();
            println!("{log}");
            assert_eq!(
                nvrtc.0,
                cudarc::nvrtc::sys::nvrtcResult::NVRTC_ERROR_COMPILATION
            );
            assert!(log.contains("default_program(3): error"), "{log}");
            assert!(log.contains("undefined_thing"), "{log}");
        }
        Err(e) => panic!("{e:?}"),
    }
});

const OOB: &str = r#"
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += a[(row % n) * n + i] * b[i * n + (col % n)];
    c[row * n + col] = sum;
}
"#;

emulated!(
    out_of_bounds_write_is_reported,
    {
        let (ctx, stream) = setup();
        let module = ctx.load_module(compile_ptx(OOB).unwrap()).unwrap();
        let f = module.load_function("matmul").unwrap();
        let n = 32usize;
        let a = stream.alloc_zeros::<f32>(n * n).unwrap();
        let b = stream.alloc_zeros::<f32>(n * n).unwrap();
        let mut c = stream.alloc_zeros::<f32>(n * n).unwrap();
        let ni = n as i32;
        let mut l = stream.launch_builder(&f);
        l.arg(&a).arg(&b).arg(&mut c).arg(&ni);
        let cfg = LaunchConfig {
            grid_dim: (3, 3, 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        unsafe { l.launch(cfg) }.expect("the launch itself succeeds");
        let err = stream
            .synchronize()
            .expect_err("the fault surfaces at synchronize");
        assert_eq!(
            err.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        );
        // Sticky, as on a GPU.
        let err = cudarc::driver::result::ctx::synchronize().expect_err("sticky");
        assert_eq!(
            err.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        );
        std::mem::forget((a, b, c, module, ctx));
    },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("kernel `matmul` block ("), "{stderr}");
        assert!(
            stderr.contains("wrote 4 bytes past the end of a 4096-byte allocation"),
            "{stderr}"
        );
        assert!(
            stderr.contains("(offset 4096;") || stderr.contains("(offset 4"),
            "{stderr}"
        );
        assert_eq!(
            stderr.matches("kernel `matmul`").count(),
            1,
            "one report: {stderr}"
        );
    }
);

emulated!(launch_configuration_is_validated, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(SPIN).unwrap()).unwrap();
    let f = module.load_function("spin").unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let iters = 1i64;
    let bad = [
        LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1025, 1, 1),
            shared_mem_bytes: 0,
        },
        LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 32, 2),
            shared_mem_bytes: 0,
        },
        LaunchConfig {
            grid_dim: (1, 70000, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        },
        LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 49 * 1024,
        },
    ];
    for cfg in bad {
        let mut l = stream.launch_builder(&f);
        l.arg(&mut out).arg(&iters);
        let err = unsafe { l.launch(cfg) }.expect_err("invalid configuration");
        assert_eq!(
            err.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_VALUE,
            "{cfg:?}"
        );
    }
    // Static shared memory counts against the 48 KiB too.
    let src = "#define BIG 10240\nextern \"C\" __global__ void big(float* o) {\n  __shared__ float s[BIG];\n  s[threadIdx.x] = 1.0f;\n  o[0] = s[0];\n}\n";
    let m2 = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let big = m2.load_function("big").unwrap();
    assert_eq!(big.shared_size_bytes().unwrap(), 40960);
    for (dynamic, ok) in [(8 * 1024, true), (9 * 1024, false)] {
        let mut l = stream.launch_builder(&big);
        l.arg(&mut out);
        let r = unsafe {
            l.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: dynamic,
            })
        };
        assert_eq!(r.is_ok(), ok, "{dynamic} bytes of dynamic shared memory");
    }
    stream.synchronize().unwrap();
});

emulated!(cublas_gemm_with_transposes, {
    use cudarc::cublas::{
        sys::cublasOperation_t as Op, CudaBlas, Gemm, GemmConfig, StridedBatchedConfig,
    };
    let (_ctx, stream) = setup();
    let blas = CudaBlas::new(stream.clone()).unwrap();
    let (m, n, k) = (23usize, 17usize, 31usize);
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        // Column-major op(A) is m x k, op(B) is k x n.
        let a: Vec<f64> = (0..m * k).map(|i| ((i * 3 % 7) as f64) - 3.0).collect();
        let b: Vec<f64> = (0..k * n).map(|i| ((i * 5 % 9) as f64) - 4.0).collect();
        let c0: Vec<f64> = (0..m * n).map(|i| (i % 5) as f64).collect();
        let (lda, ldb) = (if ta { k } else { m }, if tb { n } else { k });
        let get_a = |i: usize, l: usize| if ta { a[l + i * lda] } else { a[i + l * lda] };
        let get_b = |l: usize, j: usize| if tb { b[j + l * ldb] } else { b[l + j * ldb] };
        let (alpha, beta) = (1.5, -0.5);
        let mut want = c0.clone();
        for j in 0..n {
            for i in 0..m {
                let s: f64 = (0..k).map(|l| get_a(i, l) * get_b(l, j)).sum();
                want[i + j * m] = alpha * s + beta * c0[i + j * m];
            }
        }
        let op = |t: bool| if t { Op::CUBLAS_OP_T } else { Op::CUBLAS_OP_N };
        let cfg = GemmConfig {
            transa: op(ta),
            transb: op(tb),
            m: m as i32,
            n: n as i32,
            k: k as i32,
            alpha,
            lda: lda as i32,
            ldb: ldb as i32,
            beta,
            ldc: m as i32,
        };
        let a_d = stream.clone_htod(&a).unwrap();
        let b_d = stream.clone_htod(&b).unwrap();
        let mut c_d = stream.clone_htod(&c0).unwrap();
        unsafe { blas.gemm(cfg, &a_d, &b_d, &mut c_d) }.unwrap();
        let got = stream.clone_dtoh(&c_d).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-9, "transposes {ta} {tb}: {g} vs {w}");
        }
        // f32, strided batched: two copies of the same problem.
        let a32: Vec<f32> = a.iter().chain(&a).map(|&v| v as f32).collect();
        let b32: Vec<f32> = b.iter().chain(&b).map(|&v| v as f32).collect();
        let c32: Vec<f32> = c0.iter().chain(&c0).map(|&v| v as f32).collect();
        let cfg32 = StridedBatchedConfig {
            gemm: GemmConfig {
                transa: op(ta),
                transb: op(tb),
                m: m as i32,
                n: n as i32,
                k: k as i32,
                alpha: 1.5f32,
                lda: lda as i32,
                ldb: ldb as i32,
                beta: -0.5f32,
                ldc: m as i32,
            },
            batch_size: 2,
            stride_a: (m * k) as i64,
            stride_b: (k * n) as i64,
            stride_c: (m * n) as i64,
        };
        let a_d = stream.clone_htod(&a32).unwrap();
        let b_d = stream.clone_htod(&b32).unwrap();
        let mut c_d = stream.clone_htod(&c32).unwrap();
        unsafe { blas.gemm_strided_batched(cfg32, &a_d, &b_d, &mut c_d) }.unwrap();
        let got = stream.clone_dtoh(&c_d).unwrap();
        for (g, w) in got.iter().zip(want.iter().chain(&want)) {
            assert!(
                (*g as f64 - w).abs() < 1e-3,
                "f32 transposes {ta} {tb}: {g} vs {w}"
            );
        }
    }
});

emulated!(
    cublas_strided_batched_keeps_each_matrix_of_the_batch_apart,
    {
        use cudarc::cublas::{
            sys::cublasOperation_t as Op, CudaBlas, Gemm, GemmConfig, StridedBatchedConfig,
        };
        let (_ctx, stream) = setup();
        let blas = CudaBlas::new(stream.clone()).unwrap();
        // Column-major A[b] is m×k, B[b] is k×n, C[b] is m×n; every matrix of the batch its own.
        let (batch, m, k, n) = (3usize, 5usize, 7usize, 4usize);
        let a: Vec<f64> = (0..batch * m * k)
            .map(|i| ((i * 7 % 13) as f64) - 6.0)
            .collect();
        let b: Vec<f64> = (0..batch * k * n)
            .map(|i| ((i * 5 % 11) as f64) - 5.0)
            .collect();
        // C[z] = A[za]·B[z], with A's stride `sa` (0: one A for the whole batch).
        let want = |sa: usize| -> Vec<f64> {
            let mut c = vec![0.0; batch * m * n];
            for z in 0..batch {
                for j in 0..n {
                    for i in 0..m {
                        c[z * m * n + i + j * m] = (0..k)
                            .map(|l| a[z * sa + i + l * m] * b[z * k * n + l + j * k])
                            .sum();
                    }
                }
            }
            c
        };
        fn gemm<T>(alpha: T, beta: T, [m, k, n]: [usize; 3]) -> GemmConfig<T> {
            GemmConfig {
                transa: Op::CUBLAS_OP_N,
                transb: Op::CUBLAS_OP_N,
                m: m as i32,
                n: n as i32,
                k: k as i32,
                alpha,
                lda: m as i32,
                ldb: k as i32,
                beta,
                ldc: m as i32,
            }
        }
        for sa in [m * k, 0] {
            // f64 (cublasDgemmStridedBatched) and f32 (cublasSgemmStridedBatched).
            let cfg = StridedBatchedConfig {
                gemm: gemm(1.0f64, 0.0, [m, k, n]),
                batch_size: batch as i32,
                stride_a: sa as i64,
                stride_b: (k * n) as i64,
                stride_c: (m * n) as i64,
            };
            let (a_d, b_d) = (
                stream.clone_htod(&a).unwrap(),
                stream.clone_htod(&b).unwrap(),
            );
            let mut c_d = stream.alloc_zeros::<f64>(batch * m * n).unwrap();
            unsafe { blas.gemm_strided_batched(cfg, &a_d, &b_d, &mut c_d) }.unwrap();
            assert_eq!(
                stream.clone_dtoh(&c_d).unwrap(),
                want(sa),
                "f64, stride of A {sa}"
            );
            let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
            let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
            let (a_d, b_d) = (
                stream.clone_htod(&a32).unwrap(),
                stream.clone_htod(&b32).unwrap(),
            );
            let mut c_d = stream.alloc_zeros::<f32>(batch * m * n).unwrap();
            let cfg32 = StridedBatchedConfig {
                gemm: gemm(1.0f32, 0.0, [m, k, n]),
                batch_size: batch as i32,
                stride_a: sa as i64,
                stride_b: (k * n) as i64,
                stride_c: (m * n) as i64,
            };
            unsafe { blas.gemm_strided_batched(cfg32, &a_d, &b_d, &mut c_d) }.unwrap();
            let got: Vec<f64> = stream
                .clone_dtoh(&c_d)
                .unwrap()
                .iter()
                .map(|&v| f64::from(v))
                .collect();
            assert_eq!(got, want(sa), "f32, stride of A {sa}");
            // An empty batch computes nothing.
            let mut untouched = stream.clone_htod(&vec![7.0f32; batch * m * n]).unwrap();
            let empty = StridedBatchedConfig {
                batch_size: 0,
                ..cfg32
            };
            unsafe { blas.gemm_strided_batched(empty, &a_d, &b_d, &mut untouched) }.unwrap();
            assert_eq!(
                stream.clone_dtoh(&untouched).unwrap(),
                vec![7.0f32; batch * m * n]
            );
        }
        // A stride of C one matrix too long: the last C[b] lies past the buffer, and the error
        // surfaces on the stream as on a GPU.
        let (a_d, b_d) = (
            stream.clone_htod(&a).unwrap(),
            stream.clone_htod(&b).unwrap(),
        );
        let mut c_d = stream.alloc_zeros::<f64>(batch * m * n).unwrap();
        let past = StridedBatchedConfig {
            gemm: gemm(1.0f64, 0.0, [m, k, n]),
            batch_size: batch as i32,
            stride_a: (m * k) as i64,
            stride_b: (k * n) as i64,
            stride_c: (2 * m * n) as i64,
        };
        let queued = unsafe { blas.gemm_strided_batched(past, &a_d, &b_d, &mut c_d) };
        assert!(
            queued.is_err() || stream.synchronize().is_err(),
            "C past its buffer is an error"
        );
    }
);

emulated!(threads_share_a_context_or_use_their_own, {
    let (ctx, _) = setup();
    let ptx = compile_ptx(common::NAIVE_MATMUL).unwrap();
    let module = ctx.load_module(ptx.clone()).unwrap();
    std::thread::scope(|s| {
        for t in 0..3usize {
            let ctx = ctx.clone();
            let module = module.clone();
            s.spawn(move || {
                ctx.bind_to_thread().unwrap();
                let stream = ctx.new_stream().unwrap();
                let f = module.load_function("matmul").unwrap();
                launch_and_check_matmul(&stream, &f, (8 + t, 9, 10), 16);
            });
        }
        let ptx = ptx.clone();
        s.spawn(move || {
            let own = CudaContext::new_non_primary(0, 0).unwrap();
            let stream = own.new_stream().unwrap();
            let module = own.load_module(ptx).unwrap();
            let f = module.load_function("matmul").unwrap();
            launch_and_check_matmul(&stream, &f, (5, 6, 7), 8);
        });
    });
});

emulated!(launch_overhead, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(SPIN).unwrap()).unwrap();
    let f = module.load_function("spin").unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let iters = 1i64;
    let mut times = Vec::new();
    for _ in 0..200 {
        let t0 = std::time::Instant::now();
        let mut l = stream.launch_builder(&f);
        l.arg(&mut out).arg(&iters);
        unsafe {
            l.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .unwrap();
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let t0 = std::time::Instant::now();
    stream.synchronize().unwrap();
    let sync = t0.elapsed().as_secs_f64() * 1e6;
    times.sort_by(f64::total_cmp);
    println!(
        "launch µs: min {:.1} median {:.1} max {:.1}; final sync {sync:.0} µs",
        times[0], times[100], times[199]
    );
});

const PRELUDE_TOUR: &str = r#"
#include <cuda_runtime.h>
#include <math_constants.h>
struct Pair { float2 a; int2 b; };
__device__ float helper(float x) { return __fdividef(x, 2.0f) + rsqrtf(4.0f); }
extern "C" __global__ void tour(float4* v, float* out, int* flags, unsigned* word, int n) {
    extern __shared__ float scratch[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    dim3 block = blockDim;
    scratch[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    float mirrored = scratch[block.x - 1 - threadIdx.x];
    if (i < n) {
        float4 p = v[i];
        Pair q = { make_float2(p.x, p.y), make_int2(1, 2) };
        float s = expf(0.0f) + logf(1.0f) + sqrtf(4.0f) + tanhf(0.0f) + powf(2.0f, 3.0f)
                + fabsf(-1.0f) + fmaxf(1.0f, 2.0f) + fminf(1.0f, 2.0f) + __expf(0.0f) + helper(2.0f);
        out[i] = s + q.a.x + q.b.y + p.w + min(3, 4) + max(1.0f, 0.5f) + mirrored - (float)(blockDim.x - 1 - threadIdx.x);
        atomicCAS(&flags[0], 0, 7);
        atomicExch(&flags[1], 5);
        atomicMin(&flags[2], -i);
        atomicAdd(word, 1u);
        assert(s > 0.0f && CUDART_PI_F > 3.0f);
    }
    if (i == 0) printf("tour kernel says hello from block %d\n", blockIdx.x);
}
"#;

emulated!(prelude_covers_the_cuda_c_the_labs_use, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(PRELUDE_TOUR).unwrap()).unwrap();
    let f = module.load_function("tour").unwrap();
    let n = 300usize;
    let v: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, 0.0, 0.0, 0.5]).collect();
    let v_d = stream.clone_htod(&v).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    let mut flags = stream.clone_htod(&[0i32, 0, 0]).unwrap();
    let mut word = stream.alloc_zeros::<u32>(1).unwrap();
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&v_d)
        .arg(&mut out)
        .arg(&mut flags)
        .arg(&mut word)
        .arg(&ni);
    unsafe {
        l.launch(LaunchConfig {
            grid_dim: (3, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 128 * 4,
        })
    }
    .unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    // 1 + 0 + 2 + 0 + 8 + 1 + 2 + 1 + 1 + (1 + 0.5) = 17.5; + x + 2 + 0.5 + 3 + 1
    for (i, o) in out.iter().enumerate() {
        assert!((o - (24.0 + i as f32)).abs() < 1e-4, "index {i}: {o}");
    }
    assert_eq!(
        stream.clone_dtoh(&flags).unwrap(),
        vec![7, 5, -(n as i32 - 1)]
    );
    assert_eq!(stream.clone_dtoh(&word).unwrap(), vec![n as u32]);
});

emulated!(
    device_assert_stops_the_launch,
    {
        let (ctx, stream) = setup();
        let src =
            "extern \"C\" __global__ void checked(int* x) {\n  assert(x[threadIdx.x] >= 0);\n}\n";
        let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
        let f = module.load_function("checked").unwrap();
        let mut x = stream.clone_htod(&[1i32, 2, -3, 4]).unwrap();
        let mut l = stream.launch_builder(&f);
        l.arg(&mut x);
        unsafe {
            l.launch(LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (4, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .unwrap();
        let err = stream.synchronize().expect_err("assert");
        assert_eq!(err.0, cudarc::driver::sys::CUresult::CUDA_ERROR_ASSERT);
        std::mem::forget((x, module, ctx));
    },
    |out: &std::process::Output| {
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("kernel `checked` block (0,0,0) thread (2,0,0): default_program:2"),
            "{stderr}"
        );
        assert!(
            stderr.contains("Assertion `x[threadIdx.x] >= 0` failed"),
            "{stderr}"
        );
    }
);

emulated!(
    unimplemented_entry_points_say_so,
    {
        use cudarc::driver::sys;
        let (_ctx, _stream) = setup();
        let mut pool = std::mem::MaybeUninit::uninit();
        let props = std::mem::MaybeUninit::zeroed();
        let r = unsafe { sys::cuMemPoolCreate(pool.as_mut_ptr(), props.as_ptr()) };
        assert_eq!(r, sys::CUresult::CUDA_ERROR_NOT_SUPPORTED);
        let r = unsafe {
            cudarc::cublas::sys::cublasSnrm2_v2(
                std::ptr::null_mut(),
                0,
                std::ptr::null(),
                1,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(
            r,
            cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED
        );
    },
    |out: &std::process::Output| {
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cuMemPoolCreate is not supported by the CPU emulator"),
            "{stderr}"
        );
        assert!(
            stderr.contains("cublasSnrm2_v2 is not supported"),
            "{stderr}"
        );
    }
);

emulated!(
    out_of_bounds_read_in_a_synchronising_kernel_is_reported,
    {
        let (ctx, stream) = setup();
        let module = ctx.load_module(compile_ptx(TILED).unwrap()).unwrap();
        let f = module.load_function("tiled").unwrap();
        // k claims 4096 columns, but A only has 16: the tile loads run off the end of A.
        let a = stream.alloc_zeros::<f32>(16 * 16).unwrap();
        let b = stream.alloc_zeros::<f32>(4096 * 16).unwrap();
        let mut c = stream.alloc_zeros::<f32>(16 * 16).unwrap();
        let (m, n, k) = (16i32, 16i32, 4096i32);
        let mut l = stream.launch_builder(&f);
        l.arg(&a).arg(&b).arg(&mut c).arg(&m).arg(&n).arg(&k);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        unsafe { l.launch(cfg) }.unwrap();
        let err = stream.synchronize().expect_err("fault");
        assert_eq!(
            err.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        );
        // Another context in the same process still works (workers recover from the fault).
        let other = CudaContext::new_non_primary(0, 0).unwrap();
        let s2 = other.new_stream().unwrap();
        let m2 = other.load_module(compile_ptx(TILED).unwrap()).unwrap();
        let f2 = m2.load_function("tiled").unwrap();
        launch_and_check_matmul(&s2, &f2, (16, 16, 16), 16);
        std::mem::forget((a, b, c, module, ctx));
    },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("kernel `tiled` block (0,0,0) thread ("),
            "{stderr}"
        );
        assert!(
            stderr.contains("read 4 bytes past the end of a 1024-byte allocation"),
            "{stderr}"
        );
    }
);

emulated!(context_synchronize_waits_for_destroyed_streams, {
    let (ctx, stream) = setup();
    let module = ctx.load_module(compile_ptx(SPIN).unwrap()).unwrap();
    let f = module.load_function("spin").unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    stream.synchronize().unwrap();
    let ptr = {
        let s = ctx.new_stream().unwrap();
        let iters = spin_iters(600.0);
        let (p, _sync) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut out, &s);
        let mut params = [
            &p as *const u64 as *mut std::ffi::c_void,
            &iters as *const i64 as *mut std::ffi::c_void,
        ];
        unsafe {
            cudarc::driver::result::launch_kernel(
                f.cu_function(),
                (1, 1, 1),
                (1, 1, 1),
                0,
                s.cu_stream(),
                &mut params,
            )
        }
        .unwrap();
        p
        // `s` is destroyed here, its kernel still running.
    };
    let t0 = std::time::Instant::now();
    ctx.synchronize().unwrap();
    let waited = t0.elapsed().as_secs_f64() * 1000.0;
    let mut host = [0.0f32];
    unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut host, ptr) }.unwrap();
    println!("context synchronize waited {waited:.0} ms");
    assert!(host[0] > 0.0 && waited > 100.0);
});

#[test]
fn the_device_can_be_hidden() {
    if common::is_child("the_device_can_be_hidden") {
        let err = CudaContext::new(0).expect_err("no device");
        assert_eq!(err.0, cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE);
        return;
    }
    let out = common::run_child_with(
        "the_device_can_be_hidden",
        &[("GPU_LABS_EMULATOR_DEVICES", "0")],
    );
    assert!(out.status.success());
}

emulated!(cublas_gemv, {
    use cudarc::cublas::{sys::cublasOperation_t as Op, CudaBlas, Gemv, GemvConfig};
    let (_ctx, stream) = setup();
    let blas = CudaBlas::new(stream.clone()).unwrap();
    let (m, n) = (7usize, 5usize);
    let a: Vec<f32> = (0..m * n).map(|i| (i % 4) as f32 - 1.5).collect();
    for trans in [false, true] {
        let (xl, yl) = if trans { (m, n) } else { (n, m) };
        let x: Vec<f32> = (0..xl).map(|i| i as f32 * 0.5).collect();
        let y0: Vec<f32> = (0..yl).map(|i| i as f32).collect();
        let want: Vec<f32> = (0..yl)
            .map(|i| {
                let s: f32 = (0..xl)
                    .map(|j| if trans { a[j + i * m] } else { a[i + j * m] } * x[j])
                    .sum();
                2.0 * s + 0.5 * y0[i]
            })
            .collect();
        let cfg = GemvConfig {
            trans: if trans {
                Op::CUBLAS_OP_T
            } else {
                Op::CUBLAS_OP_N
            },
            m: m as i32,
            n: n as i32,
            alpha: 2.0f32,
            lda: m as i32,
            incx: 1,
            beta: 0.5,
            incy: 1,
        };
        let (a_d, x_d) = (
            stream.clone_htod(&a).unwrap(),
            stream.clone_htod(&x).unwrap(),
        );
        let mut y_d = stream.clone_htod(&y0).unwrap();
        unsafe { blas.gemv(cfg, &a_d, &x_d, &mut y_d) }.unwrap();
        assert_close(&stream.clone_dtoh(&y_d).unwrap(), &want);
    }
});

const DIVERGENT_BARRIER: &str = r#"
extern "C" __global__ void half_sync(float* out) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    tile[t] = (float)t;
    if (t < 8) __syncthreads();
    out[t] = tile[63 - t];
}

extern "C" __global__ void two_barriers(float* out) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    tile[t] = (float)t;
    if (t < 8) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[t] = tile[63 - t];
}
"#;

/// Runs kernel `name` of [`DIVERGENT_BARRIER`] on `blocks` blocks of 64 threads, writing into
/// a buffer of 64 floats, and waits for it.
fn run_divergent_barrier_kernel(name: &str, blocks: u32) {
    let (ctx, stream) = setup();
    let module = ctx
        .load_module(compile_ptx(DIVERGENT_BARRIER).unwrap())
        .unwrap();
    let f = module.load_function(name).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&mut out);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
}

emulated!(
    a_syncthreads_only_some_threads_reach_is_reported,
    { run_divergent_barrier_kernel("half_sync", 2) },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("__syncthreads() was reached by 8 of 64 threads"),
            "{stderr}"
        );
        assert_eq!(
            stderr.matches("was reached by").count(),
            1,
            "once: {stderr}"
        );
    }
);

emulated!(
    threads_waiting_at_different_barriers_are_reported_with_their_lines,
    { run_divergent_barrier_kernel("two_barriers", 1) },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Lines of the kernel source as written (line 1 is the empty first line).
        assert!(
            stderr.contains("threads waited at different __syncthreads() (line 15 and line 17)"),
            "{stderr}"
        );
    }
);
