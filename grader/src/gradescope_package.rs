//! `grader gradescope LAB`: [`Package`] writes the autograder zip of a Gradescope
//! programming assignment for one lab.
//!
//! Gradescope builds an image from the zip once, running its `setup.sh` as root with the
//! network, then runs its `run_autograder` for every submission, which must leave
//! `/autograder/results/results.json` behind
//! (<https://gradescope-autograders.readthedocs.io/en/latest/specs/>). Here:
//!
//! - `setup.sh` installs a C++ compiler, git, curl and Rust (rustup, minimal profile, stable),
//!   installs this grader with `cargo install --locked --git URL --rev REV grader`, and grades
//!   the lab's template once (shipped in `template/`) so that the grading area, its
//!   dependencies and the GPU emulator are built in `/autograder/cache` before any student
//!   submits;
//! - `run_autograder` finds the lab crate in `/autograder/submission` (or in a folder inside
//!   it, for an uploaded zip of the repository's folder) and runs `grader grade … --assignment
//!   LAB --json /autograder/results/results.json`; when there is no crate, or the grader
//!   itself fails, it writes a results.json with no points that says why, so a student never
//!   sees a blank failure;
//! - `assignment.toml` (the rubric the grader embeds) and the lab's `README.md` are there for
//!   reference.
//!
//! Both scripts honour `AUTOGRADER_ROOT` (default `/autograder`), `GPU_LABS_CACHE` (default
//! `$AUTOGRADER_ROOT/cache`), and `run_autograder` also `GRADER` (default `grader` on `PATH`),
//! so the package can be tried without Gradescope (`tests/e2e/gradescope.rs` does).

use crate::labs::{self, LabInfo};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first-run script, with `@LAB@`, `@GRADER_GIT@` and `@GRADER_REV@` to fill in.
const SETUP_SH: &str = include_str!("gradescope_package/setup.sh");
/// The per-submission script, with `@LAB@` to fill in.
const RUN_AUTOGRADER: &str = include_str!("gradescope_package/run_autograder");

/// Why the autograder zip could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The lab is not one this grader knows.
    #[error("unknown lab `{name}` (known: {known})")]
    UnknownLab {
        /// The name given.
        name: String,
        /// The labs there are, comma-separated.
        known: String,
    },
    /// Where setup.sh installs the grader from was not given.
    #[error("--grader-git URL and --grader-rev REV are required: setup.sh installs the grader with `cargo install --locked --git URL --rev REV grader` (for example --grader-git https://github.com/you/gpu-labs --grader-rev \"$(git rev-parse HEAD)\")")]
    NoGraderSource,
    /// The zip would replace a file.
    #[error("{path} already exists; pass --force to replace it")]
    OutExists {
        /// The zip's path.
        path: PathBuf,
    },
    /// A file of the lab (its README, its template) could not be read, or the zip written.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// What was being done (`read`, `write`).
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The zip format refused an entry.
    #[error("cannot write {path} into {zip}: {source}")]
    Zip {
        /// The zip being written.
        zip: PathBuf,
        /// The entry.
        path: String,
        /// The zip library's reason.
        source: zip::result::ZipError,
    },
}

/// One file of the zip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path inside the zip, `/`-separated (`template/src/lib.rs`).
    pub path: String,
    /// Its contents.
    pub contents: Vec<u8>,
    /// Whether it is a script to run (mode 755, else 644).
    pub executable: bool,
}

/// The autograder of one lab, and where its `setup.sh` installs the grader from.
#[derive(Debug, Clone)]
pub struct Package {
    /// The lab.
    pub lab: &'static LabInfo,
    /// The git repository holding this workspace (`cargo install --git`).
    pub grader_git: String,
    /// The commit (or other revision) to install (`cargo install --rev`).
    pub grader_rev: String,
}

impl Package {
    /// The package of lab `name`, installing the grader from `grader_git` at `grader_rev`
    /// (both required; an `Option` so that the command line's missing flag gets this error).
    pub fn new(
        name: &str,
        grader_git: Option<&str>,
        grader_rev: Option<&str>,
    ) -> Result<Self, PackageError> {
        let lab = labs::find(name).ok_or_else(|| PackageError::UnknownLab {
            name: name.to_string(),
            known: labs::names().join(", "),
        })?;
        match (grader_git.map(str::trim), grader_rev.map(str::trim)) {
            (Some(git), Some(rev)) if !git.is_empty() && !rev.is_empty() => Ok(Package {
                lab,
                grader_git: git.to_string(),
                grader_rev: rev.to_string(),
            }),
            _ => Err(PackageError::NoGraderSource),
        }
    }

    /// The zip's files: the two scripts, the rubric, the lab's README and its template, read
    /// from the checkout this grader was built from (`workspace`, see [`workspace`]).
    pub fn entries(&self, workspace: &Path) -> Result<Vec<Entry>, PackageError> {
        let lab = shell_quote(self.lab.name);
        let setup = SETUP_SH
            .replace("@LAB@", &lab)
            .replace("@GRADER_GIT@", &shell_quote(&self.grader_git))
            .replace("@GRADER_REV@", &shell_quote(&self.grader_rev));
        let mut entries = vec![
            script("setup.sh", setup),
            script("run_autograder", RUN_AUTOGRADER.replace("@LAB@", &lab)),
        ];
        let rubric = workspace
            .join("assignments")
            .join(self.lab.name)
            .join("assignment.toml");
        entries.push(file("assignment.toml", read(&rubric)?));
        let readme = rubric.with_file_name("README.md");
        entries.push(file("README.md", read(&readme)?));
        let template = workspace.join("templates").join(self.lab.name);
        let mut files = Vec::new();
        tree_files(&template, "", &mut files)?;
        for (relative, path) in files {
            entries.push(file(&format!("template/{relative}"), read(&path)?));
        }
        Ok(entries)
    }

    /// Writes the zip to `out` (not over an existing file unless `force`); returns how many
    /// files it holds. The zip appears whole or not at all.
    pub fn write(&self, out: &Path, force: bool) -> Result<usize, PackageError> {
        if !force && out.exists() {
            return Err(PackageError::OutExists {
                path: out.to_path_buf(),
            });
        }
        let entries = self.entries(&workspace())?;
        let io = |what, path: &Path| {
            let path = path.to_path_buf();
            move |source| PackageError::Io { what, path, source }
        };
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = tempfile::NamedTempFile::new_in(dir).map_err(io("write into", dir))?;
        let zip_err = |path: &str| {
            let (zip, path) = (out.to_path_buf(), path.to_string());
            move |source| PackageError::Zip { zip, path, source }
        };
        let mut zip = zip::ZipWriter::new(temp.as_file());
        for entry in &entries {
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored)
                .unix_permissions(if entry.executable { 0o755 } else { 0o644 });
            zip.start_file(entry.path.as_str(), options)
                .map_err(zip_err(&entry.path))?;
            zip.write_all(&entry.contents).map_err(io("write", out))?;
        }
        zip.finish().map_err(zip_err("the central directory"))?;
        let persisted = if force {
            temp.persist(out)
        } else {
            temp.persist_noclobber(out)
        };
        persisted.map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                PackageError::OutExists {
                    path: out.to_path_buf(),
                }
            } else {
                io("write", out)(e.error)
            }
        })?;
        Ok(entries.len())
    }
}

/// The checkout this grader was built from (the parent of its `grader/` folder), where the
/// labs' READMEs and templates are.
pub fn workspace() -> PathBuf {
    let grader = Path::new(crate::stage::GRADER_DIR);
    grader.parent().unwrap_or(grader).to_path_buf()
}

/// `text` as one word for bash, in single quotes (`it's` → `'it'\''s'`).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn script(path: &str, text: String) -> Entry {
    Entry {
        path: path.to_string(),
        contents: text.into_bytes(),
        executable: true,
    }
}

fn file(path: &str, contents: Vec<u8>) -> Entry {
    Entry {
        path: path.to_string(),
        contents,
        executable: false,
    }
}

fn read(path: &Path) -> Result<Vec<u8>, PackageError> {
    grader_engine::intake::read_file(path, grader_engine::intake::GRADER_FILE_BYTES, "").map_err(
        |refused| PackageError::Io {
            what: "read",
            path: path.to_path_buf(),
            source: refused.into(),
        },
    )
}

/// Every file under `dir` as (path relative to it, path), sorted, leaving out `target/` and
/// hidden files and folders.
fn tree_files(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), PackageError> {
    let io = |source| PackageError::Io {
        what: "read",
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        let path = entry.path();
        let relative = format!("{prefix}{name}");
        if path.is_dir() {
            tree_files(&path, &format!("{relative}/"), out)?;
        } else if path.is_file() {
            out.push((relative, path));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(lab: &str) -> Package {
        Package::new(lab, Some("https://example.org/it's.git"), Some("abc123"))
            .expect("a known lab with a grader source")
    }

    #[test]
    fn the_lab_and_the_grader_source_are_checked_in_one_line() {
        let unknown = Package::new("nope", Some("u"), Some("r")).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            format!("unknown lab `nope` (known: {})", labs::names().join(", "))
        );
        let lab = labs::LABS.0[0].name;
        for (git, rev) in [(None, Some("r")), (Some("u"), None), (Some(" "), Some("r"))] {
            let err = Package::new(lab, git, rev).unwrap_err();
            assert!(matches!(err, PackageError::NoGraderSource), "{err}");
            assert!(!err.to_string().contains('\n'));
        }
    }

    #[test]
    fn every_lab_packs_its_scripts_with_the_lab_and_the_grader_source_quoted_for_bash() {
        for lab in labs::LABS.0 {
            let entries = package(lab.name)
                .entries(&workspace())
                .expect("the lab's files");
            let text = |path: &str| {
                let entry = entries.iter().find(|e| e.path == path).expect(path);
                String::from_utf8(entry.contents.clone()).expect("text")
            };
            let lab_line = format!("LAB='{}'\n", lab.name);
            let setup = text("setup.sh");
            assert!(setup.contains(&lab_line), "{setup}");
            assert!(
                setup.contains(r"GRADER_GIT='https://example.org/it'\''s.git'"),
                "{setup}"
            );
            assert!(setup.contains("GRADER_REV='abc123'\n"), "{setup}");
            assert!(!setup.contains("@LAB@") && !setup.contains("@GRADER"));
            let run = text("run_autograder");
            assert!(run.contains(&lab_line) && !run.contains("@LAB@"));
            for (path, executable) in [
                ("setup.sh", true),
                ("run_autograder", true),
                ("assignment.toml", false),
                ("README.md", false),
                ("template/Cargo.toml", false),
                ("template/src/lib.rs", false),
            ] {
                let entry = entries.iter().find(|e| e.path == path).expect(path);
                assert_eq!(entry.executable, executable, "{path}");
            }
            assert!(!entries.iter().any(|e| e.path.contains("target/")));
        }
    }

    #[test]
    fn the_zip_is_refused_over_a_file_unless_forced_and_reads_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("autograder.zip");
        std::fs::write(&out, "keep me").expect("write");
        let package = package(labs::LABS.0[0].name);
        let err = package.write(&out, false).unwrap_err();
        assert!(matches!(err, PackageError::OutExists { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "keep me");
        let n = package.write(&out, true).expect("forced");
        let mut zip =
            zip::ZipArchive::new(std::fs::File::open(&out).expect("open")).expect("a zip");
        assert_eq!(zip.len(), n);
        let run = zip.by_name("run_autograder").expect("run_autograder");
        assert_eq!(run.unix_mode().map(|m| m & 0o777), Some(0o755));
    }
}
