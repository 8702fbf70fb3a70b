//! Grades a submission's items several at once: each item is its own worker process, judged
//! by the supervisor on its own thread, so a table of items takes about as long as its longest
//! stretch on each core instead of their sum. Items that must have the machine to themselves
//! (they measure speed, or use a real GPU) still run alone: every item before them finishes
//! first, and nothing starts beside them. The order is kept: items start in the order given
//! (what a student edited first), and the results come back in it.
//!
//! What an item's result is never depends on its neighbours: each worker has its own process
//! tree, scratch folder and limits (memory, CPU time, processes: counted in its own user
//! namespace), the inputs come from the seed and the item's id, and the compiled kernels it
//! shares with the other items of its submission are keyed by their source.

/// The most items graded at once, however big the machine: beyond it a table barely gets
/// shorter (a lab has about twenty items, the longest a few seconds) and a student's laptop
/// stays usable while `cargo test` runs.
pub const MOST_AT_ONCE: usize = 4;

/// How many items to grade at once here: one per core, at most [`MOST_AT_ONCE`], and no more
/// than half this machine's memory holds at a worker's limit each
/// ([`grader_engine::sandbox::limits::MEMORY`]), so that a submission that fills its memory
/// in every item at once cannot take the machine's; at least one.
pub fn items_at_once() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    at_once(cores, memory_bytes())
}

/// [`items_at_once`] for `cores` cores and `memory` bytes (unknown: one item at a time).
fn at_once(cores: usize, memory: Option<u64>) -> usize {
    let by_memory = memory.map_or(1, |bytes| {
        usize::try_from(bytes / 2 / grader_engine::sandbox::limits::MEMORY).unwrap_or(1)
    });
    cores.min(by_memory).clamp(1, MOST_AT_ONCE)
}

/// This machine's memory, or the cgroup's limit where that is lower (a container's).
fn memory_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let (pages, size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let physical = u64::try_from(pages)
            .ok()?
            .checked_mul(u64::try_from(size).ok()?)?;
        let cgroup = grader_engine::intake::read_text(
            std::path::Path::new("/sys/fs/cgroup/memory.max"),
            grader_engine::intake::SMALL_FILE_BYTES,
            "",
        )
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok());
        Some(cgroup.map_or(physical, |limit| limit.min(physical)))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// What [`in_turns`] reports, on the calling thread: an element started, or finished with
/// its result.
pub enum Turn<'a, T, R> {
    /// `run` is about to be called on it.
    Started(&'a T),
    /// `run` returned this for it.
    Finished(&'a T, &'a R),
}

/// Calls `run` on every element of `items`, up to `at_once` at a time, each on a thread of
/// its own, starting them in order; an element for which `alone` is true runs with nothing
/// beside it. `report` hears of every start and finish on the calling thread (so it may print
/// or hold `&mut` state). Returns the results in `items`' order, or the first error, after
/// which nothing more starts and what runs is waited for. With `at_once` 1 everything runs on
/// the calling thread, one after another.
pub fn in_turns<T: Sync, R: Send, E: Send>(
    items: &[T],
    at_once: usize,
    alone: impl Fn(&T) -> bool,
    run: impl Fn(&T) -> Result<R, E> + Sync,
    report: &mut dyn FnMut(Turn<'_, T, R>),
) -> Result<Vec<R>, E> {
    if at_once <= 1 {
        let mut results = Vec::with_capacity(items.len());
        for item in items {
            report(Turn::Started(item));
            let result = run(item)?;
            report(Turn::Finished(item, &result));
            results.push(result);
        }
        return Ok(results);
    }
    let run = &run;
    std::thread::scope(|scope| {
        let (done, finished) = std::sync::mpsc::channel::<(usize, Result<R, E>)>();
        let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
        let mut first_error = None;
        let mut next = 0;
        let mut running = 0;
        let mut alone_running = false;
        loop {
            while first_error.is_none() && next < items.len() && !alone_running {
                let item = &items[next];
                let by_itself = alone(item);
                if running >= at_once || (by_itself && running > 0) {
                    break;
                }
                report(Turn::Started(item));
                let done = done.clone();
                let index = next;
                scope.spawn(move || {
                    // The receiver lives until every thread is done: a send cannot fail.
                    let _ = done.send((index, run(item)));
                });
                running += 1;
                next += 1;
                alone_running = by_itself;
            }
            if running == 0 {
                break;
            }
            // A thread that panics drops its sender without sending; the scope then
            // re-raises its panic once every thread has ended.
            let Ok((index, result)) = finished.recv() else {
                break;
            };
            running -= 1;
            alone_running = false;
            match result {
                Ok(result) => {
                    report(Turn::Finished(&items[index], &result));
                    results[index] = Some(result);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(results.into_iter().flatten().collect()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    /// Runs `items` (true: alone) through [`in_turns`], each taking `ms`, and returns the
    /// results, the most that ran at once, what ran beside each item, and the report's order.
    fn trace(
        items: &[bool],
        at_once: usize,
        ms: u64,
    ) -> (Vec<usize>, usize, Vec<usize>, Vec<String>) {
        let indexed: Vec<(usize, bool)> = items.iter().copied().enumerate().collect();
        let now = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let beside = Mutex::new(vec![0; items.len()]);
        let mut heard = Vec::new();
        let results = in_turns(
            &indexed,
            at_once,
            |(_, alone)| *alone,
            |(i, _)| {
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(n, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(ms));
                let others = now.load(Ordering::SeqCst) - 1;
                if let Ok(mut b) = beside.lock() {
                    b[*i] = b[*i].max(others);
                }
                now.fetch_sub(1, Ordering::SeqCst);
                Ok::<usize, String>(*i * 10)
            },
            &mut |turn| match turn {
                Turn::Started((i, _)) => heard.push(format!("start {i}")),
                Turn::Finished((i, _), r) => heard.push(format!("end {i} {r}")),
            },
        )
        .expect("no item fails");
        let beside = beside.into_inner().expect("not poisoned");
        (results, most.into_inner(), beside, heard)
    }

    #[test]
    fn items_run_at_once_up_to_the_limit_and_come_back_in_order() {
        let (results, most, _, heard) = trace(&[false; 7], 3, 100);
        assert_eq!(results, vec![0, 10, 20, 30, 40, 50, 60]);
        assert_eq!(most, 3, "three at once, never more");
        let starts: Vec<&String> = heard.iter().filter(|h| h.starts_with("start")).collect();
        let in_order: Vec<String> = (0..7).map(|i| format!("start {i}")).collect();
        assert_eq!(
            starts,
            in_order.iter().collect::<Vec<_>>(),
            "started in order"
        );
        assert_eq!(
            heard.len(),
            14,
            "every start and finish heard once: {heard:?}"
        );
    }

    #[test]
    fn an_item_that_runs_alone_has_nothing_beside_it() {
        let items = [false, false, true, false, false, true, true, false];
        let (results, most, beside, heard) = trace(&items, 4, 80);
        assert_eq!(results, (0..8).map(|i| i * 10).collect::<Vec<_>>());
        assert!(most >= 2, "the others still share the machine: {heard:?}");
        for (i, alone) in items.iter().enumerate() {
            if *alone {
                assert_eq!(beside[i], 0, "item {i} had a neighbour: {heard:?}");
                // Everything before it had finished when it started, nothing after it began.
                let start = heard.iter().position(|h| *h == format!("start {i}"));
                let end = heard
                    .iter()
                    .position(|h| h.starts_with(&format!("end {i} ")));
                let (Some(start), Some(end)) = (start, end) else {
                    panic!("item {i} not heard: {heard:?}")
                };
                assert_eq!(end, start + 1, "item {i} ran with others: {heard:?}");
            }
        }
    }

    #[test]
    fn one_at_a_time_runs_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let items = [1, 2, 3];
        let mut heard = 0;
        let results = in_turns(
            &items,
            1,
            |_| false,
            |n| {
                assert_eq!(std::thread::current().id(), caller);
                Ok::<i32, ()>(n * 2)
            },
            &mut |_| heard += 1,
        );
        assert_eq!(results, Ok(vec![2, 4, 6]));
        assert_eq!(heard, 6);
    }

    #[test]
    fn after_an_error_nothing_more_starts_and_the_first_error_is_returned() {
        let items: Vec<usize> = (0..10).collect();
        let started = AtomicUsize::new(0);
        let result = in_turns(
            &items,
            2,
            |_| false,
            |i| {
                started.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                if *i == 1 {
                    Err(format!("item {i} failed"))
                } else {
                    Ok(*i)
                }
            },
            &mut |_| {},
        );
        assert_eq!(result, Err("item 1 failed".to_string()));
        assert!(
            started.into_inner() <= 4,
            "at most the items already started or next in line ran after the error"
        );
    }

    #[test]
    fn items_at_once_follow_the_cores_and_half_the_memory() {
        const GIB: u64 = 1 << 30;
        // This VM and CI: 2 cores, 24 GiB.
        assert_eq!(at_once(2, Some(24 * GIB)), 2);
        // A laptop with 8 GiB: half of it holds one worker's 4 GiB.
        assert_eq!(at_once(8, Some(8 * GIB)), 1);
        assert_eq!(at_once(8, Some(16 * GIB)), 2);
        // A big machine: the cap.
        assert_eq!(at_once(64, Some(512 * GIB)), MOST_AT_ONCE);
        // A container limited to 2 GiB, or memory unknown: one at a time.
        assert_eq!(at_once(4, Some(2 * GIB)), 1);
        assert_eq!(at_once(4, None), 1);
        assert_eq!(at_once(1, Some(64 * GIB)), 1);
    }

    #[test]
    fn this_machine_grades_at_least_one_item_and_at_most_the_cap() {
        let n = items_at_once();
        assert!((1..=MOST_AT_ONCE).contains(&n), "{n}");
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        assert!(n <= cores, "{n} items on {cores} cores");
    }
}
