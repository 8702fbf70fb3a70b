//! Judging the training lab: every reference computed here in f64 from the same inputs the
//! worker used; gradients also against central differences; the feedback names the tensor as
//! the lesson does (`layer1.weight`), the worst index, expected and got, and the usual mistake
//! when one fits.

use super::compare::{compare, row, Mismatch};
use super::inputs::{self, OPTIMIZER_SHAPES};
use super::kinds::{Cases, Kind, Sent, SentLayer, SentPass, Setup, Steps};
use super::reference::{self as r, EpochTargets, LoopFault, Optimizer, Targets, TwoLayer};
use super::trajectory::{self, Parameters, Tolerance};
use super::worker::net_of;
use super::{t, Layer, Net};
use grader_engine::check::{outcome_of, unexpected, GradeContext};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_engine::supervisor::SupervisorError;
use grader_worker::protocol::{Matrix, Outcome};
use ndarray::{Array1, Array2};

/// Relative and absolute tolerance of f32 results against f64 references.
const REL: f64 = 1e-3;
const ABS: f64 = 1e-4;
/// How far (relative to how far the reference moved) an epoch's parameters may be from the
/// reference's; see [`trajectory`] for why the typical hidden unit is read. Measured with
/// `GPU_LABS_DEBUG_EPOCH=1 grader grade … --only train_epoch --only train_epoch_mlp --only
/// cpu_fallback --seed N`, seeds 1–80 for the solution and 1–40 for each of the independent
/// fixture, the batch summed in reverse by hand and every layer product in f64 (600 epochs):
/// the typical unit of a correct loop stays within 4.3e-5 (4e-6 except where a ReLU input
/// rounded to the other side of 0; the worst, seed 60 of `cpu_fallback`), the whole model
/// within 5.7e-3. The closest wrong loop, SimpleNN's backward without the sigmoid's
/// derivative, puts the typical unit 2.65e-3 to 3.2e-2 off (seeds 1–40 and 101–124). So
/// `typical` 3e-4, 7× above the worst correct and 8.8× below the closest wrong, and `all`
/// 0.05, a loose bound 8.8× above the worst rounding cascade. (The whole-model distance alone
/// at 1e-4 failed correct loops in 11 of the 600 epochs; at 0.02 that mistake passed on six
/// seeds of eight.) Those epochs ran the student's own model (the MLP's epoch was then an item
/// of its own, `train_epoch_mlp`); the loop items now run the grader's model and optimizer
/// ([`super::stand_in`]), whose f64 math lies closer still (typical unit 1e-6, seed 1), and
/// `tests/e2e/training.rs` shows four loops written differently pass and the smallest loop
/// mistake (the last batch never steps) fails, on eight seeds.
pub(super) const TRAJECTORY: Tolerance = Tolerance {
    typical: 3e-4,
    all: 0.05,
};
/// The same for an epoch on the GPU (`gpu_epoch_simple_nn`, `gpu_epoch_mlp`, `train_on_gpu`).
/// Measured on the emulator, seeds 1–20 of the solution and the independent fixture (120
/// epochs): the typical unit within 4.2e-6, as on the CPU. A real GPU's cuBLAS (FP32) and
/// atomics sum in orders the emulator does not reproduce, which only a GPU could measure, so
/// `typical` is 1e-3: 23× above the worst correct CPU loop, 2.6× below the closest wrong one.
pub(super) const GPU_TRAJECTORY: Tolerance = Tolerance {
    typical: 1e-3,
    all: 0.05,
};
/// The fewest items from which an unshuffled or repeated order is a mistake, not chance
/// (10! ≈ 3.6 million orders).
const SHUFFLE_TELLS: usize = 10;
/// Gradients of at most this many values are also checked against central differences.
const NUMERIC_MAX: usize = 2_000;

/// A fraction as a percentage with two significant digits ("0.0031%", "1.5%"), so that a
/// small distance still shows how small.
pub(super) fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p == 0.0 || !p.is_finite() {
        return format!("{p}%");
    }
    let decimals = (1 - p.abs().log10().floor() as i32).max(1) as usize;
    format!("{p:.decimals$}%")
}

/// How a returned mean loss stands to the expected one: about `batches` times it (the batch
/// losses summed, not averaged), about `batch_size` times it (a batch's per-example losses
/// summed), or neither. Each epoch judge (CPU and GPU) words its own hint for each.
pub(super) enum LossScale {
    Summed,
    PerExample,
    Other,
}

/// The returned loss over the expected one, and what that ratio most likely means.
pub(super) fn loss_scale(
    loss: f32,
    expected: f64,
    batches: usize,
    batch_size: usize,
) -> (f64, LossScale) {
    let ratio = f64::from(loss) / expected;
    let near = |n: f64| n > 1.0 && (ratio / n - 1.0).abs() < 0.02;
    let scale = if near(batches as f64) {
        LossScale::Summed
    } else if near(batch_size as f64) {
        LossScale::PerExample
    } else {
        LossScale::Other
    };
    (ratio, scale)
}

/// Grades one training item.
pub fn grade(ctx: &GradeContext, item: &Item, kind: &Kind) -> Result<ItemResult, SupervisorError> {
    match outcome_of(ctx, item, &ctx.order(item))? {
        Err(failed) => Ok(failed),
        Ok((outcome, _)) => judge_outcome(ctx.seed, item, kind, outcome),
    }
}

/// Judges what a worker sent for one CPU item of the training lab, whatever it is: the
/// half of [`grade`] after the worker ran (the property test of `judge_fuzz` calls it with
/// the values of a submission that returns anything).
pub fn judge_outcome(
    seed: u64,
    item: &Item,
    kind: &Kind,
    outcome: Outcome,
) -> Result<ItemResult, SupervisorError> {
    let sent = match outcome {
        Outcome::Lab(value) => value
            .read::<Sent>()
            .map_err(|e| bad(item, &e.to_string()))?,
        other => return Err(unexpected(item, &other)),
    };
    let judge = Judge { seed, item };
    let verdict = match (kind, sent) {
        (Kind::Init(c), Sent::Init(sent)) => judge.init(c, &sent),
        (Kind::Forward(c), Sent::Tensors(sent)) => judge.forward(c, &sent),
        (Kind::Backward(c), Sent::Backward(sent)) => judge.backward(c, &sent),
        (Kind::Elementwise(c), Sent::Tensors(sent)) => judge.elementwise(c, &sent),
        (Kind::Loss(c), Sent::Losses(sent)) => judge.loss_values(c, &sent),
        (Kind::Loss(c), Sent::Tensors(sent)) => judge.loss_grads(c, &sent),
        (Kind::Model(c), Sent::Model { passes, by_hand }) => judge.model(c, &passes, &by_hand),
        (Kind::Optimizer(s), Sent::Steps(sent)) => judge.optimizer(s, &sent),
        (Kind::Batches(c), Sent::Batches(sent)) => judge.batches(c, &sent),
        (
            Kind::Epoch(s),
            Sent::Epoch {
                loss,
                layers,
                first_bad_batch,
            },
        ) => judge.epoch(
            s,
            f32::from_bits(loss),
            &layers,
            first_bad_batch,
            TRAJECTORY,
        ),
        (
            Kind::CpuFallback(s),
            Sent::Fallback {
                loss,
                layers,
                direct_loss,
                direct_layers,
            },
        ) => judge.fallback(
            s,
            (f32::from_bits(loss), &layers),
            (f32::from_bits(direct_loss), &direct_layers),
        ),
        (Kind::Accuracy(a), Sent::Accuracy(share)) => judge.accuracy(a, f32::from_bits(share)),
        (
            Kind::Train(t),
            Sent::Train {
                losses,
                again,
                layers,
                by_hand,
                by_hand_layers,
            },
        ) => judge.train(
            t,
            (&floats(&losses), &layers),
            &floats(&again),
            (&floats(&by_hand), &by_hand_layers),
        ),
        _ => return Err(bad(item, "its results do not fit the item's kind")),
    }?;
    Ok(result(item, verdict))
}

/// A failed check: the table's one line and the full feedback.
pub(super) struct Wrong {
    pub(super) reason: String,
    pub(super) details: String,
}

/// A check's verdict: passed (with what it showed), failed, or the grader's own failure.
pub(super) type Verdict = Result<Result<String, Wrong>, SupervisorError>;

/// The item's result from a verdict.
pub(super) fn result(item: &Item, verdict: Result<String, Wrong>) -> ItemResult {
    match verdict {
        Ok(reason) => {
            let details = t!("passed-details", function = item.function, reason = reason);
            ItemResult::passed(item, reason, details)
        }
        Err(Wrong { reason, details }) => ItemResult::failed(item, reason, details),
    }
}

/// A failed check whose feedback is `details` and a hint.
pub(super) fn wrong(reason: impl Into<String>, details: impl Into<String>, hint: &str) -> Verdict {
    let mut details = details.into();
    if !hint.is_empty() {
        details.push('\n');
        details.push_str(&grader_worker::tr!(
            grader_engine::i18n::MESSAGES,
            "hint-line",
            hint = hint
        ));
    }
    Ok(Err(Wrong {
        reason: reason.into(),
        details,
    }))
}

/// The grader's own failure: a worker's report that does not fit the item.
pub(super) fn bad(item: &Item, message: &str) -> SupervisorError {
    SupervisorError::BadReport {
        item: item.id().to_string(),
        message: message.to_string(),
    }
}

fn floats(bits: &[u32]) -> Vec<f32> {
    bits.iter().map(|&b| f32::from_bits(b)).collect()
}

fn wide(a: &Array2<f32>) -> Array2<f64> {
    a.mapv(f64::from)
}

fn wide1(a: &Array1<f32>) -> Array1<f64> {
    a.mapv(f64::from)
}

/// The f64 layer a reference starts from, with the same parameters and gradients.
pub(super) fn reference_layer(layer: &Layer) -> r::Linear {
    let mut l = r::Linear::from_parameters(wide(&layer.weight), wide1(&layer.bias));
    l.weight_grad = wide(&layer.weight_grad);
    l.bias_grad = wide1(&layer.bias_grad);
    l
}

/// The reference model holding these layers.
pub(super) fn reference_model(net: Net, layers: &[Layer; 2]) -> TwoLayer {
    let head = match net {
        Net::SimpleNn => r::Head::SigmoidBce,
        Net::Mlp => r::Head::LogitsCrossEntropy,
    };
    TwoLayer {
        layer1: reference_layer(&layers[0]),
        layer2: reference_layer(&layers[1]),
        head,
    }
}

/// A model's targets, from class labels.
pub(super) fn targets(net: Net, labels: &[usize]) -> EpochTargets {
    match net {
        Net::SimpleNn => {
            EpochTargets::Binary(Array2::from_shape_fn((labels.len(), 1), |(i, _)| {
                labels[i] as f64
            }))
        }
        Net::Mlp => EpochTargets::Classes(labels.to_vec()),
    }
}

/// What a model's pass must give on one case: its output, its loss, and each layer's weight
/// and bias gradients after backward (the bias as one row).
struct ExpectedPass {
    output: Array2<f64>,
    loss: f64,
    grads: [(Array2<f64>, Array2<f64>); 2],
}

/// The four tensors of a sent layer, unpacked.
struct Got {
    weight: Array2<f32>,
    bias: Array2<f32>,
    weight_grad: Array2<f32>,
    bias_grad: Array2<f32>,
}

/// The reference's view of an `epoch` item: the grader's start, batch order and data.
pub(super) struct ReferenceEpoch {
    start: [Layer; 2],
    order: Vec<Vec<usize>>,
    set: super::data::Dataset,
    all: EpochTargets,
}

impl ReferenceEpoch {
    /// The epoch the worker ran for item `id` with `s`'s keys.
    pub(super) fn new(seed: u64, id: &str, s: &Setup) -> ReferenceEpoch {
        let epoch = inputs::epoch(seed, id, s.model, s.examples, s.batch_size, s.hidden);
        ReferenceEpoch {
            start: epoch.layers,
            order: epoch.order,
            all: targets(s.model, &epoch.set.labels),
            set: epoch.set,
        }
    }

    /// The reference loop (or a typical wrong one) over the epoch: its mean loss and model.
    pub(super) fn run(&self, s: &Setup, fault: Option<LoopFault>) -> (f64, TwoLayer) {
        let mut model = reference_model(s.model, &self.start);
        let mut opt = match s.optimizer.with(s.lr) {
            super::Opt::Sgd(lr) => Optimizer::Sgd(r::Sgd { lr: f64::from(lr) }),
            super::Opt::Adam(lr) => Optimizer::Adam(r::Adam::new(f64::from(lr))),
        };
        let loss = r::train_epoch(
            &mut model,
            &mut opt,
            &self.set.inputs,
            &self.all,
            &self.order,
            fault,
        );
        (loss, model)
    }
}

/// Judges one item's results against references from the run's seed.
pub(super) struct Judge<'a> {
    pub(super) seed: u64,
    pub(super) item: &'a Item,
}

impl Judge<'_> {
    pub(super) fn id(&self) -> &str {
        self.item.id()
    }

    fn unpack(&self, m: &Matrix) -> Result<Array2<f32>, SupervisorError> {
        m.to_array()
            .ok_or_else(|| bad(self.item, "a tensor's data does not match its shape"))
    }

    fn got(&self, l: &SentLayer) -> Result<Got, SupervisorError> {
        Ok(Got {
            weight: self.unpack(&l.weight)?,
            bias: self.unpack(&l.bias)?,
            weight_grad: self.unpack(&l.weight_grad)?,
            bias_grad: self.unpack(&l.bias_grad)?,
        })
    }

    fn case_text(&self, case: usize) -> String {
        self.item.spec.describe_case(case).unwrap_or_default()
    }

    fn function(&self) -> &str {
        &self.item.function
    }

    /// The same failure for a tensor that is off, said with the case.
    fn mismatch(&self, case: usize, m: &Mismatch, hint: &str) -> Verdict {
        let case = self.case_text(case);
        let reason = match m {
            Mismatch::Shape { name, .. } => t!("wrong-shape-reason", name = name, case = case),
            Mismatch::NotFinite { name, .. } => t!("not-finite-reason", name = name, case = case),
            Mismatch::Value { name, .. } => t!("wrong-value-reason", name = name, case = case),
        };
        wrong(
            reason,
            t!(
                "mismatch-details",
                function = self.function(),
                case = case,
                mismatch = m
            ),
            hint,
        )
    }

    fn init(&self, c: &Cases<2>, sent: &[[SentLayer; 3]]) -> Verdict {
        for (case, (&[inputs, outputs], made)) in c.cases.iter().zip(sent).enumerate() {
            let [first, again, other] = [&made[0], &made[1], &made[2]].map(|l| self.got(l));
            let (first, again, other) = (first?, again?, other?);
            let bound = 1.0 / (inputs as f64).sqrt();
            let at = self.case_text(case);
            if first.weight.dim() != (outputs, inputs) || first.bias.len() != outputs {
                return wrong(
                    t!("init-shapes-reason", case = at),
                    t!(
                        "init-shapes-details",
                        inputs = inputs,
                        outputs = outputs,
                        rows = first.weight.nrows(),
                        cols = first.weight.ncols(),
                        biases = first.bias.len()
                    ),
                    &t!("init-shapes-hint"),
                );
            }
            if first
                .weight_grad
                .iter()
                .chain(&first.bias_grad)
                .any(|&g| g != 0.0)
                || first.weight_grad.dim() != first.weight.dim()
                || first.bias_grad.len() != outputs
            {
                return wrong(
                    t!("init-grads-reason", case = at),
                    t!("init-grads-details"),
                    &t!("init-grads-hint"),
                );
            }
            for (name, values) in [("weight", &first.weight), ("bias", &first.bias)] {
                if let Some(v) = values.iter().find(|&&v| {
                    f64::from(v).abs().partial_cmp(&(bound * 1.000_001))
                        != Some(std::cmp::Ordering::Less)
                }) {
                    return wrong(
                        t!("init-bound-reason", name = name, case = at),
                        t!(
                            "init-bound-details",
                            inputs = inputs,
                            outputs = outputs,
                            name = name,
                            value = v,
                            bound = format!("{bound:.5}")
                        ),
                        &t!("init-bound-hint"),
                    );
                }
            }
            let n = first.weight.len() as f64;
            if n >= 1000.0 {
                // Uniform on ±bound: mean 0 (σ bound/√(3n)), half the values beyond bound/2.
                let mean = first.weight.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
                let beyond = first
                    .weight
                    .iter()
                    .filter(|&&v| f64::from(v).abs() > bound / 2.0)
                    .count() as f64
                    / n;
                let spread = 6.0 / n.sqrt();
                if mean.abs() > 6.0 * bound / (3.0 * n).sqrt() || (beyond - 0.5).abs() > spread {
                    return wrong(
                        t!("init-uniform-reason", case = at),
                        t!(
                            "init-uniform-details",
                            inputs = inputs,
                            outputs = outputs,
                            mean = format!("{mean:.5}"),
                            beyond = format!("{:.1}", beyond * 100.0),
                            bound = format!("{bound:.5}")
                        ),
                        &t!("init-uniform-hint"),
                    );
                }
            }
            if outputs * inputs > 1 && first.weight.iter().all(|&v| v == first.weight[[0, 0]]) {
                return wrong(
                    t!("init-same-reason", case = at),
                    t!("init-same-details"),
                    &t!("init-same-hint"),
                );
            }
            if first.weight != again.weight || first.bias != again.bias {
                return wrong(
                    t!("init-not-reproducible-reason", case = at),
                    t!("init-not-reproducible-details"),
                    &t!("init-from-rng-hint"),
                );
            }
            if first.weight == other.weight {
                return wrong(
                    t!("init-other-seed-reason", case = at),
                    t!("init-other-seed-details"),
                    &t!("init-from-rng-hint"),
                );
            }
            if let Some(verdict) = self.not_drawn_as_documented(case, inputs, outputs, &first) {
                return verdict;
            }
        }
        Ok(Ok(t!("init-right", cases = c.cases.len())))
    }

    /// The layer against the one the documented draws give from the worker's generator
    /// (weight row by row, then bias, each `rng.random_range(-bound..bound)` in f32): any other
    /// distribution (zero biases, a normal, another bound, another order) shows here.
    fn not_drawn_as_documented(
        &self,
        case: usize,
        inputs: usize,
        outputs: usize,
        got: &Got,
    ) -> Option<Verdict> {
        use grader_hot::inputs::uniform_matrix;
        let mut rng = super::rng_for(self.seed, self.id(), case, "init");
        let bound = 1.0 / (inputs as f32).sqrt();
        let weight = uniform_matrix(&mut rng, (outputs, inputs), bound, false).mapv(f64::from);
        // One row, as the worker sends a bias.
        let bias = uniform_matrix(&mut rng, (1, outputs), bound, false).mapv(f64::from);
        let at = self.case_text(case);
        let call = format!("`Linear::new({inputs}, {outputs}, rng)`");
        if let Err(m) = compare("weight", weight.view(), got.weight.view(), 1e-5, 1e-7) {
            return Some(wrong(
                t!("init-weights-draws-reason", case = at),
                t!("init-draws-details", call = call, what = "", mismatch = m),
                &t!("init-weights-draws-hint"),
            ));
        }
        if let Err(m) = compare("bias", bias.view(), got.bias.view(), 1e-5, 1e-7) {
            let zeros = got.bias.iter().all(|&b| b == 0.0);
            let (reason, hint) = if zeros {
                (
                    t!("init-biases-zero-reason", case = at),
                    t!("init-biases-zero-hint"),
                )
            } else {
                (
                    t!("init-biases-draws-reason", case = at),
                    t!("init-biases-draws-hint"),
                )
            };
            let what = if zeros {
                t!("init-biases-zero-what")
            } else {
                String::new()
            };
            return Some(wrong(
                reason,
                t!("init-draws-details", call = call, what = what, mismatch = m),
                &hint,
            ));
        }
        None
    }

    fn forward(&self, c: &Cases<3>, sent: &[Matrix]) -> Verdict {
        for (case, (&[b, i, o], got)) in c.cases.iter().zip(sent).enumerate() {
            let layer = inputs::layer(self.seed, self.id(), case, "layer", (i, o), false);
            let x = inputs::matrix(self.seed, self.id(), case, "x", (b, i), 1.0);
            let expected = reference_layer(&layer).forward(&wide(&x));
            let got = self.unpack(got)?;
            if let Err(m) = compare("output", expected.view(), got.view(), REL, ABS) {
                let no_bias = wide(&x).dot(&wide(&layer.weight).t());
                let hint = if compare("", no_bias.view(), got.view(), REL, ABS).is_ok() {
                    t!("forward-no-bias-hint")
                } else {
                    t!("forward-hint")
                };
                return self.mismatch(case, &m, &hint);
            }
        }
        Ok(Ok(t!("right-on-all", cases = c.cases.len())))
    }

    fn backward(&self, c: &Cases<3>, sent: &[(Matrix, SentLayer, SentLayer)]) -> Verdict {
        for (case, (&[b, i, o], (dx, after, zeroed))) in c.cases.iter().zip(sent).enumerate() {
            let (seed, id) = (self.seed, self.id());
            let layer = inputs::layer(seed, id, case, "layer", (i, o), true);
            let x = wide(&inputs::matrix(seed, id, case, "x", (b, i), 1.0));
            let g = wide(&inputs::matrix(seed, id, case, "grad", (b, o), 1.0));
            let mut reference = reference_layer(&layer);
            let expected_dx = reference.backward(&x, &g);
            let (dx, after) = (self.unpack(dx)?, self.got(after)?);
            let before_w = wide(&layer.weight_grad);
            let before_b = row(&wide1(&layer.bias_grad).to_vec());
            let expected_b = row(&reference.bias_grad.to_vec());
            let returned = t!("returned-input-gradient");
            let checks = [
                (returned.as_str(), expected_dx.view(), dx.view()),
                (
                    "weight_grad",
                    reference.weight_grad.view(),
                    after.weight_grad.view(),
                ),
                ("bias_grad", expected_b.view(), after.bias_grad.view()),
            ];
            for (name, expected, got) in checks {
                let Err(m) = compare(name, expected, got, REL, ABS) else {
                    continue;
                };
                // What this batch alone adds (the gradient held before left out): the
                // reference's own shapes, never the student's.
                let fresh_w = &reference.weight_grad - &before_w;
                let fresh_b = &expected_b - &before_b;
                let hint = match name {
                    "weight_grad" if compare("", fresh_w.view(), got, REL, ABS).is_ok() => {
                        t!("backward-weight-only-batch")
                    }
                    "bias_grad" if compare("", before_b.view(), got, REL, ABS).is_ok() => {
                        t!("backward-bias-missing")
                    }
                    "bias_grad" if compare("", fresh_b.view(), got, REL, ABS).is_ok() => {
                        t!("backward-bias-only-batch")
                    }
                    "weight_grad" => t!("backward-weight-hint"),
                    "bias_grad" => t!("backward-bias-hint"),
                    _ => t!("backward-input-hint"),
                };
                return self.mismatch(case, &m, &hint);
            }
            if b * i + o * i <= NUMERIC_MAX {
                // Central differences of L = Σ g∘(x·Wᵀ + b), independent of the reference.
                let w = wide(&layer.weight);
                let bias = wide1(&layer.bias);
                let loss = |x: &Array2<f64>, w: &Array2<f64>| (&(x.dot(&w.t()) + &bias) * &g).sum();
                let numeric_dx = r::numerical_gradient(|x| loss(x, &w), &x, 1e-6);
                let numeric_dw = r::numerical_gradient(|w| loss(&x, w), &w, 1e-6);
                let got_dw = &wide(&after.weight_grad) - &before_w;
                for (name, numeric, got) in [
                    (returned.as_str(), numeric_dx, wide(&dx)),
                    ("weight_grad", numeric_dw, got_dw),
                ] {
                    let got = got.mapv(|v| v as f32);
                    if let Err(m) = compare(name, numeric.view(), got.view(), REL, ABS) {
                        return self.mismatch(case, &m, &t!("central-differences-hint"));
                    }
                }
            }
            if let Some(verdict) = self.zeroed(case, &after, &self.got(zeroed)?) {
                return verdict;
            }
        }
        Ok(Ok(t!("backward-right", cases = c.cases.len())))
    }

    /// `Linear::zero_grad` after a backward pass: both gradients all zeros, of the same
    /// shapes, the parameters untouched.
    fn zeroed(&self, case: usize, before: &Got, got: &Got) -> Option<Verdict> {
        let zeros = |g: &Array2<f32>, like: &Array2<f32>| {
            g.dim() == like.dim() && g.iter().all(|&v| v == 0.0)
        };
        let kept = got.weight == before.weight && got.bias == before.bias;
        let (weight, bias) = (
            zeros(&got.weight_grad, &before.weight_grad),
            zeros(&got.bias_grad, &before.bias_grad),
        );
        if weight && bias && kept {
            return None;
        }
        let what = match (weight, bias) {
            (true, false) => t!("zero-grad-linear-bias"),
            (false, true) => t!("zero-grad-linear-weight"),
            (false, false) => t!("zero-grad-linear-both"),
            (true, true) => t!("zero-grad-linear-parameters"),
        };
        Some(wrong(
            t!("zero-grad-linear-reason", case = self.case_text(case)),
            t!("zero-grad-linear-details", what = what),
            &t!("zero-grad-linear-hint"),
        ))
    }

    fn elementwise(&self, c: &Cases<2>, sent: &[Matrix]) -> Verdict {
        for (case, (&[rows, cols], got)) in c.cases.iter().zip(sent).enumerate() {
            let x = wide(&inputs::elementwise_input(
                self.seed,
                self.id(),
                case,
                (rows, cols),
            ));
            let g = wide(&inputs::matrix(
                self.seed,
                self.id(),
                case,
                "grad",
                (rows, cols),
                1.0,
            ));
            let (expected, hint) = match self.function() {
                "relu" => (r::relu(&x), t!("relu-hint")),
                "relu_backward" => (r::relu_backward(&x, &g), t!("relu-backward-hint")),
                _ => (r::sigmoid(&x), t!("sigmoid-hint")),
            };
            let got = self.unpack(got)?;
            if let Err(m) = compare("output", expected.view(), got.view(), REL, ABS) {
                let relu_backward = self.function() == "relu_backward";
                // The gradient passed where x is exactly 0 too: `x >= 0` for `x > 0`.
                let passed_at_zero = || {
                    let mut at_zero = g.clone();
                    at_zero.zip_mut_with(&x, |g, &v| {
                        if v < 0.0 {
                            *g = 0.0;
                        }
                    });
                    compare("", at_zero.view(), got.view(), REL, ABS).is_ok()
                };
                let hint = if relu_backward && compare("", g.view(), got.view(), REL, ABS).is_ok() {
                    t!("relu-backward-unchanged-hint")
                } else if relu_backward && passed_at_zero() {
                    t!("relu-backward-zero-hint")
                } else {
                    hint
                };
                return self.mismatch(case, &m, &hint);
            }
        }
        Ok(Ok(t!("right-on-all", cases = c.cases.len())))
    }

    /// A loss case's inputs in f64: (values, targets, labels).
    fn loss_inputs(&self, c: &Cases<2>, case: usize) -> (Array2<f64>, Array2<f64>, Vec<usize>) {
        let (v, y, labels) = inputs::loss_case(
            self.seed,
            self.id(),
            case,
            c.cases.get(case).copied(),
            self.function(),
        );
        (wide(&v), wide(&y), labels)
    }

    fn loss_values(&self, c: &Cases<2>, sent: &[u32]) -> Verdict {
        let bce = self.function() == "bce_loss";
        for (case, &bits) in sent.iter().enumerate() {
            let (v, y, labels) = self.loss_inputs(c, case);
            let expected = if bce {
                r::bce_loss(&v, &y)
            } else {
                r::cross_entropy(&v, &labels)
            };
            let got = f32::from_bits(bits);
            let extreme = case == c.cases.len();
            let hint = match (bce, extreme) {
                (true, true) => t!("bce-extreme-hint"),
                (true, false) => t!("bce-hint"),
                (false, true) => t!("cross-entropy-extreme-hint"),
                (false, false) => t!("cross-entropy-hint"),
            };
            let m = compare(
                "loss",
                row(&[expected]).view(),
                row(&[got]).view(),
                REL,
                ABS,
            );
            if let Err(m) = m {
                return self.mismatch(case, &m, &hint);
            }
        }
        Ok(Ok(t!("loss-right", cases = sent.len())))
    }

    fn loss_grads(&self, c: &Cases<2>, sent: &[Matrix]) -> Verdict {
        let bce = self.function() == "bce_grad";
        for (case, got) in sent.iter().enumerate() {
            let (v, y, labels) = self.loss_inputs(c, case);
            let loss = |v: &Array2<f64>| {
                if bce {
                    r::bce_loss(v, &y)
                } else {
                    r::cross_entropy(v, &labels)
                }
            };
            let expected = if bce {
                r::bce_grad(&v, &y)
            } else {
                r::cross_entropy_grad(&v, &labels)
            };
            let got = self.unpack(got)?;
            let extreme = case == c.cases.len();
            let hint = if compare("", (-&expected).view(), got.view(), REL, ABS).is_ok() {
                t!("loss-grad-sign-hint")
            } else if compare(
                "",
                (&expected * v.len().max(1) as f64 / if bce { 1.0 } else { v.ncols() as f64 })
                    .view(),
                got.view(),
                REL,
                ABS,
            )
            .is_ok()
            {
                t!("loss-grad-n-hint")
            } else if extreme && !bce {
                t!("cross-entropy-grad-extreme-hint")
            } else if extreme {
                t!("bce-grad-extreme-hint")
            } else if bce {
                t!("bce-grad-hint")
            } else {
                t!("cross-entropy-grad-hint")
            };
            if let Err(m) = compare("gradient", expected.view(), got.view(), REL, ABS) {
                return self.mismatch(case, &m, &hint);
            }
            if !extreme && v.len() <= NUMERIC_MAX {
                let numeric = r::numerical_gradient(loss, &v, 1e-6);
                if let Err(m) = compare("gradient", numeric.view(), got.view(), REL, ABS) {
                    return self.mismatch(case, &m, &t!("loss-central-differences-hint"));
                }
            }
        }
        Ok(Ok(t!("loss-grads-right", cases = sent.len())))
    }

    /// A model's pass against the reference and, where that fails, against the same pass
    /// written out from the student's own pieces: a model that composes its pieces right is
    /// not charged again for a piece's mistake (the piece's own item is).
    fn model(&self, c: &Cases<1>, sent: &[SentPass], by_hand: &[Option<SentPass>]) -> Verdict {
        let net = net_of(self.function());
        let head = match net {
            Net::SimpleNn => "layer1 → ReLU → layer2 → sigmoid",
            Net::Mlp => "layer1 → ReLU → layer2 (logits, no softmax)",
        };
        let mut composed = 0;
        for (case, (&[b], pass)) in c.cases.iter().zip(sent).enumerate() {
            let layers = inputs::layers(self.seed, self.id(), case, net, true);
            let x = inputs::matrix(
                self.seed,
                self.id(),
                case,
                "x",
                (b, inputs::shapes(net)[0].0),
                1.0,
            );
            let labels = inputs::labels(self.seed, self.id(), case, b, inputs::classes(net));
            let mut model = reference_model(net, &layers);
            let trace = model.forward(&wide(&x));
            let all = targets(net, &labels);
            let t = match &all {
                EpochTargets::Binary(y) => Targets::Binary(y),
                EpochTargets::Classes(l) => Targets::Classes(l),
            };
            let loss = model.loss(&trace, t);
            model.backward(&trace, t);
            let reference = ExpectedPass {
                output: trace.output,
                loss,
                grads: [&model.layer1, &model.layer2]
                    .map(|l| (l.weight_grad.clone(), row(&l.bias_grad.to_vec()))),
            };
            if let Some(failed) = self.pass_against(case, &reference, pass, head)? {
                let written_out = match by_hand.get(case) {
                    Some(Some(h)) => self.expected_of(h, &layers)?,
                    _ => None,
                };
                match written_out {
                    Some(e) if self.pass_against(case, &e, pass, head)?.is_none() => composed += 1,
                    _ => return failed,
                }
            }
            let pieces_zeroed = by_hand
                .get(case)
                .and_then(Option::as_ref)
                .map(|h| h.after_zero_grad.as_slice());
            for (n, sent) in pass.after_zero_grad.iter().enumerate() {
                let got = self.got(sent)?;
                if got
                    .weight_grad
                    .iter()
                    .chain(&got.bias_grad)
                    .any(|&v| v != 0.0)
                {
                    // The model called each layer's zero_grad, and what is left is what the
                    // lab's own `Linear::zero_grad` leaves: that function's item charges.
                    let by_pieces = pieces_zeroed.and_then(|z| z.get(n));
                    if by_pieces.is_some_and(|h| self.same_grads(h, &got)) {
                        composed += 1;
                        continue;
                    }
                    return wrong(
                        t!(
                            "zero-grad-reason",
                            function = self.function(),
                            layer = n + 1
                        ),
                        t!(
                            "zero-grad-details",
                            function = self.function(),
                            layer = n + 1
                        ),
                        &t!("zero-grad-hint"),
                    );
                }
            }
            if let Some(verdict) = self.predictions(case, net, pass)? {
                return verdict;
            }
        }
        if composed > 0 {
            // Composing counts per tensor above; a case at most once.
            let composed = composed.min(c.cases.len());
            return Ok(Ok(t!(
                "model-composes",
                cases = c.cases.len(),
                composed = composed
            )));
        }
        Ok(Ok(t!("model-right", cases = c.cases.len())))
    }

    /// Whether a layer's gradients are those of `sent` (the same pass written out), within
    /// the judge's tolerance.
    fn same_grads(&self, sent: &SentLayer, got: &Got) -> bool {
        let Ok(h) = self.got(sent) else {
            return false;
        };
        let same = |e: &Array2<f32>, g: &Array2<f32>| {
            compare("", wide(e).view(), g.view(), REL, ABS).is_ok()
        };
        same(&h.weight_grad, &got.weight_grad) && same(&h.bias_grad, &got.bias_grad)
    }

    /// `predict` against the model's own output (so a forward mistake is not charged twice):
    /// SimpleNN's class is 1 where the probability is above 0.5, the MLP's the index of the
    /// row's largest logit (the first of equals). A row within rounding of the boundary takes
    /// either answer: `p > 0.5` and `logit > 0` may round apart there.
    fn predictions(
        &self,
        case: usize,
        net: Net,
        pass: &SentPass,
    ) -> Result<Option<Verdict>, SupervisorError> {
        let output = self.unpack(&pass.output)?;
        let at = self.case_text(case);
        let hint = match net {
            Net::SimpleNn => t!("predict-simple-nn-hint"),
            Net::Mlp => t!("predict-mlp-hint"),
        };
        let name = match net {
            Net::SimpleNn => "SimpleNN::predict",
            Net::Mlp => "Mlp::predict",
        };
        if pass.predicted.len() != output.nrows() {
            return Ok(Some(wrong(
                t!("predict-count-reason", function = name, case = at.clone()),
                t!(
                    "predict-count-details",
                    function = name,
                    got = pass.predicted.len(),
                    rows = output.nrows()
                ),
                &hint,
            )));
        }
        const CLOSE: f32 = 1e-6;
        for (i, (row, &got)) in output.rows().into_iter().zip(&pass.predicted).enumerate() {
            let (expected, close_call) = match net {
                Net::SimpleNn => {
                    let p = row.first().copied().unwrap_or(f32::NAN);
                    (usize::from(p > 0.5), (p - 0.5).abs() <= CLOSE)
                }
                Net::Mlp => {
                    let best = r::argmax(row.iter());
                    let top = row.get(best).copied().unwrap_or(f32::NAN);
                    let rival = row
                        .iter()
                        .enumerate()
                        .any(|(j, &v)| j != best && (top - v).abs() <= CLOSE * top.abs().max(1.0));
                    (best, rival)
                }
            };
            if got != expected && !close_call {
                return Ok(Some(wrong(
                    t!("predict-wrong-reason", function = name, case = at),
                    t!(
                        "predict-wrong-details",
                        function = name,
                        row = i,
                        got = got,
                        expected = expected,
                        output = format!("{row:.4}")
                    ),
                    &hint,
                )));
            }
        }
        Ok(None)
    }

    /// The written-out pass as what the model must give, when its pieces did something: a
    /// finite output that (over several rows) is not one value, and a backward pass that
    /// changed some gradient of every layer. Pieces that do nothing show nothing about the
    /// model.
    fn expected_of(
        &self,
        h: &SentPass,
        start: &[Layer; 2],
    ) -> Result<Option<ExpectedPass>, SupervisorError> {
        let output = self.unpack(&h.output)?;
        let first = output.iter().next().copied().unwrap_or(0.0);
        let varied = output.nrows() < 2 || output.iter().any(|&v| v != first);
        let finite = output.iter().all(|v| v.is_finite());
        if h.after_backward.len() != 2 || !varied || !finite {
            return Ok(None);
        }
        let mut grads = Vec::new();
        for (sent, before) in h.after_backward.iter().zip(start) {
            let got = self.got(sent)?;
            let changed = |a: &Array2<f32>, b: &Array2<f32>| a.iter().zip(b).any(|(a, b)| a != b);
            let before_bias = before.bias_grad.clone().insert_axis(ndarray::Axis(0));
            let moved = got.weight_grad.shape() == before.weight_grad.shape()
                && (changed(&got.weight_grad, &before.weight_grad)
                    || changed(&got.bias_grad, &before_bias));
            if !moved {
                return Ok(None);
            }
            grads.push((wide(&got.weight_grad), wide(&got.bias_grad)));
        }
        let [l1, l2]: [(Array2<f64>, Array2<f64>); 2] = match grads.try_into() {
            Ok(g) => g,
            Err(_) => return Ok(None),
        };
        Ok(Some(ExpectedPass {
            output: wide(&output),
            loss: f64::from(f32::from_bits(h.loss)),
            grads: [l1, l2],
        }))
    }

    /// `None` when `pass` gives what `e` says on this case, else the failing verdict.
    fn pass_against(
        &self,
        case: usize,
        e: &ExpectedPass,
        pass: &SentPass,
        head: &str,
    ) -> Result<Option<Verdict>, SupervisorError> {
        let output = self.unpack(&pass.output)?;
        if let Err(m) = compare("output", e.output.view(), output.view(), REL, ABS) {
            return Ok(Some(self.mismatch(
                case,
                &m,
                &t!("forward-is-hint", head = head),
            )));
        }
        let got_loss = f32::from_bits(pass.loss);
        if let Err(m) = compare(
            "loss",
            row(&[e.loss]).view(),
            row(&[got_loss]).view(),
            REL,
            ABS,
        ) {
            return Ok(Some(self.mismatch(case, &m, &t!("model-loss-hint"))));
        }
        if pass.after_backward.len() != 2 {
            return Err(bad(
                self.item,
                "a model came back with other than two layers",
            ));
        }
        for (n, ((weight, bias), sent)) in e.grads.iter().zip(&pass.after_backward).enumerate() {
            let got = self.got(sent)?;
            let name = |p: &str| t!("gradient-of", layer = n + 1, parameter = p);
            for (p, expected, got) in [
                ("weight", weight.view(), got.weight_grad.view()),
                ("bias", bias.view(), got.bias_grad.view()),
            ] {
                if let Err(m) = compare(&name(p), expected, got, REL, ABS) {
                    return Ok(Some(self.mismatch(
                        case,
                        &m,
                        "backward goes the other way through the same steps: the loss's \
                         gradient, then (SimpleNN) through the sigmoid, σ(1 − σ), then \
                         layer2.backward, relu_backward with ReLU's input, layer1.backward; \
                         gradients are added to those already there",
                    )));
                }
            }
        }
        Ok(None)
    }

    fn optimizer(&self, s: &Steps, sent: &[Vec<SentLayer>]) -> Verdict {
        let adam = self.function() == "Adam::step";
        let start: Vec<Layer> = OPTIMIZER_SHAPES
            .iter()
            .enumerate()
            .map(|(l, &shape)| {
                inputs::layer(self.seed, self.id(), 0, &format!("p{l}"), shape, false)
            })
            .collect();
        let run = |variant: Option<&str>| -> Vec<Vec<r::Linear>> {
            let mut layers: Vec<r::Linear> = start.iter().map(reference_layer).collect();
            let mut opt = if adam {
                let mut a = r::Adam::new(f64::from(s.lr));
                a.bias_correction = variant != Some("no-correction");
                a.counter_per_layer = variant == Some("counter-per-layer");
                if variant == Some("swapped-betas") {
                    (a.beta1, a.beta2) = (a.beta2, a.beta1);
                }
                Optimizer::Adam(a)
            } else {
                Optimizer::Sgd(r::Sgd {
                    lr: f64::from(s.lr),
                })
            };
            let mut after = Vec::new();
            for step in 0..s.steps {
                let grads = inputs::step_grads(self.seed, self.id(), step, &OPTIMIZER_SHAPES);
                for (layer, (w, b)) in layers.iter_mut().zip(grads) {
                    layer.weight_grad = wide(&w);
                    layer.bias_grad = wide1(&b);
                }
                if let (Some("stuck-counter"), Optimizer::Adam(a)) = (variant, &mut opt) {
                    a.t = 0;
                }
                let mut refs: Vec<&mut r::Linear> = layers.iter_mut().collect();
                opt.step_layers(&mut refs);
                after.push(layers.clone());
            }
            after
        };
        let expected = run(None);
        if sent.len() != expected.len() {
            return Err(bad(self.item, "a step's layers are missing"));
        }
        // Each step's layers unpacked once: they are compared with up to three reference runs.
        let sent: Vec<Vec<Got>> = sent
            .iter()
            .map(|step| step.iter().map(|l| self.got(l)).collect())
            .collect::<Result<_, _>>()?;
        let first_off = |expected: &[Vec<r::Linear>]| -> Option<(usize, Mismatch)> {
            for (step, (want, got)) in expected.iter().zip(&sent).enumerate() {
                for (n, (w, g)) in want.iter().zip(got).enumerate() {
                    let bias = row(&w.bias.to_vec());
                    for (name, e, gv) in [
                        (
                            format!("layer{}.weight", n + 1),
                            w.weight.view(),
                            g.weight.view(),
                        ),
                        (format!("layer{}.bias", n + 1), bias.view(), g.bias.view()),
                    ] {
                        if let Err(m) = compare(&name, e, gv, REL, 1e-6) {
                            return Some((step, m));
                        }
                    }
                }
            }
            None
        };
        let Some((step, m)) = first_off(&expected) else {
            return Ok(Ok(t!("optimizer-right", steps = s.steps)));
        };
        let hint = if adam && first_off(&run(Some("no-correction"))).is_none() {
            t!("adam-no-correction-hint")
        } else if adam && first_off(&run(Some("stuck-counter"))).is_none() {
            t!("adam-stuck-counter-hint")
        } else if adam && first_off(&run(Some("swapped-betas"))).is_none() {
            t!("adam-swapped-betas-hint")
        } else if adam && first_off(&run(Some("counter-per-layer"))).is_none() {
            t!("adam-counter-per-layer-hint")
        } else if adam {
            t!("adam-hint")
        } else {
            t!("sgd-hint")
        };
        let mut verdict = self.mismatch(usize::MAX, &m, &hint)?;
        if let Err(w) = &mut verdict {
            w.reason = t!("after-step-reason", reason = w.reason, step = step + 1);
            w.details = t!(
                "after-step-details",
                step = step + 1,
                steps = s.steps,
                details = w.details
            );
        }
        Ok(verdict)
    }

    fn batches(&self, c: &Cases<2>, sent: &[[Vec<Vec<usize>>; 3]]) -> Verdict {
        for (case, (&[n, size], [first, second, again])) in c.cases.iter().zip(sent).enumerate() {
            let at = self.case_text(case);
            for (epoch, made) in [first, second].into_iter().enumerate() {
                if let Err(why) = r::check_partition(made, n, size) {
                    return wrong(
                        t!("not-a-split-reason", case = at),
                        t!(
                            "not-a-split-details",
                            n = n,
                            size = size,
                            call = epoch + 1,
                            why = why
                        ),
                        &t!("not-a-split-hint"),
                    );
                }
            }
            let flat = |b: &Vec<Vec<usize>>| b.concat();
            // A fair shuffle of n items keeps 0, 1, 2, … (or repeats an order) once in n!
            // calls: only from 10 items on (1 in 3.6 million) is that a mistake rather than
            // chance, so smaller cases are checked as splits only.
            let telling = n >= SHUFFLE_TELLS;
            if telling && flat(first) == (0..n).collect::<Vec<_>>() {
                return wrong(
                    t!("not-shuffled-reason", case = at),
                    t!("not-shuffled-details", n = n, size = size),
                    &t!("not-shuffled-hint"),
                );
            }
            if telling && first == second {
                return wrong(
                    t!("same-order-reason", case = at),
                    t!("same-order-details"),
                    &t!("same-order-hint"),
                );
            }
            if first != again {
                return wrong(
                    t!("init-not-reproducible-reason", case = at),
                    t!("order-not-reproducible-details"),
                    &t!("order-from-rng-hint"),
                );
            }
        }
        Ok(Ok(t!("batches-right", cases = c.cases.len())))
    }

    /// One epoch from the grader's start and batch order against the reference trajectory,
    /// and, when it leaves it, against each typical wrong loop.
    pub(super) fn epoch(
        &self,
        s: &Setup,
        loss: f32,
        sent: &[SentLayer],
        first_bad: Option<usize>,
        trajectory: Tolerance,
    ) -> Verdict {
        let function = &self.item.function;
        let epoch = ReferenceEpoch::new(self.seed, self.id(), s);
        let (start, order) = (&epoch.start, &epoch.order);
        let run = |fault: Option<LoopFault>| epoch.run(s, fault);
        if let Some(batch) = first_bad {
            return wrong(
                t!(
                    "epoch-nan-reason",
                    batch = batch.saturating_add(1),
                    batches = order.len()
                ),
                t!(
                    "epoch-nan-details",
                    function = function,
                    batch = batch.saturating_add(1),
                    batches = order.len()
                ),
                &t!("epoch-nan-hint"),
            );
        }
        let got: Vec<Got> = sent.iter().map(|l| self.got(l)).collect::<Result<_, _>>()?;
        if got.len() != 2 {
            return Err(bad(self.item, "an epoch sent other than two layers"));
        }
        let biases: Vec<Array1<f32>> = got
            .iter()
            .map(|g| g.bias.iter().copied().collect())
            .collect();
        let parameters: Vec<Parameters> = got
            .iter()
            .zip(&biases)
            .map(|(g, bias)| (g.weight.view(), bias.view()))
            .collect();
        let distance = |model: &TwoLayer| trajectory::distance(model, start, &parameters);
        let (expected_loss, reference) = run(None);
        let loss_ok =
            |expected: f64| (f64::from(loss) - expected).abs() <= 1e-3 * expected.abs() + 1e-5;
        let off = distance(&reference);
        if std::env::var_os("GPU_LABS_DEBUG_EPOCH").is_some() {
            eprintln!(
                "DEBUG {} all {:e} typical {:e}",
                self.item.id(),
                off.all,
                off.typical
            );
        }
        if off.within(trajectory) && loss_ok(expected_loss) {
            return Ok(Ok(t!(
                "epoch-right",
                batches = order.len(),
                within = percent(off.typical),
                loss = format!("{loss:.5}")
            )));
        }
        // The optimizer is the grader's (its mistakes are the optimizer items'), and the
        // order is the grader's.
        let faults = LoopFault::ALL
            .into_iter()
            .filter(|f| *f != LoopFault::NoShuffle && *f != LoopFault::AdamWithoutBiasCorrection);
        // Naming the mistake only (the item is lost either way): a wrong loop takes bigger
        // steps, and more ReLU inputs round across 0 on its path, so 10× the room.
        let naming = Tolerance {
            typical: 10.0 * trajectory.typical,
            all: trajectory.all,
        };
        for fault in faults {
            let (fault_loss, model) = run(Some(fault));
            if distance(&model).within(naming) && loss_ok(fault_loss) {
                let (what, hint) = match fault {
                    LoopFault::NoZeroGrad => {
                        (t!("fault-no-zero-grad"), t!("fault-no-zero-grad-hint"))
                    }
                    LoopFault::StepBeforeBackward => (
                        t!("fault-step-before-backward"),
                        t!("fault-step-before-backward-hint"),
                    ),
                    LoopFault::AdamWithoutBiasCorrection => {
                        (t!("fault-adam"), t!("fault-adam-hint"))
                    }
                    LoopFault::SumLoss => (t!("fault-sum-loss"), t!("fault-sum-loss-hint")),
                    LoopFault::NoShuffle => (String::new(), String::new()),
                };
                return wrong(
                    t!("loop-wrong-reason", what = what),
                    t!("loop-wrong-details", function = function, what = what),
                    &hint,
                );
            }
        }
        if off.within(trajectory) {
            // Say what the returned loss is, measured: the ratio names the likely mistake.
            let (ratio, scale) = loss_scale(loss, expected_loss, order.len(), s.batch_size);
            let hint = match scale {
                LossScale::Summed => t!("mean-loss-summed-hint"),
                LossScale::PerExample => t!("mean-loss-per-example-hint"),
                LossScale::Other => t!("mean-loss-hint"),
            };
            return wrong(
                t!("mean-loss-reason", ratio = format!("{ratio:.3}")),
                t!(
                    "mean-loss-details",
                    function = function,
                    loss = loss,
                    expected = format!("{expected_loss:.6}"),
                    ratio = format!("{ratio:.3}")
                ),
                &hint,
            );
        }
        let mut first = None;
        for (n, (reference, got)) in [&reference.layer1, &reference.layer2]
            .iter()
            .zip(&got)
            .enumerate()
        {
            let bias = row(&reference.bias.to_vec());
            for (name, e, g) in [
                (
                    format!("layer{}.weight", n + 1),
                    reference.weight.view(),
                    got.weight.view(),
                ),
                (format!("layer{}.bias", n + 1), bias.view(), got.bias.view()),
            ] {
                if let Err(m) = compare(&name, e, g, 0.05, 1e-3) {
                    first.get_or_insert(m);
                }
            }
        }
        let detail = first.map(|m| format!(" {m}.")).unwrap_or_default();
        wrong(
            t!("epoch-off-reason"),
            t!(
                "epoch-off-details",
                function = function,
                typical = percent(off.typical),
                all = percent(off.all),
                detail = detail
            ),
            &t!("epoch-off-hint"),
        )
    }

    fn accuracy(&self, a: &super::kinds::AccuracyKeys, got: f32) -> Verdict {
        let set = inputs::dataset(self.seed, self.id(), a.model, a.examples, "scored");
        let layers = inputs::layers(self.seed, self.id(), 0, a.model, false);
        let model = reference_model(a.model, &layers);
        let expected = r::accuracy(&model, &set.inputs, &targets(a.model, &set.labels));
        // Rows on a boundary (p = 0.5, tied logits) may fall either way in f32.
        if (f64::from(got) - expected).abs() <= 1.5 / a.examples as f64 {
            return Ok(Ok(t!(
                "accuracy-right",
                expected = format!("{expected:.4}"),
                examples = a.examples
            )));
        }
        wrong(
            t!(
                "accuracy-wrong-reason",
                got = got,
                expected = format!("{expected:.4}")
            ),
            t!(
                "accuracy-wrong-details",
                got = got,
                examples = a.examples,
                expected = format!("{expected:.4}")
            ),
            &t!("accuracy-wrong-hint"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grader_engine::rubric::ItemSpec;

    fn item(cases: Vec<[usize; 2]>) -> (Item, Cases<2>) {
        let c = Cases { cases };
        let spec: ItemSpec = std::sync::Arc::new(Kind::Batches(c.clone()));
        let item = Item {
            id: "batches".into(),
            title: "batches".into(),
            kind: "batches".into(),
            function: "batches".into(),
            points: 2.0,
            timeout_secs: 30.0,
            forbid: Vec::new(),
            require: Vec::new(),
            spec,
        };
        (item, c)
    }

    fn reason(n: usize, size: usize, first: Vec<usize>, second: Vec<usize>) -> Option<String> {
        let (item, c) = item(vec![[n, size]]);
        let judge = Judge {
            seed: 1,
            item: &item,
        };
        let cut = |order: Vec<usize>| -> Vec<Vec<usize>> {
            order.chunks(size).map(<[usize]>::to_vec).collect()
        };
        let sent = [[cut(first.clone()), cut(second), cut(first)]];
        match judge.batches(&c, &sent) {
            Ok(Ok(_)) => None,
            Ok(Err(w)) => Some(w.reason),
            Err(e) => Some(e.to_string()),
        }
    }

    #[test]
    fn a_small_shuffle_that_happens_to_keep_its_order_is_not_a_mistake() {
        // 1 in 120 fair shuffles of 5 items keeps 0..5; a correct submission must not lose
        // points by that chance.
        assert_eq!(reason(5, 10, (0..5).collect(), (0..5).collect()), None);
        let ordered: Vec<usize> = (0..10).collect();
        let shuffled = vec![3, 1, 4, 0, 5, 9, 2, 6, 8, 7];
        let in_order = reason(10, 3, ordered.clone(), shuffled.clone()).unwrap_or_default();
        assert!(in_order.starts_with("not shuffled"), "{in_order}");
        let repeated = reason(10, 3, shuffled.clone(), shuffled).unwrap_or_default();
        assert!(repeated.starts_with("the same order"), "{repeated}");
    }
}
