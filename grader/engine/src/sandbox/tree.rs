//! A worker's or a build's whole process tree, held as one: its process group. Every process
//! it starts stays in that group (the seccomp filter refuses `setsid` and `setpgid`, from the
//! first instruction of the worker's program on), so the group can be stopped while the
//! yardstick is measured, ended with its worker, measured for memory and processes, and
//! ended when the grader is interrupted. Unprivileged Linux gives no other handle that holds
//! everywhere: no cgroup may be writable, and a PID namespace needs a user namespace.

use std::collections::BTreeSet;
use std::sync::Mutex;

/// The process groups now running for this grader (workers, builds), ended on Ctrl-C.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Sends `signal` to every process of the group `pgid`.
pub fn signal(pgid: i32, signal: libc::c_int) {
    if pgid > 0 {
        // SAFETY: signals a process group this grader made (a worker's or a build's).
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// The processes of group `pgid` (from `/proc`), with their resident memory in bytes.
pub fn members(pgid: i32) -> Vec<(i32, u64)> {
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let stat = entry.path().join("stat");
        let Ok(stat) = crate::intake::read_text(&stat, crate::intake::SMALL_FILE_BYTES, "") else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, pgrp, … (rss is the 22nd).
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid)
            && fields.first() != Some(&"Z")
        {
            let rss = fields
                .get(21)
                .and_then(|r| r.parse::<u64>().ok())
                .unwrap_or(0);
            found.push((pid, rss * page));
        }
    }
    found
}

/// Whether any process of group `pgid` is left.
pub fn any_left(pgid: i32) -> bool {
    !members(pgid).is_empty()
}

/// Keeps `pgid` on the list of groups ended on Ctrl-C until [`forget`].
pub fn register(pgid: i32) {
    end_on_interrupt();
    if let Ok(mut live) = LIVE.lock() {
        live.insert(pgid);
    }
}

/// Takes `pgid` off the list (it has been ended).
pub fn forget(pgid: i32) {
    if let Ok(mut live) = LIVE.lock() {
        live.remove(&pgid);
    }
}

/// On SIGINT or SIGTERM, kills every registered group (no `cargo`, `rustc` or worker is left
/// behind: they are in groups of their own, which the terminal's Ctrl-C does not reach), then
/// exits as the signal would have (130 or 143). Installed once, by the first [`register`].
fn end_on_interrupt() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let mut pipe = [0; 2];
        // SAFETY: makes a pipe into a valid two-int array.
        if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        WAKE.store(pipe[1], std::sync::atomic::Ordering::SeqCst);
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only writes one byte to a pipe (async-signal-safe).
        unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
        }
        let read_end = pipe[0];
        std::thread::spawn(move || {
            let mut sig = 0u8;
            // SAFETY: reads one byte from the pipe this function made.
            while unsafe { libc::read(read_end, (&raw mut sig).cast(), 1) } != 1 {}
            let live: Vec<i32> = LIVE
                .lock()
                .map(|l| l.iter().copied().collect())
                .unwrap_or_default();
            for pgid in live {
                signal(pgid, libc::SIGKILL);
            }
            std::process::exit(128 + i32::from(sig));
        });
    });
}

/// The pipe's write end that [`on_signal`] wakes the ending thread with.
static WAKE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = WAKE.load(std::sync::atomic::Ordering::SeqCst);
    let byte = sig as u8;
    // SAFETY: write is async-signal-safe; the byte lives on this stack.
    unsafe {
        libc::write(fd, (&raw const byte).cast(), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_group_is_found_stopped_and_ended_whole() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30 & wait"])
            .process_group(0);
        let mut child = cmd.spawn().expect("sh");
        let pgid = child.id() as i32;
        let started = std::time::Instant::now();
        while members(pgid).len() < 3 && started.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(members(pgid).len(), 3, "sh and its two sleeps");
        assert!(members(pgid).iter().all(|(_, rss)| *rss > 0));
        signal(pgid, libc::SIGKILL);
        let _ = child.wait();
        let started = std::time::Instant::now();
        while any_left(pgid) && started.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!any_left(pgid), "nothing of the group is left");
    }
}
