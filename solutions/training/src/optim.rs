//! The lesson's optimizers, `torch.optim.SGD` and `torch.optim.Adam`: `optimizer.step()`
//! moves every parameter a little against its gradient.

use crate::layers::Linear;
use ndarray::{Array, Array1, Array2, Dimension, Zip};

/// `optimizer.step()`: updates every layer's weight and bias from the gradients that the
/// backward pass left in `weight_grad` and `bias_grad`.
///
/// The loop calls it as `optimizer.step(&mut model.layers_mut())`; `layers` is always the
/// same model's layers in the same order, so an optimizer may keep state for each.
pub trait Optimizer {
    /// One update of every layer's weight and bias.
    fn step(&mut self, layers: &mut [&mut Linear]);
}

/// `torch.optim.SGD(model.parameters(), lr=lr)`, without momentum: each parameter moves by
/// `−lr` times its gradient.
#[derive(Debug, Clone)]
pub struct Sgd {
    /// The learning rate: how big a step is.
    pub lr: f32,
}

impl Optimizer for Sgd {
    /// For each layer: `weight −= lr · weight_grad` and `bias −= lr · bias_grad`, element by
    /// element. ndarray does each in one call:
    /// `layer.weight.scaled_add(-self.lr, &layer.weight_grad)`.
    fn step(&mut self, layers: &mut [&mut Linear]) {
        // BEGIN SOLUTION
        for layer in layers.iter_mut() {
            layer.weight.scaled_add(-self.lr, &layer.weight_grad);
            layer.bias.scaled_add(-self.lr, &layer.bias_grad);
        }
        // END SOLUTION
        //@template todo!("Sgd::step: parameter minus lr times gradient")
    }
}

/// `torch.optim.Adam(model.parameters(), lr=lr)`: a step scaled per parameter by running
/// averages of the gradient (`m`) and of its square (`v`).
///
/// For every parameter `p` with gradient `g`, at step `t`:
/// `m = β1·m + (1 − β1)·g`, `v = β2·v + (1 − β2)·g²`, then, as `m` and `v` start at 0 and so
/// are too small at first, the bias corrections `m̂ = m / (1 − β1^t)`, `v̂ = v / (1 − β2^t)`,
/// and finally `p −= lr · m̂ / (√v̂ + eps)`.
#[derive(Debug, Clone)]
pub struct Adam {
    /// The learning rate (the lesson uses 0.001).
    pub lr: f32,
    /// β1, how slowly `m` forgets: 0.9.
    pub beta1: f32,
    /// β2, how slowly `v` forgets: 0.999.
    pub beta2: f32,
    /// Keeps the division finite when `v̂` is 0: 1e-8.
    pub eps: f32,
    /// Steps taken so far: 0 before the first.
    pub t: i32,
    /// The moving average of the gradient: one (weight, bias) pair per layer, in the layers'
    /// order, each shaped like that layer's weight and bias. Empty until the first step.
    pub m: Vec<(Array2<f32>, Array1<f32>)>,
    /// The moving average of the squared gradient, shaped like `m`.
    pub v: Vec<(Array2<f32>, Array1<f32>)>,
}

impl Adam {
    /// `torch.optim.Adam(params, lr=lr)` with PyTorch's defaults: `beta1` 0.9, `beta2` 0.999,
    /// `eps` 1e-8, `t` 0, and `m` and `v` empty (`Vec::new()`).
    pub fn new(lr: f32) -> Adam {
        // BEGIN SOLUTION
        Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            t: 0,
            m: Vec::new(),
            v: Vec::new(),
        }
        // END SOLUTION
        //@template todo!("Adam::new: PyTorch defaults, empty state")
    }
}

// BEGIN SOLUTION
/// One Adam update of one tensor `p` (a weight or a bias) from its gradient `g` and its
/// moments `m` and `v`; `c1` and `c2` are the bias corrections `1 − β^t`.
#[allow(clippy::too_many_arguments)]
fn adam_update<D: Dimension>(
    adam: &Adam,
    c1: f32,
    c2: f32,
    p: &mut Array<f32, D>,
    g: &Array<f32, D>,
    m: &mut Array<f32, D>,
    v: &mut Array<f32, D>,
) {
    let (beta1, beta2, lr, eps) = (adam.beta1, adam.beta2, adam.lr, adam.eps);
    Zip::from(p).and(g).and(m).and(v).for_each(|p, &g, m, v| {
        *m = beta1 * *m + (1.0 - beta1) * g;
        *v = beta2 * *v + (1.0 - beta2) * g * g;
        let m_hat = *m / c1;
        let v_hat = *v / c2;
        *p -= lr * m_hat / (v_hat.sqrt() + eps);
    });
}
// END SOLUTION

impl Optimizer for Adam {
    /// One Adam step. Steps:
    /// 1. add 1 to `t`;
    /// 2. on the first step (`m` empty), push zeros shaped like each layer's weight and bias
    ///    into `m` and `v` (`Array2::zeros(layer.weight.raw_dim())`, `Array1::zeros(…)`);
    /// 3. compute the corrections `1 − β1^t` and `1 − β2^t` (`self.beta1.powi(self.t)`);
    /// 4. for each layer `i` and each of its weight and bias, update `m[i]`, `v[i]` and the
    ///    parameter with the formulas above (`ndarray::Zip` walks four arrays together).
    fn step(&mut self, layers: &mut [&mut Linear]) {
        // BEGIN SOLUTION
        self.t += 1;
        if self.m.is_empty() {
            let zeros = |l: &Linear| {
                (
                    Array2::zeros(l.weight.raw_dim()),
                    Array1::zeros(l.bias.raw_dim()),
                )
            };
            self.m = layers.iter().map(|l| zeros(l)).collect();
            self.v = self.m.clone();
        }
        let c1 = 1.0 - self.beta1.powi(self.t);
        let c2 = 1.0 - self.beta2.powi(self.t);
        // Moved out for the loop, so `self`'s settings can be read while they are updated.
        let mut m = std::mem::take(&mut self.m);
        let mut v = std::mem::take(&mut self.v);
        for ((layer, (mw, mb)), (vw, vb)) in layers.iter_mut().zip(&mut m).zip(&mut v) {
            let layer = &mut **layer;
            adam_update(self, c1, c2, &mut layer.weight, &layer.weight_grad, mw, vw);
            adam_update(self, c1, c2, &mut layer.bias, &layer.bias_grad, mb, vb);
        }
        self.m = m;
        self.v = v;
        // END SOLUTION
        //@template todo!("Adam::step: moments, bias correction, update")
    }
}
