//! Judging a function that only wires other functions together by the same run written out.
//!
//! `train` is a loop over epochs (`batches`, then `train_epoch`), and `train_on`'s CPU branch
//! is `train_epoch` with `Sgd { lr }`. Graded against the reference, every mistake in
//! `batches`, `train_epoch` or `Sgd` would cost these items too. Instead the harness also runs
//! the student's own pieces, written out as the lab's documentation says, from the same start:
//! the item passes when the function gives what its pieces give (so it costs points only for
//! its own wiring), and only once those pieces do something (a stub that moves nothing and
//! returns no loss cannot show that the wiring works, nor earn its points). `train_on`'s GPU
//! branch is judged the same way against `train_epoch_gpu` run by the harness.

use super::inputs;
use super::judge::{bad, reference_model, wrong, Judge, Verdict, GPU_TRAJECTORY, TRAJECTORY};
use super::kinds::{GpuSetup, SentLayer, Training};
use super::reference as r;
use super::stand_in;
use super::trajectory::{self, Parameters, Tolerance};
use super::{t, Layer, Layers, Net};
use grader_engine::supervisor::SupervisorError;
use ndarray::{Array1, Array2};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// How a run compares with the same run written out.
enum Compared {
    /// The same (within the rounding of an f32 epoch).
    Same,
    /// The written-out run left the parameters where they started: its pieces do not train.
    PiecesIdle,
    /// Different: how far, as the feedback says it.
    Different(String),
}

/// Whether two f32 values are the same result: equal, both NaN, or within rounding.
fn same_value(a: f32, b: f32) -> bool {
    a == b
        || (a.is_nan() && b.is_nan())
        || (f64::from(a) - f64::from(b)).abs() <= 1e-3 * f64::from(b).abs() + 1e-5
}

/// Compares the layers `got` with `expected`, both trained from `start`, within `tolerance`
/// of how far `expected` moved. When `expected` did not move at all (a loop that steps before
/// its backward pass, with gradients zeroed first, moves nothing), `got` is the same only if it
/// did not move either and returned exactly the written-out run's losses, which are not all
/// zero: a function that skips the work cannot produce those.
fn compare(
    net: Net,
    start: &Layers,
    (expected, expected_losses): (&Layers, &[f32]),
    (got, got_losses): (&Layers, &[f32]),
    tolerance: Tolerance,
) -> Compared {
    let shapes = |l: &Layers| l.clone().map(|l| (l.weight.dim(), l.bias.len()));
    if shapes(got) != shapes(expected) {
        return Compared::Different(t!("same-run-shapes"));
    }
    let unmoved = expected
        .iter()
        .zip(start)
        .all(|(e, s)| e.weight == s.weight && e.bias == s.bias);
    if unmoved {
        let got_unmoved = got
            .iter()
            .zip(start)
            .all(|(g, s)| g.weight == s.weight && g.bias == s.bias);
        let same_losses = expected_losses.len() == got_losses.len()
            && expected_losses
                .iter()
                .zip(got_losses)
                .all(|(e, g)| e.to_bits() == g.to_bits())
            && expected_losses.iter().any(|l| l.is_finite() && *l != 0.0);
        return if got_unmoved && same_losses {
            Compared::Same
        } else {
            Compared::PiecesIdle
        };
    }
    let finite = expected
        .iter()
        .all(|l| l.weight.iter().chain(&l.bias).all(|v| v.is_finite()));
    if !finite {
        // Nothing to measure a distance on: the same run must give the same values.
        let same = expected.iter().zip(got).all(|(e, g)| {
            e.weight
                .iter()
                .chain(&e.bias)
                .zip(g.weight.iter().chain(&g.bias))
                .all(|(&e, &g)| same_value(g, e))
        });
        return if same {
            Compared::Same
        } else {
            Compared::Different(t!("same-run-differ"))
        };
    }
    let reference = reference_model(net, expected);
    let parameters: Vec<Parameters> = got
        .iter()
        .map(|l| (l.weight.view(), l.bias.view()))
        .collect();
    let off = trajectory::distance(&reference, start, &parameters);
    if off.within(tolerance) {
        Compared::Same
    } else {
        Compared::Different(t!(
            "same-run-distance",
            distance = super::judge::percent(off.typical)
        ))
    }
}

/// How a branch of `train_on` is judged and spoken of.
struct Branch {
    /// The call, as the feedback names it.
    call: &'static str,
    /// What the harness ran instead, with its verb ("… gives").
    path: String,
    /// The pieces the branch needs to train.
    pieces: String,
    /// What to make pass first when they do not.
    first: String,
    /// The table's line when the branch trains otherwise.
    reason: String,
    /// The hint then.
    hint: String,
    /// The function whose loss the branch returns.
    returns: &'static str,
    /// Where the epoch ran ("on the CPU").
    place: String,
    /// How close the branch must stay to the harness's run.
    tolerance: Tolerance,
}

impl Judge<'_> {
    /// Sent layers as the grader's, or the grader's own failure when they do not unpack.
    pub(super) fn layers(&self, sent: &[SentLayer]) -> Result<Layers, SupervisorError> {
        let unpack = |l: &SentLayer| -> Result<Layer, SupervisorError> {
            let m = |m: &grader_worker::protocol::Matrix| {
                m.to_array()
                    .ok_or_else(|| bad(self.item, "a tensor's data does not match its shape"))
            };
            let (weight, bias) = (m(&l.weight)?, m(&l.bias)?);
            let bias: Array1<f32> = bias.iter().copied().collect();
            Ok(Layer {
                weight_grad: Array2::zeros(weight.raw_dim()),
                bias_grad: Array1::zeros(bias.len()),
                weight,
                bias,
            })
        };
        match sent {
            [first, second] => Ok([unpack(first)?, unpack(second)?]),
            _ => Err(bad(
                self.item,
                "a model came back with other than two layers",
            )),
        }
    }

    /// `cpu-fallback`: `train_on(&Device::Cpu, ..)` against `train_epoch` with `Sgd { lr }`
    /// from the same start.
    pub(super) fn fallback(
        &self,
        s: &GpuSetup,
        got: (f32, &[SentLayer]),
        direct: (f32, &[SentLayer]),
    ) -> Verdict {
        let branch = Branch {
            call: "train_on(&Device::Cpu, …)",
            path: t!("fallback-path", lr = s.lr),
            pieces: t!("fallback-pieces"),
            first: t!("fallback-first"),
            reason: t!("fallback-reason"),
            hint: t!("fallback-hint"),
            returns: "train_epoch",
            place: t!("place-cpu"),
            tolerance: TRAJECTORY,
        };
        self.branch(s, &branch, got, direct)
    }

    /// `gpu-train-on`: `train_on(&Device::Gpu(..), ..)` against the same epoch through the
    /// harness's `to_device`, `DeviceDataLoader`, `train_epoch_gpu` and `to_host`.
    pub(super) fn train_on_gpu(
        &self,
        s: &GpuSetup,
        got: (f32, &[SentLayer]),
        direct: (f32, &[SentLayer]),
    ) -> Verdict {
        let branch = Branch {
            call: "train_on(&Device::Gpu(..), …)",
            path: t!("train-on-gpu-path"),
            pieces: "`train_epoch_gpu`".into(),
            first: t!("train-on-gpu-first"),
            reason: t!("train-on-gpu-reason"),
            hint: t!("train-on-gpu-hint"),
            returns: "train_epoch_gpu",
            place: t!("place-gpu"),
            tolerance: GPU_TRAJECTORY,
        };
        self.branch(s, &branch, got, direct)
    }

    /// A branch of `train_on` against the same epoch run by the harness the way the branch is
    /// documented, from the same start.
    fn branch(
        &self,
        s: &GpuSetup,
        b: &Branch,
        (loss, sent): (f32, &[SentLayer]),
        (direct_loss, direct_sent): (f32, &[SentLayer]),
    ) -> Verdict {
        let epoch = super::gpu::epoch_inputs(self.seed, self.id(), s);
        let (got, direct) = (self.layers(sent)?, self.layers(direct_sent)?);
        let (call, path) = (b.call, &b.path);
        match compare(
            s.model,
            &epoch.layers,
            (&direct, &[direct_loss]),
            (&got, &[loss]),
            b.tolerance,
        ) {
            Compared::PiecesIdle => wrong(
                t!("branch-idle-reason", pieces = b.pieces.replace('`', "")),
                t!(
                    "branch-idle-details",
                    call = call,
                    path = path,
                    pieces = b.pieces
                ),
                &b.first,
            ),
            Compared::Different(how) => wrong(
                b.reason.as_str(),
                t!(
                    "branch-different-details",
                    call = call,
                    path = path,
                    how = how
                ),
                &b.hint,
            ),
            Compared::Same if !same_value(loss, direct_loss) => wrong(
                t!("branch-loss-reason", loss = loss, expected = direct_loss),
                t!(
                    "branch-loss-details",
                    call = call,
                    loss = loss,
                    returns = b.returns,
                    expected = direct_loss
                ),
                &t!("branch-loss-hint", returns = b.returns),
            ),
            Compared::Same => Ok(Ok(t!(
                "branch-right",
                place = b.place,
                path = path,
                batches = epoch.order.len(),
                loss = format!("{loss:.5}")
            ))),
        }
    }

    /// `train`: against the same epochs written out (`batches`, then `train_epoch`), and the
    /// same seed again.
    pub(super) fn train(
        &self,
        t: &Training,
        (losses, sent): (&[f32], &[SentLayer]),
        again: &[f32],
        (by_hand, by_hand_sent): (&[f32], &[SentLayer]),
    ) -> Verdict {
        if losses.len() != t.epochs {
            return wrong(
                t!("train-count-reason", got = losses.len(), epochs = t.epochs),
                t!("train-count-details", got = losses.len(), epochs = t.epochs),
                &t!("train-count-hint"),
            );
        }
        if again.first().map(|l| l.to_bits()) != losses.first().map(|l| l.to_bits()) {
            return wrong(
                t!("train-seed-reason"),
                t!(
                    "train-seed-details",
                    again = format!("{:?}", again.first()),
                    first = losses[0]
                ),
                &t!("train-seed-hint"),
            );
        }
        let run_seed = grader_worker::hash::of_text(&format!("{}/{}/train", self.seed, self.id()));
        let start = stand_in::Model::init(t.model, &mut StdRng::seed_from_u64(run_seed)).map(
            |(weight, bias)| Layer {
                weight_grad: Array2::zeros(weight.raw_dim()),
                bias_grad: Array1::zeros(bias.len()),
                weight,
                bias,
            },
        );
        let (got, expected) = (self.layers(sent)?, self.layers(by_hand_sent)?);
        let written_out = t!("train-written-out");
        match compare(
            t.model,
            &start,
            (&expected, by_hand),
            (&got, losses),
            TRAJECTORY,
        ) {
            Compared::PiecesIdle => {
                return wrong(
                    t!("train-idle-reason"),
                    t!("train-idle-details", written_out = written_out),
                    &t!("train-idle-hint"),
                )
            }
            Compared::Different(how) => {
                return wrong(
                    t!("train-different-reason"),
                    t!(
                        "train-different-details",
                        written_out = written_out,
                        how = how
                    ),
                    &t!("train-different-hint"),
                )
            }
            Compared::Same => {}
        }
        if let Some(e) = (0..t.epochs).find(|&e| !same_value(losses[e], by_hand[e])) {
            return wrong(
                t!(
                    "train-loss-reason",
                    epoch = e + 1,
                    got = losses[e],
                    expected = by_hand[e]
                ),
                t!(
                    "train-loss-details",
                    got = losses[e],
                    epoch = e + 1,
                    expected = by_hand[e],
                    all = format!("{losses:?}")
                ),
                &t!("train-loss-hint"),
            );
        }
        // Said, not graded: how well the grader's model learned in the student's loop.
        let held = inputs::dataset(self.seed, self.id(), t.model, t.held_out, "held-out");
        let model = reference_model(t.model, &got);
        let accuracy = r::accuracy(
            &model,
            &held.inputs,
            &super::judge::targets(t.model, &held.labels),
        );
        let (first, last) = (losses[0], losses[losses.len() - 1]);
        Ok(Ok(t!(
            "train-right",
            epochs = t.epochs,
            first = format!("{first:.4}"),
            last = format!("{last:.4}"),
            accuracy = format!("{:.1}", accuracy * 100.0),
            held_out = t.held_out
        )))
    }
}
