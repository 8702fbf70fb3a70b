//! The property that no value a student's function returns can crash a judge of the training
//! lab: a stand-in submission computes every CPU function with the f64 reference and, on a
//! random share of its returns, hands back something else instead (a shape off by one in
//! either axis, a transpose, an empty matrix, NaN, infinities, huge values, a missing or
//! extra step or batch, an index out of range). The real worker packs those values as it
//! packs a student's, and the judge must answer each with a verdict, never a panic.

use super::judge::{judge_outcome, reference_layer, reference_model, targets};
use super::kinds::Kind;
use super::reference::{self as r, Optimizer, Targets};
use super::{EpochSetup, Layer, Layers, ModelPass, Net, Opt, StepGrads, Submission};
use grader_engine::replay::{caught, with_quiet_panics};
use grader_engine::rubric::Item;
use grader_worker::serve::LabWorker;
use grader_worker::stopwatch::Checkpoints;
use ndarray::{Array1, Array2};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::cell::RefCell;

thread_local! {
    /// The stand-in's plan: its generator and the share of returns it twists.
    static PLAN: RefCell<(StdRng, f64)> = RefCell::new((StdRng::seed_from_u64(0), 0.0));
    /// The one function of the stand-in that returns zeros (or does nothing), if any.
    static BROKEN: RefCell<Option<&'static str>> = const { RefCell::new(None) };
}

/// What a broken function returns in place of its result: zeros of the same shape.
trait Zeroed {
    fn zeroed(self) -> Self;
}

impl Zeroed for Array2<f32> {
    fn zeroed(self) -> Self {
        Array2::zeros(self.dim())
    }
}

impl Zeroed for f32 {
    fn zeroed(self) -> Self {
        0.0
    }
}

impl Zeroed for Layer {
    fn zeroed(self) -> Self {
        Layer {
            weight: self.weight.zeroed(),
            bias: Array1::zeros(self.bias.len()),
            weight_grad: self.weight_grad.zeroed(),
            bias_grad: Array1::zeros(self.bias_grad.len()),
        }
    }
}

impl<T: Zeroed> Zeroed for Vec<T> {
    fn zeroed(self) -> Self {
        self.into_iter().map(Zeroed::zeroed).collect()
    }
}

impl Zeroed for usize {
    fn zeroed(self) -> Self {
        0
    }
}

impl<A: Zeroed, B: Zeroed> Zeroed for (A, B) {
    fn zeroed(self) -> Self {
        (self.0.zeroed(), self.1.zeroed())
    }
}

impl Zeroed for Layers {
    fn zeroed(self) -> Self {
        self.map(Zeroed::zeroed)
    }
}

impl Zeroed for ModelPass {
    fn zeroed(self) -> Self {
        ModelPass {
            output: self.output.zeroed(),
            ..self
        }
    }
}

/// `value`, or zeros in its place where `function` is the broken one.
fn unless_broken<T: Zeroed>(function: &str, value: T) -> T {
    if BROKEN.with(|b| *b.borrow() == Some(function)) {
        value.zeroed()
    } else {
        value
    }
}

/// True on the plan's share of calls.
fn twisting() -> bool {
    PLAN.with(|p| {
        let (rng, rate) = &mut *p.borrow_mut();
        rng.random_bool(*rate)
    })
}

/// A number from the plan's generator below `n`.
fn pick(n: usize) -> usize {
    PLAN.with(|p| p.borrow_mut().0.random_range(0..n.max(1)))
}

/// A value no correct function returns here.
fn odd_value() -> f32 {
    [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0e38,
        -3.0e38,
        0.0,
        -0.0,
        1.0e-40,
        7.0,
    ][pick(9)]
}

/// `a`, or on the plan's share of calls something else in its place.
fn twist(a: Array2<f32>) -> Array2<f32> {
    if !twisting() {
        return a;
    }
    let (rows, cols) = a.dim();
    let resized = |r: usize, c: usize| Array2::from_shape_fn((r, c), |_| odd_value() * 0.5);
    match pick(10) {
        0 => resized(rows + 1, cols),
        1 => resized(rows.saturating_sub(1), cols),
        2 => resized(rows, cols + 1),
        3 => resized(rows, cols.saturating_sub(1)),
        4 => Array2::zeros((0, 0)),
        5 => a.t().to_owned(),
        6 => a.mapv(|_| f32::NAN),
        7 => {
            let mut a = a;
            if let Some(v) = a.iter_mut().next() {
                *v = odd_value();
            }
            a
        }
        8 => a.mapv(|v| v * 1.0e30),
        _ => resized(1, 1),
    }
}

/// A vector twisted as [`twist`] twists a matrix.
fn twist1(v: Array1<f32>) -> Array1<f32> {
    let n = v.len();
    let as_row = v.insert_axis(ndarray::Axis(0));
    let twisted = twist(as_row);
    if twisted.nrows() == 1 {
        twisted.row(0).to_owned()
    } else {
        Array1::from_elem(n + 1, odd_value())
    }
}

/// A number twisted.
fn twist_f(v: f32) -> f32 {
    if twisting() {
        odd_value()
    } else {
        v
    }
}

/// A list with an entry dropped or repeated, on the plan's share of calls.
fn twist_len<T: Clone>(mut v: Vec<T>) -> Vec<T> {
    if twisting() {
        match pick(3) {
            0 => {
                v.pop();
            }
            1 => {
                if let Some(last) = v.last().cloned() {
                    v.push(last);
                }
            }
            _ => v.clear(),
        }
    }
    v
}

fn wide(a: &Array2<f32>) -> Array2<f64> {
    a.mapv(f64::from)
}

fn narrow(a: &Array2<f64>) -> Array2<f32> {
    a.mapv(|v| v as f32)
}

/// A reference layer as the harness's, each tensor twisted.
fn layer_of(l: &r::Linear) -> Layer {
    Layer {
        weight: twist(narrow(&l.weight)),
        bias: twist1(l.bias.mapv(|v| v as f32)),
        weight_grad: twist(narrow(&l.weight_grad)),
        bias_grad: twist1(l.bias_grad.mapv(|v| v as f32)),
    }
}

fn layers_of(model: &r::TwoLayer) -> Layers {
    [layer_of(&model.layer1), layer_of(&model.layer2)]
}

fn optimizer(opt: Opt) -> Optimizer {
    match opt {
        Opt::Sgd(lr) => Optimizer::Sgd(r::Sgd { lr: f64::from(lr) }),
        Opt::Adam(lr) => Optimizer::Adam(r::Adam::new(f64::from(lr))),
    }
}

fn pass(net: Net, layers: Layers, x: &Array2<f32>, labels: &[usize]) -> ModelPass {
    let mut model = reference_model(net, &layers);
    let trace = model.forward(&wide(x));
    let all = targets(net, labels);
    let t = match &all {
        r::EpochTargets::Binary(y) => Targets::Binary(y),
        r::EpochTargets::Classes(l) => Targets::Classes(l),
    };
    let loss = model.loss(&trace, t) as f32;
    model.backward(&trace, t);
    let after_backward = layers_of(&model);
    model.zero_grad();
    let predicted = match net {
        Net::SimpleNn => trace
            .output
            .rows()
            .into_iter()
            .map(|r| usize::from(r[0] > 0.5))
            .collect(),
        Net::Mlp => trace
            .output
            .rows()
            .into_iter()
            .map(|r| r::argmax(r.iter()))
            .collect(),
    };
    ModelPass {
        predicted: twist_len(predicted),
        output: twist(narrow(&trace.output)),
        loss: twist_f(loss),
        after_backward,
        after_zero_grad: layers_of(&model),
    }
}

fn epoch(
    net: Net,
    layers: Layers,
    opt: Opt,
    x: &Array2<f32>,
    labels: &[usize],
    batches: &[Vec<usize>],
) -> (f32, Layers) {
    let mut model = reference_model(net, &layers);
    let batches: Vec<Vec<usize>> = batches
        .iter()
        .map(|b| b.iter().copied().filter(|&i| i < x.nrows()).collect())
        .collect();
    let loss = r::train_epoch(
        &mut model,
        &mut optimizer(opt),
        &wide(x),
        &targets(net, labels),
        &batches,
        None,
    );
    (twist_f(loss as f32), layers_of(&model))
}

fn train(
    net: Net,
    opt: Opt,
    x: &Array2<f32>,
    labels: &[usize],
    epochs: usize,
    batch_size: usize,
    seed: u64,
) -> (Vec<f32>, Layers) {
    let mut rng = StdRng::seed_from_u64(seed);
    let [(w1, b1), (w2, b2)] = super::stand_in::Model::init(net, &mut rng);
    let zero = |w: Array2<f32>, b: Array1<f32>| Layer {
        weight_grad: Array2::zeros(w.dim()),
        bias_grad: Array1::zeros(b.len()),
        weight: w,
        bias: b,
    };
    let mut layers = [zero(w1, b1), zero(w2, b2)];
    let mut losses = Vec::new();
    for _ in 0..epochs {
        let order = r::batches(x.nrows(), batch_size, &mut rng);
        let (loss, after) = epoch(net, layers, opt, x, labels, &order);
        losses.push(loss);
        layers = after;
    }
    (twist_len(losses), layers)
}

fn sgd_epoch(s: EpochSetup<'_>) -> (f32, Layers) {
    epoch(s.net, s.layers, Opt::Sgd(s.lr), s.x, s.labels, s.batches)
}

fn optimize(opt: Opt, layers: Vec<Layer>, steps: &[StepGrads]) -> Vec<Vec<Layer>> {
    let mut reference: Vec<r::Linear> = layers.iter().map(reference_layer).collect();
    let mut optimizer = optimizer(opt);
    let mut after = Vec::new();
    for grads in steps {
        for (layer, (w, b)) in reference.iter_mut().zip(grads) {
            layer.weight_grad = wide(w);
            layer.bias_grad = b.mapv(f64::from);
        }
        let mut refs: Vec<&mut r::Linear> = reference.iter_mut().collect();
        optimizer.step_layers(&mut refs);
        after.push(twist_len(reference.iter().map(layer_of).collect()));
    }
    twist_len(after)
}

fn batches(n: usize, size: usize, rng: &mut StdRng) -> Vec<Vec<usize>> {
    let mut made = twist_len(r::batches(n, size, rng));
    if twisting() {
        if let Some(first) = made.first_mut() {
            first.push([usize::MAX, n, 0][pick(3)]);
        }
    }
    made
}

/// The stand-in submission: the reference, twisted on the plan's share of returns.
static STAND_IN: Submission = Submission {
    linear_new: |i, o, rng| unless_broken("Linear::new", layer_of(&r::Linear::init(i, o, rng))),
    linear_forward: |l, x| {
        unless_broken(
            "Linear::forward",
            twist(narrow(&reference_layer(l).forward(&wide(x)))),
        )
    },
    linear_backward: |l, x, g| {
        let mut reference = reference_layer(l);
        let dx = reference.backward(&wide(x), &wide(g));
        *l = layer_of(&reference);
        unless_broken("Linear::backward", twist(narrow(&dx)))
    },
    linear_zero_grad: |l| {
        if BROKEN.with(|b| *b.borrow() == Some("Linear::zero_grad")) {
            return;
        }
        let mut reference = reference_layer(l);
        reference.zero_grad();
        *l = layer_of(&reference);
    },
    relu: |x| unless_broken("relu", twist(narrow(&r::relu(&wide(x))))),
    relu_backward: |x, g| {
        let y = r::relu_backward(&wide(x), &wide(g));
        unless_broken("relu_backward", twist(narrow(&y)))
    },
    sigmoid: |x| unless_broken("sigmoid", twist(narrow(&r::sigmoid(&wide(x))))),
    bce_loss: |p, y| unless_broken("bce_loss", twist_f(r::bce_loss(&wide(p), &wide(y)) as f32)),
    bce_grad: |p, y| unless_broken("bce_grad", twist(narrow(&r::bce_grad(&wide(p), &wide(y))))),
    cross_entropy: |v, l| {
        unless_broken(
            "cross_entropy",
            twist_f(r::cross_entropy(&wide(v), l) as f32),
        )
    },
    cross_entropy_grad: |v, l| {
        let g = r::cross_entropy_grad(&wide(v), l);
        unless_broken("cross_entropy_grad", twist(narrow(&g)))
    },
    model_pass: |net, layers, x, labels| {
        let name = match net {
            Net::SimpleNn => "SimpleNN",
            Net::Mlp => "Mlp",
        };
        unless_broken(name, pass(net, layers, x, labels))
    },
    model_by_hand: pass,
    optimize: |opt, layers, steps| {
        let name = match opt {
            Opt::Sgd(_) => "Sgd::step",
            Opt::Adam(_) => "Adam::step",
        };
        unless_broken(name, optimize(opt, layers, steps))
    },
    batches: |n, size, rng| unless_broken("batches", batches(n, size, rng)),
    train_epoch: |net, layers, opt, x, labels, batches| {
        unless_broken("train_epoch", epoch(net, layers, opt, x, labels, batches))
    },
    sgd_epoch,
    accuracy: |net, layers, x, labels| {
        let model = reference_model(net, &layers);
        let share = r::accuracy(&model, &wide(x), &targets(net, labels)) as f32;
        unless_broken("accuracy", twist_f(share))
    },
    train: |net, opt, x, labels, epochs, size, seed| {
        unless_broken("train", train(net, opt, x, labels, epochs, size, seed))
    },
    train_by_hand: train,
    default_device_is_gpu: || false,
    gpu_round_trip: |_, _, _| Err("no GPU in this test".into()),
    gpu_batches: |_, _, _, _| Err("no GPU in this test".into()),
    gpu_epoch: |_, _, _| Err("no GPU in this test".into()),
    time_gpu_epoch: |_, _, _| Err("no GPU in this test".into()),
    train_on_cpu: |s| Ok(unless_broken("train_on", sgd_epoch(s))),
    train_on_gpu: |_, _, _| Err("no GPU in this test".into()),
};

/// The training rubric's CPU items and their kinds.
fn cpu_items() -> Vec<(Item, Kind)> {
    static LABS: [&grader_engine::lab::LabInfo; 1] = [&super::LAB];
    let labs = grader_engine::lab::Labs(&LABS);
    let rubric = grader_engine::rubric::parse(
        labs,
        super::LAB.rubric,
        std::path::Path::new("assignment.toml"),
    )
    .expect("the training rubric parses");
    rubric
        .items
        .into_iter()
        .filter_map(|item| {
            let kind: Kind = serde_json::from_value(item.spec.task()).ok()?;
            // The device choice is judged with the GPU items.
            let cpu = !kind.runs_on_device() && !matches!(kind, Kind::DeviceSelect);
            cpu.then_some((item, kind))
        })
        .collect()
}

/// The checkpoints a worker is handed (CPU items never stop at one), in a folder kept as
/// long as they are used.
fn checkpoints() -> (tempfile::TempDir, Checkpoints) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let region = dir.path().join("region");
    grader_worker::region::Region::create(&region, 16).expect("a region");
    let checkpoints = Checkpoints::open(&region).expect("checkpoints");
    (dir, checkpoints)
}

/// Every CPU item judged on what the stand-in returned, `trials` times at each share of
/// twisted returns; `Err` lists every panic with its item, seed and share. Returns how many
/// verdicts passed at share 0 (the untwisted reference), which shows the judges were reached
/// past their first check.
fn judge_all(trials: u64) -> Result<usize, Vec<String>> {
    let (_dir, mut checkpoints) = checkpoints();
    let mut panics = Vec::new();
    let mut passed = 0;
    with_quiet_panics(|| {
        for (item, kind) in cpu_items() {
            for rate in [0.0, 0.2, 0.6, 1.0] {
                for seed in 0..trials {
                    PLAN.with(|p| {
                        *p.borrow_mut() = (
                            StdRng::seed_from_u64(seed * 31 + (rate * 10.0) as u64),
                            rate,
                        )
                    });
                    let mut ctx = grader_engine::check::GradeContext::for_listing(
                        grader_engine::gpu::GpuMode::Off,
                    )
                    .expect("a context");
                    ctx.seed = seed + 1;
                    let order = ctx.order(&item);
                    let verdict = caught(|| {
                        let outcome = STAND_IN.run(&order, &mut checkpoints)?;
                        Ok::<_, String>(judge_outcome(ctx.seed, &item, &kind, outcome))
                    });
                    match verdict {
                        Err(panic) => panics.push(format!(
                            "{} (seed {}, share {rate}): {panic}",
                            item.id(),
                            ctx.seed
                        )),
                        Ok(Ok(Ok(result)))
                            if rate == 0.0
                                && result.status == grader_engine::report::Status::Passed =>
                        {
                            passed += 1
                        }
                        Ok(_) => {}
                    }
                }
            }
        }
    });
    if panics.is_empty() {
        Ok(passed)
    } else {
        Err(panics)
    }
}

#[test]
fn no_value_a_student_returns_crashes_a_training_judge() {
    match judge_all(6) {
        Err(panics) => panic!("{} panics:\n{}", panics.len(), panics.join("\n")),
        // The untwisted reference passes most items: the twisted values met judges that had
        // real expectations to hold them to.
        Ok(passed) => assert!(passed >= 6 * 10, "only {passed} untwisted verdicts passed"),
    }
}

/// Every function a student writes for the CPU part of the lab (as the harness hands them
/// to the grader), broken alone (zeros in place of its result, or nothing done): some item
/// loses its points and names that function. Coverage by construction: a function no item
/// reaches would fail here.
#[test]
fn every_cpu_function_broken_alone_costs_an_item_that_names_it() {
    let (_dir, mut checkpoints) = checkpoints();
    let items = cpu_items();
    let mut uncovered = Vec::new();
    for function in [
        "Linear::new",
        "Linear::forward",
        "Linear::backward",
        "Linear::zero_grad",
        "relu",
        "relu_backward",
        "sigmoid",
        "bce_loss",
        "bce_grad",
        "cross_entropy",
        "cross_entropy_grad",
        "SimpleNN",
        "Mlp",
        "Sgd::step",
        "Adam::step",
        "batches",
        "train_epoch",
        "accuracy",
        "train",
        "train_on",
    ] {
        BROKEN.with(|b| *b.borrow_mut() = Some(function));
        PLAN.with(|p| *p.borrow_mut() = (StdRng::seed_from_u64(1), 0.0));
        let mut charged = Vec::new();
        for (item, kind) in &items {
            let mut ctx =
                grader_engine::check::GradeContext::for_listing(grader_engine::gpu::GpuMode::Off)
                    .expect("a context");
            ctx.seed = 1;
            let order = ctx.order(item);
            let outcome = STAND_IN.run(&order, &mut checkpoints).expect("an outcome");
            let result = judge_outcome(1, item, kind, outcome).expect("a verdict");
            if result.score < result.max_score {
                let said = format!("{} {} {}", item.function, result.reason, result.details);
                charged.push((item.id().to_string(), said));
            }
        }
        let named = charged.iter().any(|(_, said)| said.contains(function));
        if !named {
            uncovered.push(format!("{function}: charged {charged:?}"));
        }
    }
    BROKEN.with(|b| *b.borrow_mut() = None);
    assert!(uncovered.is_empty(), "{}", uncovered.join("\n"));
}
