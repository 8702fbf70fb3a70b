//! What the single and the batched product judges say alike: the checks that still fail an
//! item whose every product is right (the GPU did no work, the results did not come from the
//! device, or the device did not compute them from A and B), and the details of the first
//! wrong case.

use super::hint_line;
use super::t;
use grader_engine::check::gpu::{counts_missing, emulator_reported, not_from_device};
use grader_engine::check::{matmul, GradeContext};
use grader_engine::report::ItemResult;
use grader_engine::rubric::Item;
use grader_worker::gpu::replay;
use grader_worker::protocol::{DeviceWork, Replay};
use ndarray::Array2;

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

/// The failed result of a GPU item whose products are all right, when the emulator's replay
/// of a case's device work with A's values replaced ([`grader_worker::gpu::replay`]) did not
/// give φ(A)·B: the product was computed elsewhere and only passed through the device, or a
/// replayed kernel faulted. `None` when every returned case followed A, or where no replay is
/// made (a real GPU, the CPU). Fail closed: on the emulator, a case returned without its
/// replay fails the item.
///
/// The supervisor draws nothing from the worker but the key and the replayed values: which
/// values are replaced, φ itself and φ(A)·B are computed here from its own copy of the inputs.
pub(super) fn not_from_a_and_b(
    item: &Item,
    counted: Counted,
    replays: &[Replay],
    operands: impl Fn(usize) -> (Vec<(Array2<f32>, Array2<f32>)>, String),
    returned: usize,
    tolerance: f64,
) -> Option<ItemResult> {
    if counted != Counted::Arithmetic {
        return None;
    }
    if replays.len() != returned {
        return Some(counts_missing(item));
    }
    for (index, replayed) in replays.iter().enumerate() {
        let (products, case) = operands(index);
        let failed = |why: String| {
            Some(ItemResult::failed(
                item,
                t!("not-from-a-and-b-reason"),
                t!(
                    "not-from-a-and-b-details",
                    function = item.function,
                    case = case,
                    why = why
                ),
            ))
        };
        if *replayed == Replay::Failed(2) {
            return failed(t!("replay-faulted"));
        }
        let elements: usize = products.iter().map(|(a, b)| a.nrows() * b.ncols()).sum();
        let Some((key, candidates)) = replayed.candidates(elements) else {
            return Some(counts_missing(item));
        };
        let mapped = replay::mapped_values(
            products.iter().flat_map(|(a, _)| a.iter()),
            products.iter().flat_map(|(_, b)| b.iter()),
        );
        let mut candidates = candidates.as_slice();
        for (a, b) in &products {
            let (m, n) = (a.nrows(), b.ncols());
            let (these, rest) = candidates.split_at(m * n);
            candidates = rest;
            let moved = replay::replaced(a, &mapped, key);
            let expected = matmul::reference(&moved, b).value;
            let got = Array2::from_shape_fn((m, n), |(i, j)| {
                replay::nearest(these[i * n + j], expected[[i, j]])
            });
            if let Err(mismatch) = matmul::compare(&moved, b, &got, tolerance) {
                return failed(t!("replay-differs", summary = mismatch.summary));
            }
        }
    }
    None
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

    /// The matmul lab's own rubric.
    fn lab_rubric() -> grader_engine::rubric::Assignment {
        static LABS: [&grader_engine::lab::LabInfo; 1] = [&crate::matmul::LAB];
        grader_engine::rubric::parse(
            Labs(&LABS),
            crate::matmul::LAB.rubric,
            std::path::Path::new("assignment.toml"),
        )
        .expect("the lab's rubric parses")
    }

    /// Its `gpu_correct` item.
    fn gpu_correct(rubric: &grader_engine::rubric::Assignment) -> &grader_engine::rubric::Item {
        rubric
            .items
            .iter()
            .find(|i| i.id() == "gpu_correct")
            .expect("gpu_correct")
    }

    /// A report without the counts the supervisor set up fails the item, on the emulator and on
    /// a traced real GPU; it passes only where nothing counts (a real GPU without the tracer).
    /// A traced real GPU does not count arithmetic, so none is asked of it.
    #[test]
    fn counts_that_went_missing_fail_the_item_wherever_they_were_set_up() {
        let rubric = lab_rubric();
        let item = gpu_correct(&rubric);
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

    /// The replay's verdict on its own: φ(A)·B passes, wherever each value was copied back
    /// from; a result that stayed the host's product fails and says so; a replay missing, cut
    /// short or unable to run fails closed; and nothing is asked where no replay is made.
    #[test]
    fn a_replay_passes_only_when_the_device_followed_a() {
        use super::not_from_a_and_b;
        use grader_worker::gpu::replay;
        use grader_worker::protocol::Replay;
        let rubric = lab_rubric();
        let item = gpu_correct(&rubric);
        let (a, b) = grader_worker::inputs::operands(5, "gpu_correct", 0, [7, 13, 5]);
        let key = 0x1234_5678_9abc_def0;
        let moved = replay::replaced(&a, &replay::mapped_values(&a, &b), key);
        let as_candidates = |c: &ndarray::Array2<f32>| -> Vec<Vec<u32>> {
            c.iter().map(|v| vec![v.to_bits()]).collect()
        };
        let done = |candidates: &[Vec<u32>]| Replay::done(key, candidates);
        let verdict = |replays: &[Replay], counted| {
            not_from_a_and_b(
                item,
                counted,
                replays,
                |_| (vec![(a.clone(), b.clone())], "case 1".into()),
                1,
                4.0,
            )
            .map(|r| r.details)
        };
        let honest = done(&as_candidates(&moved.dot(&b)));
        assert_eq!(verdict(&[honest], Counted::Arithmetic), None);
        // A value copied back from two places: the candidate that fits is taken.
        let mut doubled = as_candidates(&moved.dot(&b));
        doubled[3].insert(0, 7.0f32.to_bits());
        let doubled = done(&doubled);
        assert_eq!(verdict(&[doubled], Counted::Arithmetic), None);
        let host = done(&as_candidates(&a.dot(&b)));
        let failed = verdict(std::slice::from_ref(&host), Counted::Arithmetic).expect("fails");
        assert!(failed.contains("did not follow them"), "{failed}");
        let faulted = verdict(&[Replay::Failed(2)], Counted::Arithmetic).expect("fails");
        assert!(faulted.contains("a kernel crashed"), "{faulted}");
        let short = done(&vec![vec![0]; 3]);
        for missing in [&[][..], &[short], &[Replay::Failed(1)]] {
            let failed = verdict(missing, Counted::Arithmetic).expect("fails closed");
            assert!(failed.contains("could not count"), "{failed}");
        }
        for counted in [Counted::Nothing, Counted::Calls] {
            assert_eq!(verdict(std::slice::from_ref(&host), counted), None);
        }
        // A batch: the values mapped are the whole batch's, each matrix checked in turn.
        let (a2, b2) = grader_worker::inputs::operands(6, "gpu_correct", 1, [4, 13, 6]);
        let mapped = replay::mapped_values(a.iter().chain(&a2), b.iter().chain(&b2));
        let batch = |first: &ndarray::Array2<f32>, second: &ndarray::Array2<f32>| {
            let mut found = as_candidates(first);
            found.extend(as_candidates(second));
            done(&found)
        };
        let batched = |replayed: Replay| {
            not_from_a_and_b(
                item,
                Counted::Arithmetic,
                &[replayed],
                |_| {
                    let pairs = vec![(a.clone(), b.clone()), (a2.clone(), b2.clone())];
                    (pairs, "case 1".into())
                },
                1,
                4.0,
            )
        };
        let follows = |x: &ndarray::Array2<f32>, y: &ndarray::Array2<f32>| {
            replay::replaced(x, &mapped, key).dot(y)
        };
        assert!(batched(batch(&follows(&a, &b), &follows(&a2, &b2))).is_none());
        assert!(batched(batch(&follows(&a, &b), &a2.dot(&b2))).is_some());
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
