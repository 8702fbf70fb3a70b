//! The harness's GitHub Classroom side. Classroom's command-grader action scores a step all or
//! nothing on its command's exit status, so each rubric item (each speed tier) is one step:
//! `cargo test --test grade -- --classroom-step ID [--at-least POINTS]`. The item is graded once
//! per commit, with a seed derived from the commit, and its result is kept under
//! `target/classroom/`, so the steps of one item (its tiers) read the same measurement.
//! `--classroom-summary` turns the kept results into GitHub's step summary.

use super::HarnessOptions;
use crate::grade::{grade, GradeOptions, Target};
use crate::messages::t;
use crate::report::{self, ItemResult, Report, Status};
use crate::rubric::Assignment;
use grader_engine::event::Event;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where this run's step results are kept, and its seed. The seed comes from the commit the
/// repository is at (so every step of one push grades the same inputs) unless one was given;
/// the folder also carries a hash of `src/`, so a result is never reused for other code.
fn run_dir(crate_dir: &Path, seed: Option<u64>) -> (PathBuf, u64) {
    let commit = grader_engine::fingerprint::commit_of(crate_dir);
    let sources = grader_engine::fingerprint::submission(crate_dir);
    let seed = seed.unwrap_or_else(|| {
        grader_engine::fingerprint::of_text(commit.as_deref().unwrap_or(sources.as_str()))
    });
    let commit: String = commit.unwrap_or_default().chars().take(12).collect();
    (
        crate_dir
            .join("target")
            .join("classroom")
            .join(format!("{commit}-{sources}-{seed}")),
        seed,
    )
}

/// `--classroom-step ID [--at-least P]`: grades item `id` (or reads this commit's result of
/// it), prints its feedback, and exits 0 exactly when it earned `P` points (default: all).
pub fn step(
    target: &Target,
    assignment: &Assignment,
    crate_dir: &Path,
    options: &HarnessOptions,
    id: &str,
) -> Result<ExitCode, String> {
    let item = assignment.item(id).ok_or_else(|| {
        let ids: Vec<&str> = assignment.items.iter().map(|i| i.id()).collect();
        format!(
            "--classroom-step: the rubric `{}` has no item `{id}` (its items: {})",
            assignment.assignment.name,
            ids.join(", ")
        )
    })?;
    let (dir, seed) = run_dir(crate_dir, options.seed);
    let kept = dir.join(format!("{id}.json"));
    let result = match read_result(&kept) {
        Some(result) => {
            println!("{}", t!("classroom-earlier", id = id, seed = seed));
            result
        }
        None => {
            let mut grade_options = GradeOptions::new(seed);
            grade_options.gpu = options.gpu;
            grade_options.only = Some(vec![id.to_string()]);
            let report = grade(target, assignment, &grade_options, &mut |event| {
                if let Event::Started { backend_label, .. } = event {
                    println!(
                        "{}",
                        t!(
                            "classroom-grading",
                            id = id,
                            seed = seed,
                            backend = backend_label
                        )
                    );
                }
            })
            .map_err(|e| e.to_string())?;
            let result = report
                .items
                .into_iter()
                .next()
                .ok_or_else(|| format!("the grader returned no result for `{id}`"))?;
            keep_result(&dir, &kept, &result)?;
            result
        }
    };
    let needed = options.at_least.unwrap_or(item.points);
    println!(
        "{}",
        t!(
            "classroom-result",
            id = id,
            score = report::points(result.score),
            max = report::points(result.max_score),
            status = report::table::status_word(result.status),
            reason = result.reason
        )
    );
    if matches!(result.status, Status::Failed | Status::Partial) {
        println!("\n{}", result.details);
    }
    let earned = result.status != Status::Skipped && result.score + 1e-9 >= needed;
    let verdict = if earned {
        t!("classroom-earned")
    } else {
        t!("classroom-not-earned")
    };
    let points = report::points(needed);
    println!(
        "{}",
        if needed == 1.0 {
            t!(
                "classroom-needs-one",
                points = points,
                id = id,
                verdict = verdict
            )
        } else {
            t!(
                "classroom-needs-many",
                points = points,
                id = id,
                verdict = verdict
            )
        }
    );
    Ok(if earned {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn read_result(path: &Path) -> Option<ItemResult> {
    serde_json::from_slice(
        &grader_engine::intake::read_file(path, grader_engine::intake::GRADER_FILE_BYTES, "")
            .ok()?,
    )
    .ok()
}

/// Writes a step's result whole (a temporary file renamed into place).
fn keep_result(dir: &Path, path: &Path, result: &ItemResult) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot keep the result in {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(fail)?;
    let text = serde_json::to_vec_pretty(result).map_err(|e| e.to_string())?;
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, text).map_err(fail)?;
    std::fs::rename(&partial, path).map_err(fail)
}

/// `--classroom-summary`: this commit's step results as a Markdown table, printed and added to
/// GitHub's step summary.
pub fn summary(
    assignment: &Assignment,
    crate_dir: &Path,
    seed: Option<u64>,
) -> Result<ExitCode, String> {
    let (dir, seed) = run_dir(crate_dir, seed);
    let items: Vec<ItemResult> = assignment
        .items
        .iter()
        .filter_map(|item| read_result(&dir.join(format!("{}.json", item.id()))))
        .collect();
    if items.is_empty() {
        println!(
            "no Classroom step has graded this commit yet (looked in {})",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let report = Report {
        assignment: assignment.assignment.name.clone(),
        build: Default::default(),
        notes: Vec::new(),
        seed,
        items,
        execution_time: 0.0,
        sandbox: None,
    };
    print!("{}", report::markdown::step_summary(&report));
    append_step_summary(&report);
    Ok(ExitCode::SUCCESS)
}

/// Appends the report's Markdown table to `$GITHUB_STEP_SUMMARY` when GitHub Actions set it.
pub fn append_step_summary(report: &Report) {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return;
    };
    use std::io::Write;
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(report::markdown::step_summary(report).as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot add the score table to $GITHUB_STEP_SUMMARY ({}): {e}",
            PathBuf::from(path).display()
        );
    }
}
