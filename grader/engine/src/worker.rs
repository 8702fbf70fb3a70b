//! The worker side lives in its own crate ([`grader_worker::serve`], re-exported here): the
//! engine adds only what the `grader` binary serves itself, the speed items' baselines, which
//! never call a submission.

pub use grader_worker::serve::*;

/// Serves one yardstick order from stdin with the grader's own code only (`labs` finds the
/// lab by the order's kind): what the `grader` binary does when official grading starts it as
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
        let lab = labs.find_by_kind(&order.kind).ok_or_else(|| {
            format!(
                "item `{}`: no lab has the kind `{}`",
                order.item, order.kind
            )
        })?;
        (lab.yardstick)(order, checkpoints)
    })
}
