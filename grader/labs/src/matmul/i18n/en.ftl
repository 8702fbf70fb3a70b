# The matmul lab's student-facing messages, in English.

## Single products (judge.rs, kinds.rs)

case-on = {" "}on case { $case } of { $total } (A is { $m }×{ $k }, B is { $k }×{ $n })
case = case { $case } of { $total } (A is { $m }×{ $k }, B is { $k }×{ $n })
no-gpu-work-reason = no work on the GPU: no kernel launch, no cuBLAS call
no-gpu-work-details = `{ $function }` returned right results but launched no kernel and made no cuBLAS call: it computed on the CPU. Do the multiplication on the GPU (launch your kernel on the stream, or call cuBLAS).
all-right-reason = all { $total } cases right
all-right-details = `{ $function }` is right on all { $total } cases: { $shapes }.
wrong-details = `{ $function }` is wrong on { $case }: { $summary }.
wrong-everywhere = It is wrong on every case that returned.
right-on = Right on { $right } of { $total } cases: { $shapes }.
wrong-reason = wrong result on { $case }
dim-m = m (rows of A)
dim-k = k (columns of A)
dim-n = n (columns of B)
size-pattern = the result is right only when { $dim } is a multiple of { $block }: the rows or columns left over after the last full block of { $block } are not computed. End each block at min(start + { $block }, size), or handle the leftover separately
cpu-timer-passed-reason = times exactly the work
cpu-timer-passed-details = `{ $function }`: { $line }.
cpu-timer-failed-details =
    { $what }.
    Hint: { $hint }.
cpu-speedup-measured = { $speedup }× the grader's naive triple loop at { $m }×{ $k }×{ $n } (median of { $samples } paired samples: baseline { $baseline } ms, yours { $yours } ms, the median of as many runs on new matrices as fit in one baseline run; timed by the grader from outside your program, less { $overhead } ms per run for handing the matrices over)
cpu-speedup-reason = { $speedup }× faster than naive
cpu-speedup-tier = `{ $function }` runs { $measured }: tier { $tier } of { $tiers_count } (tiers: { $tiers }).
cpu-speedup-below-reason = { $speedup }×: below the first tier ({ $first }×)
cpu-speedup-below-details = `{ $function }` runs { $measured }, below the first tier (tiers: { $tiers }). Hint: iterate so the innermost loop walks along rows of B and C (i, k, j order), work on contiguous slices, or split rows across threads.

## The GPU timer's worker side (gpu.rs, batched.rs)

gpu-setup-failed = the grader's GPU set-up failed: { $error }
gpu-error-after = the GPU reported an error after `{ $function }` ran: { $error }. A kernel that reads or writes outside a buffer makes every later GPU call fail; synchronize and check the result in your function to see the error there

## Batched products (batched.rs, batched_judge.rs)

batch-case = case { $case } of { $total } (a batch of { $batch }: A[b] is { $m }×{ $k }, B[b] is { $k }×{ $n })
batch-case-on = {" "}on { $case }
batch-swapped = each matrix has its rows and columns swapped: C[b] must be m×n (rows of A[b] × columns of B[b])
batch-size-from = A is { $batch }×{ $m }×{ $k } and B is { $batch }×{ $k }×{ $n }, so C must be { $batch }×{ $m }×{ $n }: size C from a.dim() and b.dim() (batch, then rows of A, then columns of B)
batch-shape-wrong = C has shape { $gb }×{ $gm }×{ $gn } but should be { $batch }×{ $m }×{ $n } (batch × m × n)
batch-freivalds = C[b]·x differs from A[b]·(B[b]·x) for a random vector x (Freivalds' check of every row), so some elements of C[b] are wrong
batch-in = in batch { $z } of 0..{ $batch }, { $summary }
batch-more = and { $count } more
batch-zeros-one = batch { $which } of 0..{ $batch } is all zeros while the others are right: batch { $which } was never computed. Make your loop or grid cover every matrix of the batch: b in 0..batch on the CPU; on the GPU a grid whose z size is the batch, and a kernel guard of `z < batch`
batch-zeros-many = batches { $which } of 0..{ $batch } are all zeros while the others are right: batches { $which } were never computed. Make your loop or grid cover every matrix of the batch: b in 0..batch on the CPU; on the GPU a grid whose z size is the batch, and a kernel guard of `z < batch`
batch-stride = batch 0 is right and every later batch is wrong: the offset of batch b is off (a wrong batch stride). Matrix b starts b·m·k numbers into A, b·k·n into B and b·m·n into C: one whole matrix per batch, not one row
batch-all-zeros = every matrix of C is all zeros: the result is never written, or it is written to a copy that is not returned
batch-stops-early = batches 0..{ $first } are right and batches { $first }..{ $batch } are wrong: the loop or the grid stops before the end of the batch
batch-no-gpu-work-details = `{ $function }` returned right results but launched no kernel and made no cuBLAS call: it computed on the CPU. Do the batch on the GPU (one launch over a 3-D grid, or one strided-batched cuBLAS call).
batch-all-right-details = `{ $function }` is right on every matrix of all { $total } cases: { $shapes }.
batch-wrong-in-reason = wrong result in batch { $z } of { $case }
batch-wrong-shape-reason = wrong shape on { $case }
batch-calls-note = Note: `{ $function }` made { $launches } kernel launches and { $blas } cuBLAS calls for { $batches } batches of { $matrices } matrices in all: one call per matrix. One launch over a 3-D grid (blockIdx.z picks the matrix) or one strided-batched cuBLAS call per batch is what makes a batch fast on a GPU.
batch-calls-reason = right, but one call per matrix instead of one for the batch
batch-calls-graded = The documentation of this function asks for one call for the whole batch, never one per matrix. The emulator cannot measure a batch's speed, so here that rule is graded by counting the calls: it costs { $lost } of the { $points } points. (On a real GPU the batched speed item measures it instead.)
batch-timer-wrong-details = `{ $function }` did not leave C[b] = A[b]·B[b] in C for the batch of { $batch } products of { $m }×{ $k }·{ $k }×{ $n }: { $summary }.
batch-timer-wrong-reason = C[{ $z }] is not A[{ $z }]·B[{ $z }] after the timed call
batch-timer-shape-reason = C has the wrong shape after the timed call
batch-timer-work = your batched multiplication
batch-timer-size = { $batch } products of { $m }×{ $k }·{ $k }×{ $n }
batch-speed-wrong-reason = a timed run gave a wrong result, so its speed does not count
batch-speed-wrong-details = Timed run { $run } of `{ $function }` ({ $batch } products of { $m }×{ $k }·{ $k }×{ $n }) gave a wrong result: { $summary }. Only a correct batch earns speed points.
batch-speedup-reason = { $speedup }× the loop of single products
batch-speedup-details = A batch of { $batch } products of { $m }×{ $k }·{ $k }×{ $n } through `{ $function }` (operands already on the GPU) runs { $speedup }× as fast as the grader's loop of { $batch } single cuBLAS products (median of { $samples } paired runs, the grader's clock with the GPU drained before and after; tiers: { $tiers }). If this is low, do the whole batch in one launch (a 3-D grid) or one strided-batched cuBLAS call, and compile your kernel once rather than on every call.

## The speed chart's lines (chart.rs)

chart-line-yours = your { $function }
chart-line-naive = the grader's naive triple loop
chart-line-yours-gpu = your { $function } (GPU)
chart-line-ndarray = ndarray's product (CPU)
not-from-a-and-b-reason = the GPU did not compute these products from A and B
not-from-a-and-b-details = `{ $function }` returned right products, but when the grader ran the device work of { $case } again with other values in A, { $why } A product computed on the CPU and only passed through the GPU stays the same when A changes; one computed on the device from A and B follows A. Compute the product on the device: each thread's loop over k in your kernel, or one cuBLAS call.
replay-differs = the device's result did not follow them ({ $summary }).
replay-faulted = a kernel crashed: does one of your kernels read an index or a length from the values of A?
too-little-work-reason = the GPU did far too little arithmetic for these products
too-little-work-details = `{ $function }` returned right products, but the device did far less work than they need: { $needed } multiply-adds over the cases, while its kernels read { $read } values and cuBLAS did { $blas } multiply-adds. A kernel reads its operands for every multiply-add (or a few per register tile); a result computed on the CPU and only passed through the GPU reads one value per element. Compute the product on the device: each thread's loop over k in your kernel, or one cuBLAS call.
coverage-launch = your launch of `{ $kernel }` ran { $gx }×{ $gy } blocks of { $bx }×{ $by } threads, and C is right exactly on the top-left { $rows }×{ $cols } of its { $m }×{ $n } that they reach: { $what }. { $cause }
coverage-short-x = { $threads } threads along x for C's { $n } columns
coverage-short-y = { $threads } threads along y for C's { $m } rows
coverage-too-small = The grid is too small: size it from C, grid_dim = (n.div_ceil(blockDim.x), m.div_ceil(blockDim.y), 1), rounding up, and keep the kernel's `if (row < m && col < n)` guard for the threads past the edge
coverage-turned = The grid is sized for C on its side (x from m = { $m } rows, y from n = { $n } columns); x runs over C's columns: grid_dim = (n.div_ceil(blockDim.x), m.div_ceil(blockDim.y), 1)
coverage-swapped-what = the threads along x reached rows and those along y reached columns
coverage-swapped = So the kernel takes its row from x and its column from y, while the grid puts C's columns along x: use col = blockIdx.x * blockDim.x + threadIdx.x and row = blockIdx.y * blockDim.y + threadIdx.y
