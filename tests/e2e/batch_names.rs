//! End-to-end: `grader batch` over a class whose folder names are hostile or merely odd (a
//! spreadsheet formula, a line break with a right-to-left mark, bytes that are not UTF-8, a
//! leading dash, a very long name, names that differ only in case or in Unicode
//! normalization): every folder has its gradebook row, shown escaped, with a status that says
//! why when it could not be graded; two of them hold the reference solution (one with a
//! dependency whose name carries an escape sequence, `<!--` and backticks) and keep their
//! points; no output holds a raw control character, and no feedback opens an HTML comment or
//! tag outside code. A second run resumes: the graded two are kept, every row is still there.

use gpu_labs_e2e::{edited_copy, grader_bin, solution, workspace};
use grader::report::escape;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Output};

/// The solution, under a folder name a spreadsheet would run as a formula.
const FORMULA: &str = "=HYPERLINK(\"evil.example\",\"y\")";
/// The solution with a hostile dependency, under a name with a line break and a
/// right-to-left override.
const BIDI: &str = "line\nbreak\u{202e}kcatta";
/// The dependency name: an escape sequence, an HTML comment, a backtick run, a link.
const DEPENDENCY: &str = "evil\\u001b[31m``<!-- [x](https://evil.example) $$";

/// Items whose points depend on this machine's speed, not on the name.
const SPEED_ITEMS: [&str; 2] = ["fast_speedup", "gpu_speedup"];

/// Folders that are not crates: each must still get a row that says why.
fn odd_folders() -> Vec<OsString> {
    let mut names: Vec<OsString> = [
        "+cmd|' -C calc'!A0",
        "-rf",
        "@SUM(A1)",
        "Alice",
        "alice",
        "Jos\u{e9}",
        "Jose\u{301}",
        "<!-- hidden",
        "\u{1b}[2Jclear",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    names.push(OsString::from_vec(b"not\xffutf8".to_vec()));
    names.push(OsString::from("y".repeat(250)));
    names
}

/// How the gradebook shows a folder's name (the folder name as the grader reads it).
fn shown(name: &str) -> String {
    escape::spreadsheet(&escape::name(name)).into_owned()
}

fn make_class(dir: &Path) {
    edited_copy(&solution(), &dir.join(FORMULA), "src/lib.rs", &[]);
    edited_copy(
        &solution(),
        &dir.join(BIDI),
        "Cargo.toml",
        &[(
            "rayon = \"1.12\"",
            &format!("rayon = \"1.12\"\n\"{DEPENDENCY}\" = \"1\""),
        )],
    );
    for name in odd_folders() {
        let folder = dir.join(&name);
        std::fs::create_dir_all(&folder).expect("mkdir");
        std::fs::write(folder.join("README.md"), "not a crate\n").expect("write");
    }
}

fn batch(class: &Path) -> Output {
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
            // One build at a time: builds have a wall limit, and this machine may be busy.
            "--jobs",
            "1",
        ])
        .current_dir(class)
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .output()
        .expect("grader runs")
}

/// The gradebook as its student cell → (column → cell), and its raw text.
fn gradebook(path: &Path) -> (String, BTreeMap<String, BTreeMap<String, String>>) {
    let text = std::fs::read_to_string(path).expect("the gradebook");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
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
        .collect();
    (text, rows)
}

/// No character that acts on a terminal or reorders text: escape, carriage return, other
/// controls, bidirectional overrides. Line feeds and tabs are allowed (`lines` says where).
fn assert_inert(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| {
            (c.is_control() && *c != '\n' && *c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(bad.is_empty(), "{what} holds {bad:?}:\n{text}");
}

/// The lines of a Markdown file shown as text: outside fenced blocks, code spans removed
/// (a run of backticks up to the next run of exactly as many), backslash escapes dropped.
fn shown_as_text(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = None::<usize>;
    for line in markdown.lines() {
        let run = line.chars().take_while(|c| *c == '`').count();
        match inside {
            Some(n) if run >= n && line.trim_matches('`').is_empty() => inside = None,
            Some(_) => {}
            None if run >= 3 => inside = Some(run),
            None => out.push(without_code(line)),
        }
    }
    out
}

fn without_code(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let (mut out, mut i) = (String::new(), 0);
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '`' => {
                let run = run_at(i);
                let mut j = i + run;
                let mut end = None;
                while j < chars.len() {
                    let len = run_at(j);
                    if len == run {
                        end = Some(j + len);
                        break;
                    }
                    j += len.max(1);
                }
                match end {
                    Some(e) => i = e,
                    None => {
                        out.push_str(&"`".repeat(run));
                        i += run;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Each record's student → its feedback folder, read from the records themselves.
fn feedback_folders(feedback: &Path) -> BTreeMap<String, std::path::PathBuf> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(feedback).expect("the feedback folder") {
        let dir = entry.expect("entry").path();
        let Ok(bytes) = std::fs::read(dir.join("record.json")) else {
            continue;
        };
        let record: Value = serde_json::from_slice(&bytes).expect("a record");
        out.insert(record["student"].as_str().expect("a name").to_string(), dir);
    }
    out
}

#[test]
fn every_odd_name_has_its_row_and_every_report_is_inert() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let class = tempfile::Builder::new()
        .prefix("batch-names-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    make_class(&subs);
    // A tool's folder is not a student.
    std::fs::create_dir_all(subs.join(".git")).expect("mkdir");

    let out = batch(class.path());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // The folders that are not crates could not be graded: the batch says so and fails.
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("could not grade 11 of the submissions"),
        "{stdout}\n{stderr}"
    );
    assert_inert("the batch's output", &stdout);
    assert_inert("the batch's errors", &stderr);

    // Every folder has exactly one row, its name shown escaped and never as a formula.
    let mut names: Vec<String> = odd_folders()
        .iter()
        .map(|n| match n.to_str() {
            Some(s) => s.to_string(),
            None => "not\\xFFutf8".to_string(),
        })
        .collect();
    names.push(FORMULA.into());
    names.push(BIDI.into());
    let (text, book) = gradebook(&class.path().join("grades.csv"));
    assert_inert("the gradebook", &text);
    assert_eq!(
        text.lines().count(),
        names.len() + 1,
        "one line a row:\n{text}"
    );
    assert_eq!(book.len(), names.len(), "{text}");
    for name in &names {
        let row = book
            .get(&shown(name))
            .unwrap_or_else(|| panic!("{name:?} has no row (as {:?}):\n{text}", shown(name)));
        assert!(
            !row["student"].starts_with(['=', '+', '-', '@']),
            "{row:?} is a formula"
        );
        if name != FORMULA && name != BIDI {
            assert!(
                row["status"].starts_with("error: ") && row["status"].len() > 10,
                "{name:?} says why it was not graded: {row:?}"
            );
        }
    }
    assert_eq!(book[&shown(FORMULA)]["student"], format!("'{FORMULA}"));
    assert_eq!(
        book[&shown(BIDI)]["student"],
        "line\\u{a}break\\u{202e}kcatta"
    );
    assert_ne!(
        book.get(&shown("Jos\u{e9}")).map(|r| &r["student"]),
        book.get(&shown("Jose\u{301}")).map(|r| &r["student"]),
        "names that look alike show differently"
    );

    // The two solutions keep their points: their name changes nothing.
    let folders = feedback_folders(&class.path().join("feedback"));
    assert_eq!(
        folders.len(),
        names.len(),
        "a feedback folder each: {folders:#?}"
    );
    for name in [FORMULA, BIDI] {
        let row = &book[&shown(name)];
        let feedback = std::fs::read_to_string(folders[name].join("feedback.md"));
        assert_eq!(row["status"], "graded", "{name:?}: {row:?}\n{feedback:?}");
        let results: Value = serde_json::from_slice(
            &std::fs::read(folders[name].join("results.json")).expect("results.json"),
        )
        .expect("JSON");
        for test in results["tests"].as_array().expect("tests") {
            let id = test["extra_data"]["item"].as_str().unwrap_or("");
            if !SPEED_ITEMS.contains(&id) {
                assert_eq!(
                    test["score"], test["max_score"],
                    "{name:?} lost points on {id}: {test}"
                );
            }
        }
    }

    // Every report is inert: feedback.md shows no HTML, comment or link outside code.
    for (name, dir) in &folders {
        let feedback = std::fs::read_to_string(dir.join("feedback.md")).expect("feedback.md");
        assert_inert("feedback.md", &feedback);
        for line in shown_as_text(&feedback) {
            // The grader's own link: the speed chart beside the feedback.
            if line.starts_with("![") && line.ends_with("](chart.svg)") {
                continue;
            }
            assert!(
                !line.contains('<') && !line.contains("](") && !line.contains("://"),
                "{name:?}: markup outside code: {line}\n{feedback}"
            );
        }
        let results = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
        assert!(
            !results.contains("\\u001b") && !results.contains("\\u202e"),
            "{name:?}: {results}"
        );
    }
    let bidi = std::fs::read_to_string(folders[BIDI].join("feedback.md")).expect("feedback");
    assert!(
        bidi.contains("evil\\u{1b}[31m"),
        "the dependency is named:\n{bidi}"
    );
    let page = std::fs::read_to_string(class.path().join("grades.html")).expect("grades.html");
    assert_inert("grades.html", &page);
    assert!(!page.contains("<!-- hidden"), "a name opened a comment");

    // Resumed: the two graded are kept, the others graded again, every row still there.
    let again = batch(class.path());
    let stdout = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(
        stdout.contains("(11 graded now, 2 unchanged"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let (text, book) = gradebook(&class.path().join("grades.csv"));
    assert_eq!(book.len(), names.len(), "{text}");
}
