//! "The device trained the model", decided by the training itself: on the emulator, a GPU
//! epoch's device work (from the harness's first mark to the parameters copied back) is run
//! again with the inputs' values moved through a secret map φ (`grader_worker::gpu::replay`),
//! the data set already on the device included. The host code does not run again and never
//! sees φ, so parameters computed on the host (the CPU epoch, uploaded in any disguise and
//! turned back by a kernel) come back unchanged; an epoch the device computed from the data
//! comes back trained on φ(X). The judge trains the f64 reference on φ(X) from the same start
//! and reads the replayed parameters against it, with the epoch's own tolerance.

use super::super::gpu::{epoch_inputs, replaced_inputs};
use super::super::judge::{reference_model, targets, wrong, Judge, Verdict, GPU_TRAJECTORY};
use super::super::kinds::GpuSetup;
use super::super::reference::{self as r, Optimizer};
use super::super::t;
use super::super::trajectory::{self, Parameters};
use grader_worker::gpu::replay;
use grader_worker::protocol::Replay;
use ndarray::{Array1, Array2};

/// What the replay says of an epoch whose parameters passed.
pub(in super::super) enum Replayed {
    /// The replayed parameters followed the moved inputs.
    Followed,
    /// No replay came back, or it cannot be read: the item fails closed.
    Missing,
    /// The device's parameters did not follow the inputs (or a replayed kernel crashed).
    NotFromTheData(Verdict),
}

impl Judge<'_> {
    /// The replay of a GPU epoch on setup `s` that `function` ran, against the reference
    /// trained on the moved inputs.
    pub(in super::super) fn replayed_epoch(
        &self,
        s: &GpuSetup,
        replayed: Option<&Replay>,
    ) -> Replayed {
        let epoch = epoch_inputs(self.seed, self.id(), s);
        let not_from_the_data = |why: String| {
            Replayed::NotFromTheData(wrong(
                t!("not-from-the-data-reason"),
                t!(
                    "not-from-the-data-details",
                    function = self.item.function.as_str(),
                    why = why
                ),
                &t!("not-from-the-data-hint"),
            ))
        };
        let Some(replayed) = replayed else {
            return Replayed::Missing;
        };
        if *replayed == Replay::Failed(2) {
            return not_from_the_data(t!("epoch-replay-faulted"));
        }
        let sizes: Vec<(usize, usize)> = epoch
            .layers
            .iter()
            .map(|l| (l.weight.len(), l.bias.len()))
            .collect();
        let values = sizes.iter().map(|(w, b)| w + b).sum();
        let Some((key, candidates)) = replayed.candidates(values) else {
            return Replayed::Missing;
        };
        // The reference on φ(X), from the same start, batches and labels.
        let mapped = replaced_inputs(&epoch, s.lr);
        let moved = replay::replaced(&epoch.x, &mapped, key).mapv(f64::from);
        let mut model = reference_model(s.model, &epoch.layers);
        let mut opt = Optimizer::Sgd(r::Sgd {
            lr: f64::from(s.lr),
        });
        let all = targets(s.model, &epoch.set.labels);
        r::train_epoch(&mut model, &mut opt, &moved, &all, &epoch.order, None);
        let expected: Vec<f64> = [&model.layer1, &model.layer2]
            .into_iter()
            .flat_map(|l| l.weight.iter().chain(&l.bias).copied())
            .collect();
        let got: Vec<f32> = candidates
            .iter()
            .zip(&expected)
            .map(|(found, want)| replay::nearest(found, *want))
            .collect();
        let mut rest = got.as_slice();
        let mut layers = Vec::with_capacity(2);
        for (l, &(w, b)) in epoch.layers.iter().zip(&sizes) {
            let (weight, tail) = rest.split_at(w);
            let (bias, tail) = tail.split_at(b);
            rest = tail;
            let Ok(weight) = Array2::from_shape_vec(l.weight.dim(), weight.to_vec()) else {
                return Replayed::Missing;
            };
            layers.push((weight, Array1::from(bias.to_vec())));
        }
        let parameters: Vec<Parameters> =
            layers.iter().map(|(w, b)| (w.view(), b.view())).collect();
        let off = trajectory::distance(&model, &epoch.layers, &parameters);
        if off.within(GPU_TRAJECTORY) {
            Replayed::Followed
        } else {
            // No figure: they depend on the key, and a report must read the same run to run.
            not_from_the_data(t!("epoch-replay-differs"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{item, setup};
    use super::*;

    /// The f32 bits of the reference epoch's parameters trained on `x` (layer by layer, the
    /// weights then the bias), as a device would copy them back.
    fn trained_on(judge: &Judge, s: &GpuSetup, x: &Array2<f32>) -> Vec<u32> {
        let epoch = epoch_inputs(judge.seed, judge.id(), s);
        let mut model = reference_model(s.model, &epoch.layers);
        let mut opt = Optimizer::Sgd(r::Sgd {
            lr: f64::from(s.lr),
        });
        let all = targets(s.model, &epoch.set.labels);
        r::train_epoch(
            &mut model,
            &mut opt,
            &x.mapv(f64::from),
            &all,
            &epoch.order,
            None,
        );
        [&model.layer1, &model.layer2]
            .into_iter()
            .flat_map(|l| l.weight.iter().chain(&l.bias).copied())
            .map(|v| (v as f32).to_bits())
            .collect()
    }

    /// The replay passes an epoch trained on the moved inputs; parameters trained on the
    /// inputs as they were (computed on the host, only passed through the device) fail it; a
    /// replay missing, cut short or unable to run fails closed; one whose kernel crashed fails.
    #[test]
    fn a_replay_passes_only_when_the_parameters_followed_the_inputs() {
        let s = GpuSetup {
            examples: 96,
            batch_size: 32,
            ..setup()
        };
        let item = item(&s);
        let judge = Judge {
            seed: 7,
            item: &item,
        };
        let key = 0x5eed_1234;
        let epoch = epoch_inputs(judge.seed, judge.id(), &s);
        let moved = replay::replaced(&epoch.x, &replaced_inputs(&epoch, s.lr), key);
        assert_ne!(moved, epoch.x);
        let done = |bits: &[u32]| {
            let candidates: Vec<Vec<u32>> = bits.iter().map(|b| vec![*b]).collect();
            Replay::done(key, &candidates)
        };
        let followed = trained_on(&judge, &s, &moved);
        assert!(matches!(
            judge.replayed_epoch(&s, Some(&done(&followed))),
            Replayed::Followed
        ));
        let unchanged = trained_on(&judge, &s, &epoch.x);
        let Replayed::NotFromTheData(Ok(Err(wrong))) =
            judge.replayed_epoch(&s, Some(&done(&unchanged)))
        else {
            panic!("the host's parameters passed the replay");
        };
        assert!(
            wrong.details.contains("did not follow them"),
            "{}",
            wrong.details
        );
        for missing in [None, Some(Replay::Failed(1)), Some(done(&followed[..10]))] {
            assert!(matches!(
                judge.replayed_epoch(&s, missing.as_ref()),
                Replayed::Missing
            ));
        }
        assert!(matches!(
            judge.replayed_epoch(&s, Some(&Replay::Failed(2))),
            Replayed::NotFromTheData(_)
        ));
    }
}
