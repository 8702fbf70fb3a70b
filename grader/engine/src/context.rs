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
    /// The lab being graded, by name (every order names it).
    pub lab: String,
    /// The run's seed.
    pub seed: u64,
    /// The submission's `src/`, for the rubric's `forbid` and `require` lists; `None` skips
    /// those checks.
    pub source_dir: Option<PathBuf>,
    /// Where GPU items run (resolved from the GPU mode).
    pub backend: Backend,
    /// What the backend is, for reports (`emulated GPU`, `real GPU: …`).
    pub backend_label: String,
    /// Whether every GPU worker's device work is counted: on the emulator, and on a real GPU
    /// whose set-up put the tracer in front of its libraries. A GPU item's report without the
    /// counts then fails the item: counts that went missing (a tracer the worker could not
    /// load, a worker that switched them off) are never "the device did the work".
    pub counted: bool,
    /// The program that serves yardstick orders (speed items' baselines), when it is not the
    /// submission's: in official grading the grader's own binary, so that no code of the
    /// submission runs in the process whose time is the yardstick (code that runs before
    /// `main` included). `None`: the submission's program (a student's own `cargo test`,
    /// where the supervisor is that program anyway).
    pub yardstick_program: Option<PathBuf>,
}

impl GradeContext {
    /// How to start the worker for `order`: the submission's program, or, for a yardstick
    /// order, [`GradeContext::yardstick_program`] with the same environment and kernel cache.
    pub fn command_for(&self, order: &crate::protocol::WorkOrder) -> WorkerCommand {
        let mut command = self.command.clone();
        if let (true, Some(program)) = (order.yardstick, &self.yardstick_program) {
            command.program = program.clone();
        }
        command
    }
}
