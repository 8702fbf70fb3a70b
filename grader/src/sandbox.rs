//! Every worker runs with least privilege. The worker applies its sandbox to itself, first
//! thing, before any student code can run (a lab may not contain code that runs before
//! `main`): with Landlock it may read only the system's folders, its own program, its working
//! folder and the GPU libraries, and write only its scratch folder (and the emulator's kernel
//! cache); it may not send signals to any process outside its sandbox (the supervisor, the
//! yardstick, other students' workers) nor open TCP connections; and it gets no core dumps
//! and a bounded number of open files. No root and no daemon: Landlock is unprivileged.
//!
//! What a machine's kernel allows is probed once by the supervisor ([`available`]), recorded
//! in every report, and is exactly what each worker then applies, or the worker stops before
//! grading ([`apply`] fails closed).

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable that turns the sandbox off (`GPU_LABS_SANDBOX=off`), for an instructor who
/// must grade where it breaks something; every report then says the run was not sandboxed.
pub const SWITCH: &str = "GPU_LABS_SANDBOX";

/// What a worker may touch, sent in its work order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    /// Folders and files it may read (and run programs from).
    pub readable: Vec<PathBuf>,
    /// Folders and files it may also write.
    pub writable: Vec<PathBuf>,
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
}

impl Protections {
    /// One line for reports: "filesystem: landlock; signals: scoped; network: no TCP; …".
    pub fn describe(&self) -> String {
        if !self.filesystem && !self.network && !self.signals {
            return format!(
                "not sandboxed (no Landlock on this kernel, or {SWITCH}=off): the submission ran \
                 with the grader's own rights"
            );
        }
        let yes_no = |on: bool, what: &str| {
            if on {
                what.to_string()
            } else {
                "unprotected".into()
            }
        };
        format!(
            "filesystem: {}; signals: {}; network: {}; core dumps off, open files ≤ {OPEN_FILES}, files ≤ 1 GiB",
            yes_no(self.filesystem, "landlock (own scratch folder only)"),
            yes_no(self.signals, "none outside the sandbox"),
            yes_no(self.network, "no TCP"),
        )
    }
}

/// Open files a worker may hold.
pub const OPEN_FILES: u64 = 1024;

/// The Landlock ABI of the running kernel (0 when it has none).
#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> i64 {
    0
}

/// The Landlock ABI of the running kernel (0 when it has none).
#[cfg(target_os = "linux")]
fn landlock_abi() -> i64 {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute only returns the version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    v.max(0)
}

/// What workers get on this machine (probed once; none when switched off).
pub fn available() -> Protections {
    if std::env::var(SWITCH).is_ok_and(|v| v == "off") {
        return Protections::default();
    }
    let abi = landlock_abi();
    Protections {
        filesystem: abi >= 1,
        network: abi >= 4,
        signals: abi >= 6,
    }
}

/// The folders a worker needs: the system's (programs, libraries, headers, the C++ compiler),
/// its program's, its working folder, the folders of the libraries on its `LD_LIBRARY_PATH`;
/// writable: its scratch folder, the kernel cache, the GPU's device files.
pub fn spec_for(
    scratch: &Path,
    program: &Path,
    cwd: Option<&Path>,
    env: &[(OsString, OsString)],
) -> Spec {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(name))
            .filter(|v| !v.is_empty())
    };
    let mut readable: Vec<PathBuf> = [
        "/usr",
        "/lib",
        "/lib32",
        "/lib64",
        "/bin",
        "/sbin",
        "/etc",
        "/opt",
        "/dev",
        "/sys",
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/stat",
        "/proc/sys",
        "/proc/driver",
        "/proc/self/maps",
        "/proc/self/status",
        "/proc/self/cgroup",
        "/proc/self/mountinfo",
    ]
    .iter()
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
    let mut writable = vec![scratch.to_path_buf(), PathBuf::from("/dev/null")];
    let kernels = var("GPU_LABS_EMULATOR_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::emulate::cache_dir().join("kernels"));
    let _ = std::fs::create_dir_all(&kernels);
    writable.push(kernels);
    // A real GPU's device files are opened for reading and writing.
    if let Ok(entries) = std::fs::read_dir("/dev") {
        writable.extend(entries.flatten().map(|e| e.path()).filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("nvidia") || n == "shm")
        }));
    }
    readable.sort();
    readable.dedup();
    Spec { readable, writable }
}

/// Why a worker's sandbox could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("the sandbox could not be applied: {0}")]
pub struct SandboxError(String);

/// Applies `spec` and the limits to this process (the worker), as far as [`available`] says
/// this machine allows; fails when any of it could not be applied, so no worker runs with less
/// than its report says.
pub fn apply(spec: &Spec) -> Result<(), SandboxError> {
    limit(libc::RLIMIT_CORE, 0)?;
    limit(libc::RLIMIT_NOFILE, OPEN_FILES)?;
    let wanted = available();
    if !wanted.filesystem {
        return Ok(());
    }
    landlock_rules(spec, wanted)
}

#[cfg(not(target_os = "linux"))]
fn landlock_rules(_: &Spec, _: Protections) -> Result<(), SandboxError> {
    Ok(())
}

/// The Landlock part of [`apply`].
#[cfg(target_os = "linux")]
fn landlock_rules(spec: &Spec, wanted: Protections) -> Result<(), SandboxError> {
    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
    };
    let fail = |e: landlock::RulesetError| SandboxError(e.to_string());
    let abi = ABI::V6;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?;
    if wanted.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(fail)?;
    }
    if wanted.signals {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(fail)?;
    }
    let status = ruleset
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(&spec.readable, AccessFs::from_read(abi)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(&spec.writable, AccessFs::from_all(abi)))
        .map_err(fail)?
        .restrict_self()
        .map_err(fail)?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(SandboxError(
            "Landlock is not enforced on this kernel although it reported support".into(),
        )),
        _ => Ok(()),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

fn limit(resource: Resource, value: u64) -> Result<(), SandboxError> {
    let rl = libc::rlimit {
        rlim_cur: value as libc::rlim_t,
        rlim_max: value as libc::rlim_t,
    };
    // SAFETY: setrlimit reads one struct.
    if unsafe { libc::setrlimit(resource, &rl) } == 0 {
        Ok(())
    } else {
        Err(SandboxError(format!(
            "setrlimit: {}",
            std::io::Error::last_os_error()
        )))
    }
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
