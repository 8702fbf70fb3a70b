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
    // BEGIN SOLUTION
    // SAFETY: only asks the dynamic loader whether the library can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Device::Cpu;
    }
    match CudaContext::new(0).and_then(|ctx| ctx.new_stream()) {
        Ok(stream) => Device::Gpu(stream),
        Err(_) => Device::Cpu,
    }
    // END SOLUTION
    //@template todo!("default_device: the GPU if there is one, else the CPU")
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

// BEGIN SOLUTION
/// Copies host data to a new GPU buffer. CUDA refuses to allocate 0 bytes, so an empty slice
/// gives a buffer of one zero, which nothing reads.
fn upload<T: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    data: &[T],
) -> GpuResult<CudaSlice<T>> {
    if data.is_empty() {
        Ok(stream.alloc_zeros::<T>(1)?)
    } else {
        Ok(stream.clone_htod(data)?)
    }
}

/// A matrix's elements row by row, as one slice.
fn row_major(x: &Array2<f32>) -> Vec<f32> {
    x.as_standard_layout().iter().copied().collect()
}

/// A size as the `int` a kernel or cuBLAS takes.
fn int(n: usize) -> GpuResult<i32> {
    Ok(i32::try_from(n).map_err(|_| format!("{n} does not fit in a 32-bit int"))?)
}
// END SOLUTION

impl GpuLinear {
    /// Copies all four tensors to the GPU (`stream.clone_htod`, each as one slice row by row:
    /// `layer.weight.as_standard_layout()`, `layer.bias.to_vec()`), and takes the sizes from
    /// the weight (`nrows()` outputs, `ncols()` inputs).
    pub fn to_device(layer: &Linear, stream: &Arc<CudaStream>) -> GpuResult<GpuLinear> {
        // BEGIN SOLUTION
        let (outputs, inputs) = layer.weight.dim();
        if layer.weight_grad.dim() != (outputs, inputs)
            || layer.bias.len() != outputs
            || layer.bias_grad.len() != outputs
        {
            return Err(format!(
                "a {outputs}x{inputs} layer needs a {outputs}x{inputs} weight gradient and \
                 {outputs} biases and bias gradients"
            )
            .into());
        }
        Ok(GpuLinear {
            weight: upload(stream, &row_major(&layer.weight))?,
            bias: upload(stream, &layer.bias.to_vec())?,
            weight_grad: upload(stream, &row_major(&layer.weight_grad))?,
            bias_grad: upload(stream, &layer.bias_grad.to_vec())?,
            inputs,
            outputs,
        })
        // END SOLUTION
        //@template todo!("GpuLinear::to_device: copy the four tensors up")
    }

    /// Copies all four tensors back (`stream.clone_dtoh`) into a new [`Linear`]:
    /// `Array2::from_shape_vec((outputs, inputs), …)?` and `Array1::from(…)`.
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> GpuResult<Linear> {
        // BEGIN SOLUTION
        let shape = (self.outputs, self.inputs);
        let matrix = |data: &CudaSlice<f32>| -> GpuResult<Array2<f32>> {
            let mut values = stream.clone_dtoh(data)?;
            values.truncate(shape.0 * shape.1);
            Ok(Array2::from_shape_vec(shape, values)?)
        };
        let vector = |data: &CudaSlice<f32>| -> GpuResult<Array1<f32>> {
            let mut values = stream.clone_dtoh(data)?;
            values.truncate(shape.0);
            Ok(Array1::from(values))
        };
        Ok(Linear {
            weight: matrix(&self.weight)?,
            bias: vector(&self.bias)?,
            weight_grad: matrix(&self.weight_grad)?,
            bias_grad: vector(&self.bias_grad)?,
        })
        // END SOLUTION
        //@template todo!("GpuLinear::to_host: copy the four tensors back")
    }
}

// BEGIN SOLUTION
/// Every kernel of the lab, in one CUDA C source. Each thread handles one element (or one row,
/// or one column), and skips out when its index is past the end.
const KERNELS: &str = r#"
#define BLOCK 256

// y (rows x cols) += bias, in every row.
extern "C" __global__ void add_bias(float* y, const float* bias, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        y[i] += bias[i % cols];
    }
}

// Layer 1's output: pre (rows x cols) += bias, and act = relu(pre) next to it.
extern "C" __global__ void add_bias_relu(float* pre, float* act, const float* bias,
                                         int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        float v = pre[i] + bias[i % cols];
        pre[i] = v;
        act[i] = v > 0.0f ? v : 0.0f;
    }
}

// The block's threads add up their partial sums in shared memory; thread 0 adds the
// batch's mean to *loss_sum. Every thread of the block must call it (it synchronizes them).
__device__ void add_mean(float* partial, float sum, float* loss_sum, int rows) {
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int half = BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            partial[threadIdx.x] += partial[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(loss_sum, partial[0] / rows);
    }
}

// SimpleNN's head: z is rows x 1, the labels 0 or 1. One block of BLOCK threads; thread t
// takes rows t, t + BLOCK, ... Writes dLoss/dz = (p - y) / rows to grad.
extern "C" __global__ void sigmoid_bce(const float* z, const int* labels, float* grad,
                                       float* loss_sum, int rows) {
    __shared__ float partial[BLOCK];
    float sum = 0.0f;
    for (int r = threadIdx.x; r < rows; r += BLOCK) {
        float v = z[r];
        float p;
        if (v >= 0.0f) {
            p = 1.0f / (1.0f + expf(-v));
        } else {
            float e = expf(v);
            p = e / (1.0f + e);
        }
        float y = (float)labels[r];
        sum -= y * fmaxf(logf(p), -100.0f) + (1.0f - y) * fmaxf(logf(1.0f - p), -100.0f);
        grad[r] = (p - y) / rows;
    }
    add_mean(partial, sum, loss_sum, rows);
}

// The Mlp's head: z is rows x cols logits. One block of BLOCK threads, a row per thread at a
// time. Writes dLoss/dz = (softmax(z) - onehot(label)) / rows to grad.
extern "C" __global__ void softmax_cross_entropy(const float* z, const int* labels, float* grad,
                                                 float* loss_sum, int rows, int cols) {
    __shared__ float partial[BLOCK];
    float sum = 0.0f;
    for (int r = threadIdx.x; r < rows; r += BLOCK) {
        const float* row = z + (long long)r * cols;
        float* g = grad + (long long)r * cols;
        float largest = row[0];
        for (int c = 1; c < cols; ++c) {
            largest = fmaxf(largest, row[c]);
        }
        float total = 0.0f;
        for (int c = 0; c < cols; ++c) {
            float e = expf(row[c] - largest);
            g[c] = e;
            total += e;
        }
        int label = labels[r];
        for (int c = 0; c < cols; ++c) {
            g[c] = (g[c] / total - (c == label ? 1.0f : 0.0f)) / rows;
        }
        if (label >= 0 && label < cols) {
            sum += largest + logf(total) - row[label];
        }
    }
    add_mean(partial, sum, loss_sum, rows);
}

// ReLU's backward, in place: grad (n elements) stays where pre > 0, else becomes 0.
extern "C" __global__ void relu_backward(float* grad, const float* pre, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        grad[i] = pre[i] > 0.0f ? grad[i] : 0.0f;
    }
}

// bias_grad[c] += the sum of column c of grad (rows x cols): one thread per column.
extern "C" __global__ void bias_grad(const float* grad, float* bias_grad, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float sum = 0.0f;
        for (int r = 0; r < rows; ++r) {
            sum += grad[(long long)r * cols + c];
        }
        bias_grad[c] += sum;
    }
}

// SGD: p -= lr * g, element by element.
extern "C" __global__ void sgd_step(float* p, const float* g, float lr, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] -= lr * g[i];
    }
}

// The loader: out_x row r = x row index[r] (cols wide), out_labels[r] = labels[index[r]],
// for the len rows of a batch. One thread per element of out_x (and per label).
extern "C" __global__ void gather_rows(const float* x, const int* labels, const int* index,
                                       float* out_x, int* out_labels, int len, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len * cols) {
        int r = i / cols;
        int c = i % cols;
        out_x[i] = x[(long long)index[r] * cols + c];
    }
    if (i < len) {
        out_labels[i] = labels[index[i]];
    }
}
"#;

/// Threads per block of the element-wise kernels, and of the loss kernels' one block (the
/// `BLOCK` of [`KERNELS`]).
const BLOCK: u32 = 256;

/// Loads [`KERNELS`] on the stream's GPU. NVRTC compiles the source once per program
/// (compiling takes far longer than a step); the PTX is kept for the next model or loader.
fn load_kernels(stream: &Arc<CudaStream>) -> GpuResult<Arc<CudaModule>> {
    static COMPILED: Mutex<Option<Ptx>> = Mutex::new(None);
    let ptx = {
        let mut compiled = COMPILED
            .lock()
            .map_err(|_| "the kernel cache is poisoned")?;
        match compiled.as_ref() {
            Some(ptx) => ptx.clone(),
            None => {
                let ptx = compile_ptx(KERNELS)?;
                *compiled = Some(ptx.clone());
                ptx
            }
        }
    };
    Ok(stream.context().load_module(ptx)?)
}

/// Enough blocks of [`BLOCK`] threads for one thread per element of `n`.
fn cover(n: usize) -> GpuResult<LaunchConfig> {
    let blocks = u32::try_from(n.div_ceil(BLOCK as usize))
        .map_err(|_| format!("{n} elements are too many for one launch"))?;
    Ok(LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The loss kernels' launch: one block of [`BLOCK`] threads.
const ONE_BLOCK: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (BLOCK, 1, 1),
    shared_mem_bytes: 0,
};

/// The kernels a step launches, loaded once per model.
struct Kernels {
    add_bias: CudaFunction,
    add_bias_relu: CudaFunction,
    sigmoid_bce: CudaFunction,
    softmax_cross_entropy: CudaFunction,
    relu_backward: CudaFunction,
    bias_grad: CudaFunction,
    sgd_step: CudaFunction,
}

impl Kernels {
    fn load(stream: &Arc<CudaStream>) -> GpuResult<Kernels> {
        let module = load_kernels(stream)?;
        Ok(Kernels {
            add_bias: module.load_function("add_bias")?,
            add_bias_relu: module.load_function("add_bias_relu")?,
            sigmoid_bce: module.load_function("sigmoid_bce")?,
            softmax_cross_entropy: module.load_function("softmax_cross_entropy")?,
            relu_backward: module.load_function("relu_backward")?,
            bias_grad: module.load_function("bias_grad")?,
            sgd_step: module.load_function("sgd_step")?,
        })
    }
}

/// A step's intermediate values on the GPU, room for `rows` rows; made again, larger, when a
/// bigger batch comes (usually only for the first batch).
struct Scratch {
    /// How many rows each buffer has room for.
    rows: usize,
    /// h = x·W1ᵀ + b1, rows × hidden: kept for ReLU's backward.
    hidden_pre: CudaSlice<f32>,
    /// relu(h), rows × hidden: layer 2's input.
    hidden: CudaSlice<f32>,
    /// z = relu(h)·W2ᵀ + b2, rows × outputs.
    output: CudaSlice<f32>,
    /// dLoss/dz, rows × outputs.
    grad_output: CudaSlice<f32>,
    /// dLoss/drelu(h), then (in place) dLoss/dh, rows × hidden.
    grad_hidden: CudaSlice<f32>,
}

impl Scratch {
    fn new(
        stream: &Arc<CudaStream>,
        rows: usize,
        hidden: usize,
        outputs: usize,
    ) -> GpuResult<Scratch> {
        let room = |cols: usize| stream.alloc_zeros::<f32>((rows * cols).max(1));
        Ok(Scratch {
            rows,
            hidden_pre: room(hidden)?,
            hidden: room(hidden)?,
            output: room(outputs)?,
            grad_output: room(outputs)?,
            grad_hidden: room(hidden)?,
        })
    }
}

/// Product 1 of the module's notes: `y` (rows × outputs) = `x` (rows × inputs) · Wᵀ.
fn forward_product(
    blas: &CudaBlas,
    layer: &GpuLinear,
    x: &CudaSlice<f32>,
    y: &mut CudaSlice<f32>,
    rows: usize,
) -> GpuResult<()> {
    let (inputs, outputs) = (int(layer.inputs)?, int(layer.outputs)?);
    let config = GemmConfig {
        transa: CUBLAS_OP_T,
        transb: CUBLAS_OP_N,
        m: outputs,
        n: int(rows)?,
        k: inputs,
        alpha: 1.0f32,
        lda: inputs,
        ldb: inputs,
        beta: 0.0f32,
        ldc: outputs,
    };
    // SAFETY: W holds outputs × inputs values, x at least rows × inputs and y rows × outputs
    // (checked by `train_step`).
    unsafe { blas.gemm(config, &layer.weight, x, y) }?;
    Ok(())
}

/// Product 2: the layer's weight gradient (outputs × inputs) += `grad_y`ᵀ · `x`, with `x` its
/// input (rows × inputs) and `grad_y` the gradient of its output (rows × outputs).
fn weight_grad_product(
    blas: &CudaBlas,
    layer: &mut GpuLinear,
    x: &CudaSlice<f32>,
    grad_y: &CudaSlice<f32>,
    rows: usize,
) -> GpuResult<()> {
    let (inputs, outputs) = (int(layer.inputs)?, int(layer.outputs)?);
    let config = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_T,
        m: inputs,
        n: outputs,
        k: int(rows)?,
        alpha: 1.0f32,
        lda: inputs,
        ldb: outputs,
        beta: 1.0f32,
        ldc: inputs,
    };
    // SAFETY: as in `forward_product`.
    unsafe { blas.gemm(config, x, grad_y, &mut layer.weight_grad) }?;
    Ok(())
}

/// Product 3: `grad_x` (rows × inputs) = `grad_y` (rows × outputs) · W.
fn input_grad_product(
    blas: &CudaBlas,
    layer: &GpuLinear,
    grad_y: &CudaSlice<f32>,
    grad_x: &mut CudaSlice<f32>,
    rows: usize,
) -> GpuResult<()> {
    let (inputs, outputs) = (int(layer.inputs)?, int(layer.outputs)?);
    let config = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: inputs,
        n: int(rows)?,
        k: outputs,
        alpha: 1.0f32,
        lda: inputs,
        ldb: outputs,
        beta: 0.0f32,
        ldc: inputs,
    };
    // SAFETY: as in `forward_product`.
    unsafe { blas.gemm(config, &layer.weight, grad_y, grad_x) }?;
    Ok(())
}
// END SOLUTION

/// A two-layer model on the GPU (`model.to(device)`): layer1 → ReLU → layer2 → head.
pub struct GpuModel {
    /// The first layer (inputs → hidden).
    pub layer1: GpuLinear,
    /// The second layer (hidden → outputs).
    pub layer2: GpuLinear,
    /// Which loss the step computes on layer 2's output.
    pub head: Head,
    // BEGIN SOLUTION
    /// The stream every step's work goes on.
    stream: Arc<CudaStream>,
    /// The cuBLAS handle, on `stream`.
    blas: CudaBlas,
    /// The lab's kernels, loaded on the stream's GPU.
    kernels: Kernels,
    /// The step's intermediate values, made at the first step.
    scratch: Option<Scratch>,
    // END SOLUTION
    //@template // Add the private fields a step needs: the stream, a cuBLAS handle, your loaded
    //@template // kernels, GPU buffers for the hidden layer, the output and their gradients.
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
        // BEGIN SOLUTION
        let layers = model.layers_mut();
        let [first, second] = layers.as_slice() else {
            return Err(format!("a GPU model has two layers, not {}", layers.len()).into());
        };
        let layer1 = GpuLinear::to_device(first, stream)?;
        let layer2 = GpuLinear::to_device(second, stream)?;
        if layer2.inputs != layer1.outputs {
            return Err(format!(
                "layer 2 takes {} inputs but layer 1 gives {} outputs",
                layer2.inputs, layer1.outputs
            )
            .into());
        }
        if head == Head::Sigmoid && layer2.outputs != 1 {
            return Err(
                format!("the sigmoid head takes one output, not {}", layer2.outputs).into(),
            );
        }
        Ok(GpuModel {
            layer1,
            layer2,
            head,
            stream: stream.clone(),
            blas: CudaBlas::new(stream.clone())?,
            kernels: Kernels::load(stream)?,
            scratch: None,
        })
        // END SOLUTION
        //@template todo!("GpuModel::to_device: both layers up, kernels and cuBLAS ready")
    }

    /// Copies the parameters and gradients back into `model`'s two layers
    /// ([`GpuLinear::to_host`], then `*layer = …` for each of `model.layers_mut()`).
    pub fn to_host(&self, model: &mut dyn Model) -> GpuResult<()> {
        // BEGIN SOLUTION
        let mut layers = model.layers_mut();
        let count = layers.len();
        let [first, second] = layers.as_mut_slice() else {
            return Err(format!("a GPU model has two layers, not {count}").into());
        };
        **first = self.layer1.to_host(&self.stream)?;
        **second = self.layer2.to_host(&self.stream)?;
        Ok(())
        // END SOLUTION
        //@template todo!("GpuModel::to_host: both layers back")
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
        // BEGIN SOLUTION
        let GpuModel {
            layer1,
            layer2,
            head,
            stream,
            blas,
            kernels,
            scratch,
        } = self;
        let rows = batch.len;
        let (inputs, hidden, outputs) = (layer1.inputs, layer1.outputs, layer2.outputs);
        if batch.x.len() < rows * inputs || batch.labels.len() < rows {
            return Err(format!(
                "a batch of {rows} rows needs {} inputs and {rows} labels; it has {} and {}",
                rows * inputs,
                batch.x.len(),
                batch.labels.len()
            )
            .into());
        }
        if loss_sum.is_empty() {
            return Err("loss_sum must hold one f32".into());
        }

        // 1. zero_grad.
        stream.memset_zeros(&mut layer1.weight_grad)?;
        stream.memset_zeros(&mut layer1.bias_grad)?;
        stream.memset_zeros(&mut layer2.weight_grad)?;
        stream.memset_zeros(&mut layer2.bias_grad)?;
        if rows == 0 {
            // Nothing to learn from: the loss adds 0 and the parameters stay, as on the CPU.
            return Ok(());
        }
        if scratch.as_ref().is_none_or(|s| s.rows < rows) {
            *scratch = Some(Scratch::new(stream, rows, hidden, outputs)?);
        }
        let s = scratch
            .as_mut()
            .ok_or("the scratch buffers were just made")?;
        let (n_rows, n_hidden, n_outputs) = (int(rows)?, int(hidden)?, int(outputs)?);

        // 2. forward: h = x·W1ᵀ + b1, a = relu(h), z = a·W2ᵀ + b2.
        forward_product(blas, layer1, &batch.x, &mut s.hidden_pre, rows)?;
        let mut launch = stream.launch_builder(&kernels.add_bias_relu);
        launch
            .arg(&mut s.hidden_pre)
            .arg(&mut s.hidden)
            .arg(&layer1.bias)
            .arg(&n_rows)
            .arg(&n_hidden);
        // SAFETY (this and every launch below): the arguments match the kernel's parameters,
        // and every buffer holds at least the elements the sizes passed say.
        let config = cover(rows * hidden)?;
        unsafe { launch.launch(config) }?;
        forward_product(blas, layer2, &s.hidden, &mut s.output, rows)?;
        let mut launch = stream.launch_builder(&kernels.add_bias);
        launch
            .arg(&mut s.output)
            .arg(&layer2.bias)
            .arg(&n_rows)
            .arg(&n_outputs);
        let config = cover(rows * outputs)?;
        unsafe { launch.launch(config) }?;

        // 3. the loss and dLoss/dz.
        match head {
            Head::Sigmoid => {
                let mut launch = stream.launch_builder(&kernels.sigmoid_bce);
                launch
                    .arg(&s.output)
                    .arg(&batch.labels)
                    .arg(&mut s.grad_output)
                    .arg(&mut *loss_sum)
                    .arg(&n_rows);
                unsafe { launch.launch(ONE_BLOCK) }?;
            }
            Head::Softmax => {
                let mut launch = stream.launch_builder(&kernels.softmax_cross_entropy);
                launch
                    .arg(&s.output)
                    .arg(&batch.labels)
                    .arg(&mut s.grad_output)
                    .arg(&mut *loss_sum)
                    .arg(&n_rows)
                    .arg(&n_outputs);
                unsafe { launch.launch(ONE_BLOCK) }?;
            }
        }

        // 4. backward through layer 2, the ReLU and layer 1.
        weight_grad_product(blas, layer2, &s.hidden, &s.grad_output, rows)?;
        let mut launch = stream.launch_builder(&kernels.bias_grad);
        launch
            .arg(&s.grad_output)
            .arg(&mut layer2.bias_grad)
            .arg(&n_rows)
            .arg(&n_outputs);
        let config = cover(outputs)?;
        unsafe { launch.launch(config) }?;
        input_grad_product(blas, layer2, &s.grad_output, &mut s.grad_hidden, rows)?;
        let n_hidden_values = int(rows * hidden)?;
        let mut launch = stream.launch_builder(&kernels.relu_backward);
        launch
            .arg(&mut s.grad_hidden)
            .arg(&s.hidden_pre)
            .arg(&n_hidden_values);
        let config = cover(rows * hidden)?;
        unsafe { launch.launch(config) }?;
        weight_grad_product(blas, layer1, &batch.x, &s.grad_hidden, rows)?;
        let mut launch = stream.launch_builder(&kernels.bias_grad);
        launch
            .arg(&s.grad_hidden)
            .arg(&mut layer1.bias_grad)
            .arg(&n_rows)
            .arg(&n_hidden);
        let config = cover(hidden)?;
        unsafe { launch.launch(config) }?;

        // 5. SGD: p -= lr * grad, for each of the four parameters.
        for layer in [layer1, layer2] {
            let (weights, biases) = (int(layer.outputs * layer.inputs)?, int(layer.outputs)?);
            let mut launch = stream.launch_builder(&kernels.sgd_step);
            launch
                .arg(&mut layer.weight)
                .arg(&layer.weight_grad)
                .arg(&lr)
                .arg(&weights);
            let config = cover(layer.outputs * layer.inputs)?;
            unsafe { launch.launch(config) }?;
            let mut launch = stream.launch_builder(&kernels.sgd_step);
            launch
                .arg(&mut layer.bias)
                .arg(&layer.bias_grad)
                .arg(&lr)
                .arg(&biases);
            let config = cover(layer.outputs)?;
            unsafe { launch.launch(config) }?;
        }
        Ok(())
        // END SOLUTION
        //@template todo!("GpuModel::train_step: zero_grad, forward, loss, backward, step")
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
    // BEGIN SOLUTION
    let (rows, cols) = x.dim();
    if labels.len() != rows {
        return Err(format!("{rows} examples but {} labels", labels.len()).into());
    }
    let labels = labels
        .iter()
        .map(|&l| i32::try_from(l))
        .collect::<Result<Vec<i32>, _>>()?;
    Ok(DeviceDataset {
        x: upload(stream, &row_major(x))?,
        labels: upload(stream, &labels)?,
        rows,
        cols,
    })
    // END SOLUTION
    //@template todo!("to_device: the inputs and the labels, one copy each")
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
    // BEGIN SOLUTION
    /// The dataset on the GPU, which the batches' rows come from.
    data: &'a DeviceDataset,
    /// Every batch's row indices, one after the other.
    indices: CudaSlice<i32>,
    /// Batch `b`'s indices are `indices[offsets[b]..offsets[b + 1]]` (kept on the host).
    offsets: Vec<usize>,
    /// The next batch to yield.
    next: usize,
    /// The `gather_rows` kernel.
    gather: CudaFunction,
    // END SOLUTION
    //@template data: &'a DeviceDataset,
    //@template // Add what else the loader needs: every batch's indices on the GPU, where each
    //@template // batch starts in them (on the host), the next batch, the loaded gather kernel.
}

impl<'a> DeviceDataLoader<'a> {
    /// Prepares a loader over `batches` of `data`: uploads all the index lists at once (one
    /// flat list of `i32`, with where each batch starts kept on the host) and loads the
    /// gather kernel. The stream is the data's: `data.x.stream()`.
    ///
    /// Return an error for an index that is not a row of `data`.
    pub fn new(data: &'a DeviceDataset, batches: &[Vec<usize>]) -> GpuResult<DeviceDataLoader<'a>> {
        // BEGIN SOLUTION
        let stream = data.x.stream();
        let mut flat = Vec::with_capacity(batches.iter().map(Vec::len).sum());
        let mut offsets = Vec::with_capacity(batches.len() + 1);
        offsets.push(0);
        for batch in batches {
            for &i in batch {
                if i >= data.rows {
                    return Err(format!("row {i} of a dataset of {} rows", data.rows).into());
                }
                flat.push(int(i)?);
            }
            offsets.push(flat.len());
        }
        let gather = load_kernels(stream)?.load_function("gather_rows")?;
        Ok(DeviceDataLoader {
            data,
            indices: upload(stream, &flat)?,
            offsets,
            next: 0,
            gather,
        })
        // END SOLUTION
        //@template todo!("DeviceDataLoader::new: upload every index list once")
    }
}

impl Iterator for DeviceDataLoader<'_> {
    type Item = GpuResult<DeviceBatch>;

    /// The next batch, or `None` after the last: makes room for its rows and labels on the
    /// GPU (`stream.alloc_zeros`) and launches the gather kernel on the batch's part of the
    /// indices (`indices.slice(start..end)` is a view you can pass as a kernel argument).
    fn next(&mut self) -> Option<GpuResult<DeviceBatch>> {
        // BEGIN SOLUTION
        let (start, end) = (
            *self.offsets.get(self.next)?,
            *self.offsets.get(self.next + 1)?,
        );
        self.next += 1;
        let batch = || -> GpuResult<DeviceBatch> {
            let (len, cols) = (end - start, self.data.cols);
            let stream = self.data.x.stream();
            // CUDA refuses to allocate 0 bytes: an empty batch gets one unused element.
            let mut x = stream.alloc_zeros::<f32>((len * cols).max(1))?;
            let mut labels = stream.alloc_zeros::<i32>(len.max(1))?;
            if len > 0 {
                let index = self.indices.slice(start..end);
                let (n_len, n_cols) = (int(len)?, int(cols)?);
                let mut launch = stream.launch_builder(&self.gather);
                launch
                    .arg(&self.data.x)
                    .arg(&self.data.labels)
                    .arg(&index)
                    .arg(&mut x)
                    .arg(&mut labels)
                    .arg(&n_len)
                    .arg(&n_cols);
                // SAFETY: the indices were checked to be rows of the dataset, and the new
                // buffers hold len × cols values and len labels.
                let config = cover((len * cols).max(len))?;
                unsafe { launch.launch(config) }?;
            }
            Ok(DeviceBatch { x, labels, len })
        };
        Some(batch())
        // END SOLUTION
        //@template todo!("DeviceDataLoader::next: room for the batch, then the gather kernel")
    }
}

// BEGIN SOLUTION
/// Queues a `train_step` for every batch of `loader`, adding each batch's mean loss to
/// `loss_sum`; returns the number of batches. Waits for nothing.
fn launch_epoch(
    model: &mut GpuModel,
    loader: DeviceDataLoader<'_>,
    lr: f32,
    loss_sum: &mut CudaSlice<f32>,
) -> GpuResult<usize> {
    let mut count = 0;
    for batch in loader {
        model.train_step(&batch?, lr, loss_sum)?;
        count += 1;
    }
    Ok(count)
}

/// The mean batch loss from the sum on the device: the epoch's one copy back.
fn mean_loss(stream: &Arc<CudaStream>, loss_sum: &CudaSlice<f32>, count: usize) -> GpuResult<f32> {
    let sum = stream.clone_dtoh(loss_sum)?;
    let sum = sum.first().ok_or("the loss sum is empty")?;
    Ok(sum / count.max(1) as f32)
}
// END SOLUTION

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
    // BEGIN SOLUTION
    let stream = model.stream.clone();
    let mut loss_sum = stream.alloc_zeros::<f32>(1)?;
    let count = launch_epoch(model, loader, lr, &mut loss_sum)?;
    mean_loss(&stream, &loss_sum, count)
    // END SOLUTION
    //@template todo!("train_epoch_gpu: a step per batch, one copy of the loss at the end")
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
    // BEGIN SOLUTION
    let stream = model.stream.clone();
    let mut loss_sum = stream.alloc_zeros::<f32>(1)?;
    stream.synchronize()?;
    let start = Instant::now();
    let count = launch_epoch(model, loader, lr, &mut loss_sum)?;
    stream.synchronize()?;
    let took = start.elapsed();
    Ok((mean_loss(&stream, &loss_sum, count)?, took))
    // END SOLUTION
    //@template todo!("time_gpu_epoch: synchronize, start the clock, all the steps, synchronize, stop")
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
    // BEGIN SOLUTION
    match device {
        Device::Gpu(stream) => {
            let mut gpu = GpuModel::to_device(model, head, stream)?;
            let data = to_device(x, labels, stream)?;
            let loader = DeviceDataLoader::new(&data, batches)?;
            let loss = train_epoch_gpu(&mut gpu, loader, lr)?;
            gpu.to_host(model)?;
            Ok(loss)
        }
        Device::Cpu => Ok(crate::train_epoch(
            model,
            &mut Sgd { lr },
            x,
            labels,
            batches,
        )),
    }
    // END SOLUTION
    //@template todo!("train_on: the GPU epoch, or the CPU one")
}
// BEGIN SOLUTION

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{batches, train_epoch, Mlp, SimpleNN, StdRng};
    use ndarray::Axis;
    use rand::{RngExt, SeedableRng};

    /// The GPU's stream, or `None` (with a line saying the test was skipped) without one.
    fn gpu_or_skip(test: &str) -> Option<Arc<CudaStream>> {
        match default_device() {
            Device::Gpu(stream) => Some(stream),
            Device::Cpu => {
                println!("{test}: skipped, no GPU (run it under `grader emulate`)");
                None
            }
        }
    }

    fn random(rows: usize, cols: usize, rng: &mut StdRng) -> Array2<f32> {
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-1.0..1.0))
    }

    /// `‖a − b‖∞ ≤ tolerance · max(‖b‖∞, 1e-3)`.
    fn assert_close<'a>(
        a: impl IntoIterator<Item = &'a f32>,
        b: impl IntoIterator<Item = &'a f32> + Clone,
        tolerance: f32,
        what: &str,
    ) {
        let scale = b.clone().into_iter().fold(1e-3f32, |m, v| m.max(v.abs()));
        let mut count = 0;
        let worst = a.into_iter().zip(b).fold(0.0f32, |m, (x, y)| {
            count += 1;
            m.max((x - y).abs())
        });
        assert!(count > 0, "{what}: nothing compared");
        assert!(
            worst <= tolerance * scale,
            "{what}: off by {worst}, more than {tolerance} of {scale}"
        );
    }

    fn assert_layers_close(gpu: &Linear, cpu: &Linear, what: &str) {
        assert_eq!(gpu.weight.dim(), cpu.weight.dim(), "{what}");
        assert_close(&gpu.weight, &cpu.weight, 1e-4, &format!("{what} weight"));
        assert_close(&gpu.bias, &cpu.bias, 1e-4, &format!("{what} bias"));
        assert_close(
            &gpu.weight_grad,
            &cpu.weight_grad,
            1e-4,
            &format!("{what} weight gradient"),
        );
        assert_close(
            &gpu.bias_grad,
            &cpu.bias_grad,
            1e-4,
            &format!("{what} bias gradient"),
        );
    }

    fn bits(layer: &Linear) -> Vec<u32> {
        let all = layer.weight.iter().chain(&layer.bias);
        let all = all.chain(&layer.weight_grad).chain(&layer.bias_grad);
        all.map(|v| v.to_bits()).collect()
    }

    #[test]
    fn gpu_model_round_trip_is_bit_exact() -> GpuResult<()> {
        let Some(stream) = gpu_or_skip("gpu_model_round_trip_is_bit_exact") else {
            return Ok(());
        };
        let mut rng = StdRng::seed_from_u64(20);
        let mut model = SimpleNN::new(10, &mut rng);
        for layer in model.layers_mut() {
            layer.weight_grad = random(layer.weight.nrows(), layer.weight.ncols(), &mut rng);
            layer.bias_grad =
                Array1::from_shape_simple_fn(layer.bias.len(), || rng.random_range(-1.0..1.0));
        }
        let gpu = GpuModel::to_device(&mut model, Head::Sigmoid, &stream)?;
        assert_eq!((gpu.layer1.inputs, gpu.layer1.outputs), (10, 32));
        assert_eq!((gpu.layer2.inputs, gpu.layer2.outputs), (32, 1));
        let mut back = SimpleNN::new(10, &mut StdRng::seed_from_u64(21));
        gpu.to_host(&mut back)?;
        assert_eq!(bits(&back.layer1), bits(&model.layer1));
        assert_eq!(bits(&back.layer2), bits(&model.layer2));
        Ok(())
    }

    #[test]
    fn loader_batches_are_the_gathered_rows() -> GpuResult<()> {
        let Some(stream) = gpu_or_skip("loader_batches_are_the_gathered_rows") else {
            return Ok(());
        };
        let mut rng = StdRng::seed_from_u64(22);
        let x = random(50, 7, &mut rng);
        let labels: Vec<usize> = (0..50).map(|i| (i * 7) % 10).collect();
        let order = batches(50, 16, &mut rng);
        let data = to_device(&x, &labels, &stream)?;
        assert_eq!((data.rows, data.cols), (50, 7));
        let mut seen = 0;
        for (batch, indices) in DeviceDataLoader::new(&data, &order)?.zip(&order) {
            let batch = batch?;
            assert_eq!(batch.len, indices.len());
            let rows = stream.clone_dtoh(&batch.x)?;
            let expected = x.select(Axis(0), indices);
            assert_eq!(rows, expected.iter().copied().collect::<Vec<f32>>());
            let got: Vec<i32> = stream.clone_dtoh(&batch.labels)?;
            let want: Vec<i32> = indices.iter().map(|&i| labels[i] as i32).collect();
            assert_eq!(got, want);
            seen += 1;
        }
        assert_eq!(seen, order.len());
        assert!(DeviceDataLoader::new(&data, &[vec![50]]).is_err());
        Ok(())
    }

    /// One epoch of `model` from the same start on the GPU and with the CPU's
    /// `train_epoch`: the same parameters, gradients and mean loss.
    fn gpu_epoch_matches_cpu<M: Model + Clone>(
        test: &str,
        model: M,
        head: Head,
        (x, labels): (&Array2<f32>, &[usize]),
        order: &[Vec<usize>],
        lr: f32,
    ) -> GpuResult<()> {
        let Some(stream) = gpu_or_skip(test) else {
            return Ok(());
        };
        let mut cpu = model.clone();
        let cpu_loss = train_epoch(&mut cpu, &mut Sgd { lr }, x, labels, order);
        let mut on_gpu = model;
        let gpu_loss = train_on(
            &Device::Gpu(stream),
            &mut on_gpu,
            head,
            x,
            labels,
            order,
            lr,
        )?;
        assert_close(
            &[gpu_loss],
            &[cpu_loss],
            1e-4,
            &format!("{test}: mean loss"),
        );
        let (gpu_layers, cpu_layers) = (on_gpu.layers_mut(), cpu.layers_mut());
        assert_layers_close(gpu_layers[0], cpu_layers[0], &format!("{test}: layer 1"));
        assert_layers_close(gpu_layers[1], cpu_layers[1], &format!("{test}: layer 2"));
        Ok(())
    }

    #[test]
    fn simple_nn_gpu_epoch_matches_the_cpu() -> GpuResult<()> {
        let mut rng = StdRng::seed_from_u64(23);
        let x = random(300, 10, &mut rng);
        let labels: Vec<usize> = x
            .rows()
            .into_iter()
            .map(|r| usize::from(r[0] + r[1] > 0.0))
            .collect();
        let model = SimpleNN::new(10, &mut rng);
        let order = batches(300, 32, &mut rng);
        gpu_epoch_matches_cpu(
            "simple_nn_gpu_epoch_matches_the_cpu",
            model,
            Head::Sigmoid,
            (&x, &labels),
            &order,
            0.1,
        )
    }

    #[test]
    fn mlp_gpu_epoch_matches_the_cpu() -> GpuResult<()> {
        let mut rng = StdRng::seed_from_u64(24);
        let labels: Vec<usize> = (0..160).map(|i| (i * 3) % 10).collect();
        let x = Array2::from_shape_fn((160, 784), |(i, j)| {
            let on = j / 78 == labels[i];
            f32::from(u8::from(on)) + 0.3 * rng.random_range(-1.0f32..1.0)
        });
        let model = Mlp::new(&mut rng);
        let order = batches(160, 32, &mut rng);
        gpu_epoch_matches_cpu(
            "mlp_gpu_epoch_matches_the_cpu",
            model,
            Head::Softmax,
            (&x, &labels),
            &order,
            0.01,
        )
    }

    #[test]
    fn timed_epoch_gives_the_loss_of_an_untimed_one() -> GpuResult<()> {
        let Some(stream) = gpu_or_skip("timed_epoch_gives_the_loss_of_an_untimed_one") else {
            return Ok(());
        };
        let mut rng = StdRng::seed_from_u64(25);
        let x = random(200, 10, &mut rng);
        let labels: Vec<usize> = (0..200).map(|i| i % 2).collect();
        let mut model = SimpleNN::new(10, &mut rng);
        let order = batches(200, 64, &mut rng);
        let data = to_device(&x, &labels, &stream)?;

        let mut first = GpuModel::to_device(&mut model.clone(), Head::Sigmoid, &stream)?;
        let loss = train_epoch_gpu(&mut first, DeviceDataLoader::new(&data, &order)?, 0.1)?;
        let mut second = GpuModel::to_device(&mut model, Head::Sigmoid, &stream)?;
        let (timed_loss, took) =
            time_gpu_epoch(&mut second, DeviceDataLoader::new(&data, &order)?, 0.1)?;
        assert!(took > Duration::ZERO);
        assert_close(&[timed_loss], &[loss], 1e-6, "timed loss");
        assert!(loss.is_finite() && loss > 0.0);
        Ok(())
    }
}
// END SOLUTION
