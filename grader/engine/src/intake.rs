//! What official grading takes from a submission's folder: regular files and folders only,
//! within size and count limits, never through a link. A submission's folder is the student's
//! to shape, so a symbolic link (to another student's work, the solution or a device), a FIFO
//! that blocks whoever opens it, or a huge sparse file is refused here, with the path, before
//! anything reads it; everything after grades the copy [`copy_tree`] made.
//!
//! Files are opened without following links and without blocking (`O_NOFOLLOW | O_NONBLOCK`),
//! and checked on the open file, so nothing can swap a path between the check and the read.

use std::io::Read;
use std::path::{Path, PathBuf};

/// How much of a submission official grading takes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes in one file.
    pub file_bytes: u64,
    /// Bytes in all.
    pub total_bytes: u64,
    /// Files and folders in all.
    pub entries: usize,
    /// Folders inside folders.
    pub depth: usize,
}

/// The limits for a lab crate's `src/`: far above any lab's sources (the solutions are under
/// 100 kB in a few files), far below what could stall or fill the grading machine.
pub const SOURCES: Limits = Limits {
    file_bytes: 1 << 20,
    total_bytes: 8 << 20,
    entries: 1000,
    depth: 16,
};

/// A file or folder official grading does not take, and why, in the student's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{path}` {why}")]
pub struct Refusal {
    /// The path, relative to the submission when it is inside it.
    pub path: String,
    /// What it is and what to do ("is a symbolic link (to `../bob/src`): …").
    pub why: String,
}

/// Reads the regular file at `path`, at most `limit` bytes, without following a link or
/// blocking on a FIFO; `shown` is how the path is named in a refusal. This, with
/// [`read_head`], is how the grader reads any file a submission, a worker or a build could
/// have written: nothing else in the grader's process opens one (the workspace's clippy
/// configuration refuses `std::fs::read` and its kin outside this module).
pub fn read_file(path: &Path, limit: u64, shown: &str) -> Result<Vec<u8>, Refusal> {
    // A file whose size is over the limit is refused unread; one that grows while it is
    // read, after the first byte past it.
    let file = open_regular(path, limit, shown)?;
    let bytes = read_up_to(file, limit.saturating_add(1), shown)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(shown, bytes.len() as u64, limit));
    }
    Ok(bytes)
}

/// The first `limit` bytes at most of the regular file at `path` (opened as [`read_file`]
/// opens one), however long it is.
pub fn read_head(path: &Path, limit: u64, shown: &str) -> Result<Vec<u8>, Refusal> {
    read_up_to(open_regular(path, u64::MAX, shown)?, limit, shown)
}

/// At most `limit` bytes of `file`.
fn read_up_to(file: std::fs::File, limit: u64, shown: &str) -> Result<Vec<u8>, Refusal> {
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| refusal(shown, format!("cannot be read: {e}")))?;
    Ok(bytes)
}

/// Reads a text file of the instructor's own (the solution a template is made from, a lab's
/// README): as [`read_text`], but a link is followed (the solutions link their READMEs); never
/// for a file a submission, a worker or a build could have written.
pub fn read_own_text(path: &Path, shown: &str) -> Result<String, Refusal> {
    let file = open_with(path, GRADER_FILE_BYTES, shown, false)?;
    String::from_utf8(read_up_to(file, GRADER_FILE_BYTES, shown)?)
        .map_err(|_| refusal(shown, "is not UTF-8 text".into()))
}

/// Reads the text file at `path` as [`read_file`] does; a file that is not UTF-8 is refused.
pub fn read_text(path: &Path, limit: u64, shown: &str) -> Result<String, Refusal> {
    String::from_utf8(read_file(path, limit, shown)?)
        .map_err(|_| refusal(shown, "is not UTF-8 text".into()))
}

/// The most of a file of the grader's own or an instructor's read at once (a student's record,
/// a lock file, a README, a template's source, a package's file): far above any of them.
pub const GRADER_FILE_BYTES: u64 = 64 << 20;

impl From<Refusal> for std::io::Error {
    fn from(refused: Refusal) -> std::io::Error {
        std::io::Error::other(refused.to_string())
    }
}

/// The most of a small file of the machine's or the grader's own (a `/proc` entry, a
/// configuration, a note the grader left) read at once.
pub const SMALL_FILE_BYTES: u64 = 1 << 20;

/// Copies the folder `from` to `to` (made here): regular files and folders only, within
/// `limits`; the first thing that is not taken is refused with its path (relative to
/// `root`, the submission's folder).
pub fn copy_tree(root: &Path, from: &Path, to: &Path, limits: Limits) -> Result<(), Refusal> {
    let mut write = |relative: &Path, shown: &str, content: Option<Vec<u8>>| {
        let at = to.join(relative);
        let written = match content {
            None => std::fs::create_dir_all(&at),
            Some(bytes) => std::fs::write(&at, bytes),
        };
        written.map_err(|e| refusal(shown, format!("could not be copied for grading: {e}")))
    };
    walk_tree(root, from, limits, &mut write)
}

/// What [`walk_tree`] hands its visitor: a path relative to the walked folder, how a refusal
/// names it, and the file's bytes (`None` for a folder, handed before what it holds).
pub type Visit<'a> = dyn FnMut(&Path, &str, Option<Vec<u8>>) -> Result<(), Refusal> + 'a;

/// Walks the folder `from` as [`copy_tree`] takes it (regular files and folders only, within
/// `limits`, in sorted order, `target/` at the top left out), handing each to `visit`; the
/// first thing that is not taken is refused with its path (relative to `root`).
pub fn walk_tree(
    root: &Path,
    from: &Path,
    limits: Limits,
    visit: &mut Visit,
) -> Result<(), Refusal> {
    let mut taken = Taken::default();
    copy_folder(root, from, Path::new(""), limits, 0, &mut taken, visit)
}

/// What [`copy_tree`] has taken so far.
#[derive(Default)]
struct Taken {
    bytes: u64,
    entries: usize,
}

fn copy_folder(
    root: &Path,
    from: &Path,
    to: &Path,
    limits: Limits,
    depth: usize,
    taken: &mut Taken,
    visit: &mut Visit,
) -> Result<(), Refusal> {
    let shown = relative(root, from);
    let meta = std::fs::symlink_metadata(from)
        .map_err(|e| refusal(&shown, format!("cannot be read: {e}")))?;
    if !meta.is_dir() {
        return Err(not_regular(&shown, from, &meta));
    }
    if depth > limits.depth {
        return Err(refusal(
            &shown,
            format!(
                "is more than {} folders deep: keep the crate's sources in a few folders",
                limits.depth
            ),
        ));
    }
    visit(to, &shown, None)?;
    let entries =
        std::fs::read_dir(from).map_err(|e| refusal(&shown, format!("cannot be read: {e}")))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| refusal(&shown, format!("cannot be read: {e}")))?;
        names.push(entry.file_name());
        // A folder of a million names is refused just past the limit, not read whole (one
        // more for a `target/` left out).
        if names.len() > limits.entries.saturating_sub(taken.entries) + 2 {
            break;
        }
    }
    names.sort();
    for name in names {
        if name == "target" && depth == 0 {
            continue;
        }
        let path = from.join(&name);
        let shown = relative(root, &path);
        taken.entries += 1;
        if taken.entries > limits.entries {
            return Err(refusal(
                &shown,
                format!(
                    "is past the {} files and folders official grading takes: remove what the \
                     crate does not need",
                    limits.entries
                ),
            ));
        }
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| refusal(&shown, format!("cannot be read: {e}")))?;
        if meta.is_dir() {
            copy_folder(
                root,
                &path,
                &to.join(&name),
                limits,
                depth + 1,
                taken,
                visit,
            )?;
            continue;
        }
        let left = limits.total_bytes.saturating_sub(taken.bytes);
        let bytes = read_file(&path, limits.file_bytes.min(left), &shown).map_err(|r| {
            if meta.is_file() && meta.len() <= limits.file_bytes && meta.len() > left {
                refusal(
                    &shown,
                    format!(
                        "is past the {} MiB that official grading takes of a crate's sources \
                         in all: remove what the crate does not need",
                        limits.total_bytes >> 20
                    ),
                )
            } else {
                r
            }
        })?;
        taken.bytes += bytes.len() as u64;
        visit(&to.join(&name), &shown, Some(bytes))?;
    }
    Ok(())
}

/// Opens `path` for reading if it is a regular file of at most `limit` bytes.
fn open_regular(path: &Path, limit: u64, shown: &str) -> Result<std::fs::File, Refusal> {
    open_with(path, limit, shown, true)
}

/// [`open_regular`], following a link when `no_links` is false.
fn open_with(
    path: &Path,
    limit: u64,
    shown: &str,
    no_links: bool,
) -> Result<std::fs::File, Refusal> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        if no_links { libc::O_NOFOLLOW } else { 0 } | libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => {
            // A link (ELOOP with O_NOFOLLOW) or anything else that is not a file is named as
            // what it is.
            return Err(match std::fs::symlink_metadata(path) {
                Ok(meta) if !meta.is_file() => not_regular(shown, path, &meta),
                _ => refusal(shown, format!("cannot be read: {e}")),
            });
        }
    };
    let meta = file
        .metadata()
        .map_err(|e| refusal(shown, format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(not_regular(shown, path, &meta));
    }
    if meta.len() > limit {
        return Err(too_big(shown, meta.len(), limit));
    }
    Ok(file)
}

/// The refusal of something that is not a regular file or folder, saying what it is.
fn not_regular(shown: &str, path: &Path, meta: &std::fs::Metadata) -> Refusal {
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| format!(" (to `{}`)", t.display()))
            .unwrap_or_default();
        return refusal(
            shown,
            format!(
                "is a symbolic link{target}: official grading takes only the submission's own \
                 files, so commit the file itself, not a link"
            ),
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let what = if kind.is_fifo() {
            "a named pipe (FIFO)"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_block_device() || kind.is_char_device() {
            "a device file"
        } else {
            "not a regular file"
        };
        refusal(
            shown,
            format!("is {what}: official grading takes regular files and folders only"),
        )
    }
    #[cfg(not(unix))]
    refusal(
        shown,
        "is not a regular file: official grading takes regular files and folders only".into(),
    )
}

fn too_big(shown: &str, len: u64, limit: u64) -> Refusal {
    refusal(
        shown,
        format!(
            "is {}: official grading takes files of at most {}; a lab's source files are a few \
             kB",
            size(len),
            size(limit)
        ),
    )
}

/// `len` bytes for a person: "3.0 GiB", "512 kB", "200 bytes".
fn size(len: u64) -> String {
    if len >= 1 << 30 {
        format!("{:.1} GiB", len as f64 / (1u64 << 30) as f64)
    } else if len >= 1 << 20 {
        format!("{:.1} MiB", len as f64 / (1u64 << 20) as f64)
    } else if len >= 1 << 10 {
        format!("{} kB", len >> 10)
    } else {
        format!("{len} bytes")
    }
}

fn refusal(shown: &str, why: String) -> Refusal {
    Refusal {
        path: shown.to_string(),
        why,
    }
}

/// `path` relative to `root` when inside it, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    let inside: PathBuf = path.strip_prefix(root).unwrap_or(path).to_path_buf();
    inside.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_with_src() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/kernels")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "pub fn f() {}").unwrap();
        std::fs::write(
            dir.path().join("src/kernels/k.cu"),
            "__global__ void k() {}",
        )
        .unwrap();
        dir
    }

    fn take(dir: &Path) -> Result<tempfile::TempDir, Refusal> {
        let to = tempfile::tempdir().unwrap();
        copy_tree(dir, &dir.join("src"), &to.path().join("src"), SOURCES).map(|()| to)
    }

    #[test]
    fn regular_files_and_folders_are_copied() {
        let dir = crate_with_src();
        let to = take(dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(to.path().join("src/kernels/k.cu")).unwrap(),
            "__global__ void k() {}"
        );
    }

    #[test]
    fn a_linked_file_or_folder_is_refused_with_its_path_and_target() {
        let dir = crate_with_src();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("lib.rs"), "solution").unwrap();
        std::fs::remove_file(dir.path().join("src/lib.rs")).unwrap();
        std::os::unix::fs::symlink(other.path().join("lib.rs"), dir.path().join("src/lib.rs"))
            .unwrap();
        let refused = take(dir.path()).unwrap_err();
        assert_eq!(refused.path, "src/lib.rs");
        assert!(
            refused.why.starts_with("is a symbolic link (to `/"),
            "{refused}"
        );

        // The whole src/ a link to another submission's.
        let dir = crate_with_src();
        std::fs::remove_dir_all(dir.path().join("src")).unwrap();
        std::os::unix::fs::symlink(other.path(), dir.path().join("src")).unwrap();
        let refused = take(dir.path()).unwrap_err();
        assert_eq!(refused.path, "src");
        assert!(refused.why.contains("symbolic link"), "{refused}");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = crate_with_src();
        let fifo = dir.path().join("src/pipe.rs");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let refused = take(dir.path()).unwrap_err();
        assert_eq!(refused.path, "src/pipe.rs");
        assert!(refused.why.contains("named pipe"), "{refused}");
        // Read on its own, too.
        assert!(read_file(&fifo, 1 << 20, "pipe.rs").is_err());
    }

    #[test]
    fn a_huge_sparse_file_is_refused_without_reading_it() {
        let dir = crate_with_src();
        let huge = std::fs::File::create(dir.path().join("src/data.rs")).unwrap();
        huge.set_len(64 << 30).unwrap();
        let started = std::time::Instant::now();
        let refused = take(dir.path()).unwrap_err();
        assert!(started.elapsed().as_secs() < 2);
        assert_eq!(refused.path, "src/data.rs");
        assert!(refused.why.starts_with("is 64.0 GiB"), "{refused}");
    }

    #[test]
    fn too_many_files_or_too_much_in_all_is_refused() {
        let dir = crate_with_src();
        for n in 0..1001 {
            std::fs::write(dir.path().join(format!("src/m{n:04}.rs")), "").unwrap();
        }
        let refused = take(dir.path()).unwrap_err();
        assert!(refused.why.contains("1000 files and folders"), "{refused}");

        let dir = crate_with_src();
        for n in 0..9 {
            std::fs::write(dir.path().join(format!("src/t{n}.rs")), vec![b' '; 1 << 20]).unwrap();
        }
        let refused = take(dir.path()).unwrap_err();
        assert!(refused.why.contains("8 MiB"), "{refused}");
    }
}
