//! Judging the batched items: every matrix of every batch against the grader's own reference,
//! with the first wrong one named by its batch index and element, and a pattern across the
//! batch when one fits (batch 0 right and the others wrong: a batch stride; one batch all
//! zeros: a batch skipped); the batched timer's synchronization; the real-GPU speedup over the
//! grader's loop of single products.

use super::batched::{self, BatchedSpeed, Batches, Sent, Stack};
use super::hint_line;
use super::t;
use super::verdict::{device_unused, multiply_adds, must_count, not_from_a_and_b, WrongCase};
use grader_engine::check::gpu::emulator_reported;
use grader_engine::check::gpu::{error_result, timer_result};
use grader_engine::check::matmul::{self, Mismatch};
use grader_engine::check::{outcome_of, timed, unexpected, GradeContext};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_engine::supervisor::SupervisorError;
use grader_worker::protocol::{DeviceWork, LabOutcome, Outcome};
use ndarray::{Array2, Array3, Axis};

/// What the worker sent, read as the batched items' [`Sent`].
fn read_sent(item: &Item, value: LabOutcome) -> Result<Sent, SupervisorError> {
    value
        .read()
        .map_err(|e| bad(item, &format!("its results are unreadable: {e}")))
}

fn bad(item: &Item, message: &str) -> SupervisorError {
    SupervisorError::BadReport {
        item: item.id().to_string(),
        message: message.to_string(),
    }
}

fn unpack(item: &Item, stack: &Stack) -> Result<Array3<f32>, SupervisorError> {
    stack
        .to_array()
        .ok_or_else(|| bad(item, "a result's data does not match its shape"))
}

/// A batch of products that is wrong somewhere.
#[derive(Debug)]
pub struct BatchMismatch {
    /// One line: what is wrong, with the batch index in every element named.
    pub summary: String,
    /// The first wrong batch, when the shape was right.
    pub batch: Option<usize>,
    /// A hint: a pattern across the batch, else the single product's diagnosis.
    pub hint: Option<String>,
}

/// Above this many multiply-adds a timed batch is checked with Freivalds' method (as the
/// single product's timer).
const FULL_CHECK_MAX: usize = 512 * 512 * 512;

/// Checks every matrix of `got` against A[b]·B[b]: element by element, or by Freivalds'
/// method with a vector the worker cannot know when `quick` and the batch is large.
pub fn compare(
    a: &Array3<f32>,
    b: &Array3<f32>,
    got: &Array3<f32>,
    tolerance: f64,
    quick: bool,
) -> Result<(), BatchMismatch> {
    let ((batch, m, k), n) = (a.dim(), b.dim().2);
    if got.dim() != (batch, m, n) {
        let (gb, gm, gn) = got.dim();
        let hint = if got.dim() == (batch, n, m) {
            t!("batch-swapped")
        } else {
            t!("batch-size-from", batch = batch, m = m, k = k, n = n)
        };
        return Err(BatchMismatch {
            summary: t!(
                "batch-shape-wrong",
                gb = gb,
                gm = gm,
                gn = gn,
                batch = batch,
                m = m,
                n = n
            ),
            batch: None,
            hint: Some(hint),
        });
    }
    let matrix = |x: &Array3<f32>, z: usize| -> Array2<f32> { x.index_axis(Axis(0), z).to_owned() };
    let freivalds = quick && batch * m * k * n > FULL_CHECK_MAX;
    let x = freivalds.then(|| {
        grader_engine::check::matmul::verification_vector(
            grader_worker::protocol::fresh_nonce(),
            "batched",
            0,
            n,
        )
    });
    let mut first: Option<(usize, Mismatch)> = None;
    let mut wrong = Vec::new();
    let mut zeros = Vec::new();
    for z in 0..batch {
        let (a_z, b_z, c_z) = (matrix(a, z), matrix(b, z), matrix(got, z));
        let checked = match &x {
            Some(x) if matmul::freivalds(&a_z, &b_z, &c_z, tolerance, x) => Ok(()),
            Some(_) => Err(Mismatch {
                summary: t!("batch-freivalds"),
                hint: None,
            }),
            None => matmul::compare(&a_z, &b_z, &c_z, tolerance).map(drop),
        };
        if let Err(mismatch) = checked {
            wrong.push(z);
            if c_z.iter().all(|&v| v == 0.0) {
                zeros.push(z);
            }
            first.get_or_insert((z, mismatch));
        }
    }
    let Some((z, mismatch)) = first else {
        return Ok(());
    };
    let summary = t!(
        "batch-in",
        z = z,
        batch = batch,
        summary = mismatch.summary.replace("C[", &format!("C[{z}]["))
    );
    let hint = batch_pattern(batch, &wrong, &zeros).or(mismatch.hint);
    Err(BatchMismatch {
        summary,
        batch: Some(z),
        hint,
    })
}

/// Batches as a report lists them: "1, 2, 3" (the first few, then how many more).
fn listed(batches: &[usize]) -> String {
    let mut text: Vec<String> = batches.iter().take(8).map(|b| b.to_string()).collect();
    if batches.len() > 8 {
        text.push(t!("batch-more", count = batches.len() - 8));
    }
    text.join(", ")
}

/// Names a pattern across the batch, when one fits: the mark of a wrong batch stride (batch 0
/// right, every later one wrong), of batches never computed (all zeros), of a loop or grid
/// that stops early (the last batches wrong).
pub fn batch_pattern(batch: usize, wrong: &[usize], zeros: &[usize]) -> Option<String> {
    if wrong.is_empty() {
        return None;
    }
    if zeros.len() == wrong.len() && wrong.len() < batch {
        return Some(if zeros.len() == 1 {
            t!("batch-zeros-one", which = zeros[0], batch = batch)
        } else {
            t!("batch-zeros-many", which = listed(zeros), batch = batch)
        });
    }
    if batch > 1 && wrong.len() == batch - 1 && wrong[0] == 1 {
        return Some(t!("batch-stride"));
    }
    if zeros.len() == batch && batch > 1 {
        return Some(t!("batch-all-zeros"));
    }
    let first = wrong[0];
    if first > 0 && wrong.len() == batch - first {
        return Some(t!("batch-stops-early", first = first, batch = batch));
    }
    None
}

/// `batched-matmul` and `gpu-batched-matmul` items: every case's batch checked matrix by
/// matrix; the feedback shows the first wrong matrix in detail (its batch index, the element,
/// expected and got) and which batches and cases were right.
pub fn products(
    ctx: &GradeContext,
    item: &Item,
    spec: &Batches,
) -> Result<ItemResult, SupervisorError> {
    let order = ctx.order(item);
    let (sent, notes) = match outcome_of(ctx, item, &order)? {
        Err(failed) => return Ok(failed),
        Ok((Outcome::Lab(value), notes)) => (read_sent(item, value)?, notes),
        Ok((other, _)) => return Err(unexpected(item, &other)),
    };
    let Sent::Products {
        outputs,
        error,
        device_work,
        replays,
    } = sent
    else {
        return Err(bad(item, "its results do not fit the item's kind"));
    };
    let total = spec.cases.len();
    if outputs.len() > total || (error.is_none() && outputs.len() != total) {
        return Err(bad(
            item,
            &format!("{} results for {total} cases", outputs.len()),
        ));
    }
    let mut right = Vec::new();
    let mut first_wrong = None;
    for (index, (shape, stack)) in spec.cases.iter().zip(&outputs).enumerate() {
        let (a, b) = batched::operands(ctx.seed, item.id(), index, *shape);
        match compare(&a, &b, &unpack(item, stack)?, spec.tolerance, false) {
            Ok(()) => right.push(index),
            Err(mismatch) => {
                first_wrong.get_or_insert((index, mismatch));
            }
        }
    }
    let shape_text = |[batch, m, k, n]: [usize; 4]| format!("{batch}×({m}×{k}·{k}×{n})");
    let Some((index, mismatch)) = first_wrong else {
        if let Some(e) = error {
            return Ok(error_result(item, outputs.len(), &e, &notes));
        }
        if let Some(failed) = device_unused(
            item,
            device_work,
            must_count(ctx, item),
            multiply_adds(&spec.cases, outputs.len()),
            || t!("batch-no-gpu-work-details", function = item.function),
        ) {
            return Ok(failed);
        }
        let operands = |index: usize| {
            let shape = spec.cases[index];
            let (a, b) = batched::operands(ctx.seed, item.id(), index, shape);
            let pairs = a
                .outer_iter()
                .zip(b.outer_iter())
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .collect();
            (pairs, spec.describe(index).unwrap_or_default())
        };
        if let Some(failed) = not_from_a_and_b(
            item,
            must_count(ctx, item),
            &replays,
            operands,
            outputs.len(),
            spec.tolerance,
        ) {
            return Ok(failed);
        }
        let shapes: Vec<String> = spec.cases.iter().map(|s| shape_text(*s)).collect();
        let mut details = t!(
            "batch-all-right-details",
            function = item.function,
            total = total,
            shapes = shapes.join(", ")
        );
        let per_matrix = device_work.and_then(|w| calls_note(&item.function, &spec.cases, w));
        let Some(note) = per_matrix else {
            return Ok(ItemResult::passed(
                item,
                t!("all-right-reason", total = total),
                details,
            ));
        };
        details.push_str(&note);
        if !rule_graded_here(ctx) {
            return Ok(ItemResult::passed(
                item,
                t!("all-right-reason", total = total),
                details,
            ));
        }
        let lost = item.points * PER_MATRIX_SHARE;
        let kept = item.points - lost;
        details.push_str(&format!(
            "\n{}",
            t!(
                "batch-calls-graded",
                lost = grader_engine::report::points(lost),
                points = grader_engine::report::points(item.points)
            )
        ));
        let mut result = ItemResult::passed(item, t!("batch-calls-reason"), details);
        result.set_score(kept);
        return Ok(result);
    };
    let case = spec.describe(index).unwrap_or_default();
    let details = WrongCase {
        function: &item.function,
        case: &case,
        summary: &mismatch.summary,
        notes: &notes,
        right: right.iter().map(|&i| shape_text(spec.cases[i])).collect(),
        total,
        hint: mismatch.hint.or_else(|| spec.hint.clone()),
    }
    .details();
    let reason = match mismatch.batch {
        Some(z) => t!("batch-wrong-in-reason", z = z, case = case),
        None => t!("batch-wrong-shape-reason", case = case),
    };
    Ok(ItemResult::failed(item, reason, details))
}

/// The share of a GPU batch item's points that one call per matrix costs where the rule is
/// graded by the counts ([`rule_graded_here`]): a third, the rule being one of the three
/// things the item asks (right products, on the device, in one call per batch).
const PER_MATRIX_SHARE: f64 = 1.0 / 3.0;

/// Whether "one call for the whole batch, never one per matrix" is graded by the GPU batch
/// item itself: on the emulator, which counts every launch and cuBLAS call and where no
/// speedup is measured. On a real GPU the batched speedup item measures what the rule is for,
/// and a loop of single calls loses its points there; charging the rule here too would make
/// one mistake cost twice, so it is a note.
fn rule_graded_here(ctx: &GradeContext) -> bool {
    ctx.counted && ctx.backend == grader_worker::protocol::Backend::Emulated
}

/// What the GPU batch's calls say when it took one call per matrix (`None` otherwise): a note
/// on a real GPU, where the speedup item compares against such a loop, and the reason part of
/// the item is lost on the emulator ([`rule_graded_here`]).
fn calls_note(function: &str, cases: &[[usize; 4]], work: DeviceWork) -> Option<String> {
    let matrices: usize = cases.iter().map(|c| c[0]).sum();
    let calls = work.launches + work.blas_calls;
    (matrices > cases.len() && calls as usize >= matrices).then(|| {
        format!(
            "\n{}",
            t!(
                "batch-calls-note",
                function = function,
                launches = work.launches,
                blas = work.blas_calls,
                batches = cases.len(),
                matrices = matrices
            )
        )
    })
}

/// `gpu-batched-timer` items: the timed batch must be right (the first wrong matrix named by
/// its batch index) and the timer must wait for the GPU on both sides.
pub fn timer(ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError> {
    let (sent, notes, brackets) = match timed::bracketed_lab(ctx, item, &ctx.order(item))? {
        Err(failed) => return Ok(failed),
        Ok((value, notes, brackets)) => (read_sent(item, value)?, notes, brackets),
    };
    let Sent::Timer {
        shape,
        queued_ms,
        samples,
        output,
    } = sent
    else {
        return Err(bad(item, "its results do not fit the item's kind"));
    };
    if brackets.len() != samples.len() || samples.is_empty() {
        return Err(bad(item, "the timed calls and their marks do not match"));
    }
    let [batch, m, k, n] = shape;
    let (a, b) = batched::operands(ctx.seed, item.id(), 0, shape);
    if let Err(mismatch) = compare(&a, &b, &unpack(item, &output)?, 2.0, true) {
        let mut details = t!(
            "batch-timer-wrong-details",
            function = item.function,
            batch = batch,
            m = m,
            k = k,
            n = n,
            summary = mismatch.summary
        );
        if !notes.is_empty() {
            details.push('\n');
            details.push_str(&emulator_reported(&notes));
        }
        if let Some(hint) = mismatch.hint {
            details.push('\n');
            details.push_str(&hint_line(&hint));
        }
        let reason = match mismatch.batch {
            Some(z) => t!("batch-timer-wrong-reason", z = z),
            None => t!("batch-timer-shape-reason"),
        };
        return Ok(ItemResult::failed(item, reason, details));
    }
    Ok(timer_result(
        item,
        &samples,
        &brackets,
        queued_ms,
        (
            &t!("batch-timer-work"),
            &t!("batch-timer-size", batch = batch, m = m, k = k, n = n),
        ),
    ))
}

/// One worker's timed runs: C after each, and the supervisor's bracket of each (ns).
type Runs = (Vec<Stack>, Vec<u64>);

fn timed_runs(
    ctx: &GradeContext,
    item: &Item,
    order: &grader_worker::protocol::WorkOrder,
    samples: usize,
) -> Result<Result<Runs, ItemResult>, SupervisorError> {
    match timed::bracketed(ctx, item, order)? {
        Err(failed) => Ok(Err(failed)),
        Ok((Outcome::Lab(value), _, brackets)) => match read_sent(item, value)? {
            Sent::Speed { outputs } if outputs.len() == samples && brackets.len() == samples => {
                Ok(Ok((outputs, brackets)))
            }
            _ => Err(bad(item, "the timed runs and their marks do not match")),
        },
        Ok((Outcome::Failed(e), notes, _)) => Ok(Err(error_result(item, usize::MAX, &e, &notes))),
        Ok((other, _, _)) => Err(unexpected(item, &other)),
    }
}

/// `gpu-batched-speedup` on a real GPU (elsewhere the rubric's policy decides, before this
/// runs): the grader's loop of single cuBLAS products in the yardstick worker, then the
/// student's batched timer on the same matrices, each run timed by the supervisor's clock with
/// the GPU drained before and after; every run of the student's must give the right batch.
/// The speedup is the median of the paired ratios.
pub fn speedup(
    ctx: &GradeContext,
    item: &Item,
    spec: &BatchedSpeed,
) -> Result<ItemResult, SupervisorError> {
    let mut yard = ctx.order(item);
    yard.yardstick = true;
    let (_, base_ns) = match timed_runs(ctx, item, &yard, spec.samples)? {
        Ok(runs) => runs,
        Err(failed) => return Err(grader_engine::check::baseline_failed(item, &failed)),
    };
    let (outputs, gpu_ns) = match timed_runs(ctx, item, &ctx.order(item), spec.samples)? {
        Ok(runs) => runs,
        Err(failed) => return Ok(failed),
    };
    let [batch, m, k, n] = spec.size;
    for (s, stack) in outputs.iter().enumerate() {
        let (a, b) = batched::operands(ctx.seed, item.id(), s, spec.size);
        if let Err(mismatch) = compare(&a, &b, &unpack(item, stack)?, 2.0, true) {
            return Ok(ItemResult::failed(
                item,
                t!("batch-speed-wrong-reason"),
                t!(
                    "batch-speed-wrong-details",
                    run = s + 1,
                    function = item.function,
                    batch = batch,
                    m = m,
                    k = k,
                    n = n,
                    summary = mismatch.summary
                ),
            ));
        }
    }
    let ratios = grader_engine::check::speedup::ratios(&base_ns, &gpu_ns);
    let grader_engine::check::speedup::Decision::Decided {
        speedup, points, ..
    } = grader_engine::check::speedup::decide(&ratios, &spec.tiers, false)
    else {
        return Err(bad(item, "the speedup could not be decided"));
    };
    let shown = grader_engine::check::speedup::shown(speedup);
    let tiers = grader_engine::check::speedup::listed(&spec.tiers);
    let mut result = ItemResult::passed(
        item,
        t!("batch-speedup-reason", speedup = shown),
        t!(
            "batch-speedup-details",
            batch = batch,
            m = m,
            k = k,
            n = n,
            function = item.function,
            speedup = shown,
            samples = spec.samples,
            tiers = tiers.join(", ")
        ),
    );
    result.set_score(points);
    result.speedup = Some(speedup);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(a: &Array3<f32>, b: &Array3<f32>) -> Array3<f32> {
        let (batch, m, _) = a.dim();
        let n = b.dim().2;
        let mut c = Array3::zeros((batch, m, n));
        for z in 0..batch {
            let p = a.index_axis(Axis(0), z).dot(&b.index_axis(Axis(0), z));
            c.index_axis_mut(Axis(0), z).assign(&p);
        }
        c
    }

    fn spoiled(shape: [usize; 4], spoil: impl Fn(&mut Array3<f32>)) -> BatchMismatch {
        let (a, b) = batched::operands(3, "t", 0, shape);
        let mut c = product(&a, &b);
        spoil(&mut c);
        compare(&a, &b, &c, 2.0, false).expect_err("a wrong batch")
    }

    #[test]
    fn a_right_batch_passes_and_a_wrong_value_is_named_by_batch_row_and_column() {
        for shape in [[1, 1, 1, 1], [3, 7, 5, 9], [5, 33, 17, 1]] {
            let (a, b) = batched::operands(3, "t", 0, shape);
            assert!(
                compare(&a, &b, &product(&a, &b), 2.0, false).is_ok(),
                "{shape:?}"
            );
        }
        let wrong = spoiled([4, 6, 5, 7], |c| c[[2, 3, 4]] += 1.0);
        assert_eq!(wrong.batch, Some(2));
        assert!(
            wrong
                .summary
                .starts_with("in batch 2 of 0..4, C[2][3][4] should be"),
            "{}",
            wrong.summary
        );
    }

    #[test]
    fn patterns_across_the_batch_are_diagnosed() {
        // Batch 0 right, the others shifted: a wrong stride.
        let stride = spoiled([4, 6, 5, 7], |c| {
            for z in 1..4 {
                c.index_axis_mut(Axis(0), z).mapv_inplace(|v| v + 0.5);
            }
        });
        assert_eq!(stride.batch, Some(1));
        assert!(stride
            .hint
            .as_deref()
            .unwrap_or("")
            .contains("wrong batch stride"));
        // One batch never written.
        let skipped = spoiled([5, 6, 5, 7], |c| c.index_axis_mut(Axis(0), 4).fill(0.0));
        assert_eq!(skipped.batch, Some(4));
        let hint = skipped.hint.unwrap_or_default();
        assert!(hint.contains("batch 4 of 0..5 is all zeros"), "{hint}");
        // The last batches wrong but not zero: a loop that stops early.
        let early = spoiled([5, 6, 5, 7], |c| {
            for z in 3..5 {
                c.index_axis_mut(Axis(0), z).mapv_inplace(|v| v * 3.0);
            }
        });
        assert!(early
            .hint
            .unwrap_or_default()
            .contains("batches 0..3 are right"));
        // A single matrix wrong keeps the single product's diagnosis.
        let transposed = spoiled([3, 8, 5, 8], |c| {
            let t = c.index_axis(Axis(0), 1).t().to_owned();
            c.index_axis_mut(Axis(0), 1).assign(&t);
        });
        assert!(transposed.hint.unwrap_or_default().contains("transposed"));
        // The wrong shape.
        let (a, b) = batched::operands(3, "t", 0, [2, 3, 4, 5]);
        let shape = compare(&a, &b, &Array3::zeros((2, 5, 3)), 2.0, false).unwrap_err();
        assert_eq!(shape.batch, None);
        assert!(
            shape.summary.contains("2×5×3 but should be 2×3×5"),
            "{}",
            shape.summary
        );
    }

    #[test]
    fn a_large_timed_batch_is_checked_with_freivalds_method() {
        let shape = [2, 520, 256, 520];
        let (a, b) = batched::operands(5, "t", 0, shape);
        let mut c = product(&a, &b);
        assert!(compare(&a, &b, &c, 2.0, true).is_ok());
        // The last row of matrix 1 not computed, as a grid too small leaves it.
        c.slice_mut(ndarray::s![1, 519, ..]).fill(0.0);
        let wrong = compare(&a, &b, &c, 2.0, true).unwrap_err();
        assert_eq!(wrong.batch, Some(1));
        assert!(wrong.summary.contains("Freivalds"), "{}", wrong.summary);
    }
}
