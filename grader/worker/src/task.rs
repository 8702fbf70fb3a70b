//! Plain data of a work order's task that more than one lab's kinds carry (a speed item's
//! keys and tiers): the worker reads them back from the order; the engine checks them when it
//! reads the rubric.

use serde::{Deserialize, Serialize};

/// What a GPU speedup item scores where no real GPU can measure it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipPolicy {
    /// Removed from the maximum: the score is out of the other items.
    #[default]
    Skip,
    /// Scored 0 out of its points.
    Zero,
}

/// A speedup tier: reach `speedup`× the baseline and earn `points`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// The speedup over the baseline needed.
    pub speedup: f64,
    /// The points earned at this tier.
    pub points: f64,
}

/// A speed item's keys, for any lab whose speed items time a matrix product: the shape timed,
/// how many paired samples, the tiers, and (for GPU speed) what it scores with no real GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Speed {
    /// The shape `[m, k, n]` timed.
    pub size: [usize; 3],
    /// Timed samples of each side in the first round (at least 5).
    #[serde(default = "default_samples")]
    pub samples: usize,
    /// The most samples taken when the speedup sits near a tier edge.
    #[serde(default = "default_max_samples")]
    pub max_samples: usize,
    /// The points earned at each speedup; the highest tier reached counts.
    pub tiers: Vec<Tier>,
    /// What the item scores where no real GPU can measure it (GPU speed items).
    #[serde(default)]
    pub policy: SkipPolicy,
}

fn default_samples() -> usize {
    5
}
fn default_max_samples() -> usize {
    25
}
