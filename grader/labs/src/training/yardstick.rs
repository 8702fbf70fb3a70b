//! The baseline the GPU speedup is measured against: the grader's own f32 CPU epoch of the
//! MLP with SGD, written the way the lesson's CPU loop runs (ndarray's optimised products, one
//! thread), in the yardstick worker, which never calls the submission.

use super::Layers;
use grader_hot::baselines::{self, Dense};
use ndarray::Array2;

/// One SGD epoch of `Linear → ReLU → Linear` with cross-entropy over `batches` of `x`;
/// returns the mean of the batches' losses. `layers` are updated in place. The epoch itself
/// is [`baselines::mlp_epoch`], compiled where the grader's clock code is.
pub fn mlp_epoch(
    layers: &mut Layers,
    x: &Array2<f32>,
    labels: &[usize],
    batches: &[Vec<usize>],
    lr: f32,
) -> f32 {
    let [l1, l2] = layers;
    let dense = [
        Dense {
            weight: &mut l1.weight,
            bias: &mut l1.bias,
        },
        Dense {
            weight: &mut l2.weight,
            bias: &mut l2.bias,
        },
    ];
    baselines::mlp_epoch(dense, x, labels, batches, lr)
}

#[cfg(test)]
mod tests {
    use super::super::reference::{self as r, EpochTargets, Optimizer, TwoLayer};
    use super::*;

    #[test]
    fn the_baseline_epoch_is_the_reference_epoch_in_f32() {
        let (seed, item) = (3, "speed");
        let set = super::super::inputs::dataset(seed, item, super::super::Net::Mlp, 300, "train");
        let x = super::super::inputs::inputs_f32(&set);
        let mut layers = super::super::inputs::layers(seed, item, 0, super::super::Net::Mlp, false);
        let order = r::batches(300, 64, &mut super::super::rng_for(seed, item, 0, "order"));
        let wide = |l: &super::super::Layer| r::Linear {
            weight: l.weight.mapv(f64::from),
            bias: l.bias.mapv(f64::from),
            weight_grad: Array2::zeros(l.weight.raw_dim()),
            bias_grad: ndarray::Array1::zeros(l.bias.len()),
        };
        let mut model = TwoLayer {
            layer1: wide(&layers[0]),
            layer2: wide(&layers[1]),
            head: r::Head::LogitsCrossEntropy,
        };
        let expected = r::train_epoch(
            &mut model,
            &mut Optimizer::Sgd(r::Sgd { lr: 0.01 }),
            &set.inputs,
            &EpochTargets::Classes(set.labels.clone()),
            &order,
            None,
        );
        let got = mlp_epoch(&mut layers, &x, &set.labels, &order, 0.01);
        assert!(
            (f64::from(got) - expected).abs() < 1e-4,
            "{got} vs {expected}"
        );
        let worst = layers[1]
            .weight
            .iter()
            .zip(model.layer2.weight.iter())
            .map(|(g, e)| (f64::from(*g) - e).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-4, "{worst}");
    }
}
