//! The report in Markdown: a score table (GitHub's step summary, the top of a feedback file)
//! and a student's feedback file with every lost point explained.

use super::escape::{self, markdown_block, markdown_inline};
use super::{points, BuildStatus, Report, Status};
use crate::messages::t;
use std::fmt::Write;

/// Escapes text for one cell of a Markdown table (no pipes, no line breaks, no markup).
fn cell(text: &str) -> String {
    markdown_inline(text)
}

/// The status as a table shows it.
fn status_word(status: Status) -> String {
    match status {
        Status::Passed => t!("md-status-passed"),
        Status::Partial => t!("md-status-partial"),
        Status::Failed => t!("md-status-failed"),
        Status::Skipped => t!("md-status-skipped"),
    }
}

/// A Markdown score table: item, points, status, reason, then the total.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", t!("md-table-header"));
    let _ = writeln!(out, "|---|---:|---|---|");
    for item in &report.items {
        let _ = writeln!(
            out,
            "| `{}` | {}/{} | {} | {} |",
            item.id,
            points(item.score),
            points(item.max_score),
            status_word(item.status),
            cell(&item.reason)
        );
    }
    let _ = writeln!(
        out,
        "| **{}** | **{}/{}** | | |",
        t!("table-total"),
        points(report.score()),
        points(report.max_score())
    );
    out
}

/// GitHub's step summary: a heading, the table, the speed chart's numbers (a summary cannot
/// show the chart itself, see [`super::chart::summary`]) and how to repeat the run.
pub fn step_summary(report: &Report) -> String {
    format!(
        "{}\n\n{}{}\n{}\n",
        t!(
            "summary-heading",
            assignment = report.assignment,
            score = points(report.score()),
            max = points(report.max_score())
        ),
        table(report),
        super::chart::summary(report).unwrap_or_default(),
        t!("summary-seed", seed = report.seed)
    )
}

/// A student's feedback file: the score, notes on what official grading ignored, the table,
/// then every item that lost points with its full explanation.
pub fn feedback(student: &str, report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}\n\n{}\n",
        t!(
            "feedback-heading",
            assignment = report.assignment,
            student = markdown_inline(&escape::name(student))
        ),
        t!(
            "feedback-score",
            score = points(report.score()),
            max = points(report.max_score()),
            seed = report.seed
        )
    );
    if report.build == BuildStatus::NotCompiled {
        let _ = writeln!(out, "{}\n", t!("feedback-not-compiled"));
    }
    if report.build == BuildStatus::Refused {
        let _ = writeln!(out, "{}\n", t!("feedback-refused"));
    }
    if !report.notes.is_empty() {
        let _ = writeln!(out, "{}\n", t!("feedback-notes"));
        for note in &report.notes {
            let _ = writeln!(out, "- {}", markdown_inline(note));
        }
        out.push('\n');
    }
    out.push_str(&table(report));
    if let Some(image) = super::chart::markdown_image(report) {
        let _ = write!(out, "\n{image}");
    }
    let lost: Vec<_> = report
        .items
        .iter()
        .filter(|i| matches!(i.status, Status::Failed | Status::Partial))
        .collect();
    if !lost.is_empty() {
        let _ = writeln!(out, "\n{}", t!("feedback-lost"));
    }
    for item in lost {
        let _ = writeln!(
            out,
            "\n### `{}`: {} ({}/{})\n\n{}",
            item.id,
            markdown_inline(&item.title),
            points(item.score),
            points(item.max_score),
            markdown_block(item.details.trim_end(), "text")
        );
    }
    let _ = writeln!(out, "\n{}", t!("feedback-repeat", seed = report.seed));
    out
}

/// The feedback file of a submission that could not be graded (not a lab crate, a link, the
/// grader's failure): the student's name and why, the why in a block (it may quote their
/// files or the compiler, and is shown exactly as written).
pub fn not_graded(student: &str, why: &str) -> String {
    format!(
        "{}\n\n{}\n\n{}\n",
        t!(
            "feedback-not-graded-heading",
            student = markdown_inline(&escape::name(student))
        ),
        t!("feedback-not-graded"),
        markdown_block(why.trim_end(), "text")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ItemResult;

    fn item(id: &str, score: f64, max: f64, status: Status, reason: &str) -> ItemResult {
        ItemResult {
            reason: reason.into(),
            details: format!("{id} details\nsecond line"),
            ..crate::report::sample_item(id, score, max, status)
        }
    }

    fn report() -> Report {
        Report {
            assignment: "matmul".into(),
            build: BuildStatus::Built,
            notes: vec!["Your tests/grade.rs differs from the lab's.".into()],
            seed: 7,
            items: vec![
                item("a", 3.0, 3.0, Status::Passed, "right"),
                item("b", 2.0, 4.0, Status::Partial, "6.1× | slow"),
                item("c", 0.0, 0.0, Status::Skipped, "needs a GPU"),
            ],
            execution_time: 1.0,
            sandbox: None,
        }
    }

    #[test]
    fn the_table_lists_every_item_and_the_total_with_pipes_escaped() {
        let table = table(&report());
        assert!(
            table.contains("| `b` | 2/4 | 🟡 partial | 6.1× \\| slow |"),
            "{table}"
        );
        assert!(table.contains("| **total** | **5/7** |"), "{table}");
        assert_eq!(table.lines().count(), 6);
    }

    #[test]
    fn feedback_explains_each_lost_item_and_what_was_ignored() {
        let text = feedback("alice", &report());
        assert!(text.contains("feedback for alice"), "{text}");
        assert!(text.contains("**Score: 5/7**"), "{text}");
        assert!(text.contains("- Your tests/grade.rs differs"), "{text}");
        assert!(text.contains("### `b`: b title (2/4)"), "{text}");
        assert!(text.contains("b details\nsecond line"), "{text}");
        assert!(!text.contains("### `a`"), "{text}");
        assert!(!text.contains("### `c`"), "{text}");
    }

    /// The lines of `text` Markdown shows as text: those outside fenced blocks (a fence closes
    /// only on a run of backticks at least as long as the one that opened it).
    fn outside_fences(text: &str) -> Vec<&str> {
        let mut outside = Vec::new();
        let mut inside = None::<usize>;
        for line in text.lines() {
            let run = line.chars().take_while(|c| *c == '`').count();
            match inside {
                Some(n) if run >= n && line.trim_matches('`').is_empty() => inside = None,
                Some(_) => {}
                None if run >= 3 => inside = Some(run),
                None => outside.push(line),
            }
        }
        outside
    }

    /// A report every string of which is hostile: each note, title, reason and details.
    fn hostile_report() -> Report {
        let hostile = crate::report::escape::tests::HOSTILE;
        let mut r = report();
        r.notes = hostile
            .iter()
            .map(|h| format!("Your Cargo.toml adds the dependency `{h}`, which …"))
            .collect();
        r.items = hostile
            .iter()
            .enumerate()
            .map(|(n, h)| ItemResult {
                title: h.to_string(),
                details: format!("panicked: {h}\n{h}"),
                ..item(&format!("i{n}"), 0.0, 1.0, Status::Failed, h)
            })
            .collect();
        r
    }

    #[test]
    fn nothing_a_submission_wrote_acts_in_feedback_md() {
        let hostile = crate::report::escape::tests::HOSTILE;
        for student in hostile.iter().chain(&["alice"]) {
            let text = feedback(student, &hostile_report());
            let not_graded = not_graded(student, &hostile.join("\n"));
            for text in [text, not_graded] {
                assert!(
                    !text
                        .chars()
                        .any(|c| c.is_control() && c != '\n' && c != '\t'),
                    "a raw control character in:\n{text}"
                );
                for c in ['\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}'] {
                    assert!(!text.contains(c), "{c:?} in:\n{text}");
                }
                let shown: Vec<String> = outside_fences(&text)
                    .iter()
                    .map(|l| crate::report::escape::tests::outside_code(l))
                    .collect();
                for line in &shown {
                    assert!(!line.contains('<'), "raw HTML outside code: {line}\n{text}");
                    assert!(!line.contains("]("), "a link outside code: {line}");
                    assert!(!line.contains("://"), "an autolink outside code: {line}");
                }
                let scores = shown
                    .iter()
                    .filter(|l| {
                        l.starts_with("**Score")
                            || l.trim_start_matches('#').trim_start().starts_with("Score")
                    })
                    .count();
                assert!(scores <= 1, "a forged score line:\n{text}");
                let headings = shown.iter().filter(|l| l.starts_with("# ")).count();
                assert_eq!(headings, 1, "one top heading:\n{text}");
            }
        }
    }

    #[test]
    fn an_ungraded_submission_says_why_in_a_block() {
        let text = not_graded("=cmd", "not a lab crate: no Cargo.toml");
        assert!(text.starts_with("# Feedback for \\=cmd\n"), "{text}");
        assert!(text.contains("could not be graded"), "{text}");
        assert!(
            text.contains("```text\nnot a lab crate: no Cargo.toml\n```"),
            "{text}"
        );
    }
}
