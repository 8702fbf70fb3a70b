//! The seccomp part of a worker's sandbox: system calls a graded function never needs and
//! that would reach past Landlock's rules fail with "permission denied". Sockets (a Unix
//! socket reaches local services such as an SSH agent; UDP is not covered by Landlock),
//! the kernel's keyrings, io_uring (whose operations bypass these filters), new sessions
//! and process groups (a child that leaves the worker's group would outlive it), tracing
//! other processes, namespaces and mounts, and changes of user or group; and the kernel's
//! persistent IPC objects (System V shared memory, message queues and semaphores, POSIX message
//! queues), which outlive the process that made them and are shared by every process of the
//! IPC namespace: a segment left behind holds memory after grading, a queue carries words
//! from one student's worker to a classmate's. (A worker in a user namespace also gets an IPC
//! namespace of its own, see `limits::install`; the filter holds where namespaces do not.)

use super::SandboxError;

/// Whether this kernel and architecture can take the filter.
#[cfg(target_os = "linux")]
pub fn supported() -> bool {
    // SAFETY: PR_GET_SECCOMP only reads this thread's mode (fails with EINVAL without seccomp).
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP) };
    mode >= 0 && arch().is_some()
}

#[cfg(not(target_os = "linux"))]
pub fn supported() -> bool {
    false
}

#[cfg(target_os = "linux")]
fn arch() -> Option<seccompiler::TargetArch> {
    seccompiler::TargetArch::try_from(std::env::consts::ARCH).ok()
}

/// Applies the filter to this thread and all it starts (workers get it from the supervisor
/// between fork and exec, see [`super::limits::install`]). `unix_sockets` keeps `socket(AF_UNIX, …)` open (for
/// a real GPU's driver).
#[cfg(target_os = "linux")]
pub fn restrict(unix_sockets: bool) -> Result<(), SandboxError> {
    let program = program(unix_sockets)?;
    seccompiler::apply_filter(&program).map_err(|e| SandboxError(format!("seccomp: {e}")))
}

/// The filter as a BPF program, compiled in the supervisor so that the worker's child only
/// hands it to the kernel between fork and exec (no allocation there). It lets `execve`
/// through: the program starts under it.
#[cfg(target_os = "linux")]
pub fn program(unix_sockets: bool) -> Result<seccompiler::BpfProgram, SandboxError> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    fn fail(e: impl std::fmt::Display) -> SandboxError {
        SandboxError(format!("seccomp: {e}"))
    }
    let arch = arch().ok_or_else(|| SandboxError("seccomp: unknown architecture".into()))?;
    let always = Vec::new;
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        // A worker of a grader run as root could become root again (see `limits::RootMap`).
        libc::SYS_setuid,
        libc::SYS_setreuid,
        libc::SYS_setresuid,
        libc::SYS_setfsuid,
        libc::SYS_setgid,
        libc::SYS_setregid,
        libc::SYS_setresgid,
        libc::SYS_setfsgid,
        libc::SYS_setgroups,
    ]
    .into_iter()
    .map(|n| (n, always()))
    .collect();
    let sockets = if unix_sockets {
        let other_family = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(fail)?;
        vec![SeccompRule::new(vec![other_family]).map_err(fail)?]
    } else {
        always()
    };
    rules.insert(libc::SYS_socket, sockets);
    if !unix_sockets {
        // Not for a real GPU's worker, whose driver's use of them no machine here can show.
        for n in SYSTEM_V_AND_MQUEUE {
            rules.insert(n, always());
        }
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(fail)?;
    filter.try_into().map_err(fail)
}

/// The calls that make or use kernel-persistent IPC objects.
#[cfg(target_os = "linux")]
const SYSTEM_V_AND_MQUEUE: [i64; 18] = [
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
];

#[cfg(not(target_os = "linux"))]
pub fn restrict(_: bool) -> Result<(), SandboxError> {
    Err(SandboxError("seccomp exists only on Linux".into()))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// Makes a System V segment and a message queue (removed again at once); `Err` with the
    /// error of the first call that failed.
    fn make_ipc_objects() -> Result<(), std::io::Error> {
        // SAFETY: plain System V calls on objects this test makes and removes.
        unsafe {
            let shm = libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600);
            if shm < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut());
            let queue = libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600);
            if queue < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::msgctl(queue, libc::IPC_RMID, std::ptr::null_mut());
        }
        Ok(())
    }

    #[test]
    fn a_filtered_worker_makes_no_system_v_object_and_neither_do_its_children() {
        if !super::supported() {
            eprintln!("no seccomp here: nothing to check");
            return;
        }
        // The honest twin: the same calls work without the filter (so the test can fail).
        make_ipc_objects().expect("System V IPC works on this machine");
        let (own, child) = std::thread::spawn(|| {
            super::restrict(false).expect("the filter applies");
            let own = make_ipc_objects();
            // A program it starts (here `ipcmk`, util-linux's) inherits the filter.
            let child = std::process::Command::new("ipcmk")
                .args(["-M", "4096"])
                .output()
                .map(|o| o.status.success());
            (own, child)
        })
        .join()
        .expect("the filtered thread ends");
        let err = own.expect_err("shmget/msgget are refused");
        assert_eq!(err.raw_os_error(), Some(libc::EPERM), "{err}");
        if let Ok(made) = child {
            assert!(!made, "ipcmk made a segment under the filter");
        }
    }

    #[test]
    fn a_real_gpu_worker_keeps_system_v_ipc() {
        if !super::supported() {
            return;
        }
        let own = std::thread::spawn(|| {
            super::restrict(true).expect("the filter applies");
            make_ipc_objects()
        })
        .join()
        .expect("the filtered thread ends");
        assert!(own.is_ok(), "{own:?}");
    }
}
