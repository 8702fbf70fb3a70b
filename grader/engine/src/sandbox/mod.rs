//! Every worker runs with least privilege, unprivileged (no root, no daemon). All of it is
//! applied by the worker's child between fork and exec, so the first instruction of the
//! submission's program (a static constructor included) already runs confined:
//!
//! - its own process group and, where the kernel allows, its own user and network namespaces,
//!   with limits on memory, processes, CPU time, stack and file size, soft and hard
//!   ([`limits`]);
//! - as root, an identity no account uses, no groups, no capabilities ([`child`], [`root`]);
//! - `no_new_privs`; Landlock lets it read only the system's folders, its own program, its
//!   working folder and the GPU libraries, and write only its scratch folder (which holds its
//!   own kernel cache); no signal to a process outside its sandbox; no TCP ([`files`]); a
//!   seccomp filter refuses sockets, the kernel's keyrings, io_uring, new sessions and process
//!   groups, tracing and namespaces, System V IPC and POSIX message queues ([`syscalls`]);
//! - with a user namespace, IPC and (where allowed) network namespaces of its own.
//!
//! All of it is set up by the supervisor and applied between fork and exec, before the
//! worker's first instruction: the worker's binary holds no sandbox code (in official grading
//! it is built from `grader-worker` alone), and when the sandbox cannot be applied no worker
//! starts. Its whole process tree is stopped and ended with it ([`tree`]).
//!
//! Builds of submissions are sandboxed too ([`build`]). What a machine's kernel allows is
//! probed once by the supervisor ([`available`]) and recorded in every report. [`apply`] puts
//! the same rules on the calling thread, for the tests that check them.

pub mod build;
pub mod child;
mod files;
pub mod limits;
#[cfg(unix)]
pub mod root;
mod syscalls;
#[cfg(unix)]
pub mod tree;

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable that turns the sandbox off (`GPU_LABS_SANDBOX=off`), for an instructor who
/// must grade where it breaks something; every report then says the run was not sandboxed.
/// `GPU_LABS_SANDBOX=container` says the grader runs inside a container made for grading
/// (Gradescope's): the container is the isolation, workers get whatever this kernel still
/// allows (Docker's seccomp profile refuses namespaces, older ones Landlock too), and every
/// report says both. `GPU_LABS_SANDBOX=broken` is a test hook: workers then fail to apply theirs.
pub const SWITCH: &str = "GPU_LABS_SANDBOX";

/// Whether the grader was told it runs inside a container made for grading
/// (`GPU_LABS_SANDBOX=container`, which `--container` sets).
pub fn in_container() -> bool {
    std::env::var(SWITCH).is_ok_and(|v| v == "container")
}

/// What a worker may touch and which protections it must apply, sent in its work order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// Folders and files it may read (and run programs from).
    pub readable: Vec<PathBuf>,
    /// Folders and files it may also write.
    pub writable: Vec<PathBuf>,
    /// What this machine gives: the worker applies exactly this, or stops.
    pub protections: Protections,
    /// Whether it may open Unix sockets (a real GPU's driver may talk to its daemons).
    pub unix_sockets: bool,
}

/// The protections this machine gives a worker, as every report names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Protections {
    /// Files: Landlock (ABI 1+).
    pub filesystem: bool,
    /// TCP bind and connect: Landlock (ABI 4+).
    pub network: bool,
    /// Signals to processes outside the sandbox: Landlock scopes (ABI 6+).
    pub signals: bool,
    /// The seccomp filter of [`syscalls`].
    pub syscalls: bool,
    /// An own user namespace, in which the process limit counts only the worker's processes
    /// (Linux 5.14+).
    pub processes: bool,
    /// An own network namespace: no network at all, UDP and local services included.
    pub own_network: bool,
    /// The grader runs inside a container made for grading, which isolates the run from
    /// everything outside it whatever this kernel allows inside ([`in_container`]).
    #[serde(default)]
    pub container: bool,
}

impl Protections {
    /// Whether anything at all is applied.
    pub fn any(&self) -> bool {
        self.filesystem
            || self.network
            || self.signals
            || self.syscalls
            || self.processes
            || self.own_network
    }

    /// Whether every part is applied (the network closed one way or the other).
    pub fn complete(&self) -> bool {
        self.filesystem
            && self.signals
            && self.syscalls
            && self.processes
            && (self.own_network || self.network)
    }

    /// One line for reports: "filesystem: landlock (…); syscalls: seccomp (…); …", after what
    /// isolated the run when a container did.
    pub fn describe(&self) -> String {
        if self.container {
            let inside = if self.any() {
                Protections {
                    container: false,
                    ..*self
                }
                .describe()
            } else {
                "nothing more (this kernel refuses Landlock, seccomp and namespaces to the grader \
                 here)"
                    .into()
            };
            return format!(
                "isolated by the container the grader runs in (--container: it holds only this \
                 submission and the grader); inside it: {inside}"
            );
        }
        if !self.any() {
            return format!(
                "not sandboxed (no Landlock on this kernel, or {SWITCH}=off): the submission ran \
                 with the grader's own rights"
            );
        }
        let or_unprotected = |on: bool, what: &str| {
            if on {
                what.to_string()
            } else {
                "unprotected".into()
            }
        };
        let network = if self.own_network {
            "none (own namespace)".to_string()
        } else {
            or_unprotected(self.network, "no TCP")
        };
        let processes = if self.processes {
            format!("≤ {}", limits::PROCESSES)
        } else if limits::as_root() {
            "unlimited (no user namespace for the workers of a grader run as root)".into()
        } else {
            "unlimited (no user namespace)".into()
        };
        format!(
            "filesystem: {}; syscalls: {}; signals: {}; network: {network}; processes: \
             {processes}; memory ≤ {} GiB (CPU and emulated GPU items); CPU time bounded; core \
             dumps off, open files ≤ {OPEN_FILES}, files ≤ {} GiB each and {} GiB in all, output \
             kept ≤ {} MiB",
            or_unprotected(self.filesystem, "landlock (own scratch folder only)"),
            or_unprotected(
                self.syscalls,
                "seccomp (no sockets, keyrings, io_uring, new sessions, System V IPC)"
            ),
            or_unprotected(self.signals, "none outside the sandbox"),
            limits::MEMORY >> 30,
            limits::FILE_SIZE >> 30,
            limits::SCRATCH_BYTES >> 30,
            crate::capture::KEPT >> 20,
        )
    }
}

/// Leaves out of `cmd`'s environment every variable [`keeps_variable`] does not keep: what a
/// worker or a build of a submission starts with.
pub fn clean_environment(cmd: &mut std::process::Command) {
    let kept: Vec<_> = std::env::vars_os()
        .filter(|(k, _)| k.to_str().is_some_and(keeps_variable))
        .collect();
    cmd.env_clear().envs(kept);
}

/// Whether an environment variable is one a worker or a build needs (the locale, the C++
/// compiler, the GPU's, the grader's own); the rest (tokens, keys, proxies and their passwords,
/// cargo's and rustup's settings, anything else of the instructor's) is left out, so that
/// neither `env!` at build time nor a graded function can read it. A build adds what it needs
/// itself ([`build::build_environment`]).
pub fn keeps_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if ["TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "_KEY", "PROXY"]
        .iter()
        .any(|w| upper.contains(w))
    {
        return false;
    }
    const EXACT: &[&str] = &[
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "TERM",
        "TZ",
        "TMPDIR",
        "CC",
        "CXX",
        "LD_LIBRARY_PATH",
        "XDG_CACHE_HOME",
        "CARGO_MANIFEST_DIR",
    ];
    const PREFIXES: &[&str] = &["LC_", "GPU_LABS_", "GRADER_", "CUDA_", "NVIDIA_", "RAYON_"];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Open files a worker may hold.
pub const OPEN_FILES: u64 = 1024;

/// What workers and builds may read of the system: programs, libraries, headers and the C++
/// compiler, a few files of `/etc` (not all: a grader run as root could read `/etc/shadow`, or
/// a TLS key under `/etc/ssl`; neither needs the network: the grader fetches crates itself),
/// the harmless devices (not all: a disk's device file would bypass every rule), `/sys`.
pub const SYSTEM_READABLE: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/bin",
    "/sbin",
    "/opt",
    "/sys",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/os-release",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/sys",
];

/// What workers and builds may write of the system.
pub const SYSTEM_WRITABLE: &[&str] = &["/dev/null"];

/// A worker's own `/proc` entries. The supervisor leaves them out of the ruleset it makes (there
/// `self` would be the supervisor): the worker's child opens them itself before it restricts
/// itself (see [`child`]), and the worker's own check in `main` names them as they are.
const WORKER_PROC: &[&str] = &[
    "/proc/driver",
    "/proc/self/maps",
    "/proc/self/status",
    "/proc/self/cgroup",
    "/proc/self/mountinfo",
];

/// A real GPU's device files (`/dev/nvidia*`), opened for reading and writing.
fn gpu_device_files() -> Vec<PathBuf> {
    std::fs::read_dir("/dev")
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("nvidia"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What workers get on this machine (probed once; none when switched off).
pub fn available() -> Protections {
    if std::env::var(SWITCH).is_ok_and(|v| v == "off") {
        return Protections::default();
    }
    static PROBED: std::sync::OnceLock<Protections> = std::sync::OnceLock::new();
    *PROBED.get_or_init(|| {
        let abi = files::landlock_abi();
        let (processes, own_network) = limits::namespaces();
        Protections {
            filesystem: abi >= 1,
            network: abi >= 4,
            signals: abi >= 6,
            syscalls: syscalls::supported(),
            processes,
            own_network,
            container: in_container(),
        }
    })
}

/// What a worker for `backend` may touch: read the system's folders (programs, libraries,
/// headers, the C++ compiler), its program's, its working folder, the folders of the libraries
/// on its `LD_LIBRARY_PATH`; write its scratch folder (which holds its kernel cache) and the
/// GPU's device files.
pub fn spec_for(
    scratch: &Path,
    program: &Path,
    cwd: Option<&Path>,
    env: &[(OsString, OsString)],
    backend: crate::backend::Backend,
) -> Spec {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(name))
            .filter(|v| !v.is_empty())
    };
    let mut readable: Vec<PathBuf> = SYSTEM_READABLE
        .iter()
        .chain(WORKER_PROC)
        .map(PathBuf::from)
        .collect();
    if let Some(dir) = program.parent() {
        readable.push(dir.to_path_buf());
    }
    readable.push(program.to_path_buf());
    match cwd {
        Some(dir) => readable.push(dir.to_path_buf()),
        None => readable.extend(std::env::current_dir().ok()),
    }
    if let Some(paths) = var("LD_LIBRARY_PATH") {
        for dir in std::env::split_paths(&paths) {
            // The links' targets too (the CUDA libraries the links name).
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    if let Ok(target) = std::fs::canonicalize(entry.path()) {
                        readable.extend(target.parent().map(Path::to_path_buf));
                    }
                }
            }
            readable.push(dir);
        }
    }
    // The emulator's kernel cache is the scratch folder's too (see `supervisor`): a cache
    // one worker could write is one it could poison for the next.
    let mut writable = vec![scratch.to_path_buf()];
    writable.extend(SYSTEM_WRITABLE.iter().map(PathBuf::from));
    if backend == crate::backend::Backend::Real {
        // The driver's shared memory; elsewhere a file there would outlive the worker, in RAM.
        writable.push(PathBuf::from("/dev/shm"));
        writable.extend(gpu_device_files());
    }
    readable.sort();
    readable.dedup();
    readable.retain(|p| p.exists());
    writable.retain(|p| p.exists());
    Spec {
        readable,
        writable,
        protections: available(),
        unix_sockets: backend == crate::backend::Backend::Real,
    }
}

/// Why a worker's sandbox could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("the sandbox could not be applied: {0}")]
pub struct SandboxError(String);

/// Applies `spec` to the calling thread and what it starts: the limits, Landlock, the seccomp
/// filter, each as far as `spec.protections` says; fails when any of it could not be applied.
/// (Workers get the same rules from the supervisor between fork and exec, see
/// [`limits::install`].)
pub fn apply(spec: &Spec) -> Result<(), SandboxError> {
    limits::limit(libc::RLIMIT_CORE, 0)?;
    limits::limit(libc::RLIMIT_NOFILE, OPEN_FILES)?;
    let wanted = spec.protections;
    if wanted.filesystem {
        files::restrict(spec, wanted)?;
    }
    if wanted.syscalls {
        syscalls::restrict(spec.unix_sockets)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandboxed_thread_writes_only_its_scratch_folder_and_reads_nothing_of_home() {
        if !available().filesystem {
            eprintln!("no Landlock on this kernel: nothing to check");
            return;
        }
        let scratch = tempfile::tempdir().expect("scratch");
        let home = tempfile::tempdir().expect("home");
        std::fs::write(home.path().join("secret"), "s").expect("plant");
        let spec = spec_for(
            scratch.path(),
            &std::env::current_exe().expect("exe"),
            None,
            &[],
            crate::backend::Backend::Emulated,
        );
        // Landlock restricts the calling thread (and what it starts), so a thread of this
        // test binary can be the sandboxed one.
        let (setup, wrote, read) = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            apply(&spec).expect("applied");
            let setup = started.elapsed();
            let wrote = std::fs::write(spec.writable[0].join("report.json"), "{}").is_ok();
            let read = std::fs::read_to_string(home.path().join("secret")).is_ok();
            (setup, wrote, read)
        })
        .join()
        .expect("the sandboxed thread ends");
        assert!(wrote, "the scratch folder stays writable");
        assert!(!read, "a file outside the allowed folders cannot be read");
        eprintln!("sandbox set-up: {:.2} ms", setup.as_secs_f64() * 1e3);
    }
}
