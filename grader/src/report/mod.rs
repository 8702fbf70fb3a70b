//! The renderers of the engine's one result model ([`grader_engine::report`], re-exported
//! here): [`table`] for a terminal, [`chart`] for the student's speed chart (SVG),
//! [`markdown`] for `feedback.md`, [`gradescope`] for Gradescope's `results.json`; a class's
//! reports become the gradebook ([`gradebook`]) and the class report ([`class`], rendered by
//! [`class_html`]). They read finished reports and decide nothing.

pub mod chart;
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

pub use grader_engine::report::*;

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
        sweep: None,
    }
}
