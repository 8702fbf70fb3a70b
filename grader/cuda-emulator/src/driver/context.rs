//! Contexts: the primary context of the device and created ones, the calling thread's
//! current context, and the sticky error a faulting launch leaves behind.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, Weak};

use super::stream::{Queue, Stream};
use super::{code, written, Registry};
use crate::status::*;
use crate::util::write_out;

/// A CUDA context.
#[derive(Debug)]
pub struct Context {
    flags: AtomicU32,
    sticky: AtomicU32,
    null_stream: OnceLock<Arc<Stream>>,
    streams: Mutex<Vec<Weak<Stream>>>,
    retired: Mutex<Vec<Arc<Queue>>>,
    limits: Mutex<Vec<(u32, usize)>>,
    cache_config: AtomicU32,
    primary: bool,
}

/// Handle type of contexts.
pub type CUcontext = *mut Context;

/// All live contexts.
pub static CONTEXTS: LazyLock<Registry<Context>> = LazyLock::new(Registry::default);

/// The primary context and its retain count.
static PRIMARY: Mutex<Option<(Arc<Context>, u32)>> = Mutex::new(None);

thread_local! {
    static CURRENT: RefCell<Vec<Arc<Context>>> = const { RefCell::new(Vec::new()) };
}

impl Context {
    fn new(primary: bool, flags: u32) -> Arc<Self> {
        let ctx = Arc::new(Context {
            flags: AtomicU32::new(flags),
            sticky: AtomicU32::new(0),
            null_stream: OnceLock::new(),
            streams: Mutex::new(Vec::new()),
            retired: Mutex::new(Vec::new()),
            limits: Mutex::new(Vec::new()),
            cache_config: AtomicU32::new(0),
            primary,
        });
        CONTEXTS.insert(ctx.clone());
        ctx
    }

    /// The handle given to the application.
    pub fn handle(self: &Arc<Self>) -> CUcontext {
        Arc::as_ptr(self) as CUcontext
    }

    /// The sticky error, if a launch failed in this context.
    pub fn check(&self) -> Result<(), CUresult> {
        match self.sticky.load(Ordering::Acquire) {
            0 => Ok(()),
            e => Err(e),
        }
    }

    /// Records a sticky error (the first one wins).
    pub fn set_sticky(&self, e: CUresult) {
        let _ = self
            .sticky
            .compare_exchange(0, e, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The legacy default (null) stream of this context.
    pub fn null_stream(self: &Arc<Self>) -> Arc<Stream> {
        self.null_stream
            .get_or_init(|| Stream::new(self, 0, true))
            .clone()
    }

    /// Records a stream created in this context.
    pub fn add_stream(&self, s: &Arc<Stream>) {
        let mut v = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(s));
    }

    /// The live streams created in this context (not the null stream).
    pub fn streams(&self) -> Vec<Arc<Stream>> {
        let v = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().filter_map(Weak::upgrade).collect()
    }

    /// Keeps the queue of a destroyed stream until its work is done, so that a context
    /// synchronisation still waits for it.
    pub fn retire(&self, q: Arc<Queue>) {
        self.retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(q);
    }

    /// Waits for all work of the context, then reports its sticky error if any.
    pub fn synchronize(self: &Arc<Self>) -> Result<(), CUresult> {
        if let Some(n) = self.null_stream.get() {
            n.wait_idle();
        }
        for s in self.streams() {
            s.wait_idle();
        }
        let retired: Vec<Arc<Queue>> =
            std::mem::take(&mut *self.retired.lock().unwrap_or_else(|e| e.into_inner()));
        for q in retired {
            q.wait_for(q.submitted());
        }
        if super::hazard::enabled() {
            super::hazard::host_waited_all();
        }
        self.check()
    }
}

/// The calling thread's current context.
pub fn current() -> Result<Arc<Context>, CUresult> {
    CURRENT
        .with(|c| c.borrow().last().cloned())
        .ok_or(INVALID_CONTEXT)
}

fn set_current(ctx: Option<Arc<Context>>) {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        c.pop();
        if let Some(ctx) = ctx {
            c.push(ctx);
        }
    });
}

fn lookup(h: CUcontext) -> Result<Arc<Context>, CUresult> {
    CONTEXTS.get(h as usize).ok_or(INVALID_CONTEXT)
}

/// Retains the primary context of device 0 (creating it on first use).
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: i32) -> CUresult {
    if dev != 0 {
        return INVALID_DEVICE;
    }
    let mut p = PRIMARY.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = match p.as_mut() {
        Some((ctx, count)) => {
            *count += 1;
            ctx.clone()
        }
        None => {
            let ctx = Context::new(true, 0);
            *p = Some((ctx.clone(), 1));
            ctx
        }
    };
    written(write_out(pctx, ctx.handle()))
}

/// Releases the primary context (it stays usable: its state lives as long as the process).
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: i32) -> CUresult {
    if dev != 0 {
        return INVALID_DEVICE;
    }
    let mut p = PRIMARY.lock().unwrap_or_else(|e| e.into_inner());
    match p.as_mut() {
        Some((ctx, count)) if *count > 0 => {
            *count -= 1;
            if *count == 0 {
                let _ = ctx.synchronize();
            }
            SUCCESS
        }
        _ => INVALID_CONTEXT,
    }
}

/// Flags and whether the primary context is active.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(
    dev: i32,
    flags: *mut u32,
    active: *mut i32,
) -> CUresult {
    if dev != 0 {
        return INVALID_DEVICE;
    }
    let p = PRIMARY.lock().unwrap_or_else(|e| e.into_inner());
    let (f, a) = p.as_ref().map_or((0, 0), |(c, n)| {
        (c.flags.load(Ordering::Relaxed), i32::from(*n > 0))
    });
    written(write_out(flags, f) && write_out(active, a))
}

/// Sets the flags of the primary context.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxSetFlags_v2(dev: i32, flags: u32) -> CUresult {
    if dev != 0 {
        return INVALID_DEVICE;
    }
    let p = PRIMARY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((c, _)) = p.as_ref() {
        c.flags.store(flags, Ordering::Relaxed);
    }
    SUCCESS
}

/// Waits for the primary context's work and clears its sticky error.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset_v2(dev: i32) -> CUresult {
    if dev != 0 {
        return INVALID_DEVICE;
    }
    let p = PRIMARY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((c, _)) = p.as_ref() {
        let _ = c.synchronize();
        c.sticky.store(0, Ordering::Release);
    }
    SUCCESS
}

unsafe fn create(pctx: *mut CUcontext, flags: u32, dev: i32) -> CUresult {
    if dev != 0 {
        return INVALID_DEVICE;
    }
    if pctx.is_null() {
        return INVALID_VALUE;
    }
    let ctx = Context::new(false, flags);
    *pctx = ctx.handle();
    CURRENT.with(|c| c.borrow_mut().push(ctx));
    SUCCESS
}

/// Creates a context and makes it current.
#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: u32, dev: i32) -> CUresult {
    create(pctx, flags, dev)
}

/// Creates a context (execution-affinity parameters are ignored) and makes it current.
#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v3(
    pctx: *mut CUcontext,
    _params: *mut std::ffi::c_void,
    _num_params: i32,
    flags: u32,
    dev: i32,
) -> CUresult {
    create(pctx, flags, dev)
}

/// Creates a context (creation parameters are ignored) and makes it current.
#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v4(
    pctx: *mut CUcontext,
    _params: *mut std::ffi::c_void,
    flags: u32,
    dev: i32,
) -> CUresult {
    create(pctx, flags, dev)
}

/// Destroys a created context after its work finished; pops it if it is current.
#[no_mangle]
pub unsafe extern "C" fn cuCtxDestroy_v2(ctx: CUcontext) -> CUresult {
    let Ok(c) = lookup(ctx) else {
        return INVALID_CONTEXT;
    };
    if c.primary {
        return INVALID_CONTEXT;
    }
    let _ = c.synchronize();
    if let Some(n) = c.null_stream.get() {
        n.close();
    }
    CONTEXTS.remove(ctx as usize);
    CURRENT.with(|cur| cur.borrow_mut().retain(|x| !Arc::ptr_eq(x, &c)));
    SUCCESS
}

/// The calling thread's current context (null if none).
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(pctx: *mut CUcontext) -> CUresult {
    let h = current().map_or(std::ptr::null_mut(), |c| c.handle());
    written(write_out(pctx, h))
}

/// Makes a context current to the calling thread (null unbinds).
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> CUresult {
    if ctx.is_null() {
        set_current(None);
        return SUCCESS;
    }
    match lookup(ctx) {
        Ok(c) => {
            set_current(Some(c));
            SUCCESS
        }
        Err(e) => e,
    }
}

/// Pushes a context on the calling thread's stack.
#[no_mangle]
pub unsafe extern "C" fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CUresult {
    match lookup(ctx) {
        Ok(c) => {
            CURRENT.with(|cur| cur.borrow_mut().push(c));
            SUCCESS
        }
        Err(e) => e,
    }
}

/// Pops the current context.
#[no_mangle]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CUresult {
    match CURRENT.with(|cur| cur.borrow_mut().pop()) {
        Some(c) => {
            write_out(pctx, c.handle());
            SUCCESS
        }
        None => INVALID_CONTEXT,
    }
}

/// The device of the current context: always 0.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(dev: *mut i32) -> CUresult {
    if let Err(e) = current() {
        return e;
    }
    written(write_out(dev, 0))
}

/// Waits for all work of the current context.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> CUresult {
    code(current().and_then(|c| c.synchronize()))
}

/// The flags of the current context.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut u32) -> CUresult {
    match current() {
        Ok(c) if write_out(flags, c.flags.load(Ordering::Relaxed)) => SUCCESS,
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Sets the flags of the current context.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetFlags(flags: u32) -> CUresult {
    match current() {
        Ok(c) => {
            c.flags.store(flags, Ordering::Relaxed);
            SUCCESS
        }
        Err(e) => e,
    }
}

/// The API version of a context: 12080.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetApiVersion(_ctx: CUcontext, version: *mut u32) -> CUresult {
    written(write_out(version, 12080))
}

fn default_limit(limit: u32) -> Option<usize> {
    match limit {
        0 => Some(1024),    // CU_LIMIT_STACK_SIZE
        1 => Some(1 << 20), // CU_LIMIT_PRINTF_FIFO_SIZE
        2 => Some(8 << 20), // CU_LIMIT_MALLOC_HEAP_SIZE
        3 => Some(2),       // CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH
        4 => Some(2048),    // CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT
        5 => Some(64),      // CU_LIMIT_MAX_L2_FETCH_GRANULARITY
        6 => Some(0),       // CU_LIMIT_PERSISTING_L2_CACHE_SIZE
        _ => None,
    }
}

/// A context limit (stored values, or plausible defaults).
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetLimit(value: *mut usize, limit: u32) -> CUresult {
    let c = match current() {
        Ok(c) => c,
        Err(e) => return e,
    };
    let stored = c
        .limits
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(l, _)| *l == limit)
        .map(|(_, v)| *v);
    match stored.or_else(|| default_limit(limit)) {
        Some(v) if write_out(value, v) => SUCCESS,
        _ => INVALID_VALUE,
    }
}

/// Sets a context limit (recorded; of them the emulator enforces the heap's size only,
/// [`crate::heap`]: one heap for the process, as one device has one).
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetLimit(limit: u32, value: usize) -> CUresult {
    let c = match current() {
        Ok(c) => c,
        Err(e) => return e,
    };
    if default_limit(limit).is_none() {
        return INVALID_VALUE;
    }
    if limit == 2 {
        crate::heap::set_size(value);
    }
    let mut l = c.limits.lock().unwrap_or_else(|e| e.into_inner());
    l.retain(|(k, _)| *k != limit);
    l.push((limit, value));
    SUCCESS
}

/// The cache configuration last set (it has no effect on the CPU).
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCacheConfig(config: *mut u32) -> CUresult {
    match current() {
        Ok(c) if write_out(config, c.cache_config.load(Ordering::Relaxed)) => SUCCESS,
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Records a cache configuration.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCacheConfig(config: u32) -> CUresult {
    match current() {
        Ok(c) if config <= 3 => {
            c.cache_config.store(config, Ordering::Relaxed);
            SUCCESS
        }
        Ok(_) => INVALID_VALUE,
        Err(e) => e,
    }
}

/// Stream priorities: 0 (least) to -5 (greatest), as on recent GPUs.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(
    least: *mut i32,
    greatest: *mut i32,
) -> CUresult {
    write_out(least, 0);
    write_out(greatest, -5);
    SUCCESS
}
