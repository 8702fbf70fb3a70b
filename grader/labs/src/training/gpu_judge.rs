//! Judging the training lab's GPU items: the model's round trip, the device loader's batches,
//! one GPU epoch (against the same f64 reference trajectory as the CPU epoch, and with proof
//! of device work where the backend can give it) and the synchronization check of the epoch
//! timer.

mod epoch;
mod replayed;

use super::gpu::{loader_case, GpuSent};
use super::inputs;
use super::judge::{bad, result, wrong, Judge, ReferenceEpoch, Verdict};
use super::kinds::{GpuSetup, GpuSpeed, Kind, SentGpu, SentLayer, StepWork};
use super::{t, Layer, Net};
use grader_engine::check::gpu::{
    counts_missing, emulator_reported, error_result, first_line, timer_result,
};
use grader_engine::check::{outcome_of, timed, unexpected, GradeContext};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_engine::supervisor::SupervisorError;
use grader_worker::protocol::{LabOutcome, Matrix, Outcome};
use ndarray::Array2;

/// Grades a `gpu-transfer`, `gpu-loader` or `gpu-epoch` item.
pub fn grade(ctx: &GradeContext, item: &Item, kind: &Kind) -> Result<ItemResult, SupervisorError> {
    let GpuSent { sent, diverged } = match outcome_of(ctx, item, &ctx.order(item))? {
        Err(failed) => return Ok(failed),
        Ok((Outcome::Lab(value), _)) => read_sent(item, value)?,
        Ok((Outcome::Failed(e), notes)) => {
            return match kind {
                Kind::GpuTrainOn(s) => charged_once(ctx, item, s, &e, &notes),
                _ => Ok(error_result(item, usize::MAX, &e, &notes)),
            }
        }
        Ok((other, _)) => return Err(unexpected(item, &other)),
    };
    let judge = Judge {
        seed: ctx.seed,
        item,
    };
    let mut untraced = false;
    // Only the emulator replays (a real GPU's tracer counts the work, and replays nothing).
    let emulated = ctx.backend == grader_worker::protocol::Backend::Emulated;
    let verdict = match (kind, sent) {
        (Kind::GpuTransfer, SentGpu::Transfer(sent)) => transfer(&judge, &sent),
        (Kind::GpuLoader(c), SentGpu::Batches(sent)) => loader(&judge, &c.cases, &sent),
        (Kind::GpuEpoch(s), SentGpu::Epoch { loss, layers, work }) => {
            if work.is_none() && ctx.counted {
                return Ok(counts_missing(item));
            }
            untraced = work.is_none();
            // What the counted device work must show: the step on the GPU.
            if let Some(failed) = work.as_ref().and_then(|w| off_device(item, s, w)) {
                return Ok(failed);
            }
            let verdict = judge.gpu_epoch(s, f32::from_bits(loss), &layers, diverged.as_ref());
            match after_replay(&judge, s, work.as_ref().filter(|_| emulated), verdict) {
                Ok(verdict) => verdict,
                Err(failed) => return Ok(*failed),
            }
        }
        (
            Kind::GpuTrainOn(s),
            SentGpu::TrainOn {
                loss,
                layers,
                work,
                direct,
            },
        ) => {
            if work.is_none() && ctx.counted {
                return Ok(counts_missing(item));
            }
            untraced = work.is_none();
            // The branch trains on the GPU at all, and copies back; then it must give what
            // `train_epoch_gpu` gives from the same start (its kernels are graded by the GPU
            // epoch items, not again here).
            if let Some(failed) = work.as_ref().and_then(|w| not_through_the_gpu(item, s, w)) {
                return Ok(failed);
            }
            let verdict = match &direct {
                Some((direct_loss, direct_layers)) => judge.train_on_gpu(
                    s,
                    (f32::from_bits(loss), &layers),
                    (f32::from_bits(*direct_loss), direct_layers),
                ),
                None => judge.gpu_epoch(s, f32::from_bits(loss), &layers, None),
            };
            // The replay is read against the reference: only where the student's own GPU
            // epoch follows it (asked once the branch passed, on the emulator). Kernels that
            // train wrong are charged by the GPU epoch items; a branch that gives what they
            // give cannot be held against the reference.
            let kernels_right = || {
                direct.as_ref().is_none_or(|(direct_loss, direct_layers)| {
                    let own = judge.gpu_epoch(s, f32::from_bits(*direct_loss), direct_layers, None);
                    matches!(own, Ok(Ok(_)))
                })
            };
            let replayed = work
                .as_ref()
                .filter(|_| emulated && matches!(verdict, Ok(Ok(_))) && kernels_right());
            match after_replay(&judge, s, replayed, verdict) {
                Ok(verdict) => verdict,
                Err(failed) => return Ok(*failed),
            }
        }
        _ => return Err(bad(item, "its results do not fit the item's kind")),
    }?;
    let mut graded = result(item, verdict);
    if untraced && graded.score > 0.0 && ctx.backend == grader_worker::protocol::Backend::Real {
        graded.details.push_str(&t!("untraced-note"));
    }
    Ok(graded)
}

/// `verdict` on an epoch whose device work the emulator counted (`work`: `None` elsewhere),
/// read against the epoch's replay once its parameters passed ([`replayed`]): a replay that
/// did not follow the inputs fails the item; `Err`, the item failed closed, when the replay
/// is missing.
fn after_replay(
    judge: &Judge,
    s: &GpuSetup,
    work: Option<&StepWork>,
    verdict: Verdict,
) -> Result<Verdict, Box<ItemResult>> {
    let (Ok(Ok(_)), Some(work)) = (&verdict, work) else {
        return Ok(verdict);
    };
    match judge.replayed_epoch(s, work.replay.as_ref()) {
        replayed::Replayed::Followed => Ok(verdict),
        replayed::Replayed::Missing => Err(Box::new(counts_missing(judge.item))),
        replayed::Replayed::NotFromTheData(failed) => Ok(failed),
    }
}

/// A GPU item's report, as its worker sent it.
fn read_sent(item: &Item, value: LabOutcome) -> Result<GpuSent, SupervisorError> {
    value.read().map_err(|e| bad(item, &e.to_string()))
}

/// The tensors of a sent layer, named as the lesson names them.
fn tensors(layer: usize, l: &SentLayer) -> [(String, &Matrix); 4] {
    let n = layer + 1;
    [
        (format!("layer{n}.weight"), &l.weight),
        (format!("layer{n}.bias"), &l.bias),
        (format!("layer{n}.weight_grad"), &l.weight_grad),
        (format!("layer{n}.bias_grad"), &l.bias_grad),
    ]
}

/// The same four tensors of a grader's layer, as sent.
fn expected_tensors(l: &Layer) -> [Array2<f32>; 4] {
    let row = |v: &ndarray::Array1<f32>| v.clone().insert_axis(ndarray::Axis(0));
    [
        l.weight.clone(),
        row(&l.bias),
        l.weight_grad.clone(),
        row(&l.bias_grad),
    ]
}

/// The first element where `got` differs from `expected` bit for bit: its index and values.
fn first_difference(expected: &Array2<f32>, got: &Array2<f32>) -> Option<([usize; 2], f32, f32)> {
    expected
        .indexed_iter()
        .zip(got.iter())
        .find(|((_, e), g)| e.to_bits() != g.to_bits())
        .map(|(((i, j), e), g)| ([i, j], *e, *g))
}

fn transfer(judge: &Judge, sent: &[(Vec<SentLayer>, Option<u64>)]) -> Verdict {
    let item = judge.item;
    if sent.len() != 2 {
        return Err(bad(item, "a round trip sent other than two models"));
    }
    for (case, ((layers, not_copied_back), net)) in
        sent.iter().zip([Net::SimpleNn, Net::Mlp]).enumerate()
    {
        let model = ["SimpleNN", "Mlp"][case];
        let start = inputs::layers(judge.seed, item.id(), case, net, true);
        if layers.len() != 2 {
            return wrong(
                t!(
                    "transfer-layers-reason",
                    model = model,
                    count = layers.len()
                ),
                t!(
                    "transfer-layers-details",
                    model = model,
                    count = layers.len()
                ),
                &t!("transfer-layers-hint"),
            );
        }
        for (n, (got, expected)) in layers.iter().zip(&start).enumerate() {
            for ((name, got), expected) in
                tensors(n, got).into_iter().zip(expected_tensors(expected))
            {
                let got = got
                    .to_array()
                    .ok_or_else(|| bad(item, "a tensor's data does not match its shape"))?;
                if got.dim() != expected.dim() {
                    let (got, expected) =
                        (format!("{:?}", got.dim()), format!("{:?}", expected.dim()));
                    return wrong(
                        t!(
                            "transfer-shape-reason",
                            model = model,
                            name = name,
                            got = got,
                            expected = expected
                        ),
                        t!(
                            "transfer-shape-details",
                            model = model,
                            name = name,
                            got = got,
                            expected = expected
                        ),
                        &t!("transfer-shape-hint"),
                    );
                }
                if let Some((at, e, g)) = first_difference(&expected, &got) {
                    return wrong(
                        t!(
                            "transfer-value-reason",
                            model = model,
                            name = name,
                            i = at[0],
                            j = at[1],
                            got = g,
                            expected = e
                        ),
                        t!(
                            "transfer-value-details",
                            model = model,
                            name = name,
                            i = at[0],
                            j = at[1],
                            got = g,
                            expected = e
                        ),
                        &if name.ends_with("_grad") {
                            t!("transfer-grad-hint")
                        } else {
                            t!("transfer-value-hint")
                        },
                    );
                }
            }
        }
        if let Some(missing) = not_copied_back.filter(|&m| m > 0) {
            return wrong(
                t!("transfer-not-back-reason", model = model, missing = missing),
                t!(
                    "transfer-not-back-details",
                    model = model,
                    missing = missing
                ),
                &t!("transfer-not-back-hint"),
            );
        }
    }
    Ok(Ok(t!("transfer-right")))
}

fn loader(judge: &Judge, cases: &[[usize; 2]], sent: &[Vec<(Matrix, Vec<i32>)>]) -> Verdict {
    let item = judge.item;
    for (case, (&[examples, batch_size], batches)) in cases.iter().zip(sent).enumerate() {
        let on = item.spec.describe_case(case).unwrap_or_default();
        let (x, labels, order) = loader_case(judge.seed, item.id(), case, examples, batch_size);
        if batches.len() != order.len() {
            let (got, expected) = (batches.len(), order.len());
            return wrong(
                t!(
                    "loader-count-reason",
                    got = got,
                    expected = expected,
                    case = on
                ),
                t!(
                    "loader-count-details",
                    got = got,
                    expected = expected,
                    case = on
                ),
                &t!("loader-count-hint"),
            );
        }
        for (b, ((rows, got_labels), indices)) in batches.iter().zip(&order).enumerate() {
            let rows = rows
                .to_array()
                .ok_or_else(|| bad(item, "a batch's data does not match its shape"))?;
            if rows.dim() != (indices.len(), x.ncols()) {
                return wrong(
                    t!(
                        "loader-shape-reason",
                        batch = b + 1,
                        got = format!("{:?}", rows.dim()),
                        expected = format!("{:?}", (indices.len(), x.ncols())),
                        case = on
                    ),
                    t!(
                        "loader-shape-details",
                        batch = b + 1,
                        case = on,
                        rows = rows.nrows(),
                        cols = rows.ncols(),
                        examples = indices.len(),
                        inputs = x.ncols()
                    ),
                    &t!("loader-shape-hint"),
                );
            }
            for (r, &index) in indices.iter().enumerate() {
                if rows.row(r) != x.row(index) {
                    return wrong(
                        t!(
                            "loader-row-reason",
                            batch = b + 1,
                            row = r + 1,
                            index = index,
                            case = on
                        ),
                        t!(
                            "loader-row-details",
                            batch = b + 1,
                            row = r + 1,
                            index = index,
                            case = on
                        ),
                        &t!("loader-row-hint"),
                    );
                }
            }
            let expected: Vec<i32> = indices.iter().map(|&i| labels[i] as i32).collect();
            if got_labels != &expected {
                let r = got_labels
                    .iter()
                    .zip(&expected)
                    .position(|(g, e)| g != e)
                    .unwrap_or(got_labels.len().min(expected.len()));
                return wrong(
                    t!(
                        "loader-labels-reason",
                        batch = b + 1,
                        row = r + 1,
                        case = on
                    ),
                    t!(
                        "loader-labels-details",
                        batch = b + 1,
                        row = r + 1,
                        case = on,
                        expected = format!("{:?}", expected.get(r)),
                        got = format!("{:?}", got_labels.get(r))
                    ),
                    &t!("loader-labels-hint"),
                );
            }
        }
    }
    if sent.len() != cases.len() {
        return Err(bad(item, "the loader sent other than one result per case"));
    }
    Ok(Ok(t!("loader-right", cases = cases.len())))
}

/// A GPU epoch whose device work shows it did not train on the device: no products through
/// cuBLAS, no kernels, parameters shuttled through the host, or parameters computed there.
fn off_device(item: &Item, s: &GpuSetup, w: &StepWork) -> Option<ItemResult> {
    let batches = s.examples.div_ceil(s.batch_size) as u64;
    let fail = |reason: String, what: String, hint: &str| {
        Some(failed_with_hint(
            item,
            reason,
            t!("on-device-details", function = item.function, what = what),
            hint,
        ))
    };
    let host = t!("on-device-hint");
    let host = host.as_str();
    // What an epoch may move: its batches (rows, labels, indices) up, and a loss back per
    // batch at most; the parameters stay on the GPU.
    let features = inputs::shapes(s.model)[0].0;
    let batch_bytes = (s.examples * (features + 2) * 4) as u64;
    let (up_slack, back_slack) = (1024 + 256 * batches, 1024 + 64 * batches);
    if w.copied_back > back_slack || w.uploaded > batch_bytes + up_slack {
        return fail(
            t!("moved-reason"),
            t!(
                "moved-details",
                batches = batches,
                uploaded = w.uploaded,
                copied_back = w.copied_back,
                batch_bytes = batch_bytes
            ),
            host,
        );
    }
    if w.changed > 0 && w.changed_uploaded.saturating_mul(2) >= w.changed {
        return fail(
            t!("host-computed-reason"),
            t!(
                "host-computed-details",
                uploaded = w.changed_uploaded,
                changed = w.changed
            ),
            host,
        );
    }
    if w.not_copied_back > 0 {
        return fail(
            t!("not-back-reason", missing = w.not_copied_back),
            t!("epoch-not-back-details", missing = w.not_copied_back),
            &t!("epoch-not-back-hint"),
        );
    }
    if w.blas_calls < batches {
        return fail(
            t!("few-blas-reason", blas = w.blas_calls, batches = batches),
            t!(
                "few-blas-details",
                batches = batches,
                blas = w.blas_calls,
                launches = w.launches
            ),
            host,
        );
    }
    if w.launches < batches {
        return fail(
            t!(
                "few-launches-reason",
                launches = w.launches,
                batches = batches
            ),
            t!(
                "few-launches-details",
                batches = batches,
                launches = w.launches
            ),
            host,
        );
    }
    None
}

/// `train_on`'s GPU branch, failed when it did not train on the GPU (too few cuBLAS calls or
/// launches for its batches: the CPU epoch run instead) or gave back parameters that never
/// came back from the GPU.
fn not_through_the_gpu(item: &Item, s: &GpuSetup, w: &StepWork) -> Option<ItemResult> {
    let batches = s.examples.div_ceil(s.batch_size) as u64;
    if w.blas_calls < batches || w.launches < batches {
        let (blas, launches) = (w.blas_calls, w.launches);
        return Some(failed_with_hint(
            item,
            t!(
                "branch-not-gpu-reason",
                blas = blas,
                launches = launches,
                batches = batches
            ),
            t!(
                "branch-not-gpu-details",
                batches = batches,
                blas = blas,
                launches = launches
            ),
            &t!("branch-not-gpu-hint"),
        ));
    }
    if w.not_copied_back > 0 {
        return Some(failed_with_hint(
            item,
            t!("not-back-reason", missing = w.not_copied_back),
            t!("branch-not-back-details", missing = w.not_copied_back),
            &t!("branch-not-back-hint"),
        ));
    }
    None
}

/// A failed item whose feedback is `details`, then the hint on a line of its own.
fn failed_with_hint(item: &Item, reason: String, mut details: String, hint: &str) -> ItemResult {
    details.push('\n');
    details.push_str(&grader_worker::tr!(
        grader_engine::i18n::MESSAGES,
        "hint-line",
        hint = hint
    ));
    ItemResult::failed(item, reason, details)
}

/// The synchronization check of `time_gpu_epoch`, and the epoch it timed: each timed call
/// started from the grader's parameters, so each must return the reference's mean loss.
pub fn timer(ctx: &GradeContext, item: &Item, s: &GpuSetup) -> Result<ItemResult, SupervisorError> {
    let (sent, notes, brackets) = match timed::bracketed(ctx, item, &ctx.order(item))? {
        Err(failed) => return Ok(failed),
        Ok((Outcome::Lab(value), notes, brackets)) => {
            (read_sent(item, value)?.sent, notes, brackets)
        }
        Ok((Outcome::Failed(e), notes, _)) => return charged_once(ctx, item, s, &e, &notes),
        Ok((other, _, _)) => return Err(unexpected(item, &other)),
    };
    let SentGpu::Timer {
        samples,
        losses,
        queued_ms,
        examples,
        direct,
    } = sent
    else {
        return Err(bad(item, "its results do not fit the item's kind"));
    };
    if brackets.len() != samples.len() || losses.len() != samples.len() || samples.is_empty() {
        return Err(bad(item, "the timed calls and their marks do not match"));
    }
    let mut setup = s.as_setup();
    setup.examples = examples;
    let (expected, _) = ReferenceEpoch::new(ctx.seed, item.id(), &setup).run(&setup, None);
    // A timer that returns what the student's own `train_epoch_gpu` returns on the same epoch
    // (one that trains) runs that epoch: a mistake in the epoch is the GPU epoch items' to
    // charge.
    let own_epoch = direct
        .filter(|&(_, moved)| moved)
        .map(|(bits, _)| f32::from_bits(bits))
        .filter(|l| l.is_finite() && *l != 0.0);
    for loss in losses.iter().map(|&b| f32::from_bits(b)) {
        let as_own = own_epoch.is_some_and(|own| {
            (f64::from(loss) - f64::from(own)).abs() <= 1e-3 * f64::from(own).abs() + 1e-5
        });
        if !as_own && (f64::from(loss) - expected).abs() > 1e-3 * expected.abs() + 1e-5 {
            let mut details = t!(
                "timer-loss-details",
                function = item.function,
                loss = loss,
                examples = examples,
                expected = format!("{expected:.6}")
            );
            if !notes.is_empty() {
                details.push('\n');
                details.push_str(&emulator_reported(&notes));
            }
            return Ok(ItemResult::failed(
                item,
                t!(
                    "timer-loss-reason",
                    loss = loss,
                    expected = format!("{expected:.5}")
                ),
                details,
            ));
        }
    }
    Ok(timer_result(
        item,
        &samples,
        &brackets,
        queued_ms,
        (&t!("timer-work"), &t!("timer-size", examples = examples)),
    ))
}

/// The result of an item that runs the student's GPU epoch (`time_gpu_epoch`, `train_on`'s
/// GPU branch) and failed with a GPU error `e`: when the student's own `train_epoch_gpu`,
/// alone in a fresh worker (a faulting kernel leaves a context broken), fails on the GPU too,
/// the fault is the epoch's, which the GPU epoch items charge; this item cannot be judged
/// until the epoch runs and does not charge it again. Otherwise the error is this item's.
fn charged_once(
    ctx: &GradeContext,
    item: &Item,
    s: &GpuSetup,
    e: &str,
    notes: &str,
) -> Result<ItemResult, SupervisorError> {
    let mut order = ctx.order(item);
    order.kind = "gpu-epoch".into();
    order.function = "train_epoch_gpu".into();
    order.task =
        serde_json::to_value(Kind::GpuEpoch(s.clone())).map_err(|e| bad(item, &e.to_string()))?;
    match outcome_of(ctx, item, &order)? {
        Ok((Outcome::Failed(own), _)) => Ok(ItemResult::passed(
            item,
            t!("epoch-fails-reason"),
            t!(
                "epoch-fails-details",
                function = item.function,
                error = first_line(e),
                own = first_line(&own)
            ),
        )),
        _ => Ok(error_result(item, usize::MAX, e, notes)),
    }
}

/// One worker's timed epochs: their losses and the supervisor's bracket of each (ns).
type Timed = (Vec<f32>, Vec<u64>);

/// Runs `order`'s worker through its timed epochs.
fn timed_epochs(
    ctx: &GradeContext,
    item: &Item,
    order: &grader_worker::protocol::WorkOrder,
    samples: usize,
) -> Result<Result<Timed, ItemResult>, SupervisorError> {
    match timed::bracketed(ctx, item, order)? {
        Err(failed) => Ok(Err(failed)),
        Ok((Outcome::Lab(value), _, brackets)) => match read_sent(item, value)?.sent {
            SentGpu::Speed(losses) if losses.len() == samples && brackets.len() == samples => Ok(
                Ok((losses.into_iter().map(f32::from_bits).collect(), brackets)),
            ),
            _ => Err(bad(item, "the timed epochs and their marks do not match")),
        },
        Ok((Outcome::Failed(e), notes, _)) => Ok(Err(error_result(item, usize::MAX, &e, &notes))),
        Ok((other, _, _)) => Err(unexpected(item, &other)),
    }
}

/// The GPU speedup on a real GPU (elsewhere the rubric's policy decides, before this runs):
/// the grader's CPU epoch in the yardstick worker, then the student's GPU epoch from the same
/// start, each timed by the supervisor's clock; every timed GPU epoch must end with the CPU
/// epoch's loss. The speedup is the median of the paired ratios.
pub fn speedup(
    ctx: &GradeContext,
    item: &Item,
    s: &GpuSpeed,
) -> Result<ItemResult, SupervisorError> {
    let mut yard = ctx.order(item);
    yard.yardstick = true;
    yard.backend = grader_worker::protocol::Backend::NoGpu;
    let (base_losses, base_ns) = match timed_epochs(ctx, item, &yard, s.samples)? {
        Ok(timed) => timed,
        Err(failed) => return Err(grader_engine::check::baseline_failed(item, &failed)),
    };
    let (losses, gpu_ns) = match timed_epochs(ctx, item, &ctx.order(item), s.samples)? {
        Ok(timed) => timed,
        Err(failed) => return Ok(failed),
    };
    let expected = base_losses.first().copied().unwrap_or(f32::NAN);
    if let Some(loss) = losses
        .iter()
        .find(|l| (*l - expected).abs() > 1e-3 * expected.abs() + 1e-5 || !l.is_finite())
    {
        return Ok(ItemResult::failed(
            item,
            t!("speed-wrong-reason"),
            t!(
                "speed-wrong-details",
                function = item.function,
                hidden = s.hidden,
                loss = loss,
                expected = format!("{expected:.6}")
            ),
        ));
    }
    let ratios = grader_engine::check::speedup::ratios(&base_ns, &gpu_ns);
    let grader_engine::check::speedup::Decision::Decided {
        speedup, points, ..
    } = grader_engine::check::speedup::decide(&ratios, &s.tiers, false)
    else {
        return Err(bad(item, "the speedup could not be decided"));
    };
    let shown = grader_engine::check::speedup::shown(speedup);
    let mut result = ItemResult::passed(
        item,
        t!("speedup-reason", speedup = shown),
        t!(
            "speedup-details",
            hidden = s.hidden,
            examples = s.examples,
            batch = s.batch_size,
            function = item.function,
            speedup = shown,
            samples = s.samples
        ),
    );
    result.set_score(points);
    result.speedup = Some(speedup);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grader_engine::rubric::{ItemSpec, Needs};

    pub(super) fn item(setup: &GpuSetup) -> Item {
        let spec: ItemSpec = std::sync::Arc::new(Kind::GpuEpoch(setup.clone()));
        assert_eq!(spec.needs(), Needs::Gpu);
        Item {
            id: "gpu_epoch".into(),
            title: "gpu epoch".into(),
            kind: "gpu-epoch".into(),
            function: "train_epoch_gpu".into(),
            points: 2.0,
            timeout_secs: 60.0,
            forbid: Vec::new(),
            require: Vec::new(),
            spec,
        }
    }

    /// What the solution's epoch of 2000 digits in batches of 64 does on the emulator.
    fn honest() -> StepWork {
        StepWork {
            launches: 32 * 9,
            blas_calls: 32 * 5,
            uploaded: 0,
            copied_back: 4,
            changed: 101_770,
            changed_uploaded: 0,
            not_copied_back: 0,
            replay: None,
        }
    }

    pub(super) fn setup() -> GpuSetup {
        GpuSetup {
            model: Net::Mlp,
            lr: 0.01,
            examples: 2000,
            batch_size: 64,
            hidden: None,
        }
    }

    fn reason(w: &StepWork) -> Option<String> {
        let s = setup();
        off_device(&item(&s), &s, w).map(|r| r.reason)
    }

    #[test]
    fn an_honest_epoch_passes_and_each_shortcut_is_named() {
        assert_eq!(reason(&honest()), None);
        // A loader that uploads every batch as it goes is fine too.
        let per_batch = StepWork {
            uploaded: 2000 * 786 * 4,
            ..honest()
        };
        assert_eq!(reason(&per_batch), None);
        let cases = [
            (
                StepWork {
                    blas_calls: 0,
                    ..honest()
                },
                "0 cuBLAS calls",
            ),
            (
                StepWork {
                    launches: 3,
                    ..honest()
                },
                "3 kernel launches",
            ),
            (
                StepWork {
                    copied_back: 32 * 407_080,
                    ..honest()
                },
                "moved between host and GPU",
            ),
            (
                StepWork {
                    changed_uploaded: 90_000,
                    ..honest()
                },
                "computed on the host",
            ),
            (
                StepWork {
                    not_copied_back: 7,
                    ..honest()
                },
                "never came back",
            ),
        ];
        for (work, says) in cases {
            let got = reason(&work).unwrap_or_default();
            assert!(got.contains(says), "{got:?} should say {says:?}");
        }
    }
}
