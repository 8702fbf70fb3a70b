//! A fresh folder for one run's files (a grading run's copy of the sources, a worker's
//! scratch space), removed with everything in it when dropped. A dozen lines of the engine's
//! own rather than a crate: a released lab crate's first `cargo test` compiles the engine, and
//! a temporary-file crate would bring a system-call layer with it (seven CPU-seconds).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A folder made fresh under the system's temporary folder, removed on drop. Its mode is a
/// new folder's (the umask decides, usually 0755), as `tempfile`'s was: a worker running as
/// another user enters a grading run's folder (its working folder, which it cannot write);
/// were the folder closed to it, its working folder would be its own scratch instead.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Makes `<temp>/<prefix><unique>`. The folder is created, never reused: a name that
    /// already exists (left by another process, or planted) is skipped.
    pub fn new(prefix: &str) -> io::Result<ScratchDir> {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..100 {
            let n = MADE.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path = base.join(format!(
                "{prefix}{:x}-{n:x}-{nanos:08x}",
                std::process::id()
            ));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "every name tried for a scratch folder in {} exists",
                base.display()
            ),
        ))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_is_new_and_gone_with_its_files_when_dropped() {
        let a = ScratchDir::new("gl-scratch-test-").expect("made");
        let b = ScratchDir::new("gl-scratch-test-").expect("made");
        assert_ne!(a.path(), b.path());
        std::fs::create_dir(a.path().join("inner")).expect("inner");
        std::fs::write(a.path().join("inner/f"), "x").expect("a file");
        // A new folder's mode, as any folder made here gets (a worker may enter it).
        let plain = a.path().join("plain");
        std::fs::create_dir(&plain).expect("a plain folder");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions();
        assert_eq!(mode(a.path()), mode(&plain));
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
        assert!(b.path().is_dir());
    }
}
