//! The GitHub Classroom workflow of a lab: `.github/workflows/classroom.yml` in the shape
//! Classroom generates, with one `autograding-command-grader` step per rubric item (one per
//! point level for speed tiers) so Classroom gives partial credit, and the grading reporter.
//!
//! The command grader (`classroom-resources/autograding-command-grader`, `src/main.js`) scores
//! a step all or nothing on its exit status, reads `max-score` as a whole number and runs the
//! command with only `PATH` and `HOME` from the job's environment, so every option is an
//! argument: `cargo test --test grade -- --classroom-step ID [--at-least P]` (see
//! `harness::classroom`). The build steps run with that same environment: anything else
//! (`CARGO_INCREMENTAL=0` from the toolchain step) would make the first grader step rebuild.

use crate::rubric::{Assignment, Item, Needs, SkipPolicy};
use std::fmt::Write;

/// Why a rubric cannot become a Classroom workflow.
#[derive(Debug, thiserror::Error)]
pub enum ClassroomError {
    /// A step would be worth a fraction of a point, which the command grader cannot score.
    #[error(
        "rubric `{assignment}`, item `{item}`: its Classroom step `{step}` would be worth {points} points, \
         but Classroom's command grader scores whole points only (it reads max-score as an integer); \
         give the item and its tiers whole points"
    )]
    FractionalPoints {
        /// The rubric's name.
        assignment: String,
        /// The item.
        item: String,
        /// The step.
        step: String,
        /// Its points.
        points: f64,
    },
    /// Neither a lab's name nor the path of a rubric.
    #[error("there is no lab `{0}` (known: {known}); pass a lab's name or the path of an assignment.toml", known = crate::rubric::known_names().join(", "))]
    UnknownLab(String),
    /// The rubric could not be read.
    #[error(transparent)]
    Rubric(#[from] crate::rubric::RubricError),
}

/// The workflow of a lab by name (`matmul`) or of an `assignment.toml` by path: what
/// `grader classroom LAB` prints.
pub fn workflow_for(spec: &str) -> Result<String, ClassroomError> {
    let assignment = crate::rubric::resolve(spec).map_err(|e| match e {
        crate::rubric::RubricError::Unknown { name, .. } => ClassroomError::UnknownLab(name),
        other => other.into(),
    })?;
    workflow(&assignment)
}

/// One grader step: a rubric item, or one level of a tiered item.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The rubric item it grades.
    pub item: String,
    /// The step id (letters, digits and `_`: the reporter reads `<ID upper-cased>_RESULTS`).
    pub id: String,
    /// What Classroom shows.
    pub name: String,
    /// The command it runs.
    pub command: String,
    /// Minutes before the action stops it.
    pub timeout_minutes: u64,
    /// Points it is worth.
    pub max_score: f64,
}

/// The grader steps for `assignment`, in rubric order. A GPU speedup whose policy is `skip`
/// is left out: Classroom's runners have no GPU, so it is out of the maximum there. Their
/// points add up to the rubric's maximum on a machine without a GPU.
pub fn steps(assignment: &Assignment) -> Vec<Step> {
    let mut steps = Vec::new();
    for item in &assignment.items {
        if needs_real_gpu_skipped(item) {
            continue;
        }
        let timeout_minutes = (item.timeout_secs / 60.0).ceil() as u64 + 1;
        let base = format!(
            "cargo test --quiet --test grade -- --classroom-step {}",
            item.id()
        );
        if item.spec.tiers().is_empty() {
            steps.push(Step {
                item: item.id().to_string(),
                id: item.id().to_string(),
                name: format!("{}: {}", item.id(), item.title),
                command: base,
                timeout_minutes,
                max_score: item.points,
            });
            continue;
        }
        let mut earned = 0.0;
        for (level, tier) in tiers_by_points(item).into_iter().enumerate() {
            steps.push(Step {
                item: item.id().to_string(),
                id: format!("{}_{}", item.id(), level + 1),
                name: format!("{}: {} (≥ {}×)", item.id(), item.title, tier.speedup),
                command: format!("{base} --at-least {}", crate::report::points(tier.points)),
                timeout_minutes,
                max_score: tier.points - earned,
            });
            earned = tier.points;
        }
    }
    steps
}

/// An item's tiers by increasing points (each tier's points are the item's total there).
fn tiers_by_points(item: &Item) -> Vec<crate::rubric::Tier> {
    let mut tiers = item.spec.tiers().to_vec();
    tiers.sort_by(|a, b| a.points.total_cmp(&b.points));
    tiers.dedup_by(|a, b| a.points == b.points);
    tiers.retain(|t| t.points > 0.0);
    tiers
}

/// Whether the item needs a real GPU and is left out of the maximum without one (runners have
/// none).
fn needs_real_gpu_skipped(item: &Item) -> bool {
    item.spec.needs() == Needs::RealGpu(SkipPolicy::Skip)
}

/// YAML's double-quoted scalar.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The workflow file's text; an error when a step would be worth a fraction of a point.
pub fn workflow(assignment: &Assignment) -> Result<String, ClassroomError> {
    let steps = steps(assignment);
    if let Some(step) = steps.iter().find(|s| s.max_score.fract() != 0.0) {
        return Err(ClassroomError::FractionalPoints {
            assignment: assignment.assignment.name.clone(),
            item: step.item.clone(),
            step: step.id.clone(),
            points: step.max_score,
        });
    }
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# Written by `grader classroom {name}`: one step per rubric item (one per speed tier), so\n\
         # GitHub Classroom gives partial credit. Official grades come from `grader batch`.",
        name = assignment.assignment.name
    );
    let skipped: Vec<&str> = assignment
        .items
        .iter()
        .filter(|i| needs_real_gpu_skipped(i))
        .map(|i| i.id())
        .collect();
    if !skipped.is_empty() {
        let needs = if skipped.len() == 1 { "needs" } else { "need" };
        let _ = writeln!(
            y,
            "# Not here: {} ({needs} a real GPU; runners have none, and the rubric's policy is skip).",
            skipped.join(", ")
        );
    }
    const CACHE: &str = "        path: |\n\
         \x20         ~/.cargo/registry\n\
         \x20         ~/.cargo/git\n\
         \x20         ~/.cache/gpu-labs\n\
         \x20         target\n\
         \x20       key: gpu-labs-${{ runner.os }}-${{ steps.toolchain.outputs.cachekey }}-${{ hashFiles('Cargo.lock', 'Cargo.toml') }}\n";
    y.push_str(
        "name: Autograding Tests\n\
         'on':\n\
         - push\n\
         - workflow_dispatch\n\
         - repository_dispatch\n\
         permissions:\n\
         \x20 checks: write\n\
         \x20 actions: read\n\
         \x20 contents: read\n\
         jobs:\n\
         \x20 run-autograding-tests:\n\
         \x20   runs-on: ubuntu-latest\n\
         \x20   if: github.actor != 'github-classroom[bot]'\n\
         \x20   steps:\n\
         \x20   - name: Checkout code\n\
         \x20     uses: actions/checkout@v4\n\
         \x20   - name: Rust toolchain\n\
         \x20     id: toolchain\n\
         \x20     uses: dtolnay/rust-toolchain@stable\n\
         \x20   # The compiled dependencies and the GPU emulator are restored here and saved right\n\
         \x20   # after the build, whatever the grade: a cache saved only when every step succeeds\n\
         \x20   # would never be saved for a submission below full marks.\n\
         \x20   - name: Restore the build cache\n\
         \x20     id: build-cache\n\
         \x20     uses: actions/cache/restore@v4\n\
         \x20     with:\n",
    );
    y.push_str(CACHE);
    y.push_str(
        "    # Built with the environment the command grader gives its commands (PATH and HOME\n\
         \x20   # only), so the grader steps find everything built. A build that fails still lets\n\
         \x20   # every step run and report 0, with the compiler's error in its log.\n\
         \x20   - name: Build the tests and the GPU emulator\n\
         \x20     id: build\n\
         \x20     continue-on-error: true\n\
         \x20     run: |\n\
         \x20       env -i PATH=\"$PATH\" HOME=\"$HOME\" cargo test --quiet --test grade --no-run\n\
         \x20       env -i PATH=\"$PATH\" HOME=\"$HOME\" cargo test --quiet --test grade -- --prepare\n\
         \x20   # Saved once per toolchain and Cargo.lock, by the first push whose crate builds (a build that failed\n\
         \x20   # has no emulator yet, and a saved key is never saved again).\n\
         \x20   - name: Save the build cache\n\
         \x20     if: always() && steps.build-cache.outputs.cache-hit != 'true' && steps.build.outcome == 'success'\n\
         \x20     uses: actions/cache/save@v4\n\
         \x20     with:\n",
    );
    y.push_str(CACHE);
    for step in &steps {
        let _ = write!(
            y,
            "    - name: {name}\n\
             \x20     id: {id}\n\
             \x20     uses: classroom-resources/autograding-command-grader@v1\n\
             \x20     with:\n\
             \x20       test-name: {name}\n\
             \x20       setup-command: ''\n\
             \x20       command: {command}\n\
             \x20       timeout: {timeout}\n\
             \x20       max-score: {max}\n",
            name = quoted(&step.name),
            id = step.id,
            command = quoted(&step.command),
            timeout = step.timeout_minutes,
            max = crate::report::points(step.max_score),
        );
    }
    y.push_str(
        "    - name: Score table\n\
         \x20     if: always()\n\
         \x20     continue-on-error: true\n\
         \x20     run: env -i PATH=\"$PATH\" HOME=\"$HOME\" GITHUB_STEP_SUMMARY=\"$GITHUB_STEP_SUMMARY\" cargo test --quiet --test grade -- --classroom-summary\n\
         \x20   - name: Autograding Reporter\n\
         \x20     uses: classroom-resources/autograding-grading-reporter@v1\n\
         \x20     env:\n",
    );
    for step in &steps {
        let _ = writeln!(
            y,
            "        {}_RESULTS: \"${{{{steps.{}.outputs.result}}}}\"",
            step.id.to_uppercase(),
            step.id
        );
    }
    let ids: Vec<&str> = steps.iter().map(|s| s.id.as_str()).collect();
    let _ = write!(y, "      with:\n        runners: {}\n", ids.join(","));
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_become_one_step_per_level_worth_the_extra_points() {
        let assignment = crate::rubric::embedded("matmul").unwrap();
        let steps = steps(&assignment);
        let speed: Vec<&Step> = steps
            .iter()
            .filter(|s| s.id.starts_with("fast_speedup"))
            .collect();
        let levels: Vec<(&str, f64)> = speed.iter().map(|s| (s.id.as_str(), s.max_score)).collect();
        assert_eq!(
            levels,
            [
                ("fast_speedup_1", 1.0),
                ("fast_speedup_2", 1.0),
                ("fast_speedup_3", 2.0)
            ]
        );
        assert!(speed[2]
            .command
            .ends_with("--classroom-step fast_speedup --at-least 4"));
        assert!(steps.iter().all(|s| !s.id.starts_with("gpu_speedup")));
        let total: f64 = steps.iter().map(|s| s.max_score).sum();
        let counted: f64 = assignment
            .items
            .iter()
            .filter(|i| !matches!(i.spec.needs(), Needs::RealGpu(_)))
            .map(|i| i.points)
            .sum();
        assert_eq!(total, counted);
    }

    #[test]
    fn every_step_is_reported() {
        let text = workflow(&crate::rubric::embedded("matmul").unwrap()).unwrap();
        assert!(
            text.contains("NAIVE_CORRECT_RESULTS: \"${{steps.naive_correct.outputs.result}}\""),
            "{text}"
        );
        assert!(
            text.contains("runners: naive_correct,fast_correct,"),
            "{text}"
        );
        assert!(text.contains("# Not here: gpu_speedup"), "{text}");
    }

    #[test]
    fn a_step_worth_a_fraction_of_a_point_is_refused() {
        let text = crate::rubric::embedded("matmul").unwrap().text.replacen(
            "{ speedup = 2.0, points = 1 }",
            "{ speedup = 2.0, points = 0.5 }",
            1,
        );
        let assignment =
            crate::rubric::parse(&text, std::path::Path::new("assignment.toml")).unwrap();
        let message = workflow(&assignment).unwrap_err().to_string();
        assert!(
            message.contains("item `fast_speedup`")
                && message.contains("fast_speedup_1")
                && message.contains("0.5 points"),
            "{message}"
        );
    }
}
