//! The training lab's references, in f64 (hot code: every grading run trains them, so they are
//! built optimised; the gradient check and the batch-split check are the lab's,
//! `grader_labs::training::reference`): what PyTorch computes for each piece of the lesson's
//! training loop (a linear layer and its initialisation, ReLU, sigmoid, binary cross-entropy,
//! cross-entropy from logits, SGD, Adam, shuffled minibatches, one epoch), so the supervisor can
//! judge a student's f32 functions against values it computed itself. Gradients are also
//! checked against central finite differences ([`numerical_gradient`]), so a reference and a
//! student cannot share a mistake unnoticed.
//!
//! The typical wrong loops ([`LoopFault`]) run here too: when a student's parameters leave the
//! reference trajectory, the one that matches names what went wrong.

use ndarray::{Array1, Array2, Axis};
use rand::rngs::StdRng;
use rand::RngExt;

/// PyTorch's `nn.Linear`: `y = x·Wᵀ + b`, weight `out × in`, and the gradients `backward`
/// accumulates into (as `loss.backward()` does until `zero_grad`).
#[derive(Debug, Clone, PartialEq)]
pub struct Linear {
    /// `out × in`.
    pub weight: Array2<f64>,
    /// `out`.
    pub bias: Array1<f64>,
    /// The weight's accumulated gradient.
    pub weight_grad: Array2<f64>,
    /// The bias's accumulated gradient.
    pub bias_grad: Array1<f64>,
}

impl Linear {
    /// PyTorch's default initialisation: weight and bias uniform in ±1/√in.
    pub fn init(inputs: usize, outputs: usize, rng: &mut StdRng) -> Linear {
        let bound = 1.0 / (inputs as f64).sqrt();
        let mut uniform = || rng.random_range(-bound..bound);
        let weight = Array2::from_shape_simple_fn((outputs, inputs), &mut uniform);
        let bias = Array1::from_shape_simple_fn(outputs, &mut uniform);
        Linear::from_parameters(weight, bias)
    }

    /// A layer with these parameters and zero gradients.
    pub fn from_parameters(weight: Array2<f64>, bias: Array1<f64>) -> Linear {
        Linear {
            weight_grad: Array2::zeros(weight.raw_dim()),
            bias_grad: Array1::zeros(bias.len()),
            weight,
            bias,
        }
    }

    /// `x` is `batch × in`; the result is `batch × out`.
    pub fn forward(&self, x: &Array2<f64>) -> Array2<f64> {
        x.dot(&self.weight.t()) + &self.bias
    }

    /// Given the layer's input `x` and the loss's gradient with respect to its output,
    /// accumulates the parameters' gradients and returns the gradient with respect to `x`.
    pub fn backward(&mut self, x: &Array2<f64>, grad_out: &Array2<f64>) -> Array2<f64> {
        self.weight_grad += &grad_out.t().dot(x);
        self.bias_grad += &grad_out.sum_axis(Axis(0));
        grad_out.dot(&self.weight)
    }

    /// Sets both gradients to zero.
    pub fn zero_grad(&mut self) {
        self.weight_grad.fill(0.0);
        self.bias_grad.fill(0.0);
    }
}

/// `max(x, 0)`, element by element.
pub fn relu(x: &Array2<f64>) -> Array2<f64> {
    x.mapv(|v| v.max(0.0))
}

/// ReLU's backward pass: the gradient where the input was positive, 0 elsewhere (PyTorch's
/// choice at exactly 0).
pub fn relu_backward(x: &Array2<f64>, grad_out: &Array2<f64>) -> Array2<f64> {
    let mut grad = grad_out.clone();
    grad.zip_mut_with(x, |g, &v| {
        if v <= 0.0 {
            *g = 0.0;
        }
    });
    grad
}

/// `1 / (1 + e^−x)`, without overflow for large |x|.
pub fn sigmoid(x: &Array2<f64>) -> Array2<f64> {
    x.mapv(|v| {
        if v >= 0.0 {
            1.0 / (1.0 + (-v).exp())
        } else {
            let e = v.exp();
            e / (1.0 + e)
        }
    })
}

/// PyTorch's `BCELoss` (mean): each log is clamped at −100, so a probability of exactly 0 or 1
/// costs 100, not infinity.
pub fn bce_loss(p: &Array2<f64>, y: &Array2<f64>) -> f64 {
    let log = |v: f64| v.ln().max(-100.0);
    let total: f64 = p
        .iter()
        .zip(y)
        .map(|(&p, &y)| -(y * log(p) + (1.0 - y) * log(1.0 - p)))
        .sum();
    total / p.len() as f64
}

/// The gradient of [`bce_loss`] with respect to `p`, as PyTorch computes it:
/// `(p − y) / max(p(1 − p), 1e−12) / n`.
pub fn bce_grad(p: &Array2<f64>, y: &Array2<f64>) -> Array2<f64> {
    let n = p.len() as f64;
    let mut grad = p - y;
    grad.zip_mut_with(p, |g, &p| *g /= (p * (1.0 - p)).max(1e-12) * n);
    grad
}

/// PyTorch's `CrossEntropyLoss` (mean) from logits `batch × classes`, with log-sum-exp so large
/// logits do not overflow.
pub fn cross_entropy(logits: &Array2<f64>, labels: &[usize]) -> f64 {
    let total: f64 = logits
        .outer_iter()
        .zip(labels)
        .map(|(row, &label)| {
            let max = row.fold(f64::NEG_INFINITY, |m, &v| m.max(v));
            let lse = max + row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
            lse - row[label]
        })
        .sum();
    total / labels.len() as f64
}

/// The gradient of [`cross_entropy`] with respect to the logits: `(softmax − one-hot) / n`.
pub fn cross_entropy_grad(logits: &Array2<f64>, labels: &[usize]) -> Array2<f64> {
    let n = labels.len() as f64;
    let mut grad = logits.clone();
    for (mut row, &label) in grad.outer_iter_mut().zip(labels) {
        let max = row.fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        row.mapv_inplace(|v| (v - max).exp());
        let sum = row.sum();
        row.mapv_inplace(|v| v / sum);
        row[label] -= 1.0;
        row.mapv_inplace(|v| v / n);
    }
    grad
}

/// What the last layer is followed by, and so which loss the model trains with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// One output, a sigmoid, binary cross-entropy (the lesson's `SimpleNN`).
    SigmoidBce,
    /// Logits and cross-entropy (the MNIST `Mlp`).
    LogitsCrossEntropy,
}

/// The lessons' two models: `Linear → ReLU → Linear`, then the head. `SimpleNN` is
/// 10→32→ReLU→1→Sigmoid; `Mlp` is 784→128→ReLU→10.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoLayer {
    /// `layer1`.
    pub layer1: Linear,
    /// `layer2`.
    pub layer2: Linear,
    /// The output and its loss.
    pub head: Head,
}

/// What a forward pass keeps for the backward pass.
#[derive(Debug, Clone)]
pub struct Trace {
    input: Array2<f64>,
    hidden_pre: Array2<f64>,
    hidden: Array2<f64>,
    /// The model's output: probabilities (`SigmoidBce`) or logits.
    pub output: Array2<f64>,
}

/// A batch's targets: 0/1 values for [`Head::SigmoidBce`], class indices for logits.
#[derive(Debug, Clone, Copy)]
pub enum Targets<'a> {
    /// `batch × 1` of 0.0 or 1.0.
    Binary(&'a Array2<f64>),
    /// One class index per row.
    Classes(&'a [usize]),
}

impl TwoLayer {
    /// The lesson's `SimpleNN(input_dim)`, initialised from `rng` as PyTorch would (layer1, then
    /// layer2; weight before bias).
    pub fn simple_nn(inputs: usize, rng: &mut StdRng) -> TwoLayer {
        let layer1 = Linear::init(inputs, 32, rng);
        let layer2 = Linear::init(32, 1, rng);
        TwoLayer {
            layer1,
            layer2,
            head: Head::SigmoidBce,
        }
    }

    /// The MNIST walk-through's `784 → 128 → ReLU → 10`.
    pub fn mlp(rng: &mut StdRng) -> TwoLayer {
        let layer1 = Linear::init(784, 128, rng);
        let layer2 = Linear::init(128, 10, rng);
        TwoLayer {
            layer1,
            layer2,
            head: Head::LogitsCrossEntropy,
        }
    }

    /// The forward pass of a batch `x`.
    pub fn forward(&self, x: &Array2<f64>) -> Trace {
        let hidden_pre = self.layer1.forward(x);
        let hidden = relu(&hidden_pre);
        let pre = self.layer2.forward(&hidden);
        let output = match self.head {
            Head::SigmoidBce => sigmoid(&pre),
            Head::LogitsCrossEntropy => pre,
        };
        Trace {
            input: x.clone(),
            hidden_pre,
            hidden,
            output,
        }
    }

    /// The loss of a forward pass.
    pub fn loss(&self, trace: &Trace, targets: Targets) -> f64 {
        match targets {
            Targets::Binary(y) => bce_loss(&trace.output, y),
            Targets::Classes(labels) => cross_entropy(&trace.output, labels),
        }
    }

    /// Accumulates every parameter's gradient of the loss of `trace` (after the head).
    pub fn backward(&mut self, trace: &Trace, targets: Targets) {
        let grad_pre = match targets {
            Targets::Binary(y) => {
                // Through the sigmoid: dσ/dx = σ(1 − σ).
                let p = &trace.output;
                bce_grad(p, y) * &p.mapv(|p| p * (1.0 - p))
            }
            Targets::Classes(labels) => cross_entropy_grad(&trace.output, labels),
        };
        let grad_hidden = self.layer2.backward(&trace.hidden, &grad_pre);
        let grad_hidden_pre = relu_backward(&trace.hidden_pre, &grad_hidden);
        self.layer1.backward(&trace.input, &grad_hidden_pre);
    }

    /// `optimizer.zero_grad()`.
    pub fn zero_grad(&mut self) {
        self.layer1.zero_grad();
        self.layer2.zero_grad();
    }

    /// The layers, in the order an optimizer keeps its state for them.
    pub fn layers_mut(&mut self) -> [&mut Linear; 2] {
        [&mut self.layer1, &mut self.layer2]
    }
}

/// `torch.optim.SGD` without momentum: `p ← p − lr·g`.
#[derive(Debug, Clone, Copy)]
pub struct Sgd {
    /// The learning rate.
    pub lr: f64,
}

impl Sgd {
    /// One step over every layer's weight and bias.
    pub fn step(&self, layers: &mut [&mut Linear]) {
        for layer in layers {
            layer.weight.scaled_add(-self.lr, &layer.weight_grad);
            layer.bias.scaled_add(-self.lr, &layer.bias_grad);
        }
    }
}

/// `torch.optim.Adam`: moving averages of the gradient and its square, corrected for their
/// start at zero with the step counter `t`.
#[derive(Debug, Clone)]
pub struct Adam {
    /// The learning rate.
    pub lr: f64,
    /// β₁ (0.9).
    pub beta1: f64,
    /// β₂ (0.999).
    pub beta2: f64,
    /// ε (1e-8).
    pub eps: f64,
    /// Steps taken.
    pub t: u32,
    /// Whether the bias correction is applied (off only to reproduce that mistake).
    pub bias_correction: bool,
    /// Whether `t` advances once per layer instead of once per step (on only to reproduce
    /// that mistake: a counter kept by, or advanced inside, the loop over layers).
    pub counter_per_layer: bool,
    /// First and second moments, one pair per tensor, in step order.
    moments: Vec<(Vec<f64>, Vec<f64>)>,
}

impl Adam {
    /// PyTorch's defaults with learning rate `lr`.
    pub fn new(lr: f64) -> Adam {
        Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            t: 0,
            bias_correction: true,
            counter_per_layer: false,
            moments: Vec::new(),
        }
    }

    /// One step over every layer's weight and bias.
    pub fn step(&mut self, layers: &mut [&mut Linear]) {
        if !self.counter_per_layer {
            self.t += 1;
        }
        let mut tensor = 0;
        for layer in layers {
            if self.counter_per_layer {
                self.t += 1;
            }
            let (c1, c2) = if self.bias_correction {
                (
                    1.0 - self.beta1.powi(self.t as i32),
                    1.0 - self.beta2.powi(self.t as i32),
                )
            } else {
                (1.0, 1.0)
            };
            let pairs: [(Vec<&mut f64>, Vec<f64>); 2] = [
                (
                    layer.weight.iter_mut().collect(),
                    layer.weight_grad.iter().copied().collect(),
                ),
                (layer.bias.iter_mut().collect(), layer.bias_grad.to_vec()),
            ];
            for (values, grads) in pairs {
                if self.moments.len() <= tensor {
                    self.moments
                        .push((vec![0.0; values.len()], vec![0.0; values.len()]));
                }
                let (m, v) = &mut self.moments[tensor];
                for (i, (p, g)) in values.into_iter().zip(grads).enumerate() {
                    m[i] = self.beta1 * m[i] + (1.0 - self.beta1) * g;
                    v[i] = self.beta2 * v[i] + (1.0 - self.beta2) * g * g;
                    let m_hat = m[i] / c1;
                    let v_hat = v[i] / c2;
                    *p -= self.lr * m_hat / (v_hat.sqrt() + self.eps);
                }
                tensor += 1;
            }
        }
    }
}

/// An optimizer of the lesson.
#[derive(Debug, Clone)]
pub enum Optimizer {
    /// SGD.
    Sgd(Sgd),
    /// Adam.
    Adam(Adam),
}

impl Optimizer {
    fn step(&mut self, model: &mut TwoLayer) {
        self.step_layers(&mut model.layers_mut());
    }

    /// One step over these layers.
    pub fn step_layers(&mut self, layers: &mut [&mut Linear]) {
        match self {
            Optimizer::Sgd(sgd) => sgd.step(layers),
            Optimizer::Adam(adam) => adam.step(layers),
        }
    }
}

/// `DataLoader(shuffle=True)`: a fresh random order of `0..n` split into batches of
/// `batch_size`, the last smaller when `n` is not a multiple.
pub fn batches(n: usize, batch_size: usize, rng: &mut StdRng) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..=i);
        order.swap(i, j);
    }
    order
        .chunks(batch_size.max(1))
        .map(<[usize]>::to_vec)
        .collect()
}

/// The usual ways a training loop goes wrong, reproduced to name the one a student's
/// trajectory matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopFault {
    /// `zero_grad` never called: gradients accumulate across batches.
    NoZeroGrad,
    /// `optimizer.step()` before `loss.backward()`: each step uses the previous batch's
    /// gradients.
    StepBeforeBackward,
    /// Adam without its bias correction.
    AdamWithoutBiasCorrection,
    /// The loss summed over the batch instead of averaged.
    SumLoss,
    /// The same order every epoch.
    NoShuffle,
}

impl LoopFault {
    /// Every fault, in the order they are tried.
    pub const ALL: [LoopFault; 5] = [
        LoopFault::NoZeroGrad,
        LoopFault::StepBeforeBackward,
        LoopFault::AdamWithoutBiasCorrection,
        LoopFault::SumLoss,
        LoopFault::NoShuffle,
    ];
}

/// One epoch: for each batch, `zero_grad`, forward, loss, backward, step (or the loop with
/// `fault`). `order` is the epoch's batches (from [`batches`], or `0..n` in order for
/// [`LoopFault::NoShuffle`]). Returns the mean of the batches' losses.
pub fn train_epoch(
    model: &mut TwoLayer,
    optimizer: &mut Optimizer,
    inputs: &Array2<f64>,
    targets: &EpochTargets,
    order: &[Vec<usize>],
    fault: Option<LoopFault>,
) -> f64 {
    if let (Some(LoopFault::AdamWithoutBiasCorrection), Optimizer::Adam(adam)) =
        (fault, &mut *optimizer)
    {
        adam.bias_correction = false;
    }
    let mut total = 0.0;
    for batch in order {
        let x = inputs.select(Axis(0), batch);
        if fault != Some(LoopFault::NoZeroGrad) {
            model.zero_grad();
        }
        let trace = model.forward(&x);
        let scale = match fault {
            Some(LoopFault::SumLoss) => batch.len() as f64,
            _ => 1.0,
        };
        let (loss, grads) = match targets {
            EpochTargets::Binary(y) => {
                let y = y.select(Axis(0), batch);
                let loss = model.loss(&trace, Targets::Binary(&y));
                let mut grads = model.clone();
                grads.zero_grad();
                grads.backward(&trace, Targets::Binary(&y));
                (loss, grads)
            }
            EpochTargets::Classes(labels) => {
                let labels: Vec<usize> = batch.iter().map(|&i| labels[i]).collect();
                let loss = model.loss(&trace, Targets::Classes(&labels));
                let mut grads = model.clone();
                grads.zero_grad();
                grads.backward(&trace, Targets::Classes(&labels));
                (loss, grads)
            }
        };
        if fault == Some(LoopFault::StepBeforeBackward) {
            optimizer.step(model);
        }
        for (layer, fresh) in model
            .layers_mut()
            .into_iter()
            .zip([&grads.layer1, &grads.layer2])
        {
            layer.weight_grad.scaled_add(scale, &fresh.weight_grad);
            layer.bias_grad.scaled_add(scale, &fresh.bias_grad);
        }
        if fault != Some(LoopFault::StepBeforeBackward) {
            optimizer.step(model);
        }
        total += loss * scale;
    }
    total / order.len().max(1) as f64
}

/// An epoch's targets, indexed by example.
#[derive(Debug, Clone)]
pub enum EpochTargets {
    /// `n × 1` of 0.0 or 1.0.
    Binary(Array2<f64>),
    /// One class per example.
    Classes(Vec<usize>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(seed: u64) -> StdRng {
        StdRng::seed_from_u64(seed)
    }

    #[test]
    fn linear_init_is_uniform_within_one_over_root_fan_in() {
        let layer = Linear::init(64, 16, &mut rng(1));
        let bound = 1.0 / 8.0;
        assert!(layer
            .weight
            .iter()
            .chain(&layer.bias)
            .all(|v| v.abs() <= bound));
        let spread = layer.weight.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(spread > 0.9 * bound, "the whole range is used: {spread}");
        assert_eq!(layer.weight.dim(), (16, 64));
    }

    #[test]
    fn bce_clamps_its_logs_and_cross_entropy_survives_huge_logits() {
        let p = Array2::from_shape_vec((2, 1), vec![0.0, 1.0]).expect("shape");
        let y = Array2::from_shape_vec((2, 1), vec![1.0, 0.0]).expect("shape");
        assert!((bce_loss(&p, &y) - 100.0).abs() < 1e-12);
        let logits = Array2::from_shape_vec((1, 3), vec![1000.0, 0.0, -1000.0]).expect("shape");
        assert!(cross_entropy(&logits, &[0]).abs() < 1e-12);
        assert!((cross_entropy(&logits, &[1]) - 1000.0).abs() < 1e-9);
        assert!(cross_entropy_grad(&logits, &[1])
            .iter()
            .all(|g| g.is_finite()));
    }

    #[test]
    fn adam_follows_its_formula_with_the_step_counter() {
        let mut layer =
            Linear::from_parameters(Array2::from_elem((1, 1), 1.0), Array1::from_elem(1, 0.0));
        let mut adam = Adam::new(0.1);
        let (mut m, mut v, mut p) = (0.0, 0.0, 1.0);
        for (t, g) in [(1, 0.5), (2, -0.25), (3, 2.0)] {
            layer.weight_grad.fill(g);
            adam.step(&mut [&mut layer]);
            m = 0.9 * m + 0.1 * g;
            v = 0.999 * v + 0.001 * g * g;
            let m_hat = m / (1.0 - 0.9f64.powi(t));
            let v_hat = v / (1.0 - 0.999f64.powi(t));
            p -= 0.1 * m_hat / (v_hat.sqrt() + 1e-8);
            assert!((layer.weight[[0, 0]] - p).abs() < 1e-12, "step {t}");
        }
    }
}
