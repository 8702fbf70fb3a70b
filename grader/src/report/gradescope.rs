//! The report as Gradescope's `results.json`, which other tools read too: [`to_json`], called
//! by `grader grade --json` and by the autograder that `grader gradescope` packages.
//!
//! The fields are only those of Gradescope's autograder specification
//! (<https://gradescope-autograders.readthedocs.io/en/latest/specs/>): `score`,
//! `execution_time`, `output` (with `output_format`), `extra_data`, `tests[]` (`name`,
//! `number`, `score`, `max_score`, `status`, `output`, `extra_data`) and `leaderboard[]`
//! (`name`, `value`, `order`). Gradescope orders tests by `number`, so each is numbered by its
//! place in the rubric ("1", "2", …); the item's id is in the test's `extra_data.item` (and
//! starts its name), and the maximum score and the seed in the top level's `extra_data`.
//!
//! A test's `status` is only `passed` or `failed`, and without one Gradescope marks a test
//! passed when it earned its `max_score` and failed (red) otherwise. So:
//! - a passed item is `passed`, a failed one `failed`;
//! - a partial item (a lower speed tier) is `passed`: its code works and its score, shown
//!   beside it, says what it earned (the specification's own example is a 5/10 `passed` test);
//! - an item that was not graded here (a GPU speedup without a real GPU) has no `status` when
//!   it is left out of the maximum (0/0, which Gradescope shows as passed), and `passed` when
//!   the rubric's policy counts it as 0/N: it is no failure of the student's code. Its name
//!   and output say "not graded here" and why.
//!
//! Speedups the grader measured fill the `leaderboard` (higher is better).

use super::{BuildStatus, Report, Status};
use crate::messages::t;
use serde::Serialize;

#[derive(Serialize)]
struct Results<'a> {
    score: f64,
    execution_time: f64,
    output: String,
    /// Plain text: notes and compiler errors hold `<`, `&` and `*` that must show as written.
    output_format: &'static str,
    extra_data: Extra,
    tests: Vec<Test<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    leaderboard: Vec<Entry>,
}

/// What Gradescope stores beside the score for other tools: the maximum (the specification has
/// no top-level `max_score`), the seed that repeats the run, and what isolated it.
#[derive(Serialize)]
struct Extra {
    max_score: f64,
    seed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sandbox: Option<String>,
}

#[derive(Serialize)]
struct Test<'a> {
    name: String,
    number: String,
    score: f64,
    max_score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    output: String,
    extra_data: TestExtra<'a>,
}

/// A test's rubric item id, for tools that look tests up by item.
#[derive(Serialize)]
struct TestExtra<'a> {
    item: &'a str,
}

/// One leaderboard quantity.
#[derive(Serialize)]
struct Entry {
    name: String,
    value: f64,
    order: &'static str,
}

/// Serializes the report as Gradescope's `results.json`.
pub fn to_json(report: &Report) -> String {
    let results = Results {
        score: report.score(),
        execution_time: round(report.execution_time, 2),
        output: super::escape::terminal(&summary(report)).into_owned(),
        output_format: "text",
        extra_data: Extra {
            max_score: report.max_score(),
            seed: report.seed,
            sandbox: report.sandbox.clone(),
        },
        tests: report
            .items
            .iter()
            .enumerate()
            .map(|(n, i)| {
                let not_graded = i.status == Status::Skipped;
                Test {
                    name: if not_graded {
                        t!("gs-not-graded-name", id = i.id, title = i.title)
                    } else {
                        format!("{}: {}", i.id, i.title)
                    },
                    number: (n + 1).to_string(),
                    score: i.score,
                    max_score: i.max_score,
                    status: match i.status {
                        Status::Passed | Status::Partial => Some("passed"),
                        Status::Failed => Some("failed"),
                        Status::Skipped if i.max_score > 0.0 => Some("passed"),
                        Status::Skipped => None,
                    },
                    output: super::escape::terminal(&match (&i.mode, i.status) {
                        (_, Status::Skipped) => not_graded_output(&i.details, i.max_score),
                        (Some(mode), _) => t!("gs-graded-on", mode = mode, details = i.details),
                        (None, _) => i.details.clone(),
                    })
                    .into_owned(),
                    extra_data: TestExtra { item: &i.id },
                }
            })
            .collect(),
        leaderboard: report
            .items
            .iter()
            .filter_map(|i| {
                let value = i.speedup.filter(|s| s.is_finite())?;
                Some(Entry {
                    name: format!("{} (×)", i.id),
                    value: round(value, 2),
                    order: "desc",
                })
            })
            .collect(),
    };
    serde_json::to_string_pretty(&results).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The text over the tests: the seed to repeat the run, how the build went, and what official
/// grading ignored in the submission.
fn summary(report: &Report) -> String {
    let mut lines = vec![t!(
        "gs-summary",
        assignment = report.assignment,
        seed = report.seed
    )];
    if report.build == BuildStatus::NotCompiled {
        lines.push(t!("gs-not-compiled"));
    }
    lines.extend(report.notes.iter().map(|n| t!("gs-note", note = n)));
    if let Some(sandbox) = &report.sandbox {
        lines.push(t!("gs-sandbox", sandbox = sandbox));
    }
    lines.join("\n")
}

/// A skipped item's output: "Not graded here: " and the reason, and whether it counts.
fn not_graded_output(details: &str, max_score: f64) -> String {
    let prefix = grader_engine::tr!(grader_engine::i18n::MESSAGES, "not-graded-prefix");
    let reason = details.strip_prefix(prefix.as_str()).unwrap_or(details);
    let counts = if max_score > 0.0 {
        t!("gs-counts-zero")
    } else {
        t!("gs-left-out")
    };
    t!("gs-not-graded-here", reason = reason, counts = counts)
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ItemResult;
    use serde_json::{json, Value};

    fn item(id: &str, score: f64, max: f64, status: Status, details: &str) -> ItemResult {
        ItemResult {
            details: details.into(),
            ..crate::report::sample_item(id, score, max, status)
        }
    }

    fn report(items: Vec<ItemResult>) -> Report {
        Report {
            assignment: "matmul".into(),
            build: BuildStatus::Built,
            notes: Vec::new(),
            seed: 7,
            items,
            execution_time: 12.345,
            sandbox: None,
        }
    }

    fn rendered(report: &Report) -> Value {
        serde_json::from_str(&to_json(report)).expect("results.json is JSON")
    }

    #[test]
    fn an_item_not_graded_here_is_no_red_failure_and_says_why() {
        let mut skipped = item(
            "gpu_speedup",
            0.0,
            0.0,
            Status::Skipped,
            "Not graded: needs a real GPU (an emulator's speed says nothing about a GPU's).",
        );
        skipped.mode = Some("emulated GPU".into());
        let mut counted = skipped.clone();
        counted.id = "gpu_speedup_zero".into();
        counted.max_score = 4.0;
        let json = rendered(&report(vec![skipped, counted]));
        assert_eq!(
            json["tests"],
            json!([
                {
                    "name": "gpu_speedup: gpu_speedup title — not graded here",
                    "number": "1",
                    "score": 0.0,
                    "max_score": 0.0,
                    "output": "Not graded here: needs a real GPU (an emulator's speed says nothing about a GPU's). It is left out of the maximum score.",
                    "extra_data": {"item": "gpu_speedup"}
                },
                {
                    "name": "gpu_speedup_zero: gpu_speedup title — not graded here",
                    "number": "2",
                    "score": 0.0,
                    "max_score": 4.0,
                    "status": "passed",
                    "output": "Not graded here: needs a real GPU (an emulator's speed says nothing about a GPU's). The rubric counts it as 0 where it cannot be measured.",
                    "extra_data": {"item": "gpu_speedup_zero"}
                }
            ])
        );
        assert!(json.get("leaderboard").is_none(), "{json}");
    }

    #[test]
    fn a_partial_speed_item_passes_with_its_score_and_fills_the_leaderboard() {
        let mut partial = item(
            "fast_speedup",
            2.0,
            4.0,
            Status::Partial,
            "`matmul_fast` runs 6.1× …: tier 2 of 3.",
        );
        partial.speedup = Some(6.1234);
        let mut gpu = item("gpu_speedup", 4.0, 4.0, Status::Passed, "runs 31.0×");
        gpu.mode = Some("real GPU: H100".into());
        gpu.speedup = Some(31.04);
        let failed = item(
            "naive_correct",
            0.0,
            3.0,
            Status::Failed,
            "C[0][0] is wrong",
        );
        let mut r = report(vec![partial, gpu, failed]);
        r.sandbox = Some("filesystem: landlock".into());
        let json = rendered(&r);
        assert_eq!(
            json,
            json!({
                "score": 6.0,
                "execution_time": 12.35,
                "output": "matmul: graded with seed 7 (reproduce with --seed 7)\nSandbox: filesystem: landlock",
                "output_format": "text",
                "extra_data": {"max_score": 11.0, "seed": 7, "sandbox": "filesystem: landlock"},
                "tests": [
                    {
                        "name": "fast_speedup: fast_speedup title",
                        "number": "1",
                        "score": 2.0,
                        "max_score": 4.0,
                        "status": "passed",
                        "output": "`matmul_fast` runs 6.1× …: tier 2 of 3.",
                        "extra_data": {"item": "fast_speedup"}
                    },
                    {
                        "name": "gpu_speedup: gpu_speedup title",
                        "number": "2",
                        "score": 4.0,
                        "max_score": 4.0,
                        "status": "passed",
                        "output": "[graded on: real GPU: H100] runs 31.0×",
                        "extra_data": {"item": "gpu_speedup"}
                    },
                    {
                        "name": "naive_correct: naive_correct title",
                        "number": "3",
                        "score": 0.0,
                        "max_score": 3.0,
                        "status": "failed",
                        "output": "C[0][0] is wrong",
                        "extra_data": {"item": "naive_correct"}
                    }
                ],
                "leaderboard": [
                    {"name": "fast_speedup (×)", "value": 6.12, "order": "desc"},
                    {"name": "gpu_speedup (×)", "value": 31.04, "order": "desc"}
                ]
            })
        );
    }

    #[test]
    fn the_summary_says_the_code_does_not_compile_and_what_was_ignored() {
        let mut r = report(vec![item(
            "naive_correct",
            0.0,
            3.0,
            Status::Failed,
            "error[E0425]",
        )]);
        r.build = BuildStatus::NotCompiled;
        r.notes = vec!["Your tests/grade.rs was replaced by the lab's.".into()];
        let json = rendered(&r);
        assert_eq!(
            json["output"],
            "matmul: graded with seed 7 (reproduce with --seed 7)\n\
             Your code does not compile: every item scored 0; each test below shows the \
             compiler's first error.\n\
             Note: Your tests/grade.rs was replaced by the lab's."
        );
    }

    #[test]
    fn no_hostile_note_or_detail_reaches_results_json_as_a_control() {
        let hostile = crate::report::escape::tests::HOSTILE;
        let mut report = Report {
            assignment: "matmul".into(),
            build: BuildStatus::Built,
            notes: hostile.iter().map(|h| h.to_string()).collect(),
            seed: 1,
            items: Vec::new(),
            execution_time: 1.0,
            sandbox: None,
        };
        report.items = hostile
            .iter()
            .enumerate()
            .map(|(n, h)| item(&format!("i{n}"), 0.0, 1.0, Status::Failed, h))
            .collect();
        let json = to_json(&report);
        for bad in ["\\u001b", "\\u0007", "\\u0000", "\\r", "\u{202e}", "\u{9b}"] {
            assert!(!json.contains(bad), "{bad} in {json}");
        }
        let _: Value = serde_json::from_str(&json).expect("JSON");
    }
}
