//! What a student reads when a GPU function returned an error instead of a value: the CUDA
//! call's error, the emulator's report of what the kernel did, and one hint. Shared by the
//! GPU checks and the timed runs.

use crate::gpu::student::COMPILE_ERROR;
use crate::report::ItemResult;
use crate::rubric::Item;

/// Feedback for an error a GPU function returned, with the emulator's report when there is one.
pub fn error_result(item: &Item, case: usize, error: &str, notes: &str) -> ItemResult {
    let hint = if error.contains("ILLEGAL_ADDRESS")
        || notes.contains("past the end")
        || notes.contains("before the start")
    {
        "a thread read or wrote outside a buffer. Threads of the last blocks fall outside C when \
         m or n is not a multiple of the block size: guard the kernel body with \
         `if (row < m && col < n)`"
    } else if error.starts_with(COMPILE_ERROR) || error.contains("NVRTC") {
        "the kernel did not compile: read the compiler's message above (line numbers are in your \
         kernel's source string)"
    } else if error.contains("INVALID_VALUE") || error.contains("LAUNCH_OUT_OF_RESOURCES") {
        "the launch configuration is not allowed: at most 1024 threads per block and 48 KiB of \
         shared memory"
    } else {
        "read the error above: it names the CUDA call that failed"
    };
    let case_text = item.spec.describe_case(case).unwrap_or_default();
    let mut details = format!("`{}` returned an error{case_text}: {error}", item.function);
    if !notes.is_empty() {
        details.push_str(&format!("\nThe GPU emulator reported:\n{notes}"));
    }
    details.push_str(&format!("\nHint: {hint}."));
    let reason = match error.strip_prefix(COMPILE_ERROR) {
        Some(log) => format!(
            "the kernel does not compile: {}",
            log.lines()
                .find(|l| l.contains("error"))
                .unwrap_or("")
                .trim()
        ),
        None => {
            let first = notes.lines().next().unwrap_or(error);
            format!(
                "error on the GPU: {}",
                first.chars().take(90).collect::<String>()
            )
        }
    };
    ItemResult::failed(item, reason, details)
}
