//! The matmul lab (seed 000, section 5): a naive and a fast CPU matrix product and a timer.
//! The lab crate's `tests/grade.rs` hands its functions to the harness in a [`Submission`];
//! in worker mode they run here on inputs derived from the seed.

pub mod gpu;

use super::LabInfo;
use crate::inputs;
use crate::protocol::{Matrix, Outcome, SpeedSamples, TimerSample, WorkOrder};
use crate::rubric::ItemKind;
use crate::worker::{guarded, LabWorker};
use ndarray::Array2;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The grader's knowledge of the matmul lab.
pub static LAB: LabInfo = LabInfo {
    name: "matmul",
    lab_crate: "matmul-lab",
    functions: &[
        (ItemKind::Matmul, &["matmul_naive", "matmul_fast"]),
        (ItemKind::CpuTimer, &["time_cpu"]),
        (ItemKind::CpuSpeedup, &["matmul_fast", "matmul_naive"]),
        (
            ItemKind::GpuMatmul,
            &["matmul_gpu", "matmul_gpu_tiled", "matmul_cublas"],
        ),
        (ItemKind::GpuTimer, &["time_gpu_matmul"]),
        (ItemKind::GpuSpeedup, &["time_gpu_matmul"]),
        (ItemKind::DeviceSelect, &["default_device"]),
        (ItemKind::Benchmark, &["benchmark"]),
    ],
    harness: include_str!("../../../../solutions/matmul/tests/grade.rs"),
    manifest: include_str!("../../../../solutions/matmul/Cargo.toml"),
};

/// A student's matrix product: A (m×k) · B (k×n) → C (m×n).
pub type ProductFn = fn(&Array2<f32>, &Array2<f32>) -> Array2<f32>;

/// Work handed to the student's timer; calling it runs the work and yields its receipt.
pub type TimedWork = Box<dyn FnOnce() -> WorkReceipt>;

/// The student's timer, instantiated for the grader's work.
pub type TimerFn = fn(TimedWork) -> (WorkReceipt, Duration);

/// What timed work returns. Only the work can make one, so a timer that returns it really ran
/// the work and passed its value through.
#[derive(Debug, PartialEq, Eq)]
pub struct WorkReceipt(u64);

/// The student's functions for this lab, as `tests/grade.rs` wires them.
pub struct Submission {
    /// The triple loop.
    pub matmul_naive: ProductFn,
    /// The student's own faster product.
    pub matmul_fast: ProductFn,
    /// Times one piece of work with `std::time::Instant`.
    pub time_cpu: TimerFn,
    /// The naive CUDA kernel, through cudarc.
    pub matmul_gpu: gpu::GpuProductFn,
    /// The shared-memory tiled CUDA kernel.
    pub matmul_gpu_tiled: gpu::GpuProductFn,
    /// The product through cuBLAS.
    pub matmul_cublas: gpu::GpuProductFn,
    /// Times one device product, synchronizing correctly.
    pub time_gpu_matmul: gpu::GpuTimerFn,
    /// Whether the student's device selection chose the GPU.
    pub default_device_is_gpu: fn() -> bool,
    /// The lab activity: (CPU time, GPU time if any) at a size.
    pub benchmark: fn(usize) -> gpu::GpuResult<(Duration, Option<Duration>)>,
}

impl Submission {
    fn product(&self, name: &str) -> Result<ProductFn, String> {
        match name {
            "matmul_naive" => Ok(self.matmul_naive),
            "matmul_fast" => Ok(self.matmul_fast),
            other => Err(format!("the matmul lab has no product function `{other}`")),
        }
    }

    fn gpu_product(&self, name: &str) -> Result<gpu::GpuProductFn, String> {
        match name {
            "matmul_gpu" => Ok(self.matmul_gpu),
            "matmul_gpu_tiled" => Ok(self.matmul_gpu_tiled),
            "matmul_cublas" => Ok(self.matmul_cublas),
            other => Err(format!(
                "the matmul lab has no GPU product function `{other}`"
            )),
        }
    }
}

/// The grader's naive product, the baseline speedups are measured against: the textbook
/// triple loop over indexed elements, as a student's first version looks.
pub fn baseline_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let mut c = Array2::zeros((m, n));
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0f32;
            for p in 0..k {
                sum += a[[i, p]] * b[[p, j]];
            }
            c[[i, j]] = sum;
        }
    }
    c
}

impl LabWorker for Submission {
    fn info(&self) -> &'static LabInfo {
        &LAB
    }

    fn run(&self, order: &WorkOrder) -> Result<Outcome, String> {
        match order.kind {
            ItemKind::Matmul => {
                let f = self.product(&order.function)?;
                let mut outputs = Vec::with_capacity(order.cases.len());
                for (index, &shape) in order.cases.iter().enumerate() {
                    let (a, b) = inputs::operands(order.seed, &order.item, index, shape);
                    match guarded(Some(index), || f(&a, &b)) {
                        Ok(c) => outputs.push(Matrix::from_array(&c)),
                        Err(p) => {
                            return Ok(Outcome::Products {
                                outputs,
                                panic: Some(p),
                                error: None,
                                device_work: None,
                            })
                        }
                    }
                }
                Ok(Outcome::Products {
                    outputs,
                    panic: None,
                    error: None,
                    device_work: None,
                })
            }
            ItemKind::CpuTimer => {
                let mut samples = Vec::new();
                for (index, &ms) in order.work_ms.iter().enumerate() {
                    match guarded(None, || {
                        time_once(self.time_cpu, ms, order.seed + index as u64)
                    }) {
                        Ok(s) => samples.push(s),
                        Err(p) => return Ok(Outcome::Panicked(p)),
                    }
                }
                Ok(Outcome::Timer(samples))
            }
            ItemKind::CpuSpeedup => {
                let f = self.product(&order.function)?;
                let size = order.size.ok_or("a speedup order needs a size")?;
                match guarded(None, || pair_samples(f, order, size)) {
                    Ok(s) => Ok(Outcome::Speed(s)),
                    Err(p) => Ok(Outcome::Panicked(p)),
                }
            }
            ItemKind::GpuMatmul => Ok(gpu::products(self.gpu_product(&order.function)?, order)),
            ItemKind::GpuTimer => Ok(gpu::timer(self.time_gpu_matmul, order)),
            ItemKind::GpuSpeedup => Ok(gpu::speedup(self.time_gpu_matmul, order)),
            ItemKind::DeviceSelect => Ok(match guarded(None, self.default_device_is_gpu) {
                Ok(chose_gpu) => Outcome::DeviceChoice { chose_gpu },
                Err(p) => Outcome::Panicked(p),
            }),
            ItemKind::Benchmark => {
                let size = order.size.map(|s| s[0]).unwrap_or(256);
                let start = Instant::now();
                Ok(match guarded(None, || (self.benchmark)(size)) {
                    Ok(Ok((cpu, gpu))) => Outcome::Benchmark {
                        cpu_ns: cpu.as_nanos() as u64,
                        gpu_ns: gpu.map(|g| g.as_nanos() as u64),
                        outer_ns: start.elapsed().as_nanos() as u64,
                    },
                    Ok(Err(e)) => Outcome::Failed(gpu::describe(e.as_ref())),
                    Err(p) => Outcome::Panicked(p),
                })
            }
        }
    }
}

/// Hands the timer work of `ms` milliseconds and brackets the call with the grader's clock.
fn time_once(timer: TimerFn, ms: u64, token: u64) -> TimerSample {
    let inner: Arc<Mutex<Option<Duration>>> = Arc::new(Mutex::new(None));
    let record = Arc::clone(&inner);
    let work: TimedWork = Box::new(move || {
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(ms));
        let ran = start.elapsed();
        if let Ok(mut r) = record.lock() {
            *r = Some(ran);
        }
        WorkReceipt(token)
    });
    let outer_start = Instant::now();
    let (receipt, reported) = timer(work);
    let outer = outer_start.elapsed();
    let ran = inner.lock().ok().and_then(|r| *r);
    TimerSample {
        work_ms: ms,
        work_ran: ran.is_some(),
        inner_ns: ran.map(|d| d.as_nanos() as u64).unwrap_or(0),
        outer_ns: outer.as_nanos() as u64,
        reported_ns: reported.as_nanos().min(u128::from(u64::MAX)) as u64,
        passed_value_through: receipt == WorkReceipt(token),
    }
}

/// Most candidate runs in one timed sample.
const MAX_CANDIDATE_RUNS: usize = 64;

/// Warms both sides up, then times them back to back `order.samples` times, alternating which
/// goes first so neither always runs on a warmer cache. Every run multiplies inputs of its own
/// (so no result can be remembered) and every timed output is checked.
///
/// In each sample the baseline runs once and the candidate runs again and again (up to
/// [`MAX_CANDIDATE_RUNS`] times) until its runs add up to one baseline run; its time is the
/// median of those runs. Both sides are then measured over the same stretch of time, so a
/// machine kept busy by something else slows both alike, while a single scheduler hiccup,
/// which can double one 1 ms run but barely touches a 50 ms one, does not move the median.
fn pair_samples(candidate: ProductFn, order: &WorkOrder, size: [usize; 3]) -> SpeedSamples {
    let time = |f: ProductFn, a: &Array2<f32>, b: &Array2<f32>| {
        let start = Instant::now();
        let c = black_box(f(black_box(a), black_box(b)));
        (start.elapsed().as_nanos() as u64, c)
    };
    let (a, b) = inputs::operands(order.seed, &order.item, 0, size);
    let (budget_ns, _) = black_box(time(baseline_naive, &a, &b));
    let (_, output) = time(candidate, &a, &b);
    let x = verification_vector(order, size[2]);
    // The candidate's median time over runs on this sample's inputs and on fresh ones, and
    // whether every run was right.
    let median_candidate = |s: usize, a: &Array2<f32>, b: &Array2<f32>| {
        let (mut runs, mut spent, mut all_right) = (Vec::new(), 0u64, true);
        for run in 0..MAX_CANDIDATE_RUNS {
            if run > 0 && spent >= budget_ns {
                break;
            }
            let fresh;
            let (a, b) = if run == 0 {
                (a, b)
            } else {
                fresh = inputs::operands(order.seed, &order.item, run_case(order, s, run), size);
                (&fresh.0, &fresh.1)
            };
            let (ns, c) = time(candidate, a, b);
            all_right &= crate::check::matmul::freivalds(a, b, &c, 2.0, &x);
            runs.push(ns);
            spent += ns;
        }
        runs.sort_unstable();
        (runs[runs.len() / 2], all_right)
    };
    // The baseline's time, and the CPU time other threads of the program used meanwhile.
    let time_baseline = |a: &Array2<f32>, b: &Array2<f32>| {
        let ((ns, _), others) = crate::cpu_time::others_during(|| time(baseline_naive, a, b));
        (ns, others)
    };
    let mut baseline_ns = Vec::with_capacity(order.samples);
    let mut baseline_others_cpu_ns = Vec::with_capacity(order.samples);
    let mut candidate_ns = Vec::with_capacity(order.samples);
    let mut wrong_sample = None;
    for s in 0..order.samples {
        let (a, b) = inputs::operands(order.seed, &order.item, sample_case(order, s), size);
        let ((base, others), (cand, right)) = if s % 2 == 0 {
            let base = time_baseline(&a, &b);
            (base, median_candidate(s, &a, &b))
        } else {
            let cand = median_candidate(s, &a, &b);
            (time_baseline(&a, &b), cand)
        };
        baseline_ns.push(base);
        baseline_others_cpu_ns.push(others);
        candidate_ns.push(cand);
        if wrong_sample.is_none() && !right {
            wrong_sample = Some(s);
        }
    }
    SpeedSamples {
        baseline_ns,
        baseline_others_cpu_ns,
        candidate_ns,
        output: Matrix::from_array(&output),
        wrong_sample,
    }
}

/// The input case of the candidate's extra run `run` (1 or more) in timed sample `s`: distinct
/// from every sample case of every round (those stay below 2³²) and from every other run, so
/// no run's inputs come back later, not even in another round's worker process.
fn run_case(order: &WorkOrder, s: usize, run: usize) -> usize {
    sample_case(order, s) + (run << 32)
}

/// The input case of timed sample `s` of an order: distinct for every round and sample, and
/// never 0 (the case whose output the supervisor checks in full).
pub fn sample_case(order: &WorkOrder, s: usize) -> usize {
    1 + order.round * 10_000 + s
}

/// The random vector Freivalds' check multiplies by, from the order's seed.
pub fn verification_vector(order: &WorkOrder, n: usize) -> Vec<f64> {
    inputs::matrix(order.seed, &order.item, order.round, "freivalds", 1, n)
        .iter()
        .map(|&v| f64::from(v))
        .collect()
}
