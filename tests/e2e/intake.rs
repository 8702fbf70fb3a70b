//! End-to-end: official grading takes regular files only. A submission whose files or folders
//! are links (to the solution, to another student's work, to a device), that holds a FIFO, or
//! a huge sparse file, is refused with a message naming the path, at once (nothing hangs or
//! fills memory), and a batch around it grades everyone else as if it were not there.

use gpu_labs_e2e::{copy_crate, grade, grader_bin, solution, workspace, Graded};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The matmul template copied to a new folder (a student's start: nothing implemented).
fn template_copy() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("intake-")
        .tempdir()
        .expect("temp dir");
    copy_crate(&workspace().join("templates/matmul"), dir.path());
    dir
}

/// Every item lost, with `said` in each item's feedback, and the build refused.
fn assert_refused(graded: &Graded, said: &str) {
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(graded.json["score"].as_f64(), Some(0.0), "{}", graded.json);
    let tests = graded.json["tests"].as_array().expect("tests");
    // The items --gpu off leaves out are not graded anywhere, refused or not.
    let graded_here = tests.iter().filter(|t| {
        !t["output"]
            .as_str()
            .unwrap_or("")
            .starts_with("Not graded here")
    });
    assert!(graded_here.clone().count() >= 4, "{}", graded.json);
    for test in graded_here {
        let output = test["output"].as_str().unwrap_or("");
        assert!(output.contains(said), "{output}");
        assert!(
            !output.contains("fn matmul_naive"),
            "no solution text: {output}"
        );
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

/// Runs `f` on another thread and fails the test if it has not returned within `limit`: a
/// grading that blocks on a FIFO would otherwise hang the suite.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("still running after {limit:?}: something blocked"))
}

#[test]
fn a_source_file_linked_to_the_solution_is_refused_by_name() {
    let sub = template_copy();
    let lib = sub.path().join("src/lib.rs");
    std::fs::remove_file(&lib).expect("rm");
    std::os::unix::fs::symlink(solution().join("src/lib.rs"), &lib).expect("symlink");
    let graded = grade(sub.path(), &["--gpu", "off"]);
    assert_refused(&graded, "`src/lib.rs` is a symbolic link (to `");
}

#[test]
fn a_src_folder_linked_to_another_submission_and_a_fifo_are_refused_at_once() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let sub = template_copy();
    let src = sub.path().join("src");
    std::fs::remove_dir_all(&src).expect("rm");
    std::os::unix::fs::symlink(solution().join("src"), &src).expect("symlink");
    let graded = grade(sub.path(), &["--gpu", "off"]);
    assert_refused(&graded, "`src` is a symbolic link");

    let sub = template_copy();
    mkfifo(&sub.path().join("src/notes.rs"));
    let path = sub.path().to_path_buf();
    let graded = within(Duration::from_secs(300), move || {
        grade(&path, &["--gpu", "off"])
    });
    assert_refused(&graded, "`src/notes.rs` is a named pipe (FIFO)");
    drop(sub);
}

#[test]
fn a_fifo_for_a_manifest_is_a_one_line_error_not_a_hang() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let sub = template_copy();
    std::fs::remove_file(sub.path().join("Cargo.toml")).expect("rm");
    mkfifo(&sub.path().join("Cargo.toml"));
    let path = sub.path().to_path_buf();
    let graded = within(Duration::from_secs(120), move || {
        grade(&path, &["--gpu", "off", "--assignment", "matmul"])
    });
    assert_eq!(graded.code, Some(2), "{}", graded.stderr);
    let error: Vec<&str> = graded
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(error.len(), 1, "{}", graded.stderr);
    assert!(
        error[0].contains("Cargo.toml` is a named pipe (FIFO)"),
        "{}",
        error[0]
    );
}

/// Runs `grader batch` on the folder `class/submissions`.
fn batch(class: &Path) -> std::process::Output {
    Command::new(grader_bin())
        .args([
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--gpu",
            "off",
            "--seed",
            "5",
        ])
        .current_dir(class)
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .output()
        .expect("grader runs")
}

#[test]
fn a_batch_grades_the_honest_and_refuses_links_fifos_and_sparse_files_by_name() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let class = tempfile::Builder::new()
        .prefix("intake-class-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    let honest = subs.join("alice");
    copy_crate(&solution(), &honest);
    // A student folder that is a link to alice's: it would get alice's grade.
    std::os::unix::fs::symlink(&honest, subs.join("mallory")).expect("symlink");
    // A 64 GiB sparse file: reading it would take the machine's memory.
    let sparse: PathBuf = subs.join("oscar");
    copy_crate(&workspace().join("templates/matmul"), &sparse);
    std::fs::File::create(sparse.join("src/weights.rs"))
        .and_then(|f| f.set_len(64 << 30))
        .expect("sparse file");
    std::fs::File::create(sparse.join("dataset.bin"))
        .and_then(|f| f.set_len(64 << 30))
        .expect("sparse file outside src");
    // A FIFO in a folder the grader reads around the sources.
    let piped = subs.join("peggy");
    copy_crate(&workspace().join("templates/matmul"), &piped);
    mkfifo(&piped.join("tests/grade.rs.fifo"));
    std::fs::remove_file(piped.join("tests/grade.rs")).expect("rm");
    mkfifo(&piped.join("tests/grade.rs"));

    let started = Instant::now();
    let class_dir = class.path().to_path_buf();
    let out = within(Duration::from_secs(900), move || batch(&class_dir));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Exit 2: one submission (the link) could not be graded; the rest were.
    assert_eq!(
        out.status.code(),
        Some(2),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("the batch took {:.0?}", started.elapsed());
    let mut reader = csv::Reader::from_path(class.path().join("grades.csv")).expect("gradebook");
    let headers = reader.headers().expect("header").clone();
    let column = |name: &str| headers.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let row = |student: &str| {
        rows.iter()
            .find(|r| &r[column("student")] == student)
            .unwrap_or_else(|| panic!("{student} in the gradebook"))
    };
    // Alice gets what she gets alone, with --gpu off: the CPU items in full.
    let alice = row("alice");
    assert_eq!(&alice[column("status")], "graded");
    for id in ["naive_correct", "fast_correct", "time_cpu"] {
        assert_eq!(
            alice[column(id)].parse::<f64>().ok(),
            Some(if id == "time_cpu" { 2.0 } else { 3.0 }),
            "{id}"
        );
    }
    let mallory = row("mallory");
    assert!(
        mallory[column("status")].starts_with("error: mallory is a symbolic link"),
        "{:?}",
        &mallory[column("status")]
    );
    assert_eq!(&mallory[column("total")], "");
    let oscar = row("oscar");
    assert_eq!(&oscar[column("status")], "refused");
    let feedback = std::fs::read_to_string(class.path().join("feedback/oscar/feedback.md"))
        .expect("oscar's feedback");
    assert!(
        feedback.contains("`src/weights.rs` is 64.0 GiB"),
        "{feedback}"
    );
    // Peggy's FIFO beside the sources is not read; her template sources are graded (0).
    let peggy = row("peggy");
    assert_eq!(&peggy[column("status")], "graded");
    assert_eq!(&peggy[column("total")], "0");
}
