//! End-to-end: `grader batch --slurm`'s array script under a real one-node Slurm cluster
//! (Debian's slurm-wlm and MUNGE, started by `tests/support/slurm-one-node`), in a class folder
//! whose path has a space and a `%`: every task runs, a task fails only where its submission
//! could not be graded, `--unsandboxed` reaches the tasks, and `grader collect` writes the same
//! gradebook as `grader batch`. Full suite only; skipped, saying why, where Slurm cannot run.

use gpu_labs_e2e::{edited_copy, grader_bin, rubric_with, solution, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The cluster's helper script.
fn cluster_script() -> PathBuf {
    workspace().join("tests/support/slurm-one-node")
}

/// A running cluster, stopped when dropped (a failed assertion included).
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

impl Cluster {
    /// Starts one, or says why this machine cannot run one.
    fn start() -> Result<Cluster, String> {
        let dir = tempfile::Builder::new()
            .prefix("slurm-state-")
            .tempdir()
            .expect("temp dir");
        let out = Command::new(cluster_script())
            .arg("start")
            .arg(dir.path())
            .output()
            .expect("the cluster script runs");
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match out.status.code() {
            Some(0) => Ok(Cluster {
                conf: PathBuf::from(stdout),
                dir,
            }),
            Some(3) => Err(stdout),
            _ => panic!(
                "the cluster script failed: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    /// A Slurm client command aimed at this cluster.
    fn client(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("SLURM_CONF", &self.conf);
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(cluster_script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

/// Runs the grader in `cwd` with this workspace's shared build cache and the sandbox as this
/// machine has it (no GPU_LABS_SANDBOX from the caller: `--unsandboxed` must do the work).
fn grader(args: &[&str], cwd: &Path) -> Output {
    Command::new(grader_bin())
        .args(args)
        .current_dir(cwd)
        .env("GPU_LABS_CACHE", workspace().join("target/grader-cache"))
        .env_remove(grader::sandbox::SWITCH)
        .output()
        .expect("grader runs")
}

/// The gradebook as student → (column → cell), without the time each was graded.
fn gradebook(path: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).expect("the gradebook");
    let headers = reader.headers().expect("headers").clone();
    reader
        .records()
        .map(|r| {
            let r = r.expect("a row");
            let row: BTreeMap<String, String> = headers
                .iter()
                .zip(r.iter())
                .filter(|(h, _)| *h != "graded_at")
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect();
            (row["student"].clone(), row)
        })
        .collect()
}

/// Each array task's (state, exit code) from `scontrol show job`, by task index (the
/// controller keeps finished jobs for MinJobAge; this cluster keeps no accounting for sacct).
fn task_states(cluster: &Cluster, job: &str) -> BTreeMap<usize, (String, String)> {
    let out = cluster
        .client("scontrol")
        .args(["show", "job", job])
        .output()
        .expect("scontrol runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("\n\n")
        .filter_map(|block| {
            let field = |name: &str| {
                block
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{name}=")))
                    .map(str::to_string)
            };
            Some((
                field("ArrayTaskId")?.parse().ok()?,
                (field("JobState")?, field("ExitCode")?),
            ))
        })
        .collect()
}

#[test]
fn a_real_slurm_grades_the_class_as_grader_batch_does() {
    if !gpu_labs_e2e::full_suite() {
        eprintln!(
            "skipped: starts a Slurm cluster and grades a class twice; GPU_LABS_FULL=1 runs it"
        );
        return;
    }
    let cluster = match Cluster::start() {
        Ok(cluster) => cluster,
        Err(why) => {
            eprintln!("skipped: no Slurm cluster can run here: {why}");
            return;
        }
    };
    // The two breakers: a space (an unquoted #SBATCH line is refused) and a `%` (an
    // unescaped one is a Slurm file-name pattern).
    let class = tempfile::Builder::new()
        .prefix("class 50% ")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    let sol = solution();
    edited_copy(&sol, &subs.join("alice"), "src/lib.rs", &[]);
    edited_copy(
        &sol,
        &subs.join("ken"),
        "src/lib.rs",
        &[("let mut sum = 0.0f32;", "let mut sum = 0.0f32 +;")],
    );
    // Not a crate: the grader cannot grade it, so its task must fail.
    std::fs::create_dir_all(subs.join("quentin")).expect("mkdir");
    // A few quick items that are not about speed, so both gradings must agree exactly.
    let (_rubric_dir, rubric) =
        rubric_with("matmul", &["naive_correct", "fast_correct", "time_cpu"]);
    let rubric = rubric.to_str().expect("a UTF-8 path");
    let common = [
        "--assignment",
        rubric,
        "--gpu",
        "off",
        "--seed",
        "5",
        "--unsandboxed",
    ];

    let mut args = vec!["batch", "submissions"];
    args.extend(common);
    args.extend([
        "--slurm",
        "--partition",
        "debug",
        "--cpus-per-task",
        "1",
        "--mem",
        "2G",
        "--time",
        "00:20:00",
    ]);
    let wrote = grader(&args, class.path());
    assert_eq!(
        wrote.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&wrote.stderr)
    );
    let script = class.path().join("feedback/slurm/grade.sbatch");
    let text = std::fs::read_to_string(&script).expect("the script");
    assert!(text.contains(" --unsandboxed\n"), "{text}");

    let started = Instant::now();
    let submitted = cluster
        .client("sbatch")
        .arg("--parsable")
        .arg(&script)
        .current_dir(class.path())
        .env("GPU_LABS_CACHE", workspace().join("target/grader-cache"))
        .env_remove(grader::sandbox::SWITCH)
        .output()
        .expect("sbatch runs");
    assert!(
        submitted.status.success(),
        "sbatch refused the script: {}\n{text}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let job = String::from_utf8_lossy(&submitted.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    loop {
        let queued = cluster
            .client("squeue")
            .args(["-h", "-j", &job, "-o", "%i %T"])
            .output()
            .expect("squeue runs");
        if String::from_utf8_lossy(&queued.stdout).trim().is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1200),
            "the array did not finish in 20 minutes: {}",
            String::from_utf8_lossy(&queued.stdout)
        );
        std::thread::sleep(Duration::from_secs(2));
    }
    eprintln!(
        "the array of 3 tasks ran in {:.0} s",
        started.elapsed().as_secs_f64()
    );

    // Tasks in the students' order: a low grade (ken does not compile) completes; a
    // submission that could not be graded (quentin's) fails.
    let states = task_states(&cluster, &job);
    let log = |task: usize| {
        std::fs::read_to_string(class.path().join(format!("feedback/slurm/task-{task}.log")))
            .unwrap_or_else(|e| format!("(no log at the quoted path with its literal `%`: {e})"))
    };
    let expected = [
        (0, "COMPLETED", "0:0"),
        (1, "COMPLETED", "0:0"),
        (2, "FAILED", "2:0"),
    ];
    for (task, state, code) in expected {
        assert_eq!(
            states.get(&task).map(|(s, c)| (s.as_str(), c.as_str())),
            Some((state, code)),
            "task {task}: {states:?}\n{}",
            log(task)
        );
    }
    assert!(
        log(2).contains("error: could not grade 1 of the submissions: quentin"),
        "{}",
        log(2)
    );

    // --unsandboxed reached the task: its record says the submission ran unsandboxed, where
    // this machine could have sandboxed it.
    let record = std::fs::read_to_string(class.path().join("feedback/alice/record.json"))
        .expect("alice's record");
    if grader::sandbox::available().filesystem {
        assert!(record.contains("not sandboxed"), "{record}");
    } else {
        eprintln!(
            "no Landlock here: every record says `not sandboxed`; the script's flag was checked"
        );
    }

    let collected = grader(
        &[
            "collect",
            "feedback",
            "--assignment",
            rubric,
            "--out",
            "slurm.csv",
        ],
        class.path(),
    );
    assert_eq!(
        collected.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&collected.stderr)
    );
    // The tasks were given the absolute path, which quentin's error names: so is this batch.
    let mut args = vec!["batch", subs.to_str().expect("a UTF-8 path")];
    args.extend(common);
    args.extend(["--feedback", "direct", "--out", "direct.csv", "--jobs", "1"]);
    let direct = grader(&args, class.path());
    assert_eq!(
        direct.status.code(),
        Some(2),
        "quentin could not be graded: {}",
        String::from_utf8_lossy(&direct.stderr)
    );
    let (from_slurm, from_batch) = (
        gradebook(&class.path().join("slurm.csv")),
        gradebook(&class.path().join("direct.csv")),
    );
    assert_eq!(from_slurm.len(), 3, "{from_slurm:?}");
    assert_eq!(from_slurm, from_batch);
    assert_eq!(from_slurm["alice"]["total"], from_slurm["alice"]["max"]);
    assert_eq!(from_slurm["ken"]["status"], "not-compiled");
}
