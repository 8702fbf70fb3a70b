//! Kernels run as native code in the graded process: they get no more than a GPU kernel
//! could do. A kernel that uses inline assembly or a host function fails to compile, with the
//! log naming the problem; CUDA's device functions (math, printf, atomics) still work.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx, Ptx};

/// Compiles `src`, expecting NVRTC_ERROR_COMPILATION with a log containing each of `expect`.
fn refused(src: &str, expect: &[&str]) -> String {
    match compile_ptx(src) {
        Ok(_) => panic!("compiled:\n{src}"),
        Err(cudarc::nvrtc::CompileError::CompileError { nvrtc, log, .. }) => {
            let log = log.to_string_lossy().into_owned();
            println!("{log}");
            assert_eq!(
                nvrtc.0,
                cudarc::nvrtc::sys::nvrtcResult::NVRTC_ERROR_COMPILATION
            );
            for e in expect {
                assert!(log.contains(e), "expected {e:?} in the log:\n{log}");
            }
            log
        }
        Err(e) => panic!("{e:?}"),
    }
}

const HOST_FUNCTION: &str = "which a GPU cannot run; a kernel may only use CUDA's device functions";

const FOPEN: &str = r#"
#include <cstdio>
extern "C" __global__ void k(int* x) {
    x[threadIdx.x] = fopen("/etc/passwd", "r") != nullptr;
}
"#;

emulated!(kernel_cannot_open_files, {
    refused(
        FOPEN,
        &[
            "default_program: error: the kernel calls the host function `fopen`",
            HOST_FUNCTION,
        ],
    );
    // Again: the refused object was not cached, and a cache hit is checked as well.
    refused(FOPEN, &["the host function `fopen`"]);
});

emulated!(kernel_cannot_declare_host_functions, {
    refused(
        r#"
extern "C" int kill(int, int);
extern "C" __global__ void k(int* x) { x[0] = kill(x[1], 9); }
"#,
        &["the host function `kill`", HOST_FUNCTION],
    );
});

emulated!(kernel_cannot_reach_host_functions_by_weakref, {
    refused(
        r#"
static int my_pid() __attribute__((weakref("getpid")));
extern "C" __global__ void k(int* x) { x[0] = my_pid(); }
"#,
        &["`getpid`", HOST_FUNCTION],
    );
});

emulated!(kernel_cannot_map_memory, {
    // The prelude's fiber stacks come from the emulator: mmap is no more a kernel's than open.
    refused(
        r#"
#include <sys/mman.h>
extern "C" __global__ void k(int* x) {
    __syncthreads();
    x[0] = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED;
}
"#,
        &["the host function `mmap`", HOST_FUNCTION],
    );
});

emulated!(kernel_cannot_read_the_environment, {
    refused(
        r#"
#include <cstdlib>
extern "C" __global__ void k(char* x) {
    const char* home = std::getenv("HOME");
    x[0] = home ? home[0] : 0;
}
"#,
        &["the host function `getenv`", HOST_FUNCTION],
    );
});

emulated!(kernel_cannot_use_inline_assembly, {
    refused(
        "extern \"C\" __global__ void k(int* x) {\n    asm volatile(\"syscall\");\n}\n",
        &["default_program(2): error: inline assembly (asm) cannot run on the gpu-labs emulator"],
    );
    // CUDA's inline PTX gets the same explanation.
    refused(
        "extern \"C\" __global__ void lane(int* x) {\n    int l;\n    \
         __asm__(\"mov.u32 %0, %%laneid;\" : \"=r\"(l));\n    x[0] = l;\n}\n",
        &["default_program(3): error: inline assembly (__asm__)"],
    );
    // Spelled so that no scan of the text sees it: the compiler refuses it.
    refused(
        "#define CAT(a, b) a##b\nextern \"C\" __global__ void k(int* x) {\n    \
         CAT(__as, m__)(\"syscall\");\n}\n",
        &["poisoned", "kernels cannot use inline assembly"],
    );
});

emulated!(kernel_cannot_place_code_in_a_section, {
    refused(
        "__attribute__((section(\".text\"))) const unsigned char code[] = {0x0f, 0x05, 0xc3};\n\
         extern \"C\" __global__ void k(int* x) { ((void (*)())code)(); }\n",
        &["default_program(1): error: the attribute `section` is not allowed"],
    );
});

emulated!(
    forged_module_text_cannot_load_an_object_nvrtc_did_not_produce,
    {
        // An object built outside NVRTC that imports nothing (so the symbol check alone would
        // pass it: its code could still make system calls or rewrite the emulator's state),
        // named by a module text.
        let dir = common::profile_dir().join(format!("forged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cpp = dir.join("evil.cpp");
        let so = dir.join("evil.so");
        std::fs::write(
            &cpp,
            "extern \"C\" int k() { return 7; }\n\
             extern \"C\" const unsigned __gl_module_abi = 4;\n",
        )
        .unwrap();
        let st = std::process::Command::new("c++")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&cpp)
            .status()
            .unwrap();
        assert!(st.success());
        let text = format!(
            "// gpu-labs CPU emulator module: not PTX\n// so: {}\n// kernels: k\n// globals: \n",
            so.display()
        );
        let ctx = CudaContext::new(0).unwrap();
        let err = ctx.load_module(Ptx::from_src(text)).unwrap_err();
        println!("{err:?}");
        let _ = std::fs::remove_dir_all(&dir);
    },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains("1 passed"),
            "the child did not run the test"
        );
        assert!(
            stderr.contains("NVRTC did not produce") && stdout.contains("INVALID_PTX"),
            "{stderr}"
        );
    }
);

const DEVICE_FUNCTIONS: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = expf(in[i]) + sqrtf(in[i] * in[i]);
        atomicAdd(count, 1);
        if (i == 0) printf("device functions kernel: n = %d\n", n);
    }
}
"#;

emulated!(
    kernel_with_math_printf_and_atomics_still_runs,
    {
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let module = ctx
            .load_module(compile_ptx(DEVICE_FUNCTIONS).unwrap())
            .unwrap();
        let f = module.load_function("k").unwrap();
        let n = 200usize;
        let input: Vec<f32> = (0..n).map(|i| i as f32 / 100.0).collect();
        let in_d = stream.clone_htod(&input).unwrap();
        let mut out = stream.alloc_zeros::<f32>(n).unwrap();
        let mut count = stream.alloc_zeros::<i32>(1).unwrap();
        let ni = n as i32;
        let mut l = stream.launch_builder(&f);
        l.arg(&in_d).arg(&mut out).arg(&mut count).arg(&ni);
        unsafe { l.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
        let out = stream.clone_dtoh(&out).unwrap();
        for (i, (o, x)) in out.iter().zip(&input).enumerate() {
            assert!((o - (x.exp() + x)).abs() < 1e-4, "index {i}: {o}");
        }
        assert_eq!(stream.clone_dtoh(&count).unwrap(), vec![n as i32]);
    },
    |out: &std::process::Output| {
        assert!(out.status.success(), "child failed: {:?}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("1 passed"),
            "the child did not run the test"
        );
        assert!(
            stdout.contains("device functions kernel: n = 200"),
            "{stdout}"
        );
    }
);

/// `__popc` and 128-bit division compile to calls of the compiler's runtime helpers
/// (`__popcountdi2`, `__udivmodti4`) on a portable x86-64 target: allowed, and right.
const COMPILER_HELPERS: &str = r#"
extern "C" __global__ void bits(const unsigned long long* in, long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long x = in[i];
        __int128 wide = (__int128)x * 1000003 + 7;
        out[4 * i] = __popc((unsigned)x);
        out[4 * i + 1] = __popcll(x);
        out[4 * i + 2] = (long long)(wide / 977);
        out[4 * i + 3] = (long long)(wide % 977);
    }
}
"#;

emulated!(kernel_using_compiler_runtime_helpers_runs, {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx
        .load_module(compile_ptx(COMPILER_HELPERS).unwrap())
        .unwrap();
    let f = module.load_function("bits").unwrap();
    let input: Vec<u64> = (0..100u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let n = input.len() as i32;
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<i64>(4 * input.len()).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out).arg(&n);
    unsafe { l.launch(LaunchConfig::for_num_elems(input.len() as u32)) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    for (i, &x) in input.iter().enumerate() {
        let wide = i128::from(x) * 1_000_003 + 7;
        let want = [
            i64::from((x as u32).count_ones()),
            i64::from(x.count_ones()),
            (wide / 977) as i64,
            (wide % 977) as i64,
        ];
        assert_eq!(out[4 * i..4 * i + 4], want, "index {i}");
    }
});

emulated!(kernel_cannot_run_a_shell_even_next_to_popc, {
    refused(
        r#"
#include <cstdlib>
extern "C" __global__ void k(unsigned* x) { x[0] = __popc(x[1]) + system("true"); }
"#,
        &["the host function `system`", HOST_FUNCTION],
    );
});
