//! Where GPU items run: the GPU mode (`auto`, `real`, `emulate`, `off`), how it resolves to a
//! backend on this machine, and what a worker needs to use it. Worker-side helpers for the
//! grader's own device work live in [`busy`] and [`counters`].

pub use grader_worker::gpu::{busy, counters, student};
pub mod libraries;
pub mod trace;
pub mod trial;

use crate::protocol::Backend;
use std::ffi::OsString;

/// The GPU mode asked for on the command line (`--gpu`) or as a test-binary argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum GpuMode {
    /// A real GPU when one passes the trial (driver, device, NVRTC, cuBLAS), else the emulator.
    #[default]
    Auto,
    /// A real GPU, or an error.
    Real,
    /// The grader's CPU emulator, even where a GPU exists.
    Emulate,
    /// No GPU: GPU items are skipped.
    Off,
}

impl std::str::FromStr for GpuMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(GpuMode::Auto),
            "real" => Ok(GpuMode::Real),
            "emulate" => Ok(GpuMode::Emulate),
            "off" => Ok(GpuMode::Off),
            other => Err(format!(
                "--gpu takes auto, real, emulate or off, not `{other}`"
            )),
        }
    }
}

/// Why GPU items cannot run as asked.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// `--gpu real` on a machine without one.
    #[error("--gpu real: the GPU cannot be used here: {0}")]
    NoRealGpu(String),
    /// The emulator could not be prepared.
    #[error("the GPU emulator is not available: {0}")]
    Emulator(String),
}

/// Resolves the mode on this machine. `real` and `auto` decide from a trial of the whole
/// chain a GPU item uses ([`trial`]): `real` stops with the trial's line, `auto` falls back to
/// the emulator (the line is in [`backend_for`]'s label).
pub fn resolve(mode: GpuMode) -> Result<Backend, GpuError> {
    match mode {
        GpuMode::Off => Ok(Backend::NoGpu),
        GpuMode::Emulate => Ok(Backend::Emulated),
        GpuMode::Real => real_gpu()
            .map(|_| Backend::Real)
            .map_err(GpuError::NoRealGpu),
        GpuMode::Auto => Ok(if real_gpu().is_ok() {
            Backend::Real
        } else {
            Backend::Emulated
        }),
    }
}

/// The name of device 0 when the real GPU passed its trial, else the trial's one line.
/// With `GPU_LABS_EMULATOR_AS_REAL=1` the trial runs on the emulator (with any of its
/// switches), as everything else "real" does in that test mode.
pub fn real_gpu() -> Result<String, String> {
    real_setup().map(|s| s.device.clone())
}

/// A real GPU that passed its trial, and how workers use it.
struct RealSetup {
    /// The name of device 0.
    device: String,
    /// A worker's environment: the libraries found (or the emulator posing as them), with
    /// the tracer in front when it passed the trial too.
    env: Vec<(OsString, OsString)>,
    /// The tracer in front of the libraries, or why there is none.
    traced: Result<std::path::PathBuf, String>,
}

/// The real GPU's set-up, tried once per process: the trial creates a CUDA context and
/// compiles a kernel (about a second on a real GPU).
fn real_setup() -> Result<&'static RealSetup, String> {
    static SETUP: std::sync::OnceLock<Result<RealSetup, String>> = std::sync::OnceLock::new();
    SETUP
        .get_or_init(try_real_gpu)
        .as_ref()
        .map_err(Clone::clone)
}

fn try_real_gpu() -> Result<RealSetup, String> {
    if std::env::var_os(trial::TRIAL_VARIABLE).is_some() {
        return Err("a GPU trial cannot start another".into());
    }
    let (plain, libraries) = if emulator_as_real() {
        let emulator = posing_emulator().map_err(|e| e.to_string())?;
        let so = emulator
            .lib_dir()
            .join(crate::emulate::LIB_NAMES[0])
            .canonicalize()
            .map_err(|e| format!("the emulator is missing: {e}"))?;
        let has_cublas = !crate::emulate::condition_asked("no-cublas");
        (
            emulator.env_posing_as_real(),
            has_cublas.then(|| (so.clone(), so)),
        )
    } else {
        let found = libraries::find();
        if let Some(problem) = found.problems.first() {
            return Err(problem.clone());
        }
        // SAFETY: only asks the dynamic loader whether the library can be opened.
        let driver_here = found.path(libraries::Library::Driver).is_some()
            || unsafe { cudarc::driver::sys::is_culib_present() };
        if !driver_here {
            return Err(
                "libcuda.so not found: install the NVIDIA driver, or use --gpu emulate".into(),
            );
        }
        let mut env = libraries::worker_env(&found, &crate::emulate::cache_dir())
            .map_err(|e| format!("cannot link the CUDA libraries for the workers: {e}"))?;
        // Lazy loading (the default since CUDA 12.2) loads a kernel at its first launch,
        // which may synchronize the context: a timer without a synchronize of its own could
        // then pass. Eager loading does all of it in `load_module`, before any clock.
        env.push(("CUDA_MODULE_LOADING".into(), "EAGER".into()));
        let pair = found
            .path(libraries::Library::Driver)
            .zip(found.path(libraries::Library::Cublas))
            .map(|(d, c)| (d.to_path_buf(), c.to_path_buf()));
        (env, pair)
    };
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this program to run the GPU trial: {e}"))?;
    let is_emulator = |name: &str| name.contains("gpu-labs") && !emulator_as_real();
    let traced = libraries
        .ok_or_else(|| "cuBLAS was not found".to_string())
        .and_then(|(driver, cublas)| {
            let tracer = trace::library()?;
            let mut env = plain.clone();
            trace::put_in_front(
                &mut env,
                &tracer,
                &driver,
                &cublas,
                &crate::emulate::cache_dir(),
            )
            .map_err(|e| format!("cannot link the tracer for the workers: {e}"))?;
            Ok((tracer, env))
        });
    let traced = match traced {
        Ok((tracer, env)) => match trial::run(&program, &env) {
            Ok(device) => {
                if is_emulator(&device) {
                    return Err(format!("`{device}` is the emulator"));
                }
                return Ok(RealSetup {
                    device,
                    env,
                    traced: Ok(tracer),
                });
            }
            Err(line) => format!("the GPU trial failed with the tracer in front ({line})"),
        },
        Err(why) => why,
    };
    // Untraced: the libraries alone.
    let device = trial::run(&program, &plain)?;
    if is_emulator(&device) {
        // The emulator is already in place (`grader emulate -- …`): not real hardware.
        return Err(format!("`{device}` is the emulator"));
    }
    Ok(RealSetup {
        device,
        env: plain,
        traced: Err(traced),
    })
}

/// Whether a real GPU's device work is traced, or why not (`None`: no real GPU).
pub fn real_traced() -> Option<Result<std::path::PathBuf, String>> {
    real_setup().ok().map(|s| s.traced.clone())
}

/// The environment a worker needs for `backend`.
pub fn worker_env(backend: Backend) -> Result<Vec<(OsString, OsString)>, GpuError> {
    match backend {
        Backend::Emulated => emulator_env(),
        Backend::Real => real_setup()
            .map(|s| s.env.clone())
            .map_err(GpuError::NoRealGpu),
        Backend::NoGpu => Ok(hidden_gpus_env()),
    }
}

/// Environment that hides every GPU from a worker: real ones (the CUDA driver lists no
/// device when `CUDA_VISIBLE_DEVICES` is empty) and the emulator, should the worker inherit
/// it (as under `grader emulate`).
///
/// The variables alone would not hold: a submission may change its own environment before
/// its first CUDA call (`std::env::set_var` is safe Rust). So the worker's library path also
/// loses every folder that holds a CUDA library (the emulator's included): the dynamic loader
/// reads that path once, when the process starts, and the sandbox lets the worker read only
/// the folders on it, so no GPU library can be loaded at all.
fn hidden_gpus_env() -> Vec<(OsString, OsString)> {
    let mut env = no_device_variables();
    if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
        env.push(("LD_LIBRARY_PATH".into(), without_cuda_libraries(&path)));
    }
    env
}

/// A library path with every folder that holds a CUDA library left out.
fn without_cuda_libraries(path: &std::ffi::OsStr) -> OsString {
    let kept: Vec<std::path::PathBuf> = std::env::split_paths(path)
        .filter(|dir| !holds_cuda_library(dir))
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

/// The variables that make the CUDA driver and the emulator list no device.
fn no_device_variables() -> Vec<(OsString, OsString)> {
    vec![
        ("CUDA_VISIBLE_DEVICES".into(), "".into()),
        ("GPU_LABS_EMULATOR_DEVICES".into(), "0".into()),
    ]
}

/// Whether `dir` holds one of the CUDA libraries cudarc loads (or the emulator standing in
/// for them).
fn holds_cuda_library(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        crate::emulate::LIB_NAMES
            .iter()
            .any(|lib| name == *lib || name.starts_with(&format!("{lib}.")))
            || name == crate::emulate::CDYLIB
    })
}

/// Test hook: with `GPU_LABS_EMULATOR_AS_REAL=1`, `--gpu real` grades as on a real GPU while
/// running on the emulator, so the code only a real GPU reaches (GPU speedups) runs in tests
/// on machines without one. The figures it gives mean nothing and reports say so.
pub fn emulator_as_real() -> bool {
    std::env::var_os("GPU_LABS_EMULATOR_AS_REAL").is_some_and(|v| v == "1")
}

/// Whether resolving `mode` will build the emulator first (a pause worth announcing). On a
/// real GPU the emulator's build gives the tracer ([`trace`]), which the trial uses.
pub fn will_build_emulator(mode: GpuMode) -> bool {
    let tracing = std::env::var(trace::SWITCH).map_or(true, |v| v != "off");
    let wants_emulator = match mode {
        GpuMode::Off => false,
        GpuMode::Real => tracing || emulator_as_real(),
        GpuMode::Emulate | GpuMode::Auto => true,
    };
    wants_emulator && crate::emulate::needs_build()
}

/// The emulator's environment, prepared once per process.
fn emulator_env() -> Result<Vec<(OsString, OsString)>, GpuError> {
    static ENV: std::sync::OnceLock<Result<Vec<(OsString, OsString)>, String>> =
        std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        crate::emulate::Emulator::prepare()
            .map(|e| e.env())
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(GpuError::Emulator)
}

/// The emulator, to pose as a real GPU (test mode) in the conditions
/// `GPU_LABS_EMULATOR_CONDITIONS` names.
fn posing_emulator() -> Result<crate::emulate::Emulator, GpuError> {
    crate::emulate::Emulator::prepare().map_err(|e| GpuError::Emulator(e.to_string()))
}

/// The environment of a worker that must find no GPU: the emulator told to show no device.
pub fn no_device_env() -> Result<Vec<(OsString, OsString)>, GpuError> {
    let mut env = emulator_env()?;
    // The emulator stays loadable here (the item checks what the code does when it finds no
    // device); it takes `GPU_LABS_EMULATOR_DEVICES` when it loads, before submission code.
    env.extend(no_device_variables());
    Ok(env)
}

/// Resolves the mode and names the result for reports. In `auto` mode with no real GPU and
/// no way to build the emulator (no C++ compiler, say), GPU items are skipped with the reason
/// rather than failing the whole grading; asked for explicitly, the emulator must work.
pub fn backend_for(mode: GpuMode) -> Result<(Backend, String), GpuError> {
    let backend = resolve(mode)?;
    Ok(match backend {
        Backend::Real => {
            let traced = real_traced()
                .map(|t| trace::describe(&t))
                .unwrap_or_default();
            let what = if emulator_as_real() {
                "the CPU emulator posing as a real GPU (GPU_LABS_EMULATOR_AS_REAL test mode)"
                    .to_string()
            } else {
                crate::i18n::t!("backend-real", name = real_gpu().unwrap_or_default())
            };
            (backend, format!("{what}; {traced}"))
        }
        Backend::Emulated => match emulator_env() {
            Ok(_) => (backend, emulated_label(mode)),
            Err(e) if mode == GpuMode::Auto => (
                Backend::NoGpu,
                crate::i18n::t!("backend-no-emulator", why = e),
            ),
            Err(e) => return Err(e),
        },
        Backend::NoGpu => (backend, crate::i18n::t!("backend-off")),
    })
}

/// How reports name the emulator: in `auto` mode on a machine with a GPU that failed its
/// trial, with the trial's line, so the instructor sees why the real one was not used.
fn emulated_label(mode: GpuMode) -> String {
    match (mode, real_gpu()) {
        (GpuMode::Auto, Err(why)) if !why.starts_with("libcuda.so not found") => {
            crate::i18n::t!("backend-emulated-unusable", why = why)
        }
        _ => crate::i18n::t!("backend-emulated"),
    }
}

/// How reports name `--gpu off`.
pub const GPU_OFF: &str = "GPU mode is off";

#[cfg(test)]
mod tests {
    #[test]
    fn a_cpu_workers_library_path_holds_no_cuda_library() {
        let emulator = tempfile::tempdir().expect("dir");
        let real = tempfile::tempdir().expect("dir");
        let other = tempfile::tempdir().expect("dir");
        std::fs::write(emulator.path().join(crate::emulate::CDYLIB), "").expect("write");
        std::fs::write(real.path().join("libcublas.so.12.4.5"), "").expect("write");
        std::fs::write(other.path().join("libstdc++.so.6"), "").expect("write");
        let path =
            std::env::join_paths([emulator.path(), other.path(), real.path()]).expect("a path");
        let kept = super::without_cuda_libraries(&path);
        let kept: Vec<_> = std::env::split_paths(&kept).collect();
        assert_eq!(kept, vec![other.path().to_path_buf()]);
    }
}
