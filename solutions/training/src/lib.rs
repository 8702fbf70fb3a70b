//! # Weeks 13–14 lab: a neural network's training loop, by hand
//!
//! The second half of the course trains neural networks. In the lesson, PyTorch does it in five
//! lines:
//!
//! ```text
//! for x, y in loader:
//!     optimizer.zero_grad()
//!     out = model(x)
//!     loss = criterion(out, y)
//!     loss.backward()
//!     optimizer.step()
//! ```
//!
//! Here you write every piece of that loop yourself, in Rust. Rust has no autograd: nothing
//! records your forward pass to differentiate it for you. So each forward function has a
//! backward function next to it that you write too, and the chain rule is yours to apply, one
//! layer at a time, from the loss back to the input.
//!
//! The pieces, in the order to write them:
//! 1. [`layers`]: [`Linear`] (`nn.Linear`), [`relu`] and [`sigmoid`], each with its backward.
//! 2. [`losses`]: [`bce_loss`] (`nn.BCELoss`) and [`cross_entropy`] (`nn.CrossEntropyLoss`),
//!    each with its gradient.
//! 3. [`models`]: the lesson's [`SimpleNN`] and the MNIST [`Mlp`], behind the [`Model`] trait.
//! 4. [`optim`]: [`Sgd`] and [`Adam`] (`torch.optim`), behind the [`Optimizer`] trait.
//! 5. [`data_loop`]: shuffled minibatches ([`batches`], the `DataLoader`), one epoch
//!    ([`train_epoch`]), [`accuracy`] and the whole loop ([`train`]).
//! 6. [`gpu`]: the same epoch on the GPU: the model and the data moved there once, batches
//!    gathered on the device, matrix products with cuBLAS and the rest in your own CUDA C
//!    kernels ([`gpu::train_epoch_gpu`], [`gpu::train_on`]).
//!
//! Every number is an `f32`, and a batch is an `ndarray::Array2<f32>` with one row per example
//! and one column per feature (batch × features): `x.nrows()` examples, `x.ncols()` features.
//! `a.dot(&b)` is the matrix product and `a.t()` the transpose; you may use both (this lab is
//! about the loop, not the product).
//!
//! Run `cargo test` to be graded: the grader checks each function against its own, checks your
//! gradients against finite differences, trains your models, and prints a score table with a
//! hint for anything that is wrong.

//@template // Remove this line when you are done: it hides warnings about unused inputs.
//@template #![allow(unused_variables, unused_imports, dead_code)]

pub mod data_loop;
pub mod gpu;
pub mod layers;
pub mod losses;
pub mod models;
pub mod optim;

pub use data_loop::{accuracy, batches, train, train_epoch};
pub use layers::{relu, relu_backward, sigmoid, Linear};
pub use losses::{bce_grad, bce_loss, cross_entropy, cross_entropy_grad};
pub use models::{Mlp, Model, SimpleNN};
pub use optim::{Adam, Optimizer, Sgd};

/// The random number generator every function here takes: make one with
/// `StdRng::seed_from_u64(seed)` (the same seed gives the same numbers, like `torch.manual_seed`).
pub use rand::rngs::StdRng;
/// The trait that gives [`StdRng`] its `seed_from_u64`: `use training_lab::SeedableRng;`.
pub use rand::SeedableRng;
// BEGIN SOLUTION

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, Array2, Axis};
    use rand::RngExt;

    fn random(rows: usize, cols: usize, rng: &mut StdRng) -> Array2<f32> {
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-1.0..1.0))
    }

    fn worst(a: &Array2<f32>, b: &Array2<f32>) -> f32 {
        assert_eq!(a.dim(), b.dim());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// Central differences of `f` at every element of `x`.
    fn numerical(f: impl Fn(&Array2<f32>) -> f32, x: &Array2<f32>, h: f32) -> Array2<f32> {
        let mut grad = Array2::zeros(x.raw_dim());
        let mut probe = x.clone();
        for (index, g) in grad.indexed_iter_mut() {
            let original = probe[index];
            probe[index] = original + h;
            let up = f(&probe);
            probe[index] = original - h;
            let down = f(&probe);
            probe[index] = original;
            *g = (up - down) / (2.0 * h);
        }
        grad
    }

    #[test]
    fn linear_init_uses_the_whole_range_in_order() {
        let mut rng = StdRng::seed_from_u64(1);
        let layer = Linear::new(64, 16, &mut rng);
        assert_eq!(layer.weight.dim(), (16, 64));
        assert_eq!(layer.bias.len(), 16);
        let bound = 1.0 / 8.0;
        assert!(layer
            .weight
            .iter()
            .chain(&layer.bias)
            .all(|v| v.abs() <= bound));
        let spread = layer.weight.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(spread > 0.9 * bound);
        assert!(layer
            .weight_grad
            .iter()
            .chain(&layer.bias_grad)
            .all(|&g| g == 0.0));
        // Weight first, row by row, then bias.
        let mut again = StdRng::seed_from_u64(1);
        let first: f32 = again.random_range(-bound..bound);
        assert_eq!(layer.weight[[0, 0]], first);
        let second: f32 = again.random_range(-bound..bound);
        assert_eq!(layer.weight[[0, 1]], second);
    }

    #[test]
    fn linear_backward_matches_finite_differences_and_accumulates() {
        let mut rng = StdRng::seed_from_u64(2);
        let mut layer = Linear::new(5, 3, &mut rng);
        let x = random(4, 5, &mut rng);
        let w = random(4, 3, &mut rng);
        // Loss = Σ w ⊙ y, so dL/dy = w.
        let numeric_x = numerical(|x| (layer.forward(x) * &w).sum(), &x, 1e-2);
        let numeric_w = numerical(
            |weight| {
                let mut l = layer.clone();
                l.weight = weight.clone();
                (l.forward(&x) * &w).sum()
            },
            &layer.weight,
            1e-2,
        );
        let grad_x = layer.backward(&x, &w);
        assert!(worst(&grad_x, &numeric_x) < 1e-3);
        assert!(worst(&layer.weight_grad, &numeric_w) < 1e-3);
        let bias_sum: Array1<f32> = w.sum_axis(Axis(0));
        assert!((&layer.bias_grad - &bias_sum)
            .iter()
            .all(|d| d.abs() < 1e-6));
        // A second backward adds to the gradients, as PyTorch's does.
        layer.backward(&x, &w);
        assert!(worst(&layer.weight_grad, &(numeric_w * 2.0)) < 2e-3);
        layer.zero_grad();
        assert!(layer
            .weight_grad
            .iter()
            .chain(&layer.bias_grad)
            .all(|&g| g == 0.0));
    }

    #[test]
    fn activations_and_their_backward() {
        let x = Array2::from_shape_vec((1, 4), vec![-1000.0, -1.0, 0.0, 1000.0]).unwrap();
        assert_eq!(relu(&x).row(0).to_vec(), vec![0.0, 0.0, 0.0, 1000.0]);
        let ones = Array2::ones((1, 4));
        assert_eq!(
            relu_backward(&x, &ones).row(0).to_vec(),
            vec![0.0, 0.0, 0.0, 1.0]
        );
        let s = sigmoid(&x);
        assert!(s.iter().all(|v| v.is_finite()));
        assert_eq!(s[[0, 0]], 0.0);
        assert_eq!(s[[0, 2]], 0.5);
        assert_eq!(s[[0, 3]], 1.0);
        assert!((s[[0, 1]] - 0.268_941_43).abs() < 1e-6);
    }

    #[test]
    fn losses_clamp_and_stay_finite() {
        let p = Array2::from_shape_vec((2, 1), vec![0.0, 1.0]).unwrap();
        let y = Array2::from_shape_vec((2, 1), vec![1.0, 0.0]).unwrap();
        assert!((bce_loss(&p, &y) - 100.0).abs() < 1e-4);
        assert!(bce_grad(&p, &y).iter().all(|g| g.is_finite()));
        let logits = Array2::from_shape_vec((1, 3), vec![1000.0, 0.0, -1000.0]).unwrap();
        assert!(cross_entropy(&logits, &[0]).abs() < 1e-6);
        assert!((cross_entropy(&logits, &[1]) - 1000.0).abs() < 1e-3);
        let grad = cross_entropy_grad(&logits, &[1]);
        assert!(grad.iter().all(|g| g.is_finite()));
        assert!((grad[[0, 0]] - 1.0).abs() < 1e-6 && (grad[[0, 1]] + 1.0).abs() < 1e-6);
    }

    #[test]
    fn bce_grad_matches_finite_differences() {
        let mut rng = StdRng::seed_from_u64(3);
        let p = random(6, 1, &mut rng).mapv(|v| 0.5 + 0.4 * v);
        let y = Array2::from_shape_fn((6, 1), |(i, _)| (i % 2) as f32);
        let numeric = numerical(|p| bce_loss(p, &y), &p, 1e-3);
        assert!(worst(&bce_grad(&p, &y), &numeric) < 2e-3);
    }

    #[test]
    fn cross_entropy_grad_matches_finite_differences() {
        let mut rng = StdRng::seed_from_u64(4);
        let logits = random(5, 4, &mut rng).mapv(|v| 3.0 * v);
        let labels = [0, 3, 1, 1, 2];
        let numeric = numerical(|l| cross_entropy(l, &labels), &logits, 1e-2);
        let grad = cross_entropy_grad(&logits, &labels);
        assert!(worst(&grad, &numeric) < 1e-3, "{grad} vs {numeric}");
        // Each row of the gradient sums to 0: softmax sums to 1, the one-hot too.
        assert!(grad.sum_axis(Axis(1)).iter().all(|s| s.abs() < 1e-6));
    }

    /// Checks a model's whole gradient along a random direction for each of its four tensors:
    /// (L(θ + hd) − L(θ − hd)) / 2h against Σ grad·d. One number per tensor, but it covers
    /// every element, and its size keeps f32 rounding small. Layer 1 is followed by a ReLU,
    /// so its directions leave out the hidden units whose input would cross 0 (the kink, where
    /// finite differences are wrong).
    fn check_model(model: &mut dyn Model, x: &Array2<f32>, labels: &[usize], rng: &mut StdRng) {
        let h = 1e-3;
        let hidden_pre = model.layers_mut()[0].forward(x);
        model.zero_grad();
        let out = model.forward(x);
        model.backward(&out, labels);
        let grads: Vec<(Array2<f32>, Array1<f32>)> = model
            .layers_mut()
            .iter()
            .map(|l| (l.weight_grad.clone(), l.bias_grad.clone()))
            .collect();
        for layer in 0..2 {
            for tensor in 0..2 {
                let (grad, shape) = if tensor == 0 {
                    let g = &grads[layer].0;
                    (g.clone(), g.dim())
                } else {
                    let g = &grads[layer].1;
                    (g.clone().insert_axis(Axis(0)), (1, g.len()))
                };
                let mut direction = random(shape.0, shape.1, rng);
                if layer == 0 {
                    // How far each hidden unit's input moves, per example.
                    let moves = if tensor == 0 {
                        x.dot(&direction.t())
                    } else {
                        direction.broadcast(hidden_pre.dim()).unwrap().to_owned()
                    };
                    for unit in 0..hidden_pre.ncols() {
                        let crosses = hidden_pre
                            .column(unit)
                            .iter()
                            .zip(moves.column(unit))
                            .any(|(z, dz)| z.abs() <= 2.0 * h * dz.abs());
                        if crosses && tensor == 0 {
                            direction.row_mut(unit).fill(0.0);
                        } else if crosses {
                            direction[[0, unit]] = 0.0;
                        }
                    }
                }
                let mut loss_at = |h: f32| {
                    let mut layers = model.layers_mut();
                    let l = &mut layers[layer];
                    if tensor == 0 {
                        l.weight.scaled_add(h, &direction);
                    } else {
                        l.bias.scaled_add(h, &direction.row(0));
                    }
                    drop(layers);
                    let out = model.forward(x);
                    let loss = model.loss(&out, labels);
                    let mut layers = model.layers_mut();
                    let l = &mut layers[layer];
                    if tensor == 0 {
                        l.weight.scaled_add(-h, &direction);
                    } else {
                        l.bias.scaled_add(-h, &direction.row(0));
                    }
                    loss
                };
                let numeric = (loss_at(h) - loss_at(-h)) / (2.0 * h);
                let analytic = (&grad * &direction).sum();
                assert!(
                    (numeric - analytic).abs() <= 5e-4 + 5e-3 * analytic.abs(),
                    "layer {} {}: finite differences {numeric}, backward {analytic}",
                    layer + 1,
                    ["weight", "bias"][tensor],
                );
            }
        }
    }

    #[test]
    fn mlp_backward_matches_finite_differences() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut mlp = Mlp::new(&mut rng);
        assert_eq!(mlp.layer1.weight.dim(), (128, 784));
        assert_eq!(mlp.layer2.weight.dim(), (10, 128));
        let x = random(8, 784, &mut rng);
        let labels = [0, 1, 2, 3, 4, 5, 6, 9];
        check_model(&mut mlp, &x, &labels, &mut rng);
    }

    #[test]
    fn simple_nn_backward_matches_finite_differences() {
        let mut rng = StdRng::seed_from_u64(6);
        let mut model = SimpleNN::new(10, &mut rng);
        let x = random(8, 10, &mut rng).mapv(|v| 3.0 * v);
        let labels = [0, 1, 1, 0, 1, 0, 0, 1];
        check_model(&mut model, &x, &labels, &mut rng);
    }

    #[test]
    fn backward_accumulates_until_zero_grad() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut model = SimpleNN::new(4, &mut rng);
        let x = random(3, 4, &mut rng);
        let out = model.forward(&x);
        model.backward(&out, &[0, 1, 1]);
        let once = model.layer1.weight_grad.clone();
        model.backward(&out, &[0, 1, 1]);
        assert!(worst(&model.layer1.weight_grad, &(&once * 2.0)) < 1e-6);
        model.zero_grad();
        assert!(model.layer1.weight_grad.iter().all(|&g| g == 0.0));
    }

    #[test]
    fn sgd_and_adam_follow_their_formulas() {
        let mut rng = StdRng::seed_from_u64(8);
        let mut layer = Linear::new(1, 1, &mut rng);
        layer.weight.fill(1.0);
        layer.bias.fill(0.0);
        let mut sgd = Sgd { lr: 0.5 };
        layer.weight_grad.fill(0.2);
        layer.bias_grad.fill(-0.4);
        sgd.step(&mut [&mut layer]);
        assert!((layer.weight[[0, 0]] - 0.9).abs() < 1e-6);
        assert!((layer.bias[0] - 0.2).abs() < 1e-6);

        layer.weight.fill(1.0);
        let mut adam = Adam::new(0.1);
        assert_eq!(
            (adam.t, adam.beta1, adam.beta2, adam.eps),
            (0, 0.9, 0.999, 1e-8)
        );
        let (mut m, mut v, mut p) = (0.0f64, 0.0f64, 1.0f64);
        for (t, g) in [(1, 0.5), (2, -0.25), (3, 2.0)] {
            layer.weight_grad.fill(g as f32);
            adam.step(&mut [&mut layer]);
            assert_eq!(adam.t, t);
            m = 0.9 * m + 0.1 * g;
            v = 0.999 * v + 0.001 * g * g;
            let m_hat = m / (1.0 - 0.9f64.powi(t));
            let v_hat = v / (1.0 - 0.999f64.powi(t));
            p -= 0.1 * m_hat / (v_hat.sqrt() + 1e-8);
            assert!(
                (f64::from(layer.weight[[0, 0]]) - p).abs() < 1e-5,
                "step {t}"
            );
        }
        assert_eq!(adam.m.len(), 1);
        assert_eq!(adam.v[0].0.dim(), (1, 1));
    }

    #[test]
    fn batches_partition_and_reshuffle() {
        let mut rng = StdRng::seed_from_u64(9);
        let first = batches(100, 16, &mut rng);
        let second = batches(100, 16, &mut rng);
        assert_eq!(first.len(), 7);
        assert!(first[..6].iter().all(|b| b.len() == 16));
        assert_eq!(first[6].len(), 4);
        let mut all: Vec<usize> = first.concat();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        assert_ne!(first, second, "a new order each call");
        assert_eq!(first, batches(100, 16, &mut StdRng::seed_from_u64(9)));
        assert_eq!(batches(32, 16, &mut rng).len(), 2);
        assert!(batches(0, 16, &mut rng).is_empty());
    }

    /// Standard normal samples by Box–Muller, as the grader's toy set makes them.
    fn normal(rng: &mut StdRng, spare: &mut Option<f64>) -> f64 {
        if let Some(z) = spare.take() {
            return z;
        }
        let u1 = 1.0 - rng.random::<f64>();
        let u2 = rng.random::<f64>();
        let radius = (-2.0 * u1.ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
        *spare = Some(radius * sin);
        radius * cos
    }

    /// The lesson's toy set: 10 features from N(0, 1); label 1 when the first five sum > 0.
    fn toy_set(n: usize, seed: u64) -> (Array2<f32>, Vec<usize>) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut spare = None;
        let x = Array2::from_shape_simple_fn((n, 10), || normal(&mut rng, &mut spare) as f32);
        let labels = x
            .rows()
            .into_iter()
            .map(|row| usize::from(row.iter().take(5).sum::<f32>() > 0.0))
            .collect();
        (x, labels)
    }

    #[test]
    fn simple_nn_learns_the_toy_set_with_adam() {
        let (x, labels) = toy_set(1000, 0);
        let mut rng = StdRng::seed_from_u64(42);
        let mut model = SimpleNN::new(10, &mut rng);
        let mut adam = Adam::new(0.001);
        let losses = train(&mut model, &mut adam, &x, &labels, 10, 16, &mut rng);
        assert_eq!(losses.len(), 10);
        assert!(
            losses[9] < losses[0] * 0.8,
            "the loss goes down: {losses:?}"
        );
        let acc = accuracy(&mut model, &x, &labels);
        assert!(acc > 0.9, "training accuracy {acc}");
    }

    #[test]
    fn mlp_learns_a_separable_set_with_sgd() {
        let mut rng = StdRng::seed_from_u64(10);
        // Each class lights its own block of inputs.
        let labels: Vec<usize> = (0..600).map(|i| i % 10).collect();
        let x = Array2::from_shape_fn((600, 784), |(i, j)| {
            let on = j / 78 == labels[i];
            f32::from(u8::from(on)) + 0.3 * rng.random_range(-1.0f32..1.0)
        });
        let mut mlp = Mlp::new(&mut rng);
        let mut sgd = Sgd { lr: 0.1 };
        let losses = train(&mut mlp, &mut sgd, &x, &labels, 3, 32, &mut rng);
        assert!(losses[2] < losses[0], "{losses:?}");
        assert!(accuracy(&mut mlp, &x, &labels) > 0.95);
    }

    /// `cargo test -p training-lab --release --lib -- --ignored --nocapture`: one epoch of the
    /// MNIST MLP with SGD (lr 0.01) on 60 000 of the grader's synthetic digits in batches of 64.
    #[test]
    #[ignore]
    fn bench_mlp_epoch() {
        let set = grader::training::data::synthetic_digits(60_000, 11);
        let x = set.inputs.mapv(|v| v as f32);
        let labels = set.labels;
        let mut rng = StdRng::seed_from_u64(11);
        let mut mlp = Mlp::new(&mut rng);
        let mut sgd = Sgd { lr: 0.01 };
        let order = batches(60_000, 64, &mut rng);
        let start = std::time::Instant::now();
        let loss = train_epoch(&mut mlp, &mut sgd, &x, &labels, &order);
        let took = start.elapsed();
        let start = std::time::Instant::now();
        let acc = accuracy(&mut mlp, &x, &labels);
        println!(
            "epoch {took:?} (loss {loss:.4}), accuracy {:?} ({acc})",
            start.elapsed()
        );
    }
}
// END SOLUTION
