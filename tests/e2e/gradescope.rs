//! End-to-end: the autograder zip that `grader gradescope` writes, run as Gradescope would run
//! it but without Gradescope: the zip is unpacked into `<root>/source`, a submission is put in
//! `<root>/submission`, and `run_autograder` runs with `AUTOGRADER_ROOT=<root>`, this
//! workspace's grader as `GRADER` and its shared build cache. (`setup.sh` needs root and the
//! network; it is checked with `bash -n` here.)

use gpu_labs_e2e::{copy_crate, grader_bin, one_at_a_time, solution, workspace, Graded};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An unpacked autograder with an empty submission folder.
struct Autograder {
    root: tempfile::TempDir,
}

impl Autograder {
    /// Writes the matmul autograder zip with the grader binary and unpacks it.
    fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("autograder-")
            .tempdir()
            .expect("temp dir");
        let zip_path = root.path().join("autograder.zip");
        let out = Command::new(grader_bin())
            .args(["gradescope", "matmul", "--out"])
            .arg(&zip_path)
            .args(["--grader-git", "https://example.org/gpu-labs.git"])
            .args(["--grader-rev", "0123456789abcdef"])
            .output()
            .expect("grader runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let file = std::fs::File::open(&zip_path).expect("the zip");
        let mut zip = zip::ZipArchive::new(file).expect("a zip archive");
        zip.extract(root.path().join("source")).expect("unzip");
        std::fs::create_dir_all(root.path().join("submission")).expect("mkdir");
        Autograder { root }
    }

    fn source(&self) -> PathBuf {
        self.root.path().join("source")
    }

    fn submission(&self) -> PathBuf {
        self.root.path().join("submission")
    }

    /// Runs `run_autograder` with `GRADER`, and returns its exit code, its output and the
    /// results.json it left.
    fn run(&self, grader: &Path) -> Graded {
        let out = one_at_a_time(|| {
            Command::new(self.source().join("run_autograder"))
                .current_dir(self.root.path())
                .env("AUTOGRADER_ROOT", self.root.path())
                .env("GRADER", grader)
                .env(
                    "GPU_LABS_CACHE",
                    workspace().join("target").join("grader-cache"),
                )
                .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
                .output()
                .expect("run_autograder runs")
        });
        let results = self.root.path().join("results").join("results.json");
        let text = std::fs::read_to_string(&results).unwrap_or_default();
        Graded {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            json: serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("results.json is JSON ({e}):\n{text}")),
        }
    }
}

#[test]
fn the_zip_holds_the_two_scripts_executable_and_setup_sh_is_valid_bash() {
    let autograder = Autograder::new();
    for script in ["setup.sh", "run_autograder"] {
        let path = autograder.source().join(script);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).expect(script).permissions(),
        );
        assert_eq!(mode & 0o111, 0o111, "{script} is executable");
        let check = Command::new("bash")
            .arg("-n")
            .arg(&path)
            .output()
            .expect("bash");
        assert!(
            check.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
    let setup = std::fs::read_to_string(autograder.source().join("setup.sh")).expect("setup.sh");
    assert!(
        setup.contains("cargo install --locked --git \"$GRADER_GIT\" --rev \"$GRADER_REV\" grader")
    );
    assert!(setup.contains("GRADER_GIT='https://example.org/gpu-labs.git'"));
    for file in ["assignment.toml", "README.md", "template/src/lib.rs"] {
        assert!(autograder.source().join(file).is_file(), "{file}");
    }
}

#[test]
fn the_solution_uploaded_as_its_folder_scores_full_marks_and_joins_the_leaderboard() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let autograder = Autograder::new();
    // A zip of the repository's folder: the crate is one level down, beside other files.
    copy_crate(
        &solution(),
        &autograder.submission().join("matmul-lab-main"),
    );
    std::fs::write(autograder.submission().join("notes.txt"), "hi").expect("write");
    let graded = autograder.run(&grader_bin());
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(
        graded.json["score"], graded.json["extra_data"]["max_score"],
        "{}",
        graded.stdout
    );
    assert!(graded.json["extra_data"]["max_score"].as_f64() > Some(0.0));
    assert_eq!(graded.score("fast_speedup"), 4.0);
    let leaderboard = graded.json["leaderboard"]
        .as_array()
        .expect("a leaderboard");
    let fast = leaderboard
        .iter()
        .find(|e| e["name"] == "fast_speedup (×)")
        .unwrap_or_else(|| panic!("fast_speedup on the leaderboard: {leaderboard:?}"));
    assert!(fast["value"].as_f64() >= Some(12.0), "{fast}");
    assert_eq!(fast["order"], "desc");
    // Without a real GPU the GPU speedup is not graded here, and not shown as failed.
    let gpu = graded.item("gpu_speedup");
    if gpu["max_score"].as_f64() == Some(0.0) {
        assert_eq!(gpu.get("status"), None, "{gpu}");
        assert!(
            gpu["output"]
                .as_str()
                .is_some_and(|o| o.starts_with("Not graded here: ")),
            "{gpu}"
        );
    }
}

#[test]
fn the_template_scores_zero_and_says_what_is_not_implemented() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let autograder = Autograder::new();
    copy_crate(
        &workspace().join("templates/matmul"),
        &autograder.submission(),
    );
    let graded = autograder.run(&grader_bin());
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(
        graded.json["score"].as_f64(),
        Some(0.0),
        "{}",
        graded.stdout
    );
    for id in ["naive_correct", "fast_correct", "time_cpu", "fast_speedup"] {
        let output = graded.output(id);
        assert!(output.contains("not implemented yet"), "{id}: {output}");
        assert_eq!(graded.item(id)["status"], "failed");
    }
    assert_eq!(graded.json.get("leaderboard"), None);
}

#[test]
fn a_submission_with_no_crate_gets_a_results_json_that_says_what_to_upload() {
    let autograder = Autograder::new();
    std::fs::write(autograder.submission().join("matmul.py"), "print(1)").expect("write");
    let graded = autograder.run(&grader_bin());
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(graded.json["score"].as_f64(), Some(0.0));
    assert_eq!(graded.json["tests"], Value::Array(Vec::new()));
    let output = graded.json["output"].as_str().expect("output");
    assert!(output.contains("no lab crate"), "{output}");
    assert!(output.contains("./matmul.py"), "{output}");
}

#[test]
fn when_the_grader_fails_the_student_still_gets_its_message() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let autograder = Autograder::new();
    // Quotes and a backslash in the folder's name, which the grader's message repeats.
    let krate = autograder.submission().join("my \"lab\" \\ crate");
    std::fs::create_dir_all(krate.join("src")).expect("mkdir");
    std::fs::write(krate.join("src/lib.rs"), "").expect("write");
    std::fs::write(krate.join("Cargo.toml"), "[package\nname = \"x\"").expect("write");
    let graded = autograder.run(&grader_bin());
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(graded.json["score"].as_f64(), Some(0.0));
    let output = graded.json["output"].as_str().expect("output");
    assert!(
        output.contains("the grader stopped with status 2")
            && output.contains(
                "my \"lab\" \\ crate is not a lab crate: its Cargo.toml is not valid TOML"
            ),
        "{output}"
    );

    // No grader at all (setup.sh did not install it): a message too, not a blank failure.
    let graded = autograder.run(Path::new("/nonexistent/grader"));
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    let output = graded.json["output"].as_str().expect("output");
    assert!(output.contains("status 127"), "{output}");
}

/// What a container's seccomp profile refuses to the autograder, as Docker's do: namespaces
/// always (`unshare`, `setns`, `clone` with a namespace flag; `clone3` so that the C library
/// falls back to `clone`), and in older profiles Landlock too.
#[derive(Clone, Copy, PartialEq)]
enum Refused {
    Namespaces,
    NamespacesAndLandlock,
}

/// Installs `refused` as a seccomp filter in the child before it runs `cmd`'s program, so the
/// whole autograder runs as in Gradescope's container from its first instruction.
#[cfg(target_os = "linux")]
fn in_container(cmd: &mut Command, refused: Refused) {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule,
    };
    use std::collections::BTreeMap;
    use std::os::unix::process::CommandExt;
    let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH).expect("a known arch");
    let filter = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| -> BpfProgram {
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .and_then(BpfProgram::try_from)
        .expect("a seccomp filter")
    };
    let namespace_flags = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWCGROUP,
    ];
    let clone_rules = namespace_flags
        .iter()
        .map(|&flag| {
            let flag = flag as u64;
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .expect("a condition")])
            .expect("a rule")
        })
        .collect();
    let mut eperm = BTreeMap::from([
        (libc::SYS_unshare, vec![]),
        (libc::SYS_setns, vec![]),
        (libc::SYS_clone, clone_rules),
    ]);
    if refused == Refused::NamespacesAndLandlock {
        for call in [
            libc::SYS_landlock_create_ruleset,
            libc::SYS_landlock_add_rule,
            libc::SYS_landlock_restrict_self,
        ] {
            eperm.insert(call, vec![]);
        }
    }
    let programs = [
        filter(eperm, libc::EPERM),
        filter(BTreeMap::from([(libc::SYS_clone3, vec![])]), libc::ENOSYS),
    ];
    // SAFETY: between fork and exec the closure only makes the prctl and seccomp system calls
    // of `apply_filter` on programs built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            for program in &programs {
                seccompiler::apply_filter(program).map_err(std::io::Error::other)?;
            }
            Ok(())
        });
    }
}

/// A Rust toolchain in a folder of its own, outside CARGO_HOME, ~/.rustup, /usr and /opt, as
/// on images that install Rust elsewhere (hard links to this machine's toolchain: no copy).
fn relocated_rust() -> PathBuf {
    static MADE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let sysroot = Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .expect("rustc runs");
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        let to = workspace().join("target").join("relocated-rust");
        if !to.join("bin").join("cargo").is_file() {
            let _ = std::fs::remove_dir_all(&to);
            let status = Command::new("cp")
                .arg("-al")
                .arg(&sysroot)
                .arg(&to)
                .status()
                .expect("cp runs");
            assert!(status.success(), "link the toolchain into {}", to.display());
        }
        to
    })
    .clone()
}

/// What a documented results.json field holds.
#[derive(Clone, Copy)]
enum Field {
    Number,
    Text,
    /// `text`, `html`, `simple_format`, `md` or `ansi`.
    Format,
    /// `hidden`, `after_due_date`, `after_published` or `visible`.
    Visibility,
    /// `passed` or `failed`.
    Status,
    Object,
    List,
}

/// Every key of `object` is one of `fields` and holds what it documents.
fn check_fields(object: &serde_json::Map<String, Value>, fields: &[(&str, Field)], at: &str) {
    for (key, value) in object {
        let (_, field) = fields
            .iter()
            .find(|(name, _)| name == key)
            .unwrap_or_else(|| panic!("{at}: `{key}` is not a field of the specification"));
        let one_of = |allowed: &[&str]| allowed.contains(&value.as_str().unwrap_or(""));
        let ok = match field {
            Field::Number => value.is_number(),
            Field::Text => value.is_string(),
            Field::Format => one_of(&["text", "html", "simple_format", "md", "ansi"]),
            Field::Visibility => {
                one_of(&["hidden", "after_due_date", "after_published", "visible"])
            }
            Field::Status => one_of(&["passed", "failed"]),
            Field::Object => value.is_object(),
            Field::List => value.is_array(),
        };
        assert!(ok, "{at}: `{key}` holds {value}");
    }
}

/// The results.json fields and values Gradescope's autograder specification documents
/// (https://gradescope-autograders.readthedocs.io/en/latest/specs/), checked for every field
/// this results.json has.
fn check_gradescope_schema(json: &Value) {
    use Field::*;
    let top = json.as_object().expect("results.json is an object");
    check_fields(
        top,
        &[
            ("score", Number),
            ("execution_time", Number),
            ("output", Text),
            ("output_format", Format),
            ("test_output_format", Format),
            ("test_name_format", Format),
            ("visibility", Visibility),
            ("stdout_visibility", Visibility),
            ("extra_data", Object),
            ("tests", List),
            ("leaderboard", List),
        ],
        "results.json",
    );
    for entry in json["leaderboard"].as_array().into_iter().flatten() {
        let entry = entry.as_object().expect("a leaderboard entry");
        assert!(
            entry["name"].is_string() && !entry["value"].is_null(),
            "{entry:?}"
        );
        if let Some(order) = entry.get("order") {
            assert!(
                ["asc", "desc"].contains(&order.as_str().unwrap_or("")),
                "{order}"
            );
        }
    }
    for test in json["tests"].as_array().expect("tests is a list") {
        let test = test.as_object().expect("a test is an object");
        check_fields(
            test,
            &[
                ("score", Number),
                ("max_score", Number),
                ("status", Status),
                ("name", Text),
                ("name_format", Format),
                ("number", Text),
                ("output", Text),
                ("output_format", Format),
                ("tags", List),
                ("visibility", Visibility),
                ("extra_data", Object),
            ],
            "a test",
        );
        assert!(
            top.contains_key("score") || test.contains_key("score"),
            "a score somewhere"
        );
    }
}

/// The rubric's item ids, in order.
fn rubric_ids(lab: &str) -> Vec<String> {
    let text = std::fs::read_to_string(
        workspace()
            .join("assignments")
            .join(lab)
            .join("assignment.toml"),
    )
    .expect("the rubric");
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("id = \""))
        .map(|rest| rest.trim_end_matches('"').to_string())
        .collect()
}

/// setup.sh then run_autograder, both inside `refused`, with Rust in a folder of its own and a
/// CARGO_HOME of the image's (apt-get is a stand-in that only logs: the test has no network for
/// it); returns the results.json of the solution's grading.
fn grade_in_a_container(refused: Refused) -> Graded {
    let autograder = Autograder::new();
    let root = autograder.root.path();
    let rust = relocated_rust();
    let fake = root.join("fake-bin");
    std::fs::create_dir_all(&fake).expect("mkdir");
    std::fs::write(
        fake.join("apt-get"),
        "#!/bin/sh\necho \"apt-get $*\" >>\"$0.log\"\n",
    )
    .expect("write apt-get");
    std::fs::set_permissions(
        fake.join("apt-get"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod apt-get");
    // The image's CARGO_HOME, with this machine's downloaded crates (hard links, no network).
    let cargo_home = root.join("cargo-home");
    std::fs::create_dir_all(&cargo_home).expect("mkdir");
    let home = std::env::var_os("HOME").map(PathBuf::from).expect("HOME");
    let registry = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"))
        .join("registry");
    let status = Command::new("cp")
        .arg("-al")
        .arg(&registry)
        .arg(cargo_home.join("registry"))
        .status()
        .expect("cp runs");
    assert!(status.success(), "link the registry");
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        fake.display(),
        rust.join("bin").display()
    );
    let script = |name: &str| {
        let mut cmd = Command::new("bash");
        cmd.arg(autograder.source().join(name))
            .current_dir(root)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", root)
            .env("CARGO_HOME", &cargo_home)
            .env("AUTOGRADER_ROOT", root)
            .env("GRADER", grader_bin())
            .env(
                "GPU_LABS_CACHE",
                workspace().join("target").join("grader-cache"),
            )
            .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE);
        in_container(&mut cmd, refused);
        cmd
    };
    let started = std::time::Instant::now();
    let setup = one_at_a_time(|| script("setup.sh").output().expect("setup.sh runs"));
    eprintln!(
        "setup.sh (no downloads, no cargo install) took {:.0?}",
        started.elapsed()
    );
    assert!(
        setup.status.success(),
        "setup.sh failed:\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let log = std::fs::read_to_string(fake.join("apt-get.log")).unwrap_or_default();
    assert!(
        log.contains("install -y"),
        "setup.sh installs its packages: {log}"
    );
    // The warm-up graded the template with the relocated toolchain, inside the container.
    let warm: Value = serde_json::from_slice(
        &std::fs::read(workspace().join("target/grader-cache/template-results.json"))
            .expect("setup.sh's template results"),
    )
    .expect("JSON");
    assert_eq!(warm["score"].as_f64(), Some(0.0), "{warm}");
    copy_crate(&solution(), &autograder.submission());
    let started = std::time::Instant::now();
    let out = one_at_a_time(|| {
        script("run_autograder")
            .output()
            .expect("run_autograder runs")
    });
    eprintln!(
        "run_autograder on the solution took {:.0?}",
        started.elapsed()
    );
    let results = root.join("results").join("results.json");
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    Graded {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("results.json is JSON ({e}):\n{text}")),
    }
}

/// What every container grading must show: full marks (the solution; its speed tier, which
/// depends on how busy this machine is, only measured), a results.json within Gradescope's
/// specification with its tests numbered in rubric order, and a sandbox line that says the
/// container isolated the run and which protections were active inside it.
fn check_container_grading(graded: &Graded) -> String {
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    check_gradescope_schema(&graded.json);
    gpu_labs_e2e::assert_lost(graded, &[]);
    let tests = graded.json["tests"].as_array().expect("tests");
    let ids: Vec<&str> = tests
        .iter()
        .map(|t| t["extra_data"]["item"].as_str().expect("an item id"))
        .collect();
    assert_eq!(ids, rubric_ids("matmul"), "tests in rubric order");
    let numbers: Vec<String> = tests
        .iter()
        .map(|t| t["number"].as_str().expect("a number").to_string())
        .collect();
    let expected: Vec<String> = (1..=tests.len()).map(|n| n.to_string()).collect();
    assert_eq!(numbers, expected);
    let output = graded.json["output"].as_str().expect("output").to_string();
    assert!(
        output.contains("Sandbox: isolated by the container the grader runs in"),
        "{output}"
    );
    output
}

#[test]
#[cfg(target_os = "linux")]
fn gradescope_grades_in_a_container_that_refuses_namespaces_with_rust_in_a_folder_of_its_own() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let graded = grade_in_a_container(Refused::Namespaces);
    let output = check_container_grading(&graded);
    assert!(
        output.contains("processes: unlimited (no user namespace"),
        "{output}"
    );
    // Landlock still works there: the build ran confined with the relocated toolchain.
    assert!(output.contains("filesystem: landlock"), "{output}");
}

#[test]
#[cfg(target_os = "linux")]
fn gradescope_grades_in_a_container_that_refuses_landlock_too() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let graded = grade_in_a_container(Refused::NamespacesAndLandlock);
    let output = check_container_grading(&graded);
    assert!(output.contains("filesystem: unprotected"), "{output}");
}
