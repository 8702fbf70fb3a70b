//! A speed item's chart data: after the item is graded, the supervisor times the baseline and
//! the candidate at a few more shapes, with few samples, for the student's speed chart
//! ([`crate::report::Sweep`]). Nothing here earns or costs points: the grade is decided before
//! the sweep starts, and a sweep that breaks off only leaves its points out of the chart.
//! Every time is the supervisor's own, as for the grade ([`super::timed::SpeedWorkers`]).

use super::speedup::{median, Speed};
use super::timed::SpeedWorkers;
use super::{GradeContext, Sampled};
use crate::protocol::Backend;
use crate::report::{Sweep, SweepDevice, SweepPoint, SweepTier};
use crate::rubric::Item;
use crate::stopwatch::words_for;

/// Rounds of a sweep's samples start here, so its inputs are never the graded rounds'.
const FIRST_ROUND: usize = 1_000;

/// The median of some nanosecond times, in milliseconds.
fn median_ms(ns: &[u64]) -> f64 {
    median(&ns.iter().map(|&t| t as f64 / 1e6).collect::<Vec<_>>())
}

/// The graded measurement as a chart point: the medians of its paired samples at `size`.
pub fn graded_point(size: [usize; 3], sampled: &Sampled) -> SweepPoint {
    SweepPoint {
        size,
        baseline_ms: median_ms(&sampled.baseline_ns),
        candidate_ms: median_ms(&sampled.candidate_ns),
        samples: sampled.baseline_ns.len(),
        graded: true,
    }
}

/// Where a speed item's candidate ran: the CPU for a CPU-track item, else the run's backend.
pub fn device(ctx: &GradeContext, item: &Item) -> SweepDevice {
    match ctx.order(item).backend {
        Backend::Real => SweepDevice::Gpu,
        Backend::Emulated => SweepDevice::EmulatedGpu,
        Backend::NoGpu => SweepDevice::Cpu,
    }
}

/// A graded speed item's sweep with its graded point only; the lab names its lines and may
/// add points ([`measure`]).
pub fn graded(ctx: &GradeContext, item: &Item, spec: &Speed, sampled: &Sampled) -> Sweep {
    Sweep {
        candidate: String::new(),
        baseline: String::new(),
        device: device(ctx, item),
        tiers: tiers(&spec.tiers),
        points: vec![graded_point(spec.size, sampled)],
        handover_ms: sampled.overhead_ns as f64 / 1e6,
    }
}

/// A speed item's sweep where it was not timed (no points), so the chart can say so.
pub fn not_timed(ctx: &GradeContext, item: &Item) -> Sweep {
    Sweep {
        candidate: String::new(),
        baseline: String::new(),
        device: device(ctx, item),
        tiers: tiers(item.spec.tiers()),
        points: Vec::new(),
        handover_ms: 0.0,
    }
}

/// The rubric's tiers as a chart draws them.
fn tiers(tiers: &[crate::rubric::Tier]) -> Vec<SweepTier> {
    tiers
        .iter()
        .map(|t| SweepTier {
            speedup: t.speedup,
            points: t.points,
        })
        .collect()
}

/// A shape is kept only when the candidate's median time is at least this many times the
/// hand-over's cost subtracted from it; below, the subtraction's noise is the time's size.
const FLOOR_HANDOVERS: u64 = 1;

/// Times each shape of `sizes` with `samples` paired samples (at least 1), in one pair of
/// workers started at the largest shape, largest first. Returns the points measured, smallest
/// first. The sweep ends at the first shape where the candidate gives a wrong result, breaks
/// off, or runs too quickly to time from outside its program (see [`FLOOR_HANDOVERS`]); the
/// shapes before it are kept.
pub fn measure(
    ctx: &GradeContext,
    item: &Item,
    sizes: &[[usize; 3]],
    samples: usize,
) -> Vec<SweepPoint> {
    let mut sizes = sizes.to_vec();
    sizes.sort_by_key(|&s| std::cmp::Reverse(words_for(s)));
    sizes.dedup();
    let Some(&largest) = sizes.first() else {
        return Vec::new();
    };
    let Ok(Ok(mut workers)) = SpeedWorkers::start(ctx, item, largest) else {
        return Vec::new();
    };
    // What each candidate run lost to the hand-over: a GPU candidate's is far smaller than the
    // CPU hand-over of the yardstick's (see `SpeedWorkers::candidate_overhead_ns`).
    let floor_ns = FLOOR_HANDOVERS * workers.candidate_overhead_ns;
    let mut points = Vec::with_capacity(sizes.len());
    for (index, &size) in sizes.iter().enumerate() {
        if !workers.reshape(ctx, item, size) {
            workers.abandon();
            return sorted(points);
        }
        let measured;
        (workers, measured) = match workers.round(ctx, item, FIRST_ROUND + index, samples.max(1)) {
            Ok(Ok(round)) => round,
            _ => return sorted(points),
        };
        let mut candidate_ns = measured.candidate_ns.clone();
        candidate_ns.sort_unstable();
        let too_quick = candidate_ns
            .get(candidate_ns.len() / 2)
            .is_none_or(|&t| t < floor_ns);
        if measured.wrong_sample.is_some() || too_quick {
            break;
        }
        points.push(SweepPoint {
            size,
            baseline_ms: median_ms(&measured.baseline_ns),
            candidate_ms: median_ms(&measured.candidate_ns),
            samples: measured.baseline_ns.len(),
            graded: false,
        });
    }
    let _ = workers.finish(item);
    sorted(points)
}

/// The points smallest first.
fn sorted(mut points: Vec<SweepPoint>) -> Vec<SweepPoint> {
    points.sort_by_key(|p| words_for(p.size));
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graded_point_is_the_medians_of_the_graded_samples_in_milliseconds() {
        let sampled = Sampled {
            speedup: 4.0,
            tier: Some(0),
            points: 1.0,
            baseline_ns: vec![40_000_000, 20_000_000, 30_000_000],
            candidate_ns: vec![5_000_000, 7_000_000, 6_000_000],
            overhead_ns: 0,
            busy: None,
        };
        let p = graded_point([8, 8, 8], &sampled);
        assert_eq!(p.baseline_ms, 30.0);
        assert_eq!(p.candidate_ms, 6.0);
        assert_eq!((p.samples, p.graded, p.size), (3, true, [8, 8, 8]));
    }

    #[test]
    fn results_kept_before_sweeps_existed_still_load() {
        let old = r#"{"id":"fast_speedup","title":"t","score":4.0,"max_score":4.0,
            "status":"passed","reason":"r","details":"d","mode":null,"speedup":6.5}"#;
        let item: crate::report::ItemResult = serde_json::from_str(old).expect("loads");
        assert_eq!(item.sweep, None);
        let text = serde_json::to_string(&item).expect("serializes");
        assert!(!text.contains("sweep"), "{text}");
        let sweep: Sweep = serde_json::from_str(
            r#"{"candidate":"c","baseline":"b","device":"emulated-gpu","tiers":[],
                "points":[{"size":[8,8,8],"baseline_ms":1.0,"candidate_ms":0.5,"samples":3}]}"#,
        )
        .expect("a sweep without the newer keys loads");
        assert_eq!(sweep.device, SweepDevice::EmulatedGpu);
        assert!(!sweep.points[0].graded && sweep.handover_ms == 0.0);
    }

    #[test]
    fn points_come_smallest_first() {
        let point = |n| SweepPoint {
            size: [n, n, n],
            baseline_ms: 1.0,
            candidate_ms: 1.0,
            samples: 1,
            graded: false,
        };
        let got = sorted(vec![point(64), point(16), point(32)]);
        let sizes: Vec<usize> = got.iter().map(|p| p.size[0]).collect();
        assert_eq!(sizes, [16, 32, 64]);
    }
}
