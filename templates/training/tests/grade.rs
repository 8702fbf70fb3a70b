//! Grades this lab: `cargo test` runs every rubric item and prints your score.
//!
//! Options go after `--`: `cargo test --test grade -- --seed 7 adam` repeats a run with seed 7
//! and grades only `adam`. Official grading uses the grader's own copy of this file, so
//! changing it changes nothing there.

use grader::training::stand_in;
use grader::training::{EpochSetup, Layer, Layers, Marks, ModelPass, Net, Opt};
use ndarray::Array2;
use training_lab as lab;
use training_lab::gpu::{self, GpuResult, Head};
use training_lab::{Model, Optimizer, SeedableRng, StdRng};

/// The grader's layer as the lab's `Linear`.
fn linear(l: Layer) -> lab::Linear {
    lab::Linear {
        weight: l.weight,
        bias: l.bias,
        weight_grad: l.weight_grad,
        bias_grad: l.bias_grad,
    }
}

/// The lab's `Linear` as the grader's layer.
fn layer(l: &lab::Linear) -> Layer {
    Layer {
        weight: l.weight.clone(),
        bias: l.bias.clone(),
        weight_grad: l.weight_grad.clone(),
        bias_grad: l.bias_grad.clone(),
    }
}

/// The model's name, as the lab's code and its messages write it.
fn model_name(net: Net) -> &'static str {
    match net {
        Net::SimpleNn => "SimpleNN",
        Net::Mlp => "Mlp",
    }
}

/// The model's two layers, as the grader's.
fn layers_of(model: &mut dyn Model, net: Net) -> Layers {
    let layers = model.layers_mut();
    assert!(
        layers.len() == 2,
        "{}",
        grader::training::MESSAGES.format("layers-mut-two", &[("model", &model_name(net))])
    );
    [layer(layers[0]), layer(layers[1])]
}

/// The grader's own model, in place of yours where an item grades something else (the loop,
/// `accuracy`, `train`, `train_on`, the GPU): a mistake in your model costs only the model's
/// item. It keeps its layers as your `Linear`s and does what the `Model` trait says.
struct StandIn {
    layer1: lab::Linear,
    layer2: lab::Linear,
    math: stand_in::Model,
}

impl StandIn {
    fn new(net: Net, [l1, l2]: Layers) -> StandIn {
        StandIn {
            layer1: linear(l1),
            layer2: linear(l2),
            math: stand_in::Model::new(net),
        }
    }

    /// A model of kind `net` with starting layers drawn from `rng`, as a model's `new` would.
    fn init(net: Net, rng: &mut StdRng) -> StandIn {
        let [(w1, b1), (w2, b2)] = stand_in::Model::init(net, rng);
        let layer = |weight: Array2<f32>, bias: ndarray::Array1<f32>| Layer {
            weight_grad: Array2::zeros(weight.raw_dim()),
            bias_grad: ndarray::Array1::zeros(bias.len()),
            weight,
            bias,
        };
        StandIn::new(net, [layer(w1, b1), layer(w2, b2)])
    }

    fn params(&self) -> [stand_in::Params<'_>; 2] {
        [
            (self.layer1.weight.view(), self.layer1.bias.view()),
            (self.layer2.weight.view(), self.layer2.bias.view()),
        ]
    }

    fn layers(&self) -> Layers {
        [layer(&self.layer1), layer(&self.layer2)]
    }
}

impl Model for StandIn {
    fn forward(&mut self, x: &Array2<f32>) -> Array2<f32> {
        let params = [
            (self.layer1.weight.view(), self.layer1.bias.view()),
            (self.layer2.weight.view(), self.layer2.bias.view()),
        ];
        self.math.forward(params, x)
    }
    fn loss(&self, output: &Array2<f32>, labels: &[usize]) -> f32 {
        self.math.loss(output, labels)
    }
    fn backward(&mut self, output: &Array2<f32>, labels: &[usize]) {
        let grads = self.math.backward(self.params(), output, labels);
        for (l, (w, b)) in [&mut self.layer1, &mut self.layer2].into_iter().zip(grads) {
            l.weight_grad += &w;
            l.bias_grad += &b;
        }
    }
    fn zero_grad(&mut self) {
        for l in [&mut self.layer1, &mut self.layer2] {
            l.weight_grad.fill(0.0);
            l.bias_grad.fill(0.0);
        }
    }
    fn layers_mut(&mut self) -> Vec<&mut lab::Linear> {
        vec![&mut self.layer1, &mut self.layer2]
    }
    fn predict(&mut self, x: &Array2<f32>) -> Vec<usize> {
        let params = [
            (self.layer1.weight.view(), self.layer1.bias.view()),
            (self.layer2.weight.view(), self.layer2.bias.view()),
        ];
        self.math.predict(params, x)
    }
}

/// The grader's own SGD or Adam, in place of yours where the loop is graded.
struct StandInOptimizer(stand_in::Optimizer);

impl Optimizer for StandInOptimizer {
    fn step(&mut self, layers: &mut [&mut lab::Linear]) {
        let mut params: Vec<stand_in::ParamsMut<'_>> = layers
            .iter_mut()
            .map(|l| {
                let lab::Linear {
                    weight,
                    bias,
                    weight_grad,
                    bias_grad,
                } = &mut **l;
                stand_in::ParamsMut {
                    weight,
                    bias,
                    weight_grad,
                    bias_grad,
                }
            })
            .collect();
        self.0.step(&mut params);
    }
}

/// The grader's optimizer `opt` names, fresh.
fn stand_in_optimizer(opt: Opt) -> StandInOptimizer {
    StandInOptimizer(stand_in::Optimizer::new(opt))
}

/// Runs `f` on your model of kind `net`, made by its `new` and then given `layers`.
fn with_model<R>(net: Net, [l1, l2]: Layers, f: impl FnOnce(&mut dyn Model) -> R) -> R {
    let mut rng = StdRng::seed_from_u64(0);
    match net {
        Net::SimpleNn => {
            let mut m = lab::SimpleNN::new(10, &mut rng);
            (m.layer1, m.layer2) = (linear(l1), linear(l2));
            f(&mut m)
        }
        Net::Mlp => {
            let mut m = lab::Mlp::new(&mut rng);
            (m.layer1, m.layer2) = (linear(l1), linear(l2));
            f(&mut m)
        }
    }
}

/// Your optimizer `opt` names, fresh.
fn optimizer(opt: Opt) -> Box<dyn Optimizer> {
    match opt {
        Opt::Sgd(lr) => Box::new(lab::Sgd { lr }),
        Opt::Adam(lr) => Box::new(lab::Adam::new(lr)),
    }
}

/// The GPU head of a model: what its output feeds into.
fn head(net: Net) -> Head {
    match net {
        Net::SimpleNn => Head::Sigmoid,
        Net::Mlp => Head::Softmax,
    }
}

/// Runs `f` with the setup's model on the GPU and its data and loader there, between the
/// grader's marks; then copies the model back: what `f` returned and the layers after.
fn on_gpu<R>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    s: EpochSetup<'_>,
    marks: &mut dyn Marks,
    f: impl FnOnce(&mut gpu::GpuModel, gpu::DeviceDataLoader<'_>, f32) -> GpuResult<R>,
) -> GpuResult<(R, Layers)> {
    let mut m = StandIn::new(s.net, s.layers);
    let mut model = gpu::GpuModel::to_device(&mut m, head(s.net), stream)?;
    let data = gpu::to_device(s.x, s.labels, stream)?;
    let loader = gpu::DeviceDataLoader::new(&data, s.batches)?;
    marks.before()?;
    let out = f(&mut model, loader, s.lr)?;
    marks.after()?;
    model.to_host(&mut m)?;
    Ok((out, m.layers()))
}

/// `train_on` on `device` for a model holding the setup's layers, between the marks where
/// there are any: the mean loss and the layers after.
fn train_on(
    device: gpu::Device,
    s: EpochSetup<'_>,
    mut marks: Option<&mut dyn Marks>,
) -> GpuResult<(f32, Layers)> {
    let mut m = StandIn::new(s.net, s.layers);
    if let Some(marks) = marks.as_mut() {
        marks.before()?;
    }
    let loss = gpu::train_on(&device, &mut m, head(s.net), s.x, s.labels, s.batches, s.lr)?;
    if let Some(marks) = marks.as_mut() {
        marks.after()?;
    }
    Ok((loss, m.layers()))
}

fn main() -> std::process::ExitCode {
    grader::harness::main(grader::training::Submission {
        linear_new: |i, o, rng| layer(&lab::Linear::new(i, o, rng)),
        linear_forward: |l, x| linear(l.clone()).forward(x),
        linear_backward: |l, x, g| {
            let mut lin = linear(l.clone());
            let dx = lin.backward(x, g);
            *l = layer(&lin);
            dx
        },
        linear_zero_grad: |l| {
            let mut lin = linear(l.clone());
            lin.zero_grad();
            *l = layer(&lin);
        },
        relu: lab::relu,
        relu_backward: lab::relu_backward,
        sigmoid: lab::sigmoid,
        bce_loss: lab::bce_loss,
        bce_grad: lab::bce_grad,
        cross_entropy: lab::cross_entropy,
        cross_entropy_grad: lab::cross_entropy_grad,
        model_pass: |net, layers, x, labels| {
            with_model(net, layers, |m| {
                let output = m.forward(x);
                // Said here, where it is known: a wrong shape would otherwise panic later, in
                // the loss or backward, under their names.
                let classes = match net {
                    Net::SimpleNn => 1,
                    Net::Mlp => 10,
                };
                assert!(
                    output.dim() == (x.nrows(), classes),
                    "{}",
                    grader::training::MESSAGES.format(
                        "forward-shape",
                        &[
                            ("model", &model_name(net)),
                            ("rows", &output.nrows()),
                            ("cols", &output.ncols()),
                            ("batch", &x.nrows()),
                            ("classes", &classes),
                        ]
                    )
                );
                let loss = m.loss(&output, labels);
                m.backward(&output, labels);
                let after_backward = layers_of(m, net);
                m.zero_grad();
                let after_zero_grad = layers_of(m, net);
                ModelPass {
                    predicted: m.predict(x),
                    output,
                    loss,
                    after_backward,
                    after_zero_grad,
                }
            })
        },
        model_by_hand: |net, [l1, l2], x, labels| {
            let (mut l1, mut l2) = (linear(l1), linear(l2));
            let hidden_pre = l1.forward(x);
            let hidden = lab::relu(&hidden_pre);
            let pre = l2.forward(&hidden);
            let (output, loss, grad) = match net {
                Net::SimpleNn => {
                    let y = Array2::from_shape_fn((labels.len(), 1), |(i, _)| labels[i] as f32);
                    let p = lab::sigmoid(&pre);
                    let loss = lab::bce_loss(&p, &y);
                    let mut grad = lab::bce_grad(&p, &y);
                    grad.zip_mut_with(&p, |g, &p| *g *= p * (1.0 - p));
                    (p, loss, grad)
                }
                Net::Mlp => (
                    pre.clone(),
                    lab::cross_entropy(&pre, labels),
                    lab::cross_entropy_grad(&pre, labels),
                ),
            };
            let grad_hidden = l2.backward(&hidden, &grad);
            let grad_hidden_pre = lab::relu_backward(&hidden_pre, &grad_hidden);
            l1.backward(x, &grad_hidden_pre);
            let after_backward = [layer(&l1), layer(&l2)];
            l1.zero_grad();
            l2.zero_grad();
            ModelPass {
                output,
                loss,
                after_backward,
                after_zero_grad: [layer(&l1), layer(&l2)],
                // What the model's own `predict` must give is read from its own output.
                predicted: Vec::new(),
            }
        },
        optimize: |opt, start, steps| {
            let mut layers: Vec<lab::Linear> = start.into_iter().map(linear).collect();
            let mut optimizer = optimizer(opt);
            let mut after = Vec::new();
            for grads in steps {
                for (l, (w, b)) in layers.iter_mut().zip(grads) {
                    (l.weight_grad, l.bias_grad) = (w.clone(), b.clone());
                }
                optimizer.step(&mut layers.iter_mut().collect::<Vec<_>>());
                after.push(layers.iter().map(layer).collect());
            }
            after
        },
        batches: lab::batches,
        train_epoch: |net, layers, opt, x, labels, batches| {
            let mut m = StandIn::new(net, layers);
            let loss = lab::train_epoch(&mut m, &mut stand_in_optimizer(opt), x, labels, batches);
            (loss, m.layers())
        },
        sgd_epoch: |s| {
            let mut m = StandIn::new(s.net, s.layers);
            let loss =
                lab::train_epoch(&mut m, &mut lab::Sgd { lr: s.lr }, s.x, s.labels, s.batches);
            (loss, m.layers())
        },
        accuracy: |net, layers, x, labels| lab::accuracy(&mut StandIn::new(net, layers), x, labels),
        train: |net, opt, x, labels, epochs, batch_size, seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut m = StandIn::init(net, &mut rng);
            let mut optimizer = stand_in_optimizer(opt);
            let losses = lab::train(
                &mut m,
                &mut optimizer,
                x,
                labels,
                epochs,
                batch_size,
                &mut rng,
            );
            (losses, m.layers())
        },
        train_by_hand: |net, opt, x, labels, epochs, batch_size, seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut m = StandIn::init(net, &mut rng);
            let mut optimizer = stand_in_optimizer(opt);
            let losses = (0..epochs)
                .map(|_| {
                    let order = lab::batches(x.nrows(), batch_size, &mut rng);
                    lab::train_epoch(&mut m, &mut optimizer, x, labels, &order)
                })
                .collect();
            (losses, m.layers())
        },
        default_device_is_gpu: || matches!(gpu::default_device(), gpu::Device::Gpu(_)),
        gpu_round_trip: |stream, net, layers| {
            let model =
                gpu::GpuModel::to_device(&mut StandIn::new(net, layers), head(net), stream)?;
            // Back into a fresh model, so nothing of the original can come back.
            let mut fresh = StandIn::init(net, &mut StdRng::seed_from_u64(0));
            model.to_host(&mut fresh)?;
            Ok(fresh.layers())
        },
        gpu_batches: |stream, x, labels, batches| {
            let data = gpu::to_device(x, labels, stream)?;
            let mut out = Vec::new();
            for batch in gpu::DeviceDataLoader::new(&data, batches)? {
                let batch = batch?;
                let rows = stream.clone_dtoh(&batch.x)?;
                let rows = ndarray::Array2::from_shape_vec((batch.len, x.ncols()), rows)?;
                out.push((rows, stream.clone_dtoh(&batch.labels)?));
            }
            Ok(out)
        },
        gpu_epoch: |stream, s, marks| on_gpu(stream, s, marks, gpu::train_epoch_gpu),
        time_gpu_epoch: |stream, s, marks| {
            on_gpu(stream, s, marks, gpu::time_gpu_epoch).map(|(timed, _)| timed)
        },
        train_on_cpu: |s| train_on(gpu::Device::Cpu, s, None),
        train_on_gpu: |stream, s, marks| train_on(gpu::Device::Gpu(stream.clone()), s, Some(marks)),
    })
}
