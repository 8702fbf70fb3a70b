//! Fingerprints of a submission: a hash of a folder's files (a batch regrades only what
//! changed) and the git commit a repository is at (a Classroom run derives its seed from it, so
//! every step of one push grades the same inputs).

use std::path::Path;

pub use grader_worker::hash::{of_text, Fnv};

/// The most of a folder's file contents [`tree`] reads: [`crate::intake::SOURCES`]' total
/// (what official grading takes of `src/` at most). Files past it are hashed by size and
/// modification time, so a folder of thousands of large files (a student's `data/`) costs a
/// walk of its entries, never a read of all of it.
pub const TREE_BYTES: u64 = crate::intake::SOURCES.total_bytes;

/// A hash of every file under `dir` (relative paths and contents, in sorted order; `target/`
/// and `.git/` left out), as 16 hex digits. A missing folder hashes as empty. At most
/// [`TREE_BYTES`] of contents are read.
pub fn tree(dir: &Path) -> std::io::Result<String> {
    tree_within(dir, TREE_BYTES).map(|(hash, _)| hash)
}

/// [`tree`] reading at most `budget` bytes of contents; also returns how many it read.
fn tree_within(dir: &Path, budget: u64) -> std::io::Result<(String, u64)> {
    let mut files = Vec::new();
    if dir.is_dir() {
        collect(dir, dir, &mut files)?;
    }
    files.sort();
    let mut h = Fnv::default();
    let mut read = 0u64;
    for (relative, path) in files {
        h.field(relative.as_bytes());
        let (content, bytes) = content_of(&path, budget.saturating_sub(read))?;
        read += bytes;
        h.field(&content);
    }
    Ok((format!("{:016x}", h.finish()), read))
}

/// What stands for a file's content in the hash, and how many bytes were read for it: the
/// bytes of a regular file up to [`crate::intake::SOURCES`]' file limit and within `left` of
/// the read budget (read without following a link or blocking); the size and modification
/// time of any other (a huge sparse file is not read); a link's target; the kind of anything
/// else (a FIFO is never opened).
fn content_of(path: &Path, left: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok((
            format!("link {}", std::fs::read_link(path)?.display()).into_bytes(),
            0,
        ));
    }
    if !meta.is_file() {
        return Ok((format!("special {:?}", meta.file_type()).into_bytes(), 0));
    }
    let limit = crate::intake::SOURCES.file_bytes.min(left);
    if meta.len() <= limit {
        if let Ok(bytes) = crate::intake::read_file(path, limit, "") {
            let read = bytes.len() as u64;
            return Ok((bytes, read));
        }
    }
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok((format!("big {} {modified}", meta.len()).into_bytes(), 0))
}

fn collect(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, std::path::PathBuf)>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else {
            // Links and special files too, by what they are (see `content_of`): a change to
            // one changes the submission.
            let relative = path.strip_prefix(root).unwrap_or(&path);
            out.push((relative.to_string_lossy().replace('\\', "/"), path));
        }
    }
    Ok(())
}

/// The commit `dir`'s git repository is at, when it is one and git is installed.
pub fn commit_of(dir: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_hash_changes_with_a_file_and_ignores_target() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}").unwrap();
        let first = tree(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/x"), "built").unwrap();
        assert_eq!(tree(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("src/lib.rs"), "fn b() {}").unwrap();
        assert_ne!(tree(dir.path()).unwrap(), first);
    }

    /// A folder with far more file contents than official grading takes (a student's `data/`
    /// of many 1 MiB files) is read only up to the budget, and a change past it (a file's
    /// size) still changes the hash.
    #[test]
    fn a_tree_reads_at_most_its_budget_and_still_sees_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        for i in 0..12 {
            std::fs::write(
                dir.path().join(format!("data/{i:02}.bin")),
                vec![7u8; 1 << 20],
            )
            .unwrap();
        }
        let budget = 4 << 20;
        let (first, read) = tree_within(dir.path(), budget).unwrap();
        assert!(
            read <= budget,
            "read {read} bytes of a {budget}-byte budget"
        );
        assert!(read > 0);
        std::fs::write(dir.path().join("data/11.bin"), vec![7u8; 1 << 19]).unwrap();
        assert_ne!(tree_within(dir.path(), budget).unwrap().0, first);
        assert_eq!(tree(dir.path()).unwrap(), tree(dir.path()).unwrap());
    }

    #[test]
    fn fields_are_length_prefixed() {
        let mut a = Fnv::default();
        a.field(b"ab");
        a.field(b"c");
        let mut b = Fnv::default();
        b.field(b"a");
        b.field(b"bc");
        assert_ne!(a.finish(), b.finish());
    }
}
