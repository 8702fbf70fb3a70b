//! The pool of block workers: one thread per CPU core but one (the stream thread that
//! submits a launch works on it too).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, LazyLock, Mutex};

use super::Job;

struct Pool {
    jobs: Mutex<VecDeque<Arc<Job>>>,
    cv: Condvar,
    workers: usize,
}

static POOL: LazyLock<Pool> = LazyLock::new(|| {
    let n = crate::util::cores().saturating_sub(1);
    let mut started = 0;
    for i in 0..n {
        let ok = std::thread::Builder::new()
            .name(format!("gpu-labs-sm{i}"))
            .stack_size(16 << 20)
            .spawn(worker)
            .is_ok();
        started += usize::from(ok);
    }
    Pool {
        jobs: Mutex::new(VecDeque::new()),
        cv: Condvar::new(),
        workers: started,
    }
});

fn worker() {
    loop {
        let job = {
            let mut q = POOL.jobs.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                while q.front().is_some_and(|j| j.exhausted()) {
                    q.pop_front();
                }
                if let Some(j) = q.front() {
                    let j = j.clone();
                    j.enter();
                    break j;
                }
                q = POOL.cv.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        job.work();
    }
}

/// Offers a launch's blocks to the pool's workers.
pub fn submit(job: &Arc<Job>) {
    if POOL.workers == 0 {
        return;
    }
    POOL.jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push_back(job.clone());
    POOL.cv.notify_all();
}
