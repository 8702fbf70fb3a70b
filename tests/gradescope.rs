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
        graded.json["score"], graded.json["max_score"],
        "{}",
        graded.stdout
    );
    assert!(graded.json["max_score"].as_f64() > Some(0.0));
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
