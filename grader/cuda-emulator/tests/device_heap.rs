//! Device code's own C library: `malloc`/`free`, `new`/`delete` and `memcpy`/`memmove`/
//! `memset`/`memcmp`. The prelude defines them inside each module, so every call a kernel makes,
//! however it is spelled, binds to them and never to the C library of the process the kernel
//! runs in (the grader's worker):
//!
//! - the heap is device memory the emulator allocates (CUDA's `cudaLimitMallocHeapSize`, 8 MiB
//!   by default): a checked or confined kernel may use what `malloc` gave it, a block lives from
//!   one launch to the next until a kernel frees it, and `free` of anything `malloc` did not
//!   return (a host address, a `cuMemAlloc` buffer, a block freed already) stops the launch with
//!   a report instead of handing the C library's `free` a pointer of the kernel's choosing;
//! - a copy is confined like a load or a store, also when the source undefines the prelude's
//!   names (`#undef memcpy`), calls a builtin, or lets the compiler copy a large struct (those
//!   attacks are with the others on host memory, in `tests/host_memory.rs`; their honest twin,
//!   every spelling between device buffers, is here).
//!
//! Every honest kernel runs plain, checked and confined; every bad free is stopped in each.

mod common;

use cudarc::driver::{CudaContext, DevicePtrMut, DriverError, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const N: usize = 1000;

/// The three kinds of build a kernel runs in: plain (a student's own run), checked
/// (correctness items), confined (timed items).
const MODES: [&[(&str, &str)]; 3] = [
    &[],
    &[("GPU_LABS_EMULATOR_RACECHECK", "1")],
    &[("GPU_LABS_EMULATOR_CONFINE", "1")],
];

/// Launches `src`'s kernel `k(a, dst, N)` over `N` threads, `dst` a fresh device buffer of
/// `N` zeros, and waits for it: what `dst` then holds, or the launch's error.
fn run(src: &str, a: u64) -> Result<Vec<f32>, DriverError> {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
    let module = ctx.load_module(compile_ptx(src).unwrap()).unwrap();
    let f = module.load_function("k").unwrap();
    let n = N as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&a).arg(&mut dst).arg(&n);
    unsafe { l.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    stream.synchronize()?;
    stream.clone_dtoh(&dst)
}

/// Runs test `name` in a child of each mode; each must pass. Returns their stderrs.
fn in_every_mode(name: &str) -> Vec<String> {
    MODES
        .iter()
        .map(|vars| {
            let out = common::run_child_with(name, vars);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{vars:?}: child failed: {:?}",
                out.status
            );
            assert!(stdout.contains("1 passed"), "{vars:?}: {stdout}");
            String::from_utf8_lossy(&out.stderr).into_owned()
        })
        .collect()
}

/// The report lines of the emulator about kernel `kernel`.
fn reports<'a>(stderr: &'a str, kernel: &str) -> Vec<&'a str> {
    let head = format!("gpu-labs emulator: kernel `{kernel}`");
    stderr.lines().filter(|l| l.starts_with(&head)).collect()
}

macro_rules! in_every_mode {
    ($name:ident, $child:block, $check:expr) => {
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                $child;
                return;
            }
            let check: fn(&str) = $check;
            for stderr in in_every_mode(stringify!($name)) {
                check(&stderr);
            }
        }
    };
}

/// Each thread takes a block of its own from the heap, fills it, sums it and frees it; the
/// same with `new[]`/`delete[]` and with one `new`/`delete` of a struct.
const PER_THREAD: &str = r#"
struct Pair { float a, b; };
extern "C" __global__ void k(unsigned long long, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float* m = (float*)malloc(4 * sizeof(float));
    float* v = new float[4];
    Pair* p = new Pair{0.5f, 0.25f};
    if (!m || !v || !p) { dst[i] = -1.0f; return; }
    for (int j = 0; j < 4; j++) { m[j] = i + j; v[j] = 2.0f * j; }
    dst[i] = m[0] + m[1] + m[2] + m[3] + v[3] + p->a + p->b;
    free(m);
    delete[] v;
    delete p;
}
"#;

in_every_mode!(
    each_thread_allocates_uses_and_frees_its_own_block,
    {
        let got = run(PER_THREAD, 0).unwrap();
        for (i, &v) in got.iter().enumerate() {
            assert_eq!(v, 4.0 * i as f32 + 6.0 + 6.0 + 0.75, "thread {i}");
        }
    },
    |stderr| assert!(reports(stderr, "k").is_empty(), "{stderr}")
);

/// One launch allocates and keeps the block in a `__device__` pointer, the next reads it and
/// frees it: the heap outlives a launch, as on a GPU.
const ACROSS_LAUNCHES: &str = r#"
__device__ float* kept;
extern "C" __global__ void fill(unsigned long long, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        kept = (float*)malloc(n * sizeof(float));
        if (kept) for (int j = 0; j < n; j++) kept[j] = 3.0f * j;
    }
}
extern "C" __global__ void drain(unsigned long long, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = kept ? kept[i] : -1.0f;
}
extern "C" __global__ void release(unsigned long long, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) { free(kept); kept = nullptr; }
}
"#;

in_every_mode!(
    a_block_lives_from_one_launch_to_the_next_until_freed,
    {
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let mut dst = stream.alloc_zeros::<f32>(N).unwrap();
        let d = dst.device_ptr_mut(&stream).0;
        let module = ctx
            .load_module(compile_ptx(ACROSS_LAUNCHES).unwrap())
            .unwrap();
        for name in ["fill", "drain", "release"] {
            let f = module.load_function(name).unwrap();
            let n = N as i32;
            let zero = 0u64;
            let mut l = stream.launch_builder(&f);
            l.arg(&zero).arg(&d).arg(&n);
            unsafe { l.launch(LaunchConfig::for_num_elems(N as u32)) }.unwrap();
        }
        stream.synchronize().unwrap();
        let got = stream.clone_dtoh(&dst).unwrap();
        for (i, &v) in got.iter().enumerate() {
            assert_eq!(v, 3.0 * i as f32, "element {i}");
        }
    },
    |stderr| {
        for k in ["fill", "drain", "release"] {
            assert!(reports(stderr, k).is_empty(), "{stderr}");
        }
    }
);

/// More than the heap holds (8 MiB by default) gives a null pointer, as on a GPU, and what
/// was freed can be taken again.
const BEYOND_THE_HEAP: &str = r#"
extern "C" __global__ void k(unsigned long long, float* dst, int n) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    void* big = malloc(9u << 20);
    void* a = malloc(6u << 20);
    void* b = malloc(6u << 20);
    dst[0] = big ? 1.0f : 0.0f;
    dst[1] = a ? 1.0f : 0.0f;
    dst[2] = b ? 1.0f : 0.0f;
    free(a);
    void* c = malloc(6u << 20);
    dst[3] = c ? 1.0f : 0.0f;
    free(c);
    free(b);
    free(nullptr);
}
"#;

in_every_mode!(
    more_than_the_heap_holds_is_a_null_pointer,
    {
        let got = run(BEYOND_THE_HEAP, 0).unwrap();
        assert_eq!(&got[..4], &[0.0, 1.0, 0.0, 1.0]);
    },
    |stderr| assert!(reports(stderr, "k").is_empty(), "{stderr}")
);

/// Frees of what the heap did not hand out: each stops the launch with
/// CUDA_ERROR_ILLEGAL_ADDRESS and a report naming the address, in every mode, and the host
/// buffer the address belongs to is left as it was.
fn bad_free(src: &str) {
    let host: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let e = run(src, host.as_ptr() as u64 + 64).expect_err("the launch must fail");
    assert_eq!(
        e.0,
        cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        "{e:?}"
    );
    assert!(host.iter().enumerate().all(|(i, &v)| v == i as f32));
}

fn a_refused_free(stderr: &str) {
    let r = reports(stderr, "k");
    assert_eq!(r.len(), 1, "{stderr}");
    assert!(r[0].contains("freed"), "{}", r[0]);
    assert!(
        r[0].contains("an address that malloc or new in a kernel did not return"),
        "{}",
        r[0]
    );
    assert!(stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{stderr}");
}

in_every_mode!(
    free_of_a_host_address_stops_the_launch,
    {
        bad_free(
            r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) free((void*)src);
}
"#,
        )
    },
    a_refused_free
);

in_every_mode!(
    delete_of_a_host_address_stops_the_launch,
    {
        bad_free(
            r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) delete[] (float*)src;
}
"#,
        )
    },
    a_refused_free
);

in_every_mode!(
    free_of_a_device_buffer_stops_the_launch,
    {
        bad_free(
            r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) free(dst);
}
"#,
        )
    },
    a_refused_free
);

in_every_mode!(
    a_second_free_of_one_block_stops_the_launch,
    {
        bad_free(
            r#"
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        void* p = malloc(64);
        free(p);
        free(p);
    }
}
"#,
        )
    },
    a_refused_free
);

// A plain build calls the prelude's `free`, which refuses the address; a checked or confined
// one stops at the call through a pointer, before any `free`.
in_every_mode!(
    free_through_a_pointer_to_the_function_stops_the_launch,
    {
        bad_free(
            r#"
#undef free
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    void (*volatile release)(void*) = &::free;
    if (blockIdx.x == 0 && threadIdx.x == 0) release((void*)src);
}
"#,
        )
    },
    |stderr| {
        let r = reports(stderr, "k");
        if r.len() == 1 && r[0].contains("called a function through a pointer") {
            assert!(stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{stderr}");
        } else {
            a_refused_free(stderr);
        }
    }
);

/// The honest twins of the copies: device to device, every spelling, right values, silent.
const COPIES: &str = r#"
#include <cstring>
struct Big { float v[250]; };
extern "C" __global__ void k(unsigned long long src, float* dst, int n) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    float* tmp = (float*)malloc(n * sizeof(float));
    if (!tmp) return;
    for (int j = 0; j < n; j++) tmp[j] = 0.5f * j;
    memcpy(dst, tmp, 250 * sizeof(float));
    std::memmove(dst + 250, tmp + 250, 250 * sizeof(float));
    *(Big*)(dst + 500) = *(const Big*)(tmp + 500);
    memset(dst + 750, 0, 250 * sizeof(float));
    for (int j = 750; j < n; j++) dst[j] += memcmp(tmp, tmp, 16) == 0 ? 0.5f * j : -1.0f;
    free(tmp);
}
"#;

in_every_mode!(
    copies_between_device_buffers_run_silent,
    {
        let got = run(COPIES, 0).unwrap();
        for (i, &v) in got.iter().enumerate() {
            assert_eq!(v, 0.5 * i as f32, "element {i}");
        }
    },
    |stderr| assert!(reports(stderr, "k").is_empty(), "{stderr}")
);
