//! End-to-end: a released student repository, outside this checkout. `templates/matmul` is
//! exactly the release; its Classroom workflow parses and reports every step; each step's
//! command passes exactly when its item does; its `Cargo.lock` is the one cargo would write;
//! and a release whose grader comes from a git repository builds and grades on its own.

use gpu_labs_e2e::{grader_bin, workspace};
use serde_yaml_ng::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The two tests that build and grade take turns: a build beside a speed measurement would
/// slow the solution below its top tier.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `grader` with arguments.
fn grader(args: &[&str]) -> Output {
    Command::new(grader_bin())
        .args(args)
        .output()
        .expect("grader runs")
}

/// Releases matmul into `out` with the given grader source flags.
fn release(out: &Path, source: &[&str]) {
    let mut args = vec!["release", "matmul", "--out"];
    let out_text = out.display().to_string();
    args.push(&out_text);
    args.extend_from_slice(source);
    let made = grader(&args);
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// A command in a released crate, sharing this workspace's compiled dependencies and grader
/// cache (the released crate's own settings are otherwise untouched).
fn in_release(dir: &Path, program: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace().join("target"))
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
        .env_remove("RUSTFLAGS");
    cmd
}

/// Copies the solution's sources over a released crate's.
fn put_back_the_solution(dir: &Path) {
    for file in ["lib.rs", "gpu.rs", "batched.rs"] {
        std::fs::copy(
            workspace().join("solutions/matmul/src").join(file),
            dir.join("src").join(file),
        )
        .expect("copy the solution");
    }
}

/// Every file under `dir` but build outputs, as paths relative to `root`.
fn files_under(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("read the template").flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "target" {
                files_under(root, &path, out);
            }
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.display().to_string());
        }
    }
}

#[test]
fn every_template_is_the_release_of_its_solution() {
    for lab in grader::labs::names() {
        template_is_release(lab);
    }
}

/// A released crate's first `cargo test` builds lighter what no clock times, and only that:
/// every crate whose code runs between a speed item's checkpoints or on every element of a
/// run's data (the student's own, `grader-hot` with the hand-over, the baselines, each run's
/// inputs and the training lab's datasets and reference models, matrixmultiply's products,
/// rayon, the CUDA emulator) stays at the profile's full optimisation. The crates built
/// lighter (the grader's flows, engine and worker set-up; the labs' items and judges;
/// argument, manifest and message parsing; cudarc's wrappers around the driver; ndarray's own
/// copy, the source rules' tokenizer) compile no generic code into those: a crate optimised
/// fully makes its own copy of any generic function it uses, and `grader-hot`'s entry points
/// are not generic.
#[test]
fn a_release_optimises_fully_everything_a_clock_times() {
    let light_allowed = [
        "grader",
        "grader-engine",
        "grader-worker",
        "toml",
        "toml_parser",
        "cudarc",
        "fluent-syntax",
        // The labs' items and judges: their baselines, hand-over, datasets and reference
        // models are `grader-hot`'s.
        "grader-labs",
        // The source rules' tokenizer.
        "proc-macro2",
        "unicode-ident",
        // Generic: what a clock times is compiled in the caller's crate, at its level.
        "ndarray",
    ];
    for lab in grader::labs::names() {
        let source = grader::release::GraderSource::Path("../../grader".into());
        let released = grader::release::files(lab, &source).expect("release");
        let manifest = released
            .iter()
            .find(|(path, _)| path == "Cargo.toml")
            .map(|(_, text)| text.clone())
            .expect("a manifest");
        let manifest: toml::Table = manifest.parse().expect("the manifest parses");
        let dev = manifest["profile"]["dev"]
            .as_table()
            .expect("[profile.dev]");
        assert_eq!(dev["opt-level"].as_integer(), Some(3), "{lab}: {dev:?}");
        assert_eq!(dev["incremental"].as_bool(), Some(false), "{lab}: {dev:?}");
        let packages = dev["package"].as_table().expect("package overrides");
        for (name, profile) in packages {
            let level = profile.get("opt-level").and_then(|l| l.as_integer());
            assert!(
                level.is_none_or(|l| l == 3) || light_allowed.contains(&name.as_str()),
                "{lab}: `{name}` is built at opt-level {level:?}, but its code may run inside a \
                 speed item's clock"
            );
        }
        assert_eq!(
            packages["grader-engine"]["opt-level"].as_integer(),
            Some(0),
            "{lab}: the engine is built lightly"
        );
    }
}

/// Checks `templates/<lab>` against what `grader release <lab>` writes.
fn template_is_release(lab: &str) {
    let source = grader::release::GraderSource::Path("../../grader".into());
    let released = grader::release::files(lab, &source).expect("release");
    let template = workspace().join("templates").join(lab);
    let regenerate = format!("run `cargo run -p grader -- release {lab} --out templates/{lab} --grader-path ../../grader --force`");
    for (relative, text) in &released {
        let committed = std::fs::read_to_string(template.join(relative)).unwrap_or_default();
        if committed == *text {
            continue;
        }
        let (old, new): (Vec<&str>, Vec<&str>) =
            (committed.lines().collect(), text.lines().collect());
        let line = (0..old.len().max(new.len()))
            .find(|&i| old.get(i) != new.get(i))
            .map_or(old.len(), |i| i + 1);
        panic!(
            "templates/{lab}/{relative} is stale from line {line} (has {:?}, the release has {:?}): {regenerate}",
            old.get(line.saturating_sub(1)).copied().unwrap_or("(end of file)"),
            new.get(line.saturating_sub(1)).copied().unwrap_or("(end of file)"),
        );
    }
    let mut committed = Vec::new();
    files_under(&template, &template, &mut committed);
    for relative in committed {
        assert!(
            released.iter().any(|(path, _)| *path == relative),
            "templates/{lab}/{relative} is not part of the release: delete it, or add it to solutions/{lab} and {regenerate}"
        );
    }
}

/// Releases both labs with `grader` (a copy of the grader binary, run from a folder of its
/// own) under the cargo home `home`; every file as (lab/path, bytes), or the error line.
fn release_under(
    grader: &Path,
    home: &Path,
    offline: bool,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut files = Vec::new();
    for lab in grader::labs::names() {
        let out = scratch.path().join(lab);
        let mut command = Command::new(grader);
        command
            .args(["release", lab, "--out"])
            .arg(&out)
            .args(["--grader-path", "../../grader"])
            .current_dir(scratch.path())
            .env("CARGO_HOME", home)
            .env_remove("CARGO");
        if offline {
            command.env("CARGO_NET_OFFLINE", "true");
        }
        let made = command.output().expect("grader runs");
        if !made.status.success() {
            assert!(
                !out.exists(),
                "a failed release wrote nothing: {}",
                out.display()
            );
            return Err(String::from_utf8_lossy(&made.stderr).into_owned());
        }
        let mut names = Vec::new();
        files_under(&out, &out, &mut names);
        names.sort();
        for name in names {
            let bytes = std::fs::read(out.join(&name)).expect("read a released file");
            files.push((format!("{lab}/{name}"), bytes));
        }
    }
    Ok(files)
}

/// A release is a function of the sources alone: the same bytes whatever the machine's cargo
/// registry holds, from an installed grader as from the workspace's, and a one-line error
/// (nothing written) where it truly cannot resolve. In CI this test runs in a cargo home that
/// held nothing before the README's two commands: what a Linux build fetched. The full suite
/// adds an empty home online and a full one (every platform's crates fetched).
#[test]
fn a_release_is_the_same_bytes_whatever_the_cargo_home_holds() {
    let bin = tempfile::tempdir().expect("temp dir");
    let installed = bin.path().join("grader");
    std::fs::copy(grader_bin(), &installed).expect("copy the grader");
    let homes = tempfile::tempdir().expect("temp dir");
    let cargo_home = grader::sandbox::build::instructor_cargo_home().expect("a cargo home");
    let expected = release_under(&installed, &cargo_home, false).expect("release here");
    for (name, bytes) in &expected {
        let (lab, relative) = name.split_once('/').expect("lab/path");
        let committed = std::fs::read(workspace().join("templates").join(lab).join(relative))
            .unwrap_or_default();
        assert!(committed == *bytes, "templates/{name} is not the release");
    }
    // The registry's index alone (no crate's sources, not even this platform's), offline.
    let index_only = homes.path().join("index-only");
    gpu_labs_e2e::copy_dir(
        &cargo_home.join("registry").join("index"),
        &index_only.join("registry").join("index"),
    );
    let mut cases = vec![("the index alone, offline", index_only, true)];
    if gpu_labs_e2e::full_suite() {
        // Every platform's crates, fetched into a home of their own.
        let full = homes.path().join("full");
        let fetched = Command::new(env!("CARGO"))
            .args(["fetch", "--manifest-path"])
            .arg(workspace().join("Cargo.toml"))
            .env("CARGO_HOME", &full)
            .output()
            .expect("cargo fetch");
        assert!(
            fetched.status.success(),
            "cargo fetch (needs crates.io): {}",
            String::from_utf8_lossy(&fetched.stderr)
        );
        cases.push(("every platform's crates, offline", full, true));
        cases.push((
            "an empty home, online",
            homes.path().join("empty-online"),
            false,
        ));
    }
    for (what, home, offline) in cases {
        let got = release_under(&installed, &home, offline)
            .unwrap_or_else(|e| panic!("{what}: the release failed: {e}"));
        assert_eq!(got.len(), expected.len(), "{what}: the same files");
        for ((name, bytes), (_, want)) in got.iter().zip(&expected) {
            assert!(
                bytes == want,
                "{what}: {name} differs from the release here"
            );
        }
    }
    // Nothing to resolve from and no network: one line that says what to do.
    let err = release_under(&installed, &homes.path().join("empty"), true)
        .expect_err("nothing to resolve from");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("Cargo.lock") && err.contains("connect to crates.io once"),
        "{err}"
    );
}

#[test]
fn the_released_lock_is_the_one_cargo_would_write() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("locked-")
        .tempdir()
        .expect("temp dir");
    let lab = dir.path().join("matmul-lab");
    let grader_dir = workspace().join("grader").display().to_string();
    release(&lab, &["--grader-path", &grader_dir]);
    let lock = std::fs::read_to_string(lab.join("Cargo.lock")).expect("a Cargo.lock");
    assert!(
        lock.contains("name = \"cudarc\"") && !lock.contains("serde_yaml_ng"),
        "{lock}"
    );
    // --locked fails when cargo would change the lock in any way (a package more or less).
    let tree = in_release(
        &lab,
        "cargo",
        &["tree", "--locked", "--offline", "-e", "all"],
    )
    .output()
    .expect("cargo tree");
    assert!(
        tree.status.success(),
        "{}",
        String::from_utf8_lossy(&tree.stderr)
    );
}

/// The workflow's grader steps: (id, command, max-score).
fn grader_steps(workflow: &Value) -> Vec<(String, String, f64)> {
    workflow["jobs"]["run-autograding-tests"]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("classroom-resources/autograding-command-grader"))
        })
        .map(|s| {
            (
                s["id"].as_str().expect("an id").to_string(),
                s["with"]["command"]
                    .as_str()
                    .expect("a command")
                    .to_string(),
                s["with"]["max-score"].as_f64().expect("a max-score"),
            )
        })
        .collect()
}

#[test]
fn the_workflow_has_classrooms_shape_and_reports_every_step() {
    let out = grader(&["classroom", "matmul"]);
    assert_eq!(out.status.code(), Some(0));
    let yaml: Value = serde_yaml_ng::from_slice(&out.stdout).expect("the workflow is YAML");
    let on: Vec<&str> = yaml["on"]
        .as_sequence()
        .expect("on")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    // Classroom's own workflows run on push and repository_dispatch; workflow_dispatch lets
    // the instructor run it by hand.
    assert_eq!(on, ["push", "workflow_dispatch", "repository_dispatch"]);
    assert_eq!(yaml["permissions"]["checks"].as_str(), Some("write"));
    let job = &yaml["jobs"]["run-autograding-tests"];
    assert_eq!(job["runs-on"].as_str(), Some("ubuntu-latest"));
    assert_eq!(
        job["if"].as_str(),
        Some("github.actor != 'github-classroom[bot]'")
    );
    let steps = job["steps"].as_sequence().expect("steps");
    assert_eq!(steps[0]["uses"].as_str(), Some("actions/checkout@v4"));
    assert!(steps[1]["uses"]
        .as_str()
        .is_some_and(|u| u.contains("rust-toolchain")));
    let build = steps
        .iter()
        .position(|s| s["run"].as_str().is_some_and(|r| r.contains("--no-run")))
        .expect("a build step");
    let graders = grader_steps(&yaml);
    let first_grader = steps
        .iter()
        .position(|s| s["id"].as_str() == Some(&graders[0].0))
        .expect("grader step");
    assert!(
        build < first_grader,
        "the tests are built before any grader step"
    );
    // The command grader gives its commands PATH and HOME only: the build sees the same, and a
    // failed build (code that does not compile) still lets every step report its 0.
    for step in [
        &steps[build],
        steps.iter().rev().nth(1).expect("the summary"),
    ] {
        let run = step["run"].as_str().expect("a run step");
        assert!(
            run.lines()
                .all(|l| l.starts_with("env -i PATH=\"$PATH\" HOME=\"$HOME\" ")),
            "{run}"
        );
        assert_eq!(step["continue-on-error"].as_bool(), Some(true), "{step:?}");
    }
    assert!(steps[build]["run"]
        .as_str()
        .is_some_and(|r| r.contains("-- --prepare")));
    // The cache: restored before the build, saved right after it whatever the grade (a step
    // below full marks fails, and actions/cache's own post step saves only when all passed).
    assert!(
        steps
            .iter()
            .all(|s| s["uses"].as_str() != Some("actions/cache@v4")),
        "no cache step that saves only on success"
    );
    let uses = |name: &str| {
        steps
            .iter()
            .position(|s| s["uses"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("a step uses {name}"))
    };
    let (restore, save) = (
        uses("actions/cache/restore@v4"),
        uses("actions/cache/save@v4"),
    );
    assert!(restore < build && build < save && save < first_grader);
    assert_eq!(
        steps[restore]["with"], steps[save]["with"],
        "the same path and key"
    );
    let key = steps[save]["with"]["key"].as_str().expect("a key");
    assert!(
        key.contains("steps.toolchain.outputs.cachekey") && key.contains("hashFiles('Cargo.lock'"),
        "a key per toolchain and lock file: {key}"
    );
    assert_eq!(steps[1]["id"].as_str(), Some("toolchain"));
    let restore_id = steps[restore]["id"]
        .as_str()
        .expect("the restore step's id");
    let build_id = steps[build]["id"].as_str().expect("the build step's id");
    let condition = steps[save]["if"]
        .as_str()
        .expect("the save step's condition");
    let terms: Vec<&str> = condition.split(" && ").collect();
    assert_eq!(
        terms,
        [
            "always()".to_string(),
            format!("steps.{restore_id}.outputs.cache-hit != 'true'"),
            format!("steps.{build_id}.outcome == 'success'"),
        ],
        "saved on every grade once the crate builds, unless restored exactly"
    );
    let reporter = steps.last().expect("a reporter");
    assert_eq!(
        reporter["uses"].as_str(),
        Some("classroom-resources/autograding-grading-reporter@v1")
    );
    let runners: Vec<&str> = reporter["with"]["runners"]
        .as_str()
        .expect("runners")
        .split(',')
        .collect();
    let ids: Vec<&str> = graders.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(runners, ids);
    for id in &ids {
        let env = format!("{}_RESULTS", id.to_uppercase());
        assert_eq!(
            reporter["env"][env.as_str()].as_str(),
            Some(format!("${{{{steps.{id}.outputs.result}}}}").as_str()),
            "{env}"
        );
    }
    for step in steps
        .iter()
        .filter(|s| s["id"].as_str().is_some_and(|id| ids.contains(&id)))
    {
        assert!(
            step["with"]["timeout"].as_u64().is_some_and(|t| t >= 1),
            "{step:?}"
        );
        assert!(step["with"]["test-name"].as_str().is_some());
    }
    // The maximum the grader reports without a GPU (the summary and score tables below say
    // 32): the rubric's, less the GPU speedups whose policy is skip.
    let rubric = grader::rubric::embedded("matmul").expect("rubric");
    let skipped: f64 = rubric
        .items
        .iter()
        .filter(|i| {
            i.spec.needs() == grader::rubric::Needs::RealGpu(grader::rubric::SkipPolicy::Skip)
        })
        .map(|i| i.points)
        .sum();
    let total: f64 = graders.iter().map(|(_, _, p)| p).sum();
    assert_eq!(total, rubric.max_score() - skipped);
    assert_eq!(total, 32.0);
}

#[test]
fn each_step_command_exits_zero_exactly_when_its_item_earns_its_points() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let root = tempfile::Builder::new()
        .prefix("classroom-")
        .tempdir()
        .expect("temp dir");
    let grader_dir = workspace().join("grader").display().to_string();
    let yaml: Value =
        serde_yaml_ng::from_slice(&grader(&["classroom", "matmul"]).stdout).expect("YAML");
    let steps = grader_steps(&yaml);
    for (label, solved) in [("template", false), ("solution", true)] {
        let dir = root.path().join(label);
        release(&dir, &["--grader-path", &grader_dir]);
        if solved {
            put_back_the_solution(&dir);
        }
        // Classroom runs in a clone: the seed comes from its commit.
        for git in [
            &["init", "-q"][..],
            &["add", "-A"],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.org",
                "commit",
                "-qm",
                "release",
            ],
        ] {
            assert!(in_release(&dir, "git", git)
                .status()
                .expect("git")
                .success());
        }
        let built = in_release(
            &dir,
            "cargo",
            &["test", "--quiet", "--test", "grade", "--no-run"],
        )
        .output()
        .expect("cargo");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        for (id, command, _) in &steps {
            let out = in_release(&dir, "bash", &["-c", command])
                .output()
                .expect("bash");
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                out.status.success(),
                solved,
                "{label}: step {id} (`{command}`):\n{text}"
            );
        }
        // The speed item was measured once: its three steps read one result.
        let kept: Vec<_> = std::fs::read_dir(dir.join("target/classroom"))
            .expect("step results")
            .flatten()
            .flat_map(|run| {
                std::fs::read_dir(run.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .filter(|f| f.file_name() == "fast_speedup.json")
            .collect();
        assert_eq!(kept.len(), 1, "{label}: one measurement of fast_speedup");
        let summary = in_release(
            &dir,
            "cargo",
            &[
                "test",
                "--quiet",
                "--test",
                "grade",
                "--",
                "--classroom-summary",
            ],
        )
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .output()
        .expect("cargo");
        assert!(summary.status.success());
        let table = std::fs::read_to_string(dir.join("summary.md")).expect("the step summary");
        let total = if solved { "**32/32**" } else { "**0/32**" };
        assert!(table.contains(total), "{label}:\n{table}");
        // A plain `cargo test` on GitHub Actions adds its table to the step summary too.
        let plain = in_release(
            &dir,
            "cargo",
            &["test", "--quiet", "--test", "grade", "--", "time_cpu"],
        )
        .env("GITHUB_STEP_SUMMARY", dir.join("plain.md"))
        .output()
        .expect("cargo");
        assert_eq!(plain.status.success(), solved);
        let table = std::fs::read_to_string(dir.join("plain.md")).expect("the step summary");
        assert!(table.contains("| `time_cpu` |"), "{label}:\n{table}");
    }
}

#[test]
fn a_release_with_a_git_grader_builds_and_grades_far_from_this_checkout() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let root = tempfile::Builder::new()
        .prefix("released-")
        .tempdir()
        .expect("temp dir");
    // A git repository of this checkout as it is now (uncommitted work included).
    let repo = root.path().join("gpu-labs.git");
    let listed = Command::new("git")
        .args(["ls-files", "-co", "--exclude-standard", "-z"])
        .current_dir(workspace())
        .output()
        .expect("git ls-files");
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        let from = workspace().join(&name);
        if !from.is_file() {
            continue;
        }
        let to = repo.join(&name);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
        std::fs::copy(&from, &to).expect("copy");
    }
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.org",
        "commit",
        "-qm",
        "grader",
    ]);
    let rev = git(&["rev-parse", "HEAD"]);
    let url = format!("file://{}", repo.display());
    let lab = root.path().join("student").join("matmul-lab");
    release(&lab, &["--grader-git", &url, "--grader-rev", &rev]);
    let manifest = std::fs::read_to_string(lab.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.contains(&format!(
            "grader = {{ git = \"{url}\", rev = \"{rev}\", default-features = false, features = [\"matmul\"] }}"
        )),
        "{manifest}"
    );
    // The release's own lock names this exact commit: `--locked` proves cargo keeps it as it
    // is (and the versions, this workspace's, reuse its compiled dependencies).
    let lock = std::fs::read_to_string(lab.join("Cargo.lock")).expect("Cargo.lock");
    assert!(
        lock.contains(&format!("source = \"git+{url}?rev={rev}#{rev}\"")),
        "{lock}"
    );

    let run = |what: &str| {
        let started = std::time::Instant::now();
        let out = in_release(&lab, "cargo", &["test", "--locked"])
            .output()
            .expect("cargo");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!(
            "{what}: cargo test took {:.0} s",
            started.elapsed().as_secs_f64()
        );
        assert!(
            stdout.lines().any(|l| l.starts_with("total")),
            "{what}: no score table; cargo said:\n{stderr}"
        );
        stdout
    };
    let total = |out: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix("total"))
            .map(|t| t.trim().to_string())
            .unwrap_or_default()
    };
    let template = run("template");
    assert_eq!(total(&template), "0/32", "{template}");
    assert!(template.contains("not implemented yet"), "{template}");
    put_back_the_solution(&lab);
    let solved = run("solution");
    assert_eq!(total(&solved), "32/32", "{solved}");
}

#[test]
fn a_students_cargo_test_warns_about_what_official_grading_will_not_use() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let root = tempfile::Builder::new()
        .prefix("warned-")
        .tempdir()
        .expect("temp dir");
    let dir = root.path().join("lab");
    let grader_dir = workspace().join("grader").display().to_string();
    release(&dir, &["--grader-path", &grader_dir]);
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("Cargo.toml");
    let text = text.replacen("[dependencies]", "[dependencies]\nitoa = \"1\"", 1);
    std::fs::write(&manifest, text).expect("write Cargo.toml");
    std::fs::write(dir.join("build.rs"), "fn main() {}\n").expect("build.rs");
    let out = in_release(
        &dir,
        "cargo",
        &["test", "--test", "grade", "--", "time_cpu"],
    )
    .output()
    .expect("cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for warning in [
        "warning: Your Cargo.toml adds the dependency `itoa`, which is not part of the lab",
        "warning: Your build.rs is not used",
    ] {
        assert!(
            stderr.contains(warning),
            "missing {warning:?} in:\n{stderr}"
        );
    }
}

/// The compiled kernels under `kernels` (a grader cache's): each one's folder and when its
/// object was written.
fn compiled_kernels(kernels: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut found: Vec<(String, std::time::SystemTime)> = std::fs::read_dir(kernels)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let so = e.path().join("kernels.so");
            let written = std::fs::metadata(&so).and_then(|m| m.modified()).ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), written))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn a_students_next_run_compiles_only_the_kernels_they_changed() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let root = tempfile::Builder::new()
        .prefix("kernels-kept-")
        .tempdir()
        .expect("temp dir");
    let dir = root.path().join("lab");
    let cache = root.path().join("cache");
    let grader_dir = workspace().join("grader").display().to_string();
    release(&dir, &["--grader-path", &grader_dir]);
    put_back_the_solution(&dir);
    let cargo_test = |what: &str| {
        let out = in_release(
            &dir,
            "cargo",
            &["test", "--test", "grade", "--", "gpu_correct"],
        )
        .env("GPU_LABS_CACHE", &cache)
        .output()
        .expect("cargo");
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    let kernels = cache.join("kernels");
    cargo_test("first run");
    let first = compiled_kernels(&kernels);
    if !grader::grade::kernels_kept_between_runs() {
        // A grader run as root starts each run's workers as a user of that run's own, so it
        // keeps nothing from run to run (each run compiles in a fresh folder).
        assert!(first.is_empty(), "a run as root kept kernels: {first:?}");
        cargo_test("second run");
        assert!(compiled_kernels(&kernels).is_empty());
        return;
    }
    assert!(!first.is_empty(), "the first run kept no compiled kernel");
    cargo_test("second run, nothing changed");
    assert_eq!(
        compiled_kernels(&kernels),
        first,
        "a run with no change compiled a kernel again"
    );
    // An edit inside the kernel's source: that kernel alone is compiled again.
    let gpu = dir.join("src/gpu.rs");
    let text = std::fs::read_to_string(&gpu).expect("gpu.rs");
    let edited = text.replacen(
        "extern \"C\" __global__ void matmul(",
        "// edited\nextern \"C\" __global__ void matmul(",
        1,
    );
    assert_ne!(edited, text, "the kernel's signature is in gpu.rs");
    std::fs::write(&gpu, edited).expect("write gpu.rs");
    cargo_test("after an edit of the kernel");
    let after = compiled_kernels(&kernels);
    for kept in &first {
        assert!(after.contains(kept), "{kept:?} was compiled again");
    }
    assert!(
        after.len() > first.len(),
        "the edited kernel was not compiled"
    );
    // Official grading keeps a folder of its own per submission: `grade::tests`.
}

/// Runs a command in a released crate and returns (success, stdout, stderr).
fn run_in(dir: &Path, program: &str, args: &[&str]) -> (bool, String, String) {
    let out = in_release(dir, program, args)
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The tools students point at a released lab crate keep working on its grading harness,
/// which reads libtest's arguments by hand: an editor's test listing (`--list --format
/// terse`), one item with `--exact`, and cargo-nextest (list, one item, all). nextest starts a
/// process per item, two at once: a speed item still earns its points, since gradings that
/// share a cache take turns across processes (`grader_engine::check::machine_turn`).
#[test]
fn a_released_crate_answers_libtests_interface_and_nextest() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let root = tempfile::Builder::new()
        .prefix("tools-")
        .tempdir()
        .expect("temp dir");
    let dir = root.path().join("matmul-lab");
    let grader_dir = workspace().join("grader").display().to_string();
    release(&dir, &["--grader-path", &grader_dir]);
    put_back_the_solution(&dir);
    let rubric = grader::rubric::embedded("matmul").expect("rubric");
    let ids: Vec<&str> = rubric.items.iter().map(|i| i.id()).collect();
    let graded_here: Vec<&str> = rubric
        .items
        .iter()
        .filter(|i| !matches!(i.spec.needs(), grader::rubric::Needs::RealGpu(_)))
        .map(|i| i.id())
        .collect();

    // An editor's listing: every item, `NAME: test`, and nothing else from the grade target.
    let (ok, listed, err) = run_in(
        &dir,
        "cargo",
        &[
            "test", "-q", "--test", "grade", "--", "--list", "--format", "terse",
        ],
    );
    assert!(ok, "{err}");
    let want: Vec<String> = ids.iter().map(|id| format!("{id}: test")).collect();
    assert_eq!(listed.lines().collect::<Vec<_>>(), want, "{listed}");
    // The whole crate's listing (its unit tests too), as an IDE asks for it.
    let (ok, _, err) = run_in(
        &dir,
        "cargo",
        &["test", "-q", "--", "--list", "--format", "terse"],
    );
    assert!(ok, "{err}");

    // `--exact`: that item alone; a part of an id with `--exact` selects nothing.
    let (ok, out, err) = run_in(
        &dir,
        "cargo",
        &[
            "test",
            "-q",
            "--test",
            "grade",
            "--",
            "--exact",
            "naive_correct",
        ],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("test naive_correct ... ok"), "{out}");
    assert!(out.contains("1 passed; 0 failed"), "{out}");
    assert!(!out.contains("test fast_correct"), "{out}");
    let (ok, out, err) = run_in(
        &dir,
        "cargo",
        &["test", "-q", "--test", "grade", "--", "--exact", "naive"],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("0 passed; 0 failed"), "{out}");

    // cargo-nextest, where it is installed (it is on CI's machines).
    if Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .map_or(true, |o| !o.status.success())
    {
        eprintln!("cargo-nextest is not installed: its part of this test is skipped");
        return;
    }
    let (ok, out, err) = run_in(&dir, "cargo", &["nextest", "list", "--test", "grade"]);
    assert!(ok, "{err}");
    for id in &graded_here {
        assert!(
            out.lines()
                .any(|l| l.trim_end().ends_with(&format!(" {id}"))),
            "{id}: {out}"
        );
    }
    let (ok, out, err) = run_in(
        &dir,
        "cargo",
        &[
            "nextest",
            "run",
            "--test",
            "grade",
            "-E",
            "test(=naive_correct)",
        ],
    );
    assert!(ok, "{out}{err}");
    assert!(err.contains("1 test run: 1 passed"), "{err}");
    let (ok, out, err) = run_in(
        &dir,
        "cargo",
        &["nextest", "run", "--test", "grade", "--no-fail-fast"],
    );
    assert!(ok, "every item earns its points under nextest: {out}{err}");
    let summary = format!("{n} tests run: {n} passed", n = graded_here.len());
    assert!(err.contains(&summary), "{summary}: {err}");
    // The template under nextest: every item run, every one failed.
    let template = root.path().join("template");
    release(&template, &["--grader-path", &grader_dir]);
    let (ok, _, err) = run_in(
        &template,
        "cargo",
        &["nextest", "run", "--test", "grade", "--no-fail-fast"],
    );
    assert!(!ok, "{err}");
    let summary = format!("{n} tests run: 0 passed, {n} failed", n = graded_here.len());
    assert!(err.contains(&summary), "{summary}: {err}");
}
