//! Lab crates' own grading test binaries (`cargo test --test grade`, what a student runs),
//! built together: many crates in one cargo invocation, so that cargo keeps both cores busy and
//! the shared dependencies are compiled once; and each crate once, however many seeds or items
//! it is graded on afterwards (`grader grade` builds the crate again on every call).
//!
//! The real-GPU kit builds its binaries with it ([`build`]), and the tests that grade one copy
//! many times ([`Harness`]).

use crate::{alone, beside_others, workspace, Graded, TEST_GPU_MODE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the `grade` test binary of each lab crate in `crates` (a folder with `Cargo.toml`,
/// `src/` and `tests/grade.rs`, as a student has it) in one cargo invocation, and returns
/// their paths, in order. `name` names the build: its workspace is `target/e2e-builds/NAME`
/// (so that cargo replaces the previous build's artifacts instead of adding to them); two
/// builds at once must not share a name.
///
/// Each crate is built with its own manifest's dependencies and, when it has one, its own
/// `[profile]` (a student's crate: the template's); else with the workspace's (what official
/// grading builds with: optimised, line tables). All the crates of one build share one
/// profile: the first crate's.
pub fn build(name: &str, crates: &[&Path]) -> Result<Vec<PathBuf>, String> {
    let ws = workspace();
    let root = ws.join("target/e2e-builds").join(name);
    if root.exists() {
        std::fs::remove_dir_all(&root)
            .map_err(|e| format!("cannot clear {}: {e}", root.display()))?;
    }
    let mut members = Vec::new();
    let mut profile = None;
    for (i, dir) in crates.iter().enumerate() {
        let manifest = read_manifest(&dir.join("Cargo.toml"))?;
        if profile.is_none() {
            profile = manifest.get("profile").cloned();
        }
        let member = root.join(i.to_string());
        std::fs::create_dir_all(&member)
            .map_err(|e| format!("cannot create {}: {e}", member.display()))?;
        write(
            &member.join("Cargo.toml"),
            &member_manifest(manifest, &format!("{name}-{i}"), dir)?,
        )?;
        members.push(toml::Value::from(i.to_string()));
    }
    let profile = match profile {
        Some(p) => p,
        None => read_manifest(&ws.join("Cargo.toml"))?
            .get("profile")
            .cloned()
            .ok_or("the workspace's Cargo.toml has no [profile]")?,
    };
    let mut workspace_table = toml::Table::new();
    workspace_table.insert("members".into(), members.into());
    workspace_table.insert("resolver".into(), "2".into());
    let mut doc = toml::Table::new();
    doc.insert("workspace".into(), workspace_table.into());
    doc.insert("profile".into(), profile);
    write(&root.join("Cargo.toml"), &doc.to_string())?;
    // The versions this workspace tested (cargo drops what the crates do not use).
    std::fs::copy(ws.join("Cargo.lock"), root.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "test",
            "--no-run",
            "--workspace",
            "--test",
            "grade",
            "--message-format=json",
        ])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", ws.join("target"))
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let messages: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if !out.status.success() {
        // With JSON messages, the compiler's errors are on stdout.
        let errors: Vec<&str> = messages
            .iter()
            .filter(|m| m["message"]["level"] == "error")
            .filter_map(|m| m["message"]["rendered"].as_str())
            .collect();
        return Err(format!(
            "the crates do not build:\n{}\n{}",
            errors.join("\n"),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    (0..crates.len())
        .map(|i| {
            let manifest = root.join(i.to_string()).join("Cargo.toml");
            messages
                .iter()
                .filter(|m| m["target"]["name"] == "grade")
                .filter(|m| m["manifest_path"].as_str().map(Path::new) == Some(&manifest))
                .find_map(|m| m["executable"].as_str().map(PathBuf::from))
                .ok_or_else(|| {
                    format!(
                        "cargo built no grade test binary for {}",
                        crates[i].display()
                    )
                })
        })
        .collect()
}

fn read_manifest(path: &Path) -> Result<toml::Table, String> {
    std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The crate's manifest as a member of the build's workspace: a name of its own, its package
/// name followed by `suffix` (one workspace may not hold two packages of one name, and cargo
/// names a path package's artifacts by its name and its path within the workspace, so two
/// builds' members of one name would overwrite each other's binaries), the library's name kept
/// (the harness uses it), its sources where they are, and no workspace or profile of its own.
fn member_manifest(mut manifest: toml::Table, suffix: &str, dir: &Path) -> Result<String, String> {
    let package = manifest
        .get_mut("package")
        .and_then(|p| p.as_table_mut())
        .ok_or_else(|| format!("{}: no [package]", dir.display()))?;
    let name = package
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or_else(|| format!("{}: no package name", dir.display()))?
        .to_string();
    package.insert("name".into(), format!("{name}-{suffix}").into());
    for auto in ["autotests", "autobenches", "autoexamples", "autobins"] {
        package.insert(auto.into(), false.into());
    }
    let path = |file: &str| dir.join(file).display().to_string();
    let mut lib = toml::Table::new();
    lib.insert("name".into(), name.replace('-', "_").into());
    lib.insert("path".into(), path("src/lib.rs").into());
    manifest.insert("lib".into(), lib.into());
    let mut test = toml::Table::new();
    test.insert("name".into(), "grade".into());
    test.insert("path".into(), path("tests/grade.rs").into());
    test.insert("harness".into(), false.into());
    manifest.insert("test".into(), vec![toml::Value::from(test)].into());
    manifest.remove("workspace");
    manifest.remove("profile");
    // Path dependencies (the grader) where the crate's manifest says, from its own folder.
    for table in ["dependencies", "dev-dependencies"] {
        let specs = manifest.get_mut(table).and_then(|t| t.as_table_mut());
        for (_, spec) in specs.into_iter().flat_map(|t| t.iter_mut()) {
            if let Some(path) = spec.get_mut("path") {
                let at = dir.join(path.as_str().unwrap_or_default());
                *path = std::path::absolute(&at)
                    .unwrap_or(at)
                    .display()
                    .to_string()
                    .into();
            }
        }
    }
    Ok(manifest.to_string())
}

/// A lab crate with its grading test binary built ([`harnesses`]): graded on as many seeds and
/// items as a test wants, with no build in between.
pub struct Harness {
    dir: PathBuf,
    binary: PathBuf,
    items: Vec<String>,
    /// The items that compare measured times (the speedups): graded alone.
    timed: Vec<String>,
}

/// One copy of a lab crate per entry of `copies`, each made by `make` in a temporary folder
/// named with `prefix`, and [`harnesses`] built for them all: the folders (kept while the
/// harnesses are used) and the harnesses, in order.
pub fn copies<T>(
    build: &str,
    lab: &str,
    prefix: &str,
    copies: &[T],
    make: impl Fn(&T, &Path),
) -> (Vec<tempfile::TempDir>, Vec<Harness>) {
    let dirs: Vec<tempfile::TempDir> = copies
        .iter()
        .map(|copy| {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .expect("a temporary folder");
            make(copy, dir.path());
            dir
        })
        .collect();
    let paths: Vec<&Path> = dirs.iter().map(|d| d.path()).collect();
    let built = harnesses(build, lab, &paths);
    (dirs, built)
}

/// [`build`]s the lab crates in `crates` (each a crate of lab `lab`) for a test, in one cargo
/// invocation while no grading of this test binary runs (compiling would disturb its timings).
pub fn harnesses(name: &str, lab: &str, crates: &[&Path]) -> Vec<Harness> {
    let mut items = Vec::new();
    let mut timed = Vec::new();
    for (id, kind) in crate::rubric_items(lab) {
        // A speedup compares two measured times; the timers' and the benchmark's checks are
        // the supervisor's brackets around the call, which hold on a busy machine, so those
        // may share.
        if kind.contains("speedup") {
            timed.push(id.clone());
        }
        items.push(id);
    }
    assert!(!items.is_empty(), "{lab}'s rubric lists no items");
    assert!(
        !timed.is_empty(),
        "{lab}'s rubric has no speedup item (the rubric's kinds were not read)"
    );
    let binaries = {
        let _turn = alone();
        let started = std::time::Instant::now();
        let binaries = build(name, crates).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "{name}: {} crates built in {:.0} s",
            crates.len(),
            started.elapsed().as_secs_f64()
        );
        binaries
    };
    crates
        .iter()
        .zip(binaries)
        .map(|(dir, binary)| Harness {
            dir: dir.to_path_buf(),
            binary,
            items: items.clone(),
            timed: timed.clone(),
        })
        .collect()
}

impl Harness {
    /// Every item of the rubric but those that compare measured times: what a table of
    /// faulty copies grades to let its gradings share the cores.
    pub fn untimed_items(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter(|id| !self.timed.contains(id))
            .map(String::as_str)
            .collect()
    }

    /// Grades the crate with its own test binary (`cargo test --test grade -- --gpu GPU --seed
    /// SEED`; a fresh seed when `None`) on `items` only, every one when empty; asserts the
    /// grading completed (whatever the items' verdicts). A grading of items that compare no
    /// measured times may run beside others like it (from [`crate::on_every_core`]); any
    /// other runs alone.
    pub fn grade(&self, gpu: &str, seed: Option<u64>, items: &[&str]) -> Graded {
        let unknown: Vec<&&str> = items
            .iter()
            .filter(|id| !self.items.iter().any(|i| i == *id))
            .collect();
        assert!(unknown.is_empty(), "no items {unknown:?} in the rubric");
        let json = tempfile::NamedTempFile::new().expect("temp file");
        let mut command = Command::new(&self.binary);
        command
            .args(["--gpu", gpu, "--json"])
            .arg(json.path())
            .arg("--exact");
        if let Some(seed) = seed {
            command.args(["--seed", &seed.to_string()]);
        }
        if !items.is_empty() {
            for id in self.items.iter().filter(|id| !items.contains(&id.as_str())) {
                command.args(["--skip", id]);
            }
        }
        // Items that compare no measured times are graded beside other such gradings.
        let measures_time =
            items.is_empty() || items.iter().any(|id| self.timed.iter().any(|t| t == id));
        let out = {
            let _turn = if measures_time {
                Ok(alone())
            } else {
                Err(beside_others())
            };
            command
                // The crate it grades, as under `cargo test` there.
                .current_dir(&self.dir)
                .env("CARGO_MANIFEST_DIR", &self.dir)
                .env("GPU_LABS_CACHE", workspace().join("target/grader-cache"))
                .env("GRADER_GPU", TEST_GPU_MODE)
                // On a CI runner the harness would add each grading's table to the job's page.
                .env_remove("GITHUB_STEP_SUMMARY")
                .output()
                .expect("the test binary runs")
        };
        let text = std::fs::read_to_string(json.path()).unwrap_or_default();
        let graded = Graded {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            json: serde_json::from_str(&text).unwrap_or(Value::Null),
        };
        // 0: every item passed; 101: some failed (libtest's code); anything else, or no
        // results, is the grader's failure.
        assert!(
            matches!(graded.code, Some(0 | 101)) && !graded.json.is_null(),
            "{}: the grading did not complete ({:?}):\n{}\n{}",
            self.dir.display(),
            graded.code,
            graded.stdout,
            graded.stderr
        );
        graded
    }
}
