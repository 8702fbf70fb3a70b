//! The training lab's references, in f64: what PyTorch computes for each piece of the lesson's
//! training loop, so the supervisor can judge a student's f32 functions against values it
//! computed itself. The references themselves (layers, losses, optimizers, batches, one epoch,
//! the typical wrong loops) are hot code, built optimised in [`grader_hot::training::reference`]
//! and re-exported here. Here: the check of gradients against central finite differences
//! ([`numerical_gradient`]), so a reference and a student cannot share a mistake unnoticed; the
//! check of a student's batches; accuracy.

pub use grader_hot::training::reference::*;

use super::t;
use ndarray::Array2;

/// Central finite differences of `f` at `x`: the gradient a correct backward pass must match
/// (to about `h²`).
pub fn numerical_gradient(f: impl Fn(&Array2<f64>) -> f64, x: &Array2<f64>, h: f64) -> Array2<f64> {
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

/// Checks that `batches` split `0..n` as a shuffled `DataLoader` would: every index exactly
/// once, every batch `batch_size` long but the last, which may be shorter. Says what is wrong.
pub fn check_partition(batches: &[Vec<usize>], n: usize, batch_size: usize) -> Result<(), String> {
    let mut seen = vec![false; n];
    for (b, batch) in batches.iter().enumerate() {
        let last = b + 1 == batches.len();
        if batch.is_empty() || batch.len() > batch_size || (!last && batch.len() != batch_size) {
            return Err(t!(
                "partition-size",
                batch = b,
                len = batch.len(),
                size = batch_size
            ));
        }
        for &i in batch {
            match seen.get_mut(i) {
                None => return Err(t!("partition-out-of-range", batch = b, index = i, n = n)),
                Some(true) => return Err(t!("partition-twice", index = i, batch = b)),
                Some(s) => *s = true,
            }
        }
    }
    match seen.iter().position(|s| !s) {
        Some(i) => Err(t!("partition-missing", index = i)),
        None => Ok(()),
    }
}

/// The index of the largest value (the first of equals), as `torch.argmax` gives a row's
/// predicted class.
pub fn argmax<T: PartialOrd>(values: impl IntoIterator<Item = T>) -> usize {
    let mut best: Option<(usize, T)> = None;
    for (i, v) in values.into_iter().enumerate() {
        if best.as_ref().is_none_or(|(_, b)| v > *b) {
            best = Some((i, v));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// The share of rows predicted right: probability > 0.5 for a sigmoid head, the largest logit
/// otherwise.
pub fn accuracy(model: &TwoLayer, inputs: &Array2<f64>, targets: &EpochTargets) -> f64 {
    let output = model.forward(inputs).output;
    let right = match targets {
        EpochTargets::Binary(y) => output
            .iter()
            .zip(y)
            .filter(|(&p, &y)| (p > 0.5) == (y > 0.5))
            .count(),
        EpochTargets::Classes(labels) => output
            .outer_iter()
            .zip(labels)
            .filter(|(row, &label)| argmax(row.iter().copied()) == label)
            .count(),
    };
    right as f64 / inputs.nrows().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Axis;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    fn rng(seed: u64) -> StdRng {
        StdRng::seed_from_u64(seed)
    }

    fn random(rows: usize, cols: usize, rng: &mut StdRng) -> Array2<f64> {
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-2.0..2.0))
    }

    fn worst(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn linear_backward_matches_finite_differences_and_accumulates() {
        let mut r = rng(2);
        let mut layer = Linear::init(5, 3, &mut r);
        let x = random(4, 5, &mut r);
        let w = random(4, 3, &mut r);
        // Loss = Σ w ⊙ y, so dL/dy = w.
        let loss_of_x = |x: &Array2<f64>| (layer.forward(x) * &w).sum();
        let numeric_x = numerical_gradient(loss_of_x, &x, 1e-5);
        let loss_of_weight = |weight: &Array2<f64>| {
            let l = Linear::from_parameters(weight.clone(), layer.bias.clone());
            (l.forward(&x) * &w).sum()
        };
        let numeric_w = numerical_gradient(loss_of_weight, &layer.weight, 1e-5);
        let grad_x = layer.backward(&x, &w);
        assert!(worst(&grad_x, &numeric_x) < 1e-7);
        assert!(worst(&layer.weight_grad, &numeric_w) < 1e-7);
        assert!((layer.bias_grad.clone() - w.sum_axis(Axis(0)))
            .iter()
            .all(|d| d.abs() < 1e-12));
        // A second backward adds to the gradients, as PyTorch's does.
        layer.backward(&x, &w);
        assert!(worst(&layer.weight_grad, &(numeric_w * 2.0)) < 1e-6);
    }

    #[test]
    fn each_models_backward_matches_finite_differences() {
        let mut r = rng(3);
        for head in [Head::SigmoidBce, Head::LogitsCrossEntropy] {
            let (inputs, outputs) = if head == Head::SigmoidBce {
                (6, 1)
            } else {
                (6, 4)
            };
            let mut model = TwoLayer {
                layer1: Linear::init(inputs, 5, &mut r),
                layer2: Linear::init(5, outputs, &mut r),
                head,
            };
            let x = random(7, inputs, &mut r);
            let y = Array2::from_shape_fn((7, 1), |(i, _)| (i % 2) as f64);
            let labels: Vec<usize> = (0..7).map(|i| i % outputs).collect();
            let targets = if head == Head::SigmoidBce {
                Targets::Binary(&y)
            } else {
                Targets::Classes(&labels)
            };
            let loss_of = |weight: &Array2<f64>| {
                let mut m = model.clone();
                m.layer1.weight = weight.clone();
                m.loss(&m.forward(&x), targets)
            };
            let numeric = numerical_gradient(loss_of, &model.layer1.weight, 1e-6);
            let trace = model.forward(&x);
            model.backward(&trace, targets);
            assert!(
                worst(&model.layer1.weight_grad, &numeric) < 1e-7,
                "{head:?}"
            );
        }
    }

    #[test]
    fn batches_partition_and_reshuffle() {
        let mut r = rng(4);
        let first = batches(100, 16, &mut r);
        let second = batches(100, 16, &mut r);
        assert_eq!(first.len(), 7);
        assert_eq!(first[6].len(), 4);
        assert!(check_partition(&first, 100, 16).is_ok());
        assert_ne!(first, second, "a different order each epoch");
        assert_eq!(
            first,
            batches(100, 16, &mut rng(4)),
            "reproducible from the seed"
        );
        let mut twice = first.clone();
        twice[0][0] = twice[1][0];
        assert!(check_partition(&twice, 100, 16)
            .unwrap_err()
            .contains("appears twice"));
        let short = vec![(0..10).collect::<Vec<_>>(), (10..100).collect()];
        assert!(check_partition(&short, 100, 16)
            .unwrap_err()
            .contains("batch 0 has 10"));
    }

    /// The lesson's toy set, made here so these tests do not depend on the data module.
    fn toy(n: usize, r: &mut StdRng) -> (Array2<f64>, EpochTargets) {
        let x = random(n, 10, r);
        let y = Array2::from_shape_fn((n, 1), |(i, _)| {
            f64::from(u8::from(x.row(i).iter().take(5).sum::<f64>() > 0.0))
        });
        (x, EpochTargets::Binary(y))
    }

    #[test]
    fn the_lessons_loop_learns_the_toy_set_and_each_fault_leaves_its_trajectory() {
        let mut r = rng(5);
        let (x, y) = toy(400, &mut r);
        let (test_x, test_y) = toy(400, &mut r);
        let start = TwoLayer::simple_nn(10, &mut r);
        let epoch_order = |epoch: u64| batches(400, 16, &mut rng(100 + epoch));
        let mut model = start.clone();
        let mut adam = Optimizer::Adam(Adam::new(0.001));
        let mut losses = Vec::new();
        for epoch in 0..10 {
            losses.push(train_epoch(
                &mut model,
                &mut adam,
                &x,
                &y,
                &epoch_order(epoch),
                None,
            ));
        }
        assert!(
            losses[9] < losses[0] * 0.8,
            "the loss goes down: {losses:?}"
        );
        let acc = accuracy(&model, &test_x, &test_y);
        assert!(acc > 0.85, "held-out accuracy {acc}");
        // After one epoch each wrong loop is somewhere else.
        let one_epoch = |fault: Option<LoopFault>| {
            let mut m = start.clone();
            let mut opt = Optimizer::Adam(Adam::new(0.001));
            let order = if fault == Some(LoopFault::NoShuffle) {
                (0..400)
                    .collect::<Vec<usize>>()
                    .chunks(16)
                    .map(<[usize]>::to_vec)
                    .collect()
            } else {
                epoch_order(0)
            };
            let loss = train_epoch(&mut m, &mut opt, &x, &y, &order, fault);
            (m.layer1.weight, loss)
        };
        let (right, right_loss) = one_epoch(None);
        for fault in LoopFault::ALL {
            let (wrong, wrong_loss) = one_epoch(Some(fault));
            if fault == LoopFault::SumLoss {
                // Adam does not care about the gradient's scale: a summed loss shows only in
                // the loss the epoch reports (16 times the mean here).
                assert!(worst(&right, &wrong) < 1e-3, "{fault:?}");
                assert!((wrong_loss / right_loss - 16.0).abs() < 1e-6, "{fault:?}");
            } else {
                assert!(
                    worst(&right, &wrong) > 1e-6,
                    "{fault:?} leaves the trajectory"
                );
            }
        }
    }
}
