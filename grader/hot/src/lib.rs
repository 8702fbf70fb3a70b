//! The grader's hot code, and nothing else: what runs between two readings of the grader's
//! clock (the stopwatch's hand-over of a run's operands and result through the shared
//! [`region`], in [`stopwatch`]; the grader's own [`baselines`] that speedups are measured
//! against, on the CPU and on the GPU), and the per-element work every grading run repeats
//! ([`inputs`], each run's seeded matrices, made by the worker and the supervisor alike;
//! [`wire`], a report's matrices as text and its seal; the stable [`hash`] both use; with the
//! `training` feature, the training lab's datasets and reference models, [`training`]).
//!
//! A released lab crate builds this crate fully optimised and the rest of the grader (the
//! supervisor, the judges, the workers' set-up) unoptimised, so that a student's first
//! `cargo test` is short and its grading as fast. Keep here only such code, and keep its
//! entry points non-generic: a generic function is compiled in the crate that calls it, at
//! that crate's optimisation level.

pub mod baselines;
pub mod hash;
pub mod inputs;
pub mod region;
pub mod stopwatch;
#[cfg(feature = "training")]
pub mod training;
pub mod wire;

#[cfg(test)]
mod tests {
    /// Every public function here is compiled here, optimised: a generic one (type
    /// parameters, `impl Trait` arguments) would be compiled in each caller's crate instead,
    /// at that crate's level, which a released lab crate sets to 0 for the grader's others.
    #[test]
    fn no_entry_point_is_generic() {
        let sources = [
            ("baselines.rs", include_str!("baselines.rs")),
            ("hash.rs", include_str!("hash.rs")),
            ("inputs.rs", include_str!("inputs.rs")),
            ("region.rs", include_str!("region.rs")),
            ("stopwatch.rs", include_str!("stopwatch.rs")),
            ("wire.rs", include_str!("wire.rs")),
            ("training/data.rs", include_str!("training/data.rs")),
            (
                "training/reference.rs",
                include_str!("training/reference.rs"),
            ),
        ];
        let mut seen = 0;
        for (file, text) in sources {
            for (at, _) in text.match_indices("pub fn ") {
                let signature = &text[at..];
                let signature = &signature[..signature.find('{').unwrap_or(signature.len())];
                let name = &signature[..signature.find('(').unwrap_or(signature.len())];
                assert!(
                    !name.contains('<') && !signature.contains("impl "),
                    "{file}: `{}` is generic",
                    signature.trim()
                );
                seen += 1;
            }
        }
        assert!(seen > 40, "only {seen} public functions found");
    }
}
