//! End-to-end: submissions that attack the official build itself (issue 33, classes 7–9),
//! each beside an honest control that keeps full marks.
//!
//! - A warnings flood (a 900 kB deprecation note used 600 times): the grader reads cargo's
//!   output with a bound (its own peak memory stays under 200 MiB) and nothing of the flood is
//!   left in the shared build cache.
//! - A build that never ends (a constant evaluated without end) in `grader batch --jobs 2`
//!   beside two honest copies: the honest ones are graded while it still compiles.
//! - A build that reads a root-only file with `include_bytes!`: refused with a clear message
//!   (the build runs as the workers' unprivileged identity, and Landlock), the file's content
//!   in no output.
//! - A build that needs more memory than a worker has (a 6 GiB static): refused at once, in
//!   plain words.

use gpu_labs_e2e::{copy_crate, grader_bin, solution, workspace};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// These tests run one at a time: they measure memory, time and speedups.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The shared build cache every end-to-end grading uses.
fn cache() -> PathBuf {
    workspace().join("target").join("grader-cache")
}

/// The solution's `src/lib.rs` with `code` added before its `matmul_naive` and `first`
/// added as the first statement of its body.
fn solution_with(to: &Path, code: &str, first: &str) {
    copy_crate(&solution(), to);
    let lib = to.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("lib.rs");
    let naive = "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n";
    assert_eq!(
        text.matches(naive).count(),
        1,
        "the solution's matmul_naive"
    );
    let text = text.replace(naive, &format!("{code}\n{naive}{first}\n"));
    std::fs::write(&lib, text).expect("write lib.rs");
}

/// `grader grade PATH --json FILE --gpu off` run while its peak memory (VmHWM) is read from
/// `/proc` until it ends: (peak KiB, stdout + stderr, results.json).
fn grade_measured(path: &Path) -> (u64, String, String) {
    let json = tempfile::NamedTempFile::new().expect("temp file");
    let mut child = std::process::Command::new(grader_bin())
        .arg("grade")
        .arg(path)
        .arg("--json")
        .arg(json.path())
        .args(["--gpu", "off"])
        .env("GPU_LABS_CACHE", cache())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("grader runs");
    let status = format!("/proc/{}/status", child.id());
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = read(out.map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let err = read(err.map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let mut peak = 0u64;
    loop {
        if let Some(kib) = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        }) {
            peak = peak.max(kib);
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    let results = std::fs::read_to_string(json.path()).unwrap_or_default();
    (peak, text, results)
}

/// The score and maximum in a results.json.
fn total(results: &str) -> (f64, f64) {
    let value: serde_json::Value = serde_json::from_str(results).unwrap_or_default();
    let tests = value["tests"].as_array().cloned().unwrap_or_default();
    let sum = |key: &str| tests.iter().filter_map(|t| t[key].as_f64()).sum();
    (sum("score"), sum("max_score"))
}

/// The grader's own peak memory while it grades one submission, whatever it prints.
const GRADER_MEMORY_KIB: u64 = 200 << 10;

#[test]
fn a_warnings_flood_is_read_with_a_bound_and_leaves_nothing_in_the_cache() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The honest control: the solution, its full marks and the grader's memory.
    let (honest_peak, text, results) = grade_measured(&solution());
    let (score, max) = total(&results);
    assert!(max > 0.0 && score == max, "{score}/{max}\n{text}");

    let marker = "FLOOD-7f3a9c";
    let note = marker.repeat(900_000 / marker.len());
    let uses: String = (0..600).map(|_| "    flooded();\n").collect();
    let dir = tempfile::tempdir().expect("temp dir");
    solution_with(
        dir.path(),
        &format!(
            "#[deprecated(note = \"{note}\")]\npub fn flooded() {{}}\n\
             #[allow(dead_code)]\nfn flood() {{\n{uses}}}\n"
        ),
        "",
    );
    let started = Instant::now();
    let (peak, text, results) = grade_measured(dir.path());
    let (score, max) = total(&results);
    eprintln!(
        "grader peak memory (VmHWM): {} MiB with the flood ({:.0} s, {score}/{max}), {} MiB \
         for the honest solution",
        peak >> 10,
        started.elapsed().as_secs_f64(),
        honest_peak >> 10
    );
    assert!(peak < GRADER_MEMORY_KIB, "{} MiB\n{text}", peak >> 10);
    // Graded either way: full marks (the flood is warnings only) or a build stopped for its
    // messages, said in plain words; never a failure of the grader.
    assert!(max > 0.0, "{text}");
    assert!(
        score == max || results.contains("the compiler's messages"),
        "{score}/{max}\n{text}"
    );
    assert!(!text.contains(marker) && !results.contains(marker));
    // Two markers in a row: any copy of the flood holds them, and this test's own source (which
    // the release tests' git checkouts in the same cache hold) does not.
    let left = gpu_labs_e2e::files_holding(&cache(), marker.repeat(2).as_bytes(), None);
    assert!(left.is_empty(), "the flood is left in the cache: {left:?}");
}

#[test]
fn a_build_that_never_ends_holds_no_classmate() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let class = tempfile::Builder::new()
        .prefix("spin-class-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    // First in the batch's order, so a job is on it from the start.
    solution_with(
        &subs.join("aaa-spinner"),
        "#[allow(long_running_const_eval)]\npub const SPIN: u64 = {\n    let mut i = 1u64;\n    \
         while i != 0 {\n        i = i.wrapping_mul(3);\n    }\n    i\n};",
        "",
    );
    copy_crate(&solution(), &subs.join("alice"));
    copy_crate(&solution(), &subs.join("bob"));
    // The spinner's build stops at 60 s here (4 minutes otherwise): alice and bob, graded
    // on the other job with the class's dependencies built, were done within 11 s.
    let wall = 60;
    let started = Instant::now();
    let out = std::process::Command::new(grader_bin())
        .args([
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--jobs",
            "2",
        ])
        .args(["--seed", "2024", "--gpu", "off"])
        .current_dir(class.path())
        .env("GPU_LABS_CACHE", cache())
        .env("GPU_LABS_BUILD_WALL_SECS", wall.to_string())
        .output()
        .expect("grader runs");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let feedback = class.path().join("feedback");
    let written = |name: &str| {
        std::fs::metadata(feedback.join(name).join("results.json"))
            .and_then(|m| m.modified())
            .unwrap_or_else(|e| panic!("{name}'s results: {e}"))
    };
    let spinner = written("aaa-spinner");
    for honest in ["alice", "bob"] {
        let results =
            std::fs::read_to_string(feedback.join(honest).join("results.json")).expect("results");
        let (score, max) = total(&results);
        assert!(max > 0.0 && score == max, "{honest}: {score}/{max}");
        let before = spinner
            .duration_since(written(honest))
            .unwrap_or_else(|_| panic!("{honest} was graded after the spinner's build ended"));
        eprintln!(
            "{honest} graded {:.0} s before the spinner's build was stopped",
            before.as_secs_f64()
        );
    }
    let gradebook = std::fs::read_to_string(class.path().join("grades.csv")).expect("grades");
    let row = gradebook
        .lines()
        .find(|l| l.starts_with("aaa-spinner,"))
        .expect("the spinner's row");
    assert!(row.contains("not-compiled"), "{row}");
    let said = std::fs::read_to_string(feedback.join("aaa-spinner/feedback.md")).expect("md");
    assert!(
        said.contains("did not finish within") || said.contains("the compiler was stopped"),
        "{said}"
    );
    eprintln!(
        "batch of 3 with a spinner: {:.0} s (the spinner's limit {wall} s)",
        took.as_secs_f64()
    );
}

/// A root-only file (0600, in a folder only root may enter) holding `secret`, in a new folder
/// under `parent`.
fn root_only_file(parent: &Path, secret: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("root-only-")
        .tempdir_in(parent)
        .expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("mode");
    let file = dir.path().join("key.pem");
    std::fs::write(&file, secret).expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("mode");
    (dir, file)
}

#[test]
fn a_build_cannot_read_a_root_only_file() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: a root-only file is out of the grader's own reach");
        return;
    }
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let secret = "ROOT-ONLY-5d1e0b";
    // In the temp dir (outside what Landlock lets a build read) and in /opt (which it may
    // read: only the build's unprivileged identity keeps it out).
    let places: Vec<PathBuf> = [std::env::temp_dir(), PathBuf::from("/opt")]
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    for place in places {
        let (_keep, file) = root_only_file(&place, secret);
        let dir = tempfile::tempdir().expect("temp dir");
        solution_with(
            dir.path(),
            &format!(
                "pub static KEY: &[u8] = include_bytes!({:?});",
                file.display().to_string()
            ),
            "    assert!(KEY.is_empty(), \"{}\", String::from_utf8_lossy(KEY));",
        );
        let g = gpu_labs_e2e::grade(dir.path(), &["--gpu", "off"]);
        let everything = format!("{}{}{}", g.stdout, g.stderr, g.json);
        assert!(
            !everything.contains(secret),
            "{}: {everything}",
            file.display()
        );
        assert_eq!(g.code, Some(0), "{}", g.stderr);
        let said = g.output("naive_correct");
        assert!(
            said.contains("outside the crate") && said.contains(&file.display().to_string()),
            "{}: {said}",
            file.display()
        );
        assert_eq!(g.score("naive_correct"), 0.0);
    }
    if !gpu_labs_e2e::full_suite() {
        eprintln!("the honest control (the solution's full marks) runs in the full suite");
        return;
    }
    // The honest control: the same crate without the read compiles and keeps full marks.
    let g = gpu_labs_e2e::grade(&solution(), &["--gpu", "off"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(g.lost().is_empty(), "{:?}\n{}", g.lost(), g.stdout);
}

#[test]
fn a_build_needing_more_than_a_workers_memory_is_refused_at_once() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    solution_with(
        dir.path(),
        "pub static BIG: [u8; 6 << 30] = [1; 6 << 30];",
        "    assert_eq!(BIG[7], 1);",
    );
    let started = Instant::now();
    let g = gpu_labs_e2e::grade(dir.path(), &["--gpu", "off"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    let said = g.output("naive_correct");
    assert!(
        said.contains("more memory than available") || said.contains("GiB of memory"),
        "{said}"
    );
    assert_eq!(g.score("naive_correct"), 0.0);
    eprintln!(
        "a 6 GiB static refused in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if !gpu_labs_e2e::full_suite() {
        eprintln!("the honest control (the solution's full marks) runs in the full suite");
        return;
    }
    let g = gpu_labs_e2e::grade(&solution(), &["--gpu", "off"]);
    assert!(g.lost().is_empty(), "{:?}\n{}", g.lost(), g.stdout);
}
