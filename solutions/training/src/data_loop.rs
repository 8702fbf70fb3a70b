//! The training loop itself: shuffled minibatches (`DataLoader(…, shuffle=True)`), one epoch of
//! `zero_grad → forward → loss → backward → step`, accuracy, and the whole run.

use crate::models::Model;
use crate::optim::Optimizer;
use ndarray::{Array2, Axis};
use rand::rngs::StdRng;
use rand::RngExt;

/// `DataLoader(dataset, batch_size=batch_size, shuffle=True)`: the example indices `0..n` in a
/// new random order, cut into batches of `batch_size` (the last one smaller when `n` is not a
/// multiple of `batch_size`).
///
/// Shuffle with Fisher–Yates, so that the grader's own shuffle with the same `rng` gives the
/// same order:
/// 1. `order` = `0, 1, …, n−1` (`(0..n).collect::<Vec<usize>>()`);
/// 2. for `i` from `n − 1` down to 1: draw `j = rng.random_range(0..=i)` and swap
///    `order[i]` and `order[j]`;
/// 3. cut `order` into pieces of `batch_size` (`order.chunks(batch_size)`), each a `Vec`.
///
/// Each call gives a new order (the rng moves on), as each epoch of a shuffled loader does.
pub fn batches(n: usize, batch_size: usize, rng: &mut StdRng) -> Vec<Vec<usize>> {
    // BEGIN SOLUTION
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..=i);
        order.swap(i, j);
    }
    order
        .chunks(batch_size.max(1))
        .map(<[usize]>::to_vec)
        .collect()
    // END SOLUTION
    //@template todo!("batches: shuffle indices, cut into chunks")
}

/// One epoch of the lesson's loop; returns the mean of the batches' losses.
///
/// `inputs` has one row per example and `labels` one label per example; each batch in
/// `batches` lists the indices of its examples. For each batch:
/// 1. gather its rows, `inputs.select(Axis(0), batch)`, and its labels;
/// 2. `model.zero_grad()` (forget this, and the gradients of every batch add up);
/// 3. `let out = model.forward(&x)`, then `model.loss(&out, &y)`;
/// 4. `model.backward(&out, &y)`, and only then `optimizer.step(&mut model.layers_mut())`.
///
/// Add up the losses and divide by the number of batches.
pub fn train_epoch(
    model: &mut dyn Model,
    optimizer: &mut dyn Optimizer,
    inputs: &Array2<f32>,
    labels: &[usize],
    batches: &[Vec<usize>],
) -> f32 {
    // BEGIN SOLUTION
    let mut total = 0.0f64;
    for batch in batches {
        let x = inputs.select(Axis(0), batch);
        let y: Vec<usize> = batch.iter().map(|&i| labels[i]).collect();
        model.zero_grad();
        let out = model.forward(&x);
        total += f64::from(model.loss(&out, &y));
        model.backward(&out, &y);
        optimizer.step(&mut model.layers_mut());
    }
    (total / batches.len().max(1) as f64) as f32
    // END SOLUTION
    //@template todo!("train_epoch: the five-step loop per batch")
}

/// The share of examples the model gets right, from 0.0 (none) to 1.0 (all): what the lesson
/// computes as `(predicted == y).sum() / len(y)`.
///
/// Steps: `model.predict(inputs)` gives a class per row; count the rows where it equals
/// `labels`; divide by the number of rows (0.0 when there are none).
pub fn accuracy(model: &mut dyn Model, inputs: &Array2<f32>, labels: &[usize]) -> f32 {
    // BEGIN SOLUTION
    let predicted = model.predict(inputs);
    let right = predicted.iter().zip(labels).filter(|(p, l)| p == l).count();
    right as f32 / inputs.nrows().max(1) as f32
    // END SOLUTION
    //@template todo!("accuracy: share of right predictions")
}

/// The lesson's whole training run: `epochs` epochs over all `inputs.nrows()` examples.
///
/// For each epoch `e` from 1 to `epochs`:
/// 1. make a fresh order with `batches(n, batch_size, rng)`;
/// 2. run [`train_epoch`] on it;
/// 3. print `Epoch [e/epochs], Loss: {loss:.4}` as the lesson does
///    (`println!("Epoch [{e}/{epochs}], Loss: {loss:.4}")`).
///
/// Returns each epoch's mean loss, in order: they should go down.
pub fn train(
    model: &mut dyn Model,
    optimizer: &mut dyn Optimizer,
    inputs: &Array2<f32>,
    labels: &[usize],
    epochs: usize,
    batch_size: usize,
    rng: &mut StdRng,
) -> Vec<f32> {
    // BEGIN SOLUTION
    let n = inputs.nrows();
    let mut losses = Vec::with_capacity(epochs);
    for e in 1..=epochs {
        let order = batches(n, batch_size, rng);
        let loss = train_epoch(model, optimizer, inputs, labels, &order);
        println!("Epoch [{e}/{epochs}], Loss: {loss:.4}");
        losses.push(loss);
    }
    losses
    // END SOLUTION
    //@template todo!("train: shuffle, train, print each epoch")
}
