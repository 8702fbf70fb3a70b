//! One result model for every flow: what each item scored and why. The engine fills it in;
//! the renderers on top (the `grader` crate's `report` module: the terminal table,
//! `feedback.md`, Gradescope's `results.json`, the gradebook) only read it.

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
    /// Times at several sizes the grader measured beside a speed item, for the student's speed
    /// chart (never for points); `None` where the item was not timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
}

// A result for a rubric item starts from the item (`ItemResult::failed`, `ItemResult::passed`):
// those constructors live with the item, in `crate::rubric::model`, so this model stands below
// the rubric.
impl ItemResult {
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
        crate::i18n::Lang::ALL.iter().any(|&lang| {
            self.details
                .contains(&crate::i18n::MESSAGES.format_in(lang, "timed-out-marker", &[]))
        })
    }
}

/// A speed item's times against the matrix size, all measured by the supervisor: its own
/// measurement at the graded size and a few more sizes timed only for the chart. The lab names
/// the two lines; renderers draw them with the tier lines (baseline time / tier speedup).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// The candidate's line, as the student reads it (`your matmul_fast`).
    pub candidate: String,
    /// The baseline's line (`the grader's naive triple loop`).
    pub baseline: String,
    /// Where the candidate ran.
    pub device: SweepDevice,
    /// The item's tiers: a tier of speedup `s` is the line baseline time / `s`.
    pub tiers: Vec<SweepTier>,
    /// One point per size, smallest first.
    pub points: Vec<SweepPoint>,
    /// The hand-over's cost per timed run, in milliseconds, subtracted from every time: the
    /// grader times from outside the program, so a shape is kept only when the student's time
    /// is well above it.
    #[serde(default)]
    pub handover_ms: f64,
}

/// Where a sweep's candidate ran, so that an emulator's times are never shown as a GPU's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SweepDevice {
    /// The CPU.
    Cpu,
    /// A real GPU.
    Gpu,
    /// The grader's CPU emulator of a GPU: its times say nothing about a GPU's speed.
    EmulatedGpu,
}

/// A speed tier as a chart draws it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SweepTier {
    /// The speedup over the baseline the tier needs.
    pub speedup: f64,
    /// The points it earns.
    pub points: f64,
}

/// The median times at one shape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The shape `[m, k, n]` multiplied (A is m×k, B is k×n).
    pub size: [usize; 3],
    /// The baseline's median time, in milliseconds.
    pub baseline_ms: f64,
    /// The candidate's median time, in milliseconds.
    pub candidate_ms: f64,
    /// Paired samples behind the medians.
    pub samples: usize,
    /// Whether this is the item's graded measurement (the others were timed for the chart).
    #[serde(default)]
    pub graded: bool,
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

/// Formats points without a trailing `.0` (3, 2.5).
pub fn points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}
