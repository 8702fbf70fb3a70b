//! The matmul lab (seed 000, section 5): a naive and a fast CPU matrix product and a timer,
//! the same on the GPU, and (seed 004) a batch of products in one call ([`batched`]).
//! The lab crate's `tests/grade.rs` hands its functions to the harness in a [`Submission`];
//! in worker mode they run here on inputs derived from the seed.

pub mod batched;
#[cfg(feature = "judge")]
pub mod batched_judge;
#[cfg(feature = "judge")]
pub mod chart;
#[cfg(feature = "judge")]
mod coverage;
pub mod gpu;
#[cfg(feature = "judge")]
pub mod judge;
#[cfg(feature = "judge")]
pub mod kind_spec;
pub mod kinds;
#[cfg(feature = "judge")]
mod verdict;

/// The matmul lab's student-facing messages (`i18n/*.ftl` beside this file).
pub static MESSAGES: grader_worker::i18n::Catalogue = grader_worker::i18n::Catalogue::new(
    "grader/labs/src/matmul/i18n",
    include_str!("i18n/en.ftl"),
    include_str!("i18n/zh-TW.ftl"),
);

/// Formats one of the matmul lab's [`MESSAGES`]: `t!("key", name = value, …)`.
macro_rules! t {
    ($($arg:tt)*) => {
        grader_worker::tr!($crate::matmul::MESSAGES, $($arg)*)
    };
}
use t;

/// "Hint: …." in the run's language (the engine's words, shared by the labs): below the
/// judges and their verdicts, which both end their feedback with one.
#[cfg(feature = "judge")]
fn hint_line(hint: &str) -> String {
    grader_worker::tr!(grader_engine::i18n::MESSAGES, "hint-line", hint = hint)
}

#[cfg(test)]
mod catalogue_tests {
    #[test]
    fn the_matmul_catalogue_is_complete_in_both_languages() {
        let problems = super::MESSAGES.problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/matmul");
        let unknown = grader_worker::i18n::unknown_keys(&super::MESSAGES, &dir);
        assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    }
}

#[cfg(feature = "judge")]
pub use grader_engine::check::matmul::{run_case, sample_case, verification_vector};
#[cfg(feature = "judge")]
use grader_engine::lab::LabInfo;
use grader_hot::baselines;
use grader_worker::inputs;
use grader_worker::protocol::{Matrix, Outcome, WorkOrder};
use grader_worker::region::Field;
use grader_worker::serve::{guarded, LabWorker};
use grader_worker::stopwatch::{Checkpoint, Checkpoints};
use kinds::Kind;
use ndarray::Array2;
use std::time::Duration;

#[cfg(feature = "judge")]
/// The grader's knowledge of the matmul lab.
pub static LAB: LabInfo = LabInfo {
    name: "matmul",
    lab_crate: "matmul-lab",
    kinds: kinds::KINDS,
    read_item: kinds::read_item,
    rubric: include_str!("../../../../assignments/matmul/assignment.toml"),
    harness: include_str!("../../../../solutions/matmul/tests/grade.rs"),
    manifest: include_str!("../../../../solutions/matmul/Cargo.toml"),
    yardstick: yardstick_order,
};

/// Serves a yardstick order of the matmul lab without any submission ([`LabInfo::yardstick`]):
/// the lesson's naive loop for the CPU speedup, ndarray's product for the GPU speedup, the
/// Serves timed products with `f` (a student's product or a baseline) until the supervisor
/// says it is done; a panic comes back as the outcome.
fn serve_timed(f: ProductFn, checkpoints: &mut Checkpoints) -> Result<Outcome, String> {
    match guarded(None, || checkpoints.serve_products(&mut { f })) {
        Ok(served) => served.map(|()| Outcome::Timed),
        Err(p) => Ok(Outcome::Panicked(p)),
    }
}

/// grader's loop of single cuBLAS products for the batched one.
pub fn yardstick_order(
    order: &WorkOrder,
    checkpoints: &mut Checkpoints,
) -> Result<Outcome, String> {
    match order.task::<Kind>()? {
        _ if !order.yardstick => Err(format!(
            "item `{}`: only a speed item's yardstick order runs without a submission",
            order.item
        )),
        Kind::CpuSpeedup(_) => serve_timed(baselines::naive_product, checkpoints),
        Kind::GpuSpeedup(_) => serve_timed(baselines::library_product, checkpoints),
        Kind::GpuBatchedSpeedup(s) => batched::speed(None, order, &s, checkpoints),
        _ => Err(format!(
            "item `{}`: the matmul lab has no yardstick for this kind",
            order.item
        )),
    }
}

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
    pub benchmark: gpu::BenchmarkFn,
    /// A batch of products on the CPU: `C[b] = A[b]·B[b]` (seed 004).
    pub matmul_batched: batched::BatchedFn,
    /// The same batch on the GPU, in one launch or one cuBLAS call.
    pub matmul_batched_gpu: batched::GpuBatchedFn,
    /// Times one batched product of operands already on the GPU, synchronizing correctly.
    pub time_gpu_matmul_batched: batched::GpuBatchedTimerFn,
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

impl LabWorker for Submission {
    fn lab_name(&self) -> &'static str {
        "matmul"
    }

    fn run(&self, order: &WorkOrder, checkpoints: &mut Checkpoints) -> Result<Outcome, String> {
        if order.yardstick {
            return yardstick_order(order, checkpoints);
        }
        match order.task::<Kind>()? {
            Kind::Matmul(spec) => {
                let f = self.product(&order.function)?;
                let mut outputs = Vec::with_capacity(spec.cases.len());
                for (index, &shape) in spec.cases.iter().enumerate() {
                    let (a, b) = inputs::operands(order.seed, &order.item, index, shape);
                    match guarded(Some(index), || f(&a, &b)) {
                        Ok(c) => outputs.push(Matrix::from_array(&c)),
                        Err(p) => {
                            return Ok(Outcome::Products {
                                outputs,
                                panic: Some(p),
                                error: None,
                                device_work: None,
                                case_launches: Vec::new(),
                                launch_geometry: Vec::new(),
                                replays: Vec::new(),
                            })
                        }
                    }
                }
                Ok(Outcome::Products {
                    outputs,
                    panic: None,
                    error: None,
                    device_work: None,
                    case_launches: Vec::new(),
                    launch_geometry: Vec::new(),
                    replays: Vec::new(),
                })
            }
            Kind::CpuTimer(spec) => {
                for _ in &spec.work_ms {
                    if let Err(p) = guarded(None, || time_once(self.time_cpu, checkpoints)) {
                        return Ok(Outcome::Panicked(p));
                    }
                }
                Ok(Outcome::Timed)
            }
            Kind::CpuSpeedup(_) => serve_timed(self.product(&order.function)?, checkpoints),
            Kind::GpuMatmul(spec) => Ok(gpu::products(
                self.gpu_product(&order.function)?,
                order,
                &spec.cases,
            )),
            Kind::GpuTimer(spec) => Ok(gpu::timer(
                self.time_gpu_matmul,
                order,
                spec.size,
                checkpoints,
            )),
            Kind::GpuSpeedup(spec) => {
                Ok(gpu::speedup(self.time_gpu_matmul, spec.size, checkpoints))
            }
            Kind::DeviceSelect => Ok(match guarded(None, self.default_device_is_gpu) {
                Ok(chose_gpu) => Outcome::DeviceChoice { chose_gpu },
                Err(p) => Outcome::Panicked(p),
            }),
            // The supervisor's second look when `benchmark` failed on the GPU: the student's
            // timer alone, in a fresh process (crate::matmul::gpu::timer_alone).
            Kind::Benchmark(spec) if order.function == gpu::TIMER => {
                Ok(gpu::timer_alone(self.time_gpu_matmul, [spec.size[0]; 3]))
            }
            Kind::Benchmark(spec) => Ok(gpu::benchmark(
                self.benchmark,
                self.matmul_fast,
                self.time_gpu_matmul,
                order,
                spec.size[0],
                checkpoints,
            )),
            Kind::BatchedMatmul(b) => batched::cpu_products(self.matmul_batched, order, &b.cases),
            Kind::GpuBatchedMatmul(b) => {
                batched::gpu_products(self.matmul_batched_gpu, order, &b.cases)
            }
            Kind::GpuBatchedTimer(t) => {
                batched::timer(self.time_gpu_matmul_batched, order, t.size, checkpoints)
            }
            Kind::GpuBatchedSpeedup(s) => {
                batched::speed(Some(self.time_gpu_matmul_batched), order, &s, checkpoints)
            }
        }
    }
}

/// One call of the student's timer, between two checkpoints the supervisor times. The work
/// it is handed is a third checkpoint: the supervisor holds this process stopped for as long
/// as it chooses, then hands the work a token to return as its receipt. What the timer reported
/// and the receipt it handed back go into the region before the call's end.
fn time_once(timer: TimerFn, checkpoints: &mut Checkpoints) {
    let mut held = checkpoints.clone();
    let work: TimedWork = Box::new(move || {
        held.stop(Checkpoint::Work);
        WorkReceipt(held.get(Field::Token))
    });
    checkpoints.set(Field::Receipt, 0);
    checkpoints.stop(Checkpoint::CallStart);
    let (receipt, reported) = timer(work);
    checkpoints.set(
        Field::ReportedNs,
        reported.as_nanos().min(u128::from(u64::MAX)) as u64,
    );
    checkpoints.set(Field::Receipt, receipt.0);
    checkpoints.stop(Checkpoint::CallEnd);
}
