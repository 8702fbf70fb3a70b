//! Where a panic inside a dependency came from in the student's code.
//!
//! A panic raised inside a library (cudarc's "Unable to dynamically load the cuda shared
//! library") is located in that library's source, on the grading machine: a path in the
//! grader's cargo registry that says nothing to the student and shows the grader's layout.
//! The student needs the line of their own code that called it, so the hook walks the
//! backtrace for the first frame in the submission's `src/` and reports that instead, with the
//! library's name; paths of the registry, the toolchain and the grader never reach the report.

/// The location a report shows for a panic at `file:line`: itself when it is in the student's
/// code; for a panic in a dependency or the standard library, the student's first frame on
/// the backtrace (`src/gpu.rs:120 (→ cudarc-0.19.0)`), or the library alone when no frame is
/// the student's.
pub fn reported(file: &str, line: u32) -> String {
    if !is_library(file) {
        return format!("{}:{line}", shown(file));
    }
    let library = library_name(file);
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    match student_frame(&trace) {
        Some(site) => format!("{site} (→ {library})"),
        None => library,
    }
}

/// A panic message with any path into a cargo home or the toolchain cut to the library's
/// own part (`cudarc-0.19.0/src/driver/sys/mod.rs`).
pub fn scrubbed(message: &str) -> String {
    message
        .split_inclusive(char::is_whitespace)
        .map(|word| match registry_tail(word) {
            Some(tail) => tail.to_string(),
            None => word.to_string(),
        })
        .collect()
}

/// Whether `file` is a library's source: a crate from a registry or a git checkout, or the
/// standard library.
fn is_library(file: &str) -> bool {
    registry_tail(file).is_some() || file.starts_with("/rustc/") || file.contains("/library/std/")
}

/// The part of a path after a cargo registry's or git checkout's folder of crates.
fn registry_tail(path: &str) -> Option<&str> {
    for marker in ["/registry/src/", "/git/checkouts/"] {
        if let Some(at) = path.find(marker) {
            let rest = &path[at + marker.len()..];
            // Skip the index's (or repository's) own folder.
            return rest.split_once('/').map(|(_, tail)| tail);
        }
    }
    None
}

/// The library a path belongs to: its crate folder (`cudarc-0.19.0`), or `std`.
fn library_name(file: &str) -> String {
    registry_tail(file)
        .and_then(|tail| tail.split('/').next())
        .unwrap_or("std")
        .to_string()
}

/// The grader's own source folder (the worker crate's parent), whose frames are not the
/// student's.
fn grader_dir() -> &'static str {
    let worker = env!("CARGO_MANIFEST_DIR");
    worker.rsplit_once('/').map_or(worker, |(parent, _)| parent)
}

/// Whether `path` is in the grader's sources: under its folder, or relative to the folder above
/// it (`grader/worker/src/…`), as cargo names the sources of a workspace's own crates when the
/// grader's workspace build compiled them (official grading links those: `stage::prebuilt`).
fn is_graders(path: &str) -> bool {
    let dir = grader_dir();
    let name = dir.rsplit_once('/').map_or(dir, |(_, name)| name);
    path.starts_with(dir)
        || path
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The first frame of a rendered backtrace (`at path:line:col` lines) in the student's
/// code, as `src/…:line`.
fn student_frame(trace: &str) -> Option<String> {
    trace
        .lines()
        .filter_map(|l| l.trim().strip_prefix("at "))
        .filter_map(|at| {
            let (path, line) = at.rsplit_once(':')?.0.rsplit_once(':')?;
            Some((path, line.parse::<u32>().ok()?))
        })
        .find(|(path, _)| {
            !is_library(path)
                && !is_graders(path)
                && !path.ends_with("tests/grade.rs")
                && (path.starts_with("src/") || path.contains("/src/"))
        })
        .map(|(path, line)| format!("{}:{line}", shown(path)))
}

/// A student's path from its `src/` on (`./src/gpu.rs` and `/tmp/x/src/gpu.rs` both show as
/// `src/gpu.rs`); other paths as they are.
fn shown(path: &str) -> &str {
    if path.starts_with("src/") {
        return path;
    }
    match path.rfind("/src/") {
        Some(at) => &path[at + 1..],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRY: &str = "/root/.cache/gpu-labs/build-home/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cudarc-0.19.0/src/driver/sys/mod.rs";

    #[test]
    fn the_students_own_panic_keeps_its_place() {
        assert_eq!(reported("src/gpu.rs", 12), "src/gpu.rs:12");
        assert_eq!(reported("/tmp/x/src/layers.rs", 3), "src/layers.rs:3");
    }

    #[test]
    fn a_dependencys_panic_shows_the_students_call_and_no_registry_path() {
        let trace = format!(
            "   0: std::backtrace::Backtrace::force_capture\n             at /rustc/abc/library/std/src/backtrace.rs:331:13\n   1: cudarc::driver::sys::lib\n             at {REGISTRY}:40:9\n   2: grader_worker::serve::guarded\n             at {}/worker/src/serve.rs:70:5\n   3: training_lab::gpu::default_device\n             at ./src/gpu.rs:120:17\n   4: grade::main\n             at ./tests/grade.rs:5:1\n",
            grader_dir()
        );
        assert_eq!(student_frame(&trace).as_deref(), Some("src/gpu.rs:120"));
        // The grader's crates as its workspace build names them: relative to the workspace.
        let relative = trace.replace(&format!("{}/worker", grader_dir()), "grader/worker");
        assert!(
            relative.contains("at grader/worker/src/serve.rs"),
            "{relative}"
        );
        assert_eq!(student_frame(&relative).as_deref(), Some("src/gpu.rs:120"));
        assert!(is_graders("grader/labs-worker/../labs/src/matmul/mod.rs"));
        assert!(!is_graders("src/grader/mod.rs") && !is_graders("graders/src/x.rs"));
        assert!(is_library(REGISTRY));
        assert_eq!(library_name(REGISTRY), "cudarc-0.19.0");
        // No frame of the student's: the library alone, never its path.
        assert_eq!(
            student_frame("   1: x\n             at /rustc/a/library/core/src/x.rs:1:1\n"),
            None
        );
    }

    #[test]
    fn messages_lose_the_registry_but_keep_their_words() {
        let message = format!("failed at {REGISTRY}:40 badly");
        assert_eq!(
            scrubbed(&message),
            "failed at cudarc-0.19.0/src/driver/sys/mod.rs:40 badly"
        );
        assert_eq!(scrubbed("plain words stay"), "plain words stay");
    }
}
