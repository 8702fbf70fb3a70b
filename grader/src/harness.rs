//! The `cargo test` entry point of a lab crate (`tests/grade.rs`, `harness = false`).
//!
//! Started by cargo, the test binary is the supervisor: it prints libtest-style lines per
//! rubric item (through libtest-mimic, so filters, `--list` and `--exact` work), then a score
//! table. It re-runs itself in worker mode for each item. Options come as test-binary
//! arguments, because GitHub Classroom strips environment variables:
//! `cargo test --test grade -- --seed 7 fast_correct`.

use crate::check::{grade_item, GradeContext};
use crate::protocol::WORKER_FLAG;
use crate::report::{self, ItemResult, Report, Status};
use crate::supervisor::WorkerCommand;
use crate::worker::{self, LabWorker};
use crate::{inputs, rubric};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The harness's own options, taken out of the arguments before libtest sees them.
#[derive(Debug, Default)]
pub struct HarnessOptions {
    /// `--seed N`: repeat a run exactly.
    pub seed: Option<u64>,
    /// `--json FILE`: also write Gradescope-style results.
    pub json: Option<PathBuf>,
    /// `--assignment NAME|PATH`: grade with another rubric.
    pub assignment: Option<String>,
    /// `--gpu auto|real|emulate|off` (default `$GRADER_GPU`, else auto): where GPU items run.
    pub gpu: crate::gpu::GpuMode,
}

/// Splits the harness's options from libtest's arguments.
pub fn split_args(args: Vec<String>) -> Result<(HarnessOptions, Vec<String>), String> {
    let mut options = HarnessOptions::default();
    // GRADER_GPU sets the default on a laptop; `--gpu` wins (Classroom strips variables).
    if let Ok(mode) = std::env::var("GRADER_GPU") {
        options.gpu = mode.parse()?;
    }
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if !matches!(
            flag.as_str(),
            "--seed" | "--json" | "--assignment" | "--gpu"
        ) {
            rest.push(arg);
            continue;
        }
        let value = inline
            .or_else(|| it.next())
            .ok_or_else(|| format!("{flag} needs a value, e.g. `{flag} 7`"))?;
        match flag.as_str() {
            "--seed" => {
                options.seed = Some(value.parse().map_err(|_| {
                    format!("--seed takes a whole number (the one printed by a run), not `{value}`")
                })?)
            }
            "--json" => options.json = Some(PathBuf::from(value)),
            "--gpu" => options.gpu = value.parse()?,
            _ => options.assignment = Some(value),
        }
    }
    Ok((options, rest))
}

/// Runs a lab crate's grading under `cargo test`, or serves one item in worker mode.
pub fn main(lab: impl LabWorker + 'static) -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(WORKER_FLAG) {
        return match worker::serve(&lab) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(101)
            }
        };
    }
    match supervise(lab.info().name, args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn supervise(lab_name: &str, args: Vec<String>) -> Result<ExitCode, String> {
    let (options, rest) = split_args(args)?;
    let mut test_args = libtest_mimic::Arguments::from_iter(rest);
    test_args.test_threads.get_or_insert(1);
    let assignment = match &options.assignment {
        Some(spec) => rubric::resolve(spec),
        None => rubric::embedded(lab_name),
    }
    .map_err(|e| e.to_string())?;
    let seed = options.seed.unwrap_or_else(inputs::fresh_seed);
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this test binary to start workers: {e}"))?;
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    if crate::gpu::will_build_emulator(options.gpu) {
        eprintln!("building the GPU emulator for the GPU items (first run only, about a minute) …");
    }
    let (backend, backend_label) =
        crate::gpu::backend_for(options.gpu).map_err(|e| e.to_string())?;
    let ctx = Arc::new(GradeContext {
        command: WorkerCommand {
            program,
            cwd: None,
            env: Vec::new(),
        },
        seed,
        source_dir: Some(crate_dir.join("src")),
        backend,
        backend_label,
    });
    if !test_args.list {
        println!(
            "grading `{}` with seed {seed}, GPU items on: {} (to repeat this run exactly: cargo test --test grade -- --seed {seed})",
            assignment.assignment.name, ctx.backend_label
        );
    }
    let results: Arc<Mutex<Vec<(usize, ItemResult)>>> = Arc::default();
    let started = Instant::now();
    let trials = assignment
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let (ctx, results, item) = (Arc::clone(&ctx), Arc::clone(&results), item.clone());
            let skipped = crate::check::skipped_here(&ctx, &item).is_some();
            libtest_mimic::Trial::test(item.id().to_string(), move || {
                let result = grade_item(&ctx, &item)
                    .map_err(|e| format!("the grader could not grade this item: {e}"))?;
                let verdict = match result.status {
                    Status::Passed | Status::Skipped => Ok(()),
                    Status::Partial | Status::Failed => Err(format!(
                        "{}/{} points. {}",
                        report::points(result.score),
                        report::points(result.max_score),
                        result.details
                    )
                    .into()),
                };
                if let Ok(mut r) = results.lock() {
                    r.push((index, result));
                }
                verdict
            })
            // Shown as `ignored`; its result (skipped, with the reason) is added below.
            .with_ignored_flag(skipped)
        })
        .collect();
    let conclusion = libtest_mimic::run(&test_args, trials);
    if test_args.list {
        return Ok(conclusion.exit_code());
    }
    let mut graded = results.lock().map(|r| r.clone()).unwrap_or_default();
    for (index, item) in assignment.items.iter().enumerate() {
        let ran = graded.iter().any(|(i, _)| *i == index);
        if let (false, Some(skipped)) = (ran, crate::check::skipped_here(&ctx, item)) {
            if test_args
                .filter
                .as_deref()
                .is_none_or(|f| item.id().contains(f))
            {
                graded.push((index, skipped));
            }
        }
    }
    graded.sort_by_key(|(index, _)| *index);
    let report = Report {
        assignment: assignment.assignment.name.clone(),
        build: Default::default(),
        notes: Vec::new(),
        seed,
        items: graded.into_iter().map(|(_, r)| r).collect(),
        execution_time: started.elapsed().as_secs_f64(),
    };
    if !report.items.is_empty() {
        print!("{}", report::table::render(&report));
        println!("seed {seed}: repeat with `cargo test --test grade -- --seed {seed}`");
    }
    if let Some(path) = &options.json {
        std::fs::write(path, report::gradescope::to_json(&report))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(conclusion.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn harness_options_are_taken_out_and_the_rest_is_left_for_libtest() {
        let (o, rest) = split_args(strings(&[
            "bin",
            "--seed",
            "7",
            "--json=r.json",
            "fast",
            "--exact",
        ]))
        .unwrap();
        assert_eq!(o.seed, Some(7));
        assert_eq!(o.json, Some(PathBuf::from("r.json")));
        assert_eq!(rest, strings(&["bin", "fast", "--exact"]));
    }

    #[test]
    fn a_bad_seed_says_what_is_expected() {
        let err = split_args(strings(&["bin", "--seed", "x"])).unwrap_err();
        assert!(err.contains("whole number"), "{err}");
        assert!(split_args(strings(&["bin", "--seed"]))
            .unwrap_err()
            .contains("needs a value"));
    }
}
