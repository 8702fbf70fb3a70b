//! What the single and the batched product judges say alike: the checks that still fail an
//! item whose every product is right (the GPU did no work, or the results did not come from
//! the device), and the details of the first wrong case.

use super::hint_line;
use super::t;
use grader_engine::check::gpu::{counts_missing, emulator_reported, not_from_device};
use grader_engine::check::GradeContext;
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_worker::protocol::DeviceWork;

/// The failed result of a GPU item whose products are all right but were not made on the
/// device: no kernel launch and no cuBLAS call (`no_work_details` says what to do), results
/// the emulator saw written by the host, or far less arithmetic on the device than the
/// `multiply_adds` the products need. `None` when the device did the work (or there is no
/// device: CPU items).
///
/// `counted` says what the supervisor set the worker up to count ([`must_count`]): a report
/// without those counts is a claim from the submission's process that the counting was off
/// (or a tracer its worker could not load), and fails the item.
pub(super) fn device_unused(
    item: &Item,
    work: Option<DeviceWork>,
    counted: Counted,
    multiply_adds: u64,
    no_work_details: impl FnOnce() -> String,
) -> Option<ItemResult> {
    let Some(work) = work else {
        return (counted != Counted::Nothing).then(|| counts_missing(item));
    };
    // The plainest explanation first: no device work at all, then values the host wrote,
    // then too little arithmetic for the products.
    let unused = match work {
        DeviceWork {
            launches: 0,
            blas_calls: 0,
            ..
        } => Some(ItemResult::failed(
            item,
            t!("no-gpu-work-reason"),
            no_work_details(),
        )),
        DeviceWork {
            not_from_device: Some(n),
            ..
        } => Some(not_from_device(item, &n)),
        _ => None,
    };
    if unused.is_some() {
        return unused;
    }
    if counted == Counted::Arithmetic && work.arithmetic.is_none() {
        return Some(counts_missing(item));
    }
    let done = work.arithmetic?;
    too_little(&done, multiply_adds).then(|| {
        ItemResult::failed(
            item,
            t!("too-little-work-reason"),
            t!(
                "too-little-work-details",
                function = item.function,
                needed = multiply_adds,
                read = done.loaded_bytes / 4,
                blas = done.multiply_adds
            ),
        )
    })
}

/// How many multiply-adds of a product one value read on the device may stand for at most.
/// A kernel reads its operands for every multiply-add (two values each: the naive kernel),
/// from shared memory once tiled (the same count), or a few values for a register tile of
/// them (the most register-tiled kernel here reads one value per four); cuBLAS's are counted
/// as done. A result computed on the host and passed through an element-wise kernel reads one
/// value per element of C, k times too few.
pub(super) const MULTIPLY_ADDS_PER_READ: u64 = 8;

/// The multiply-adds the first `done` cases need: the product of each case's dimensions
/// (`[m, k, n]`, or `[batch, m, k, n]`), summed.
pub(super) fn multiply_adds<const N: usize>(cases: &[[usize; N]], done: usize) -> u64 {
    cases[..done.min(cases.len())]
        .iter()
        .map(|dims| dims.iter().product::<usize>() as u64)
        .sum()
}

/// Whether the device's arithmetic `done` is far below the `multiply_adds` the products need.
pub(super) fn too_little(done: &grader_worker::protocol::Arithmetic, multiply_adds: u64) -> bool {
    let reads = done.loaded_bytes / 4;
    reads.saturating_add(done.multiply_adds) < multiply_adds / MULTIPLY_ADDS_PER_READ
}

/// The first wrong case, told the same way for single and batched products.
pub(super) struct WrongCase<'a> {
    /// The student's function.
    pub function: &'a str,
    /// The case, described ("case 2 of 5, …").
    pub case: &'a str,
    /// What was wrong in it (the matrix comparison's summary).
    pub summary: &'a str,
    /// What the emulator reported while it ran (empty on a real GPU or the CPU).
    pub notes: &'a str,
    /// The cases that were right, as shapes.
    pub right: Vec<String>,
    /// How many cases there were.
    pub total: usize,
    /// One hint of what is likely wrong.
    pub hint: Option<String>,
}

impl WrongCase<'_> {
    /// The item's details: the wrong case, the emulator's notes, the right cases, the hint.
    pub(super) fn details(&self) -> String {
        let mut details = t!(
            "wrong-details",
            function = self.function,
            case = self.case,
            summary = self.summary
        );
        if !self.notes.is_empty() {
            details.push('\n');
            details.push_str(&emulator_reported(self.notes));
        }
        details.push('\n');
        details.push_str(&if self.right.is_empty() {
            t!("wrong-everywhere")
        } else {
            t!(
                "right-on",
                right = self.right.len(),
                total = self.total,
                shapes = self.right.join(", ")
            )
        });
        if let Some(hint) = &self.hint {
            details.push('\n');
            details.push_str(&hint_line(hint.trim_end_matches('.')));
        }
        details
    }
}

/// What of a GPU item's device work must come back counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counted {
    /// Nothing: a CPU item, or a real GPU without the tracer.
    Nothing,
    /// Launches, cuBLAS calls and where the result's values came from: a real GPU with the
    /// tracer in front (it does not see what kernels read).
    Calls,
    /// All that and the arithmetic kernels did: the emulator, which the supervisor set up.
    Arithmetic,
}

/// What the device work of `item` must come back with ([`GradeContext::counted`]).
pub(super) fn must_count(ctx: &GradeContext, item: &Item) -> Counted {
    if !(item.spec.gpu_track() && ctx.counted) {
        Counted::Nothing
    } else if ctx.backend == grader_worker::protocol::Backend::Emulated {
        Counted::Arithmetic
    } else {
        Counted::Calls
    }
}

#[cfg(test)]
mod tests {
    use super::{device_unused, multiply_adds, Counted};
    use grader_engine::lab::Labs;
    use grader_worker::protocol::{Arithmetic, DeviceWork};

    /// A report without the counts the supervisor set up fails the item, on the emulator and on
    /// a traced real GPU; it passes only where nothing counts (a real GPU without the tracer).
    /// A traced real GPU does not count arithmetic, so none is asked of it.
    #[test]
    fn counts_that_went_missing_fail_the_item_wherever_they_were_set_up() {
        static LABS: [&grader_engine::lab::LabInfo; 1] = [&crate::matmul::LAB];
        let rubric = grader_engine::rubric::parse(
            Labs(&LABS),
            crate::matmul::LAB.rubric,
            std::path::Path::new("assignment.toml"),
        )
        .expect("the lab's rubric parses");
        let item = rubric
            .items
            .iter()
            .find(|i| i.id() == "gpu_correct")
            .expect("gpu_correct");
        let verdict = |work: Option<DeviceWork>, counted| {
            device_unused(item, work, counted, 1000, String::new).map(|r| r.details)
        };
        for counted in [Counted::Calls, Counted::Arithmetic] {
            let failed = verdict(None, counted).expect("fails");
            assert!(failed.contains("could not count"), "{failed}");
        }
        assert_eq!(verdict(None, Counted::Nothing), None);
        let calls = DeviceWork {
            launches: 3,
            ..DeviceWork::default()
        };
        assert_eq!(verdict(Some(calls), Counted::Calls), None);
        assert!(verdict(Some(calls), Counted::Arithmetic).is_some());
        let done = DeviceWork {
            arithmetic: Some(Arithmetic {
                loaded_bytes: 8000,
                multiply_adds: 0,
            }),
            ..calls
        };
        assert_eq!(verdict(Some(done), Counted::Arithmetic), None);
    }

    #[test]
    fn the_cases_run_so_far_need_the_product_of_their_dimensions() {
        let single = [[2, 3, 4], [1, 1, 1], [5, 5, 5]];
        assert_eq!(multiply_adds(&single, 2), 25);
        assert_eq!(multiply_adds(&single, 9), 150);
        assert_eq!(multiply_adds(&[[3, 2, 3, 4]], 1), 72);
        assert_eq!(multiply_adds(&single, 0), 0);
    }
}
