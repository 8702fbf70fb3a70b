//! The rubric model: what a rubric says once read — the assignment, its items, each item's
//! kind-specific part ([`KindSpec`], answered by the lab that owns the kind) — and the keys
//! every item takes. Reading it from TOML is the parent module's job; judging it is
//! [`crate::check`]'s.

use crate::context::GradeContext;
use crate::report::{ItemResult, Status};
use crate::supervisor::SupervisorError;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A whole rubric: which lab it grades and its items, in order.
#[derive(Debug, Clone)]
pub struct Assignment {
    /// Which lab, and how its crate is named.
    pub assignment: AssignmentInfo,
    /// The rubric items, in the order they are graded and reported.
    pub items: Vec<Item>,
    /// Where the rubric came from, for error messages and reports.
    pub source: PathBuf,
    /// The rubric's text, which decides (with the submission) whether a grade is still valid.
    pub text: String,
}

/// The `[assignment]` table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignmentInfo {
    /// The lab's name: `matmul`. Selects the grader's lab module.
    pub name: String,
    /// A human title for reports.
    pub title: String,
    /// The package name of the lab crate (`matmul-lab`); its library is `matmul_lab`.
    pub lab_crate: String,
    /// The language of the students' feedback (`en`, the default, or `zh-TW`); a run's
    /// `--lang` overrides it (see [`crate::i18n`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

/// What a lab's item kind does for the engine: everything the engine needs to know about an
/// item beyond its common keys, answered by the lab that owns the kind (see
/// [`crate::lab`]). The engine never names a kind; it asks the item's spec.
pub trait KindSpec: std::fmt::Debug + Send + Sync {
    /// Whether the item belongs to the GPU track: its worker sees the GPU (every other item
    /// runs with the GPU hidden) and its report says where GPU code ran.
    fn gpu_track(&self) -> bool;
    /// Whether the item measures speed: it then takes the machine to itself while it runs.
    fn measures_speed(&self) -> bool {
        false
    }
    /// What the item needs from the machine to be graded at all.
    fn needs(&self) -> Needs {
        Needs::Nothing
    }
    /// The speed tiers, for speed items.
    fn tiers(&self) -> &[Tier] {
        &[]
    }
    /// How feedback names input case `case` (" on case 2 of 6 (A is 3×4, B is 4×5)"), where
    /// the kind has cases.
    fn describe_case(&self, _case: usize) -> Option<String> {
        None
    }
    /// The lab's part of the item's work order, read back by the lab's worker.
    fn task(&self) -> serde_json::Value;
    /// The most a worker's report for the item may hold (bytes): what a right answer sends,
    /// from the item's shapes where it has them
    /// ([`bound_for_values`](crate::report_size::bound_for_values)), with room for
    /// text. The supervisor reads no more, and a worker whose results come to more sends
    /// their size instead.
    fn report_bytes(&self) -> u64 {
        crate::report_size::DEFAULT_BYTES
    }
    /// Grades the item: runs its workers and judges what they send back.
    fn grade(&self, ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError>;
}

/// What an item needs from the machine to be graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: it runs anywhere.
    Nothing,
    /// A GPU, real or emulated (with `--gpu off` it is left out of the maximum).
    Gpu,
    /// A real GPU (a speed on the emulator says nothing); the policy says what it scores
    /// elsewhere.
    RealGpu(SkipPolicy),
}

/// An item's kind-specific part, shared by every copy of the item.
pub type ItemSpec = std::sync::Arc<dyn KindSpec>;

/// The keys every item takes, whatever its kind.
pub const COMMON_KEYS: &[&str] = &[
    "id",
    "title",
    "kind",
    "function",
    "points",
    "timeout_secs",
    "forbid",
    "require",
];

pub use grader_worker::task::{SkipPolicy, Tier};

/// One `[[item]]`: the keys every item has, and its kind's own keys as its lab read them.
#[derive(Debug, Clone)]
pub struct Item {
    /// Short stable id, used to filter (`cargo test --test grade -- fast_correct`).
    pub id: String,
    /// What the student sees as the item's name.
    pub title: String,
    /// Which check runs (`matmul`, `gpu-timer`, …): a kind of the rubric's lab.
    pub kind: String,
    /// The student function the item exercises.
    pub function: String,
    /// The most the item can earn.
    pub points: f64,
    /// Wall-clock limit for the item's worker process.
    pub timeout_secs: f64,
    /// Identifiers the function (and everything it calls in the crate) must not use.
    pub forbid: Vec<String>,
    /// Text the submission's sources must contain (e.g. `__syncthreads` for a tiled kernel).
    pub require: Vec<String>,
    /// The kind's own keys, read and checked by the lab.
    pub spec: ItemSpec,
}

impl Item {
    /// The item's id as a plain string.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Assignment {
    /// The most points the whole rubric can earn.
    pub fn max_score(&self) -> f64 {
        self.items.iter().map(|i| i.points).sum()
    }

    /// The rubric's language (checked when the rubric was read; English when it names none).
    pub fn language(&self) -> crate::i18n::Lang {
        self.assignment
            .language
            .as_deref()
            .and_then(|l| l.parse().ok())
            .unwrap_or_default()
    }

    /// Finds an item by id.
    pub fn item(&self, id: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.id() == id)
    }
}

/// What is wrong with one of an item's own keys, as its lab reports it.
#[derive(Debug, Clone)]
pub struct KeyError {
    /// The key.
    pub key: &'static str,
    /// What is wrong, in the instructor's terms.
    pub message: String,
}

impl KeyError {
    /// `key` is wrong because `message`.
    pub fn new(key: &'static str, message: impl Into<String>) -> Self {
        KeyError {
            key,
            message: message.into(),
        }
    }
}

/// Reads a kind's own keys (`own` lists them) into its lab's type `T`, with its defaults; a
/// wrong value names the key.
pub fn read_keys<T: serde::de::DeserializeOwned>(
    keys: toml::Table,
    own: &'static [&'static str],
) -> Result<T, KeyError> {
    let read = |keys: toml::Table| -> Result<T, String> {
        toml::Value::Table(keys)
            .try_into()
            .map_err(|e: toml::de::Error| e.message().trim().to_string())
    };
    read(keys.clone()).map_err(|message| {
        // A type error does not name its key: it is the key whose removal changes the error.
        let named = own
            .iter()
            .copied()
            .find(|k| message.contains(&format!("`{k}`")));
        let key = named
            .or_else(|| {
                own.iter().copied().find(|k| {
                    let mut without = keys.clone();
                    without.remove(*k).is_some() && read(without).err() != Some(message.clone())
                })
            })
            .unwrap_or("item");
        KeyError { key, message }
    })
}

/// Results start from the item they grade.
impl ItemResult {
    /// A result with no points, for any failure.
    pub fn failed(item: &Item, reason: String, details: String) -> Self {
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
            sweep: None,
        }
    }

    /// A result with full points.
    pub fn passed(item: &Item, reason: String, details: String) -> Self {
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
            sweep: None,
        }
    }
}
