//! The GPU epoch's verdict: the same f64 reference trajectory as the CPU epoch, with feedback
//! about the student's kernels, not the loop. On the GPU the student's step is the model, so
//! the feedback names what the grader measured on the device: which weight or bias moved
//! wrong, by how much, and (where the student's CPU epoch runs) the first batch where the GPU
//! parted from it, measured again there against the reference's step from the same
//! parameters.

use super::super::gpu::{epoch_inputs, Diverged};
use super::super::judge::{
    loss_scale, percent, reference_model, targets, wrong, Judge, LossScale, Verdict, GPU_TRAJECTORY,
};
use super::super::kinds::{GpuSetup, SentLayer};
use super::super::reference::{self as r, Optimizer};
use super::super::trajectory::{self, Parameters, TensorStep};
use super::super::{inputs, t, Layers};

/// A tensor's step within this share of the reference's is the reference's step.
const SAME_STEP: f64 = 0.05;

/// How a GPU step is off, as the feedback says it.
struct Measured {
    /// The tensor that ended farthest off the reference.
    worst: TensorStep,
    /// What the measure is of ("one epoch", "batch 3 of 33 alone").
    over: String,
    /// The hint.
    hint: String,
    /// The table's line, where the measure names the mistake (else the worst tensor's).
    reason: Option<String>,
}

impl Judge<'_> {
    /// `gpu-epoch`: the epoch against the reference trajectory; when it leaves it, what the
    /// grader measured on the device, with a hint about the kernels.
    pub(in super::super) fn gpu_epoch(
        &self,
        s: &GpuSetup,
        loss: f32,
        sent: &[SentLayer],
        diverged: Option<&Diverged>,
    ) -> Verdict {
        let function = &self.item.function;
        let epoch = epoch_inputs(self.seed, self.id(), s);
        let got = self.layers(sent)?;
        let batches = epoch.order.len();
        let finite = loss.is_finite()
            && got
                .iter()
                .all(|l| l.weight.iter().chain(&l.bias).all(|v| v.is_finite()));
        if !finite {
            return wrong(
                t!("gpu-epoch-nan-reason"),
                t!("gpu-epoch-nan-details", function = function, loss = loss),
                &t!("gpu-epoch-nan-hint"),
            );
        }
        let mut model = reference_model(s.model, &epoch.layers);
        let mut opt = Optimizer::Sgd(r::Sgd {
            lr: f64::from(s.lr),
        });
        let all = targets(s.model, &epoch.set.labels);
        let expected_loss = r::train_epoch(
            &mut model,
            &mut opt,
            &epoch.set.inputs,
            &all,
            &epoch.order,
            None,
        );
        let parameters: Vec<Parameters> = got
            .iter()
            .map(|l| (l.weight.view(), l.bias.view()))
            .collect();
        let off = trajectory::distance(&model, &epoch.layers, &parameters);
        let loss_ok = (f64::from(loss) - expected_loss).abs() <= 1e-3 * expected_loss.abs() + 1e-5;
        if off.within(GPU_TRAJECTORY) {
            if loss_ok {
                return Ok(Ok(t!(
                    "epoch-right",
                    batches = batches,
                    within = percent(off.typical),
                    loss = format!("{loss:.5}")
                )));
            }
            let (ratio, scale) = loss_scale(loss, expected_loss, batches, s.batch_size);
            let hint = match scale {
                LossScale::Summed => t!("gpu-loss-summed-hint"),
                LossScale::PerExample => t!("gpu-loss-per-row-hint"),
                LossScale::Other => t!("gpu-loss-hint"),
            };
            return wrong(
                t!("mean-loss-reason", ratio = format!("{ratio:.3}")),
                t!(
                    "gpu-loss-details",
                    function = function,
                    loss = loss,
                    expected = format!("{expected_loss:.6}"),
                    ratio = format!("{ratio:.3}")
                ),
                &hint,
            );
        }
        let measured = diverged
            .and_then(|d| self.at_divergence(s, &epoch, d))
            .or_else(|| whole_epoch(&model, &epoch.layers, &got))
            .map(|m| {
                let (name, scale) = (m.worst.name.clone(), format!("{:.3}", m.worst.scale));
                let line = t!(
                    "gpu-measured",
                    over = m.over,
                    name = name,
                    off = percent(m.worst.off),
                    scale = scale
                );
                let reason = m
                    .reason
                    .unwrap_or_else(|| t!("gpu-epoch-off-reason", name = name));
                (reason, line, m.hint)
            });
        let (reason, line, hint) = measured.unwrap_or_else(|| {
            (
                t!("gpu-epoch-off-reason", name = t!("gpu-some-parameter")),
                String::new(),
                t!("gpu-epoch-off-hint"),
            )
        });
        wrong(
            reason,
            t!(
                "gpu-epoch-off-details",
                function = function,
                typical = percent(off.typical),
                all = percent(off.all),
                measured = line
            ),
            &hint,
        )
    }

    /// The GPU's step on the batch where it first parted from the student's CPU epoch,
    /// against the reference's step on that batch alone from the same parameters; `None`
    /// when the GPU's step is the reference's (the CPU epoch was the one off) or the report
    /// does not fit.
    fn at_divergence(&self, s: &GpuSetup, epoch: &inputs::Epoch, d: &Diverged) -> Option<Measured> {
        let indices = epoch.order.get(d.batch)?;
        let (before, after) = (self.layers(&d.before).ok()?, self.layers(&d.after).ok()?);
        // The reference zeroes the gradients first: those sent before the batch do not count.
        let mut model = reference_model(s.model, &before);
        let mut opt = Optimizer::Sgd(r::Sgd {
            lr: f64::from(s.lr),
        });
        let all = targets(s.model, &epoch.set.labels);
        let order = std::slice::from_ref(indices);
        r::train_epoch(&mut model, &mut opt, &epoch.set.inputs, &all, order, None);
        let steps = trajectory::tensor_steps(&model, &before, &after);
        let worst = worst(&steps)?;
        if worst.off <= SAME_STEP {
            return None;
        }
        let rows = indices.len() as f64;
        let scaled_by = |n: f64| {
            n > 1.0
                && steps
                    .iter()
                    .all(|t| (t.scale / n - 1.0).abs() < 0.1 && t.off.is_finite())
        };
        let (reason, hint) = if scaled_by(rows) {
            (
                Some(t!("gpu-per-row-reason", rows = indices.len())),
                t!("gpu-hint-per-row", rows = indices.len()),
            )
        } else if d.batch > 0 {
            (
                Some(t!("gpu-left-over-reason", batch = d.batch + 1)),
                t!("gpu-hint-left-over", batch = d.batch + 1),
            )
        } else {
            (None, tensor_hint(&worst.name))
        };
        Some(Measured {
            over: t!(
                "gpu-over-batch",
                batch = d.batch + 1,
                batches = epoch.order.len()
            ),
            worst,
            hint,
            reason,
        })
    }
}

/// The whole epoch's tensors against the reference's, where nothing narrower was measured.
fn whole_epoch(reference: &r::TwoLayer, start: &Layers, got: &Layers) -> Option<Measured> {
    let steps = trajectory::tensor_steps(reference, start, got);
    let worst = worst(&steps)?;
    Some(Measured {
        hint: tensor_hint(&worst.name),
        over: t!("gpu-over-epoch"),
        worst,
        reason: None,
    })
}

/// The tensor farthest off.
fn worst(steps: &[TensorStep]) -> Option<TensorStep> {
    steps.iter().max_by(|a, b| a.off.total_cmp(&b.off)).cloned()
}

/// The hint for a weight or a bias that moved wrong.
fn tensor_hint(name: &str) -> String {
    if name.ends_with("bias") {
        t!("gpu-hint-bias", name = name)
    } else {
        t!("gpu-hint-weight", name = name)
    }
}
