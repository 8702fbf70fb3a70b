//! Reads of shared memory that no thread of the block had written (compute-sanitizer's
//! initcheck), found by a checked module: shared memory starts undefined in every block, so
//! a histogram never zeroed or a read past the elements loaded gives garbage on a GPU (the
//! emulator's memory often happens to hold the previous block's values, or zeros).

use std::path::Path;

use super::race::{coords, lines, shared_memory};

/// The first such read of a launch, as the module recorded it.
#[derive(Clone, Debug, Default)]
pub struct Unwritten {
    /// How many such reads the launch made.
    pub count: u64,
    /// Offset in the thread-local block (static shared memory) or the dynamic buffer.
    pub offset: usize,
    /// Size of the read in bytes.
    pub size: u32,
    /// Linear block index.
    pub block: u32,
    /// Linear thread index in the block.
    pub thread: u32,
    /// Code offset of the read in the module.
    pub pc: u32,
    /// 1: static `__shared__`, 2: dynamic.
    pub shared: u8,
}

/// The report of `u` in `kernel` launched with `grid` and `block`; `so` is the checked
/// module's object (for the line and the array's name).
pub fn report(
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    so: Option<&Path>,
    u: &Unwritten,
) -> String {
    let line = so
        .and_then(|so| lines(so, &[u.pc]).pop().flatten())
        .map_or(String::new(), |l| format!(" ({l})"));
    format!(
        "gpu-labs emulator: kernel `{kernel}` reads uninitialized shared memory: thread {} of \
         block {} read {} bytes{line} {} that no thread of its block had written ({} such \
         read{} in this launch); shared memory starts undefined in every block, so on a GPU the \
         value is garbage. Hint: set it first (each thread zeroes or loads its own elements), \
         then __syncthreads() before any thread reads or atomically updates it.",
        coords(u.thread, block),
        coords(u.block, grid),
        u.size,
        shared_memory(u.shared, u.offset, so),
        u.count,
        if u.count == 1 { "" } else { "s" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_thread_and_the_hint() {
        let u = Unwritten {
            count: 2,
            offset: 8,
            size: 4,
            block: 1,
            thread: 3,
            pc: 0,
            shared: 2,
        };
        let text = report("hist", [2, 1, 1], [32, 1, 1], None, &u);
        assert!(
            text.contains("thread (3,0,0) of block (1,0,0) read 4 bytes in the dynamic shared"),
            "{text}"
        );
        assert!(text.contains("2 such reads"), "{text}");
        assert!(text.contains("zeroes"), "{text}");
    }
}
