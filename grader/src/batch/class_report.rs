//! The class report of a batch: one static HTML page beside the gradebook, named after it
//! (`grades.csv` → `grades.html`, see [`path_beside`]), written by [`write`] from the same
//! records and through the same cells as the gradebook, once at the end of `grader batch` and
//! by `grader collect`. [`crate::report::class`] computes it; [`crate::report::class_html`]
//! renders it.

use super::{gradebook_rows, BatchError, Record};
use crate::report::class::{ClassSummary, Entry};
use crate::report::class_html;
use crate::rubric::Assignment;
use crate::similarity::SimilaritySection;
use std::path::{Component, Path, PathBuf};

/// Where the class report of the gradebook `gradebook` goes: beside it, with the extension
/// `html` (`grades.csv` → `grades.html`; a gradebook already named `.html` gets
/// `.report.html`).
pub fn path_beside(gradebook: &Path) -> PathBuf {
    let page = gradebook.with_extension("html");
    if page == gradebook {
        gradebook.with_extension("report.html")
    } else {
        page
    }
}

/// Writes the class report of `records` (every record under `feedback`) beside the gradebook
/// `gradebook`, whole (a temporary file renamed into place), with the `similarity` section
/// when there is one, and returns its path.
pub fn write(
    feedback: &Path,
    gradebook: &Path,
    assignment: &Assignment,
    records: &[Record],
    similarity: Option<SimilaritySection>,
) -> Result<PathBuf, BatchError> {
    let path = path_beside(gradebook);
    let write_err = |message: String| BatchError::Write {
        path: path.clone(),
        message,
    };
    let page_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let entries: Vec<Entry<'_>> = records
        .iter()
        .zip(gradebook_rows(records))
        .map(|(record, row)| Entry {
            row,
            outcome: record.outcome.word(),
            error: record.error.as_deref(),
            build_seconds: record.build_seconds,
            feedback: link(
                page_dir,
                &super::store::student_dir(feedback, &record.student).join("feedback.md"),
            ),
        })
        .collect();
    let mut summary = ClassSummary::new(
        &assignment.assignment.name,
        &assignment.assignment.title,
        &assignment.items,
        &entries,
    );
    summary.similarity = similarity;
    let mut page = Vec::new();
    class_html::write(&mut page, &summary).map_err(|e| write_err(e.to_string()))?;
    std::fs::create_dir_all(page_dir).map_err(|e| write_err(e.to_string()))?;
    let partial = path.with_extension("html.partial");
    std::fs::write(&partial, page).map_err(|e| write_err(e.to_string()))?;
    std::fs::rename(&partial, &path).map_err(|e| write_err(e.to_string()))?;
    Ok(path)
}

/// `to` relative to the folder `from`, as path segments (`..` to go up), so the page's links
/// hold when the class folder is moved or zipped; `to`'s own segments if either cannot be
/// made absolute.
fn link(from: &Path, to: &Path) -> Vec<String> {
    let segments = |p: &Path| -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for c in std::path::absolute(p).ok()?.components() {
            match c {
                Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        Some(out)
    };
    match (segments(from), segments(to)) {
        (Some(from), Some(to)) => {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            std::iter::repeat_n("..".to_string(), from.len() - common)
                .chain(to[common..].iter().cloned())
                .collect()
        }
        _ => to
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_named_after_the_gradebook_and_links_relatively() {
        assert_eq!(
            path_beside(Path::new("out/grades.csv")),
            Path::new("out/grades.html")
        );
        assert_eq!(
            path_beside(Path::new("grades.html")),
            Path::new("grades.report.html")
        );
        assert_eq!(
            link(
                Path::new("/c/out"),
                Path::new("/c/feedback/a b/feedback.md")
            ),
            ["..", "feedback", "a b", "feedback.md"]
        );
        assert_eq!(
            link(
                Path::new("/c"),
                Path::new("/c/./x/../feedback/a/feedback.md")
            ),
            ["feedback", "a", "feedback.md"]
        );
    }
}
