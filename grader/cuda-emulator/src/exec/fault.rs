//! Faults inside kernels: a signal handler that, on a worker running a kernel, leaves the
//! kernel through the module's `__gl_fault_jump`, and the report printed for the student.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::Once;

use super::{Fault, LaunchDesc};
use crate::driver::module::{FaultJump, Module};

thread_local! {
    /// The module whose kernel this thread is running (null when none).
    static ARMED: Cell<Option<FaultJump>> = const { Cell::new(None) };
    /// The access that faulted last on this thread.
    static LAST: Cell<Access> = const { Cell::new(Access { addr: 0, write: false, size: None }) };
    /// Whether this thread has an alternate signal stack of ours.
    static ALT_STACK: Cell<bool> = const { Cell::new(false) };
}

/// A faulting memory access.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The address.
    pub addr: usize,
    /// Whether it was a write.
    pub write: bool,
    /// Its size, when the instruction could be decoded.
    pub size: Option<usize>,
}

const SIGNALS: [c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];
static mut PREVIOUS: [Option<libc::sigaction>; 4] = [None; 4];
static INSTALL: Once = Once::new();

fn fault_kind(sig: c_int) -> c_int {
    match sig {
        libc::SIGFPE => 4,
        libc::SIGILL => 3,
        _ => 1,
    }
}

unsafe extern "C" fn handler(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    if let Some(jump) = ARMED.with(Cell::get) {
        ARMED.with(|a| a.set(None));
        let addr = if info.is_null() {
            0
        } else {
            (*info).si_addr() as usize
        };
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        let (write, size) = if ctx.is_null() {
            (false, None)
        } else {
            let regs = &(*(ctx as *const libc::ucontext_t)).uc_mcontext.gregs;
            let rip = regs[libc::REG_RIP as usize] as usize as *const u8;
            // The faulting instruction is mapped code: reading its first bytes is safe.
            let code = std::slice::from_raw_parts(rip, 15);
            (
                regs[libc::REG_ERR as usize] & 2 != 0,
                super::decode::access_size(code),
            )
        };
        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        let (write, size) = (false, None);
        LAST.with(|l| l.set(Access { addr, write, size }));
        jump(fault_kind(sig));
    }
    // Not ours: hand the signal to whoever had it before.
    let idx = SIGNALS.iter().position(|&s| s == sig).unwrap_or(0);
    // SAFETY: written once before the handler was installed.
    let prev = unsafe { (*std::ptr::addr_of!(PREVIOUS))[idx] };
    match prev {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                let f: unsafe extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
                    std::mem::transmute(p.sa_sigaction);
                f(sig, info, ctx);
            } else {
                let f: unsafe extern "C" fn(c_int) = std::mem::transmute(p.sa_sigaction);
                f(sig);
            }
        }
        _ => {
            // Restore the default action; returning re-executes the instruction and dies.
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
    }
}

fn install() {
    INSTALL.call_once(|| {
        for (i, &sig) in SIGNALS.iter().enumerate() {
            // SAFETY: installing a handler with SA_SIGINFO | SA_ONSTACK; `PREVIOUS` is only
            // written here, before the handler can run.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = handler as *const () as usize;
                act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
                libc::sigemptyset(&mut act.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &act, &mut old) == 0 {
                    (*std::ptr::addr_of_mut!(PREVIOUS))[i] = Some(old);
                }
            }
        }
    });
}

fn ensure_alt_stack() {
    if ALT_STACK.with(Cell::get) {
        return;
    }
    const SIZE: usize = 256 * 1024;
    // SAFETY: querying, then installing a fresh mapping as this thread's signal stack.
    unsafe {
        let mut cur: libc::stack_t = std::mem::zeroed();
        libc::sigaltstack(std::ptr::null(), &mut cur);
        if cur.ss_flags & libc::SS_DISABLE != 0 || cur.ss_size < SIZE {
            let m = libc::mmap(
                std::ptr::null_mut(),
                SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if m != libc::MAP_FAILED {
                let st = libc::stack_t {
                    ss_sp: m,
                    ss_flags: 0,
                    ss_size: SIZE,
                };
                libc::sigaltstack(&st, std::ptr::null_mut());
            }
        }
    }
    ALT_STACK.with(|a| a.set(true));
}

/// Runs blocks of a launch with the fault handler armed. Returns the faulting access and the
/// fault kind if this thread's kernel code faulted.
pub fn run_guarded(module: &Module, desc: &mut LaunchDesc) -> Option<(Access, i32)> {
    install();
    ensure_alt_stack();
    LAST.with(|l| {
        l.set(Access {
            addr: 0,
            write: false,
            size: None,
        })
    });
    ARMED.with(|a| a.set(Some(module.fault_jump)));
    // SAFETY: the module's block runner, given a descriptor that lives for the call.
    let r = unsafe { (module.run_blocks)(std::ptr::from_mut(desc).cast()) };
    ARMED.with(|a| a.set(None));
    if r == 0 {
        return None;
    }
    Some((LAST.with(Cell::get), r))
}

fn idx(v: [u32; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}

/// What a kernel did when it indexed an array out of its bounds, from the prelude's record
/// (`index\ttype\tfile\tline`): the index, the array's size, and where.
fn out_of_bounds(record: &str) -> String {
    let mut parts = record.split('\t');
    let (Some(index), Some(ty), Some(file), Some(line)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return format!("indexed an array outside its bounds ({record})");
    };
    let ty = ty.trim_matches('\'');
    // The outer size: `float [4][4]` is an array of 4 rows.
    let size = ty
        .split_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .and_then(|(n, _)| n.trim().parse::<u64>().ok());
    let file = std::path::Path::new(file)
        .file_name()
        .map_or(file.into(), |f| f.to_string_lossy());
    match size {
        Some(n) if n > 0 => format!(
            "used index {index} of an array of {n} (`{ty}`, line {line} of {file}): its \
             elements are numbered 0 to {}, so the access would be outside it. Check the index \
             against the array's size (a loop that runs one round too many, a thread index \
             larger than the array).",
            n - 1
        ),
        _ => format!(
            "used index {index} of the array `{ty}` (line {line} of {file}), outside it. Check \
             the index against the array's size."
        ),
    }
}

/// The last line of the report of a launch the module stopped (or a guard page did): the
/// context's error from now on, as a GPU's.
const STOPPED: &str = "gpu-labs emulator: the launch was stopped and the context reports \
                       CUDA_ERROR_ILLEGAL_ADDRESS from now on";

/// The report printed when a launch faults.
pub fn report(kernel: &str, f: &Fault) -> String {
    let at = format!(
        "gpu-labs emulator: kernel `{kernel}` block {} thread {}",
        idx(f.block),
        idx(f.thread)
    );
    match f.kind {
        1 if super::is_stack_guard(f.addr) => format!(
            "{at} ran out of stack: its calls are nested too deep (a recursion that does not \
             end, or one too deep for a GPU thread, whose stack is a few KiB). Check the \
             recursion's base case, or write it as a loop.\n{STOPPED}"
        ),
        1 => format!(
            "{at} {}{} {}\ngpu-labs emulator: the launch was stopped and the context reports \
             CUDA_ERROR_ILLEGAL_ADDRESS from now on, as a GPU would; check that every index is \
             in bounds (e.g. `if (row < n && col < n)`)",
            if f.write { "wrote" } else { "read" },
            f.size.map_or(String::new(), |s| format!(" {s} bytes")),
            crate::memory::describe(f.addr)
        ),
        2 => format!("{at}: {}\ngpu-labs emulator: the context reports CUDA_ERROR_ASSERT from now on", f.message),
        super::FAULT_HOST => {
            let verb = if f.write { "write" } else { "read" };
            let what = if crate::memory::is_pinned_host(f.addr, 1) {
                "page-locked host memory (cuMemHostAlloc), not GPU memory"
            } else {
                "host memory, not GPU memory"
            };
            format!(
                "{at} {}{} at {:#x}, which is {what}: a kernel can only {verb} GPU memory \
                 (buffers allocated on the device, e.g. with stream.alloc_zeros or \
                 stream.clone_htod, and __device__ variables), never the host's. Copy the data \
                 to a device buffer first and pass that buffer to the kernel; work done on the \
                 host is not GPU work.\n{STOPPED}",
                if f.write { "wrote" } else { "read" },
                f.size.map_or(String::new(), |s| format!(" {s} bytes")),
                f.addr
            )
        }
        super::FAULT_FREE => {
            use crate::memory::Kind;
            let what = match crate::memory::containing(f.addr, 1).map(|a| a.kind) {
                Some(Kind::Device) => " (a device buffer the host allocated)",
                Some(Kind::ModuleGlobal) => " (a __device__ variable)",
                Some(Kind::PinnedHost) => " (page-locked host memory)",
                Some(Kind::DeviceHeap) => " (inside a heap block, not at its start)",
                None => " (not GPU memory)",
            };
            format!(
                "{at} freed {:#x}{what} with free or delete: an address that malloc or new in a \
                 kernel did not return, or one freed already. A kernel may free only what its own \
                 malloc (or new) returned, once; buffers the host allocated are freed by the \
                 host.\n{STOPPED}",
                f.addr
            )
        }
        super::FAULT_BOUNDS => format!(
            "{at} {}\n{STOPPED}",
            out_of_bounds(&f.message)
        ),
        super::FAULT_CALL => format!(
            "{at} called a function through a pointer (to {}): a function pointer or a virtual \
             function. In graded runs on the gpu-labs emulator a kernel calls functions by name \
             only, since a pointer could name any function of the process, the host's included. \
             Call the function directly (a template parameter or a switch can choose \
             it).\n{STOPPED}",
            f.message
        ),
        super::FAULT_RETURN => {
            let mut parts = f.message.split('\t');
            let (called_from, found) = (parts.next().unwrap_or("?"), parts.next().unwrap_or("?"));
            let what = if called_from == found {
                "the registers its caller keeps, saved in its frame, had changed".to_string()
            } else {
                format!(
                    "its return address had changed (it was called from {called_from}, and would \
                     have returned to {found})"
                )
            };
            format!(
                "{at} wrote over its own stack frame: a function of the kernel could not return \
                 safely, since {what}. A write through a pointer to a local variable went past \
                 that variable (a local array indexed through a pointer past its end?).\n\
                 {STOPPED}"
            )
        }
        4 => format!("{at}: arithmetic fault (integer division by zero?); the context reports CUDA_ERROR_LAUNCH_FAILED from now on"),
        _ => format!(
            "{at}: trap{}; the context reports CUDA_ERROR_ILLEGAL_INSTRUCTION from now on",
            if f.message.is_empty() { String::new() } else { format!(" ({})", f.message) }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_out_of_bounds_reads_as_the_index_the_size_and_the_line() {
        let said = out_of_bounds("4\t'float [4]'\t/tmp/gpu-labs/default_program\t12");
        assert!(
            said.starts_with(
                "used index 4 of an array of 4 (`float [4]`, line 12 of default_program): its \
                 elements are numbered 0 to 3"
            ),
            "{said}"
        );
        // A matrix's row index is checked against its rows.
        let said = out_of_bounds("-1\t'float [8][2]'\tk.cu\t3");
        assert!(said.contains("index -1 of an array of 8 (`float [8][2]`, line 3 of k.cu)"));
        assert!(said.contains("numbered 0 to 7"), "{said}");
        // A record it cannot read is shown as it is, never dropped.
        assert_eq!(
            out_of_bounds("garbled"),
            "indexed an array outside its bounds (garbled)"
        );
    }
}
