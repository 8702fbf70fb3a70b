//! Worker mode: the lab crate's test binary, started by a supervisor with
//! [`WORKER_FLAG`](crate::protocol::WORKER_FLAG), reads one [`WorkOrder`] from stdin, runs the
//! student's functions on inputs derived from the seed, and writes a [`WorkerReport`].
//!
//! A panic in student code is caught and reported as data (message and location, without the
//! default hook's noise or backtrace). Anything worse — an abort, a segfault, a stack overflow,
//! `process::exit` — leaves no report, and the supervisor explains what it saw.

mod call_site;

use crate::protocol::{Outcome, PanicInfo, WorkOrder, WorkerReport};
use crate::stopwatch::Checkpoints;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// A lab's student functions, callable by item kind. Implemented by each lab's `Submission`.
pub trait LabWorker: Sync {
    /// Which lab these functions belong to.
    fn lab_name(&self) -> &'static str;

    /// Runs the order's student function on its inputs and returns the outputs.
    /// Use [`guarded`] around every student call so a panic becomes an [`Outcome::Panicked`].
    /// Timed work goes through `checkpoints`: the supervisor, not this process, reads the clock.
    fn run(&self, order: &WorkOrder, checkpoints: &mut Checkpoints) -> Result<Outcome, String>;
}

/// Why a worker could not do its job (never the student's fault: their faults are outcomes).
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The order on stdin was unreadable.
    #[error("worker: cannot read the work order: {0}")]
    Order(String),
    /// The lab could not run the order.
    #[error("worker: {0}")]
    Lab(String),
    /// The report could not be written.
    #[error("worker: cannot write the report {path}: {source}")]
    Report {
        path: String,
        source: std::io::Error,
    },
}

/// The last panic seen by the hook, from any thread (rayon workers included).
static LAST_PANIC: Mutex<Option<(String, Option<String>)>> = Mutex::new(None);

/// Installs a quiet panic hook that records the message and location instead of printing
/// (for a panic inside a dependency, the student's call site: [`call_site`]).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        // Only what is sent is copied: a message of 400 MB is not copied whole.
        let message = if let Some(s) = info.payload().downcast_ref::<&str>() {
            clipped(s)
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            clipped(s)
        } else {
            "panic with a non-text payload".to_string()
        };
        // A panic inside a library is reported where the student's code called it.
        let location = info
            .location()
            .map(|l| call_site::reported(l.file(), l.line()));
        let message = call_site::scrubbed(&message);
        if let Ok(mut last) = LAST_PANIC.lock() {
            // Keep the first panic: a panic in a rayon thread is re-raised on the caller.
            if last.is_none() {
                *last = Some((message, location));
            }
        }
    }));
}

/// A panic's message as sent: at most [`PANIC_MESSAGE_BYTES`] of it (cut at a character), with
/// how much was left out.
///
/// [`PANIC_MESSAGE_BYTES`]: crate::report_size::PANIC_MESSAGE_BYTES
fn clipped(message: &str) -> String {
    crate::protocol::clipped(message, crate::report_size::PANIC_MESSAGE_BYTES)
}

/// Runs one student call; a panic comes back as `Err(PanicInfo)` for case `case`.
pub fn guarded<T>(case: Option<usize>, f: impl FnOnce() -> T) -> Result<T, PanicInfo> {
    if let Ok(mut last) = LAST_PANIC.lock() {
        *last = None;
    }
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        let (message, location) = LAST_PANIC
            .lock()
            .ok()
            .and_then(|mut l| l.take())
            .unwrap_or_else(|| ("panicked".to_string(), None));
        PanicInfo {
            case,
            message,
            location,
        }
    })
}

/// The exit code of a worker process that served with `served`: success, or 101 (a test
/// binary's failure code) with the error said on stderr for the supervisor's report. Every
/// binary that serves orders (a lab's harness, the grader's own) ends this way.
pub fn exit_code(served: Result<(), WorkerError>) -> std::process::ExitCode {
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::from(101)
        }
    }
}

/// Serves one work order from stdin with `lab`; returns when the report is written.
pub fn serve(lab: &dyn LabWorker) -> Result<(), WorkerError> {
    serve_with(&|order, checkpoints| lab.run(order, checkpoints))
}

/// Serves one work order from stdin with `run`; returns when the report is written.
pub fn serve_with(
    run: &dyn Fn(&WorkOrder, &mut Checkpoints) -> Result<Outcome, String>,
) -> Result<(), WorkerError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| WorkerError::Order(e.to_string()))?;
    let order: WorkOrder =
        serde_json::from_str(&text).map_err(|e| WorkerError::Order(e.to_string()))?;
    install_panic_hook();
    if let Some(lang) = std::env::var(crate::i18n::WORKER_LANG)
        .ok()
        .and_then(|l| l.parse().ok())
    {
        crate::i18n::set(lang);
    }
    // The configuration this worker grades with is taken now, before the first instruction
    // of submission code: what the supervisor put in the environment, not what the submission
    // may set there later. The GPU libraries are loaded now too (on the emulator, its own
    // settings are read when it loads), so a later `set_var` changes nothing they do.
    crate::gpu::counters::freeze();
    preload_gpu_libraries(order.backend);
    let mut checkpoints = match (order.stopwatch_fd, &order.stopwatch) {
        #[cfg(unix)]
        (Some(fd), _) => Checkpoints::from_fd(fd),
        (_, Some(path)) => Checkpoints::open(path),
        _ => Err("the order names no stopwatch region".into()),
    }
    .map_err(WorkerError::Order)?;
    let outcome = run(&order, &mut checkpoints).map_err(WorkerError::Lab)?;
    write_report(&order, outcome)
}

/// Seals `outcome` and writes it where the order says, whole (by renaming a finished file).
fn write_report(order: &WorkOrder, outcome: Outcome) -> Result<(), WorkerError> {
    let report = WorkerReport {
        item: order.item.clone(),
        outcome,
        // Read after the work ended (the emulator waits for every launch it accepted), from
        // the emulator's memory: nothing the submission printed is in it.
        emulator: crate::gpu::counters::record(),
    };
    // Results larger than any right answer's are not sent: only their size is (counted
    // without building the report, which could be far larger than this process may hold).
    let report = match crate::report_size::serialized_len(&report, order.report_bytes) {
        Ok(_) => report,
        Err(bytes) => WorkerReport {
            outcome: Outcome::TooLarge {
                bytes,
                bound: order.report_bytes,
            },
            ..report
        },
    };
    let json = crate::protocol::sealed_report(order.nonce, &report)
        .map_err(|e| WorkerError::Lab(e.to_string()))?;
    let tmp = order.report_path.with_extension("partial");
    let write_err = |source| WorkerError::Report {
        path: order.report_path.display().to_string(),
        source,
    };
    std::fs::write(&tmp, json).map_err(write_err)?;
    std::fs::rename(&tmp, &order.report_path).map_err(write_err)?;
    Ok(())
}

/// Loads the GPU libraries the way cudarc will find them (by name, on the library path the
/// supervisor gave) and keeps them loaded for the worker's life: cudarc's own load later gets
/// these same objects. On the emulator every name is one object, whose settings are taken as
/// it loads; on a real GPU only the driver (or the tracer in front of it). Nothing happens
/// where there is none: the student's call reports that.
fn preload_gpu_libraries(backend: crate::protocol::Backend) {
    let names = match backend {
        crate::protocol::Backend::Real => &crate::gpu::LIB_NAMES[..2],
        // A CPU item's worker finds none, unless the supervisor gave it the emulator showing
        // no device (items about what code does without a GPU): then it loads now.
        crate::protocol::Backend::NoGpu | crate::protocol::Backend::Emulated => {
            crate::gpu::LIB_NAMES
        }
    };
    for name in names {
        // SAFETY: loading the CUDA driver (or the grader's emulator of it) runs only its
        // initialisers, which cudarc would run at its first call anyway.
        if let Ok(lib) = unsafe { libloading::Library::new(*name) } {
            // Kept loaded for the rest of the process, as cudarc keeps it.
            std::mem::forget(lib);
        }
    }
}
