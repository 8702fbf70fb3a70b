//! The matmul lab's batched items (seed 004: a batch of matrices multiplied in one call, as
//! CuPy's `matmul` does on 3-D arrays): `C[b] = A[b] · B[b]` for every `b` of the batch, on the
//! CPU and on the GPU, a synchronized timer of the GPU batch, and (on a real GPU) its speedup
//! over the grader's loop of single products. This file holds their keys, their inputs and
//! what the worker runs; [`super::batched_judge`] judges what it sends back.

use super::t;
use cudarc::driver::{CudaSlice, CudaStream};
#[cfg(feature = "judge")]
use grader_engine::check::speedup::check_tiers;
#[cfg(feature = "judge")]
use grader_engine::rubric::KeyError;
use grader_hot::baselines;
use grader_worker::gpu::busy::{self, Busy, MIN_DEVICE_MS, TIMER_SAMPLES};
use grader_worker::gpu::student::{describe, open_stream, GpuResult};
use grader_worker::gpu::{counters, replay};
use grader_worker::protocol::{DeviceWork, GpuTimerSample, LabOutcome, Outcome, Replay, WorkOrder};
use grader_worker::serve::guarded;
use grader_worker::stopwatch::{Checkpoint, Checkpoints};
use grader_worker::task::{SkipPolicy, Tier};
use ndarray::Array3;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// A student's batched product on the CPU: A (batch×m×k), B (batch×k×n) → C (batch×m×n).
pub type BatchedFn = fn(&Array3<f32>, &Array3<f32>) -> Array3<f32>;

/// A student's batched product on the GPU, on a stream the grader opened.
pub type GpuBatchedFn = fn(&Arc<CudaStream>, &Array3<f32>, &Array3<f32>) -> GpuResult<Array3<f32>>;

/// A student's timer of one batched product of operands already on the device, stored batch
/// after batch, each matrix row by row; `shape` is `[batch, m, k, n]`.
pub type GpuBatchedTimerFn = fn(
    &Arc<CudaStream>,
    &CudaSlice<f32>,
    &CudaSlice<f32>,
    &mut CudaSlice<f32>,
    [usize; 4],
) -> GpuResult<Duration>;

/// `batched-matmul` and `gpu-batched-matmul` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batches {
    /// The cases `[batch, m, k, n]`: `batch` products of an m×k A by a k×n B.
    pub cases: Vec<[usize; 4]>,
    /// c in |C − C_ref| ≤ c·K·eps32·(|A|·|B|)ij, for every matrix of the batch.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// The hint shown under a wrong result when no diagnosis fits.
    #[serde(default)]
    pub hint: Option<String>,
}

/// `gpu-batched-timer` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchedTimer {
    /// The starting shape `[batch, m, k, n]`, grown until the device is busy long enough.
    pub size: [usize; 4],
}

/// `gpu-batched-speedup` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchedSpeed {
    /// The shape `[batch, m, k, n]` timed.
    pub size: [usize; 4],
    /// Timed runs of each side (each on new matrices).
    #[serde(default = "default_samples")]
    pub samples: usize,
    /// The points earned at each speedup; the highest tier reached counts.
    pub tiers: Vec<Tier>,
    /// What the item scores where no real GPU can measure it.
    #[serde(default)]
    pub policy: SkipPolicy,
}

fn default_tolerance() -> f64 {
    2.0
}

fn default_samples() -> usize {
    5
}

#[cfg(feature = "judge")]
/// The keys of each batched kind, as `assignment.toml` writes them.
pub const BATCHES_KEYS: &[&str] = &["cases", "tolerance", "hint"];
#[cfg(feature = "judge")]
/// `gpu-batched-timer` keys.
pub const TIMER_KEYS: &[&str] = &["size"];
#[cfg(feature = "judge")]
/// `gpu-batched-speedup` keys.
pub const SPEED_KEYS: &[&str] = &["size", "samples", "tiers", "policy"];

/// The most elements one matrix stack of a case may hold (A, B or C): 64 MiB of f32. The
/// timer's batch grows within it too ([`grow`]).
const MAX_STACK: usize = 1 << 24;

#[cfg(feature = "judge")]
/// Whether a `[batch, m, k, n]` shape is one the grader takes: every size ≥ 1, the batch
/// within a CUDA grid's z dimension, each matrix within the 2-D items' limit, each stack of
/// matrices within [`MAX_STACK`].
fn shape_ok([batch, m, k, n]: [usize; 4]) -> bool {
    let fits = |x: usize, y: usize| batch.checked_mul(x * y).is_some_and(|s| s <= MAX_STACK);
    (1..=65_535).contains(&batch)
        && [m, k, n].iter().all(|&d| (1..=4096).contains(&d))
        && fits(m, k)
        && fits(k, n)
        && fits(m, n)
}

#[cfg(feature = "judge")]
const SHAPE_RULE: &str = "give [batch, m, k, n], each ≥ 1, batch ≤ 65535, m, k, n ≤ 4096, \
                          and at most 16777216 numbers in each of A, B and C";

#[cfg(feature = "judge")]
impl Batches {
    /// Checks the keys serde cannot: cases given and in range, a sane tolerance.
    pub fn check(&self) -> Result<(), KeyError> {
        if self.cases.is_empty() {
            return Err(KeyError::new(
                "cases",
                "list at least one [batch, m, k, n] case",
            ));
        }
        if let Some(c) = self.cases.iter().find(|c| !shape_ok(**c)) {
            return Err(KeyError::new("cases", format!("{SHAPE_RULE}, got {c:?}")));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(KeyError::new("tolerance", "the tolerance must be > 0"));
        }
        Ok(())
    }

    /// How feedback names case `case`: "case 2 of 6 (a batch of 5: A[b] is 3×4, B[b] is 4×5)".
    pub fn describe(&self, case: usize) -> Option<String> {
        let [batch, m, k, n] = *self.cases.get(case)?;
        Some(t!(
            "batch-case",
            case = case + 1,
            total = self.cases.len(),
            batch = batch,
            m = m,
            k = k,
            n = n
        ))
    }
}

#[cfg(feature = "judge")]
impl BatchedTimer {
    /// Checks the starting shape.
    pub fn check(&self) -> Result<(), KeyError> {
        if shape_ok(self.size) {
            Ok(())
        } else {
            Err(KeyError::new("size", SHAPE_RULE))
        }
    }
}

#[cfg(feature = "judge")]
impl BatchedSpeed {
    /// Checks the keys for an item worth `points`.
    pub fn check(&self, points: f64) -> Result<(), KeyError> {
        if !shape_ok(self.size) {
            return Err(KeyError::new("size", SHAPE_RULE));
        }
        if !(3..=25).contains(&self.samples) {
            return Err(KeyError::new("samples", "samples must be 3..=25"));
        }
        check_tiers(&self.tiers, points)
    }
}

/// The operands of batched case `case` of shape `[batch, m, k, n]`: A is batch×m×k and B is
/// batch×k×n, each matrix of values uniform in [-1, 1), every matrix of the batch its own.
pub fn operands(
    seed: u64,
    item: &str,
    case: usize,
    [batch, m, k, n]: [usize; 4],
) -> (Array3<f32>, Array3<f32>) {
    let stack = |which: &str, rows: usize, cols: usize| {
        let flat = grader_worker::inputs::matrix(seed, item, case, which, batch * rows, cols);
        Array3::from_shape_vec((batch, rows, cols), flat.into_raw_vec_and_offset().0)
            .unwrap_or_else(|_| unreachable!("batch·rows·cols values"))
    };
    (stack("batched-a", m, k), stack("batched-b", k, n))
}

/// A stack of matrices sent as raw f32 bits (so NaN and infinities survive), in logical order:
/// matrix after matrix, each row by row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stack {
    /// (batch, rows, cols).
    pub dims: [usize; 3],
    /// `f32::to_bits` of every element, as hex digits on the wire (see
    /// [`grader_worker::hex_bits`]).
    #[serde(with = "grader_worker::hex_bits")]
    pub bits: Vec<u32>,
}

impl Stack {
    /// Packs any 3-D array (any memory layout).
    pub fn from_array(c: &Array3<f32>) -> Self {
        let (b, r, k) = c.dim();
        Stack {
            dims: [b, r, k],
            bits: c.iter().map(|v| v.to_bits()).collect(),
        }
    }

    /// Unpacks; `None` when the sizes disagree.
    pub fn to_array(&self) -> Option<Array3<f32>> {
        let data = self.bits.iter().map(|&b| f32::from_bits(b)).collect();
        Array3::from_shape_vec((self.dims[0], self.dims[1], self.dims[2]), data).ok()
    }
}

/// What a worker of a batched item sends back (inside [`Outcome::Lab`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Sent {
    /// `batched-matmul`, `gpu-batched-matmul`: the result of each case that returned.
    Products {
        /// The results, in case order.
        outputs: Vec<Stack>,
        /// The error a GPU function returned, which stopped the remaining cases.
        error: Option<String>,
        /// What the GPU function did on the device, where the backend can tell.
        device_work: Option<DeviceWork>,
        /// On the emulator: each returned case's device work run again with A's values
        /// replaced, in case order.
        #[serde(default)]
        replays: Vec<Replay>,
    },
    /// `gpu-batched-timer`: the synchronization check's measurements.
    Timer {
        /// The shape timed (the rubric's, grown).
        shape: [usize; 4],
        /// How long the grader's queued work ran on the device (ms).
        queued_ms: f64,
        /// One entry per timed call.
        samples: Vec<GpuTimerSample>,
        /// C after the last call.
        output: Stack,
    },
    /// `gpu-batched-speedup`: C after each timed run (sample `s` multiplies case `s`).
    Speed {
        /// One per timed run.
        outputs: Vec<Stack>,
    },
}

fn sent(s: Sent) -> Result<Outcome, String> {
    LabOutcome::of(&s)
        .map(Outcome::Lab)
        .map_err(|e| e.to_string())
}

/// The CPU item: the student's batched product on every case.
pub fn cpu_products(
    f: BatchedFn,
    order: &WorkOrder,
    cases: &[[usize; 4]],
) -> Result<Outcome, String> {
    let mut outputs = Vec::with_capacity(cases.len());
    for (index, &shape) in cases.iter().enumerate() {
        let (a, b) = operands(order.seed, &order.item, index, shape);
        match guarded(Some(index), || f(&a, &b)) {
            Ok(c) => outputs.push(Stack::from_array(&c)),
            Err(p) => return Ok(Outcome::Panicked(p)),
        }
    }
    sent(Sent::Products {
        outputs,
        error: None,
        device_work: None,
        replays: Vec::new(),
    })
}

/// The GPU item: the student's batched product on every case, with the device work counted and
/// where each result's values came from.
pub fn gpu_products(
    f: GpuBatchedFn,
    order: &WorkOrder,
    cases: &[[usize; 4]],
) -> Result<Outcome, String> {
    let stream = match open_stream() {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::GpuUnavailable(e)),
    };
    let before = counters::read();
    let (mut outputs, mut error, mut not_from_device) = (Vec::new(), None, None);
    let mut replays = Vec::with_capacity(cases.len());
    for (index, &shape) in cases.iter().enumerate() {
        let (a, b) = operands(order.seed, &order.item, index, shape);
        counters::provenance_window(true);
        replay::log(true);
        let called = guarded(Some(index), || f(&stream, &a, &b));
        if let Ok(Ok(c)) = &called {
            if not_from_device.is_none() {
                not_from_device = super::gpu::from_host(index, c.iter());
            }
            replays.extend(replay::run(
                &replay::mapped_values(&a, &b),
                replay::Inputs::Uploaded,
                c,
            ));
        }
        replay::log(false);
        counters::provenance_window(false);
        match called {
            Ok(Ok(c)) => outputs.push(Stack::from_array(&c)),
            Ok(Err(e)) => {
                error = Some(describe(e.as_ref()));
                break;
            }
            Err(p) => return Ok(Outcome::Panicked(p)),
        }
    }
    sent(Sent::Products {
        outputs,
        error,
        device_work: counters::since(before).map(|work| DeviceWork {
            not_from_device,
            ..work
        }),
        replays,
    })
}

/// The most matrices the timer's batch is grown to before the matrices grow.
const MAX_TIMED_BATCH: usize = 32;
/// The most elements of C the timer's shape is grown to (16 MB sent back, as the single
/// product's timer).
pub(crate) const MAX_TIMED_C: usize = 1 << 22;
/// The largest dimension the timer's matrices are grown to.
const MAX_TIMED_DIM: usize = 2048;

/// The next shape of the synchronization check: first more matrices, then larger ones, while
/// C stays within [`MAX_TIMED_C`]; then only the inner dimension, which adds work without
/// adding to C, while A and B stay within [`MAX_STACK`]; `None` when it cannot grow.
/// (On an H200 the first two stages end at 0.18 ms of device time, where the host's own time
/// inside a correct timer's call weighed as much as the work and failed it.)
pub fn grow([batch, m, k, n]: [usize; 4]) -> Option<[usize; 4]> {
    if batch * 2 <= MAX_TIMED_BATCH && batch * 2 * m * n <= MAX_TIMED_C {
        return Some([batch * 2, m, k, n]);
    }
    let largest = m.max(k).max(n);
    if batch * 4 * m * n <= MAX_TIMED_C && largest * 2 <= MAX_TIMED_DIM {
        return Some([batch, m * 2, k * 2, n * 2]);
    }
    (batch * m.max(n) * k * 2 <= MAX_STACK).then_some([batch, m, k * 2, n])
}

/// Copies a stack to the device as one block, matrix after matrix, row by row.
fn upload(stream: &Arc<CudaStream>, x: &Array3<f32>) -> Result<CudaSlice<f32>, String> {
    let rows = x.as_standard_layout();
    stream
        .clone_htod(rows.as_slice().unwrap_or(&[]))
        .map_err(|e| e.to_string())
}

/// The synchronization check of the batched timer, as for the single product's (see
/// [`super::gpu::timer`]): the shape grows until one call keeps the device busy
/// [`MIN_DEVICE_MS`], then each timed call comes right after the grader's queued work,
/// bracketed by the grader's events and the supervisor's checkpoints.
pub fn timer(
    f: GpuBatchedTimerFn,
    order: &WorkOrder,
    size: [usize; 4],
    checkpoints: &mut Checkpoints,
) -> Result<Outcome, String> {
    let (stream, busy) = match busy::set_up(order.backend) {
        Ok(ready) => ready,
        Err(e) => return Ok(Outcome::GpuUnavailable(t!("gpu-setup-failed", error = e))),
    };
    match timer_samples(f, order, size, checkpoints, &stream, busy) {
        Ok(Ok(s)) => sent(s),
        Ok(Err(outcome)) => Ok(*outcome),
        // From the first student call on, a GPU error is the student's.
        Err(e) => Ok(Outcome::Failed(t!(
            "gpu-error-after",
            function = "time_gpu_matmul_batched",
            error = e
        ))),
    }
}

/// A student call's result, or the outcome that ends the item.
fn called<T>(f: impl FnOnce() -> GpuResult<T>) -> Result<T, Box<Outcome>> {
    match guarded(None, f) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Box::new(Outcome::Failed(describe(e.as_ref())))),
        Err(p) => Err(Box::new(Outcome::Panicked(p))),
    }
}

type Timed = Result<Result<Sent, Box<Outcome>>, String>;

fn timer_samples(
    f: GpuBatchedTimerFn,
    order: &WorkOrder,
    size: [usize; 4],
    checkpoints: &mut Checkpoints,
    stream: &Arc<CudaStream>,
    mut busy: Busy,
) -> Timed {
    let err = |e: cudarc::driver::DriverError| e.to_string();
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut shape = size;
    let (a_dev, b_dev, mut c_dev) = loop {
        let (a, b) = operands(order.seed, &order.item, 0, shape);
        let (a_dev, b_dev) = (upload(stream, &a)?, upload(stream, &b)?);
        let [batch, m, _, n] = shape;
        let mut c_dev = stream.alloc_zeros::<f32>(batch * m * n).map_err(err)?;
        // The first call compiles and caches the kernel; the second is measured.
        if let Err(outcome) = called(|| f(stream, &a_dev, &b_dev, &mut c_dev, shape)) {
            return Ok(Err(outcome));
        }
        stream.synchronize().map_err(err)?;
        let start = stream.record_event(timing).map_err(err)?;
        if let Err(outcome) = called(|| f(stream, &a_dev, &b_dev, &mut c_dev, shape)) {
            return Ok(Err(outcome));
        }
        let end = stream.record_event(timing).map_err(err)?;
        let device_ms = f64::from(start.elapsed_ms(&end).map_err(err)?);
        match grow(shape) {
            Some(next) if device_ms < MIN_DEVICE_MS => shape = next,
            _ => break (a_dev, b_dev, c_dev),
        }
    };
    let (mut samples, mut queued_ms) = (Vec::new(), 0.0f64);
    for _ in 0..TIMER_SAMPLES {
        let before_queue = stream.record_event(timing).map_err(err)?;
        busy.queue_before_call()?;
        let before_call = stream.record_event(timing).map_err(err)?;
        checkpoints.stop(Checkpoint::CallStart);
        let reported = called(|| f(stream, &a_dev, &b_dev, &mut c_dev, shape));
        // The event that ends the call's device window is recorded before the stop at
        // `CallEnd`: after it, the stop's own latency (the supervisor's wake-up, ~0.3 ms on an
        // H200) would count as device time the student's clock never saw.
        let after_call = stream.record_event(timing).map_err(err);
        checkpoints.stop(Checkpoint::CallEnd);
        let reported = match reported {
            Ok(d) => d,
            Err(outcome) => return Ok(Err(outcome)),
        };
        let after_call = after_call?;
        stream.synchronize().map_err(err)?;
        queued_ms = queued_ms.max(f64::from(
            before_queue.elapsed_ms(&before_call).map_err(err)?,
        ));
        samples.push(GpuTimerSample {
            reported_ms: reported.as_secs_f64() * 1e3,
            device_ms: f64::from(before_call.elapsed_ms(&after_call).map_err(err)?),
        });
    }
    let [batch, m, _, n] = shape;
    let c = stream.clone_dtoh(&c_dev).map_err(err)?;
    let output = Array3::from_shape_vec((batch, m, n), c).map_err(|e| e.to_string())?;
    Ok(Ok(Sent::Timer {
        shape,
        queued_ms,
        samples,
        output: Stack::from_array(&output),
    }))
}

/// The speedup's timed runs, each between checkpoints the supervisor times, with the whole
/// context drained before and after: in the yardstick worker the grader's own loop of single
/// cuBLAS products, one call per matrix (it never calls the submission); otherwise the
/// student's batched timer, whose own time is ignored. Run `s` multiplies case `s`; C after
/// each run is sent back to be checked.
pub fn speed(
    f: Option<GpuBatchedTimerFn>,
    order: &WorkOrder,
    spec: &BatchedSpeed,
    checkpoints: &mut Checkpoints,
) -> Result<Outcome, String> {
    let stream = match open_stream() {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::GpuUnavailable(e)),
    };
    let err = |e: cudarc::driver::DriverError| e.to_string();
    let shape = spec.size;
    let [batch, m, _, n] = shape;
    // The yardstick (no student function) runs the grader's loop of cuBLAS products.
    let runner = match f.filter(|_| !order.yardstick) {
        Some(f) => Err(f),
        None => Ok(cudarc::cublas::CudaBlas::new(stream.clone()).map_err(|e| e.to_string())?),
    };
    let mut outputs = Vec::with_capacity(spec.samples);
    for s in 0..spec.samples {
        let (a, b) = operands(order.seed, &order.item, s, shape);
        let (a_dev, b_dev) = (upload(&stream, &a)?, upload(&stream, &b)?);
        let mut c_dev = stream.alloc_zeros::<f32>(batch * m * n).map_err(err)?;
        stream.context().synchronize().map_err(err)?;
        checkpoints.stop(Checkpoint::CallStart);
        match &runner {
            Ok(blas) => baselines::looped_cublas(blas, &a_dev, &b_dev, &mut c_dev, shape)?,
            Err(f) => {
                if let Err(outcome) = called(|| f(&stream, &a_dev, &b_dev, &mut c_dev, shape)) {
                    return Ok(*outcome);
                }
            }
        }
        stream.context().synchronize().map_err(err)?;
        checkpoints.stop(Checkpoint::CallEnd);
        let c = stream.clone_dtoh(&c_dev).map_err(err)?;
        let c = Array3::from_shape_vec((batch, m, n), c).map_err(|e| e.to_string())?;
        outputs.push(Stack::from_array(&c));
    }
    sent(Sent::Speed { outputs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_matrix_of_a_batch_is_its_own_and_the_inputs_repeat_with_the_seed() {
        let (a, b) = operands(7, "x", 0, [3, 4, 5, 6]);
        assert_eq!((a.dim(), b.dim()), ((3, 4, 5), (3, 5, 6)));
        assert_ne!(
            a.index_axis(ndarray::Axis(0), 0),
            a.index_axis(ndarray::Axis(0), 1)
        );
        assert_eq!(operands(7, "x", 0, [3, 4, 5, 6]).0, a);
        assert_ne!(operands(7, "x", 1, [3, 4, 5, 6]).0, a);
        let stack = Stack::from_array(&b);
        assert_eq!(stack.to_array(), Some(b));
    }

    #[test]
    fn the_timed_shape_grows_the_batch_first_then_the_matrices_within_the_limits() {
        assert_eq!(grow([4, 64, 48, 80]), Some([8, 64, 48, 80]));
        assert_eq!(grow([32, 64, 48, 80]), Some([32, 128, 96, 160]));
        let mut shape = [1, 1, 1, 1];
        while let Some(next) = grow(shape) {
            shape = next;
        }
        let [batch, m, k, n] = shape;
        assert!(
            batch * m * n <= MAX_TIMED_C && m <= MAX_TIMED_DIM,
            "{shape:?}"
        );
        assert!(batch * m.max(n) * k <= MAX_STACK, "{shape:?}");
        assert_eq!(batch, MAX_TIMED_BATCH);
        // From the rubric's shape: C stops growing at [32, 256, _, 320]; then k alone, to
        // eight times the work.
        let mut shape = [4, 64, 48, 80];
        while let Some(next) = grow(shape) {
            shape = next;
        }
        assert_eq!(shape, [32, 256, 1536, 320]);
    }

    #[test]
    #[cfg(feature = "judge")]
    fn shapes_out_of_range_are_refused() {
        assert!(shape_ok([1, 1, 1, 1]) && shape_ok([65_535, 1, 1, 1]));
        assert!(!shape_ok([0, 1, 1, 1]) && !shape_ok([65_536, 1, 1, 1]));
        assert!(!shape_ok([2, 4097, 1, 1]) && !shape_ok([1024, 4096, 4096, 1]));
    }
}
