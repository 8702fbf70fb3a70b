//! The property that no judge of either lab panics, whatever a worker sends: every item of
//! both labs' rubrics is graded many times on outcomes made up here (the `replay` seam answers
//! each order in place of a worker), of every kind a worker can send, with the lab's own
//! values inside: matrices with each axis off by one from a size the item names, empty ones,
//! NaN, infinities, huge and tiny values, lists one too short or too long, numbers out of any
//! range. Each answer must be a verdict or a grader error, never a panic. (The training lab's
//! CPU judges are also fed through its real worker: `training::judge_fuzz`.)

use grader_engine::check::GradeContext;
use grader_engine::lab::{LabInfo, Labs};
use grader_engine::protocol::{
    Arithmetic, DeviceTime, DeviceWork, GpuTimerSample, GpuTimerSamples, Matrix, NotFromDevice,
    Outcome, PanicInfo, TimerLook, WorkOrder,
};
use grader_engine::replay::{caught, with_quiet_panics};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::Value;

/// Random values shaped by one order: its sizes come from the numbers the item's keys hold.
struct Gen {
    rng: StdRng,
    sizes: Vec<usize>,
}

impl Gen {
    fn new(seed: u64, order: &WorkOrder) -> Gen {
        let mut numbers = Vec::new();
        collect_numbers(&order.task, &mut numbers);
        let mut sizes = vec![0, 1, 2, 3, 10, 784];
        for n in numbers.into_iter().filter(|&n| n <= 4096) {
            sizes.extend([n.saturating_sub(1), n, n + 1]);
        }
        Gen {
            rng: StdRng::seed_from_u64(seed),
            sizes,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n.max(1))
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// A size the item names, or one off by one, or a small one.
    fn size(&mut self) -> usize {
        let i = self.below(self.sizes.len());
        self.sizes[i]
    }

    fn float(&mut self) -> f32 {
        match self.below(12) {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => f32::MAX,
            4 => -f32::MAX,
            5 => 1e-40,
            6 => 0.0,
            7 => -0.0,
            _ => self.rng.random_range(-3.0..3.0),
        }
    }

    fn double(&mut self) -> f64 {
        match self.below(8) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -1.0,
            3 => 1e300,
            4 => 0.0,
            _ => self.rng.random_range(0.0..50.0),
        }
    }

    fn index(&mut self) -> usize {
        match self.below(6) {
            0 => usize::MAX,
            1 => 1 << 40,
            _ => self.size(),
        }
    }

    /// Device work as the emulator could count it, zeros and overflows included.
    fn device_time(&mut self) -> DeviceTime {
        DeviceTime {
            work: self.count(),
            runs: self.count(),
            busy_ns: self.count(),
        }
    }

    fn count(&mut self) -> u64 {
        match self.below(5) {
            0 => u64::MAX,
            _ => self.below(100) as u64,
        }
    }

    /// A list whose length is a size the item names (or off by one), each made by `make`.
    fn list<T>(&mut self, mut make: impl FnMut(&mut Gen) -> T) -> Vec<T> {
        let n = self.size().min(12);
        (0..n).map(|_| make(self)).collect()
    }

    /// Values for `len` entries, sometimes one too many or too few (a matrix whose data does
    /// not fit its shape).
    fn bits(&mut self, len: usize) -> Vec<u32> {
        let len = match self.below(10) {
            0 => len + 1,
            1 => len.saturating_sub(1),
            _ => len,
        };
        let fill = self.below(3);
        (0..len.min(1 << 20))
            .map(|_| match fill {
                0 => 0.0f32.to_bits(),
                _ => self.float().to_bits(),
            })
            .collect()
    }

    fn matrix(&mut self) -> Matrix {
        let (rows, mut cols) = (self.size(), self.size());
        // Large enough to hold any size the item names, small enough for many of them.
        while rows.saturating_mul(cols) > 1 << 18 {
            cols /= 4;
        }
        Matrix {
            rows,
            cols,
            bits: self.bits(rows.saturating_mul(cols)),
        }
    }

    fn panic(&mut self) -> PanicInfo {
        PanicInfo {
            case: self.chance(0.5).then(|| self.index()),
            message: [
                "not yet implemented",
                "index out of bounds",
                "attempt to overflow",
                "",
            ][self.below(4)]
            .into(),
            location: self.chance(0.5).then(|| "src/lib.rs:1".into()),
        }
    }

    fn device_work(&mut self) -> Option<DeviceWork> {
        self.chance(0.7).then(|| DeviceWork {
            launches: self.count(),
            blas_calls: self.count(),
            not_from_device: self.chance(0.5).then(|| NotFromDevice {
                case: self.index(),
                values: self.count(),
                not_copied_back: self.count(),
                uploaded: self.count(),
            }),
            arithmetic: self.chance(0.5).then(|| Arithmetic {
                loaded_bytes: self.count(),
                multiply_adds: self.count(),
            }),
        })
    }

    fn replay(&mut self) -> grader_worker::protocol::Replay {
        if self.chance(0.7) {
            grader_worker::protocol::Replay::Done {
                key: self.count(),
                bits: self.list(|g| g.count() as u32),
            }
        } else {
            grader_worker::protocol::Replay::Failed(self.below(4) as i32)
        }
    }

    fn timer_sample(&mut self) -> GpuTimerSample {
        GpuTimerSample {
            reported_ms: self.double(),
            device_ms: self.double(),
        }
    }
}

/// Every number a JSON value holds.
fn collect_numbers(value: &Value, out: &mut Vec<usize>) {
    match value {
        Value::Number(n) => out.extend(n.as_u64().map(|n| n as usize)),
        Value::Array(items) => items.iter().for_each(|v| collect_numbers(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_numbers(v, out)),
        _ => {}
    }
}

/// An outcome of any kind the engine knows (the lab's own, `Lab`, made by `lab`).
fn outcome(g: &mut Gen, lab: impl FnOnce(&mut Gen) -> Value) -> Outcome {
    match g.below(12) {
        0 => Outcome::Products {
            outputs: g.list(Gen::matrix),
            panic: g.chance(0.2).then(|| g.panic()),
            error: g.chance(0.2).then(|| "an error".into()),
            device_work: g.device_work(),
            case_launches: g.list(|g| g.size() as u64),
            launch_geometry: g.list(|g| grader_worker::protocol::LaunchGeometry {
                number: g.size() as u64,
                grid: [g.size() as u32, g.size() as u32, 1],
                block: [g.size() as u32, g.size() as u32, 1],
                kernel: "k".into(),
            }),
            replays: g.list(Gen::replay),
        },
        1 => Outcome::GpuTimer(GpuTimerSamples {
            shape: [g.size(), g.size(), g.size()],
            queued_ms: g.double(),
            samples: g.list(Gen::timer_sample),
            output: g.matrix(),
        }),
        2 => Outcome::DeviceChoice {
            chose_gpu: g.chance(0.5),
        },
        3 => Outcome::Benchmark {
            cpu_ns: g.count(),
            gpu_ns: g.chance(0.5).then(|| g.count()),
            device: g.chance(0.5).then(|| g.device_time()),
            timer_alone: g.chance(0.5).then(|| TimerLook {
                reported_ns: g.count(),
                device: g.device_time(),
            }),
        },
        4 => Outcome::Failed("an error".into()),
        5 => Outcome::Timed,
        6 => Outcome::Panicked(g.panic()),
        7 => Outcome::GpuUnavailable("no device".into()),
        _ => Outcome::Lab(
            grader_engine::protocol::LabOutcome::of(&lab(g)).expect("a JSON value serializes"),
        ),
    }
}

#[cfg(feature = "matmul")]
mod matmul_values {
    use super::Gen;
    use crate::matmul::batched::{Sent, Stack};
    use serde_json::Value;

    fn stack(g: &mut Gen) -> Stack {
        let dims = [g.size(), g.size(), g.size()];
        Stack {
            bits: g.bits(dims.iter().fold(1usize, |a, &d| a.saturating_mul(d))),
            dims,
        }
    }

    /// What a batched item's worker sends, of any variant.
    pub(super) fn lab(g: &mut Gen) -> Value {
        let sent = match g.below(3) {
            0 => Sent::Products {
                outputs: g.list(stack),
                error: g.chance(0.2).then(|| "an error".into()),
                device_work: g.device_work(),
                replays: g.list(Gen::replay),
            },
            1 => Sent::Timer {
                shape: [g.size(), g.size(), g.size(), g.size()],
                queued_ms: g.double(),
                samples: g.list(Gen::timer_sample),
                output: stack(g),
            },
            _ => Sent::Speed {
                outputs: g.list(stack),
            },
        };
        serde_json::to_value(sent).unwrap_or(Value::Null)
    }
}

#[cfg(feature = "training")]
mod training_values {
    use super::Gen;
    use crate::training::kinds::{Sent, SentGpu, SentLayer, SentPass, StepWork};
    use serde_json::Value;

    fn layer(g: &mut Gen) -> SentLayer {
        SentLayer {
            weight: g.matrix(),
            bias: g.matrix(),
            weight_grad: g.matrix(),
            bias_grad: g.matrix(),
        }
    }

    fn layers(g: &mut Gen) -> Vec<SentLayer> {
        // Two layers most of the time, as a model has.
        if g.chance(0.7) {
            vec![layer(g), layer(g)]
        } else {
            g.list(layer)
        }
    }

    fn pass(g: &mut Gen) -> SentPass {
        SentPass {
            output: g.matrix(),
            loss: g.float().to_bits(),
            after_backward: layers(g),
            after_zero_grad: layers(g),
            predicted: g.list(Gen::index),
        }
    }

    fn work(g: &mut Gen) -> Option<StepWork> {
        g.chance(0.7).then(|| StepWork {
            launches: g.count(),
            blas_calls: g.count(),
            uploaded: g.count(),
            copied_back: g.count(),
            changed: g.count(),
            changed_uploaded: g.count(),
            not_copied_back: g.count(),
            replay: g.chance(0.7).then(|| g.replay()),
        })
    }

    fn split(g: &mut Gen) -> Vec<Vec<usize>> {
        g.list(|g| g.list(Gen::index))
    }

    fn floats(g: &mut Gen) -> Vec<u32> {
        g.list(|g| g.float().to_bits())
    }

    /// The CPU kinds' values, of the variant `kind` sends most of the time.
    fn cpu(g: &mut Gen, kind: &str) -> Sent {
        let pick = match kind {
            "init" => 0,
            "forward" | "elementwise" => 1,
            "loss" => 1 + g.below(2),
            "backward" => 3,
            "model" => 4,
            "optimizer" => 5,
            "batches" => 6,
            "epoch" => 7,
            "accuracy" => 8,
            "train" => 9,
            _ => 10,
        };
        let pick = if g.chance(0.8) { pick } else { g.below(11) };
        match pick {
            0 => Sent::Init(g.list(|g| [layer(g), layer(g), layer(g)])),
            1 => Sent::Tensors(g.list(Gen::matrix)),
            2 => Sent::Losses(floats(g)),
            3 => Sent::Backward(g.list(|g| (g.matrix(), layer(g), layer(g)))),
            4 => Sent::Model {
                passes: g.list(pass),
                by_hand: g.list(|g| g.chance(0.7).then(|| pass(g))),
            },
            5 => Sent::Steps(g.list(layers)),
            6 => Sent::Batches(g.list(|g| [split(g), split(g), split(g)])),
            7 => Sent::Epoch {
                loss: g.float().to_bits(),
                layers: layers(g),
                first_bad_batch: g.chance(0.3).then(|| g.index()),
            },
            8 => Sent::Accuracy(g.float().to_bits()),
            9 => Sent::Train {
                losses: floats(g),
                again: floats(g),
                layers: layers(g),
                by_hand: floats(g),
                by_hand_layers: layers(g),
            },
            _ => Sent::Fallback {
                loss: g.float().to_bits(),
                layers: layers(g),
                direct_loss: g.float().to_bits(),
                direct_layers: layers(g),
            },
        }
    }

    /// The GPU kinds' values, of the variant `kind` sends most of the time.
    fn gpu(g: &mut Gen, kind: &str) -> SentGpu {
        let pick = match kind {
            "gpu-transfer" => 0,
            "gpu-loader" => 1,
            "gpu-epoch" => 2,
            "gpu-train-on" => 3,
            "gpu-timer" => 4,
            _ => 5,
        };
        let pick = if g.chance(0.8) { pick } else { g.below(6) };
        match pick {
            0 => SentGpu::Transfer(g.list(|g| (layers(g), g.chance(0.5).then(|| g.count())))),
            1 => {
                SentGpu::Batches(g.list(|g| g.list(|g| (g.matrix(), g.list(|g| g.index() as i32)))))
            }
            2 => SentGpu::Epoch {
                loss: g.float().to_bits(),
                layers: layers(g),
                work: work(g),
            },
            3 => SentGpu::TrainOn {
                loss: g.float().to_bits(),
                layers: layers(g),
                work: work(g),
                direct: g.chance(0.7).then(|| (g.float().to_bits(), layers(g))),
            },
            4 => SentGpu::Timer {
                samples: g.list(Gen::timer_sample),
                losses: floats(g),
                queued_ms: g.double(),
                examples: g.index(),
                direct: g.chance(0.7).then(|| (g.float().to_bits(), g.chance(0.5))),
            },
            _ => SentGpu::Speed(floats(g)),
        }
    }

    /// What a training item's worker sends, for an item of kind `kind`.
    pub(super) fn lab(g: &mut Gen, kind: &str) -> Value {
        let value = if kind.starts_with("gpu-") || g.chance(0.1) {
            serde_json::to_value(crate::training::gpu::GpuSent {
                sent: gpu(g, kind),
                diverged: None,
            })
        } else {
            serde_json::to_value(cpu(g, kind))
        };
        value.unwrap_or(Value::Null)
    }
}

/// The lab's own values for an order.
fn lab_value(g: &mut Gen, lab: &str, kind: &str) -> Value {
    match lab {
        #[cfg(feature = "matmul")]
        "matmul" => matmul_values::lab(g),
        #[cfg(feature = "training")]
        "training" => training_values::lab(g, kind),
        _ => {
            let _ = (g, kind);
            Value::Null
        }
    }
}

/// The panics (item, trial, message) and the verdicts reached per item of some gradings.
type Findings = (Vec<String>, Vec<(String, usize)>);

/// Every item of `lab` graded `trials` times on made-up outcomes; returns the panics (item,
/// trial, message) and how many gradings of each kind ended in a verdict.
fn grade_all(lab: &'static LabInfo, trials: u64) -> Findings {
    let labs = [lab];
    let labs: &'static [&'static LabInfo] = Box::leak(Box::new(labs));
    let rubric = grader_engine::rubric::parse(
        Labs(labs),
        lab.rubric,
        std::path::Path::new("assignment.toml"),
    )
    .expect("the lab's rubric parses");
    // The items are shared out among the cores (the replay is each thread's own).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shares: Vec<Vec<&grader_engine::rubric::Item>> = (0..cores)
        .map(|c| rubric.items.iter().skip(c).step_by(cores).collect())
        .collect();
    let results: Vec<Findings> = with_quiet_panics(|| {
        std::thread::scope(|scope| {
            let running: Vec<_> = shares
                .into_iter()
                .map(|share| scope.spawn(move || grade_items(lab, &share, trials)))
                .collect();
            running
                .into_iter()
                .map(|r| r.join().expect("a share of the items was graded"))
                .collect()
        })
    });
    let mut panics = Vec::new();
    let mut verdicts = Vec::new();
    for (p, v) in results {
        panics.extend(p);
        verdicts.extend(v);
    }
    (panics, verdicts)
}

/// [`grade_all`]'s work on one thread: `items`, each graded `trials` times.
fn grade_items(
    lab: &'static LabInfo,
    items: &[&grader_engine::rubric::Item],
    trials: u64,
) -> Findings {
    let mut panics = Vec::new();
    let mut verdicts: Vec<(String, usize)> = Vec::new();
    for item in items {
        let mut reached = 0;
        for trial in 0..trials {
            let mut ctx =
                GradeContext::for_listing(grader_engine::gpu::GpuMode::Off).expect("a context");
            ctx.lab = lab.name.to_string();
            ctx.seed = trial + 1;
            let name = lab.name;
            let mut round = 0;
            let _replay = grader_engine::replay::answer_with(move |order: &WorkOrder| {
                round += 1;
                let mut g = Gen::new(trial * 1000 + round, order);
                let kind = order.kind.clone();
                let outcome = outcome(&mut g, |g| lab_value(g, name, &kind));
                (outcome, g.list(Gen::count))
            });
            match caught(|| item.spec.grade(&ctx, item)) {
                Err(panic) => panics.push(format!("{} (trial {trial}): {panic}", item.id())),
                Ok(Ok(_)) => reached += 1,
                Ok(Err(_)) => {}
            }
        }
        verdicts.push((format!("{} ({})", item.id(), item.kind), reached));
    }
    (panics, verdicts)
}

/// Trials per item: a quick check by default, many more in the full suite.
fn trials() -> u64 {
    if std::env::var_os("GPU_LABS_FULL").is_some() {
        500
    } else {
        60
    }
}

/// Checks one lab: no panic, and every item whose judge reads a worker's values reached a
/// verdict on some outcome (the speed items, which time workers of their own, are left out:
/// no worker starts here).
fn check(lab: &'static LabInfo, trials: u64) {
    let (panics, verdicts) = grade_all(lab, trials);
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
    let unreached: Vec<&(String, usize)> = verdicts
        .iter()
        .filter(|(item, n)| *n == 0 && !item.contains("speedup") && !item.contains("cpu-timer"))
        .collect();
    assert!(unreached.is_empty(), "no verdict: {unreached:?}");
}

#[cfg(feature = "matmul")]
#[test]
fn no_outcome_crashes_a_matmul_judge() {
    check(&crate::matmul::LAB, trials());
}

#[cfg(feature = "training")]
#[test]
fn no_outcome_crashes_a_training_judge() {
    check(&crate::training::LAB, trials());
}

/// Every item of the embedded rubrics bounds its report within what the supervisor can read
/// whole (34 MiB: the timers' C at the largest shape they grow to), and leaves room for a
/// panic's message. (That each bound holds a right answer is shown by every grading of the
/// solutions: a report over its bound fails the item.)
#[test]
fn every_embedded_item_bounds_its_report() {
    let labs: &'static [&'static LabInfo] = Box::leak(Box::new([
        #[cfg(feature = "matmul")]
        &crate::matmul::LAB,
        #[cfg(feature = "training")]
        &crate::training::LAB,
    ]));
    for lab in labs {
        let rubric = grader_engine::rubric::parse(
            Labs(labs),
            lab.rubric,
            std::path::Path::new("assignment.toml"),
        )
        .expect("the lab's rubric parses");
        for item in &rubric.items {
            let bound = item.spec.report_bytes();
            assert!(
                (grader_engine::report_size::TEXT_BYTES..=34 << 20).contains(&bound),
                "{}: {bound} bytes",
                item.id
            );
        }
    }
}
