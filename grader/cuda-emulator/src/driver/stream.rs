//! Streams: each one an in-order queue of operations run by its own worker thread, so that
//! launches and asynchronous copies return at once, as they do on a GPU.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, LazyLock, Mutex};

use super::context::{self, Context};
use super::hazard;
use super::{code, Registry};
use crate::status::*;
use crate::util::write_out;

/// `CU_STREAM_NON_BLOCKING`: no implicit synchronisation with the legacy default stream.
pub const NON_BLOCKING: u32 = 1;

/// Whether an operation is device work (skipped once the context has a sticky error) or
/// bookkeeping (event records, waits, host callbacks), which always runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// A kernel, copy or memset.
    Work,
    /// An event record, a wait or a host function.
    Marker,
}

type OpFn = Box<dyn FnOnce() -> Result<(), CUresult> + Send>;

struct Op {
    kind: OpKind,
    run: OpFn,
    /// Where the operation stands among the streams (checked runs only).
    stamp: Option<Arc<hazard::Stamp>>,
}

#[derive(Default)]
struct QueueState {
    ops: VecDeque<Op>,
    submitted: u64,
    completed: u64,
    closed: bool,
}

/// The queue shared by a stream and its worker thread.
#[derive(Default)]
pub struct Queue {
    state: Mutex<QueueState>,
    work: Condvar,
    done: Condvar,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queue")
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of operations submitted so far.
    pub fn submitted(&self) -> u64 {
        self.lock().submitted
    }

    /// Blocks until the first `seq` operations have completed.
    pub fn wait_for(&self, seq: u64) {
        let mut st = self.lock();
        while st.completed < seq {
            st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether the first `seq` operations have completed.
    pub fn reached(&self, seq: u64) -> bool {
        self.lock().completed >= seq
    }
}

/// A stream.
#[derive(Debug)]
pub struct Stream {
    /// The context the stream belongs to.
    pub ctx: Arc<Context>,
    /// Creation flags.
    pub flags: u32,
    /// Priority given at creation.
    pub priority: i32,
    /// Whether this is the context's legacy default stream.
    pub is_null: bool,
    /// A number naming the stream in reports (never reused).
    pub id: u64,
    queue: Arc<Queue>,
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Handle type of streams.
pub type CUstream = *mut Stream;

/// All live streams created by the application.
pub static STREAMS: LazyLock<Registry<Stream>> = LazyLock::new(Registry::default);

impl Stream {
    /// Creates a stream and starts its worker thread.
    pub fn new(ctx: &Arc<Context>, flags: u32, is_null: bool) -> Arc<Self> {
        Self::with_priority(ctx, flags, 0, is_null)
    }

    fn with_priority(ctx: &Arc<Context>, flags: u32, priority: i32, is_null: bool) -> Arc<Self> {
        let queue = Arc::new(Queue::default());
        let s = Arc::new(Stream {
            ctx: ctx.clone(),
            flags,
            priority,
            is_null,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            queue: queue.clone(),
        });
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("gpu-labs-stream".into())
            .stack_size(16 << 20)
            .spawn(move || worker(&queue, &ctx));
        if let Err(e) = spawned {
            crate::refused(format!(
                "gpu-labs emulator: cannot start a stream worker thread: {e}"
            ));
        }
        s
    }

    /// Appends an operation; returns an error at once if the context has a sticky error.
    pub fn enqueue(
        self: &Arc<Self>,
        kind: OpKind,
        run: impl FnOnce() -> Result<(), CUresult> + Send + 'static,
    ) -> Result<u64, CUresult> {
        self.ctx.check()?;
        // Legacy default stream semantics: the null stream waits for blocking streams, and
        // blocking streams wait for the null stream.
        let mut deps: Vec<(Arc<Queue>, u64)> = Vec::new();
        let mut after: Vec<u64> = Vec::new();
        if self.is_null {
            for s in self.ctx.streams() {
                if s.flags & NON_BLOCKING == 0 && !Arc::ptr_eq(&s, self) {
                    deps.push((s.queue.clone(), s.queue.submitted()));
                    after.push(s.id);
                }
            }
        } else if self.flags & NON_BLOCKING == 0 {
            let n = self.ctx.null_stream();
            deps.push((n.queue.clone(), n.queue.submitted()));
            after.push(n.id);
        }
        let stamp = hazard::enabled().then(|| hazard::issue(self.id, &after));
        deps.retain(|(q, seq)| !q.reached(*seq));
        let mut st = self.queue.lock();
        if st.closed {
            return Err(INVALID_HANDLE);
        }
        for (q, seq) in deps {
            st.ops.push_back(Op {
                kind: OpKind::Marker,
                run: Box::new(move || {
                    q.wait_for(seq);
                    Ok(())
                }),
                stamp: None,
            });
            st.submitted += 1;
        }
        st.ops.push_back(Op {
            kind,
            run: Box::new(run),
            stamp,
        });
        st.submitted += 1;
        let seq = st.submitted;
        drop(st);
        self.queue.work.notify_one();
        Ok(seq)
    }

    /// The stream's queue (to wait on a point of it from elsewhere).
    pub fn queue(&self) -> &Arc<Queue> {
        &self.queue
    }

    /// Blocks until everything submitted so far has run.
    pub fn wait_idle(&self) {
        let seq = self.queue.submitted();
        self.queue.wait_for(seq);
        if hazard::enabled() {
            hazard::host_waited_stream(self.id);
        }
    }

    /// Blocks until operation `seq` of this stream (one just issued by the host) has run.
    pub fn wait_until(&self, seq: u64) {
        self.queue.wait_for(seq);
        if hazard::enabled() {
            hazard::host_waited_stream(self.id);
        }
    }

    /// Whether everything submitted so far has run.
    pub fn is_idle(&self) -> bool {
        let st = self.queue.lock();
        st.completed >= st.submitted
    }

    /// Lets the worker finish what is queued, then exit; the context keeps track of it.
    pub fn close(&self) {
        self.queue.lock().closed = true;
        self.queue.work.notify_all();
        if !self.is_idle() {
            self.ctx.retire(self.queue.clone());
        }
    }
}

fn worker(queue: &Queue, ctx: &Context) {
    loop {
        let op = {
            let mut st = queue.lock();
            loop {
                if let Some(op) = st.ops.pop_front() {
                    break op;
                }
                if st.closed {
                    return;
                }
                st = queue.work.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        if op.kind == OpKind::Marker || ctx.check().is_ok() {
            if let Err(e) = hazard::running(op.stamp, op.run) {
                ctx.set_sticky(e);
            }
        }
        queue.lock().completed += 1;
        queue.done.notify_all();
    }
}

/// Resolves a stream handle: null (and the legacy / per-thread handles) mean the current
/// context's default stream.
pub fn resolve(h: CUstream) -> Result<Arc<Stream>, CUresult> {
    match h as usize {
        0..=2 => Ok(context::current()?.null_stream()),
        p => STREAMS.get(p).ok_or(INVALID_HANDLE),
    }
}

unsafe fn create(ph: *mut CUstream, flags: u32, priority: i32) -> CUresult {
    let ctx = match context::current() {
        Ok(c) => c,
        Err(e) => return e,
    };
    if ph.is_null() || flags > NON_BLOCKING {
        return INVALID_VALUE;
    }
    let s = Stream::with_priority(&ctx, flags, priority.clamp(-5, 0), false);
    ctx.add_stream(&s);
    *ph = STREAMS.insert(s) as CUstream;
    SUCCESS
}

/// Creates a stream in the current context.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(ph: *mut CUstream, flags: u32) -> CUresult {
    create(ph, flags, 0)
}

/// Creates a stream with a priority (recorded, not used for scheduling).
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    ph: *mut CUstream,
    flags: u32,
    priority: i32,
) -> CUresult {
    create(ph, flags, priority)
}

/// Destroys a stream; work already queued still completes.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(h: CUstream) -> CUresult {
    match STREAMS.remove(h as usize) {
        Some(s) => {
            s.close();
            SUCCESS
        }
        None => INVALID_HANDLE,
    }
}

/// Blocks until the stream's work is done; reports the context's sticky error.
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(h: CUstream) -> CUresult {
    code(resolve(h).and_then(|s| {
        s.wait_idle();
        s.ctx.check()
    }))
}

/// `CUDA_SUCCESS` if the stream's work is done, else `CUDA_ERROR_NOT_READY`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(h: CUstream) -> CUresult {
    code(resolve(h).and_then(|s| {
        s.ctx.check()?;
        if s.is_idle() {
            Ok(())
        } else {
            Err(NOT_READY)
        }
    }))
}

/// Creation flags of a stream.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetFlags(h: CUstream, flags: *mut u32) -> CUresult {
    match resolve(h) {
        Ok(s) if write_out(flags, s.flags) => SUCCESS,
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Priority of a stream.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetPriority(h: CUstream, priority: *mut i32) -> CUresult {
    match resolve(h) {
        Ok(s) if write_out(priority, s.priority) => SUCCESS,
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Context of a stream.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetCtx(h: CUstream, pctx: *mut context::CUcontext) -> CUresult {
    match resolve(h) {
        Ok(s) if write_out(pctx, s.ctx.handle()) => SUCCESS,
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Stream capture is not supported: streams are never capturing.
#[no_mangle]
pub unsafe extern "C" fn cuStreamIsCapturing(h: CUstream, status: *mut u32) -> CUresult {
    match resolve(h) {
        Ok(_) if write_out(status, 0) => SUCCESS,
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Host callback type of `cuLaunchHostFunc`.
pub type HostFn = Option<unsafe extern "C" fn(*mut std::ffi::c_void)>;

struct SendPtr(*mut std::ffi::c_void);
// SAFETY: the application promises the user data may be used from the stream's thread.
unsafe impl Send for SendPtr {}

/// Runs a host function when the stream reaches it.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(
    h: CUstream,
    f: HostFn,
    user: *mut std::ffi::c_void,
) -> CUresult {
    let Some(f) = f else { return INVALID_VALUE };
    let user = SendPtr(user);
    code(resolve(h).and_then(|s| {
        s.enqueue(OpKind::Marker, move || {
            let u = user;
            // SAFETY: the application's callback with its own data.
            unsafe { f(u.0) };
            Ok(())
        })
        .map(drop)
    }))
}
