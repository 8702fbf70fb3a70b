//! Turns shared by every grading process that uses one grader cache: [`crate::turns`] keeps a
//! speed item alone among the items of its own process, and this keeps it alone among those
//! of other processes too. A student's lab crate is graded by several processes at once when
//! `cargo nextest run` starts one test binary per item (two per core), or when two
//! `cargo test` runs overlap; a speed item measured beside them would be measured on a busy
//! machine.
//!
//! Two advisory locks (`flock`) on files in the cache: an item that runs alone holds the turn
//! lock exclusively, every other item holds it shared. Before either, an item passes the gate
//! lock (exclusively for an item that runs alone, while it waits for the turn; shared and at
//! once released for the others), so a speed item waiting for its turn keeps new items out
//! and is never starved by a stream of short ones. A lock belongs to its open file, so the
//! threads of one process take turns as separate processes do, and nothing a worker inherits
//! holds one (files are opened close-on-exec).

use std::fs::File;
use std::path::Path;

/// The lock whose holders grade items: shared by items beside each other, exclusive for an
/// item that runs alone.
const TURN_FILE: &str = "turns.lock";

/// The lock an item passes before it takes [`TURN_FILE`], held by an item that runs alone
/// while it waits.
const GATE_FILE: &str = "turns.gate";

/// A turn held until dropped (closing the file releases its lock).
#[derive(Debug)]
pub struct MachineTurn {
    _turn: File,
}

/// Waits for a turn among the gradings that use the cache `cache`: alone (no other item of
/// any process runs meanwhile) or beside others. `None` when the lock files cannot be made
/// (a read-only cache, a system without `flock`): grading then goes on with its own
/// process's turns only, as before.
pub fn take(cache: &Path, alone: bool) -> Option<MachineTurn> {
    std::fs::create_dir_all(cache).ok()?;
    let gate = open(&cache.join(GATE_FILE))?;
    let turn = open(&cache.join(TURN_FILE))?;
    lock(&gate, alone)?;
    lock(&turn, alone)?;
    drop(gate);
    Some(MachineTurn { _turn: turn })
}

/// Opens (or makes) a lock file, never through a link.
fn open(path: &Path) -> Option<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path).ok()
}

/// Waits for `file`'s lock: exclusive or shared.
fn lock(file: &File, exclusive: bool) -> Option<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let operation = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        loop {
            // SAFETY: flock on a file this function's caller owns; no memory is passed.
            if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
                return Some(());
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return None;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, exclusive);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Items of several "processes" (threads with turns of their own): one that runs alone
    /// never overlaps another, and items beside each other do overlap.
    #[test]
    fn an_item_that_runs_alone_never_overlaps_another_and_others_share() {
        let cache = tempfile::tempdir().expect("temp dir");
        let (running, most_beside_alone, most) = (
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        );
        let alone_running = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for i in 0..8 {
                let (cache, running, most_beside_alone, most, alone_running) = (
                    cache.path(),
                    &running,
                    &most_beside_alone,
                    &most,
                    &alone_running,
                );
                scope.spawn(move || {
                    let alone = i % 4 == 1;
                    std::thread::sleep(Duration::from_millis(10 * i));
                    let _turn = take(cache, alone).expect("a turn");
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    if alone {
                        alone_running.fetch_add(1, Ordering::SeqCst);
                    }
                    for _ in 0..10 {
                        if alone_running.load(Ordering::SeqCst) > 0 {
                            most_beside_alone
                                .fetch_max(running.load(Ordering::SeqCst), Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    if alone {
                        alone_running.fetch_sub(1, Ordering::SeqCst);
                    }
                    running.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(
            most_beside_alone.into_inner(),
            1,
            "an item that runs alone had company"
        );
        assert!(most.into_inner() > 1, "items beside each other shared");
    }

    #[test]
    fn a_cache_that_cannot_hold_the_locks_means_no_turn() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").expect("write");
        assert!(take(&file, true).is_none());
    }
}
