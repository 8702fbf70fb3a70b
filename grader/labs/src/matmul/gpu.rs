//! Worker side of the matmul lab's GPU items: the student's cudarc functions run on a stream
//! the grader opens (on a real GPU or the emulator), on inputs derived from the seed.

use super::t;
use cudarc::driver::{CudaSlice, CudaStream};
use grader_worker::gpu::busy::{self, Busy, MIN_DEVICE_MS, TIMER_SAMPLES};
use grader_worker::gpu::{counters, replay};
use grader_worker::inputs;
use grader_worker::protocol::{
    DeviceWork, GpuTimerSample, GpuTimerSamples, Matrix, NotFromDevice, Outcome, TimerLook,
    WorkOrder, BENCHMARK_CPU_RUNS, BENCHMARK_EMPTY_BRACKETS,
};
use grader_worker::serve::guarded;
use grader_worker::stopwatch::{Checkpoint, Checkpoints, Command};
use ndarray::Array2;
use std::sync::Arc;
use std::time::Duration;

use grader_worker::gpu::student::open_stream;
pub use grader_worker::gpu::student::{describe, GpuResult};

/// A student's GPU matrix product on a stream.
pub type GpuProductFn = fn(&Arc<CudaStream>, &Array2<f32>, &Array2<f32>) -> GpuResult<Array2<f32>>;

/// A student's timer of one device product of operands already on the device.
pub type GpuTimerFn = fn(
    &Arc<CudaStream>,
    &CudaSlice<f32>,
    &CudaSlice<f32>,
    &mut CudaSlice<f32>,
    [usize; 3],
) -> GpuResult<Duration>;

/// The largest dimension the synchronization check grows the timed shape to.
/// 2048³ keeps a student's tiled kernel busy for a millisecond or more even on the fastest
/// GPUs (hundreds of times a launch's overhead), and its C (16 MB) is the most a worker sends
/// back.
pub(crate) const MAX_TIMED_DIM: usize = 2048;

/// Where the backend can tell: whether the values a GPU function returned for `case` came
/// from the host (never copied back from the device, or half or more of them found among the
/// uploads: a product of random inputs equals one of them only by rare chance). Shared by the
/// single and the batched products.
pub(super) fn from_host<'a>(
    case: usize,
    values: impl Iterator<Item = &'a f32>,
) -> Option<NotFromDevice> {
    let bits: Vec<u32> = values.map(|v| v.to_bits()).collect();
    let (not_copied_back, uploaded) = counters::provenance(&bits)?;
    let from_host = not_copied_back > 0 || (uploaded > 0 && 2 * uploaded >= bits.len() as u64);
    from_host.then_some(NotFromDevice {
        case,
        values: bits.len() as u64,
        not_copied_back,
        uploaded,
    })
}

/// The student's benchmark: the lab activity at a size, returning its CPU and GPU times.
pub type BenchmarkFn = fn(usize) -> GpuResult<(Duration, Option<Duration>)>;

/// `benchmark`, between the supervisor's checkpoints, then what the supervisor needs to check
/// the times it reported against work that ran: the device work the emulator saw during the
/// call; [`BENCHMARK_EMPTY_BRACKETS`] empty brackets and [`BENCHMARK_CPU_RUNS`] runs of
/// `matmul_fast` at the same size, each bracketed (the supervisor reads its clock and the
/// processor time the runs used); and, when it reported a GPU time, the student's GPU timer
/// alone at that size with the device work it caused.
pub fn benchmark(
    bench: BenchmarkFn,
    matmul_fast: super::ProductFn,
    timer: GpuTimerFn,
    order: &WorkOrder,
    size: usize,
    checkpoints: &mut Checkpoints,
) -> Outcome {
    let before = counters::device_time();
    checkpoints.stop(Checkpoint::CallStart);
    let called = guarded(None, || bench(size));
    checkpoints.stop(Checkpoint::CallEnd);
    let device = counters::device_time_since(before);
    let (cpu, gpu) = match called {
        Ok(Ok(times)) => times,
        Ok(Err(e)) => return Outcome::Failed(describe(e.as_ref())),
        Err(p) => return Outcome::Panicked(p),
    };
    for _ in 0..BENCHMARK_EMPTY_BRACKETS {
        checkpoints.stop(Checkpoint::CallStart);
        checkpoints.stop(Checkpoint::CallEnd);
    }
    for run in 0..BENCHMARK_CPU_RUNS {
        let (a, b) = inputs::operands(order.seed, &order.item, run, [size; 3]);
        checkpoints.stop(Checkpoint::CallStart);
        // A panic here ends the runs: the supervisor sees fewer than it asked for.
        let ran = guarded(None, || {
            std::hint::black_box(matmul_fast(&a, &b));
        });
        checkpoints.stop(Checkpoint::CallEnd);
        if ran.is_err() {
            break;
        }
    }
    let timer_alone = match (gpu, device) {
        (Some(_), Some(_)) => timer_look(timer, size),
        _ => None,
    };
    Outcome::Benchmark {
        cpu_ns: u64::try_from(cpu.as_nanos()).unwrap_or(u64::MAX),
        gpu_ns: gpu.map(|g| u64::try_from(g.as_nanos()).unwrap_or(u64::MAX)),
        device,
        timer_alone,
    }
}

/// The student's GPU timer called once by the grader at `size`, on operands it allocated:
/// what it reported, and the device work it caused; `None` when it failed.
fn timer_look(timer: GpuTimerFn, size: usize) -> Option<TimerLook> {
    let (stream, a, b, mut c) = zeroed_operands([size; 3]).ok()?;
    let before = counters::device_time();
    let reported = guarded(None, || timer(&stream, &a, &b, &mut c, [size; 3]))
        .ok()?
        .ok()?;
    Some(TimerLook {
        reported_ns: u64::try_from(reported.as_nanos()).unwrap_or(u64::MAX),
        device: counters::device_time_since(before)?,
    })
}

/// A stream of the grader's and zeroed A (m×k), B (k×n) and C (m×n) on the device, for the
/// student's timer called alone.
fn zeroed_operands(
    [m, k, n]: [usize; 3],
) -> Result<(Arc<CudaStream>, Operand, Operand, Operand), String> {
    let err = |e: cudarc::driver::DriverError| e.to_string();
    let stream = open_stream()?;
    let a = stream.alloc_zeros::<f32>(m * k).map_err(err)?;
    let b = stream.alloc_zeros::<f32>(k * n).map_err(err)?;
    let c = stream.alloc_zeros::<f32>(m * n).map_err(err)?;
    Ok((stream, a, b, c))
}

/// A matrix on the device.
type Operand = CudaSlice<f32>;

/// The name of the student's GPU timer, which `benchmark` calls.
pub const TIMER: &str = "time_gpu_matmul";

/// The student's timer alone, as `benchmark` calls it: one product of `size` on operands the
/// grader allocated, then everything the context queued is waited for, so that a launch that
/// faults is heard of here whatever the timing. The supervisor orders it, in a fresh process
/// (a faulting kernel leaves a context broken), when `benchmark` failed on the GPU: a fault of
/// the timer is charged by the timer's item, once; one of `benchmark`'s own by `benchmark`.
pub fn timer_alone(f: GpuTimerFn, size: [usize; 3]) -> Outcome {
    // The grader's own set-up runs before any student code: its failure is the grader's.
    let (stream, a, b, mut c) = match zeroed_operands(size) {
        Ok(ready) => ready,
        Err(e) => return Outcome::GpuUnavailable(e),
    };
    let called = guarded(None, || -> Result<(), String> {
        f(&stream, &a, &b, &mut c, size).map_err(|e| describe(e.as_ref()))?;
        stream
            .context()
            .synchronize()
            .map_err(|e| t!("gpu-error-after", function = TIMER, error = e.to_string()))
    });
    match called {
        Ok(Ok(())) => Outcome::Timed,
        Ok(Err(e)) => Outcome::Failed(e),
        Err(p) => Outcome::Panicked(p),
    }
}

/// Runs a GPU product on every case of the order.
pub fn products(f: GpuProductFn, order: &WorkOrder, cases: &[[usize; 3]]) -> Outcome {
    let stream = match open_stream() {
        Ok(s) => s,
        Err(e) => return Outcome::GpuUnavailable(e),
    };
    let before = counters::read();
    let mut outputs = Vec::with_capacity(cases.len());
    let (mut panic, mut error, mut not_from_device) = (None, None, None);
    let mut case_launches = Vec::with_capacity(cases.len() + 1);
    let mut replays = Vec::with_capacity(cases.len());
    for (index, &shape) in cases.iter().enumerate() {
        let (a, b) = inputs::operands(order.seed, &order.item, index, shape);
        case_launches.extend(counters::read().map(|w| w.launches));
        counters::provenance_window(true);
        replay::log(true);
        let called = guarded(Some(index), || f(&stream, &a, &b));
        if let Ok(Ok(c)) = &called {
            if not_from_device.is_none() {
                not_from_device = from_host(index, c.iter());
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
            Ok(Ok(c)) => outputs.push(Matrix::from_array(&c)),
            Ok(Err(e)) => {
                error = Some(describe(e.as_ref()));
                break;
            }
            Err(p) => {
                panic = Some(p);
                break;
            }
        }
    }
    case_launches.extend(counters::read().map(|w| w.launches));
    Outcome::Products {
        outputs,
        panic,
        error,
        device_work: counters::since(before).map(|work| DeviceWork {
            not_from_device,
            ..work
        }),
        case_launches,
        // The supervisor's to fill, from the emulator's record.
        launch_geometry: Vec::new(),
        replays,
    }
}

/// The synchronization check: before each call, the grader queues long device work on the
/// student's stream and records an event; after the call it records another. The events
/// measure the student's device work; the student reports what their clock saw.
///
/// The supervisor also brackets each timed call with checkpoints: a clock the submission
/// cannot reach bounds what the student's clock may report.
pub fn timer(
    f: GpuTimerFn,
    order: &WorkOrder,
    size: [usize; 3],
    checkpoints: &mut Checkpoints,
) -> Outcome {
    // The grader's own set-up runs before any student code: its failure is the grader's.
    let (stream, busy) = match busy::set_up(order.backend) {
        Ok(ready) => ready,
        Err(e) => return Outcome::GpuUnavailable(t!("gpu-setup-failed", error = e)),
    };
    // From the first student call on, a GPU error is the student's: a faulting kernel leaves
    // the context broken, and the grader's next call is the first to hear of it.
    timer_samples(f, order, size, checkpoints, &stream, busy)
        .unwrap_or_else(|e| Outcome::Failed(t!("gpu-error-after", function = TIMER, error = e)))
}

fn timer_samples(
    f: GpuTimerFn,
    order: &WorkOrder,
    size: [usize; 3],
    checkpoints: &mut Checkpoints,
    stream: &Arc<CudaStream>,
    mut busy: Busy,
) -> Result<Outcome, String> {
    let err = |e: cudarc::driver::DriverError| e.to_string();
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut shape = size;
    let call =
        |shape: [usize; 3], a: &CudaSlice<f32>, b: &CudaSlice<f32>, c: &mut CudaSlice<f32>| {
            match guarded(None, || f(stream, a, b, c, shape)) {
                Ok(Ok(d)) => Ok(d),
                Ok(Err(e)) => Err(Box::new(Outcome::Failed(describe(e.as_ref())))),
                Err(p) => Err(Box::new(Outcome::Panicked(p))),
            }
        };
    // The student's multiplication must keep the device busy well beyond clock and wake-up
    // noise: grow the shape until one call takes MIN_DEVICE_MS of device time. The first call
    // at each shape compiles and caches the kernel; the second is measured.
    let (a_dev, b_dev, mut c_dev) = loop {
        let (a, b) = inputs::operands(order.seed, &order.item, 0, shape);
        let upload = |x: &Array2<f32>| {
            let rows = x.as_standard_layout();
            stream
                .clone_htod(rows.as_slice().unwrap_or(&[]))
                .map_err(err)
        };
        let (a_dev, b_dev) = (upload(&a)?, upload(&b)?);
        let mut c_dev = stream
            .alloc_zeros::<f32>(shape[0] * shape[2])
            .map_err(err)?;
        if let Err(outcome) = call(shape, &a_dev, &b_dev, &mut c_dev) {
            return Ok(*outcome);
        }
        stream.synchronize().map_err(err)?;
        let start = stream.record_event(timing).map_err(err)?;
        if let Err(outcome) = call(shape, &a_dev, &b_dev, &mut c_dev) {
            return Ok(*outcome);
        }
        let end = stream.record_event(timing).map_err(err)?;
        let device_ms = f64::from(start.elapsed_ms(&end).map_err(err)?);
        if device_ms >= MIN_DEVICE_MS || shape.iter().any(|&d| d * 2 > MAX_TIMED_DIM) {
            break (a_dev, b_dev, c_dev);
        }
        shape = shape.map(|d| d * 2);
    };
    let mut samples = Vec::new();
    let mut queued_ms: f64 = 0.0;
    for _ in 0..TIMER_SAMPLES {
        let before_queue = stream.record_event(timing).map_err(err)?;
        busy.queue_before_call()?;
        let before_call = stream.record_event(timing).map_err(err)?;
        checkpoints.stop(Checkpoint::CallStart);
        let called = call(shape, &a_dev, &b_dev, &mut c_dev);
        // The event that ends the call's device window is recorded before the stop at
        // `CallEnd`: after it, the stop's own latency (the supervisor's wake-up, ~0.3 ms on an
        // H200) would count as device time the student's clock never saw.
        let after_call = stream.record_event(timing).map_err(err);
        checkpoints.stop(Checkpoint::CallEnd);
        let reported = match called {
            Ok(d) => d,
            Err(outcome) => return Ok(*outcome),
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
    let c = stream.clone_dtoh(&c_dev).map_err(err)?;
    let output = Array2::from_shape_vec((shape[0], shape[2]), c).map_err(|e| e.to_string())?;
    Ok(Outcome::GpuTimer(GpuTimerSamples {
        shape,
        queued_ms,
        samples,
        output: Matrix::from_array(&output),
    }))
}

/// GPU speedup on a real GPU, timed the way the lesson times it: one multiplication of
/// operands already on the GPU (the student's `time_gpu_matmul`), against ndarray's optimised
/// CPU product (the lesson's NumPy, run by the yardstick worker) on the same inputs.
///
/// Each run: the supervisor hands over the operands at [`Checkpoint::Ready`]; they are loaded
/// onto the GPU outside the clock; at [`Checkpoint::Go`] the supervisor starts its clock; the
/// student's call runs, then the grader waits for everything the context has queued and
/// copies C into a buffer of its own; at [`Checkpoint::Done`] the supervisor stops its clock.
/// C is then copied into the region for the supervisor to check.
pub fn speedup(f: GpuTimerFn, size: [usize; 3], checkpoints: &mut Checkpoints) -> Outcome {
    match guarded(None, || speed_runs(f, size, checkpoints)) {
        Ok(Ok(())) => Outcome::Timed,
        Ok(Err(e)) => Outcome::Failed(e),
        Err(p) => Outcome::Panicked(p),
    }
}

fn speed_runs(
    f: GpuTimerFn,
    size: [usize; 3],
    checkpoints: &mut Checkpoints,
) -> Result<(), String> {
    let stream = open_stream()?;
    let err = |e: cudarc::driver::DriverError| e.to_string();
    // The graded shape first; a chart's sweep after grading hands over smaller ones, and the
    // buffers are made again for each new shape (the student's function sees exact sizes).
    let mut shape = size;
    let alloc = |[m, k, n]: [usize; 3]| -> Result<_, String> {
        Ok((
            stream.alloc_zeros::<f32>(m * k).map_err(err)?,
            stream.alloc_zeros::<f32>(k * n).map_err(err)?,
            stream.alloc_zeros::<f32>(m * n).map_err(err)?,
            stream.alloc_zeros::<f32>(m * n).map_err(err)?,
        ))
    };
    let (mut a_dev, mut b_dev, mut c_dev, mut kept) = alloc(shape)?;
    let load = |x: &Array2<f32>, dev: &mut CudaSlice<f32>| {
        let rows = x.as_standard_layout();
        stream
            .memcpy_htod(rows.as_slice().unwrap_or(&[]), dev)
            .map_err(err)
    };
    loop {
        checkpoints.stop(Checkpoint::Ready);
        if checkpoints.command() == Command::Finish {
            return Ok(());
        }
        let (a, b) = checkpoints.inputs()?;
        let handed = [a.nrows(), a.ncols(), b.ncols()];
        if handed != shape {
            if handed.iter().zip(size).any(|(&h, s)| h > s) {
                return Err("the grader handed over operands of the wrong shape".into());
            }
            shape = handed;
            (a_dev, b_dev, c_dev, kept) = alloc(shape)?;
        }
        let [m, _, n] = shape;
        load(&a, &mut a_dev)?;
        load(&b, &mut b_dev)?;
        stream.context().synchronize().map_err(err)?;
        checkpoints.stop(Checkpoint::Go);
        if checkpoints.command() == Command::Run {
            f(&stream, &a_dev, &b_dev, &mut c_dev, shape).map_err(|e| describe(e.as_ref()))?;
        }
        stream.context().synchronize().map_err(err)?;
        stream.memcpy_dtod(&c_dev, &mut kept).map_err(err)?;
        stream.synchronize().map_err(err)?;
        checkpoints.stop(Checkpoint::Done);
        let c = stream.clone_dtoh(&kept).map_err(err)?;
        let c = Array2::from_shape_vec((m, n), c).map_err(|e| e.to_string())?;
        checkpoints.put_output(&c);
    }
}
