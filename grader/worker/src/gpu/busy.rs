//! Worker side: the grader's own device work for the synchronization check — a kernel that
//! keeps the GPU busy for a chosen time, queued on the student's stream just before their
//! timing function is called.

use crate::backend::Backend;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

const BUSY_KERNEL: &str = r#"
extern "C" __global__ void grader_busy(float* x, long long iters) {
    float v = x[threadIdx.x];
    for (long long i = 0; i < iters; ++i) {
        v = v * 0.9999f + 0.0001f;
    }
    x[threadIdx.x] = v;
}
"#;

/// A loaded busy kernel, calibrated on this device.
pub struct Busy {
    stream: Arc<CudaStream>,
    kernel: CudaFunction,
    scratch: CudaSlice<f32>,
    iters_per_ms: f64,
    before_call_ms: f64,
}

type GpuResult<T> = Result<T, String>;

/// Device work the grader queues before each timed call on a real GPU (ms): long enough that
/// a clock started before it drains is unmistakable, even with a kernel compiled inside the
/// clock (NVRTC and the driver's JIT take up to a few hundred milliseconds there).
pub const QUEUED_MS: f64 = 1000.0;

/// The same on the grader's CPU emulator (ms), where this queue is CPU time spent before every
/// timed call. A kernel compiled inside the clock is found in the emulator's kernel cache there
/// (the shape's untimed first call compiled it). Measured on 2 cores with three gradings at
/// once, 6 seeds, both matmul timers: a synchronized clock (the solution, and one loading its
/// kernel inside the clock) read 0.07–3.9 ms less than the device time; a clock started before
/// the queue drained read 281–666 ms more. The check fails a clock above half the queue
/// (200 ms): a margin of 200 ms on the side of correct timers.
pub const EMULATED_QUEUED_MS: f64 = 400.0;

/// How long the grader's queued work before each timed call is where `backend` runs it.
pub fn queued_ms(backend: Backend) -> f64 {
    match backend {
        Backend::Emulated => EMULATED_QUEUED_MS,
        Backend::Real | Backend::NoGpu => QUEUED_MS,
    }
}

/// Device time (ms) the student's timed work must take at least, so that a clock stopped
/// before the GPU finished reads clearly less than the device did.
pub const MIN_DEVICE_MS: f64 = 20.0;

/// Timed calls per synchronization check.
pub const TIMER_SAMPLES: usize = 2;

/// The grader's own set-up for a synchronization check, made before any student code runs (so
/// its failure is the grader's): a stream for the student and the busy kernel on it, queuing
/// [`queued_ms`] of `backend` before each timed call.
pub fn set_up(backend: Backend) -> Result<(Arc<CudaStream>, Busy), String> {
    let stream = crate::gpu::student::open_stream()?;
    let busy = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Busy::new(&stream, queued_ms(backend))
    }))
    .map_err(|_| "the grader's busy kernel panicked while loading".to_string())??;
    Ok((stream, busy))
}

impl Busy {
    /// Compiles and loads the kernel on `stream`'s device and measures its speed; it will
    /// queue `before_call_ms` before each timed call ([`Busy::queue_before_call`]).
    pub fn new(stream: &Arc<CudaStream>, before_call_ms: f64) -> GpuResult<Self> {
        // A source no other process can predict, so the emulator compiles it here, before any
        // student code runs, and never takes it from a cache a submission could have written.
        let source = format!("{BUSY_KERNEL}// {:016x}\n", crate::protocol::fresh_nonce());
        let ptx = cudarc::nvrtc::compile_ptx(source).map_err(|e| e.to_string())?;
        let module = stream
            .context()
            .load_module(ptx)
            .map_err(|e| e.to_string())?;
        let kernel = module
            .load_function("grader_busy")
            .map_err(|e| e.to_string())?;
        let scratch = stream.alloc_zeros::<f32>(32).map_err(|e| e.to_string())?;
        let mut busy = Busy {
            stream: Arc::clone(stream),
            kernel,
            scratch,
            iters_per_ms: 0.0,
            before_call_ms,
        };
        let probe = 200_000i64;
        let ms = busy.timed(probe)?.max(1e-3);
        busy.iters_per_ms = probe as f64 / ms;
        Ok(busy)
    }

    /// Queues the device work that comes before a timed call and returns at once.
    pub fn queue_before_call(&mut self) -> GpuResult<()> {
        self.queue(self.before_call_ms)
    }

    /// Queues about `ms` milliseconds of device work and returns at once.
    fn queue(&mut self, ms: f64) -> GpuResult<()> {
        let iters = (self.iters_per_ms * ms).clamp(1.0, 1e12) as i64;
        self.launch(iters)
    }

    fn launch(&mut self, iters: i64) -> GpuResult<()> {
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&self.kernel);
        launch.arg(&mut self.scratch).arg(&iters);
        // SAFETY: the kernel touches 32 floats of a 32-float buffer.
        unsafe { launch.launch(config) }
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Runs `iters` iterations and returns their device time in ms.
    fn timed(&mut self, iters: i64) -> GpuResult<f64> {
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).map_err(|e| e.to_string())?;
        self.launch(iters)?;
        let end = self.stream.record_event(flags).map_err(|e| e.to_string())?;
        start
            .elapsed_ms(&end)
            .map(f64::from)
            .map_err(|e| e.to_string())
    }
}
