//! The layers of the lesson's networks: `nn.Linear`, `nn.ReLU` and `nn.Sigmoid`, each with
//! the backward pass that PyTorch's autograd would have worked out for you.
//!
//! A backward function gets the gradient of the loss with respect to the layer's output
//! (`grad_output`, the same shape as the output) and returns the gradient with respect to the
//! layer's input (the same shape as the input): the chain rule, one layer at a time.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array1, Array2, Axis, Zip};
use rand::rngs::StdRng;
use rand::RngExt;

/// PyTorch's `nn.Linear(inputs, outputs)`: `y = x·Wᵀ + b`.
///
/// `x` is batch × inputs, `W` (`weight`) is outputs × inputs, `b` (`bias`) has one value per
/// output, and `y` is batch × outputs. Like a PyTorch parameter's `.grad`, `weight_grad` and
/// `bias_grad` collect the gradients that [`Linear::backward`] computes, and keep adding up
/// until [`Linear::zero_grad`] clears them.
#[derive(Debug, Clone)]
pub struct Linear {
    /// The weights, outputs × inputs (`layer.weight` in PyTorch).
    pub weight: Array2<f32>,
    /// The biases, one per output (`layer.bias`).
    pub bias: Array1<f32>,
    /// dLoss/dWeight, the same shape as `weight` (`layer.weight.grad`).
    pub weight_grad: Array2<f32>,
    /// dLoss/dBias, one per output (`layer.bias.grad`).
    pub bias_grad: Array1<f32>,
}

impl Linear {
    /// Makes a layer the way `nn.Linear(inputs, outputs)` does: every weight and every bias
    /// drawn uniformly from [−1/√inputs, 1/√inputs), and both gradients zero.
    ///
    /// The grader compares your numbers with its own, so draw them in this order from `rng`:
    /// 1. `bound = 1.0 / (inputs as f32).sqrt()`;
    /// 2. the weight, outputs × inputs, row by row, each `rng.random_range(-bound..bound)`
    ///    (`Array2::from_shape_simple_fn((outputs, inputs), || …)` fills in that order);
    /// 3. then the bias, `outputs` values, the same way (`Array1::from_shape_simple_fn`);
    /// 4. the gradients: `Array2::zeros((outputs, inputs))` and `Array1::zeros(outputs)`.
    pub fn new(inputs: usize, outputs: usize, rng: &mut StdRng) -> Linear {
        // BEGIN SOLUTION
        let bound = 1.0 / (inputs as f32).sqrt();
        let weight =
            Array2::from_shape_simple_fn((outputs, inputs), || rng.random_range(-bound..bound));
        let bias = Array1::from_shape_simple_fn(outputs, || rng.random_range(-bound..bound));
        Linear {
            weight_grad: Array2::zeros((outputs, inputs)),
            bias_grad: Array1::zeros(outputs),
            weight,
            bias,
        }
        // END SOLUTION
        //@template todo!("Linear::new: uniform weights, then biases")
    }

    /// The forward pass, `layer(x)` in PyTorch: `x` is batch × inputs, the result is
    /// batch × outputs, row `i` being `weight · x[i] + bias`.
    ///
    /// Steps: multiply `x` by the transposed weight (`x.dot(&self.weight.t())`: `.t()` is a
    /// view, not a copy), then add the bias to every row (`+ &self.bias` adds a 1-D array to
    /// each row of a 2-D one).
    pub fn forward(&self, x: &Array2<f32>) -> Array2<f32> {
        // BEGIN SOLUTION
        x.dot(&self.weight.t()) + &self.bias
        // END SOLUTION
        //@template todo!("Linear::forward: x times weightᵀ plus bias")
    }

    /// The backward pass: what `loss.backward()` does for this layer.
    ///
    /// `x` is the input the forward pass saw (batch × inputs) and `grad_output` is dLoss/dy
    /// (batch × outputs). Steps:
    /// 1. ADD (`+=`, do not overwrite) `grad_outputᵀ · x` (outputs × inputs) to `weight_grad`:
    ///    PyTorch accumulates gradients until `zero_grad`, and so must you;
    /// 2. add the column sums of `grad_output` (`grad_output.sum_axis(Axis(0))`, one per
    ///    output) to `bias_grad`;
    /// 3. return dLoss/dx = `grad_output · weight` (batch × inputs), which the layer before
    ///    this one needs for its own backward pass.
    ///
    /// No `1/batch` here: the loss's gradient already has it.
    pub fn backward(&mut self, x: &Array2<f32>, grad_output: &Array2<f32>) -> Array2<f32> {
        // BEGIN SOLUTION
        // weight_grad ← 1·grad_outputᵀ·x + 1·weight_grad, in place: no temporary matrix.
        general_mat_mul(1.0, &grad_output.t(), x, 1.0, &mut self.weight_grad);
        self.bias_grad += &grad_output.sum_axis(Axis(0));
        grad_output.dot(&self.weight)
        // END SOLUTION
        //@template todo!("Linear::backward: accumulate gradients, return dx")
    }

    /// Sets `weight_grad` and `bias_grad` back to zero, as `optimizer.zero_grad()` does for
    /// each parameter. One line each: `.fill(0.0)`.
    pub fn zero_grad(&mut self) {
        // BEGIN SOLUTION
        self.weight_grad.fill(0.0);
        self.bias_grad.fill(0.0);
        // END SOLUTION
        //@template todo!("Linear::zero_grad: fill gradients with zero")
    }
}

/// `nn.ReLU()`: `max(x, 0)` for every element; the result has the shape of `x`.
///
/// One line: `x.mapv(|v| …)` makes a new array with a function applied to every element.
pub fn relu(x: &Array2<f32>) -> Array2<f32> {
    // BEGIN SOLUTION
    x.mapv(|v| v.max(0.0))
    // END SOLUTION
    //@template todo!("relu: max of element and zero")
}

/// ReLU's backward pass. `x` is the input ReLU saw and `grad_output` is dLoss/dReLU(x), both
/// the same shape; returns dLoss/dx, that shape too.
///
/// Where `x > 0`, ReLU is `x` itself, so its gradient passes through unchanged; where
/// `x <= 0` (exactly 0 included, as in PyTorch) ReLU is flat, so the gradient is 0.
/// `Zip::from(grad_output).and(x).map_collect(|&g, &v| …)` walks both arrays together.
pub fn relu_backward(x: &Array2<f32>, grad_output: &Array2<f32>) -> Array2<f32> {
    // BEGIN SOLUTION
    Zip::from(grad_output)
        .and(x)
        .map_collect(|&g, &v| if v > 0.0 { g } else { 0.0 })
    // END SOLUTION
    //@template todo!("relu_backward: pass gradient where positive")
}

/// `torch.sigmoid(x)`: `1 / (1 + e^(−x))` for every element, a probability in [0, 1].
///
/// It must stay a number for large |x|: at x = −1000, `e^1000` overflows to infinity, and a
/// formula that then divides ∞ by ∞ gives NaN. `1 / (1 + e^(−x))` survives (1/∞ is 0); the
/// safest way is two formulas, `1 / (1 + e^(−x))` when `x >= 0` and `e^x / (1 + e^x)` when
/// `x < 0`, so the exponential never gets a large positive input. Use `x.mapv(|v| …)`.
pub fn sigmoid(x: &Array2<f32>) -> Array2<f32> {
    // BEGIN SOLUTION
    x.mapv(|v| {
        if v >= 0.0 {
            1.0 / (1.0 + (-v).exp())
        } else {
            let e = v.exp();
            e / (1.0 + e)
        }
    })
    // END SOLUTION
    //@template todo!("sigmoid: one over one plus exp")
}
