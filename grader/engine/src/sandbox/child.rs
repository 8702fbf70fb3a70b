//! The part of a worker's sandbox that its child process applies to itself between fork and
//! exec, so that the first instruction of the submission's program (its static constructors
//! included) already runs confined: no root, no capabilities, `no_new_privs`, Landlock, seccomp.
//!
//! Everything that allocates or reads files is done before the fork, by [`Prepared::new`]: the
//! Landlock ruleset is made there (its descriptor is inherited), the seccomp filter compiled
//! there. The child only makes system calls, as a child of a threaded process must.

use super::{SandboxError, Spec};

/// Who a worker of a grader run as root becomes before its program starts: a uid and gid no
/// account uses (see [`super::limits`]), no supplementary groups, no capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The worker's user id (outside any namespace).
    pub uid: u32,
    /// The worker's group id.
    pub gid: u32,
}

/// Who a worker with `protections` becomes: an unprivileged identity when the grader runs as
/// root and the sandbox is on, else `None` (it stays who the grader is).
pub fn identity_for(protections: super::Protections) -> Option<Identity> {
    (protections.any() && as_root()).then(worker_identity)
}

/// The sandbox of one worker, ready to be applied in its child.
#[derive(Debug, Default)]
pub struct Prepared {
    /// The Landlock ruleset's descriptor (closed on exec).
    #[cfg(target_os = "linux")]
    ruleset: Option<std::os::fd::OwnedFd>,
    /// What the worker may do beneath its own `/proc/self/task` (see [`OWN_THREADS`]): read and
    /// write, and truncate where this kernel's Landlock handles truncation (ABI 3+).
    #[cfg(target_os = "linux")]
    own_threads: u64,
    /// The seccomp filter.
    #[cfg(target_os = "linux")]
    filter: Option<seccompiler::BpfProgram>,
    /// Who to become, when the grader runs as root.
    pub identity: Option<Identity>,
}

/// The worker's own `/proc` files, opened by the child itself (in the supervisor `self` would
/// name the supervisor).
///
/// Its own threads' folder too, [`OWN_THREADS`], read and written.
#[cfg(target_os = "linux")]
const OWN_PROC: [&std::ffi::CStr; 4] = [
    c"/proc/self/maps",
    c"/proc/self/status",
    c"/proc/self/cgroup",
    c"/proc/self/mountinfo",
];

/// The worker's own threads: a real GPU's driver names the threads it starts by writing
/// `/proc/self/task/<tid>/comm` (`pthread_setname_np` of another thread does the same), and
/// CUDA's initialisation fails (`CUDA_ERROR_OPERATING_SYSTEM`) when Landlock refuses it, as
/// seen on an H200 with driver 580. Everything beneath is the worker's own process (its
/// threads' names, limits, memory), which it may change without a file anyway. The child keeps
/// the folder open through `exec` (not closed on exec) so that procfs keeps the same folder,
/// the one the rule names, for the worker's whole life; a process the worker starts has its
/// own folder, which the rule does not name.
#[cfg(target_os = "linux")]
const OWN_THREADS: &std::ffi::CStr = c"/proc/self/task";

/// Landlock's access rights (`linux/landlock.h`) that [`Prepared::confine`] grants itself.
#[cfg(target_os = "linux")]
mod access {
    /// `LANDLOCK_ACCESS_FS_WRITE_FILE`.
    pub const WRITE_FILE: u64 = 1 << 1;
    /// `LANDLOCK_ACCESS_FS_READ_FILE`.
    pub const READ_FILE: u64 = 1 << 2;
    /// `LANDLOCK_ACCESS_FS_TRUNCATE` (ABI 3): an open with `O_TRUNC`, as a thread's naming does.
    pub const TRUNCATE: u64 = 1 << 14;
}

impl Prepared {
    /// Prepares `spec` for a worker: its ruleset and filter as far as `spec.protections`
    /// says, and an unprivileged identity when the grader runs as root.
    pub fn new(spec: &Spec) -> Result<Prepared, SandboxError> {
        if std::env::var(super::SWITCH).is_ok_and(|v| v == "broken") {
            return Err(SandboxError(format!(
                "{}=broken (a test hook)",
                super::SWITCH
            )));
        }
        let wanted = spec.protections;
        let identity = (wanted.any() && as_root()).then(worker_identity);
        #[cfg(target_os = "linux")]
        {
            let ruleset = if wanted.filesystem {
                let readable: Vec<_> = spec
                    .readable
                    .iter()
                    .filter(|p| !p.starts_with("/proc/self"))
                    .cloned()
                    .collect();
                let created = super::files::ruleset(&readable, &spec.writable, wanted)?;
                let fd: Option<std::os::fd::OwnedFd> = created.into();
                Some(fd.ok_or_else(|| SandboxError("Landlock gave no ruleset".into()))?)
            } else {
                None
            };
            let filter = if wanted.syscalls {
                Some(super::syscalls::program(spec.unix_sockets)?)
            } else {
                None
            };
            // A right the ruleset does not handle cannot be granted (the kernel refuses the rule).
            let own_threads = access::READ_FILE
                | access::WRITE_FILE
                | if super::files::landlock_abi() >= 3 {
                    access::TRUNCATE
                } else {
                    0
                };
            Ok(Prepared {
                ruleset,
                own_threads,
                filter,
                identity,
            })
        }
        #[cfg(not(target_os = "linux"))]
        Ok(Prepared { identity })
    }

    /// Leaves root behind for good: no supplementary groups, the worker's gid and uid (real,
    /// effective and saved), no capabilities (none kept over the change, none ambient, none in
    /// any set). Call it after entering the worker's namespaces.
    ///
    /// # Safety
    /// Between fork and exec: only system calls, nothing allocated.
    #[cfg(target_os = "linux")]
    pub unsafe fn drop_root(&self) -> std::io::Result<()> {
        let Some(id) = self.identity else {
            return Ok(());
        };
        let last = std::io::Error::last_os_error;
        libc::prctl(libc::PR_SET_KEEPCAPS, 0, 0, 0, 0);
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setresgid(id.gid, id.gid, id.gid) != 0
            || libc::setresuid(id.uid, id.uid, id.uid) != 0
        {
            return Err(last());
        }
        // Inside a user namespace a change of uid does not clear them: clear them here.
        #[repr(C)]
        struct Header {
            version: u32,
            pid: libc::c_int,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let none = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        if libc::syscall(libc::SYS_capset, &raw const header, none.as_ptr()) != 0 {
            return Err(last());
        }
        if libc::getuid() == 0 || libc::geteuid() == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
        Ok(())
    }

    /// `no_new_privs`, then Landlock (with the worker's own `/proc` files), then the seccomp
    /// filter, which still lets the coming `execve` through.
    ///
    /// # Safety
    /// Between fork and exec: only system calls, nothing allocated.
    #[cfg(target_os = "linux")]
    pub unsafe fn confine(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let last = std::io::Error::last_os_error;
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(last());
        }
        if let Some(ruleset) = &self.ruleset {
            let ruleset = ruleset.as_raw_fd();
            #[repr(C, packed)]
            struct PathBeneath {
                allowed_access: u64,
                parent_fd: i32,
            }
            const RULE_PATH_BENEATH: libc::c_int = 1;
            let add = |fd: libc::c_int, allowed_access: u64| {
                let rule = PathBeneath {
                    allowed_access,
                    parent_fd: fd,
                };
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    RULE_PATH_BENEATH,
                    &raw const rule,
                    0u32,
                ) == 0
            };
            for path in OWN_PROC {
                let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                if fd < 0 {
                    continue;
                }
                let added = add(fd, access::READ_FILE);
                libc::close(fd);
                if !added {
                    return Err(last());
                }
            }
            // Kept open through exec, on purpose (see `OWN_THREADS`).
            let threads = libc::open(OWN_THREADS.as_ptr(), libc::O_PATH | libc::O_DIRECTORY);
            if threads >= 0 && !add(threads, self.own_threads) {
                return Err(last());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
                return Err(last());
            }
        }
        if let Some(filter) = &self.filter {
            #[repr(C)]
            struct Program {
                len: libc::c_ushort,
                filter: *const seccompiler::sock_filter,
            }
            let program = Program {
                len: filter.len() as libc::c_ushort,
                filter: filter.as_ptr(),
            };
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &raw const program,
            ) != 0
            {
                return Err(last());
            }
        }
        Ok(())
    }
}

/// The first of the uids given to workers of a grader run as root; `WORKER_UID_RANGE` of them
/// from there, beyond any account's or a container's usual range.
pub(super) const WORKER_UIDS: u32 = 1 << 30;

/// Who the workers of a grader run as root are: a uid and gid no account uses, the same for
/// every worker of this grader (from its process id), so a submission's items share their
/// compiled kernels; each worker is still alone in its user namespace where there is one.
pub fn worker_identity() -> Identity {
    let id = WORKER_UIDS + (std::process::id() % WORKER_UID_RANGE);
    Identity { uid: id, gid: id }
}

/// How many uids the workers of root-run graders use, from [`WORKER_UIDS`].
pub(super) const WORKER_UID_RANGE: u32 = 1 << 28;

/// Whether the grader runs as root.
pub fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
