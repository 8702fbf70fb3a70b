//! The rubric: `assignments/<lab>/assignment.toml`, read with serde + toml and validated, so
//! a typo in a rubric fails loudly with the file, the line and the key instead of grading
//! wrongly. What it reads into is the [`model`] (re-exported here); the lab an item's kind
//! belongs to reads the item's own keys.

pub mod labs;
pub mod model;

pub use model::*;

use labs::Labs;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
        key: String,
        message: String,
    },
    /// No embedded rubric has that name.
    #[error("there is no assignment named `{name}` (known: {}); pass --assignment with a lab name or the path of an assignment.toml", known.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The labs this grader knows.
        known: Vec<&'static str>,
    },
}

/// An `[[item]]` as written: the common keys, and the rest for the item's lab to read.
#[derive(Debug, Clone, Deserialize)]
struct WrittenItem {
    id: String,
    title: String,
    kind: String,
    function: String,
    points: f64,
    #[serde(default = "default_timeout")]
    timeout_secs: f64,
    #[serde(default)]
    forbid: Vec<String>,
    #[serde(default)]
    require: Vec<String>,
    #[serde(flatten)]
    keys: toml::Table,
}

/// The whole file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenAssignment {
    assignment: AssignmentInfo,
    #[serde(rename = "item", default)]
    items: Vec<WrittenItem>,
}

fn default_timeout() -> f64 {
    60.0
}

/// The names of the embedded rubrics (one per lab, embedded so that grading needs no files
/// on disk and a student cannot edit the rubric their `cargo test` uses).
pub fn known_names(labs: Labs) -> Vec<&'static str> {
    labs.names()
}

/// Loads the embedded rubric of a lab by name (`matmul`).
pub fn embedded(labs: Labs, name: &str) -> Result<Assignment, RubricError> {
    let text = labs
        .find(name)
        .ok_or_else(|| RubricError::Unknown {
            name: name.to_string(),
            known: labs.names(),
        })?
        .rubric;
    parse(
        labs,
        text,
        Path::new(&format!("assignments/{name}/assignment.toml")),
    )
}

/// The most of a rubric file read: the embedded ones are a few kB.
const RUBRIC_BYTES: u64 = 1 << 20;

/// Loads a rubric from a file.
pub fn load(labs: Labs, file: &Path) -> Result<Assignment, RubricError> {
    let text =
        crate::intake::read_text(file, RUBRIC_BYTES, "").map_err(|refused| RubricError::Read {
            file: file.to_path_buf(),
            source: std::io::Error::other(refused.why),
        })?;
    parse(labs, &text, file)
}

/// Resolves `--assignment`: a path to a `.toml` file or a directory holding
/// `assignment.toml`, else the name of an embedded rubric.
pub fn resolve(labs: Labs, spec: &str) -> Result<Assignment, RubricError> {
    let path = Path::new(spec);
    if path.is_file() {
        return load(labs, path);
    }
    if path.join("assignment.toml").is_file() {
        return load(labs, &path.join("assignment.toml"));
    }
    embedded(labs, spec)
}

/// Parses and validates rubric text; `file` is only used in messages.
pub fn parse(labs: Labs, text: &str, file: &Path) -> Result<Assignment, RubricError> {
    let syntax_error = |e: toml::de::Error| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let (line, column) = line_col(text, offset);
        RubricError::Parse {
            file: file.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
            snippet: text.lines().nth(line - 1).unwrap_or("").trim().to_string(),
        }
    };
    // First each item's keys as written, with where they are: a key the item's kind does not
    // read is refused before anything else, with its line.
    #[derive(Deserialize)]
    struct Keys {
        #[serde(default)]
        assignment: toml::Table,
        #[serde(default)]
        item: Vec<std::collections::BTreeMap<Spanned<String>, Spanned<toml::Value>>>,
    }
    let keys: Keys = toml::from_str(text).map_err(syntax_error)?;
    let invalid = |line: usize, item: &str, key: &str, message: String| RubricError::Invalid {
        file: file.to_path_buf(),
        line,
        item: item.to_string(),
        key: key.to_string(),
        message,
    };
    let name = keys.assignment.get("name").and_then(|v| v.as_str());
    let lab = match name.and_then(|n| labs.find(n)) {
        Some(lab) => lab,
        None => {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("name"))
                .map_or(1, |i| i + 1);
            return Err(invalid(
                line,
                "[assignment]",
                "name",
                format!(
                    "no lab named `{}` in this grader (known: {})",
                    name.unwrap_or(""),
                    labs.names().join(", ")
                ),
            ));
        }
    };
    for written in &keys.item {
        let line_of = |key: &Spanned<String>| line_col(text, key.span().start).0;
        let value_of = |name: &str| {
            written
                .iter()
                .find(|(k, _)| k.get_ref() == name)
                .map(|(k, v)| (line_of(k), v.get_ref()))
        };
        let id = value_of("id").and_then(|(_, v)| v.as_str()).unwrap_or("?");
        let Some((kind_line, kind)) = value_of("kind") else {
            continue; // serde says the key is missing, with the item's line
        };
        let Some(kind_info) = kind.as_str().and_then(|k| lab.kind(k)) else {
            return Err(invalid(
                kind_line,
                id,
                "kind",
                format!(
                    "lab `{}` has no item kind {kind} (its kinds: {})",
                    lab.name,
                    lab.kinds
                        .iter()
                        .map(|k| k.label)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        for key in written.keys() {
            let name = key.get_ref().as_str();
            if COMMON_KEYS.contains(&name) || kind_info.keys.contains(&name) {
                continue;
            }
            let owners: Vec<&str> = lab
                .kinds
                .iter()
                .filter(|k| k.keys.contains(&name))
                .map(|k| k.label)
                .collect();
            let message = if owners.is_empty() {
                let mut known: Vec<&str> = COMMON_KEYS.to_vec();
                known.extend(kind_info.keys);
                format!(
                    "unknown key `{name}`; an item of kind `{}` takes {}",
                    kind_info.label,
                    known.join(", ")
                )
            } else {
                // "a and b", "a, b and c".
                let owners = match owners.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} and {last}", rest.join(", "))
                    }
                    _ => owners.concat(),
                };
                format!(
                    "`{name}` is a key of {owners} items; this item is `{}`, which does not read \
                     it: remove the key, or change the item's kind",
                    kind_info.label
                )
            };
            return Err(invalid(line_of(key), id, name, message));
        }
    }
    let written: WrittenAssignment = toml::from_str(text).map_err(syntax_error)?;
    if written.items.is_empty() {
        return Err(invalid(1, "-", "item", "the rubric has no [[item]]".into()));
    }
    if let Some(Err(message)) = written
        .assignment
        .language
        .as_deref()
        .map(str::parse::<crate::i18n::Lang>)
    {
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with("language"))
            .map_or(1, |i| i + 1);
        return Err(invalid(line, "[assignment]", "language", message));
    }
    let mut items: Vec<Item> = Vec::with_capacity(written.items.len());
    for (n, w) in written.items.into_iter().enumerate() {
        let line_of = |key: &str| {
            keys.item
                .get(n)
                .and_then(|m| m.keys().find(|k| k.get_ref() == key))
                .map(|k| line_col(text, k.span().start).0)
        };
        let id_line = line_of("id").unwrap_or(1);
        let fail = |key: &str, message: String| {
            invalid(line_of(key).unwrap_or(id_line), &w.id, key, message)
        };
        if let Some(rule) = id_rule_broken(&w.id) {
            return Err(fail("id", rule));
        }
        if items.iter().any(|other| other.id == w.id) {
            return Err(fail("id", "this id is used by an earlier item".into()));
        }
        if !(w.points.is_finite() && w.points >= 0.0) {
            return Err(fail("points", "points must be a number ≥ 0".into()));
        }
        if !(w.timeout_secs.is_finite() && w.timeout_secs > 0.0) {
            return Err(fail(
                "timeout_secs",
                "the timeout must be > 0 seconds".into(),
            ));
        }
        let kind = lab.kind(&w.kind).ok_or_else(|| {
            fail(
                "kind",
                format!("lab `{}` has no item kind `{}`", lab.name, w.kind),
            )
        })?;
        if !kind.functions.contains(&w.function.as_str()) {
            return Err(fail(
                "function",
                format!(
                    "a `{}` item of lab `{}` can exercise {}, not `{}`",
                    kind.label,
                    lab.name,
                    kind.functions.join(" or "),
                    w.function
                ),
            ));
        }
        let spec = (lab.read_item)(kind.label, w.keys, w.points).map_err(
            |KeyError { key, message }| {
                // The line as written, so a wrong value shows itself.
                let written = line_of(key)
                    .and_then(|l| text.lines().nth(l - 1))
                    .map(str::trim);
                match written {
                    Some(snippet) => fail(key, format!("{message} (at `{snippet}`)")),
                    None => fail(key, message),
                }
            },
        )?;
        // Classroom names a tiered item's steps `<id>_1`, `<id>_2`, …: no id may be one of them.
        let steps: Vec<String> = (1..=spec.tiers().len())
            .map(|n| format!("{}_{n}", w.id))
            .collect();
        for earlier in &items {
            let earlier_steps =
                (1..=earlier.spec.tiers().len()).map(|n| format!("{}_{n}", earlier.id));
            if let Some(step) = earlier_steps.clone().find(|s| *s == w.id) {
                return Err(fail(
                    "id",
                    format!(
                        "`{step}` is the name of a Classroom step of the tiered item `{}` \
                         (one step per tier: `{}_1`, `{}_2`, …): choose an id that does not end \
                         in `_` and a number after another item's id",
                        earlier.id, earlier.id, earlier.id
                    ),
                ));
            }
            if let Some(step) = steps.iter().find(|s| **s == earlier.id) {
                return Err(fail(
                    "id",
                    format!(
                        "this tiered item's Classroom steps are named `{}_1`, `{}_2`, …, and \
                         `{step}` is already the id of an earlier item: rename one of them",
                        w.id, w.id
                    ),
                ));
            }
        }
        items.push(Item {
            id: w.id,
            title: w.title,
            kind: kind.label.to_string(),
            function: w.function,
            points: w.points,
            timeout_secs: w.timeout_secs,
            forbid: w.forbid,
            require: w.require,
            spec,
        });
    }
    Ok(Assignment {
        assignment: written.assignment,
        items,
        source: file.to_path_buf(),
        text: text.to_string(),
    })
}

/// The rule an item id breaks, said as the rule, or None. An id names the item on the command
/// line, a Classroom step and that step's `<ID>_RESULTS` variable, a gradebook column and a
/// feedback heading, so it keeps to what all of them take.
pub fn id_rule_broken(id: &str) -> Option<String> {
    let Some(first) = id.chars().next() else {
        return Some(
            "the id is empty: give the item a short name, for example `naive_correct`".into(),
        );
    };
    if !first.is_ascii_lowercase() {
        return Some(format!(
            "an id starts with a lowercase letter (a-z), not `{first}`: for example `naive_correct`"
        ));
    }
    if let Some(bad) = id
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
    {
        let why = if bad.is_ascii_uppercase() {
            "capitals are not allowed: Classroom upper-cases ids, so `Fast` and `fast` would be one step"
        } else if bad == '-' {
            "`-` is not allowed: the id becomes part of an environment variable's name in Classroom"
        } else {
            "an id holds lowercase letters (a-z), digits and `_` only"
        };
        return Some(format!(
            "`{bad}` in `{id}`: {why}; for example `naive_correct`"
        ));
    }
    None
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_broken_id_rule_is_named() {
        let cases = [
            ("", "the id is empty"),
            ("Naive", "starts with a lowercase letter (a-z), not `N`"),
            ("_naive", "starts with a lowercase letter (a-z), not `_`"),
            ("naive-correct", "`-` is not allowed"),
            ("naive_Correct", "capitals are not allowed"),
            (
                "naive correct",
                "lowercase letters (a-z), digits and `_` only",
            ),
        ];
        for (id, rule) in cases {
            let said = id_rule_broken(id).unwrap_or_default();
            assert!(said.contains(rule), "{id:?}: {said}");
        }
        for id in ["naive_correct", "gpu_speedup", "a1", "x_2_y"] {
            assert_eq!(id_rule_broken(id), None, "{id}");
        }
    }

    /// A lab of one kind, `count`, taking one key of its own (`up_to`): enough to drive the
    /// rubric's reader with no real lab in sight.
    mod fake {
        use crate::lab::{KindInfo, LabInfo, Labs};
        use crate::rubric::{Item, ItemSpec, KeyError, KindSpec};

        #[derive(Debug)]
        struct Count(i64);

        impl KindSpec for Count {
            fn gpu_track(&self) -> bool {
                false
            }
            fn task(&self) -> serde_json::Value {
                serde_json::json!({ "up_to": self.0 })
            }
            fn grade(
                &self,
                _ctx: &crate::check::GradeContext,
                item: &Item,
            ) -> Result<crate::report::ItemResult, crate::supervisor::SupervisorError> {
                Err(crate::supervisor::SupervisorError::Gpu(format!(
                    "{} is a fake",
                    item.id
                )))
            }
        }

        fn read_item(kind: &str, keys: toml::Table, _points: f64) -> Result<ItemSpec, KeyError> {
            assert_eq!(kind, "count");
            let up_to = keys
                .get("up_to")
                .and_then(|v| v.as_integer())
                .ok_or_else(|| KeyError::new("up_to", "a whole number is needed"))?;
            Ok(std::sync::Arc::new(Count(up_to)))
        }

        static LAB: LabInfo = LabInfo {
            name: "fake",
            lab_crate: "fake-lab",
            kinds: &[KindInfo {
                label: "count",
                keys: &["up_to"],
                functions: &["count"],
            }],
            read_item,
            rubric: "",
            harness: "",
            manifest: "",
            yardstick: |_, _| Err("the fake lab has no speed items".into()),
        };

        pub static LABS: Labs = Labs(&[&LAB]);
    }

    const FAKE_RUBRIC: &str = "[assignment]\nname = \"fake\"\ntitle = \"Fake\"\n\
        lab_crate = \"fake-lab\"\n\n[[item]]\nid = \"counts\"\ntitle = \"Counts\"\n\
        kind = \"count\"\nfunction = \"count\"\npoints = 2\nup_to = 3\n";

    #[test]
    fn a_lab_handed_down_reads_its_own_keys() {
        let a = parse(fake::LABS, FAKE_RUBRIC, Path::new("a.toml")).expect("parses");
        assert_eq!(a.assignment.lab_crate, "fake-lab");
        assert_eq!(a.max_score(), 2.0);
        let item = a.item("counts").expect("the item");
        assert_eq!(item.spec.task(), serde_json::json!({ "up_to": 3 }));
        assert!(!item.spec.gpu_track());
    }

    #[test]
    fn a_lab_not_handed_down_is_unknown_and_the_known_ones_are_named() {
        let text = FAKE_RUBRIC.replace("name = \"fake\"", "name = \"matmul\"");
        let msg = parse(fake::LABS, &text, Path::new("a.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("no lab named `matmul`") && msg.contains("known: fake"),
            "{msg}"
        );
        let wrong = FAKE_RUBRIC.replace("up_to = 3", "up_to = \"three\"");
        let msg = parse(fake::LABS, &wrong, Path::new("a.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("up_to") && msg.contains("whole number"),
            "{msg}"
        );
    }
}
