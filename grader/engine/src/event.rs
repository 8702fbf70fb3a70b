//! What grading one submission reports while it runs: [`Event`]s, handed to a callback by
//! the `grader` crate's `grade::grade`. The runner emits, the callers render: the CLI prints progress lines,
//! the `cargo test` harness prints libtest-style lines, `batch` moves a progress bar.

use crate::report::{ItemResult, Report};
use crate::rubric::Item;
use std::path::Path;

/// One step of grading a submission, in the order they happen.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The submission's crate is being built with the grader's own harness.
    Building {
        /// The crate's folder.
        path: &'a Path,
        /// The lab it is built as.
        lab: &'a str,
    },
    /// Something in the submission's crate that official grading does not use (an added
    /// dependency, a build script, a changed harness): a warning before grading.
    Ignored {
        /// The note, a sentence for the student.
        note: &'a str,
    },
    /// It did not compile; every item will score 0 with this first error line.
    NotCompiled {
        /// The compiler's first error, first line.
        first_line: &'a str,
    },
    /// The GPU emulator is being built (first use only, about a minute).
    BuildingEmulator,
    /// Items are about to run.
    Started {
        /// The run's seed.
        seed: u64,
        /// Where GPU items run (`emulated GPU`, `real GPU: …`).
        backend_label: &'a str,
        /// How many items will be reported.
        items: usize,
    },
    /// An item starts (its worker is about to be started).
    ItemStarted {
        /// The rubric item.
        item: &'a Item,
    },
    /// An item has its result.
    ItemFinished {
        /// The rubric item.
        item: &'a Item,
        /// Its result.
        result: &'a ItemResult,
    },
    /// The report is complete.
    Finished {
        /// The whole report.
        report: &'a Report,
    },
}
