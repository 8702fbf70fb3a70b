//! The matmul lab's part of the student's speed chart: the extra shapes its speed items are
//! timed at after grading, and what the chart calls their lines. The words a student reads
//! are here, in one place.

use super::t;
use grader_engine::check::speedup::Speed;
use grader_engine::check::{sweep, GradeContext};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;

/// Paired samples at each extra shape: enough for a median, few enough to stay cheap.
pub const SAMPLES: usize = 3;

/// Extra shapes at most: the graded shape shrunk by √2 each time, down to an eighth of it.
const STEPS: i32 = 6;

/// The extra shapes beside the graded one, largest first: each dimension shrunk by √2 per
/// step (at least 8), so that they lie evenly on the chart's log scale. The engine stops at
/// the first one too quick to time from outside the student's program.
pub fn sizes(graded: [usize; 3]) -> Vec<[usize; 3]> {
    let mut sizes: Vec<[usize; 3]> = (1..=STEPS)
        .map(|step| {
            let shrink = 2f64.powf(f64::from(step) / 2.0);
            graded.map(|x| ((x as f64 / shrink).round() as usize).clamp(x.min(8), x))
        })
        .filter(|&s| s != graded)
        .collect();
    sizes.dedup();
    sizes
}

/// The lines of the CPU speed item's chart: the student's function, the grader's baseline.
pub fn cpu_lines(function: &str) -> (String, String) {
    (
        t!("chart-line-yours", function = function),
        t!("chart-line-naive"),
    )
}

/// The lines of the GPU speed item's chart: the student's GPU product, ndarray's on the CPU.
pub fn gpu_lines(function: &str) -> (String, String) {
    (
        t!("chart-line-yours-gpu", function = function),
        t!("chart-line-ndarray"),
    )
}

/// Names the lines of a graded speed result's sweep and adds the extra shapes' times to it. A
/// result without a sweep (its speed was not measured) is left as it is.
pub fn extend(
    ctx: &GradeContext,
    item: &Item,
    spec: &Speed,
    result: &mut ItemResult,
    (candidate, baseline): (String, String),
) {
    let Some(chart) = result.sweep.as_mut() else {
        return;
    };
    chart.candidate = candidate;
    chart.baseline = baseline;
    chart
        .points
        .extend(sweep::measure(ctx, item, &sizes(spec.size), SAMPLES));
    chart
        .points
        .sort_by_key(|p| p.size.iter().product::<usize>());
}

#[cfg(test)]
mod tests {
    use super::sizes;

    #[test]
    fn the_extra_shapes_shrink_by_root_two_down_to_an_eighth_and_never_below_8() {
        let side: Vec<usize> = sizes([256, 256, 256]).iter().map(|s| s[0]).collect();
        assert_eq!(side, [181, 128, 91, 64, 45, 32]);
        assert_eq!(
            sizes([32, 16, 64]),
            [
                [23, 11, 45],
                [16, 8, 32],
                [11, 8, 23],
                [8, 8, 16],
                [8, 8, 11],
                [8, 8, 8]
            ]
        );
        assert_eq!(sizes([8, 8, 8]), Vec::<[usize; 3]>::new());
        assert_eq!(sizes([4, 300, 4])[0], [4, 212, 4]);
    }
}
