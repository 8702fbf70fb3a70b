//! The training lab's item kinds: their keys in `assignment.toml`, the functions each may
//! exercise, and what a worker sends back for each ([`Sent`]).

use super::{Layer, Net, Opt};
#[cfg(feature = "judge")]
use grader_engine::lab::KindInfo;
#[cfg(feature = "judge")]
use grader_engine::rubric::{read_keys, ItemSpec, KeyError};
use grader_worker::protocol::Matrix;
use grader_worker::task::{SkipPolicy, Tier};
use ndarray::Array1;
use serde::{Deserialize, Serialize};
#[cfg(feature = "judge")]
use std::sync::Arc;

#[cfg(feature = "judge")]
const CASE_KEYS: &[&str] = &["cases"];
#[cfg(feature = "judge")]
const SETUP_KEYS: &[&str] = &["model", "optimizer", "lr", "examples", "batch_size"];
#[cfg(feature = "judge")]
const TRAIN_KEYS: &[&str] = &[
    "model",
    "optimizer",
    "lr",
    "examples",
    "batch_size",
    "epochs",
    "held_out",
];

#[cfg(feature = "judge")]
/// The kinds, as rubrics write them.
pub static KINDS: &[KindInfo] = &[
    KindInfo {
        label: "init",
        keys: CASE_KEYS,
        functions: &["Linear::new"],
    },
    KindInfo {
        label: "forward",
        keys: CASE_KEYS,
        functions: &["Linear::forward"],
    },
    KindInfo {
        label: "backward",
        keys: CASE_KEYS,
        functions: &["Linear::backward"],
    },
    KindInfo {
        label: "elementwise",
        keys: CASE_KEYS,
        functions: &["relu", "relu_backward", "sigmoid"],
    },
    KindInfo {
        label: "loss",
        keys: CASE_KEYS,
        functions: &[
            "bce_loss",
            "bce_grad",
            "cross_entropy",
            "cross_entropy_grad",
        ],
    },
    KindInfo {
        label: "model",
        keys: CASE_KEYS,
        functions: &["SimpleNN", "Mlp"],
    },
    KindInfo {
        label: "optimizer",
        keys: &["lr", "steps"],
        functions: &["Sgd::step", "Adam::step"],
    },
    KindInfo {
        label: "batches",
        keys: CASE_KEYS,
        functions: &["batches"],
    },
    KindInfo {
        label: "epoch",
        keys: SETUP_KEYS,
        functions: &["train_epoch"],
    },
    KindInfo {
        label: "accuracy",
        keys: &["model", "examples"],
        functions: &["accuracy"],
    },
    KindInfo {
        label: "train",
        keys: TRAIN_KEYS,
        functions: &["train"],
    },
    KindInfo {
        label: "device-select",
        keys: &[],
        functions: &["default_device"],
    },
    KindInfo {
        label: "gpu-transfer",
        keys: &[],
        functions: &["GpuModel::to_device"],
    },
    KindInfo {
        label: "gpu-loader",
        keys: CASE_KEYS,
        functions: &["DeviceDataLoader"],
    },
    KindInfo {
        label: "gpu-epoch",
        keys: GPU_KEYS,
        functions: &["train_epoch_gpu"],
    },
    KindInfo {
        label: "gpu-train-on",
        keys: GPU_KEYS,
        functions: &["train_on"],
    },
    KindInfo {
        label: "gpu-timer",
        keys: GPU_KEYS,
        functions: &["time_gpu_epoch"],
    },
    KindInfo {
        label: "cpu-fallback",
        keys: GPU_KEYS,
        functions: &["train_on"],
    },
    KindInfo {
        label: "gpu-speedup",
        keys: SPEED_KEYS,
        functions: &["train_epoch_gpu"],
    },
];

#[cfg(feature = "judge")]
/// Keys of `gpu-speedup`.
const SPEED_KEYS: &[&str] = &[
    "hidden",
    "lr",
    "examples",
    "batch_size",
    "samples",
    "tiers",
    "policy",
];

#[cfg(feature = "judge")]
/// Keys of the GPU epoch kinds (SGD: the GPU step's optimizer).
const GPU_KEYS: &[&str] = &["model", "lr", "examples", "batch_size", "hidden"];

/// One training item's own keys, by kind (also the lab's part of its work order).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    /// `Linear::new`: shapes `[in, out]`; PyTorch's initialisation, reproducible from the seed.
    Init(Cases<2>),
    /// `Linear::forward`: shapes `[batch, in, out]`.
    Forward(Cases<3>),
    /// `Linear::backward`: shapes `[batch, in, out]`; the input's gradient returned, the
    /// layer's accumulated.
    Backward(Cases<3>),
    /// An activation or its backward: shapes `[rows, cols]`.
    Elementwise(Cases<2>),
    /// A loss or its gradient: shapes `[rows, cols]` (one column for BCE); a last case with
    /// extreme values is always added.
    Loss(Cases<2>),
    /// A whole model's forward, loss, backward and zero_grad: batch sizes.
    Model(Cases<1>),
    /// An optimizer's steps against its formula.
    Optimizer(Steps),
    /// Shuffled minibatches: `[n, batch_size]`.
    Batches(Cases<2>),
    /// One epoch from the grader's parameters and batch order.
    Epoch(Setup),
    /// `accuracy` of a model the grader sets up.
    Accuracy(AccuracyKeys),
    /// Full training to a held-out accuracy.
    Train(Training),
    /// `default_device`: the CPU without CUDA or without a GPU, the GPU with one.
    DeviceSelect,
    /// `GpuModel::to_device` then `to_host`, for both models: every tensor back bit for bit,
    /// copied back from the device.
    GpuTransfer,
    /// The `DeviceDataLoader` over synthetic digits: `[examples, batch_size]`.
    GpuLoader(Cases<2>),
    /// One SGD epoch on the GPU from the grader's parameters and batch order.
    GpuEpoch(GpuSetup),
    /// `train_on(&Device::Gpu(..), ..)`: the same epoch through the driver's GPU branch.
    GpuTrainOn(GpuSetup),
    /// The two-sided synchronization check of `time_gpu_epoch`.
    GpuTimer(GpuSetup),
    /// `train_on(&Device::Cpu, ..)`: the same epoch on the CPU, with every GPU hidden.
    CpuFallback(GpuSetup),
    /// One SGD epoch of a wider MLP on the GPU against the grader's CPU epoch (a real GPU
    /// only; elsewhere the rubric's policy).
    GpuSpeedup(GpuSpeed),
}

/// `gpu-speedup` keys: the wider MLP (784 → `hidden` → 10), its epoch, and the speed tiers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpeed {
    /// The hidden layer's width.
    pub hidden: usize,
    /// SGD's learning rate.
    pub lr: f32,
    /// Training examples (synthetic digits).
    pub examples: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// Paired samples (each side's epoch timed this many times).
    #[serde(default = "default_speed_samples")]
    pub samples: usize,
    /// The points earned at each speedup; the highest tier reached counts.
    pub tiers: Vec<Tier>,
    /// What the item scores where no real GPU can measure it.
    #[serde(default)]
    pub policy: SkipPolicy,
}

fn default_speed_samples() -> usize {
    5
}

#[cfg(feature = "judge")]
impl GpuSpeed {
    /// With the emulator posing as a real GPU (the test mode that runs the real-GPU path on
    /// machines without one, where speed figures mean nothing), the timed epochs train a
    /// hidden layer a quarter as wide on a quarter of the examples (never fewer than one
    /// batch): the same path at about 1/16 of the emulated work (the rubric's epoch took 15 s
    /// of a real-GPU kit variant's 20 s). Off that test mode, the rubric's sizes.
    fn posing_size(mut self) -> Self {
        if grader_engine::gpu::emulator_as_real() {
            self.hidden = (self.hidden / 4).max(16);
            self.examples = (self.examples / 4).max(self.batch_size.min(self.examples));
        }
        self
    }

    /// What serde cannot check, for an item worth `points`.
    fn check(&self, points: f64) -> Result<(), KeyError> {
        if self.hidden == 0 || self.hidden > MAX_DIM {
            return Err(KeyError::new(
                "hidden",
                format!("hidden must be 1..={MAX_DIM}"),
            ));
        }
        if !(3..=25).contains(&self.samples) {
            return Err(KeyError::new("samples", "samples must be 3..=25"));
        }
        setup_ok(self.lr, self.examples, self.batch_size)?;
        grader_engine::check::speedup::check_tiers(&self.tiers, points)
    }
}

/// Keys of the GPU epoch kinds: which model and data; the optimizer is SGD.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSetup {
    /// `simple-nn` (on the toy set) or `mlp` (on synthetic digits).
    pub model: Net,
    /// SGD's learning rate.
    pub lr: f32,
    /// Training examples.
    pub examples: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// The hidden layer's width, when not the lesson's (32 for SimpleNN, 128 for the MLP): a
    /// width and batch that no block size divides show a grid rounded down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<usize>,
}

impl GpuSetup {
    /// The same epoch as `epoch` keys name it.
    pub fn as_setup(&self) -> Setup {
        Setup {
            model: self.model,
            optimizer: OptName::Sgd,
            lr: self.lr,
            examples: self.examples,
            batch_size: self.batch_size,
            hidden: self.hidden,
        }
    }
}

/// Keys of kinds that run on a list of shapes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cases<const N: usize> {
    /// The shapes.
    #[serde(with = "serde_arrays")]
    pub cases: Vec<[usize; N]>,
}

#[cfg(feature = "judge")]
impl<const N: usize> Cases<N> {
    /// At least one case, every number within 1..=[`MAX_DIM`].
    fn valid(&self) -> bool {
        !self.cases.is_empty() && self.cases.iter().flatten().all(|&d| d > 0 && d <= MAX_DIM)
    }
}

/// Serde for `Vec<[usize; N]>` with a const `N` (serde derives arrays only up to fixed sizes
/// through generics it cannot name).
mod serde_arrays {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, const N: usize>(
        cases: &[[usize; N]],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let lists: Vec<Vec<usize>> = cases.iter().map(|c| c.to_vec()).collect();
        lists.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<Vec<[usize; N]>, D::Error> {
        let lists = Vec::<Vec<usize>>::deserialize(d)?;
        lists
            .into_iter()
            .map(|l| {
                <[usize; N]>::try_from(l.as_slice()).map_err(|_| {
                    serde::de::Error::custom(format!(
                        "each case is a list of {N} numbers, got {l:?}"
                    ))
                })
            })
            .collect()
    }
}

/// `optimizer` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steps {
    /// The learning rate.
    pub lr: f32,
    /// How many steps (each with new gradients).
    pub steps: usize,
}

/// `epoch` keys: which model, optimizer and data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// `simple-nn` (on the lesson's toy set) or `mlp` (on synthetic digits).
    pub model: Net,
    /// `sgd` or `adam`.
    pub optimizer: OptName,
    /// The learning rate.
    pub lr: f32,
    /// Training examples.
    pub examples: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// The hidden layer's width when a GPU item sets it (not a key of `epoch` items).
    #[serde(skip)]
    pub hidden: Option<usize>,
}

/// `accuracy` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccuracyKeys {
    /// `simple-nn` or `mlp`.
    pub model: Net,
    /// How many examples to score.
    pub examples: usize,
}

/// `train` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Training {
    /// `simple-nn` or `mlp`.
    pub model: Net,
    /// `sgd` or `adam`.
    pub optimizer: OptName,
    /// The learning rate.
    pub lr: f32,
    /// Training examples.
    pub examples: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// Epochs.
    pub epochs: usize,
    /// Held-out examples the supervisor scores the trained model on (said, not graded: the
    /// model and optimizer are the grader's, so how well it learns is theirs and the loop's).
    pub held_out: usize,
}

/// An optimizer as a rubric names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptName {
    /// SGD.
    Sgd,
    /// Adam.
    Adam,
}

impl OptName {
    /// With its learning rate.
    pub fn with(self, lr: f32) -> Opt {
        match self {
            OptName::Sgd => Opt::Sgd(lr),
            OptName::Adam => Opt::Adam(lr),
        }
    }
}

#[cfg(feature = "judge")]
/// Reads one item's own keys (see [`grader_engine::lab::LabInfo::read_item`]).
pub fn read_item(kind: &str, keys: toml::Table, points: f64) -> Result<ItemSpec, KeyError> {
    let kind = match kind {
        "init" => Kind::Init(read_keys(keys, CASE_KEYS)?),
        "forward" => Kind::Forward(read_keys(keys, CASE_KEYS)?),
        "backward" => Kind::Backward(read_keys(keys, CASE_KEYS)?),
        "elementwise" => Kind::Elementwise(read_keys(keys, CASE_KEYS)?),
        "loss" => Kind::Loss(read_keys(keys, CASE_KEYS)?),
        "model" => Kind::Model(read_keys(keys, CASE_KEYS)?),
        "optimizer" => Kind::Optimizer(read_keys(keys, &["lr", "steps"])?),
        "batches" => Kind::Batches(read_keys(keys, CASE_KEYS)?),
        "epoch" => Kind::Epoch(read_keys(keys, SETUP_KEYS)?),
        "accuracy" => Kind::Accuracy(read_keys(keys, &["model", "examples"])?),
        "train" => Kind::Train(read_keys(keys, TRAIN_KEYS)?),
        "device-select" => Kind::DeviceSelect,
        "gpu-transfer" => Kind::GpuTransfer,
        "gpu-loader" => Kind::GpuLoader(read_keys(keys, CASE_KEYS)?),
        "gpu-epoch" => Kind::GpuEpoch(read_keys(keys, GPU_KEYS)?),
        "gpu-train-on" => Kind::GpuTrainOn(read_keys(keys, GPU_KEYS)?),
        "gpu-timer" => Kind::GpuTimer(read_keys(keys, GPU_KEYS)?),
        "cpu-fallback" => Kind::CpuFallback(read_keys(keys, GPU_KEYS)?),
        "gpu-speedup" => {
            let speed: GpuSpeed = read_keys(keys, SPEED_KEYS)?;
            speed.check(points)?;
            Kind::GpuSpeedup(speed.posing_size())
        }
        other => return Err(KeyError::new("kind", format!("no training kind `{other}`"))),
    };
    kind.check()?;
    Ok(Arc::new(kind))
}

#[cfg(feature = "judge")]
/// The largest dimension a case may have (an MLP layer is 784 wide).
const MAX_DIM: usize = 4096;

impl Kind {
    /// The kinds whose work runs on the device, through the lab's GPU worker (`gpu.rs`): the
    /// worker dispatches them there, and they are the GPU track's with `DeviceSelect`.
    pub fn runs_on_device(&self) -> bool {
        matches!(
            self,
            Kind::GpuTransfer
                | Kind::GpuLoader(_)
                | Kind::GpuEpoch(_)
                | Kind::GpuTrainOn(_)
                | Kind::GpuTimer(_)
                | Kind::GpuSpeedup(_)
        )
    }

    #[cfg(feature = "judge")]
    /// What serde cannot check.
    fn check(&self) -> Result<(), KeyError> {
        let cases_ok = match self {
            Kind::Init(c)
            | Kind::Elementwise(c)
            | Kind::Loss(c)
            | Kind::Batches(c)
            | Kind::GpuLoader(c) => c.valid(),
            Kind::Forward(c) | Kind::Backward(c) => c.valid(),
            Kind::Model(c) => c.valid(),
            _ => true,
        };
        if !cases_ok {
            return Err(KeyError::new(
                "cases",
                format!("list at least one case, every number 1..={MAX_DIM}"),
            ));
        }
        match self {
            Kind::Optimizer(s) if !lr_ok(s.lr) => Err(KeyError::new("lr", "lr must be in (0, 10]")),
            Kind::Optimizer(s) if s.steps == 0 || s.steps > 1000 => {
                Err(KeyError::new("steps", "steps must be 1..=1000"))
            }
            Kind::Epoch(s) => setup_ok(s.lr, s.examples, s.batch_size),
            Kind::GpuEpoch(s) | Kind::GpuTrainOn(s) | Kind::GpuTimer(s) | Kind::CpuFallback(s) => {
                setup_ok(s.lr, s.examples, s.batch_size)?;
                match s.hidden {
                    Some(h) if h == 0 || h > 4096 => {
                        Err(KeyError::new("hidden", "hidden must be 1..=4096"))
                    }
                    _ => Ok(()),
                }
            }
            Kind::Train(t) => {
                setup_ok(t.lr, t.examples, t.batch_size)?;
                if t.epochs == 0 || t.epochs > 100 {
                    return Err(KeyError::new("epochs", "epochs must be 1..=100"));
                }
                if t.held_out == 0 || t.held_out > 100_000 {
                    return Err(KeyError::new("held_out", "held_out must be 1..=100000"));
                }
                Ok(())
            }
            Kind::Accuracy(a) if a.examples == 0 || a.examples > 100_000 => {
                Err(KeyError::new("examples", "examples must be 1..=100000"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(feature = "judge")]
/// Whether a learning rate is one a rubric may give.
fn lr_ok(lr: f32) -> bool {
    lr.is_finite() && lr > 0.0 && lr <= 10.0
}

#[cfg(feature = "judge")]
/// Checks an epoch's learning rate and sizes.
fn setup_ok(lr: f32, examples: usize, batch_size: usize) -> Result<(), KeyError> {
    if !lr_ok(lr) {
        return Err(KeyError::new("lr", "lr must be in (0, 10]"));
    }
    if examples == 0 || examples > 100_000 {
        return Err(KeyError::new("examples", "examples must be 1..=100000"));
    }
    if batch_size == 0 || batch_size > examples {
        return Err(KeyError::new(
            "batch_size",
            "batch_size must be 1..=examples",
        ));
    }
    Ok(())
}

/// A layer's four tensors as a worker sends them (biases as one-row matrices).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentLayer {
    /// `weight`.
    pub weight: Matrix,
    /// `bias`.
    pub bias: Matrix,
    /// `weight_grad`.
    pub weight_grad: Matrix,
    /// `bias_grad`.
    pub bias_grad: Matrix,
}

/// A layer as sent.
pub fn sent_layer(layer: &Layer) -> SentLayer {
    let row = |v: &Array1<f32>| Matrix::from_array(&v.clone().insert_axis(ndarray::Axis(0)));
    SentLayer {
        weight: Matrix::from_array(&layer.weight),
        bias: row(&layer.bias),
        weight_grad: Matrix::from_array(&layer.weight_grad),
        bias_grad: row(&layer.bias_grad),
    }
}

/// Layers as sent.
pub fn sent_layers(layers: &[Layer]) -> Vec<SentLayer> {
    layers.iter().map(sent_layer).collect()
}

/// What a training worker sends back, by kind. Cases stop at the first panic, which comes
/// separately.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Sent {
    /// `init`: per case, the layer, the layer again from a generator with the same seed, and
    /// one from another seed.
    Init(Vec<[SentLayer; 3]>),
    /// `forward`, `elementwise`, gradient `loss` items: one tensor per case.
    Tensors(Vec<Matrix>),
    /// Loss values, one per case (f32 bits).
    Losses(Vec<u32>),
    /// `backward`: per case, the input's gradient, the layer after, and that layer after
    /// `Linear::zero_grad`.
    Backward(Vec<(Matrix, SentLayer, SentLayer)>),
    /// `model`: per case, the output, the loss, the layers after backward and after zero_grad.
    Model {
        /// The model's pass, per case.
        passes: Vec<SentPass>,
        /// The same pass written out from the lab's own pieces, per case (`None` where one of
        /// them panicked).
        by_hand: Vec<Option<SentPass>>,
    },
    /// `optimizer`: the layers after each step.
    Steps(Vec<Vec<SentLayer>>),
    /// `batches`: per case, two epochs from one generator and the first again from a fresh
    /// generator with the same seed.
    Batches(Vec<[Vec<Vec<usize>>; 3]>),
    /// `epoch`: the mean loss, the layers after, and where the loss or a parameter first
    /// stopped being a number (a batch index) if it did.
    Epoch {
        /// The returned mean loss (f32 bits).
        loss: u32,
        /// The layers after the epoch.
        layers: Vec<SentLayer>,
        /// The first batch after which something was NaN or infinite.
        first_bad_batch: Option<usize>,
    },
    /// `accuracy`: the returned share (f32 bits).
    Accuracy(u32),
    /// `train`: each epoch's loss, the same run again, and the layers after the first run.
    Train {
        /// Losses (f32 bits).
        losses: Vec<u32>,
        /// Losses of the same training repeated with the same seed.
        again: Vec<u32>,
        /// The trained layers.
        layers: Vec<SentLayer>,
        /// The losses of the same run with the loop written out (`batches`, `train_epoch`).
        by_hand: Vec<u32>,
        /// The layers after that run.
        by_hand_layers: Vec<SentLayer>,
    },
    /// `cpu-fallback`: `train_on(&Device::Cpu, ..)`'s mean loss and layers, and those of
    /// `train_epoch` with `Sgd { lr }` from the same start.
    Fallback {
        /// `train_on`'s mean loss (f32 bits).
        loss: u32,
        /// The layers after `train_on`.
        layers: Vec<SentLayer>,
        /// `train_epoch`'s mean loss (f32 bits).
        direct_loss: u32,
        /// The layers after `train_epoch`.
        direct_layers: Vec<SentLayer>,
    },
}

/// What a GPU epoch did on the device between the grader's marks, where the backend can tell
/// (the emulator; a real GPU has no counters).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepWork {
    /// Kernel launches.
    pub launches: u64,
    /// cuBLAS computations.
    pub blas_calls: u64,
    /// Bytes copied host → device.
    pub uploaded: u64,
    /// Bytes copied device → host.
    pub copied_back: u64,
    /// Parameters the epoch changed.
    pub changed: u64,
    /// Of those, how many values were among the words uploaded from the host in the window.
    pub changed_uploaded: u64,
    /// Values returned that never came back from the device in the window.
    pub not_copied_back: u64,
    /// The emulator's replay of the epoch with the inputs' values moved (`None` where it
    /// could not be asked).
    #[serde(default)]
    pub replay: Option<grader_worker::protocol::Replay>,
}

/// What the GPU kinds send back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum SentGpu {
    /// `gpu-transfer`: per model, the layers that came back and how many values never came
    /// back from the device (where the backend can tell).
    Transfer(Vec<(Vec<SentLayer>, Option<u64>)>),
    /// `gpu-loader`: per case, each batch copied back (rows, labels).
    Batches(Vec<Vec<(Matrix, Vec<i32>)>>),
    /// `gpu-epoch`: the mean loss, the layers after, and the device work.
    Epoch {
        /// The mean loss (f32 bits).
        loss: u32,
        /// The layers copied back.
        layers: Vec<SentLayer>,
        /// The device work, where counted.
        work: Option<StepWork>,
    },
    /// `gpu-train-on`: `train_on`'s GPU branch (as [`SentGpu::Epoch`]), and the same epoch
    /// through `train_epoch_gpu` as the harness runs it (`None` where that failed).
    TrainOn {
        /// The mean loss (f32 bits).
        loss: u32,
        /// The layers copied back.
        layers: Vec<SentLayer>,
        /// The device work, where counted.
        work: Option<StepWork>,
        /// `train_epoch_gpu`'s mean loss (f32 bits) and layers.
        direct: Option<(u32, Vec<SentLayer>)>,
    },
    /// `gpu-timer`: each timed call's samples, its loss (f32 bits), and the examples the epoch
    /// was grown to.
    Timer {
        /// One per timed call.
        samples: Vec<grader_worker::protocol::GpuTimerSample>,
        /// The returned mean losses.
        losses: Vec<u32>,
        /// The grader's queued work before each call (ms).
        queued_ms: f64,
        /// The examples the timed epoch ran on.
        examples: usize,
        /// The same epoch through `train_epoch_gpu`, unwatched: its mean loss (f32 bits) and
        /// whether it moved the parameters (`None` where it failed).
        #[serde(default)]
        direct: Option<(u32, bool)>,
    },
    /// `gpu-speedup`: the mean loss of each timed epoch (f32 bits), the grader's CPU epochs in
    /// the yardstick worker, the student's GPU epochs in the other.
    Speed(Vec<u32>),
}

/// `model` output of one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentPass {
    /// Forward output.
    pub output: Matrix,
    /// The loss (f32 bits).
    pub loss: u32,
    /// Layers after backward.
    pub after_backward: Vec<SentLayer>,
    /// Layers after zero_grad.
    pub after_zero_grad: Vec<SentLayer>,
    /// `predict` of the model on the same input, after zero_grad.
    pub predicted: Vec<usize>,
}
