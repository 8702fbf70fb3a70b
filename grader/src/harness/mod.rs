//! The `cargo test` entry point of a lab crate (`tests/grade.rs`, `harness = false`).
//!
//! Started by cargo, the test binary is the supervisor: it prints libtest-style lines per
//! rubric item (libtest's arguments read by [`test_args`], so filters, `--list` and `--exact`
//! work), then a score table. It re-runs itself in worker mode for each item. Options come as
//! test-binary arguments, because GitHub Classroom strips environment variables:
//! `cargo test --test grade -- --seed 7 fast_correct`.

pub mod classroom;

use crate::grade::{grade, GradeOptions, Target};
use crate::messages::t;
use crate::report::{self, Report, Status};
use crate::{inputs, rubric};
use grader_engine::event::Event;
use grader_engine::protocol::WORKER_FLAG;
use grader_engine::worker::{self, LabWorker};
use std::path::PathBuf;
use std::process::ExitCode;

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
    pub gpu: grader_engine::gpu::GpuMode,
    /// `--classroom-step ID`: grade one item as a GitHub Classroom step (seed from the commit,
    /// the result kept for the item's other steps); exit 0 exactly when it earns its points.
    pub classroom_step: Option<String>,
    /// `--at-least POINTS`: with `--classroom-step`, exit 0 when the item earns at least this
    /// many points (one step per speed tier) instead of all of them.
    pub at_least: Option<f64>,
    /// `--prepare`: build what GPU items need (the emulator) and exit, grading nothing.
    pub prepare: bool,
    /// `--classroom-summary`: print this commit's Classroom step results as a Markdown table
    /// and append it to `$GITHUB_STEP_SUMMARY`.
    pub classroom_summary: bool,
    /// `--lang en|zh-TW`: the language of the feedback, over the locale and the rubric (see
    /// [`grader_engine::i18n`]).
    pub lang: Option<grader_engine::i18n::Lang>,
}

/// Splits the harness's options from libtest's arguments.
pub fn split_args(args: Vec<String>) -> Result<(HarnessOptions, Vec<String>), String> {
    let mut options = HarnessOptions::default();
    // GRADER_GPU sets the default on a laptop; `--gpu` wins (Classroom strips variables).
    if let Ok(mode) = std::env::var("GRADER_GPU") {
        options.gpu = mode.parse()?;
    }
    // GRADER_LANG asks for a language as `--lang` does.
    if let Some(lang) = std::env::var("GRADER_LANG").ok().filter(|l| !l.is_empty()) {
        options.lang = Some(lang.parse()?);
    }
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "--prepare" => {
                options.prepare = true;
                continue;
            }
            "--classroom-summary" => {
                options.classroom_summary = true;
                continue;
            }
            _ => {}
        }
        if !matches!(
            flag.as_str(),
            "--seed"
                | "--json"
                | "--assignment"
                | "--gpu"
                | "--classroom-step"
                | "--at-least"
                | "--lang"
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
            "--lang" => options.lang = Some(value.parse()?),
            "--classroom-step" => options.classroom_step = Some(value),
            "--at-least" => {
                options.at_least =
                    Some(value.parse().map_err(|_| {
                        format!("--at-least takes a number of points, not `{value}`")
                    })?)
            }
            _ => options.assignment = Some(value),
        }
    }
    Ok((options, rest))
}

/// Runs a lab crate's grading under `cargo test`, or serves one item in worker mode.
pub fn main(lab: impl LabWorker + 'static) -> ExitCode {
    if let Some(code) = grader_engine::gpu::trial::serve_if_asked() {
        return code;
    }
    // A worker's kernel compiler on the emulator: this program, never the submission's.
    if let Some(code) = grader_engine::kernel_compiler::serve_if_asked() {
        return code;
    }
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(WORKER_FLAG) {
        return worker::exit_code(worker::serve(&lab));
    }
    match supervise(lab.lab_name(), args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// libtest's exit code when a test failed.
const TESTS_FAILED: u8 = 101;

mod edit_first;
pub mod test_args;

fn supervise(lab_name: &str, args: Vec<String>) -> Result<ExitCode, String> {
    let (options, rest) = split_args(args)?;
    let test_args = test_args::parse(rest.into_iter().skip(1))?;
    if test_args.help {
        println!("{}", test_args::usage());
        return Ok(ExitCode::SUCCESS);
    }
    let assignment = match &options.assignment {
        Some(spec) => rubric::resolve(spec),
        None => rubric::embedded(lab_name),
    }
    .map_err(|e| e.to_string())?;
    // A student's own run: `--lang`, else a Traditional Chinese locale, else the rubric's.
    grader_engine::i18n::set(grader_engine::i18n::choose(
        options.lang,
        grader_engine::i18n::from_environment(),
        assignment.language(),
    ));
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    if options.prepare {
        return prepare(options.gpu);
    }
    if options.classroom_summary {
        return classroom::summary(&assignment, &crate_dir, options.seed);
    }
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find this test binary to start workers: {e}"))?;
    let target = Target::Running {
        program,
        source_dir: crate_dir.join("src"),
    };
    if let Some(id) = &options.classroom_step {
        return classroom::step(&target, &assignment, &crate_dir, &options, id);
    }
    let seed = options.seed.unwrap_or_else(inputs::fresh_seed);
    let mut grade_options = GradeOptions::new(seed);
    grade_options.gpu = options.gpu;
    // Items at once as libtest runs tests at once: `--test-threads`, else RUST_TEST_THREADS,
    // else what this machine's cores and memory allow.
    grade_options.items_at_once = test_args
        .test_threads
        .or_else(|| {
            std::env::var("RUST_TEST_THREADS")
                .ok()
                .and_then(|n| n.parse().ok())
        })
        .filter(|n| *n > 0)
        .unwrap_or_else(crate::turns::items_at_once);
    let skipped = skipped_ids(&assignment, options.gpu)?;
    let selected = select(&assignment, &test_args, &skipped);
    if test_args.list {
        for id in &selected {
            println!("{id}: test");
        }
        if !test_args.terse {
            println!("\n{} tests, 0 benchmarks", selected.len());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let filtered_out = assignment.items.len() - selected.len();
    // What changed since the last run is graded first; the table keeps the rubric's order.
    let harness_dir = chart_dir(&crate_dir);
    let sources = edit_first::snapshot(&crate_dir.join("src"));
    let first: Vec<String> = edit_first::load(&harness_dir)
        .map(|before| edit_first::touched(&assignment, &before, &sources))
        .unwrap_or_default()
        .into_iter()
        .filter(|id| selected.contains(id))
        .collect();
    let reordered;
    let in_order = if first.is_empty() || first.len() == selected.len() {
        &assignment
    } else {
        println!("{}", t!("harness-edited-first", items = first.join(", ")));
        reordered = edit_first::reordered(&assignment, &first);
        &reordered
    };
    grade_options.only = Some(selected);
    let mut lines = LibtestLines::default();
    let mut report = grade(&target, in_order, &grade_options, &mut |event| {
        lines.on_event(event, &assignment)
    })
    .map_err(|e| e.to_string())?;
    edit_first::store(&harness_dir, &sources);
    let rubric_index = |id: &str| assignment.items.iter().position(|i| i.id() == id);
    report.items.sort_by_key(|i| rubric_index(&i.id));
    lines.finish(&report, filtered_out);
    if !report.items.is_empty() {
        print!("{}", report::table::render(&report));
        println!("{}", t!("harness-repeat", seed = seed));
        write_chart(&crate_dir, &report);
        classroom::append_step_summary(&report);
    }
    if let Some(path) = &options.json {
        std::fs::write(path, report::gradescope::to_json(&report))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let failed = report
        .items
        .iter()
        .any(|i| matches!(i.status, Status::Failed | Status::Partial));
    Ok(if failed {
        ExitCode::from(TESTS_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Where the harness writes the speed chart and the report it was drawn from, under the lab
/// crate's build output (no worker can write there: the supervisor writes it after grading).
pub fn chart_dir(crate_dir: &std::path::Path) -> PathBuf {
    crate_dir.join("target").join("gpu-labs")
}

/// Writes the speed chart ([`report::chart`]) and `report.json` beside it when a speed item was
/// timed, and prints where; a file that cannot be written is a warning, never a failed run.
fn write_chart(crate_dir: &std::path::Path, report: &Report) {
    let Some(svg) = report::chart::svg(report) else {
        return;
    };
    let dir = chart_dir(crate_dir);
    let path = dir.join(report::chart::FILE_NAME);
    let json = serde_json::to_vec_pretty(report).unwrap_or_default();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, svg))
        .and_then(|()| std::fs::write(dir.join("report.json"), json));
    match written {
        Ok(()) => println!("{}", report::chart::written_line(&path)),
        Err(e) => eprintln!(
            "warning: cannot write the speed chart in {}: {e}",
            dir.display()
        ),
    }
}

/// `--prepare`: builds what GPU items need (the emulator) so later runs only grade.
fn prepare(gpu: grader_engine::gpu::GpuMode) -> Result<ExitCode, String> {
    if grader_engine::gpu::will_build_emulator(gpu) {
        println!("{}", t!("prepare-building"));
    }
    let (_, label) = grader_engine::gpu::backend_for(gpu).map_err(|e| e.to_string())?;
    println!("{}", t!("prepare-ready", backend = label));
    Ok(ExitCode::SUCCESS)
}

/// The ids of the items that cannot be graded here (shown as `ignored`, like libtest's).
fn skipped_ids(
    assignment: &rubric::Assignment,
    gpu: grader_engine::gpu::GpuMode,
) -> Result<Vec<String>, String> {
    let ctx = grader_engine::check::GradeContext::for_listing(gpu).map_err(|e| e.to_string())?;
    Ok(assignment
        .items
        .iter()
        .filter(|item| grader_engine::check::skipped_here(&ctx, item).is_some())
        .map(|item| item.id().to_string())
        .collect())
}

/// The items libtest's arguments select: those any filter matches (a substring, or the whole
/// id with `--exact`; all when there is none), minus `--skip`s; with `--ignored`, only items
/// that cannot be graded here.
fn select(
    assignment: &rubric::Assignment,
    args: &test_args::TestArgs,
    skipped: &[String],
) -> Vec<String> {
    let matches = |id: &str, pattern: &str| {
        if args.exact {
            id == pattern
        } else {
            id.contains(pattern)
        }
    };
    assignment
        .items
        .iter()
        .map(|item| item.id().to_string())
        .filter(|id| args.filters.is_empty() || args.filters.iter().any(|f| matches(id, f)))
        .filter(|id| !args.skip.iter().any(|s| matches(id, s)))
        .filter(|id| !args.ignored || skipped.contains(id))
        .collect()
}

/// Prints libtest's lines from grading events: `running N tests`, `test id ... ok`, then the
/// failures and `test result: …`, so the output reads like any `cargo test`.
#[derive(Default)]
struct LibtestLines {
    passed: usize,
    failed: Vec<(String, String)>,
    ignored: usize,
}

impl LibtestLines {
    fn on_event(&mut self, event: Event<'_>, assignment: &rubric::Assignment) {
        match event {
            Event::BuildingEmulator => eprintln!("{}", t!("harness-building-emulator")),
            Event::Ignored { note } => eprintln!(
                "{}",
                t!("harness-warning", note = report::escape::terminal(note))
            ),
            Event::Started {
                seed,
                backend_label,
                items,
            } => {
                println!(
                    "{}",
                    t!(
                        "harness-started",
                        assignment = assignment.assignment.name,
                        seed = seed,
                        backend = backend_label
                    )
                );
                println!(
                    "\nrunning {items} test{}",
                    if items == 1 { "" } else { "s" }
                );
            }
            Event::ItemFinished { item, result } => {
                let verdict = match result.status {
                    Status::Passed => {
                        self.passed += 1;
                        "ok".to_string()
                    }
                    Status::Skipped => {
                        self.ignored += 1;
                        t!(
                            "harness-ignored",
                            reason = report::escape::terminal(&result.reason)
                        )
                    }
                    Status::Partial | Status::Failed => {
                        self.failed.push((
                            item.id().to_string(),
                            t!(
                                "harness-failure",
                                score = report::points(result.score),
                                max = report::points(result.max_score),
                                details = report::escape::terminal(&result.details)
                            ),
                        ));
                        "FAILED".to_string()
                    }
                };
                println!("test {} ... {verdict}", item.id());
            }
            _ => {}
        }
    }

    fn finish(&mut self, report: &Report, filtered_out: usize) {
        // Items finish in any order when several run at once; failures are listed in the
        // report's (the rubric's).
        let index = |id: &str| report.items.iter().position(|i| i.id == id);
        self.failed.sort_by_key(|(id, _)| index(id));
        if !self.failed.is_empty() {
            println!("\nfailures:");
            for (id, text) in &self.failed {
                println!("\n---- {id} ----\n{text}");
            }
            println!("\nfailures:");
            for (id, _) in &self.failed {
                println!("    {id}");
            }
        }
        println!(
            "\ntest result: {}. {} passed; {} failed; {} ignored; 0 measured; {filtered_out} filtered out; finished in {:.2}s",
            if self.failed.is_empty() { "ok" } else { "FAILED" },
            self.passed,
            self.failed.len(),
            self.ignored,
            report.execution_time
        );
        // Where this machine could not apply part of the sandbox, say which part.
        if let Some(line) = report
            .sandbox
            .as_ref()
            .filter(|_| !grader_engine::sandbox::available().complete())
        {
            println!("{}", t!("harness-sandbox", sandbox = line));
        }
    }
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
