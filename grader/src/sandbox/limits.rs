//! What a worker starts with, set by the supervisor between fork and exec (so it holds from
//! the worker's first instruction): its own process group, its own user namespace (where the
//! process limit counts only its own processes) and network namespace where the kernel allows
//! them, and limits on memory, CPU time and file size. It also dies with the supervisor.

use super::{Protections, SandboxError};
use std::process::Command;

/// The memory a worker may use for CPU and emulated GPU items (heap and mappings it writes:
/// `RLIMIT_DATA`). Real-GPU workers have none: the CUDA driver maps device memory into the
/// process.
pub const MEMORY: u64 = 4 << 30;

/// The processes and threads a worker and everything it starts may have at once.
pub const PROCESSES: u64 = 512;

/// The largest file a worker may write, so one submission that fills the disk cannot stop a
/// batch.
pub const FILE_SIZE: u64 = 1 << 30;

/// What one worker is held to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// What this machine allows (none of it when the sandbox is off).
    pub protections: Protections,
    /// Memory, when limited.
    pub memory: Option<u64>,
    /// CPU seconds over all its threads; children get as many each, so a process left
    /// behind cannot spin for ever.
    pub cpu_secs: u64,
}

impl Limits {
    /// The limits of a worker for `backend` whose item may run `timeout_secs` of wall time.
    pub fn for_worker(backend: crate::protocol::Backend, timeout_secs: f64) -> Limits {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        Limits {
            protections: super::available(),
            memory: (backend != crate::protocol::Backend::Real).then_some(MEMORY),
            cpu_secs: (timeout_secs.max(1.0) * cores).ceil() as u64 + 10,
        }
    }
}

/// Whether workers can have their own user namespace with a process limit of their own
/// (Linux 5.14+: before, the limit counted every process of the user; never for root, whom the
/// kernel exempts), and their own network namespace. Each is tried once in a throw-away child.
pub fn namespaces() -> (bool, bool) {
    let user = cfg!(target_os = "linux") && kernel_at_least(5, 14) && can_unshare(NEW_USER);
    let network = user && can_unshare(NEW_USER | NEW_NET);
    // The kernel never holds root to the process limit, in any namespace.
    (user && !as_root(), network)
}

#[cfg(target_os = "linux")]
const NEW_USER: libc::c_int = libc::CLONE_NEWUSER;
#[cfg(target_os = "linux")]
const NEW_NET: libc::c_int = libc::CLONE_NEWNET;
#[cfg(not(target_os = "linux"))]
const NEW_USER: libc::c_int = 0;
#[cfg(not(target_os = "linux"))]
const NEW_NET: libc::c_int = 0;

#[cfg(target_os = "linux")]
fn can_unshare(flags: libc::c_int) -> bool {
    // SAFETY: the child calls only unshare and _exit (async-signal-safe) and ends at once;
    // the parent waits for that child only.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            libc::_exit(if libc::unshare(flags) == 0 { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) == -1 {
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn can_unshare(_: libc::c_int) -> bool {
    false
}

/// Whether the grader runs as root.
pub fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether the running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// Sets these limits (and the namespaces) in the worker `cmd` will start; on Linux it is also
/// killed when the supervisor's thread that started it ends, so a worker held stopped at a
/// checkpoint never outlives a supervisor that was itself killed.
#[cfg(unix)]
pub fn install(cmd: &mut Command, limits: Limits) {
    use std::os::unix::process::CommandExt;
    // Its own process group: whatever it starts is ended with it (see `end_group`).
    cmd.process_group(0);
    // SAFETY: getpid is async-signal-safe.
    let supervisor = unsafe { libc::getpid() };
    let p = limits.protections;
    let mut flags = 0;
    if p.processes || p.own_network {
        flags |= NEW_USER;
    }
    if p.own_network {
        flags |= NEW_NET;
    }
    // SAFETY: the closure runs in the forked child before exec and calls only unshare,
    // setrlimit, prctl, getppid and _exit, which are async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let set = |resource, soft: u64, hard: u64| {
                let rl = libc::rlimit {
                    rlim_cur: soft as libc::rlim_t,
                    rlim_max: hard as libc::rlim_t,
                };
                if libc::setrlimit(resource, &rl) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            };
            set(libc::RLIMIT_FSIZE, FILE_SIZE, FILE_SIZE)?;
            #[cfg(target_os = "linux")]
            {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != supervisor {
                    libc::_exit(1);
                }
                if flags != 0 && libc::unshare(flags) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if p.processes {
                    set(libc::RLIMIT_NPROC, PROCESSES, PROCESSES)?;
                }
            }
            #[cfg(not(target_os = "linux"))]
            let _ = (supervisor, flags);
            if p.any() {
                if let Some(bytes) = limits.memory {
                    set(libc::RLIMIT_DATA, bytes, bytes)?;
                }
                set(libc::RLIMIT_CPU, limits.cpu_secs, limits.cpu_secs + 5)?;
            }
            Ok(())
        });
    }
}

#[cfg(not(unix))]
pub fn install(_: &mut Command, _: Limits) {}

/// Ends whatever is left of the worker `pid`'s process group (children it started that
/// outlived it).
#[cfg(unix)]
pub fn end_group(pid: i32) {
    if pid > 0 {
        // SAFETY: signals the process group the supervisor made for this worker.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
pub fn end_group(_: i32) {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

/// Sets one resource limit of this process (soft and hard).
pub fn limit(resource: Resource, value: u64) -> Result<(), SandboxError> {
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
