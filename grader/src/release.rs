//! `grader release LAB`: the student repository of a lab, generated from its reference
//! solution (`solutions/<lab>/`): the template sources (solution regions → `todo!()`, see
//! [`crate::template`]), the student README, `tests/grade.rs`, a `.gitignore`, the GitHub
//! Classroom workflow ([`crate::classroom`]) and a `grader` dependency that works outside this
//! repository (a git URL and revision for a course, or a path). `templates/<lab>/` in this
//! repository is the release with `--grader-path ../../grader`.

use crate::labs::LabInfo;
use std::path::{Path, PathBuf};

/// Where a released lab crate gets its grader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraderSource {
    /// A git repository of gpu-labs at a fixed revision (a real course: every student builds
    /// the same grader).
    Git {
        /// The repository URL.
        url: String,
        /// The commit (or tag) to build.
        rev: String,
    },
    /// A path to the `grader/` folder, relative to the released crate or absolute.
    Path(String),
}

impl GraderSource {
    /// The dependency as `Cargo.toml` writes it, for a crate of `lab`: none of the grader's
    /// features but that lab's (not the command's flows, not the other labs).
    fn dependency(&self, lab: &str) -> String {
        let quoted = |s: &str| toml::Value::from(s).to_string();
        let features = format!("default-features = false, features = [{}]", quoted(lab));
        match self {
            GraderSource::Git { url, rev } => {
                format!(
                    "grader = {{ git = {}, rev = {}, {features} }}",
                    quoted(url),
                    quoted(rev)
                )
            }
            GraderSource::Path(path) => {
                format!("grader = {{ path = {}, {features} }}", quoted(path))
            }
        }
    }
}

/// Why a lab could not be released.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// No lab has that name.
    #[error("there is no lab `{0}` (known: {known}); pass one of those names", known = crate::labs::names().join(", "))]
    UnknownLab(String),
    /// Neither a git nor a path source was given.
    #[error("say where students get the grader: --grader-git URL --grader-rev REV (a course), or --grader-path PATH")]
    NoGraderSource,
    /// The output folder has files and `--force` was not given.
    #[error("{0} already exists and is not empty; pass --force to write over it, or choose another --out")]
    OutNotEmpty(PathBuf),
    /// The solution's manifest does not name the grader as a dev-dependency.
    #[error("{0}: no `grader = …` line under [dev-dependencies] to point at the grader")]
    NoGraderDependency(PathBuf),
    /// The template could not be made from the solution.
    #[error(transparent)]
    Template(#[from] crate::template::TemplateError),
    /// The lab's rubric cannot become a Classroom workflow.
    #[error(transparent)]
    Classroom(#[from] crate::classroom::ClassroomError),
    /// The lab's rubric could not be read.
    #[error(transparent)]
    Rubric(#[from] crate::rubric::RubricError),
    /// The workspace's `Cargo.lock` could not be read or does not hold the lab.
    #[error("{path}: {reason}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Writing failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The `.gitignore` of a student repository: build outputs (the Classroom step results live
/// in `target/` too).
const GITIGNORE: &str = "/target\n";

/// The reference solution of `lab` in this grader's source tree.
pub fn solution_dir(lab: &LabInfo) -> PathBuf {
    Path::new(crate::stage::GRADER_DIR)
        .join("..")
        .join("solutions")
        .join(lab.name)
}

/// Every file of the release of `lab`, as (relative path, contents), sorted.
pub fn files(lab_name: &str, source: &GraderSource) -> Result<Vec<(String, String)>, ReleaseError> {
    let lab =
        crate::labs::find(lab_name).ok_or_else(|| ReleaseError::UnknownLab(lab_name.into()))?;
    let solution = solution_dir(lab);
    let mut files = crate::template::generate(&solution)?;
    let manifest_path = solution.join("Cargo.toml");
    let manifest = files
        .iter_mut()
        .find(|(path, _)| path == "Cargo.toml")
        .ok_or_else(|| ReleaseError::NoGraderDependency(manifest_path.clone()))?;
    manifest.1 = with_grader(&manifest.1, source, lab.name)
        .ok_or_else(|| ReleaseError::NoGraderDependency(manifest_path.clone()))?;
    // The student README's source of truth is the assignment's (the solution's copy is the same).
    let readme = Path::new(crate::stage::GRADER_DIR)
        .join("..")
        .join("assignments")
        .join(lab.name)
        .join("README.md");
    if let Ok(text) = grader_engine::intake::read_own_text(&readme, "") {
        files.retain(|(path, _)| path != "README.md");
        files.push(("README.md".into(), text));
    }
    // Its translations go beside it (`README.zh-TW.md`).
    for lang in &grader_engine::i18n::Lang::ALL[1..] {
        let name = format!("README.{}.md", lang.tag());
        if let Ok(text) = grader_engine::intake::read_own_text(&readme.with_file_name(&name), "") {
            files.retain(|(path, _)| *path != name);
            files.push((name, text));
        }
    }
    let assignment = crate::rubric::embedded(lab.name)?;
    let package = package_name(&manifest_text(&files)).ok_or_else(|| ReleaseError::Lock {
        path: manifest_path.clone(),
        reason: "no [package] name".into(),
    })?;
    if let Some(lock) = lock_file(&package)? {
        let path_grader = GraderSource::Path(crate::stage::GRADER_DIR.to_string());
        let manifest = with_grader(&manifest_text(&files), &path_grader, lab.name)
            .ok_or_else(|| ReleaseError::NoGraderDependency(manifest_path.clone()))?;
        let lock = pruned_by_cargo(&manifest, &lock, &workspace_lock_path())?;
        files.push(("Cargo.lock".into(), with_grader_source(&lock, source)));
    }
    files.push((".gitignore".into(), GITIGNORE.into()));
    files.push((
        ".github/workflows/classroom.yml".into(),
        crate::classroom::workflow(&assignment)?,
    ));
    files.sort();
    Ok(files)
}

/// The text of `Cargo.toml` among `files`.
fn manifest_text(files: &[(String, String)]) -> String {
    files
        .iter()
        .find(|(path, _)| path == "Cargo.toml")
        .map(|(_, text)| text.clone())
        .unwrap_or_default()
}

/// The `[package]` name a manifest declares.
fn package_name(manifest: &str) -> Option<String> {
    let table: toml::Table = manifest.parse().ok()?;
    Some(table.get("package")?.get("name")?.as_str()?.to_string())
}

/// One `[[package]]` of a `Cargo.lock`.
#[derive(Debug, serde::Deserialize)]
struct LockedPackage {
    name: String,
    version: String,
    source: Option<String>,
    checksum: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
}

impl LockedPackage {
    /// Whether `other` is the same package: the same name, version, source and checksum are
    /// the same bytes on every machine (its dependencies' list may be cut down).
    fn is(&self, other: &LockedPackage) -> bool {
        (&self.name, &self.version, &self.source, &self.checksum)
            == (&other.name, &other.version, &other.source, &other.checksum)
    }
}

/// The `src/` files students start from for `lab` (path, text): what `grader release`
/// writes from `solutions/<lab>/`; the similarity report leaves them out.
pub fn template_sources(lab: &str) -> Result<Vec<(String, String)>, String> {
    let info = crate::labs::find(lab).ok_or_else(|| format!("this grader has no lab `{lab}`"))?;
    crate::template::generate(&solution_dir(info))
        .map_err(|e| format!("the template of `{lab}` could not be made: {e}"))
}

/// The workspace's `Cargo.lock`, beside the grader's sources.
fn workspace_lock_path() -> PathBuf {
    let path = Path::new(crate::stage::GRADER_DIR)
        .join("..")
        .join("Cargo.lock");
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// The released crate's `Cargo.lock`: this workspace's, cut down to the packages the lab's
/// build uses, so students and Classroom build the versions this repository tested (and
/// Classroom's cache key, the lock's hash, changes exactly when they do). The grader is a path
/// dependency here ([`with_grader_source`] points it elsewhere). `None` when the grader's
/// sources come without the workspace's lock.
fn lock_file(package: &str) -> Result<Option<String>, ReleaseError> {
    let path = workspace_lock_path();
    let Ok(text) = grader_engine::intake::read_own_text(&path, "") else {
        return Ok(None);
    };
    let fail = |reason: String| ReleaseError::Lock {
        path: path.clone(),
        reason,
    };
    // Every package's text as cargo wrote it (up to the next table), and what it says.
    let mut chunks = text.split("\n[[package]]\n");
    let header = chunks.next().unwrap_or_default();
    let mut packages = Vec::new();
    for chunk in chunks {
        let body = chunk.find("\n[").map_or(chunk, |end| &chunk[..=end]);
        let parsed: LockedPackage = toml::from_str(body)
            .map_err(|e| fail(format!("a [[package]] that does not parse: {e}")))?;
        packages.push((body, parsed));
    }
    let find = |dependency: &str| {
        let mut words = dependency.split(' ');
        let name = words.next().unwrap_or_default();
        let version = words.next();
        let source = words.next().map(|s| s.trim_matches(['(', ')']));
        packages.iter().position(|(_, p)| {
            p.name == name
                && version.is_none_or(|v| p.version == v)
                && source.is_none_or(|s| p.source.as_deref() == Some(s))
        })
    };
    let root = find(package).ok_or_else(|| {
        fail(format!(
            "no package `{package}`: add the lab's solution to the workspace's members and build it"
        ))
    })?;
    // The workspace resolves the grader as a member, with its dev-dependencies and its
    // default `cli` feature; a released crate builds it as a dependency, without either.
    let mut grader_left_out = grader_left_out_dependencies();
    grader_left_out.extend(grader_cli_only_dependencies());
    let mut kept = vec![false; packages.len()];
    let mut todo = vec![root];
    while let Some(index) = todo.pop() {
        if std::mem::replace(&mut kept[index], true) {
            continue;
        }
        let locked = &packages[index].1;
        for dependency in &locked.dependencies {
            let name = dependency.split(' ').next().unwrap_or_default();
            if locked.name == "grader"
                && locked.source.is_none()
                && grader_left_out.iter().any(|d| d == name)
            {
                continue;
            }
            let found = find(dependency).ok_or_else(|| {
                fail(format!(
                    "`{}` depends on `{dependency}`, which it does not list",
                    packages[index].1.name
                ))
            })?;
            todo.push(found);
        }
    }
    let mut out = header.to_string();
    for ((body, package), kept) in packages.iter().zip(kept) {
        if !kept {
            continue;
        }
        out.push_str("\n[[package]]\n");
        if package.name == "grader" && package.source.is_none() {
            out.push_str(&without_dependencies(body, &grader_left_out));
        } else {
            out.push_str(body);
        }
    }
    Ok(Some(out))
}

/// `lock` as cargo itself keeps it for the released `manifest` (with the grader at a path):
/// features the workspace turns on and a lab crate does not (the grader's `cli`) pull in
/// packages only cargo's resolver can tell apart. `cargo update --workspace` re-resolves the
/// lab crate alone with every other version held, which needs the registry's index entries
/// of the lock's packages and none of their sources (a Linux build's cargo home has them all,
/// other platforms' crates included); offline first, then from the network. The result is
/// refused unless every package in it is one of `lock`'s, as `lock` wrote it: a release is a
/// function of the sources, never of what this machine's registry happens to hold.
fn pruned_by_cargo(manifest: &str, lock: &str, lock_path: &Path) -> Result<String, ReleaseError> {
    let fail = |reason: String| ReleaseError::Lock {
        path: lock_path.to_path_buf(),
        reason,
    };
    let dir = tempfile::Builder::new()
        .prefix("release-lock-")
        .tempdir()
        .map_err(|e| {
            fail(format!(
                "cannot make a scratch folder to resolve the lab in: {e}"
            ))
        })?;
    for (path, text) in [
        ("Cargo.toml", manifest),
        ("Cargo.lock", lock),
        ("src/lib.rs", ""),
        ("tests/grade.rs", "fn main() {}\n"),
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(dir.path()))
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut last_error = String::new();
    for offline in [true, false] {
        let mut command = std::process::Command::new(&cargo);
        command
            .args(["update", "--workspace", "--quiet", "--manifest-path"])
            .arg(dir.path().join("Cargo.toml"))
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
        if offline {
            command.arg("--offline");
        }
        let out = command.output().map_err(|e| {
            fail(format!(
                "cannot start `{}` to write the lab's lock file ({e}); put cargo on PATH",
                Path::new(&cargo).display()
            ))
        })?;
        if out.status.success() {
            let pruned = grader_engine::intake::read_text(
                &dir.path().join("Cargo.lock"),
                grader_engine::intake::GRADER_FILE_BYTES,
                "Cargo.lock",
            )
            .map_err(|e| fail(format!("cargo wrote no lock file for the lab: {e}")))?;
            return only_locked_packages(&pruned, lock)
                .map(|()| pruned)
                .map_err(fail);
        }
        last_error = String::from_utf8_lossy(&out.stderr)
            .lines()
            .map(str::trim)
            .find_map(|line| line.strip_prefix("error:"))
            .map_or("cargo failed", str::trim)
            .chars()
            .take(300)
            .collect();
    }
    Err(fail(format!(
        "cargo cannot resolve the lab's dependencies from this machine's registry, nor fetch its \
         index ({last_error}); connect to crates.io once (or run `cargo fetch` in the gpu-labs \
         workspace) and release again"
    )))
}

/// `Ok` when every `[[package]]` of `pruned` is one of `lock`'s with the same version, source
/// and checksum; else which one is new (cargo resolved it afresh, from whatever this machine's
/// registry holds).
fn only_locked_packages(pruned: &str, lock: &str) -> Result<(), String> {
    let entries = |text: &str| -> Result<Vec<LockedPackage>, String> {
        #[derive(serde::Deserialize)]
        struct Lock {
            #[serde(default)]
            package: Vec<LockedPackage>,
        }
        toml::from_str::<Lock>(text)
            .map(|l| l.package)
            .map_err(|e| format!("a lock file that does not parse: {e}"))
    };
    let held = entries(lock)?;
    for package in entries(pruned)? {
        if !held.iter().any(|h| h.is(&package)) {
            return Err(format!(
                "the lab's build needs {} {}, which the workspace's Cargo.lock does not hold as \
                 cargo resolved it here: build the lab's solution in the workspace (`cargo build \
                 -p {}`), commit the lock, and release again",
                package.name, package.version, package.name
            ));
        }
    }
    Ok(())
}

/// `lock` with the grader's entries pointing at `source`: the `grader` package and the
/// crates it takes from its own repository by path (the engine, the labs) are all fetched
/// from that one git source. A git grader at a full commit hash gets the exact `source`
/// lines; at another revision (a tag) cargo adds them on the first build, and a path grader
/// has none.
fn with_grader_source(lock: &str, source: &GraderSource) -> String {
    let GraderSource::Git { url, rev } = source else {
        return lock.to_string();
    };
    if rev.len() != 40 || !rev.chars().all(|c| c.is_ascii_hexdigit()) {
        return lock.to_string();
    }
    let source_line = format!(
        "source = {}\n",
        toml::Value::from(format!("git+{url}?rev={rev}#{rev}"))
    );
    let mut lock = lock.to_string();
    for name in grader_packages() {
        let marker = format!("\n[[package]]\nname = \"{name}\"\nversion = \"");
        let Some(at) = lock.find(&marker) else {
            continue;
        };
        let version_end = at + marker.len();
        let Some(line_end) = lock[version_end..].find('\n').map(|i| version_end + i + 1) else {
            continue;
        };
        if !lock[line_end..].starts_with("source = ") {
            lock.insert_str(line_end, &source_line);
        }
    }
    lock
}

/// The packages a released crate takes from the grader's repository: `grader` and every
/// crate it reaches by path, directly or not (`grader-engine`, `grader-labs`,
/// `grader-worker`), read from their manifests.
fn grader_packages() -> Vec<String> {
    let mut names = vec!["grader".to_string()];
    let mut manifests = vec![Path::new(crate::stage::GRADER_DIR).to_path_buf()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(dir) = manifests.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let table: toml::Table = grader_engine::intake::read_own_text(&dir.join("Cargo.toml"), "")
            .ok()
            .and_then(|text| text.parse().ok())
            .unwrap_or_default();
        let Some(deps) = table.get("dependencies").and_then(|d| d.as_table()) else {
            continue;
        };
        for (key, spec) in deps {
            let Some(path) = spec.get("path").and_then(|p| p.as_str()) else {
                continue;
            };
            let name = spec
                .get("package")
                .and_then(|p| p.as_str())
                .unwrap_or(key)
                .to_string();
            if !names.contains(&name) {
                names.push(name);
            }
            let to = dir.join(path);
            manifests.push(std::fs::canonicalize(&to).unwrap_or(to));
        }
    }
    names
}

/// A `[[package]]`'s text without the lines of its `dependencies` list that name one of
/// `names` (` "clap",` or ` "clap 4.6.0",`).
fn without_dependencies(body: &str, names: &[String]) -> String {
    body.split_inclusive('\n')
        .filter(|line| {
            let entry = line.trim().trim_end_matches(',').trim_matches('"');
            let name = entry.split(' ').next().unwrap_or_default();
            !(line.starts_with(" \"") && names.iter().any(|n| n == name))
        })
        .collect()
}

/// The grader's optional dependencies that only its `cli` feature turns on (`dep:NAME`): a
/// released crate builds the grader without that feature, so cargo leaves them out.
fn grader_cli_only_dependencies() -> Vec<String> {
    let manifest = Path::new(crate::stage::GRADER_DIR).join("Cargo.toml");
    let table: toml::Table = grader_engine::intake::read_own_text(&manifest, "")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_default();
    table
        .get("features")
        .and_then(|f| f.get("cli"))
        .and_then(|cli| cli.as_array())
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str()?.strip_prefix("dep:").map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The grader's dev-dependencies that are not also its dependencies.
fn grader_left_out_dependencies() -> Vec<String> {
    let manifest = Path::new(crate::stage::GRADER_DIR).join("Cargo.toml");
    let table: toml::Table = grader_engine::intake::read_own_text(&manifest, "")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_default();
    let names = |section: &str| -> Vec<String> {
        table
            .get(section)
            .and_then(|deps| deps.as_table())
            .map(|deps| deps.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut used = names("dependencies");
    used.extend(names("build-dependencies"));
    names("dev-dependencies")
        .into_iter()
        .filter(|name| !used.contains(name))
        .collect()
}

/// The manifest of a crate of `lab` with its `grader` dev-dependency pointed at `source`.
fn with_grader(manifest: &str, source: &GraderSource, lab: &str) -> Option<String> {
    let mut in_dev = false;
    let mut found = false;
    let mut out = String::with_capacity(manifest.len());
    for line in manifest.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_dev = trimmed == "[dev-dependencies]";
        }
        let names_grader = trimmed.split([' ', '=']).next() == Some("grader");
        if in_dev && names_grader {
            out.push_str(&source.dependency(lab));
            found = true;
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    found.then_some(out)
}

/// Writes the release of `lab` into `out`; refuses a folder with files in it unless `force`.
/// Returns how many files were written.
pub fn write(
    lab: &str,
    source: &GraderSource,
    out: &Path,
    force: bool,
) -> Result<usize, ReleaseError> {
    let files = files(lab, source)?;
    let has_files = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
    if has_files && !force {
        return Err(ReleaseError::OutNotEmpty(out.to_path_buf()));
    }
    for (relative, text) in &files {
        let path = out.join(relative);
        let fail = |source| ReleaseError::Write {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&path, text).map_err(fail)?;
    }
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_takes_every_crate_the_grader_reaches_by_path_from_its_repository() {
        let names = super::grader_packages();
        for name in ["grader", "grader-engine", "grader-labs", "grader-worker"] {
            assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
        }
        assert!(!names.iter().any(|n| n == "serde"), "{names:?}");
    }

    #[test]
    fn a_pruned_lock_may_only_hold_the_workspace_locks_packages() {
        let held = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"1.0.0\"\nsource = \"registry+x\"\nchecksum = \"c1\"\ndependencies = [\"b\"]\n";
        let cut = held.replace("dependencies = [\"b\"]\n", "");
        assert_eq!(only_locked_packages(&cut, held), Ok(()));
        for foreign in [
            cut.replace("1.0.0", "1.0.1"),
            cut.replace("c1", "c2"),
            cut.replace("registry+x", "registry+y"),
        ] {
            let e = only_locked_packages(&foreign, held).expect_err("not held");
            assert!(e.contains("needs a "), "{e}");
        }
    }

    #[test]
    fn the_grader_dependency_is_rewritten_only_under_dev_dependencies() {
        let manifest = "[dependencies]\ngrader-utils = \"1\"\n\n[dev-dependencies]\ngrader = { path = \"../../grader\" }\n";
        let git = GraderSource::Git {
            url: "https://example.org/g.git".into(),
            rev: "abc".into(),
        };
        assert_eq!(
            with_grader(manifest, &git, "matmul").unwrap(),
            "[dependencies]\ngrader-utils = \"1\"\n\n[dev-dependencies]\ngrader = { git = \"https://example.org/g.git\", rev = \"abc\", default-features = false, features = [\"matmul\"] }\n"
        );
        assert!(with_grader("[dependencies]\n", &git, "matmul").is_none());
    }

    #[test]
    fn a_release_has_the_workflow_the_gitignore_and_no_solution() {
        let files = files("matmul", &GraderSource::Path("../../grader".into())).unwrap();
        let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        for expected in [
            ".github/workflows/classroom.yml",
            ".gitignore",
            "Cargo.lock",
            "Cargo.toml",
            "README.md",
            "README.zh-TW.md",
            "src/lib.rs",
            "src/gpu.rs",
            "tests/grade.rs",
        ] {
            assert!(names.contains(&expected), "{expected} in {names:?}");
        }
        assert!(files
            .iter()
            .all(|(_, text)| !text.contains("BEGIN SOLUTION")));
        assert!(matches!(
            super::files("nope", &GraderSource::Path(".".into())),
            Err(ReleaseError::UnknownLab(_))
        ));
    }
}
