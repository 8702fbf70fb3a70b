//! End-to-end: hostile submissions against `grader grade`, each in a graded function of its
//! own (`matmul_naive`): it loses that item, with the reason in its feedback, every other item
//! is graded as usual, and nothing outside the worker's scratch folder changed.

use gpu_labs_e2e::{assert_lost, faulty_copy, grade_from, solution, Graded};

/// The solution with `code` run first in `matmul_naive`, graded from `instructor` (the
/// grader's working folder) with `home` as its home folder.
fn grade_hostile(code: &str, instructor: &std::path::Path, home: &std::path::Path) -> Graded {
    let dir = faulty_copy(
        &solution(),
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        &format!(
            "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n{code}\n"
        ),
    );
    let graded = grade_from(
        instructor,
        dir.path(),
        &["--gpu", "off"],
        &[("HOME", home.to_str().expect("utf-8 path"))],
    );
    assert_eq!(graded.code, Some(0), "grading completes: {}", graded.stderr);
    graded
}

fn folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let instructor = root.path().join("instructor");
    let home = root.path().join("home");
    std::fs::create_dir_all(&instructor).expect("mkdir");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    (root, instructor, home)
}

/// Lost only `matmul_naive`'s item, with `says` in its feedback, and named the sandbox.
fn only_naive_lost(g: &Graded, says: &str) {
    assert_lost(g, &["naive_correct"]);
    let out = g.output("naive_correct");
    assert!(out.contains(says), "{out}");
    assert!(
        g.stdout.contains("sandbox: filesystem: landlock") || g.stderr.contains("sandbox"),
        "the report names its protections: {}",
        g.stdout
    );
}

#[test]
fn a_submission_cannot_write_into_the_graders_folder() {
    let (_root, instructor, home) = folders();
    // It finds the grader's working folder through its parent's /proc entry.
    let g = grade_hostile(
        "    let parent = std::os::unix::process::parent_id();\n    let cwd = std::fs::read_link(format!(\"/proc/{parent}/cwd\")).unwrap_or_else(|_| std::path::PathBuf::from(\".\"));\n    std::fs::write(cwd.join(\"grades.csv\"), \"alice,100\").expect(\"escape\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "escape");
    assert!(
        std::fs::read_dir(&instructor).expect("ls").next().is_none(),
        "nothing was written into the grader's folder"
    );
}

#[test]
fn a_submission_cannot_read_the_instructors_files() {
    let (_root, instructor, home) = folders();
    std::fs::write(home.join(".ssh/id_ed25519"), "PLANTED-SECRET-7431").expect("plant");
    let g = grade_hostile(
        "    let key = std::fs::read_to_string(format!(\"{}/.ssh/id_ed25519\", std::env::var(\"HOME\").unwrap_or_default())).expect(\"steal\");\n    panic!(\"{key}\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "steal");
    assert!(
        !g.stdout.contains("PLANTED-SECRET") && !g.stderr.contains("PLANTED-SECRET"),
        "the secret never reaches the feedback"
    );
}

#[test]
fn a_submission_cannot_kill_the_grader() {
    let (_root, instructor, home) = folders();
    let g = grade_hostile(
        "    let parent = std::os::unix::process::parent_id();\n    let killed = std::process::Command::new(\"kill\").args([\"-9\", &parent.to_string()]).status().map(|s| s.success()).unwrap_or(false);\n    assert!(killed, \"the kill did not go through\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "the kill did not go through");
}

#[test]
fn a_submission_cannot_connect_to_the_network() {
    let (_root, instructor, home) = folders();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("port").port();
    let g = grade_hostile(
        &format!(
            "    std::net::TcpStream::connect((\"127.0.0.1\", {port})).expect(\"exfiltrate\");"
        ),
        &instructor,
        &home,
    );
    only_naive_lost(&g, "exfiltrate");
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
}

#[test]
fn grading_unsandboxed_is_said_in_the_report() {
    let (_root, instructor, _home) = folders();
    let g = grade_from(
        &instructor,
        &solution(),
        &["--gpu", "off", "--unsandboxed"],
        &[],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(g.stdout.contains("sandbox: not sandboxed"), "{}", g.stdout);
}
