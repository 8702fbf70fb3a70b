//! The training lab's worker side: runs the student's functions on the seed's inputs and sends
//! back what they returned ([`Sent`]), every call guarded so a panic costs only its item.

use super::inputs::{self, OPTIMIZER_SHAPES};
use super::kinds::{sent_layer, sent_layers, Kind, Sent, SentPass};
use super::{Layer, Layers, Net, Opt, Submission};

use grader_worker::protocol::{LabOutcome, Matrix, Outcome, PanicInfo, WorkOrder};
use grader_worker::serve::{guarded, LabWorker};
use grader_worker::stopwatch::Checkpoints;

impl LabWorker for Submission {
    fn lab_name(&self) -> &'static str {
        "training"
    }

    fn run(&self, order: &WorkOrder, checkpoints: &mut Checkpoints) -> Result<Outcome, String> {
        let kind: Kind = order.task()?;
        match kind {
            ref gpu if gpu.runs_on_device() => {
                return super::gpu::run(self, order, gpu, checkpoints)
            }
            Kind::DeviceSelect => {
                return Ok(match guarded(None, self.default_device_is_gpu) {
                    Ok(chose_gpu) => Outcome::DeviceChoice { chose_gpu },
                    Err(p) => Outcome::Panicked(p),
                })
            }
            Kind::CpuFallback(s) => return Ok(fallback(self, order, &s)),
            _ => {}
        }
        let sent = Run {
            lab: self,
            seed: order.seed,
            item: &order.item,
            function: &order.function,
        }
        .kind(&kind);
        Ok(match sent {
            Ok(sent) => Outcome::Lab(LabOutcome::of(&sent)?),
            Err(panic) => Outcome::Panicked(panic),
        })
    }
}

/// One order's run.
struct Run<'a> {
    lab: &'a Submission,
    seed: u64,
    item: &'a str,
    function: &'a str,
}

impl Run<'_> {
    fn kind(&self, kind: &Kind) -> Result<Sent, PanicInfo> {
        let (seed, item) = (self.seed, self.item);
        let lab = self.lab;
        Ok(match kind {
            Kind::Init(c) => {
                let mut out = Vec::new();
                for (case, &[i, o]) in c.cases.iter().enumerate() {
                    let made = guarded(Some(case), || {
                        let new = |purpose| {
                            (lab.linear_new)(i, o, &mut super::rng_for(seed, item, case, purpose))
                        };
                        [new("init"), new("init"), new("other")]
                    })?;
                    out.push(made.each_ref().map(sent_layer));
                }
                Sent::Init(out)
            }
            Kind::Forward(c) => {
                let mut out = Vec::new();
                for (case, &[b, i, o]) in c.cases.iter().enumerate() {
                    let layer = inputs::layer(seed, item, case, "layer", (i, o), false);
                    let x = inputs::matrix(seed, item, case, "x", (b, i), 1.0);
                    out.push(Matrix::from_array(&guarded(Some(case), || {
                        (lab.linear_forward)(&layer, &x)
                    })?));
                }
                Sent::Tensors(out)
            }
            Kind::Backward(c) => {
                let mut out = Vec::new();
                for (case, &[b, i, o]) in c.cases.iter().enumerate() {
                    let mut layer = inputs::layer(seed, item, case, "layer", (i, o), true);
                    let x = inputs::matrix(seed, item, case, "x", (b, i), 1.0);
                    let g = inputs::matrix(seed, item, case, "grad", (b, o), 1.0);
                    let dx = guarded(Some(case), || (lab.linear_backward)(&mut layer, &x, &g))?;
                    let after = sent_layer(&layer);
                    guarded(Some(case), || (lab.linear_zero_grad)(&mut layer))?;
                    out.push((Matrix::from_array(&dx), after, sent_layer(&layer)));
                }
                Sent::Backward(out)
            }
            Kind::Elementwise(c) => {
                let mut out = Vec::new();
                for (case, &[r, k]) in c.cases.iter().enumerate() {
                    let x = inputs::elementwise_input(seed, item, case, (r, k));
                    let g = inputs::matrix(seed, item, case, "grad", (r, k), 1.0);
                    let y = guarded(Some(case), || match self.function {
                        "relu" => (lab.relu)(&x),
                        "relu_backward" => (lab.relu_backward)(&x, &g),
                        _ => (lab.sigmoid)(&x),
                    })?;
                    out.push(Matrix::from_array(&y));
                }
                Sent::Tensors(out)
            }
            Kind::Loss(c) => {
                let shapes = c.cases.iter().map(|&s| Some(s)).chain([None]);
                let (mut tensors, mut losses) = (Vec::new(), Vec::new());
                for (case, shape) in shapes.enumerate() {
                    let (v, y, labels) = inputs::loss_case(seed, item, case, shape, self.function);
                    guarded(Some(case), || match self.function {
                        "bce_loss" => losses.push((lab.bce_loss)(&v, &y).to_bits()),
                        "bce_grad" => tensors.push(Matrix::from_array(&(lab.bce_grad)(&v, &y))),
                        "cross_entropy" => losses.push((lab.cross_entropy)(&v, &labels).to_bits()),
                        _ => {
                            tensors.push(Matrix::from_array(&(lab.cross_entropy_grad)(&v, &labels)))
                        }
                    })?;
                }
                if self.function.ends_with("grad") {
                    Sent::Tensors(tensors)
                } else {
                    Sent::Losses(losses)
                }
            }
            Kind::Model(c) => {
                let net = net_of(self.function);
                let mut out = Vec::new();
                let mut by_hand = Vec::new();
                for (case, &[b]) in c.cases.iter().enumerate() {
                    let layers = inputs::layers(seed, item, case, net, true);
                    let x =
                        inputs::matrix(seed, item, case, "x", (b, inputs::shapes(net)[0].0), 1.0);
                    let labels = inputs::labels(seed, item, case, b, inputs::classes(net));
                    let pass = guarded(Some(case), || {
                        (lab.model_pass)(net, layers.clone(), &x, &labels)
                    })?;
                    out.push(sent_pass(&pass));
                    let written_out =
                        guarded(Some(case), || (lab.model_by_hand)(net, layers, &x, &labels));
                    by_hand.push(written_out.ok().map(|p| sent_pass(&p)));
                }
                Sent::Model {
                    passes: out,
                    by_hand,
                }
            }
            Kind::Optimizer(s) => {
                let opt = match self.function {
                    "Sgd::step" => Opt::Sgd(s.lr),
                    _ => Opt::Adam(s.lr),
                };
                let layers: Vec<Layer> = OPTIMIZER_SHAPES
                    .iter()
                    .enumerate()
                    .map(|(l, &shape)| inputs::layer(seed, item, 0, &format!("p{l}"), shape, false))
                    .collect();
                let grads: Vec<_> = (0..s.steps)
                    .map(|step| inputs::step_grads(seed, item, step, &OPTIMIZER_SHAPES))
                    .collect();
                let steps = guarded(None, || (lab.optimize)(opt, layers, &grads))?;
                Sent::Steps(steps.iter().map(|l| sent_layers(l)).collect())
            }
            Kind::Batches(c) => {
                let mut out = Vec::new();
                for (case, &[n, size]) in c.cases.iter().enumerate() {
                    let made = guarded(Some(case), || {
                        let mut rng = super::rng_for(seed, item, case, "order");
                        let first = (lab.batches)(n, size, &mut rng);
                        let second = (lab.batches)(n, size, &mut rng);
                        let mut again = super::rng_for(seed, item, case, "order");
                        [first, second, (lab.batches)(n, size, &mut again)]
                    })?;
                    out.push(made);
                }
                Sent::Batches(out)
            }
            Kind::Epoch(s) => {
                let inputs::Epoch {
                    set,
                    x,
                    layers,
                    order,
                } = inputs::epoch(seed, item, s.model, s.examples, s.batch_size, s.hidden);
                let opt = s.optimizer.with(s.lr);
                let epoch = |batches: &[Vec<usize>]| {
                    guarded(None, || {
                        (lab.train_epoch)(s.model, layers.clone(), opt, &x, &set.labels, batches)
                    })
                };
                let (loss, after) = epoch(&order)?;
                let finite = |loss: f32, layers: &Layers| loss.is_finite() && all_finite(layers);
                let mut first_bad_batch = None;
                if !finite(loss, &after) {
                    // The shortest prefix of the epoch after which something is not a number.
                    let (mut good, mut bad) = (0, order.len());
                    while bad - good > 1 {
                        let mid = (good + bad) / 2;
                        let (l, a) = epoch(&order[..mid])?;
                        if finite(l, &a) {
                            good = mid;
                        } else {
                            bad = mid;
                        }
                    }
                    first_bad_batch = Some(bad - 1);
                }
                Sent::Epoch {
                    loss: loss.to_bits(),
                    layers: sent_layers(&after),
                    first_bad_batch,
                }
            }
            Kind::Accuracy(a) => {
                let set = inputs::dataset(seed, item, a.model, a.examples, "scored");
                let x = inputs::inputs_f32(&set);
                let layers = inputs::layers(seed, item, 0, a.model, false);
                let share = guarded(None, || (lab.accuracy)(a.model, layers, &x, &set.labels))?;
                Sent::Accuracy(share.to_bits())
            }
            Kind::Train(t) => {
                let set = inputs::dataset(seed, item, t.model, t.examples, "train");
                let x = inputs::inputs_f32(&set);
                let opt = t.optimizer.with(t.lr);
                let run_seed = grader_worker::hash::of_text(&format!("{seed}/{item}/train"));
                let train = |epochs| {
                    guarded(None, || {
                        (lab.train)(
                            t.model,
                            opt,
                            &x,
                            &set.labels,
                            epochs,
                            t.batch_size,
                            run_seed,
                        )
                    })
                };
                let (losses, layers) = train(t.epochs)?;
                let (again, _) = train(1)?;
                let (by_hand, by_hand_layers) = guarded(None, || {
                    (lab.train_by_hand)(
                        t.model,
                        opt,
                        &x,
                        &set.labels,
                        t.epochs,
                        t.batch_size,
                        run_seed,
                    )
                })?;
                let bits = |v: &[f32]| v.iter().map(|l| l.to_bits()).collect();
                Sent::Train {
                    losses: bits(&losses),
                    again: bits(&again),
                    layers: sent_layers(&layers),
                    by_hand: bits(&by_hand),
                    by_hand_layers: sent_layers(&by_hand_layers),
                }
            }
            // Dispatched by `run` before it gets here.
            Kind::DeviceSelect
            | Kind::GpuTransfer
            | Kind::GpuLoader(_)
            | Kind::GpuEpoch(_)
            | Kind::GpuTrainOn(_)
            | Kind::GpuTimer(_)
            | Kind::GpuSpeedup(_)
            | Kind::CpuFallback(_) => {
                return Err(PanicInfo {
                    case: None,
                    message: "the grader ran a GPU item as a CPU one (a grader bug)".into(),
                    location: None,
                })
            }
        })
    }
}

/// `train_on(&Device::Cpu, ..)`: the `epoch` kind's data, start and batch order; sent as an
/// epoch (no NaN search: the CPU epoch item does that).
fn fallback(lab: &Submission, order: &WorkOrder, s: &super::kinds::GpuSetup) -> Outcome {
    let epoch = inputs::epoch(
        order.seed,
        &order.item,
        s.model,
        s.examples,
        s.batch_size,
        s.hidden,
    );
    let direct = match guarded(None, || (lab.sgd_epoch)(epoch.setup(s.model, s.lr))) {
        Ok(direct) => direct,
        Err(p) => return Outcome::Panicked(p),
    };
    match guarded(None, || (lab.train_on_cpu)(epoch.setup(s.model, s.lr))) {
        Ok(Ok((loss, layers))) => {
            let sent = Sent::Fallback {
                loss: loss.to_bits(),
                layers: sent_layers(&layers),
                direct_loss: direct.0.to_bits(),
                direct_layers: sent_layers(&direct.1),
            };
            LabOutcome::of(&sent)
                .map(Outcome::Lab)
                .unwrap_or_else(|e| Outcome::Failed(e.to_string()))
        }
        Ok(Err(e)) => Outcome::Failed(grader_worker::gpu::student::describe(e.as_ref())),
        Err(p) => Outcome::Panicked(p),
    }
}

/// A model's pass as sent.
fn sent_pass(pass: &super::ModelPass) -> SentPass {
    SentPass {
        output: Matrix::from_array(&pass.output),
        loss: pass.loss.to_bits(),
        after_backward: sent_layers(&pass.after_backward),
        after_zero_grad: sent_layers(&pass.after_zero_grad),
        predicted: pass.predicted.clone(),
    }
}

/// Which model a `model` item's function names.
pub fn net_of(function: &str) -> Net {
    match function {
        "SimpleNN" => Net::SimpleNn,
        _ => Net::Mlp,
    }
}

/// Whether every parameter of both layers is a number.
fn all_finite(layers: &Layers) -> bool {
    layers
        .iter()
        .all(|l| l.weight.iter().chain(l.bias.iter()).all(|v| v.is_finite()))
}
