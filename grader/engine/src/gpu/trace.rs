//! Tracing on a real GPU: the emulator's counting library (`grader/cuda-emulator/tracer`)
//! put in front of the real libcuda and libcublas, so the checks that a GPU function did its
//! work on the device (launches and cuBLAS calls counted, bytes moved each way, where a
//! result's values came from) hold on hardware as on the emulator.
//!
//! A worker's `LD_LIBRARY_PATH` starts with a folder where `libcuda.so` and `libcublas.so`
//! (the names cudarc asks for first) are the tracer, and the tracer's two placeholder
//! dependencies are the real files. The real libraries' own names (`libcuda.so.1`, which
//! cuBLAS opens for itself) still lead to the real files, so only calls made through cudarc
//! are traced.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable that turns tracing off (`GPU_LABS_TRACER=off`), should the tracer ever stand
/// in the way on some machine: a real GPU is then graded without the device-work checks, and
/// reports say so.
pub const SWITCH: &str = "GPU_LABS_TRACER";

/// The tracer's placeholder dependency for the driver (see `tracer/build.rs`).
const REAL_DRIVER: &str = "libgpu_labs_real_cuda.so";
/// The tracer's placeholder dependency for cuBLAS.
const REAL_CUBLAS: &str = "libgpu_labs_real_cublas.so";

/// The tracer library ([`crate::emulate::TRACER_OVERRIDE`] names a prebuilt one, which needs
/// no Rust toolchain; else it is built with the emulator on first use), or why there is none.
pub fn library() -> Result<PathBuf, String> {
    static TRACER: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    TRACER
        .get_or_init(|| {
            if std::env::var(SWITCH).is_ok_and(|v| v == "off") {
                return Err(format!("tracing is off ({SWITCH}=off)"));
            }
            let named = std::env::var_os(crate::emulate::TRACER_OVERRIDE).filter(|v| !v.is_empty());
            if let Some(so) = named.map(PathBuf::from) {
                return std::fs::canonicalize(&so).map_err(|_| {
                    format!(
                        "{}={} is not a file: point it to a built {}, or unset it",
                        crate::emulate::TRACER_OVERRIDE,
                        so.display(),
                        crate::emulate::TRACER_CDYLIB
                    )
                });
            }
            crate::emulate::Emulator::prepare()
                .map_err(|e| e.to_string())?
                .tracer()
        })
        .clone()
}

/// Puts `tracer` in front of the real `driver` and `cublas` for a worker whose environment
/// is `env`: a folder of links (kept in `cache`) goes first on its `LD_LIBRARY_PATH`.
pub fn put_in_front(
    env: &mut Vec<(OsString, OsString)>,
    tracer: &Path,
    driver: &Path,
    cublas: &Path,
    cache: &Path,
) -> std::io::Result<()> {
    let links = [
        ("libcuda.so", tracer),
        ("libcublas.so", tracer),
        (REAL_DRIVER, driver),
        (REAL_CUBLAS, cublas),
    ];
    let mut hash = crate::fingerprint::Fnv::default();
    for (_, target) in links {
        hash.field(target.as_os_str().as_encoded_bytes());
    }
    let dir = cache.join(format!("cuda-traced-{:016x}", hash.finish()));
    std::fs::create_dir_all(&dir)?;
    for (name, target) in links {
        crate::emulate::ensure_link(&dir.join(name), target)?;
    }
    let old = env
        .iter()
        .rposition(|(k, _)| k == "LD_LIBRARY_PATH")
        .map(|i| env.remove(i).1)
        .or_else(|| std::env::var_os("LD_LIBRARY_PATH"))
        .unwrap_or_default();
    let mut path = dir.into_os_string();
    if !old.is_empty() {
        path.push(":");
        path.push(old);
    }
    env.push(("LD_LIBRARY_PATH".into(), path));
    Ok(())
}

/// Whether a worker's device work is traced on a real GPU, in words for reports.
pub fn describe(traced: &Result<PathBuf, String>) -> String {
    match traced {
        Ok(_) => "device work traced".into(),
        Err(why) => format!("device work not traced: {why}"),
    }
}
