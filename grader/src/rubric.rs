//! The engine's rubric model ([`grader_engine::rubric`], re-exported here) bound to this
//! grader's labs ([`crate::labs::LABS`]): the flows read rubrics through these functions and
//! never hand the list of labs around themselves.

pub use grader_engine::rubric::*;

use crate::labs::LABS;
use std::path::Path;

/// The names of the embedded rubrics (one per lab, embedded so that grading needs no files
/// on disk and a student cannot edit the rubric their `cargo test` uses).
pub fn known_names() -> Vec<&'static str> {
    grader_engine::rubric::known_names(LABS)
}

/// Loads the embedded rubric of a lab by name (`matmul`).
pub fn embedded(name: &str) -> Result<Assignment, RubricError> {
    grader_engine::rubric::embedded(LABS, name)
}

/// Loads a rubric from a file.
pub fn load(file: &Path) -> Result<Assignment, RubricError> {
    grader_engine::rubric::load(LABS, file)
}

/// Resolves `--assignment`: a path to a `.toml` file or a directory holding
/// `assignment.toml`, else the name of an embedded rubric.
pub fn resolve(spec: &str) -> Result<Assignment, RubricError> {
    grader_engine::rubric::resolve(LABS, spec)
}

/// Parses and validates rubric text; `file` is only used in messages.
pub fn parse(text: &str, file: &Path) -> Result<Assignment, RubricError> {
    grader_engine::rubric::parse(LABS, text, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_that_names_a_tiered_items_classroom_step_is_refused_either_way() {
        let text = embedded("matmul").unwrap().text;
        // Before the tiered item: its steps would take the earlier id.
        let before = text.replacen("id = \"naive_correct\"", "id = \"fast_speedup_2\"", 1);
        let message = parse(&before, Path::new("a.toml")).unwrap_err().to_string();
        assert!(
            message.contains("item `fast_speedup`")
                && message.contains("`fast_speedup_2` is already the id of an earlier item"),
            "{message}"
        );
        // After it: the id takes a step's name.
        let after = text.replacen("id = \"gpu_correct\"", "id = \"fast_speedup_1\"", 1);
        let message = parse(&after, Path::new("a.toml")).unwrap_err().to_string();
        assert!(
            message.contains("`fast_speedup_1` is the name of a Classroom step of the tiered item `fast_speedup`"),
            "{message}"
        );
    }

    #[test]
    fn the_embedded_matmul_rubric_is_valid() {
        let a = embedded("matmul").expect("embedded rubric parses");
        assert_eq!(a.assignment.lab_crate, "matmul-lab");
        assert!(a.max_score() > 0.0);
    }

    #[test]
    fn the_embedded_training_rubric_is_valid_and_refuses_a_matmul_key() {
        let a = embedded("training").expect("embedded rubric parses");
        assert_eq!(a.assignment.lab_crate, "training-lab");
        assert_eq!(a.max_score(), 46.0);
        let text = a.text.replacen(
            "lr = 0.01\nsteps = 3",
            "lr = 0.01\nsteps = 3\ntolerance = 2",
            1,
        );
        assert_ne!(text, a.text);
        let msg = parse(&text, Path::new("t.toml")).unwrap_err().to_string();
        assert!(
            msg.contains("unknown key `tolerance`; an item of kind `optimizer` takes"),
            "{msg}"
        );
    }

    #[test]
    fn a_key_of_another_kind_names_its_kinds_the_file_and_the_line() {
        let text = embedded_text().replacen(
            "kind = \"cpu-timer\"",
            "kind = \"cpu-timer\"\ntolerance = 2.0",
            1,
        );
        assert_ne!(text, embedded_text(), "the rubric has a cpu-timer item");
        let err = parse(&text, Path::new("x/assignment.toml")).expect_err("refused");
        let msg = err.to_string();
        let line: usize = msg
            .split(':')
            .nth(1)
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        assert_eq!(
            text.lines().nth(line.saturating_sub(1)),
            Some("tolerance = 2.0"),
            "{msg}"
        );
        assert!(
            msg.contains(
                "`tolerance` is a key of matmul, gpu-matmul, batched-matmul and \
                 gpu-batched-matmul items; this item is `cpu-timer`"
            ),
            "{msg}"
        );
    }

    #[test]
    fn a_misspelled_key_names_file_line_and_key() {
        let text = embedded_text().replacen("points = ", "pointz = ", 1);
        let err = parse(&text, Path::new("x/assignment.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("x/assignment.toml:"), "{msg}");
        assert!(msg.contains("pointz"), "{msg}");
        let line: usize = msg.split(':').nth(1).unwrap().parse().unwrap();
        assert_eq!(
            text.lines()
                .nth(line - 1)
                .unwrap()
                .trim_start()
                .split(' ')
                .next(),
            Some("pointz")
        );
    }

    #[test]
    fn a_wrong_type_is_reported_with_its_line() {
        let text = embedded_text().replacen("points = 3", "points = \"three\"", 1);
        let msg = parse(&text, Path::new("a.toml")).unwrap_err().to_string();
        assert!(msg.contains("points = \"three\""), "{msg}");
    }

    #[test]
    fn semantic_errors_name_the_item_and_key() {
        let text = embedded_text().replacen(
            "function = \"matmul_fast\"",
            "function = \"matmul_fats\"",
            1,
        );
        let msg = parse(&text, Path::new("a.toml")).unwrap_err().to_string();
        assert!(
            msg.contains("key `function`") && msg.contains("matmul_fats"),
            "{msg}"
        );
    }

    #[test]
    fn an_unknown_assignment_lists_the_known_ones() {
        let msg = resolve("nope").unwrap_err().to_string();
        assert!(msg.contains("matmul"), "{msg}");
    }

    fn embedded_text() -> String {
        grader_labs::matmul::LAB.rubric.to_string()
    }
}
