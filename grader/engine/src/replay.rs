//! For tests (the `replay` feature): the outcome a worker would have sent, handed to the
//! judges by the test itself. A property test sets an answer for every order this thread
//! sends, and the judges meet it exactly where a worker's report comes in
//! ([`crate::check::outcome_of`]); nothing else changes. Only code in the supervisor's process
//! can set it (a call, never input); no submission runs there.

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

thread_local! {
    /// Where the last panic on this thread was raised (the quiet hook's record).
    static PANICKED_AT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Runs `body` (a property test's loop) with panics kept quiet: each is recorded, not printed,
/// so that [`caught`] can say where it was raised.
pub fn with_quiet_panics<T>(body: impl FnOnce() -> T) -> T {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        PANICKED_AT.with(|p| *p.borrow_mut() = at.unwrap_or_default());
    }));
    let out = body();
    std::panic::set_hook(previous);
    out
}

/// Runs `f`; a panic comes back as its message and where it was raised (inside
/// [`with_quiet_panics`]).
pub fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!(
            "{message} (at {})",
            PANICKED_AT.with(|p| p.borrow().clone())
        )
    })
}
