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
