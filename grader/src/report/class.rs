//! The instructor's view of a whole class, as numbers: [`ClassSummary::new`] takes each
//! student's gradebook [`Row`] (and what only this view shows: the build time, the link to the
//! feedback) and computes the score histogram, each item's pass rate, the measured speedups,
//! the submissions refused or flagged and the slowest builds; the batch adds which submissions
//! share code ([`crate::similarity`]). [`super::class_html`] renders it.
//!
//! Every total comes from [`gradebook::cells`], the function the CSV gradebook writes its
//! cells with, so the page and the gradebook show the same strings; the histogram bins those
//! very strings.

use super::gradebook::{self, Row};
use super::{points, Status};
use crate::rubric::Item;
use crate::similarity::SimilaritySection;

/// How many of the slowest builds the summary keeps.
pub const SLOWEST_BUILDS: usize = 10;

/// One student as the class summary reads them.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Their gradebook row (name, report, status cell, when graded).
    pub row: Row<'a>,
    /// How grading ended, in the gradebook's word (`graded`, `refused`, …).
    pub outcome: &'a str,
    /// Why they could not be graded, in full, when they could not.
    pub error: Option<&'a str>,
    /// Seconds their build took, when it was timed.
    pub build_seconds: Option<f64>,
    /// Their feedback file, relative to the page: the path's segments, not yet encoded.
    pub feedback: Vec<String>,
}

/// The class, computed for the page.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSummary {
    /// The lab's name (`matmul`).
    pub lab: String,
    /// The assignment's title.
    pub title: String,
    /// Every student, by name.
    pub students: Vec<StudentLine>,
    /// The totals' histogram, lowest bin first; empty when no student has a total.
    pub histogram: Vec<Bin>,
    /// The points possible, as the gradebook writes them (the largest of the students' maxima).
    pub max: String,
    /// Each rubric item's pass rate, in rubric order.
    pub items: Vec<ItemRate>,
    /// The measured speedups of each item that has any, in rubric order.
    pub speedups: Vec<Speedups>,
    /// The submissions refused, not compiled, timed out, not graded, or with notes.
    pub flagged: Vec<Flagged>,
    /// The slowest builds (at most [`SLOWEST_BUILDS`]), slowest first.
    pub slowest_builds: Vec<BuildTime>,
    /// How many builds were timed in all.
    pub builds_timed: usize,
    /// Which submissions share code (`None`: not asked for; the batch sets it after
    /// [`ClassSummary::new`]).
    pub similarity: Option<SimilaritySection>,
}

/// One student's line: the gradebook's strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StudentLine {
    /// The student (their folder's name, as they chose it: escape it).
    pub name: String,
    /// The gradebook's status cell.
    pub status: String,
    /// The gradebook's total cell (empty when not graded).
    pub total: String,
    /// The gradebook's max cell (empty when not graded).
    pub max: String,
    /// Their feedback file, relative to the page, by segments.
    pub feedback: Vec<String>,
}

/// One bar of the histogram: the totals `lo ≤ total < hi`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    /// The lowest total it holds.
    pub lo: f64,
    /// The first total it no longer holds.
    pub hi: f64,
    /// Its label (`8–12`, or `32` for a bin of the maximum alone).
    pub label: String,
    /// How many students' totals are in it.
    pub count: usize,
}

/// One item's pass rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRate {
    /// The rubric id.
    pub id: String,
    /// The rubric title.
    pub title: String,
    /// Students with full points on it.
    pub passed: usize,
    /// Students graded on it (with a report, not skipped).
    pub graded: usize,
    /// `passed` in percent of `graded`, rounded; `None` when nobody was graded on it.
    pub percent: Option<u32>,
}

/// The speedups measured on one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Speedups {
    /// The rubric id.
    pub id: String,
    /// The rubric title.
    pub title: String,
    /// Each student's speedup, slowest first.
    pub values: Vec<(String, f64)>,
}

/// A submission the instructor should look at, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flagged {
    /// The student.
    pub student: String,
    /// How grading ended, in the gradebook's word.
    pub outcome: String,
    /// Why, one text each (the record's error, the items' reasons, the notes).
    pub reasons: Vec<String>,
}

/// One timed build.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildTime {
    /// The student.
    pub student: String,
    /// Seconds it took.
    pub seconds: f64,
}

/// How many item reasons a flagged submission shows at most (a refused one has the same
/// reason on every item).
const REASONS: usize = 3;

impl ClassSummary {
    /// Computes the summary of `entries` for the rubric `items` of lab `lab` (`title`).
    pub fn new(lab: &str, title: &str, items: &[Item], entries: &[Entry<'_>]) -> Self {
        let ids: Vec<String> = items.iter().map(|i| i.id().to_string()).collect();
        let cells: Vec<gradebook::Cells> = entries
            .iter()
            .map(|e| gradebook::cells(&ids, e.row.report))
            .collect();
        let students = entries
            .iter()
            .zip(&cells)
            .map(|(e, c)| StudentLine {
                name: e.row.student.to_string(),
                status: e.row.status.clone(),
                total: c.total.clone(),
                max: c.max.clone(),
                feedback: e.feedback.clone(),
            })
            .collect();
        // The histogram bins the gradebook's own strings, read back.
        let totals: Vec<f64> = cells.iter().filter_map(|c| c.total.parse().ok()).collect();
        let max = cells
            .iter()
            .filter_map(|c| c.max.parse::<f64>().ok())
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        let histogram = match max {
            Some(max) if !totals.is_empty() => bins(&totals, max),
            _ => Vec::new(),
        };
        let rates = items
            .iter()
            .map(|item| {
                let results = entries
                    .iter()
                    .filter_map(|e| e.row.report)
                    .filter_map(|r| r.items.iter().find(|i| i.id == item.id()))
                    .filter(|i| i.status != Status::Skipped);
                let (graded, passed) = results.fold((0, 0), |(g, p), i| {
                    (g + 1, p + usize::from(i.status == Status::Passed))
                });
                ItemRate {
                    id: item.id().to_string(),
                    title: item.title.clone(),
                    passed,
                    graded,
                    percent: (graded > 0)
                        .then(|| (100.0 * passed as f64 / graded as f64).round() as u32),
                }
            })
            .collect();
        let speedups = items
            .iter()
            .filter_map(|item| {
                let mut values: Vec<(String, f64)> = entries
                    .iter()
                    .filter_map(|e| {
                        let result = e.row.report?.items.iter().find(|i| i.id == item.id())?;
                        Some((e.row.student.to_string(), result.speedup?))
                    })
                    .filter(|(_, s)| s.is_finite())
                    .collect();
                values.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
                (!values.is_empty()).then(|| Speedups {
                    id: item.id().to_string(),
                    title: item.title.clone(),
                    values,
                })
            })
            .collect();
        let flagged = entries.iter().filter_map(flag).collect();
        let mut builds: Vec<BuildTime> = entries
            .iter()
            .filter_map(|e| {
                Some(BuildTime {
                    student: e.row.student.to_string(),
                    seconds: e.build_seconds.filter(|s| s.is_finite())?,
                })
            })
            .collect();
        let builds_timed = builds.len();
        builds.sort_by(|a, b| {
            b.seconds
                .total_cmp(&a.seconds)
                .then_with(|| a.student.cmp(&b.student))
        });
        builds.truncate(SLOWEST_BUILDS);
        ClassSummary {
            lab: lab.to_string(),
            title: title.to_string(),
            students,
            histogram,
            max: max.map(points).unwrap_or_default(),
            items: rates,
            speedups,
            flagged,
            slowest_builds: builds,
            builds_timed,
            similarity: None,
        }
    }
}

/// The histogram of `totals` out of `max`: about ten bins of a whole number of points each,
/// the last one holding the maximum.
fn bins(totals: &[f64], max: f64) -> Vec<Bin> {
    let width = (max / 10.0).ceil().max(1.0);
    let count = (max / width).floor() as usize + 1;
    (0..count)
        .map(|k| {
            let lo = k as f64 * width;
            let hi = lo + width;
            let label = if lo >= max || width == 1.0 {
                points(lo)
            } else if hi > max {
                format!("{}–{}", points(lo), points(max))
            } else {
                format!("{}–{}", points(lo), points(hi))
            };
            Bin {
                lo,
                hi,
                label,
                count: totals.iter().filter(|t| lo <= **t && **t < hi).count(),
            }
        })
        .collect()
}

/// Whether `entry` is refused, not compiled, timed out, not graded or has notes, and why.
fn flag(entry: &Entry<'_>) -> Option<Flagged> {
    let mut reasons = Vec::new();
    if let Some(error) = entry.error {
        reasons.push(error.to_string());
    }
    if let Some(report) = entry.row.report {
        let failing = report
            .items
            .iter()
            .filter(|i| i.status == Status::Failed && !i.reason.is_empty());
        match entry.outcome {
            "graded" => {}
            "timed-out" => reasons.extend(
                failing
                    .filter(|i| i.timed_out())
                    .map(|i| format!("{}: {}", i.id, i.reason)),
            ),
            _ => {
                for i in failing {
                    if reasons.len() < REASONS && !reasons.contains(&i.reason) {
                        reasons.push(i.reason.clone());
                    }
                }
            }
        }
        reasons.extend(report.notes.iter().cloned());
    }
    (entry.outcome != "graded" || !reasons.is_empty()).then(|| Flagged {
        student: entry.row.student.to_string(),
        outcome: entry.outcome.to_string(),
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_cover_every_total_once_and_the_maximum_alone() {
        let totals = [0.0, 3.5, 4.0, 31.5, 32.0, 32.0];
        let bins = bins(&totals, 32.0);
        assert_eq!(bins.len(), 9);
        assert_eq!((bins[0].lo, bins[0].hi), (0.0, 4.0));
        assert_eq!(bins[0].count, 2);
        assert_eq!(bins[1].count, 1);
        assert_eq!(bins[7].label, "28–32");
        assert_eq!(bins[7].count, 1);
        assert_eq!(bins[8].label, "32");
        assert_eq!(bins[8].count, 2);
        assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), totals.len());
        let small = super::bins(&[1.0, 2.5], 5.0);
        assert_eq!(small.len(), 6);
        assert_eq!(small[2].label, "2");
        assert_eq!(small[2].count, 1);
        let odd = super::bins(&[25.0], 25.0);
        assert_eq!(odd.last().map(|b| b.label.as_str()), Some("24–25"));
        assert_eq!(odd.last().map(|b| b.count), Some(1));
    }
}
