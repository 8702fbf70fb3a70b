//! Judging the matmul lab's CPU items: products checked case by case with a diagnosis across
//! cases, the CPU timer's bracket, and the CPU speedup's tiers.

use super::coverage;
use super::kinds::{CpuTimer, Products};
use super::t;
use super::verdict::{device_unused, multiply_adds, must_count, not_from_a_and_b, WrongCase};
use grader_engine::check::speedup::{self, Speed};
use grader_engine::check::{
    gpu, matmul, outcome_of, panic_result, sample_speedup, timed, timer, unexpected, unpack,
    GradeContext, Sampled,
};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_engine::supervisor::SupervisorError;
use grader_worker::inputs;
use grader_worker::protocol::Outcome;

/// A readable description of a product case.
fn describe_case(index: usize, total: usize, [m, k, n]: [usize; 3]) -> String {
    t!("case", case = index + 1, total = total, m = m, k = k, n = n)
}

/// `matmul` items: every case's product checked against the reference. The feedback shows
/// the first wrong case in detail, which cases were right, and a pattern across cases when
/// one fits (right only when a size is a multiple of a block).
pub fn products(
    ctx: &GradeContext,
    item: &Item,
    spec: &Products,
) -> Result<ItemResult, SupervisorError> {
    let order = ctx.order(item);
    let (outputs, panic, error, device_work, notes, launches, replays) =
        match outcome_of(ctx, item, &order)? {
            Err(failed) => return Ok(failed),
            Ok((
                Outcome::Products {
                    outputs,
                    panic,
                    error,
                    device_work,
                    case_launches,
                    launch_geometry,
                    replays,
                },
                notes,
            )) => (
                outputs,
                panic,
                error,
                device_work,
                notes,
                (case_launches, launch_geometry),
                replays,
            ),
            Ok((other, _)) => return Err(unexpected(item, &other)),
        };
    let stopped = panic.is_some() || error.is_some();
    if outputs.len() > spec.cases.len() || (!stopped && outputs.len() != spec.cases.len()) {
        return Err(SupervisorError::BadReport {
            item: item.id().to_string(),
            message: format!("{} products for {} cases", outputs.len(), spec.cases.len()),
        });
    }
    let total = spec.cases.len();
    let mut right = Vec::new();
    let mut first_wrong: Option<(usize, matmul::Mismatch)> = None;
    // On the GPU: the first wrong case's result against the launch that made it.
    let mut coverage = None;
    for (index, (shape, product)) in spec.cases.iter().zip(&outputs).enumerate() {
        let (a, b) = inputs::operands(ctx.seed, item.id(), index, *shape);
        let got = unpack(item, product)?;
        match matmul::compare(&a, &b, &got, spec.tolerance) {
            Ok(_) => right.push(index),
            Err(mismatch) => {
                if first_wrong.is_none() {
                    let case = coverage::of_case(index, &launches.0, &launches.1);
                    coverage = coverage::hint(&a, &b, &got, spec.tolerance, &case);
                }
                first_wrong.get_or_insert((index, mismatch));
            }
        }
    }
    let shape_text = |[m, k, n]: [usize; 3]| format!("{m}×{k}·{k}×{n}");
    let Some((index, mismatch)) = first_wrong else {
        if let Some(p) = panic {
            return Ok(panic_result(item, &p));
        }
        if let Some(e) = error {
            return Ok(gpu::error_result(item, outputs.len(), &e, &notes));
        }
        if let Some(failed) = device_unused(
            item,
            device_work,
            must_count(ctx, item),
            multiply_adds(&spec.cases, outputs.len()),
            || t!("no-gpu-work-details", function = item.function),
        ) {
            return Ok(failed);
        }
        let operands = |index: usize| {
            let (a, b) = inputs::operands(ctx.seed, item.id(), index, spec.cases[index]);
            (vec![(a, b)], describe_case(index, total, spec.cases[index]))
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
        return Ok(ItemResult::passed(
            item,
            t!("all-right-reason", total = total),
            t!(
                "all-right-details",
                function = item.function,
                total = total,
                shapes = shapes.join(", ")
            ),
        ));
    };
    let case = describe_case(index, total, spec.cases[index]);
    let graded = outputs.len();
    let hint = coverage
        .or_else(|| size_pattern(&spec.cases[..graded], &right))
        .or_else(|| mismatch.hint.or_else(|| spec.hint.clone()));
    let right: Vec<String> = right.iter().map(|&i| shape_text(spec.cases[i])).collect();
    let details = WrongCase {
        function: &item.function,
        case: &case,
        summary: &mismatch.summary,
        notes: &notes,
        right,
        total,
        hint,
    }
    .details();
    Ok(ItemResult::failed(
        item,
        t!("wrong-reason", case = case),
        details,
    ))
}

/// When the right cases are exactly those whose m, k or n is a multiple of a block size, says
/// so: the mark of loops that skip the leftover past the last full block.
fn size_pattern(cases: &[[usize; 3]], right: &[usize]) -> Option<String> {
    if right.is_empty() || right.len() == cases.len() {
        return None;
    }
    let names = [t!("dim-m"), t!("dim-k"), t!("dim-n")];
    for block in [8, 16, 32, 64] {
        for (dim, name) in names.iter().enumerate() {
            let separates = cases
                .iter()
                .enumerate()
                .all(|(i, c)| right.contains(&i) == c[dim].is_multiple_of(block));
            if separates {
                return Some(t!("size-pattern", dim = name, block = block));
            }
        }
    }
    None
}

/// `cpu-timer` items: the supervisor brackets each call and holds the work for a length it
/// draws itself (see [`timed::timer_samples`]).
pub fn cpu_timer(
    ctx: &GradeContext,
    item: &Item,
    spec: &CpuTimer,
) -> Result<ItemResult, SupervisorError> {
    let samples = match timed::timer_samples(ctx, item, &spec.work_ms)? {
        Err(failed) => return Ok(failed),
        Ok(s) => s,
    };
    Ok(match timer::judge(&samples, &item.function) {
        Ok(line) => ItemResult::passed(
            item,
            t!("cpu-timer-passed-reason"),
            t!(
                "cpu-timer-passed-details",
                function = item.function,
                line = line
            ),
        ),
        Err((what, hint)) => ItemResult::failed(
            item,
            what.clone(),
            t!("cpu-timer-failed-details", what = what, hint = hint),
        ),
    })
}

/// `cpu-speedup` items: paired samples in rounds until the tier is clear.
pub fn cpu_speedup(
    ctx: &GradeContext,
    item: &Item,
    spec: &Speed,
) -> Result<ItemResult, SupervisorError> {
    let size = spec.size;
    let sampled = match sample_speedup(ctx, item, spec)? {
        Ok(sampled) => sampled,
        Err(failed) => return Ok(failed),
    };
    let graded = grader_engine::check::sweep::graded(ctx, item, spec, &sampled);
    let Sampled {
        speedup: measured_speedup,
        tier,
        points,
        baseline_ns,
        candidate_ns,
        overhead_ns,
        busy,
    } = sampled;
    let s = speedup::shown(measured_speedup);
    let ms = |v: &[u64]| speedup::median(&v.iter().map(|&x| x as f64 / 1e6).collect::<Vec<_>>());
    let measured = t!(
        "cpu-speedup-measured",
        speedup = s,
        m = size[0],
        k = size[1],
        n = size[2],
        samples = baseline_ns.len(),
        baseline = format!("{:.1}", ms(&baseline_ns)),
        yours = format!("{:.2}", ms(&candidate_ns)),
        overhead = format!("{:.3}", overhead_ns as f64 / 1e6)
    );
    let tiers = speedup::listed(&spec.tiers);
    let mut result = ItemResult::passed(item, t!("cpu-speedup-reason", speedup = s), String::new());
    result.set_score(points);
    result.speedup = Some(measured_speedup);
    result.sweep = Some(graded);
    result.details = match tier {
        Some(tier) => t!(
            "cpu-speedup-tier",
            function = item.function,
            measured = measured,
            tier = tier + 1,
            tiers_count = spec.tiers.len(),
            tiers = tiers.join(", ")
        ),
        None => {
            result.reason = t!(
                "cpu-speedup-below-reason",
                speedup = s,
                first = spec.tiers[0].speedup
            );
            t!(
                "cpu-speedup-below-details",
                function = item.function,
                measured = measured,
                tiers = tiers.join(", ")
            )
        }
    };
    if let Some(busy) = busy {
        result.details.push('\n');
        result.details.push_str(&busy);
    }
    let lines = super::chart::cpu_lines(&item.function);
    super::chart::extend(ctx, item, spec, &mut result, lines);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::size_pattern;

    #[test]
    fn a_result_right_only_on_multiples_of_a_block_is_named() {
        let cases = [
            [1, 1, 1],
            [128, 128, 128],
            [129, 65, 97],
            [200, 33, 17],
            [48, 7, 13],
            [40, 64, 64],
        ];
        let hint = size_pattern(&cases, &[1, 4]).expect("pattern");
        assert!(hint.contains("m (rows of A) is a multiple of 16"), "{hint}");
        assert_eq!(size_pattern(&cases, &[0, 1]), None);
        assert_eq!(size_pattern(&cases, &[]), None);
    }
}
