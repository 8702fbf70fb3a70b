//! Official builds: a lab crate anywhere on disk is copied into the grader's build area with
//! the grader's own harness and the grader's own version as its dependency — whatever the
//! crate's `tests/` or `Cargo.toml` say — and built against one shared target directory, so
//! the second submission does not rebuild the dependencies.

use crate::labs::{self, LabInfo};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The grader's source folder, where the staged crate finds its `grader` dependency.
pub const GRADER_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Why a crate could not be staged or built (the submission's compile errors are not here:
/// they are a [`Build::CompileError`]).
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// The path is not a lab crate.
    #[error("{path} is not a lab crate: {why}")]
    NotALabCrate { path: PathBuf, why: String },
    /// The crate does not say which lab it is, and none was given.
    #[error("cannot tell which lab {path} is (package `{package}`); pass --assignment NAME (known: {known})")]
    UnknownLab {
        path: PathBuf,
        package: String,
        known: String,
    },
    /// A file operation in the build area failed.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// Cargo could not be started.
    #[error("cannot run cargo ({program}): {source}; is Rust installed and on PATH?")]
    Cargo {
        program: String,
        source: std::io::Error,
    },
    /// The build's sandbox could not be set up (pass --unsandboxed to build without it).
    #[error("cannot sandbox the build: {0}; pass --unsandboxed (or set GPU_LABS_SANDBOX=off) to build without it")]
    Sandbox(String),
    /// Cargo failed for a reason that is not the submission's code.
    #[error("cargo failed to build the grading harness: {0}")]
    Harness(String),
}

/// A lab crate found on disk.
#[derive(Debug, Clone)]
pub struct LabCrate {
    /// Its folder.
    pub dir: PathBuf,
    /// Its package name.
    pub package: String,
    /// The lab named in `[package.metadata.grader] assignment`, or inferred from the name.
    pub lab: Option<&'static LabInfo>,
    /// Its `[dependencies]`, compared with the lab's to say what official grading ignored.
    dependencies: toml::Table,
    /// Its edition.
    edition: String,
}

/// The result of building a submission.
#[derive(Debug)]
pub enum Build {
    /// It built: the test binary to run as worker, copied out of the shared target directory.
    Built {
        /// The harness binary (worker mode with `--grader-worker`).
        binary: PathBuf,
        /// The copy of the submission's `src/`, as built.
        source_dir: PathBuf,
    },
    /// It did not compile: the compiler's first error, as rendered by rustc.
    CompileError(String),
}

/// The grader's cache: `$GPU_LABS_CACHE`, else `$XDG_CACHE_HOME/gpu-labs`, else
/// `~/.cache/gpu-labs`, else a folder in the temp dir.
pub fn default_cache_dir() -> PathBuf {
    grader_engine::emulate::cache_dir()
}

/// `path` made absolute against the current folder: workers and builds run in other folders,
/// where a relative cache would point somewhere else (`GPU_LABS_CACHE=cache`).
pub fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

/// The most of a submission's `Cargo.toml` or `tests/grade.rs` that is read.
const MANIFEST_BYTES: u64 = 1 << 20;

/// Reads the lab crate at `dir`.
pub fn read_lab_crate(dir: &Path) -> Result<LabCrate, StageError> {
    let not_lab = |why: &str| StageError::NotALabCrate {
        path: dir.to_path_buf(),
        why: why.to_string(),
    };
    if !dir.is_dir() {
        return Err(not_lab("there is no such folder"));
    }
    let manifest_path = dir.join("Cargo.toml");
    if std::fs::symlink_metadata(&manifest_path).is_err() {
        return Err(not_lab(
            "it has no Cargo.toml; point at the folder that holds your lab's Cargo.toml and src/",
        ));
    }
    let text = grader_engine::intake::read_file(&manifest_path, MANIFEST_BYTES, "Cargo.toml")
        .map_err(|refusal| not_lab(&refusal.to_string()))?;
    let text = String::from_utf8(text).map_err(|_| not_lab("its Cargo.toml is not UTF-8 text"))?;
    let manifest: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        not_lab(&format!(
            "its Cargo.toml is not valid TOML: {}",
            e.message().trim()
        ))
    })?;
    let package = manifest
        .get("package")
        .and_then(|p| p.as_table())
        .ok_or_else(|| not_lab("its Cargo.toml has no [package] (is it a workspace root?)"))?;
    let name = package
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or_else(|| not_lab("its Cargo.toml has no package name"))?
        .to_string();
    // Only that it is there: what it is (a link, a FIFO) is for the intake to refuse by name.
    if std::fs::symlink_metadata(dir.join("src").join("lib.rs")).is_err() {
        return Err(not_lab("it has no src/lib.rs; a lab crate is a library"));
    }
    let declared = package
        .get("metadata")
        .and_then(|m| m.get("grader"))
        .and_then(|g| g.get("assignment"))
        .and_then(|a| a.as_str());
    let lab = declared
        .and_then(labs::find)
        .or_else(|| labs::find_by_crate(&name));
    let dependencies = manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    let edition = package
        .get("edition")
        .and_then(|e| e.as_str())
        .unwrap_or("2021")
        .to_string();
    Ok(LabCrate {
        dir: dir.to_path_buf(),
        package: name,
        lab,
        dependencies,
        edition,
    })
}

impl LabCrate {
    /// The lab to grade with: the one given, else the one the crate declares.
    pub fn lab_or(&self, given: Option<&'static LabInfo>) -> Result<&'static LabInfo, StageError> {
        given.or(self.lab).ok_or_else(|| StageError::UnknownLab {
            path: self.dir.clone(),
            package: self.package.clone(),
            known: labs::names().join(", "),
        })
    }

    /// What official grading does not take from this crate, one sentence each for the
    /// student's feedback: a changed `tests/grade.rs`, dependencies the lab does not list or
    /// lists differently, a build script.
    pub fn ignored_changes(&self, lab: &LabInfo) -> Vec<String> {
        let mut notes = Vec::new();
        let harness = grader_engine::intake::read_file(
            &self.dir.join("tests").join("grade.rs"),
            MANIFEST_BYTES,
            "tests/grade.rs",
        )
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let same = |a: &str, b: &str| {
            a.lines()
                .map(str::trim_end)
                .eq(b.lines().map(str::trim_end))
        };
        match harness {
            Ok(text) if same(&text, lab.harness) => {}
            Ok(_) => notes.push(
                "Your tests/grade.rs differs from the lab's: official grading used the lab's own."
                    .to_string(),
            ),
            Err(_)
                if std::fs::symlink_metadata(self.dir.join("tests").join("grade.rs")).is_err() =>
            {
                notes.push(
                    "Your crate has no tests/grade.rs: official grading used the lab's own."
                        .to_string(),
                )
            }
            Err(refusal) => notes.push(format!(
                "Your {refusal}; official grading used the lab's own tests/grade.rs."
            )),
        }
        let lab_deps = lab_dependencies(lab);
        for (name, spec) in &self.dependencies {
            match lab_deps.get(name) {
                None => notes.push(format!(
                    "Your Cargo.toml adds the dependency `{name}`, which is not part of the lab: \
                     official grading builds with the lab's dependencies only, so code that uses \
                     it does not compile there."
                )),
                Some(lab_spec) if lab_spec != spec => notes.push(format!(
                    "Your Cargo.toml changes the dependency `{name}`: official grading used the \
                     lab's ({}).",
                    describe_dependency(lab_spec)
                )),
                Some(_) => {}
            }
        }
        if std::fs::symlink_metadata(self.dir.join("build.rs")).is_ok() {
            notes.push(
                "Your build.rs is not used: official grading builds only src/ with the lab's \
                 manifest."
                    .to_string(),
            );
        }
        notes
    }

    /// The dependencies this crate adds that the lab does not list, as code names them
    /// (`foo-bar` is `foo_bar`): the official build does not have them.
    pub fn dependencies_not_in_lab(&self, lab: &LabInfo) -> Vec<String> {
        let lab_deps = lab_dependencies(lab);
        self.dependencies
            .keys()
            .filter(|name| !lab_deps.contains_key(name.as_str()))
            .map(|name| name.replace('-', "_"))
            .collect()
    }

    /// The staged crate's manifest: the lab's own dependencies, the grader's own harness and
    /// the grader's own version, optimised builds, a workspace of its own.
    fn staged_manifest(&self, lab: &LabInfo) -> String {
        let mut doc = toml::Table::new();
        let mut package = toml::Table::new();
        package.insert("name".into(), lab.lab_crate.into());
        package.insert("version".into(), "0.1.0".into());
        package.insert("edition".into(), self.edition.clone().into());
        package.insert("publish".into(), false.into());
        for auto in ["autotests", "autobenches", "autoexamples", "autobins"] {
            package.insert(auto.into(), false.into());
        }
        doc.insert("package".into(), package.into());
        doc.insert("dependencies".into(), lab_dependencies(lab).into());
        let mut grader = toml::Table::new();
        grader.insert("path".into(), GRADER_DIR.into());
        // The harness needs none of the CLI's flows (batch, release, packaging).
        grader.insert("default-features".into(), false.into());
        // Its own lab only (the feature of the lab's name).
        grader.insert("features".into(), toml::Value::Array(vec![lab.name.into()]));
        let mut dev = toml::Table::new();
        dev.insert("grader".into(), grader.into());
        doc.insert("dev-dependencies".into(), dev.into());
        let mut test = toml::Table::new();
        test.insert("name".into(), "grade".into());
        test.insert("path".into(), "tests/grade.rs".into());
        test.insert("harness".into(), false.into());
        doc.insert("test".into(), vec![toml::Value::from(test)].into());
        let mut dev_profile = toml::Table::new();
        dev_profile.insert("opt-level".into(), 3.into());
        dev_profile.insert("debug".into(), "line-tables-only".into());
        let mut profile = toml::Table::new();
        profile.insert("dev".into(), dev_profile.into());
        doc.insert("profile".into(), profile.into());
        doc.insert("workspace".into(), toml::Table::new().into());
        format!(
            "# Written by the grader for official grading; the submission's own Cargo.toml is not used.\n{doc}"
        )
    }
}

/// The `[dependencies]` of the lab's own manifest.
fn lab_dependencies(lab: &LabInfo) -> toml::Table {
    lab.manifest
        .parse::<toml::Table>()
        .ok()
        .and_then(|m| m.get("dependencies").and_then(|d| d.as_table()).cloned())
        .unwrap_or_default()
}

/// A dependency's requirement as a manifest writes it (`"0.17"`, or its `version`).
fn describe_dependency(spec: &toml::Value) -> String {
    match spec {
        toml::Value::String(version) => format!("version {version}"),
        other => other
            .get("version")
            .and_then(|v| v.as_str())
            .map(|v| format!("version {v}"))
            .unwrap_or_else(|| other.to_string()),
    }
}

/// The longest a submission's build may take, the first build of every dependency included,
/// before it is stopped as the submission's fault (a batch must not wait on it for ever).
pub const BUILD_LIMIT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The memory one process of a build (cargo, each rustc) may map for its data.
pub const BUILD_PROCESS_MEMORY: u64 = 6 << 30;

/// The memory a whole build may hold resident (all its compilers together), read from
/// `/proc` every half second; past it the build is stopped like one past its time.
pub const BUILD_TREE_MEMORY: u64 = 8 << 30;

/// The CPU time the compiler of the submission's crate (and of the harness that calls it) may
/// use: many times what the solution takes, so code that keeps the compiler working without
/// end is stopped long before [`BUILD_LIMIT`]. Dependencies (the grader's own crate, the
/// registry's) are not held to it: a cold build must not be blamed on a student.
pub const BUILD_PROCESS_CPU_SECS: u64 = 300;

/// [`BUILD_PROCESS_CPU_SECS`], or less where `GPU_LABS_BUILD_CPU_SECS` says so (a test hook:
/// it never raises the limit).
fn build_cpu_secs() -> u64 {
    std::env::var("GPU_LABS_BUILD_CPU_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(BUILD_PROCESS_CPU_SECS, |v: u64| {
            v.clamp(1, BUILD_PROCESS_CPU_SECS)
        })
}

/// A build in its own process group (ended whole at its limit, and on Ctrl-C: see
/// `sandbox::tree`), each of its processes held to [`BUILD_PROCESS_MEMORY`], soft and hard,
/// whatever the shell allowed.
#[cfg(unix)]
fn limit_build(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    // SAFETY: the closure runs between fork and exec and makes only getrlimit and setrlimit
    // calls.
    unsafe {
        command.pre_exec(move || {
            use grader_engine::sandbox::limits::set_limit;
            set_limit(libc::RLIMIT_DATA, BUILD_PROCESS_MEMORY)?;
            set_limit(libc::RLIMIT_CORE, 0)?;
            Ok(())
        });
    }
}

/// A `RUSTC_WRAPPER` (a shell script written in `dir`) that holds the compiler of the crates
/// named `crates` to [`build_cpu_secs`] of CPU time, soft and hard, and runs every other
/// compiler as is.
fn cpu_limited_compiler(dir: &Path, crates: &[&str]) -> std::io::Result<PathBuf> {
    let names: Vec<String> = crates
        .iter()
        .map(|c| format!("*\" --crate-name {c} \"*"))
        .collect();
    let script = format!(
        "#!/bin/sh\n# Written by the grader: the submission's compilers get a CPU limit.\n\
         case \" $* \" in\n  {}) ulimit -t {} || exit 1 ;;\nesac\nexec \"$@\"\n",
        names.join("|"),
        build_cpu_secs()
    );
    let path = dir.join(".rustc-limit.sh");
    std::fs::write(&path, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(path)
}

/// Runs `command` to the end and collects its output, or stops it (its whole process group:
/// cargo and the compilers it started) after `limit` and returns `None`.
fn output_within(
    mut command: Command,
    limit: std::time::Duration,
) -> std::io::Result<Option<std::process::Output>> {
    use std::io::Read;
    #[cfg(unix)]
    limit_build(&mut command);
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    #[cfg(unix)]
    grader_engine::sandbox::tree::register(child.id() as i32);
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = std::time::Instant::now();
    let mut polls = 0u32;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        polls += 1;
        #[cfg(unix)]
        let over_memory = polls.is_multiple_of(10)
            && grader_engine::sandbox::tree::members(child.id() as i32)
                .iter()
                .map(|(_, rss)| rss)
                .sum::<u64>()
                > BUILD_TREE_MEMORY;
        #[cfg(not(unix))]
        let over_memory = false;
        if started.elapsed() >= limit || over_memory {
            #[cfg(unix)]
            grader_engine::sandbox::tree::signal(child.id() as i32, libc::SIGKILL);
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    #[cfg(unix)]
    {
        // Whatever it left running (a compiler cargo did not wait for) ends with it.
        grader_engine::sandbox::tree::signal(child.id() as i32, libc::SIGKILL);
        grader_engine::sandbox::tree::forget(child.id() as i32);
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok(status.map(|status| std::process::Output {
        status,
        stdout,
        stderr,
    }))
}

/// A compiler message as the student should read it: the grading machine's folders it names
/// (a dependency's source in the build's cargo registry, the grader's own crate) shortened to
/// what the student has too (`ndarray-0.17.2/src/…`, `grader/src/…`).
fn without_machine_paths(error: &str, cache: &Path) -> String {
    let registry = cache
        .join("build-home")
        .join(".cargo")
        .join("registry")
        .join("src");
    let mut text = error.to_string();
    if let Ok(indexes) = std::fs::read_dir(&registry) {
        for index in indexes.flatten() {
            let prefix = format!("{}/", index.path().display());
            text = text.replace(&prefix, "");
        }
    }
    let grader = Path::new(GRADER_DIR);
    if let Some(root) = grader.parent() {
        text = text.replace(&format!("{}/", root.display()), "");
    }
    text
}

/// Files removed when it is dropped, on every way out of a build.
struct RemoveOnDrop(Vec<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        for file in &self.0 {
            let _ = std::fs::remove_file(file);
            // And the dependency list cargo wrote beside it (`libx-hash.rlib`: `x-hash.d`).
            if let Some(stem) = file.file_stem().and_then(|s| s.to_str()) {
                let stem = stem.strip_prefix("lib").unwrap_or(stem);
                let _ = std::fs::remove_file(file.with_file_name(format!("{stem}.d")));
            }
        }
    }
}

/// How long fetching the lab's crates may take (downloads, on a slow network).
const FETCH_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Downloads what the staged crate needs, with the instructor's own cargo settings and network
/// (a mirror, a proxy), before the build: the build itself runs offline, with an environment
/// and a cargo home that hold none of those settings ([`grader_engine::sandbox::build::confine`]).
/// Nothing of the submission is compiled or run here: the manifest is the lab's.
fn fetch(cargo: &str, manifest: &Path, stage: &Path) -> Result<(), StageError> {
    let mut command = Command::new(cargo);
    command
        .arg("fetch")
        .arg("--manifest-path")
        .arg(manifest)
        .current_dir(stage);
    let output = output_within(command, FETCH_LIMIT).map_err(|source| StageError::Cargo {
        program: cargo.to_string(),
        source,
    })?;
    match output {
        Some(out) if out.status.success() => Ok(()),
        Some(out) => Err(StageError::Harness(format!(
            "cargo could not fetch the lab's crates (is the network or the registry mirror \
             reachable?): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        None => Err(StageError::Harness(format!(
            "cargo did not fetch the lab's crates within {} minutes: check the network",
            FETCH_LIMIT.as_secs() / 60
        ))),
    }
}

/// Copies the submission's `src/` into `run_dir/src` (a folder the caller owns for this grading
/// run) through the intake: regular files only, within its limits. Everything after (the
/// source scan, the build, the judges' reading of the sources) reads that copy.
pub fn take_sources(
    krate: &LabCrate,
    run_dir: &Path,
) -> Result<PathBuf, grader_engine::intake::Refusal> {
    let source_dir = run_dir.join("src");
    grader_engine::intake::copy_tree(
        &krate.dir,
        &krate.dir.join("src"),
        &source_dir,
        grader_engine::intake::SOURCES,
    )?;
    Ok(source_dir)
}

/// Builds the sources [`take_sources`] copied to `source_dir` as `lab` in the build area under
/// `cache`, leaving the harness binary in `run_dir`.
pub fn build(
    krate: &LabCrate,
    lab: &LabInfo,
    cache: &Path,
    run_dir: &Path,
    source_dir: &Path,
) -> Result<Build, StageError> {
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| StageError::Io { what, path, source }
    };
    let source_dir = source_dir.to_path_buf();

    let stage = cache.join("stage").join(lab.name);
    std::fs::create_dir_all(&stage).map_err(io("cannot create", &stage))?;
    // One build at a time per lab: the stage folder and the harness binary are shared.
    let lock_path = cache.join("stage").join(format!("{}.lock", lab.name));
    let lock = std::fs::File::create(&lock_path).map_err(io("cannot create", &lock_path))?;
    lock.lock().map_err(io("cannot lock", &lock_path))?;

    let staged_src = stage.join("src");
    if staged_src.exists() {
        std::fs::remove_dir_all(&staged_src).map_err(io("cannot clear", &staged_src))?;
    }
    // The copy is the grader's own, so this cannot be refused short of a full disk.
    grader_engine::intake::copy_tree(
        run_dir,
        &source_dir,
        &staged_src,
        grader_engine::intake::SOURCES,
    )
    .map_err(|refusal| StageError::Harness(format!("staging the sources: {refusal}")))?;
    let tests = stage.join("tests");
    std::fs::create_dir_all(&tests).map_err(io("cannot create", &tests))?;
    std::fs::write(tests.join("grade.rs"), lab.harness).map_err(io("cannot write", &tests))?;
    let manifest = stage.join("Cargo.toml");
    std::fs::write(&manifest, krate.staged_manifest(lab)).map_err(io("cannot write", &manifest))?;
    let lockfile = stage.join("Cargo.lock");
    let grader_lock = Path::new(GRADER_DIR).join("..").join("Cargo.lock");
    if !lockfile.exists() && grader_lock.is_file() {
        // Start from the grader's own dependency versions: tested together, and shared.
        std::fs::copy(&grader_lock, &lockfile).map_err(io("cannot copy", &grader_lock))?;
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    fetch(&cargo, &manifest, &stage)?;
    let mut command = Command::new(&cargo);
    command
        .args([
            "test",
            "--no-run",
            "--test",
            "grade",
            "--message-format=json",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .current_dir(&stage);
    // What the compiler may read: the staged crate, the toolchain, the registry, the grader;
    // and only the variables a build needs (so this comes before the build's own).
    grader_engine::sandbox::build::confine(
        &mut command,
        &stage,
        &cache.join("target"),
        Path::new(GRADER_DIR),
    )
    .map_err(|e| StageError::Sandbox(e.to_string()))?;
    command
        .env("CARGO_TARGET_DIR", cache.join("target"))
        // No incremental state: it would keep this submission's code in the shared target
        // folder, where the next submission's build could read it.
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS");
    let wrapper = cpu_limited_compiler(&stage, &[&lab.lib_name(), "grade"])
        .map_err(io("cannot write", &stage))?;
    command.env("RUSTC_WRAPPER", wrapper);
    let Some(output) = output_within(command, BUILD_LIMIT).map_err(|source| StageError::Cargo {
        program: cargo.clone(),
        source,
    })?
    else {
        return Ok(Build::CompileError(format!(
            "error: building the code did not finish within {} minutes and was stopped: look \
             for code that keeps the compiler working without end (types or constants that \
             recurse, a huge array literal)",
            BUILD_LIMIT.as_secs() / 60
        )));
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut first_error = None;
    let mut binary = None;
    let mut own_artifacts = Vec::new();
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match msg["reason"].as_str() {
            Some("compiler-message")
                if msg["message"]["level"] == "error" && first_error.is_none() =>
            {
                first_error = msg["message"]["rendered"].as_str().map(str::to_string);
            }
            Some("compiler-artifact") => {
                if msg["target"]["name"] == "grade" {
                    binary = msg["executable"].as_str().map(PathBuf::from);
                }
                if msg["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path()) {
                    let files = msg["filenames"].as_array().into_iter().flatten();
                    own_artifacts.extend(files.filter_map(|f| f.as_str()).map(PathBuf::from));
                }
            }
            _ => {}
        }
    }
    // What was compiled from this submission leaves the shared target folder (the harness
    // binary is copied out first): the next submission's build may read that folder, and
    // `include_bytes!` of this one's compiled code would carry it into its feedback.
    let remove_own = RemoveOnDrop(own_artifacts);
    if !output.status.success() || binary.is_none() {
        if let Some(error) = first_error {
            // An error in the submission points into its src/ or the harness that calls it;
            // anywhere else (the grader's own sources) it is the grader's fault.
            if error.contains("--> src/") || error.contains("--> tests/grade.rs") {
                return Ok(Build::CompileError(without_machine_paths(
                    error.trim_end(),
                    cache,
                )));
            }
            return Err(StageError::Harness(error.trim_end().to_string()));
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("SIGXCPU") || stderr.contains("SIGKILL") {
            // A compiler held to its limits (time or memory) and stopped.
            return Ok(Build::CompileError(format!(
                "error: the compiler was stopped: compiling this code took more than {} s of \
                 CPU time or {} GiB of memory in one compiler, far more than the lab needs: \
                 look for code that keeps the compiler working without end (a constant \
                 computed by a loop that never ends, types or constants that recurse, a huge \
                 array literal)",
                build_cpu_secs(),
                BUILD_PROCESS_MEMORY >> 30
            )));
        }
        let cargo_error: Vec<&str> = stderr
            .lines()
            .skip_while(|l| !l.starts_with("error"))
            .take(12)
            .collect();
        if !cargo_error.is_empty() && !stderr.contains("tests/grade.rs") {
            // Cargo refused the crate itself (a dependency that does not exist, say).
            return Ok(Build::CompileError(cargo_error.join("\n")));
        }
        return Err(StageError::Harness(stderr.trim().to_string()));
    }
    let built = binary.unwrap_or_default();
    let copied = run_dir.join("grade-harness");
    std::fs::copy(&built, &copied).map_err(io("cannot copy", &built))?;
    drop(remove_own);
    drop(lock);
    Ok(Build::Built {
        binary: copied,
        source_dir,
    })
}

#[cfg(test)]
mod message_tests {
    #[test]
    fn a_compile_error_names_no_folder_of_the_grading_machine() {
        let cache = tempfile::tempdir().unwrap();
        let index = cache
            .path()
            .join("build-home/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f");
        std::fs::create_dir_all(&index).unwrap();
        let error = format!(
            "error[E0107]: function takes 1 generic argument\n --> src/layers.rs:98:17\nnote: \
             function defined here\n   --> {}/ndarray-0.17.2/src/linalg/impl_linalg.rs:633:8\n   \
             --> {}/src/lib.rs:1:1",
            index.display(),
            super::GRADER_DIR
        );
        let shown = super::without_machine_paths(&error, cache.path());
        assert!(
            shown.contains("--> ndarray-0.17.2/src/linalg/impl_linalg.rs:633:8"),
            "{shown}"
        );
        assert!(shown.contains("--> grader/src/lib.rs:1:1"), "{shown}");
        assert!(
            !shown.contains(&cache.path().display().to_string()),
            "{shown}"
        );
        assert!(shown.contains("--> src/layers.rs:98:17"));
    }
}

#[cfg(test)]
mod build_limit_tests {
    use super::output_within;
    use std::process::Command;
    use std::time::{Duration, Instant};

    #[test]
    fn a_build_past_its_limit_is_stopped_with_what_it_started() {
        let mut slow = Command::new("sh");
        slow.args(["-c", "sleep 30 & sleep 30"]);
        let started = Instant::now();
        let out = output_within(slow, Duration::from_millis(300)).unwrap();
        assert!(out.is_none());
        // The background sleep held the output pipe: it was stopped too, or this would wait.
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn every_process_of_a_build_is_held_to_its_limits_whatever_the_shell_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = super::cpu_limited_compiler(dir.path(), &["matmul_lab", "grade"]).unwrap();
        // As cargo calls it: the wrapper, the compiler, its arguments. dash and bash both
        // print data (KiB) and CPU time (s) limits this way.
        let probe = |crate_name: &str| {
            let mut probe = Command::new(&wrapper);
            probe.args(["sh", "-c", "ulimit -d; ulimit -t; ulimit -H -t", "rustc"]);
            probe.args(["--crate-name", crate_name, "--edition=2021"]);
            let out = output_within(probe, Duration::from_secs(30))
                .unwrap()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let data = (super::BUILD_PROCESS_MEMORY >> 10).to_string();
        let cpu = super::build_cpu_secs().to_string();
        for held in ["matmul_lab", "grade"] {
            let text = probe(held);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines, [data.as_str(), &cpu, &cpu], "{held}: {text}");
        }
        let text = probe("ndarray");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.first(), Some(&data.as_str()), "{text}");
        assert_ne!(
            lines.get(1),
            Some(&cpu.as_str()),
            "a dependency is not held: {text}"
        );
    }

    #[test]
    fn a_build_within_its_limit_gives_its_output() {
        let mut quick = Command::new("sh");
        quick.args(["-c", "echo out; echo err >&2"]);
        let out = output_within(quick, Duration::from_secs(30))
            .unwrap()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }
}
