//! What a student reads when a GPU function returned an error instead of a value: the CUDA
//! call's error, the emulator's report of what the kernel did, and one hint. Shared by the
//! GPU checks and the timed runs.

use crate::gpu::student::COMPILE_ERROR;
use crate::i18n::t;
use crate::report::ItemResult;
use crate::rubric::Item;

/// Feedback for an error a GPU function returned, with the emulator's report when there is one.
pub fn error_result(item: &Item, case: usize, error: &str, notes: &str) -> ItemResult {
    // The hint follows where the fault happened: a library call the emulator named (an
    // operand outside its buffer, a leading dimension refused), or whose own status came back
    // (a real GPU says no more), is not the student's kernel.
    let hint = if in_a_library_call(notes) || error.contains("CUBLAS_STATUS") {
        t!("gpu-hint-cublas")
    } else if error.contains("ILLEGAL_ADDRESS")
        || notes.contains("past the end")
        || notes.contains("before the start")
    {
        t!("gpu-hint-bounds")
    } else if error.starts_with(COMPILE_ERROR) || error.contains("NVRTC") {
        t!("gpu-hint-compile")
    } else if error.contains("INVALID_VALUE") || error.contains("LAUNCH_OUT_OF_RESOURCES") {
        t!("gpu-hint-launch")
    } else {
        t!("gpu-hint-other")
    };
    let case_text = item.spec.describe_case(case).unwrap_or_default();
    let mut details = t!(
        "gpu-error-details",
        function = item.function,
        case = case_text,
        error = error
    );
    if !notes.is_empty() {
        details.push('\n');
        details.push_str(&emulator_reported(notes));
    }
    details.push('\n');
    details.push_str(&t!("hint-line", hint = hint));
    let reason = match error.strip_prefix(COMPILE_ERROR) {
        Some(log) => t!(
            "gpu-error-compile-reason",
            line = log
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or("")
                .trim()
        ),
        None => {
            let first = notes.lines().next().unwrap_or(error);
            t!(
                "gpu-error-reason",
                first = first.chars().take(90).collect::<String>()
            )
        }
    };
    ItemResult::failed(item, reason, details)
}

/// Whether the emulator's first finding is about a cuBLAS call (`gpu-labs emulator:
/// cublasSgemm: …`): what failed was then the call's description of its operands.
fn in_a_library_call(notes: &str) -> bool {
    notes
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gpu-labs emulator: "))
        .is_some_and(|rest| rest.starts_with("cublas"))
}

/// "The GPU emulator reported:" and the emulator's notes, for a failure's details.
pub fn emulator_reported(notes: &str) -> String {
    t!("emulator-reported", notes = notes)
}

#[cfg(test)]
mod tests {
    use super::in_a_library_call;

    /// A cuBLAS finding first means the call; a kernel's fault, or a cuBLAS word later in
    /// the notes, does not.
    #[test]
    fn a_library_call_is_told_by_the_first_finding() {
        assert!(in_a_library_call(
            "gpu-labs emulator: cublasSgemm: matrix B (17x45, leading dimension 17) is not inside one device allocation"
        ));
        assert!(!in_a_library_call(
            "gpu-labs emulator: kernel `k` block (0,0,0) thread (3,0,0) read 4 bytes past the end\ncublasSgemm"
        ));
        assert!(!in_a_library_call(""));
    }
}
