//! Stream hazards, in checked runs: two operations on different streams that touch one device
//! allocation, at least one of them writing, with nothing ordering them (no event waited on,
//! no synchronisation), which a GPU may run in either order or at once.
//!
//! Ordering is kept as vector clocks, computed in the order the host issues its calls: one
//! per stream (advanced by each operation), per event (the stream's clock when recorded) and
//! for the host (merged by every synchronisation). An operation carries the clock of its
//! stream when it was issued; the allocations it touches are checked when it runs (kernels
//! learn theirs from the checked module), against the latest read and write of every other
//! stream.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

/// A vector clock: for each stream, how many of its operations are ordered before.
type Clock = BTreeMap<u64, u64>;

/// Where an operation stands: its stream, its number there, and what is ordered before it.
#[derive(Debug)]
pub struct Stamp {
    stream: u64,
    seq: u64,
    clock: Clock,
}

/// One earlier access of an allocation.
#[derive(Debug, Clone)]
struct Access {
    stream: u64,
    seq: u64,
    write: bool,
    what: String,
}

#[derive(Debug, Default)]
struct State {
    streams: HashMap<u64, Clock>,
    events: HashMap<usize, Clock>,
    host: Clock,
    /// Per allocation (its span's start): the latest read and write of each stream.
    allocs: HashMap<usize, Vec<Access>>,
    reported: bool,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Mutex::default);

thread_local! {
    /// The stamp of the operation the stream worker on this thread is running.
    static CURRENT: RefCell<Option<Arc<Stamp>>> = const { RefCell::new(None) };
}

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether hazards are tracked: in checked runs only.
pub fn enabled() -> bool {
    crate::config::get().race_check
}

fn join(into: &mut Clock, from: &Clock) {
    for (&s, &n) in from {
        let e = into.entry(s).or_insert(0);
        *e = (*e).max(n);
    }
}

/// Issues an operation on `stream` after those of `after` (the legacy default stream's
/// implicit ordering) and of the host; returns its stamp.
pub fn issue(stream: u64, after: &[u64]) -> Arc<Stamp> {
    let mut st = lock();
    let mut clock = st.streams.get(&stream).cloned().unwrap_or_default();
    let host = st.host.clone();
    join(&mut clock, &host);
    for other in after {
        if let Some(c) = st.streams.get(other).cloned() {
            join(&mut clock, &c);
        }
    }
    let seq = clock.get(&stream).copied().unwrap_or(0) + 1;
    clock.insert(stream, seq);
    st.streams.insert(stream, clock.clone());
    Arc::new(Stamp { stream, seq, clock })
}

/// `cuEventRecord`: the event holds what is ordered before the stream's next operation.
pub fn record(event: usize, stream: u64) {
    let mut st = lock();
    let mut clock = st.streams.get(&stream).cloned().unwrap_or_default();
    let host = st.host.clone();
    join(&mut clock, &host);
    st.events.insert(event, clock);
}

/// `cuStreamWaitEvent`: the stream's later operations come after what the event recorded.
pub fn wait_event(stream: u64, event: usize) {
    let mut st = lock();
    let ev = st.events.get(&event).cloned().unwrap_or_default();
    join(st.streams.entry(stream).or_default(), &ev);
}

/// The host waited for everything issued so far to `stream`.
pub fn host_waited_stream(stream: u64) {
    let mut st = lock();
    let c = st.streams.get(&stream).cloned().unwrap_or_default();
    join(&mut st.host, &c);
}

/// The host waited for an event.
pub fn host_waited_event(event: usize) {
    let mut st = lock();
    let c = st.events.get(&event).cloned().unwrap_or_default();
    join(&mut st.host, &c);
}

/// The host waited for every stream (a context synchronisation).
pub fn host_waited_all() {
    let mut st = lock();
    let all: Vec<Clock> = st.streams.values().cloned().collect();
    for c in all {
        join(&mut st.host, &c);
    }
}

/// An allocation was freed: its accesses are forgotten (its address may come back).
fn forget(span_lo: usize) {
    lock().allocs.remove(&span_lo);
}

/// Frees an allocation of `kind` ([`crate::memory::release`]) and forgets what this check
/// knew of it; its size, or `None` when `base` is not the start of one.
pub fn release(base: usize, kind: crate::memory::Kind) -> Option<usize> {
    let freed = crate::memory::release(base, kind)?;
    forget(freed.span_start());
    Some(freed.size)
}

/// Runs `f` with `stamp` as the running operation's (on the stream worker's thread).
pub fn running<R>(stamp: Option<Arc<Stamp>>, f: impl FnOnce() -> R) -> R {
    CURRENT.with(|c| *c.borrow_mut() = stamp);
    let r = f();
    CURRENT.with(|c| *c.borrow_mut() = None);
    r
}

/// The running operation touches the device memory at `addr` (`what` names it for a report).
pub fn touch(addr: usize, write: bool, what: &dyn Fn() -> String) {
    let Some(stamp) = CURRENT.with(|c| c.borrow().clone()) else {
        return;
    };
    let Some((lo, hi)) = crate::memory::device_span(addr) else {
        return;
    };
    let mut st = lock();
    let list = st.allocs.entry(lo).or_default();
    let conflict = list
        .iter()
        .find(|a| {
            a.stream != stamp.stream
                && (a.write || write)
                && stamp.clock.get(&a.stream).copied().unwrap_or(0) < a.seq
        })
        .cloned();
    let mine = Access {
        stream: stamp.stream,
        seq: stamp.seq,
        write,
        what: what(),
    };
    match list
        .iter_mut()
        .find(|a| a.stream == stamp.stream && a.write == write)
    {
        Some(a) => *a = mine.clone(),
        None => list.push(mine.clone()),
    }
    if let Some(first) = conflict {
        if !std::mem::replace(&mut st.reported, true) {
            drop(st);
            crate::findings::report(
                crate::findings::Kind::StreamHazard,
                report(&first, &mine, addr, lo, hi),
            );
        }
    }
}

fn verb(write: bool) -> &'static str {
    if write {
        "writes"
    } else {
        "reads"
    }
}

fn report(first: &Access, second: &Access, addr: usize, lo: usize, hi: usize) -> String {
    format!(
        "gpu-labs emulator: stream hazard: {} on stream {} {} the device allocation at {:#x} \
         ({} bytes with its guard pages), and {} on stream {} {} it, with nothing ordering \
         the two: the GPU may run them in either order or at the same time. Hint: record an \
         event on stream {} after the first (cuEventRecord) and make stream {} wait for it \
         (cuStreamWaitEvent) before the second, or synchronize stream {} before issuing the \
         second.",
        first.what,
        first.stream,
        verb(first.write),
        addr,
        hi - lo,
        second.what,
        second.stream,
        verb(second.write),
        first.stream,
        second.stream,
        first.stream,
    )
}
