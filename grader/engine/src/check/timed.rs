//! The supervisor's side of timed items: it starts the workers, reads its own clock at their
//! checkpoints, hands over every timed run's inputs and collects its result while the worker
//! is stopped (see [`crate::stopwatch`]). Nothing a worker reports is a time.

use super::{judge_run, GradeContext};
use crate::check::matmul::{run_case, sample_case, verification_vector};
use crate::check::timer::TimerSample;
use crate::i18n::t;
use crate::inputs;
use crate::protocol::{Backend, Outcome, WorkOrder};
use crate::report::ItemResult;
use crate::rubric::Item;
use crate::stopwatch::region::Field;
use crate::stopwatch::{words_for, Checkpoint, Command};
use crate::supervisor::{Session, SupervisorError};
use ndarray::Array2;
use std::time::{Duration, Instant};

/// Most candidate runs in one timed sample.
const MAX_CANDIDATE_RUNS: usize = 64;

/// Runs of nothing (hand-over only) timed to learn the hand-over's cost.
const NULL_RUNS: usize = 15;

/// How a timed item ended when it did not end with measurements.
pub type Failed = Result<ItemResult, SupervisorError>;

/// Starts a worker for `order` with a region of `words` matrix words.
fn start(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
    words: usize,
) -> Result<Session, SupervisorError> {
    let env =
        crate::gpu::worker_env(order.backend).map_err(|e| SupervisorError::Gpu(e.to_string()))?;
    let mut command = ctx.command_for(order);
    command.env.extend(env);
    Session::start(&command, item.timeout_secs, order, words)
}

/// The item's result once a worker ended before its runs were done: its panic, its death, its
/// error, or tampering when it reported success without finishing.
fn ended(item: &Item, session: Session) -> Failed {
    match judge_run(item, session.finish()?)? {
        Err(failed) => Ok(failed),
        Ok((Outcome::Failed(e), notes)) => {
            Ok(super::gpu_error::error_result(item, usize::MAX, &e, &notes))
        }
        Ok(_) => Ok(stopped_elsewhere(item)),
    }
}

/// The worker stopped or ended where the grader's code never does: something in the
/// submission did it.
fn stopped_elsewhere(item: &Item) -> ItemResult {
    ItemResult::failed(
        item,
        t!("stopped-elsewhere-reason"),
        t!("stopped-elsewhere-details", function = item.function),
    )
}

/// One timed run, from the moment the supervisor lets the worker continue with the inputs in
/// place to the stop after it (or, on the GPU, from [`Checkpoint::Go`] to
/// [`Checkpoint::Done`]), and the result collected at the next [`Checkpoint::Ready`].
struct Run {
    ns: u64,
    output: Option<Array2<f32>>,
}

/// Runs `command` on `a`, `b` in a worker stopped at [`Checkpoint::Ready`]; `Err` when the
/// worker ended or stopped somewhere else.
fn run_once(
    session: &mut Session,
    command: Command,
    a: &Array2<f32>,
    b: &Array2<f32>,
) -> Result<Run, ()> {
    session.handover().command(command, a, b);
    let mut started = session.resume();
    let mut done: Option<Instant> = None;
    loop {
        let stop = session.next_stop().ok_or(())?;
        match stop.checkpoint {
            Some(Checkpoint::Go) if done.is_none() => started = session.resume(),
            Some(Checkpoint::Done) if done.is_none() => {
                done = Some(stop.at);
                session.resume();
            }
            Some(Checkpoint::Ready) => {
                let end = done.unwrap_or(stop.at);
                return Ok(Run {
                    ns: end.saturating_duration_since(started).as_nanos() as u64,
                    output: session.handover().output(),
                });
            }
            _ => return Err(()),
        }
    }
}

/// The median time (ns) of [`NULL_RUNS`] runs of `command` in the yardstick, which runs no
/// submission code: what a hand-over (or the stops around a GPU clock) costs.
fn yardstick_median(
    yardstick: &mut Session,
    command: Command,
    item: &Item,
    a: &Array2<f32>,
    b: &Array2<f32>,
) -> Result<u64, SupervisorError> {
    let mut ns = Vec::with_capacity(NULL_RUNS);
    for _ in 0..NULL_RUNS {
        let run = run_once(yardstick, command, a, b).map_err(|()| yardstick_silent(item))?;
        ns.push(run.ns);
    }
    ns.sort_unstable();
    Ok(ns[ns.len() / 2])
}

/// The grader's own yardstick worker stopped in the middle of `item`'s runs.
fn yardstick_silent(item: &Item) -> SupervisorError {
    SupervisorError::Baseline {
        item: item.id().to_string(),
        message: "the grader's own yardstick worker stopped answering".into(),
    }
}

/// Waits for a fresh worker's first [`Checkpoint::Ready`].
fn first_ready(session: &mut Session) -> Result<(), ()> {
    match session.next_stop() {
        Some(stop) if stop.checkpoint == Some(Checkpoint::Ready) => Ok(()),
        _ => Err(()),
    }
}

/// A speed item's two workers: the student's and the yardstick, which runs the grader's
/// baseline and never calls the submission.
pub struct SpeedWorkers {
    candidate: Session,
    yardstick: Session,
    /// The median time of a run that only hands matrices over (ns), subtracted from every
    /// baseline run, and from every candidate run when the candidate is timed the same way
    /// (a CPU product).
    pub overhead_ns: u64,
    /// What is subtracted from every candidate run (ns): [`SpeedWorkers::overhead_ns`] for a
    /// CPU product; for a GPU candidate, timed from `Go` to `Done` with its hand-over outside
    /// the clock, the cost of those two stops alone ([`Command::Brackets`]). Both are
    /// measured in the yardstick, which runs no submission code, so a submission cannot
    /// inflate what is taken off its own time.
    pub candidate_overhead_ns: u64,
    /// The candidate's full output on case 0, checked by the caller.
    pub first_output: Option<Array2<f32>>,
    /// The baseline's time on case 0 (ns).
    first_baseline_ns: u64,
    /// The shape timed.
    size: [usize; 3],
    /// The region's matrix words: the largest shape the workers can be handed.
    words: usize,
}

/// Paired samples of one round.
pub struct Round {
    /// Baseline times (ns), one per sample.
    pub baseline_ns: Vec<u64>,
    /// Candidate times (ns), the median of its runs next to the baseline of the same index.
    pub candidate_ns: Vec<u64>,
    /// The first sample with a wrong result, if any.
    pub wrong_sample: Option<usize>,
}

impl SpeedWorkers {
    /// Starts both workers, measures the hand-over's cost, and warms both sides up on case 0
    /// (whose output the caller checks in full).
    pub fn start(
        ctx: &GradeContext,
        item: &Item,
        size: [usize; 3],
    ) -> Result<Result<SpeedWorkers, ItemResult>, SupervisorError> {
        let words = words_for(size);
        let order = ctx.order(item);
        let mut yard_order = order.clone();
        yard_order.yardstick = true;
        yard_order.backend = Backend::NoGpu;
        let mut yardstick = start(ctx, item, &yard_order, words)?;
        let mut candidate = start(ctx, item, &order, words)?;
        if first_ready(&mut yardstick).is_err() {
            candidate.kill();
            // A yardstick that said it could not sandbox itself: that claim fails the item
            // (see `judge_run`), it never takes the item out of the maximum.
            if let Ok(Err(failed)) = super::judge_run(item, yardstick.finish()?) {
                return Ok(Err(failed));
            }
            return Err(SupervisorError::Baseline {
                item: item.id().to_string(),
                message: "the grader's own yardstick worker did not start".into(),
            });
        }
        if first_ready(&mut candidate).is_err() {
            yardstick.kill();
            return ended(item, candidate).map(Err);
        }
        let (a, b) = inputs::operands(ctx.seed, item.id(), 0, size);
        let overhead_ns = yardstick_median(&mut yardstick, Command::Null, item, &a, &b)?;
        // A GPU candidate's clock holds no hand-over: taking the yardstick's off it took a
        // real H200's whole multiplication away (every run 1 ns, a "46445605×" speedup).
        let candidate_overhead_ns = if order.backend == Backend::NoGpu {
            overhead_ns
        } else {
            yardstick_median(&mut yardstick, Command::Brackets, item, &a, &b)?
        };
        let mut workers = SpeedWorkers {
            candidate,
            yardstick,
            overhead_ns,
            candidate_overhead_ns,
            first_output: None,
            first_baseline_ns: 0,
            size,
            words,
        };
        workers.first_baseline_ns = workers.baseline(item, &a, &b)?;
        match run_once(&mut workers.candidate, Command::Run, &a, &b) {
            Ok(run) => workers.first_output = run.output,
            Err(()) => return workers.fail(item).map(Err),
        }
        Ok(Ok(workers))
    }

    /// One baseline run (ns, the hand-over subtracted); the candidate is stopped meanwhile.
    fn baseline(
        &mut self,
        item: &Item,
        a: &Array2<f32>,
        b: &Array2<f32>,
    ) -> Result<u64, SupervisorError> {
        let run = run_once(&mut self.yardstick, Command::Run, a, b)
            .map_err(|()| yardstick_silent(item))?;
        Ok(run.ns.saturating_sub(self.overhead_ns).max(1))
    }

    /// Turns both workers to `size`, a shape no larger than the one they started with (a
    /// chart's sweep): one warm-up run of each side on its case 0, the baseline's time becoming
    /// the candidate's budget in the next [`SpeedWorkers::round`]. `false` when the candidate
    /// broke off or the shape does not fit; the caller then ends the workers.
    pub fn reshape(&mut self, ctx: &GradeContext, item: &Item, size: [usize; 3]) -> bool {
        if words_for(size) > self.words || size.contains(&0) {
            return false;
        }
        self.size = size;
        let (a, b) = inputs::operands(ctx.seed, item.id(), 0, size);
        match self.baseline(item, &a, &b) {
            Ok(ns) => self.first_baseline_ns = ns,
            Err(_) => return false,
        }
        run_once(&mut self.candidate, Command::Run, &a, &b).is_ok()
    }

    /// Ends both workers without reading what they reported (a chart's sweep that broke off).
    pub fn abandon(self) {
        self.candidate.kill();
        self.yardstick.kill();
    }

    /// The candidate's result when it broke off: its worker's panic, death or tampering.
    fn fail(self, item: &Item) -> Failed {
        let SpeedWorkers {
            candidate,
            yardstick,
            ..
        } = self;
        yardstick.kill();
        ended(item, candidate)
    }

    /// Takes `samples` paired samples of round `round`: in each, the baseline runs once and
    /// the candidate runs on the same inputs and then on new ones until its runs add up to the
    /// baseline's time (at most [`MAX_CANDIDATE_RUNS`]); its time is their median. Which side
    /// goes first alternates. Every candidate result is checked with Freivalds' method.
    pub fn round(
        mut self,
        ctx: &GradeContext,
        item: &Item,
        round: usize,
        samples: usize,
    ) -> Result<Result<(SpeedWorkers, Round), ItemResult>, SupervisorError> {
        let size = self.size;
        let x = verification_vector(ctx.seed, item.id(), round, size[2]);
        let mut result = Round {
            baseline_ns: Vec::with_capacity(samples),
            candidate_ns: Vec::with_capacity(samples),
            wrong_sample: None,
        };
        for s in 0..samples {
            let (a, b) = inputs::operands(ctx.seed, item.id(), sample_case(round, s), size);
            let mut base = None;
            if s % 2 == 0 {
                base = Some(self.baseline(item, &a, &b)?);
            }
            let budget = base.unwrap_or(self.first_baseline_ns);
            let (mut runs, mut spent, mut right) = (Vec::new(), 0u64, true);
            for run in 0..MAX_CANDIDATE_RUNS {
                if run > 0 && spent >= budget {
                    break;
                }
                let fresh;
                let (a, b) = if run == 0 {
                    (&a, &b)
                } else {
                    fresh = inputs::operands(ctx.seed, item.id(), run_case(round, s, run), size);
                    (&fresh.0, &fresh.1)
                };
                let Ok(timed) = run_once(&mut self.candidate, Command::Run, a, b) else {
                    return self.fail(item).map(Err);
                };
                right &= timed
                    .output
                    .is_some_and(|c| crate::check::matmul::freivalds(a, b, &c, 2.0, &x));
                let ns = timed.ns.saturating_sub(self.candidate_overhead_ns).max(1);
                runs.push(ns);
                spent += ns;
            }
            let base = match base {
                Some(b) => b,
                None => self.baseline(item, &a, &b)?,
            };
            runs.sort_unstable();
            result.baseline_ns.push(base);
            result.candidate_ns.push(runs[runs.len() / 2]);
            if result.wrong_sample.is_none() && !right {
                result.wrong_sample = Some(s);
            }
        }
        Ok(Ok((self, result)))
    }

    /// The two workers' processes, whose processor time is the grader's own while they are
    /// timed ([`super::load`]).
    pub fn pids(&self) -> [i32; 2] {
        [self.candidate.pid(), self.yardstick.pid()]
    }

    /// Tells both workers to finish and reads what they reported.
    pub fn finish(self, item: &Item) -> Failed {
        let SpeedWorkers {
            mut candidate,
            mut yardstick,
            ..
        } = self;
        yardstick.handover().finish();
        yardstick.resume();
        let _ = yardstick.finish();
        candidate.handover().finish();
        candidate.resume();
        match judge_run(item, candidate.finish()?)? {
            Err(failed) => Ok(failed),
            Ok((Outcome::Timed, _)) => Ok(ItemResult::passed(item, String::new(), String::new())),
            Ok((Outcome::Failed(e), notes)) => {
                Ok(super::gpu_error::error_result(item, usize::MAX, &e, &notes))
            }
            Ok(_) => Ok(stopped_elsewhere(item)),
        }
    }
}

/// Shortest share of its asked length the grader holds timed work for: the length is drawn
/// between this and 1.5 times it, so a timer cannot know it without measuring.
const WORK_MIN_SHARE: f64 = 1.0;

/// A `cpu-timer` item's calls, measured by the supervisor: the call's bracket (from
/// [`Checkpoint::CallStart`] to [`Checkpoint::CallEnd`]) and the work's length (the time it
/// held the worker stopped at [`Checkpoint::Work`], a length it drew itself).
pub fn timer_samples(
    ctx: &GradeContext,
    item: &Item,
    work_ms: &[u64],
) -> Result<Result<Vec<TimerSample>, ItemResult>, SupervisorError> {
    let order = ctx.order(item);
    let mut session = start(ctx, item, &order, 0)?;
    let mut samples = Vec::new();
    let mut call: Option<(Instant, u64)> = None;
    let mut work: Option<(u64, u64)> = None;
    while let Some(stop) = session.next_stop() {
        match stop.checkpoint {
            Some(Checkpoint::CallStart) if call.is_none() => {
                let asked = work_ms.get(samples.len()).copied().unwrap_or(20);
                work = None;
                call = Some((session.resume(), asked));
            }
            Some(Checkpoint::Work) if call.is_some() && work.is_none() => {
                let asked = call.map(|(_, ms)| ms).unwrap_or(20);
                let draw = crate::protocol::fresh_nonce() as f64 / u64::MAX as f64;
                let share = WORK_MIN_SHARE + 0.5 * draw;
                let hold = Duration::from_secs_f64(asked as f64 * share / 1e3);
                let token = crate::protocol::fresh_nonce() | 1;
                session.handover().0.set(Field::Token, token);
                let until = stop.at + hold;
                while Instant::now() < until {
                    std::thread::sleep(until.saturating_duration_since(Instant::now()));
                }
                let released = session.resume();
                work = Some((released.duration_since(stop.at).as_nanos() as u64, token));
            }
            Some(Checkpoint::CallEnd) => {
                let Some((started, _)) = call.take() else {
                    session.kill();
                    return Ok(Err(stopped_elsewhere(item)));
                };
                let region = session.handover();
                let (reported_ns, receipt) = (
                    region.0.get(Field::ReportedNs),
                    region.0.get(Field::Receipt),
                );
                let (inner_ns, token) = work.unwrap_or((0, 0));
                samples.push(TimerSample {
                    work_ms: (inner_ns as f64 / 1e6).round() as u64,
                    work_ran: work.is_some(),
                    inner_ns,
                    outer_ns: stop.at.duration_since(started).as_nanos() as u64,
                    reported_ns,
                    passed_value_through: work.is_some() && receipt == token,
                });
                session.resume();
            }
            _ => {
                session.kill();
                return Ok(Err(stopped_elsewhere(item)));
            }
        }
    }
    match judge_run(item, session.finish()?)? {
        Err(failed) => Ok(Err(failed)),
        Ok((Outcome::Timed, _)) if samples.len() == work_ms.len() => Ok(Ok(samples)),
        Ok(_) => Ok(Err(stopped_elsewhere(item))),
    }
}

/// A worker's outcome, the emulator's notes, and the supervisor's bracket around each call
/// (ns).
pub type Bracketed = (Outcome, String, Vec<u64>);

/// What a lab's worker reported from a bracketed run, the emulator's notes and each bracket
/// (ns).
pub type BracketedLab = (crate::protocol::LabOutcome, String, Vec<u64>);

/// A lab's own timed GPU run, bracketed ([`bracketed`]): the report the lab's worker wrote
/// (`Outcome::Lab`), the emulator's notes and each bracket (ns). A GPU error in the run is
/// already the item's failed result; any other outcome is the grader's bug.
pub fn bracketed_lab(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
) -> Result<Result<BracketedLab, ItemResult>, SupervisorError> {
    match bracketed(ctx, item, order)? {
        Err(failed) => Ok(Err(failed)),
        Ok((Outcome::Lab(value), notes, brackets)) => Ok(Ok((value, notes, brackets))),
        Ok((Outcome::Failed(e), notes, _)) => Ok(Err(super::gpu_error::error_result(
            item,
            usize::MAX,
            &e,
            &notes,
        ))),
        Ok((other, _, _)) => Err(super::unexpected(item, &other)),
    }
}

/// A call bracketed by [`Checkpoint::CallStart`] and [`Checkpoint::CallEnd`] in a worker that
/// otherwise just runs: the GPU timer and the benchmark. Returns the worker's outcome, its
/// notes and each bracket (ns).
pub fn bracketed(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
) -> Result<Result<Bracketed, ItemResult>, SupervisorError> {
    Ok(
        bracketed_runs(ctx, item, order, false)?.map(|(outcome, notes, brackets)| {
            let walls = brackets.iter().map(|b| b.wall_ns).collect();
            (outcome, notes, walls)
        }),
    )
}

/// One bracket: its wall-clock length on the supervisor's clock, and the processor time the
/// worker's threads used in it (ns) with how many of them ran, where the kernel tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bracket {
    /// From letting the worker continue at the call's start to its stop at the call's end.
    pub wall_ns: u64,
    /// The processor time its threads used meanwhile, and how many threads used any.
    pub work: Option<(u64, u32)>,
}

/// What [`bracketed_with_work`] returns: the worker's outcome, its notes and each bracket.
pub type BracketedWork = (Outcome, String, Vec<Bracket>);

/// Processor time used so far by each of a worker's threads (thread id, ns).
type ThreadTimes = Vec<(u32, u64)>;

/// [`bracketed`], with the processor time of each bracket: the work a stretch took, which no
/// other process on the machine lengthens, unlike its wall-clock time.
pub fn bracketed_with_work(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
) -> Result<Result<BracketedWork, ItemResult>, SupervisorError> {
    bracketed_runs(ctx, item, order, true)
}

/// The bracketed run behind [`bracketed`] and [`bracketed_with_work`]: the threads'
/// processor times are read at each bracket only when `work` asks for them.
fn bracketed_runs(
    ctx: &GradeContext,
    item: &Item,
    order: &WorkOrder,
    work: bool,
) -> Result<Result<BracketedWork, ItemResult>, SupervisorError> {
    #[cfg(feature = "replay")]
    if let Some((outcome, brackets)) = crate::replay::answer(order) {
        let run = crate::supervisor::WorkerRun::Reported {
            outcome,
            notes: String::new(),
            checks: crate::supervisor::Checks::NotAsked,
        };
        let brackets = brackets
            .into_iter()
            .map(|wall_ns| Bracket {
                wall_ns,
                work: None,
            })
            .collect::<Vec<_>>();
        return Ok(judge_run(item, run)?.map(|(outcome, notes)| (outcome, notes, brackets)));
    }
    let mut session = start(ctx, item, order, 0)?;
    let mut brackets = Vec::new();
    let mut open: Option<(Instant, Option<ThreadTimes>)> = None;
    while let Some(stop) = session.next_stop() {
        match stop.checkpoint {
            Some(Checkpoint::CallStart) if open.is_none() => {
                let threads = work.then(|| session.thread_times()).flatten();
                open = Some((session.resume(), threads));
            }
            Some(Checkpoint::CallEnd) if open.is_some() => {
                let (started, before) = open.take().unwrap_or((stop.at, None));
                let work = before
                    .zip(session.thread_times())
                    .map(|(before, after)| work_between(&before, &after));
                brackets.push(Bracket {
                    wall_ns: stop.at.duration_since(started).as_nanos() as u64,
                    work,
                });
                session.resume();
            }
            _ => {
                session.kill();
                return Ok(Err(stopped_elsewhere(item)));
            }
        }
    }
    Ok(judge_run(item, session.finish()?)?.map(|(outcome, notes)| (outcome, notes, brackets)))
}

/// The processor time threads used between two readings (ns), and how many used any (a
/// thread started in between counts whole).
fn work_between(before: &[(u32, u64)], after: &[(u32, u64)]) -> (u64, u32) {
    let mut total = 0u64;
    let mut threads = 0u32;
    for &(tid, now) in after {
        let then = before
            .iter()
            .find(|(t, _)| *t == tid)
            .map_or(0, |&(_, ns)| ns);
        let used = now.saturating_sub(then);
        if used > 0 {
            total = total.saturating_add(used);
            threads += 1;
        }
    }
    (total, threads)
}
