//! Judging the training lab's GPU items: the model's round trip, the device loader's batches,
//! one GPU epoch (against the same f64 reference trajectory as the CPU epoch, and with proof
//! of device work where the backend can give it) and the synchronization check of the epoch
//! timer.

use super::gpu::loader_case;
use super::inputs;
use super::judge::{bad, result, wrong, Judge, ReferenceEpoch, Verdict};
use super::kinds::{GpuSetup, GpuSpeed, Kind, SentGpu, SentLayer, StepWork};
use super::{Layer, Net};
use grader_engine::check::gpu::{error_result, timer_result};
use grader_engine::check::{outcome_of, timed, unexpected, GradeContext};
use grader_engine::protocol::{Matrix, Outcome};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_engine::supervisor::SupervisorError;
use ndarray::Array2;

/// Grades a `gpu-transfer`, `gpu-loader` or `gpu-epoch` item.
pub fn grade(ctx: &GradeContext, item: &Item, kind: &Kind) -> Result<ItemResult, SupervisorError> {
    let sent = match outcome_of(ctx, item, &ctx.order(item))? {
        Err(failed) => return Ok(failed),
        Ok((Outcome::Lab(value), _)) => read_sent(item, value)?,
        Ok((Outcome::Failed(e), notes)) => return Ok(error_result(item, usize::MAX, &e, &notes)),
        Ok((other, _)) => return Err(unexpected(item, &other)),
    };
    let judge = Judge {
        seed: ctx.seed,
        item,
    };
    let mut untraced = false;
    // Against the f64 reference trajectory, as the CPU epoch.
    let reference = |s: &GpuSetup, loss: u32, layers: &[SentLayer]| {
        judge.epoch(
            &s.as_setup(),
            f32::from_bits(loss),
            layers,
            None,
            super::judge::GPU_TRAJECTORY,
        )
    };
    let verdict = match (kind, sent) {
        (Kind::GpuTransfer, SentGpu::Transfer(sent)) => transfer(&judge, &sent),
        (Kind::GpuLoader(c), SentGpu::Batches(sent)) => loader(&judge, &c.cases, &sent),
        (Kind::GpuEpoch(s), SentGpu::Epoch { loss, layers, work }) => {
            untraced = work.is_none();
            // What the counted device work must show: the step on the GPU.
            match work.as_ref().and_then(|w| off_device(item, s, w)) {
                Some(failed) => return Ok(failed),
                None => reference(s, loss, &layers),
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
            untraced = work.is_none();
            // The branch trains on the GPU at all, and copies back; then it must give what
            // `train_epoch_gpu` gives from the same start (its kernels are graded by the GPU
            // epoch items, not again here).
            if let Some(failed) = work.as_ref().and_then(|w| not_through_the_gpu(item, s, w)) {
                return Ok(failed);
            }
            match direct {
                Some((direct_loss, direct_layers)) => judge.train_on_gpu(
                    s,
                    (f32::from_bits(loss), &layers),
                    (f32::from_bits(direct_loss), &direct_layers),
                ),
                None => reference(s, loss, &layers),
            }
        }
        _ => return Err(bad(item, "its results do not fit the item's kind")),
    }?;
    let mut graded = result(item, verdict);
    if untraced && graded.score > 0.0 && ctx.backend == grader_engine::protocol::Backend::Real {
        graded.details.push_str(
            " (The grader could not trace this GPU's calls, so it did not count launches or \
             see where values came from; the emulator checks that too.)",
        );
    }
    Ok(graded)
}

/// A GPU item's report, as its worker sent it.
fn read_sent(item: &Item, value: serde_json::Value) -> Result<SentGpu, SupervisorError> {
    serde_json::from_value(value).map_err(|e| bad(item, &e.to_string()))
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
                format!("{model}: {} layers came back, expected 2", layers.len()),
                format!(
                    "`to_host` gave back {} layers of the {model}; it has two.",
                    layers.len()
                ),
                "copy both layers back, in order",
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
                    return wrong(
                        format!("{model}: {name} came back {:?}, expected {:?}", got.dim(), expected.dim()),
                        format!("After `GpuModel::to_device` and `to_host`, the {model}'s {name} has shape {:?}; it went to the GPU as {:?}.", got.dim(), expected.dim()),
                        "copy every tensor whole, and keep the layer's shape (outputs × inputs)",
                    );
                }
                if let Some((at, e, g)) = first_difference(&expected, &got) {
                    return wrong(
                        format!("{model}: {name} changed on the way: [{}, {}] is {g}, expected {e}", at[0], at[1]),
                        format!("After `GpuModel::to_device` and `to_host`, the {model}'s {name}[{}, {}] is {g}; it went to the GPU as {e}. A round trip must give back every value bit for bit.", at[0], at[1]),
                        if name.ends_with("_grad") {
                            "copy the gradients too (`model.to(device)` moves every tensor of the layer), both ways"
                        } else {
                            "copy each tensor to its own buffer and back in the same row-major order"
                        },
                    );
                }
            }
        }
        if let Some(missing) = not_copied_back.filter(|&m| m > 0) {
            return wrong(
                format!("{model}: {missing} values never came back from the GPU"),
                format!("`to_host` returned the {model}'s values, but {missing} of them were never copied back from the GPU: they come from a copy kept on the host."),
                "`to_host` must read each tensor back from the device (`stream.clone_dtoh(&slice)`), so that it returns what the GPU computed",
            );
        }
    }
    Ok(Ok(
        "SimpleNN and Mlp went to the GPU and came back bit for bit, read back from device memory"
            .into(),
    ))
}

fn loader(judge: &Judge, cases: &[[usize; 2]], sent: &[Vec<(Matrix, Vec<i32>)>]) -> Verdict {
    let item = judge.item;
    for (case, (&[examples, batch_size], batches)) in cases.iter().zip(sent).enumerate() {
        let on = item.spec.describe_case(case).unwrap_or_default();
        let (x, labels, order) = loader_case(judge.seed, item.id(), case, examples, batch_size);
        if batches.len() != order.len() {
            return wrong(
                format!("{} batches, expected {}{on}", batches.len(), order.len()),
                format!("The `DeviceDataLoader` yielded {} batches{on}; it was given {} (the grader's batch order).", batches.len(), order.len()),
                "yield one batch per list of indices, in the order given",
            );
        }
        for (b, ((rows, got_labels), indices)) in batches.iter().zip(&order).enumerate() {
            let rows = rows
                .to_array()
                .ok_or_else(|| bad(item, "a batch's data does not match its shape"))?;
            if rows.dim() != (indices.len(), x.ncols()) {
                return wrong(
                    format!("batch {} is {:?}, expected {:?}{on}", b + 1, rows.dim(), (indices.len(), x.ncols())),
                    format!("Batch {} of the `DeviceDataLoader`{on} holds {}×{} values; it has {} examples of {} inputs.", b + 1, rows.nrows(), rows.ncols(), indices.len(), x.ncols()),
                    "a batch's `x` is len × cols, row-major, and `len` is the number of indices in the batch",
                );
            }
            for (r, &index) in indices.iter().enumerate() {
                if rows.row(r) != x.row(index) {
                    return wrong(
                        format!("batch {}, row {} is not example {index}{on}", b + 1, r + 1),
                        format!("Row {} of batch {} of the `DeviceDataLoader`{on} should be example {index} of the dataset (the batch's index {}), but it holds other values.", r + 1, b + 1, r + 1),
                        "row r of a batch is the dataset's row `batch[r]`: gather rows by the batch's indices, in their order",
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
                    format!("batch {}: wrong labels from row {}{on}", b + 1, r + 1),
                    format!("The labels of batch {} of the `DeviceDataLoader`{on} differ from row {}: expected {:?}, got {:?}.", b + 1, r + 1, expected.get(r), got_labels.get(r)),
                    "gather the labels with the same indices as the rows",
                );
            }
        }
    }
    if sent.len() != cases.len() {
        return Err(bad(item, "the loader sent other than one result per case"));
    }
    Ok(Ok(format!(
        "every batch of {} cases arrived on the GPU with the right rows and labels",
        cases.len()
    )))
}

/// A GPU epoch whose device work shows it did not train on the device: no products through
/// cuBLAS, no kernels, parameters shuttled through the host, or parameters computed there.
fn off_device(item: &Item, s: &GpuSetup, w: &StepWork) -> Option<ItemResult> {
    let batches = s.examples.div_ceil(s.batch_size) as u64;
    let fail = |reason: String, what: String, hint: &str| {
        Some(ItemResult::failed(
            item,
            reason,
            format!("`{}`: {what}\nHint: {hint}.", item.function),
        ))
    };
    let host = "the step must run on the GPU: products with cuBLAS on the device buffers, everything else in your kernels, and nothing copied to or from the host inside `train_step`";
    // What an epoch may move: its batches (rows, labels, indices) up, and a loss back per
    // batch at most; the parameters stay on the GPU.
    let features = inputs::shapes(s.model)[0].0;
    let batch_bytes = (s.examples * (features + 2) * 4) as u64;
    let (up_slack, back_slack) = (1024 + 256 * batches, 1024 + 64 * batches);
    if w.copied_back > back_slack || w.uploaded > batch_bytes + up_slack {
        return fail(
            "parameters moved between host and GPU during the epoch".into(),
            format!("during one epoch of {batches} batches, {} bytes were copied to the GPU and {} bytes back to the host; the batches themselves are {batch_bytes} bytes, and nothing needs to come back but the loss. The parameters went through the host.", w.uploaded, w.copied_back),
            host,
        );
    }
    if w.changed > 0 && 2 * w.changed_uploaded >= w.changed {
        return fail(
            "parameters were computed on the host".into(),
            format!("{} of the {} parameters the epoch changed hold values that were copied up from the host during the epoch: they were computed on the CPU, not the GPU.", w.changed_uploaded, w.changed),
            host,
        );
    }
    if w.not_copied_back > 0 {
        return fail(
            format!("{} values never came back from the GPU", w.not_copied_back),
            format!("{} of the values `to_host` returned after the epoch were never copied back from the GPU: they come from a copy kept on the host.", w.not_copied_back),
            "train the parameters on the GPU and read them back with `stream.clone_dtoh`",
        );
    }
    if w.blas_calls < batches {
        return fail(
            format!("{} cuBLAS calls for {batches} batches", w.blas_calls),
            format!("one epoch of {batches} batches made {} cuBLAS calls and {} kernel launches. Each step's matrix products must go through cuBLAS (`blas.gemm`) on the GPU.", w.blas_calls, w.launches),
            host,
        );
    }
    if w.launches < batches {
        return fail(
            format!("{} kernel launches for {batches} batches", w.launches),
            format!("one epoch of {batches} batches launched {} kernels. The bias, activations, loss gradient and update belong in your own CUDA kernels.", w.launches),
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
        return Some(ItemResult::failed(
            item,
            format!("the GPU branch made {} cuBLAS calls and {} launches for {batches} batches", w.blas_calls, w.launches),
            format!("`train_on` with `Device::Gpu` trained {batches} batches with {} cuBLAS calls and {} kernel launches: it did not train on the GPU.\nHint: in the `Device::Gpu` branch, move the model and the data to the GPU and call `train_epoch_gpu` with a `DeviceDataLoader`.", w.blas_calls, w.launches),
        ));
    }
    if w.not_copied_back > 0 {
        return Some(ItemResult::failed(
            item,
            format!("{} values never came back from the GPU", w.not_copied_back),
            format!("After `train_on` with `Device::Gpu`, {} of the model's values were never copied back from the GPU: the model still holds the parameters from before the epoch.\nHint: end the GPU branch with `GpuModel::to_host` into `model`.", w.not_copied_back),
        ));
    }
    None
}

/// The synchronization check of `time_gpu_epoch`, and the epoch it timed: each timed call
/// started from the grader's parameters, so each must return the reference's mean loss.
pub fn timer(ctx: &GradeContext, item: &Item, s: &GpuSetup) -> Result<ItemResult, SupervisorError> {
    let (sent, notes, brackets) = match timed::bracketed(ctx, item, &ctx.order(item))? {
        Err(failed) => return Ok(failed),
        Ok((Outcome::Lab(value), notes, brackets)) => (read_sent(item, value)?, notes, brackets),
        Ok((Outcome::Failed(e), notes, _)) => {
            return Ok(error_result(item, usize::MAX, &e, &notes))
        }
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
            let mut details = format!(
                "`{}` returned a mean loss of {loss} for one epoch of {examples} examples from the grader's parameters; the epoch's mean loss is {expected:.6}. The timed epoch must train (and return its loss) like `train_epoch_gpu`.",
                item.function
            );
            if !notes.is_empty() {
                details.push_str(&format!("\nThe GPU emulator reported:\n{notes}"));
            }
            return Ok(ItemResult::failed(
                item,
                format!("the timed epoch's loss is {loss}, expected {expected:.5}"),
                details,
            ));
        }
    }
    Ok(timer_result(
        item,
        &samples,
        &brackets,
        queued_ms,
        ("your epoch", &format!("one epoch of {examples} examples")),
    ))
}

/// One worker's timed epochs: their losses and the supervisor's bracket of each (ns).
type Timed = (Vec<f32>, Vec<u64>);

/// Runs `order`'s worker through its timed epochs.
fn timed_epochs(
    ctx: &GradeContext,
    item: &Item,
    order: &grader_engine::protocol::WorkOrder,
    samples: usize,
) -> Result<Result<Timed, ItemResult>, SupervisorError> {
    match timed::bracketed(ctx, item, order)? {
        Err(failed) => Ok(Err(failed)),
        Ok((Outcome::Lab(value), _, brackets)) => match read_sent(item, value)? {
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
    yard.backend = grader_engine::protocol::Backend::NoGpu;
    let (base_losses, base_ns) = match timed_epochs(ctx, item, &yard, s.samples)? {
        Ok(timed) => timed,
        Err(failed) => return Ok(failed),
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
            "a timed epoch gave a wrong loss, so its speed does not count".into(),
            format!(
                "A timed epoch of `{}` on the 784→{}→10 MLP returned a mean loss of {loss}; the grader's CPU epoch from the same start gives {expected:.6}. Only a correct epoch earns speed points.",
                item.function, s.hidden
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
        format!("{shown}× the CPU"),
        format!(
            "One SGD epoch of the 784→{}→10 MLP on {} digits in batches of {} through `{}` (model and data already on the GPU) runs {shown}× as fast as the grader's CPU epoch (ndarray, one thread), median of {} paired samples timed by the grader's clock with the GPU drained before and after. If this is low, keep everything on the GPU between steps: no copies back, no synchronize inside the loop.",
            s.hidden, s.examples, s.batch_size, item.function, s.samples
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

    fn item(setup: &GpuSetup) -> Item {
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
        }
    }

    fn setup() -> GpuSetup {
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
