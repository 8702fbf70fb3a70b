//! Puts the CPU stand-in for libcuda / libnvrtc / libcublas (the `gpu-labs-cuda-emulator`
//! crate in `grader/cuda-emulator`) in place for a child process.
//!
//! cudarc loads the CUDA libraries by name with `dlopen`, so a child process runs on the
//! emulator when its `LD_LIBRARY_PATH` starts with a directory holding `libcuda.so`,
//! `libnvrtc.so`, `libcublas.so` (and the versioned names) that all point to the emulator.
//! [`Emulator::prepare`] makes that directory: the emulator's sources are embedded in this
//! crate, written to the cache directory and built there with `cargo build --release` on
//! first use (about half a minute), then reused. So it works for the grader as a path or git
//! dependency of a lab crate, for an installed `grader` binary and in CI, needing only Rust
//! and a C++ compiler (which the emulator also uses to compile kernels).
//!
//! Environment:
//! - `GPU_LABS_CACHE`: cache directory (default `$XDG_CACHE_HOME/gpu-labs`, else
//!   `~/.cache/gpu-labs`); the emulator is built in `<cache>/emulator`, kernels are cached in
//!   `<cache>/kernels`.
//! - `GPU_LABS_EMULATOR_LIB`: a prebuilt `libgpu_labs_cuda_emulator.so` to use instead of
//!   building one.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use grader_worker::gpu::POSING;

/// The variable naming the real-machine conditions the emulator is asked to show (a
/// comma-separated list): `no-nvrtc`, `no-cublas` (those libraries are left out of a worker's
/// library path), `old-driver` (module loads fail as with a driver older than NVRTC),
/// `fast-device` (every launch and cuBLAS call costs the host about what a small product costs
/// the device, as on a GPU much faster than the emulator). For tests of how the grader copes
/// with the machines students have.
pub const CONDITIONS: &str = "GPU_LABS_EMULATOR_CONDITIONS";

/// Whether the test condition `name` is asked for in [`CONDITIONS`].
pub fn condition_asked(name: &str) -> bool {
    std::env::var(CONDITIONS).is_ok_and(|list| list.split(',').any(|c| c.trim() == name))
}

pub use grader_worker::gpu::LIB_NAMES;

/// File name of the built emulator.
pub const CDYLIB: &str = "libgpu_labs_cuda_emulator.so";

/// File name of the built tracer (the emulator's counting in front of a real GPU's
/// libraries: `grader/cuda-emulator/tracer`, put in place by `gpu::trace`).
pub const TRACER_CDYLIB: &str = "libgpu_labs_cuda_tracer.so";

/// Environment variable naming a prebuilt tracer library (else one beside a prebuilt
/// emulator named by [`LIB_OVERRIDE`] is used).
pub const TRACER_OVERRIDE: &str = "GPU_LABS_TRACER_LIB";

/// Where a failed tracer build says why (in the emulator's library folder), so that later
/// gradings do not try again for every worker.
const TRACER_FAILED: &str = "tracer-build-failed.txt";

/// Environment variable set (to `1`) in children that run on the emulator.
pub const MARKER: &str = "GPU_LABS_EMULATOR";

/// The variable naming the folder where the emulator caches compiled kernels (a grader's
/// workers get one per submission: see `supervisor::WorkerCommand::kernel_cache`).
pub const KERNEL_CACHE: &str = "GPU_LABS_EMULATOR_CACHE";

/// The variable that asks the emulator for checked builds (race detection, device-memory
/// confinement), as `grader/cuda-emulator/src/nvrtc/compile.rs` names it.
pub const RACE_CHECK: &str = "GPU_LABS_EMULATOR_RACECHECK";

/// The variable that confines the kernels of runs that are not checked (timed runs) to device
/// memory, as `grader/cuda-emulator/src/nvrtc/compile.rs` names it.
pub const CONFINE: &str = "GPU_LABS_EMULATOR_CONFINE";

/// The variable that makes the emulator load only objects its own compiler produced in that
/// process, byte for byte (`grader/cuda-emulator/src/config.rs`): set for every worker whose
/// kernel cache is its own scratch folder.
pub const OWN_OBJECTS: &str = "GPU_LABS_EMULATOR_OWN_OBJECTS";

/// The variable naming the descriptors of a worker's kernel compiler, `<request>,<reply>`
/// (`grader/cuda-emulator/src/config.rs`; `crate::kernel_compiler`).
pub const COMPILER: &str = "GPU_LABS_EMULATOR_COMPILER";

/// The variable naming the folder of the emulator's CUDA headers that the grader lays out
/// beside the library (`grader/cuda-emulator/src/config.rs`).
pub const STUBS: &str = "GPU_LABS_EMULATOR_STUBS";

/// The emulator's CUDA headers, as the emulator itself holds them.
mod stub_headers {
    include!("../../cuda-emulator/src/nvrtc/stub_headers.rs");
}

/// Lays the emulator's CUDA headers out in `dir` (once: a `.complete` marker says they are
/// all there), beside the library, where workers may read but never write: a header folder a
/// worker could write would let it put a `cmath` before the system's, ahead of the rules the
/// prelude sets for kernels.
fn lay_out_stub_headers(dir: &Path) -> std::io::Result<()> {
    if dir.join(".complete").is_file() {
        return Ok(());
    }
    for (name, text) in stub_headers::STUB_HEADERS {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, text)?;
    }
    fs::write(dir.join(".complete"), "")
}

/// Environment variable naming a prebuilt emulator library.
pub const LIB_OVERRIDE: &str = "GPU_LABS_EMULATOR_LIB";

macro_rules! embed {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("../../cuda-emulator/", $path)))),*]
    };
}

/// The emulator crate's sources, `(path relative to the crate, contents)`.
pub const SOURCES: &[(&str, &str)] = embed!(
    "Cargo.toml",
    "build.rs",
    "stubs/cuda.txt",
    "stubs/nvrtc.txt",
    "stubs/cublas.txt",
    "src/lib.rs",
    "src/config.rs",
    "src/counters.rs",
    "src/findings.rs",
    "src/heap.rs",
    "src/provenance.rs",
    "src/replay.rs",
    "src/status.rs",
    "src/stubs.rs",
    "src/util.rs",
    "src/memory.rs",
    "src/driver/mod.rs",
    "src/driver/context.rs",
    "src/driver/device.rs",
    "src/driver/event.rs",
    "src/driver/hazard.rs",
    "src/driver/launch.rs",
    "src/driver/memcpy.rs",
    "src/driver/module.rs",
    "src/driver/stream.rs",
    "src/exec/mod.rs",
    "src/exec/decode.rs",
    "src/exec/fault.rs",
    "src/exec/initcheck.rs",
    "src/exec/pool.rs",
    "src/exec/race.rs",
    "src/exec/reorder.rs",
    "src/exec/synccheck.rs",
    "src/nvrtc/mod.rs",
    "src/nvrtc/compile.rs",
    "src/nvrtc/coroutine.rs",
    "src/nvrtc/declarations.rs",
    "src/nvrtc/expand.rs",
    "src/nvrtc/names.rs",
    "src/nvrtc/remote.rs",
    "src/nvrtc/source.rs",
    "src/nvrtc/stub_headers.rs",
    "src/nvrtc/symbols.rs",
    "src/nvrtc/prelude.h",
    "src/nvrtc/cooperative_groups.h",
    "src/nvrtc/cuda_fp16.h",
    "src/nvrtc/gpu_labs_async.h",
    "src/nvrtc/cuda_barrier.h",
    "src/nvrtc/cuda_pipeline.h",
    "src/cublas/mod.rs",
    "src/cublas/gemm.rs",
    "tracer/Cargo.toml",
    "tracer/build.rs",
    "tracer/src/lib.rs",
    "tracer/src/real.rs",
    "tracer/src/copies.rs",
    "tracer/src/work.rs",
);

/// Why the emulator could not be put in place. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    /// The cache directory is not usable.
    #[error("cannot use the gpu-labs cache directory {path}: {source} (set GPU_LABS_CACHE to a writable directory)")]
    Cache {
        /// The directory or file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// `cargo` could not be started.
    #[error("cannot run `cargo` to build the CUDA emulator: {0} (install Rust with rustup, or set GPU_LABS_EMULATOR_LIB to a prebuilt libgpu_labs_cuda_emulator.so)")]
    Cargo(io::Error),
    /// The build failed.
    #[error("building the CUDA emulator failed; see {log} (or set GPU_LABS_EMULATOR_LIB to a prebuilt libgpu_labs_cuda_emulator.so)")]
    Build {
        /// The build log.
        log: PathBuf,
    },
    /// `GPU_LABS_EMULATOR_LIB` does not name a file.
    #[error("GPU_LABS_EMULATOR_LIB={0} is not a file: point it to a built libgpu_labs_cuda_emulator.so, or unset it")]
    Override(PathBuf),
    /// No C++ compiler: kernels could not be compiled.
    #[error("no C++ compiler found (tried `{0}`): the CUDA emulator compiles kernels with it; install g++ (or clang) or set CXX")]
    NoCompiler(String),
    /// The command to run could not be started.
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The I/O error.
        source: io::Error,
    },
    /// `grader emulate` was given no command.
    #[error(
        "no command given: use `grader emulate -- COMMAND [ARGS...]` or `grader emulate --env`"
    )]
    NoCommand,
}

/// The emulator, ready to be used by child processes.
#[derive(Clone, Debug)]
pub struct Emulator {
    lib_dir: PathBuf,
    kernel_cache: PathBuf,
}

/// The gpu-labs cache directory: `$GPU_LABS_CACHE`, else (for a grader run as root)
/// [`ROOT_CACHE`], else `$XDG_CACHE_HOME/gpu-labs`, else `~/.cache/gpu-labs`, else
/// `gpu-labs-cache` in the temporary directory; always absolute.
pub fn cache_dir() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("GPU_LABS_CACHE")
        // SAFETY: geteuid has no preconditions.
        .or_else(|| (unsafe { libc::geteuid() } == 0).then(|| PathBuf::from(ROOT_CACHE)))
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("gpu-labs")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("gpu-labs")))
        .unwrap_or_else(|| std::env::temp_dir().join("gpu-labs-cache"));
    // Workers and builds run in other folders, where a relative path (`GPU_LABS_CACHE=cache`)
    // would point somewhere else.
    std::path::absolute(&dir).unwrap_or(dir)
}

/// The cache of a grader run as root: a submission's build runs as the workers' unprivileged
/// uid, never as root, so its folders must be reachable by that uid, which root's home is not.
/// The cache holds only the grader's builds and public crates (a submission's own artifacts
/// leave it after each build).
pub const ROOT_CACHE: &str = "/var/cache/gpu-labs";

/// A stable hash of the embedded sources (FNV-1a, 64 bits), as hex.
fn sources_hash() -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in SOURCES {
        for b in path.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

fn cache_err(path: &Path) -> impl FnOnce(io::Error) -> EmulateError + '_ {
    move |source| EmulateError::Cache {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `contents` to `path` unless it already holds exactly that (so cargo's freshness
/// check, which looks at modification times, is not disturbed).
fn write_if_changed(path: &Path, contents: &str) -> Result<(), EmulateError> {
    let old = crate::intake::read_text(path, contents.len() as u64, "");
    if old.is_ok_and(|old| old == contents) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(cache_err(parent))?;
    }
    fs::write(path, contents).map_err(cache_err(path))
}

/// The crate's manifest as built from the cache: its own workspace, no dev-dependencies
/// (they are only for the crate's tests and would need resolving).
fn standalone_manifest(manifest: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    let mut has_workspace = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            skipping = t == "[dev-dependencies]";
            has_workspace |= t == "[workspace]";
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !has_workspace {
        out.push_str("\n[workspace]\n");
    }
    out
}

/// Copies a built library to `to`, atomically for concurrent readers.
fn install(built: &Path, to: &Path) -> Result<(), EmulateError> {
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    let tmp = to.with_file_name(format!(".{name}.{}", std::process::id()));
    fs::copy(built, &tmp).map_err(cache_err(&tmp))?;
    fs::rename(&tmp, to).map_err(cache_err(to))
}

/// Makes `link` a symlink to `target` unless it already is one, replacing it atomically (by a
/// rename), so concurrent graders never see it missing.
pub(crate) fn ensure_link(link: &Path, target: &Path) -> io::Result<()> {
    if fs::read_link(link).is_ok_and(|t| t == target) {
        return Ok(());
    }
    let name = link.file_name().unwrap_or_default().to_string_lossy();
    let tmp = link.with_file_name(format!(".{name}.{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    fs::rename(&tmp, link)
}

/// Makes `dir` hold every name of [`LIB_NAMES`] as a symlink to `so`.
fn link_names(dir: &Path, so: &Path) -> Result<(), EmulateError> {
    fs::create_dir_all(dir).map_err(cache_err(dir))?;
    for name in LIB_NAMES {
        let link = dir.join(name);
        ensure_link(&link, so).map_err(cache_err(&link))?;
    }
    Ok(())
}

/// Checks that a C++ compiler runs (`$CXX`, else `c++`).
fn check_compiler() -> Result<(), EmulateError> {
    let cxx = std::env::var("CXX")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "c++".into());
    let mut words = cxx.split_whitespace();
    let program = words.next().unwrap_or("c++");
    let ok = Command::new(program)
        .args(words)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(EmulateError::NoCompiler(cxx))
    }
}

/// Runs cargo to build the crate at `src` (the emulator, or its tracer) into `target`;
/// returns the path of its cdylib `cdylib`.
fn cargo_build(
    src: &Path,
    target: &Path,
    log: &Path,
    cdylib: &str,
) -> Result<PathBuf, EmulateError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let attempt = |offline: bool| -> Result<bool, EmulateError> {
        let log_file = fs::File::create(log).map_err(cache_err(log))?;
        let mut cmd = Command::new(&cargo);
        cmd.args(["build", "--release", "--lib", "--manifest-path"])
            .arg(src.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET")
            .stdout(log_file.try_clone().map_err(cache_err(log))?)
            .stderr(log_file);
        if offline {
            cmd.arg("--offline");
        }
        Ok(cmd.status().map_err(EmulateError::Cargo)?.success())
    };
    // Offline first: libc is almost always in the local registry cache already.
    if !attempt(true)? && !attempt(false)? {
        return Err(EmulateError::Build {
            log: log.to_path_buf(),
        });
    }
    Ok(target.join("release").join(cdylib))
}

/// The emulator (or tracer) library cargo built beside this program, when there is one that
/// belongs to it: the grader depends on the emulator (through `grader-hot`), so the cargo
/// invocation that built this program built the library too, from the same sources, into the
/// same target folder (`deps/` below a binary's folder, or a test binary's own `deps/`). One
/// built later than this program (the emulator rebuilt alone, its sources since changed) is
/// not taken. `None`: build it in the cache, as for a program installed elsewhere.
fn prebuilt(cdylib: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe_time = fs::metadata(&exe).and_then(|m| m.modified()).ok()?;
    let dir = exe.parent()?;
    // Only cargo's `deps/` folder: the copy cargo puts beside `deps/` is the emulator's own
    // build as a package (its tests), which may be older than this program's sources.
    let so = if dir.file_name().is_some_and(|n| n == "deps") {
        dir.join(cdylib)
    } else {
        dir.join("deps").join(cdylib)
    };
    let built = fs::metadata(&so).and_then(|m| m.modified()).ok()?;
    (built <= exe_time).then_some(so)
}

/// Whether [`Emulator::prepare`] will have to build the emulator first (about a minute), so a
/// caller can say so before the pause.
pub fn needs_build() -> bool {
    if std::env::var_os(LIB_OVERRIDE).is_some_and(|v| !v.is_empty()) {
        return false;
    }
    let lib_dir = cache_dir()
        .join("emulator")
        .join(format!("lib-{}", sources_hash()));
    !lib_dir.join(LIB_NAMES[0]).is_file() && prebuilt(CDYLIB).is_none()
}

impl Emulator {
    /// Locates or builds the emulator and returns it ready for use. Builds at most once per
    /// version of the emulator sources; concurrent callers (several graders) wait for one build.
    pub fn prepare() -> Result<Emulator, EmulateError> {
        check_compiler()?;
        let cache = cache_dir();
        let kernel_cache = cache.join("kernels");
        if let Some(so) = std::env::var_os(LIB_OVERRIDE).filter(|v| !v.is_empty()) {
            let so =
                fs::canonicalize(&so).map_err(|_| EmulateError::Override(so.clone().into()))?;
            if !so.is_file() {
                return Err(EmulateError::Override(so));
            }
            let tag = format!(
                "{:x}",
                so.to_string_lossy()
                    .bytes()
                    .fold(0u64, |h, b| h.wrapping_mul(31) ^ u64::from(b))
            );
            let lib_dir = cache.join("emulator").join(format!("lib-override-{tag}"));
            link_names(&lib_dir, &so)?;
            return Ok(Emulator {
                lib_dir,
                kernel_cache,
            });
        }
        let root = cache.join("emulator");
        let hash = sources_hash();
        let lib_dir = root.join(format!("lib-{hash}"));
        let so = lib_dir.join(CDYLIB);
        let prebuilt_so = prebuilt(CDYLIB);
        // Ready: installed, and not older than a library built with this program (which,
        // while the emulator is being worked on, may hold code its embedded sources do not).
        let modified = |path: &Path| fs::metadata(path).and_then(|m| m.modified()).ok();
        let ready = |lib_dir: &Path| {
            lib_dir.join(LIB_NAMES[0]).is_file()
                && prebuilt_so
                    .as_deref()
                    .is_none_or(|p| modified(p) <= modified(&lib_dir.join(CDYLIB)))
        };
        if ready(&lib_dir) {
            return Ok(Emulator {
                lib_dir,
                kernel_cache,
            });
        }
        fs::create_dir_all(&root).map_err(cache_err(&root))?;
        let lock_path = root.join("build.lock");
        let lock = fs::File::create(&lock_path).map_err(cache_err(&lock_path))?;
        lock.lock().map_err(cache_err(&lock_path))?;
        if !ready(&lib_dir) {
            if let Some(built) = &prebuilt_so {
                // Built with this program: installed as a cache build would be.
                fs::create_dir_all(&lib_dir).map_err(cache_err(&lib_dir))?;
                match prebuilt(TRACER_CDYLIB) {
                    Some(tracer) => install(&tracer, &lib_dir.join(TRACER_CDYLIB))?,
                    None => write_if_changed(
                        &lib_dir.join(TRACER_FAILED),
                        "the tracer was not built beside the grader",
                    )?,
                }
                install(built, &so)?;
                link_names(&lib_dir, &so)?;
                drop(lock);
                return Ok(Emulator {
                    lib_dir,
                    kernel_cache,
                });
            }
            let src = root.join("src");
            for (path, text) in SOURCES {
                let text = if path.ends_with("Cargo.toml") {
                    standalone_manifest(text)
                } else {
                    (*text).to_string()
                };
                write_if_changed(&src.join(path), &text)?;
            }
            let target = root.join("target");
            let built = cargo_build(&src, &target, &root.join("build.log"), CDYLIB)?;
            fs::create_dir_all(&lib_dir).map_err(cache_err(&lib_dir))?;
            // The tracer is only for real GPUs: the emulator works without it.
            let tracer_log = root.join("tracer-build.log");
            match cargo_build(&src.join("tracer"), &target, &tracer_log, TRACER_CDYLIB) {
                Ok(tracer) => install(&tracer, &lib_dir.join(TRACER_CDYLIB))?,
                Err(_) => write_if_changed(
                    &lib_dir.join(TRACER_FAILED),
                    &format!("cargo could not build it; see {}", tracer_log.display()),
                )?,
            }
            install(&built, &so)?;
            link_names(&lib_dir, &so)?;
        }
        drop(lock);
        Ok(Emulator {
            lib_dir,
            kernel_cache,
        })
    }

    /// The directory holding `libcuda.so` and the other names, all the emulator.
    pub fn lib_dir(&self) -> &Path {
        &self.lib_dir
    }

    /// The tracer built beside the emulator (beside a prebuilt emulator, the file of that
    /// name), or why there is none.
    pub fn tracer(&self) -> Result<PathBuf, String> {
        let emulator = fs::canonicalize(self.lib_dir.join(LIB_NAMES[0]))
            .map_err(|e| format!("the emulator is missing ({e})"))?;
        let beside = emulator.with_file_name(TRACER_CDYLIB);
        if beside.is_file() {
            return Ok(beside);
        }
        let failed = self.lib_dir.join(TRACER_FAILED);
        Err(
            crate::intake::read_text(&failed, crate::intake::SMALL_FILE_BYTES, "")
                .map(|why| format!("the tracer did not build: {}", why.trim()))
                .unwrap_or_else(|_| format!("no {TRACER_CDYLIB} beside {}", emulator.display())),
        )
    }

    /// The library folder, less the libraries that the test conditions `no-nvrtc` and
    /// `no-cublas` (in `GPU_LABS_EMULATOR_CONDITIONS`) say are not installed: a machine with
    /// the driver but not the toolkit, as far as a worker can tell.
    fn conditioned_lib_dir(&self) -> PathBuf {
        let without: Vec<&str> = ["nvrtc", "cublas"]
            .into_iter()
            .filter(|lib| condition_asked(&format!("no-{lib}")))
            .collect();
        if without.is_empty() {
            return self.lib_dir.clone();
        }
        let Ok(so) = fs::read_link(self.lib_dir.join(LIB_NAMES[0])) else {
            return self.lib_dir.clone();
        };
        let dir = self.lib_dir.with_file_name(format!(
            "{}-without-{}",
            self.lib_dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy(),
            without.join("-")
        ));
        let kept = LIB_NAMES.iter().filter(|name| {
            !without
                .iter()
                .any(|lib| name.starts_with(&format!("lib{lib}.")))
        });
        let linked = fs::create_dir_all(&dir).is_ok()
            && kept.into_iter().all(|name| {
                let link = dir.join(name);
                fs::read_link(&link).is_ok_and(|t| t == so)
                    || std::os::unix::fs::symlink(&so, &link).is_ok()
            });
        if linked {
            dir
        } else {
            self.lib_dir.clone()
        }
    }

    /// The environment a child needs to run on the emulator: `LD_LIBRARY_PATH` with the
    /// library directory first (then any existing value), the [`MARKER`] variable, and the
    /// kernel cache directory (unless `GPU_LABS_EMULATOR_CACHE` is already set).
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env = self.env_in(&self.lib_dir);
        // The emulator as itself shows no real machine's conditions.
        env.push((CONDITIONS.into(), "".into()));
        env
    }

    /// The environment of a child for which the emulator poses as a real GPU in the
    /// conditions of `GPU_LABS_EMULATOR_CONDITIONS` (tests of the real-GPU path).
    pub fn env_posing_as_real(&self) -> Vec<(OsString, OsString)> {
        let mut env = self.env_in(&self.conditioned_lib_dir());
        env.push((POSING.into(), "1".into()));
        env
    }

    fn env_in(&self, lib_dir: &Path) -> Vec<(OsString, OsString)> {
        let mut path = lib_dir.as_os_str().to_owned();
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
            path.push(":");
            path.push(old);
        }
        let mut env = vec![
            ("LD_LIBRARY_PATH".into(), path),
            (MARKER.into(), "1".into()),
        ];
        // Headers from the grader's folder only. Where it could not lay them out, the emulator
        // finds no marker there and compiles no kernel that includes one (it never falls back
        // to a folder the program could write).
        let stubs = lib_dir.join("include");
        let _ = lay_out_stub_headers(&stubs);
        env.push((STUBS.into(), stubs.into_os_string()));
        if std::env::var_os(KERNEL_CACHE).is_none() {
            env.push((
                KERNEL_CACHE.into(),
                self.kernel_cache.clone().into_os_string(),
            ));
        }
        env
    }

    /// A command for `program` with `args` and the emulator's environment.
    pub fn command<S: AsRef<OsStr>>(
        &self,
        program: impl AsRef<OsStr>,
        args: impl IntoIterator<Item = S>,
    ) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args).envs(self.env());
        cmd
    }

    /// `export NAME='value'` lines for a POSIX shell.
    pub fn shell_exports(&self) -> String {
        self.env()
            .iter()
            .map(|(k, v)| {
                let v = v.to_string_lossy().replace('\'', r"'\''");
                format!("export {}='{v}'\n", k.to_string_lossy())
            })
            .collect()
    }
}

/// Whether this process runs on the emulator (its parent set [`MARKER`]).
pub fn is_emulated() -> bool {
    std::env::var_os(MARKER).is_some_and(|v| v == "1")
}

/// The variable that turns the emulator's checks on (`1`) when the library is loaded: kernels
/// are then compiled the checked way (data races, and accesses outside device memory), as
/// grading's correctness runs are.
pub const RACECHECK: &str = "GPU_LABS_EMULATOR_RACECHECK";

/// What `grader emulate --check` asks for, like compute-sanitizer's `--tool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// No checks: kernels compiled plainly (grading's timed runs are confined to GPU memory,
    /// without race checks).
    None,
    /// Data races (global and shared memory, barriers, warps), reads of shared memory never
    /// written, and global accesses outside device memory, reported on stderr with both threads, the lines and a hint.
    Races,
    /// Every check the emulator has (today the same as [`Check::Races`]).
    All,
}

impl Check {
    /// The names `--check` accepts.
    pub const NAMES: &'static [&'static str] = &["races", "all", "none"];

    /// The check named `name` (one of [`Check::NAMES`]).
    pub fn parse(name: &str) -> Option<Check> {
        match name {
            "none" => Some(Check::None),
            "races" => Some(Check::Races),
            "all" => Some(Check::All),
            _ => None,
        }
    }

    /// The variable that asks the emulator for this check.
    pub fn env(self) -> (OsString, OsString) {
        let on = if self == Check::None { "0" } else { "1" };
        (RACECHECK.into(), on.into())
    }
}

/// `grader emulate`: with `print_env`, prints the shell exports and returns 0; otherwise runs
/// `args` (a program and its arguments) on the emulator and returns its exit code (128 + the
/// signal number if a signal ended it). `check`, when given, sets the emulator's checks (else
/// the environment's [`RACECHECK`] stands).
pub fn run_cli(
    args: &[OsString],
    print_env: bool,
    check: Option<Check>,
) -> Result<i32, EmulateError> {
    let emulator = Emulator::prepare()?;
    if print_env {
        print!("{}", emulator.shell_exports());
        if let Some((k, v)) = check.map(Check::env) {
            println!("export {}='{}'", k.to_string_lossy(), v.to_string_lossy());
        }
        return Ok(0);
    }
    let (program, rest) = args.split_first().ok_or(EmulateError::NoCommand)?;
    let mut cmd = emulator.command(program, rest);
    cmd.envs(check.map(Check::env));
    let status = cmd.status().map_err(|source| EmulateError::Spawn {
        program: program.to_string_lossy().into_owned(),
        source,
    })?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file the emulator's build needs is embedded (add new modules to `SOURCES`).
    #[test]
    fn embedded_sources_cover_the_crate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuda-emulator");
        let mut missing = Vec::new();
        let mut stack = vec![
            root.join("src"),
            root.join("stubs"),
            root.join("tracer").join("src"),
        ];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).expect("read emulator sources").flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p
                        .strip_prefix(&root)
                        .expect("relative")
                        .to_string_lossy()
                        .into_owned();
                    if !SOURCES.iter().any(|(s, _)| *s == rel) {
                        missing.push(rel);
                    }
                }
            }
        }
        assert!(missing.is_empty(), "add to emulate::SOURCES: {missing:?}");
    }

    #[test]
    fn check_names_set_the_variable() {
        for name in Check::NAMES {
            assert!(Check::parse(name).is_some(), "{name}");
        }
        assert_eq!(
            Check::parse("races").map(Check::env),
            Some((RACECHECK.into(), "1".into()))
        );
        assert_eq!(
            Check::parse("none").map(Check::env),
            Some((RACECHECK.into(), "0".into()))
        );
        assert_eq!(Check::parse("memcheck"), None);
    }

    #[test]
    fn manifest_is_made_standalone() {
        let m = "[package]\nname = \"x\"\n\n[dev-dependencies]\ncudarc = \"0.19\"\n\n[profile.dev]\nopt-level = 2\n";
        let out = standalone_manifest(m);
        assert!(!out.contains("cudarc"));
        assert!(out.contains("[profile.dev]"));
        assert!(out.trim_end().ends_with("[workspace]"));
        assert_eq!(
            standalone_manifest("[package]\n[workspace]\n")
                .matches("[workspace]")
                .count(),
            1
        );
    }

    #[test]
    fn env_puts_the_library_first() {
        let e = Emulator {
            lib_dir: PathBuf::from("/x/lib"),
            kernel_cache: PathBuf::from("/x/k"),
        };
        let env = e.env();
        let path = &env
            .iter()
            .find(|(k, _)| k == "LD_LIBRARY_PATH")
            .expect("path")
            .1;
        assert!(path.to_string_lossy().starts_with("/x/lib"));
        assert!(env.iter().any(|(k, v)| k == MARKER && v == "1"));
        assert!(e.shell_exports().contains("export LD_LIBRARY_PATH='/x/lib"));
    }
}
