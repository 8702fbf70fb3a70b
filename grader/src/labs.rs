//! The one place that names the labs: the set this grader is built with, handed down to the
//! engine (which never names a lab). Adding a lab is its module tree in `grader-labs` and one
//! entry in [`LABS`].

pub use grader_engine::lab::{KindInfo, LabInfo, Labs};
#[cfg(feature = "matmul")]
pub use grader_labs::matmul;
#[cfg(feature = "training")]
pub use grader_labs::training;

/// Every lab this grader is built with (all of them, but in a lab crate's own build: its
/// lab only, through the feature of its name).
pub static LABS: Labs = Labs(&[
    #[cfg(feature = "matmul")]
    &matmul::LAB,
    #[cfg(feature = "training")]
    &training::LAB,
]);

/// Finds a lab by name.
pub fn find(name: &str) -> Option<&'static LabInfo> {
    LABS.find(name)
}

/// Finds the lab whose crate is `package` (`matmul-lab`).
pub fn find_by_crate(package: &str) -> Option<&'static LabInfo> {
    LABS.find_by_crate(package)
}

/// The names of every lab.
pub fn names() -> Vec<&'static str> {
    LABS.names()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered lab's embedded rubric parses and names its own lab and crate, and no
    /// two labs share a name or a crate.
    #[test]
    fn every_registered_lab_is_whole_and_unique() {
        for lab in LABS.0 {
            let a = crate::rubric::embedded(lab.name).expect("the embedded rubric parses");
            assert_eq!(a.assignment.name, lab.name);
            assert_eq!(a.assignment.lab_crate, lab.lab_crate);
            assert!(!a.items.is_empty(), "{} has items", lab.name);
            assert!(
                lab.harness.contains("grader::harness::main"),
                "{}",
                lab.name
            );
            assert!(lab.manifest.contains(lab.lab_crate), "{}", lab.name);
        }
        let mut names = names();
        names.dedup();
        assert_eq!(names.len(), LABS.0.len());
        for lab in LABS.0 {
            assert_eq!(find_by_crate(lab.lab_crate).map(|l| l.name), Some(lab.name));
        }
    }
}
