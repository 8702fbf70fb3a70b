//! The supervisor's side of one item: start a worker process, hand it the order, wait with the
//! rubric's timeout, and turn whatever happened — a report, a crash, a hang — into something
//! the checks can judge. Student code never runs in the supervisor's process.

use crate::capture::Capture;
use crate::emulate::{CONFINE, KERNEL_CACHE, OWN_OBJECTS, RACE_CHECK};
use crate::protocol::{EmulatorRecord, Outcome, WorkOrder, WorkerReport, WORKER_FLAG};
use crate::stopwatch::region::Region;
use crate::stopwatch::{Checkpoint, Handover};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How to start a worker: the lab's test binary and its environment.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    /// The lab crate's test binary (built with the grader's harness).
    pub program: PathBuf,
    /// Where it runs (the lab crate's folder).
    pub cwd: Option<PathBuf>,
    /// Extra environment for the child.
    pub env: Vec<(OsString, OsString)>,
    /// Where this grading's workers cache the kernels the emulator compiles: one folder per
    /// submission, which no other submission's worker can reach (`None`: each worker's own
    /// scratch folder).
    pub kernel_cache: Option<PathBuf>,
}

/// What became of a worker.
// One per worker run, moved once to its judge: never kept in bulk, so not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum WorkerRun {
    /// It finished and reported; `notes` are the GPU emulator's findings (an out-of-bounds
    /// access, say) from the record its report carries, and `checks` what that record says
    /// of a checked run.
    Reported {
        outcome: Outcome,
        notes: String,
        checks: Checks,
    },
    /// It did not report: it crashed, exited early, or was killed at the timeout.
    Died(Death),
}

/// What the emulator's record shows of a run the supervisor asked to be checked (race
/// detection and device-memory confinement: correctness runs on the emulator). The record
/// travels in the worker's sealed report, never in its output, and a checked run must show
/// itself checked: a record that is missing, or that does not cover every launch, is no
/// evidence of a clean run ("no report found" is never "no problem").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checks {
    /// Not a run on the emulator: nothing of the kind to show.
    NotAsked,
    /// A run on the emulator not asked to be checked (a timed run): every launch ran confined
    /// to device memory (or checked), so no kernel could reach the host memory of the process
    /// whose report this is.
    Confined,
    /// A run on the emulator not asked to be checked, whose record does not show every launch
    /// confined: why.
    Unconfined(String),
    /// Checked: every launch ran checked (or was skipped after a fault), and no kernel raced.
    Clean,
    /// Checked, and a kernel raced: the emulator's explanation.
    Race(String),
    /// Asked for, but the record does not show a checked run: why.
    Unproven(String),
}

/// Why a run on the emulator whose record does not show the grader's kernel compiler counts
/// for nothing: its kernels could have been built in the worker's own process
/// ([`crate::kernel_compiler`]).
const NO_COMPILER: &str = "the emulator was not given the grader's kernel compiler";

impl Checks {
    /// What `record` shows of a run on the emulator (`emulated`) whose checks were `asked`
    /// for or not, with `outcome` (its device counts say how many launches the record must
    /// cover at least).
    pub fn of(
        emulated: bool,
        asked: bool,
        record: Option<&EmulatorRecord>,
        outcome: &Outcome,
    ) -> Checks {
        if !emulated {
            return Checks::NotAsked;
        }
        if !asked {
            return Checks::confined(record);
        }
        let Some(record) = record else {
            return Checks::Unproven("its report carries no record from the emulator".into());
        };
        if !record.compiled_outside {
            return Checks::Unproven(NO_COMPILER.into());
        }
        if !record.checked {
            return Checks::Unproven("the emulator was not asked for checked builds".into());
        }
        if let Some(why) = uncovered(record) {
            return Checks::Unproven(why);
        }
        let unchecked = record.plain_runs + record.confined_runs;
        if unchecked > 0 {
            return Checks::Unproven(launches_built_without(unchecked, "the race check"));
        }
        let claimed = match outcome {
            Outcome::Products {
                device_work: Some(work),
                ..
            } => work.launches,
            _ => 0,
        };
        if claimed > record.accepted {
            return Checks::Unproven(format!(
                "the report counts {claimed} launches and the record {}",
                record.accepted
            ));
        }
        match record.races().next() {
            Some(race) => Checks::Race(race.text.clone()),
            None => Checks::Clean,
        }
    }

    /// What `record` shows of a run on the emulator that was not asked to be checked: every
    /// launch confined, or why not ("no record" is never "confined").
    fn confined(record: Option<&EmulatorRecord>) -> Checks {
        let Some(record) = record else {
            return Checks::Unconfined("its report carries no record from the emulator".into());
        };
        if !record.compiled_outside {
            return Checks::Unconfined(NO_COMPILER.into());
        }
        if !(record.confined || record.checked) {
            return Checks::Unconfined("the emulator was not asked for confined builds".into());
        }
        if let Some(why) = uncovered(record) {
            return Checks::Unconfined(why);
        }
        if record.plain_runs > 0 {
            return Checks::Unconfined(launches_built_without(
                record.plain_runs,
                "confinement to GPU memory",
            ));
        }
        Checks::Confined
    }
}

/// Why `record` does not cover every launch its emulator accepted (run, whatever the build,
/// or skipped after a fault), if it does not.
fn uncovered(record: &EmulatorRecord) -> Option<String> {
    let ended = record.checked_runs + record.confined_runs + record.plain_runs + record.skipped;
    (ended != record.accepted).then(|| {
        format!(
            "the record covers {ended} of the {} launches the emulator accepted",
            record.accepted
        )
    })
}

/// "`n` launch(es) ran a kernel built without `what`".
fn launches_built_without(n: u64, what: &str) -> String {
    format!(
        "{n} launch{} ran a kernel built without {what}",
        if n == 1 { "" } else { "es" }
    )
}

/// How a worker died without reporting, with what it printed last.
#[derive(Debug, Clone)]
pub struct Death {
    /// The cause, as far as the supervisor can tell.
    pub cause: DeathCause,
    /// The last lines the student's code printed to stderr (and stdout), for context.
    pub output_tail: String,
}

/// The cause of a worker's death.
#[derive(Debug, Clone, PartialEq)]
pub enum DeathCause {
    /// Still running at the item's timeout, then killed.
    TimedOut(f64),
    /// Rust's stack-overflow guard fired.
    StackOverflow,
    /// Killed by a signal (segfault, abort, …).
    Signal(i32),
    /// Ran out of the memory its sandbox allows (an allocation failed).
    OutOfMemory,
    /// Exited on its own before reporting (`process::exit`, for example).
    Exited(i32),
    /// The result file was not written by the worker: something forged it.
    Tampered,
    /// Wrote more to its scratch folder than a worker may (in bytes or in files).
    WroteTooMuch,
    /// Its processes together were more than a worker may have.
    TooManyProcesses,
}

/// The supervisor could not run the worker at all (never the student's fault).
#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// A scratch file or folder could not be made.
    #[error("cannot prepare a scratch folder for the worker: {0}")]
    Scratch(std::io::Error),
    /// The worker program could not be started.
    #[error("cannot start the lab's test binary {program}: {source}")]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
    /// The kernel compiler of a worker on the emulator could not be started.
    #[error("cannot start the grader's kernel compiler: {0}")]
    Compiler(String),
    /// The worker's sandbox could not be prepared.
    #[error("cannot prepare the worker's sandbox: {0}")]
    Sandbox(String),
    /// GPU items cannot run here as asked (no emulator, no device).
    #[error("GPU items cannot run: {0}")]
    Gpu(String),
    /// A report was there but unreadable (the binary is not a gpu-labs harness?).
    #[error("the worker's report for `{item}` is unreadable: {message}")]
    BadReport { item: String, message: String },
    /// A speed item's baseline, which runs only the grader's own code, failed: the grader's
    /// fault on this machine, never the student's.
    #[error("item `{item}`: {message}")]
    Baseline { item: String, message: String },
}

impl Death {
    /// One plain sentence for a student.
    pub fn explain(&self) -> String {
        use crate::i18n::t;
        match &self.cause {
            DeathCause::TimedOut(secs) => t!("died-timed-out", secs = format!("{secs:.0}")),
            DeathCause::StackOverflow => t!("died-stack"),
            DeathCause::Signal(sig) => match *sig {
                11 | 7 => t!("died-segfault"),
                6 => t!("died-abort"),
                8 => t!("died-fpe"),
                9 => t!("died-killed"),
                25 => t!(
                    "died-file-size",
                    mib = crate::sandbox::limits::FILE_SIZE >> 20
                ),
                s => t!("died-signal", signal = s),
            },
            DeathCause::OutOfMemory => {
                t!("died-memory", gib = crate::sandbox::limits::MEMORY >> 30)
            }
            DeathCause::Tampered => t!("died-tampered"),
            DeathCause::WroteTooMuch => t!(
                "died-disk",
                gib = crate::sandbox::limits::SCRATCH_BYTES >> 30,
                files = crate::sandbox::limits::SCRATCH_FILES
            ),
            DeathCause::TooManyProcesses => t!(
                "died-processes",
                processes = crate::sandbox::limits::PROCESSES
            ),
            DeathCause::Exited(code) => t!("died-exited", code = code),
        }
    }
}

thread_local! {
    /// Output the workers this thread ran printed past what is kept (see [`capture`]).
    ///
    /// [`capture`]: crate::capture
    static OUTPUT_LEFT_OUT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The bytes of output dropped by workers this thread ran since the last call (the grading
/// of one item runs its workers on one thread), for its feedback to say so.
pub fn take_output_left_out() -> u64 {
    OUTPUT_LEFT_OUT.with(|c| c.replace(0))
}

/// Runs `order` in a fresh worker process, killed after `timeout_secs`, and waits for it.
pub fn run_worker(
    command: &WorkerCommand,
    timeout_secs: f64,
    order: &WorkOrder,
) -> Result<WorkerRun, SupervisorError> {
    Session::start(command, timeout_secs, order, 0)?.finish()
}

/// A stop the worker made at a checkpoint, and when the supervisor saw it.
#[derive(Debug, Clone, Copy)]
pub struct Stop {
    /// The supervisor's clock just after it saw the worker stopped.
    pub at: Instant,
    /// The checkpoint the worker says it stopped at (`None`: a stop the grader's code did not
    /// make).
    pub checkpoint: Option<Checkpoint>,
}

/// How often the watchdog looks at a running worker's scratch folder.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Every how many looks it also reads the memory and processes of the worker's whole tree
/// from `/proc` (every half second).
const TREE_EVERY: u32 = 5;

/// One worker process, from start to report: the supervisor waits for its stops at
/// checkpoints (reading its own clock), hands over work through the shared region while it is
/// stopped, and lets it continue. A watchdog kills it after `timeout_secs`.
pub struct Session {
    pid: i32,
    region: Region,
    order: WorkOrder,
    stdout: Option<Capture>,
    stderr: Option<Capture>,
    /// Why the watchdog killed it, when it did.
    killed_for: Arc<OnceLock<DeathCause>>,
    /// Whether the supervisor asked the emulator for a checked run.
    checks_asked: bool,
    /// Whether the order runs on the emulator (its record must then show every launch
    /// checked or confined).
    emulated: bool,
    ended: Option<i32>,
    stopped: bool,
    cancel: Option<std::sync::mpsc::Sender<()>>,
    /// The worker's kernel compiler, on the emulator; ended with the session.
    _compiler: Option<crate::kernel_compiler::Running>,
    /// The compiler's objects folder, when it is the worker's own.
    _objects: Option<crate::scratch::ScratchDir>,
    _scratch: crate::scratch::ScratchDir,
}

impl Session {
    /// The worker's process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Starts a worker on `order`, with a shared region of `words` matrix words.
    pub fn start(
        command: &WorkerCommand,
        timeout_secs: f64,
        order: &WorkOrder,
        words: usize,
    ) -> Result<Session, SupervisorError> {
        let scratch =
            crate::scratch::ScratchDir::new("grader-item-").map_err(SupervisorError::Scratch)?;
        let mut order = order.clone();
        order.report_path = scratch.path().join("report.json");
        order.nonce = crate::protocol::fresh_nonce();
        let (region, region_fd) = shared_region(&mut order, scratch.path(), words)?;
        // Given the emulator (a run of the no-library case of device selection is not).
        let emulated = order.backend == crate::protocol::Backend::Emulated
            && command
                .env
                .iter()
                .any(|(k, v)| k == crate::emulate::MARKER && v == "1");
        // On the emulator, kernels are compiled by the grader's kernel compiler into a folder
        // the worker can read and not write (`crate::kernel_compiler`): the submission's
        // folder of kept kernels (a student's own runs), else one of this worker's own.
        let objects = match (emulated, &command.kernel_cache) {
            (true, None) => Some(
                crate::scratch::ScratchDir::new("grader-kernels-")
                    .map_err(SupervisorError::Scratch)?,
            ),
            _ => None,
        };
        let kernel_cache = command
            .kernel_cache
            .clone()
            .or_else(|| objects.as_ref().map(|o| o.path().to_path_buf()))
            .unwrap_or_else(|| scratch.path().join("kernels"));
        let kernel_cache_made = std::fs::create_dir_all(&kernel_cache).is_ok();
        let shared_cache = (kernel_cache_made && !kernel_cache.starts_with(scratch.path()))
            .then_some(kernel_cache.as_path());
        let compiler = if emulated {
            let log = scratch.path().join("kernel-compiler.log");
            Some(start_compiler(command, &kernel_cache, &log, timeout_secs)?)
        } else {
            None
        };
        let WorkerCommand {
            program, cwd, env, ..
        } = given_to_worker(
            command,
            scratch.path(),
            shared_cache.filter(|_| compiler.is_none()),
        )?;
        let checks_asked = order.backend == crate::protocol::Backend::Emulated
            && command.env.iter().any(|(k, v)| k == RACE_CHECK && v == "1");
        let mut spec = crate::sandbox::spec_for(
            scratch.path(),
            &program,
            cwd.as_deref(),
            &env,
            order.backend,
        );
        if compiler.is_some() {
            spec.readable.push(kernel_cache.clone());
        } else if shared_cache.is_some() {
            spec.writable.push(kernel_cache.clone());
        }
        // The sandbox is made here and applied by the worker's child before its program
        // starts, before the first instruction of the worker: nothing in the worker's own
        // binary sets it up (in official grading that binary holds no sandbox code at all).
        let prepared = crate::sandbox::child::Prepared::new(&spec)
            .map_err(|e| SupervisorError::Sandbox(e.to_string()))?;

        let mut cmd = Command::new(&program);
        // Only the variables a worker needs: nothing of the instructor's reaches student code.
        crate::sandbox::clean_environment(&mut cmd);
        cmd.arg(WORKER_FLAG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("RUST_BACKTRACE", "0")
            // The worker's own messages (a GPU error after the student's call) in the run's
            // language.
            .env(crate::i18n::WORKER_LANG, crate::i18n::current().tag())
            // Temporary files (the C++ compiler's) go to the one folder it may write.
            .env("TMPDIR", scratch.path());
        if let Some(cwd) = &cwd {
            cmd.current_dir(cwd);
        }
        for (k, v) in &env {
            cmd.env(k, v);
        }
        if order.backend == crate::protocol::Backend::Real {
            // The driver's JIT cache of compiled PTX, in the one folder the worker may write:
            // elsewhere (`~/.nv`, another user's, refused by the sandbox) every module load
            // compiles its PTX again, inside the student's clock (a correct batched timer read
            // 0.15× the loop of single products on an H200 with the sandbox on, 14.5× off).
            // Per item, as the emulator's kernels: a cache shared between submissions could be
            // written by one and run by another.
            cmd.env("CUDA_CACHE_PATH", scratch.path().join("nv-compute-cache"));
        }
        // The emulator compiles kernels into this submission's own cache: a shared cache
        // that one submission's code could write would let it swap the kernels another runs.
        // (The grader's own kernel is never taken from a cache: see `gpu::busy`.)
        cmd.env(KERNEL_CACHE, &kernel_cache);
        // Kernels of a run that is not checked (a timed run) are confined all the same: one
        // that could follow a pointer into the worker's memory could forge what the worker
        // reports (its sealed report, the emulator's device times).
        if order.backend == crate::protocol::Backend::Emulated {
            cmd.env(CONFINE, "1");
        }
        // A cache that is this worker's own (official grading: its compiler's objects folder,
        // or its scratch folder where no compiler runs) holds nothing compiled for anyone
        // else: the emulator then loads only the bytes its compiler wrote for this process.
        if shared_cache.is_none() || objects.is_some() {
            cmd.env(OWN_OBJECTS, "1");
        }
        #[cfg(target_os = "linux")]
        if let Some(fd) = &region_fd {
            give_descriptor(&mut cmd, fd);
        }
        if let Some(compiler) = &compiler {
            cmd.env(crate::emulate::COMPILER, compiler.variable());
            for fd in compiler.worker_ends() {
                give_descriptor(&mut cmd, fd);
            }
        }
        let limits = crate::sandbox::limits::Limits::for_worker(order.backend, timeout_secs);
        crate::sandbox::limits::install(&mut cmd, limits, prepared);
        let mut child = cmd.spawn().map_err(|source| SupervisorError::Spawn {
            program: command.program.clone(),
            source,
        })?;
        let order_json = serde_json::to_vec(&order).map_err(|e| SupervisorError::BadReport {
            item: order.item.clone(),
            message: e.to_string(),
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            // A worker that dies at once closes the pipe; its death is reported later.
            let _ = stdin.write_all(&order_json);
        }
        let stdout = child.stdout.take().map(Capture::start);
        let stderr = child.stderr.take().map(Capture::start);
        let pid = child.id() as i32;
        crate::sandbox::tree::register(pid);
        // The worker holds its ends of the compiler's pipes now; the compiler's requests end
        // when the worker does.
        let compiler = compiler.map(crate::kernel_compiler::KernelCompiler::given);
        let killed_for = Arc::new(OnceLock::new());
        let (cancel, cancelled) = std::sync::mpsc::channel::<()>();
        let limit = Duration::from_secs_f64(timeout_secs);
        let why = Arc::clone(&killed_for);
        let watched = [scratch.path().to_path_buf(), kernel_cache];
        let tree_memory = limits.memory;
        let count_processes = !limits.protections.processes && limits.protections.any();
        // The watchdog: the timeout, the scratch folder's size (a file-size limit alone
        // lets a worker fill the disk with many files), and what its whole process tree holds
        // (a limit per process is none for a tree: each child would get its own).
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut ticks = 0u32;
            loop {
                ticks += 1;
                let left = limit.saturating_sub(started.elapsed());
                match cancelled.recv_timeout(left.min(WATCH_EVERY)) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                let cause = if started.elapsed() >= limit {
                    DeathCause::TimedOut(timeout_secs)
                } else if crate::sandbox::limits::written_over(&watched) {
                    DeathCause::WroteTooMuch
                } else if ticks.is_multiple_of(TREE_EVERY) {
                    let members = crate::sandbox::tree::members(pid);
                    let resident: u64 = members.iter().map(|(_, rss)| rss).sum();
                    if tree_memory.is_some_and(|limit| resident > limit) {
                        DeathCause::OutOfMemory
                    } else if count_processes
                        && members.len() as u64 > crate::sandbox::limits::PROCESSES
                    {
                        DeathCause::TooManyProcesses
                    } else {
                        continue;
                    }
                } else {
                    continue;
                };
                let _ = why.set(cause);
                kill(pid, Signal::Kill);
                return;
            }
        });
        Ok(Session {
            pid,
            region,
            order,
            stdout,
            stderr,
            killed_for,
            checks_asked,
            emulated,
            ended: None,
            stopped: false,
            cancel: Some(cancel),
            _compiler: compiler,
            _objects: objects,
            _scratch: scratch,
        })
    }

    /// Waits for the worker's next stop; `None` once it has ended (exited, crashed, killed).
    /// After the first, the region's file is deleted: the worker has mapped it, and nothing
    /// else should find it by name.
    pub fn next_stop(&mut self) -> Option<Stop> {
        if self.ended.is_some() {
            return None;
        }
        match wait_for(self.pid) {
            Waited::Stopped => {
                let at = Instant::now();
                // Whatever else it started stops too: nothing of the submission runs while
                // the worker is held (the yardstick may be measured meanwhile).
                crate::sandbox::tree::signal(self.pid, libc::SIGSTOP);
                self.stopped = true;
                if let Some(path) = self.order.stopwatch.take() {
                    let _ = std::fs::remove_file(path);
                }
                Some(Stop {
                    at,
                    checkpoint: Handover(&mut self.region).checkpoint(),
                })
            }
            Waited::Ended(status) => {
                self.ended = Some(status);
                None
            }
        }
    }

    /// Lets the stopped worker continue; returns the supervisor's clock just before it did.
    /// The checkpoint is cleared first, so a stop the grader's code did not make reads as none.
    pub fn resume(&mut self) -> Instant {
        self.region
            .set(crate::stopwatch::region::Field::Checkpoint, 0);
        self.stopped = false;
        let now = Instant::now();
        crate::sandbox::tree::signal(self.pid, libc::SIGCONT);
        now
    }

    /// The processor time each thread of the worker has used so far (ns, by thread id), read
    /// from the kernel's scheduler statistics (`/proc/<pid>/task/*/schedstat`), so that the
    /// supervisor can tell the work a stretch took from the wall-clock time it lasted, which
    /// other processes on the machine lengthen. Read while the worker is stopped; `None` where
    /// the kernel does not keep them.
    pub fn thread_times(&self) -> Option<Vec<(u32, u64)>> {
        let mut times = Vec::new();
        for entry in std::fs::read_dir(format!("/proc/{}/task", self.pid)).ok()? {
            let entry = entry.ok()?;
            let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            // One short line of three numbers: read with a bound all the same.
            let text =
                crate::intake::read_file(&entry.path().join("schedstat"), 256, "schedstat").ok()?;
            let ns = std::str::from_utf8(&text)
                .ok()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            times.push((tid, ns));
        }
        (!times.is_empty()).then_some(times)
    }

    /// The shared region (touch it only while the worker is stopped).
    pub fn handover(&mut self) -> Handover<'_> {
        Handover(&mut self.region)
    }

    /// Waits for the worker to end (letting it continue from any further stop) and turns what
    /// happened into a [`WorkerRun`].
    pub fn finish(mut self) -> Result<WorkerRun, SupervisorError> {
        if self.stopped {
            self.handover().finish();
            self.resume();
        }
        while self.next_stop().is_some() {
            self.handover().finish();
            self.resume();
        }
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
        // Whatever it started that is still running ends with it.
        end_tree(self.pid);
        let take = |c: Option<Capture>| {
            c.map(|c| {
                let kept = c.finish(Duration::from_millis(500));
                OUTPUT_LEFT_OUT.with(|n| n.set(n.get() + kept.left_out()));
                kept.text()
            })
            .unwrap_or_default()
        };
        let stderr = take(self.stderr.take());
        let stdout = take(self.stdout.take());
        let output_tail = tail_of(&stderr, &stdout);
        if let Some(cause) = self.killed_for.get() {
            return Ok(WorkerRun::Died(Death {
                cause: cause.clone(),
                output_tail,
            }));
        }
        let order = &self.order;
        if std::fs::symlink_metadata(&order.report_path).is_ok() {
            let Some(report) = take_report(order)? else {
                return Ok(WorkerRun::Died(Death {
                    cause: DeathCause::Tampered,
                    output_tail,
                }));
            };
            // The emulator's findings come from its record in the sealed report: nothing the
            // submission prints (on stderr, which it shares) reaches a verdict.
            let record = report.emulator.as_ref();
            let notes = record.map(emulator_notes).unwrap_or_default();
            let checks = Checks::of(self.emulated, self.checks_asked, record, &report.outcome);
            let mut outcome = report.outcome;
            if let Outcome::Products {
                launch_geometry, ..
            } = &mut outcome
            {
                // Only the emulator's record says how kernels were launched.
                *launch_geometry = record.map(|r| r.launches.clone()).unwrap_or_default();
            }
            return Ok(WorkerRun::Reported {
                outcome,
                notes,
                checks,
            });
        }
        let status = self.ended.unwrap_or(0);
        Ok(WorkerRun::Died(Death {
            cause: cause_of(status, &output_tail),
            output_tail,
        }))
    }

    /// Ends the worker now (a protocol the grader's code would not break was broken).
    pub fn kill(mut self) {
        kill(self.pid, Signal::Kill);
        while self.next_stop().is_some() {}
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.ended.is_none() {
            kill(self.pid, Signal::Kill);
            while self.next_stop().is_some() {}
        }
        end_tree(self.pid);
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
    }
}

/// The region `order`'s worker shares with the supervisor, for `words` matrix words: on Linux a
/// sealed one in memory, whose descriptor the worker is started with (and which nothing can
/// shorten under the supervisor's reads); elsewhere a file in `scratch`. The order says which.
#[cfg(target_os = "linux")]
fn shared_region(
    order: &mut WorkOrder,
    _scratch: &std::path::Path,
    words: usize,
) -> Result<(Region, Option<std::os::fd::OwnedFd>), SupervisorError> {
    use std::os::fd::AsRawFd;
    let (region, fd) = Region::create_sealed(words)
        .map_err(|e| SupervisorError::Scratch(std::io::Error::other(e.to_string())))?;
    order.stopwatch = None;
    order.stopwatch_fd = Some(fd.as_raw_fd());
    Ok((region, Some(fd)))
}

/// See the Linux version: a file in `scratch`.
#[cfg(not(target_os = "linux"))]
fn shared_region(
    order: &mut WorkOrder,
    scratch: &std::path::Path,
    words: usize,
) -> Result<(Region, Option<()>), SupervisorError> {
    let path = scratch.join("stopwatch");
    let region = Region::create(&path, words)
        .map_err(|e| SupervisorError::Scratch(std::io::Error::other(e.to_string())))?;
    order.stopwatch = Some(path);
    order.stopwatch_fd = None;
    Ok((region, None))
}

/// Lets the worker `cmd` starts inherit `fd` (under its own number): every descriptor of the
/// supervisor is closed at exec, this one is opened again in the child alone, after the fork,
/// so no other worker started meanwhile gets it.
#[cfg(target_os = "linux")]
fn give_descriptor(cmd: &mut Command, fd: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process holds, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(raw, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Starts the kernel compiler of a worker with `command`'s environment, writing its objects
/// in `objects` ([`crate::kernel_compiler`]): the supervisor's own program, in a worker's
/// sandbox whose one writable folder is `objects`, as the same user as the worker.
fn start_compiler(
    command: &WorkerCommand,
    objects: &std::path::Path,
    log: &std::path::Path,
    timeout_secs: f64,
) -> Result<crate::kernel_compiler::KernelCompiler, SupervisorError> {
    let failed = SupervisorError::Compiler;
    let mut program = std::env::current_exe()
        .map_err(|e| failed(format!("the grader's own program cannot be found: {e}")))?;
    let mut env = command.env.clone();
    // Builds that are not checked are confined, as the worker is told (`Session::start`): the
    // compiler, not the worker, decides how a kernel is built.
    env.push((CONFINE.into(), "1".into()));
    #[cfg(unix)]
    if let Some(id) = crate::sandbox::child::identity_for(crate::sandbox::available()) {
        // Owned before anything is linked into it: a link to the grader's program stays
        // root's.
        crate::sandbox::root::own(objects, id).map_err(SupervisorError::Scratch)?;
        let given =
            crate::sandbox::root::give(objects, &program, None, library_path(&env).as_ref())
                .map_err(SupervisorError::Scratch)?;
        program = given.program;
        if let Some(path) = given.library_path {
            env.push(("LD_LIBRARY_PATH".into(), path));
        }
        // The CUDA headers the compiler reads, given beside the objects where it could not
        // reach them; the worker may read that folder, never write it.
        let stubs = env.iter().rev().find(|(k, _)| k == crate::emulate::STUBS);
        if let Some(dir) = stubs.map(|(_, v)| std::path::PathBuf::from(v)) {
            if let Some(given) = crate::sandbox::root::give_folder(objects, &dir, "include")
                .map_err(SupervisorError::Scratch)?
            {
                env.push((crate::emulate::STUBS.into(), given.into_os_string()));
            }
        }
    }
    let library = library_path(&env)
        .and_then(|path| crate::kernel_compiler::emulator_library(&path))
        .ok_or_else(|| failed("no emulator library in the worker's library path".into()))?;
    let spec = crate::sandbox::spec_for(
        objects,
        &program,
        Some(objects),
        &env,
        crate::backend::Backend::Emulated,
    );
    let prepared = crate::sandbox::child::Prepared::new(&spec)
        .map_err(|e| SupervisorError::Sandbox(e.to_string()))?;
    let limits =
        crate::sandbox::limits::Limits::for_worker(crate::backend::Backend::Emulated, timeout_secs);
    crate::kernel_compiler::KernelCompiler::start(
        &program, &library, &env, objects, log, limits, prepared,
    )
    .map_err(|e| failed(format!("{}: {e}", program.display())))
}

/// The library path a child with `env` loads from: its own `LD_LIBRARY_PATH`, else the
/// grader's.
fn library_path(env: &[(OsString, OsString)]) -> Option<OsString> {
    env.iter()
        .rev()
        .find(|(k, _)| k == "LD_LIBRARY_PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("LD_LIBRARY_PATH"))
}

/// The program, working folder and environment a worker starts with: those of `command`,
/// except that a worker of a grader run as root, which is not root, is given what it could not
/// reach (see [`crate::sandbox::root`]), and its scratch folder and `shared_cache` become its
/// own.
fn given_to_worker(
    command: &WorkerCommand,
    scratch: &std::path::Path,
    shared_cache: Option<&std::path::Path>,
) -> Result<WorkerCommand, SupervisorError> {
    let mut env = command.env.clone();
    #[cfg(unix)]
    if let Some(id) = crate::sandbox::child::identity_for(crate::sandbox::available()) {
        let given = crate::sandbox::root::give(
            scratch,
            &command.program,
            command.cwd.as_deref(),
            library_path(&env).as_ref(),
        )
        .map_err(SupervisorError::Scratch)?;
        if let Some(path) = given.library_path {
            env.push(("LD_LIBRARY_PATH".into(), path));
        }
        crate::sandbox::root::own(scratch, id).map_err(SupervisorError::Scratch)?;
        if let Some(cache) = shared_cache {
            crate::sandbox::root::own(cache, id).map_err(SupervisorError::Scratch)?;
        }
        return Ok(WorkerCommand {
            program: given.program,
            cwd: given.cwd,
            env,
            kernel_cache: command.kernel_cache.clone(),
        });
    }
    Ok(WorkerCommand {
        env,
        ..command.clone()
    })
}

/// The most any worker's report may hold, whatever its order's bound
/// ([`WorkOrder::report_bytes`], set from the item's shapes): far above every right answer,
/// for an order that came without a bound.
pub const REPORT_BYTES: u64 = 256 << 20;

/// The most of one text from a report (a panic's message, an error) that reaches feedback.
pub const FEEDBACK_TEXT_BYTES: usize = 8 << 10;

/// The report the worker left for `order`, read as every report is (the one place the
/// supervisor reads one): a regular file within the order's bound ([`read_report`]), whose
/// values are counted before anything is built from them
/// ([`census`](crate::report_size::census)), opened with the order's secret, its texts cut to
/// [`FEEDBACK_TEXT_BYTES`]. `Ok(None)`: its seal is not the worker's (written by something
/// else). `Err`: it is not one the item can take, for the item's failure.
pub fn take_report(order: &WorkOrder) -> Result<Option<WorkerReport>, SupervisorError> {
    let bad = |message| SupervisorError::BadReport {
        item: order.item.clone(),
        message,
    };
    let text = read_report(&order.report_path, order.report_bytes).map_err(bad)?;
    // Its shape is counted before anything is built from it: a report of many tiny values
    // could cost many times its bytes once read.
    let body = text
        .iter()
        .position(|&b| b == b'\n')
        .map_or(&text[..], |n| &text[n + 1..]);
    crate::report_size::census(body).map_err(bad)?;
    let opened = crate::protocol::open_report(order.nonce, &text);
    // What was read goes before the judges build anything more from it.
    drop(text);
    let Some(report) = opened else {
        return Ok(None);
    };
    let mut report: WorkerReport = report.map_err(|e| bad(e.to_string()))?;
    // Texts reach feedback, reports and gradebooks: kept to a page each.
    report.outcome.clip_texts(FEEDBACK_TEXT_BYTES);
    if let Some(record) = &mut report.emulator {
        record.clip_texts(FEEDBACK_TEXT_BYTES);
    }
    if report.item != order.item {
        return Err(bad(format!("it answers item `{}`", report.item)));
    }
    Ok(Some(report))
}

/// Reads a worker's report: a regular file of at most `bound` bytes (and never more than
/// [`REPORT_BYTES`]), opened without following a link and without blocking (a named pipe left
/// in its place is refused, never waited on). `Err` says what was there instead, for the
/// item's failure.
fn read_report(path: &std::path::Path, bound: u64) -> Result<Vec<u8>, String> {
    let bound = bound.min(REPORT_BYTES);
    crate::intake::read_file(path, bound, "the report").map_err(|refusal| {
        // What was there, in the words of an item's failure (intake's speak of source files).
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return refusal.to_string();
        };
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        let what = if kind.is_file() {
            return format!(
                "the report is {} bytes, more than a right answer to this item sends ({bound} \
                 at most): does the function return a far larger result than the item asks \
                 for?",
                meta.len(),
            );
        } else if kind.is_symlink() {
            "a link"
        } else if kind.is_fifo() {
            "a named pipe"
        } else if kind.is_dir() {
            "a folder"
        } else {
            "a socket or device"
        };
        format!("something other than a plain file was left where the report goes: {what}")
    })
}

/// The signals the supervisor sends.
enum Signal {
    Kill,
}

/// Kills the worker `pid` and its whole tree (a stopped tree dies too).
#[cfg(unix)]
fn kill(pid: i32, signal: Signal) {
    let Signal::Kill = signal;
    crate::sandbox::tree::signal(pid, libc::SIGKILL);
}

/// Ends the worker `pid`'s whole process group (children it started that outlived it) and
/// takes it off the list ended on Ctrl-C.
fn end_tree(pid: i32) {
    crate::sandbox::tree::signal(pid, libc::SIGKILL);
    crate::sandbox::tree::forget(pid);
}

/// What waiting for a worker found.
enum Waited {
    /// It stopped itself.
    Stopped,
    /// It ended; the raw wait status.
    Ended(i32),
}

#[cfg(unix)]
fn wait_for(pid: i32) -> Waited {
    loop {
        let mut status = 0;
        // SAFETY: waits for this supervisor's own child; `status` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
        if r == -1 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Waited::Ended(0);
        }
        if libc::WIFSTOPPED(status) {
            return Waited::Stopped;
        }
        return Waited::Ended(status);
    }
}

/// The emulator's findings for the item's feedback, each kind once, at most ten.
fn emulator_notes(record: &EmulatorRecord) -> String {
    // The same report from other blocks or later launches adds nothing: keep the first.
    let mut seen = std::collections::HashSet::new();
    let notes: Vec<&str> = record
        .findings
        .iter()
        .map(|f| f.text.as_str())
        .filter(|l| seen.insert(without_coordinates(l)))
        .take(10)
        .collect();
    notes.join("\n")
}

/// A report line with its `block (…)` and `thread (…)` coordinates taken out.
fn without_coordinates(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = ["block (", "thread ("]
        .iter()
        .filter_map(|k| rest.find(k).map(|i| i + k.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = rest[at..].find(')').map_or("", |close| &rest[at + close..]);
    }
    out.push_str(rest);
    out
}

/// Reads why a process that did not report ended.
fn cause_of(status: i32, output: &str) -> DeathCause {
    if output.contains("has overflowed its stack") {
        return DeathCause::StackOverflow;
    }
    if output.contains("memory allocation of") && output.contains("failed") {
        return DeathCause::OutOfMemory;
    }
    if libc::WIFSIGNALED(status) {
        return DeathCause::Signal(libc::WTERMSIG(status));
    }
    DeathCause::Exited(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    })
}

/// The last few lines the worker printed, stderr first, trimmed for a report.
fn tail_of(stderr: &str, stdout: &str) -> String {
    let mut text = stderr.to_string();
    if !stdout.trim().is_empty() {
        text.push_str(stdout);
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(5);
    lines[start..]
        .iter()
        .map(|l| {
            let l = l.trim_end();
            if l.chars().count() > 200 {
                let cut: String = l.chars().take(200).collect();
                format!("{cut}…")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::{read_report, without_coordinates, Checks, REPORT_BYTES};
    use crate::protocol::{DeviceWork, EmulatorRecord, Finding, Outcome};

    /// A checked run counts as checked only on a record that shows it: present, asked for
    /// checked builds, every accepted launch ended and none of them ran a plain kernel, and at
    /// least the launches the report counts. Its first race is the verdict.
    #[test]
    fn a_checked_run_is_clean_only_on_a_record_that_covers_every_launch() {
        let products = |launches| Outcome::Products {
            outputs: Vec::new(),
            panic: None,
            error: None,
            device_work: Some(DeviceWork {
                launches,
                ..DeviceWork::default()
            }),
            case_launches: Vec::new(),
            launch_geometry: Vec::new(),
            replays: Vec::new(),
        };
        let good = EmulatorRecord {
            checked: true,
            compiled_outside: true,
            accepted: 3,
            checked_runs: 2,
            skipped: 1,
            ..EmulatorRecord::default()
        };
        assert_eq!(
            Checks::of(false, false, None, &products(1)),
            Checks::NotAsked
        );
        assert_eq!(
            Checks::of(false, true, None, &products(1)),
            Checks::NotAsked
        );
        assert_eq!(
            Checks::of(true, true, Some(&good), &products(3)),
            Checks::Clean
        );
        let unproven = |record: Option<&EmulatorRecord>, launches| match Checks::of(
            true,
            true,
            record,
            &products(launches),
        ) {
            Checks::Unproven(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(unproven(None, 0).contains("no record"));
        let compiled_inside = EmulatorRecord {
            compiled_outside: false,
            ..good.clone()
        };
        assert!(unproven(Some(&compiled_inside), 0).contains("kernel compiler"));
        let plain_build = EmulatorRecord {
            checked: false,
            ..good.clone()
        };
        assert!(unproven(Some(&plain_build), 0).contains("not asked"));
        let cut_short = EmulatorRecord {
            accepted: 4,
            ..good.clone()
        };
        assert!(unproven(Some(&cut_short), 0).contains("covers 3 of the 4"));
        let unchecked = EmulatorRecord {
            accepted: 4,
            plain_runs: 1,
            ..good.clone()
        };
        assert!(unproven(Some(&unchecked), 0).contains("1 launch ran a kernel built without"));
        let confined_only = EmulatorRecord {
            accepted: 4,
            confined_runs: 1,
            ..good.clone()
        };
        assert!(unproven(Some(&confined_only), 0).contains("1 launch ran a kernel built without"));
        assert!(unproven(Some(&good), 5).contains("counts 5 launches and the record 3"));
        let raced = EmulatorRecord {
            findings: vec![
                Finding {
                    kind: "fault".into(),
                    text: "a fault".into(),
                },
                Finding {
                    kind: "lockstep".into(),
                    text: "relies on implicit warp lockstep".into(),
                },
            ],
            ..good.clone()
        };
        assert_eq!(
            Checks::of(true, true, Some(&raced), &products(1)),
            Checks::Race("relies on implicit warp lockstep".into())
        );
    }

    /// A run on the emulator that was not checked (a timed run) counts only on a record that
    /// shows every launch confined to device memory (or checked): no record, a record of an
    /// emulator not asked to confine, one that does not cover every launch, or one launch of
    /// a plain kernel each fail it. A race found there is not its concern.
    #[test]
    fn a_timed_run_on_the_emulator_counts_only_on_a_record_that_shows_it_confined() {
        let outcome = Outcome::Products {
            outputs: Vec::new(),
            panic: None,
            error: None,
            device_work: None,
            case_launches: Vec::new(),
            launch_geometry: Vec::new(),
            replays: Vec::new(),
        };
        let good = EmulatorRecord {
            confined: true,
            compiled_outside: true,
            accepted: 3,
            confined_runs: 2,
            skipped: 1,
            ..EmulatorRecord::default()
        };
        let of = |record: Option<&EmulatorRecord>| Checks::of(true, false, record, &outcome);
        assert_eq!(of(Some(&good)), Checks::Confined);
        let unconfined = |record: Option<&EmulatorRecord>| match of(record) {
            Checks::Unconfined(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(unconfined(None).contains("no record"));
        let compiled_inside = EmulatorRecord {
            compiled_outside: false,
            ..good.clone()
        };
        assert!(unconfined(Some(&compiled_inside)).contains("kernel compiler"));
        let plain_emulator = EmulatorRecord {
            confined: false,
            ..good.clone()
        };
        assert!(unconfined(Some(&plain_emulator)).contains("not asked for confined"));
        let cut_short = EmulatorRecord {
            accepted: 4,
            ..good.clone()
        };
        assert!(unconfined(Some(&cut_short)).contains("covers 3 of the 4"));
        let one_plain = EmulatorRecord {
            accepted: 4,
            plain_runs: 1,
            ..good.clone()
        };
        assert!(unconfined(Some(&one_plain)).contains("1 launch ran a kernel built without"));
        // Checked launches are confined too.
        let checked = EmulatorRecord {
            checked: true,
            confined: false,
            confined_runs: 0,
            checked_runs: 2,
            ..good.clone()
        };
        assert_eq!(of(Some(&checked)), Checks::Confined);
    }

    /// What a worker may leave in its report's place: a named pipe (the supervisor once
    /// waited on one forever), a link to a file elsewhere, a file over the bound (sparse: it
    /// is never read). Each is refused at once; a plain file is read.
    #[test]
    fn a_report_is_a_plain_bounded_file_read_without_waiting() {
        let dir = tempfile::tempdir().expect("temp dir");
        let plain = dir.path().join("report");
        std::fs::write(&plain, b"0\n{}").expect("write");
        assert_eq!(read_report(&plain, 4).expect("a plain report"), b"0\n{}");
        let started = std::time::Instant::now();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("a C string");
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let refused = read_report(&fifo, 4).expect_err("a named pipe");
        assert!(refused.contains("other than a plain file"), "{refused}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&plain, &link).expect("symlink");
        let refused = read_report(&link, 4).expect_err("a link");
        assert!(refused.contains("other than a plain file"), "{refused}");
        let huge = dir.path().join("huge");
        std::fs::File::create(&huge)
            .and_then(|f| f.set_len(REPORT_BYTES + 1))
            .expect("a sparse file");
        let refused = read_report(&huge, u64::MAX).expect_err("over the ceiling");
        assert!(refused.contains("more than a right answer"), "{refused}");
        let refused = read_report(&plain, 3).expect_err("over the item's bound");
        assert!(
            refused.contains("4 bytes") && refused.contains("3 at most"),
            "{refused}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn reports_differing_only_in_coordinates_are_the_same() {
        let a = "gpu-labs emulator: kernel `k` block (2,0,0) thread (0,15,0) wrote 4 bytes";
        let b = "gpu-labs emulator: kernel `k` block (0,1,0) thread (3,1,0) wrote 4 bytes";
        assert_eq!(without_coordinates(a), without_coordinates(b));
        assert_eq!(
            without_coordinates(a),
            "gpu-labs emulator: kernel `k` block () thread () wrote 4 bytes"
        );
    }
}
