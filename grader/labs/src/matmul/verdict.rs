//! What the single and the batched product judges say alike: the checks that still fail an
//! item whose every product is right (the GPU did no work, or the results did not come from
//! the device), and the details of the first wrong case.

use super::judge::hint_line;
use super::t;
use grader_engine::check::gpu::{emulator_reported, not_from_device, untrusted_claim};
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
/// `counted` says whether the supervisor set the worker up so that the device work must be
/// counted (a GPU item on the emulator, in a checked run): then a report without counts is a
/// claim from the submission's process that the counting was off, and fails the item.
pub(super) fn device_unused(
    item: &Item,
    work: Option<DeviceWork>,
    counted: bool,
    multiply_adds: u64,
    no_work_details: impl FnOnce() -> String,
) -> Option<ItemResult> {
    let Some(work) = work else {
        return counted.then(|| untrusted_claim(item, &t!("counts-missing")));
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
    if counted && work.arithmetic.is_none() {
        return Some(untrusted_claim(item, &t!("counts-missing")));
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

/// Whether the device work of `item` must come back counted: a GPU item on the emulator, whose
/// counters the supervisor arranged (on a real GPU only the tracer counts, when it is there).
pub(super) fn must_count(ctx: &GradeContext, item: &Item) -> bool {
    item.spec.gpu_track() && ctx.backend == grader_worker::protocol::Backend::Emulated
}

#[cfg(test)]
mod tests {
    use super::multiply_adds;

    #[test]
    fn the_cases_run_so_far_need_the_product_of_their_dimensions() {
        let single = [[2, 3, 4], [1, 1, 1], [5, 5, 5]];
        assert_eq!(multiply_adds(&single, 2), 25);
        assert_eq!(multiply_adds(&single, 9), 150);
        assert_eq!(multiply_adds(&[[3, 2, 3, 4]], 1), 72);
        assert_eq!(multiply_adds(&single, 0), 0);
    }
}
