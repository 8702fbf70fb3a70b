//! Judging: for one rubric item, run the worker, check its outputs against references the
//! supervisor computes itself, and write the student's feedback.

pub mod gpu;
pub mod gpu_error;
pub mod load;
pub mod matmul;
pub mod speedup;
pub mod sweep;
pub mod timed;
pub mod timer;

use crate::i18n::t;
use crate::inputs;
use crate::protocol::{Backend, Outcome, PanicInfo, WorkOrder};
use crate::report::ItemResult;
use crate::rubric::Item;
use crate::source_scan;
use crate::supervisor::{run_worker, Checks, SupervisorError, WorkerCommand, WorkerRun};
use std::ffi::OsString;
use std::path::PathBuf;

pub use crate::context::GradeContext;

impl GradeContext {
    /// A context that only answers which items cannot be graded here (for `--list`): the GPU
    /// mode resolved on this machine, no worker to start.
    pub fn for_listing(gpu: crate::gpu::GpuMode) -> Result<Self, crate::gpu::GpuError> {
        let (backend, backend_label) = crate::gpu::backend_for(gpu)?;
        Ok(GradeContext {
            command: WorkerCommand {
                program: PathBuf::new(),
                cwd: None,
                env: Vec::new(),
                kernel_cache: None,
            },
            lab: String::new(),
            seed: 0,
            source_dir: None,
            backend,
            backend_label,
            counted: false,
            yardstick_program: None,
        })
    }

    /// The work order for `item` with this run's seed and, for GPU-track items, the backend.
    /// CPU-track items run with every GPU hidden, so a "CPU" function cannot hand its work to
    /// a GPU (on a machine with one, that would pass for a CPU speedup).
    pub fn order(&self, item: &Item) -> WorkOrder {
        let mut order = WorkOrder {
            lab: self.lab.clone(),
            item: item.id().to_string(),
            kind: item.kind.clone(),
            function: item.function.clone(),
            seed: self.seed,
            task: item.spec.task(),
            round: 0,
            backend: Backend::NoGpu,
            nonce: 0,
            report_path: PathBuf::new(),
            stopwatch: None,
            stopwatch_fd: None,
            yardstick: false,
            report_bytes: item.spec.report_bytes(),
        };
        order.backend = if item.spec.gpu_track() {
            self.backend
        } else {
            Backend::NoGpu
        };
        order
    }
}

/// Grades one item. `Err` only when the grader itself failed.
pub fn grade_item(ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError> {
    if let Some(forbidden) = forbidden_use(ctx, item) {
        return Ok(forbidden);
    }
    if let Some(skipped) = skipped_here(ctx, item) {
        return Ok(skipped);
    }
    if let Some(missing) = missing_requirement(ctx, item) {
        return Ok(missing);
    }
    let _turn = machine_turn(item.spec.measures_speed());
    // A judge that panics (on a value no one foresaw) costs its item only: the item says the
    // grader could not judge it, and the rest of the report is written.
    let judged =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| item.spec.grade(ctx, item)));
    let mut result = match judged {
        // What a worker sent that does not fit the item (the student's process wrote it, so
        // it may be anything) costs that item only, as a judge's panic does.
        Ok(Err(SupervisorError::BadReport { message, .. })) => report_unfit(item, &message),
        Ok(result) => result?,
        Err(payload) => judge_panicked(item, payload.as_ref()),
    };
    if item.spec.gpu_track() {
        result.mode = Some(ctx.backend_label.clone());
    }
    Ok(result)
}

/// The failed result of an item whose judge panicked: a bug in the grader, said as one, with
/// the panic's message for the report a student or instructor sends.
fn judge_panicked(item: &Item, payload: &(dyn std::any::Any + Send)) -> ItemResult {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".into());
    ItemResult::failed(
        item,
        t!("judge-panicked-reason"),
        t!(
            "judge-panicked-details",
            function = item.function,
            message = shortened(&message)
        ),
    )
}

/// The failed result of an item whose worker sent a report that does not fit it: the
/// report comes from the process that runs the submission, so either the submission wrote it
/// or the harness is from another grader version; it costs this item only.
fn report_unfit(item: &Item, message: &str) -> ItemResult {
    ItemResult::failed(
        item,
        t!("report-unfit-reason"),
        t!(
            "report-unfit-details",
            function = item.function,
            message = shortened(message)
        ),
    )
}

/// A turn on this machine's timing lock: exclusive for work that measures speed, shared for
/// everything else that loads the CPU (other items, building a submission). Items that time
/// code take the machine to themselves this way: across every grader on this machine
/// (parallel test runners such as nextest, several instructors' `grader grade`, a batch's
/// jobs), nothing else runs while a speedup is measured. Without a lock file (an unwritable
/// cache) the work simply runs.
pub fn machine_turn(exclusive: bool) -> Option<std::fs::File> {
    let dir = crate::emulate::cache_dir();
    std::fs::create_dir_all(&dir).ok()?;
    let file = std::fs::File::create(dir.join("timing.lock")).ok()?;
    let locked = if exclusive {
        file.lock()
    } else {
        file.lock_shared()
    };
    locked.ok().map(|()| file)
}

/// Every item's result for a submission that does not compile: 0 points and the compiler's
/// first error. An error in the harness (`tests/grade.rs`) means a function's name or
/// signature was changed, which the hint says. `not_in_lab` are the dependencies the
/// student's manifest adds (the official build does not have them): one the error names is
/// said first, since the compiler's own words ("unresolved import") do not explain it.
pub fn not_compiled(
    assignment: &crate::rubric::Assignment,
    error: &str,
    not_in_lab: &[String],
) -> Vec<ItemResult> {
    let first_line = error.lines().next().unwrap_or("");
    let missing = not_in_lab
        .iter()
        .find(|name| error.contains(&format!("`{name}`")) || error.contains(&format!("{name}::")));
    let outside = crate::sandbox::build::outside_read(error);
    let (reason, hint) = match (missing, outside) {
        (Some(name), _) => (
            t!("not-compiled-dependency-reason", name = name),
            format!("\n{}", t!("not-compiled-dependency-hint", name = name)),
        ),
        (None, Some(why)) => (
            t!("not-compiled-outside-reason"),
            format!("\n{}", t!("hint-line", hint = why)),
        ),
        (None, None) if error.contains("tests/grade.rs") => (
            t!("not-compiled-reason", error = first_line),
            format!("\n{}", t!("not-compiled-harness-hint")),
        ),
        (None, None) => (t!("not-compiled-reason", error = first_line), String::new()),
    };
    every_item_failed(
        assignment,
        reason,
        t!("not-compiled-details", error = error, hint = hint),
    )
}

/// The same failure for every item of the rubric.
fn every_item_failed(
    assignment: &crate::rubric::Assignment,
    reason: String,
    details: String,
) -> Vec<ItemResult> {
    assignment
        .items
        .iter()
        .map(|item| ItemResult::failed(item, reason.clone(), details.clone()))
        .collect()
}

/// Every item's result for a submission that contains code a lab may not (code that runs
/// outside the graded functions or reaches outside the lab's libraries): 0 points, the file,
/// the line and why.
pub fn refused(
    assignment: &crate::rubric::Assignment,
    found: &crate::source_scan::Refused,
) -> Vec<ItemResult> {
    every_item_failed(
        assignment,
        t!(
            "refused-reason",
            construct = found.construct,
            file = found.file,
            line = found.line
        ),
        t!(
            "refused-details",
            file = found.file,
            line = found.line,
            construct = found.construct,
            why = found.why
        ),
    )
}

/// Every item's result when official grading did not take a file of the submission (a link,
/// a FIFO, a file past the size limits): nothing was built or graded.
pub fn not_taken(
    assignment: &crate::rubric::Assignment,
    refusal: &crate::intake::Refusal,
) -> Vec<ItemResult> {
    every_item_failed(
        assignment,
        t!("not-taken-reason", path = refusal.path),
        t!("not-taken-details", refusal = refusal),
    )
}

/// The result of an item that cannot be graded here (so a runner can show it as ignored
/// without starting a worker), or `None`.
pub fn skipped_here(ctx: &GradeContext, item: &Item) -> Option<ItemResult> {
    let mut skipped = gpu::skipped_on_backend(ctx, item)?;
    skipped.mode = Some(ctx.backend_label.clone());
    if item.spec.measures_speed() {
        // The speed chart names the speed items it could not time, and why.
        skipped.sweep = Some(sweep::not_timed(ctx, item));
    }
    Some(skipped)
}

/// Fails the item when the function (or what it calls) uses an identifier the rubric forbids
/// (`dot` in `matmul_fast`, say).
fn forbidden_use(ctx: &GradeContext, item: &Item) -> Option<ItemResult> {
    let dir = ctx.source_dir.as_ref()?;
    let hit = source_scan::find_forbidden(dir, &item.function, &item.forbid)?;
    Some(ItemResult::failed(
        item,
        t!(
            "forbidden-reason",
            function = item.function,
            name = hit.name
        ),
        t!(
            "forbidden-details",
            file = hit.file,
            line = hit.line,
            name = hit.name,
            function = item.function,
            forbidden = in_backticks(&item.forbid)
        ),
    ))
}

/// Names as a report lists them: "`a`, `b`".
fn in_backticks(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Fails the item when the sources lack text the rubric requires (`__syncthreads` for a
/// tiled kernel, say).
fn missing_requirement(ctx: &GradeContext, item: &Item) -> Option<ItemResult> {
    let dir = ctx.source_dir.as_ref()?;
    let missing = source_scan::find_missing(dir, &item.require)?;
    Some(ItemResult::failed(
        item,
        t!(
            "missing-reason",
            function = item.function,
            missing = missing
        ),
        t!(
            "missing-details",
            missing = missing,
            function = item.function,
            required = in_backticks(&item.require)
        ),
    ))
}

/// Runs one worker; a death or a panic becomes the item's failure (`Err(result)`).
pub fn outcome_of(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
) -> Result<Result<(Outcome, String), ItemResult>, SupervisorError> {
    let mut env =
        crate::gpu::worker_env(order.backend).map_err(|e| SupervisorError::Gpu(e.to_string()))?;
    env.extend(gpu::race_check_env(order.backend));
    outcome_with_env(ctx, item, order, env)
}

/// [`outcome_of`] with a worker environment of the caller's choosing (added to the command's).
fn outcome_with_env(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
    env: Vec<(OsString, OsString)>,
) -> Result<Result<(Outcome, String), ItemResult>, SupervisorError> {
    #[cfg(feature = "replay")]
    if let Some((outcome, _)) = crate::replay::answer(order) {
        let notes = String::new();
        let checks = Checks::NotAsked;
        return judge_run(
            item,
            WorkerRun::Reported {
                outcome,
                notes,
                checks,
            },
        );
    }
    let mut command = ctx.command_for(order);
    command.env.extend(env);
    judge_run(item, run_worker(&command, item.timeout_secs, order)?)
}

/// What a finished worker run means for the item: its outcome and the emulator's notes, or
/// the item's failed result (a panic, a death), or a grader error.
pub(crate) fn judge_run(
    item: &Item,
    run: WorkerRun,
) -> Result<Result<(Outcome, String), ItemResult>, SupervisorError> {
    match run {
        WorkerRun::Reported {
            outcome: Outcome::Panicked(p),
            ..
        } => Ok(Err(panic_result(item, &p))),
        // A worker's word about the grading itself (the GPU could not be set up) is a claim from the process that runs the submission, which
        // the submission can make too: it fails the item and never changes the maximum. What
        // is graded, and on which backend, the supervisor decided before the worker started.
        WorkerRun::Reported {
            outcome: Outcome::GpuUnavailable(why),
            ..
        } => Ok(Err(gpu::untrusted_claim(
            item,
            &t!("gpu-unavailable", why = why),
        ))),
        // Results larger than any right answer's: only their size came.
        WorkerRun::Reported {
            outcome: Outcome::TooLarge { bytes, bound },
            ..
        } => Ok(Err(ItemResult::failed(
            item,
            t!("too-large-reason", function = item.function),
            t!(
                "too-large-details",
                function = item.function,
                size = mib(bytes),
                bound = mib(bound)
            ),
        ))),
        // A kernel that raced (checked runs) fails whatever its numbers; so does a checked
        // run whose record does not show it checked.
        WorkerRun::Reported {
            checks: Checks::Race(race),
            ..
        } => Ok(Err(gpu::race_result(item, &race))),
        WorkerRun::Reported {
            checks: Checks::Unproven(why),
            ..
        } => Ok(Err(gpu::unproven_result(item, &why))),
        // A timed run on the emulator whose kernels may have reached the worker's memory:
        // nothing its report says can be taken.
        WorkerRun::Reported {
            checks: Checks::Unconfined(why),
            ..
        } => Ok(Err(gpu::unconfined_result(item, &why))),
        WorkerRun::Reported { outcome, notes, .. } => Ok(Ok((outcome, notes))),
        WorkerRun::Died(death) => {
            let mut details = t!(
                "died-details",
                function = item.function,
                death = death.explain()
            );
            if !death.output_tail.is_empty() {
                details.push('\n');
                details.push_str(&t!("last-output"));
                details.push('\n');
                details.push_str(&death.output_tail);
            }
            Ok(Err(ItemResult::failed(
                item,
                t!(
                    "died-reason",
                    function = item.function,
                    death = short(&death.explain())
                ),
                details,
            )))
        }
    }
}

/// `bytes` in MiB with one decimal, for a person.
fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / f64::from(1u32 << 20))
}

/// The first clause of a sentence, for the one-line table reason.
fn short(sentence: &str) -> String {
    sentence
        .split([':', '：'])
        .next()
        .unwrap_or(sentence)
        .trim()
        .to_string()
}

/// The function a `todo!()` names, as the templates write them (`todo!("Adam::new: …")`):
/// the item's function may call several of the student's, and the one still to write is the
/// one to name. `None` for any other message.
fn todo_function(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("not yet implemented: ")
        .or_else(|| message.strip_prefix("not implemented: "))?;
    let (name, _) = rest.split_once(": ")?;
    let path_like = !name.is_empty()
        && name.len() <= 60
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
    path_like.then_some(name)
}

/// The feedback for a panic, with `todo!()` read as "not implemented yet".
pub fn panic_result(item: &Item, p: &PanicInfo) -> ItemResult {
    let at = p
        .location
        .as_deref()
        .map(|l| t!("panic-at", location = l))
        .unwrap_or_default();
    if p.is_not_implemented() {
        let function = todo_function(&p.message).unwrap_or(&item.function);
        return ItemResult::failed(
            item,
            t!("todo-reason", function = function),
            t!("todo-details", function = function, at = at),
        );
    }
    let case = p
        .case
        .and_then(|c| item.spec.describe_case(c))
        .unwrap_or_default();
    let hint = if p.message.contains("out of bounds") {
        t!("panic-hint-bounds")
    } else if p.message.contains("overflow") {
        t!("panic-hint-overflow")
    } else if !item.spec.gpu_track() && mentions_cuda(&p.message) {
        t!("panic-hint-cuda")
    } else {
        String::new()
    };
    ItemResult::failed(
        item,
        t!("panicked-reason", function = item.function, case = case),
        t!(
            "panicked-details",
            function = item.function,
            case = case,
            at = at,
            message = shortened(&p.message),
            hint = hint
        ),
    )
}

/// Most characters of a panic message a report shows (a library's can run to pages).
const PANIC_MESSAGE_CHARS: usize = 300;

/// A panic message cut to [`PANIC_MESSAGE_CHARS`] and without its final period (the report
/// adds one).
fn shortened(message: &str) -> String {
    let message = message.trim_end().trim_end_matches('.');
    match message.char_indices().nth(PANIC_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{} …", &message[..cut]),
        None => message.to_string(),
    }
}

/// Whether a panic message comes from CUDA (a driver error, or a library that would not load).
fn mentions_cuda(message: &str) -> bool {
    let lower = message.to_lowercase();
    ["cuda", "nvrtc", "cublas"]
        .iter()
        .any(|w| lower.contains(w))
}

/// The paired samples of a speed item and the tier they decide.
pub struct Sampled {
    /// Median paired speedup.
    pub speedup: f64,
    /// Index of the highest tier reached.
    pub tier: Option<usize>,
    /// Points of that tier.
    pub points: f64,
    /// Every baseline sample (ns).
    pub baseline_ns: Vec<u64>,
    /// Every candidate sample (ns), paired with the baseline's.
    pub candidate_ns: Vec<u64>,
    /// The hand-over's cost per run (ns), measured and subtracted from every run.
    pub overhead_ns: u64,
    /// When no round ran on a quiet machine and the item was graded from the busy ones: what
    /// the feedback must say (how busy, and to grade again when it is quiet).
    pub busy: Option<String>,
}

/// Runs a speed item in rounds until its tier is clear (more samples near a tier edge, up to
/// the rubric's maximum), after checking the full output of the first run and every timed
/// result. Every time comes from the supervisor's clock ([`timed::SpeedWorkers`]).
/// `Ok(Err(result))` when the submission failed along the way.
pub fn sample_speedup(
    ctx: &GradeContext,
    item: &Item,
    spec: &speedup::Speed,
) -> Result<Result<Sampled, ItemResult>, SupervisorError> {
    let size = spec.size;
    let (a, b) = inputs::operands(ctx.seed, item.id(), 0, size);
    let mut workers = match timed::SpeedWorkers::start(ctx, item, size)? {
        Ok(w) => w,
        Err(failed) => return Ok(Err(failed)),
    };
    let overhead_ns = workers.overhead_ns;
    let first = workers.first_output.take();
    let first_check = match &first {
        Some(c) => matmul::compare(&a, &b, c, 2.0).map_err(|m| m.summary),
        None => Err(t!("speed-wrong-shape", m = size[0], n = size[2])),
    };
    if let Err(summary) = first_check {
        return Ok(Err(ItemResult::failed(
            item,
            t!("speed-wrong-reason"),
            t!(
                "speed-wrong-details",
                function = item.function,
                m = size[0],
                k = size[1],
                n = size[2],
                summary = summary
            ),
        )));
    }
    let (mut baseline_ns, mut candidate_ns) = (Vec::new(), Vec::new());
    let mut contended = Vec::new();
    let (mut busy_baseline_ns, mut busy_candidate_ns) = (Vec::new(), Vec::new());
    // The samples graded: the quiet rounds' once their tier is clear or the rubric's maximum
    // is reached, else, when no round ran quiet, the busy rounds'.
    let mut round = 0;
    let (baseline_ns, candidate_ns, busy) = loop {
        let samples = spec
            .samples
            .min(spec.max_samples - baseline_ns.len())
            .max(1);
        let measured;
        let before = load::snapshot(&workers.pids());
        (workers, measured) = match workers.round(ctx, item, round, samples)? {
            Ok(w) => w,
            Err(failed) => return Ok(Err(failed)),
        };
        round += 1;
        if let Some(wrong) = measured.wrong_sample {
            return Ok(Err(wrong_while_timed(item, baseline_ns.len() + wrong)));
        }
        // A round during which other programs took the cores measured them, not the
        // submission: it is dropped and measured again after a pause.
        let others = before
            .zip(load::snapshot(&workers.pids()))
            .map(|(before, after)| load::others_cores(&before, &after));
        if let Some(others) = others.filter(|o| *o >= load::CONTENDED_CORES) {
            contended.push(others);
            busy_baseline_ns.extend(measured.baseline_ns);
            busy_candidate_ns.extend(measured.candidate_ns);
            if contended.len() > CONTENDED_RETRIES {
                break (busy_baseline_ns, busy_candidate_ns, true);
            }
            std::thread::sleep(CONTENDED_PAUSE);
            continue;
        }
        baseline_ns.extend(measured.baseline_ns);
        candidate_ns.extend(measured.candidate_ns);
        let ratios = speedup::ratios(&baseline_ns, &candidate_ns);
        let more = baseline_ns.len() < spec.max_samples;
        if let speedup::Decision::Decided { .. } = speedup::decide(&ratios, &spec.tiers, more) {
            break (baseline_ns, candidate_ns, false);
        }
    };
    let finished = workers.finish(item)?;
    if finished.status != crate::report::Status::Passed {
        return Ok(Err(finished));
    }
    // With no quiet round, a CPU product is graded from the busy rounds, and says so: other
    // programs slow its parallel threads more than the one-core baseline, so a busy machine can
    // only lower its tier, and the student reads how busy it was and to grade again. A GPU
    // speedup's baseline is the side a busy machine slows, which could lift it into a tier: it
    // is not graded.
    if busy && item.spec.gpu_track() {
        return Ok(Err(not_measured(item, &contended)));
    }
    // Decided: the quiet rounds' tier is clear (as it was when the loop ended), and the busy
    // rounds take no more samples.
    let ratios = speedup::ratios(&baseline_ns, &candidate_ns);
    let (speedup, tier, points) = match speedup::decide(&ratios, &spec.tiers, false) {
        speedup::Decision::Decided {
            speedup,
            tier,
            points,
        } => (speedup, tier, points),
        speedup::Decision::NeedMore => unreachable!("a decision that may not sample more"),
    };
    let top = spec.tiers.iter().map(|t| t.points).fold(0.0, f64::max);
    Ok(Ok(Sampled {
        speedup,
        tier,
        points,
        baseline_ns,
        candidate_ns,
        overhead_ns,
        busy: (busy && points < top).then(|| busy_note(&contended)),
    }))
}

/// How many rounds of a speed item may be contended ([`load::CONTENDED_CORES`]) and measured
/// again before the item is reported as not measured.
const CONTENDED_RETRIES: usize = 3;

/// The pause before a contended round is measured again: a build or a test beside the
/// grader often ends within seconds.
const CONTENDED_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

/// A speed item none of whose rounds ran on a quiet machine: no points (a submission that
/// starts a busy process of its own gains nothing by it), and the reason, for the student or
/// the instructor to grade it again when the machine is quiet.
fn not_measured(item: &Item, contended: &[f64]) -> ItemResult {
    let (least, most, cores) = busy_spread(contended);
    ItemResult::failed(
        item,
        t!("speed-contended-reason"),
        t!(
            "speed-contended-details",
            rounds = contended.len(),
            least = least,
            most = most,
            cores = cores
        ),
    )
}

/// What a CPU speed item graded from busy rounds says: how much of the machine other programs
/// used, and that a quiet machine may score higher.
fn busy_note(contended: &[f64]) -> String {
    let (least, most, cores) = busy_spread(contended);
    t!(
        "speed-busy-note",
        rounds = contended.len(),
        least = least,
        most = most,
        cores = cores
    )
}

/// The least and most of a core other programs used over the `contended` rounds, as the
/// messages show them, and this machine's cores.
fn busy_spread(contended: &[f64]) -> (String, String, usize) {
    let most = contended.iter().copied().fold(0.0f64, f64::max);
    let least = contended.iter().copied().fold(f64::INFINITY, f64::min);
    (
        format!("{least:.1}"),
        format!("{most:.1}"),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    )
}

/// A function right on the checked run but wrong on a timed one earns no speed points.
pub fn wrong_while_timed(item: &Item, sample: usize) -> ItemResult {
    ItemResult::failed(
        item,
        t!("timed-wrong-reason", run = sample + 1),
        t!(
            "timed-wrong-details",
            function = item.function,
            run = sample + 1
        ),
    )
}

/// Unpacks a matrix a worker sent; a matrix whose data does not fit its shape is a harness
/// fault, not the student's.
pub fn unpack(
    item: &Item,
    m: &crate::protocol::Matrix,
) -> Result<ndarray::Array2<f32>, SupervisorError> {
    m.to_array().ok_or_else(|| unfit_matrix(item))
}

/// [`unpack`], in the memory the matrix's bits held (for the largest, a timer's C).
pub fn unpack_owned(
    item: &Item,
    m: crate::protocol::Matrix,
) -> Result<ndarray::Array2<f32>, SupervisorError> {
    m.into_array().ok_or_else(|| unfit_matrix(item))
}

fn unfit_matrix(item: &Item) -> SupervisorError {
    SupervisorError::BadReport {
        item: item.id().to_string(),
        message: "a matrix's data does not match its shape".into(),
    }
}

/// The grader's error for a speed item's baseline run that failed: the baseline runs only the
/// grader's code (in official grading, in its own binary), so its failure is never the
/// student's. `failed` is what the run's result said.
pub fn baseline_failed(item: &Item, failed: &ItemResult) -> SupervisorError {
    SupervisorError::Baseline {
        item: item.id().to_string(),
        message: format!(
            "the grader's own baseline run failed: {} ({})",
            failed.reason, failed.details
        ),
    }
}

/// A worker answered with the wrong kind of outcome: a grader/harness mismatch.
pub fn unexpected(item: &Item, outcome: &Outcome) -> SupervisorError {
    let kind = match outcome {
        Outcome::Products { .. } => "products",
        Outcome::Timed => "timed runs",
        Outcome::Panicked(_) => "a panic",
        Outcome::GpuTimer(_) => "GPU timings",
        Outcome::DeviceChoice { .. } => "a device choice",
        Outcome::Benchmark { .. } => "benchmark times",
        Outcome::GpuUnavailable(_) => "a GPU set-up failure",
        Outcome::Failed(_) => "an error",
        Outcome::Lab(_) => "a lab's own outcome",
        Outcome::TooLarge { .. } => "the size of results too large to send",
    };
    SupervisorError::BadReport {
        item: item.id().to_string(),
        message: format!("it sent {kind}, which this item does not expect (is the lab's harness from another grader version?)"),
    }
}

#[cfg(test)]
mod tests {
    use super::{machine_turn, mentions_cuda, shortened};

    /// A kind whose judge panics (as one indexing into a student's empty output would), or that
    /// is never judged (for tests of what comes before its judge).
    #[derive(Debug)]
    struct FakeKind {
        panics: bool,
        /// Answers as a judge does to a report that does not fit the item.
        unfit: bool,
    }

    impl crate::rubric::KindSpec for FakeKind {
        fn gpu_track(&self) -> bool {
            false
        }
        fn task(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn grade(
            &self,
            _: &super::GradeContext,
            _: &crate::rubric::Item,
        ) -> Result<crate::report::ItemResult, crate::supervisor::SupervisorError> {
            if self.unfit {
                return Err(crate::supervisor::SupervisorError::BadReport {
                    item: "backward_item".into(),
                    message: "3 products for 2 cases".into(),
                });
            }
            assert!(self.panics, "this test judges no item");
            let shapes: Vec<usize> = Vec::new();
            let first = shapes.iter().copied().nth(3).expect("a fourth shape");
            unreachable!("{first}")
        }
    }

    /// An item of a [`FakeKind`] for `function`, worth `points`.
    fn fake_item(function: &str, points: f64, panics: bool) -> crate::rubric::Item {
        crate::rubric::Item {
            id: format!("{function}_item"),
            title: function.into(),
            kind: "fake".into(),
            function: function.into(),
            points,
            timeout_secs: 10.0,
            forbid: Vec::new(),
            require: Vec::new(),
            spec: std::sync::Arc::new(FakeKind {
                panics,
                unfit: false,
            }),
        }
    }

    /// A `todo!()` in another function than the item's is named by the todo's own message,
    /// as the templates write it; any other message leaves the item's function.
    #[test]
    fn a_todo_names_the_function_its_message_names() {
        assert_eq!(
            super::todo_function("not yet implemented: Adam::new: PyTorch defaults"),
            Some("Adam::new")
        );
        assert_eq!(super::todo_function("not yet implemented"), None);
        assert_eq!(
            super::todo_function("not yet implemented: do it: now please"),
            None
        );
    }

    /// A judge that panics on what a worker sent costs its own item only, said as the
    /// grader's bug; the caller goes on to the next item.
    #[test]
    fn a_judge_that_panics_fails_its_item_only() {
        let item = fake_item("backward", 2.0, true);
        let ctx = super::GradeContext::for_listing(crate::gpu::GpuMode::Off).expect("context");
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let result = super::grade_item(&ctx, &item);
        std::panic::set_hook(previous);
        let result = result.expect("a verdict, not a grader error");
        assert_eq!(result.status, crate::report::Status::Failed);
        assert_eq!(result.max_score, 2.0);
        assert!(
            result.reason.contains("a bug in the grader"),
            "{}",
            result.reason
        );
        assert!(
            result.details.contains("a fourth shape"),
            "{}",
            result.details
        );
    }

    /// A report that does not fit its item (the submission's process wrote it) costs that
    /// item only, with its maximum kept; a grader error would leave the whole report unwritten.
    #[test]
    fn a_report_that_does_not_fit_fails_its_item_only() {
        let mut item = fake_item("backward", 2.0, false);
        item.spec = std::sync::Arc::new(FakeKind {
            panics: false,
            unfit: true,
        });
        let ctx = super::GradeContext::for_listing(crate::gpu::GpuMode::Off).expect("context");
        let result = super::grade_item(&ctx, &item).expect("a verdict, not a grader error");
        assert_eq!(result.status, crate::report::Status::Failed);
        assert_eq!(result.max_score, 2.0);
        assert!(
            result.details.contains("3 products for 2 cases"),
            "{}",
            result.details
        );
    }

    /// What the synchronization check says of a timed call (issue 51): a clock about a
    /// thousand times the device's time is a unit slip (not "longer than the call"); one that
    /// read less than half the device's time is told both causes (no synchronize, or a
    /// warm-up timed); a right one passes. Bracket 900 ms around each call, 400 ms queued before it.
    #[test]
    fn a_timer_verdict_says_what_the_clock_measured() {
        use crate::protocol::GpuTimerSample;
        let item = &fake_item("time_gpu_matmul", 3.0, false);
        let verdict = |reported_ms: f64, device_ms: f64| {
            let sample = GpuTimerSample {
                reported_ms,
                device_ms,
            };
            super::gpu::synchronized(item, &[sample], &[900_000_000], 400.0, "your work")
                .map(|r| r.details)
        };
        let slip = verdict(25_000.0, 25.0).expect("fails");
        assert!(
            slip.contains("unit slip") && slip.contains("1000 times"),
            "{slip}"
        );
        let slip = verdict(25.0 * 400.0, 25.0).expect("fails");
        assert!(slip.contains("unit slip"), "{slip}");
        // A clock that never waited and one that timed a warm-up read alike (a launch's
        // return can take milliseconds on a GPU): both causes are named, whatever the share.
        for reported in [0.02, 5.0] {
            let early = verdict(reported, 25.0).expect("fails");
            assert!(
                early.contains("call `stream.synchronize()` after launching"),
                "{early}"
            );
            assert!(early.contains("not a small warm-up launch"), "{early}");
        }
        // A clock that started early reads the queue too: not a unit slip.
        let late = verdict(25.0 + 380.0, 25.0).expect("fails");
        assert!(late.contains("before earlier GPU work finished"), "{late}");
        assert_eq!(verdict(25.3, 25.0), None);
    }

    /// A worker's report that the GPU could not be set up (which the submission's code can
    /// write as well as the grader's) fails the item and never changes its maximum; an
    /// ordinary report is judged as sent.
    #[test]
    fn a_workers_claim_about_the_grading_fails_the_item_and_keeps_the_maximum() {
        use crate::protocol::Outcome;
        use crate::report::Status;
        use crate::supervisor::WorkerRun;
        let item = &fake_item("matmul_gpu", 3.0, false);
        for claim in [
            Outcome::GpuUnavailable("no device".into()),
            Outcome::GpuUnavailable("the grader could not sandbox your code".into()),
        ] {
            let run = WorkerRun::Reported {
                outcome: claim.clone(),
                notes: String::new(),
                checks: crate::supervisor::Checks::NotAsked,
            };
            let result = super::judge_run(item, run)
                .expect("no grader error")
                .expect_err("a claim is never an outcome to judge");
            assert_eq!(result.status, Status::Failed, "{claim:?}");
            assert_eq!(result.max_score, item.points, "{claim:?}");
            assert_eq!(result.score, 0.0);
            assert!(result.reason.contains("cannot trust"), "{}", result.reason);
        }
        let honest = WorkerRun::Reported {
            outcome: Outcome::DeviceChoice { chose_gpu: true },
            notes: String::new(),
            checks: crate::supervisor::Checks::Clean,
        };
        assert!(matches!(super::judge_run(item, honest), Ok(Ok(_))));
    }

    /// A checked run fails on the record's word alone: a race, or a record that does not show
    /// the run checked, whatever the outcome; the notes (the submission's output never among
    /// them) change nothing.
    #[test]
    fn a_checked_run_fails_on_a_race_or_an_unproven_record() {
        use crate::protocol::Outcome;
        use crate::supervisor::{Checks, WorkerRun};
        let item = &fake_item("matmul_gpu", 3.0, false);
        let run = |checks: Checks| WorkerRun::Reported {
            outcome: Outcome::DeviceChoice { chose_gpu: true },
            notes: "gpu-labs emulator: nothing to see".into(),
            checks,
        };
        let race = super::judge_run(
            item,
            run(Checks::Race("kernel `k` is a data race: x".into())),
        )
        .expect("no grader error")
        .expect_err("a race fails");
        assert!(race.reason.contains("is a data race"), "{}", race.reason);
        let unproven = super::judge_run(item, run(Checks::Unproven("no record".into())))
            .expect("no grader error")
            .expect_err("an unproven run fails");
        assert!(
            unproven.details.contains("no record"),
            "{}",
            unproven.details
        );
        assert_eq!(unproven.max_score, item.points);
        assert!(matches!(
            super::judge_run(item, run(Checks::Clean)),
            Ok(Ok(_))
        ));
    }

    #[test]
    fn a_long_panic_message_is_cut_and_loses_its_final_period() {
        assert_eq!(shortened("index out of bounds."), "index out of bounds");
        let long = "é".repeat(1000);
        let cut = shortened(&long);
        assert!(cut.ends_with(" …") && cut.chars().count() == 302, "{cut}");
        assert!(mentions_cuda(
            "DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device\")"
        ));
        assert!(!mentions_cuda("index out of bounds"));
    }

    #[test]
    fn a_speed_item_runs_alone_and_others_share() {
        let shared = machine_turn(false).expect("a lock in the cache dir");
        let also_shared = machine_turn(false).expect("shared locks coexist");
        drop((shared, also_shared));
        let exclusive = machine_turn(true).expect("exclusive lock");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let turn = machine_turn(false);
            tx.send(()).ok();
            turn.is_some()
        });
        let waited = rx.recv_timeout(std::time::Duration::from_millis(300));
        assert!(waited.is_err(), "another item ran during a speed item");
        drop(exclusive);
        assert!(waiter.join().expect("waiter"));
    }
}
