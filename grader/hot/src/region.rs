//! The memory a supervisor and one worker share: a file in the item's scratch folder, mapped
//! by both. A header of 64-bit fields says which checkpoint the worker stopped at and what to
//! run next; after it come the run's matrices as `f32` bits. Only one side touches it at a
//! time: the supervisor while the worker is stopped, the worker while it runs.

use std::fs::OpenOptions;
use std::path::Path;

/// Bytes before the matrices.
const HEADER_BYTES: usize = 4096;

/// The header's fields, by index (64-bit words).
#[derive(Debug, Clone, Copy)]
#[repr(usize)]
pub enum Field {
    /// The [`Checkpoint`](super::Checkpoint) the worker stopped at.
    Checkpoint = 0,
    /// How many checkpoints the worker has reached.
    Sequence = 1,
    /// The [`Command`](super::Command) the supervisor gives for the next run.
    Command = 2,
    /// The next run's shape `m`, `k`, `n`.
    M = 3,
    /// See [`Field::M`].
    K = 4,
    /// See [`Field::M`].
    N = 5,
    /// The result's rows and columns, as the worker wrote them.
    OutRows = 6,
    /// See [`Field::OutRows`].
    OutCols = 7,
    /// What a student's timer reported (ns).
    ReportedNs = 8,
    /// A token the supervisor hands timed work, which the work returns as its receipt.
    Token = 9,
    /// The token the student's timer handed back.
    Receipt = 10,
}

/// A handle on one mapping of the shared file; clones share the mapping, which is unmapped
/// when the last goes. (The file itself is deleted once the worker has mapped it, so nothing
/// else can open it by name.)
#[derive(Clone)]
pub struct Region {
    map: std::sync::Arc<Mapping>,
}

/// The mapped memory.
struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; access is coordinated by the stop/continue protocol,
// never by two threads of one process at once.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

/// Why the shared file could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot map the stopwatch file {path}: {source}")]
pub struct RegionError {
    path: String,
    source: std::io::Error,
}

impl Region {
    /// The bytes a region for `words` matrix words needs.
    pub fn bytes_for(words: usize) -> usize {
        HEADER_BYTES + words * 4
    }

    /// Creates the file at `path` with room for `words` matrix words and maps it.
    pub fn create(path: &Path, words: usize) -> Result<Region, RegionError> {
        Self::open_with(path, Some(Self::bytes_for(words)))
    }

    /// Maps the file the supervisor created at `path`.
    pub fn open(path: &Path) -> Result<Region, RegionError> {
        Self::open_with(path, None)
    }

    /// Creates a region for `words` matrix words in memory of its own (a `memfd`), sealed
    /// against any change of its size, and maps it: the supervisor's side, whose mapping a
    /// worker can never shorten (a shortened file would fault the supervisor's next read of
    /// it). The descriptor goes to the worker ([`Region::from_fd`]) and is closed here after.
    #[cfg(target_os = "linux")]
    pub fn create_sealed(words: usize) -> Result<(Region, std::os::fd::OwnedFd), RegionError> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let err = |source| RegionError {
            path: "(memory)".into(),
            source,
        };
        let len = Self::bytes_for(words);
        // SAFETY: a fresh memfd from a valid C string; the descriptor is owned from here on.
        let fd = unsafe {
            libc::memfd_create(
                c"gpu-labs-stopwatch".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if fd < 0 {
            return Err(err(std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let file = std::fs::File::from(owned);
        file.set_len(len as u64).map_err(err)?;
        let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
        // SAFETY: adds seals to a memfd made with MFD_ALLOW_SEALING.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
            return Err(err(std::io::Error::last_os_error()));
        }
        let region = Self::map(&file, len).map_err(err)?;
        Ok((region, OwnedFd::from(file)))
    }

    /// Maps the region whose descriptor `fd` this process was given (see
    /// [`Region::create_sealed`]), and closes the descriptor.
    #[cfg(unix)]
    pub fn from_fd(fd: i32) -> Result<Region, RegionError> {
        use std::os::fd::FromRawFd;
        let err = |source| RegionError {
            path: format!("(descriptor {fd})"),
            source,
        };
        // SAFETY: the supervisor handed this descriptor to this process for this one use;
        // a number that is not one fails at the first call below.
        let file = unsafe { std::fs::File::from_raw_fd(fd) };
        let len = file.metadata().map_err(err)?.len() as usize;
        if len < HEADER_BYTES {
            return Err(err(std::io::Error::other("the region is too short")));
        }
        Self::map(&file, len).map_err(err)
    }

    /// Opens (and with `create`, makes that many bytes long) the file and maps all of it.
    fn open_with(path: &Path, create: Option<usize>) -> Result<Region, RegionError> {
        let err = |source| RegionError {
            path: path.display().to_string(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create.is_some())
            .truncate(create.is_some())
            .open(path)
            .map_err(err)?;
        if let Some(len) = create {
            file.set_len(len as u64).map_err(err)?;
        }
        let len = file.metadata().map_err(err)?.len() as usize;
        if len < HEADER_BYTES {
            return Err(err(std::io::Error::other("the file is too short")));
        }
        Self::map(&file, len).map_err(err)
    }

    #[cfg(unix)]
    fn map(file: &std::fs::File, len: usize) -> std::io::Result<Region> {
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh shared mapping of a file this process opened, `len` bytes long (the
        // file has at least that length); the mapping outlives the file descriptor by design.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Region {
            map: std::sync::Arc::new(Mapping {
                base: base.cast(),
                len,
            }),
        })
    }

    #[cfg(not(unix))]
    fn map(_: &std::fs::File, _: usize) -> std::io::Result<Region> {
        Err(std::io::Error::other(
            "timing from outside the worker needs a unix system (Linux, macOS, WSL)",
        ))
    }

    /// Reads a header field.
    pub fn get(&self, field: Field) -> u64 {
        // SAFETY: the header lies inside the mapping, and every field is an aligned u64.
        unsafe {
            self.map
                .base
                .cast::<u64>()
                .add(field as usize)
                .read_volatile()
        }
    }

    /// Writes a header field.
    pub fn set(&mut self, field: Field, value: u64) {
        // SAFETY: as in `get`.
        unsafe {
            self.map
                .base
                .cast::<u64>()
                .add(field as usize)
                .write_volatile(value)
        }
    }

    /// The matrix words after the header.
    pub fn words(&mut self) -> &mut [u32] {
        let count = (self.map.len - HEADER_BYTES) / 4;
        // SAFETY: the words lie inside the mapping, 4096-byte aligned after the page-aligned
        // base; `&mut self` keeps this process from aliasing them.
        unsafe {
            std::slice::from_raw_parts_mut(self.map.base.add(HEADER_BYTES).cast::<u32>(), count)
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: unmaps exactly the mapping made in `map`.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A sealed region cannot be shortened or grown by whoever holds it (a worker that opened
    /// it again through `/proc`, say), and a worker's mapping of it shares the supervisor's.
    #[test]
    fn a_sealed_region_keeps_its_size_whoever_holds_it() {
        use std::os::fd::AsRawFd;
        let (mut ours, fd) = Region::create_sealed(16).expect("a sealed region");
        let again = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .expect("opened again");
        assert!(again.set_len(0).is_err(), "shortened");
        assert!(again.set_len(1 << 30).is_err(), "grown");
        let theirs = Region::from_fd(fd.as_raw_fd()).expect("the worker's mapping");
        std::mem::forget(fd);
        ours.set(Field::Token, 7);
        assert_eq!(theirs.get(Field::Token), 7);
        assert_eq!(ours.words().len(), 16);
    }
}
