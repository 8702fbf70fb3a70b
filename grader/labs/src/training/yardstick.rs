//! The baseline the GPU speedup is measured against: the grader's own f32 CPU epoch of the
//! MLP with SGD, written the way the lesson's CPU loop runs (ndarray's optimised products, one
//! thread), in the yardstick worker, which never calls the submission.

use super::Layers;
use ndarray::{Array2, Axis};

/// One SGD epoch of `Linear → ReLU → Linear` with cross-entropy over `batches` of `x`;
/// returns the mean of the batches' losses. `layers` are updated in place.
pub fn mlp_epoch(
    layers: &mut Layers,
    x: &Array2<f32>,
    labels: &[usize],
    batches: &[Vec<usize>],
    lr: f32,
) -> f32 {
    let mut total = 0.0f32;
    for batch in batches {
        let xb = x.select(Axis(0), batch);
        let rows = batch.len() as f32;
        let [l1, l2] = &mut *layers;
        let pre = xb.dot(&l1.weight.t()) + &l1.bias;
        let hidden = pre.mapv(|v| v.max(0.0));
        let mut grad = hidden.dot(&l2.weight.t()) + &l2.bias;
        // Softmax cross-entropy, row by row with the largest logit subtracted; the logits
        // become the gradient (softmax − one-hot) / rows in place.
        let mut loss = 0.0f32;
        for (mut row, &label) in grad
            .rows_mut()
            .into_iter()
            .zip(batch.iter().map(|&i| &labels[i]))
        {
            let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            row.mapv_inplace(|v| (v - max).exp());
            let sum = row.sum();
            loss += sum.ln() - (row[label].ln());
            row.mapv_inplace(|v| v / sum / rows);
            row[label] -= 1.0 / rows;
        }
        total += loss / rows;
        let grad_hidden = grad.dot(&l2.weight) * pre.mapv(|v| f32::from(u8::from(v > 0.0)));
        l2.weight.scaled_add(-lr, &grad.t().dot(&hidden));
        l2.bias.scaled_add(-lr, &grad.sum_axis(Axis(0)));
        l1.weight.scaled_add(-lr, &grad_hidden.t().dot(&xb));
        l1.bias.scaled_add(-lr, &grad_hidden.sum_axis(Axis(0)));
    }
    total / batches.len().max(1) as f32
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
