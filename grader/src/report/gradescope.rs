//! The report as Gradescope's `results.json` (`score`, `max_score`, `execution_time`, and
//! `tests[]` with `name`, `score`, `max_score`, `status`, `output`), which other tools read too.

use super::{Report, Status};
use serde::Serialize;

#[derive(Serialize)]
struct Results<'a> {
    score: f64,
    max_score: f64,
    execution_time: f64,
    output: String,
    tests: Vec<Test<'a>>,
}

#[derive(Serialize)]
struct Test<'a> {
    name: String,
    number: &'a str,
    score: f64,
    max_score: f64,
    status: &'static str,
    output: String,
}

/// Serializes the report in Gradescope's field names.
pub fn to_json(report: &Report) -> String {
    let results = Results {
        score: report.score(),
        max_score: report.max_score(),
        execution_time: (report.execution_time * 100.0).round() / 100.0,
        output: format!(
            "{}: graded with seed {} (reproduce with --seed {})",
            report.assignment, report.seed, report.seed
        ),
        tests: report
            .items
            .iter()
            .map(|i| Test {
                name: format!("{}: {}", i.id, i.title),
                number: &i.id,
                score: i.score,
                max_score: i.max_score,
                // Gradescope knows only passed/failed; a partial or skipped item is not passed.
                status: if i.status == Status::Passed {
                    "passed"
                } else {
                    "failed"
                },
                output: match (&i.mode, i.status) {
                    (Some(mode), status) if status != Status::Skipped => {
                        format!("[graded on: {mode}] {}", i.details)
                    }
                    _ => i.details.clone(),
                },
            })
            .collect(),
    };
    serde_json::to_string_pretty(&results).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
