//! What the supervisor and a worker say to each other. The order goes to the worker's stdin;
//! the report comes back in a file whose path only the order names, written whole and renamed
//! into place at the end, so nothing the student prints (stdout, stderr) can pass for a result,
//! and a worker that dies half-way leaves no result at all.

use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The argument that starts a lab's test binary as a worker instead of a supervisor.
pub const WORKER_FLAG: &str = "--grader-worker";

/// One item's work for a worker: what to run and on which inputs (derived from `seed`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkOrder {
    /// The lab the item belongs to, by name (`matmul`): kind labels are a lab's own, so two
    /// labs may both have a `gpu-speedup`.
    #[serde(default)]
    pub lab: String,
    /// The rubric item's id (also salts the inputs).
    pub item: String,
    /// The item's kind, as the rubric names it (its lab reads [`WorkOrder::task`] by it).
    pub kind: String,
    /// The student function to call.
    pub function: String,
    /// The run's seed.
    pub seed: u64,
    /// The lab's part of the order: the item's own keys, as its lab wrote them
    /// (the engine's `KindSpec::task`).
    pub task: serde_json::Value,
    /// Which round of samples this is (speedups sample in rounds): each round and each sample
    /// gets inputs of its own, so a result cannot be remembered from an earlier run.
    pub round: usize,
    /// Where GPU code runs in this worker.
    pub backend: Backend,
    /// A secret for this order: the report is sealed with it, so a report file written by
    /// anything but the worker (student code that found the path) is rejected.
    pub nonce: u64,
    /// Where the worker writes its [`WorkerReport`].
    pub report_path: PathBuf,
    /// The region shared with the supervisor, for checkpoints and timed runs: a file, or
    /// (on Linux) the descriptor of a sealed one in memory the worker was started with.
    pub stopwatch: Option<PathBuf>,
    /// See [`WorkOrder::stopwatch`].
    #[serde(default)]
    pub stopwatch_fd: Option<i32>,
    /// Speed items: run the grader's own baseline instead of the student's function (the
    /// yardstick worker, which never calls the submission).
    pub yardstick: bool,
    /// The most the report may hold, in bytes, set by the supervisor from what a right answer
    /// to this item sends ([`report_bound`]): a worker whose results come to more sends
    /// [`Outcome::TooLarge`] instead, and the supervisor reads no more than this.
    #[serde(default = "unbounded")]
    pub report_bytes: u64,
}

fn unbounded() -> u64 {
    u64::MAX
}

pub use crate::backend::Backend;

impl WorkOrder {
    /// The lab's part of the order read as `T` (the lab's kind type); an order its lab cannot
    /// read is a grader mismatch.
    pub fn task<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(self.task.clone()).map_err(|e| {
            format!(
                "item `{}`: the order's `{}` task is unreadable: {e}",
                self.item, self.kind
            )
        })
    }
}

/// What a worker sends back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Outcome {
    /// `matmul`: the product of each case, in order, up to a panic if one happened.
    Products {
        /// The products of the cases that returned.
        outputs: Vec<Matrix>,
        /// The panic that stopped the remaining cases, if any.
        panic: Option<PanicInfo>,
        /// The error a GPU function returned, which stopped the remaining cases, if any.
        error: Option<String>,
        /// What the GPU function did on the device, where the backend can tell.
        device_work: Option<DeviceWork>,
        /// Where the backend counts launches: the process's launch count when each case
        /// started, and after the last (case `i` made launches `case_launches[i]..[i + 1]`,
        /// numbered as [`LaunchGeometry::number`]). Feedback only.
        #[serde(default)]
        case_launches: Vec<u64>,
        /// The launches' geometry from the emulator's record, set by the supervisor (whatever
        /// a worker puts here is replaced). Feedback only.
        #[serde(default)]
        launch_geometry: Vec<LaunchGeometry>,
        /// On the emulator: each returned case's device work run again with A's values
        /// replaced ([`Replay`]), in case order.
        #[serde(default)]
        replays: Vec<Replay>,
    },
    /// `gpu-timer`: one sample per timed call, with the grader's device measurements.
    GpuTimer(GpuTimerSamples),
    /// `device-select`: what the student's selection chose.
    DeviceChoice {
        /// True when it chose the GPU.
        chose_gpu: bool,
    },
    /// `benchmark`: the times the student's benchmark returned, and what the grader saw of
    /// the work behind them (the CPU function's own runs are timed by the supervisor, between
    /// checkpoints after the call).
    Benchmark {
        /// CPU time reported (ns).
        cpu_ns: u64,
        /// GPU time reported (ns), if any.
        gpu_ns: Option<u64>,
        /// The device work the emulator saw during the call (`None` where it cannot tell).
        #[serde(default)]
        device: Option<DeviceTime>,
        /// The student's GPU timer alone, called by the grader after the benchmark at the
        /// same size, with the device work it saw then: whether a GPU figure far below the
        /// device's time is the timer's own mistake (its item charges it) or the benchmark's.
        #[serde(default)]
        timer_alone: Option<TimerLook>,
    },
    /// The GPU could not be set up in the worker (not the student's fault).
    GpuUnavailable(String),
    /// A GPU function returned an error outside of product cases.
    Failed(String),
    /// Timed items: every run went through the checkpoints, where the supervisor measured and
    /// collected what it needed; nothing else to report.
    Timed,
    /// Student code panicked (`todo!()` included) during case `case`.
    Panicked(PanicInfo),
    /// What a lab's own kinds send back, in the lab's own terms (read by the lab's judge).
    Lab(LabOutcome),
    /// The results came to more bytes than the order allows ([`WorkOrder::report_bytes`]):
    /// a right answer never does, so the worker sends their size instead of them.
    TooLarge {
        /// The size the report would have had (bytes; at least `bound` + 1 when the worker
        /// stopped counting there).
        bytes: u64,
        /// The order's bound.
        bound: u64,
    },
}

/// A lab's own outcome, kept as the JSON text the worker wrote until the lab's judge reads
/// it into its own types ([`LabOutcome::read`]): never parsed into a generic JSON tree, whose
/// nodes cost many times the bytes they were read from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabOutcome(Box<serde_json::value::RawValue>);

impl LabOutcome {
    /// The outcome `sent`, in the lab's own terms.
    pub fn of<T: Serialize>(sent: &T) -> Result<LabOutcome, String> {
        serde_json::value::to_raw_value(sent)
            .map(LabOutcome)
            .map_err(|e| e.to_string())
    }

    /// Reads it back as `T` (the judge's side).
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }
}

impl Outcome {
    /// Cuts every text it carries (panic messages, errors) to at most `bytes`, at a
    /// character, saying how much was left out: the supervisor's copy of what reaches
    /// feedback, whatever the worker sent.
    pub fn clip_texts(&mut self, bytes: usize) {
        match self {
            Outcome::Products { panic, error, .. } => {
                if let Some(p) = panic {
                    p.clip(bytes);
                }
                if let Some(e) = error {
                    clip_text(e, bytes);
                }
            }
            Outcome::Panicked(p) => p.clip(bytes),
            Outcome::GpuUnavailable(e) | Outcome::Failed(e) => clip_text(e, bytes),
            _ => {}
        }
    }
}

/// Cuts `text` to at most `bytes` (at a character), saying how much was left out.
pub fn clip_text(text: &mut String, bytes: usize) {
    if text.len() > bytes {
        *text = clipped(text, bytes);
    }
}

/// At most `bytes` of `text` (cut at a character) in a new string, saying how much was left
/// out: only what is kept is copied.
pub fn clipped(text: &str, bytes: usize) -> String {
    let mut cut = bytes.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut kept = text[..cut].to_string();
    if cut < text.len() {
        kept.push_str(&format!(" … ({} more bytes left out)", text.len() - cut));
    }
    kept
}

/// A panic caught in the worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PanicInfo {
    /// The case being run, when the item has cases.
    pub case: Option<usize>,
    /// The panic message.
    pub message: String,
    /// `file:line` where it panicked, when known.
    pub location: Option<String>,
}

impl PanicInfo {
    /// Cuts its message and location to at most `bytes` each ([`clip_text`]).
    pub fn clip(&mut self, bytes: usize) {
        clip_text(&mut self.message, bytes);
        if let Some(l) = &mut self.location {
            clip_text(l, bytes);
        }
    }

    /// True when the panic is an unfilled `todo!()` / `unimplemented!()`.
    pub fn is_not_implemented(&self) -> bool {
        self.message.starts_with("not yet implemented")
            || self.message.starts_with("not implemented")
    }
}

/// A matrix sent as raw f32 bits, so NaN and infinities survive the trip.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Matrix {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Row-major `f32::to_bits` of every element, sent as one string of 8 hex digits per
    /// element: the supervisor reads a matrix into at most half the bytes it arrived in,
    /// whatever the report holds.
    #[serde(with = "crate::hex_bits")]
    pub bits: Vec<u32>,
}

impl Matrix {
    /// Packs any ndarray matrix (any memory layout) in logical row-major order.
    pub fn from_array(a: &Array2<f32>) -> Self {
        Matrix {
            rows: a.nrows(),
            cols: a.ncols(),
            bits: a.iter().map(|v| v.to_bits()).collect(),
        }
    }

    /// Unpacks into an ndarray matrix, in the memory the bits held (a timer's C is 16 MB);
    /// `None` when the sizes disagree.
    pub fn into_array(self) -> Option<Array2<f32>> {
        let data: Vec<f32> = self.bits.into_iter().map(f32::from_bits).collect();
        Array2::from_shape_vec((self.rows, self.cols), data).ok()
    }

    /// Unpacks into an ndarray matrix; `None` when the sizes disagree.
    pub fn to_array(&self) -> Option<Array2<f32>> {
        let data = self.bits.iter().map(|&b| f32::from_bits(b)).collect();
        Array2::from_shape_vec((self.rows, self.cols), data).ok()
    }
}

/// What the emulator counted while a GPU function ran.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct DeviceWork {
    /// Kernel launches.
    pub launches: u64,
    /// cuBLAS calls that compute (gemm and friends).
    pub blas_calls: u64,
    /// The first case whose returned values were not all copied back from the device or were
    /// uploaded from the host, where the backend can tell (the emulator): see
    /// [`NotFromDevice`].
    #[serde(default)]
    pub not_from_device: Option<NotFromDevice>,
    /// The arithmetic the device did, where the backend can tell (the emulator's checked
    /// runs): see [`Arithmetic`].
    #[serde(default)]
    pub arithmetic: Option<Arithmetic>,
}

/// A case's device work run again by the emulator with every uploaded value of A replaced
/// through a map drawn from a secret key (`crate::gpu::replay`): what the device made of the
/// other inputs, for the supervisor to hold against φ(A)·B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Replay {
    /// Replayed under `key`: for each element of the returned result, in logical order, the
    /// replayed values found where the real run copied that value back (none to
    /// [`Replay::MOST`]), packed by [`Replay::done`].
    Done {
        /// The key of the map.
        key: u64,
        /// How many values each element has, eight 4-bit counts to a word, then the values
        /// (f32 bits), element after element: one hex string on the wire, as a matrix's.
        #[serde(with = "crate::hex_bits")]
        bits: Vec<u32>,
    },
    /// The emulator could not replay: no window was open, a replayed operation faulted, or
    /// no key could be drawn (the emulator's code).
    Failed(i32),
}

impl Replay {
    /// The most replayed values one element may have.
    pub const MOST: usize = 4;

    /// Packs each element's replayed values (each list cut to [`Replay::MOST`]).
    pub fn done(key: u64, candidates: &[Vec<u32>]) -> Replay {
        let mut bits = vec![0u32; candidates.len().div_ceil(8)];
        for (i, found) in candidates.iter().enumerate() {
            bits[i / 8] |= (found.len().min(Self::MOST) as u32) << (4 * (i % 8));
        }
        for found in candidates {
            bits.extend(found.iter().take(Self::MOST));
        }
        Replay::Done { key, bits }
    }

    /// The key and each of `elements` elements' replayed values; `None` when the replay
    /// failed, or its packing does not hold exactly that many elements.
    pub fn candidates(&self, elements: usize) -> Option<(u64, Vec<&[u32]>)> {
        let Replay::Done { key, bits } = self else {
            return None;
        };
        let head = elements.div_ceil(8);
        let counts = bits.get(..head)?;
        let mut rest = &bits[head..];
        let mut out = Vec::with_capacity(elements);
        for i in 0..elements {
            let n = ((counts[i / 8] >> (4 * (i % 8))) & 0xf) as usize;
            if n > Self::MOST || n > rest.len() {
                return None;
            }
            let (found, after) = rest.split_at(n);
            out.push(found);
            rest = after;
        }
        rest.is_empty().then_some((*key, out))
    }
}

/// What the device computed: the bytes its kernels read from device and shared memory (a
/// product of m×k by k×n reads on the order of m·n·k values, whatever its tiling), and the
/// multiply-adds cuBLAS did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arithmetic {
    /// Bytes read by kernels (their own stacks apart).
    pub loaded_bytes: u64,
    /// Multiply-adds computed by cuBLAS.
    pub multiply_adds: u64,
}

/// `benchmark`: bracketed runs of nothing after the call, the supervisor's cost of one bracket.
pub const BENCHMARK_EMPTY_BRACKETS: usize = 3;

/// `benchmark`: bracketed runs of `matmul_fast` after the call, at the benchmark's size, which
/// the supervisor times with its own clock to check the CPU time the benchmark reported.
pub const BENCHMARK_CPU_RUNS: usize = 5;

/// The device work the emulator saw between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceTime {
    /// Kernel launches and cuBLAS computations accepted.
    pub work: u64,
    /// Kernel launches that ran.
    pub runs: u64,
    /// What those runs took on the device, in all (ns).
    pub busy_ns: u64,
}

/// One call of the student's GPU timer by the grader: what it reported and the device work
/// seen during it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerLook {
    /// What the timer returned (ns).
    pub reported_ns: u64,
    /// The device work during the call.
    pub device: DeviceTime,
}

/// A case whose result did not come from the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotFromDevice {
    /// The case.
    pub case: usize,
    /// How many values the result has.
    pub values: u64,
    /// How many were never copied back from device memory during the call.
    pub not_copied_back: u64,
    /// How many were among the values the call uploaded from the host.
    pub uploaded: u64,
}

/// The synchronization check's measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GpuTimerSamples {
    /// The shape `[m, k, n]` timed (the rubric's, grown until the device is busy long enough).
    pub shape: [usize; 3],
    /// How long the grader's own work, queued just before each call, ran on the device (ms).
    pub queued_ms: f64,
    /// One entry per timed call.
    pub samples: Vec<GpuTimerSample>,
    /// C after the last call, checked for correctness.
    pub output: Matrix,
}

/// One call of the student's GPU timer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GpuTimerSample {
    /// What the student's timer returned (ms).
    pub reported_ms: f64,
    /// Device time of the student's work, between the grader's events around the call (ms).
    pub device_ms: f64,
}

/// A fresh secret for an order: std's per-instance random hash keys, which come from the OS.
pub fn fresh_nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

/// The seal of a report body under `nonce` (keyed FNV-1a, 64 bits): computable only with the
/// order's secret.
pub fn seal(nonce: u64, body: &[u8]) -> u64 {
    grader_hot::wire::seal(nonce, body)
}

/// Writes a sealed report: the seal in hex on the first line, then the JSON body.
pub fn sealed_report(nonce: u64, report: &WorkerReport) -> Result<Vec<u8>, serde_json::Error> {
    let body = serde_json::to_vec(report)?;
    let mut out = format!("{:016x}\n", seal(nonce, &body)).into_bytes();
    out.extend_from_slice(&body);
    Ok(out)
}

/// Reads a sealed report; `None` when the seal is missing or wrong (not the worker's writing).
pub fn open_report(nonce: u64, bytes: &[u8]) -> Option<Result<WorkerReport, serde_json::Error>> {
    let newline = bytes.iter().position(|&b| b == b'\n')?;
    let (head, body) = (&bytes[..newline], &bytes[newline + 1..]);
    let claimed = u64::from_str_radix(std::str::from_utf8(head).ok()?, 16).ok()?;
    (claimed == seal(nonce, body)).then(|| serde_json::from_slice(body))
}

/// The file a worker writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerReport {
    /// The item this answers, checked by the supervisor.
    pub item: String,
    /// What happened.
    pub outcome: Outcome,
    /// The emulator's record of the run, where the emulator was loaded: read from the
    /// emulator's memory after the work ended, never from the process's output.
    #[serde(default)]
    pub emulator: Option<EmulatorRecord>,
}

/// What the emulator recorded of a worker's run: whether its kernels were built checked, how
/// each launch it accepted ended, and its findings (races, faults, refusals). The supervisor
/// decides from it whether a checked run really was checked, and what it found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmulatorRecord {
    /// Whether the emulator was asked for checked builds when it loaded.
    pub checked: bool,
    /// Whether the emulator was asked for confined builds (where not checked) when it loaded.
    #[serde(default)]
    pub confined: bool,
    /// Whether the emulator was given the grader's kernel compiler when it loaded (every
    /// kernel of the run then compiled outside the worker's process).
    #[serde(default)]
    pub compiled_outside: bool,
    /// Launches accepted onto a stream.
    pub accepted: u64,
    /// Launches that ran with a checked (race-detecting, confined) module.
    pub checked_runs: u64,
    /// Launches that ran with a confined module (no race check; every access confined to
    /// device memory, shared memory and the thread's own locals).
    #[serde(default)]
    pub confined_runs: u64,
    /// Launches that ran with a plain module.
    pub plain_runs: u64,
    /// Launches dropped unrun after an earlier fault.
    pub skipped: u64,
    /// Findings left out past the emulator's bound.
    pub left_out: u64,
    /// The findings, first of each, in the order they happened.
    pub findings: Vec<Finding>,
    /// The first launches' geometry, in the order accepted (feedback only: a grid too small
    /// for the output is told from it).
    #[serde(default)]
    pub launches: Vec<LaunchGeometry>,
}

/// One launch as the emulator accepted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchGeometry {
    /// Its number among the process's launches, from 0 (the worker's launch counts use the
    /// same numbering).
    pub number: u64,
    /// Blocks along x, y and z.
    pub grid: [u32; 3],
    /// Threads of a block along x, y and z.
    pub block: [u32; 3],
    /// The kernel's name.
    pub kernel: String,
}

impl LaunchGeometry {
    /// Reads `NUMBER GX GY GZ BX BY BZ KERNEL`.
    fn parse(text: &str) -> Option<LaunchGeometry> {
        let mut fields = text.splitn(8, ' ');
        let number = fields.next()?.parse().ok()?;
        let mut dims = [0u32; 6];
        for d in &mut dims {
            *d = fields.next()?.parse().ok()?;
        }
        Some(LaunchGeometry {
            number,
            grid: [dims[0], dims[1], dims[2]],
            block: [dims[3], dims[4], dims[5]],
            kernel: fields.next()?.to_string(),
        })
    }
}

/// One of the emulator's findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// What it is about: `race`, `lockstep`, `uninitialised`, `barrier`, `fault`,
    /// `stream-hazard`, `refused` or `note`.
    pub kind: String,
    /// The emulator's explanation, one line.
    pub text: String,
}

/// The header line of the emulator's record text (`grader/cuda-emulator/src/findings.rs`).
const RECORD_HEADER: &str = "gpu-labs-emulator-record 4";

impl EmulatorRecord {
    /// Cuts every finding's text to at most `bytes` ([`clip_text`]).
    pub fn clip_texts(&mut self, bytes: usize) {
        for finding in &mut self.findings {
            clip_text(&mut finding.kind, bytes);
            clip_text(&mut finding.text, bytes);
        }
        for launch in &mut self.launches {
            clip_text(&mut launch.kernel, bytes);
        }
    }

    /// Reads the record text the emulator gives; `None` when it is not one.
    pub fn parse(text: &str) -> Option<EmulatorRecord> {
        let mut lines = text.lines();
        if lines.next()? != RECORD_HEADER {
            return None;
        }
        let mut record = EmulatorRecord::default();
        for field in lines.next()?.split(' ') {
            let (name, value) = field.split_once('=')?;
            let value: u64 = value.parse().ok()?;
            match name {
                "checked" => record.checked = value == 1,
                "confined" => record.confined = value == 1,
                "compiler" => record.compiled_outside = value == 1,
                "confined_runs" => record.confined_runs = value,
                "accepted" => record.accepted = value,
                "checked_runs" => record.checked_runs = value,
                "plain_runs" => record.plain_runs = value,
                "skipped" => record.skipped = value,
                "left_out" => record.left_out = value,
                _ => return None,
            }
        }
        for line in lines {
            let (kind, text) = line.split_once('\t')?;
            if kind == "launch" {
                record.launches.push(LaunchGeometry::parse(text)?);
                continue;
            }
            record.findings.push(Finding {
                kind: kind.to_string(),
                text: text.to_string(),
            });
        }
        Some(record)
    }

    /// The findings of a kind that fails a checked run (a race, or code relying on warp
    /// lockstep).
    pub fn races(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.kind == "race" || f.kind == "lockstep")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_unpacks_to_what_was_packed_and_nothing_else() {
        let found = vec![vec![1], vec![], vec![2, 3, 4, 5], vec![6, 7], vec![8]];
        let packed = Replay::done(9, &found);
        let (key, back) = packed.candidates(5).expect("unpacks");
        assert_eq!(key, 9);
        assert_eq!(back, found.iter().map(Vec::as_slice).collect::<Vec<_>>());
        // Another element count, a cut or padded packing, a count past the most: refused (an
        // element counted past the last within the same word has none, which fails it).
        assert_eq!(packed.candidates(4), None);
        assert_eq!(packed.candidates(9), None);
        assert_eq!(packed.candidates(6).expect("unpacks").1[5], &[] as &[u32]);
        let Replay::Done { bits, .. } = &packed else {
            unreachable!()
        };
        for bits in [
            bits[..bits.len() - 1].to_vec(),
            [bits.clone(), vec![0]].concat(),
        ] {
            assert_eq!(Replay::Done { key: 9, bits }.candidates(5), None);
        }
        let too_many = Replay::Done {
            key: 9,
            bits: vec![5, 1, 2, 3, 4, 5],
        };
        assert_eq!(too_many.candidates(1), None);
        assert_eq!(Replay::Failed(2).candidates(0), None);
        // Cut to the most.
        let cut = Replay::done(1, &[vec![1, 2, 3, 4, 5, 6]]);
        assert_eq!(
            cut.candidates(1).expect("unpacks").1,
            vec![&[1, 2, 3, 4][..]]
        );
    }

    fn report() -> WorkerReport {
        WorkerReport {
            emulator: None,
            item: "x".into(),
            outcome: Outcome::DeviceChoice { chose_gpu: true },
        }
    }

    #[test]
    fn the_emulators_record_text_is_read_whole_or_not_at_all() {
        let text = "gpu-labs-emulator-record 4\nchecked=1 confined=1 compiler=1 accepted=4 checked_runs=2 \
                    confined_runs=1 plain_runs=0 skipped=1 left_out=4\n\
                    race\tgpu-labs emulator: kernel `k` is a data race: x\n\
                    launch\t0 4 2 1 16 16 1 matmul_tiled\n";
        let record = EmulatorRecord::parse(text).unwrap();
        assert!(record.checked && record.confined && record.compiled_outside);
        assert_eq!(
            (
                record.accepted,
                record.checked_runs,
                record.confined_runs,
                record.skipped,
                record.left_out
            ),
            (4, 2, 1, 1, 4)
        );
        assert_eq!(
            record.launches,
            [LaunchGeometry {
                number: 0,
                grid: [4, 2, 1],
                block: [16, 16, 1],
                kernel: "matmul_tiled".into()
            }]
        );
        assert_eq!(record.findings.len(), 1);
        // An older emulator's record is not read as this one's.
        assert_eq!(
            EmulatorRecord::parse(&text.replace("record 4", "record 3")),
            None
        );
        assert_eq!(
            EmulatorRecord::parse(&text.replace("0 4 2 1 16 16 1", "0 4 2 1 16")),
            None
        );
        assert_eq!(record.races().count(), 1);
        assert_eq!(EmulatorRecord::parse("race\tx\n"), None);
        assert_eq!(
            EmulatorRecord::parse("gpu-labs-emulator-record 4\nchecked=yes\n"),
            None
        );
        assert_eq!(
            EmulatorRecord::parse("gpu-labs-emulator-record 4\nchecked=1\nno tab here\n"),
            None
        );
    }

    #[test]
    fn a_sealed_report_opens_with_its_nonce_only() {
        let bytes = sealed_report(42, &report()).unwrap();
        assert!(matches!(open_report(42, &bytes), Some(Ok(r)) if r.item == "x"));
        assert!(open_report(43, &bytes).is_none());
    }

    #[test]
    fn an_edited_or_unsealed_report_is_rejected() {
        let mut bytes = sealed_report(7, &report()).unwrap();
        let at = bytes.len() - 3;
        bytes[at] ^= 1;
        assert!(open_report(7, &bytes).is_none());
        let plain = serde_json::to_vec(&report()).unwrap();
        assert!(open_report(7, &plain).is_none());
    }
}
