//! Grading one submission is one call: [`grade`] builds it (or uses the running test binary),
//! resolves where GPU items run, grades each selected rubric item and returns the [`Report`],
//! reporting progress as [`Event`]s. `grader grade`, `grader batch`, the Classroom steps and
//! the `cargo test` harness all call it; what they print is decided by their event callbacks
//! and by the renderers in [`crate::report`], which only read reports.

use crate::report::{BuildStatus, Report};
use crate::rubric::{Assignment, Item};
use crate::stage::{self, Build, StageError};
use crate::turns::Turn;
use grader_engine::check::{grade_item, GradeContext};
use grader_engine::event::Event;
use grader_engine::gpu::{GpuError, GpuMode};
use grader_engine::protocol::Backend;
use grader_engine::supervisor::{SupervisorError, WorkerCommand};
use std::path::PathBuf;
use std::time::Instant;

/// What is graded.
#[derive(Debug, Clone)]
pub enum Target {
    /// A lab crate on disk. Only its `src/` is used: it is built with the lab's own manifest,
    /// the grader's own harness and this grader (official grading).
    Crate(PathBuf),
    /// The running test binary of a lab crate (its `cargo test`): workers are started from it.
    Running {
        /// The test binary.
        program: PathBuf,
        /// The crate's `src/`, for the rubric's source checks.
        source_dir: PathBuf,
    },
}

/// How to grade, resolved before grading starts.
#[derive(Debug, Clone)]
pub struct GradeOptions {
    /// The seed every input is derived from.
    pub seed: u64,
    /// Where GPU items run.
    pub gpu: GpuMode,
    /// The build cache (shared target directory, staged crates, the emulator).
    pub cache: PathBuf,
    /// The ids of the items to grade, or every item when `None`. Items keep rubric order.
    pub only: Option<Vec<String>>,
    /// How many items are graded at once ([`crate::turns`]): 1 where submissions are
    /// already graded side by side (a batch's jobs), [`crate::turns::items_at_once`] for one
    /// submission.
    pub items_at_once: usize,
}

impl GradeOptions {
    /// Every item, a fresh seed, GPU mode `auto`, the default cache.
    pub fn new(seed: u64) -> Self {
        GradeOptions {
            seed,
            gpu: GpuMode::Auto,
            cache: stage::default_cache_dir(),
            only: None,
            items_at_once: 1,
        }
    }

    /// The rubric items this run grades, in rubric order.
    pub fn selected<'a>(&self, assignment: &'a Assignment) -> Vec<&'a Item> {
        assignment
            .items
            .iter()
            .filter(|item| {
                self.only
                    .as_ref()
                    .is_none_or(|ids| ids.iter().any(|id| id == item.id()))
            })
            .collect()
    }
}

/// Why a submission could not be graded. A student's mistakes (a compile error, a panic, a
/// wrong value) are not here: they are results in the report.
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    /// The crate could not be read or built for a reason that is not its code.
    #[error(transparent)]
    Stage(#[from] StageError),
    /// GPU items cannot run as asked (`--gpu real` without a GPU, say).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The rubric names a lab this grader does not know.
    #[error("this grader has no lab `{0}`")]
    UnknownLab(String),
    /// A scratch folder could not be made.
    /// The grader's binary, which serves the baselines, is no longer where it ran from.
    #[error(
        "the grader's own program {} was replaced or removed while it ran (it runs the speed \
         items' baselines): run the grading again once it is built",
        .0.display()
    )]
    OwnBinaryGone(PathBuf),
    #[error("cannot make a scratch folder: {0}")]
    Scratch(std::io::Error),
    /// The grader failed while grading one item.
    #[error("the grader could not grade item `{item}`: {source}")]
    Item {
        /// The item's id.
        item: String,
        /// What failed.
        source: SupervisorError,
    },
}

/// Grades `target` against `assignment`, reporting progress to `on_event`. One pass down:
/// stage and build the submission ([`build`]), resolve where GPU items run ([`context`]),
/// then each selected item: run → judge → result ([`grade_one`]), up to
/// [`GradeOptions::items_at_once`] at a time, started in the order given, those that must have
/// the machine to themselves alone ([`runs_alone`], [`crate::turns`]); the report keeps that
/// order.
pub fn grade(
    target: &Target,
    assignment: &Assignment,
    options: &GradeOptions,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Report, GradeError> {
    let started = Instant::now();
    let selected = options.selected(assignment);
    let mut report = Report {
        assignment: assignment.assignment.name.clone(),
        build: BuildStatus::Built,
        notes: Vec::new(),
        seed: options.seed,
        items: Vec::new(),
        execution_time: 0.0,
        sandbox: None,
    };
    let built = match build(target, assignment, options, &mut report, on_event)? {
        Built::Ready(built) => built,
        Built::NothingRuns(failed) => {
            return nothing_graded(
                report, failed, assignment, &selected, options, started, on_event,
            )
        }
    };
    let ctx = context(
        target,
        &built,
        &assignment.assignment.name,
        options,
        on_event,
    )?;
    report.sandbox = Some(grader_engine::sandbox::available().describe());
    on_event(Event::Started {
        seed: options.seed,
        backend_label: &ctx.backend_label,
        items: selected.len(),
    });
    report.items = crate::turns::in_turns(
        &selected,
        options.items_at_once,
        |item| runs_alone(&ctx, item),
        |item| grade_one(&ctx, item),
        &mut |turn| match turn {
            Turn::Started(item) => on_event(Event::ItemStarted { item }),
            Turn::Finished(item, result) => on_event(Event::ItemFinished { item, result }),
        },
    )?;
    report.execution_time = started.elapsed().as_secs_f64();
    on_event(Event::Finished { report: &report });
    Ok(report)
}

/// A submission ready to grade: the program its workers start from, the sources the rubric's
/// source checks read, and the folder both live in (kept until grading ends).
struct Program {
    program: PathBuf,
    /// The program that serves the speed items' baselines: the grader's own binary in
    /// official grading (no submission code in it); `None` for a student's own run.
    yardstick: Option<PathBuf>,
    source_dir: PathBuf,
    cwd: Option<PathBuf>,
    _run_dir: Option<grader_engine::scratch::ScratchDir>,
}

/// How staging and building ended: ready to grade, or every item's result when none can run
/// (refused code, sources the grader does not take, a compile error).
enum Built {
    Ready(Program),
    NothingRuns(Vec<crate::report::ItemResult>),
}

/// Stages and builds `target` (the running test binary needs no build), noting in `report`
/// what official grading ignores and how the build ended.
fn build(
    target: &Target,
    assignment: &Assignment,
    options: &GradeOptions,
    report: &mut Report,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Built, GradeError> {
    match target {
        Target::Running {
            program,
            source_dir,
        } => {
            // A student's own run warns about what the official build will not use.
            let lab = crate::labs::find(&assignment.assignment.name);
            let krate = source_dir.parent().map(stage::read_lab_crate);
            if let (Some(lab), Some(Ok(krate))) = (lab, krate) {
                report.notes = krate.ignored_changes(lab);
            }
            for note in &report.notes {
                on_event(Event::Ignored { note });
            }
            if let Some(found) = grader_engine::source_scan::find_refused(source_dir) {
                report.build = BuildStatus::Refused;
                return Ok(Built::NothingRuns(grader_engine::check::refused(
                    assignment, &found,
                )));
            }
            Ok(Built::Ready(Program {
                program: program.clone(),
                yardstick: None,
                source_dir: source_dir.clone(),
                cwd: None,
                _run_dir: None,
            }))
        }
        Target::Crate(path) => {
            let lab = crate::labs::find(&assignment.assignment.name)
                .ok_or_else(|| GradeError::UnknownLab(assignment.assignment.name.clone()))?;
            let krate = stage::read_lab_crate(path)?;
            report.notes = krate.ignored_changes(lab);
            for note in &report.notes {
                on_event(Event::Ignored { note });
            }
            let run_dir = grader_engine::scratch::ScratchDir::new("grader-run-")
                .map_err(GradeError::Scratch)?;
            // Everything from here reads the grader's copy of the sources, never the
            // submission's folder: a link or a FIFO in it is refused by name instead.
            let source_dir = match stage::take_sources(&krate, run_dir.path()) {
                Ok(dir) => dir,
                Err(refusal) => {
                    report.build = BuildStatus::Refused;
                    return Ok(Built::NothingRuns(grader_engine::check::not_taken(
                        assignment, &refusal,
                    )));
                }
            };
            if let Some(found) = grader_engine::source_scan::find_refused(&source_dir) {
                report.build = BuildStatus::Refused;
                return Ok(Built::NothingRuns(grader_engine::check::refused(
                    assignment, &found,
                )));
            }
            on_event(Event::Building {
                path,
                lab: lab.name,
            });
            // Compiling loads the CPU: the build takes its turn on the machine itself, and
            // steps aside while another grading measures a speedup (see `stage::build`).
            let built = stage::build(&krate, lab, &options.cache, run_dir.path(), &source_dir)?;
            match built {
                Build::CompileError(error) => {
                    on_event(Event::NotCompiled {
                        first_line: error.lines().next().unwrap_or(""),
                    });
                    report.build = BuildStatus::NotCompiled;
                    Ok(Built::NothingRuns(grader_engine::check::not_compiled(
                        assignment,
                        &error,
                        &krate.dependencies_not_in_lab(lab),
                    )))
                }
                Build::Built { binary, source_dir } => Ok(Built::Ready(Program {
                    program: binary,
                    // This process is the grader's binary (`grader grade`, `batch`): it serves
                    // yardstick orders and holds no code of the submission.
                    yardstick: Some(own_binary()?),
                    source_dir,
                    cwd: Some(run_dir.path().to_path_buf()),
                    _run_dir: Some(run_dir),
                })),
            }
        }
    }
}

/// This grader's own binary, which serves the speed items' baselines in official grading.
fn own_binary() -> Result<PathBuf, GradeError> {
    let exe = std::env::current_exe().map_err(GradeError::Scratch)?;
    if exe.is_file() {
        return Ok(exe);
    }
    // Rebuilt or removed while it runs (`cargo build` in its checkout, say).
    Err(GradeError::OwnBinaryGone(exe))
}

/// Whether a student's own runs keep their compiled kernels here: not for a grader run as
/// root, whose workers are a user of each run's own (see [`kept_kernels`]).
pub fn kernels_kept_between_runs() -> bool {
    #[cfg(unix)]
    if grader_engine::sandbox::child::identity_for(grader_engine::sandbox::available()).is_some() {
        return false;
    }
    true
}

/// The folder where a student's own run (their `cargo test`: the supervisor is their own test
/// binary, so there is nothing to keep from them) keeps the kernels the emulator compiles:
/// the grader cache's `kernels`, kept from run to run, so that after an edit only the kernels
/// whose source changed are compiled again. None for a grader run as root: it starts its
/// workers as a user of its own (one per grader process, so the workers of two runs are kept
/// apart), and a folder kept from run to run would belong to another run's user. Without one,
/// each worker compiles its kernels in its own scratch folder, as in official grading.
fn kept_kernels(cache: &std::path::Path) -> Option<PathBuf> {
    if !kernels_kept_between_runs() {
        return None;
    }
    let dir = cache.join("kernels");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

/// Where GPU items run (building the emulator first when they run on it) and everything the
/// items' grading needs.
fn context(
    target: &Target,
    built: &Program,
    lab: &str,
    options: &GradeOptions,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<GradeContext, GradeError> {
    if grader_engine::gpu::will_build_emulator(options.gpu) {
        on_event(Event::BuildingEmulator);
    }
    let (backend, backend_label) = grader_engine::gpu::backend_for(options.gpu)?;
    // Official grading: none. Each worker compiles the kernels it runs in its own scratch
    // folder, which no other worker (of this submission or another) can write: a folder
    // shared by a submission's items would let one item leave a kernel built without the race
    // check where another item's checked run loads it.
    let kernel_cache = match target {
        Target::Running { .. } => kept_kernels(&options.cache),
        Target::Crate(_) => None,
    };
    let ctx = GradeContext {
        command: WorkerCommand {
            program: built.program.clone(),
            cwd: built.cwd.clone(),
            env: Vec::new(),
            kernel_cache,
        },
        lab: lab.to_string(),
        seed: options.seed,
        source_dir: Some(built.source_dir.clone()),
        counted: counted(backend),
        backend,
        backend_label,
        yardstick_program: built.yardstick.clone(),
    };
    Ok(ctx)
}

/// Whether the workers' device work on `backend` is counted ([`GradeContext::counted`]): the
/// emulator counts it; a real GPU only with the tracer in front, as its set-up found.
fn counted(backend: Backend) -> bool {
    match backend {
        Backend::Emulated => true,
        Backend::Real => matches!(grader_engine::gpu::real_traced(), Some(Ok(_))),
        Backend::NoGpu => false,
    }
}

/// Whether `item` must have the machine to itself: it measures speed, or it runs on a real
/// GPU (its timings and its device memory are then the GPU's, which no other item shares).
/// On the emulator a GPU item is a CPU process like any other.
fn runs_alone(ctx: &GradeContext, item: &Item) -> bool {
    item.spec.measures_speed() || (item.spec.gpu_track() && ctx.backend == Backend::Real)
}

/// One item, on the thread that grades it: its worker runs and the checks judge what it sent
/// back ([`grade_item`]); output the grader dropped is said in the result.
fn grade_one(ctx: &GradeContext, item: &Item) -> Result<crate::report::ItemResult, GradeError> {
    grader_engine::supervisor::take_output_left_out();
    let mut result = grade_item(ctx, item).map_err(|source| GradeError::Item {
        item: item.id().to_string(),
        source,
    })?;
    let left_out = grader_engine::supervisor::take_output_left_out();
    if left_out > 0 {
        result.details.push('\n');
        result.details.push_str(&crate::messages::t!(
            "grade-output-dropped",
            size = grader_engine::capture::size(left_out)
        ));
    }
    Ok(result)
}

/// The report of a submission none of whose items could run (it does not compile, or it
/// contains code a lab may not): `failed` holds every item's result, in rubric order. Items this
/// machine cannot grade stay out of the maximum, as they would for any other submission.
fn nothing_graded(
    mut report: Report,
    failed: Vec<crate::report::ItemResult>,
    assignment: &Assignment,
    selected: &[&Item],
    options: &GradeOptions,
    started: Instant,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Report, GradeError> {
    let here = grader_engine::check::GradeContext::for_listing(options.gpu)?;
    report.items = failed
        .into_iter()
        .zip(&assignment.items)
        .filter(|(_, item)| selected.iter().any(|i| i.id() == item.id()))
        .map(|(result, item)| grader_engine::check::skipped_here(&here, item).unwrap_or(result))
        .collect();
    report.execution_time = started.elapsed().as_secs_f64();
    on_event(Event::Finished { report: &report });
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        Program {
            program: PathBuf::from("/bin/true"),
            yardstick: None,
            source_dir: PathBuf::from("src"),
            cwd: None,
            _run_dir: None,
        }
    }

    /// Which items have the machine to themselves: on the emulator (or with no GPU) those
    /// that measure speed; on a real GPU every GPU item too.
    #[test]
    fn speed_items_run_alone_and_so_do_gpu_items_on_a_real_gpu() {
        let mut options = GradeOptions::new(1);
        options.gpu = GpuMode::Off;
        let target = Target::Crate(PathBuf::from("lab"));
        let mut ctx =
            context(&target, &program(), "matmul", &options, &mut |_| {}).expect("a context");
        for lab in ["matmul", "training"] {
            let assignment = crate::rubric::embedded(lab).expect("an embedded rubric");
            let ids = |keep: &dyn Fn(&Item) -> bool| -> Vec<&str> {
                let items = assignment.items.iter();
                items.filter(|i| keep(i)).map(|i| i.id()).collect()
            };
            let alone = |ctx: &GradeContext| ids(&|i| runs_alone(ctx, i));
            let speed = ids(&|i| i.spec.measures_speed());
            let gpu_or_speed = ids(&|i| i.spec.measures_speed() || i.spec.gpu_track());
            assert!(
                !speed.is_empty() && gpu_or_speed.len() > speed.len(),
                "{lab}"
            );
            assert!(gpu_or_speed.len() < assignment.items.len(), "{lab}");
            for backend in [Backend::NoGpu, Backend::Emulated] {
                ctx.backend = backend;
                assert_eq!(alone(&ctx), speed, "{lab} on {backend:?}");
            }
            ctx.backend = Backend::Real;
            assert_eq!(alone(&ctx), gpu_or_speed, "{lab} on a real GPU");
        }
    }

    /// A student's own runs share the grader cache's kernels from run to run (a grader run as
    /// root, whose workers are a user of each run's own, compiles them afresh instead);
    /// official grading gives none: each worker compiles in its own scratch folder, which no
    /// other worker, of this submission or another, can write.
    #[test]
    fn only_a_students_own_run_keeps_its_kernels_from_run_to_run() {
        let cache = tempfile::tempdir().expect("temp dir");
        let mut options = GradeOptions::new(1);
        options.gpu = GpuMode::Off;
        options.cache = cache.path().to_path_buf();
        let running = Target::Running {
            program: PathBuf::from("/bin/true"),
            source_dir: PathBuf::from("src"),
        };
        let official = Target::Crate(PathBuf::from("lab"));
        let kernels_of = |target: &Target| {
            context(target, &program(), "matmul", &options, &mut |_| {})
                .expect("a context")
                .command
                .kernel_cache
        };
        let own = kernels_of(&running);
        if kernels_kept_between_runs() {
            assert_eq!(own, Some(cache.path().join("kernels")));
            assert_eq!(kernels_of(&running), own);
        } else {
            assert_eq!(own, None);
        }
        assert_eq!(kernels_of(&official), None);
    }
}
