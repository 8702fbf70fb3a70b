//! Makes a student template from a reference solution, so the two never drift apart.
//!
//! In every text file of the solution crate:
//! - lines from a `BEGIN SOLUTION` marker to an `END SOLUTION` marker (inclusive) are dropped;
//! - a line whose first non-blank text is `//@template ` (in Rust) or `#@template ` (in TOML)
//!   is kept without that prefix: the `todo!()` and the settings only the template has.

use std::path::Path;

/// Why a template could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// The markers do not pair up.
    #[error("{path}:{line}: {message}")]
    Markers {
        path: String,
        line: usize,
        message: String,
    },
}

/// Turns one solution file's text into the template's.
pub fn transform(text: &str, path: &str) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = |m: &str| {
            trimmed
                .strip_prefix("//")
                .or_else(|| trimmed.strip_prefix('#'))
                .map(str::trim)
                == Some(m)
        };
        if marker("BEGIN SOLUTION") {
            if let Some(start) = open {
                return Err(TemplateError::Markers {
                    path: path.into(),
                    line: n + 1,
                    message: format!("BEGIN SOLUTION inside the one opened on line {}", start + 1),
                });
            }
            open = Some(n);
            continue;
        }
        if marker("END SOLUTION") {
            if open.take().is_none() {
                return Err(TemplateError::Markers {
                    path: path.into(),
                    line: n + 1,
                    message: "END SOLUTION without a BEGIN SOLUTION".into(),
                });
            }
            continue;
        }
        if open.is_some() {
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        if trimmed == "//@template" || trimmed == "#@template" {
            // A blank line only the template has.
        } else if let Some(rest) = trimmed
            .strip_prefix("//@template ")
            .or_else(|| trimmed.strip_prefix("#@template "))
        {
            out.push_str(indent);
            out.push_str(rest);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if let Some(start) = open {
        return Err(TemplateError::Markers {
            path: path.into(),
            line: start + 1,
            message: "BEGIN SOLUTION is never closed".into(),
        });
    }
    // A region removed between two blank lines leaves a double blank line.
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    Ok(out)
}

/// Every file of the template made from the solution crate at `solution`, as
/// (relative path, contents), in a stable order. `target/` and `Cargo.lock` are left out.
pub fn generate(solution: &Path) -> Result<Vec<(String, String)>, TemplateError> {
    let mut files = Vec::new();
    walk(solution, solution, &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) -> Result<(), TemplateError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| TemplateError::Io { path, source }
    };
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if path.is_dir() {
            walk(root, &path, out)?;
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let text = grader_engine::intake::read_own_text(&path, "")
            .map_err(std::io::Error::from)
            .map_err(io(&path))?;
        out.push((relative.clone(), transform(&text, &relative)?));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solution_regions_become_the_template_lines() {
        let src = "fn f() -> u8 {\n    // BEGIN SOLUTION\n    42\n    // END SOLUTION\n    //@template todo!(\"f\")\n}\n";
        assert_eq!(
            transform(src, "x").unwrap(),
            "fn f() -> u8 {\n    todo!(\"f\")\n}\n"
        );
    }

    #[test]
    fn a_removed_region_leaves_no_double_blank_line() {
        let src = "a\n\n// BEGIN SOLUTION\nfn helper() {}\n// END SOLUTION\n\nb\n";
        assert_eq!(transform(src, "x").unwrap(), "a\n\nb\n");
    }

    #[test]
    fn unpaired_markers_are_errors_with_their_line() {
        let err = transform("a\n// BEGIN SOLUTION\nb\n", "lib.rs").unwrap_err();
        assert_eq!(err.to_string(), "lib.rs:2: BEGIN SOLUTION is never closed");
        assert!(transform("// END SOLUTION\n", "x").is_err());
    }
}
