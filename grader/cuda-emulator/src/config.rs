//! The emulator's whole configuration, read from the environment ONCE, when the library is
//! loaded, and only from this snapshot afterwards ([`get`]).
//!
//! Why: the emulator runs inside the graded process, beside the student's code, and
//! `std::env::set_var` is safe Rust (edition 2021). A variable read lazily (at the first
//! compilation, the first `cuInit`) could be changed by a submission before its first CUDA
//! call: race checks turned off, the device hidden, another compiler chosen. The grader's
//! worker loads the emulator before any submission code runs, so an ELF constructor
//! ([`SNAPSHOT_AT_LOAD`]) takes the snapshot before the student can change anything. The
//! compiler and `addr2line` run with the environment of that moment too ([`Config::child_env`]),
//! so a later `PATH` or `CPATH` does not reach them either.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The variable that hides the device when it is `0` (a driver without a GPU).
pub const DEVICES_VARIABLE: &str = "GPU_LABS_EMULATOR_DEVICES";

/// The variable naming the kernel cache directory.
pub const CACHE_VARIABLE: &str = "GPU_LABS_EMULATOR_CACHE";

/// The variable that runs every kernel that synchronises as fibers when it is `1` (no
/// barrier kernel as a coroutine: [`crate::nvrtc::coroutine`]), to compare the two or to
/// rule the coroutines out while debugging.
pub const FIBERS_VARIABLE: &str = "GPU_LABS_EMULATOR_FIBERS";

/// The variable that, when `1`, makes the emulator load only objects its own compiler produced
/// in this process, byte for byte: the grader sets it for every worker whose kernel cache is
/// that worker's own scratch folder (official grading), where an object already on disk can
/// only have been left by the submission's code.
pub const OWN_OBJECTS_VARIABLE: &str = "GPU_LABS_EMULATOR_OWN_OBJECTS";

/// The variable naming a folder of the emulator's CUDA headers laid out by the grader where no
/// worker can write (`grader/cuda-emulator/src/nvrtc/stub_headers.rs`): used, when set, in
/// place of a copy in the kernel cache.
pub const STUBS_VARIABLE: &str = "GPU_LABS_EMULATOR_STUBS";

/// The variable naming the descriptors of the grader's kernel compiler, `<request>,<reply>`
/// (see [`crate::nvrtc::remote`]): set, kernels are compiled by that process, outside this
/// one, into a folder this process can read but not write.
pub const COMPILER_VARIABLE: &str = "GPU_LABS_EMULATOR_COMPILER";

/// Everything the emulator takes from its environment, as it was when the library was loaded.
#[derive(Debug, Clone)]
pub struct Config {
    /// Whether the device is shown (`GPU_LABS_EMULATOR_DEVICES` is not `0`).
    pub device_visible: bool,
    /// The real-machine conditions asked for (`GPU_LABS_EMULATOR_CONDITIONS`, see
    /// [`crate::util::CONDITIONS`]).
    pub conditions: Vec<String>,
    /// Whether kernels are compiled with race detection and device-memory confinement
    /// (`GPU_LABS_EMULATOR_RACECHECK=1`, see [`crate::nvrtc::compile::RACECHECK_VARIABLE`]).
    pub race_check: bool,
    /// Whether builds that are not checked are confined to device memory
    /// (`GPU_LABS_EMULATOR_CONFINE=1`, see [`crate::nvrtc::compile::CONFINE_VARIABLE`]).
    pub confine: bool,
    /// Whether only objects compiled in this process are loaded ([`OWN_OBJECTS_VARIABLE`]).
    pub own_objects: bool,
    /// The descriptors of the grader's kernel compiler ([`COMPILER_VARIABLE`]): `Some` when the
    /// variable was set, with `(-1, -1)` when it named no descriptors (every compile then
    /// fails: a run the grader meant to compile outside never compiles inside).
    pub compiler: Option<(i32, i32)>,
    /// The grader's folder of CUDA headers ([`STUBS_VARIABLE`]), if it named one.
    pub stubs: Option<PathBuf>,
    /// Whether plain builds may run barrier kernels as coroutines (unless
    /// [`FIBERS_VARIABLE`] is `1`).
    pub coroutines: bool,
    /// The kernel cache directory: `$GPU_LABS_EMULATOR_CACHE`, else
    /// `$XDG_CACHE_HOME/gpu-labs/kernels`, else `~/.cache/gpu-labs/kernels`, else a directory
    /// under the temporary directory.
    pub kernel_cache: PathBuf,
    /// The C++ compiler command: `$CXX` split into words (it may carry arguments), else `c++`.
    pub cxx: Vec<String>,
    /// The environment at load, which every program the emulator starts receives in full
    /// (compiler, `addr2line`) instead of the process's environment of the moment.
    pub child_env: Vec<(OsString, OsString)>,
}

impl Config {
    /// Reads the configuration from `vars` (name, value pairs, as `std::env::vars_os` gives).
    pub fn from_vars(vars: Vec<(OsString, OsString)>) -> Config {
        let var = |name: &str| {
            vars.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        let non_empty = |name: &str| var(name).filter(|v| !v.is_empty());
        let kernel_cache = if let Some(d) = non_empty(CACHE_VARIABLE) {
            PathBuf::from(d)
        } else if let Some(d) = non_empty("XDG_CACHE_HOME") {
            Path::new(&d).join("gpu-labs").join("kernels")
        } else if let Some(h) = non_empty("HOME") {
            Path::new(&h)
                .join(".cache")
                .join("gpu-labs")
                .join("kernels")
        } else {
            let tmp = non_empty("TMPDIR").unwrap_or_else(|| "/tmp".to_string());
            Path::new(&tmp).join("gpu-labs-kernels")
        };
        let mut cxx: Vec<String> = var("CXX")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if cxx.is_empty() {
            cxx.push("c++".to_string());
        }
        Config {
            device_visible: var(DEVICES_VARIABLE).is_none_or(|v| v.trim() != "0"),
            conditions: var(crate::util::CONDITIONS)
                .map(|list| {
                    list.split(',')
                        .map(|c| c.trim().to_string())
                        .filter(|c| !c.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
            race_check: var(crate::nvrtc::compile::RACECHECK_VARIABLE).is_some_and(|v| v == "1"),
            confine: var(crate::nvrtc::compile::CONFINE_VARIABLE).is_some_and(|v| v == "1"),
            own_objects: var(OWN_OBJECTS_VARIABLE).is_some_and(|v| v == "1"),
            stubs: non_empty(STUBS_VARIABLE).map(PathBuf::from),
            compiler: var(COMPILER_VARIABLE).map(|v| {
                let fds = v.split_once(',').and_then(|(request, reply)| {
                    Some((request.trim().parse().ok()?, reply.trim().parse().ok()?))
                });
                fds.filter(|&(a, b): &(i32, i32)| a > 2 && b > 2)
                    .unwrap_or((-1, -1))
            }),
            coroutines: var(FIBERS_VARIABLE).is_none_or(|v| v.trim() != "1"),
            kernel_cache,
            cxx,
            child_env: vars,
        }
    }

    /// Reads the configuration from the process's environment now.
    fn from_env() -> Config {
        Config::from_vars(std::env::vars_os().collect())
    }

    /// Whether the condition `name` was asked for.
    pub fn condition(&self, name: &str) -> bool {
        self.conditions.iter().any(|c| c == name)
    }

    /// A command for `program` that gets the environment at load, not the process's current
    /// one (so `PATH`, `CPATH`, `LD_PRELOAD`... changed later do not reach it).
    pub fn command(&self, program: &str) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.env_clear()
            .envs(self.child_env.iter().map(|(k, v)| (k, v)));
        cmd
    }
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The snapshot. Taken by [`SNAPSHOT_AT_LOAD`] when the library is loaded; should no
/// constructor have run (a loader that skips them), it is taken at the first call.
pub fn get() -> &'static Config {
    CONFIG.get_or_init(Config::from_env)
}

/// Runs when the library is loaded (before `dlopen` returns to cudarc), and takes the snapshot.
extern "C" fn snapshot_at_load() {
    let _ = CONFIG.set(Config::from_env());
}

/// The ELF constructor that takes the snapshot at load (an entry of `.init_array`).
#[used]
#[link_section = ".init_array"]
pub static SNAPSHOT_AT_LOAD: extern "C" fn() = snapshot_at_load;

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn reads_every_setting_from_the_snapshot() {
        let c = Config::from_vars(vars(&[
            ("GPU_LABS_EMULATOR_DEVICES", " 0 "),
            ("GPU_LABS_EMULATOR_CONDITIONS", "old-driver, fast-device"),
            ("GPU_LABS_EMULATOR_RACECHECK", "1"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
            ("CXX", "ccache g++"),
        ]));
        assert!(!c.device_visible);
        assert!(c.condition("fast-device") && c.condition("old-driver"));
        assert!(!c.condition("no-nvrtc"));
        assert!(c.race_check);
        assert_eq!(c.kernel_cache, Path::new("/x/gpu-labs/kernels"));
        assert_eq!(c.cxx, ["ccache", "g++"]);
    }

    #[test]
    fn defaults_without_variables() {
        let c = Config::from_vars(vars(&[
            ("HOME", "/h"),
            ("GPU_LABS_EMULATOR_RACECHECK", "0"),
        ]));
        assert!(c.device_visible);
        assert!(c.conditions.is_empty());
        assert!(!c.race_check);
        assert_eq!(c.kernel_cache, Path::new("/h/.cache/gpu-labs/kernels"));
        assert_eq!(c.cxx, ["c++"]);
        assert_eq!(c.compiler, None);
    }

    /// The grader's kernel compiler: its two descriptors; a value that names none (or names
    /// standard input, output or error) is kept as "set, unusable", so every compile fails
    /// rather than run in this process.
    #[test]
    fn the_kernel_compilers_descriptors_or_none_usable() {
        let compiler =
            |value: &str| Config::from_vars(vars(&[(COMPILER_VARIABLE, value)])).compiler;
        assert_eq!(compiler("7, 9"), Some((7, 9)));
        for broken in ["", "7", "x,9", "1,9", "7,-3"] {
            assert_eq!(compiler(broken), Some((-1, -1)), "{broken:?}");
        }
    }

    /// The constructor ran when this test binary was loaded: the snapshot exists before any
    /// test calls `get`, and a variable set afterwards does not change it.
    #[test]
    fn taken_at_load_and_frozen() {
        assert!(
            CONFIG.get().is_some(),
            "the load-time constructor did not run"
        );
        let before = get().race_check;
        // SAFETY (edition 2021: safe): this test process reads the variable nowhere else.
        std::env::set_var(
            "GPU_LABS_EMULATOR_RACECHECK",
            if before { "0" } else { "1" },
        );
        assert_eq!(get().race_check, before);
    }
}
