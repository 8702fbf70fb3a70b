# The training lab's student-facing messages, in English. Only part of the lab's messages are
# here yet: the rest of its judges still write English (see the i18n test's scope).

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
backward-right = input gradient right and weight and bias gradients accumulated on all { $cases } cases, also against central differences
loss-right = right on all { $cases } cases, extreme values included
loss-grads-right = right on all { $cases } cases, extreme values included, also against central differences
model-composes = forward, loss, backward and zero_grad compose your own layers, activations and losses the right way on all { $cases } cases (on { $composed } of them those pieces give other values than the reference: their own items charge for that, this one does not)
model-right = forward, loss, backward (every parameter's gradient) and zero_grad right on all { $cases } cases
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

zero-grad-reason = zero_grad left layer{ $layer } with gradients
zero-grad-details = After zero_grad, layer{ $layer }'s weight or bias gradient is not all zeros.
zero-grad-hint = zero_grad must zero both gradients of both layers
model-loss-hint = the model's loss is the mean BCE (SimpleNN) or cross-entropy (Mlp) of its output
gradient-of = the gradient of layer{ $layer }.{ $parameter }

## The optimizer and the batches (judge.rs)

adam-no-correction-hint = this is Adam without its bias correction: divide m by (1 − β1^t) and v by (1 − β2^t), with t the number of steps taken so far (1 on the first step)
adam-stuck-counter-hint = the step counter t does not advance: add 1 to t at the start of every step
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
