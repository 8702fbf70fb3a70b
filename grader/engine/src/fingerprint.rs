//! Fingerprints of a submission: a hash of a folder's files (a batch regrades only what
//! changed) and the git commit a repository is at (a Classroom run derives its seed from it, so
//! every step of one push grades the same inputs).

use std::path::Path;

pub use grader_worker::hash::{of_text, Fnv};

/// A hash of every file under `dir` (relative paths and contents, in sorted order; `target/`
/// and `.git/` left out), as 16 hex digits. A missing folder hashes as empty.
pub fn tree(dir: &Path) -> std::io::Result<String> {
    let mut files = Vec::new();
    if dir.is_dir() {
        collect(dir, dir, &mut files)?;
    }
    files.sort();
    let mut h = Fnv::default();
    for (relative, path) in files {
        h.field(relative.as_bytes());
        h.field(&content_of(&path)?);
    }
    Ok(format!("{:016x}", h.finish()))
}

/// What stands for a file's content in the hash: the bytes of a regular file up to
/// [`crate::intake::SOURCES`]' file limit (read without following a link or blocking); the
/// size and modification time of a bigger one (a huge sparse file is not read); a link's
/// target; the kind of anything else (a FIFO is never opened).
fn content_of(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok(format!("link {}", std::fs::read_link(path)?.display()).into_bytes());
    }
    if !meta.is_file() {
        return Ok(format!("special {:?}", meta.file_type()).into_bytes());
    }
    let limit = crate::intake::SOURCES.file_bytes;
    if meta.len() <= limit {
        if let Ok(bytes) = crate::intake::read_file(path, limit, "") {
            return Ok(bytes);
        }
    }
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!("big {} {modified}", meta.len()).into_bytes())
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
