//! `grader calibrate`: the rubric's speed tiers checked on the machine that will grade. The
//! reference solution's speed items are graded several times (fresh seeds) and, for each, the
//! spread of its measured speedups is set against the tiers' edges. An edge inside the spread
//! means an honest student's grade flips from run to run on this machine: the instructor moves
//! the edge, or accepts it knowingly. Tiers are the instructor's choice; saying when one cannot
//! hold is the grader's.

use crate::grade::{grade, GradeOptions, Target};
use crate::report::Status;
use crate::rubric::Assignment;
use grader_engine::event::Event;
use std::fmt::Write as _;
use std::path::Path;

/// How far from the spread a tier edge must lie to be called clear: 10%, about the
/// run-to-run spread of one sampled speedup on an idle machine (a fifth of the edge's own
/// width, so the nearest edge is reported with its distance either way).
pub const CLEAR_MARGIN: f64 = 1.10;

/// One speed item's calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemCalibration {
    /// The item's id.
    pub id: String,
    /// The tiers' edges (speedups), lowest first.
    pub edges: Vec<f64>,
    /// The speedups measured, one per run that measured one.
    pub speedups: Vec<f64>,
    /// The points each run gave.
    pub points: Vec<f64>,
    /// Why runs gave no speedup (the backend cannot measure it, the machine was busy), once
    /// each.
    pub not_measured: Vec<String>,
}

/// What the spread of an item's speedups says about its tiers.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No run measured a speedup.
    NotMeasured,
    /// A tier edge lies inside the spread (lowest, highest): the grade flips.
    EdgeInside(f64),
    /// The nearest edge lies within [`CLEAR_MARGIN`] of the spread.
    EdgeClose(f64),
    /// The nearest edge (if any) lies clear of the spread.
    Clear(Option<f64>),
}

impl ItemCalibration {
    /// The lowest and highest speedup measured, if any was.
    fn spread(&self) -> Option<(f64, f64)> {
        let lo = self.speedups.iter().copied().reduce(f64::min)?;
        let hi = self.speedups.iter().copied().reduce(f64::max)?;
        Some((lo, hi))
    }

    /// The spread's verdict against the tiers.
    pub fn verdict(&self) -> Verdict {
        let Some((lo, hi)) = self.spread() else {
            return Verdict::NotMeasured;
        };
        if let Some(&edge) = self.edges.iter().find(|&&e| lo <= e && e <= hi) {
            return Verdict::EdgeInside(edge);
        }
        let distance = |e: f64| distance(e, (lo, hi));
        let nearest = self
            .edges
            .iter()
            .copied()
            .min_by(|a, b| distance(*a).total_cmp(&distance(*b)));
        match nearest {
            Some(e) if distance(e) < CLEAR_MARGIN => Verdict::EdgeClose(e),
            other => Verdict::Clear(other),
        }
    }
}

/// How many times farther than the spread's nearer end an edge outside it lies.
fn distance(edge: f64, (lo, hi): (f64, f64)) -> f64 {
    if edge > hi {
        edge / hi
    } else {
        lo / edge
    }
}

/// Grades the solution at `path` `runs` times on the speed items of `assignment` alone, with
/// `options` (its seed is the first run's; each run takes the next).
pub fn calibrate(
    path: &Path,
    assignment: &Assignment,
    options: &GradeOptions,
    runs: usize,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<ItemCalibration>, String> {
    let speed: Vec<&crate::rubric::Item> = assignment
        .items
        .iter()
        .filter(|i| i.spec.measures_speed())
        .collect();
    if speed.is_empty() {
        return Err(format!(
            "the rubric `{}` has no speed item to calibrate",
            assignment.assignment.name
        ));
    }
    let mut items: Vec<ItemCalibration> = speed
        .iter()
        .map(|item| {
            let mut edges: Vec<f64> = item.spec.tiers().iter().map(|t| t.speedup).collect();
            edges.sort_by(f64::total_cmp);
            ItemCalibration {
                id: item.id().to_string(),
                edges,
                speedups: Vec::new(),
                points: Vec::new(),
                not_measured: Vec::new(),
            }
        })
        .collect();
    let mut options = options.clone();
    options.only = Some(items.iter().map(|i| i.id.clone()).collect());
    for run in 0..runs {
        let mut this = options.clone();
        this.seed = options.seed.wrapping_add(run as u64);
        let report = grade(
            &Target::Crate(path.to_path_buf()),
            assignment,
            &this,
            on_event,
        )
        .map_err(|e| e.to_string())?;
        if report.build != crate::report::BuildStatus::Built {
            return Err(format!(
                "{} does not build: calibrate with the lab's solution",
                path.display()
            ));
        }
        for result in &report.items {
            let Some(item) = items.iter_mut().find(|i| i.id == result.id) else {
                continue;
            };
            match result.speedup {
                Some(s) if result.status != Status::Skipped => item.speedups.push(s),
                _ => {
                    if !item.not_measured.contains(&result.reason) {
                        item.not_measured.push(result.reason.clone());
                    }
                }
            }
            item.points.push(result.score);
        }
    }
    Ok(items)
}

/// The calibration as the instructor reads it: one paragraph an item.
pub fn render(items: &[ItemCalibration], runs: usize) -> String {
    let mut out = String::new();
    for item in items {
        let edges: Vec<String> = item.edges.iter().map(|e| format!("{e}×")).collect();
        let _ = write!(out, "{}: tiers at {}", item.id, edges.join(", "));
        let Some((lo, hi)) = item.spread() else {
            let _ = writeln!(
                out,
                "; not measured on this machine in {runs} runs ({})",
                item.not_measured.join("; ")
            );
            continue;
        };
        let mut points = item.points.clone();
        points.sort_by(f64::total_cmp);
        points.dedup();
        let points: Vec<String> = points.iter().map(|p| crate::report::points(*p)).collect();
        let _ = write!(
            out,
            "; the solution measured {lo:.1}× to {hi:.1}× in {} of {runs} runs, scoring {}",
            item.speedups.len(),
            points.join(" or ")
        );
        let verdict = match item.verdict() {
            Verdict::EdgeInside(e) => format!(
                "UNRELIABLE: the {e}× edge lies inside the spread, so the same code scores \
                 differently from run to run here; move the edge clear of {lo:.1}×–{hi:.1}× \
                 (by {CLEAR_MARGIN}× at least) or accept that it flips"
            ),
            Verdict::EdgeClose(e) => format!(
                "CLOSE: the {e}× edge lies within {CLEAR_MARGIN}× of the spread; a busier or \
                 slower run may cross it"
            ),
            Verdict::Clear(Some(e)) => format!(
                "clear: the nearest edge, {e}×, lies {:.2}× away from the spread",
                distance(e, (lo, hi))
            ),
            Verdict::Clear(None) | Verdict::NotMeasured => "clear: no tiers".into(),
        };
        let _ = writeln!(out, ".\n  {verdict}");
        if !item.not_measured.is_empty() {
            let _ = writeln!(
                out,
                "  {} run(s) measured nothing: {}",
                runs - item.speedups.len(),
                item.not_measured.join("; ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(speedups: &[f64]) -> ItemCalibration {
        ItemCalibration {
            id: "fast_speedup".into(),
            edges: vec![2.0, 5.0, 12.0],
            speedups: speedups.to_vec(),
            points: vec![4.0; speedups.len()],
            not_measured: Vec::new(),
        }
    }

    /// The spread measured here with other work running (5.9–11.8× against a top edge of 12×)
    /// is close; one that reaches across an edge is unreliable; one far from every edge is
    /// clear, with the nearest edge's distance.
    #[test]
    fn a_tier_edge_inside_or_near_the_spread_is_reported() {
        assert_eq!(item(&[5.9, 11.8]).verdict(), Verdict::EdgeClose(12.0));
        assert_eq!(item(&[5.9, 12.4]).verdict(), Verdict::EdgeInside(12.0));
        assert_eq!(item(&[4.8, 7.0]).verdict(), Verdict::EdgeInside(5.0));
        assert_eq!(item(&[23.0, 40.0]).verdict(), Verdict::Clear(Some(12.0)));
        assert_eq!(item(&[]).verdict(), Verdict::NotMeasured);
        let text = render(&[item(&[4.8, 7.0])], 2);
        assert!(text.contains("UNRELIABLE: the 5× edge"), "{text}");
        let text = render(&[item(&[23.0, 40.0])], 2);
        assert!(
            text.contains("clear: the nearest edge, 12×, lies 1.92× away"),
            "{text}"
        );
    }
}
