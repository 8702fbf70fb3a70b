//! The lesson's two losses (`criterion` in the loop), each with its gradient: the first step of
//! `loss.backward()`, where the chain rule starts.
//!
//! Both are means over the batch, as PyTorch's are by default, so both gradients carry a
//! `1/N`: with a sum instead, the gradient and so the step would grow with the batch size.

use ndarray::{Array2, Zip};

/// `nn.BCELoss()` (binary cross-entropy), the mean over all elements of
/// `−(y·ln p + (1 − y)·ln(1 − p))`.
///
/// `p` holds probabilities (a sigmoid's output) and `y` the targets, 0.0 or 1.0, both the same
/// shape (batch × 1 for `SimpleNN`). Like PyTorch, clamp each logarithm at −100
/// (`p.ln().max(-100.0)`), so a probability of exactly 0 or 1 costs 100, not infinity. Steps:
/// 1. add up the expression above over every pair of elements (walk `p.iter().zip(y)`);
/// 2. divide by the number of elements, `p.len()`.
pub fn bce_loss(p: &Array2<f32>, y: &Array2<f32>) -> f32 {
    // BEGIN SOLUTION
    let log = |v: f32| v.ln().max(-100.0);
    let total: f64 = p
        .iter()
        .zip(y)
        .map(|(&p, &y)| f64::from(-(y * log(p) + (1.0 - y) * log(1.0 - p))))
        .sum();
    (total / p.len().max(1) as f64) as f32
    // END SOLUTION
    //@template todo!("bce_loss: mean of clamped log losses")
}

/// dLoss/dp of [`bce_loss`], the shape of `p`: `(p − y) / (p·(1 − p)) / N`, with `N = p.len()`
/// (the mean's `1/N`).
///
/// When `p` is exactly 0 or 1, `p·(1 − p)` is 0: divide by `(p·(1 − p)).max(1e-12)` instead,
/// as PyTorch does, so the result stays finite. Steps: start from `p - y` (a new array), then
/// divide each element by its guarded `p·(1 − p)` and by `N` (`Zip` or `zip_mut_with` walk two
/// arrays together).
pub fn bce_grad(p: &Array2<f32>, y: &Array2<f32>) -> Array2<f32> {
    // BEGIN SOLUTION
    let n = p.len() as f32;
    Zip::from(p)
        .and(y)
        .map_collect(|&p, &y| (p - y) / ((p * (1.0 - p)).max(1e-12) * n))
    // END SOLUTION
    //@template todo!("bce_grad: (p - y) over p(1-p) over N")
}

/// `nn.CrossEntropyLoss()` from logits: the mean over the rows of `−ln softmax(row)[label]`.
///
/// `logits` is batch × classes (the model's raw scores, no softmax applied) and `labels[i]` is
/// the class of row `i`. For one row, `−ln softmax(row)[label] = ln Σ_j e^row[j] − row[label]`.
/// Computed as written, `e^1000` is infinity, so use the log-sum-exp trick:
/// 1. `m` = the row's largest value;
/// 2. `ln Σ_j e^row[j] = m + ln Σ_j e^(row[j] − m)` (every exponent is now ≤ 0);
/// 3. the row's loss is that minus `row[label]`; return the mean over the rows.
///
/// `logits.rows()` iterates over the rows, `.zip(labels)` pairs them with the labels.
pub fn cross_entropy(logits: &Array2<f32>, labels: &[usize]) -> f32 {
    // BEGIN SOLUTION
    let total: f64 = logits
        .rows()
        .into_iter()
        .zip(labels)
        .map(|(row, &label)| {
            let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let log_sum_exp = max + row.iter().map(|&v| (v - max).exp()).sum::<f32>().ln();
            f64::from(log_sum_exp - row[label])
        })
        .sum();
    (total / labels.len().max(1) as f64) as f32
    // END SOLUTION
    //@template todo!("cross_entropy: mean log-sum-exp minus label")
}

/// dLoss/dlogits of [`cross_entropy`], batch × classes: `(softmax(logits) − onehot(labels)) / N`
/// with `N` the number of rows.
///
/// Steps, row by row (`grad.rows_mut()` on a copy of the logits):
/// 1. softmax the row stably: subtract its largest value, take `exp` of each element, divide
///    each by their sum;
/// 2. subtract 1 at the row's label (the one-hot vector is 1 there and 0 elsewhere);
/// 3. divide every element by `N`.
pub fn cross_entropy_grad(logits: &Array2<f32>, labels: &[usize]) -> Array2<f32> {
    // BEGIN SOLUTION
    let n = labels.len() as f32;
    let mut grad = logits.clone();
    for (mut row, &label) in grad.rows_mut().into_iter().zip(labels) {
        let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        row.mapv_inplace(|v| (v - max).exp());
        let scale = 1.0 / (row.sum() * n);
        row.mapv_inplace(|v| v * scale);
        row[label] -= 1.0 / n;
    }
    grad
    // END SOLUTION
    //@template todo!("cross_entropy_grad: softmax minus one-hot, over N")
}
