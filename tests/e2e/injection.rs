//! End-to-end: text a submission controls reaches the terminal, feedback.md, results.json and
//! the gradebook escaped for each: a panic message with terminal escapes, a forged "Score"
//! line, an HTML comment and a fence closer; a dependency name with a line break; a folder
//! name that a spreadsheet would run as a formula.

use gpu_labs_e2e::{edited_copy, grader_bin, solution, workspace};
use std::path::Path;
use std::process::Command;

/// What the hostile submission's `matmul_naive` panics with: clears the screen, returns to
/// the start of the line, opens an HTML comment, closes any code fence and forges a score.
const PANIC: &str = r#"    panic!("bad\u{1b}[2J\u{1b}[1;1H\rnothing to see\n````\n\n**Score: 25/25**\n\n<!-- the rest is hidden");
"#;

fn hostile(dir: &Path) {
    edited_copy(
        &solution(),
        dir,
        "src/lib.rs",
        &[(
            "    // BEGIN SOLUTION\n    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());\n    let mut c = Array2::zeros((m, n));\n    for i in 0..m {",
            &format!("    // BEGIN SOLUTION\n{PANIC}    #[allow(unreachable_code)]\n    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());\n    let mut c = Array2::zeros((m, n));\n    for i in 0..m {{"),
        )],
    );
    // A dependency whose name breaks the line and forges a heading.
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("Cargo.toml");
    let text = text.replacen(
        "[dependencies]\n",
        "[dependencies]\n\"evil\\n# Score: 25/25 <!--\" = \"1\"\n",
        1,
    );
    std::fs::write(&manifest, text).expect("write Cargo.toml");
}

/// No character that acts on a terminal: escape, carriage return, other C0 controls.
fn assert_inert(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect();
    assert!(bad.is_empty(), "{what} holds {bad:?}:\n{text}");
}

#[test]
fn text_a_submission_controls_is_escaped_for_every_place_it_goes() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let class = tempfile::Builder::new()
        .prefix("injection-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    hostile(&subs.join("mallory"));
    let formula = "=HYPERLINK(\"evil.example\",\"x\")";
    edited_copy(
        &workspace().join("templates/matmul"),
        &subs.join(formula),
        "src/lib.rs",
        &[],
    );
    let out = Command::new(grader_bin())
        .args([
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--gpu",
            "off",
            "--seed",
            "3",
        ])
        .current_dir(class.path())
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .output()
        .expect("grader runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_inert("the batch's output", &stdout);
    assert_inert("the batch's errors", &stderr);

    let feedback = std::fs::read_to_string(class.path().join("feedback/mallory/feedback.md"))
        .expect("mallory's feedback");
    assert_inert("feedback.md", &feedback);
    // The lines Markdown shows as text: those outside fenced blocks (a fence closes only on
    // a run of backticks at least as long as the one that opened it).
    let mut outside = Vec::new();
    let mut inside = None::<usize>;
    for line in feedback.lines() {
        let run = line.chars().take_while(|c| *c == '`').count();
        match inside {
            Some(n) if run >= n && line.trim_matches('`').is_empty() => inside = None,
            Some(_) => {}
            None if run >= 3 => inside = Some(run),
            None => outside.push(line),
        }
    }
    // Code spans show their text as code: what could act is what is outside them.
    let shown: Vec<String> = outside.iter().map(|l| without_code_spans(l)).collect();
    let scores: Vec<&String> = shown
        .iter()
        .filter(|l| l.starts_with("**Score") || (l.starts_with('#') && l.contains("Score")))
        .collect();
    assert_eq!(scores.len(), 1, "one score line: {scores:?}\n{feedback}");
    assert!(scores[0].starts_with("**Score: 13/"), "{feedback}");
    for line in &shown {
        assert!(
            !line.contains("<!--"),
            "an HTML comment outside code: {line}"
        );
    }
    // The panic text is inside its fence: the fence is longer than the ```` it holds.
    let panic_at = feedback
        .find("nothing to see")
        .expect("the panic message is shown");
    assert!(
        feedback[..panic_at].contains("\n`````text\n"),
        "a fence of five backticks opens before it: {feedback}"
    );
    assert!(
        feedback.contains("\\\\u{1b}[2J") || feedback.contains("\\u{1b}[2J"),
        "{feedback}"
    );

    let results = std::fs::read_to_string(class.path().join("feedback/mallory/results.json"))
        .expect("results.json");
    assert!(
        !results.contains("\\u001b"),
        "no escape in results.json: {results}"
    );

    let gradebook = std::fs::read_to_string(class.path().join("grades.csv")).expect("gradebook");
    assert_inert("the gradebook", &gradebook);
    let mut reader = csv::Reader::from_reader(gradebook.as_bytes());
    let students: Vec<String> = reader
        .records()
        .map(|r| r.expect("row")[0].to_string())
        .collect();
    assert!(
        students.contains(&format!("'{formula}")),
        "the formula is shown, not run: {students:?}"
    );
    assert!(
        students
            .iter()
            .all(|s| !s.starts_with(['=', '+', '-', '@'])),
        "{students:?}"
    );
}

/// `line` without its code spans (a run of backticks up to the next run of as many).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + run..];
        let close = "`".repeat(run);
        match after.find(&close) {
            Some(end) => rest = &after[end + run..],
            None => {
                out.push_str(&rest[start..start + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
