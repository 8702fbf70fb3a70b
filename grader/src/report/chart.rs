//! The student's speed chart: each timed speed item's times against the matrix size, on log
//! scales, the student's line beside the grader's baseline, with the item's tier lines (a tier
//! of speedup `s` is the line baseline time / `s`), as one self-contained SVG file.
//!
//! [`svg`] is a pure function of the report (the data is [`super::Sweep`], measured by the
//! supervisor); the flows decide where the file goes ([`FILE_NAME`]). Every point carries its
//! numbers in `data-*` attributes and a `<title>` (a tooltip), so tests and tools can read
//! them back. GitHub shows an SVG file linked from Markdown ([`markdown_image`]) but strips
//! inline SVG and `data:` images, and a step summary cannot link a file of the run, so the
//! summary gets the numbers as a table instead ([`summary`]).

use super::{points, ItemResult, Report, Sweep, SweepDevice, SweepPoint};
use std::fmt::Write;

/// The chart's file name, beside `feedback.md` or under the lab crate's `target/gpu-labs/`.
pub const FILE_NAME: &str = "chart.svg";

/// Every sentence the chart and its Markdown show a student, in one place.
mod words {
    use crate::messages::t;

    pub fn title() -> String {
        t!("chart-title")
    }
    pub fn subtitle() -> String {
        t!("chart-subtitle")
    }
    pub fn x_axis() -> String {
        t!("chart-x-axis")
    }
    pub fn y_axis() -> String {
        t!("chart-y-axis")
    }
    pub fn graded() -> String {
        t!("chart-graded")
    }
    pub fn emulated() -> String {
        t!("chart-emulated")
    }
    pub fn not_timed() -> String {
        t!("chart-not-timed")
    }
    pub fn image_alt() -> String {
        t!("chart-image-alt")
    }
    pub fn summary_note() -> String {
        t!("chart-summary-note")
    }

    /// The harness's line under the score table.
    pub fn written(path: &std::path::Path) -> String {
        t!("chart-written", path = path.display())
    }

    /// A tier line's legend.
    pub fn tier(speedup: f64, pts: f64) -> String {
        if pts == 1.0 {
            t!(
                "chart-tier-one",
                speedup = speedup,
                points = super::points(pts)
            )
        } else {
            t!("chart-tier", speedup = speedup, points = super::points(pts))
        }
    }

    /// The hand-over's footnote.
    pub fn handover(ms: &str) -> String {
        t!("chart-handover", ms = ms)
    }

    /// The extra sizes' footnote.
    pub fn samples(graded: usize, extra: usize) -> String {
        t!("chart-samples", graded = graded, extra = extra)
    }
}

/// Geometry, in SVG pixels.
const WIDTH: f64 = 840.0;
const HEADER: f64 = 56.0;
const PANEL: f64 = 330.0;
const PLOT_LEFT: f64 = 80.0;
const PLOT_RIGHT: f64 = 520.0;
const PLOT_TOP: f64 = 40.0;
const PLOT_BOTTOM: f64 = 270.0;
const LEGEND_X: f64 = 540.0;
const NOTE_LINE: f64 = 18.0;
/// Characters of a footnote line (12 px sans-serif across the chart's width).
const NOTE_CHARS: usize = 120;

/// Colours: the student's line, the baseline, then the tier lines from the first tier up.
const CANDIDATE: &str = "#1f6fd1";
const BASELINE: &str = "#555555";
const TIERS: [&str; 4] = ["#e08a00", "#3a9a3a", "#8a3ac2", "#c23a5a"];

/// Escapes text for SVG character data and double-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // XML 1.0 allows no other control characters.
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A logarithmic scale from a value range onto a pixel range (either direction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogScale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl LogScale {
    /// Maps `[lo, hi]` (both > 0, lo < hi) onto pixels `from`..`to`.
    pub fn new(lo: f64, hi: f64, from: f64, to: f64) -> LogScale {
        LogScale { lo, hi, from, to }
    }

    /// The pixel of `value` (> 0).
    pub fn at(&self, value: f64) -> f64 {
        let t = (value.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln());
        self.from + t * (self.to - self.from)
    }

    /// Tick values inside the range: powers of ten, with 2 and 5 between them when the range
    /// spans fewer than three decades.
    pub fn ticks(&self) -> Vec<f64> {
        let steps: &[f64] = if self.hi / self.lo < 1e3 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let first = self.lo.log10().floor() as i32;
        let last = self.hi.log10().ceil() as i32;
        (first..=last)
            .flat_map(|e| steps.iter().map(move |s| s * 10f64.powi(e)))
            .filter(|v| *v >= self.lo * (1.0 - 1e-9) && *v <= self.hi * (1.0 + 1e-9))
            .collect()
    }
}

/// Cuts `text` into lines of at most `width` characters at spaces (a longer word stays whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A number as a tick or a tooltip shows it: no trailing zeros (0.05, 2, 1000).
fn number(v: f64) -> String {
    let text = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A point's place on the size axis: n for n×n·n×n, else the cube root of m·k·n.
fn size_value([m, k, n]: [usize; 3]) -> f64 {
    ((m * k * n) as f64).cbrt()
}

/// A size as the axis labels it: `256`, or `m×k×n` when not square.
fn size_label([m, k, n]: [usize; 3]) -> String {
    if m == k && k == n {
        m.to_string()
    } else {
        format!("{m}×{k}×{n}")
    }
}

/// The candidate's legend: the lab's name for it, with where it ran when that was not a CPU
/// (never an emulator's time shown as a GPU's).
fn candidate_label(sweep: &Sweep, item: &ItemResult) -> String {
    match sweep.device {
        SweepDevice::Cpu => sweep.candidate.clone(),
        SweepDevice::EmulatedGpu => format!("{}: {}", sweep.candidate, words::emulated()),
        SweepDevice::Gpu => match &item.mode {
            Some(mode) => format!("{} ({mode})", sweep.candidate),
            None => sweep.candidate.clone(),
        },
    }
}

/// The timed sweeps (with at least one point) and the speed items not timed here.
fn split(report: &Report) -> (Vec<(&ItemResult, &Sweep)>, Vec<&ItemResult>) {
    let mut timed = Vec::new();
    let mut not_timed = Vec::new();
    for item in &report.items {
        match &item.sweep {
            Some(s) if s.points.iter().any(usable) => timed.push((item, s)),
            Some(_) => not_timed.push(item),
            None => {}
        }
    }
    (timed, not_timed)
}

/// A point whose times can go on a log scale.
fn usable(p: &SweepPoint) -> bool {
    [p.baseline_ms, p.candidate_ms]
        .iter()
        .all(|v| v.is_finite() && *v > 0.0)
}

/// The chart as SVG text, or `None` when no speed item was timed.
pub fn svg(report: &Report) -> Option<String> {
    let (timed, not_timed) = split(report);
    if timed.is_empty() {
        return None;
    }
    let extra = timed
        .iter()
        .flat_map(|(_, s)| s.points.iter().filter(|p| !p.graded))
        .map(|p| p.samples)
        .max();
    let graded = timed
        .iter()
        .flat_map(|(_, s)| s.points.iter().filter(|p| p.graded))
        .map(|p| p.samples)
        .max();
    let mut notes: Vec<String> = Vec::new();
    if let (Some(graded), Some(extra)) = (graded, extra) {
        notes.push(words::samples(graded, extra));
    }
    let handover = timed
        .iter()
        .map(|(_, s)| s.handover_ms)
        .filter(|h| h.is_finite() && *h > 0.0)
        .fold(0.0, f64::max);
    if handover > 0.0 {
        notes.push(words::handover(&number(handover)));
    }
    for item in &not_timed {
        notes.push(format!(
            "{}: {} ({}).",
            words::not_timed(),
            item.id,
            item.reason.trim_start_matches("skipped: ")
        ));
    }
    let notes: Vec<String> = notes.iter().flat_map(|n| wrap(n, NOTE_CHARS)).collect();
    let height = HEADER + PANEL * timed.len() as f64 + NOTE_LINE * notes.len() as f64 + 12.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12" data-assignment="{}" data-seed="{}">"#,
        escape(&report.assignment),
        report.seed
    );
    let _ = writeln!(
        out,
        r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="24" font-size="16" font-weight="bold">{}</text>"#,
        escape(&words::title())
    );
    let _ = writeln!(
        out,
        r##"<text x="16" y="44" fill="#444">{}</text>"##,
        escape(&words::subtitle())
    );
    for (index, (item, sweep)) in timed.iter().enumerate() {
        panel(&mut out, HEADER + PANEL * index as f64, item, sweep);
    }
    let top = HEADER + PANEL * timed.len() as f64;
    for (index, note) in notes.iter().enumerate() {
        let _ = writeln!(
            out,
            r##"<text x="16" y="{}" fill="#444" data-note="">{}</text>"##,
            top + NOTE_LINE * (index as f64 + 1.0),
            escape(note)
        );
    }
    out.push_str("</svg>\n");
    Some(out)
}

/// One speed item's panel, its top at `top`.
fn panel(out: &mut String, top: f64, item: &ItemResult, sweep: &Sweep) {
    let points: Vec<&SweepPoint> = sweep.points.iter().filter(|p| usable(p)).collect();
    let mut values: Vec<f64> = Vec::new();
    for p in &points {
        values.extend([p.baseline_ms, p.candidate_ms]);
        values.extend(sweep.tiers.iter().map(|t| p.baseline_ms / t.speedup));
    }
    values.retain(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let sizes: Vec<f64> = points.iter().map(|p| size_value(p.size)).collect();
    let (xlo, xhi) = sizes
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let x = LogScale::new(xlo / 1.3, xhi * 1.3, PLOT_LEFT, PLOT_RIGHT);
    let y = LogScale::new(lo / 1.5, hi * 1.5, top + PLOT_BOTTOM, top + PLOT_TOP);
    let _ = writeln!(
        out,
        r#"<g data-item="{}" data-device="{}">"#,
        escape(&item.id),
        match sweep.device {
            SweepDevice::Cpu => "cpu",
            SweepDevice::Gpu => "gpu",
            SweepDevice::EmulatedGpu => "emulated-gpu",
        }
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="{}" font-size="14" font-weight="bold">{}: {}</text>"#,
        top + 22.0,
        escape(&item.id),
        escape(&item.title)
    );
    // The frame, the grid and the ticks.
    let (fx, fy) = (PLOT_LEFT, top + PLOT_TOP);
    let _ = writeln!(
        out,
        r##"<rect x="{fx}" y="{fy}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        PLOT_RIGHT - PLOT_LEFT,
        PLOT_BOTTOM - PLOT_TOP
    );
    for tick in y.ticks() {
        let py = y.at(tick);
        let _ = writeln!(
            out,
            r##"<line x1="{PLOT_LEFT}" y1="{py:.1}" x2="{PLOT_RIGHT}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            PLOT_LEFT - 6.0,
            py + 4.0,
            number(tick)
        );
    }
    for p in &points {
        let px = x.at(size_value(p.size));
        let label = if p.graded {
            format!("{} ({})", size_label(p.size), words::graded())
        } else {
            size_label(p.size)
        };
        let _ = writeln!(
            out,
            r##"<line x1="{px:.1}" y1="{}" x2="{px:.1}" y2="{}" stroke="#e4e4e4"/><text x="{px:.1}" y="{}" text-anchor="middle">{}</text>"##,
            top + PLOT_TOP,
            top + PLOT_BOTTOM,
            top + PLOT_BOTTOM + 16.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (PLOT_LEFT + PLOT_RIGHT) / 2.0,
        top + PLOT_BOTTOM + 36.0,
        escape(&words::x_axis())
    );
    let (ax, ay) = (24.0, top + (PLOT_TOP + PLOT_BOTTOM) / 2.0);
    let _ = writeln!(
        out,
        r#"<text x="{ax}" y="{ay}" text-anchor="middle" transform="rotate(-90 {ax} {ay})">{}</text>"#,
        escape(&words::y_axis())
    );
    // The tier lines under the data, then the baseline and the student's line.
    let mut legend: Vec<(String, &str, Option<&str>)> = Vec::new();
    for (index, tier) in sweep.tiers.iter().enumerate() {
        let colour = TIERS[index % TIERS.len()];
        let line: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (size_value(p.size), p.baseline_ms / tier.speedup))
            .collect();
        let label = words::tier(tier.speedup, tier.points);
        let _ = writeln!(
            out,
            r#"<polyline data-series="tier" data-speedup="{}" data-points="{}" points="{}" fill="none" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6 4"><title>{}</title></polyline>"#,
            tier.speedup,
            tier.points,
            polyline(&x, &y, &line),
            escape(&label)
        );
        legend.push((label, colour, Some("6 4")));
    }
    let baseline: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (size_value(p.size), p.baseline_ms))
        .collect();
    let candidate: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (size_value(p.size), p.candidate_ms))
        .collect();
    let candidate_name = candidate_label(sweep, item);
    for (series, name, colour, line) in [
        ("baseline", &sweep.baseline, BASELINE, &baseline),
        ("candidate", &candidate_name, CANDIDATE, &candidate),
    ] {
        let _ = writeln!(
            out,
            r#"<g data-series="{series}" data-label="{}"><polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            escape(name),
            polyline(&x, &y, line)
        );
        for (p, &(sx, ms)) in points.iter().zip(line.iter()) {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{}" fill="{colour}" data-size="{}" data-ms="{ms}" data-samples="{}" data-graded="{}"><title>{}: {} ms at {}</title></circle>"#,
                x.at(sx),
                y.at(ms),
                if p.graded { 5.0 } else { 3.5 },
                p.size.map(|d| d.to_string()).join("x"),
                p.samples,
                p.graded,
                escape(name),
                number(ms),
                size_label(p.size)
            );
        }
        out.push_str("</g>\n");
        legend.insert(0, (name.clone(), colour, None));
    }
    // The legend: the student's line first, then the baseline, then the tiers.
    for (index, (label, colour, dash)) in legend.iter().enumerate() {
        let ly = top + PLOT_TOP + 8.0 + 20.0 * index as f64;
        let dash = dash
            .map(|d| format!(r#" stroke-dasharray="{d}""#))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            r#"<line x1="{LEGEND_X}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
            LEGEND_X + 24.0,
            LEGEND_X + 30.0,
            ly + 4.0,
            escape(label)
        );
    }
    out.push_str("</g>\n");
}

/// A polyline's `points` attribute.
fn polyline(x: &LogScale, y: &LogScale, line: &[(f64, f64)]) -> String {
    line.iter()
        .map(|&(sx, ms)| format!("{:.1},{:.1}", x.at(sx), y.at(ms)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The harness's line under the score table, naming where the chart was written.
pub fn written_line(path: &std::path::Path) -> String {
    words::written(path)
}

/// `feedback.md`'s picture of the chart, a relative link to [`FILE_NAME`] beside it (GitHub
/// shows a linked SVG file, not inline SVG nor a `data:` image); `None` without a chart.
pub fn markdown_image(report: &Report) -> Option<String> {
    svg(report).map(|_| format!("![{}]({FILE_NAME})\n", words::image_alt()))
}

/// The step summary's part: a sentence saying the chart cannot be shown there, then its
/// numbers as a Markdown table; `None` without a chart.
pub fn summary(report: &Report) -> Option<String> {
    let (timed, _) = split(report);
    if timed.is_empty() {
        return None;
    }
    let mut out = format!("\n{}\n\n", words::summary_note());
    let _ = writeln!(out, "| item | size | baseline ms | yours ms | speedup |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for (item, sweep) in timed {
        for p in sweep.points.iter().filter(|p| usable(p)) {
            let _ = writeln!(
                out,
                "| `{}` | {}{} | {} | {} | {}× |",
                item.id,
                size_label(p.size),
                if p.graded { " (graded)" } else { "" },
                number(p.baseline_ms),
                number(p.candidate_ms),
                crate::check::speedup::shown(p.baseline_ms / p.candidate_ms)
            );
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{sample_item, BuildStatus, Status, SweepTier};

    fn sweep() -> Sweep {
        let point = |n: usize, baseline_ms, candidate_ms, graded| SweepPoint {
            size: [n, n, n],
            baseline_ms,
            candidate_ms,
            samples: if graded { 5 } else { 3 },
            graded,
        };
        Sweep {
            candidate: "your <fast> & \"quick\"".into(),
            baseline: "the grader's naive triple loop".into(),
            device: SweepDevice::Cpu,
            tiers: vec![
                SweepTier {
                    speedup: 2.0,
                    points: 1.0,
                },
                SweepTier {
                    speedup: 12.0,
                    points: 4.0,
                },
            ],
            points: vec![
                point(32, 0.04, 0.01, false),
                point(64, 0.32, 0.05, false),
                point(128, 2.56, 0.3, false),
                point(256, 20.48, 1.6, true),
            ],
            handover_ms: 0.02,
        }
    }

    fn report(sweeps: Vec<(Option<Sweep>, Status)>) -> Report {
        Report {
            assignment: "matmul".into(),
            build: BuildStatus::Built,
            notes: Vec::new(),
            seed: 7,
            items: sweeps
                .into_iter()
                .enumerate()
                .map(|(i, (sweep, status))| ItemResult {
                    sweep,
                    reason: "skipped: needs a real GPU".into(),
                    ..sample_item(&format!("speed{i}"), 0.0, 4.0, status)
                })
                .collect(),
            execution_time: 1.0,
            sandbox: None,
        }
    }

    /// Every `(name, value)` of the attribute `name` in `svg`.
    fn attributes<'a>(svg: &'a str, name: &str) -> Vec<&'a str> {
        let key = format!(" {name}=\"");
        svg.match_indices(&key)
            .map(|(at, _)| {
                let rest = &svg[at + key.len()..];
                &rest[..rest.find('"').unwrap_or(0)]
            })
            .collect()
    }

    #[test]
    fn a_log_scale_puts_each_decade_the_same_distance_apart() {
        let s = LogScale::new(1.0, 1000.0, 0.0, 300.0);
        assert!((s.at(1.0) - 0.0).abs() < 1e-9);
        assert!((s.at(10.0) - 100.0).abs() < 1e-9);
        assert!((s.at(100.0) - 200.0).abs() < 1e-9);
        assert!((s.at(1000.0) - 300.0).abs() < 1e-9);
        // Upside down, as a y axis is.
        let y = LogScale::new(0.01, 1.0, 250.0, 50.0);
        assert!((y.at(0.1) - 150.0).abs() < 1e-9);
        assert_eq!(s.ticks(), [1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(
            LogScale::new(0.8, 30.0, 0.0, 1.0).ticks(),
            [1.0, 2.0, 5.0, 10.0, 20.0]
        );
    }

    #[test]
    fn long_notes_are_cut_at_spaces() {
        assert_eq!(wrap("aa bb cc dd", 5), ["aa bb", "cc dd"]);
        assert_eq!(wrap("a verylongword b", 4), ["a", "verylongword", "b"]);
        assert!(wrap("", 5).is_empty());
    }

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>\u{7}"),
            "a&lt;b &amp; &quot;c&quot; 'd'&gt; "
        );
        let svg = svg(&report(vec![(Some(sweep()), Status::Passed)])).expect("a chart");
        assert!(
            svg.contains("your &lt;fast&gt; &amp; &quot;quick&quot;"),
            "{svg}"
        );
        assert!(!svg.contains("<fast>"));
    }

    #[test]
    fn each_point_carries_its_numbers_and_sits_where_the_scales_put_it() {
        let svg = svg(&report(vec![(Some(sweep()), Status::Passed)])).expect("a chart");
        let ms: Vec<f64> = attributes(&svg, "data-ms")
            .iter()
            .map(|v| v.parse().expect("a number"))
            .collect();
        assert_eq!(ms, [0.04, 0.32, 2.56, 20.48, 0.01, 0.05, 0.3, 1.6]);
        assert_eq!(
            attributes(&svg, "data-size")[..4],
            ["32x32x32", "64x64x64", "128x128x128", "256x256x256"]
        );
        assert_eq!(attributes(&svg, "data-speedup"), ["2", "12"]);
        // Sizes doubling on a log scale are evenly spaced, and the baseline's times growing 8×
        // per doubling are evenly spaced too.
        let cx: Vec<f64> = attributes(&svg, "cx")
            .iter()
            .map(|v| v.parse().expect("a number"))
            .collect();
        let cy: Vec<f64> = attributes(&svg, "cy")
            .iter()
            .map(|v| v.parse().expect("a number"))
            .collect();
        for w in cx[..4].windows(3) {
            assert!(((w[1] - w[0]) - (w[2] - w[1])).abs() < 0.2, "{cx:?}");
        }
        for w in cy[..4].windows(3) {
            assert!(((w[1] - w[0]) - (w[2] - w[1])).abs() < 0.2, "{cy:?}");
        }
        assert!(cy[0] > cy[3], "a longer time is higher up: {cy:?}");
        // The 2× tier line runs at half the baseline: between it and the 12× line.
        assert!(
            svg.contains("2× faster than the baseline: 1 point"),
            "{svg}"
        );
        assert!(svg.contains("256 (graded size)"));
        assert!(svg.contains("stroke-dasharray=\"6 4\""));
        assert!(svg.contains("less 0.02 ms per run"), "{svg}");
        assert!(
            svg.contains("grading's 5 samples; the other sizes 3 each"),
            "{svg}"
        );
    }

    #[test]
    fn an_emulated_gpu_is_never_shown_as_a_gpu_and_untimed_items_are_named() {
        let mut emulated = sweep();
        emulated.device = SweepDevice::EmulatedGpu;
        let not_timed = Sweep {
            points: Vec::new(),
            ..sweep()
        };
        let svg = svg(&report(vec![
            (Some(emulated), Status::Passed),
            (Some(not_timed), Status::Skipped),
        ]))
        .expect("a chart");
        assert!(
            svg.contains("emulated GPU (not a real speed)"),
            "the emulator's line says so: {svg}"
        );
        assert!(svg.contains("data-device=\"emulated-gpu\""));
        assert!(
            svg.contains("Not on this chart: speed1 (needs a real GPU)."),
            "{svg}"
        );
    }

    #[test]
    fn no_timed_item_means_no_chart_and_no_picture() {
        let r = report(vec![
            (None, Status::Failed),
            (
                Some(Sweep {
                    points: Vec::new(),
                    ..sweep()
                }),
                Status::Skipped,
            ),
        ]);
        assert_eq!(svg(&r), None);
        assert_eq!(markdown_image(&r), None);
        assert_eq!(summary(&r), None);
    }

    #[test]
    fn markdown_links_the_file_and_the_summary_gives_the_numbers_instead() {
        let r = report(vec![(Some(sweep()), Status::Passed)]);
        let image = markdown_image(&r).expect("a picture");
        assert!(
            image.starts_with("![") && image.ends_with("](chart.svg)\n"),
            "{image}"
        );
        let summary = summary(&r).expect("a summary");
        assert!(summary.contains("cannot show the speed chart"), "{summary}");
        assert!(
            summary.contains("| `speed0` | 256 (graded) | 20.48 | 1.6 | 12.8× |"),
            "{summary}"
        );
        assert_eq!(summary.matches("| `speed0` |").count(), 4);
    }
}
