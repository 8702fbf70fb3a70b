//! The worker side lives in its own crate ([`grader_worker::serve`], re-exported here): the
//! engine adds only what the `grader` binary serves itself, the speed items' baselines, which
//! never call a submission.

pub use grader_worker::serve::*;

/// Serves one yardstick order from stdin with the grader's own code only (`labs` finds the
/// order's lab): what the `grader` binary does when official grading starts it as
/// a speed item's baseline worker. Any other order is refused: this process never runs a
/// submission.
pub fn serve_yardstick(labs: crate::lab::Labs) -> Result<(), WorkerError> {
    serve_with(&|order, checkpoints| {
        if !order.yardstick {
            return Err(format!(
                "item `{}`: the grader's own binary serves only yardstick orders",
                order.item
            ));
        }
        let lab = labs
            .find(&order.lab)
            .filter(|lab| lab.kind(&order.kind).is_some())
            .ok_or_else(|| {
                format!(
                    "item `{}`: this grader has no lab `{}` with the kind `{}`",
                    order.item, order.lab, order.kind
                )
            })?;
        (lab.yardstick)(order, checkpoints)
    })
}
