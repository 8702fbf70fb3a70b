//! The score table printed after the libtest-style lines: item, points, status, one reason.

use super::escape::terminal;
use super::{points, Report, Status};
use crate::messages::t;
use std::fmt::Write;

/// The feedback of every item that lost points, libtest-style (`---- id ----` then the
/// details), for a terminal before the table.
pub fn failures(report: &Report) -> String {
    let mut out = String::new();
    for item in report
        .items
        .iter()
        .filter(|i| matches!(i.status, Status::Failed | Status::Partial))
    {
        let _ = writeln!(out, "\n---- {} ----\n{}", item.id, terminal(&item.details));
    }
    out
}

/// Renders the report as a plain-text table with a total line.
pub fn render(report: &Report) -> String {
    let id_width = report
        .items
        .iter()
        .map(|i| i.id.len())
        .chain([5])
        .max()
        .unwrap_or(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<id_width$}  {:>7}  {:<7}  {}",
        t!("table-item"),
        t!("table-points"),
        t!("table-status"),
        t!("table-reason")
    );
    for item in &report.items {
        let status = status_word(item.status);
        let pts = format!("{}/{}", points(item.score), points(item.max_score));
        // A skipped item's reason already says why GPU work did not run.
        let mode = match (&item.mode, item.status) {
            (Some(m), status) if status != Status::Skipped => format!(" [{}]", terminal(m)),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<id_width$}  {:>7}  {:<7}  {}{mode}",
            item.id,
            pts,
            status,
            terminal(&item.reason)
        );
    }
    let total = format!("{}/{}", points(report.score()), points(report.max_score()));
    let _ = writeln!(out, "{:<id_width$}  {:>7}", t!("table-total"), total);
    if let Some(sandbox) = &report.sandbox {
        let _ = writeln!(out, "{}", t!("table-sandbox", sandbox = sandbox));
    }
    out
}

/// The status as the table (and a Classroom step) writes it, in the run's language.
pub fn status_word(status: Status) -> String {
    match status {
        Status::Passed => t!("status-passed"),
        Status::Partial => t!("status-partial"),
        Status::Failed => t!("status-failed"),
        Status::Skipped => t!("status-skipped"),
    }
}
