//! The GitHub Classroom workflow of a lab: `.github/workflows/classroom.yml` in the shape
//! Classroom generates, with one `autograding-command-grader` step per rubric item (one per
//! point level for speed tiers) so Classroom gives partial credit, and the grading reporter.
//!
//! The command grader scores a step all or nothing on its exit status and passes only `PATH`
//! and `HOME` to it, so every option is an argument:
//! `cargo test --test grade -- --classroom-step ID [--at-least P]` (see `harness::classroom`).

use crate::rubric::{Assignment, Item, ItemKind, SkipPolicy};
use std::fmt::Write;

/// One grader step: a rubric item, or one level of a tiered item.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
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
        if item.kind == ItemKind::GpuSpeedup && item.policy == SkipPolicy::Skip {
            continue;
        }
        let timeout_minutes = (item.timeout_secs / 60.0).ceil() as u64 + 1;
        let base = format!(
            "cargo test --quiet --test grade -- --classroom-step {}",
            item.id()
        );
        if item.tiers.is_empty() {
            steps.push(Step {
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
    let mut tiers = item.tiers.clone();
    tiers.sort_by(|a, b| a.points.total_cmp(&b.points));
    tiers.dedup_by(|a, b| a.points == b.points);
    tiers.retain(|t| t.points > 0.0);
    tiers
}

/// YAML's double-quoted scalar.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The workflow file's text.
pub fn workflow(assignment: &Assignment) -> String {
    let steps = steps(assignment);
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
        .filter(|i| i.kind == ItemKind::GpuSpeedup && i.policy == SkipPolicy::Skip)
        .map(|i| i.id())
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(
            y,
            "# Not here: {} (needs a real GPU; runners have none, and the rubric's policy is skip).",
            skipped.join(", ")
        );
    }
    y.push_str(
        "name: Autograding Tests\n\
         'on':\n\
         - push\n\
         - workflow_dispatch\n\
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
         \x20     uses: dtolnay/rust-toolchain@stable\n\
         \x20   - name: Cache the build\n\
         \x20     uses: actions/cache@v4\n\
         \x20     with:\n\
         \x20       path: |\n\
         \x20         ~/.cargo/registry\n\
         \x20         ~/.cargo/git\n\
         \x20         ~/.cache/gpu-labs\n\
         \x20         target\n\
         \x20       key: gpu-labs-${{ runner.os }}-${{ hashFiles('Cargo.lock', 'Cargo.toml') }}\n\
         \x20   - name: Build the tests and the GPU emulator\n\
         \x20     run: cargo test --quiet --test grade --no-run && cargo test --quiet --test grade -- --prepare\n",
    );
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
         \x20     run: cargo test --quiet --test grade -- --classroom-summary\n\
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
    y
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
            .filter(|i| i.kind != ItemKind::GpuSpeedup)
            .map(|i| i.points)
            .sum();
        assert_eq!(total, counted);
    }

    #[test]
    fn every_step_is_reported() {
        let text = workflow(&crate::rubric::embedded("matmul").unwrap());
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
}
