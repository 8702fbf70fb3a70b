//! Data races found by a checked module (compiled with race detection, see the prelude's
//! "race check" part): what the module recorded of the first one in a launch, and the report
//! printed for the student, with both threads, the memory, the source lines and a hint.

use std::path::Path;

/// The first race of a launch, as the module recorded it (indices linear).
#[derive(Clone, Debug, Default)]
pub struct Race {
    /// How many racing accesses the launch made.
    pub count: u64,
    /// The address of the later access.
    pub addr: usize,
    /// Its size in bytes.
    pub size: u32,
    /// Linear block index of the earlier and the later access.
    pub block: [u32; 2],
    /// Linear thread index (in its block) of each.
    pub thread: [u32; 2],
    /// Code offset in the module of each.
    pub pc: [u32; 2],
    /// Whether each was a write.
    pub write: [bool; 2],
    /// Whether each was through a `volatile` lvalue.
    pub volatile: [bool; 2],
    /// 0: global memory, 1: static shared memory, 2: dynamic shared memory.
    pub shared: u8,
    /// The earlier thread read and then wrote the element: the code offset of its read.
    pub rmw: Option<u32>,
    /// With `rmw`, when the later access was a read: what its thread wrote next in the same
    /// interval, 1 the same element (an update: a missing atomic), 2 another element (an
    /// in-place step over neighbours, as in a scan), 0 nothing.
    pub next: u8,
}

/// The note for racing writes that left memory as it was (`count` of them in kernel `name`):
/// told, never counted against the kernel, since no order of them changes what it computes.
pub(crate) fn same_value_note(name: &str, count: u64) -> String {
    format!(
        "gpu-labs emulator: kernel `{name}`: {count} write{s} by threads running at once stored \
         the value already there (several threads writing one value to one place, as every \
         lane storing its warp's sum): harmless, whichever thread goes first",
        s = if count == 1 { "" } else { "s" }
    )
}

/// `(x,y,z)` of linear index `linear` in `dims`.
pub(crate) fn coords(linear: u32, dims: [u32; 3]) -> String {
    let (x, y) = (dims[0].max(1), dims[1].max(1));
    format!("({},{},{})", linear % x, (linear / x) % y, linear / (x * y))
}

/// The header whose loop does the asynchronous copies (`src/nvrtc/gpu_labs_async.h`).
const ASYNC_HEADER: &str = "gpu_labs_async.h";

/// Where an access in [`ASYNC_HEADER`] comes from, in place of that header's line.
const ASYNC_COPY: &str = "an asynchronous copy (memcpy_async), done when its thread waits for it";

/// Source lines of code offsets in `so`, from its line table (`addr2line`, part of binutils,
/// which the C++ compiler needs anyway); `None` for each where it cannot tell, and
/// [`ASYNC_COPY`] for the asynchronous copies' own loop.
pub(crate) fn lines(so: &Path, pcs: &[u32]) -> Vec<Option<String>> {
    let out = crate::config::get()
        .command("addr2line")
        .arg("-e")
        .arg(so)
        .args(pcs.iter().map(|pc| format!("{pc:#x}")))
        .output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => return vec![None; pcs.len()],
    };
    let mut found: Vec<Option<String>> = text
        .lines()
        .map(|l| {
            let (file, line) = l.rsplit_once(':')?;
            let line = line.split_whitespace().next()?;
            if file.ends_with(ASYNC_HEADER) {
                return Some(ASYNC_COPY.to_string());
            }
            (line != "0" && line != "?" && !l.contains("gpu-labs-prelude"))
                .then(|| format!("line {line}"))
        })
        .collect();
    found.resize(pcs.len(), None);
    found
}

/// Where offset `addr` of shared memory of kind `shared` (1: static, by its symbol in `so`;
/// 2: dynamic) is, as "in __shared__ `tile` (byte offset 8)".
pub(crate) fn shared_memory(shared: u8, addr: usize, so: Option<&Path>) -> String {
    if shared == 2 {
        return "in the dynamic shared memory (extern __shared__)".to_string();
    }
    so.and_then(|so| std::fs::read(so).ok())
        .and_then(|elf| crate::nvrtc::symbols::object_at(&elf, addr))
        .map_or_else(
            || "in a __shared__ array".to_string(),
            |(name, offset)| format!("in __shared__ `{name}` (byte offset {offset})"),
        )
}

/// Where the racing address is: a shared variable (by symbol) or a device allocation.
fn memory(r: &Race, so: Option<&Path>) -> String {
    match r.shared {
        1 | 2 => shared_memory(r.shared, r.addr, so),
        _ => global_place(r.addr),
    }
}

/// Where address `addr` of global memory is: "at offset 8 of a device allocation of 64 bytes
/// (at 0x...)".
pub(crate) fn global_place(addr: usize) -> String {
    match crate::memory::containing(addr, 1) {
        Some(a) => {
            let what = match a.kind {
                crate::memory::Kind::ModuleGlobal => "a __device__ variable",
                crate::memory::Kind::DeviceHeap => "a block a kernel's malloc or new returned",
                _ => "a device allocation",
            };
            format!(
                "at offset {} of {what} of {} bytes (at {:#x})",
                addr - a.base,
                a.size,
                a.base
            )
        }
        None => format!("at address {addr:#x}"),
    }
}

/// The report of a race in `kernel` launched with `grid` and `block` dimensions, and whether
/// it is a plain race or warp-synchronous code relying on lockstep; `so` is the checked
/// module's object (for source lines).
pub fn report(
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    so: Option<&Path>,
    r: &Race,
) -> (crate::findings::Kind, String) {
    let rmw_pc = r.rmw.unwrap_or(0);
    let src = so.map_or_else(
        || vec![None, None, None],
        |so| lines(so, &[r.pc[0], r.pc[1], rmw_pc]),
    );
    // A read-modify-write in one statement (`x += ...`; the lines tell where known).
    let rmw = r.rmw.is_some() && (src[0].is_none() || src[0] == src[2]);
    let same_block = r.block[0] == r.block[1];
    let same_warp = same_block && r.thread[0] / 32 == r.thread[1] / 32;
    let copied = src[..2].iter().flatten().any(|l| l == ASYNC_COPY);
    let (kind, hint) = if copied {
        (
            "is a data race",
            "read what an asynchronous copy brings only after waiting for it: \
             cooperative_groups::wait(group), pipe.consumer_wait() then __syncthreads() for \
             another thread's part, or bar.arrive_and_wait()",
        )
    } else if same_warp && (r.volatile[0] || r.volatile[1]) {
        (
            "relies on implicit warp lockstep",
            "threads of a warp do not run in lockstep (since Volta): a `volatile` shared \
             array does not order them. Put __syncwarp() between the steps (read into a \
             register, __syncwarp(), write, __syncwarp()), or use __shfl_down_sync",
        )
    } else if rmw && r.next == 2 {
        (
            "is a data race",
            "a thread reads an element that another thread updates in place in the same step \
             (an in-place scan): use two buffers (double buffering: read one, write the \
             other, __syncthreads(), swap), or read into a register, __syncthreads(), then \
             write",
        )
    } else if rmw {
        (
            "is a data race",
            "several threads update the same element with a plain read-modify-write (`+=`), \
             so updates are lost on a GPU: use atomicAdd (or reduce in shared memory first)",
        )
    } else if same_block {
        (
            "is a data race",
            "put __syncthreads() between the write and the other threads' reads (and before \
             the next write of the same element): threads of a block, even of one warp, do not \
             run in lockstep (within one warp, __syncwarp() is enough)",
        )
    } else {
        (
            "is a data race",
            "blocks do not wait for each other within a launch: give each element one writing \
             block, use atomicAdd, or split the work into two kernels",
        )
    };
    let finding = if same_warp && (r.volatile[0] || r.volatile[1]) {
        crate::findings::Kind::Lockstep
    } else {
        crate::findings::Kind::Race
    };
    let text = format!(
        "gpu-labs emulator: kernel `{kernel}` {kind}: {}; on a GPU the result depends on \
         timing. Hint: {hint}.",
        pair(r, grid, block, &src, so)
    );
    (finding, text)
}

/// The two racing accesses of `r`, as the reports tell them: "thread (1,0,0) of block (0,0,0)
/// read 4 bytes (line 8) in __shared__ `s` (byte offset 4) and thread (2,0,0) of block
/// (0,0,0) wrote it (line 7) with nothing ordering the two (3 racing accesses in this launch)".
fn pair(
    r: &Race,
    grid: [u32; 3],
    block: [u32; 3],
    src: &[Option<String>],
    so: Option<&Path>,
) -> String {
    let at = |i: usize| {
        format!(
            "thread {} of block {}",
            coords(r.thread[i], block),
            coords(r.block[i], grid)
        )
    };
    let what = |i: usize| {
        let verb = if r.write[i] { "wrote" } else { "read" };
        match &src[i] {
            Some(line) => format!("{verb} it ({line})"),
            None => verb.to_string(),
        }
    };
    let later_line = src[1].as_ref().map_or(String::new(), |l| format!(" ({l})"));
    format!(
        "{} {} {} bytes{later_line} {} and {} {} with nothing ordering the two ({} racing \
         access{} in this launch)",
        at(1),
        if r.write[1] { "wrote" } else { "read" },
        r.size,
        memory(r, so),
        at(0),
        what(0),
        r.count,
        if r.count == 1 { "" } else { "es" },
    )
}

/// The note for races that the launch run again in the other order showed harmless
/// ([`super::reorder`]): told, never counted against the kernel.
pub fn harmless_note(
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    so: Option<&Path>,
    r: &Race,
) -> String {
    let src = so.map_or_else(|| vec![None, None], |so| lines(so, &[r.pc[0], r.pc[1]]));
    format!(
        "gpu-labs emulator: kernel `{kernel}`: {}; run again with its blocks and threads in \
         the other order, it wrote exactly the same, so here the order does not change its \
         results (a value read and then not used, as a clamped neighbour's): harmless, not \
         counted against it",
        pair(r, grid, block, &src, so)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_both_threads_and_the_hint() {
        let r = Race {
            count: 3,
            addr: 0,
            size: 4,
            block: [1, 1],
            thread: [0, 33],
            pc: [0, 0],
            write: [true, false],
            volatile: [false, false],
            shared: 1,
            rmw: None,
            next: 0,
        };
        let (kind, text) = report("k", [4, 1, 1], [64, 1, 1], None, &r);
        assert_eq!(kind, crate::findings::Kind::Race);
        assert!(
            text.contains("thread (33,0,0) of block (1,0,0) read 4 bytes in a __shared__ array"),
            "{text}"
        );
        assert!(
            text.contains("thread (0,0,0) of block (1,0,0) wrote"),
            "{text}"
        );
        assert!(text.contains("__syncthreads()"), "{text}");
        let warp = Race {
            thread: [0, 16],
            volatile: [true, true],
            ..r
        };
        let (kind, text) = report("k", [4, 1, 1], [64, 1, 1], None, &warp);
        assert_eq!(kind, crate::findings::Kind::Lockstep);
        assert!(text.contains("implicit warp lockstep"), "{text}");
    }
}
