//! What a worker starts with, set by the supervisor between fork and exec (so it holds from
//! the worker's first instruction): its own process group, its own user namespace (where the
//! process limit counts only its own processes) and network namespace where the kernel allows
//! them, and limits on memory, CPU time and file size. It also dies with the supervisor.
//!
//! The kernel never holds root to a process limit, so a worker of a grader run as root is not
//! root: in its own user namespace it is mapped to a uid no account uses (see [`RootMap`]).

pub use super::child::{as_root, worker_identity};
use super::child::{WORKER_UIDS, WORKER_UID_RANGE};
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

/// What a worker may write to its scratch folder in all (each file is also held to
/// [`FILE_SIZE`]).
pub const SCRATCH_BYTES: u64 = 2 << 30;

/// How many files and folders a worker may make in its scratch folder.
pub const SCRATCH_FILES: u64 = 100_000;

/// Whether the folders a worker may write (`dirs`) hold more than it may write:
/// [`SCRATCH_BYTES`] of disk blocks or [`SCRATCH_FILES`] entries. The supervisor's watchdog
/// asks while it runs.
pub fn written_over(dirs: &[std::path::PathBuf]) -> bool {
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    let (mut bytes, mut files) = (0u64, 0u64);
    let mut folders = dirs.to_vec();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            files += 1;
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                folders.push(entry.path());
            }
            #[cfg(unix)]
            let used = meta.blocks() * 512;
            #[cfg(not(unix))]
            let used = meta.len();
            bytes += used;
            if bytes > SCRATCH_BYTES || files > SCRATCH_FILES {
                return true;
            }
        }
    }
    false
}

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
    pub fn for_worker(backend: crate::backend::Backend, timeout_secs: f64) -> Limits {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        Limits {
            protections: super::available(),
            memory: (backend != crate::backend::Backend::Real).then_some(MEMORY),
            cpu_secs: (timeout_secs.max(1.0) * cores).ceil() as u64 + 10,
        }
    }
}

/// Whether workers can have their own user namespace with a process limit of their own
/// (Linux 5.14+: before, the limit counted every process of the user; never for root, whom the
/// kernel exempts), and their own network namespace. Each is tried once in a throw-away child.
///
/// As root, workers run as a uid no account uses, each in a user namespace of its own (where
/// the count is its own), and the probe tries exactly what a worker's start does.
pub fn namespaces() -> (bool, bool) {
    if !cfg!(target_os = "linux") {
        return (false, false);
    }
    #[cfg(target_os = "linux")]
    if as_root() {
        let user = RootMap::usable() && can_unshare(NEW_USER | NEW_IPC, true);
        return (
            user,
            user && can_unshare(NEW_USER | NEW_IPC | NEW_NET, true),
        );
    }
    let user = kernel_at_least(5, 14) && can_unshare(NEW_USER | NEW_IPC, false);
    (
        user,
        user && can_unshare(NEW_USER | NEW_IPC | NEW_NET, false),
    )
}

#[cfg(target_os = "linux")]
const NEW_USER: libc::c_int = libc::CLONE_NEWUSER;
#[cfg(target_os = "linux")]
const NEW_NET: libc::c_int = libc::CLONE_NEWNET;
#[cfg(target_os = "linux")]
const NEW_IPC: libc::c_int = libc::CLONE_NEWIPC;
#[cfg(not(target_os = "linux"))]
const NEW_IPC: libc::c_int = 0;
#[cfg(not(target_os = "linux"))]
const NEW_USER: libc::c_int = 0;
#[cfg(not(target_os = "linux"))]
const NEW_NET: libc::c_int = 0;

#[cfg(target_os = "linux")]
fn can_unshare(flags: libc::c_int, as_root: bool) -> bool {
    let map = as_root.then(RootMap::next);
    // SAFETY: the child calls only async-signal-safe functions (those of `enter`, which
    // allocates nothing) and ends at once; the parent waits for that child only.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let entered = match &map {
                Some(map) => map.enter(flags).is_ok(),
                None => libc::unshare(flags) == 0,
            };
            libc::_exit(if entered { 0 } else { 1 });
        }
        pid > 0 && exited_cleanly(pid).unwrap_or(false)
    }
}

/// Waits for the child `pid` and says whether it exited with status 0. Async-signal-safe, so
/// it may run between fork and exec.
#[cfg(target_os = "linux")]
unsafe fn exited_cleanly(pid: libc::pid_t) -> std::io::Result<bool> {
    let mut status = 0;
    while libc::waitpid(pid, &mut status, 0) == -1 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    Ok(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}

#[cfg(not(target_os = "linux"))]
fn can_unshare(_: libc::c_int, _: bool) -> bool {
    false
}

/// How a worker of a grader run as root gets a process limit of its own: it enters a new user
/// namespace in which only the workers' uid (see [`worker_identity`]) is mapped, to itself,
/// becomes that uid there (see [`super::child::Prepared::drop_root`]: no groups, no
/// capabilities), and the kernel counts its processes in its own namespace. It cannot signal,
/// trace or read the memory of the grader or any process of another user (the other workers
/// are held off by Landlock's scopes and the seccomp filter, as for a grader run by an ordinary
/// user); root's files are open to it only as far as they are to any user, and Landlock decides
/// which of those it may touch.
///
/// A namespace's maps can only be written from outside it, so a helper process, started
/// before the namespace, writes them and ends.
#[cfg(target_os = "linux")]
struct RootMap {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

#[cfg(target_os = "linux")]
impl RootMap {
    /// A map for the next worker: the uid of this grader's workers, mapped to itself. Each
    /// worker has its own namespace, so the process limit still counts each on its own, while
    /// the kernels one item compiled stay readable to the next item's worker.
    fn next() -> RootMap {
        let id = worker_identity();
        RootMap {
            uid_map: format!("{0} {0} 1\n", id.uid).into_bytes(),
            gid_map: format!("{0} {0} 1\n", id.gid).into_bytes(),
        }
    }

    /// Whether this machine's own uid map has the workers' uids (a container may not).
    fn usable() -> bool {
        let map = crate::intake::read_text(
            std::path::Path::new("/proc/self/uid_map"),
            crate::intake::SMALL_FILE_BYTES,
            "",
        )
        .unwrap_or_default();
        map.lines().any(|line| {
            let n: Vec<u64> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let (first, end) = (
                u64::from(WORKER_UIDS),
                u64::from(WORKER_UIDS + WORKER_UID_RANGE),
            );
            n.len() == 3 && n[0] <= first && end <= n[0] + n[2]
        })
    }

    /// Enters a new user namespace (and the other namespaces of `flags`) as described above.
    ///
    /// # Safety
    /// Runs between fork and exec: only async-signal-safe calls, nothing allocated.
    unsafe fn enter(&self, flags: libc::c_int) -> std::io::Result<()> {
        let last = std::io::Error::last_os_error;
        let mut pipe = [0; 2];
        if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(last());
        }
        let helper = libc::fork();
        if helper < 0 {
            let e = last();
            libc::close(pipe[0]);
            libc::close(pipe[1]);
            return Err(e);
        }
        if helper == 0 {
            libc::close(pipe[1]);
            let mut go = 0u8;
            let parent = libc::getppid();
            let written = libc::read(pipe[0], (&raw mut go).cast(), 1) == 1
                && write_map(parent, b"uid_map", &self.uid_map)
                && write_map(parent, b"gid_map", &self.gid_map);
            libc::_exit(if written { 0 } else { 1 });
        }
        libc::close(pipe[0]);
        let unshared = libc::unshare(flags) == 0;
        let unshare_error = last();
        if unshared {
            libc::write(pipe[1], b"x".as_ptr().cast(), 1);
        }
        // Closed without a byte, the helper's read ends and it writes nothing.
        libc::close(pipe[1]);
        let mapped = exited_cleanly(helper)?;
        if !unshared {
            return Err(unshare_error);
        }
        if !mapped {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
        Ok(())
    }
}

/// Writes `map` to `/proc/<pid>/<file>`, between fork and exec (no allocation).
#[cfg(target_os = "linux")]
unsafe fn write_map(pid: libc::pid_t, file: &[u8], map: &[u8]) -> bool {
    let mut path = [0u8; 64];
    let mut len = 0;
    let mut push = |bytes: &[u8]| {
        for &b in bytes {
            if len < path.len() - 1 {
                path[len] = b;
                len += 1;
            }
        }
    };
    push(b"/proc/");
    let mut digits = [0u8; 12];
    let (mut n, mut d) = (pid.unsigned_abs(), digits.len());
    loop {
        d -= 1;
        digits[d] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    push(&digits[d..]);
    push(b"/");
    push(file);
    let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let written = libc::write(fd, map.as_ptr().cast(), map.len()) == map.len() as isize;
    libc::close(fd);
    written
}

/// Whether the running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = crate::intake::read_text(
        std::path::Path::new("/proc/sys/kernel/osrelease"),
        crate::intake::SMALL_FILE_BYTES,
        "",
    )
    .unwrap_or_default();
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

/// The stack a worker's main thread may have (threads it starts get Rust's own 2 MiB), set
/// whatever the instructor's shell allowed.
pub const STACK: u64 = 8 << 20;

/// Sets one resource limit, soft and hard, between fork and exec. Never above the hard limit
/// the process already has (only root could raise it, and a tighter inherited limit stays).
///
/// # Safety
/// Async-signal-safe: two system calls.
#[cfg(unix)]
pub unsafe fn set_limit(resource: Resource, value: u64) -> std::io::Result<()> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let mut value = value as libc::rlim_t;
    if libc::getrlimit(resource, &mut current) == 0 && libc::geteuid() != 0 {
        value = value.min(current.rlim_max);
    }
    let rl = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    if libc::setrlimit(resource, &rl) == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Sets up the worker `cmd` will start, between fork and exec, so that all of it holds from
/// the program's first instruction (its static constructors included): its own process group,
/// every limit (soft and hard, whatever was inherited), its namespaces, then (see
/// [`super::child`]) an unprivileged identity when the grader runs as root, `no_new_privs`,
/// Landlock and seccomp. On Linux it is also killed when the supervisor's thread that started
/// it ends, so a worker held stopped at a checkpoint never outlives a supervisor that was
/// itself killed.
#[cfg(unix)]
pub fn install(cmd: &mut Command, limits: Limits, prepared: super::child::Prepared) {
    use std::os::unix::process::CommandExt;
    // Its own process group: whatever it starts is stopped and ended with it (see
    // `super::tree`); the seccomp filter keeps it there.
    cmd.process_group(0);
    // SAFETY: getpid is async-signal-safe.
    let supervisor = unsafe { libc::getpid() };
    let p = limits.protections;
    let mut flags = 0;
    if p.processes || p.own_network {
        // With a user namespace comes an IPC namespace of its own: System V objects and POSIX
        // message queues made in it are no one else's and go when the worker's tree ends.
        flags |= NEW_USER | NEW_IPC;
    }
    if p.own_network {
        flags |= NEW_NET;
    }
    #[cfg(target_os = "linux")]
    let root_map = (flags & NEW_USER != 0 && prepared.identity.is_some()).then(RootMap::next);
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe functions (getrlimit, setrlimit, unshare, prctl, getppid, _exit, those
    // of `RootMap::enter` and of `Prepared`); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let set = |resource, value| set_limit(resource, value);
            set(libc::RLIMIT_FSIZE, FILE_SIZE)?;
            set(libc::RLIMIT_CORE, 0)?;
            set(libc::RLIMIT_NOFILE, super::OPEN_FILES)?;
            set(libc::RLIMIT_STACK, STACK)?;
            // No priority above the grader's, so nothing of it can starve the yardstick.
            set(libc::RLIMIT_NICE, 0)?;
            set(libc::RLIMIT_RTPRIO, 0)?;
            if p.any() {
                if let Some(bytes) = limits.memory {
                    set(libc::RLIMIT_DATA, bytes)?;
                }
                set(libc::RLIMIT_CPU, limits.cpu_secs)?;
            }
            #[cfg(target_os = "linux")]
            {
                if prepared.identity.is_some() && libc::setgroups(0, std::ptr::null()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                match &root_map {
                    Some(map) => map.enter(flags)?,
                    None if flags != 0 && libc::unshare(flags) != 0 => {
                        return Err(std::io::Error::last_os_error());
                    }
                    None => {}
                }
                prepared.drop_root()?;
                // After the change of user, which would clear it.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != supervisor {
                    libc::_exit(1);
                }
                if p.processes {
                    set(libc::RLIMIT_NPROC, PROCESSES)?;
                }
                prepared.confine()?;
            }
            #[cfg(not(target_os = "linux"))]
            let _ = (supervisor, flags, &prepared);
            Ok(())
        });
    }
}

#[cfg(not(unix))]
pub fn install(_: &mut Command, _: Limits, _: super::child::Prepared) {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
/// The type of a resource number as this libc names it (for `setrlimit`).
pub type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
/// The type of a resource number as this libc names it (for `setrlimit`).
pub type Resource = libc::c_int;

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

/// The longest the compiler may work on a submission's own crate (its dependencies are built
/// before, once for the class, and not counted): far above what a lab crate takes, far below
/// what would hold a batch. Time the build is held stopped while a classmate's speed is
/// measured does not count.
pub const BUILD_WALL: std::time::Duration = std::time::Duration::from_secs(4 * 60);

/// The memory a submission's build may use, all its processes together (cargo and every
/// compiler, read from `/proc`) and each on its own (`RLIMIT_DATA`): a worker's.
pub const BUILD_MEMORY: u64 = MEMORY;

/// Who the build of a submission's own crate runs as: the workers' unprivileged identity when
/// the grader runs as root (never root: the compiler reads what `include_bytes!` names with
/// its rights), unless the sandbox is switched off (`GPU_LABS_SANDBOX=off`) or this machine
/// cannot give that uid (a container whose uid map lacks it). `None`: as the grader.
pub fn build_identity() -> Option<super::child::Identity> {
    let off = std::env::var(super::SWITCH).is_ok_and(|v| v == "off");
    #[cfg(target_os = "linux")]
    let usable = RootMap::usable();
    #[cfg(not(target_os = "linux"))]
    let usable = false;
    (as_root() && !off && usable).then(worker_identity)
}

/// Sets up the build of a submission's own crate that `cmd` starts, between fork and exec:
/// its own process group (stopped, measured and ended whole: see `super::tree`), each process
/// held to [`BUILD_MEMORY`] of data and [`FILE_SIZE`] per file, no core dumps, then (when
/// `identity` is given) no groups, the worker's uid and gid and no capabilities. Call it before
/// the build's Landlock rules are added (`super::build::confine`), so the change of user comes
/// first.
#[cfg(unix)]
pub fn install_build(cmd: &mut Command, identity: Option<super::child::Identity>) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let mut prepared = super::child::Prepared::default();
    prepared.identity = identity;
    // SAFETY: the closure runs in the forked child before exec and makes only getrlimit,
    // setrlimit, prctl, setgroups, setresgid, setresuid and capset calls; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            set_limit(libc::RLIMIT_DATA, BUILD_MEMORY)?;
            set_limit(libc::RLIMIT_FSIZE, FILE_SIZE)?;
            set_limit(libc::RLIMIT_CORE, 0)?;
            #[cfg(target_os = "linux")]
            prepared.drop_root()?;
            #[cfg(not(target_os = "linux"))]
            let _ = &prepared;
            Ok(())
        });
    }
}

#[cfg(not(unix))]
pub fn install_build(_: &mut Command, _: Option<super::child::Identity>) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The sandbox of `sh` run as a worker with `scratch` as its scratch folder.
    fn sh_spec(scratch: &Path) -> crate::sandbox::Spec {
        super::super::spec_for(
            scratch,
            Path::new("/bin/sh"),
            None,
            &[],
            crate::backend::Backend::Emulated,
        )
    }

    /// Starts `sh -c script` as a worker would start (with `limits` when given); returns its
    /// output and how long the start and run took.
    fn run(script: &str, limits: Option<Limits>) -> (String, std::time::Duration) {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        let scratch = tempfile::tempdir().expect("scratch");
        if let Some(limits) = limits {
            let spec = sh_spec(scratch.path());
            let prepared = super::super::child::Prepared::new(&spec).expect("prepared");
            if let Some(id) = prepared.identity {
                crate::sandbox::root::own(scratch.path(), id).expect("owned");
            }
            cmd.current_dir(scratch.path());
            install(&mut cmd, limits, prepared);
        }
        let started = std::time::Instant::now();
        let out = cmd.output().expect("sh runs");
        (
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr)
            ),
            started.elapsed(),
        )
    }

    #[test]
    fn a_worker_starts_confined_held_to_its_limits_and_not_as_root() {
        let limits = Limits::for_worker(crate::backend::Backend::Emulated, 10.0);
        if !limits.protections.processes {
            eprintln!("no user namespaces here: nothing to check");
            return;
        }
        // Everything holds from the program's first instruction: here `sh`'s own.
        let outside = tempfile::tempdir().expect("outside");
        let target = outside.path().join("planted");
        let script = format!(
            "ulimit -p; ulimit -s; while IFS= read -r l; do case $l in Uid*|Groups*|Cap*|\
             NoNewPrivs*|Seccomp*) echo \"$l\";; esac; done < /proc/self/status; (echo x > {}) 2>/dev/null && echo wrote || echo refused",
            target.display()
        );
        let (out, _) = run(&script, Some(limits));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines.first(),
            Some(&PROCESSES.to_string().as_str()),
            "{out}"
        );
        assert_eq!(
            lines.get(1),
            Some(&(STACK >> 10).to_string().as_str()),
            "{out}"
        );
        let field = |name: &str| {
            lines
                .iter()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.split_whitespace().collect::<Vec<_>>())
                .unwrap_or_default()
        };
        assert_eq!(field("NoNewPrivs:"), ["1"], "{out}");
        if limits.protections.syscalls {
            assert_eq!(field("Seccomp:"), ["2"], "{out}");
        }
        if as_root() {
            let uid = worker_identity().uid.to_string();
            assert_eq!(field("Uid:"), [uid.as_str(); 4], "not root: {out}");
            assert!(field("Groups:").is_empty(), "no groups: {out}");
            assert_eq!(field("CapEff:"), ["0000000000000000"], "{out}");
            assert_eq!(field("CapPrm:"), ["0000000000000000"], "{out}");
        }
        if limits.protections.filesystem {
            assert_eq!(lines.last(), Some(&"refused"), "{out}");
            assert!(!target.exists());
        }
        // What the start costs, against a plain start of the same program.
        let mean = |limits: Option<Limits>| {
            let runs = 20;
            let total: std::time::Duration = (0..runs).map(|_| run("true", limits).1).sum();
            total.as_secs_f64() * 1e3 / f64::from(runs)
        };
        let (plain, held) = (mean(None), mean(Some(limits)));
        // And what the supervisor prepares before each start (the ruleset, the filter).
        let scratch = tempfile::tempdir().expect("scratch");
        let spec = sh_spec(scratch.path());
        let started = std::time::Instant::now();
        for _ in 0..20 {
            drop(super::super::child::Prepared::new(&spec).expect("prepared"));
        }
        let prepare = started.elapsed().as_secs_f64() * 1e3 / 20.0;
        eprintln!(
            "worker start: {held:.2} ms sandboxed (all of it applied between fork and exec), \
             {plain:.2} ms plain; preparing the sandbox: {prepare:.2} ms"
        );
    }

    #[test]
    fn a_worker_names_its_own_threads_and_nothing_else() {
        // A GPU driver names its threads through `/proc/self/task/<tid>/comm` (an open with
        // `O_TRUNC`, as the shell's `>` does); CUDA does not start when that is refused.
        let limits = Limits::for_worker(crate::backend::Backend::Real, 10.0);
        if !limits.protections.filesystem {
            eprintln!("no Landlock on this kernel: nothing to check");
            return;
        }
        let script = "echo named > /proc/self/task/$$/comm && read -r n < /proc/self/task/$$/comm && echo $n; \
             (echo x > /proc/$PPID/task/$PPID/comm) 2>/dev/null && echo parent || echo refused; \
             sh -c '(echo x > /proc/self/task/$$/comm) 2>/dev/null && echo child || echo refused'";
        let (out, _) = run(script, Some(limits));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines, ["named", "refused", "refused"], "{out}");
    }

    #[test]
    fn a_build_runs_as_the_worker_identity_held_to_a_workers_memory() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "id -u; ulimit -d; ulimit -H -d"]);
        let identity = build_identity();
        install_build(&mut cmd, identity);
        let out = cmd.output().expect("sh runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        let kib = (BUILD_MEMORY >> 10).to_string();
        assert_eq!(lines.get(1..), Some(&[kib.as_str(), &kib][..]), "{text}");
        if as_root() && std::env::var(super::super::SWITCH).map_or(true, |v| v != "off") {
            let id = identity.expect("a grader run as root builds as the worker");
            assert_eq!(lines.first(), Some(&id.uid.to_string().as_str()), "{text}");
            assert_ne!(lines.first(), Some(&"0"), "never root: {text}");
        }
    }
}
