//! The emulator's record of a run: whether its kernels were checked, how many launches it
//! accepted and how each ended, and what it found (races, faults, refusals), kept in the
//! process as data and read by the grader's worker through `gpu_labs_emulator_record`, which
//! seals it into its report.
//!
//! Why not stderr: the submission writes there too. A racing kernel's report could be pushed
//! out of the kept output by megabytes of prints, glued to a line without an end, or buried
//! under lines that look like the emulator's. Nothing a submission prints reaches this record:
//! it lives in the emulator's memory (safe Rust cannot write there) and travels in the
//! worker's sealed report. Each finding is still printed for a person running their program.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What a finding is about; the grader decides what each costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Threads of a launch touched the same memory with nothing ordering them.
    Race,
    /// Warp-synchronous code that relies on the lanes of a warp running in lockstep.
    Lockstep,
    /// A read of shared memory no thread of the block wrote.
    Uninitialised,
    /// Threads of a block waited at different barriers, or with a wrong warp mask.
    Barrier,
    /// A launch stopped on a fault (out of bounds, a failed `assert`, a trap).
    Fault,
    /// Two streams touched one allocation with nothing ordering them.
    StreamHazard,
    /// A call the emulator refused or cannot do (a bad launch, an unsupported entry point, a
    /// library call outside its buffers, a module it did not compile).
    Refused,
    /// Anything else worth telling (a checked build that fell back to a plain one).
    Note,
}

impl Kind {
    /// The name the record uses.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Race => "race",
            Kind::Lockstep => "lockstep",
            Kind::Uninitialised => "uninitialised",
            Kind::Barrier => "barrier",
            Kind::Fault => "fault",
            Kind::StreamHazard => "stream-hazard",
            Kind::Refused => "refused",
            Kind::Note => "note",
        }
    }
}

/// Most findings the record keeps (the first of each text; later ones are only counted).
pub const KEPT: usize = 32;

/// Most bytes of one finding's text the record keeps.
pub const TEXT_BYTES: usize = 4096;

/// The findings so far, and how many were left out past [`KEPT`].
static FINDINGS: Mutex<(Vec<(Kind, String)>, u64)> = Mutex::new((Vec::new(), 0));

/// Launches accepted onto a stream.
static ACCEPTED: AtomicU64 = AtomicU64::new(0);
/// Launches that ran with a checked (race-detecting, confined) module.
static RAN_CHECKED: AtomicU64 = AtomicU64::new(0);
/// Launches that ran with a confined module (not checked; accesses confined to device memory).
static RAN_CONFINED: AtomicU64 = AtomicU64::new(0);
/// Launches that ran with a plain module.
static RAN_PLAIN: AtomicU64 = AtomicU64::new(0);
/// Launches dropped unrun (an earlier fault left the context with a sticky error).
static SKIPPED: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds the launches that ran took, start to end on the device's worker threads.
static BUSY_NS: AtomicU64 = AtomicU64::new(0);
/// Bytes checked launches read from device and shared memory.
static LOADED_BYTES: AtomicU64 = AtomicU64::new(0);
/// Multiply-adds cuBLAS computed.
static MULTIPLY_ADDS: AtomicU64 = AtomicU64::new(0);

/// Notes the bytes a checked launch read from device and shared memory.
pub fn count_loaded(bytes: u64) {
    LOADED_BYTES.fetch_add(bytes, Ordering::SeqCst);
}

/// Notes the multiply-adds a cuBLAS computation did.
pub fn count_multiply_adds(n: u64) {
    MULTIPLY_ADDS.fetch_add(n, Ordering::SeqCst);
}

/// Writes, once every accepted launch has ended, the bytes checked launches read from device
/// and shared memory and the multiply-adds cuBLAS computed, so far, so that the grader can
/// hold a result against the arithmetic the device did for it; returns false (writing
/// nothing) where kernels are not checked, which alone count their reads. Either pointer may
/// be null.
///
/// # Safety
/// Each pointer must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_arithmetic(
    loaded_bytes: *mut u64,
    multiply_adds: *mut u64,
) -> bool {
    if !crate::config::get().race_check {
        return false;
    }
    wait_for_launches();
    if !loaded_bytes.is_null() {
        *loaded_bytes = LOADED_BYTES.load(Ordering::SeqCst);
    }
    if !multiply_adds.is_null() {
        *multiply_adds = MULTIPLY_ADDS.load(Ordering::SeqCst);
    }
    true
}

/// Records a finding and prints it for a person reading the program's output.
pub fn report(kind: Kind, text: String) {
    eprintln!("{text}");
    let mut text = text.replace(['\n', '\r', '\t'], " ");
    if text.len() > TEXT_BYTES {
        let mut end = TEXT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    let mut all = FINDINGS.lock().unwrap_or_else(|e| e.into_inner());
    if all.0.iter().any(|(k, t)| *k == kind && *t == text) {
        return;
    }
    // The first race is kept past the bound: the findings before it (refused calls, say,
    // which a program can make as many as it likes) must not push out what fails the run.
    let first_race = matches!(kind, Kind::Race | Kind::Lockstep)
        && !all
            .0
            .iter()
            .any(|(k, _)| matches!(k, Kind::Race | Kind::Lockstep));
    if all.0.len() < KEPT || first_race {
        all.0.push((kind, text));
    } else {
        all.1 += 1;
    }
}

/// Most launches whose geometry the record keeps: the first ones, which are those of the
/// cases a product item grades (a timed item's later launches are not needed).
pub const GEOMETRIES_KEPT: usize = 256;

/// Most bytes of a kernel's name a geometry line keeps.
const NAME_BYTES: usize = 128;

/// One kept launch: its number (from 0, in the order accepted), grid, block and kernel.
type Geometry = (u64, [u32; 3], [u32; 3], String);

/// The first [`GEOMETRIES_KEPT`] launches.
static GEOMETRIES: Mutex<Vec<Geometry>> = Mutex::new(Vec::new());

/// A launch of `kernel` over `grid` blocks of `block` threads accepted onto a stream: returns
/// what must be dropped once it has run or been skipped, which the launch's queued work holds.
/// Its geometry goes into the record (the grader tells a grid too small for the output from
/// it).
pub fn accepted(kernel: &str, grid: [u32; 3], block: [u32; 3]) -> LaunchEnd {
    let number = ACCEPTED.fetch_add(1, Ordering::SeqCst);
    let mut kept = GEOMETRIES.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() < GEOMETRIES_KEPT {
        let mut name: String = kernel
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect();
        if name.len() > NAME_BYTES {
            let mut end = NAME_BYTES;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
        }
        kept.push((number, grid, block, name));
    }
    LaunchEnd { ran: None }
}

/// How the module of a launch was built, as the record counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Race-detecting and confined to device memory.
    Checked,
    /// Confined to device memory, no race detection.
    Confined,
    /// Neither: the kernel's accesses go wherever its pointers point.
    Plain,
}

/// The end of one accepted launch: counted as run (by its [`Build`]) when [`LaunchEnd::ran`]
/// was called, else as skipped, when dropped.
pub struct LaunchEnd {
    ran: Option<Build>,
}

impl LaunchEnd {
    /// The launch ran, with a module built as `build`, and took `took` on the device.
    pub fn ran(&mut self, build: Build, took: std::time::Duration) {
        self.ran = Some(build);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        BUSY_NS.fetch_add(ns, Ordering::SeqCst);
    }
}

/// Waits until every accepted launch has ended (run or skipped): a launch that never ends is
/// the grader's timeout to stop.
fn wait_for_launches() {
    loop {
        let ended = RAN_CHECKED.load(Ordering::SeqCst)
            + RAN_CONFINED.load(Ordering::SeqCst)
            + RAN_PLAIN.load(Ordering::SeqCst)
            + SKIPPED.load(Ordering::SeqCst);
        if ended >= ACCEPTED.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Writes, once every accepted launch has ended, how many launches ran and the nanoseconds
/// they took on the device in all, so that the grader can hold a GPU time a function reports
/// against the device work it saw; either pointer may be null.
///
/// # Safety
/// Each pointer must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_device_time(runs: *mut u64, busy_ns: *mut u64) {
    wait_for_launches();
    if !runs.is_null() {
        *runs = RAN_CHECKED.load(Ordering::SeqCst)
            + RAN_CONFINED.load(Ordering::SeqCst)
            + RAN_PLAIN.load(Ordering::SeqCst);
    }
    if !busy_ns.is_null() {
        *busy_ns = BUSY_NS.load(Ordering::SeqCst);
    }
}

impl Drop for LaunchEnd {
    fn drop(&mut self) {
        let counter = match self.ran {
            Some(Build::Checked) => &RAN_CHECKED,
            Some(Build::Confined) => &RAN_CONFINED,
            Some(Build::Plain) => &RAN_PLAIN,
            None => &SKIPPED,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// The record as text: a header line, one line of counts, one line a finding (`kind`, a tab,
/// the text), then one line a kept launch (`launch`, a tab, its number, grid, block and
/// kernel, space-separated). Waits first for every accepted launch to end, so the record covers all
/// the work the program queued (a launch that never ends is the grader's timeout to stop).
pub fn record_text() -> String {
    wait_for_launches();
    let all = FINDINGS.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = format!(
        "gpu-labs-emulator-record 4\nchecked={} confined={} compiler={} accepted={} checked_runs={} confined_runs={} plain_runs={} skipped={} left_out={}\n",
        u8::from(crate::config::get().race_check),
        u8::from(crate::config::get().confine),
        u8::from(crate::config::get().compiler.is_some()),
        ACCEPTED.load(Ordering::SeqCst),
        RAN_CHECKED.load(Ordering::SeqCst),
        RAN_CONFINED.load(Ordering::SeqCst),
        RAN_PLAIN.load(Ordering::SeqCst),
        SKIPPED.load(Ordering::SeqCst),
        all.1,
    );
    for (kind, text) in &all.0 {
        out.push_str(kind.name());
        out.push('\t');
        out.push_str(text);
        out.push('\n');
    }
    drop(all);
    let kept = GEOMETRIES.lock().unwrap_or_else(|e| e.into_inner());
    for (number, [gx, gy, gz], [bx, by, bz], name) in kept.iter() {
        out.push_str(&format!(
            "launch\t{number} {gx} {gy} {gz} {bx} {by} {bz} {name}\n"
        ));
    }
    out
}

/// Copies the record ([`record_text`]) into `buf` when it fits in `cap` bytes, and returns
/// its length either way (call again with a larger buffer when it did not fit). Only the
/// grader's worker calls it; a submission could only through `unsafe`, which the grader's
/// source rules refuse.
///
/// # Safety
/// `buf` must be null or writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_record(buf: *mut u8, cap: usize) -> usize {
    let text = record_text();
    if !buf.is_null() && text.len() <= cap {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf, text.len());
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_kept_once_each_cut_to_their_bound_and_counted_past_it() {
        report(Kind::Fault, "x".repeat(TEXT_BYTES + 10));
        report(Kind::Note, "two\nlines".into());
        for i in 0..KEPT {
            report(Kind::Refused, format!("cuThing{i} is not supported"));
        }
        // Past the bound: the first race is kept all the same (refusals a program can make
        // at will must not push it out), once; a second is only counted.
        report(Kind::Race, "same".into());
        report(Kind::Race, "same".into());
        report(Kind::Lockstep, "another".into());
        for build in [Build::Checked, Build::Confined] {
            let mut end = accepted("k", [2, 1, 1], [16, 16, 1]);
            end.ran(build, std::time::Duration::from_micros(5));
        }
        drop(accepted("a kernel", [1, 2, 3], [4, 5, 6]));
        let text = record_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "gpu-labs-emulator-record 4");
        assert!(lines[1].contains("compiler=0"), "{}", lines[1]);
        assert!(
            lines[1].contains("accepted=3 checked_runs=1 confined_runs=1 plain_runs=0 skipped=1"),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 2 + KEPT + 1 + 3);
        assert_eq!(lines[2 + KEPT], "race\tsame");
        assert_eq!(
            &lines[lines.len() - 3..],
            [
                "launch\t0 2 1 1 16 16 1 k",
                "launch\t1 2 1 1 16 16 1 k",
                "launch\t2 1 2 3 4 5 6 a_kernel"
            ]
        );
        assert!(lines.contains(&"note\ttwo lines"));
        let fault = lines.iter().find(|l| l.starts_with("fault\t")).unwrap();
        assert_eq!(fault.len(), "fault\t".len() + TEXT_BYTES);
        assert!(lines[1].ends_with("left_out=3"), "{}", lines[1]);
    }
}
