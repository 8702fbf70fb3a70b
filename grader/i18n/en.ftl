# The grader's own student-facing messages (score table, feedback.md, the harness's lines,
# Gradescope's results.json), in English. Numbers, ids and code are passed in as they are.

## The score table (src/report/table.rs) and the Classroom step lines

table-item = item
table-points = points
table-status = status
table-reason = reason
table-total = total
table-sandbox = sandbox: { $sandbox }
status-passed = passed
status-partial = partial
status-failed = failed
status-skipped = skipped

## Markdown (src/report/markdown.rs): step summary and feedback.md

md-status-passed = ✅ passed
md-status-partial = 🟡 partial
md-status-failed = ❌ failed
md-status-skipped = ➖ skipped
md-table-header = | item | points | status | reason |
summary-heading = ### `{ $assignment }`: { $score }/{ $max } points
summary-seed = Graded with seed { $seed }: `cargo test --test grade -- --seed { $seed }` repeats these inputs.
feedback-heading = # `{ $assignment }` feedback for { $student }
feedback-score = **Score: { $score }/{ $max }** (seed { $seed })
feedback-not-compiled = Your code did not compile, so no item could be graded. The compiler's error is under each item below.
feedback-refused = Your code contains something a lab may not, so no item was graded. Where and why is under each item below.
feedback-notes = ## What official grading did not use
feedback-lost = ## Where points were lost
feedback-repeat = To repeat these inputs on your machine: `cargo test --test grade -- --seed { $seed }`.
feedback-not-graded-heading = # Feedback for { $student }
feedback-not-graded = Your submission could not be graded:

## The harness (src/harness/): libtest's own words (test, ok, FAILED, ignored, test result) stay as
## libtest writes them, for the tools that read them.

harness-started = grading `{ $assignment }` with seed { $seed }, GPU items on: { $backend } (to repeat this run exactly: cargo test --test grade -- --seed { $seed })
harness-building-emulator = building the GPU emulator for the GPU items (first run only, about a minute) …
harness-warning = warning: { $note }
harness-ignored = ignored, { $reason }
harness-failure = { $score }/{ $max } points. { $details }
harness-edited-first = changed since the last run, graded first: { $items }
harness-repeat = seed { $seed }: repeat with `cargo test --test grade -- --seed { $seed }`
harness-sandbox = sandbox (what this machine allows): { $sandbox }
prepare-building = building the GPU emulator for the GPU items (about a minute) …
prepare-ready = ready: GPU items will run on: { $backend }
classroom-earlier = { $id }: graded earlier in this run (seed { $seed }); using that result
classroom-grading = grading `{ $id }` with seed { $seed }, GPU items on: { $backend }
classroom-result = { $id }: { $score }/{ $max } points, { $status }: { $reason }
classroom-needs-one = this step needs { $points } point of `{ $id }`: { $verdict }
classroom-needs-many = this step needs { $points } points of `{ $id }`: { $verdict }
classroom-earned = earned
classroom-not-earned = not earned

## Grading (src/grade.rs) and `grader grade`

grade-output-dropped = While it was graded, your code printed { $size } more than the grader keeps; that output was dropped (printing inside a loop slows your code down too).
cli-note = note: { $note }
cli-repeat = seed { $seed }: repeat with `grader grade { $path } --seed { $seed }`

## Gradescope's results.json (src/report/gradescope.rs)

gs-not-graded-name = { $id }: { $title } — not graded here
gs-graded-on = [graded on: { $mode }] { $details }
gs-summary = { $assignment }: graded with seed { $seed } (reproduce with --seed { $seed })
gs-not-compiled = Your code does not compile: every item scored 0; each test below shows the compiler's first error.
gs-note = Note: { $note }
gs-sandbox = Sandbox: { $sandbox }
gs-not-graded-here = Not graded here: { $reason } { $counts }
gs-counts-zero = The rubric counts it as 0 where it cannot be measured.
gs-left-out = It is left out of the maximum score.

## The speed chart (src/report/chart.rs)

chart-title = Your speed: time of one product against matrix size
chart-subtitle = Timed by the grader (medians). Lower is faster. Both scales are logarithmic.
chart-x-axis = matrix size (n for n×n times n×n)
chart-y-axis = milliseconds per product
chart-graded = graded size
chart-emulated = emulated GPU (not a real speed)
chart-not-timed = Not on this chart
chart-image-alt = Your speed chart: your times and the grader's against matrix size, with the speed tiers
chart-summary-note = A step summary cannot show the speed chart (GitHub strips pictures made by the run). Run `cargo test` on your machine and open `target/gpu-labs/chart.svg`; its numbers:
chart-written = speed chart (your times against matrix size, beside the grader's): { $path }
chart-tier-one = { $speedup }× faster than the baseline: { $points } point
chart-tier = { $speedup }× faster than the baseline: { $points } points
chart-handover = Times are taken from outside your program, less { $ms } ms per run for handing the matrices over; sizes too quick to time that way are left out.
chart-samples = The graded size uses the grading's { $graded } samples; the other sizes { $extra } each, timed for this chart only (they earn no points).
