//! Turns paired timings into a speedup and a tier. The speedup is the median of the paired
//! ratios baseline/candidate (each pair ran back to back, so both saw the same machine); when
//! the samples' spread reaches across a tier edge, more samples are taken before deciding, so
//! the same submission graded again gets the same score.

use crate::rubric::Tier;

pub use grader_worker::task::Speed;

/// Rubric checks of a speed item's keys ([`Speed`] is plain data of the worker's crate).
pub trait SpeedKeys {
    /// Checks the keys for an item worth `points`: the key at fault and why.
    fn check(&self, points: f64) -> Result<(), crate::rubric::KeyError>;
}

impl SpeedKeys for Speed {
    fn check(&self, points: f64) -> Result<(), crate::rubric::KeyError> {
        use crate::rubric::KeyError;
        if !self.size.iter().all(|&d| d > 0 && d <= 4096) {
            return Err(KeyError::new(
                "size",
                "give the timed shape as [m, k, n], each 1..=4096",
            ));
        }
        if self.samples < 5 {
            return Err(KeyError::new("samples", "take at least 5 samples"));
        }
        if self.max_samples < self.samples {
            return Err(KeyError::new("max_samples", "must be ≥ samples"));
        }
        check_tiers(&self.tiers, points)?;
        Ok(())
    }
}

/// Checks a speed item's `tiers` for an item worth `points`: at least one, going up in speedup
/// and not down in points, each within the item's points.
pub fn check_tiers(tiers: &[Tier], points: f64) -> Result<(), crate::rubric::KeyError> {
    use crate::rubric::KeyError;
    if tiers.is_empty() {
        return Err(KeyError::new("tiers", "list at least one tier"));
    }
    for pair in tiers.windows(2) {
        if pair[1].speedup <= pair[0].speedup || pair[1].points < pair[0].points {
            return Err(KeyError::new(
                "tiers",
                "tiers must go up in speedup and must not go down in points",
            ));
        }
    }
    if tiers
        .iter()
        .any(|t| t.speedup.is_nan() || t.speedup <= 0.0 || t.points > points || t.points < 0.0)
    {
        return Err(KeyError::new(
            "tiers",
            format!("every tier needs a speedup > 0 and points within 0..={points}"),
        ));
    }
    Ok(())
}

/// Relative distance from a tier edge inside which the grader samples more.
const EDGE_MARGIN: f64 = 0.08;

/// What the samples so far say.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The tier is clear: the speedup, the tier reached (if any) and its points.
    Decided {
        /// Median paired speedup.
        speedup: f64,
        /// Index of the highest tier reached.
        tier: Option<usize>,
        /// Points of that tier.
        points: f64,
    },
    /// Too close to an edge: take more samples.
    NeedMore,
}

/// A speedup as reports show it: one decimal, two below 1× (0.05× is not 0.0×).
pub fn shown(speedup: f64) -> String {
    if speedup < 1.0 {
        format!("{speedup:.2}")
    } else {
        format!("{speedup:.1}")
    }
}

/// The tiers as a speed item's details list them: `3× → 1 pt`, one per tier.
pub fn listed(tiers: &[Tier]) -> Vec<String> {
    tiers
        .iter()
        .map(|t| format!("{}× → {}", t.speedup, crate::report::points(t.points)))
        .collect()
}

/// The median of a non-empty list.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The paired ratios baseline/candidate.
pub fn ratios(baseline_ns: &[u64], candidate_ns: &[u64]) -> Vec<f64> {
    baseline_ns
        .iter()
        .zip(candidate_ns)
        .map(|(&b, &c)| b as f64 / (c.max(1)) as f64)
        .collect()
}

/// Decides the tier from the ratios, or asks for more when `can_sample_more` and an edge is
/// within the samples' interquartile range or within [`EDGE_MARGIN`] of the median.
pub fn decide(ratios: &[f64], tiers: &[Tier], can_sample_more: bool) -> Decision {
    let speedup = median(ratios);
    if can_sample_more {
        let mut v = ratios.to_vec();
        v.sort_by(f64::total_cmp);
        let q1 = v[v.len() / 4];
        let q3 = v[(3 * v.len()) / 4];
        let near = tiers.iter().any(|t| {
            (q1 < t.speedup && t.speedup <= q3) || (speedup / t.speedup - 1.0).abs() < EDGE_MARGIN
        });
        if near {
            return Decision::NeedMore;
        }
    }
    let tier = tiers.iter().rposition(|t| speedup >= t.speedup);
    Decision::Decided {
        speedup,
        tier,
        points: tier.map(|t| tiers[t].points).unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers() -> Vec<Tier> {
        vec![
            Tier {
                speedup: 1.5,
                points: 1.0,
            },
            Tier {
                speedup: 3.0,
                points: 2.0,
            },
        ]
    }

    #[test]
    fn a_clear_speedup_gets_its_tier() {
        let d = decide(&[4.0, 4.1, 3.9, 4.2, 4.0], &tiers(), true);
        assert_eq!(
            d,
            Decision::Decided {
                speedup: 4.0,
                tier: Some(1),
                points: 2.0
            }
        );
        let d = decide(&[0.5, 0.5, 0.6, 0.4, 0.5], &tiers(), true);
        assert_eq!(
            d,
            Decision::Decided {
                speedup: 0.5,
                tier: None,
                points: 0.0
            }
        );
    }

    #[test]
    fn near_an_edge_it_samples_more_then_decides_by_the_median() {
        let r = [2.9, 3.1, 2.95, 3.05, 3.02];
        assert_eq!(decide(&r, &tiers(), true), Decision::NeedMore);
        match decide(&r, &tiers(), false) {
            Decision::Decided { tier, .. } => assert_eq!(tier, Some(1)),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn a_noisy_spread_over_an_edge_samples_more() {
        assert_eq!(
            decide(&[1.0, 2.0, 2.2, 2.4, 4.0, 4.0], &tiers(), true),
            Decision::NeedMore
        );
    }
}
