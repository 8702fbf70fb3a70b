//! The grader's own model and optimizers, handed to the student's loop in place of the
//! student's: one mistake costs points once.
//!
//! `train_epoch`, `accuracy`, `train` and `train_on` take any `Model` and `Optimizer`. If the
//! items that grade them ran the student's `SimpleNN`, `Mlp`, `Sgd` and `Adam`, a mistake in
//! one layer would cost the layer's item, the model's, and every loop item after it. So the
//! lab's `tests/grade.rs` implements the student's two traits with these stand-ins (they keep
//! the student's `Linear` as their layers, so the optimizer and the loop see the lab's own
//! types) and the loop items grade the loop alone. The math is the f64 reference's
//! ([`super::reference`]), rounded to f32 where it meets the student's values, which is one
//! more correct way to compute an epoch: it lies well within the trajectory tolerance
//! (measured in `tests/e2e/training.rs`).

use super::reference::{self as r, relu, relu_backward, sigmoid};
use super::{Net, Opt};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};
use rand::rngs::StdRng;

/// One layer's parameters, read-only, as the stand-in model reads them from the student's
/// `Linear`.
pub type Params<'a> = (ArrayView2<'a, f32>, ArrayView1<'a, f32>);

/// One layer's gradients, as the stand-in model's backward pass computed them (to be added
/// into the student's `Linear`: backward accumulates).
pub type Grads = (Array2<f32>, Array1<f32>);

/// One layer as the stand-in optimizer updates it: the parameters it moves and the gradients
/// it reads.
pub struct ParamsMut<'a> {
    /// `out × in`.
    pub weight: &'a mut Array2<f32>,
    /// `out`.
    pub bias: &'a mut Array1<f32>,
    /// The weight's accumulated gradient.
    pub weight_grad: &'a Array2<f32>,
    /// The bias's accumulated gradient.
    pub bias_grad: &'a Array1<f32>,
}

fn wide(a: ArrayView2<f32>) -> Array2<f64> {
    a.mapv(f64::from)
}

fn narrow(a: &Array2<f64>) -> Array2<f32> {
    a.mapv(|v| v as f32)
}

fn layer(p: &Params) -> r::Linear {
    r::Linear::from_parameters(wide(p.0), p.1.mapv(f64::from))
}

/// What the last forward pass kept for the backward pass.
#[derive(Debug, Clone)]
struct Kept {
    input: Array2<f64>,
    hidden_pre: Array2<f64>,
    hidden: Array2<f64>,
}

/// The lesson's model of kind [`Net`], computed by the grader: `Linear → ReLU → Linear`, then
/// a sigmoid and binary cross-entropy (`SimpleNN`) or logits and cross-entropy (`Mlp`).
#[derive(Debug, Clone)]
pub struct Model {
    net: Net,
    kept: Option<Kept>,
}

impl Model {
    /// A stand-in for a model of kind `net`.
    pub fn new(net: Net) -> Model {
        Model { net, kept: None }
    }

    /// Starting layers for a model of kind `net`, drawn from `rng` as the lesson's `new` does
    /// (layer 1 then layer 2, each weight before its bias, uniform in ±1/√inputs): for `train`,
    /// whose model is made before the loop starts.
    pub fn init(net: Net, rng: &mut StdRng) -> [(Array2<f32>, Array1<f32>); 2] {
        let model = match net {
            Net::SimpleNn => r::TwoLayer::simple_nn(10, rng),
            Net::Mlp => r::TwoLayer::mlp(rng),
        };
        [model.layer1, model.layer2].map(|l| (narrow(&l.weight), l.bias.mapv(|v| v as f32)))
    }

    /// `model(x)`: the output for a batch, keeping what backward needs.
    pub fn forward(&mut self, layers: [Params; 2], x: &Array2<f32>) -> Array2<f32> {
        let [first, second] = layers.map(|p| layer(&p));
        let input = x.mapv(f64::from);
        let hidden_pre = first.forward(&input);
        let hidden = relu(&hidden_pre);
        let pre = second.forward(&hidden);
        let output = match self.net {
            Net::SimpleNn => sigmoid(&pre),
            Net::Mlp => pre,
        };
        self.kept = Some(Kept {
            input,
            hidden_pre,
            hidden,
        });
        narrow(&output)
    }

    /// `criterion(output, labels)`: the batch's mean loss of the output handed in.
    pub fn loss(&self, output: &Array2<f32>, labels: &[usize]) -> f32 {
        let output = output.mapv(f64::from);
        let loss = match self.net {
            Net::SimpleNn => r::bce_loss(&output, &binary(labels)),
            Net::Mlp => r::cross_entropy(&output, labels),
        };
        loss as f32
    }

    /// `loss.backward()` through the last forward pass: each layer's gradients, for the
    /// caller to add into the layer. With no forward pass before it, or an output of another
    /// shape than that pass's, it gives zero gradients (as a loop that calls them in the wrong
    /// order would see nothing move).
    pub fn backward(
        &self,
        layers: [Params; 2],
        output: &Array2<f32>,
        labels: &[usize],
    ) -> [Grads; 2] {
        let zeros = layers.map(|(w, b)| (Array2::zeros(w.raw_dim()), Array1::zeros(b.len())));
        let Some(kept) = &self.kept else {
            return zeros;
        };
        let [mut first, mut second] = layers.map(|p| layer(&p));
        let output = output.mapv(f64::from);
        if output.nrows() != kept.input.nrows() || output.nrows() != labels.len() {
            return zeros;
        }
        let grad_pre = match self.net {
            Net::SimpleNn => {
                let y = binary(labels);
                r::bce_grad(&output, &y) * &output.mapv(|p| p * (1.0 - p))
            }
            Net::Mlp => r::cross_entropy_grad(&output, labels),
        };
        let grad_hidden = second.backward(&kept.hidden, &grad_pre);
        let grad_hidden_pre = relu_backward(&kept.hidden_pre, &grad_hidden);
        first.backward(&kept.input, &grad_hidden_pre);
        [first, second].map(|l| (narrow(&l.weight_grad), l.bias_grad.mapv(|v| v as f32)))
    }

    /// The predicted class of each row: `p > 0.5` (`SimpleNN`) or the largest logit (`Mlp`).
    pub fn predict(&mut self, layers: [Params; 2], x: &Array2<f32>) -> Vec<usize> {
        let output = self.forward(layers, x);
        match self.net {
            Net::SimpleNn => output.iter().map(|&p| usize::from(p > 0.5)).collect(),
            Net::Mlp => output
                .axis_iter(Axis(0))
                .map(|row| r::argmax(row.iter().copied()))
                .collect(),
        }
    }
}

/// The labels as `SimpleNN`'s targets: a `batch × 1` column of 0.0 and 1.0.
fn binary(labels: &[usize]) -> Array2<f64> {
    Array2::from_shape_fn((labels.len(), 1), |(i, _)| labels[i] as f64)
}

/// `torch.optim.SGD` or `torch.optim.Adam`, computed by the grader (Adam's moments kept in
/// f64, one pair per tensor in step order).
#[derive(Debug, Clone)]
pub struct Optimizer(r::Optimizer);

impl Optimizer {
    /// A fresh optimizer as `opt` names it.
    pub fn new(opt: Opt) -> Optimizer {
        Optimizer(match opt {
            Opt::Sgd(lr) => r::Optimizer::Sgd(r::Sgd { lr: f64::from(lr) }),
            Opt::Adam(lr) => r::Optimizer::Adam(r::Adam::new(f64::from(lr))),
        })
    }

    /// `optimizer.step()` over these layers.
    pub fn step(&mut self, layers: &mut [ParamsMut]) {
        let mut wide_layers: Vec<r::Linear> = layers
            .iter()
            .map(|l| {
                let mut layer =
                    r::Linear::from_parameters(wide(l.weight.view()), l.bias.mapv(f64::from));
                layer.weight_grad = wide(l.weight_grad.view());
                layer.bias_grad = l.bias_grad.mapv(f64::from);
                layer
            })
            .collect();
        self.0
            .step_layers(&mut wide_layers.iter_mut().collect::<Vec<_>>());
        for (l, stepped) in layers.iter_mut().zip(&wide_layers) {
            if l.weight.dim() == stepped.weight.dim() && l.bias.len() == stepped.bias.len() {
                *l.weight = narrow(&stepped.weight);
                *l.bias = stepped.bias.mapv(|v| v as f32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn params(layers: &[(Array2<f32>, Array1<f32>); 2]) -> [Params<'_>; 2] {
        [
            (layers[0].0.view(), layers[0].1.view()),
            (layers[1].0.view(), layers[1].1.view()),
        ]
    }

    #[test]
    fn one_sgd_step_of_the_stand_in_lowers_the_loss_of_its_batch() {
        for net in [Net::SimpleNn, Net::Mlp] {
            let mut rng = StdRng::seed_from_u64(3);
            let mut layers = Model::init(net, &mut rng);
            let cols = layers[0].0.ncols();
            let x = Array2::from_shape_fn((8, cols), |(i, j)| ((i * 7 + j) % 5) as f32 / 5.0);
            let labels: Vec<usize> = (0..8).map(|i| i % 2).collect();
            let mut model = Model::new(net);
            let out = model.forward(params(&layers), &x);
            let before = model.loss(&out, &labels);
            let grads = model.backward(params(&layers), &out, &labels);
            let mut sgd = Optimizer::new(Opt::Sgd(0.1));
            {
                let [(w1, b1), (w2, b2)] = &mut layers;
                sgd.step(&mut [
                    ParamsMut {
                        weight: w1,
                        bias: b1,
                        weight_grad: &grads[0].0,
                        bias_grad: &grads[0].1,
                    },
                    ParamsMut {
                        weight: w2,
                        bias: b2,
                        weight_grad: &grads[1].0,
                        bias_grad: &grads[1].1,
                    },
                ]);
            }
            let out = model.forward(params(&layers), &x);
            let after = model.loss(&out, &labels);
            assert!(after < before, "{net:?}: {before} → {after}");
        }
    }

    #[test]
    fn backward_without_a_forward_pass_moves_nothing() {
        let mut rng = StdRng::seed_from_u64(1);
        let layers = Model::init(Net::SimpleNn, &mut rng);
        let model = Model::new(Net::SimpleNn);
        let grads = model.backward(params(&layers), &Array2::zeros((4, 1)), &[0, 1, 0, 1]);
        assert!(grads
            .iter()
            .all(|(w, b)| w.iter().chain(b.iter()).all(|&v| v == 0.0)));
    }
}
