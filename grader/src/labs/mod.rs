//! The labs this grader knows: what each lab's crate is called, which student functions each
//! kind of item may exercise, and the harness (`tests/grade.rs`) its crate is graded with.

pub mod matmul;
pub mod training;

use crate::rubric::ItemKind;

/// What the grader knows about one lab, independent of any submission.
#[derive(Debug)]
pub struct LabInfo {
    /// The lab's name, as in `assignment.toml` (`matmul`).
    pub name: &'static str,
    /// The package name of its crate (`matmul-lab`).
    pub lab_crate: &'static str,
    /// The student functions each item kind may exercise.
    pub functions: &'static [(ItemKind, &'static [&'static str])],
    /// The harness source, `tests/grade.rs`, that official grading puts in every submission.
    pub harness: &'static str,
    /// The lab crate's `Cargo.toml` (the solution's): official builds use its
    /// `[dependencies]`, whatever a submission's manifest says.
    pub manifest: &'static str,
}

impl LabInfo {
    /// The functions an item of `kind` may exercise in this lab.
    pub fn functions_for(&self, kind: ItemKind) -> &'static [&'static str] {
        self.functions
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, f)| *f)
            .unwrap_or(&[])
    }

    /// The crate's library name (`matmul_lab`).
    pub fn lib_name(&self) -> String {
        self.lab_crate.replace('-', "_")
    }
}

/// Every lab.
pub static LABS: &[&LabInfo] = &[&matmul::LAB];

/// Finds a lab by name.
pub fn find(name: &str) -> Option<&'static LabInfo> {
    LABS.iter().copied().find(|l| l.name == name)
}

/// Finds the lab whose crate is `package` (`matmul-lab`).
pub fn find_by_crate(package: &str) -> Option<&'static LabInfo> {
    LABS.iter().copied().find(|l| l.lab_crate == package)
}

/// The names of every lab.
pub fn names() -> Vec<&'static str> {
    LABS.iter().map(|l| l.name).collect()
}
