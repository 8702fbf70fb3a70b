//! Grades this lab: `cargo test` runs every rubric item and prints your score.
//!
//! Options go after `--`: `cargo test --test grade -- --seed 7 adam` repeats a run with seed 7
//! and grades only `adam`. Official grading uses the grader's own copy of this file, so
//! changing it changes nothing there.

use grader::training::{EpochSetup, Layer, Layers, Marks, ModelPass, Net, Opt};
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

/// The model's two layers, as the grader's.
fn layers_of(model: &mut dyn Model) -> Layers {
    let layers = model.layers_mut();
    assert!(
        layers.len() == 2,
        "layers_mut must return the model's two layers, in order"
    );
    [layer(layers[0]), layer(layers[1])]
}

/// Runs `f` on a model of kind `net` made by its `new`, holding `layers` when given.
fn with_model<R>(
    net: Net,
    layers: Option<Layers>,
    rng: &mut StdRng,
    f: impl FnOnce(&mut dyn Model, &mut StdRng) -> R,
) -> R {
    match net {
        Net::SimpleNn => {
            let mut m = lab::SimpleNN::new(10, rng);
            if let Some([l1, l2]) = layers {
                (m.layer1, m.layer2) = (linear(l1), linear(l2));
            }
            f(&mut m, rng)
        }
        Net::Mlp => {
            let mut m = lab::Mlp::new(rng);
            if let Some([l1, l2]) = layers {
                (m.layer1, m.layer2) = (linear(l1), linear(l2));
            }
            f(&mut m, rng)
        }
    }
}

/// The optimizer `opt` names, fresh.
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
    let mut rng = StdRng::seed_from_u64(0);
    with_model(s.net, Some(s.layers), &mut rng, |m, _| {
        let mut model = gpu::GpuModel::to_device(m, head(s.net), stream)?;
        let data = gpu::to_device(s.x, s.labels, stream)?;
        let loader = gpu::DeviceDataLoader::new(&data, s.batches)?;
        marks.before()?;
        let out = f(&mut model, loader, s.lr)?;
        marks.after()?;
        model.to_host(m)?;
        Ok((out, layers_of(m)))
    })
}

/// `train_on` on `device` for a model holding the setup's layers, between the marks where
/// there are any: the mean loss and the layers after.
fn train_on(
    device: gpu::Device,
    s: EpochSetup<'_>,
    mut marks: Option<&mut dyn Marks>,
) -> GpuResult<(f32, Layers)> {
    with_model(
        s.net,
        Some(s.layers),
        &mut StdRng::seed_from_u64(0),
        |m, _| {
            if let Some(marks) = marks.as_mut() {
                marks.before()?;
            }
            let loss = gpu::train_on(&device, m, head(s.net), s.x, s.labels, s.batches, s.lr)?;
            if let Some(marks) = marks.as_mut() {
                marks.after()?;
            }
            Ok((loss, layers_of(m)))
        },
    )
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
            with_model(net, Some(layers), &mut StdRng::seed_from_u64(0), |m, _| {
                let output = m.forward(x);
                let loss = m.loss(&output, labels);
                m.backward(&output, labels);
                let after_backward = layers_of(m);
                m.zero_grad();
                ModelPass {
                    output,
                    loss,
                    after_backward,
                    after_zero_grad: layers_of(m),
                }
            })
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
            with_model(net, Some(layers), &mut StdRng::seed_from_u64(0), |m, _| {
                let loss = lab::train_epoch(m, optimizer(opt).as_mut(), x, labels, batches);
                (loss, layers_of(m))
            })
        },
        accuracy: |net, layers, x, labels| {
            with_model(net, Some(layers), &mut StdRng::seed_from_u64(0), |m, _| {
                lab::accuracy(m, x, labels)
            })
        },
        train: |net, opt, x, labels, epochs, batch_size, seed| {
            with_model(net, None, &mut StdRng::seed_from_u64(seed), |m, rng| {
                let losses = lab::train(
                    m,
                    optimizer(opt).as_mut(),
                    x,
                    labels,
                    epochs,
                    batch_size,
                    rng,
                );
                (losses, layers_of(m))
            })
        },
        default_device_is_gpu: || matches!(gpu::default_device(), gpu::Device::Gpu(_)),
        gpu_round_trip: |stream, net, layers| {
            with_model(
                net,
                Some(layers),
                &mut StdRng::seed_from_u64(0),
                |m, rng| {
                    let model = gpu::GpuModel::to_device(m, head(net), stream)?;
                    // Back into a fresh model, so nothing of the original can come back.
                    with_model(net, None, rng, |fresh, _| {
                        model.to_host(fresh)?;
                        Ok(layers_of(fresh))
                    })
                },
            )
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
