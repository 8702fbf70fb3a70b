//! Judging: for one rubric item, run the worker, check its outputs against references the
//! supervisor computes itself, and write the student's feedback.

pub mod gpu;
pub mod gpu_error;
pub mod matmul;
pub mod speedup;
pub mod sweep;
pub mod timed;
pub mod timer;

use crate::inputs;
use crate::protocol::{Backend, Outcome, PanicInfo, WorkOrder};
use crate::report::ItemResult;
use crate::rubric::Item;
use crate::source_scan;
use crate::supervisor::{run_worker, SupervisorError, WorkerCommand, WorkerRun};
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
            seed: 0,
            source_dir: None,
            backend,
            backend_label,
        })
    }

    /// The work order for `item` with this run's seed and, for GPU-track items, the backend.
    /// CPU-track items run with every GPU hidden, so a "CPU" function cannot hand its work to
    /// a GPU (on a machine with one, that would pass for a CPU speedup).
    pub fn order(&self, item: &Item) -> WorkOrder {
        let mut order = WorkOrder {
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
            yardstick: false,
            sandbox: None,
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
    let mut result = item.spec.grade(ctx, item)?;
    if item.spec.gpu_track() {
        result.mode = Some(ctx.backend_label.clone());
    }
    Ok(result)
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
            format!("does not compile: `{name}` is not one of this lab's dependencies"),
            format!(
                "\nHint: `{name}` is not one of this lab's dependencies. Official grading builds \
                 with the lab's own Cargo.toml, so your code cannot use it there: remove it \
                 from Cargo.toml and write the code with what the lab provides."
            ),
        ),
        (None, Some(why)) => (
            "does not compile: it reads a file outside the crate at compile time".to_string(),
            format!("\nHint: {why}."),
        ),
        (None, None) if error.contains("tests/grade.rs") => (
            format!("does not compile: {first_line}"),
            "\nHint: the error is in the grader's harness, which calls your functions by the \
             names and types the template gives them: keep each `pub fn` name and signature \
             exactly as in the template."
                .to_string(),
        ),
        (None, None) => (format!("does not compile: {first_line}"), String::new()),
    };
    every_item_failed(
        assignment,
        reason,
        format!(
            "The code does not compile, so nothing could be graded. Fix this first (run \
             `cargo build` to see every error):\n{error}{hint}"
        ),
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
        format!(
            "refused: `{}` at {}:{}",
            found.construct, found.file, found.line
        ),
        format!(
            "{}:{}: `{}` is not allowed in a lab: {}. Nothing was graded; remove it and run \
             `cargo test` again.",
            found.file, found.line, found.construct, found.why
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
        format!("refused: `{}` is not a file grading takes", refusal.path),
        format!("{refusal}. Nothing was graded; fix that in your repository and submit again."),
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
        format!(
            "`{}` uses `{}`, which this item does not allow",
            item.function, hit.name
        ),
        format!(
            "{}:{}: `{}` is used by `{}` (or by code it calls). This item grades your \
                         own implementation, so {} is off limits here: write the loops yourself.",
            hit.file,
            hit.line,
            hit.name,
            item.function,
            in_backticks(&item.forbid)
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
        format!("`{}` must use `{missing}`", item.function),
        format!(
            "No `{missing}` in your sources: `{}` is graded as the version that uses it ({}).",
            item.function,
            in_backticks(&item.require)
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
    let mut command = ctx.command.clone();
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
        // The grader's own GPU set-up failed before any student code ran: the item is not
        // graded (and not counted), with the reason; the rest of the run goes on.
        WorkerRun::Reported {
            outcome: Outcome::GpuUnavailable(why),
            ..
        } => Ok(Err(gpu::not_graded_here(
            item,
            &format!("could not use the GPU on this machine ({why})"),
        ))),
        // No student code ran: the item is not graded, and the reason says whose it is.
        WorkerRun::Reported {
            outcome: Outcome::SandboxFailed(why),
            ..
        } => Ok(Err(gpu::not_graded_here(
            item,
            &format!("could not sandbox your code on this machine ({why}), so it did not run it"),
        ))),
        // A kernel that raced (checked runs) fails whatever its numbers.
        WorkerRun::Reported { notes, .. } if gpu::race_in(&notes).is_some() => Ok(Err(
            gpu::race_result(item, gpu::race_in(&notes).unwrap_or_default()),
        )),
        WorkerRun::Reported { outcome, notes } => Ok(Ok((outcome, notes))),
        WorkerRun::Died(death) => {
            let mut details = format!("`{}` {}.", item.function, death.explain());
            if !death.output_tail.is_empty() {
                details.push_str("\nLast output:\n");
                details.push_str(&death.output_tail);
            }
            Ok(Err(ItemResult::failed(
                item,
                format!("`{}` {}", item.function, short(&death.explain())),
                details,
            )))
        }
    }
}

/// The first clause of a sentence, for the one-line table reason.
fn short(sentence: &str) -> String {
    sentence
        .split(':')
        .next()
        .unwrap_or(sentence)
        .trim()
        .to_string()
}

/// The feedback for a panic, with `todo!()` read as "not implemented yet".
pub fn panic_result(item: &Item, p: &PanicInfo) -> ItemResult {
    let at = p
        .location
        .as_deref()
        .map(|l| format!(" at {l}"))
        .unwrap_or_default();
    if p.is_not_implemented() {
        return ItemResult::failed(
            item,
            format!(
                "not implemented yet: `{}` still has its todo!()",
                item.function
            ),
            format!(
                "`{}` is not implemented yet (it reached todo!(){at}). Replace the todo!() with \
                 your code, then run `cargo test` again.",
                item.function
            ),
        );
    }
    let case = p
        .case
        .and_then(|c| item.spec.describe_case(c))
        .unwrap_or_default();
    let hint = if p.message.contains("out of bounds") {
        " Hint: an index went past the end of an array; check each loop's upper bound against \
         a.nrows(), a.ncols() and b.ncols()."
    } else if p.message.contains("overflow") {
        " Hint: an integer overflowed; check index arithmetic."
    } else if !item.spec.gpu_track() && mentions_cuda(&p.message) {
        " Hint: CPU items run with no GPU visible, so this function must compute on the CPU \
         (the GPU functions are graded by items of their own)."
    } else {
        ""
    };
    ItemResult::failed(
        item,
        format!("`{}` panicked{case}", item.function),
        format!(
            "`{}` panicked{case}{at}: {}.{hint}",
            item.function,
            shortened(&p.message)
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
        None => Err(format!(
            "it returned a matrix of the wrong shape (A·B is {}×{})",
            size[0], size[2]
        )),
    };
    if let Err(summary) = first_check {
        return Ok(Err(ItemResult::failed(
            item,
            "wrong result, so its speed does not count".into(),
            format!(
                "`{}` gives a wrong result at {}×{}×{}: {summary}. Only a correct product earns speed points.",
                item.function, size[0], size[1], size[2]
            ),
        )));
    }
    let (mut baseline_ns, mut candidate_ns) = (Vec::new(), Vec::new());
    for round in 0.. {
        let samples = spec
            .samples
            .min(spec.max_samples - baseline_ns.len())
            .max(1);
        let measured;
        (workers, measured) = match workers.round(ctx, item, round, samples)? {
            Ok(w) => w,
            Err(failed) => return Ok(Err(failed)),
        };
        if let Some(wrong) = measured.wrong_sample {
            return Ok(Err(wrong_while_timed(item, baseline_ns.len() + wrong)));
        }
        baseline_ns.extend(measured.baseline_ns);
        candidate_ns.extend(measured.candidate_ns);
        let ratios = speedup::ratios(&baseline_ns, &candidate_ns);
        if let speedup::Decision::Decided {
            speedup,
            tier,
            points,
        } = speedup::decide(&ratios, &spec.tiers, baseline_ns.len() < spec.max_samples)
        {
            let finished = workers.finish(item)?;
            if finished.status != crate::report::Status::Passed {
                return Ok(Err(finished));
            }
            return Ok(Ok(Sampled {
                speedup,
                tier,
                points,
                baseline_ns,
                candidate_ns,
                overhead_ns,
            }));
        }
    }
    unreachable!("rounds go on until a decision")
}

/// A function right on the checked run but wrong on a timed one earns no speed points.
pub fn wrong_while_timed(item: &Item, sample: usize) -> ItemResult {
    ItemResult::failed(
        item,
        format!("wrong result on timed run {}", sample + 1),
        format!(
            "`{}` gave a wrong result on timed run {} (each run multiplies new matrices, and \
             every result is checked): only correct results earn speed points.",
            item.function,
            sample + 1
        ),
    )
}

/// Unpacks a matrix a worker sent; a matrix whose data does not fit its shape is a harness
/// fault, not the student's.
pub fn unpack(
    item: &Item,
    m: &crate::protocol::Matrix,
) -> Result<ndarray::Array2<f32>, SupervisorError> {
    m.to_array().ok_or_else(|| SupervisorError::BadReport {
        item: item.id().to_string(),
        message: "a matrix's data does not match its shape".into(),
    })
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
        Outcome::SandboxFailed(_) => "a sandbox failure",
        Outcome::Failed(_) => "an error",
        Outcome::Lab(_) => "a lab's own outcome",
    };
    SupervisorError::BadReport {
        item: item.id().to_string(),
        message: format!("it sent {kind}, which this item does not expect (is the lab's harness from another grader version?)"),
    }
}

#[cfg(test)]
mod tests {
    use super::{machine_turn, mentions_cuda, shortened};

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
