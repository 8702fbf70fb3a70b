//! What grading the items of one submission needs to know: how to start its workers, the
//! seed, its sources and where GPU items run. Built by the flow that grades (after staging
//! and building), read by every item's kind; the rubric model names it in
//! [`crate::rubric::KindSpec::grade`], so it stands below the rubric and the checks.

use crate::protocol::Backend;
use crate::supervisor::WorkerCommand;
use std::path::PathBuf;

/// Everything needed to grade items of one submission.
#[derive(Debug, Clone)]
pub struct GradeContext {
    /// How to start a worker.
    pub command: WorkerCommand,
    /// The run's seed.
    pub seed: u64,
    /// The submission's `src/`, for the rubric's `forbid` and `require` lists; `None` skips
    /// those checks.
    pub source_dir: Option<PathBuf>,
    /// Where GPU items run (resolved from the GPU mode).
    pub backend: Backend,
    /// What the backend is, for reports (`emulated GPU`, `real GPU: …`).
    pub backend_label: String,
}
