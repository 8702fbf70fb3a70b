//! The class's dependencies taken from the grader's own build, where there is one: a grader
//! run from its workspace (`cargo run -p grader`, the end-to-end tests) has just compiled
//! ndarray, cudarc, rayon, serde, `grader-worker`… in that workspace's target folder, so
//! official grading links each submission against those very libraries and compiles only the
//! lab's worker half (`grader-labs-worker`, a few seconds) beside them, instead of compiling
//! the whole graph again in its cache (a cargo home of its own puts the registry's crates at
//! other paths, which cargo builds anew).
//!
//! Only trusted code is compiled here (the grader's crates and the registry's, with the
//! instructor's own cargo, as `cargo build` would); a submission's own build then reads the
//! libraries, never writes them ([`super::build_own`]). Wherever this cannot hold (a grader
//! installed by `cargo install`, a workspace the builds' user cannot read, another compiler
//! for builds), official grading builds the dependencies in its cache as before.
//!
//! What one lookup found is frozen in a folder of its own (hard links, [`frozen_set`]): grader
//! programs of other builds (the end-to-end tests run several) look up again in the same cache,
//! and each must keep linking against the very libraries it found.

use crate::labs::LabInfo;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The libraries a submission's build links, from the grader's workspace build.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Prebuilt {
    /// The folder holding them and everything they link: a frozen set of the grader's build
    /// ([`frozen_set`]), read by builds.
    pub deps_dir: PathBuf,
    /// The lab's worker half, the harness's `grader`.
    pub labs: PathBuf,
    /// The lab crate's own dependencies, as code names them, with their libraries.
    pub externs: Vec<(String, PathBuf)>,
    /// `rustc -vV` of the compiler that built them: a submission must be built by the same.
    pub compiler: String,
}

impl Prebuilt {
    /// The cargo setting that gives a crate these libraries (`--config` of the build): where
    /// the libraries are, and the lab crate's dependencies by name. A setting on cargo's command
    /// line, not a variable: the compiler's environment (which a submission reads with
    /// `option_env!`) holds none of it.
    pub fn rustflags_setting(&self) -> String {
        let mut flags = vec![
            "-L".to_string(),
            format!("dependency={}", self.deps_dir.display()),
        ];
        for (name, rlib) in &self.externs {
            flags.push("--extern".into());
            flags.push(format!("{name}={}", rlib.display()));
        }
        let flags = toml::Value::Array(flags.into_iter().map(toml::Value::from).collect());
        format!("build.rustflags={flags}")
    }
}

/// Whether official grading may take the class's dependencies from the grader's own build:
/// not with `GPU_LABS_PREBUILT=off` (the cache's own build, as a grader installed elsewhere
/// has it).
pub(super) fn allowed() -> bool {
    std::env::var("GPU_LABS_PREBUILT").map_or(true, |v| v != "off")
}

/// The libraries for `lab` from the grader's workspace build, or `None` where they cannot be
/// used: `user` (the builds' identity, when it is not the grader's) must be able to read them.
/// Looked up once per process and lab, and once per grader program: a grader's later runs
/// (a class graded one process at a time) read what its first found from `cache` ([`Record`]).
pub(super) fn for_lab(
    lab: &LabInfo,
    cache: &Path,
    user: Option<grader_engine::sandbox::child::Identity>,
) -> Option<Prebuilt> {
    static FOUND: Mutex<BTreeMap<&'static str, Option<Prebuilt>>> = Mutex::new(BTreeMap::new());
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    let prebuilt = found
        .entry(lab.name)
        .or_insert_with(|| {
            let record = cache
                .join("stage")
                .join(format!("{}.prebuilt.json", lab.name));
            if let Some(prebuilt) = Record::read(&record) {
                return Some(prebuilt);
            }
            // One grader at a time links the grader's build and builds beside it.
            let lock = std::fs::File::create(cache.join("stage").join("prebuilt.lock")).ok()?;
            lock.lock().ok()?;
            Record::read(&record).or_else(|| {
                let prebuilt = build(lab, cache)?;
                Record::write(&record, &prebuilt);
                Some(prebuilt)
            })
        })
        .clone()?;
    let readable = |p: &Path| grader_engine::sandbox::root::reachable(p);
    let for_user = user.is_none()
        || (readable(&prebuilt.deps_dir)
            && readable(&prebuilt.labs)
            && prebuilt.externs.iter().all(|(_, p)| readable(p)));
    for_user.then_some(prebuilt)
}

/// What a grader program found, kept in its cache for its next runs: valid while that program
/// and each library are the very files they were (length and time of change), so a grader
/// built again, or libraries built again, are looked up again.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Record {
    /// The running grader, then each library.
    stamps: Vec<(PathBuf, Stamp)>,
    /// What was found.
    prebuilt: Prebuilt,
}

/// A file's length and time of last change, in nanoseconds.
type Stamp = (u64, i128);

/// `path`'s [`Stamp`].
fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let changed = meta.modified().ok()?;
    let nanos = match changed.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    };
    Some((meta.len(), nanos))
}

impl Record {
    /// The stamps of the files a record of `prebuilt` vouches for: the running grader, then
    /// its libraries.
    fn stamps(prebuilt: &Prebuilt) -> Option<Vec<(PathBuf, Stamp)>> {
        let exe = std::env::current_exe().ok()?;
        let libraries = prebuilt.externs.iter().map(|(_, p)| p.clone());
        [exe, prebuilt.labs.clone()]
            .into_iter()
            .chain(libraries)
            .map(|f| Some((f.clone(), stamp(&f)?)))
            .collect()
    }

    /// The record at `path`, when every file it names is as it was.
    fn read(path: &Path) -> Option<Prebuilt> {
        let record: Record = serde_json::from_slice(
            &grader_engine::intake::read_file(path, grader_engine::intake::GRADER_FILE_BYTES, "")
                .ok()?,
        )
        .ok()?;
        (Record::stamps(&record.prebuilt)? == record.stamps).then_some(record.prebuilt)
    }

    /// Keeps `prebuilt` at `path` (written aside and renamed: another grader may read it);
    /// a record that cannot be written only means looking up again next time.
    fn write(path: &Path, prebuilt: &Prebuilt) {
        let Some(stamps) = Record::stamps(prebuilt) else {
            return;
        };
        let record = Record {
            stamps,
            prebuilt: prebuilt.clone(),
        };
        let Ok(text) = serde_json::to_vec(&record) else {
            return;
        };
        let aside = path.with_extension(format!("json.{}", std::process::id()));
        if std::fs::write(&aside, text).is_ok() && std::fs::rename(&aside, path).is_err() {
            let _ = std::fs::remove_file(&aside);
        }
    }
}

/// The grader's workspace: the folder above its crate, when the running grader was built
/// there (its program lies in that workspace's target folder), with that target folder.
fn workspace(cargo: &Path) -> Option<(PathBuf, PathBuf)> {
    let root = Path::new(super::GRADER_DIR).parent()?.to_path_buf();
    if !root.join("Cargo.toml").is_file() {
        return None;
    }
    let out = Command::new(cargo)
        .args(["metadata", "--offline", "--no-deps", "--format-version=1"])
        .current_dir(&root)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let target = PathBuf::from(metadata["target_directory"].as_str()?);
    let target = target.canonicalize().ok()?;
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    exe.starts_with(&target).then_some((root, target))
}

/// Builds the lab's worker half beside the grader's build (the grader's own feature
/// resolution, so that nothing the grader's build compiled is compiled again) and reads back
/// where every library is. It builds in a target folder of the cache's, `cache/prebuilt`, that
/// holds the workspace's build by hard links ([`Share::Outputs`]: what cargo rewrites in place
/// is copied), so whatever cargo does there, the workspace's own `target/` is never written.
fn build(lab: &LabInfo, cache: &Path) -> Option<Prebuilt> {
    use grader_engine::sandbox::build::{link_tree, Share};
    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    let (root, target) = workspace(&cargo)?;
    let shadow = cache.join("prebuilt");
    std::fs::create_dir_all(&shadow).ok()?;
    // Hard links only within one file system: elsewhere this would copy the whole build.
    if !same_file_system(&target, &shadow) {
        return None;
    }
    for part in ["deps", "build", ".fingerprint"] {
        let from = target.join("debug").join(part);
        if from.is_dir() {
            let to = shadow.join("debug").join(part);
            link_tree(&from, &to, Share::Outputs, &|_| true).ok()?;
        }
    }
    let mut command = Command::new(&cargo);
    command
        .args(["build", "--offline", "--message-format=json"])
        .args(["-p", "grader", "--lib", "-p", "grader-labs-worker"])
        .arg("--no-default-features")
        .arg(format!(
            "--features=grader/default,grader-labs-worker/{}",
            lab.name
        ))
        .env("CARGO_TARGET_DIR", &shadow)
        .current_dir(&root);
    #[cfg(unix)]
    super::limit_build(&mut command);
    let mut libraries: HashMap<String, BTreeSet<PathBuf>> = HashMap::new();
    // The grader's own crates are all it may compile (its build in another workspace, such as
    // a lab crate's own `cargo test` sharing the target folder, may have left them to be
    // compiled again here): a registry's crate means this environment would not build what
    // the grader's build did (another cargo home, other flags), and the cache's own build is
    // the one to make.
    let watch = super::Watch {
        limit: super::DEPENDENCIES_LIMIT,
        tree_memory: super::DEPENDENCIES_TREE_MEMORY,
        steps_aside: false,
        only: super::Only::LocalPackages,
    };
    let ran = {
        // Compiling loads the CPU: never while a grading measures a speedup.
        let _turn = grader_engine::check::machine_turn(false);
        super::run_watched(command, watch, |line, _| {
            if let Some((name, rlib)) = library(line) {
                libraries.entry(name).or_default().insert(rlib);
            }
        })
        .ok()?
    };
    if ran.stale_dependencies || !ran.status.is_some_and(|s| s.success()) {
        return None;
    }
    let one = |name: &str| match libraries.get(name) {
        Some(found) if found.len() == 1 => found.iter().next().cloned(),
        _ => None,
    };
    // Paths go to cargo as TOML text: UTF-8 only (else the cache's build is made).
    if libraries.values().flatten().any(|p| p.to_str().is_none()) {
        return None;
    }
    let labs = one("grader_labs_worker")?;
    let built = labs.parent()?.to_path_buf();
    let mut externs = Vec::new();
    for name in super::lab_dependencies(lab).keys() {
        let name = name.replace('-', "_");
        let rlib = one(&name).filter(|p| p.parent() == Some(built.as_path()))?;
        externs.push((name, rlib));
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let compiler = compiler_version(Command::new(rustc).current_dir(&root))?;
    // Builds read a set no later lookup changes: the shadow folder is linked and built again
    // by the next grader program (another feature set, sources edited), while a grader that
    // looked up before may still be building submissions against what it found.
    let set = frozen_set(&built, &cache.join(SETS))?;
    let in_set = |p: &Path| Some(set.join(p.file_name()?));
    Some(Prebuilt {
        labs: in_set(&labs)?,
        externs: externs
            .into_iter()
            .map(|(name, rlib)| Some((name, in_set(&rlib)?)))
            .collect::<Option<_>>()?,
        deps_dir: set,
        compiler,
    })
}

/// The cache's folder of frozen sets of libraries ([`frozen_set`]).
const SETS: &str = "prebuilt-sets";

/// How long a frozen set is kept after it was made: a grader that looked it up still links
/// against it (a class graded over a day), a newer lookup makes another.
const SET_KEPT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// A new folder in `sets` holding every file of the build's `deps` folder as it is now, by
/// hard links: the libraries one lookup found, frozen. Nothing writes into a set after it is
/// made, and whatever later rewrites the shadow build's files (cargo, the compiler, the next
/// lookup's linking) puts a new file in their place, so a set's files keep their contents:
/// every library in it is the one the others were compiled against. Sets older than
/// [`SET_KEPT`] are removed.
fn frozen_set(deps: &Path, sets: &Path) -> Option<PathBuf> {
    use grader_engine::sandbox::build::{link_tree, Share};
    std::fs::create_dir_all(sets).ok()?;
    let now = std::time::SystemTime::now();
    let nanos = now.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    let name = format!("{nanos:x}-{}", std::process::id());
    let part = sets.join(format!("{name}.part"));
    link_tree(deps, &part, Share::Everything, &|_| true).ok()?;
    let set = sets.join(name);
    std::fs::rename(&part, &set).ok()?;
    for old in std::fs::read_dir(sets).into_iter().flatten().flatten() {
        let old = old.path();
        let age = std::fs::metadata(&old)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok());
        if old != set && age.is_some_and(|age| age > SET_KEPT) {
            let _ = std::fs::remove_dir_all(&old);
        }
    }
    Some(set)
}

/// Whether `a` and `b` are on one file system (hard links between them can be made).
fn same_file_system(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev(),
        _ => false,
    }
}

/// `rustc -vV` as `command` (a rustc, in the folder it is asked in) gives it.
pub(super) fn compiler_version(command: &mut Command) -> Option<String> {
    let out = command.arg("-vV").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The crate name and library (`…/deps/lib<name>-<hash>.rlib`) of a library cargo reports
/// having built (or found built) in `line` of its JSON messages.
fn library(line: &[u8]) -> Option<(String, PathBuf)> {
    if !line.starts_with(b"{\"reason\":\"compiler-artifact\"") {
        return None;
    }
    let msg: serde_json::Value = serde_json::from_slice(line).ok()?;
    let kinds = msg["target"]["kind"].as_array()?;
    if msg["profile"]["test"] == true || !kinds.iter().any(|k| k == "lib" || k == "rlib") {
        return None;
    }
    let name = msg["target"]["name"].as_str()?.to_string();
    // The copy in the deps folder, named by its hash, not the one cargo also puts above it
    // for a workspace's own crate (rewritten by every build of another feature set).
    let rmeta = msg["filenames"]
        .as_array()?
        .iter()
        .filter_map(|f| f.as_str())
        .map(Path::new)
        .find(|f| f.extension().is_some_and(|e| e == "rmeta"))?;
    let rlib = rmeta.with_extension("rlib");
    Some((name, rlib))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frozen_set_keeps_what_the_lookup_found_whatever_the_build_does_next() {
        let dir = tempfile::tempdir().expect("temp dir");
        let deps = dir.path().join("deps");
        std::fs::create_dir_all(&deps).expect("mkdir");
        std::fs::write(
            deps.join("libgrader_worker-1.rlib"),
            "worker as labs saw it",
        )
        .unwrap();
        std::fs::write(deps.join("libgrader_labs_worker-2.rlib"), "labs").unwrap();
        let sets = dir.path().join(SETS);
        let set = frozen_set(&deps, &sets).expect("frozen");
        // The next lookup (or cargo) puts another file in a library's place, or removes it.
        std::fs::remove_file(deps.join("libgrader_worker-1.rlib")).unwrap();
        std::fs::write(deps.join("libgrader_worker-1.rlib"), "rebuilt").unwrap();
        std::fs::remove_file(deps.join("libgrader_labs_worker-2.rlib")).unwrap();
        let read = |name: &str| std::fs::read_to_string(set.join(name)).unwrap();
        assert_eq!(read("libgrader_worker-1.rlib"), "worker as labs saw it");
        assert_eq!(read("libgrader_labs_worker-2.rlib"), "labs");
        // A second lookup makes a set of its own; a set older than a week is removed.
        let old = sets.join("old-set");
        std::fs::create_dir_all(&old).unwrap();
        let week_ago = std::time::SystemTime::now() - SET_KEPT - std::time::Duration::from_secs(60);
        std::fs::File::open(&old)
            .and_then(|f| f.set_modified(week_ago))
            .expect("age the old set");
        let second = frozen_set(&deps, &sets).expect("frozen again");
        assert_ne!(second, set);
        assert_eq!(
            std::fs::read_to_string(second.join("libgrader_worker-1.rlib")).unwrap(),
            "rebuilt"
        );
        assert!(set.is_dir(), "a recent set is kept");
        assert!(!old.exists(), "a set older than a week is removed");
    }

    #[test]
    fn a_library_is_read_from_cargo_as_its_hashed_copy() {
        let line = br#"{"reason":"compiler-artifact","package_id":"path+file:///w/grader/labs-worker#0.1.0","target":{"kind":["lib"],"crate_types":["lib"],"name":"grader_labs_worker","src_path":"/w/grader/labs/src/lib.rs"},"profile":{"test":false},"features":["matmul"],"filenames":["/w/target/debug/libgrader_labs_worker.rlib","/w/target/debug/deps/libgrader_labs_worker-002086401ef6bf10.rmeta"],"executable":null,"fresh":true}"#;
        assert_eq!(
            library(line),
            Some((
                "grader_labs_worker".to_string(),
                PathBuf::from("/w/target/debug/deps/libgrader_labs_worker-002086401ef6bf10.rlib")
            ))
        );
        let proc_macro = br#"{"reason":"compiler-artifact","target":{"kind":["proc-macro"],"name":"serde_derive"},"profile":{"test":false},"filenames":["/w/target/debug/deps/libserde_derive-3b87e796a8ee06dd.so"],"fresh":true}"#;
        assert_eq!(library(proc_macro), None);
        assert_eq!(
            library(b"{\"reason\":\"build-finished\",\"success\":true}"),
            None
        );
    }

    /// A record holds while its files are as they were, and not once one of them changed.
    #[test]
    fn a_record_holds_until_a_library_changes() {
        let dir = tempfile::tempdir().expect("a folder");
        let lib = |n: &str| {
            let p = dir.path().join(n);
            std::fs::write(&p, n).expect("write");
            p
        };
        let prebuilt = Prebuilt {
            deps_dir: dir.path().to_path_buf(),
            labs: lib("libgrader_labs_worker-1.rlib"),
            externs: vec![("ndarray".into(), lib("libndarray-2.rlib"))],
            compiler: "rustc 1".into(),
        };
        let record = dir.path().join("matmul.prebuilt.json");
        assert_eq!(Record::read(&record), None);
        Record::write(&record, &prebuilt);
        assert_eq!(Record::read(&record), Some(prebuilt.clone()));
        std::fs::write(&prebuilt.externs[0].1, "built again").expect("write");
        assert_eq!(Record::read(&record), None);
    }

    #[test]
    fn the_flags_name_the_folder_and_each_dependency() {
        let prebuilt = Prebuilt {
            deps_dir: PathBuf::from("/w/target/debug/deps"),
            labs: PathBuf::from("/w/target/debug/deps/libgrader_labs_worker-1.rlib"),
            externs: vec![("ndarray".into(), PathBuf::from("/w/d/libndarray-2.rlib"))],
            compiler: String::new(),
        };
        let setting = prebuilt.rustflags_setting();
        let (key, value) = setting.split_once('=').expect("key=value");
        assert_eq!(key, "build.rustflags");
        let parsed: toml::Table = format!("v = {value}").parse().expect("a TOML array");
        assert_eq!(
            parsed["v"],
            toml::Value::Array(
                [
                    "-L",
                    "dependency=/w/target/debug/deps",
                    "--extern",
                    "ndarray=/w/d/libndarray-2.rlib"
                ]
                .map(toml::Value::from)
                .to_vec()
            )
        );
    }

    /// Every lab crate's dependency is one of `grader-labs-worker`'s, with the same
    /// requirement and features, and one of the grader's own crates' (so that the grader's
    /// build compiled it): the one build holds what every submission links, and official
    /// grading compiles the worker half only.
    #[test]
    fn the_worker_package_depends_on_everything_a_lab_crate_names() {
        let root = Path::new(crate::stage::GRADER_DIR);
        let read = |p: PathBuf| -> toml::Table {
            std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .parse()
                .expect("a manifest")
        };
        let worker = read(root.join("labs-worker/Cargo.toml"));
        let workspace = read(root.join("../Cargo.toml"));
        let spec = |name: &str, value: &toml::Value| -> toml::Value {
            if value
                .get("workspace")
                .is_some_and(|w| w.as_bool() == Some(true))
            {
                workspace["workspace"]["dependencies"][name].clone()
            } else {
                value.clone()
            }
        };
        let graders: Vec<toml::Table> = ["Cargo.toml", "engine/Cargo.toml", "worker/Cargo.toml"]
            .into_iter()
            .map(|m| read(root.join(m)))
            .collect();
        for lab in crate::labs::LABS.0 {
            for (name, wanted) in crate::stage::lab_dependencies(lab) {
                assert!(
                    graders
                        .iter()
                        .any(|m| m["dependencies"].get(&name).is_some()),
                    "no crate of the grader's build depends on {name} ({})",
                    lab.name
                );
                let have = worker["dependencies"]
                    .get(&name)
                    .unwrap_or_else(|| panic!("grader-labs-worker lacks {name} ({})", lab.name));
                assert_eq!(spec(&name, have), wanted, "{name} of {}", lab.name);
            }
        }
    }
}
