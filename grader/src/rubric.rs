//! The rubric: `assignments/<lab>/assignment.toml`, read with serde + toml and validated, so
//! a typo in a rubric fails loudly with the file, the line and the key instead of grading
//! wrongly.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The rubrics shipped with this grader, embedded so that grading needs no files on disk and
/// a student cannot edit the rubric their `cargo test` uses.
const EMBEDDED: &[(&str, &str)] = &[(
    "matmul",
    include_str!("../../assignments/matmul/assignment.toml"),
)];

/// Why a rubric could not be used. Every variant names the file; parse and validation errors
/// name the line and the key.
#[derive(Debug, thiserror::Error)]
pub enum RubricError {
    /// The file could not be read.
    #[error("cannot read the rubric {file}: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    /// The TOML is malformed or a key has the wrong type or name.
    #[error("{file}:{line}:{column}: {message} (at `{snippet}`)")]
    Parse {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
        snippet: String,
    },
    /// The TOML is well formed but says something the grader cannot do.
    #[error("{file}:{line}: item `{item}`, key `{key}`: {message}")]
    Invalid {
        file: PathBuf,
        line: usize,
        item: String,
        key: &'static str,
        message: String,
    },
    /// No embedded rubric has that name.
    #[error("there is no assignment named `{0}` (known: {known}); pass --assignment with a lab name or the path of an assignment.toml", known = known_names().join(", "))]
    Unknown(String),
}

/// A whole rubric: which lab it grades and its items, in order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    /// Which lab, and how its crate is named.
    pub assignment: AssignmentInfo,
    /// The rubric items, in the order they are graded and reported.
    #[serde(rename = "item")]
    pub items: Vec<Item>,
    /// Where the rubric came from, for error messages and reports.
    #[serde(skip)]
    pub source: PathBuf,
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
}

/// What an item checks. Each kind has its own keys (see [`Item`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    /// A matrix product checked against an f64 reference on several shapes.
    Matmul,
    /// A timing function checked against the grader's own clock.
    CpuTimer,
    /// A speedup over the grader's naive baseline, measured by the grader.
    CpuSpeedup,
    /// A matrix product computed on the GPU, checked like `matmul` and required to run on the
    /// device.
    GpuMatmul,
    /// A GPU timing function, checked against the grader's device events (synchronization).
    GpuTimer,
    /// A GPU product's speedup over the CPU, measured by the grader; needs a real GPU.
    GpuSpeedup,
    /// Device selection: the GPU when there is one, the CPU otherwise, never a panic.
    DeviceSelect,
    /// The lab activity: CPU and GPU times measured and returned.
    Benchmark,
}

impl ItemKind {
    /// Whether items of this kind belong to the GPU track, whose reports say where GPU code
    /// ran (a real GPU, the emulator, or nowhere).
    pub fn is_gpu_track(self) -> bool {
        !matches!(
            self,
            ItemKind::Matmul | ItemKind::CpuTimer | ItemKind::CpuSpeedup
        )
    }
}

/// The keys every item takes, whatever its kind.
const COMMON_KEYS: &[&str] = &[
    "id",
    "title",
    "kind",
    "function",
    "points",
    "timeout_secs",
    "forbid",
    "require",
];

impl ItemKind {
    /// Every kind, in the order the README lists them.
    pub const ALL: [ItemKind; 8] = [
        ItemKind::Matmul,
        ItemKind::CpuTimer,
        ItemKind::CpuSpeedup,
        ItemKind::GpuMatmul,
        ItemKind::GpuTimer,
        ItemKind::GpuSpeedup,
        ItemKind::DeviceSelect,
        ItemKind::Benchmark,
    ];

    /// How a rubric spells it (`gpu-matmul`).
    pub fn label(self) -> &'static str {
        match self {
            ItemKind::Matmul => "matmul",
            ItemKind::CpuTimer => "cpu-timer",
            ItemKind::CpuSpeedup => "cpu-speedup",
            ItemKind::GpuMatmul => "gpu-matmul",
            ItemKind::GpuTimer => "gpu-timer",
            ItemKind::GpuSpeedup => "gpu-speedup",
            ItemKind::DeviceSelect => "device-select",
            ItemKind::Benchmark => "benchmark",
        }
    }

    /// The keys only items of this kind take, beside the common ones: a key of another kind
    /// would be ignored, so a rubric that has one is refused.
    pub fn own_keys(self) -> &'static [&'static str] {
        match self {
            ItemKind::Matmul | ItemKind::GpuMatmul => &["cases", "tolerance", "hint"],
            ItemKind::CpuTimer => &["work_ms"],
            ItemKind::CpuSpeedup => &["size", "samples", "max_samples", "tiers"],
            ItemKind::GpuSpeedup => &["size", "samples", "max_samples", "tiers", "policy"],
            ItemKind::GpuTimer | ItemKind::Benchmark => &["size", "samples"],
            ItemKind::DeviceSelect => &[],
        }
    }
}

/// What a GPU speedup item scores where no real GPU can measure it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipPolicy {
    /// Removed from the maximum: the score is out of the other items.
    #[default]
    Skip,
    /// Scored 0 out of its points.
    Zero,
}

/// One `[[item]]`: an id, points, and the keys of its kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// Short stable id, used to filter (`cargo test --test grade -- fast_correct`).
    pub id: Spanned<String>,
    /// What the student sees as the item's name.
    pub title: String,
    /// Which check runs.
    pub kind: ItemKind,
    /// The student function the item exercises.
    pub function: String,
    /// The most the item can earn.
    pub points: f64,
    /// Wall-clock limit for the item's worker process.
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
    /// Identifiers the function (and everything it calls in the crate) must not use.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// Text the submission's sources must contain (e.g. `__syncthreads` for a tiled kernel).
    #[serde(default)]
    pub require: Vec<String>,
    /// `matmul`: the hint shown under a wrong result when no diagnosis fits (the instructor's
    /// word on what usually goes wrong in this function).
    #[serde(default)]
    pub hint: Option<String>,
    /// `gpu-speedup`: what the item scores when no real GPU can measure it.
    #[serde(default)]
    pub policy: SkipPolicy,
    /// `matmul`: the shapes `[m, k, n]` to multiply, m×k · k×n.
    #[serde(default)]
    pub cases: Vec<[usize; 3]>,
    /// `matmul`: c in |C − C_ref| ≤ c·K·eps32·(|A|·|B|)ij.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// `cpu-timer`: how long each piece of work handed to the timer runs, in milliseconds.
    #[serde(default)]
    pub work_ms: Vec<u64>,
    /// `cpu-speedup`: the shape `[m, k, n]` timed.
    pub size: Option<[usize; 3]>,
    /// `cpu-speedup`: timed samples of each side in the first round (at least 5).
    #[serde(default = "default_samples")]
    pub samples: usize,
    /// `cpu-speedup`: the most samples taken when the speedup sits near a tier edge.
    #[serde(default = "default_max_samples")]
    pub max_samples: usize,
    /// `cpu-speedup`: the points earned at each speedup; the highest tier reached counts.
    #[serde(default)]
    pub tiers: Vec<Tier>,
}

/// A speedup tier: reach `speedup`× the baseline and earn `points`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// The speedup over the baseline needed.
    pub speedup: f64,
    /// The points earned at this tier.
    pub points: f64,
}

fn default_timeout() -> f64 {
    60.0
}
fn default_tolerance() -> f64 {
    2.0
}
fn default_samples() -> usize {
    5
}
fn default_max_samples() -> usize {
    25
}

impl Item {
    /// The item's id as a plain string.
    pub fn id(&self) -> &str {
        self.id.get_ref()
    }
}

impl Assignment {
    /// The most points the whole rubric can earn.
    pub fn max_score(&self) -> f64 {
        self.items.iter().map(|i| i.points).sum()
    }

    /// Finds an item by id.
    pub fn item(&self, id: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.id() == id)
    }
}

/// The names of the embedded rubrics.
pub fn known_names() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(n, _)| *n).collect()
}

/// Loads the embedded rubric of a lab by name (`matmul`).
pub fn embedded(name: &str) -> Result<Assignment, RubricError> {
    let (_, text) = EMBEDDED
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| RubricError::Unknown(name.to_string()))?;
    parse(
        text,
        Path::new(&format!("assignments/{name}/assignment.toml")),
    )
}

/// Loads a rubric from a file.
pub fn load(file: &Path) -> Result<Assignment, RubricError> {
    let text = std::fs::read_to_string(file).map_err(|source| RubricError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    parse(&text, file)
}

/// Resolves `--assignment`: a path to a `.toml` file or a directory holding
/// `assignment.toml`, else the name of an embedded rubric.
pub fn resolve(spec: &str) -> Result<Assignment, RubricError> {
    let path = Path::new(spec);
    if path.is_file() {
        return load(path);
    }
    if path.join("assignment.toml").is_file() {
        return load(&path.join("assignment.toml"));
    }
    embedded(spec)
}

/// Parses and validates rubric text; `file` is only used in messages.
pub fn parse(text: &str, file: &Path) -> Result<Assignment, RubricError> {
    let mut assignment: Assignment = toml::from_str(text).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let (line, column) = line_col(text, offset);
        RubricError::Parse {
            file: file.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
            snippet: text.lines().nth(line - 1).unwrap_or("").trim().to_string(),
        }
    })?;
    assignment.source = file.to_path_buf();
    validate(&assignment, text)?;
    Ok(assignment)
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, column)
}

/// Checks what serde cannot: required keys per kind, sane numbers, unique ids, known
/// functions.
fn validate(a: &Assignment, text: &str) -> Result<(), RubricError> {
    let lab = crate::labs::find(&a.assignment.name).ok_or_else(|| RubricError::Invalid {
        file: a.source.clone(),
        line: 1,
        item: "[assignment]".into(),
        key: "name",
        message: format!(
            "no lab named `{}` in this grader (known: {})",
            a.assignment.name,
            crate::labs::names().join(", ")
        ),
    })?;
    if a.items.is_empty() {
        return Err(RubricError::Invalid {
            file: a.source.clone(),
            line: 1,
            item: "-".into(),
            key: "item",
            message: "the rubric has no [[item]]".into(),
        });
    }
    // Each item's keys as written, with where they are, to refuse a key of another kind.
    #[derive(Deserialize)]
    struct Written {
        #[serde(default)]
        item: Vec<std::collections::BTreeMap<Spanned<String>, toml::Value>>,
    }
    let written = toml::from_str::<Written>(text)
        .map(|w| w.item)
        .unwrap_or_default();
    for (item, keys) in a.items.iter().zip(&written) {
        for key in keys.keys() {
            let name = key.get_ref().as_str();
            if COMMON_KEYS.contains(&name) || item.kind.own_keys().contains(&name) {
                continue;
            }
            let owners: Vec<&str> = ItemKind::ALL
                .iter()
                .filter(|k| k.own_keys().contains(&name))
                .map(|k| k.label())
                .collect();
            let Some(&static_key) = ItemKind::ALL
                .iter()
                .flat_map(|k| k.own_keys())
                .find(|k| **k == name)
            else {
                continue;
            };
            return Err(RubricError::Invalid {
                file: a.source.clone(),
                line: line_col(text, key.span().start).0,
                item: item.id().to_string(),
                key: static_key,
                message: format!(
                    "`{name}` is a key of {} items; this item is `{}`, which does not read it: \
                     remove the key, or change the item's kind",
                    owners.join(" and "),
                    item.kind.label()
                ),
            });
        }
    }
    for (n, item) in a.items.iter().enumerate() {
        let fail = |key: &'static str, message: String| RubricError::Invalid {
            file: a.source.clone(),
            line: line_col(text, item.id.span().start).0,
            item: item.id().to_string(),
            key,
            message,
        };
        let id = item.id();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(fail(
                "id",
                "ids use letters, digits, `_` and `-` only".into(),
            ));
        }
        if a.items[..n].iter().any(|other| other.id() == id) {
            return Err(fail("id", "this id is used by an earlier item".into()));
        }
        if !(item.points.is_finite() && item.points >= 0.0) {
            return Err(fail("points", "points must be a number ≥ 0".into()));
        }
        if !(item.timeout_secs.is_finite() && item.timeout_secs > 0.0) {
            return Err(fail(
                "timeout_secs",
                "the timeout must be > 0 seconds".into(),
            ));
        }
        let allowed = lab.functions_for(item.kind);
        if !allowed.contains(&item.function.as_str()) {
            return Err(fail(
                "function",
                format!(
                    "a `{:?}` item of lab `{}` can exercise {}, not `{}`",
                    item.kind,
                    lab.name,
                    allowed.join(" or "),
                    item.function
                ),
            ));
        }
        match item.kind {
            ItemKind::DeviceSelect => {}
            ItemKind::Matmul | ItemKind::GpuMatmul => {
                if item.cases.is_empty() {
                    return Err(fail("cases", "list at least one [m, k, n] shape".into()));
                }
                if let Some(c) = item
                    .cases
                    .iter()
                    .find(|c| c.iter().any(|&d| d == 0 || d > 4096))
                {
                    return Err(fail(
                        "cases",
                        format!("every dimension must be 1..=4096, got {c:?}"),
                    ));
                }
                if !(item.tolerance.is_finite() && item.tolerance > 0.0) {
                    return Err(fail("tolerance", "the tolerance must be > 0".into()));
                }
            }
            ItemKind::CpuTimer => {
                if item.work_ms.is_empty() || item.work_ms.iter().any(|&w| w == 0 || w > 10_000) {
                    return Err(fail(
                        "work_ms",
                        "list one or more durations of 1..=10000 ms".into(),
                    ));
                }
            }
            ItemKind::GpuTimer | ItemKind::Benchmark => {
                if !matches!(item.size, Some(s) if s.iter().all(|&d| d > 0 && d <= 4096)) {
                    return Err(fail(
                        "size",
                        "give the shape as [m, k, n], each 1..=4096".into(),
                    ));
                }
            }
            ItemKind::CpuSpeedup | ItemKind::GpuSpeedup => {
                match item.size {
                    Some(s) if s.iter().all(|&d| d > 0 && d <= 4096) => {}
                    _ => {
                        return Err(fail(
                            "size",
                            "give the timed shape as [m, k, n], each 1..=4096".into(),
                        ))
                    }
                }
                if item.samples < 5 {
                    return Err(fail("samples", "take at least 5 samples".into()));
                }
                if item.max_samples < item.samples {
                    return Err(fail("max_samples", "must be ≥ samples".into()));
                }
                if item.tiers.is_empty() {
                    return Err(fail("tiers", "list at least one tier".into()));
                }
                for pair in item.tiers.windows(2) {
                    if pair[1].speedup <= pair[0].speedup || pair[1].points < pair[0].points {
                        return Err(fail(
                            "tiers",
                            "tiers must go up in speedup and must not go down in points".into(),
                        ));
                    }
                }
                if item.tiers.iter().any(|t| {
                    t.speedup.is_nan()
                        || t.speedup <= 0.0
                        || t.points > item.points
                        || t.points < 0.0
                }) {
                    return Err(fail(
                        "tiers",
                        format!(
                            "every tier needs a speedup > 0 and points within 0..={}",
                            item.points
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_matmul_rubric_is_valid() {
        let a = embedded("matmul").expect("embedded rubric parses");
        assert_eq!(a.assignment.lab_crate, "matmul-lab");
        assert!(a.max_score() > 0.0);
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
                "`tolerance` is a key of matmul and gpu-matmul items; this item is \
                          `cpu-timer`"
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
        EMBEDDED[0].1.to_string()
    }
}
