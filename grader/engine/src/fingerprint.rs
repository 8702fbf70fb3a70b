//! Fingerprints of a submission: a hash of what grading takes of it (a batch regrades only
//! what changed) and the git commit a repository is at (a Classroom run derives its seed from it, so
//! every step of one push grades the same inputs).

use std::path::Path;

pub use grader_worker::hash::{of_text, Fnv};

/// A hash of what official grading takes from the submission at `dir`, as 16 hex digits: its
/// `Cargo.toml`, `build.rs` and `tests/grade.rs` (within intake's file limit), and its `src/`
/// as [`crate::intake::walk_tree`] takes it (within [`crate::intake::SOURCES`]). Nothing else
/// of the folder is opened, so a student's `data/` of thousands of large files costs nothing;
/// where something is refused, the refusal is hashed (grading refuses it too, with the same
/// words).
pub fn submission(dir: &Path) -> String {
    let limits = crate::intake::SOURCES;
    let mut h = Fnv::default();
    for name in ["Cargo.toml", "build.rs", "tests/grade.rs"] {
        h.field(name.as_bytes());
        match crate::intake::read_file(&dir.join(name), limits.file_bytes, name) {
            Ok(bytes) => h.field(&bytes),
            Err(refused) => h.field(refused.to_string().as_bytes()),
        }
    }
    let mut visit = |relative: &Path, _: &str, content: Option<Vec<u8>>| {
        h.field(relative.to_string_lossy().replace('\\', "/").as_bytes());
        h.field(content.as_deref().unwrap_or(b"/"));
        Ok(())
    };
    let walked = crate::intake::walk_tree(dir, &dir.join("src"), limits, &mut visit);
    if let Err(refused) = walked {
        h.field(refused.to_string().as_bytes());
    }
    format!("{:016x}", h.finish())
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

    fn lab_crate() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}").unwrap();
        dir
    }

    /// A change to what grading takes changes the hash; a change to anything else (`target/`,
    /// a `data/` folder) does not.
    #[test]
    fn a_submission_hash_follows_what_grading_takes() {
        let dir = lab_crate();
        let first = submission(dir.path());
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/x"), "built").unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/x"), "images").unwrap();
        assert_eq!(submission(dir.path()), first);
        std::fs::write(dir.path().join("src/lib.rs"), "fn b() {}").unwrap();
        let second = submission(dir.path());
        assert_ne!(second, first);
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
        assert_ne!(submission(dir.path()), second);
    }

    /// A `src/` past intake's limits (30,000 files) is not walked past them: its hash comes at
    /// once, and grading refuses it.
    #[test]
    fn a_flooded_src_is_refused_not_walked() {
        let dir = lab_crate();
        let flood = dir.path().join("src/flood");
        std::fs::create_dir_all(&flood).unwrap();
        for i in 0..30_000 {
            std::fs::write(flood.join(format!("{i}.rs")), "").unwrap();
        }
        let started = std::time::Instant::now();
        let first = submission(dir.path());
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(submission(dir.path()), first);
        let refused = crate::intake::copy_tree(
            dir.path(),
            &dir.path().join("src"),
            &dir.path().join("copy"),
            crate::intake::SOURCES,
        );
        assert!(refused.is_err_and(|r| r.why.contains("1000 files and folders")));
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
