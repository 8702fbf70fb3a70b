//! One result model for every flow; [`table`] renders it for a terminal and [`gradescope`] as
//! Gradescope's `results.json`; a class's reports become the gradebook ([`gradebook`]) and the
//! class report ([`class`], rendered by [`class_html`]).

#[cfg(feature = "cli")]
pub mod class;
#[cfg(feature = "cli")]
pub mod class_html;
pub mod escape;
#[cfg(feature = "cli")]
pub mod gradebook;
pub mod gradescope;
pub mod markdown;
pub mod table;

use serde::{Deserialize, Serialize};

/// How an item ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Full points.
    Passed,
    /// Some points (a lower speedup tier).
    Partial,
    /// No points.
    Failed,
    /// Not graded here (and, per the rubric's policy, not counted).
    Skipped,
}

/// The grade of one rubric item.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ItemResult {
    /// The rubric id.
    pub id: String,
    /// The rubric title.
    pub title: String,
    /// Points earned.
    pub score: f64,
    /// Points possible (0 when a skipped item is removed from the maximum).
    pub max_score: f64,
    /// How it ended.
    pub status: Status,
    /// One line for the score table.
    pub reason: String,
    /// The full feedback: what was checked, what went wrong, a hint.
    pub details: String,
    /// Where a GPU item ran (`emulated GPU`, `real GPU: …`); `None` for CPU items.
    pub mode: Option<String>,
    /// The speedup the grader measured, for speed items that were timed (leaderboards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
}

impl ItemResult {
    /// A result with no points, for any failure.
    pub fn failed(item: &crate::rubric::Item, reason: String, details: String) -> Self {
        ItemResult {
            id: item.id().to_string(),
            title: item.title.clone(),
            score: 0.0,
            max_score: item.points,
            status: Status::Failed,
            reason,
            details,
            mode: None,
            speedup: None,
        }
    }

    /// Sets the points earned (a speedup tier's) and the status they mean: all of them
    /// passed, some partial, none failed.
    pub fn set_score(&mut self, points: f64) {
        self.score = points;
        self.status = if points >= self.max_score {
            Status::Passed
        } else if points > 0.0 {
            Status::Partial
        } else {
            Status::Failed
        };
    }

    /// Whether the item's worker ran past its time limit (the supervisor's words for it).
    pub fn timed_out(&self) -> bool {
        self.details.contains("did not finish within")
    }

    /// A result with full points.
    pub fn passed(item: &crate::rubric::Item, reason: String, details: String) -> Self {
        ItemResult {
            id: item.id().to_string(),
            title: item.title.clone(),
            score: item.points,
            max_score: item.points,
            status: Status::Passed,
            reason,
            details,
            mode: None,
            speedup: None,
        }
    }
}

/// A whole grading run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// The lab's name.
    pub assignment: String,
    /// How the submission's build ended.
    #[serde(default)]
    pub build: BuildStatus,
    /// What official grading ignored or imposed in the submission (a changed `tests/grade.rs`,
    /// dependencies the lab does not list), one sentence each, for the student's feedback.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The seed the inputs came from.
    pub seed: u64,
    /// Every graded item, in rubric order.
    pub items: Vec<ItemResult>,
    /// Seconds the grading took (building included for the CLI).
    pub execution_time: f64,
    /// What protected the run from the submission (the workers' sandbox), in one line;
    /// `None` when no worker ran.
    #[serde(default)]
    pub sandbox: Option<String>,
}

/// How building a submission ended, for gradebooks and summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildStatus {
    /// It built (or it is the running test binary), and its items were graded.
    #[default]
    Built,
    /// It did not compile: every item scored 0 with the compiler's first error.
    NotCompiled,
    /// It contains code a lab may not (`#[no_mangle]`, assembly, foreign functions): every
    /// item scored 0 with the file and line.
    Refused,
}

impl Report {
    /// Points earned.
    pub fn score(&self) -> f64 {
        self.items.iter().map(|i| i.score).sum()
    }

    /// Points possible.
    pub fn max_score(&self) -> f64 {
        self.items.iter().map(|i| i.max_score).sum()
    }
}

/// A result for renderer tests: `id`, its title `"<id> title"`, the details `"<id> details"`.
#[cfg(test)]
pub(crate) fn sample_item(id: &str, score: f64, max: f64, status: Status) -> ItemResult {
    ItemResult {
        id: id.into(),
        title: format!("{id} title"),
        score,
        max_score: max,
        status,
        reason: String::new(),
        details: format!("{id} details"),
        mode: None,
        speedup: None,
    }
}

/// Formats points without a trailing `.0` (3, 2.5).
pub fn points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}
