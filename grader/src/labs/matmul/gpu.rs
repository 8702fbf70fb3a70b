//! Worker side of the matmul lab's GPU items: the student's cudarc functions run on a stream
//! the grader opens (on a real GPU or the emulator), on inputs derived from the seed.

use crate::gpu::{busy::Busy, counters};
use crate::inputs;
use crate::protocol::{GpuTimerSample, GpuTimerSamples, Matrix, Outcome, SpeedSamples, WorkOrder};
use crate::worker::guarded;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use ndarray::Array2;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the student's GPU functions return.
pub type GpuResult<T> = Result<T, Box<dyn Error>>;

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

/// Device work the grader queues before each timed call (ms): long enough that a clock
/// started before it drains is unmistakable, even with a kernel compiled inside the clock.
const QUEUED_MS: f64 = 1000.0;

/// Device time (ms) the timed multiplication must take at least, so that a clock stopped
/// before the GPU finished reads clearly less than the device did.
const MIN_DEVICE_MS: f64 = 20.0;

/// The largest dimension the synchronization check grows the timed shape to.
const MAX_TIMED_DIM: usize = 4096;

/// Timed calls per synchronization check.
const TIMER_SAMPLES: usize = 2;

/// A student's GPU error in words: a kernel's compile log as the compiler wrote it, anything
/// else as the library describes it.
pub fn describe(e: &(dyn Error + 'static)) -> String {
    match e.downcast_ref::<cudarc::nvrtc::CompileError>() {
        Some(cudarc::nvrtc::CompileError::CompileError { log, .. }) => format!(
            "{}{}",
            crate::check::gpu::COMPILE_ERROR,
            log.to_string_lossy().trim_end()
        ),
        _ => e.to_string(),
    }
}

/// Opens a stream on device 0; cudarc panics when the library is missing, so that is caught.
fn open_stream() -> Result<Arc<CudaStream>, String> {
    std::panic::catch_unwind(|| {
        CudaContext::new(0)
            .and_then(|ctx| ctx.new_stream())
            .map_err(|e| e.to_string())
    })
    .map_err(|_| "the CUDA library could not be loaded".to_string())?
}

/// Runs a GPU product on every case of the order.
pub fn products(f: GpuProductFn, order: &WorkOrder) -> Outcome {
    let stream = match open_stream() {
        Ok(s) => s,
        Err(e) => return Outcome::GpuUnavailable(e),
    };
    let before = counters::read();
    let mut outputs = Vec::with_capacity(order.cases.len());
    let (mut panic, mut error) = (None, None);
    for (index, &shape) in order.cases.iter().enumerate() {
        let (a, b) = inputs::operands(order.seed, &order.item, index, shape);
        match guarded(Some(index), || f(&stream, &a, &b)) {
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
    Outcome::Products {
        outputs,
        panic,
        error,
        device_work: counters::since(before),
    }
}

/// The synchronization check: before each call, the grader queues long device work on the
/// student's stream and records an event; after the call it records another. The events
/// measure the student's device work; the student reports what their clock saw.
pub fn timer(f: GpuTimerFn, order: &WorkOrder) -> Outcome {
    timer_samples(f, order).unwrap_or_else(Outcome::GpuUnavailable)
}

fn timer_samples(f: GpuTimerFn, order: &WorkOrder) -> Result<Outcome, String> {
    let stream = open_stream()?;
    let err = |e: cudarc::driver::DriverError| e.to_string();
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut shape = order.size.ok_or("a GPU timer order needs a size")?;
    let call =
        |shape: [usize; 3], a: &CudaSlice<f32>, b: &CudaSlice<f32>, c: &mut CudaSlice<f32>| {
            match guarded(None, || f(&stream, a, b, c, shape)) {
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
    let mut busy = Busy::new(&stream)?;
    let mut samples = Vec::new();
    let mut queued_ms: f64 = 0.0;
    for _ in 0..TIMER_SAMPLES {
        let before_queue = stream.record_event(timing).map_err(err)?;
        busy.queue(QUEUED_MS)?;
        let before_call = stream.record_event(timing).map_err(err)?;
        let reported = match call(shape, &a_dev, &b_dev, &mut c_dev) {
            Ok(d) => d,
            Err(outcome) => return Ok(*outcome),
        };
        let after_call = stream.record_event(timing).map_err(err)?;
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
/// operands already on the GPU (the student's `time_gpu_matmul`), by the grader's clock with
/// the grader's own synchronizes around the call, against ndarray's optimised CPU product
/// (the lesson's NumPy) on the same inputs, back to back.
pub fn speedup(f: GpuTimerFn, order: &WorkOrder) -> Outcome {
    speed_samples(f, order).unwrap_or_else(Outcome::GpuUnavailable)
}

fn speed_samples(f: GpuTimerFn, order: &WorkOrder) -> Result<Outcome, String> {
    let stream = open_stream()?;
    let err = |e: cudarc::driver::DriverError| e.to_string();
    let shape = order.size.ok_or("a speedup order needs a size")?;
    let [m, k, n] = shape;
    let mut a_dev = stream.alloc_zeros::<f32>(m * k).map_err(err)?;
    let mut b_dev = stream.alloc_zeros::<f32>(k * n).map_err(err)?;
    let mut c_dev = stream.alloc_zeros::<f32>(m * n).map_err(err)?;
    let load = |x: &Array2<f32>, dev: &mut CudaSlice<f32>| {
        let rows = x.as_standard_layout();
        stream
            .memcpy_htod(rows.as_slice().unwrap_or(&[]), dev)
            .map_err(err)
    };
    let download = |c: &CudaSlice<f32>| -> Result<Array2<f32>, String> {
        let data = stream.clone_dtoh(c).map_err(err)?;
        Array2::from_shape_vec((m, n), data).map_err(|e| e.to_string())
    };
    let x = super::verification_vector(order, n);
    // Case 0 warms up and is the output the supervisor checks in full; each timed sample
    // multiplies inputs of its own, loaded outside the clock, and its result is checked.
    let mut run = || -> Result<SpeedSamples, String> {
        let (mut baseline_ns, mut candidate_ns, mut wrong_sample) = (Vec::new(), Vec::new(), None);
        let mut output = None;
        for s in 0..=order.samples {
            let case = if s == 0 {
                0
            } else {
                super::sample_case(order, s - 1)
            };
            let (a, b) = inputs::operands(order.seed, &order.item, case, shape);
            load(&a, &mut a_dev)?;
            load(&b, &mut b_dev)?;
            let start = Instant::now();
            std::hint::black_box(a.dot(&b));
            let cpu = start.elapsed().as_nanos() as u64;
            stream.synchronize().map_err(err)?;
            let start = Instant::now();
            f(&stream, &a_dev, &b_dev, &mut c_dev, shape).map_err(|e| describe(e.as_ref()))?;
            stream.synchronize().map_err(err)?;
            let gpu = start.elapsed().as_nanos() as u64;
            let c = download(&c_dev)?;
            if s == 0 {
                output = Some(c);
                continue;
            }
            baseline_ns.push(cpu);
            candidate_ns.push(gpu);
            if wrong_sample.is_none() && !crate::check::matmul::freivalds(&a, &b, &c, 2.0, &x) {
                wrong_sample = Some(s - 1);
            }
        }
        Ok(SpeedSamples {
            baseline_ns,
            // ndarray's product runs next to the GPU driver's own threads: not judged here.
            baseline_others_cpu_ns: Vec::new(),
            candidate_ns,
            output: Matrix::from_array(&output.unwrap_or_default()),
            wrong_sample,
        })
    };
    Ok(match guarded(None, &mut run) {
        Ok(Ok(samples)) => Outcome::Speed(samples),
        Ok(Err(e)) => Outcome::Failed(e),
        Err(p) => Outcome::Panicked(p),
    })
}
