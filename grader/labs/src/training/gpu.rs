//! The training lab's GPU items, worker side: the student's GPU model, loader, epoch and timer
//! run on a stream the grader opens (a real GPU or the emulator), on the same inputs the CPU
//! items use. Between the harness's marks the grader counts the device work, watches where the
//! returned values came from, and queues its own GPU work for the synchronization check.

use super::inputs;
use super::kinds::{
    sent_layer, sent_layers, GpuSetup, GpuSpeed, Kind, SentGpu, SentLayer, StepWork,
};
use super::{t, EpochSetup, Layers, Marks, Net, Submission};
use cudarc::driver::{CudaEvent, CudaStream};
use grader_worker::gpu::busy::{self, Busy, MIN_DEVICE_MS, TIMER_SAMPLES};
use grader_worker::gpu::student::{describe, open_stream, GpuResult};
use grader_worker::gpu::{counters, replay};
use grader_worker::protocol::{DeviceWork, GpuTimerSample, LabOutcome, Matrix, Outcome, WorkOrder};
use grader_worker::serve::guarded;
use grader_worker::stopwatch::{Checkpoint, Checkpoints};
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::Arc;

/// The most examples the timer's epoch is grown to (MNIST's training set).
const MAX_TIMED_EXAMPLES: usize = 60_000;

/// Runs one GPU item of the training lab.
pub fn run(
    lab: &Submission,
    order: &WorkOrder,
    kind: &Kind,
    checkpoints: &mut Checkpoints,
) -> Result<Outcome, String> {
    let (seed, item) = (order.seed, order.item.as_str());
    if let Kind::GpuTimer(s) = kind {
        return Ok(timer(lab, order, s, checkpoints));
    }
    if let Kind::GpuSpeedup(s) = kind {
        return speed(lab, order, s, checkpoints);
    }
    let stream = match open_stream() {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::GpuUnavailable(e)),
    };
    let sent = match kind {
        Kind::GpuTransfer => transfer(lab, seed, item, &stream),
        Kind::GpuLoader(c) => loader(lab, seed, item, &c.cases, &stream),
        Kind::GpuEpoch(s) => {
            let sent = epoch(seed, item, s, &stream, lab.gpu_epoch);
            return Ok(match sent {
                Ok(sent) => {
                    let diverged = match &sent {
                        SentGpu::Epoch { layers, .. } => {
                            first_divergence(lab, order, s, &stream, layers)
                        }
                        _ => None,
                    };
                    let sent = GpuSent { sent, diverged };
                    Outcome::Lab(LabOutcome::of(&sent)?)
                }
                Err(outcome) => *outcome,
            });
        }
        Kind::GpuTrainOn(s) => train_on(lab, seed, item, s, &stream),
        _ => return Err("not a GPU kind of the training lab".into()),
    };
    Ok(match sent {
        Ok(sent) => GpuSent::alone(sent)?,
        Err(outcome) => *outcome,
    })
}

/// What a GPU item sends back: its kind's report and, for a GPU epoch whose parameters end
/// elsewhere than the student's own CPU epoch's, the first batch where they parted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GpuSent {
    /// The kind's report.
    pub sent: SentGpu,
    /// The first step the GPU took otherwise than the CPU, where one was found.
    #[serde(default)]
    pub diverged: Option<Diverged>,
}

impl GpuSent {
    /// The outcome of a kind that sends its report with no divergence.
    fn alone(sent: SentGpu) -> Result<Outcome, String> {
        LabOutcome::of(&GpuSent {
            sent,
            diverged: None,
        })
        .map(Outcome::Lab)
    }
}

/// The first batch of a GPU epoch whose step, taken alone from the GPU epoch's own
/// parameters so far, differs from the student's CPU epoch (`train_epoch` with `Sgd`) on the
/// same batch from the same parameters: what the supervisor measures a kernel's mistake on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Diverged {
    /// The batch, counted from 0 in the epoch's order.
    pub batch: usize,
    /// The layers before that batch, gradients included (the GPU's own path so far).
    pub before: Vec<SentLayer>,
    /// The layers after the GPU's step on that batch alone.
    pub after: Vec<SentLayer>,
}

/// A step differs when its parameters end more than this share of the CPU step's movement
/// away from the CPU's: far above an f32 step's rounding (1e-6), far below a kernel's mistake.
const STEP_DIFFERS: f64 = 0.05;

/// How far `got`'s weights and biases are from `expected`'s, as a share of how far
/// `expected`'s are from `start`'s (infinite for another shape or a value that is not a
/// number).
fn share_off(start: &Layers, expected: &Layers, got: &Layers) -> f64 {
    let (mut off, mut moved) = (0.0f64, 0.0f64);
    for ((s, e), g) in start.iter().zip(expected).zip(got) {
        if g.weight.dim() != e.weight.dim() || g.bias.len() != e.bias.len() {
            return f64::INFINITY;
        }
        let values = |l: &super::Layer| {
            l.weight
                .iter()
                .chain(&l.bias)
                .copied()
                .collect::<Vec<f32>>()
        };
        for ((s, e), g) in values(s).into_iter().zip(values(e)).zip(values(g)) {
            off += (f64::from(g) - f64::from(e)).powi(2);
            moved += (f64::from(e) - f64::from(s)).powi(2);
        }
    }
    if off.is_finite() {
        (off / moved.max(1e-30)).sqrt()
    } else {
        f64::INFINITY
    }
}

/// Where a GPU epoch that ends away from the student's CPU epoch (the grader's model, the
/// student's `train_epoch` and `Sgd`) first parted from it: each batch stepped alone on both,
/// from the GPU's parameters so far. `None` where they agree, or the CPU epoch is not there
/// to compare with (a panic), or a step fails.
fn first_divergence(
    lab: &Submission,
    order: &WorkOrder,
    s: &GpuSetup,
    stream: &Arc<CudaStream>,
    sent: &[SentLayer],
) -> Option<Diverged> {
    let data = epoch_inputs(order.seed, &order.item, s);
    let after = layers_of(sent)?;
    let (_, cpu) = guarded(None, || (lab.sgd_epoch)(data.setup(s.model, s.lr))).ok()?;
    if share_off(&data.layers, &cpu, &after) <= STEP_DIFFERS / 50.0 {
        return None;
    }
    let mut now = data.layers.clone();
    for (batch, indices) in data.order.iter().enumerate() {
        let one = std::slice::from_ref(indices);
        let setup = |layers: Layers| EpochSetup {
            batches: one,
            layers,
            ..data.setup(s.model, s.lr)
        };
        let (_, cpu) = guarded(None, || (lab.sgd_epoch)(setup(now.clone()))).ok()?;
        let (_, gpu) = called(None, || {
            (lab.gpu_epoch)(stream, setup(now.clone()), &mut Unwatched)
        })
        .ok()?;
        if share_off(&now, &cpu, &gpu) > STEP_DIFFERS {
            return Some(Diverged {
                batch,
                before: sent_layers(&now),
                after: sent_layers(&gpu),
            });
        }
        now = gpu;
    }
    None
}

/// Sent layers back as layers (the worker's own report, so only a malformed one fails).
fn layers_of(sent: &[SentLayer]) -> Option<Layers> {
    let layer = |l: &SentLayer| -> Option<super::Layer> {
        let row = |m: &Matrix| {
            m.to_array()
                .map(|a| a.iter().copied().collect::<ndarray::Array1<f32>>())
        };
        Some(super::Layer {
            weight: l.weight.to_array()?,
            bias: row(&l.bias)?,
            weight_grad: l.weight_grad.to_array()?,
            bias_grad: row(&l.bias_grad)?,
        })
    };
    match sent {
        [a, b] => Some([layer(a)?, layer(b)?]),
        _ => None,
    }
}

/// The inputs of a GPU epoch item (`s`'s model, examples, batches and hidden width), the
/// same in the worker and the supervisor.
pub fn epoch_inputs(seed: u64, item: &str, s: &GpuSetup) -> inputs::Epoch {
    inputs::epoch(seed, item, s.model, s.examples, s.batch_size, s.hidden)
}

/// The outcome that ends an item early: a student call's panic or GPU error.
type Ended = Box<Outcome>;

/// A student call's result, or the outcome that ends the item.
fn called<T>(case: Option<usize>, f: impl FnOnce() -> GpuResult<T>) -> Result<T, Ended> {
    match guarded(case, f) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Box::new(Outcome::Failed(describe(e.as_ref())))),
        Err(p) => Err(Box::new(Outcome::Panicked(p))),
    }
}

/// The f32 bits of the layers' parameters (weights and biases): what an epoch changes and
/// what the epoch items grade (the gradients after an epoch are `to_host`'s to bring back,
/// and `gpu_to_device`'s to grade).
fn parameter_bits(layers: &Layers) -> Vec<u32> {
    layers
        .iter()
        .flat_map(|l| l.weight.iter().chain(&l.bias))
        .map(|v| v.to_bits())
        .collect()
}

/// The f32 bits of every parameter and gradient of the layers.
fn bits(layers: &Layers) -> Vec<u32> {
    layers
        .iter()
        .flat_map(|l| {
            l.weight
                .iter()
                .chain(&l.bias)
                .chain(&l.weight_grad)
                .chain(&l.bias_grad)
        })
        .map(|v| v.to_bits())
        .collect()
}

fn transfer(
    lab: &Submission,
    seed: u64,
    item: &str,
    stream: &Arc<CudaStream>,
) -> Result<SentGpu, Ended> {
    let mut out = Vec::new();
    for (case, net) in [Net::SimpleNn, Net::Mlp].into_iter().enumerate() {
        let layers = inputs::layers(seed, item, case, net, true);
        counters::provenance_window(true);
        let back = called(Some(case), || (lab.gpu_round_trip)(stream, net, layers));
        let not_copied_back = match &back {
            Ok(back) => counters::provenance(&bits(back)).map(|(missing, _)| missing),
            Err(_) => None,
        };
        counters::provenance_window(false);
        out.push((sent_layers(&back?), not_copied_back));
    }
    Ok(SentGpu::Transfer(out))
}

fn loader(
    lab: &Submission,
    seed: u64,
    item: &str,
    cases: &[[usize; 2]],
    stream: &Arc<CudaStream>,
) -> Result<SentGpu, Ended> {
    let mut out = Vec::new();
    for (case, &[examples, batch_size]) in cases.iter().enumerate() {
        let (x, labels, order) = loader_case(seed, item, case, examples, batch_size);
        let batches = called(Some(case), || {
            (lab.gpu_batches)(stream, &x, &labels, &order)
        })?;
        out.push(
            batches
                .iter()
                .map(|(rows, labels)| (Matrix::from_array(rows), labels.clone()))
                .collect(),
        );
    }
    Ok(SentGpu::Batches(out))
}

/// A loader case's data and batch order: synthetic digits, shuffled batches.
pub fn loader_case(
    seed: u64,
    item: &str,
    case: usize,
    examples: usize,
    batch_size: usize,
) -> (Array2<f32>, Vec<usize>, Vec<Vec<usize>>) {
    let set = inputs::dataset(seed, &format!("{item}/{case}"), Net::Mlp, examples, "train");
    let order = super::reference::batches(
        examples,
        batch_size,
        &mut super::rng_for(seed, item, case, "order"),
    );
    (inputs::inputs_f32(&set), set.labels, order)
}

/// The emulator's counts at a mark: device work, and bytes moved each way.
type Counts = (Option<DeviceWork>, Option<(u64, u64)>);

/// Marks that count device work and open a provenance window.
#[derive(Default)]
struct Watch {
    before: Option<Counts>,
    work: Option<(DeviceWork, (u64, u64))>,
}

impl Marks for Watch {
    fn before(&mut self) -> Result<(), String> {
        counters::provenance_window(true);
        // The replay's log, from here to the end of the call: the data set and the model are
        // on the device by now, in the memory the log notes as it opens.
        replay::log(true);
        self.before = Some((counters::read(), counters::transfers()));
        Ok(())
    }

    fn after(&mut self) -> Result<(), String> {
        if let Some((work, Some((up, down)))) = self.before.take() {
            let moved = counters::transfers().map(|(u, d)| (u - up.min(u), d - down.min(d)));
            if let (Some(work), Some(moved)) = (counters::since(work), moved) {
                self.work = Some((work, moved));
            }
        }
        Ok(())
    }
}

/// One epoch of the student's on the GPU (`train_epoch_gpu`, or `train_on`'s GPU branch),
/// watched between the marks.
fn epoch(
    seed: u64,
    item: &str,
    s: &GpuSetup,
    stream: &Arc<CudaStream>,
    student: super::GpuEpochFn,
) -> Result<SentGpu, Ended> {
    let data = epoch_inputs(seed, item, s);
    let mut watch = Watch::default();
    let result = called(None, || {
        student(stream, data.setup(s.model, s.lr), &mut watch)
    });
    // The epoch again on the emulator with the inputs' values moved (`replayed_epoch` in the
    // judge checks that the parameters followed them).
    let replayed = match &result {
        Ok((_, after)) => replay::run(
            &replaced_inputs(&data, s.lr),
            replay::Inputs::UploadedAndInMemory,
            replayed_values(after).iter(),
        ),
        Err(_) => None,
    };
    replay::log(false);
    let provenance = match &result {
        Ok((_, after)) => {
            let after = parameter_bits(after);
            let changed: Vec<u32> = after
                .iter()
                .zip(parameter_bits(&data.layers))
                .filter(|(now, then)| **now != *then)
                .map(|(now, _)| *now)
                .collect();
            let all = counters::provenance(&after);
            counters::provenance(&changed)
                .zip(all)
                .map(|((_, up), (missing, _))| (changed.len() as u64, up, missing))
        }
        Err(_) => None,
    };
    counters::provenance_window(false);
    let (loss, after) = result?;
    let work = watch.work.zip(provenance).map(
        |((work, (uploaded, copied_back)), (changed, changed_uploaded, not_copied_back))| {
            StepWork {
                launches: work.launches,
                blas_calls: work.blas_calls,
                uploaded,
                copied_back,
                changed,
                changed_uploaded,
                not_copied_back,
                replay: replayed,
            }
        },
    );
    Ok(SentGpu::Epoch {
        loss: loss.to_bits(),
        layers: after.iter().map(sent_layer).collect(),
        work,
    })
}

/// The values a GPU epoch's replay replaces (through φ: `grader_worker::gpu::replay`): the
/// inputs', less the starting parameters', the learning rate, one and zero, so that a word
/// of those is never touched. The same in the worker and the judge.
pub fn replaced_inputs(epoch: &inputs::Epoch, lr: f32) -> HashSet<u32> {
    let kept: Vec<f32> = epoch
        .layers
        .iter()
        .flat_map(|l| l.weight.iter().chain(&l.bias))
        .copied()
        .chain([lr, 1.0, -1.0])
        .collect();
    replay::mapped_values(epoch.x.iter(), kept.iter())
}

/// The returned values whose replayed twins a GPU epoch's replay is asked for: each layer's
/// weights (row by row), then its bias. The same order in the worker and the judge.
pub fn replayed_values(layers: &Layers) -> Vec<f32> {
    layers
        .iter()
        .flat_map(|l| l.weight.iter().chain(&l.bias))
        .copied()
        .collect()
}

/// `train_on`'s GPU branch between the marks, then the same epoch as the branch is documented
/// (the harness's `to_device`, loader, `train_epoch_gpu` and `to_host`), unwatched: what the
/// branch must give, so that `train_on_gpu` grades the branch and not the epoch again.
fn train_on(
    lab: &Submission,
    seed: u64,
    item: &str,
    s: &GpuSetup,
    stream: &Arc<CudaStream>,
) -> Result<SentGpu, Ended> {
    let SentGpu::Epoch { loss, layers, work } = epoch(seed, item, s, stream, lab.train_on_gpu)?
    else {
        return Err(Box::new(Outcome::Failed(t!("gpu-unexpected-report"))));
    };
    let data = epoch_inputs(seed, item, s);
    let direct = called(None, || {
        (lab.gpu_epoch)(stream, data.setup(s.model, s.lr), &mut Unwatched)
    })
    .ok()
    .map(|(loss, after)| (loss.to_bits(), sent_layers(&after)));
    Ok(SentGpu::TrainOn {
        loss,
        layers,
        work,
        direct,
    })
}

/// Marks that watch nothing: for a run the grader only reads the result of.
struct Unwatched;

impl Marks for Unwatched {
    fn before(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn after(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// Marks for the synchronization check: before the call, the grader queues long device work
/// on the stream and records events around it; after, another event. In `grow` mode it only
/// measures the call's device time.
struct TimerMarks<'a> {
    stream: &'a Arc<CudaStream>,
    busy: &'a mut Busy,
    checkpoints: &'a mut Checkpoints,
    queue: bool,
    events: Vec<CudaEvent>,
}

impl TimerMarks<'_> {
    fn record(&mut self) -> Result<(), String> {
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let event = self
            .stream
            .record_event(timing)
            .map_err(|e| e.to_string())?;
        self.events.push(event);
        Ok(())
    }

    /// Milliseconds between two recorded events.
    fn between(&self, from: usize, to: usize) -> Result<f64, String> {
        match (self.events.get(from), self.events.get(to)) {
            (Some(a), Some(b)) => a.elapsed_ms(b).map(f64::from).map_err(|e| e.to_string()),
            _ => Err(t!("timing-event-missing")),
        }
    }
}

impl Marks for TimerMarks<'_> {
    fn before(&mut self) -> Result<(), String> {
        self.events.clear();
        if self.queue {
            self.record()?;
            self.busy.queue_before_call()?;
        } else {
            self.stream.synchronize().map_err(|e| e.to_string())?;
        }
        self.record()?;
        if self.queue {
            self.checkpoints.stop(Checkpoint::CallStart);
        }
        Ok(())
    }

    fn after(&mut self) -> Result<(), String> {
        // Recorded before the stop at `CallEnd`: after it, the stop's own latency (the
        // supervisor's wake-up, ~0.3 ms on an H200) would count as device time the student's
        // clock never saw.
        let recorded = self.record();
        if self.queue {
            self.checkpoints.stop(Checkpoint::CallEnd);
        }
        recorded
    }
}

/// The synchronization check of `time_gpu_epoch`: the epoch is grown until it keeps the device
/// busy for [`MIN_DEVICE_MS`]; then each timed call comes right after the grader's own queued
/// work.
fn timer(
    lab: &Submission,
    order: &WorkOrder,
    s: &GpuSetup,
    checkpoints: &mut Checkpoints,
) -> Outcome {
    let (seed, item) = (order.seed, order.item.as_str());
    let (stream, mut busy) = match busy::set_up(order.backend) {
        Ok(ready) => ready,
        Err(e) => return Outcome::GpuUnavailable(t!("gpu-setup-failed", error = e)),
    };
    match timer_samples(lab, seed, item, s, checkpoints, &stream, &mut busy) {
        Ok(Ok(sent)) => GpuSent::alone(sent).unwrap_or_else(Outcome::Failed),
        Ok(Err(outcome)) => *outcome,
        // From the first student call on, a GPU error is the student's: a faulting kernel
        // leaves the context broken, and the grader's next call is the first to hear of it.
        Err(e) => Outcome::Failed(t!(
            "gpu-error-after",
            function = "time_gpu_epoch",
            error = e
        )),
    }
}

fn timer_samples(
    lab: &Submission,
    seed: u64,
    item: &str,
    s: &GpuSetup,
    checkpoints: &mut Checkpoints,
    stream: &Arc<CudaStream>,
    busy: &mut Busy,
) -> Result<Result<SentGpu, Ended>, String> {
    let mut examples = s.examples;
    let data = loop {
        let data = inputs::epoch(seed, item, s.model, examples, s.batch_size, s.hidden);
        let mut marks = TimerMarks {
            stream,
            busy: &mut *busy,
            checkpoints: &mut *checkpoints,
            queue: false,
            events: Vec::new(),
        };
        if let Err(outcome) = called(None, || {
            (lab.time_gpu_epoch)(stream, data.setup(s.model, s.lr), &mut marks)
        }) {
            return Ok(Err(outcome));
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        let device_ms = marks.between(0, 1)?;
        if device_ms >= MIN_DEVICE_MS || examples * 2 > MAX_TIMED_EXAMPLES {
            break data;
        }
        examples *= 2;
    };
    let (mut samples, mut losses, mut queued_ms) = (Vec::new(), Vec::new(), 0.0f64);
    for _ in 0..TIMER_SAMPLES {
        let mut marks = TimerMarks {
            stream,
            busy: &mut *busy,
            checkpoints: &mut *checkpoints,
            queue: true,
            events: Vec::new(),
        };
        let (loss, reported) = match called(None, || {
            (lab.time_gpu_epoch)(stream, data.setup(s.model, s.lr), &mut marks)
        }) {
            Ok(done) => done,
            Err(outcome) => return Ok(Err(outcome)),
        };
        stream.synchronize().map_err(|e| e.to_string())?;
        if marks.events.len() != 3 {
            return Err(t!("timed-call-not-marked"));
        }
        queued_ms = queued_ms.max(marks.between(0, 1)?);
        samples.push(GpuTimerSample {
            reported_ms: reported.as_secs_f64() * 1e3,
            device_ms: marks.between(1, 2)?,
        });
        losses.push(loss.to_bits());
    }
    // What the student's own epoch gives on the same data: the timer is charged for timing
    // and for running that epoch, not again for the epoch's mistakes.
    let direct = called(None, || {
        (lab.gpu_epoch)(stream, data.setup(s.model, s.lr), &mut Unwatched)
    })
    .ok()
    .map(|(loss, after)| (loss.to_bits(), after != data.layers));
    stream.synchronize().map_err(|e| e.to_string())?;
    Ok(Ok(SentGpu::Timer {
        samples,
        losses,
        queued_ms,
        examples,
        direct,
    }))
}

/// The speed item's data: synthetic digits, the wider MLP's starting layers, the batch order.
pub fn speed_data(
    seed: u64,
    item: &str,
    s: &GpuSpeed,
) -> (Array2<f32>, Vec<usize>, Layers, Vec<Vec<usize>>) {
    let set = inputs::dataset(seed, item, Net::Mlp, s.examples, "train");
    let layers = [
        inputs::layer(seed, item, 0, "layer1", (784, s.hidden), false),
        inputs::layer(seed, item, 0, "layer2", (s.hidden, 10), false),
    ];
    let order = super::reference::batches(
        s.examples,
        s.batch_size,
        &mut super::rng_for(seed, item, 0, "order"),
    );
    (inputs::inputs_f32(&set), set.labels, layers, order)
}

/// Marks for a timed GPU epoch: the whole context drained before the supervisor's clock
/// starts and again before it stops, so the bracket holds exactly the student's epoch.
struct SpeedMarks<'a> {
    stream: &'a Arc<CudaStream>,
    checkpoints: &'a mut Checkpoints,
}

impl Marks for SpeedMarks<'_> {
    fn before(&mut self) -> Result<(), String> {
        self.stream
            .context()
            .synchronize()
            .map_err(|e| e.to_string())?;
        self.checkpoints.stop(Checkpoint::CallStart);
        Ok(())
    }

    fn after(&mut self) -> Result<(), String> {
        self.stream
            .context()
            .synchronize()
            .map_err(|e| e.to_string())?;
        self.checkpoints.stop(Checkpoint::CallEnd);
        Ok(())
    }
}

/// The speed item's runs, each between checkpoints the supervisor times: in the yardstick
/// worker the grader's CPU epoch (it never calls the submission), otherwise the student's GPU
/// epoch from the same start. Each run's mean loss is sent back to be checked.
fn speed(
    lab: &Submission,
    order: &WorkOrder,
    s: &GpuSpeed,
    checkpoints: &mut Checkpoints,
) -> Result<Outcome, String> {
    if order.yardstick {
        return speed_yardstick(order, s, checkpoints);
    }
    let (x, labels, layers, batches) = speed_data(order.seed, &order.item, s);
    let mut losses = Vec::with_capacity(s.samples);
    let stream = match open_stream() {
        Ok(s) => s,
        Err(e) => return Ok(Outcome::GpuUnavailable(e)),
    };
    for _ in 0..s.samples {
        let setup = EpochSetup {
            net: Net::Mlp,
            layers: layers.clone(),
            lr: s.lr,
            x: &x,
            labels: &labels,
            batches: &batches,
        };
        let mut marks = SpeedMarks {
            stream: &stream,
            checkpoints: &mut *checkpoints,
        };
        match called(None, || (lab.gpu_epoch)(&stream, setup, &mut marks)) {
            Ok((loss, _)) => losses.push(loss.to_bits()),
            Err(outcome) => return Ok(*outcome),
        }
    }
    speed_sent(losses)
}

/// The timed runs' mean losses (as bits) sent back.
fn speed_sent(losses: Vec<u32>) -> Result<Outcome, String> {
    GpuSent::alone(SentGpu::Speed(losses))
}

/// The speed item's baseline runs: the grader's CPU epoch from the same start, each between
/// checkpoints the supervisor times. It needs no submission, so official grading runs it in
/// the grader's own binary ([`super::yardstick_order`]).
pub fn speed_yardstick(
    order: &WorkOrder,
    s: &GpuSpeed,
    checkpoints: &mut Checkpoints,
) -> Result<Outcome, String> {
    let (x, labels, layers, batches) = speed_data(order.seed, &order.item, s);
    let mut losses = Vec::with_capacity(s.samples);
    for _ in 0..s.samples {
        let mut start = layers.clone();
        checkpoints.stop(Checkpoint::CallStart);
        let loss = super::yardstick::mlp_epoch(&mut start, &x, &labels, &batches, s.lr);
        checkpoints.stop(Checkpoint::CallEnd);
        losses.push(loss.to_bits());
    }
    speed_sent(losses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn epoch() -> SentGpu {
        SentGpu::Epoch {
            loss: 1.5f32.to_bits(),
            layers: Vec::new(),
            work: None,
        }
    }

    #[test]
    fn an_epoch_report_carries_its_divergence_and_reads_without_one() {
        let diverged = Diverged {
            batch: 2,
            before: Vec::new(),
            after: Vec::new(),
        };
        let value = serde_json::to_value(GpuSent {
            sent: epoch(),
            diverged: Some(diverged),
        })
        .expect("serializes");
        let back: GpuSent = serde_json::from_value(value).expect("reads back");
        assert_eq!(back.diverged.map(|d| d.batch), Some(2));
        assert!(matches!(back.sent, SentGpu::Epoch { loss, .. } if loss == 1.5f32.to_bits()));
        // Every other kind sends its report alone: it reads with no divergence.
        let Ok(Outcome::Lab(plain)) = GpuSent::alone(epoch()) else {
            panic!("a lab outcome");
        };
        let back: GpuSent = plain.read().expect("reads");
        assert!(back.diverged.is_none());
    }

    #[test]
    fn a_step_is_off_by_its_share_of_the_movement() {
        let layer = |v: f32| super::super::Layer {
            weight: Array2::from_elem((2, 3), v),
            bias: ndarray::Array1::from_elem(2, v),
            weight_grad: Array2::zeros((2, 3)),
            bias_grad: ndarray::Array1::zeros(2),
        };
        let (start, cpu) = ([layer(0.0), layer(0.0)], [layer(1.0), layer(1.0)]);
        assert_eq!(share_off(&start, &cpu, &cpu.clone()), 0.0);
        let off = share_off(&start, &cpu, &[layer(1.1), layer(1.1)]);
        assert!((off - 0.1).abs() < 1e-6, "{off}");
        assert!(share_off(&start, &cpu, &[layer(f32::NAN), layer(1.0)]).is_infinite());
    }
}
