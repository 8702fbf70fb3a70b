//! The training lab (seed 000 section 3, seeds 001–003): the course's training loop written by
//! hand, with no autograd: a linear layer and its backward pass, activations, losses and their
//! gradients, the lesson's two models, SGD and Adam, shuffled minibatches, one epoch and full
//! training.
//!
//! The lab crate's `tests/grade.rs` hands the student's functions to the harness in a
//! [`Submission`], over plain values ([`Layer`], f32 matrices) so the grader never names the
//! student's types. Workers run them on inputs derived from the seed ([`worker`]); the
//! supervisor computes every reference itself, in f64 ([`reference`]), and judges ([`judge`]).

#[cfg(feature = "judge")]
pub mod compare;
pub mod data;
pub mod gpu;
#[cfg(feature = "judge")]
pub mod gpu_judge;
pub mod inputs;
#[cfg(feature = "judge")]
pub mod judge;
#[cfg(all(test, feature = "judge"))]
mod judge_fuzz;
#[cfg(feature = "judge")]
pub mod kind_spec;
pub mod kinds;
pub mod reference;
#[cfg(feature = "judge")]
pub mod same_run;
pub mod stand_in;

/// The training lab's student-facing messages (`i18n/*.ftl` beside this file), in English and
/// Traditional Chinese: its cases, every verdict of its CPU and GPU judges, the worker's GPU
/// failures and the MNIST reader's errors. (A rubric's own mistakes and the grader's own
/// failures, for the instructor, stay in English, as the matmul lab's do.)
pub static MESSAGES: grader_worker::i18n::Catalogue = grader_worker::i18n::Catalogue::new(
    "grader/labs/src/training/i18n",
    include_str!("i18n/en.ftl"),
    include_str!("i18n/zh-TW.ftl"),
);

/// Formats one of the training lab's [`MESSAGES`]: `t!("key", name = value, …)`.
macro_rules! t {
    ($($arg:tt)*) => {
        grader_worker::tr!($crate::training::MESSAGES, $($arg)*)
    };
}
use t;

#[cfg(test)]
mod catalogue_tests {
    #[test]
    fn the_training_catalogue_is_complete_in_both_languages() {
        let problems = super::MESSAGES.problems();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/training");
        let unknown = grader_worker::i18n::unknown_keys(&super::MESSAGES, &dir);
        assert!(unknown.is_empty(), "{}", unknown.join("\n"));
    }
}
#[cfg(feature = "judge")]
pub mod trajectory;
pub mod worker;
pub mod yardstick;

use cudarc::driver::CudaStream;
#[cfg(feature = "judge")]
use grader_engine::lab::LabInfo;
use grader_worker::gpu::student::GpuResult;
use ndarray::{Array1, Array2};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "judge")]
/// The grader's knowledge of the training lab.
pub static LAB: LabInfo = LabInfo {
    name: "training",
    lab_crate: "training-lab",
    kinds: kinds::KINDS,
    read_item: kinds::read_item,
    rubric: include_str!("../../../../assignments/training/assignment.toml"),
    harness: include_str!("../../../../solutions/training/tests/grade.rs"),
    manifest: include_str!("../../../../solutions/training/Cargo.toml"),
    yardstick: yardstick_order,
};

#[cfg(feature = "judge")]
/// Serves a yardstick order of the training lab (the GPU speed item's CPU epoch) without any
/// submission: [`LabInfo::yardstick`].
pub fn yardstick_order(
    order: &grader_worker::protocol::WorkOrder,
    checkpoints: &mut grader_worker::stopwatch::Checkpoints,
) -> Result<grader_worker::protocol::Outcome, String> {
    match order.task::<kinds::Kind>()? {
        kinds::Kind::GpuSpeedup(s) if order.yardstick => {
            gpu::speed_yardstick(order, &s, checkpoints)
        }
        _ => Err(format!(
            "item `{}`: only a speed item's yardstick order runs without a submission",
            order.item
        )),
    }
}

/// A linear layer's parameters and gradients, as the harness hands them over (the student's
/// `Linear` has the same four fields).
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// `out × in`.
    pub weight: Array2<f32>,
    /// `out`.
    pub bias: Array1<f32>,
    /// Accumulated by `backward`.
    pub weight_grad: Array2<f32>,
    /// Accumulated by `backward`.
    pub bias_grad: Array1<f32>,
}

/// Which of the lesson's models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Net {
    /// `SimpleNN(inputs)`: inputs→32→ReLU→1→Sigmoid, binary cross-entropy.
    SimpleNn,
    /// `Mlp`: 784→128→ReLU→10, cross-entropy.
    Mlp,
}

/// Which optimizer, with its learning rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Opt {
    /// `torch.optim.SGD(lr)`.
    Sgd(f32),
    /// `torch.optim.Adam(lr)`.
    Adam(f32),
}

/// What one pass of a model did, for the `model` items.
#[derive(Debug, Clone)]
pub struct ModelPass {
    /// The forward output.
    pub output: Array2<f32>,
    /// The loss of that output.
    pub loss: f32,
    /// Both layers after `backward` (its gradients accumulated onto those handed in).
    pub after_backward: [Layer; 2],
    /// Both layers after `zero_grad`.
    pub after_zero_grad: [Layer; 2],
    /// `predict` on the same input, after `zero_grad` (empty where the pass does not call it).
    pub predicted: Vec<usize>,
}

/// A model's two layers.
pub type Layers = [Layer; 2];

/// One optimizer step's gradients: `(weight_grad, bias_grad)` per layer.
pub type StepGrads = Vec<(Array2<f32>, Array1<f32>)>;

/// [`Submission::optimize`].
pub type OptimizeFn = fn(Opt, Vec<Layer>, &[StepGrads]) -> Vec<Vec<Layer>>;

/// [`Submission::train_epoch`].
pub type EpochFn = fn(Net, Layers, Opt, &Array2<f32>, &[usize], &[Vec<usize>]) -> (f32, Layers);

/// [`Submission::train`].
pub type TrainFn = fn(Net, Opt, &Array2<f32>, &[usize], usize, usize, u64) -> (Vec<f32>, Layers);

/// What a GPU epoch starts from, as the grader hands it to the harness: the model, its
/// layers, SGD's learning rate, the data and the batch order.
pub struct EpochSetup<'a> {
    /// Which model (and so which head: sigmoid and BCE, or softmax and cross-entropy).
    pub net: Net,
    /// Its starting layers.
    pub layers: Layers,
    /// SGD's learning rate.
    pub lr: f32,
    /// The inputs, one row per example.
    pub x: &'a Array2<f32>,
    /// The labels.
    pub labels: &'a [usize],
    /// The batches, in order.
    pub batches: &'a [Vec<usize>],
}

/// The grader's marks around the part of a GPU function it watches: the harness calls
/// `before` once the model and data are on the GPU, right before the student's epoch, and
/// `after` right after it. The grader counts device work, watches where values come from and
/// queues its own GPU work there.
pub trait Marks {
    /// Right before the watched call.
    fn before(&mut self) -> Result<(), String>;
    /// Right after it.
    fn after(&mut self) -> Result<(), String>;
}

/// [`Submission::gpu_epoch`].
pub type GpuEpochFn =
    fn(&Arc<CudaStream>, EpochSetup<'_>, &mut dyn Marks) -> GpuResult<(f32, Layers)>;

/// [`Submission::time_gpu_epoch`].
pub type GpuTimerFn =
    fn(&Arc<CudaStream>, EpochSetup<'_>, &mut dyn Marks) -> GpuResult<(f32, Duration)>;

/// [`Submission::gpu_batches`]: each batch the loader yielded, copied back (rows, labels).
pub type GpuBatchesFn = fn(
    &Arc<CudaStream>,
    &Array2<f32>,
    &[usize],
    &[Vec<usize>],
) -> GpuResult<Vec<(Array2<f32>, Vec<i32>)>>;

/// The student's functions for this lab, as `tests/grade.rs` wires them.
pub struct Submission {
    /// `Linear::new(inputs, outputs, rng)`.
    pub linear_new: fn(usize, usize, &mut StdRng) -> Layer,
    /// `Linear::forward`.
    pub linear_forward: fn(&Layer, &Array2<f32>) -> Array2<f32>,
    /// `Linear::backward(x, grad_output)`: returns the input's gradient, accumulates the
    /// layer's.
    pub linear_backward: fn(&mut Layer, &Array2<f32>, &Array2<f32>) -> Array2<f32>,
    /// `Linear::zero_grad`.
    pub linear_zero_grad: fn(&mut Layer),
    /// `relu`.
    pub relu: fn(&Array2<f32>) -> Array2<f32>,
    /// `relu_backward(x, grad_output)`.
    pub relu_backward: fn(&Array2<f32>, &Array2<f32>) -> Array2<f32>,
    /// `sigmoid`.
    pub sigmoid: fn(&Array2<f32>) -> Array2<f32>,
    /// `bce_loss(p, y)`.
    pub bce_loss: fn(&Array2<f32>, &Array2<f32>) -> f32,
    /// `bce_grad(p, y)`.
    pub bce_grad: fn(&Array2<f32>, &Array2<f32>) -> Array2<f32>,
    /// `cross_entropy(logits, labels)`.
    pub cross_entropy: fn(&Array2<f32>, &[usize]) -> f32,
    /// `cross_entropy_grad(logits, labels)`.
    pub cross_entropy_grad: fn(&Array2<f32>, &[usize]) -> Array2<f32>,
    /// A model of kind `Net` holding these layers: forward, loss, backward, zero_grad.
    pub model_pass: fn(Net, Layers, &Array2<f32>, &[usize]) -> ModelPass,
    /// The same pass written out by the harness from the lab's own pieces (`Linear::forward`,
    /// `relu`, `sigmoid`, the losses and their gradients, `relu_backward`, `Linear::backward`,
    /// `Linear::zero_grad`), composed as the lab's documentation composes them: what a model
    /// built on those pieces gives, right or wrong.
    pub model_by_hand: fn(Net, Layers, &Array2<f32>, &[usize]) -> ModelPass,
    /// The optimizer run over these layers, one step per entry of the gradients given (each
    /// step's `(weight_grad, bias_grad)` per layer): the layers after each step.
    pub optimize: OptimizeFn,
    /// `batches(n, batch_size, rng)`.
    pub batches: fn(usize, usize, &mut StdRng) -> Vec<Vec<usize>>,
    /// `train_epoch` of the grader's model ([`stand_in`]) holding these layers, with the
    /// grader's optimizer, fresh, over the given batches: the mean loss and the layers after.
    pub train_epoch: EpochFn,
    /// `train_epoch` of the grader's model holding the setup's layers with the lab's
    /// `Sgd { lr }`: what `train_on(&Device::Cpu, ..)` must give.
    pub sgd_epoch: fn(EpochSetup<'_>) -> (f32, Layers),
    /// `accuracy` of the grader's model holding these layers.
    pub accuracy: fn(Net, Layers, &Array2<f32>, &[usize]) -> f32,
    /// `train`: the grader's model and optimizer, the model's layers drawn from a generator
    /// seeded with the `u64` ([`stand_in::Model::init`]), trained `epochs` epochs of batches
    /// of `batch_size` with the same generator: each epoch's loss and the layers after.
    pub train: TrainFn,
    /// The same as [`Submission::train`] with the loop written out by the harness: per epoch,
    /// the lab's `batches` then its `train_epoch`. What `train` must give.
    pub train_by_hand: TrainFn,
    /// `default_device()` chose the GPU.
    pub default_device_is_gpu: fn() -> bool,
    /// `GpuModel::to_device` of a model holding these layers, then `to_host`: the layers that
    /// came back.
    pub gpu_round_trip: fn(&Arc<CudaStream>, Net, Layers) -> GpuResult<Layers>,
    /// The dataset `to_device`, a `DeviceDataLoader` over the batches, each batch copied back.
    pub gpu_batches: GpuBatchesFn,
    /// `train_epoch_gpu` between the marks, from the setup's layers: the mean loss and the
    /// layers copied back.
    pub gpu_epoch: GpuEpochFn,
    /// `time_gpu_epoch` between the marks: the mean loss and the time it measured.
    pub time_gpu_epoch: GpuTimerFn,
    /// `train_on(&Device::Cpu, ..)` with the grader's model: the mean loss and the layers
    /// after.
    pub train_on_cpu: fn(EpochSetup<'_>) -> GpuResult<(f32, Layers)>,
    /// `train_on(&Device::Gpu(stream), ..)` between the marks (which then also see the
    /// model and the data go up and the parameters come back): the mean loss and the layers
    /// after.
    pub train_on_gpu: GpuEpochFn,
}

/// The generator for one input of one case of an item: the same in the worker and the
/// supervisor, different for every item, case and purpose.
pub fn rng_for(seed: u64, item: &str, case: usize, purpose: &str) -> StdRng {
    StdRng::seed_from_u64(grader_worker::hash::of_text(&format!(
        "{seed}/{item}/{case}/{purpose}"
    )))
}
