//! Deciding whether a real GPU is usable by trying it, not by finding a library: in a child
//! process with exactly a worker's environment, load the driver, find a device, compile a
//! one-line kernel with NVRTC, load and run it, and run a 2×2 product with cuBLAS. The first
//! step that fails is said in one line with what to do about it.
//!
//! The trial runs in a child because cudarc panics (and may abort) when a library is missing,
//! and because a worker's environment (the library links of [`super::libraries`], the
//! emulator's switches in tests) is not the supervisor's.

use std::ffi::OsString;
use std::process::{Command, ExitCode, Stdio};

/// The variable that turns any grader binary (the `grader` command or a lab's test binary)
/// into a trial: it runs the trial, prints one line and exits.
pub const TRIAL_VARIABLE: &str = "GPU_LABS_GPU_TRIAL";

/// The one-line kernel of the trial: each thread writes its index plus one.
const TRIAL_KERNEL: &str = r#"
extern "C" __global__ void gpu_labs_trial(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(i + 1);
}
"#;

/// Runs the trial in this process when asked (by [`TRIAL_VARIABLE`]) and returns the exit
/// code; `None` otherwise. Called first thing by every binary that can start workers.
pub fn serve_if_asked() -> Option<ExitCode> {
    std::env::var_os(TRIAL_VARIABLE).filter(|v| v == "1")?;
    match run_here() {
        Ok(device) => println!("ok\t{device}"),
        Err(line) => println!("failed\t{line}"),
    }
    Some(ExitCode::SUCCESS)
}

/// Runs the trial in a child `program` with `env` added: `Ok(device name)` or `Err(one line
/// saying what failed and what to do)`.
pub fn run(program: &std::path::Path, env: &[(OsString, OsString)]) -> Result<String, String> {
    let output = Command::new(program)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env(TRIAL_VARIABLE, "1")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start the GPU trial ({}): {e}", program.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("ok\t") || l.starts_with("failed\t"));
    match line.and_then(|l| l.split_once('\t')) {
        Some(("ok", device)) => Ok(device.to_string()),
        Some((_, why)) => Err(why.to_string()),
        None => Err(format!(
            "the CUDA libraries crashed the GPU trial ({}){}; use --gpu emulate",
            describe_exit(&output.status),
            last_line(&output.stderr)
        )),
    }
}

fn describe_exit(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (_, Some(signal)) => format!("killed by signal {signal}"),
        (Some(code), _) => format!("exit code {code}"),
        _ => "no exit status".into(),
    }
}

fn last_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default()
}

/// One step of the trial, with the panic cudarc raises for a missing library turned into
/// the step's error.
fn step<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    match result {
        Ok(r) => r,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("{what} failed: {}", first_sentence(&message)))
        }
    }
}

fn first_sentence(message: &str) -> &str {
    message.split(" - ").next().unwrap_or(message).trim()
}

/// The trial itself, in this process.
fn run_here() -> Result<String, String> {
    use super::libraries::Library;
    let missing = |library: Library| {
        format!(
            "{} not found: {}, or set {}=/path/to/{}.N, or use --gpu emulate",
            library.link_name(),
            library.install_hint(),
            library.path_variable(),
            library.link_name()
        )
    };
    // SAFETY: only asks the dynamic loader whether the library can be opened.
    if !step("loading libcuda", || {
        Ok(unsafe { cudarc::driver::sys::is_culib_present() })
    })? {
        return Err(missing(Library::Driver));
    }
    let count = step("starting the CUDA driver", || {
        cudarc::driver::CudaContext::device_count().map_err(|e| {
            format!("the CUDA driver did not start ({e}): check `nvidia-smi`, or use --gpu emulate")
        })
    })?;
    if count < 1 {
        return Err("the CUDA driver sees no GPU (is CUDA_VISIBLE_DEVICES empty? does `nvidia-smi` list one?); use --gpu emulate".into());
    }
    let ctx = step("opening GPU 0", || {
        cudarc::driver::CudaContext::new(0).map_err(|e| {
            format!(
                "GPU 0 cannot be opened ({e}): is another program holding it in exclusive mode?"
            )
        })
    })?;
    let name = ctx.name().unwrap_or_else(|_| "GPU 0".into());
    // SAFETY: as above.
    if !step("loading libnvrtc", || {
        Ok(unsafe { cudarc::nvrtc::sys::is_culib_present() })
    })? {
        return Err(missing(Library::Nvrtc));
    }
    let ptx = step("compiling with NVRTC", || {
        cudarc::nvrtc::compile_ptx(TRIAL_KERNEL)
            .map_err(|e| format!("NVRTC could not compile a one-line kernel ({e}); reinstall the CUDA toolkit's NVRTC, or use --gpu emulate"))
    })?;
    let module = step("loading a module", || {
        ctx.load_module(ptx).map_err(|e| {
            let e = e.to_string();
            if e.contains("UNSUPPORTED_PTX_VERSION") {
                format!(
                    "the NVIDIA driver (CUDA {}) is older than NVRTC (CUDA {}), so it cannot load the kernels NVRTC makes: update the driver, or point GPU_LABS_LIBNVRTC at an NVRTC no newer than the driver, or use --gpu emulate",
                    driver_version(),
                    nvrtc_version()
                )
            } else {
                format!("the driver could not load a compiled kernel ({e}); use --gpu emulate")
            }
        })
    })?;
    let stream = ctx.default_stream();
    step("running a kernel", || run_kernel(&module, &stream))?;
    // SAFETY: as above.
    if !step("loading libcublas", || {
        Ok(unsafe { cudarc::cublas::sys::is_culib_present() })
    })? {
        return Err(missing(Library::Cublas));
    }
    step("running cuBLAS", || run_gemm(&stream))?;
    Ok(name)
}

fn run_kernel(
    module: &std::sync::Arc<cudarc::driver::CudaModule>,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
) -> Result<(), String> {
    use cudarc::driver::{LaunchConfig, PushKernelArg};
    let f = module
        .load_function("gpu_labs_trial")
        .map_err(|e| format!("the trial kernel is missing from its module ({e})"))?;
    let n = 64i32;
    let mut out = stream
        .alloc_zeros::<f32>(n as usize)
        .map_err(|e| format!("cannot allocate GPU memory ({e})"))?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&mut out).arg(&n);
    // SAFETY: the kernel writes `n` floats of an `n`-float buffer.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }
        .map_err(|e| format!("a one-line kernel failed to launch ({e}); use --gpu emulate"))?;
    let host = stream
        .clone_dtoh(&out)
        .map_err(|e| format!("a one-line kernel failed ({e}); use --gpu emulate"))?;
    if host.iter().enumerate().any(|(i, v)| *v != (i + 1) as f32) {
        return Err("a one-line kernel ran but wrote wrong values: the GPU or its driver is not working; use --gpu emulate".into());
    }
    Ok(())
}

fn run_gemm(stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> Result<(), String> {
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
    let blas = CudaBlas::new(stream.clone())
        .map_err(|e| format!("cuBLAS did not start ({e}); use --gpu emulate"))?;
    let a = stream
        .clone_htod(&[1.0f32, 2.0, 3.0, 4.0])
        .map_err(|e| format!("cannot copy to the GPU ({e})"))?;
    let mut c = stream
        .alloc_zeros::<f32>(4)
        .map_err(|e| format!("cannot allocate GPU memory ({e})"))?;
    let config = GemmConfig {
        transa: cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N,
        transb: cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N,
        m: 2,
        n: 2,
        k: 2,
        alpha: 1.0f32,
        lda: 2,
        ldb: 2,
        beta: 0.0f32,
        ldc: 2,
    };
    // SAFETY: 2×2 operands and result, as the config says.
    unsafe { blas.gemm(config, &a, &a, &mut c) }
        .map_err(|e| format!("a 2×2 cuBLAS product failed ({e}); use --gpu emulate"))?;
    let host = stream
        .clone_dtoh(&c)
        .map_err(|e| format!("a 2×2 cuBLAS product failed ({e}); use --gpu emulate"))?;
    // Column-major [[1,3],[2,4]] squared is [[7,15],[10,22]]: 7, 10, 15, 22.
    if host != [7.0, 10.0, 15.0, 22.0] {
        return Err(format!(
            "a 2×2 cuBLAS product gave {host:?}, not [7, 10, 15, 22]: cuBLAS is not working; use --gpu emulate"
        ));
    }
    Ok(())
}

fn driver_version() -> String {
    let mut v = 0i32;
    // SAFETY: writes one int.
    let ok = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    if ok == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("{}.{}", v / 1000, (v % 1000) / 10)
    } else {
        "unknown".into()
    }
}

fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: writes two ints.
    let ok = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if ok == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        format!("{major}.{minor}")
    } else {
        "unknown".into()
    }
}
