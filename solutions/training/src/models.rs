//! The lesson's two networks, both `Linear → ReLU → Linear` then a head: [`SimpleNN`] (a
//! sigmoid and binary cross-entropy) and the MNIST [`Mlp`] (logits and cross-entropy).
//!
//! In PyTorch a model only has `forward`; autograd remembers what each operation saw. Here the
//! model remembers it itself: `forward` keeps its input and its hidden layer's values in the
//! model's private fields, and `backward` reads them back to apply the chain rule, last layer
//! first.

use crate::layers::{relu, relu_backward, sigmoid, Linear};
use crate::losses::{bce_grad, bce_loss, cross_entropy, cross_entropy_grad};
use ndarray::Array2;
use rand::rngs::StdRng;

/// What a training loop needs from a model: the methods the lesson's loop calls.
///
/// `model(x)` is [`Model::forward`], `criterion(out, y)` is [`Model::loss`],
/// `loss.backward()` is [`Model::backward`], `optimizer.zero_grad()` is [`Model::zero_grad`],
/// and `model.parameters()` (what an optimizer is built with) is [`Model::layers_mut`].
pub trait Model {
    /// `model(x)`: the forward pass on a batch `x` (batch × inputs); returns the model's
    /// output, one row per example. Keeps what [`Model::backward`] needs: the input, and the
    /// hidden layer before and after its ReLU.
    fn forward(&mut self, x: &Array2<f32>) -> Array2<f32>;
    /// `criterion(out, y)`: the mean loss of `output` (what the last `forward` returned)
    /// against the batch's labels, one per row.
    fn loss(&self, output: &Array2<f32>, labels: &[usize]) -> f32;
    /// `loss.backward()`: the backward pass of that loss through the last `forward`. ADDS
    /// every parameter's gradient into its layer's `weight_grad` and `bias_grad`.
    fn backward(&mut self, output: &Array2<f32>, labels: &[usize]);
    /// `optimizer.zero_grad()`: sets every gradient of every layer to zero.
    fn zero_grad(&mut self);
    /// `model.parameters()`: the layers in order (`layer1`, then `layer2`), for the optimizer
    /// to update: `vec![&mut self.layer1, &mut self.layer2]`.
    fn layers_mut(&mut self) -> Vec<&mut Linear>;
    /// The predicted class of each row of `x`, as `torch.argmax` or `(p > 0.5)` would give.
    fn predict(&mut self, x: &Array2<f32>) -> Vec<usize>;
}

/// The lesson's `SimpleNN(input_dim)`: `nn.Linear(input_dim, 32) → ReLU → nn.Linear(32, 1) →
/// Sigmoid`, trained with `nn.BCELoss()`.
///
/// Its labels are 0 or 1; the loss compares the output `p` (batch × 1, probabilities) with
/// `y`, the labels as `f32` in a batch × 1 column
/// (`Array2::from_shape_fn((labels.len(), 1), |(i, _)| labels[i] as f32)`).
#[derive(Debug, Clone)]
pub struct SimpleNN {
    /// `self.layer1 = nn.Linear(input_dim, 32)`.
    pub layer1: Linear,
    /// `self.layer2 = nn.Linear(32, 1)`.
    pub layer2: Linear,
    /// The last forward's input, batch × inputs.
    input: Array2<f32>,
    /// `layer1(input)`, before the ReLU: batch × 32.
    hidden_pre: Array2<f32>,
    /// `relu(hidden_pre)`, layer 2's input: batch × 32.
    hidden: Array2<f32>,
}

impl SimpleNN {
    /// `SimpleNN(input_dim)`: `layer1 = Linear::new(inputs, 32, rng)` FIRST, then
    /// `layer2 = Linear::new(32, 1, rng)` (the grader expects this order of random numbers).
    /// The private fields start empty: `Array2::zeros((0, 0))`.
    pub fn new(inputs: usize, rng: &mut StdRng) -> SimpleNN {
        // BEGIN SOLUTION
        let layer1 = Linear::new(inputs, 32, rng);
        let layer2 = Linear::new(32, 1, rng);
        SimpleNN {
            layer1,
            layer2,
            input: Array2::zeros((0, 0)),
            hidden_pre: Array2::zeros((0, 0)),
            hidden: Array2::zeros((0, 0)),
        }
        // END SOLUTION
        //@template todo!("SimpleNN::new: layer1 then layer2")
    }
}

// BEGIN SOLUTION
/// The labels as BCE's targets: a batch × 1 column of 0.0 and 1.0.
fn binary_targets(labels: &[usize]) -> Array2<f32> {
    Array2::from_shape_fn((labels.len(), 1), |(i, _)| labels[i] as f32)
}
// END SOLUTION

impl Model for SimpleNN {
    /// `sigmoid(layer2(relu(layer1(x))))`: batch × 1 probabilities.
    ///
    /// Steps: keep a copy of `x` in `self.input`; `self.hidden_pre = layer1.forward(x)`;
    /// `self.hidden = relu(&self.hidden_pre)`; return `sigmoid(&layer2.forward(&self.hidden))`.
    fn forward(&mut self, x: &Array2<f32>) -> Array2<f32> {
        // BEGIN SOLUTION
        self.input = x.clone();
        self.hidden_pre = self.layer1.forward(x);
        self.hidden = relu(&self.hidden_pre);
        sigmoid(&self.layer2.forward(&self.hidden))
        // END SOLUTION
        //@template todo!("SimpleNN::forward: linear, relu, linear, sigmoid")
    }

    /// `nn.BCELoss()(output, y)`: [`bce_loss`] of the probabilities against the labels as a
    /// batch × 1 column of 0.0 and 1.0.
    fn loss(&self, output: &Array2<f32>, labels: &[usize]) -> f32 {
        // BEGIN SOLUTION
        bce_loss(output, &binary_targets(labels))
        // END SOLUTION
        //@template todo!("SimpleNN::loss: BCE against labels column")
    }

    /// `loss.backward()`, from the loss back to the input, with `p = output`:
    /// 1. through the loss and the sigmoid (whose derivative is `p·(1 − p)`):
    ///    `grad = bce_grad(p, y) * p·(1 − p)`, element by element (batch × 1);
    /// 2. through layer 2: `grad_hidden = self.layer2.backward(&self.hidden, &grad)`;
    /// 3. through the ReLU: `relu_backward(&self.hidden_pre, &grad_hidden)`;
    /// 4. through layer 1 with `self.input` (its returned dx is not needed).
    fn backward(&mut self, output: &Array2<f32>, labels: &[usize]) {
        // BEGIN SOLUTION
        let mut grad = bce_grad(output, &binary_targets(labels));
        grad.zip_mut_with(output, |g, &p| *g *= p * (1.0 - p));
        let grad_hidden = self.layer2.backward(&self.hidden, &grad);
        let grad_hidden_pre = relu_backward(&self.hidden_pre, &grad_hidden);
        self.layer1.backward(&self.input, &grad_hidden_pre);
        // END SOLUTION
        //@template todo!("SimpleNN::backward: sigmoid, layer2, relu, layer1")
    }

    /// Zeroes both layers' gradients.
    fn zero_grad(&mut self) {
        // BEGIN SOLUTION
        self.layer1.zero_grad();
        self.layer2.zero_grad();
        // END SOLUTION
        //@template todo!("SimpleNN::zero_grad: zero both layers")
    }

    /// `vec![&mut self.layer1, &mut self.layer2]`.
    fn layers_mut(&mut self) -> Vec<&mut Linear> {
        // BEGIN SOLUTION
        vec![&mut self.layer1, &mut self.layer2]
        // END SOLUTION
        //@template todo!("SimpleNN::layers_mut: both layers in order")
    }

    /// `(model(x) > 0.5)`: 1 for a row whose probability is above 0.5, else 0.
    fn predict(&mut self, x: &Array2<f32>) -> Vec<usize> {
        // BEGIN SOLUTION
        // No need to keep anything for a backward pass: the layers directly.
        let p = sigmoid(&self.layer2.forward(&relu(&self.layer1.forward(x))));
        p.iter().map(|&p| usize::from(p > 0.5)).collect()
        // END SOLUTION
        //@template todo!("SimpleNN::predict: probability above one half")
    }
}

/// The MNIST walk-through's network: `nn.Linear(784, 128) → ReLU → nn.Linear(128, 10)`,
/// trained with `nn.CrossEntropyLoss()` on its 10 logits (no softmax in the model: the loss
/// does it).
///
/// Its input is a batch × 784 of flattened 28×28 images, its output batch × 10 logits, its
/// labels the digits 0 to 9.
#[derive(Debug, Clone)]
pub struct Mlp {
    /// `nn.Linear(784, 128)`.
    pub layer1: Linear,
    /// `nn.Linear(128, 10)`.
    pub layer2: Linear,
    /// The last forward's input, batch × 784.
    input: Array2<f32>,
    /// `layer1(input)`, before the ReLU: batch × 128.
    hidden_pre: Array2<f32>,
    /// `relu(hidden_pre)`, layer 2's input: batch × 128.
    hidden: Array2<f32>,
}

impl Mlp {
    /// `layer1 = Linear::new(784, 128, rng)` FIRST, then `layer2 = Linear::new(128, 10, rng)`;
    /// the private fields start empty (`Array2::zeros((0, 0))`).
    pub fn new(rng: &mut StdRng) -> Mlp {
        // BEGIN SOLUTION
        let layer1 = Linear::new(784, 128, rng);
        let layer2 = Linear::new(128, 10, rng);
        Mlp {
            layer1,
            layer2,
            input: Array2::zeros((0, 0)),
            hidden_pre: Array2::zeros((0, 0)),
            hidden: Array2::zeros((0, 0)),
        }
        // END SOLUTION
        //@template todo!("Mlp::new: layer1 then layer2")
    }
}

impl Model for Mlp {
    /// `layer2(relu(layer1(x)))`: batch × 10 logits. Keep `x`, layer 1's output and the ReLU's
    /// output in the private fields, as [`SimpleNN`]'s forward does.
    fn forward(&mut self, x: &Array2<f32>) -> Array2<f32> {
        // BEGIN SOLUTION
        self.input = x.clone();
        self.hidden_pre = self.layer1.forward(x);
        self.hidden = relu(&self.hidden_pre);
        self.layer2.forward(&self.hidden)
        // END SOLUTION
        //@template todo!("Mlp::forward: linear, relu, linear")
    }

    /// [`cross_entropy`] of the logits against the labels.
    fn loss(&self, output: &Array2<f32>, labels: &[usize]) -> f32 {
        // BEGIN SOLUTION
        cross_entropy(output, labels)
        // END SOLUTION
        //@template todo!("Mlp::loss: cross-entropy of the logits")
    }

    /// `loss.backward()`: start from `cross_entropy_grad(output, labels)` (batch × 10), then
    /// back through layer 2, the ReLU and layer 1 exactly as in [`SimpleNN`]'s backward.
    fn backward(&mut self, output: &Array2<f32>, labels: &[usize]) {
        // BEGIN SOLUTION
        let grad = cross_entropy_grad(output, labels);
        let grad_hidden = self.layer2.backward(&self.hidden, &grad);
        let grad_hidden_pre = relu_backward(&self.hidden_pre, &grad_hidden);
        self.layer1.backward(&self.input, &grad_hidden_pre);
        // END SOLUTION
        //@template todo!("Mlp::backward: loss, layer2, relu, layer1")
    }

    /// Zeroes both layers' gradients.
    fn zero_grad(&mut self) {
        // BEGIN SOLUTION
        self.layer1.zero_grad();
        self.layer2.zero_grad();
        // END SOLUTION
        //@template todo!("Mlp::zero_grad: zero both layers")
    }

    /// `vec![&mut self.layer1, &mut self.layer2]`.
    fn layers_mut(&mut self) -> Vec<&mut Linear> {
        // BEGIN SOLUTION
        vec![&mut self.layer1, &mut self.layer2]
        // END SOLUTION
        //@template todo!("Mlp::layers_mut: both layers in order")
    }

    /// `torch.argmax(model(x), dim=1)`: for each row, the index of its largest logit (the
    /// first one on a tie).
    fn predict(&mut self, x: &Array2<f32>) -> Vec<usize> {
        // BEGIN SOLUTION
        let logits = self.layer2.forward(&relu(&self.layer1.forward(x)));
        logits
            .rows()
            .into_iter()
            .map(|row| {
                let mut best = 0;
                for (i, &v) in row.iter().enumerate() {
                    if v > row[best] {
                        best = i;
                    }
                }
                best
            })
            .collect()
        // END SOLUTION
        //@template todo!("Mlp::predict: index of largest logit")
    }
}
