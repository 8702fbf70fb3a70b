//! What the engine knows of a lab: the interface every lab fills in. A lab (in the
//! `grader-labs` crate) is one module tree: its item kinds (their keys, the student functions
//! they may exercise, how they are judged), its worker side and its feedback. The engine
//! reaches a lab only through [`LabInfo`] and the item specs it reads, and never names one:
//! the set of labs ([`Labs`]) is handed down by the `grader` crate, the one place that lists
//! them.

use super::model::{ItemSpec, KeyError};

/// What the grader knows about one lab, independent of any submission.
#[derive(Debug)]
pub struct LabInfo {
    /// The lab's name, as in `assignment.toml` (`matmul`).
    pub name: &'static str,
    /// The package name of its crate (`matmul-lab`).
    pub lab_crate: &'static str,
    /// Its item kinds.
    pub kinds: &'static [KindInfo],
    /// Reads an item's own keys (those of kind `kind`, an item worth `points`) into its spec,
    /// or says which key is wrong.
    pub read_item: fn(kind: &str, keys: toml::Table, points: f64) -> Result<ItemSpec, KeyError>,
    /// Its rubric, `assignments/<lab>/assignment.toml`, embedded in the grader.
    pub rubric: &'static str,
    /// The harness source, `tests/grade.rs`, that official grading puts in every submission.
    pub harness: &'static str,
    /// The lab crate's `Cargo.toml` (the solution's): official builds use its
    /// `[dependencies]`, whatever a submission's manifest says.
    pub manifest: &'static str,
    /// Serves a yardstick order (a speed item's baseline, [`WorkOrder::yardstick`]) with the
    /// grader's own code only: official grading runs it in the grader's binary, a process
    /// with no submission code in it, so nothing a submission runs can slow the baseline
    /// from inside. An order that is not a yardstick's is refused.
    ///
    /// [`WorkOrder::yardstick`]: crate::protocol::WorkOrder::yardstick
    pub yardstick: Yardstick,
}

/// A lab's baseline runner: [`LabInfo::yardstick`].
pub type Yardstick = fn(
    &crate::protocol::WorkOrder,
    &mut crate::stopwatch::Checkpoints,
) -> Result<crate::protocol::Outcome, String>;

/// One kind of rubric item of a lab, as a rubric writes it.
#[derive(Debug)]
pub struct KindInfo {
    /// How a rubric spells it (`gpu-matmul`).
    pub label: &'static str,
    /// The keys only items of this kind take, beside the common ones.
    pub keys: &'static [&'static str],
    /// The student functions an item of this kind may exercise.
    pub functions: &'static [&'static str],
}

impl LabInfo {
    /// The kind a rubric calls `label`.
    pub fn kind(&self, label: &str) -> Option<&'static KindInfo> {
        self.kinds.iter().find(|k| k.label == label)
    }

    /// The crate's library name (`matmul_lab`).
    pub fn lib_name(&self) -> String {
        self.lab_crate.replace('-', "_")
    }
}

/// The labs a grader was built with, handed down from the top: the engine looks a rubric's
/// lab up here and nowhere else.
#[derive(Debug, Clone, Copy)]
pub struct Labs(pub &'static [&'static LabInfo]);

impl Labs {
    /// Finds a lab by name.
    pub fn find(&self, name: &str) -> Option<&'static LabInfo> {
        self.0.iter().copied().find(|l| l.name == name)
    }

    /// Finds the lab whose crate is `package` (`matmul-lab`).
    pub fn find_by_crate(&self, package: &str) -> Option<&'static LabInfo> {
        self.0.iter().copied().find(|l| l.lab_crate == package)
    }

    /// The names of every lab.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|l| l.name).collect()
    }
}
