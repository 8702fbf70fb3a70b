# The engine's student-facing messages, in English.

## Items not graded here (src/check/gpu.rs)

not-graded-prefix = Not graded:{" "}
skipped-reason = skipped: { $reason }
skipped-details = Not graded: { $reason }.

## Whole submissions (src/check/mod.rs): not compiled, refused, not taken

hint-line = Hint: { $hint }.
not-compiled-reason = does not compile: { $error }
not-compiled-dependency-reason = does not compile: `{ $name }` is not one of this lab's dependencies
not-compiled-dependency-hint = Hint: `{ $name }` is not one of this lab's dependencies. Official grading builds with the lab's own Cargo.toml, so your code cannot use it there: remove it from Cargo.toml and write the code with what the lab provides.
not-compiled-outside-reason = does not compile: it reads a file outside the crate at compile time
not-compiled-harness-hint = Hint: the error is in the grader's harness, which calls your functions by the names and types the template gives them: keep each `pub fn` name and signature exactly as in the template.
not-compiled-details =
    The code does not compile, so nothing could be graded. Fix this first (run `cargo build` to see every error):
    { $error }{ $hint }
refused-reason = refused: `{ $construct }` at { $file }:{ $line }
refused-details = { $file }:{ $line }: `{ $construct }` is not allowed in a lab: { $why }. Nothing was graded; remove it and run `cargo test` again.
not-taken-reason = refused: `{ $path }` is not a file grading takes
not-taken-details = { $refusal }. Nothing was graded; fix that in your repository and submit again.

## One item (src/check/mod.rs): forbidden and required names, panics, deaths

forbidden-reason = `{ $function }` uses `{ $name }`, which this item does not allow
forbidden-details = { $file }:{ $line }: `{ $name }` is used by `{ $function }` (or by code it calls). This item grades your own implementation, so { $forbidden } is off limits here: write the loops yourself.
missing-reason = `{ $function }` must use `{ $missing }`
missing-details = No `{ $missing }` in your sources: `{ $function }` is graded as the version that uses it ({ $required }).
gpu-unavailable = could not use the GPU on this machine ({ $why })
died-reason = `{ $function }` { $death }
died-details = `{ $function }` { $death }.
last-output = Last output:
todo-prefix = not implemented yet
todo-reason = not implemented yet: `{ $function }` still has its todo!()
todo-details = `{ $function }` is not implemented yet (it reached todo!(){ $at }). Replace the todo!() with your code, then run `cargo test` again.
panic-at = {" "}at { $location }
panic-hint-bounds = {" "}Hint: an index went past the end of an array; check each loop's upper bound against a.nrows(), a.ncols() and b.ncols().
panic-hint-overflow = {" "}Hint: an integer overflowed; check index arithmetic.
panic-hint-cuda = {" "}Hint: CPU items run with no GPU visible, so this function must compute on the CPU (the GPU functions are graded by items of their own).
panicked-reason = `{ $function }` panicked{ $case }
panicked-details = `{ $function }` panicked{ $case }{ $at }: { $message }.{ $hint }
speed-wrong-shape = it returned a matrix of the wrong shape (A·B is { $m }×{ $n })
speed-contended-reason = not measured reliably: other programs were using this machine
speed-contended-details = Other programs used { $least } to { $most } of this machine's { $cores } cores while your code was being timed, in each of { $rounds } tries, so the speed measured would have been theirs as much as yours. This item is not graded on such a run: grade it again when the machine is quiet (close other heavy programs; on a shared machine, ask whoever runs the grader).
speed-busy-note = Measured while other programs used { $least } to { $most } of this machine's { $cores } cores, in each of { $rounds } tries: on a quiet machine your code may reach a higher tier. Grade it again when the machine is quiet (close other heavy programs; on a shared machine, ask whoever runs the grader).
speed-wrong-reason = wrong result, so its speed does not count
speed-wrong-details = `{ $function }` gives a wrong result at { $m }×{ $k }×{ $n }: { $summary }. Only a correct product earns speed points.
timed-wrong-reason = wrong result on timed run { $run }
timed-wrong-details = `{ $function }` gave a wrong result on timed run { $run } (each run multiplies new matrices, and every result is checked): only correct results earn speed points.

## How a worker died (src/supervisor.rs)

timed-out-marker = did not finish within
died-timed-out = did not finish within { $secs } s and was stopped: look for a loop that never ends (a counter that is never increased, a wrong loop condition)
died-stack = overflowed the stack: a function that calls itself without stopping, or a very large array on the stack (use a Vec or Array2 instead)
died-segfault = crashed with a segmentation fault (invalid memory access): check `unsafe` code and raw pointers
died-abort = aborted (a panic while panicking, a failed allocation or an explicit `process::abort`)
died-fpe = crashed with an arithmetic error (SIGFPE)
died-killed = was killed (SIGKILL): it may have run out of memory
died-file-size = wrote more than { $mib } MiB to one file (or printed that much) and was stopped (SIGXFSZ): look for output inside a loop
died-signal = was killed by signal { $signal }
died-memory = ran out of memory: it asked for more than the { $gib } GiB a graded function may use (look for a Vec or matrix that grows in a loop, or one far larger than the inputs)
died-tampered = wrote the grader's result file itself, which is tampering with grading: the item scores 0
died-disk = wrote more than { $gib } GiB (or more than { $files } files) to disk and was stopped: a graded function has no reason to write files; look for a write inside a loop
died-processes = started more than { $processes } processes and was stopped: a graded function has no reason to start processes
died-exited = ended the program (exit code { $code }) before the grader got its result: do not call `std::process::exit` in lab code

## GPU items (src/check/gpu.rs)

judge-panicked-reason = the grader could not judge this item (a bug in the grader: please report it)
judge-panicked-details = The grader ran `{ $function }` but could not judge what it returned: its own check failed ({ $message }). This is a bug in the grader, not necessarily in your code: please report it with this message and the seed. The other items are graded as usual.
report-unfit-reason = what your code's process sent back does not fit this item
report-unfit-details = The grader ran `{ $function }`, but the report from the process that ran your code does not fit this item ({ $message }). Code that writes to the grader's files or memory does this; if yours does not, it is a bug in the grader: please report it with this message and the seed. The other items are graded as usual.
too-large-reason = `{ $function }` returned far larger results than this item asks for
too-large-details = `{ $function }` returned results that come to more than { $size } MiB, but a right answer to every case of this item comes to at most { $bound } MiB, so they were not checked. Check the shape of what it returns against the one the exercise describes (a product of an m×k matrix by a k×n matrix is m×n).
untrusted-claim-reason = the grader cannot trust this report
counts-missing = could not count what your code did on the GPU (its report came without the counts the grader set up)
untrusted-claim-details = The process that ran `{ $function }` reported that the grader { $could_not }. Whether an item is graded is decided by the grader from what it set up itself, never from a report of the process that runs your code, so this item counts as failed and stays in the maximum. If your code did nothing unusual, this is not a problem in your code: tell whoever runs the grader.
needs-real-gpu = needs a real GPU (an emulator's speed says nothing about a GPU's)
race-reason = { $what } (found by the emulator's race check)
race-details =
    `{ $function }`: the GPU emulator found that { $report }
    On a GPU the threads of a kernel run at the same time, so a race gives wrong results some of the time even when it happened to give the right ones here: the item earns no correctness points until the race is gone.
gpu-hint-bounds = a thread read or wrote outside a buffer. Threads of the last blocks fall outside C when m or n is not a multiple of the block size: guard the kernel body with `if (row < m && col < n)`
gpu-hint-compile = the kernel did not compile: read the compiler's message above (line numbers are in your kernel's source string)
gpu-hint-launch = the launch configuration is not allowed: at most 1024 threads per block and 48 KiB of shared memory
gpu-hint-other = read the error above: it names the CUDA call that failed
gpu-hint-cublas = the cuBLAS call, not a kernel of yours, went wrong: its message above names the operand. cuBLAS reads matrices column by column, so row-major A·B is computed as Cᵀ = Bᵀ·Aᵀ: pass B first and A second, with m and n swapped (m = n, n = m), lda = n, ldb = k and ldc = n. An operand outside its buffer usually means m and n (or an operand's sizes) are swapped; a leading dimension refused is smaller than that operand's rows in column-major order
gpu-error-details = `{ $function }` returned an error{ $case }: { $error }
emulator-reported =
    The GPU emulator reported:
    { $notes }
gpu-error-compile-reason = the kernel does not compile: { $line }
gpu-error-reason = error on the GPU: { $first }
timer-not-product-details = `{ $function }` did not leave A·B in C ({ $m }×{ $k }×{ $n }): { $summary }.
timer-not-product-reason = C is not A·B after the timed call
timer-your-multiplication = your multiplication
timer-passed-reason = synchronizes before and after
timer-passed-details = `{ $function }` measured { $reported } ms for { $device } ms of GPU work ({ $size }), with { $queued } ms of earlier work queued: it waits for the GPU on both sides.
timer-too-long-reason = the time reported is longer than the whole call
timer-too-long-details = `{ $function }` reported { $reported } ms, but the whole call took { $outer } ms by the grader's clock outside your program. Report only what your clock measured (start it right before the work, read it right after).
timer-measured = your clock read { $reported } ms; the GPU spent { $device } ms on { $work }, after { $queued } ms of work the grader had queued just before the call
timer-stopped-early-reason = the clock stopped before the GPU finished
timer-stopped-early-details = { $measured }. The clock stopped before the GPU finished: a launch returns at once, so call `stream.synchronize()` after launching and before reading the clock. If you already do, check that the clock times the launch whose C you return, not a small warm-up launch before it.
timer-unit-slip-reason = the time reported is about a thousand times the GPU's time
timer-unit-slip-details = `{ $function }` reported { $reported } ms, while the GPU spent { $device } ms on { $work }: { $ratio } times as much. That is a unit slip: seconds used as milliseconds, or a count of milliseconds passed where seconds are expected (as in `Duration::from_secs_f64(elapsed_ms)`). Return the `Duration` your clock measured, `start.elapsed()`, unchanged.
timer-started-late-reason = the clock started before earlier GPU work finished
timer-started-late-details = { $measured }. The clock started before earlier GPU work finished, so it timed that work too: call `stream.synchronize()` before starting the clock.
freivalds-summary = C·x differs from A·(B·x) for a random vector x (Freivalds' check of every row), so some elements of C are wrong
gpu-speedup-reason = { $speedup }× the CPU
gpu-speedup-details = One multiplication on the GPU through `{ $function }` (operands already on the GPU, as the lesson times it) runs { $speedup }× as fast as ndarray's CPU product at { $m }×{ $k }×{ $n } (median of { $samples } paired samples, the grader's clock with its own synchronizes). If this is low, compile your kernel once rather than on every call.
device-no-library = with no CUDA library installed
device-no-gpu = with a CUDA driver but no GPU
device-with-gpu = with a GPU
device-gpu-present = with a GPU present
device-the-gpu = the GPU
device-the-cpu = the CPU
device-checked-no-library = no CUDA library → CPU
device-checked-no-gpu = driver without a GPU → CPU
device-checked-gpu = GPU present → GPU
device-no-way = no way to show a machine with and without a GPU here
device-passed-reason = chooses right with and without a GPU
device-passed-details = `{ $function }`: { $checked }.
device-context-reason = { $situation }: { $reason }
device-context-details =
    { $situation }: { $details }
    Hint: check `cudarc::driver::sys::is_culib_present()` before creating a context, and treat an error from `CudaContext::new(0)` as "no GPU".
device-wrong-reason = { $situation }, it chose { $chose }
device-wrong-details = `{ $function }` chose { $chose } { $situation }.
bench-cpu-reason = the CPU time is not a measurement
bench-cpu-details = `{ $function }` returned a CPU time of { $time } ms for a call that took { $outer } ms.
bench-no-gpu-reason = no GPU time although a GPU is present
bench-no-gpu-details = `{ $function }` returned no GPU time, but a GPU ({ $backend }) was available.
bench-gpu-reason = the GPU time is not a measurement
bench-gpu-details = `{ $function }` returned a GPU time of { $time } ms for a call that took { $outer } ms.
bench-gpu-part = , GPU { $time } ms
bench-passed-reason = times both sides
bench-passed-details = `{ $function }` measured CPU { $time } ms{ $gpu }.
bench-timer-fails-reason = not charged here: { $timer } fails on its own
bench-timer-fails-details = `{ $function }` returned an error on the GPU ({ $error }). `{ $timer }`, which it calls, fails on its own in a fresh process too ({ $own }); that mistake is charged by the timer's item (gpu_timer_sync), once. This item is checked once the timer runs.
not-copied-back = { $count } of the { $values } values it returned in case { $case } were never copied back from GPU memory during the call: they were computed on the CPU
uploaded-back = { $count } of the { $values } values it returned in case { $case } are values the call itself had uploaded to the GPU: they were computed on the CPU and only passed through it
not-from-device-reason = the result was not computed on the GPU
not-from-device-details = `{ $function }` launched work on the GPU, but { $found }. The result must be what your kernel (or cuBLAS) wrote into device memory, copied back with `clone_dtoh`: compute C on the GPU and return that.

## A product against its reference (src/check/matmul.rs)

shape-transposed-values = the result is transposed: C[i][j] holds the value of C[j][i]; swap the row and column indices when you write C
shape-swapped = the result has its rows and columns swapped: C must be m×n (rows of A × columns of B)
shape-size-from = A is { $m }×{ $k } and B is { $k }×{ $n }, so C must be { $m }×{ $n }: size C from a.nrows() and b.ncols()
shape-wrong = C has shape { $rows }×{ $cols } but should be { $m }×{ $n }
value-wrong = C[{ $i }][{ $j }] should be { $expected } but is { $got } (allowed error { $bound }); { $bad } of { $total } values are wrong, the largest error is { $worst } at C[{ $wi }][{ $wj }]
diagnose-nan = C[{ $i }][{ $j }] is { $value }: a NaN or infinity usually comes from reading memory that was never set (an uninitialised buffer) or from dividing by zero
diagnose-zeros = every value is 0: the result is never written, or it is written to a copy that is not returned
diagnose-transposed = the result is transposed: C[i][j] holds the value of C[j][i]; check which index runs over rows and which over columns
diagnose-scaled-k = {" "}(that is K = { $k }: is something added once per step of the inner loop?)
diagnose-scaled = every value is { $factor }× the right one{ $extra }: the products are right but scaled; look for an extra factor, a sum that is not reset, or one accumulated twice
diagnose-block = only the top-left { $rows }×{ $cols } part of C is right: the rows and columns past the last full block of { $block } are missing or wrong. Handle the leftover when a size is not a multiple of your block (end each block at min(start + { $block }, size))

## A CPU timer (src/check/timer.rs) and timed runs (src/check/timed.rs)

cpu-timer-none = no timings came back
cpu-timer-never-ran = { $function } never ran the work it was given
cpu-timer-never-ran-hint = call the closure (`work()`) between starting and stopping the clock
cpu-timer-value = { $function } did not return the value the work produced
cpu-timer-value-hint = return the work's result together with the elapsed time
cpu-timer-short = { $function } reported { $reported } ms for work that ran { $inner } ms
cpu-timer-short-hint = start the clock (Instant::now()) before calling the work and read it (elapsed()) after the work returns
cpu-timer-long = { $function } reported { $reported } ms, longer than the { $outer } ms the whole call took
cpu-timer-long-hint = measure with std::time::Instant inside the function, and report only what you measured
cpu-timer-sample = { $work } ms of work timed as { $reported } ms
stopped-elsewhere-reason = the program stopped itself outside the grader's checkpoints
stopped-elsewhere-details = While `{ $function }` was being timed, its program stopped or ended at a point where the grader's own code never does (a stop signal or an exit from your code). That is tampering with timing: the item scores 0.

## Where GPU items run (src/gpu/mod.rs)

backend-real = real GPU: { $name }
backend-no-emulator = no GPU, and the CPU emulator is unavailable ({ $why })
backend-emulated-unusable = emulated GPU (the real GPU is not usable: { $why })
backend-emulated = emulated GPU
backend-off = GPU mode is off
unchecked-run-reason = the race check could not be confirmed for this run
unchecked-run-details = `{ $function }` ran on the GPU emulator in a run that checks kernels for races and for accesses outside GPU memory, but the emulator's record of that run does not show it checked: { $why }. A run that cannot be shown checked earns no correctness points. If your code did nothing unusual, this is not a problem in your code: tell whoever runs the grader.
unconfined-run-reason = the grader could not confirm that this run's kernels stayed in GPU memory
unconfined-run-details = `{ $function }` ran on the GPU emulator in a timed run, where every kernel may read and write only GPU memory, but the emulator's record of that run does not show it: { $why }. A run that cannot be shown confined earns no points. If your code did nothing unusual, this is not a problem in your code: tell whoever runs the grader.
bench-cpu-unchecked-reason = the CPU time could not be checked
bench-cpu-unchecked-details = After `{ $function }` returned, the grader ran `matmul_fast` at { $n }×{ $n }×{ $n } to check the CPU time against its own measurement, and it did not finish those runs (it panicked). The CPU time earns no point unless the grader can time the same work itself.
bench-cpu-below-details = `{ $function }` returned a CPU time of { $time } ms, but `matmul_fast` at { $n }×{ $n }×{ $n } cannot take less than { $own } ms on this machine: the grader ran it there { $runs } times after the call and measured it itself. Report what your clock measured around the product: read `Instant::now()` just before `matmul_fast` and `elapsed()` just after it.
bench-cpu-checked = The grader ran `matmul_fast` at { $n }×{ $n }×{ $n } { $runs } times itself: a run takes at least { $own } ms here.
bench-gpu-no-work-details = `{ $function }` returned a GPU time of { $time } ms, but the GPU ran no kernel and no cuBLAS call during the call: time a real multiplication on the device (`{ "time_gpu_matmul" }` on operands you copied there).
bench-gpu-below-details = `{ $function }` returned a GPU time of { $time } ms, but the multiplication it launched ran { $device } ms on the device, and `{ $timer }` alone reads its own launch right: report the time `{ $timer }` returned for the multiplication.
bench-gpu-timers-own = The GPU time is shorter than the device's work, and `{ $timer }` alone reads short or fails too: that mistake is charged by the timer's item (gpu_timer_sync), not here.
