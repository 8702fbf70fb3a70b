//! A student iterating on one function sees its verdict first: the harness remembers what
//! each function of `src/` looked like at the last run (a hash of its text), and grades first
//! the items whose function changed since, then the rest; the table at the end keeps the
//! rubric's order. Only the order changes, never what is graded or how: a wrong guess costs
//! a few seconds of waiting, nothing else.

use grader_engine::rubric::{Assignment, Item};
use std::collections::BTreeMap;
use std::path::Path;

/// Each function's text hash, by `file::name` (and each file's whole text, by `file`).
pub type Snapshot = BTreeMap<String, u64>;

/// The file in the harness's folder (`target/gpu-labs/`) that keeps the last run's snapshot.
const FILE: &str = "sources.json";

/// At most this many source files, of at most this size, are read (a lab has a handful).
const MAX_FILES: usize = 64;
const MAX_BYTES: u64 = 1 << 20;

/// `fn name` at the start of a line (after `pub` and the like): the name, when there is one.
fn defined_function(line: &str) -> Option<&str> {
    let rest = line.trim_start();
    let at = rest.find("fn ")?;
    let before = &rest[..at];
    let qualifiers_only = before.split_whitespace().all(|w| {
        matches!(
            w,
            "pub" | "pub(crate)" | "pub(super)" | "unsafe" | "const" | "async" | "extern"
        )
    });
    if !qualifiers_only {
        return None;
    }
    let name = rest[at + 3..]
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    (!name.is_empty()).then_some(name)
}

/// The snapshot of the `.rs` files under `src` (one level and below).
pub fn snapshot(src: &Path) -> Snapshot {
    let mut files = Vec::new();
    collect(src, src, &mut files);
    let mut out = Snapshot::new();
    for (relative, text) in files.into_iter().take(MAX_FILES) {
        out.insert(relative.clone(), grader_engine::fingerprint::of_text(&text));
        // Each function's text runs from its `fn` line to the next one.
        let mut current: Option<(String, String)> = None;
        for line in text.lines() {
            if let Some(name) = defined_function(line) {
                if let Some((name, body)) = current.take() {
                    out.insert(
                        format!("{relative}::{name}"),
                        grader_engine::fingerprint::of_text(&body),
                    );
                }
                current = Some((name.to_string(), String::new()));
            }
            if let Some((_, body)) = &mut current {
                body.push_str(line);
                body.push('\n');
            }
        }
        if let Some((name, body)) = current {
            out.insert(
                format!("{relative}::{name}"),
                grader_engine::fingerprint::of_text(&body),
            );
        }
    }
    out
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if out.len() >= MAX_FILES {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            collect(root, &path, out);
        } else if meta.is_file()
            && meta.len() <= MAX_BYTES
            && path.extension().is_some_and(|e| e == "rs")
        {
            if let (Ok(text), Ok(relative)) = (
                grader_engine::intake::read_text(&path, MAX_BYTES, ""),
                path.strip_prefix(root),
            ) {
                out.push((relative.display().to_string(), text));
            }
        }
    }
}

/// The last run's snapshot, kept in `dir`; `None` on a first run.
pub fn load(dir: &Path) -> Option<Snapshot> {
    let text = grader_engine::intake::read_text(
        &dir.join(FILE),
        grader_engine::intake::GRADER_FILE_BYTES,
        "",
    )
    .ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps `snapshot` in `dir` for the next run (a file that cannot be written only loses the
/// ordering next time).
pub fn store(dir: &Path, snapshot: &Snapshot) {
    if let Ok(json) = serde_json::to_vec(snapshot) {
        let _ = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join(FILE), json));
    }
}

/// The function name an item's `function` is defined under: `Linear::forward` → `forward`,
/// `SimpleNN` (a type: its methods) → `SimpleNN`.
fn last_segment(function: &str) -> &str {
    function.rsplit("::").next().unwrap_or(function)
}

/// The ids of the items whose function changed between `before` and `now`: its own text, or
/// where no item's function changed (a kernel string, a helper), every item whose function
/// is defined in a file that changed. Empty when nothing changed.
pub fn touched(assignment: &Assignment, before: &Snapshot, now: &Snapshot) -> Vec<String> {
    let changed: Vec<&String> = now
        .iter()
        .filter(|(key, hash)| before.get(*key) != Some(hash))
        .map(|(key, _)| key)
        .collect();
    let changed_functions: Vec<&str> = changed
        .iter()
        .filter_map(|key| key.rsplit_once("::").map(|(_, name)| name))
        .collect();
    let changed_files: Vec<&str> = changed
        .iter()
        .filter(|key| !key.contains("::"))
        .map(|key| key.as_str())
        .collect();
    let by_function: Vec<String> = ids(assignment, |item| {
        changed_functions.contains(&last_segment(&item.function))
    });
    if !by_function.is_empty() {
        return by_function;
    }
    ids(assignment, |item| {
        let name = last_segment(&item.function);
        now.keys().any(|key| {
            key.rsplit_once("::")
                .is_some_and(|(file, f)| changed_files.contains(&file) && f == name)
        })
    })
}

fn ids(assignment: &Assignment, keep: impl Fn(&Item) -> bool) -> Vec<String> {
    assignment
        .items
        .iter()
        .filter(|item| keep(item))
        .map(|item| item.id().to_string())
        .collect()
}

/// `assignment` with the items of `first` moved to the front (each group in rubric order).
pub fn reordered(assignment: &Assignment, first: &[String]) -> Assignment {
    let mut out = assignment.clone();
    out.items
        .sort_by_key(|item| !first.iter().any(|id| id == item.id()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        std::fs::write(dir.join(file), text).expect("write");
    }

    #[test]
    fn a_changed_function_is_told_from_its_unchanged_neighbours() {
        let dir = tempfile::tempdir().expect("dir");
        write(
            dir.path(),
            "lib.rs",
            "pub fn matmul_naive() {\n    1\n}\n\npub fn matmul_fast() {\n    2\n}\n",
        );
        let before = snapshot(dir.path());
        write(
            dir.path(),
            "lib.rs",
            "pub fn matmul_naive() {\n    1\n}\n\npub fn matmul_fast() {\n    3\n}\n",
        );
        let now = snapshot(dir.path());
        let changed: Vec<&String> = now
            .iter()
            .filter(|(k, h)| before.get(*k) != Some(h))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(changed, ["lib.rs", "lib.rs::matmul_fast"]);
        assert_eq!(
            defined_function("    pub(crate) fn go<T>(x: T)"),
            Some("go")
        );
        assert_eq!(defined_function("    let f = |x| x; // fn not"), None);
    }
}
