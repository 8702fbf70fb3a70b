//! Support for the end-to-end tests in `tests/`: where the workspace is, and how to make a
//! faulty submission from the reference solution.

use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the lab crate at `from` to a new temporary folder, replacing in `src/lib.rs` the
/// exact text `find` by `replace` (the text must be there once, so a test cannot silently stop
/// testing anything when the solution changes).
pub fn faulty_copy(from: &Path, find: &str, replace: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("faulty-")
        .tempdir()
        .expect("temp dir");
    copy_crate(from, dir.path());
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("lib.rs");
    assert_eq!(
        text.matches(find).count(),
        1,
        "the solution should contain {find:?} exactly once"
    );
    std::fs::write(&lib, text.replacen(find, replace, 1)).expect("write lib.rs");
    dir
}

/// Copies a lab crate (its Cargo.toml, src/ and tests/) into `to`.
pub fn copy_crate(from: &Path, to: &Path) {
    for sub in ["src", "tests"] {
        copy_dir(&from.join(sub), &to.join(sub));
    }
    let manifest = std::fs::read_to_string(from.join("Cargo.toml")).expect("Cargo.toml");
    // The copy lives elsewhere: point its grader dependency back at this workspace's grader.
    let grader = workspace().join("grader");
    let manifest = manifest.replace(
        "path = \"../../grader\"",
        &format!("path = {:?}", grader.display().to_string()),
    );
    std::fs::write(to.join("Cargo.toml"), manifest).expect("write Cargo.toml");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}
