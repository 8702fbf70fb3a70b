//! Judging the GPU items: errors from the device with the emulator's reports, the
//! synchronization check, GPU speedups (real GPU only), device selection and the benchmark.

use super::timed::Bracket;
use super::{
    matmul, outcome_of, outcome_with_env, speedup, unexpected, unpack_owned, GradeContext,
};
use crate::i18n::t;
use crate::inputs;
use crate::protocol::{Backend, Outcome, BENCHMARK_CPU_RUNS, BENCHMARK_EMPTY_BRACKETS};
use crate::report::{ItemResult, Status};
use crate::rubric::{Item, Needs, SkipPolicy};
use crate::supervisor::SupervisorError;

/// A verdict for a GPU item that was not run, and whether it counts toward the maximum.
fn skipped(item: &Item, reason: &str, counts: bool) -> ItemResult {
    let mut result = ItemResult::failed(
        item,
        t!("skipped-reason", reason = reason),
        t!("skipped-details", reason = reason),
    );
    result.status = Status::Skipped;
    if !counts {
        result.max_score = 0.0;
    }
    result
}

/// An item whose worker claimed that the grader `could_not` do its part (set up the GPU,
/// apply the sandbox): failed, and kept in the maximum. Such a claim comes from the process
/// that runs the submission, which can make it too; the supervisor decides what is graded from
/// what it set up itself (DESIGN.md, "trust only what you can check").
pub fn untrusted_claim(item: &Item, could_not: &str) -> ItemResult {
    ItemResult::failed(
        item,
        t!("untrusted-claim-reason"),
        t!(
            "untrusted-claim-details",
            function = item.function,
            could_not = could_not
        ),
    )
}

/// A GPU item whose report came without the device counts the supervisor set its worker up
/// to make ([`GradeContext::counted`]): failed, as [`untrusted_claim`], whatever its results.
pub fn counts_missing(item: &Item) -> ItemResult {
    untrusted_claim(item, &t!("counts-missing"))
}

/// Items that cannot be graded on this backend: GPU work with `--gpu off` (left out of the
/// maximum), and GPU speedups anywhere but on a real GPU (the rubric's policy decides).
pub fn skipped_on_backend(ctx: &GradeContext, item: &Item) -> Option<ItemResult> {
    match (item.spec.needs(), ctx.backend) {
        (Needs::Gpu | Needs::RealGpu(_), Backend::NoGpu) => {
            Some(skipped(item, &ctx.backend_label, false))
        }
        (Needs::RealGpu(policy), Backend::Emulated) => Some(skipped(
            item,
            &t!("needs-real-gpu"),
            policy == SkipPolicy::Zero,
        )),
        _ => None,
    }
}

/// A GPU item whose kernel raced fails, even when its numbers came out right: on a GPU they
/// depend on timing. The emulator's report says where and gives the hint.
pub fn race_result(item: &Item, race: &str) -> ItemResult {
    let report = race.trim_start_matches("gpu-labs emulator: ");
    let (what, _) = report.split_once(": ").unwrap_or((report, ""));
    ItemResult::failed(
        item,
        t!("race-reason", what = what),
        t!("race-details", function = item.function, report = report),
    )
}

/// A checked run whose emulator record does not show it checked (see
/// [`crate::supervisor::Checks`]) fails: no record is no evidence of a clean run.
pub fn unproven_result(item: &Item, why: &str) -> ItemResult {
    ItemResult::failed(
        item,
        t!("unchecked-run-reason"),
        t!("unchecked-run-details", function = item.function, why = why),
    )
}

/// The failed result of a run on the emulator that was not checked (a timed run) whose record
/// does not show every launch confined to device memory, `why`.
pub fn unconfined_result(item: &Item, why: &str) -> ItemResult {
    ItemResult::failed(
        item,
        t!("unconfined-run-reason"),
        t!(
            "unconfined-run-details",
            function = item.function,
            why = why
        ),
    )
}

/// The environment that turns on the emulator's race checks in a worker: correctness runs
/// on the emulator only (timed runs use the plain build, so the checks cost them nothing).
pub fn race_check_env(backend: Backend) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    match backend {
        Backend::Emulated => vec![(crate::emulate::RACE_CHECK.into(), "1".into())],
        _ => Vec::new(),
    }
}

pub use crate::gpu::student::COMPILE_ERROR;

pub use super::gpu_error::{emulator_reported, error_result};

/// The synchronization check. The grader queued long device work before each call and
/// measured the student's device work with events around it. A reported time far below the
/// device time means the clock stopped before the GPU finished; one that includes a good part
/// of the queued work means the clock started before earlier GPU work finished.
pub fn grade_timer(ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError> {
    let (mut samples, notes, brackets) = match super::timed::bracketed(ctx, item, &ctx.order(item))?
    {
        Err(failed) => return Ok(failed),
        Ok((Outcome::GpuTimer(s), notes, brackets)) => (s, notes, brackets),
        Ok((Outcome::Failed(e), notes, _)) => {
            return Ok(error_result(item, usize::MAX, &e, &notes))
        }
        Ok((other, _, _)) => return Err(unexpected(item, &other)),
    };
    let size = samples.shape;
    let (a, b) = inputs::operands(ctx.seed, item.id(), 0, size);
    // C in the memory its bits came in: a timer's C can be 2048×2048.
    let output = std::mem::replace(
        &mut samples.output,
        crate::protocol::Matrix {
            rows: 0,
            cols: 0,
            bits: Vec::new(),
        },
    );
    let got = unpack_owned(item, output)?;
    if let Err(m) = timed_product_right(&a, &b, &got) {
        let mut details = t!(
            "timer-not-product-details",
            function = item.function,
            m = size[0],
            k = size[1],
            n = size[2],
            summary = m.summary
        );
        if !notes.is_empty() {
            details.push('\n');
            details.push_str(&emulator_reported(&notes));
        }
        return Ok(ItemResult::failed(
            item,
            t!("timer-not-product-reason"),
            details,
        ));
    }
    if brackets.len() != samples.samples.len() {
        return Err(unexpected(item, &Outcome::GpuTimer(samples)));
    }
    Ok(timer_result(
        item,
        &samples.samples,
        &brackets,
        samples.queued_ms,
        (
            &t!("timer-your-multiplication"),
            &format!("{}×{}×{}", size[0], size[1], size[2]),
        ),
    ))
}

/// A GPU timer's result: failed where [`synchronized`] fails a side, else passed, saying what
/// the last timed call measured for `work` (`what` in the failures, `size` in the success:
/// "your epoch", "one epoch of 512 examples").
pub fn timer_result(
    item: &Item,
    samples: &[crate::protocol::GpuTimerSample],
    brackets: &[u64],
    queued_ms: f64,
    (what, size): (&str, &str),
) -> ItemResult {
    if let Some(failed) = synchronized(item, samples, brackets, queued_ms, what) {
        return failed;
    }
    let last = &samples[samples.len() - 1];
    ItemResult::passed(
        item,
        t!("timer-passed-reason"),
        t!(
            "timer-passed-details",
            function = item.function,
            reported = format!("{:.3}", last.reported_ms),
            device = format!("{:.3}", last.device_ms),
            size = size,
            queued = format!("{queued_ms:.0}")
        ),
    )
}

/// A reported time this many times the device's, or more (up to [`UNIT_SLIP_HIGH`]), is a
/// unit slip: a clock right to within a factor of three, read a thousand times too large. A
/// clock that started early reads at most the grader's queue more (400 ms on the emulator,
/// 1 s on a GPU, beside at least 20 ms of work: at most 51 times).
pub const UNIT_SLIP_LOW: f64 = 300.0;

/// See [`UNIT_SLIP_LOW`].
pub const UNIT_SLIP_HIGH: f64 = 3000.0;

/// The two sides of the synchronization check on each timed call, with the supervisor's
/// bracket around it (ns, one per sample): the time reported must fit in the call, cover at
/// least half the device time of the student's `work` (else the clock stopped before the GPU
/// finished), and not include half the work the grader queued before the call (else the clock
/// started before earlier GPU work finished). Shared by every lab's GPU timers. Returns the
/// failed result, if one side fails.
pub fn synchronized(
    item: &Item,
    samples: &[crate::protocol::GpuTimerSample],
    brackets: &[u64],
    queued_ms: f64,
    work: &str,
) -> Option<ItemResult> {
    for (s, &outer_ns) in samples.iter().zip(brackets) {
        let outer_ms = outer_ns as f64 / 1e6;
        // About a thousand times the device's time (seconds used as milliseconds): a unit
        // slip, whatever else the clock did; it is said before "longer than the call".
        let ratio = s.reported_ms / s.device_ms;
        if s.device_ms > 0.0 && (UNIT_SLIP_LOW..=UNIT_SLIP_HIGH).contains(&ratio) {
            return Some(ItemResult::failed(
                item,
                t!("timer-unit-slip-reason"),
                t!(
                    "timer-unit-slip-details",
                    function = item.function,
                    reported = format!("{:.3}", s.reported_ms),
                    device = format!("{:.3}", s.device_ms),
                    work = work,
                    ratio = format!("{ratio:.0}")
                ),
            ));
        }
        if s.reported_ms > outer_ms + 0.5 {
            return Some(ItemResult::failed(
                item,
                t!("timer-too-long-reason"),
                t!(
                    "timer-too-long-details",
                    function = item.function,
                    reported = format!("{:.3}", s.reported_ms),
                    outer = format!("{outer_ms:.3}")
                ),
            ));
        }
        let measured = t!(
            "timer-measured",
            reported = format!("{:.3}", s.reported_ms),
            device = format!("{:.3}", s.device_ms),
            work = work,
            queued = format!("{queued_ms:.0}")
        );
        if s.reported_ms < 0.5 * s.device_ms {
            // Both causes are named: a clock that never waited and one that timed only a
            // warm-up launch read alike (a launch's return can take milliseconds on a GPU, so
            // the share of the device's time read does not tell them apart).
            return Some(ItemResult::failed(
                item,
                t!("timer-stopped-early-reason"),
                t!("timer-stopped-early-details", measured = measured),
            ));
        }
        if s.reported_ms > s.device_ms + 0.5 * queued_ms {
            return Some(ItemResult::failed(
                item,
                t!("timer-started-late-reason"),
                t!("timer-started-late-details", measured = measured),
            ));
        }
    }
    None
}

/// Above this many multiply-adds the timed product is checked with Freivalds' method
/// (O(n²)) instead of against a full f64 reference (O(n³): seconds and a gigabyte at the
/// largest shapes a fast GPU grows the timer's work to).
const FULL_CHECK_MAX: usize = 512 * 512 * 512;

/// Whether the GPU timer's product is A·B: element by element (with the first wrong one
/// named) at the rubric's shapes, by a random check the worker cannot predict above them.
fn timed_product_right(
    a: &ndarray::Array2<f32>,
    b: &ndarray::Array2<f32>,
    got: &ndarray::Array2<f32>,
) -> Result<(), matmul::Mismatch> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    if m * k * n <= FULL_CHECK_MAX {
        return matmul::compare(a, b, got, 2.0).map(|_| ());
    }
    // Not derived from the seed, which the worker knows.
    let x = super::matmul::verification_vector(crate::protocol::fresh_nonce(), "timer", 0, n);
    if matmul::freivalds(a, b, got, 2.0, &x) {
        Ok(())
    } else {
        Err(matmul::Mismatch {
            summary: t!("freivalds-summary"),
            hint: None,
        })
    }
}

/// GPU speedups, on a real GPU (elsewhere [`skipped_on_backend`] decides).
pub fn grade_speedup(
    ctx: &GradeContext,
    item: &Item,
    spec: &super::speedup::Speed,
) -> Result<ItemResult, SupervisorError> {
    let size = spec.size;
    let sampled = match super::sample_speedup(ctx, item, spec)? {
        Ok(sampled) => sampled,
        Err(failed) => return Ok(failed),
    };
    let s = speedup::shown(sampled.speedup);
    let mut result = ItemResult::passed(
        item,
        t!("gpu-speedup-reason", speedup = s),
        t!(
            "gpu-speedup-details",
            function = item.function,
            speedup = s,
            m = size[0],
            k = size[1],
            n = size[2],
            samples = sampled.baseline_ns.len()
        ),
    );
    result.set_score(sampled.points);
    result.speedup = Some(sampled.speedup);
    result.sweep = Some(super::sweep::graded(ctx, item, spec, &sampled));
    Ok(result)
}

/// Device selection: with no GPU it must choose the CPU (and not panic); with a GPU, the GPU.
pub fn grade_device_select(ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError> {
    let mut checked = Vec::new();
    // Without the CUDA library at all, where this machine has none to hide.
    if crate::gpu::real_gpu().is_err() && !unsafe { cudarc::driver::sys::is_culib_present() } {
        match choice(ctx, item, Vec::new())? {
            Err(failed) => return Ok(with_context(failed, &t!("device-no-library"))),
            Ok(true) => {
                return Ok(wrong_choice(
                    item,
                    &t!("device-no-library"),
                    &t!("device-the-gpu"),
                ))
            }
            Ok(false) => checked.push(t!("device-checked-no-library")),
        }
    }
    // A CUDA library that finds no device.
    if let Ok(env) = crate::gpu::no_device_env() {
        match choice(ctx, item, env)? {
            Err(failed) => return Ok(with_context(failed, &t!("device-no-gpu"))),
            Ok(true) => {
                return Ok(wrong_choice(
                    item,
                    &t!("device-no-gpu"),
                    &t!("device-the-gpu"),
                ))
            }
            Ok(false) => checked.push(t!("device-checked-no-gpu")),
        }
    }
    if ctx.backend != Backend::NoGpu {
        let env =
            crate::gpu::worker_env(ctx.backend).map_err(|e| SupervisorError::Gpu(e.to_string()))?;
        match choice(ctx, item, env)? {
            Err(failed) => return Ok(with_context(failed, &t!("device-with-gpu"))),
            Ok(false) => {
                return Ok(wrong_choice(
                    item,
                    &t!("device-gpu-present"),
                    &t!("device-the-cpu"),
                ))
            }
            Ok(true) => checked.push(t!("device-checked-gpu")),
        }
    }
    if checked.is_empty() {
        return Ok(skipped(item, &t!("device-no-way"), false));
    }
    Ok(ItemResult::passed(
        item,
        t!("device-passed-reason"),
        t!(
            "device-passed-details",
            function = item.function,
            checked = checked.join("; ")
        ),
    ))
}

/// Runs the student's selection in a worker with `env`.
fn choice(
    ctx: &GradeContext,
    item: &Item,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
) -> Result<Result<bool, ItemResult>, SupervisorError> {
    Ok(match outcome_with_env(ctx, item, &ctx.order(item), env)? {
        Err(failed) => Err(failed),
        Ok((Outcome::DeviceChoice { chose_gpu }, _)) => Ok(chose_gpu),
        Ok((other, _)) => return Err(unexpected(item, &other)),
    })
}

fn with_context(mut failed: ItemResult, situation: &str) -> ItemResult {
    if failed.reason.starts_with(&t!("todo-prefix")) {
        return failed;
    }
    failed.reason = t!(
        "device-context-reason",
        situation = situation,
        reason = failed.reason
    );
    failed.details = t!(
        "device-context-details",
        situation = situation,
        details = failed.details
    );
    failed
}

fn wrong_choice(item: &Item, situation: &str, chose: &str) -> ItemResult {
    ItemResult::failed(
        item,
        t!("device-wrong-reason", situation = situation, chose = chose),
        t!(
            "device-wrong-details",
            function = item.function,
            chose = chose,
            situation = situation
        ),
    )
}

/// The benchmark: both times measured, plausible, and the GPU one present when there is a GPU.
pub fn grade_benchmark(
    ctx: &GradeContext,
    item: &Item,
    size: usize,
) -> Result<ItemResult, SupervisorError> {
    let (cpu_ns, gpu_ns, device, timer_alone, brackets) =
        match super::timed::bracketed_with_work(ctx, item, &ctx.order(item))? {
            Err(failed) => return Ok(failed),
            Ok((
                Outcome::Benchmark {
                    cpu_ns,
                    gpu_ns,
                    device,
                    timer_alone,
                },
                _,
                brackets,
            )) => (cpu_ns, gpu_ns, device, timer_alone, brackets),
            Ok((Outcome::Failed(e), notes, _)) => return charged_once(ctx, item, &e, &notes),
            Ok((other, _, _)) => return Err(unexpected(item, &other)),
        };
    let outer_ns = brackets.first().map_or(0, |b| b.wall_ns);
    let ms = |ns: u64| ns as f64 / 1e6;
    if cpu_ns == 0 || cpu_ns > outer_ns {
        return Ok(ItemResult::failed(
            item,
            t!("bench-cpu-reason"),
            t!(
                "bench-cpu-details",
                function = item.function,
                time = format!("{:.3}", ms(cpu_ns)),
                outer = format!("{:.3}", ms(outer_ns))
            ),
        ));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (own_ns, floor) = match cpu_function_floor(&brackets, cores) {
        Some(least) => least,
        None => {
            return Ok(ItemResult::failed(
                item,
                t!("bench-cpu-unchecked-reason"),
                t!(
                    "bench-cpu-unchecked-details",
                    function = item.function,
                    n = size
                ),
            ))
        }
    };
    if (cpu_ns as f64) < floor * own_ns as f64 {
        return Ok(ItemResult::failed(
            item,
            t!("bench-cpu-reason"),
            t!(
                "bench-cpu-below-details",
                function = item.function,
                time = format!("{:.3}", ms(cpu_ns)),
                own = format!("{:.3}", ms(own_ns)),
                runs = BENCHMARK_CPU_RUNS,
                n = size
            ),
        ));
    }
    let mut note = String::new();
    match (ctx.backend, gpu_ns) {
        (Backend::NoGpu, _) => {}
        (_, None) => {
            return Ok(ItemResult::failed(
                item,
                t!("bench-no-gpu-reason"),
                t!(
                    "bench-no-gpu-details",
                    function = item.function,
                    backend = ctx.backend.label()
                ),
            ))
        }
        (_, Some(g)) if g == 0 || g > outer_ns => {
            return Ok(ItemResult::failed(
                item,
                t!("bench-gpu-reason"),
                t!(
                    "bench-gpu-details",
                    function = item.function,
                    time = format!("{:.3}", ms(g)),
                    outer = format!("{:.3}", ms(outer_ns))
                ),
            ))
        }
        (_, Some(g)) => match device.map(|d| gpu_figure(g, &d, timer_alone.as_ref())) {
            // Where the device's own work cannot be seen (a real GPU), the bracket bounds it.
            None | Some(GpuFigure::Fits) => {}
            Some(GpuFigure::NoWork) => {
                return Ok(ItemResult::failed(
                    item,
                    t!("bench-gpu-reason"),
                    t!(
                        "bench-gpu-no-work-details",
                        function = item.function,
                        time = format!("{:.3}", ms(g))
                    ),
                ))
            }
            Some(GpuFigure::Below { device_ns }) => {
                return Ok(ItemResult::failed(
                    item,
                    t!("bench-gpu-reason"),
                    t!(
                        "bench-gpu-below-details",
                        function = item.function,
                        time = format!("{:.3}", ms(g)),
                        device = format!("{:.3}", ms(device_ns)),
                        timer = TIMER
                    ),
                ))
            }
            Some(GpuFigure::TimersOwn) => note = t!("bench-gpu-timers-own", timer = TIMER),
        },
    }
    let gpu = gpu_ns
        .map(|g| t!("bench-gpu-part", time = format!("{:.3}", ms(g))))
        .unwrap_or_default();
    let mut details = t!(
        "bench-passed-details",
        function = item.function,
        time = format!("{:.3}", ms(cpu_ns)),
        gpu = gpu
    );
    details.push(' ');
    details.push_str(&t!(
        "bench-cpu-checked",
        own = format!("{:.3}", ms(own_ns)),
        runs = BENCHMARK_CPU_RUNS,
        n = size
    ));
    if !note.is_empty() {
        details.push(' ');
        details.push_str(&note);
    }
    Ok(ItemResult::passed(item, t!("bench-passed-reason"), details))
}

/// The least CPU time `benchmark` may report, as a fraction of the least wall-clock time the
/// grader's own runs of `matmul_fast` at the same size can have taken: their processor time
/// over the threads that used it (at most the machine's cores). That bound holds however busy
/// the machine is (n threads cannot use more than n seconds of processor a second), and a
/// benchmark times one cold run, which uses more processor than a warm one, not less: half
/// leaves room for the runs' own spread. A time made up, or taken of something else, falls
/// far below it.
pub const BENCH_CPU_FLOOR: f64 = 0.5;

/// The same as a fraction of the grader's fastest run on its wall clock, where the kernel
/// keeps no processor times per thread: another process can slow the grader's runs and not
/// the student's, so the margin is wide (measured: the solution's run read 0.2 times the
/// grader's fastest with the whole test suite running beside it).
pub const BENCH_WALL_FLOOR: f64 = 0.05;

/// The least GPU time `benchmark` may report, as a fraction of the device time of one of the
/// launches it made (their mean): a timer that waits for its launch reads at least the
/// launch's device time.
pub const BENCH_GPU_FLOOR: f64 = 0.5;

/// The least wall-clock time a run of the CPU function can take, from the grader's runs after
/// the call (less what an empty bracket costs), and the fraction of it a reported time must
/// reach: from processor time where every run has it ([`BENCH_CPU_FLOOR`]), else from the
/// wall clock ([`BENCH_WALL_FLOOR`]). `None` when the runs did not all happen.
fn cpu_function_floor(brackets: &[Bracket], cores: usize) -> Option<(u64, f64)> {
    let after = brackets.get(1..)?;
    if after.len() != BENCHMARK_EMPTY_BRACKETS + BENCHMARK_CPU_RUNS {
        return None;
    }
    let over_threads = |b: &Bracket| {
        b.work
            .map(|(ns, threads)| ns / u64::from(threads).clamp(1, cores.max(1) as u64))
    };
    let (least, floor) = match after.iter().map(over_threads).collect::<Option<Vec<u64>>>() {
        Some(least) => (least, BENCH_CPU_FLOOR),
        None => (after.iter().map(|b| b.wall_ns).collect(), BENCH_WALL_FLOOR),
    };
    let (empty, runs) = least.split_at(BENCHMARK_EMPTY_BRACKETS);
    let cost = empty.iter().copied().min()?;
    Some((runs.iter().copied().min()?.saturating_sub(cost), floor))
}

/// What the device work seen during `benchmark` says of the GPU time it reported.
#[derive(Debug, PartialEq)]
enum GpuFigure {
    /// It fits the device's work.
    Fits,
    /// The device did no work during the call.
    NoWork,
    /// Far below the device time of a launch of the call (`device_ns`, their mean), and the
    /// timer alone reads its own launch right: the figure is the benchmark's.
    Below { device_ns: u64 },
    /// Below, but the timer alone reads short too, or fails: the timer's mistake, charged by
    /// its item.
    TimersOwn,
}

/// Holds GPU time `g` against the device work `d` seen during the call and the timer's own
/// reading (`alone`).
fn gpu_figure(
    g: u64,
    d: &crate::protocol::DeviceTime,
    alone: Option<&crate::protocol::TimerLook>,
) -> GpuFigure {
    let short = |reported: u64, d: &crate::protocol::DeviceTime| {
        d.runs > 0 && (reported as f64) < BENCH_GPU_FLOOR * d.busy_ns as f64 / d.runs as f64
    };
    if d.work == 0 {
        GpuFigure::NoWork
    } else if !short(g, d) {
        GpuFigure::Fits
    } else if alone.is_some_and(|a| a.device.runs > 0 && !short(a.reported_ns, &a.device)) {
        GpuFigure::Below {
            device_ns: d.busy_ns / d.runs.max(1),
        }
    } else {
        GpuFigure::TimersOwn
    }
}

/// The student's GPU timer, which `benchmark` calls: an order of kind `benchmark` for this
/// function makes the matmul lab's worker run the timer alone
/// (`grader_labs::matmul::gpu::TIMER`, the same name: the end-to-end tests of `benchmark` fail
/// if they differ).
const TIMER: &str = "time_gpu_matmul";

/// The result of `benchmark` when it failed with a GPU error `e`. Where that error surfaces
/// depends on when the device ran a faulting launch: in `benchmark` itself, or only after it
/// returned. So when the student's own timer, alone in a fresh worker at the same size and
/// waited for, fails too, the fault is the timer's, which its own item charges: this item does
/// not charge it again (it is checked once the timer runs). Otherwise the error is this item's.
fn charged_once(
    ctx: &GradeContext,
    item: &Item,
    e: &str,
    notes: &str,
) -> Result<ItemResult, SupervisorError> {
    let mut order = ctx.order(item);
    order.function = TIMER.into();
    match outcome_of(ctx, item, &order)? {
        Ok((Outcome::Failed(own), _)) => Ok(ItemResult::passed(
            item,
            t!("bench-timer-fails-reason", timer = TIMER),
            t!(
                "bench-timer-fails-details",
                function = item.function,
                timer = TIMER,
                error = first_line(e),
                own = first_line(&own)
            ),
        )),
        _ => Ok(error_result(item, usize::MAX, e, notes)),
    }
}

/// An error's first line, as a sentence shows it.
pub fn first_line(e: &str) -> String {
    e.lines().next().unwrap_or_default().trim().to_string()
}

/// A GPU function whose result was not computed on the device: values it returned were never
/// copied back from device memory, or were the very values it had uploaded.
pub fn not_from_device(item: &Item, n: &crate::protocol::NotFromDevice) -> ItemResult {
    let case = n.case + 1;
    let found = if n.not_copied_back > 0 {
        t!(
            "not-copied-back",
            count = n.not_copied_back,
            values = n.values,
            case = case
        )
    } else {
        t!(
            "uploaded-back",
            count = n.uploaded,
            values = n.values,
            case = case
        )
    };
    ItemResult::failed(
        item,
        t!("not-from-device-reason"),
        t!(
            "not-from-device-details",
            function = item.function,
            found = found
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The least a run of the CPU function can take: from processor time over the threads
    /// that used it (at most the cores) where every bracket has it, however long the runs
    /// lasted on the wall clock (another process slowed them); else the fastest wall-clock
    /// run, with the wider margin. Less an empty bracket's cost; none unless every run
    /// happened.
    #[test]
    fn a_cpu_function_takes_at_least_its_processor_time_over_its_threads() {
        let b = |wall_ns, work| Bracket { wall_ns, work };
        let outer = b(9_000_000, Some((9_000_000, 1)));
        let empties = [b(30, Some((20, 1))), b(20, Some((10, 1))), b(25, None)];
        // Runs slowed tenfold on the wall clock by another process; four threads on a
        // two-core machine count as two.
        let runs = [
            b(5_000, Some((1_000, 4))),
            b(4_200, Some((900, 2))),
            b(4_800, Some((1_200, 1))),
            b(4_700, Some((800, 4))),
            b(9_000, Some((2_000, 2))),
        ];
        let with_work = [
            vec![outer],
            empties.map(|e| b(e.wall_ns, Some((10, 1)))).to_vec(),
            runs.to_vec(),
        ]
        .concat();
        assert_eq!(
            cpu_function_floor(&with_work, 2),
            Some((390, BENCH_CPU_FLOOR))
        );
        let without = [vec![outer], empties.to_vec(), runs.to_vec()].concat();
        assert_eq!(
            cpu_function_floor(&without, 2),
            Some((4_180, BENCH_WALL_FLOOR))
        );
        assert_eq!(cpu_function_floor(&with_work[..7], 2), None);
        assert_eq!(cpu_function_floor(&[outer], 2), None);
        assert_eq!(cpu_function_floor(&[], 2), None);
    }

    /// A GPU time must fit the device work seen during the call: some work, and at least half
    /// a launch's device time, unless the timer alone reads short too (its own item charges
    /// that).
    #[test]
    fn a_gpu_time_is_held_against_the_device_work_of_the_call() {
        use crate::protocol::{DeviceTime, TimerLook};
        let launch = DeviceTime {
            work: 2,
            runs: 2,
            busy_ns: 4_000_000,
        };
        assert_eq!(gpu_figure(2_100_000, &launch, None), GpuFigure::Fits);
        // The timer alone failed (a fault of its own): its item charges that.
        assert_eq!(gpu_figure(1_000, &launch, None), GpuFigure::TimersOwn);
        let right = TimerLook {
            reported_ns: 2_200_000,
            device: launch,
        };
        let short = TimerLook {
            reported_ns: 5_000,
            ..right
        };
        assert_eq!(
            gpu_figure(1_000, &launch, Some(&right)),
            GpuFigure::Below {
                device_ns: 2_000_000
            }
        );
        assert_eq!(
            gpu_figure(1_000, &launch, Some(&short)),
            GpuFigure::TimersOwn
        );
        let nothing = DeviceTime::default();
        assert_eq!(gpu_figure(1_000, &nothing, Some(&right)), GpuFigure::NoWork);
        // cuBLAS work has no launch time to hold the figure to: the bracket bounds it.
        let blas = DeviceTime { work: 1, ..nothing };
        assert_eq!(gpu_figure(1_000, &blas, None), GpuFigure::Fits);
    }

    #[test]
    fn checks_are_asked_of_the_emulator_only() {
        assert_eq!(race_check_env(Backend::Emulated).len(), 1);
        assert!(race_check_env(Backend::Real).is_empty());
        assert!(race_check_env(Backend::NoGpu).is_empty());
    }

    #[test]
    fn a_large_timed_product_is_checked_without_a_full_reference() {
        // Just above the full check: Freivalds' method, with a vector the worker cannot know.
        let a = inputs::matrix(7, "t", 0, "a", 1024, 256);
        let b = inputs::matrix(7, "t", 0, "b", 256, 520);
        const _: () = assert!(1024 * 256 * 520 > FULL_CHECK_MAX);
        let mut c = a.dot(&b);
        assert!(timed_product_right(&a, &b, &c).is_ok());
        // The last blocks of rows not computed, as a grid too small leaves them.
        c.slice_mut(ndarray::s![1008.., ..]).fill(0.0);
        let wrong = timed_product_right(&a, &b, &c).expect_err("the rows left at 0 are found");
        assert!(wrong.summary.contains("Freivalds"), "{}", wrong.summary);
    }
}
