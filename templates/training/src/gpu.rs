//! # The GPU part: the same training epoch, on the GPU
//!
//! The lesson ends by moving the MNIST model and its data to the GPU (`get_default_device`,
//! `model.to(device)`, `DeviceDataLoader`) and training there. Here you do the same with
//! cudarc: the same two-layer networks, the same losses, the same SGD, but every number of a
//! step computed on the GPU.
//!
//! ## What moves to the GPU, and why
//!
//! Copying between the computer's memory (the host) and the GPU's is slow compared with the
//! arithmetic of a step, so a fast epoch copies almost nothing:
//! - the model's four tensors per layer (weight, bias and their gradients) go up once, in
//!   [`GpuModel::to_device`], and come back once, in [`GpuModel::to_host`];
//! - the whole data set goes up once, in [`to_device`];
//! - the batches' index lists go up once, in [`DeviceDataLoader::new`]; each batch is then
//!   gathered from the data set by a kernel, on the GPU;
//! - the loss stays on the GPU too: each step adds its batch's mean loss to one `f32` in GPU
//!   memory, and only that one number is copied back, at the end of the epoch.
//!
//! ## The stream is asynchronous
//!
//! All the work goes on a `stream`, a queue of work for the GPU. A launch (a kernel, a cuBLAS
//! call, a copy to the GPU, a `memset`) only puts the work in the queue and returns at once,
//! long before the GPU has done it; the GPU runs the queue in order. So a step must never wait:
//! no `stream.synchronize()` and no copy back to the host (`clone_dtoh` waits for the GPU)
//! inside [`GpuModel::train_step`]. The CPU then queues the whole epoch while the GPU works
//! through it, and the one copy of the loss at the end waits for all of it.
//!
//! ## Matrix products with cuBLAS, which is column-major
//!
//! cuBLAS (`cudarc::cublas::CudaBlas`, one handle per model: `CudaBlas::new(stream.clone())?`)
//! multiplies matrices with `gemm`: C = op(A)·op(B) + beta·C, where op is nothing
//! (`CUBLAS_OP_N`) or a transpose (`CUBLAS_OP_T`) and C is m×n, op(A) m×k, op(B) k×n. But
//! cuBLAS stores matrices column by column (column-major), while ours are row by row
//! (row-major). A row-major r×c matrix M, read column by column, is the c×r matrix Mᵀ, with
//! `ld` (the leading dimension: how far apart two columns are) = c, its row length.
//!
//! So we ask cuBLAS for the TRANSPOSE of the product: for a row-major C = A·B, cuBLAS computes
//! Cᵀ = Bᵀ·Aᵀ, which it writes column by column, and that is C row by row. Pass B's data
//! first, then A's; m and n swap places. With N the rows of a batch, I a layer's `inputs` and
//! O its `outputs` (the weight W is O×I row-major, the layer's input X is N×I, its output Y is
//! N×O), the step needs three products, each a `GemmConfig` and then
//! `unsafe { blas.gemm(config, &first, &second, &mut c) }?`:
//!
//! 1. forward, Y = X·Wᵀ (N×O). Transposed: Yᵀ = W·Xᵀ. W's data read column-major is Wᵀ, so it
//!    needs a transpose: `transa: CUBLAS_OP_T`, `transb: CUBLAS_OP_N`, `m: O`, `n: N`, `k: I`,
//!    `lda: I`, `ldb: I`, `ldc: O`, `beta: 0.0`; first W, second X, C is Y.
//! 2. weight gradient, dW += dYᵀ·X (O×I). Transposed: dWᵀ = Xᵀ·dY. X's data is already Xᵀ,
//!    dY's data is dYᵀ and needs a transpose: `transa: CUBLAS_OP_N`, `transb: CUBLAS_OP_T`,
//!    `m: I`, `n: O`, `k: N`, `lda: I`, `ldb: O`, `ldc: I`, `beta: 1.0` (ADD to the gradient,
//!    which the step zeroed first); first X, second dY, C is dW.
//! 3. input gradient, dX = dY·W (N×I). Transposed: dXᵀ = Wᵀ·dYᵀ, both already there:
//!    `transa: CUBLAS_OP_N`, `transb: CUBLAS_OP_N`, `m: I`, `n: N`, `k: O`, `lda: I`,
//!    `ldb: O`, `ldc: I`, `beta: 0.0`; first W, second dY, C is dX.
//!
//! `alpha` is 1.0 in all three, and m, n, k and the `ld`s are `i32`. Forward: product 1 for
//! layer 1 (X the batch, Y the hidden layer h), then for layer 2 (X = relu(h), Y the output z).
//! Backward: products 2 and 3 for layer 2 (X = relu(h), dY = dz: dW2 and da), then only
//! product 2 for layer 1 (X the batch, dY = dh: dW1; nothing needs the gradient with respect
//! to the batch). The `op` names come from
//! `cudarc::cublas::sys::cublasOperation_t`.
//!
//! ## The kernels to write
//!
//! Everything else is a small CUDA C kernel, all in one source string, compiled once per
//! program with NVRTC (`cudarc::nvrtc::compile_ptx`; keep the PTX) and loaded once per model.
//! One thread per element, in blocks of 256 threads (`n.div_ceil(256)` blocks), each kernel
//! skipping the threads past the end (`if (i < n)`):
//! - add the bias to every row of a layer's output (`y[i] += bias[i % cols]`); for layer 1,
//!   also keep ReLU's output `max(h, 0)` next to h (the backward pass needs h);
//! - the loss and its gradient with respect to the output z, one thread per row; the batch's
//!   mean loss is added to `loss_sum` with `atomicAdd(loss_sum, row_loss / N)` in each row's
//!   thread (or, fewer atomics, added up in the block's `__shared__` memory first):
//!   - sigmoid + binary cross-entropy: p = sigmoid(z), label 0 or 1 as y, loss
//!     `−(y·max(ln p, −100) + (1−y)·max(ln(1−p), −100))`, gradient `(p − y) / N` (the
//!     sigmoid's derivative and BCE's `1/(p(1−p))` cancel);
//!   - softmax + cross-entropy: loss `logsumexp(row) − row[label]` with the largest value
//!     subtracted first, gradient `(softmax(row) − onehot(label)) / N`;
//! - ReLU's backward: the gradient passes where h > 0, else 0;
//! - the bias gradient: the column sums of the output gradient, ADDED to `bias_grad` (one
//!   thread per column, looping over the rows);
//! - the SGD update, `p[i] −= lr · g[i]`, once for each of the four parameters;
//! - for the loader, gathering a batch's rows and labels from the data set by their indices.
//!
//! Zeroing the gradients needs no kernel: `stream.memset_zeros(&mut layer.weight_grad)?`.
//! Launch a kernel as in the matmul lab: `stream.launch_builder(&f)`, `.arg(…)` for each
//! parameter (sizes as `i32`, `lr` as `f32`), `unsafe { launch.launch(config) }?`.

use crate::{Linear, Model, Sgd};
use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, LaunchConfig,
    PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::{compile_ptx, Ptx};
use ndarray::{Array1, Array2};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What every GPU function returns: its value, or any error from CUDA, NVRTC or cuBLAS
/// (use `?` on them).
pub type GpuResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Where to train: the GPU (with the stream to use) or the CPU; the lesson's
/// `get_default_device()`.
pub enum Device {
    /// A GPU was found; work goes on this stream.
    Gpu(Arc<CudaStream>),
    /// No usable GPU: train on the CPU.
    Cpu,
}

/// Picks the GPU when there is one and falls back to the CPU otherwise (the lesson's
/// `get_default_device()`), without ever panicking because CUDA is missing.
///
/// Two things can be missing: the CUDA driver library itself (check
/// `cudarc::driver::sys::is_culib_present()` first: without it, cudarc panics) and a GPU
/// (then `CudaContext::new(0)` returns an error). With both, make a stream with
/// `ctx.new_stream()`.
pub fn default_device() -> Device {
    todo!("default_device: the GPU if there is one, else the CPU")
}

/// What the model's output layer feeds into, i.e. which loss the GPU step computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// [`SimpleNN`](crate::SimpleNN): one output, sigmoid, binary cross-entropy (mean)
    /// against labels 0/1.
    Sigmoid,
    /// [`Mlp`](crate::Mlp): logits, cross-entropy (mean, softmax by log-sum-exp) against
    /// class labels.
    Softmax,
}

/// A [`Linear`] on the GPU: the same four tensors, row-major as on the host (`weight` and
/// `weight_grad` are outputs × inputs), plus its sizes.
pub struct GpuLinear {
    /// The weights, outputs × inputs, row by row.
    pub weight: CudaSlice<f32>,
    /// The biases, one per output.
    pub bias: CudaSlice<f32>,
    /// dLoss/dWeight, outputs × inputs.
    pub weight_grad: CudaSlice<f32>,
    /// dLoss/dBias, one per output.
    pub bias_grad: CudaSlice<f32>,
    /// The layer's number of inputs (the weight's columns).
    pub inputs: usize,
    /// The layer's number of outputs (the weight's rows).
    pub outputs: usize,
}

impl GpuLinear {
    /// Copies all four tensors to the GPU (`stream.clone_htod`, each as one slice row by row:
    /// `layer.weight.as_standard_layout()`, `layer.bias.to_vec()`), and takes the sizes from
    /// the weight (`nrows()` outputs, `ncols()` inputs).
    pub fn to_device(layer: &Linear, stream: &Arc<CudaStream>) -> GpuResult<GpuLinear> {
        todo!("GpuLinear::to_device: copy the four tensors up")
    }

    /// Copies all four tensors back (`stream.clone_dtoh`) into a new [`Linear`]:
    /// `Array2::from_shape_vec((outputs, inputs), …)?` and `Array1::from(…)`.
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> GpuResult<Linear> {
        todo!("GpuLinear::to_host: copy the four tensors back")
    }
}

/// A two-layer model on the GPU (`model.to(device)`): layer1 → ReLU → layer2 → head.
pub struct GpuModel {
    /// The first layer (inputs → hidden).
    pub layer1: GpuLinear,
    /// The second layer (hidden → outputs).
    pub layer2: GpuLinear,
    /// Which loss the step computes on layer 2's output.
    pub head: Head,
    // Add the private fields a step needs: the stream, a cuBLAS handle, your loaded
    // kernels, GPU buffers for the hidden layer, the output and their gradients.
}

impl GpuModel {
    /// Copies the model's two layers (`model.layers_mut()`, in order) to the GPU
    /// ([`GpuLinear::to_device`]) and prepares what a step needs: the kernels compiled and
    /// loaded, a cuBLAS handle on `stream` (`CudaBlas::new(stream.clone())?`).
    ///
    /// Return an error (`Err("…".into())`) rather than panic when the model does not have
    /// two layers, or layer 2's inputs are not layer 1's outputs.
    pub fn to_device(
        model: &mut dyn Model,
        head: Head,
        stream: &Arc<CudaStream>,
    ) -> GpuResult<GpuModel> {
        todo!("GpuModel::to_device: both layers up, kernels and cuBLAS ready")
    }

    /// Copies the parameters and gradients back into `model`'s two layers
    /// ([`GpuLinear::to_host`], then `*layer = …` for each of `model.layers_mut()`).
    pub fn to_host(&self, model: &mut dyn Model) -> GpuResult<()> {
        todo!("GpuModel::to_host: both layers back")
    }

    /// One SGD training step on a batch already on the GPU, all on the device and without
    /// waiting for it (no `synchronize`, no copy back):
    /// 1. zero the four gradients (`stream.memset_zeros`);
    /// 2. forward: h = x·W1ᵀ (cuBLAS), + b1, a = relu(h) (a kernel); z = a·W2ᵀ (cuBLAS), + b2;
    /// 3. the loss's gradient dz and the batch's mean loss, added to `loss_sum` (one f32 on the
    ///    device, with `atomicAdd`), in one kernel for the model's [`Head`];
    /// 4. backward: dW2 += dzᵀ·a, db2 += column sums of dz, da = dz·W2, dh = da where h > 0,
    ///    dW1 += dhᵀ·x, db1 += column sums of dh;
    /// 5. `p -= lr * grad` for W1, b1, W2 and b2.
    ///
    /// The batch has `batch.len` rows: take every other size from the layers
    /// (`layer1.inputs`, `layer1.outputs`, `layer2.outputs`), and keep GPU buffers for h, a, z
    /// and the gradients between steps (make them again only when a batch needs more room).
    pub fn train_step(
        &mut self,
        batch: &DeviceBatch,
        lr: f32,
        loss_sum: &mut CudaSlice<f32>,
    ) -> GpuResult<()> {
        todo!("GpuModel::train_step: zero_grad, forward, loss, backward, step")
    }
}

/// A dataset on the GPU: inputs row-major (rows × cols) and labels as i32.
pub struct DeviceDataset {
    /// The inputs, one row per example, row by row.
    pub x: CudaSlice<f32>,
    /// One label per example, as `i32` (a kernel's `int`).
    pub labels: CudaSlice<i32>,
    /// The number of examples.
    pub rows: usize,
    /// The number of inputs of each example.
    pub cols: usize,
}

/// `to_device(dataset)`: one copy of the whole set (`stream.clone_htod` of the inputs row by
/// row, and of the labels converted to `i32`, with `i32::try_from(label)?`).
///
/// Return an error when `labels` does not have one label per row of `x`.
pub fn to_device(
    x: &Array2<f32>,
    labels: &[usize],
    stream: &Arc<CudaStream>,
) -> GpuResult<DeviceDataset> {
    todo!("to_device: the inputs and the labels, one copy each")
}

/// One minibatch on the GPU: `len` rows of the dataset (len × cols, row-major) and their
/// labels.
pub struct DeviceBatch {
    /// The batch's inputs, `len` × cols, row by row.
    pub x: CudaSlice<f32>,
    /// The batch's labels, `len` of them.
    pub labels: CudaSlice<i32>,
    /// The number of examples in the batch.
    pub len: usize,
}

/// The lesson's `DeviceDataLoader`: yields the given batches (lists of row indices, in order)
/// already on the GPU.
///
/// The rows are gathered on the device, by a kernel, from the dataset that is already there;
/// the index lists are uploaded once, in [`DeviceDataLoader::new`], so that yielding a batch
/// copies nothing from the host.
pub struct DeviceDataLoader<'a> {
    data: &'a DeviceDataset,
    // Add what else the loader needs: every batch's indices on the GPU, where each
    // batch starts in them (on the host), the next batch, the loaded gather kernel.
}

impl<'a> DeviceDataLoader<'a> {
    /// Prepares a loader over `batches` of `data`: uploads all the index lists at once (one
    /// flat list of `i32`, with where each batch starts kept on the host) and loads the
    /// gather kernel. The stream is the data's: `data.x.stream()`.
    ///
    /// Return an error for an index that is not a row of `data`.
    pub fn new(data: &'a DeviceDataset, batches: &[Vec<usize>]) -> GpuResult<DeviceDataLoader<'a>> {
        todo!("DeviceDataLoader::new: upload every index list once")
    }
}

impl Iterator for DeviceDataLoader<'_> {
    type Item = GpuResult<DeviceBatch>;

    /// The next batch, or `None` after the last: makes room for its rows and labels on the
    /// GPU (`stream.alloc_zeros`) and launches the gather kernel on the batch's part of the
    /// indices (`indices.slice(start..end)` is a view you can pass as a kernel argument).
    fn next(&mut self) -> Option<GpuResult<DeviceBatch>> {
        todo!("DeviceDataLoader::next: room for the batch, then the gather kernel")
    }
}

/// One epoch on the GPU: [`GpuModel::train_step`] on every batch the loader yields; returns
/// the mean of the batches' losses, copied back once at the end.
///
/// Steps: one zeroed `f32` on the GPU for the sum of the losses
/// (`stream.alloc_zeros::<f32>(1)?`); a step per batch (the loader yields `GpuResult`s: `?`
/// them), counting the batches; then copy the sum back (`stream.clone_dtoh`, which waits for
/// the GPU to finish the epoch) and divide by the count.
pub fn train_epoch_gpu(
    model: &mut GpuModel,
    loader: DeviceDataLoader<'_>,
    lr: f32,
) -> GpuResult<f32> {
    todo!("train_epoch_gpu: a step per batch, one copy of the loss at the end")
}

/// Times one GPU epoch, the way the matmul lab timed a product: synchronize the stream (so
/// that work queued earlier is not counted), start the clock (`Instant::now()`), launch every
/// step, synchronize (so that the clock stops when the GPU is done, not when the last launch
/// returns), stop the clock; then copy the loss back. Returns (mean loss, time).
pub fn time_gpu_epoch(
    model: &mut GpuModel,
    loader: DeviceDataLoader<'_>,
    lr: f32,
) -> GpuResult<(f32, Duration)> {
    todo!("time_gpu_epoch: synchronize, start the clock, all the steps, synchronize, stop")
}

/// One SGD epoch over `batches` on `device`, returning the mean loss:
/// - on the GPU: the model ([`GpuModel::to_device`]) and the data ([`to_device`]) moved
///   there, a [`DeviceDataLoader`] over `batches`, [`train_epoch_gpu`], and the parameters
///   copied back into `model` ([`GpuModel::to_host`]);
/// - for `Device::Cpu`: with the CPU functions of the lab, `crate::train_epoch` with
///   `Sgd { lr }` (`head` is then not needed: the model computes its own loss).
pub fn train_on(
    device: &Device,
    model: &mut dyn Model,
    head: Head,
    x: &Array2<f32>,
    labels: &[usize],
    batches: &[Vec<usize>],
    lr: f32,
) -> GpuResult<f32> {
    todo!("train_on: the GPU epoch, or the CPU one")
}
