# The training lab's student-facing messages, in English.

## Cases (kinds.rs)

case-on = {" "}on case { $case } of { $total } ({ $shape })
shape-init = { $inputs } inputs, { $outputs } outputs
shape-layer = a batch of { $batch }, { $inputs } inputs, { $outputs } outputs
shape-extreme = extreme values
shape-model = a batch of { $batch }
shape-batches = n = { $n }, batch_size = { $batch }
shape-loader = { $n } examples, batches of { $batch }

## Every verdict (judge.rs)

passed-details = `{ $function }`: { $reason }.

## What a right answer showed (judge.rs)

init-right = right shapes, the documented uniform draws on ±1/√in (weights, then biases), zero gradients, reproducible from the seed ({ $cases } cases)
right-on-all = right on all { $cases } cases
backward-right = input gradient right and weight and bias gradients accumulated on all { $cases } cases, also against central differences; zero_grad clears both
loss-right = right on all { $cases } cases, extreme values included
loss-grads-right = right on all { $cases } cases, extreme values included, also against central differences
model-composes = forward, loss, backward, zero_grad and predict compose your own layers, activations and losses the right way on all { $cases } cases (on { $composed } of them those pieces give other values than the reference: their own items charge for that, this one does not)
model-right = forward, loss, backward (every parameter's gradient), zero_grad and predict right on all { $cases } cases
optimizer-right = follows the formula over { $steps } steps
batches-right = a shuffled split of 0..n, new each epoch and reproducible, on all { $cases } cases
epoch-right = from the grader's start and batch order, one epoch ({ $batches } batches) follows the reference: parameters within { $within } of the way they moved (the median hidden unit), mean loss { $loss }
accuracy-right = { $expected } on { $examples } examples, as expected

## A tensor against its reference (compare.rs) and the verdict that says so (judge.rs)

mismatch-shape = `{ $name }` is { $rows }×{ $cols }, expected { $erows }×{ $ecols }: check the order of the dimensions (a weight is out × in, a batch is one row per example)
mismatch-not-finite = `{ $name }`[{ $i }, { $j }] is { $got }, expected a number: look for a log of 0, a division by 0 or an exp that overflows
mismatch-value = `{ $name }`[{ $i }, { $j }] is { $got }, expected { $expected } ({ $off } of { $of } values are off; this is the worst)
wrong-shape-reason = `{ $name }` has the wrong shape{ $case }
not-finite-reason = `{ $name }` is NaN or infinite{ $case }
wrong-value-reason = wrong `{ $name }`{ $case }
mismatch-details = `{ $function }`{ $case }: { $mismatch }.

## Linear::new (judge.rs)

init-shapes-reason = wrong shapes{ $case }
init-shapes-details = `Linear::new({ $inputs }, { $outputs }, rng)`: weight is { $rows }×{ $cols } and bias has { $biases } values; expected a { $outputs }×{ $inputs } weight (out × in, as PyTorch) and { $outputs } biases.
init-shapes-hint = nn.Linear(in, out) stores its weight as out × in
init-grads-reason = gradients not zero{ $case }
init-grads-details = A new layer's weight_grad and bias_grad must be zeros of the weight's and the bias's shapes.
init-grads-hint = Array2::zeros((out, in)) and Array1::zeros(out)
init-bound-reason = `{ $name }` outside ±1/√in{ $case }
init-bound-details = `Linear::new({ $inputs }, { $outputs }, rng)`: `{ $name }` holds { $value }, outside ±1/√{ $inputs } = ±{ $bound }.
init-bound-hint = PyTorch draws every weight and bias uniformly from [−1/√in, 1/√in): rng.random_range(-bound..bound)
init-uniform-reason = weights not uniform on ±1/√in{ $case }
init-uniform-details = `Linear::new({ $inputs }, { $outputs }, rng)`: the weights' mean is { $mean } and { $beyond }% of them are beyond half the bound; uniform values on ±{ $bound } have mean ≈ 0 and 50% beyond half.
init-uniform-hint = draw each weight with rng.random_range(-bound..bound), not from a normal distribution or a narrower range
init-same-reason = every weight is the same{ $case }
init-same-details = Every weight is the same value: a layer whose units all start alike learns alike.
init-same-hint = draw a new random value for each weight
init-not-reproducible-reason = not reproducible from the generator{ $case }
init-not-reproducible-details = Two generators with the same seed gave different layers: the layer must be drawn from the `rng` it is given (nothing else random), so a seed gives the same model every time.
init-from-rng-hint = draw every value from the `rng` argument
init-other-seed-reason = the same layer from another seed{ $case }
init-other-seed-details = A generator with another seed gave the same weights: they must come from the `rng` argument.
init-weights-draws-reason = the weights are not the documented draws{ $case }
init-weights-draws-hint = bound = 1.0 / (inputs as f32).sqrt(), then the weight row by row, each rng.random_range(-bound..bound) (Array2::from_shape_simple_fn), before the bias
init-biases-zero-reason = the biases are all 0{ $case }
init-biases-zero-hint = nn.Linear draws the biases too: after the weight, each rng.random_range(-bound..bound)
init-biases-draws-reason = the biases are not the documented draws{ $case }
init-biases-draws-hint = draw the biases after the weight, from the same rng, each rng.random_range(-bound..bound)
init-biases-zero-what = the biases are all 0;{" "}
init-draws-details = { $call }: { $what }{ $mismatch }.

## Linear::forward (judge.rs)

forward-no-bias-hint = the output is x·Wᵀ without the bias: add b to every row
forward-hint = y = x·Wᵀ + b: x is batch × in, W is out × in, so multiply by W's transpose (`x.dot(&self.weight.t())`) and add the bias to every row

## Linear::backward, the activations and the losses (judge.rs)

returned-input-gradient = the returned input gradient
backward-weight-only-batch = weight_grad holds only this batch's gradient: backward must ADD to it (`+=`), as loss.backward() accumulates until zero_grad
backward-bias-missing = bias_grad did not change: the bias gradient is missing (add the column sums of grad_output, `grad_output.sum_axis(Axis(0))`)
backward-bias-only-batch = bias_grad holds only this batch's gradient: backward must ADD to it (`+=`)
backward-weight-hint = dL/dW = grad_outputᵀ · x (out × in), added to weight_grad
backward-bias-hint = dL/db is the column sums of grad_output, added to bias_grad
backward-input-hint = dL/dx = grad_output · W (batch × in)
central-differences-hint = this disagrees with central differences (f(x+h) − f(x−h)) / 2h
relu-hint = relu(x) = max(x, 0), element by element
relu-backward-hint = the gradient passes where ReLU's input x > 0 and is 0 where x ≤ 0: grad_output × (x > 0)
sigmoid-hint = σ(x) = 1 / (1 + e^−x); for x < 0 use e^x / (1 + e^x) so nothing overflows
relu-backward-unchanged-hint = the gradient passed through unchanged: ReLU blocks it where x ≤ 0
relu-backward-zero-hint = where x is exactly 0 the gradient is 0 too (PyTorch's choice): test x > 0, not x ≥ 0
bce-extreme-hint = with p exactly 0 or 1, ln(0) is −∞: clamp each log at −100 as PyTorch does, max(ln p, −100)
bce-hint = −mean(y·ln p + (1 − y)·ln(1 − p)) over every element
cross-entropy-extreme-hint = e^1000 overflows to infinity: subtract each row's largest logit before exponentiating (log-sum-exp)
cross-entropy-hint = mean over rows of ln Σ e^logit − logit[label]
loss-grad-sign-hint = the gradient has the wrong sign: it points uphill (for these losses it is prediction − target, not target − prediction)
loss-grad-n-hint = the gradient is N times too large: the loss is a mean, so divide by N
cross-entropy-grad-extreme-hint = e^1000 overflows to infinity: subtract each row's largest logit before exponentiating
bce-grad-extreme-hint = with p exactly 0 or 1, p(1 − p) is 0: divide by max(p(1 − p), 1e−12)
bce-grad-hint = (p − y) / (p(1 − p)) / N, element by element
cross-entropy-grad-hint = (softmax(row) − one-hot(label)) / batch, row by row
loss-central-differences-hint = this disagrees with central differences of the loss

## The models (judge.rs)

zero-grad-reason = { $function }::zero_grad left layer{ $layer } with gradients
zero-grad-details = After `{ $function }::zero_grad`, layer{ $layer }'s weight or bias gradient is not all zeros.
zero-grad-hint = zero_grad must zero both gradients of both layers
zero-grad-linear-reason = Linear::zero_grad did not clear the gradients ({ $case })
zero-grad-linear-details = After `backward`, `Linear::zero_grad` must leave weight_grad and bias_grad all zeros, of the same shapes, and the weight and bias as they were: { $what }.
zero-grad-linear-bias = bias_grad is not all zeros (the weight gradient is)
zero-grad-linear-weight = weight_grad is not all zeros (the bias gradient is)
zero-grad-linear-both = neither gradient is all zeros
zero-grad-linear-parameters = the gradients are zero, but the weight or the bias changed
zero-grad-linear-hint = fill both gradients with 0 (`self.weight_grad.fill(0.0); self.bias_grad.fill(0.0);`) and leave the parameters alone
predict-count-reason = { $function } gave a wrong number of predictions ({ $case })
predict-count-details = `{ $function }` returned { $got } predictions for { $rows } rows: one class per row of x.
predict-wrong-reason = { $function } predicted a wrong class ({ $case })
predict-wrong-details = Row { $row }: `{ $function }` gave class { $got }, but your model's own output for that row, { $output }, says { $expected }.
predict-simple-nn-hint = SimpleNN predicts 1 where the probability model(x) is above 0.5 and 0 otherwise: `(model(x) > 0.5)`
predict-mlp-hint = the MLP predicts, for each row, the index of its largest logit (`torch.argmax(model(x), dim=1)`: across the 10 columns of a row, not down a column)
model-loss-hint = the model's loss is the mean BCE (SimpleNN) or cross-entropy (Mlp) of its output
gradient-of = the gradient of layer{ $layer }.{ $parameter }

## The optimizer and the batches (judge.rs)

adam-no-correction-hint = this is Adam without its bias correction: divide m by (1 − β1^t) and v by (1 − β2^t), with t the number of steps taken so far (1 on the first step)
adam-stuck-counter-hint = the step counter t does not advance: add 1 to t at the start of every step
adam-swapped-betas-hint = β1 and β2 are swapped: the first moment m averages with β1 = 0.9 and the second moment v (of g²) with β2 = 0.999
adam-counter-per-layer-hint = the step counter t advances once per layer, not once per step: add 1 to t once at the start of `step`, before the loop over the layers, so every tensor of one step uses the same t
adam-hint = m = β1·m + (1 − β1)·g; v = β2·v + (1 − β2)·g²; p −= lr·m̂ / (√v̂ + ε), with m and v kept per tensor between steps
sgd-hint = p −= lr · grad for every weight and bias
after-step-reason = { $reason } after step { $step }
after-step-details = After step { $step } of { $steps }: { $details }
not-a-split-reason = not a split of 0..n{ $case }
not-a-split-details = `batches({ $n }, { $size }, rng)`, call { $call }: { $why }.
not-a-split-hint = shuffle a Vec of 0..n, then cut it into chunks of batch_size (`chunks`)
not-shuffled-reason = not shuffled{ $case }
not-shuffled-details = `batches({ $n }, { $size }, rng)` keeps the order 0, 1, 2, …: a DataLoader with shuffle=True draws a new random order every epoch.
not-shuffled-hint = shuffle the indices (Fisher–Yates with the rng) before cutting them into batches
same-order-reason = the same order every epoch{ $case }
same-order-details = Two calls on the same generator gave the same order: each epoch must be shuffled anew.
same-order-hint = draw from the rng you are given (it moves on with every draw), not from a new generator with a fixed seed
order-not-reproducible-details = A generator with the same seed gave another order: the order must come only from the rng argument, so a seed gives the same run every time.
order-from-rng-hint = draw every random number from the rng argument

## An epoch and the accuracy (judge.rs)

epoch-nan-reason = NaN or infinity after batch { $batch } of { $batches }
epoch-nan-details = `{ $function }`: the loss or a parameter stopped being a number after batch { $batch } of { $batches } (the batches before it were fine).
epoch-nan-hint = check the loss and its gradient on that batch: a log of 0, a division by 0, or steps that grow without end (gradients never zeroed)
mean-loss-summed-hint = the batches' losses were summed but not divided by the number of batches
mean-loss-per-example-hint = each batch's loss is counted once per example: add model.loss once per batch, then divide by the number of batches
mean-loss-hint = add up model.loss of every batch, as it returns it, and divide by the number of batches
mean-loss-reason = wrong mean loss: { $ratio }× the expected
mean-loss-details = `{ $function }` trained right (the parameters follow the reference), but returned a mean loss of { $loss }, expected { $expected }: { $ratio }× the expected.
epoch-off-reason = parameters leave the reference after one epoch
epoch-off-details = `{ $function }` from the grader's start and batch order ends { $typical } of the way off the reference's parameters (the median hidden unit; { $all } for all of them together).{ $detail }
epoch-off-hint = for each batch: zero_grad, forward, loss, backward, optimizer step (the grader ran your loop with its own model and optimizer, so the loop is what is off)
accuracy-wrong-reason = returned { $got }, expected { $expected }
accuracy-wrong-details = `accuracy` returned { $got } on { $examples } examples; the share predicted right is { $expected }.
accuracy-wrong-hint = the share (0 to 1) of rows whose predicted class (p > 0.5 for SimpleNN, the largest logit for Mlp) equals the label
fault-no-zero-grad = gradients are never zeroed, so they pile up from batch to batch
fault-no-zero-grad-hint = call model.zero_grad() at the start of every batch
fault-step-before-backward = the optimizer steps before backward, so each step uses the previous batch's gradients
fault-step-before-backward-hint = the order is zero_grad, forward, loss, backward, step
fault-adam = Adam runs without its bias correction
fault-adam-hint = divide m by (1 − β1^t) and v by (1 − β2^t)
fault-sum-loss = the loss is summed over the batch instead of averaged
fault-sum-loss-hint = the loss (and so its gradient) is the batch's mean; the epoch's loss is the mean of the batches' losses
loop-wrong-reason = the loop is wrong: { $what }
loop-wrong-details = `{ $function }` does not follow the reference loop from the grader's start and batch order; it matches a loop in which { $what }.
forward-is-hint = forward is { $head }

## train (same_run.rs)

train-count-reason = { $got } losses for { $epochs } epochs
train-count-details = `train` returned { $got } losses; it must return one per epoch ({ $epochs }).
train-count-hint = push each epoch's mean loss
train-seed-reason = the same seed gave other numbers
train-seed-details = `train` run again with the same seed gave a first-epoch loss of { $again }, not { $first }: a seed must give the same numbers every time.
train-seed-hint = draw every random number (the batches of every epoch) from the rng argument
train-written-out = for each epoch, `batches(n, batch_size, rng)` then `train_epoch` on that order
train-idle-reason = depends on batches and train_epoch, which do not train yet
train-idle-details = `train` is graded by what { $written_out } gives from the same start and seed, and that left every parameter where it was: this item can only show your loop over epochs once `batches` and `train_epoch` train.
train-idle-hint = make the `batches` and `train_epoch` items pass first
train-different-reason = the epochs differ from batches + train_epoch per epoch
train-different-details = `train` should give what { $written_out } gives, with the same model, optimizer and rng; { $how }.
train-different-hint = make a fresh order with batches(n, batch_size, rng) at the start of every epoch (not once), pass the same optimizer to every train_epoch, and run exactly `epochs` epochs
train-loss-reason = epoch { $epoch }'s loss is { $got }, expected { $expected }
train-loss-details = `train` trained right but returned { $got } for epoch { $epoch }; train_epoch returned { $expected } for it. All of them: { $all }.
train-loss-hint = push the loss each train_epoch returns, in order
train-right = { $epochs } epochs of fresh batches through train_epoch, the same again from the same seed; loss { $first } → { $last }, { $accuracy }% right on { $held_out } held-out examples

## train_on's two branches (same_run.rs)

same-run-shapes = the layers came back with other shapes
same-run-differ = the parameters differ
same-run-distance = the parameters end { $distance } away from where that run left them, as a share of how far that run moved them (the median hidden unit)
fallback-path = `train_epoch(model, &mut Sgd {"{"} lr: { $lr } {"}"}, …)` gives
fallback-pieces = `train_epoch` and `Sgd::step`
fallback-first = make the `train_epoch` and `sgd` items pass first
fallback-reason = the CPU branch does not train as train_epoch with Sgd does
fallback-hint = on Device::Cpu, return crate::train_epoch(model, &mut Sgd {"{"} lr {"}"}, x, labels, batches): no GPU, the same batches and learning rate
place-cpu = on the CPU
train-on-gpu-path = `GpuModel::to_device`, `to_device`, a `DeviceDataLoader`, `train_epoch_gpu` and `GpuModel::to_host` give
train-on-gpu-first = make the `gpu_epoch_simple_nn` and `gpu_epoch_mlp` items pass first
train-on-gpu-reason = the GPU branch does not train as train_epoch_gpu does
train-on-gpu-hint = in the Device::Gpu branch: the model and the data to the GPU, a loader over the same batches, train_epoch_gpu with the same lr, then to_host into the model
place-gpu = on the GPU
branch-idle-reason = depends on { $pieces }, which do not train yet
branch-idle-details = `{ $call }` is graded by what { $path } from the same start, and that left every parameter where it was: this item can only show your branch once { $pieces } train.
branch-different-details = `{ $call }` should give what { $path } from the same start; { $how }.
branch-loss-reason = returned a loss of { $loss }, expected { $expected }
branch-loss-details = `{ $call }` trained right but returned a loss of { $loss }; `{ $returns }` returned { $expected }.
branch-loss-hint = return the mean loss { $returns } returns
branch-right = { $place }, what { $path } ({ $batches } batches, mean loss { $loss })

## The batches' partition (reference.rs)

partition-size = batch { $batch } has { $len } examples; every batch but the last must have { $size }, and the last between 1 and { $size }
partition-out-of-range = batch { $batch } holds index { $index }, but there are only { $n } examples
partition-twice = index { $index } appears twice (again in batch { $batch })
partition-missing = index { $index } is in no batch: every example must be used once per epoch

## The GPU items, the supervisor's side (gpu_judge.rs)

untraced-note = {" "}(The grader could not trace this GPU's calls, so it did not count launches or see where values came from; the emulator checks that too.)
transfer-layers-reason = { $model }: { $count } layers came back, expected 2
transfer-layers-details = `to_host` gave back { $count } layers of the { $model }; it has two.
transfer-layers-hint = copy both layers back, in order
transfer-shape-reason = { $model }: { $name } came back { $got }, expected { $expected }
transfer-shape-details = After `GpuModel::to_device` and `to_host`, the { $model }'s { $name } has shape { $got }; it went to the GPU as { $expected }.
transfer-shape-hint = copy every tensor whole, and keep the layer's shape (outputs × inputs)
transfer-value-reason = { $model }: { $name } changed on the way: [{ $i }, { $j }] is { $got }, expected { $expected }
transfer-value-details = After `GpuModel::to_device` and `to_host`, the { $model }'s { $name }[{ $i }, { $j }] is { $got }; it went to the GPU as { $expected }. A round trip must give back every value bit for bit.
transfer-grad-hint = copy the gradients too (`model.to(device)` moves every tensor of the layer), both ways
transfer-value-hint = copy each tensor to its own buffer and back in the same row-major order
transfer-not-back-reason = { $model }: { $missing } values never came back from the GPU
transfer-not-back-details = `to_host` returned the { $model }'s values, but { $missing } of them were never copied back from the GPU: they come from a copy kept on the host.
transfer-not-back-hint = `to_host` must read each tensor back from the device (`stream.clone_dtoh(&slice)`), so that it returns what the GPU computed
transfer-right = SimpleNN and Mlp went to the GPU and came back bit for bit, read back from device memory
loader-count-reason = { $got } batches, expected { $expected }{ $case }
loader-count-details = The `DeviceDataLoader` (its `next`) yielded { $got } batches{ $case }; it was given { $expected } (the grader's batch order).
loader-count-hint = yield one batch per list of indices, in the order given
loader-shape-reason = batch { $batch } is { $got }, expected { $expected }{ $case }
loader-shape-details = Batch { $batch } of the `DeviceDataLoader`{ $case } holds { $rows }×{ $cols } values; it has { $examples } examples of { $inputs } inputs.
loader-shape-hint = a batch's `x` is len × cols, row-major, and `len` is the number of indices in the batch
loader-row-reason = batch { $batch }, row { $row } is not example { $index }{ $case }
loader-row-details = Row { $row } of batch { $batch } of the `DeviceDataLoader`{ $case } should be example { $index } of the dataset (the batch's index { $row }), but it holds other values.
loader-row-hint = row r of a batch is the dataset's row `batch[r]`: gather rows by the batch's indices, in their order
loader-labels-reason = batch { $batch }: wrong labels from row { $row }{ $case }
loader-labels-details = The labels of batch { $batch } of the `DeviceDataLoader`{ $case } differ from row { $row }: expected { $expected }, got { $got }.
loader-labels-hint = gather the labels with the same indices as the rows
loader-right = every batch of { $cases } cases arrived on the GPU with the right rows and labels
on-device-details = `{ $function }`: { $what }
on-device-hint = the step must run on the GPU: products with cuBLAS on the device buffers, everything else in your kernels, and nothing copied to or from the host inside `GpuModel::train_step`
moved-reason = parameters moved between host and GPU during the epoch
moved-details = during one epoch of { $batches } batches, { $uploaded } bytes were copied to the GPU and { $copied_back } bytes back to the host; the batches themselves are { $batch_bytes } bytes, and nothing needs to come back but the loss. The parameters went through the host.
host-computed-reason = parameters were computed on the host
host-computed-details = { $uploaded } of the { $changed } parameters the epoch changed hold values that were copied up from the host during the epoch: they were computed on the CPU, not the GPU.
not-from-the-data-reason = the GPU did not train these parameters from the data
not-from-the-data-details = `{ $function }` returned the right parameters, but when the grader ran the epoch's device work again with other values in the inputs, { $why } Parameters trained on the CPU and only passed through the GPU stay the same when the inputs change; parameters trained on the device from the data follow them.
not-from-the-data-hint = train on the GPU: each step's products with cuBLAS and the rest in your kernels, on the batches the loader gathered on the device
epoch-replay-differs = the parameters did not follow them: they ended far from where training on those values takes them.
epoch-replay-faulted = a kernel crashed: does one of your kernels read an index or a length from the input values?
not-back-reason = { $missing } values never came back from the GPU
epoch-not-back-details = { $missing } of the values `to_host` returned after the epoch were never copied back from the GPU: they come from a copy kept on the host.
epoch-not-back-hint = train the parameters on the GPU and read them back with `stream.clone_dtoh`
few-blas-reason = { $blas } cuBLAS calls for { $batches } batches
few-blas-details = one epoch of { $batches } batches made { $blas } cuBLAS calls and { $launches } kernel launches. Each step's matrix products must go through cuBLAS (`blas.gemm`) on the GPU.
few-launches-reason = { $launches } kernel launches for { $batches } batches
few-launches-details = one epoch of { $batches } batches launched { $launches } kernels. The bias, activations, loss gradient and update belong in your own CUDA kernels.
branch-not-gpu-reason = the GPU branch made { $blas } cuBLAS calls and { $launches } launches for { $batches } batches
branch-not-gpu-details = `train_on` with `Device::Gpu` trained { $batches } batches with { $blas } cuBLAS calls and { $launches } kernel launches: it did not train on the GPU.
branch-not-gpu-hint = in the `Device::Gpu` branch, move the model and the data to the GPU and call `train_epoch_gpu` with a `DeviceDataLoader`
branch-not-back-details = After `train_on` with `Device::Gpu`, { $missing } of the model's values were never copied back from the GPU: the model still holds the parameters from before the epoch.
branch-not-back-hint = end the GPU branch with `GpuModel::to_host` into `model`
timer-loss-reason = the timed epoch's loss is { $loss }, expected { $expected }
timer-loss-details = `{ $function }` returned a mean loss of { $loss } for one epoch of { $examples } examples from the grader's parameters; the epoch's mean loss is { $expected }. The timed epoch must train (and return its loss) like `train_epoch_gpu`.
timer-work = your epoch
timer-size = one epoch of { $examples } examples
speed-wrong-reason = a timed epoch gave a wrong loss, so its speed does not count
speed-wrong-details = A timed epoch of `{ $function }` on the 784→{ $hidden }→10 MLP returned a mean loss of { $loss }; the grader's CPU epoch from the same start gives { $expected }. Only a correct epoch earns speed points.
speedup-reason = { $speedup }× the CPU
speedup-details = One SGD epoch of the 784→{ $hidden }→10 MLP on { $examples } digits in batches of { $batch } through `{ $function }` (model and data already on the GPU) runs { $speedup }× as fast as the grader's CPU epoch (ndarray, one thread), median of { $samples } paired samples timed by the grader's clock with the GPU drained before and after. If this is low, keep everything on the GPU between steps: no copies back, no synchronize inside the loop.

## The GPU items, the worker's side (gpu.rs)

gpu-unexpected-report = the GPU epoch sent an unexpected report
gpu-setup-failed = the grader's GPU set-up failed: { $error }
gpu-error-after = the GPU reported an error after `{ $function }` ran: { $error }. A kernel that reads or writes outside a buffer makes every later GPU call fail; synchronize and check the result in your function to see the error there
timing-event-missing = a timing event is missing
timed-call-not-marked = the harness did not mark the timed call

## Reading MNIST's IDX files (data.rs)

idx-io = { $path }: cannot read the file: { $error }: check the path
idx-short-header = { $path }: the file ends at byte { $len }, inside its { $header }-byte header: the download is incomplete
idx-magic = { $path }: byte { $offset } is 0x{ $found }, not 0x00: an IDX file starts with two zero bytes; is this an MNIST IDX file (a .gz file must be unzipped first)?
idx-data-type = { $path }: byte 2: the data type is 0x{ $found }, not 0x08 (unsigned bytes): is this an MNIST IDX file?
idx-dimensions-images = { $path }: byte 3: the number of dimensions is { $found }, not { $expected }: is this an MNIST images file (images have 3 dimensions, labels 1)?
idx-dimensions-labels = { $path }: byte 3: the number of dimensions is { $found }, not { $expected }: is this an MNIST labels file (images have 3 dimensions, labels 1)?
idx-truncated = { $path }: the file ends at byte { $len } but its header promises { $promised } bytes: the download is incomplete
idx-extra-bytes = { $path }: byte { $promised }: the header describes { $promised } bytes but the file goes on to byte { $len }: is this the right file, or a corrupted one?
idx-label = { $path }: byte { $offset }: label { $label } is not a digit 0-9: is this an MNIST labels file?
idx-count-mismatch = { $images } (byte 4) holds { $image_count } images but { $labels } (byte 4) holds { $label_count } labels: use the images and labels of the same split (train or t10k)

## The harness (the lab's tests/grade.rs)

layers-mut-two = { $model }::layers_mut must return the model's two layers, in order
forward-shape = { $model }::forward returned a { $rows }×{ $cols } output for a batch of { $batch }: it must be { $batch }×{ $classes } (one row per example)

## GPU epoch: what the grader measured on the device (gpu_judge/epoch.rs)

gpu-epoch-nan-reason = NaN or infinity after the GPU epoch
gpu-epoch-nan-details = `{ $function }` on the GPU returned a mean loss of { $loss } and parameters of which some are not numbers.
gpu-epoch-nan-hint = check the kernels for a log of 0 (clamp it at -100), a division by 0, or a read past the end of a buffer (every kernel skips the threads with i >= n)
gpu-loss-details = `{ $function }` trained right on the GPU (the parameters follow the reference), but returned a mean loss of { $loss }, expected { $expected }: { $ratio }× the expected.
gpu-loss-summed-hint = the batches' losses were summed on the device but not divided by the number of batches: copy loss_sum back once at the end and divide by the count
gpu-loss-per-row-hint = each row's thread must add row_loss / N to loss_sum (the batch's mean), not row_loss
gpu-loss-hint = each step adds its batch's mean loss to the one f32 loss_sum on the GPU; at the end copy it back once and divide by the number of batches
gpu-epoch-off-reason = on the GPU, { $name } moved wrong
gpu-epoch-off-details = `{ $function }` from the grader's start and batch order ends { $typical } of the way off the reference's parameters (the median hidden unit; { $all } for all of them together).{ $measured }
gpu-measured = {" "}Measured on the device, { $over }: { $name } ended { $off } of its movement off the reference's, having moved { $scale }× as far along it.
gpu-over-epoch = over the whole epoch
gpu-over-batch = on batch { $batch } of { $batches } alone (the first where the GPU's step differs from your CPU epoch's, train_epoch with Sgd, from the same parameters)
gpu-some-parameter = a parameter
gpu-epoch-off-hint = the GPU step is the model here: check each kernel and cuBLAS product of train_step against the module's notes
gpu-hint-per-row = every parameter stepped { $rows }× too far (the batch's rows): the loss kernel's gradient must be divided by the batch's rows, (p − y) / N
gpu-hint-left-over = the step on batch { $batch } depends on the batches before it: zero the four gradients at the start of every train_step (stream.memset_zeros), and let no kernel add onto a buffer the step before filled
gpu-hint-bias = check the kernels that read and write { $name }: the bias is added by column (bias[i % cols], i = row × cols + col), and its gradient is the column sums of the output's gradient, one thread per column
gpu-hint-weight = check the cuBLAS products that use and compute { $name } (m, n, k, the leading dimensions, the transposes, beta) against the module's notes, and the kernels that feed them
gpu-per-row-reason = on the GPU, every step is { $rows }× too large
gpu-left-over-reason = on the GPU, the step on batch { $batch } depends on the batches before it
epoch-fails-reason = not charged here: train_epoch_gpu fails on its own
epoch-fails-details = `{ $function }` returned an error on the GPU ({ $error }). `train_epoch_gpu`, which it runs, fails on its own in a fresh process too ({ $own }); that mistake is charged by the GPU epoch items (gpu_epoch_simple_nn, gpu_epoch_mlp), once. This item is checked once the epoch runs.
