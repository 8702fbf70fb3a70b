//! Warp operations called with a mask that names lanes which never reach the call
//! (compute-sanitizer's synccheck), found by the block runner of a checked module: a
//! `__shfl_down_sync(0xffffffff, …)` inside an `if` that only some lanes of the warp take
//! hangs or returns garbage on a GPU, where the emulator's fibers would carry on.

/// The warp operations, in the order of the prelude's `__gl::WarpOp`.
pub const OPS: [&str; 9] = [
    "__syncwarp",
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
    "__ballot_sync",
    "__any_sync",
    "__all_sync",
    "__activemask",
];

/// The first such call of a launch, as the module recorded it.
#[derive(Clone, Debug, Default)]
pub struct Divergent {
    /// How many lanes made such a call in the launch.
    pub count: u64,
    /// Linear block index.
    pub block: u32,
    /// Linear thread index in the block.
    pub thread: u32,
    /// Line of the call in the kernel's source.
    pub line: u32,
    /// Which operation (an index into [`OPS`]).
    pub op: u32,
    /// The mask the thread passed.
    pub mask: u32,
    /// The lanes of its warp that reached the same call.
    pub present: u32,
}

/// The lanes set in `bits`, as `0-15, 20`.
fn lane_list(bits: u32) -> String {
    let mut parts = Vec::new();
    let mut lane = 0u32;
    while lane < 32 {
        if bits & (1 << lane) == 0 {
            lane += 1;
            continue;
        }
        let start = lane;
        while lane < 32 && bits & (1 << lane) != 0 {
            lane += 1;
        }
        parts.push(if lane - 1 == start {
            start.to_string()
        } else {
            format!("{start}-{}", lane - 1)
        });
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// The report of `d` in `kernel` launched with `grid` and `block`.
pub fn report(kernel: &str, grid: [u32; 3], block: [u32; 3], d: &Divergent) -> String {
    let op = usize::try_from(d.op)
        .ok()
        .and_then(|i| OPS.get(i))
        .copied()
        .unwrap_or("a warp operation");
    let lane_base = d.thread & !31;
    let missing = d.mask & !d.present;
    format!(
        "gpu-labs emulator: kernel `{kernel}` calls {op} with a mask that names lanes which do \
         not reach it (synccheck): thread {} of block {} (lane {}) called {op}(0x{:08x}, ...) on \
         line {}, where only lanes {} of its warp (threads {}..{}) arrived; lanes {} took \
         another branch or had finished ({} such call{} in this launch). Every lane named in \
         the mask must call the same {op}: on a GPU this hangs or returns garbage. Hint: call \
         it where all 32 lanes arrive (before or after the `if`), or pass the mask of the lanes \
         that do: __activemask() inside the branch, or __ballot_sync(0xffffffff, condition) \
         before it.",
        super::race::coords(d.thread, block),
        super::race::coords(d.block, grid),
        d.thread & 31,
        d.mask,
        d.line,
        lane_list(d.present),
        lane_base,
        lane_base + 31,
        lane_list(missing),
        d.count,
        if d.count == 1 { "" } else { "s" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_thread_line_lanes_and_hint() {
        let d = Divergent {
            count: 16,
            block: 1,
            thread: 35,
            line: 12,
            op: 3,
            mask: 0xffff_ffff,
            present: 0x0000_ffff,
        };
        let text = report("reduce", [2, 1, 1], [64, 1, 1], &d);
        assert!(
            text.contains(
                "thread (35,0,0) of block (1,0,0) (lane 3) called __shfl_down_sync(0xffffffff"
            ),
            "{text}"
        );
        assert!(
            text.contains("line 12, where only lanes 0-15 of its warp (threads 32..63)"),
            "{text}"
        );
        assert!(text.contains("lanes 16-31 took another branch"), "{text}");
        assert!(text.contains("__activemask()"), "{text}");
    }

    #[test]
    fn lists_runs_of_lanes() {
        assert_eq!(lane_list(0b1011_0001), "0, 4-5, 7");
        assert_eq!(lane_list(0), "none");
        assert_eq!(lane_list(u32::MAX), "0-31");
    }
}
