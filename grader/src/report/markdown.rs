//! The report in Markdown: a score table (GitHub's step summary, the top of a feedback file)
//! and a student's feedback file with every lost point explained.

use super::escape::{markdown_block, markdown_inline};
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
            student = markdown_inline(student)
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
}
