//! The instructor's class report as one static HTML page: [`write`] renders a
//! [`ClassSummary`] (the score histogram, each item's pass rate, the measured speedups, the
//! submissions refused or flagged, the slowest builds, a link to each student's feedback) and
//! decides nothing: every number is the summary's, which are the gradebook's.
//!
//! The page opens from disk with nothing else: its CSS is inline, its charts are inline SVG
//! drawn by `plotters`' SVG backend (text sized without reading any font), it has no script,
//! and its Content-Security-Policy forbids loading anything. Links to the feedback are
//! relative, so the folder can be moved or zipped. Every string a student controls (folder
//! names, reasons quoting their code) goes through [`escape::html`]; each number is also in a
//! `data-*` attribute (`data-total`, `data-passed`, `data-count`, …) for programs that read it.
//! When the batch compared the submissions, a section shows the pairs that share code
//! ([`similarity`]).

use super::class::{Bin, ClassSummary, ItemRate, Speedups};
use super::escape;
use plotters::prelude::*;
use std::io::Write;

mod similarity;

/// Why the page could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ClassHtmlError {
    /// Writing failed.
    #[error("cannot write the class report: {0}")]
    Io(#[from] std::io::Error),
    /// A chart could not be drawn.
    #[error("cannot draw the class report's {chart} chart: {message}")]
    Chart {
        /// Which chart.
        chart: &'static str,
        /// What plotters said.
        message: String,
    },
}

/// The page's style: readable without any font of its own, printable.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1100px;margin:1.5em auto;\
padding:0 1em;color:#1a1a1a;line-height:1.4}\
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
nav a{margin-right:1em}table{border-collapse:collapse;margin:.6em 0}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.chart svg{max-width:100%;height:auto}\
.pair{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}.muted{color:#666}\
.reason{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:.9em}\
table.regions{table-layout:fixed;width:100%}table.regions td{width:50%}\
pre.code{margin:0;overflow-x:auto;font-size:.85em;white-space:pre}.file{font-size:.85em;color:#666}";

/// Writes the page of `summary` to `out`.
pub fn write<W: Write>(mut out: W, summary: &ClassSummary) -> Result<(), ClassHtmlError> {
    let title = format!(
        "Class report: {} ({})",
        escape::html(&summary.title),
        escape::html(&summary.lab)
    );
    let with_total = summary
        .students
        .iter()
        .filter(|s| !s.total.is_empty())
        .count();
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n<title>{title}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<h1>{title}</h1>\n\
         <p id=\"class\" data-students=\"{}\" data-with-total=\"{with_total}\" \
         data-max=\"{}\">{} submissions, {with_total} with a total out of {} points. Every \
         number here is the gradebook's.</p>\n\
         <nav><a href=\"#histogram\">Scores</a><a href=\"#pass-rates\">Pass rates</a>\
         <a href=\"#speedups\">Speedups</a><a href=\"#flagged\">Refused or flagged</a>\
         <a href=\"#builds\">Slowest builds</a>{similar}<a href=\"#students\">Students</a></nav>\n",
        summary.students.len(),
        escape::html(&summary.max),
        summary.students.len(),
        escape::html(&summary.max),
        similar = if summary.similarity.is_some() {
            "<a href=\"#similarity\">Similar submissions</a>"
        } else {
            ""
        },
    )?;
    histogram(&mut out, &summary.histogram)?;
    pass_rates(&mut out, &summary.items)?;
    speedups(&mut out, &summary.speedups)?;
    flagged(&mut out, summary)?;
    builds(&mut out, summary)?;
    if let Some(section) = &summary.similarity {
        similarity::write(&mut out, section)?;
    }
    students(&mut out, summary)?;
    writeln!(out, "</body>\n</html>")?;
    Ok(())
}

/// A chart's failure, named.
fn chart_err<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> ClassHtmlError {
    move |e| ClassHtmlError::Chart {
        chart,
        message: e.to_string(),
    }
}

/// The totals' histogram: a bar chart and its table.
fn histogram<W: Write>(out: &mut W, bins: &[Bin]) -> Result<(), ClassHtmlError> {
    writeln!(out, "<section id=\"histogram\">\n<h2>Scores</h2>")?;
    if bins.is_empty() {
        writeln!(out, "<p>No submission has a total.</p>\n</section>")?;
        return Ok(());
    }
    let mut svg = String::new();
    {
        let err = chart_err("score histogram");
        let root = SVGBackend::with_string(&mut svg, (640, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(&err)?;
        let top = bins.iter().map(|b| b.count).max().unwrap_or(0) as u32 + 1;
        let last = bins.len() as u32 - 1;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(44)
            .build_cartesian_2d((0u32..last).into_segmented(), 0u32..top)
            .map_err(&err)?;
        chart
            .configure_mesh()
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .max_light_lines(1)
            .disable_x_mesh()
            .x_labels(bins.len())
            .y_labels((top as usize + 1).min(10))
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => bins
                    .get(*i as usize)
                    .map(|b| b.label.clone())
                    .unwrap_or_default(),
                SegmentValue::Last => String::new(),
            })
            .y_label_formatter(&|v| v.to_string())
            .x_desc("total points")
            .y_desc("students")
            .draw()
            .map_err(&err)?;
        chart
            .draw_series(
                Histogram::vertical(&chart)
                    .style(RGBColor(52, 101, 164).filled())
                    .margin(6)
                    .data(
                        bins.iter()
                            .enumerate()
                            .map(|(i, b)| (i as u32, b.count as u32)),
                    ),
            )
            .map_err(&err)?;
        root.present().map_err(&err)?;
    }
    writeln!(out, "<div class=\"pair\"><div class=\"chart\">{svg}</div>")?;
    writeln!(
        out,
        "<table class=\"bins\">\n<tr><th>total</th><th>students</th></tr>"
    )?;
    for bin in bins {
        writeln!(
            out,
            "<tr data-lo=\"{}\" data-hi=\"{}\" data-count=\"{}\"><td>{}</td><td class=\"n\">{}</td></tr>",
            bin.lo,
            bin.hi,
            bin.count,
            escape::html(&bin.label),
            bin.count
        )?;
    }
    writeln!(
        out,
        "</table></div>\n<p class=\"muted\">A bar holds the totals from its lower bound up to, not \
         including, its upper one; the last holds the maximum. Submissions not graded have no \
         total and are not counted.</p>\n</section>"
    )?;
    Ok(())
}

/// Each item's pass rate: a bar per item and the table of counts.
fn pass_rates<W: Write>(out: &mut W, items: &[ItemRate]) -> Result<(), ClassHtmlError> {
    writeln!(
        out,
        "<section id=\"pass-rates\">\n<h2>Pass rate per item</h2>"
    )?;
    if !items.is_empty() {
        let mut svg = String::new();
        {
            let err = chart_err("pass rate");
            let height = 60 + 26 * items.len() as u32;
            let root = SVGBackend::with_string(&mut svg, (720, height)).into_drawing_area();
            root.fill(&WHITE).map_err(&err)?;
            let last = items.len() as u32 - 1;
            let mut chart = ChartBuilder::on(&root)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(190)
                .build_cartesian_2d(0u32..100u32, (0u32..last).into_segmented())
                .map_err(&err)?;
            // The first item at the top.
            let at = |row: u32| items.get((last - row) as usize);
            chart
                .configure_mesh()
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 14))
                .max_light_lines(1)
                .disable_y_mesh()
                .y_labels(items.len())
                .y_label_formatter(&|v| match v {
                    SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                        at(*i).map(|item| item.id.clone()).unwrap_or_default()
                    }
                    SegmentValue::Last => String::new(),
                })
                .x_label_formatter(&|v| format!("{v}%"))
                .x_desc("students with full points, of those graded on the item")
                .draw()
                .map_err(&err)?;
            chart
                .draw_series(
                    Histogram::horizontal(&chart)
                        .style(RGBColor(78, 154, 6).filled())
                        .margin(4)
                        .data(
                            (0..=last).filter_map(|row| Some((row, at(row)?.percent.unwrap_or(0)))),
                        ),
                )
                .map_err(&err)?;
            root.present().map_err(&err)?;
        }
        writeln!(out, "<div class=\"chart\">{svg}</div>")?;
    }
    writeln!(
        out,
        "<table class=\"items\">\n<tr><th>item</th><th>title</th><th>passed</th>\
         <th>graded</th><th>pass rate</th></tr>"
    )?;
    for item in items {
        let percent = item.percent.map(|p| format!("{p}%"));
        writeln!(
            out,
            "<tr data-item=\"{id}\" data-passed=\"{}\" data-graded=\"{}\" data-percent=\"{}\">\
             <td><code>{id}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td></tr>",
            item.passed,
            item.graded,
            item.percent.map(|p| p.to_string()).unwrap_or_default(),
            escape::html(&item.title),
            item.passed,
            item.graded,
            percent.as_deref().unwrap_or("not graded"),
            id = escape::html(&item.id),
        )?;
    }
    writeln!(out, "</table>\n</section>")?;
    Ok(())
}

/// The speedups measured on each speed item: the students' speedups in order, and the table.
fn speedups<W: Write>(out: &mut W, items: &[Speedups]) -> Result<(), ClassHtmlError> {
    writeln!(out, "<section id=\"speedups\">\n<h2>Measured speedups</h2>")?;
    if items.is_empty() {
        writeln!(
            out,
            "<p>No speedup was measured (speed items skipped on this machine, or nobody \
             reached them).</p>"
        )?;
    }
    for item in items {
        writeln!(
            out,
            "<h3><code>{}</code> {}</h3>",
            escape::html(&item.id),
            escape::html(&item.title)
        )?;
        let mut svg = String::new();
        {
            let err = chart_err("speedup");
            let root = SVGBackend::with_string(&mut svg, (640, 300)).into_drawing_area();
            root.fill(&WHITE).map_err(&err)?;
            let top = item.values.iter().map(|v| v.1).fold(1.0, f64::max) * 1.1;
            let n = item.values.len() as u32;
            let mut chart = ChartBuilder::on(&root)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(44)
                .build_cartesian_2d(0.0..top, 0u32..n + 1)
                .map_err(&err)?;
            chart
                .configure_mesh()
                .label_style(("sans-serif", 14))
                .axis_desc_style(("sans-serif", 14))
                .max_light_lines(1)
                .y_labels((n as usize + 2).min(10))
                .x_label_formatter(&|v| format!("{v:.1}×"))
                .y_label_formatter(&|v| v.to_string())
                .x_desc("speedup over the grader's baseline")
                .y_desc("students at or below")
                .draw()
                .map_err(&err)?;
            // No speedup at all: the baseline's own speed.
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(1.0, 0), (1.0, n + 1)],
                    RGBColor(204, 0, 0),
                )))
                .map_err(&err)?;
            chart
                .draw_series(item.values.iter().enumerate().map(|(k, (_, s))| {
                    Circle::new((*s, k as u32 + 1), 4, RGBColor(52, 101, 164).filled())
                }))
                .map_err(&err)?;
            root.present().map_err(&err)?;
        }
        writeln!(out, "<div class=\"pair\"><div class=\"chart\">{svg}</div>")?;
        writeln!(
            out,
            "<table class=\"speedups\" data-item=\"{}\">\n<tr><th>student</th><th>speedup</th></tr>",
            escape::html(&item.id)
        )?;
        for (student, speedup) in item.values.iter().rev() {
            writeln!(
                out,
                "<tr data-student=\"{name}\" data-speedup=\"{speedup}\"><td>{name}</td>\
                 <td class=\"n\">{speedup:.1}×</td></tr>",
                name = escape::html(&escape::name(student)),
            )?;
        }
        writeln!(out, "</table></div>")?;
    }
    writeln!(out, "</section>")?;
    Ok(())
}

/// The submissions refused, not compiled, timed out, not graded, or with notes, and why.
fn flagged<W: Write>(out: &mut W, summary: &ClassSummary) -> Result<(), ClassHtmlError> {
    writeln!(out, "<section id=\"flagged\">\n<h2>Refused or flagged</h2>")?;
    if summary.flagged.is_empty() {
        writeln!(out, "<p>None: every submission built and was graded.</p>")?;
    } else {
        writeln!(
            out,
            "<table class=\"flagged\">\n<tr><th>student</th><th>outcome</th><th>why</th></tr>"
        )?;
        for f in &summary.flagged {
            let reasons: String = f
                .reasons
                .iter()
                .map(|r| format!("<li class=\"reason\">{}</li>", escape::html(r)))
                .collect();
            writeln!(
                out,
                "<tr data-student=\"{name}\" data-outcome=\"{outcome}\"><td>{name}</td>\
                 <td>{outcome}</td><td><ul>{reasons}</ul></td></tr>",
                name = escape::html(&escape::name(&f.student)),
                outcome = escape::html(&f.outcome),
            )?;
        }
        writeln!(out, "</table>")?;
    }
    writeln!(out, "</section>")?;
    Ok(())
}

/// The slowest builds.
fn builds<W: Write>(out: &mut W, summary: &ClassSummary) -> Result<(), ClassHtmlError> {
    writeln!(out, "<section id=\"builds\">\n<h2>Slowest builds</h2>")?;
    if summary.slowest_builds.is_empty() {
        writeln!(
            out,
            "<p>No build was timed (nothing was built, or the records predate build times).</p>"
        )?;
    } else {
        writeln!(
            out,
            "<p>The {} slowest of {} timed builds (waiting for the shared build cache \
             included).</p>\n<table class=\"builds\" data-timed=\"{}\">\n\
             <tr><th>student</th><th>build</th></tr>",
            summary.slowest_builds.len(),
            summary.builds_timed,
            summary.builds_timed
        )?;
        for b in &summary.slowest_builds {
            writeln!(
                out,
                "<tr data-student=\"{name}\" data-build-seconds=\"{secs}\"><td>{name}</td>\
                 <td class=\"n\">{secs:.1} s</td></tr>",
                name = escape::html(&escape::name(&b.student)),
                secs = b.seconds,
            )?;
        }
        writeln!(out, "</table>")?;
    }
    writeln!(out, "</section>")?;
    Ok(())
}

/// Every student: the gradebook's total and status, and a link to their feedback.
fn students<W: Write>(out: &mut W, summary: &ClassSummary) -> Result<(), ClassHtmlError> {
    writeln!(
        out,
        "<section id=\"students\">\n<h2>Students</h2>\n<table class=\"students\">\n\
         <tr><th>student</th><th>total</th><th>max</th><th>status</th><th>feedback</th></tr>"
    )?;
    for s in &summary.students {
        let href: Vec<String> = s.feedback.iter().map(|p| percent_encode(p)).collect();
        writeln!(
            out,
            "<tr data-student=\"{name}\" data-total=\"{total}\" data-max=\"{max}\" \
             data-status=\"{status}\"><td>{name}</td><td class=\"n\">{total}</td>\
             <td class=\"n\">{max}</td><td>{status}</td>\
             <td><a class=\"feedback\" href=\"{href}\">feedback</a></td></tr>",
            name = escape::html(&escape::name(&s.name)),
            total = escape::html(&s.total),
            max = escape::html(&s.max),
            status = escape::html(&s.status),
            href = escape::html(&href.join("/")),
        )?;
    }
    writeln!(out, "</table>\n</section>")?;
    Ok(())
}

/// One segment of a relative URL: every byte but the unreserved ones percent-encoded, so a
/// folder name holding `#`, `?`, `%`, `/`-free markup or spaces stays one path segment.
fn percent_encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::class::{ClassSummary, Entry};
    use crate::report::gradebook::Row;
    use crate::report::{sample_item, BuildStatus, Report, Status};

    const HOSTILE: &str = "eve<img src=x onerror=alert(1)>\"'&amp;";

    fn report(items: Vec<crate::report::ItemResult>, build: BuildStatus) -> Report {
        Report {
            assignment: "matmul".into(),
            build,
            notes: vec![],
            seed: 1,
            items,
            execution_time: 1.0,
            sandbox: None,
        }
    }

    #[test]
    fn a_hostile_name_and_reason_are_shown_never_run() {
        let rubric = crate::rubric::embedded("matmul").expect("the matmul rubric");
        let mut refused = sample_item("naive_correct", 0.0, 3.0, Status::Failed);
        refused.reason = format!("refused: </li></ul><script>{HOSTILE}</script>");
        let good = report(
            vec![sample_item("naive_correct", 3.0, 3.0, Status::Passed)],
            BuildStatus::Built,
        );
        let bad = report(vec![refused], BuildStatus::Refused);
        let entry = |name: &'static str, report, outcome: &'static str| Entry {
            row: Row {
                student: name,
                report,
                status: outcome.to_string(),
                graded_at: "2026-11-25T06:00:00Z",
            },
            outcome,
            error: None,
            build_seconds: Some(2.5),
            feedback: vec!["feedback".into(), name.into(), "feedback.md".into()],
        };
        let entries = [
            entry("alice", Some(&good), "graded"),
            entry(HOSTILE, Some(&bad), "refused"),
        ];
        let summary = ClassSummary::new("matmul", "T", &rubric.items, &entries);
        assert_eq!(summary.items[0].passed, 1);
        assert_eq!(summary.items[0].graded, 2);
        assert_eq!(summary.items[0].percent, Some(50));
        assert_eq!(summary.flagged.len(), 1);
        let mut page = Vec::new();
        write(&mut page, &summary).expect("the page");
        let page = String::from_utf8(page).expect("UTF-8");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("refused: &lt;/li&gt;&lt;/ul&gt;&lt;script&gt;eve&lt;img"));
        assert!(page.contains("eve&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;amp;"));
        // The link is one path segment, whatever the name holds.
        assert!(page.contains(
            "href=\"feedback/eve%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E%22%27%26amp%3B/feedback.md\""
        ));
        assert!(page.contains("data-student=\"alice\" data-total=\"3\" data-max=\"3\""));
        assert!(page.contains("data-lo=\"3\" data-hi=\"4\" data-count=\"1\""));
        assert!(page.contains("<svg"));
    }
}
