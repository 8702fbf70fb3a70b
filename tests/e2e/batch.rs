//! End-to-end: `grader batch` grades a class of 23 submissions made outside this checkout
//! (solutions, the template, an independent solution, faulty copies, one that does not
//! compile, one that hangs, one whose student replaced the grade test, one with `#[no_mangle]`,
//! one that is not a crate, two hostile ones that attack the grader, the other submissions
//! and the machine), writes the gradebook, the feedback and results.json, and the class report
//! (opened in headless Chromium, its numbers read back and compared with the gradebook's),
//! resumes after being killed, and runs as a Slurm array whose tasks are executed here without
//! Slurm.

use gpu_labs_e2e::{edited_copy, grader_bin, solution, workspace};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One submission of the test class and what the official grade must be.
struct Student {
    name: &'static str,
    /// Items that must lose points (speed items are left out unless named: their points
    /// depend on this machine).
    lost: &'static [&'static str],
    /// The gradebook's status cell, or its start.
    status: &'static str,
    /// Text its feedback.md must contain.
    says: &'static str,
}

const SPEED_ITEMS: [&str; 2] = ["fast_speedup", "gpu_speedup"];

/// Every item of the matmul rubric except the GPU speedups (skipped without a real GPU).
const ALL: &[&str] = &[
    "naive_correct",
    "fast_correct",
    "time_cpu",
    "fast_speedup",
    "gpu_correct",
    "gpu_tiled_correct",
    "cublas_correct",
    "gpu_timer_sync",
    "default_device",
    "benchmark",
    "batched_correct",
    "gpu_batched_correct",
    "gpu_batched_timer_sync",
];

/// Copies the solution (or the template) to `dir/name` with `edits` made in `file`.
fn submission(dir: &Path, name: &str, from: &Path, file: &str, edits: &[(&str, &str)]) {
    edited_copy(from, &dir.join(name), file, edits);
}

/// Makes the class in `dir` and returns what each student must get.
fn make_class(dir: &Path) -> Vec<Student> {
    let sol = solution();
    let template = workspace().join("templates/matmul");
    let lib = "src/lib.rs";
    let gpu = "src/gpu.rs";
    submission(dir, "alice", &sol, lib, &[]);
    submission(dir, "bob", &template, lib, &[]);
    // An independent correct submission: the fixture's sources in the solution's crate.
    submission(dir, "carol", &sol, lib, &[]);
    gpu_labs_e2e::use_alternative_matmul_sources(&dir.join("carol"));
    submission(
        dir,
        "dan",
        &sol,
        lib,
        &[("c[[i, j]] = sum;", "c[[j, i]] = sum;")],
    );
    submission(
        dir,
        "erin",
        &sol,
        lib,
        &[("let mut sum = 0.0f32;", "let mut sum = f32::NAN;")],
    );
    submission(
        dir,
        "frank",
        &sol,
        lib,
        &[(
            "let value = work();\n    (value, start.elapsed())",
            "let took = start.elapsed();\n    let value = work();\n    (value, took)",
        )],
    );
    submission(
        dir,
        "grace",
        &sol,
        gpu,
        &[(
            "    if (row < m && col < n) {\n        float sum = 0.0f;",
            "    {\n        float sum = 0.0f;",
        )],
    );
    submission(
        dir,
        "heidi",
        &sol,
        gpu,
        &[(
            "grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),",
            "grid_dim: ((n / 16).max(1) as u32, (m / 16).max(1) as u32, 1),",
        )],
    );
    submission(
        dir,
        "ivan",
        &sol,
        gpu,
        &[(
            "    unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }",
            "    unsafe { blas.gemm(config, &a_dev, &b_dev, &mut c_dev) }",
        )],
    );
    submission(
        dir,
        "judy",
        &sol,
        gpu,
        &[(
            "stream.synchronize()?;\n    let start = Instant::now();",
            "let start = Instant::now();",
        )],
    );
    submission(
        dir,
        "ken",
        &sol,
        lib,
        &[("let mut sum = 0.0f32;", "let mut sum = 0.0f32 +;")],
    );
    submission(
        dir,
        "leo",
        &sol,
        lib,
        &[(
            "let value = work();",
            "let value = work();\n    loop { std::hint::spin_loop() }\n    #[allow(unreachable_code)]",
        )],
    );
    // The grade test replaced by one that always passes, on the template.
    submission(dir, "mallory", &template, lib, &[]);
    std::fs::write(
        dir.join("mallory/tests/grade.rs"),
        "fn main() { println!(\"test result: ok. 11 passed\"); }\n",
    )
    .expect("write the fake grade test");
    // A dependency the lab does not list, unused: the grade stands, with a note.
    submission(
        dir,
        "nick",
        &sol,
        "Cargo.toml",
        &[("rayon = \"1.12\"", "rayon = \"1.12\"\nitoa = \"1\"")],
    );
    // A dependency the lab does not list, used: it does not compile officially.
    submission(
        dir,
        "olivia",
        &sol,
        "Cargo.toml",
        &[("rayon = \"1.12\"", "rayon = \"1.12\"\nitoa = \"1\"")],
    );
    let olivia_lib = dir.join("olivia/src/lib.rs");
    let text = std::fs::read_to_string(&olivia_lib).expect("lib.rs");
    std::fs::write(
        &olivia_lib,
        format!("{text}\npub fn digits() -> usize {{ itoa::Buffer::new().format(7u8).len() }}\n"),
    )
    .expect("write lib.rs");
    submission(
        dir,
        "peggy",
        &sol,
        lib,
        &[(
            "let value = work();",
            "let value = work();\n    std::process::exit(0);\n    #[allow(unreachable_code)]",
        )],
    );
    std::fs::create_dir_all(dir.join("quentin")).expect("mkdir");
    std::fs::write(dir.join("quentin/README.md"), "I did it in Python\n").expect("write");
    submission(
        dir,
        "rupert",
        &sol,
        lib,
        &[(
            "let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());\n    let mut c = Array2::zeros((m, n));",
            "let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());\n    if k == 17 { panic!(\"seventeen is unlucky\") }\n    let mut c = Array2::zeros((m, n));",
        )],
    );
    submission(dir, "sybil", &sol, lib, &[]);
    submission(
        dir,
        "trent",
        &sol,
        lib,
        &[(
            "c.par_chunks_mut(ROWS * n)",
            "c.par_chunks_exact_mut(ROWS * n)",
        )],
    );
    // Code that would run outside the graded functions: refused before it is built. Its folder's
    // name is markup, which the class report must show as text.
    submission(dir, URSULA, &sol, lib, &[(
        "use rayon::prelude::*;",
        "use rayon::prelude::*;\n    #[unsafe(no_mangle)]\n    extern \"C\" fn clock_gettime() -> i32 { 0 }",
    )]);
    // Hostile: tries to rewrite the gradebook and another student's feedback, to plant files
    // in the emulator's shared caches, and to kill the grader; reports what it managed.
    let naive = "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n";
    let class = dir.parent().unwrap_or(dir).display().to_string();
    let cache = workspace()
        .join("target/grader-cache")
        .display()
        .to_string();
    let victor = VICTOR.replace("CLASS", &class).replace("CACHE", &cache);
    submission(
        dir,
        "victor",
        &sol,
        lib,
        &[(naive, &format!("{naive}{victor}"))],
    );
    // Hostile: starts processes without end.
    submission(
        dir,
        "walter",
        &sol,
        lib,
        &[(naive, &format!("{naive}{WALTER}"))],
    );
    let s = |name, lost, status, says| Student {
        name,
        lost,
        status,
        says,
    };
    vec![
        s("alice", &[], "graded", "Score: 32/32"),
        s("bob", ALL, "graded", "not implemented yet"),
        s("carol", &[], "graded", "Score: 32/32"),
        s("dan", &["naive_correct"], "graded", "transposed"),
        s("erin", &["naive_correct"], "graded", "NaN"),
        s("frank", &["time_cpu"], "graded", "time_cpu"),
        s(
            "grace",
            &["gpu_correct"],
            "graded",
            "if (row < m && col < n)",
        ),
        s(
            "heidi",
            &["gpu_correct", "gpu_tiled_correct"],
            "graded",
            "gpu_tiled_correct",
        ),
        s("ivan", &["cublas_correct"], "graded", "cublas_correct"),
        s(
            "judy",
            &["gpu_timer_sync"],
            "graded",
            "started before earlier GPU work finished",
        ),
        s("ken", ALL, "not-compiled", "did not compile"),
        s("leo", &["time_cpu"], "timed-out", "did not finish within"),
        s(
            "mallory",
            ALL,
            "graded",
            "Your tests/grade.rs differs from the lab's",
        ),
        s("nick", &[], "graded", "adds the dependency `itoa`"),
        s(
            "olivia",
            ALL,
            "not-compiled",
            "`itoa` is not one of this lab's dependencies",
        ),
        s("peggy", &["time_cpu"], "graded", "std::process::exit"),
        s("quentin", &[], "error: ", "could not be graded"),
        s("rupert", &["naive_correct"], "graded", "panicked"),
        s("sybil", &[], "graded", "Score: 32/32"),
        s("trent", &["fast_correct"], "graded", "fast_correct"),
        s("victor", &["naive_correct"], "graded", "victor did: []"),
        s("walter", &["naive_correct"], "graded", "fork refused after"),
        s(
            URSULA,
            ALL,
            "refused",
            "`#[no_mangle]` is not allowed in a lab",
        ),
    ]
}

/// The refused submission's folder name: an element with a script, were it ever markup.
const URSULA: &str = "ursula<img src=x onerror=document.body.dataset.pwned=1>";

/// What the hostile `victor` runs first in `matmul_naive`, with CLASS (the instructor's
/// folder) and CACHE (the grader's build and emulator cache) put in: the paths are known to it,
/// as a student who guessed them would know them.
const VICTOR: &str = r#"    let mut did: Vec<&str> = Vec::new();
    let class = std::path::Path::new("CLASS");
    let cache = std::path::Path::new("CACHE");
    if std::fs::write(class.join("grades.csv"), "victor,100\n").is_ok() { did.push("rewrote the gradebook"); }
    let alice = class.join("feedback/alice");
    if std::fs::create_dir_all(&alice).is_ok() && std::fs::write(alice.join("feedback.md"), "Score: 0/25").is_ok() { did.push("rewrote alice's feedback"); }
    let poison = cache.join("kernels/0123456789abcdef0123456789abcdef");
    if std::fs::create_dir_all(&poison).is_ok() && std::fs::write(poison.join("kernels.so"), "x").is_ok() { did.push("planted a kernel in the shared cache"); }
    if std::fs::write(cache.join("emulator/planted"), "x").is_ok() { did.push("planted a file beside the emulator"); }
    let parent = std::os::unix::process::parent_id();
    if std::process::Command::new("kill").args(["-9", &parent.to_string()]).status().map(|s| s.success()).unwrap_or(false) { did.push("killed the grader"); }
    panic!("victor did: {did:?}");
"#;

/// What the hostile `walter` runs first in `matmul_naive`.
const WALTER: &str = r#"    let mut kids = Vec::new();
    while kids.len() < 700 {
        match std::process::Command::new("sleep").arg("654.25").spawn() {
            Ok(k) => kids.push(k),
            Err(e) => panic!("fork refused after {} processes: {e}", kids.len()),
        }
    }
    panic!("{} processes started", kids.len());
"#;

/// Runs the grader with this workspace's shared build cache.
fn grader(args: &[&str], cwd: &Path) -> Output {
    Command::new(grader_bin())
        .args(args)
        .current_dir(cwd)
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
        .output()
        .expect("grader runs")
}

/// The gradebook as student → (column → cell).
fn gradebook(path: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).expect("the gradebook");
    let header: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(String::from)
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.expect("a CSV row");
            let row: BTreeMap<String, String> = header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect();
            (row["student"].clone(), row)
        })
        .collect()
}

fn check_student(student: &Student, row: &BTreeMap<String, String>, feedback: &Path) {
    let name = student.name;
    let status = &row["status"];
    assert!(
        status.starts_with(student.status),
        "{name}: status {status}, expected {}",
        student.status
    );
    let text = std::fs::read_to_string(feedback.join(name).join("feedback.md"))
        .unwrap_or_else(|_| panic!("{name} has a feedback.md"));
    assert!(
        text.contains(student.says),
        "{name}'s feedback should say {:?}:\n{text}",
        student.says
    );
    // The speed chart lies beside the feedback that links it, and only then; a graded
    // submission whose speed was timed has one.
    let chart = feedback.join(name).join("chart.svg");
    assert_eq!(
        text.contains("](chart.svg)"),
        chart.is_file(),
        "{name}: the link and the file go together:\n{text}"
    );
    if student.status.starts_with("graded") && !student.lost.contains(&"fast_speedup") {
        assert!(chart.is_file(), "{name} has a speed chart:\n{text}");
    }
    let results: Value = serde_json::from_slice(
        &std::fs::read(feedback.join(name).join("results.json")).expect("results.json"),
    )
    .expect("results.json is JSON");
    if student.status.starts_with("error") {
        assert_eq!(results["score"].as_f64(), Some(0.0), "{name}");
        return;
    }
    let mut lost = Vec::new();
    for id in ALL {
        let max = results["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["extra_data"]["item"] == *id))
            .and_then(|t| t["max_score"].as_f64())
            .unwrap_or_else(|| panic!("{name}: no {id} in results.json"));
        let cell: f64 = row[*id]
            .parse()
            .unwrap_or_else(|_| panic!("{name}: {id} = {:?}", row[*id]));
        let json_score = results["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["extra_data"]["item"] == *id))
            .and_then(|t| t["score"].as_f64());
        assert_eq!(
            json_score,
            Some(cell),
            "{name}: {id} differs between CSV and JSON"
        );
        if cell < max && (student.lost.contains(id) || !SPEED_ITEMS.contains(id)) {
            lost.push(*id);
        }
    }
    assert_eq!(lost, student.lost, "{name}: lost items\n{text}");
    assert_eq!(
        row["gpu_speedup"], "",
        "{name}: the skipped GPU speedup has no score"
    );
    assert_eq!(row["max"], "32", "{name}");
    let total: f64 = row["total"].parse().expect("a total");
    assert_eq!(Some(total), results["score"].as_f64(), "{name}");
}

/// `%XX` in a URL's path made bytes again.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Opens the class report beside the gradebook `class/grades.csv` in headless Chromium and
/// checks what it shows against the gradebook `book`: it renders with no console message and
/// every section; each student's total, max and status, each item's pass rate and the
/// histogram's counts are the gradebook's; each feedback link opens that student's file; the
/// submissions not `graded` are flagged with a reason; the builds of `built` students (and no
/// other) are timed; a student's name shows as text, never as markup. When `png` is set (by
/// `GPU_LABS_CLASS_REPORT_PNG`), a screenshot of the page goes there.
fn check_class_report(
    class: &Path,
    book: &BTreeMap<String, BTreeMap<String, String>>,
    built: &[&str],
) {
    use gpu_labs_e2e::browser::{self, elements};
    let Some(chromium) = browser::chromium_or_skip() else {
        return;
    };
    let page = class.join("grades.html");
    assert!(page.is_file(), "the class report is beside the gradebook");
    let started = std::time::Instant::now();
    let shown = browser::dump_dom(&chromium, &page);
    eprintln!(
        "chromium opened the class report in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let dom = &shown.dom;
    assert!(
        shown.console.is_empty(),
        "the page logs to the console: {:?}",
        shown.console
    );
    for id in [
        "histogram",
        "pass-rates",
        "speedups",
        "flagged",
        "builds",
        "students",
    ] {
        assert!(
            dom.contains(&format!("<section id=\"{id}\">")),
            "no section {id}:\n{dom}"
        );
    }
    assert!(elements(dom, "svg").len() >= 3, "the charts are drawn");
    for markup in ["<img", "<script", "<iframe", "data-pwned"] {
        assert!(!dom.contains(markup), "{markup} in the page:\n{dom}");
    }
    let rows = elements(dom, "tr");
    let with = |attr: &'static str| rows.iter().filter(move |r| r.attributes.contains_key(attr));

    // Every student, with the gradebook's cells and a link to their own feedback.
    let students: Vec<_> = with("data-total").collect();
    let links: Vec<_> = elements(dom, "a")
        .into_iter()
        .filter(|a| a.attributes.get("class").is_some_and(|c| c == "feedback"))
        .collect();
    assert_eq!(students.len(), book.len(), "one line per student");
    assert_eq!(links.len(), book.len(), "one feedback link per student");
    for (line, link) in students.iter().zip(&links) {
        let name = line.attr("data-student");
        let row = book
            .get(name)
            .unwrap_or_else(|| panic!("{name:?} is on the page, not in the gradebook"));
        assert_eq!(line.attr("data-total"), row["total"], "{name}'s total");
        assert_eq!(line.attr("data-max"), row["max"], "{name}'s max");
        assert_eq!(line.attr("data-status"), row["status"], "{name}'s status");
        assert!(
            line.text
                .starts_with(&format!("{name} {} {}", row["total"], row["max"]).replace("  ", " ")),
            "{name}'s line shows {:?}",
            line.text
        );
        let href = percent_decoded(link.attr("href"));
        assert!(
            !href.starts_with('/') && !href.contains("://"),
            "{href} is relative"
        );
        let target = class.join(&href);
        assert!(
            target.is_file() && target.ends_with(Path::new(name).join("feedback.md")),
            "{name}'s link {href} opens no feedback of theirs"
        );
    }

    // Each item's pass rate: full points, of the students with a cell for it.
    let rubric = grader::rubric::embedded("matmul").expect("the matmul rubric");
    for item in &rubric.items {
        let id = item.id();
        let cells: Vec<f64> = book
            .values()
            .filter_map(|row| row[id].parse().ok())
            .collect();
        let passed = cells.iter().filter(|c| **c == item.points).count();
        let line = with("data-passed")
            .find(|r| r.attr("data-item") == id)
            .unwrap_or_else(|| panic!("no pass rate for {id}"));
        assert_eq!(line.attr("data-graded"), cells.len().to_string(), "{id}");
        assert_eq!(line.attr("data-passed"), passed.to_string(), "{id}");
        if !cells.is_empty() {
            let percent = (100.0 * passed as f64 / cells.len() as f64).round();
            assert_eq!(line.attr("data-percent"), percent.to_string(), "{id}");
            assert!(
                line.text.ends_with(&format!("{percent}%")),
                "{id}: {}",
                line.text
            );
        }
    }

    // The histogram's bars count the gradebook's totals.
    let totals: Vec<f64> = book
        .values()
        .filter_map(|row| row["total"].parse().ok())
        .collect();
    let bins: Vec<_> = with("data-count").collect();
    assert!(!bins.is_empty(), "a histogram");
    let mut counted = 0;
    for bin in &bins {
        let lo: f64 = bin.attr("data-lo").parse().expect("a number");
        let hi: f64 = bin.attr("data-hi").parse().expect("a number");
        let count = totals.iter().filter(|t| lo <= **t && **t < hi).count();
        assert_eq!(bin.attr("data-count"), count.to_string(), "[{lo}, {hi})");
        assert!(bin.text.ends_with(&count.to_string()), "{}", bin.text);
        counted += count;
    }
    assert_eq!(counted, totals.len(), "every total is in one bar");

    // Every submission not plainly graded is flagged, and says why.
    let flagged: BTreeMap<&str, _> = with("data-outcome")
        .map(|r| (r.attr("data-student"), r))
        .collect();
    for (name, row) in book {
        if row["status"] == "graded" {
            continue;
        }
        let line = flagged
            .get(name.as_str())
            .unwrap_or_else(|| panic!("{name} ({}) is not flagged", row["status"]));
        assert!(
            row["status"].starts_with(line.attr("data-outcome")),
            "{name}"
        );
        assert!(
            line.text.len() > name.len() + line.attr("data-outcome").len() + 2,
            "{name} is flagged without a reason: {:?}",
            line.text
        );
    }

    // The builds, slowest first: only the built students' builds are timed.
    let builds: Vec<_> = with("data-build-seconds").collect();
    let timed = elements(dom, "table")
        .into_iter()
        .find_map(|t| t.attributes.get("data-timed").cloned())
        .expect("the builds' table");
    assert_eq!(timed, built.len().to_string(), "timed builds");
    assert_eq!(builds.len(), built.len().min(10));
    let seconds: Vec<f64> = builds
        .iter()
        .map(|b| b.attr("data-build-seconds").parse().expect("seconds"))
        .collect();
    assert!(seconds.windows(2).all(|w| w[0] >= w[1]), "{seconds:?}");
    assert!(seconds.iter().all(|s| *s > 0.0), "{seconds:?}");
    for b in &builds {
        assert!(
            built.contains(&b.attr("data-student")),
            "{:?}",
            b.attributes
        );
    }

    // The speedups measured are the students' own, each once.
    for line in with("data-speedup") {
        assert!(book.contains_key(line.attr("data-student")));
        let speedup: f64 = line.attr("data-speedup").parse().expect("a speedup");
        assert!(speedup > 0.0);
    }
    if let Some(png) = std::env::var_os("GPU_LABS_CLASS_REPORT_PNG") {
        browser::screenshot(&chromium, &page, Path::new(&png), (1200, 1600));
    }
}

/// The default suite's batch: three submissions (full marks, one fault, one that does not
/// compile) graded in one `grader batch`, each checked in the gradebook, results.json and
/// feedback as in the full suite's class of twenty.
#[test]
fn a_class_of_three_is_graded_with_its_gradebook_and_feedback() {
    // Alice, Dan and Ken, with these very expectations, are in the class of twenty.
    if gpu_labs_e2e::skip_in_full("batch::a_class_of_twenty_is_graded_resumed_and_explained") {
        return;
    }
    let class = tempfile::Builder::new()
        .prefix("class-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    let sol = solution();
    submission(&subs, "alice", &sol, "src/lib.rs", &[]);
    submission(
        &subs,
        "dan",
        &sol,
        "src/lib.rs",
        &[("c[[i, j]] = sum;", "c[[j, i]] = sum;")],
    );
    submission(
        &subs,
        "ken",
        &sol,
        "src/lib.rs",
        &[("let mut sum = 0.0f32;", "let mut sum = 0.0f32 +;")],
    );
    let out = grader(
        &[
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--gpu",
            "emulate",
            "--seed",
            "7",
        ],
        class.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = gradebook(&class.path().join("grades.csv"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    let students = [
        Student {
            name: "alice",
            lost: &[],
            status: "graded",
            says: "Score: 32/32",
        },
        Student {
            name: "dan",
            lost: &["naive_correct"],
            status: "graded",
            says: "transposed",
        },
        Student {
            name: "ken",
            lost: ALL,
            status: "not-compiled",
            says: "did not compile",
        },
    ];
    for student in &students {
        check_student(student, &rows[student.name], &class.path().join("feedback"));
    }
    check_class_report(class.path(), &rows, &["alice", "dan", "ken"]);
}

#[test]
fn a_class_of_twenty_is_graded_resumed_and_explained() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let class = tempfile::Builder::new()
        .prefix("class-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    let students = make_class(&subs);
    assert_eq!(students.len(), 23);
    let feedback = class.path().join("feedback");
    let csv = class.path().join("grades.csv");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--gpu",
            "emulate",
            "--seed",
            "2024",
            "--jobs",
            "2",
        ];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };

    // Interrupted: killed once three students are done.
    let mut child = Command::new(grader_bin())
        .args(args(&[]))
        .current_dir(class.path())
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("grader starts");
    let records = || -> Vec<PathBuf> {
        std::fs::read_dir(&feedback)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path().join("record.json"))
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default()
    };
    let started = std::time::Instant::now();
    while records().len() < 3 && started.elapsed().as_secs() < 600 {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    child.kill().expect("kill the batch");
    let _ = child.wait();
    let done_before: BTreeMap<PathBuf, String> = records()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a finished record");
            (p, text)
        })
        .collect();
    assert!(
        done_before.len() >= 3,
        "three students were done before the kill"
    );

    // Resumed: the finished records are kept as they are, the rest graded.
    let started = std::time::Instant::now();
    let out = Command::new(grader_bin())
        .args(args(&[]))
        .current_dir(class.path())
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
        .output()
        .expect("grader runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // quentin's folder is not a crate: the batch grades everyone else and then fails on him.
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("error: could not grade 1 of the submissions: quentin"),
        "{stderr}"
    );
    eprintln!(
        "resumed batch of {} took {:.0} s:\n{stdout}",
        23 - done_before.len(),
        started.elapsed().as_secs_f64()
    );
    for (path, text) in &done_before {
        assert_eq!(
            &std::fs::read_to_string(path).expect("record"),
            text,
            "{} was graded again",
            path.display()
        );
    }
    assert!(stdout.contains("23 submissions:"), "{stdout}");
    assert!(
        stdout.contains("1 did not compile") || stdout.contains("2 did not compile"),
        "{stdout}"
    );

    let book = gradebook(&csv);
    assert_eq!(book.len(), 23, "one row per student");
    for student in &students {
        check_student(student, &book[student.name], &feedback);
    }
    assert_eq!(book["alice"]["seed"], "2024");
    // The class report: everyone built but the refused one and the folder that is no crate.
    let built: Vec<&str> = students
        .iter()
        .map(|s| s.name)
        .filter(|name| ![URSULA, "quentin"].contains(name))
        .collect();
    check_class_report(class.path(), &book, &built);
    // The hostile ones changed nothing outside their own scratch folders and left nothing.
    let cache = workspace().join("target").join("grader-cache");
    assert!(!cache
        .join("kernels/0123456789abcdef0123456789abcdef")
        .exists());
    assert!(!cache.join("emulator/planted").exists());
    let sleeping = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("654.25"))
        })
        .count();
    assert_eq!(sleeping, 0, "every process walter started ended");
    assert!(book["alice"]["graded_at"].ends_with('Z'));

    // Unchanged: nothing is graded again; a changed submission is.
    let dan_lib = subs.join("dan/src/lib.rs");
    let fixed = std::fs::read_to_string(&dan_lib)
        .expect("lib.rs")
        .replace("c[[j, i]] = sum;", "c[[i, j]] = sum;");
    std::fs::write(&dan_lib, fixed).expect("fix dan");
    let again = grader(
        &args(&[]).iter().map(String::as_str).collect::<Vec<_>>(),
        class.path(),
    );
    let again_out = String::from_utf8_lossy(&again.stdout);
    // dan changed; quentin, who could not be graded, is always tried again.
    assert!(
        again_out.contains("2 graded now, 21 unchanged"),
        "{again_out}"
    );
    let book = gradebook(&csv);
    assert_eq!(book["dan"]["naive_correct"], "3", "dan's fix counts");
}

#[test]
fn a_slurm_array_grades_each_submission_in_its_own_task_and_collect_writes_the_gradebook() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let class = tempfile::Builder::new()
        .prefix("slurm-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    let sol = solution();
    submission(&subs, "alice", &sol, "src/lib.rs", &[]);
    submission(
        &subs,
        "ken",
        &sol,
        "src/lib.rs",
        &[("let mut sum = 0.0f32;", "let mut sum = 0.0f32 +;")],
    );
    std::fs::create_dir_all(subs.join("quentin")).expect("mkdir");
    let wrote = grader(
        &[
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--gpu",
            "off",
            "--seed",
            "5",
            "--slurm",
            "--partition",
            "gpu",
            "--gres",
            "gpu:1",
        ],
        class.path(),
    );
    assert_eq!(
        wrote.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&wrote.stderr)
    );
    let script = class.path().join("feedback/slurm/grade.sbatch");
    let text = std::fs::read_to_string(&script).expect("the sbatch script");
    assert!(text.contains("#SBATCH --array=0-2"), "{text}");
    assert!(text.contains("#SBATCH --gres=\"gpu:1\""), "{text}");
    assert!(
        !class.path().join("grades.csv").exists(),
        "--slurm grades nothing itself"
    );
    // What Slurm would do: run each array task.
    for task in 0..3 {
        let out = Command::new("bash")
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env(
                "GPU_LABS_CACHE",
                workspace().join("target").join("grader-cache"),
            )
            .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
            .output()
            .expect("bash runs the task");
        // A task fails when its submission could not be graded (quentin's is not a crate),
        // not when it earns a low grade (ken's does not compile).
        assert_eq!(
            out.status.code(),
            Some(if task == 2 { 2 } else { 0 }),
            "task {task}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        !class.path().join("grades.csv").exists(),
        "tasks write no gradebook"
    );
    let collected = grader(
        &[
            "collect",
            "feedback",
            "--assignment",
            "matmul",
            "--out",
            "grades.csv",
        ],
        class.path(),
    );
    let stdout = String::from_utf8_lossy(&collected.stdout);
    assert_eq!(collected.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "3 submissions: 1 graded, 1 did not compile, 0 refused, 0 timed out, 1 could not be graded"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("class report: grades.html") && class.path().join("grades.html").is_file(),
        "collect writes the class report beside the gradebook: {stdout}"
    );
    let book = gradebook(&class.path().join("grades.csv"));
    assert_eq!(book["alice"]["total"], "16");
    assert_eq!(book["ken"]["total"], "0");
    assert!(
        book["quentin"]["status"].starts_with("error: "),
        "{:?}",
        book["quentin"]
    );
}

/// Writes the 20-submission class into `$GPU_LABS_CLASS_DIR`, for timing `grader batch` by
/// hand (`--jobs 1` against `--jobs 2`, a cold cache against a warm one).
#[test]
#[ignore = "makes the class for a measurement by hand: GPU_LABS_CLASS_DIR=DIR cargo test --test e2e batch:: -- --ignored"]
fn write_the_class_for_a_measurement() {
    let dir = std::env::var_os("GPU_LABS_CLASS_DIR").expect("GPU_LABS_CLASS_DIR names a folder");
    assert_eq!(make_class(Path::new(&dir)).len(), 23);
}

#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    // `grader collect … | head`: the reader is gone before the grader writes its summary.
    let class = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(class.path().join("feedback")).expect("mkdir");
    let commands: [&[&str]; 2] = [
        &["collect", "feedback", "--assignment", "matmul"],
        &["classroom", "matmul"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = Command::new(grader_bin())
            .args(args)
            .current_dir(class.path())
            .stdout(writer)
            .output()
            .expect("grader runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(
        class.path().join("grades.csv").is_file(),
        "collect still wrote the gradebook"
    );
}
