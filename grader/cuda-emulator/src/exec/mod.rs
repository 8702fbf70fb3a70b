//! Running a launch: blocks are shared out to a pool of worker threads (plus the stream's own
//! thread), each of which runs whole blocks through the module's block runner. A fault stops
//! the launch and is reported once.

pub mod decode;
pub mod fault;
pub mod initcheck;
pub mod pool;
pub mod race;
pub mod reorder;
pub mod synccheck;

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::driver::module::Function;
use crate::findings::{self, Kind};
use crate::status::*;

/// What the module's block runner receives (`__gl::Launch` in the prelude).
#[repr(C)]
#[derive(Debug)]
pub struct LaunchDesc {
    tramp: *const c_void,
    args: *mut *mut c_void,
    grid: [u32; 3],
    block: [u32; 3],
    dyn_smem: u64,
    next_block: *mut u64,
    abort: *mut u32,
    fault_block: [u32; 3],
    fault_thread: [u32; 3],
    fault_kind: i32,
    message: [c_char; 512],
    alloc_stack: unsafe extern "C" fn(u64) -> *mut c_void,
    race_count: u64,
    race_addr: u64,
    race_block: [u32; 2],
    race_thread: [u32; 2],
    race_pc: [u32; 2],
    race_write: [u8; 2],
    race_volatile: [u8; 2],
    race_shared: u8,
    race_rmw: u8,
    race_next: u8,
    race_pad: u8,
    race_size: u32,
    race_rmw_pc: u32,
    race_pad2: u32,
    stack_lo: usize,
    stack_hi: usize,
    device_span: unsafe extern "C" fn(u64, *mut u64) -> u32,
    host_addr: u64,
    host_size: u32,
    host_write: u32,
    tls_span: unsafe extern "C" fn(u64, *mut u64) -> u32,
    uninit_count: u64,
    uninit_addr: u64,
    uninit_block: u32,
    uninit_thread: u32,
    uninit_pc: u32,
    uninit_size: u32,
    uninit_shared: u32,
    uninit_pad: u32,
    sync_count: u64,
    sync_block: u32,
    sync_thread: u32,
    sync_line: u32,
    sync_op: u32,
    sync_mask: u32,
    sync_present: u32,
    touch_id: u64,
    touch_ctx: *const c_void,
    touch: unsafe extern "C" fn(*const c_void, u64, u32),
    barrier_note: [c_char; 384],
    loaded_bytes: u64,
    same_value_writes: u64,
    plain: u32,
    quiet: u32,
    heap_alloc: unsafe extern "C" fn(u64, u64) -> *mut c_void,
    heap_free: unsafe extern "C" fn(u64) -> u64,
    race_ww: u64,
    reverse: u32,
    undo_lost: u32,
    undo_ctx: *mut c_void,
    undo: unsafe extern "C" fn(*mut c_void, *const c_void, u64),
    load_budget: u64,
}

impl LaunchDesc {
    /// The first race the module recorded, if any.
    fn race(&self) -> Option<race::Race> {
        (self.race_count > 0).then(|| race::Race {
            count: self.race_count,
            addr: self.race_addr as usize,
            size: self.race_size,
            block: self.race_block,
            thread: self.race_thread,
            pc: self.race_pc,
            write: self.race_write.map(|w| w != 0),
            volatile: self.race_volatile.map(|v| v != 0),
            shared: self.race_shared,
            rmw: (self.race_rmw != 0).then_some(self.race_rmw_pc),
            next: self.race_next,
        })
    }

    /// The first read of shared memory its block had not written, if any.
    fn uninit(&self) -> Option<initcheck::Unwritten> {
        (self.uninit_count > 0).then(|| initcheck::Unwritten {
            count: self.uninit_count,
            offset: self.uninit_addr as usize,
            size: self.uninit_size,
            block: self.uninit_block,
            thread: self.uninit_thread,
            pc: self.uninit_pc,
            shared: u8::try_from(self.uninit_shared).unwrap_or(0),
        })
    }

    /// The first warp operation whose mask named lanes that did not reach it, if any.
    fn divergent(&self) -> Option<synccheck::Divergent> {
        (self.sync_count > 0).then_some(synccheck::Divergent {
            count: self.sync_count,
            block: self.sync_block,
            thread: self.sync_thread,
            line: self.sync_line,
            op: self.sync_op,
            mask: self.sync_mask,
            present: self.sync_present,
        })
    }
}

/// The calling thread's stack, `(lowest, highest)` address: each GPU thread's locals in turn
/// (a checked module does not record accesses there). `(0, 0)` when unknown.
fn own_stack() -> (usize, usize) {
    // SAFETY: queries the attributes of the calling thread into a zeroed, then destroyed, attr.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return (0, 0);
        }
        let mut addr: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            (addr as usize, addr as usize + size)
        } else {
            (0, 0)
        }
    }
}

/// Allocates a fiber stack of `len` bytes for a module's block runner, with an inaccessible
/// guard page below it (so that an overflow faults); null when out of memory. The emulator
/// does it, so that modules need neither `mmap` nor `mprotect` (which no kernel may call).
unsafe extern "C" fn alloc_fiber_stack(len: u64) -> *mut c_void {
    let Some(total) = usize::try_from(len).ok().and_then(|l| l.checked_add(GUARD)) else {
        return std::ptr::null_mut();
    };
    let m = libc::mmap(
        std::ptr::null_mut(),
        total,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
        -1,
        0,
    );
    if m == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    libc::mprotect(m, GUARD, libc::PROT_NONE);
    if let Ok(mut guards) = STACK_GUARDS.lock() {
        guards.push(m as usize);
    }
    m.cast::<u8>().add(GUARD).cast()
}

/// The size of the guard page below each stack [`alloc_fiber_stack`] hands out.
const GUARD: usize = 4096;

/// The guard page below each stack the modules asked for (fibers' stacks and the shadow stacks
/// of returns): never unmapped, so a fault there is told for what it is.
static STACK_GUARDS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// Whether `addr` lies in the guard page below a stack of a GPU thread or of its record of
/// calls: a kernel's calls nested too deep.
pub fn is_stack_guard(addr: usize) -> bool {
    STACK_GUARDS
        .lock()
        .is_ok_and(|g| g.iter().any(|&lo| addr.wrapping_sub(lo) < GUARD))
}

/// For a checked module: whether `addr` lies in device memory, and then the span that holds it
/// (`span[0]..span[1]`, [`crate::memory::device_span`]), so that the module can confine the
/// kernel's global accesses to device memory.
unsafe extern "C" fn device_span(addr: u64, span: *mut u64) -> u32 {
    let found = usize::try_from(addr)
        .ok()
        .and_then(crate::memory::device_span);
    match found {
        Some((lo, hi)) if !span.is_null() => {
            span.write(lo as u64);
            span.add(1).write(hi as u64);
            1
        }
        _ => 0,
    }
}

/// For a checked or confined module whose ELF header is at `base`: the calling thread's
/// instance of its thread-local block (`span[0]..span[1]`), where its static `__shared__`
/// variables live, so that the module can tell shared memory from global memory by address;
/// `span[2]` is where its zero-initialised part (.tbss) starts, the only part a kernel may
/// write (the prelude's own thread-locals are initialised, in .tdata). `span` holds three.
unsafe extern "C" fn tls_span(base: u64, span: *mut u64) -> u32 {
    /// What the search looks for, and what it found.
    struct Search {
        base: u64,
        found: Option<(u64, u64, u64)>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        let search = &mut *data.cast::<Search>();
        let info = &*info;
        if info.dlpi_addr != search.base || info.dlpi_tls_modid == 0 {
            return 0;
        }
        let phdrs = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
        if let Some(tls) = phdrs.iter().find(|p| p.p_type == libc::PT_TLS) {
            // The calling thread's block, as the module's own code finds it: `dlpi_tls_data`
            // is not current on a thread whose TLS vector predates the module (it was null,
            // or another module's, on the pool's threads), where `__tls_get_addr` updates it.
            let index = [info.dlpi_tls_modid, 0];
            let lo = __tls_get_addr(index.as_ptr()) as u64;
            if lo != 0 {
                search.found = Some((lo, lo + tls.p_memsz, lo + tls.p_filesz.min(tls.p_memsz)));
            }
        }
        1
    }
    if span.is_null() {
        return 0;
    }
    let mut search = Search { base, found: None };
    libc::dl_iterate_phdr(Some(visit), std::ptr::addr_of_mut!(search).cast());
    match search.found {
        Some((lo, hi, writable)) => {
            span.write(lo);
            span.add(1).write(hi);
            span.add(2).write(writable);
            1
        }
        None => 0,
    }
}

extern "C" {
    /// The dynamic linker's lookup of a thread-local block (x86-64: a `{module, offset}` pair),
    /// which the compiler calls for a module's own thread-locals.
    fn __tls_get_addr(index: *const usize) -> *mut c_void;
}

/// A fault that stopped a launch.
#[derive(Clone, Debug)]
pub struct Fault {
    /// 1: memory access, 2: assert, 3: trap, 4: arithmetic, 5: a checked kernel's access to
    /// memory that is not device memory ([`FAULT_HOST`]), 6: a free of what device code's heap
    /// did not hand out ([`FAULT_FREE`]), 7: an array indexed out of its bounds ([`FAULT_BOUNDS`]), 8: a call through a pointer
    /// ([`FAULT_CALL`]), 9: a return its record does not allow ([`FAULT_RETURN`]).
    pub kind: i32,
    /// Block index.
    pub block: [u32; 3],
    /// Thread index.
    pub thread: [u32; 3],
    /// Faulting address (memory faults).
    pub addr: usize,
    /// Whether the access was a write (memory faults).
    pub write: bool,
    /// Size of the access in bytes, when the faulting instruction could be decoded.
    pub size: Option<usize>,
    /// Message from the kernel (asserts).
    pub message: String,
}

/// The fault kind of a checked kernel's access outside device memory (`FAULT_HOST` in the
/// prelude).
pub const FAULT_HOST: i32 = 5;

/// The fault kind of a kernel's `free` or `delete` of what device code's heap did not hand out
/// (`FAULT_FREE` in the prelude), the address in the launch's `host_addr`.
pub const FAULT_FREE: i32 = 6;

/// The fault kind of an array indexed out of its bounds in a checked or confined kernel
/// (`FAULT_BOUNDS` in the prelude), what and where in the launch's message.
pub const FAULT_BOUNDS: i32 = 7;

/// The fault kind of a call or jump through a pointer in a checked or confined kernel
/// (`FAULT_CALL` in the prelude), the target in the launch's message.
pub const FAULT_CALL: i32 = 8;

/// The fault kind of a return in a checked or confined kernel that its shadow record does not
/// allow (`FAULT_RETURN` in the prelude): the kernel wrote over its own stack frame.
pub const FAULT_RETURN: i32 = 9;

#[derive(Debug, Default)]
struct JobState {
    active: usize,
    fault: Option<Fault>,
    race: Option<race::Race>,
    uninit: Option<initcheck::Unwritten>,
    divergent: Option<synccheck::Divergent>,
    barrier: Option<String>,
    loaded_bytes: u64,
    same_value_writes: u64,
    race_ww: u64,
    undo_lost: bool,
}

/// What a launch found besides a fault, and (checked) the bytes its threads read and its
/// racing writes that changed nothing.
#[derive(Debug, Default)]
struct Findings {
    race: Option<race::Race>,
    uninit: Option<initcheck::Unwritten>,
    divergent: Option<synccheck::Divergent>,
    barrier: Option<String>,
    loaded_bytes: u64,
    same_value_writes: u64,
    /// Racing writes of two threads that changed what the place held (no second order can
    /// make them harmless).
    race_ww: u64,
    /// The launch cannot be put back as it was before it ran ([`reorder`]).
    undo_lost: bool,
}

/// One kernel launch in flight.
#[derive(Debug)]
pub struct Job {
    func: Arc<Function>,
    args: Vec<*mut c_void>,
    _storage: Vec<u128>,
    grid: [u32; 3],
    block: [u32; 3],
    dyn_smem: u64,
    total: u64,
    next_block: AtomicU64,
    abort: AtomicU32,
    state: Mutex<JobState>,
    done: Condvar,
    /// Checked runs: a number naming this launch, and the device spans it read (false) or
    /// wrote (true), for the stream hazard check.
    touch_id: u64,
    touched: Touched,
    /// A replay's launch ([`Job::again`]): its kernel's `printf` prints nothing.
    quiet: bool,
    /// Checked runs: its blocks and their threads run last first ([`reorder`]).
    reverse: bool,
    /// Checked runs: the device memory it wrote, as it was before ([`reorder`]).
    undo: reorder::UndoLog,
    /// Checked runs: 0, or how many bytes its threads may read before it stops ([`reorder`]).
    load_budget: u64,
}

/// The device spans a checked launch touched, by their start.
type Touched = Mutex<Vec<(u64, bool)>>;

static NEXT_TOUCH_ID: AtomicU64 = AtomicU64::new(1);

/// For a checked module: the launch at `ctx` (its [`Touched`]) reads or writes the device
/// span starting at `lo`.
unsafe extern "C" fn touched(ctx: *const c_void, lo: u64, write: u32) {
    // SAFETY: `ctx` is the job's `touched`, alive while its blocks run.
    if let Some(t) = unsafe { ctx.cast::<Touched>().as_ref() } {
        t.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((lo, write != 0));
    }
}

// SAFETY: the argument pointers point into `_storage`, owned by the job.
unsafe impl Send for Job {}
// SAFETY: as above; the shared counters are atomics.
unsafe impl Sync for Job {}

impl Job {
    /// Copies the kernel's arguments (sizes from its signature) and prepares the launch.
    ///
    /// # Safety
    /// `params` must hold `func.nargs` pointers to values of the kernel's parameter types.
    pub unsafe fn new(
        func: Arc<Function>,
        grid: [u32; 3],
        block: [u32; 3],
        dyn_smem: u32,
        params: *mut *mut c_void,
    ) -> Job {
        let mut offsets = Vec::with_capacity(func.nargs);
        let mut total = 0usize;
        for &(size, align) in &func.params {
            let a = align.clamp(1, 16);
            total = total.div_ceil(a) * a;
            offsets.push(total);
            total += size;
        }
        let mut storage = vec![0u128; total.div_ceil(16).max(1)];
        let base = storage.as_mut_ptr().cast::<u8>();
        let mut args = Vec::with_capacity(func.nargs);
        for (i, (&(size, _), &off)) in func.params.iter().zip(&offsets).enumerate() {
            let src = *params.add(i);
            std::ptr::copy_nonoverlapping(src.cast::<u8>(), base.add(off), size);
            args.push(base.add(off).cast::<c_void>());
        }
        let total_blocks = u64::from(grid[0]) * u64::from(grid[1]) * u64::from(grid[2]);
        Job {
            func,
            args,
            _storage: storage,
            grid,
            block,
            dyn_smem: u64::from(dyn_smem),
            total: total_blocks,
            next_block: AtomicU64::new(0),
            abort: AtomicU32::new(0),
            state: Mutex::new(JobState::default()),
            done: Condvar::new(),
            touch_id: NEXT_TOUCH_ID.fetch_add(1, Ordering::Relaxed),
            touched: Mutex::default(),
            quiet: false,
            reverse: false,
            undo: Mutex::default(),
            load_budget: 0,
        }
    }

    /// The same launch again, unstarted (its own copy of the arguments) and quiet: what a
    /// replay runs ([`crate::replay`]).
    pub fn again(&self) -> Job {
        let mut params = self.args.clone();
        // SAFETY: `args` point to one value of each parameter's type, in `_storage`.
        let job = unsafe {
            Job::new(
                self.func.clone(),
                self.grid,
                self.block,
                u32::try_from(self.dyn_smem).unwrap_or(u32::MAX),
                params.as_mut_ptr(),
            )
        };
        Job { quiet: true, ..job }
    }

    /// The same launch again, quiet, with its blocks and threads last first, reading at most
    /// `load_budget` bytes ([`reorder`]).
    fn reversed(&self, load_budget: u64) -> Job {
        Job {
            reverse: true,
            load_budget,
            ..self.again()
        }
    }

    /// Whether no block is left to start.
    pub fn exhausted(&self) -> bool {
        self.abort.load(Ordering::Relaxed) != 0
            || self.next_block.load(Ordering::Relaxed) >= self.total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a worker about to run blocks of this job.
    pub fn enter(&self) {
        self.lock().active += 1;
    }

    /// Runs blocks on the calling thread until none are left; then leaves the job.
    pub fn work(&self) {
        let mut desc = LaunchDesc {
            tramp: self.func.tramp as *const c_void,
            args: self.args.as_ptr().cast_mut(),
            grid: self.grid,
            block: self.block,
            dyn_smem: self.dyn_smem,
            next_block: self.next_block.as_ptr(),
            abort: self.abort.as_ptr(),
            fault_block: [0; 3],
            fault_thread: [0; 3],
            fault_kind: 0,
            message: [0; 512],
            alloc_stack: alloc_fiber_stack,
            race_count: 0,
            race_addr: 0,
            race_block: [0; 2],
            race_thread: [0; 2],
            race_pc: [0; 2],
            race_write: [0; 2],
            race_volatile: [0; 2],
            race_shared: 0,
            race_rmw: 0,
            race_next: 0,
            race_pad: 0,
            race_size: 0,
            race_rmw_pc: 0,
            race_pad2: 0,
            stack_lo: 0,
            stack_hi: 0,
            device_span,
            host_addr: 0,
            host_size: 0,
            host_write: 0,
            tls_span,
            uninit_count: 0,
            uninit_addr: 0,
            uninit_block: 0,
            uninit_thread: 0,
            uninit_pc: 0,
            uninit_size: 0,
            uninit_shared: 0,
            uninit_pad: 0,
            sync_count: 0,
            sync_block: 0,
            sync_thread: 0,
            sync_line: 0,
            sync_op: 0,
            sync_mask: 0,
            sync_present: 0,
            touch_id: self.touch_id,
            touch_ctx: std::ptr::from_ref(&self.touched).cast(),
            touch: touched,
            barrier_note: [0; 384],
            loaded_bytes: 0,
            same_value_writes: 0,
            plain: self.func.plain,
            quiet: u32::from(self.quiet),
            heap_alloc: crate::heap::alloc,
            heap_free: crate::heap::free,
            race_ww: 0,
            reverse: u32::from(self.reverse),
            undo_lost: 0,
            undo_ctx: std::ptr::from_ref(&self.undo).cast_mut().cast(),
            undo: reorder::undo_words,
            load_budget: self.load_budget,
        };
        (desc.stack_lo, desc.stack_hi) = own_stack();
        let fault = fault::run_guarded(&self.func.module, &mut desc).map(|(access, kind)| {
            // An access the module stopped itself: what it recorded, not the signal's.
            let access = if kind == FAULT_HOST || kind == FAULT_FREE {
                fault::Access {
                    addr: usize::try_from(desc.host_addr).unwrap_or(usize::MAX),
                    write: desc.host_write != 0,
                    size: usize::try_from(desc.host_size).ok(),
                }
            } else {
                access
            };
            Fault {
                kind,
                block: desc.fault_block,
                thread: desc.fault_thread,
                addr: access.addr,
                write: access.write,
                size: access.size,
                // SAFETY: the prelude writes a NUL-terminated message (or leaves zeros).
                message: unsafe { std::ffi::CStr::from_ptr(desc.message.as_ptr()) }
                    .to_string_lossy()
                    .into_owned(),
            }
        });
        let mut st = self.lock();
        if st.fault.is_none() {
            st.fault = fault;
        }
        if st.race.is_none() {
            st.race = desc.race();
        }
        if st.uninit.is_none() {
            st.uninit = desc.uninit();
        }
        if st.divergent.is_none() {
            st.divergent = desc.divergent();
        }
        if st.barrier.is_none() && desc.barrier_note[0] != 0 {
            // SAFETY: snprintf in the prelude wrote a NUL-terminated line within the array.
            let note = unsafe { std::ffi::CStr::from_ptr(desc.barrier_note.as_ptr()) };
            st.barrier = Some(note.to_string_lossy().into_owned());
        }
        st.loaded_bytes = st.loaded_bytes.saturating_add(desc.loaded_bytes);
        st.same_value_writes = st.same_value_writes.saturating_add(desc.same_value_writes);
        st.race_ww = st.race_ww.saturating_add(desc.race_ww);
        st.undo_lost |= desc.undo_lost != 0;
        st.active -= 1;
        let finished = st.active == 0 && self.exhausted();
        drop(st);
        if finished {
            self.done.notify_all();
        }
    }

    fn wait(&self) -> (Option<Fault>, Findings) {
        let mut st = self.lock();
        while !(st.active == 0 && self.exhausted()) {
            st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let findings = Findings {
            race: st.race.take(),
            uninit: st.uninit.take(),
            divergent: st.divergent.take(),
            barrier: st.barrier.take(),
            loaded_bytes: std::mem::take(&mut st.loaded_bytes),
            same_value_writes: std::mem::take(&mut st.same_value_writes),
            race_ww: std::mem::take(&mut st.race_ww),
            undo_lost: std::mem::take(&mut st.undo_lost),
        };
        (st.fault.clone(), findings)
    }
}

/// Runs every block of a launch on the pool and the calling thread, and waits for them.
fn execute(job: &Arc<Job>) -> (Option<Fault>, Findings) {
    // A checked module records every access in one shadow: its blocks run on this thread alone.
    if job.func.module.checked.is_none() {
        pool::submit(job);
    }
    job.enter();
    job.work();
    job.wait()
}

/// Held by a checked launch from its start to the end of its second run in the other order
/// ([`reorder`]), so that no other checked launch of the process runs on memory put back.
static CHECKED_LAUNCH: Mutex<()> = Mutex::new(());

/// Runs a launch again for a replay ([`crate::replay`]): nothing is counted or reported;
/// false when it faulted.
pub fn rerun(job: Arc<Job>) -> bool {
    job.total == 0 || execute(&job).0.is_none()
}

/// Runs a launch to completion on the pool and the calling thread; a fault is recorded
/// ([`crate::findings`]) and becomes the error code the context will stick to.
pub fn run(job: Arc<Job>) -> Result<(), CUresult> {
    if job.total == 0 {
        return Ok(());
    }
    let checked = job.func.module.checked.clone();
    let _one_at_a_time = checked
        .is_some()
        .then(|| CHECKED_LAUNCH.lock().unwrap_or_else(|e| e.into_inner()));
    let (
        fault,
        Findings {
            race,
            uninit,
            divergent,
            barrier,
            loaded_bytes,
            same_value_writes,
            race_ww,
            undo_lost,
        },
    ) = execute(&job);
    if let Some(note) = barrier {
        findings::report(Kind::Barrier, note);
    }
    if checked.is_some() {
        findings::count_loaded(loaded_bytes);
        let mut spans = std::mem::take(&mut *job.touched.lock().unwrap_or_else(|e| e.into_inner()));
        spans.sort_unstable();
        spans.dedup();
        let what = || format!("kernel `{}`", job.func.name);
        for (lo, write) in spans {
            crate::driver::hazard::touch(usize::try_from(lo).unwrap_or(0), write, &what);
        }
    }
    if same_value_writes > 0 && fault.is_none() {
        findings::report(
            Kind::Note,
            race::same_value_note(&job.func.name, same_value_writes),
        );
    }
    // A fault comes first (its indices out of bounds often make the race too).
    if let Some(r) = race.filter(|_| fault.is_none()) {
        // Reads racing with writes, and nothing else: does the other order change a result?
        let outcome = if race_ww == 0 && !undo_lost {
            reorder::other_order(&job, loaded_bytes, |second| execute(second).0.is_none())
        } else {
            reorder::Outcome::Unknown
        };
        let (name, so) = (&job.func.name, checked.as_deref());
        let (kind, text) = match outcome {
            reorder::Outcome::Same => (
                Kind::Note,
                race::harmless_note(name, job.grid, job.block, so, &r),
            ),
            reorder::Outcome::Differs(d) => {
                let (kind, text) = race::report(name, job.grid, job.block, so, &r);
                (kind, format!("{text} {}.", reorder::changed(&d)))
            }
            reorder::Outcome::Unknown => race::report(name, job.grid, job.block, so, &r),
        };
        findings::report(kind, text);
    }
    if let Some(u) = uninit.filter(|_| fault.is_none()) {
        findings::report(
            Kind::Uninitialised,
            initcheck::report(&job.func.name, job.grid, job.block, checked.as_deref(), &u),
        );
    }
    if let Some(d) = divergent.filter(|_| fault.is_none()) {
        findings::report(
            Kind::Barrier,
            synccheck::report(&job.func.name, job.grid, job.block, &d),
        );
    }
    match fault {
        None => Ok(()),
        Some(f) => {
            findings::report(Kind::Fault, fault::report(&job.func.name, &f));
            Err(match f.kind {
                1 | FAULT_HOST | FAULT_FREE | FAULT_BOUNDS | FAULT_CALL | FAULT_RETURN => {
                    ILLEGAL_ADDRESS
                }
                2 => ASSERT,
                4 => LAUNCH_FAILED,
                _ => ILLEGAL_INSTRUCTION,
            })
        }
    }
}
