//! Official builds: a lab crate anywhere on disk is copied into the grader's build area with
//! the grader's own harness and the grader's own version as its dependency — whatever the
//! crate's `tests/` or `Cargo.toml` say. The class's dependencies (the grader's crate, the
//! registry's: no code of a submission) are compiled once: taken from the grader's own
//! workspace build where it can ([`prebuilt`]: only the lab's worker half is compiled beside
//! it), else built one grader at a time per lab in one shared target directory of the cache.
//! Each submission's own crate is then built in a folder of its own that holds those
//! dependencies by hard links or reads them where they are ([`build`]), with no lock a
//! classmate waits on, as the workers' unprivileged identity, held to a worker's memory and a
//! wall limit, its output read with a bound; the folder is removed after, so nothing of it
//! stays in the cache.

mod prebuilt;

use crate::labs::{self, LabInfo};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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
    /// It built: the test binary to run as worker, copied out of its build's own folder.
    Built {
        /// The harness binary (worker mode with `--grader-worker`).
        binary: PathBuf,
        /// The copy of the submission's `src/`, as built.
        source_dir: PathBuf,
    },
    /// It did not compile: the compiler's first error, as rendered by rustc.
    CompileError(String),
}

/// The grader's cache: `$GPU_LABS_CACHE`, else (as root) `/var/cache/gpu-labs`, else
/// `$XDG_CACHE_HOME/gpu-labs`, else `~/.cache/gpu-labs`, else a folder in the temp dir.
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
    /// the grader's own version, optimised builds, a workspace of its own. With `prebuilt`,
    /// no dependency at all: the build is given the grader's libraries by name
    /// ([`prebuilt::Prebuilt::rustflags_setting`]), and the harness its `grader`.
    fn staged_manifest(&self, lab: &LabInfo, prebuilt: bool) -> String {
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
        if !prebuilt {
            doc.insert("dependencies".into(), lab_dependencies(lab).into());
            // The harness's `grader` is the labs' crate, worker halves only (no `judge`
            // feature): the binary that runs the submission holds its lab's worker half and
            // `grader-worker`, and no supervisor, judge, rubric or sandbox set-up.
            let mut grader = toml::Table::new();
            grader.insert("package".into(), "grader-labs".into());
            let labs = Path::new(GRADER_DIR).join("labs");
            grader.insert("path".into(), labs.to_string_lossy().into_owned().into());
            grader.insert("default-features".into(), false.into());
            // Its own lab only (the feature of the lab's name).
            grader.insert("features".into(), toml::Value::Array(vec![lab.name.into()]));
            let mut dev = toml::Table::new();
            dev.insert("grader".into(), grader.into());
            doc.insert("dev-dependencies".into(), dev.into());
        }
        let mut test = toml::Table::new();
        test.insert("name".into(), "grade".into());
        test.insert("path".into(), "tests/grade.rs".into());
        test.insert("harness".into(), false.into());
        doc.insert("test".into(), vec![toml::Value::from(test)].into());
        let mut dev_profile = toml::Table::new();
        dev_profile.insert("opt-level".into(), 3.into());
        dev_profile.insert("debug".into(), "line-tables-only".into());
        // What is never timed is optimised less, as in a released lab crate: the GPU
        // library's wrappers around the driver (microseconds beside a kernel) and the
        // message catalogues' parser. The class's first build is that much shorter.
        let mut packages = toml::Table::new();
        let compiled_here: &[&str] = if prebuilt {
            &[]
        } else {
            &["cudarc", "fluent-syntax"]
        };
        for never_timed in compiled_here {
            let mut low = toml::Table::new();
            low.insert("opt-level".into(), 0.into());
            packages.insert(never_timed.to_string(), low.into());
        }
        if !packages.is_empty() {
            dev_profile.insert("package".into(), packages.into());
        }
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

/// The longest building the class's dependencies (the grader's crate, the registry's) may
/// take, a cold build included. A submission's own crate has
/// [`grader_engine::sandbox::limits::BUILD_WALL`].
pub const DEPENDENCIES_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The memory one process building the class's dependencies may map for its data.
pub const DEPENDENCIES_PROCESS_MEMORY: u64 = 6 << 30;

/// The memory building the class's dependencies may hold resident, all its compilers together.
pub const DEPENDENCIES_TREE_MEMORY: u64 = 8 << 30;

/// The CPU time the compiler of the submission's crate (and of the harness that calls it) may
/// use: many times what the solution takes, so code that keeps the compiler working without
/// end is stopped before [`grader_engine::sandbox::limits::BUILD_WALL`].
pub const BUILD_PROCESS_CPU_SECS: u64 = 200;

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

/// [`grader_engine::sandbox::limits::BUILD_WALL`], or less where `GPU_LABS_BUILD_WALL_SECS`
/// says so (a test hook: it never raises the limit).
fn build_wall() -> Duration {
    let most = grader_engine::sandbox::limits::BUILD_WALL;
    std::env::var("GPU_LABS_BUILD_WALL_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(most, |v: u64| Duration::from_secs(v.max(1)).min(most))
}

/// The class's dependencies built by `cargo`, in their own process group (ended whole at its
/// limit, and on Ctrl-C: see `sandbox::tree`), each process held to
/// [`DEPENDENCIES_PROCESS_MEMORY`], soft and hard, whatever the shell allowed.
#[cfg(unix)]
fn limit_build(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    // SAFETY: the closure runs between fork and exec and makes only getrlimit and setrlimit
    // calls.
    unsafe {
        command.pre_exec(move || {
            use grader_engine::sandbox::limits::set_limit;
            set_limit(libc::RLIMIT_DATA, DEPENDENCIES_PROCESS_MEMORY)?;
            set_limit(libc::RLIMIT_CORE, 0)?;
            Ok(())
        });
    }
}

/// A `RUSTC_WRAPPER` (a shell script written in `dir`, named for `lab`) that holds the
/// compiler of the crates named `crates` to [`build_cpu_secs`] of CPU time, soft and hard, and
/// runs every other compiler as is. Its path stays the same from build to build, and its
/// text with it.
fn cpu_limited_compiler(dir: &Path, lab: &str, crates: &[&str]) -> std::io::Result<PathBuf> {
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
    // Named for its limit too: a grader with another limit (a test's) writes another file,
    // never this one while a build of this grader runs it (the build's Landlock rule names
    // this very file).
    let path = dir.join(format!(".rustc-limit-{lab}-{}s.sh", build_cpu_secs()));
    if grader_engine::intake::read_text(&path, script.len() as u64, "").is_ok_and(|t| t == script) {
        return Ok(path);
    }
    // Written aside and renamed: a classmate's build may be running it.
    let aside = dir.join(format!(".rustc-limit-{lab}.{}", std::process::id()));
    std::fs::write(&aside, script)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&aside, std::fs::Permissions::from_mode(0o755))?;
    }
    std::fs::rename(&aside, &path)?;
    Ok(path)
}

/// How a build is watched while it runs.
#[derive(Debug, Clone, Copy)]
struct Watch {
    /// The time it may run (time held stopped not counted).
    limit: Duration,
    /// The memory all its processes may hold resident together.
    tree_memory: u64,
    /// Whether it holds a shared turn on the machine (see
    /// [`grader_engine::check::machine_turn`]) and steps aside, stopped, whenever a speed
    /// measurement wants the machine: a submission's build must not hold its classmates.
    steps_aside: bool,
    /// What it may compile: cargo starting to compile anything else (`Compiling <name> …` on
    /// its stderr: a dependency out of date) stops it at once, and the caller decides.
    only: Only,
}

/// What a watched build may compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Only {
    /// Whatever it needs.
    Anything,
    /// This package alone (a submission's crate: anything else is the class's dependencies
    /// out of date, which are built again first).
    Package(&'static str),
    /// Packages whose sources are on this disk (the grader's own crates), never a registry's
    /// or a git repository's (`Compiling serde v1.0.229`): the grader's build made with other
    /// settings than this one's.
    LocalPackages,
}

/// Whether `line` of cargo's stderr says it starts compiling what `only` does not allow.
fn compiles_another(line: &[u8], only: Only) -> bool {
    let line = String::from_utf8_lossy(line);
    let Some(rest) = line.trim_start().strip_prefix("Compiling ") else {
        return false;
    };
    let mut words = rest.split_whitespace();
    let package = words.next().unwrap_or_default();
    match only {
        Only::Anything => false,
        Only::Package(only) => package != only,
        // `Compiling grader v0.1.0 (/work/grader)`: a path package names its folder.
        Only::LocalPackages => !words.nth(1).is_some_and(|place| place.starts_with("(/")),
    }
}

/// How a build ended.
#[derive(Debug)]
struct Ran {
    /// Its exit status; `None` when it was stopped at its limit.
    status: Option<std::process::ExitStatus>,
    /// Whether it was stopped for its memory.
    over_memory: bool,
    /// Whether it was stopped because it began to compile a dependency (see [`Watch::only`]).
    stale_dependencies: bool,
    /// What was kept of its stderr.
    stderr: Kept,
    /// How long it ran (time held stopped not counted).
    #[cfg_attr(not(test), allow(dead_code))]
    running: Duration,
}

/// The longest line of a build's output that is read whole; past it the rest of the line is
/// counted and dropped (a compiler message quoting a huge note).
const LINE_BYTES: usize = 1 << 20;

/// What is kept of one stream: its first lines and its last lines, each part within
/// [`Kept::PART_BYTES`], and how much was left out between them.
#[derive(Debug, Default)]
struct Kept {
    head: Vec<String>,
    head_bytes: usize,
    tail: std::collections::VecDeque<String>,
    tail_bytes: usize,
    cut_lines: u64,
    cut_bytes: u64,
}

impl Kept {
    /// The most of a stream kept at its start, and again at its end.
    const PART_BYTES: usize = 32 << 10;
    /// The longest line kept (the rest of it is counted as cut).
    const LINE: usize = 2 << 10;

    /// Takes one line (`dropped` bytes of it already left out).
    fn push(&mut self, line: &[u8], dropped: u64) {
        let shown = &line[..line.len().min(Self::LINE)];
        let dropped = dropped + (line.len() - shown.len()) as u64;
        let mut text = String::from_utf8_lossy(shown).into_owned();
        if dropped > 0 {
            text.push_str(&format!(" … ({dropped} bytes cut)"));
        }
        if self.head_bytes + text.len() <= Self::PART_BYTES && self.tail.is_empty() {
            self.head_bytes += text.len();
            self.head.push(text);
            return;
        }
        self.tail_bytes += text.len();
        self.tail.push_back(text);
        while self.tail_bytes > Self::PART_BYTES {
            let Some(old) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= old.len();
            self.cut_lines += 1;
            self.cut_bytes += old.len() as u64 + 1;
        }
    }

    /// The kept text: the first lines, a line saying what was cut, the last lines.
    fn text(&self) -> String {
        let mut lines: Vec<String> = self.head.clone();
        if self.cut_lines > 0 {
            lines.push(format!(
                "… ({} lines, {} bytes cut)",
                self.cut_lines, self.cut_bytes
            ));
        }
        lines.extend(self.tail.iter().cloned());
        lines.join("\n")
    }
}

/// Reads `pipe` to its end, line by line, giving each line to `on_line` with how many of its
/// bytes were left out (past [`LINE_BYTES`]): what is held at once is one line's worth.
fn each_line(mut pipe: impl std::io::Read, mut on_line: impl FnMut(&[u8], u64)) {
    let mut chunk = vec![0u8; 64 << 10];
    let mut line = Vec::new();
    let mut dropped = 0u64;
    loop {
        let n = match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (part, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            let room = LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&part[..part.len().min(room)]);
            dropped += part.len().saturating_sub(room) as u64;
            rest = &rest[(part.len() + usize::from(ended)).min(rest.len())..];
            if ended {
                on_line(&line, dropped);
                line.clear();
                dropped = 0;
            }
        }
    }
    if !line.is_empty() || dropped > 0 {
        on_line(&line, dropped);
    }
}

/// Runs `command` to its end under `watch`, giving each line of its stdout to `on_stdout`
/// (see [`each_line`]) and keeping the first and last lines of its stderr; stops it (its whole
/// process group: cargo and the compilers it started) past its time or memory.
fn run_watched(
    mut command: Command,
    watch: Watch,
    on_stdout: impl FnMut(&[u8], u64) + Send,
) -> std::io::Result<Ran> {
    use std::time::Instant;
    // A turn on the machine first: the build starts when no speed is being measured.
    let mut turn = watch
        .steps_aside
        .then(|| grader_engine::check::machine_turn(false))
        .flatten();
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let pgid = child.id() as i32;
    #[cfg(unix)]
    grader_engine::sandbox::tree::register(pgid);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let stale = std::sync::atomic::AtomicBool::new(false);
    let stale = &stale;
    std::thread::scope(|scope| {
        let out = scope.spawn(move || {
            if let Some(pipe) = stdout {
                each_line(pipe, on_stdout);
            }
        });
        let err = scope.spawn(move || {
            let mut kept = Kept::default();
            if let Some(pipe) = stderr {
                each_line(pipe, |line, dropped| {
                    if compiles_another(line, watch.only) {
                        stale.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    kept.push(line, dropped)
                });
            }
            kept
        });
        let mut running = Duration::ZERO;
        let mut since = Instant::now();
        let mut since_aside = Instant::now();
        let mut polls = 0u32;
        let mut over_memory = false;
        let waited = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(Some(status)),
                Ok(None) => {}
                Err(e) => break Err(e),
            }
            running += since.elapsed();
            since = Instant::now();
            polls += 1;
            #[cfg(unix)]
            {
                over_memory = polls.is_multiple_of(10)
                    && grader_engine::sandbox::tree::members(pgid)
                        .iter()
                        .map(|(_, rss)| rss)
                        .sum::<u64>()
                        > watch.tree_memory;
            }
            let stale_now = stale.load(std::sync::atomic::Ordering::SeqCst);
            if running >= watch.limit || over_memory || stale_now {
                #[cfg(unix)]
                grader_engine::sandbox::tree::signal(pgid, libc::SIGKILL);
                let _ = child.kill();
                let _ = child.wait();
                break Ok(None);
            }
            #[cfg(unix)]
            if turn.is_some() && since_aside.elapsed() >= Duration::from_secs(1) {
                // Held stopped, the turn let go: a speed measurement waiting for the machine
                // takes it now and this build waits, using no CPU, until it is done.
                grader_engine::sandbox::tree::signal(pgid, libc::SIGSTOP);
                drop(turn.take());
                std::thread::sleep(Duration::from_millis(30));
                turn = grader_engine::check::machine_turn(false);
                grader_engine::sandbox::tree::signal(pgid, libc::SIGCONT);
                since = Instant::now();
                since_aside = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        #[cfg(unix)]
        {
            // Whatever it left running (a compiler cargo did not wait for) ends with it.
            grader_engine::sandbox::tree::signal(pgid, libc::SIGCONT);
            grader_engine::sandbox::tree::signal(pgid, libc::SIGKILL);
            grader_engine::sandbox::tree::forget(pgid);
        }
        let _ = out.join();
        let stderr = err.join().unwrap_or_default();
        drop(turn);
        let stale_dependencies = stale.load(std::sync::atomic::Ordering::SeqCst);
        Ok(Ran {
            status: if stale_dependencies { None } else { waited? },
            over_memory,
            stale_dependencies,
            stderr,
            running,
        })
    })
}

/// Runs `command` to the end and collects its output (each stream's first and last lines, see
/// [`Kept`]), or stops it (its whole process group) after `limit` and returns `None`.
fn output_within(mut command: Command, limit: Duration) -> std::io::Result<Option<Captured>> {
    #[cfg(unix)]
    limit_build(&mut command);
    let mut stdout = Kept::default();
    let watch = Watch {
        limit,
        tree_memory: DEPENDENCIES_TREE_MEMORY,
        steps_aside: false,
        only: Only::Anything,
    };
    let ran = run_watched(command, watch, |line, dropped| stdout.push(line, dropped))?;
    Ok(ran.status.map(|status| Captured {
        status,
        stdout: stdout.text(),
        stderr: ran.stderr.text(),
    }))
}

/// What [`output_within`] kept of a command that ended.
#[derive(Debug)]
struct Captured {
    status: std::process::ExitStatus,
    #[cfg_attr(not(test), allow(dead_code))]
    stdout: String,
    stderr: String,
}

/// A compiler message as the student should read it: the grading machine's folders it names
/// (a dependency's source in the build's cargo registry, the grader's own crate) shortened to
/// what the student has too (`ndarray-0.17.2/src/…`, `grader/src/…`).
fn without_machine_paths(error: &str, cache: &Path) -> String {
    let registries = grader_engine::sandbox::build::BUILD_HOMES
        .map(|home| cache.join(home).join(".cargo").join("registry").join("src"));
    // The instructor's own registry too: the grader's build compiled the dependencies there.
    let own_registry = grader_engine::sandbox::build::instructor_cargo_home()
        .map(|home| home.join("registry").join("src"));
    let mut text = error.to_string();
    for registry in registries.into_iter().chain(own_registry) {
        if let Ok(indexes) = std::fs::read_dir(&registry) {
            for index in indexes.flatten() {
                let prefix = format!("{}/", index.path().display());
                text = text.replace(&prefix, "");
            }
        }
    }
    let builds = cache.join("builds");
    // `…/builds/<one build>/stage/src/lib.rs` → `src/lib.rs`.
    while let Some(at) = text.find(&format!("{}/", builds.display())) {
        let rest = &text[at..];
        let Some(stage) = rest.find("/stage/") else {
            break;
        };
        text.replace_range(at..at + stage + "/stage/".len(), "");
    }
    let grader = Path::new(GRADER_DIR);
    if let Some(root) = grader.parent() {
        text = text.replace(&format!("{}/", root.display()), "");
    }
    text
}

/// A folder removed with all it holds when it is dropped, on every way out of a build.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How long fetching the lab's crates may take (downloads, on a slow network).
const FETCH_LIMIT: Duration = Duration::from_secs(600);

/// Downloads what the staged crate needs, with the instructor's own cargo settings and network
/// (a mirror, a proxy), before the build: the build itself runs offline, with an environment
/// and a cargo home that hold none of those settings ([`grader_engine::sandbox::build::confine`]).
/// Nothing of the submission is compiled or run here: the manifest is the lab's.
fn fetch(cargo: &Path, manifest: &Path, stage: &Path) -> Result<(), StageError> {
    let mut command = Command::new(cargo);
    command
        .arg("fetch")
        .arg("--manifest-path")
        .arg(manifest)
        .current_dir(stage);
    let output = output_within(command, FETCH_LIMIT).map_err(|source| StageError::Cargo {
        program: cargo.display().to_string(),
        source,
    })?;
    match output {
        Some(out) if out.status.success() => Ok(()),
        Some(out) => Err(StageError::Harness(format!(
            "cargo could not fetch the lab's crates (is the network or the registry mirror \
             reachable?): {}",
            out.stderr.trim()
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

/// Whether `name` (a file or folder in a target folder's `deps`, `.fingerprint` or
/// `incremental`, or at its top) was compiled from the staged crate itself (`lib_name` and
/// its harness `grade`, package `package`), not from a dependency: `<name>-<16 hex digits>…`,
/// `lib<name>-…`, `lib<name>.rlib`.
fn of_the_staged_crate(name: &str, package: &str, lib_name: &str) -> bool {
    let hashed = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|rest| {
                rest.len() >= 16
                    && rest[..16].bytes().all(|b| b.is_ascii_hexdigit())
                    && rest[16..].chars().next().is_none_or(|c| c == '.')
            })
    };
    let lib = format!("lib{lib_name}");
    hashed(package)
        || hashed(lib_name)
        || hashed(&lib)
        || hashed("grade")
        || [".rlib", ".rmeta", ".d"]
            .iter()
            .any(|ext| name == format!("{lib}{ext}") || name == format!("{lib_name}{ext}"))
}

/// Removes from the profile folder `debug` (the class's shared one) everything compiled from
/// a staged crate ([`of_the_staged_crate`]) but the placeholder's units (their names hold one
/// of `placeholder`'s hashes): what an earlier grader left there.
fn remove_staged_units(debug: &Path, package: &str, lib_name: &str, placeholder: &[String]) {
    for folder in ["", "deps", ".fingerprint", "incremental"] {
        for entry in std::fs::read_dir(debug.join(folder))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if of_the_staged_crate(&name, package, lib_name)
                && !placeholder.iter().any(|hash| name.contains(hash.as_str()))
            {
                let path = entry.path();
                let _ = if path.is_dir() && !path.is_symlink() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
            }
        }
    }
}

/// What the class's dependencies' build leaves for each submission's own build.
struct Dependencies {
    /// The lab crate's lockfile, as that build left it.
    lockfile: Vec<u8>,
    /// The cargo and rustc of every build.
    toolchain: grader_engine::sandbox::build::Toolchain,
    /// The cargo home shared by the class's builds (configuration, registry).
    home: PathBuf,
    /// The compiler wrapper (the CPU limit of the submission's compilers).
    wrapper: PathBuf,
    /// The target folder with the class's dependencies built.
    target: PathBuf,
    /// The grader's own build's libraries, when the submission links those instead.
    prebuilt: Option<prebuilt::Prebuilt>,
}

/// The staged crate's fixed files in `stage`: the lab's harness and the grader's manifest.
fn write_fixed_files(
    krate: &LabCrate,
    lab: &LabInfo,
    stage: &Path,
    prebuilt: bool,
) -> Result<(), StageError> {
    let tests = stage.join("tests");
    std::fs::create_dir_all(&tests).map_err(io("cannot create", &tests))?;
    std::fs::write(tests.join("grade.rs"), lab.harness).map_err(io("cannot write", &tests))?;
    let manifest = stage.join("Cargo.toml");
    std::fs::write(&manifest, krate.staged_manifest(lab, prebuilt))
        .map_err(io("cannot write", &manifest))
}

/// Where a submission's build finds the class's dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum From {
    /// The grader's own workspace build where it can ([`prebuilt`]), else the cache's.
    GraderBuild,
    /// Built in the grader's cache ([`dependencies`]), as a grader installed elsewhere has them.
    Cache,
}

/// The class's dependencies for `lab`: with `from` [`From::GraderBuild`], the grader's own
/// workspace build's libraries where they can be used ([`prebuilt`]); else built (the grader's
/// crate and the registry's, no code of a submission: the staged crate is a placeholder) in
/// the shared target folder under `cache`, one grader at a time per lab
/// (`cache/stage/<lab>.lock`); quick when they are built already.
fn dependencies(
    krate: &LabCrate,
    lab: &LabInfo,
    cache: &Path,
    user: Option<grader_engine::sandbox::child::Identity>,
    from: From,
) -> Result<Dependencies, StageError> {
    let stages = cache.join("stage");
    let stage = stages.join(lab.name);
    std::fs::create_dir_all(&stage).map_err(io("cannot create", &stage))?;
    let lock_path = stages.join(format!("{}.lock", lab.name));
    let lock = std::fs::File::create(&lock_path).map_err(io("cannot create", &lock_path))?;
    lock.lock().map_err(io("cannot lock", &lock_path))?;

    if let Some(prebuilt) = (from == From::GraderBuild)
        .then(|| prebuilt::for_lab(lab, cache, user))
        .flatten()
    {
        let toolchain = builds_toolchain(cache, &stage, user)?;
        let rustc = toolchain.rustc.clone().unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        });
        let same = prebuilt::compiler_version(Command::new(rustc).current_dir(&stage))
            .is_some_and(|v| v == prebuilt.compiler);
        if same {
            let (home, wrapper) = home_and_wrapper(cache, &stages, lab, user)?;
            return Ok(Dependencies {
                lockfile: Vec::new(),
                toolchain,
                home,
                wrapper,
                target: cache.join("target"),
                prebuilt: Some(prebuilt),
            });
        }
    }

    // No submission's sources here (an earlier grader staged them here): a placeholder.
    let staged_src = stage.join("src");
    if staged_src.exists() {
        std::fs::remove_dir_all(&staged_src).map_err(io("cannot clear", &staged_src))?;
    }
    std::fs::create_dir_all(&staged_src).map_err(io("cannot create", &staged_src))?;
    std::fs::write(
        staged_src.join("lib.rs"),
        "//! The grader's placeholder: only the lab's dependencies are built here.\n",
    )
    .map_err(io("cannot write", &staged_src))?;
    write_fixed_files(krate, lab, &stage, false)?;
    let manifest = stage.join("Cargo.toml");
    let lockfile = stage.join("Cargo.lock");
    let grader_lock = Path::new(GRADER_DIR).join("..").join("Cargo.lock");
    if !lockfile.exists() && grader_lock.is_file() {
        // Start from the grader's own dependency versions: tested together, and shared.
        std::fs::copy(&grader_lock, &lockfile).map_err(io("cannot copy", &grader_lock))?;
    }

    let toolchain = builds_toolchain(cache, &stage, user)?;
    let plain_cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    fetch(&plain_cargo, &manifest, &stage)?;
    let (home, wrapper) = home_and_wrapper(cache, &stages, lab, user)?;
    let target = cache.join("target");
    let mut command = Command::new(&toolchain.cargo);
    command
        .args(["test", "--no-run", "--lib", "--message-format=json"])
        .arg("--manifest-path")
        .arg(&manifest)
        .current_dir(&stage);
    let place = grader_engine::sandbox::build::Place {
        stage: &stage,
        target: &target,
        home: &home,
        grader_dir: Path::new(GRADER_DIR),
        also_readable: std::slice::from_ref(&wrapper),
        toolchain: &toolchain,
        dependencies: true,
    };
    grader_engine::sandbox::build::confine(&mut command, place)
        .map_err(|e| StageError::Sandbox(e.to_string()))?;
    command
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_INCREMENTAL", "0")
        .env("RUSTC_WRAPPER", &wrapper)
        .env_remove("RUSTFLAGS");
    #[cfg(unix)]
    limit_build(&mut command);
    let mut first_error = None;
    let mut placeholder = Vec::new();
    let watch = Watch {
        limit: DEPENDENCIES_LIMIT,
        tree_memory: DEPENDENCIES_TREE_MEMORY,
        steps_aside: false,
        only: Only::Anything,
    };
    let ran = {
        // Compiling loads the CPU: never while a grading measures a speedup.
        let _turn = grader_engine::check::machine_turn(false);
        run_watched(command, watch, |line, _| {
            if first_error.is_none() {
                first_error = compiler_error(line);
            }
            placeholder.extend(placeholder_hashes(line, &manifest));
        })
        .map_err(|source| StageError::Cargo {
            program: toolchain.cargo.display().to_string(),
            source,
        })?
    };
    // Kept: the placeholder's units, so that the next build has nothing to do.
    remove_staged_units(
        &target.join("debug"),
        lab.lab_crate,
        &lab.lib_name(),
        &placeholder,
    );
    if !ran.status.is_some_and(|s| s.success()) {
        let why = match (ran.status, first_error) {
            (None, _) => format!(
                "building the lab's dependencies did not finish within {} minutes{}",
                DEPENDENCIES_LIMIT.as_secs() / 60,
                if ran.over_memory {
                    " or its memory"
                } else {
                    ""
                }
            ),
            (Some(_), Some(error)) => error,
            (Some(_), None) => ran.stderr.text(),
        };
        return Err(StageError::Harness(why.trim().to_string()));
    }
    let lockfile =
        grader_engine::intake::read_file(&lockfile, grader_engine::intake::GRADER_FILE_BYTES, "")
            .map_err(std::io::Error::from)
            .map_err(io("cannot read", &lockfile))?;
    drop(lock);
    Ok(Dependencies {
        lockfile,
        toolchain,
        home,
        wrapper,
        target,
        prebuilt: None,
    })
}

/// The cargo and rustc every build of the class runs, given to the builds' `user` (asked in
/// `stage`, where the builds run).
fn builds_toolchain(
    cache: &Path,
    stage: &Path,
    user: Option<grader_engine::sandbox::child::Identity>,
) -> Result<grader_engine::sandbox::build::Toolchain, StageError> {
    grader_engine::sandbox::build::Toolchain::for_builds(cache, stage, user)
        .map_err(|e| StageError::Sandbox(format!("cannot give the toolchain to builds: {e}")))
}

/// The class's builds' cargo home and `lab`'s compiler wrapper (written in `stages`). Made
/// after any fetch: the home holds the registry as it is then.
fn home_and_wrapper(
    cache: &Path,
    stages: &Path,
    lab: &LabInfo,
    user: Option<grader_engine::sandbox::child::Identity>,
) -> Result<(PathBuf, PathBuf), StageError> {
    let home = grader_engine::sandbox::build::made_cargo_home(cache, user.is_some())
        .map_err(|e| StageError::Sandbox(format!("cannot make the build's cargo home: {e}")))?;
    let wrapper = cpu_limited_compiler(stages, lab.name, &[&lab.lib_name(), "grade"])
        .map_err(io("cannot write", stages))?;
    Ok((home, wrapper))
}

/// What an I/O error on `path` while doing `what` is, as `map_err` takes it.
fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StageError {
    let path = path.to_path_buf();
    move |source| StageError::Io { what, path, source }
}

/// The hashes in the file names of an artifact of the staged crate at `manifest`
/// (`…/deps/matmul_lab-<16 hex digits>`), when `line` is cargo's report of one.
fn placeholder_hashes(line: &[u8], manifest: &Path) -> Vec<String> {
    if !line.starts_with(b"{\"reason\":\"compiler-artifact\"") {
        return Vec::new();
    }
    let Ok(msg) = serde_json::from_slice::<serde_json::Value>(line) else {
        return Vec::new();
    };
    if msg["manifest_path"].as_str().map(Path::new) != Some(manifest) {
        return Vec::new();
    }
    let files = msg["filenames"].as_array().into_iter().flatten();
    files
        .filter_map(|f| f.as_str())
        .filter_map(|f| {
            Path::new(f)
                .file_stem()?
                .to_str()?
                .rsplit('-')
                .next()
                .map(String::from)
        })
        .filter(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect()
}

/// The rendered text of `line` when it is cargo's report of a compiler error (the line whole:
/// one cut at [`LINE_BYTES`] does not parse). Only lines that may be one are parsed, so a flood
/// of warnings costs a scan, not a parse each.
fn compiler_error(line: &[u8]) -> Option<String> {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    if !has(b"\"reason\":\"compiler-message\"") || !has(b"\"level\":\"error\"") {
        return None;
    }
    let msg: serde_json::Value = serde_json::from_slice(line).ok()?;
    (msg["message"]["level"] == "error")
        .then(|| msg["message"]["rendered"].as_str().map(str::to_string))
        .flatten()
}

/// The first error as shown: its first [`ERROR_HEAD_LINES`] lines and its last
/// [`ERROR_TAIL_LINES`], each line within 1 KiB, saying how much was cut.
fn shortened_error(error: &str) -> String {
    let lines: Vec<&str> = error.lines().collect();
    let line = |l: &&str| -> String {
        match l.char_indices().nth(1024) {
            Some((at, _)) => format!("{} … ({} bytes cut)", &l[..at], l.len() - at),
            None => l.to_string(),
        }
    };
    if lines.len() <= ERROR_HEAD_LINES + ERROR_TAIL_LINES {
        return lines.iter().map(line).collect::<Vec<_>>().join("\n");
    }
    let cut = lines.len() - ERROR_HEAD_LINES - ERROR_TAIL_LINES;
    let mut shown: Vec<String> = lines[..ERROR_HEAD_LINES].iter().map(line).collect();
    shown.push(format!("… ({cut} lines cut)"));
    shown.extend(lines[lines.len() - ERROR_TAIL_LINES..].iter().map(line));
    shown.join("\n")
}

/// The first lines of a compiler error that are shown.
const ERROR_HEAD_LINES: usize = 60;
/// The last lines of a compiler error that are shown.
const ERROR_TAIL_LINES: usize = 10;

/// How many builds of this grader have started (names each one's folder).
static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A folder of its own for one submission's build, `cache/builds/<lab>-<pid>-<n>`, after
/// removing those of graders that are no longer running.
fn own_build_folder(cache: &Path, lab: &str) -> std::io::Result<PathBuf> {
    let builds = cache.join("builds");
    std::fs::create_dir_all(&builds)?;
    for entry in std::fs::read_dir(&builds)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .rsplit('-')
            .nth(1)
            .and_then(|p| p.parse::<libc::pid_t>().ok());
        // SAFETY: kill with signal 0 only asks whether the process exists.
        if pid.is_some_and(|p| p > 0 && unsafe { libc::kill(p, 0) } != 0) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let n = BUILDS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = builds.join(format!("{lab}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

/// What the build of a submission's own crate gave.
struct Compiled {
    /// The harness binary, when it was built.
    binary: Option<PathBuf>,
    /// The compiler's first error, as rendered.
    first_error: Option<String>,
    /// The targets that were compiled (not found built already): the lab crate and its
    /// harness when the class's dependencies were reused.
    #[cfg_attr(not(test), allow(dead_code))]
    compiled: Vec<String>,
    /// How it ended.
    ran: Ran,
}

/// Builds the submission's sources at `source_dir` as `lab` in a folder of its own (its stage,
/// its target folder holding the class's dependencies by hard links), as
/// `user`, without any lock a classmate waits on; copies the harness binary to `run_dir`;
/// leaves nothing of it behind.
fn build_own(
    krate: &LabCrate,
    lab: &LabInfo,
    cache: &Path,
    run_dir: &Path,
    source_dir: &Path,
    deps: &Dependencies,
    user: Option<grader_engine::sandbox::child::Identity>,
) -> Result<(Compiled, Option<PathBuf>), StageError> {
    let builds = cache.join("builds");
    let dir = own_build_folder(cache, lab.name).map_err(io("cannot create", &builds))?;
    let _remove = RemoveOnDrop(dir.clone());
    let stage = dir.join("stage");
    // The copy is the grader's own, so this cannot be refused short of a full disk.
    grader_engine::intake::copy_tree(
        run_dir,
        source_dir,
        &stage.join("src"),
        grader_engine::intake::SOURCES,
    )
    .map_err(|refusal| StageError::Harness(format!("staging the sources: {refusal}")))?;
    let prebuilt = deps.prebuilt.as_ref();
    write_fixed_files(krate, lab, &stage, prebuilt.is_some())?;
    if prebuilt.is_none() {
        std::fs::write(stage.join("Cargo.lock"), &deps.lockfile)
            .map_err(io("cannot write", &stage))?;
    }
    let target = dir.join("target");
    let (package, lib_name) = (lab.lab_crate, lab.lib_name());
    let shared = deps.target.join("debug");
    let mut made = vec![dir.clone(), target.clone()];
    // Not while the dependencies are being built again (a shared hold of the lab's lock).
    let lock_path = cache.join("stage").join(format!("{}.lock", lab.name));
    let lock = std::fs::File::create(&lock_path).map_err(io("cannot create", &lock_path))?;
    lock.lock_shared().map_err(io("cannot lock", &lock_path))?;
    // The grader's own libraries are read where they are; the cache's are linked in.
    let parts: &[&str] = if prebuilt.is_some() {
        &[]
    } else {
        &["deps", "build", ".fingerprint"]
    };
    for part in parts {
        if !shared.join(part).is_dir() {
            continue;
        }
        let keep = |p: &Path| {
            p.components().count() > 1
                || !of_the_staged_crate(&p.to_string_lossy(), package, &lib_name)
        };
        let to = target.join("debug").join(part);
        made.extend(
            grader_engine::sandbox::build::link_tree(
                &shared.join(part),
                &to,
                grader_engine::sandbox::build::Share::Outputs,
                &keep,
            )
            .map_err(io("cannot link the dependencies into", &to))?,
        );
    }
    drop(lock);
    let debug = target.join("debug");
    std::fs::create_dir_all(&debug).map_err(io("cannot create", &debug))?;
    made.push(debug);
    // The build's TMPDIR (the linker's scratch files), its user's too.
    let tmp = target.join("tmp");
    std::fs::create_dir_all(&tmp).map_err(io("cannot create", &tmp))?;
    made.push(tmp);
    #[cfg(unix)]
    if let Some(id) = user {
        // Its folders and copies become the build's user's; the dependencies' libraries,
        // links to the class's, stay the grader's (readable, not writable).
        for made in &made {
            std::os::unix::fs::chown(made, Some(id.uid), Some(id.gid))
                .map_err(io("cannot give", made))?;
        }
        grader_engine::sandbox::root::own(&stage, id).map_err(io("cannot give", &stage))?;
    }

    let manifest = stage.join("Cargo.toml");
    let mut command = Command::new(&deps.toolchain.cargo);
    let mut also_readable = vec![deps.wrapper.clone()];
    match prebuilt {
        // `cargo rustc`: the harness alone is given the lab's worker half, as `grader` (the
        // lab crate cannot name it, as in the cache's build, where it is a dev-dependency).
        Some(prebuilt) => {
            command
                .args(["rustc", "--test", "grade", "--message-format=json"])
                .arg("--manifest-path")
                .arg(&manifest)
                .arg("--config")
                .arg(prebuilt.rustflags_setting())
                .arg("--")
                .arg("--extern")
                .arg(format!("grader={}", prebuilt.labs.display()));
            also_readable.push(prebuilt.deps_dir.clone());
        }
        None => {
            command
                .args([
                    "test",
                    "--no-run",
                    "--test",
                    "grade",
                    "--message-format=json",
                ])
                .arg("--manifest-path")
                .arg(&manifest);
        }
    }
    command.current_dir(&stage);
    // First the limits and the change of user, then (below) the Landlock rules.
    grader_engine::sandbox::limits::install_build(&mut command, user);
    let place = grader_engine::sandbox::build::Place {
        stage: &stage,
        target: &target,
        home: &deps.home,
        grader_dir: Path::new(GRADER_DIR),
        also_readable: &also_readable,
        toolchain: &deps.toolchain,
        dependencies: false,
    };
    grader_engine::sandbox::build::confine(&mut command, place)
        .map_err(|e| StageError::Sandbox(e.to_string()))?;
    command
        .env("CARGO_TARGET_DIR", &target)
        // No incremental state: nothing of the build is kept anyway.
        .env("CARGO_INCREMENTAL", "0")
        .env("RUSTC_WRAPPER", &deps.wrapper)
        .env_remove("RUSTFLAGS");
    let mut first_error = None;
    let mut binary = None;
    let mut compiled = Vec::new();
    let watch = Watch {
        limit: build_wall(),
        tree_memory: grader_engine::sandbox::limits::BUILD_MEMORY,
        steps_aside: true,
        only: Only::Package(lab.lab_crate),
    };
    let ran = run_watched(command, watch, |line, _| {
        if first_error.is_none() {
            if let Some(error) = compiler_error(line) {
                first_error = Some(error);
                return;
            }
        }
        let is_artifact = line.starts_with(b"{\"reason\":\"compiler-artifact\"");
        let Some(msg) = is_artifact
            .then(|| serde_json::from_slice::<serde_json::Value>(line).ok())
            .flatten()
        else {
            return;
        };
        let name = msg["target"]["name"].as_str().unwrap_or_default();
        if msg["fresh"] == false {
            compiled.push(name.to_string());
        }
        if name == "grade" {
            binary = msg["executable"].as_str().map(PathBuf::from);
        }
    })
    .map_err(|source| StageError::Cargo {
        program: deps.toolchain.cargo.display().to_string(),
        source,
    })?;
    let copied = match &binary {
        Some(built) if ran.status.is_some_and(|s| s.success()) => {
            let copied = run_dir.join("grade-harness");
            std::fs::copy(built, &copied).map_err(io("cannot copy", built))?;
            Some(copied)
        }
        _ => None,
    };
    Ok((
        Compiled {
            binary,
            first_error,
            compiled,
            ran,
        },
        copied,
    ))
}

/// Builds the sources [`take_sources`] copied to `source_dir` as `lab`, leaving the harness
/// binary in `run_dir`: the class's dependencies first, built once in the shared build area
/// under `cache` ([`dependencies`]), then the submission's own crate on its own
/// ([`build_own`]), held to a worker's memory and identity and to
/// [`grader_engine::sandbox::limits::BUILD_WALL`], without holding any classmate.
pub fn build(
    krate: &LabCrate,
    lab: &LabInfo,
    cache: &Path,
    run_dir: &Path,
    source_dir: &Path,
) -> Result<Build, StageError> {
    // Made first: a cache that does not exist yet cannot be found reachable, and the first
    // build would run as the grader (as root) instead of the workers' uid.
    std::fs::create_dir_all(cache).map_err(io("cannot create", cache))?;
    let user = grader_engine::sandbox::limits::build_identity().filter(|_| reachable(cache));
    // The dependencies are out of date only when the grader's sources changed since they were
    // built (a grader being worked on): built again, then the submission's build again.
    let from = if prebuilt::allowed() {
        From::GraderBuild
    } else {
        From::Cache
    };
    for _ in 0..3 {
        let deps = dependencies(krate, lab, cache, user, from)?;
        let (compiled, copied) = build_own(krate, lab, cache, run_dir, source_dir, &deps, user)?;
        if !compiled.ran.stale_dependencies {
            return judge_build(compiled, copied, cache, source_dir);
        }
    }
    Err(StageError::Harness(
        "the lab's dependencies kept changing while the submission was built (the grader's \
         sources being edited?): grade it again"
            .to_string(),
    ))
}

/// Whether the builds' unprivileged user can reach folders in `cache` (every folder above it
/// open to others); where it cannot (a cache in `/root`), builds run as the grader, still
/// confined by Landlock.
fn reachable(cache: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        cache
            .ancestors()
            .all(|dir| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
    }
    #[cfg(not(unix))]
    true
}

/// What a build that ended means: the harness to run, the submission's compile error, or the
/// grader's own failure.
fn judge_build(
    compiled: Compiled,
    copied: Option<PathBuf>,
    cache: &Path,
    source_dir: &Path,
) -> Result<Build, StageError> {
    let Compiled {
        binary,
        first_error,
        ran,
        ..
    } = compiled;
    if ran.over_memory {
        return Ok(Build::CompileError(format!(
            "error: the compiler was stopped: compiling this code used more than {} GiB of \
             memory, far more than the lab needs: look for code that makes the compiler build \
             something huge (a huge array literal, types or constants that recurse)",
            grader_engine::sandbox::limits::BUILD_MEMORY >> 30
        )));
    }
    let Some(status) = ran.status else {
        return Ok(Build::CompileError(format!(
            "error: building the code did not finish within {} minutes and was stopped: look \
             for code that keeps the compiler working without end (a constant computed by a \
             loop that never ends, types or constants that recurse, a huge array literal) or \
             waiting (a file it reads that never ends)",
            build_wall().as_secs().div_ceil(60)
        )));
    };
    #[cfg(unix)]
    if std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGXFSZ) {
        // Cargo keeps the compiler's messages in a file, held to a worker's file size.
        return Ok(Build::CompileError(format!(
            "error: the build was stopped: the compiler's messages about this code came to              more than {} GiB, far more than the lab's code gives: look for a warning              repeated many times or one with a huge text (a long note, a long string in an              attribute)",
            grader_engine::sandbox::limits::FILE_SIZE >> 30
        )));
    }
    if let (Some(binary), true) = (copied, status.success() && binary.is_some()) {
        return Ok(Build::Built {
            binary,
            source_dir: source_dir.to_path_buf(),
        });
    }
    if let Some(error) = first_error {
        let error = without_machine_paths(error.trim_end(), cache);
        // An error in the submission points into its src/ or the harness that calls it;
        // anywhere else (the grader's own sources) it is the grader's fault.
        if error.contains("--> src/") || error.contains("--> tests/grade.rs") {
            return Ok(Build::CompileError(shortened_error(&error)));
        }
        return Err(StageError::Harness(shortened_error(&error)));
    }
    let stderr = ran.stderr.text();
    if stderr.contains("SIGXCPU")
        || stderr.contains("SIGKILL")
        || stderr.contains("memory allocation of")
    {
        // A compiler held to its limits (time or memory) and stopped.
        return Ok(Build::CompileError(format!(
            "error: the compiler was stopped: compiling this code took more than {} s of CPU \
             time or {} GiB of memory in one compiler, far more than the lab needs: look for \
             code that keeps the compiler working without end (a constant computed by a loop \
             that never ends, types or constants that recurse, a huge array literal)",
            build_cpu_secs(),
            grader_engine::sandbox::limits::BUILD_MEMORY >> 30
        )));
    }
    let cargo_error: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("error"))
        .take(12)
        .collect();
    if !cargo_error.is_empty() && !stderr.contains("tests/grade.rs") {
        // Cargo refused the crate itself (a dependency that does not exist, say).
        return Ok(Build::CompileError(without_machine_paths(
            &cargo_error.join("\n"),
            cache,
        )));
    }
    Err(StageError::Harness(stderr.trim().to_string()))
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

        // A dependency the grader's own build compiled: its source in the instructor's
        // registry.
        let home = grader_engine::sandbox::build::instructor_cargo_home().expect("a cargo home");

        let own = std::fs::read_dir(home.join("registry/src"))
            .expect("this machine's registry")
            .flatten()
            .next()
            .expect("an index")
            .path();
        let error = format!("   --> {}/ndarray-0.17.2/src/lib.rs:1:1", own.display());
        let shown = super::without_machine_paths(&error, cache.path());
        assert_eq!(shown, "   --> ndarray-0.17.2/src/lib.rs:1:1");
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
        let wrapper =
            super::cpu_limited_compiler(dir.path(), "matmul", &["matmul_lab", "grade"]).unwrap();
        // As cargo calls it: the wrapper, the compiler, its arguments. dash and bash both
        // print data (KiB) and CPU time (s) limits this way.
        let probe = |crate_name: &str| {
            let mut probe = Command::new(&wrapper);
            probe.args(["sh", "-c", "ulimit -d; ulimit -t; ulimit -H -t", "rustc"]);
            probe.args(["--crate-name", crate_name, "--edition=2021"]);
            let out = output_within(probe, Duration::from_secs(30))
                .unwrap()
                .unwrap();
            out.stdout
        };
        let data = (super::DEPENDENCIES_PROCESS_MEMORY >> 10).to_string();
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
        assert_eq!(out.stdout, "out");
        assert_eq!(out.stderr, "err");
    }
}

#[cfg(test)]
mod bounded_tests {
    use super::{each_line, of_the_staged_crate, output_within, shortened_error, LINE_BYTES};
    use std::process::Command;
    use std::time::Duration;

    #[test]
    fn a_flood_of_output_is_read_with_a_bound_keeping_its_first_and_last_lines() {
        // 64 MiB on one line, then 200 000 lines, then the last line.
        let mut flood = Command::new("sh");
        flood.args([
            "-c",
            "echo first; head -c 67108864 /dev/zero | tr '\\0' x; echo; \
             seq 1 200000; echo last >&2; seq 1 200000 >&2; echo the-end >&2",
        ]);
        let out = output_within(flood, Duration::from_secs(60))
            .unwrap()
            .expect("it ends");
        assert!(out.stdout.starts_with("first\n"), "{}", &out.stdout[..100]);
        assert!(out.stdout.contains("bytes cut"), "the long line is cut");
        assert!(out.stdout.ends_with("200000"), "the last lines are kept");
        assert!(out.stdout.contains("lines, "), "what was cut is said");
        assert!(
            out.stdout.len() < 80 << 10,
            "{} bytes kept",
            out.stdout.len()
        );
        assert!(out.stderr.starts_with("last\n1\n2\n"));
        assert!(out.stderr.ends_with("the-end"));
        assert!(out.stderr.len() < 80 << 10);
    }

    #[test]
    fn a_submission_build_that_starts_compiling_a_dependency_is_stopped_at_once() {
        use std::os::unix::process::CommandExt;
        let mut cargo = Command::new("sh");
        // In a group of its own, as every build is.
        cargo.process_group(0).args([
            "-c",
            "echo '   Compiling matmul-lab v0.1.0 (/stage)' >&2; sleep 1; \
             echo '   Compiling grader v0.1.0 (/work/grader)' >&2; sleep 30",
        ]);
        let watch = super::Watch {
            limit: Duration::from_secs(60),
            tree_memory: 1 << 30,
            steps_aside: false,
            only: super::Only::Package("matmul-lab"),
        };
        let started = std::time::Instant::now();
        let ran = super::run_watched(cargo, watch, |_, _| {}).unwrap();
        assert!(ran.stale_dependencies && ran.status.is_none());
        assert!(started.elapsed() < Duration::from_secs(10));
        let lab = super::Only::Package("matmul-lab");
        assert!(!super::compiles_another(
            b"   Compiling matmul-lab v0.1.0 (/x)",
            lab
        ));
        assert!(!super::compiles_another(b"warning: unused", lab));
        // The grader's own crates, not the registry's.
        let local = super::Only::LocalPackages;
        assert!(!super::compiles_another(
            b"   Compiling grader v0.1.0 (/work/grader)",
            local
        ));
        assert!(super::compiles_another(
            b"   Compiling serde v1.0.229",
            local
        ));
        assert!(super::compiles_another(
            b"   Compiling x v0.1.0 (https://github.com/a/x#0123abcd)",
            local
        ));
    }

    #[test]
    fn a_line_longer_than_the_bound_is_given_cut_with_its_length() {
        let text = format!("short\n{}\nafter", "y".repeat(LINE_BYTES + 10));
        let mut lines = Vec::new();
        each_line(text.as_bytes(), |line, dropped| {
            lines.push((line.len(), dropped))
        });
        assert_eq!(lines, [(5, 0), (LINE_BYTES, 10), (5, 0)]);
    }

    #[test]
    fn only_the_staged_crates_own_units_are_told_apart_from_its_dependencies() {
        let own = |n: &str| of_the_staged_crate(n, "matmul-lab", "matmul_lab");
        for name in [
            "matmul-lab-1f137b2fa5315173",
            "matmul_lab-1f137b2fa5315173.d",
            "libmatmul_lab-1f137b2fa5315173.rlib",
            "grade-0123456789abcdef",
            "libmatmul_lab.rlib",
        ] {
            assert!(own(name), "{name}");
        }
        for name in [
            "matmul-lab-extra-1f137b2fa5315173",
            "grader-7388c6065051aa0c",
            "libgrader-7388c6065051aa0c.rlib",
            "grade-helper-0123456789abcdef",
        ] {
            assert!(!own(name), "{name}");
        }
    }

    #[test]
    fn a_long_compiler_error_keeps_its_first_and_last_lines() {
        let error: Vec<String> = (0..500).map(|i| format!("line {i}")).collect();
        let shown = shortened_error(&error.join("\n"));
        assert!(shown.starts_with("line 0\n"));
        assert!(shown.ends_with("line 499"));
        assert!(shown.contains("(430 lines cut)"), "{shown}");
        let wide = shortened_error(&"z".repeat(5000));
        assert!(wide.len() < 1100 && wide.contains("bytes cut"), "{wide}");
    }
}

#[cfg(test)]
mod own_build_tests {
    use std::path::Path;

    /// The matmul solution built twice as official grading builds it, in the workspace's
    /// grader cache (the one the end-to-end tests use): the second submission's build compiles
    /// the lab crate and its harness only, reusing the class's dependencies, and leaves nothing
    /// behind in the cache.
    #[test]
    fn a_submission_build_compiles_its_own_crate_only_and_leaves_nothing() {
        if std::env::var("GPU_LABS_FULL").map_or(true, |v| v != "1") {
            eprintln!("full suite only (GPU_LABS_FULL=1): builds the matmul lab");
            return;
        }
        let root = Path::new(super::GRADER_DIR)
            .parent()
            .expect("the workspace");
        let cache = root.join("target").join("grader-cache");
        let lab = crate::labs::find("matmul").expect("matmul");
        let krate = super::read_lab_crate(&root.join("solutions/matmul")).expect("lab crate");
        let user =
            grader_engine::sandbox::limits::build_identity().filter(|_| super::reachable(&cache));
        for from in [super::From::GraderBuild, super::From::Cache] {
            let deps = super::dependencies(&krate, lab, &cache, user, from).expect("dependencies");
            // Run from its workspace, the grader takes its own build's libraries.
            assert_eq!(deps.prebuilt.is_some(), from == super::From::GraderBuild);
            twice(&krate, lab, &cache, user, &deps);
        }
    }

    fn twice(
        krate: &super::LabCrate,
        lab: &super::LabInfo,
        cache: &Path,
        user: Option<grader_engine::sandbox::child::Identity>,
        deps: &super::Dependencies,
    ) {
        for _ in 0..2 {
            let run = tempfile::tempdir().expect("run dir");
            let sources = super::take_sources(krate, run.path()).expect("sources");
            let (compiled, copied) =
                super::build_own(krate, lab, cache, run.path(), &sources, deps, user)
                    .expect("built");
            eprintln!(
                "own crate built in {:.1} s, compiled {:?}",
                compiled.ran.running.as_secs_f64(),
                compiled.compiled
            );
            assert_eq!(compiled.compiled, ["matmul_lab", "grade"]);
            assert!(copied.is_some_and(|b| b.is_file()));
            let left: Vec<_> = std::fs::read_dir(cache.join("builds"))
                .expect("builds")
                .flatten()
                .map(|e| e.file_name())
                .filter(|n| {
                    n.to_string_lossy()
                        .starts_with(&format!("matmul-{}-", std::process::id()))
                })
                .collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }
}
