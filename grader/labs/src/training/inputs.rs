//! The training lab's inputs, derived from the run's seed the same way in the worker (which
//! hands them to the student) and the supervisor (which computes the references from them).

use super::{data, rng_for, Layer, Layers, Net};
use ndarray::{Array1, Array2};

/// Values uniform in ±`scale`.
pub fn matrix(
    seed: u64,
    item: &str,
    case: usize,
    purpose: &str,
    (rows, cols): (usize, usize),
    scale: f32,
) -> Array2<f32> {
    let mut rng = rng_for(seed, item, case, purpose);
    grader_hot::inputs::uniform_matrix(&mut rng, (rows, cols), scale, true)
}

/// The input of an elementwise item (ReLU, its backward pass, the sigmoid): values in
/// [−6, 6], with the edges the lab's rules name: every fifth value exactly 0 (ReLU's gradient
/// there is 0, as in PyTorch), and every seventh ±100, where a naive sigmoid overflows
/// (`e^x / (1 + e^x)` at x = 100 is ∞/∞). The worker and the judge both take it from here.
pub fn elementwise_input(seed: u64, item: &str, case: usize, shape: (usize, usize)) -> Array2<f32> {
    let mut x = matrix(seed, item, case, "x", shape, 6.0);
    for (n, v) in x.iter_mut().enumerate() {
        if n % 5 == 2 {
            *v = 0.0;
        } else if n % 7 == 3 {
            *v = if n % 2 == 0 { 100.0 } else { -100.0 };
        }
    }
    x
}

/// `rows` class labels in `0..classes`.
pub fn labels(seed: u64, item: &str, case: usize, rows: usize, classes: usize) -> Vec<usize> {
    let mut rng = rng_for(seed, item, case, "labels");
    grader_hot::inputs::class_labels(&mut rng, rows, classes)
}

/// A layer with PyTorch-scaled weights and bias, and (with `grads`) gradients already
/// accumulated, so a backward pass that overwrites them instead of adding shows.
pub fn layer(
    seed: u64,
    item: &str,
    case: usize,
    purpose: &str,
    (inputs, outputs): (usize, usize),
    grads: bool,
) -> Layer {
    let bound = 1.0 / (inputs as f32).sqrt();
    let weight = matrix(
        seed,
        item,
        case,
        &format!("{purpose}.w"),
        (outputs, inputs),
        bound,
    );
    let bias = matrix(
        seed,
        item,
        case,
        &format!("{purpose}.b"),
        (1, outputs),
        bound,
    );
    let (weight_grad, bias_grad) = if grads {
        (
            matrix(
                seed,
                item,
                case,
                &format!("{purpose}.gw"),
                (outputs, inputs),
                0.5,
            ),
            matrix(
                seed,
                item,
                case,
                &format!("{purpose}.gb"),
                (1, outputs),
                0.5,
            ),
        )
    } else {
        (
            Array2::zeros((outputs, inputs)),
            Array2::zeros((1, outputs)),
        )
    };
    Layer {
        weight,
        bias: Array1::from_iter(bias),
        weight_grad,
        bias_grad: Array1::from_iter(bias_grad),
    }
}

/// The `(inputs, outputs)` of a model's two layers.
pub fn shapes(net: Net) -> [(usize, usize); 2] {
    match net {
        Net::SimpleNn => [(data::TOY_FEATURES, 32), (32, 1)],
        Net::Mlp => [(data::IMAGE_PIXELS, 128), (128, 10)],
    }
}

/// [`shapes`] with another hidden width where one is given.
pub fn shapes_with(net: Net, hidden: Option<usize>) -> [(usize, usize); 2] {
    let [(inputs, width), (_, outputs)] = shapes(net);
    let width = hidden.unwrap_or(width);
    [(inputs, width), (width, outputs)]
}

/// How many classes a model tells apart.
pub fn classes(net: Net) -> usize {
    match net {
        Net::SimpleNn => 2,
        Net::Mlp => 10,
    }
}

/// A model's layers for a case, as the grader sets them (gradients given with `grads`).
pub fn layers(seed: u64, item: &str, case: usize, net: Net, grads: bool) -> Layers {
    layers_with(seed, item, case, net, grads, None)
}

/// [`layers`] with another hidden width where one is given.
pub fn layers_with(
    seed: u64,
    item: &str,
    case: usize,
    net: Net,
    grads: bool,
    hidden: Option<usize>,
) -> Layers {
    let [first, second] = shapes_with(net, hidden);
    [
        layer(seed, item, case, "layer1", first, grads),
        layer(seed, item, case, "layer2", second, grads),
    ]
}

/// The data a model trains on: the lesson's toy set for `SimpleNN`, synthetic digits for the
/// MLP; `purpose` tells the training set from the held-out one.
pub fn dataset(seed: u64, item: &str, net: Net, n: usize, purpose: &str) -> data::Dataset {
    let seed = grader_worker::hash::of_text(&format!("{seed}/{item}/{purpose}"));
    match net {
        Net::SimpleNn => data::toy_set(n, seed),
        Net::Mlp => data::synthetic_digits(n, seed),
    }
}

/// An epoch item's inputs, the same in the worker and the judge: the training set (and its
/// inputs in f32, as the student gets them), the grader's starting layers and batch order.
pub struct Epoch {
    /// The training set, in f64.
    pub set: data::Dataset,
    /// Its inputs in f32.
    pub x: Array2<f32>,
    /// The grader's starting layers.
    pub layers: Layers,
    /// The grader's batch order.
    pub order: Vec<Vec<usize>>,
}

/// The inputs of an epoch of `net` on `examples` examples in batches of `batch_size`.
pub fn epoch(
    seed: u64,
    item: &str,
    net: Net,
    examples: usize,
    batch_size: usize,
    hidden: Option<usize>,
) -> Epoch {
    let set = dataset(seed, item, net, examples, "train");
    let order = super::reference::batches(
        examples,
        batch_size,
        &mut super::rng_for(seed, item, 0, "order"),
    );
    Epoch {
        x: inputs_f32(&set),
        layers: layers_with(seed, item, 0, net, false, hidden),
        order,
        set,
    }
}

impl Epoch {
    /// What the harness's GPU and fallback functions start from: these inputs, `net` and
    /// SGD's learning rate.
    pub fn setup(&self, net: Net, lr: f32) -> super::EpochSetup<'_> {
        super::EpochSetup {
            net,
            layers: self.layers.clone(),
            lr,
            x: &self.x,
            labels: &self.set.labels,
            batches: &self.order,
        }
    }
}

/// A dataset's inputs in f32, as the student gets them.
pub fn inputs_f32(set: &data::Dataset) -> Array2<f32> {
    set.inputs.mapv(|v| v as f32)
}

/// The inputs of a `loss` item's case: (predictions or logits, 0/1 targets as a matrix, class
/// labels). Case `cases.len()` holds extreme values: probabilities of exactly 0 and 1, and
/// logits of ±1000.
pub fn loss_case(
    seed: u64,
    item: &str,
    case: usize,
    shape: Option<[usize; 2]>,
    function: &str,
) -> (Array2<f32>, Array2<f32>, Vec<usize>) {
    let binary = function.starts_with("bce");
    match shape {
        Some([rows, cols]) => {
            let raw = matrix(seed, item, case, "values", (rows, cols), 4.0);
            let labels = labels(
                seed,
                item,
                case,
                rows * if binary { cols } else { 1 },
                if binary { 2 } else { cols },
            );
            if binary {
                let p = raw.mapv(|v| 1.0 / (1.0 + (-v).exp()));
                let y = Array2::from_shape_fn((rows, cols), |(r, c)| labels[r * cols + c] as f32);
                (p, y, Vec::new())
            } else {
                (raw, Array2::zeros((0, 0)), labels)
            }
        }
        None if binary => {
            let p = Array2::from_shape_vec((5, 1), vec![0.0, 1.0, 1e-30, 0.999_999_9, 0.5])
                .unwrap_or_default();
            let y =
                Array2::from_shape_vec((5, 1), vec![1.0, 0.0, 1.0, 0.0, 1.0]).unwrap_or_default();
            (p, y, Vec::new())
        }
        None => {
            let logits = Array2::from_shape_vec(
                (3, 4),
                vec![
                    1000.0, -1000.0, 0.0, 500.0, //
                    -1000.0, -999.0, -998.0, -1000.0, //
                    88.0, 89.0, 90.0, 0.0,
                ],
            )
            .unwrap_or_default();
            (logits, Array2::zeros((0, 0)), vec![3, 0, 2])
        }
    }
}

/// The gradients an `optimizer` item hands over at step `step`: one (weight, bias) pair per
/// layer of the shapes given.
pub fn step_grads(
    seed: u64,
    item: &str,
    step: usize,
    shapes: &[(usize, usize)],
) -> Vec<(Array2<f32>, Array1<f32>)> {
    shapes
        .iter()
        .enumerate()
        .map(|(l, &(inputs, outputs))| {
            let w = matrix(seed, item, step, &format!("g{l}.w"), (outputs, inputs), 1.0);
            let b = matrix(seed, item, step, &format!("g{l}.b"), (1, outputs), 1.0);
            (w, Array1::from_iter(b))
        })
        .collect()
}

/// The layer shapes of an `optimizer` item (small: the formula is what counts).
pub const OPTIMIZER_SHAPES: [(usize, usize); 2] = [(5, 4), (4, 3)];
