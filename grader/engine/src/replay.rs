//! Tests only (the `replay` feature): the outcome a worker would have sent, handed to the
//! judges by the test itself. A property test sets an answer for every order this thread
//! sends, and the judges meet it exactly where a worker's report comes in
//! ([`crate::check::outcome_of`]); nothing else changes. Only the test's own code can set it.

use crate::protocol::{Outcome, WorkOrder};
use std::cell::RefCell;

/// What answers an order in place of a worker: the outcome, and for a call the supervisor
/// brackets with its own clock ([`crate::check::timed::bracketed`]), the brackets (ns).
type Answer = Box<dyn FnMut(&WorkOrder) -> (Outcome, Vec<u64>)>;

thread_local! {
    static ANSWER: RefCell<Option<Answer>> = const { RefCell::new(None) };
}

/// While the returned guard lives, every order this thread sends is answered by `answer`.
pub fn answer_with(answer: impl FnMut(&WorkOrder) -> (Outcome, Vec<u64>) + 'static) -> Replaying {
    ANSWER.with(|a| *a.borrow_mut() = Some(Box::new(answer)));
    Replaying(())
}

/// Ends the replay when dropped.
pub struct Replaying(());

impl Drop for Replaying {
    fn drop(&mut self) {
        ANSWER.with(|a| *a.borrow_mut() = None);
    }
}

/// The replayed outcome for `order` (and brackets), when a replay is on.
pub(crate) fn answer(order: &WorkOrder) -> Option<(Outcome, Vec<u64>)> {
    ANSWER.with(|a| a.borrow_mut().as_mut().map(|answer| answer(order)))
}
