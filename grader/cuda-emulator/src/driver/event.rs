//! Events: markers recorded into streams; an event's time is when its stream's worker really
//! reached it.

use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::Instant;

use super::hazard;
use super::stream::{self, OpKind};
use super::{code, Registry};
use crate::status::*;
use crate::util::write_out;

/// `CU_EVENT_DISABLE_TIMING`.
const DISABLE_TIMING: u32 = 2;

#[derive(Debug, Default)]
struct State {
    /// How many records were issued.
    recorded: u64,
    /// The latest record reached by its stream.
    reached: u64,
    /// When it was reached.
    time: Option<Instant>,
}

/// An event.
#[derive(Debug, Default)]
pub struct Event {
    flags: u32,
    state: Mutex<State>,
    cv: Condvar,
}

/// Handle type of events.
pub type CUevent = *mut Event;

/// All live events.
pub static EVENTS: LazyLock<Registry<Event>> = LazyLock::new(Registry::default);

impl Event {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number of records issued so far (what a wait issued now must wait for).
    pub fn recorded(&self) -> u64 {
        self.lock().recorded
    }

    /// Blocks until record number `target` has been reached.
    pub fn wait_for(&self, target: u64) {
        let mut st = self.lock();
        while st.reached < target {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn reach(&self, n: u64) {
        let mut st = self.lock();
        if st.reached < n {
            st.reached = n;
            st.time = Some(Instant::now());
        }
        drop(st);
        self.cv.notify_all();
    }
}

/// The event behind a handle.
pub fn lookup(h: CUevent) -> Result<Arc<Event>, CUresult> {
    EVENTS.get(h as usize).ok_or(INVALID_HANDLE)
}

/// Creates an event.
#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(ph: *mut CUevent, flags: u32) -> CUresult {
    if let Err(e) = super::context::current() {
        return e;
    }
    if ph.is_null() || flags > 0xf {
        return INVALID_VALUE;
    }
    let e = Arc::new(Event {
        flags,
        ..Default::default()
    });
    *ph = EVENTS.insert(e) as CUevent;
    SUCCESS
}

/// Destroys an event (pending records still complete harmlessly).
#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(h: CUevent) -> CUresult {
    if EVENTS.remove(h as usize).is_some() {
        SUCCESS
    } else {
        INVALID_HANDLE
    }
}

/// Records the work submitted so far to a stream into an event.
#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(h: CUevent, s: stream::CUstream) -> CUresult {
    let (e, s) = match (lookup(h), stream::resolve(s)) {
        (Ok(e), Ok(s)) => (e, s),
        (Err(x), _) | (_, Err(x)) => return x,
    };
    if super::hazard::enabled() {
        super::hazard::record(h as usize, s.id);
    }
    let n = {
        let mut st = e.lock();
        st.recorded += 1;
        st.recorded
    };
    code(
        s.enqueue(OpKind::Marker, move || {
            e.reach(n);
            Ok(())
        })
        .map(drop),
    )
}

/// Same as [`cuEventRecord`] (flags are ignored).
#[no_mangle]
pub unsafe extern "C" fn cuEventRecordWithFlags(
    h: CUevent,
    s: stream::CUstream,
    _flags: u32,
) -> CUresult {
    cuEventRecord(h, s)
}

/// `CUDA_SUCCESS` once the recorded work is done, else `CUDA_ERROR_NOT_READY`.
#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(h: CUevent) -> CUresult {
    match lookup(h) {
        Ok(e) => {
            let st = e.lock();
            if st.reached >= st.recorded {
                SUCCESS
            } else {
                NOT_READY
            }
        }
        Err(x) => x,
    }
}

/// Blocks until the recorded work is done.
#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(h: CUevent) -> CUresult {
    match lookup(h) {
        Ok(e) => {
            let target = e.recorded();
            e.wait_for(target);
            if super::hazard::enabled() {
                super::hazard::host_waited_event(h as usize);
            }
            SUCCESS
        }
        Err(x) => x,
    }
}

/// Milliseconds between two completed events.
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    start: CUevent,
    end: CUevent,
) -> CUresult {
    let (a, b) = match (lookup(start), lookup(end)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(x), _) | (_, Err(x)) => return x,
    };
    if ms.is_null() {
        return INVALID_VALUE;
    }
    if (a.flags | b.flags) & DISABLE_TIMING != 0 {
        return INVALID_HANDLE;
    }
    let times = |e: &Event| {
        let st = e.lock();
        if st.recorded == 0 {
            Err(INVALID_HANDLE)
        } else if st.reached < st.recorded {
            Err(NOT_READY)
        } else {
            st.time.ok_or(INVALID_HANDLE)
        }
    };
    match (times(&a), times(&b)) {
        (Ok(t0), Ok(t1)) => {
            let d = if t1 >= t0 {
                t1.duration_since(t0).as_secs_f64()
            } else {
                -t0.duration_since(t1).as_secs_f64()
            };
            write_out(ms, (d * 1000.0) as f32);
            SUCCESS
        }
        (Err(x), _) | (_, Err(x)) => x,
    }
}

/// Same as [`cuEventElapsedTime`].
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime_v2(
    ms: *mut f32,
    start: CUevent,
    end: CUevent,
) -> CUresult {
    cuEventElapsedTime(ms, start, end)
}

/// Makes future work of the stream wait for the work recorded in an event.
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitEvent(
    h: stream::CUstream,
    event: CUevent,
    _flags: u32,
) -> CUresult {
    let (s, e) = match (stream::resolve(h), lookup(event)) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(x), _) | (_, Err(x)) => return x,
    };
    let target = e.recorded();
    if hazard::enabled() {
        hazard::wait_event(s.id, event as usize);
    }
    code(
        s.enqueue(OpKind::Marker, move || {
            e.wait_for(target);
            Ok(())
        })
        .map(drop),
    )
}
