//! The matmul lab's item kinds: the keys each takes in `assignment.toml`, the functions it may
//! exercise, and what the engine needs to know about it ([`KindSpec`]).

#[cfg(feature = "judge")]
use super::batched;
use super::batched::{BatchedSpeed, BatchedTimer, Batches};
#[cfg(feature = "judge")]
use grader_engine::check::speedup::SpeedKeys;
#[cfg(feature = "judge")]
use grader_engine::lab::KindInfo;
#[cfg(feature = "judge")]
use grader_engine::rubric::{read_keys, ItemSpec, KeyError};
use grader_worker::task::Speed;
use serde::{Deserialize, Serialize};
#[cfg(feature = "judge")]
use std::sync::Arc;

#[cfg(feature = "judge")]
/// The kinds, as rubrics write them.
pub static KINDS: &[KindInfo] = &[
    KindInfo {
        label: "matmul",
        keys: PRODUCT_KEYS,
        functions: &["matmul_naive", "matmul_fast"],
    },
    KindInfo {
        label: "cpu-timer",
        keys: &["work_ms"],
        functions: &["time_cpu"],
    },
    KindInfo {
        label: "cpu-speedup",
        keys: &["size", "samples", "max_samples", "tiers"],
        functions: &["matmul_fast", "matmul_naive"],
    },
    KindInfo {
        label: "gpu-matmul",
        keys: PRODUCT_KEYS,
        functions: &["matmul_gpu", "matmul_gpu_tiled", "matmul_cublas"],
    },
    KindInfo {
        label: "gpu-timer",
        keys: SIZED_KEYS,
        functions: &["time_gpu_matmul"],
    },
    KindInfo {
        label: "gpu-speedup",
        keys: &["size", "samples", "max_samples", "tiers", "policy"],
        functions: &["time_gpu_matmul"],
    },
    KindInfo {
        label: "device-select",
        keys: &[],
        functions: &["default_device"],
    },
    KindInfo {
        label: "benchmark",
        keys: SIZED_KEYS,
        functions: &["benchmark"],
    },
    KindInfo {
        label: "batched-matmul",
        keys: batched::BATCHES_KEYS,
        functions: &["matmul_batched"],
    },
    KindInfo {
        label: "gpu-batched-matmul",
        keys: batched::BATCHES_KEYS,
        functions: &["matmul_batched_gpu"],
    },
    KindInfo {
        label: "gpu-batched-timer",
        keys: batched::TIMER_KEYS,
        functions: &["time_gpu_matmul_batched"],
    },
    KindInfo {
        label: "gpu-batched-speedup",
        keys: batched::SPEED_KEYS,
        functions: &["time_gpu_matmul_batched"],
    },
];

#[cfg(feature = "judge")]
const PRODUCT_KEYS: &[&str] = &["cases", "tolerance", "hint"];
#[cfg(feature = "judge")]
const SIZED_KEYS: &[&str] = &["size", "samples"];
#[cfg(feature = "judge")]
const SPEED_KEYS: &[&str] = &["size", "samples", "max_samples", "tiers", "policy"];

/// One matmul item's own keys, by kind (also the lab's part of its work order).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    /// A matrix product checked against an f64 reference on several shapes.
    Matmul(Products),
    /// A timing function checked against the grader's own clock.
    CpuTimer(CpuTimer),
    /// A speedup over the grader's naive baseline, measured by the grader.
    CpuSpeedup(Speed),
    /// A matrix product computed on the GPU, checked like `matmul` and required to run on the
    /// device.
    GpuMatmul(Products),
    /// A GPU timing function, checked against the grader's device events (synchronization).
    GpuTimer(Sized),
    /// A GPU product's speedup over the CPU, measured by the grader; needs a real GPU.
    GpuSpeedup(Speed),
    /// Device selection: the GPU when there is one, the CPU otherwise, never a panic.
    DeviceSelect,
    /// The lab activity: CPU and GPU times measured and returned.
    Benchmark(Sized),
    /// A batch of products on the CPU, checked matrix by matrix (seed 004).
    BatchedMatmul(Batches),
    /// A batch of products on the GPU, checked like `batched-matmul` and required to run on
    /// the device.
    GpuBatchedMatmul(Batches),
    /// The batched GPU timer, checked against the grader's device events (synchronization).
    GpuBatchedTimer(BatchedTimer),
    /// The batched product's speedup over the grader's loop of single products; needs a real
    /// GPU.
    GpuBatchedSpeedup(BatchedSpeed),
}

/// `matmul` and `gpu-matmul` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Products {
    /// The shapes `[m, k, n]` to multiply, m×k · k×n.
    pub cases: Vec<[usize; 3]>,
    /// c in |C − C_ref| ≤ c·K·eps32·(|A|·|B|)ij.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// The hint shown under a wrong result when no diagnosis fits (the instructor's word on
    /// what usually goes wrong in this function).
    #[serde(default)]
    pub hint: Option<String>,
}

/// `cpu-timer` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuTimer {
    /// How long each piece of work handed to the timer runs, in milliseconds.
    pub work_ms: Vec<u64>,
}

/// `gpu-timer` and `benchmark` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sized {
    /// The shape `[m, k, n]`.
    pub size: [usize; 3],
    /// Not read: kept so that older rubrics that give it stay valid.
    #[serde(default)]
    pub samples: Option<usize>,
}

fn default_tolerance() -> f64 {
    2.0
}

#[cfg(feature = "judge")]
/// With the emulator posing as a real GPU (the test mode that runs the real-GPU path on
/// machines without one, where speed figures mean nothing), the GPU speedup multiplies a
/// product a quarter as wide each way: the same path at 1/64 of the emulated work (at 1024³
/// the item took 27 s of a real-GPU kit variant's 33 s). Off that test mode, the rubric's size.
fn posing_size(mut speed: Speed) -> Speed {
    if grader_engine::gpu::emulator_as_real() {
        speed.size = speed.size.map(|d| (d / 4).max(16));
    }
    speed
}

#[cfg(feature = "judge")]
/// Reads one item's own keys (see [`grader_engine::lab::LabInfo::read_item`]).
pub fn read_item(kind: &str, keys: toml::Table, points: f64) -> Result<ItemSpec, KeyError> {
    let kind = match kind {
        "matmul" => Kind::Matmul(read_keys(keys, PRODUCT_KEYS)?),
        "gpu-matmul" => Kind::GpuMatmul(read_keys(keys, PRODUCT_KEYS)?),
        "cpu-timer" => Kind::CpuTimer(read_keys(keys, &["work_ms"])?),
        "cpu-speedup" => Kind::CpuSpeedup(read_keys(keys, SPEED_KEYS)?),
        "gpu-speedup" => Kind::GpuSpeedup(posing_size(read_keys(keys, SPEED_KEYS)?)),
        "gpu-timer" => Kind::GpuTimer(read_keys(keys, SIZED_KEYS)?),
        "benchmark" => Kind::Benchmark(read_keys(keys, SIZED_KEYS)?),
        "device-select" => Kind::DeviceSelect,
        "batched-matmul" => Kind::BatchedMatmul(read_keys(keys, batched::BATCHES_KEYS)?),
        "gpu-batched-matmul" => Kind::GpuBatchedMatmul(read_keys(keys, batched::BATCHES_KEYS)?),
        "gpu-batched-timer" => Kind::GpuBatchedTimer(read_keys(keys, batched::TIMER_KEYS)?),
        "gpu-batched-speedup" => Kind::GpuBatchedSpeedup(read_keys(keys, batched::SPEED_KEYS)?),
        other => return Err(KeyError::new("kind", format!("no matmul kind `{other}`"))),
    };
    kind.check(points)?;
    Ok(Arc::new(kind))
}

#[cfg(feature = "judge")]
impl Kind {
    /// What serde cannot check: sizes in range, cases given, durations sane.
    fn check(&self, points: f64) -> Result<(), KeyError> {
        match self {
            Kind::Matmul(p) | Kind::GpuMatmul(p) => {
                if p.cases.is_empty() {
                    return Err(KeyError::new("cases", "list at least one [m, k, n] shape"));
                }
                if let Some(c) = p
                    .cases
                    .iter()
                    .find(|c| c.iter().any(|&d| d == 0 || d > 4096))
                {
                    return Err(KeyError::new(
                        "cases",
                        format!("every dimension must be 1..=4096, got {c:?}"),
                    ));
                }
                if !(p.tolerance.is_finite() && p.tolerance > 0.0) {
                    return Err(KeyError::new("tolerance", "the tolerance must be > 0"));
                }
            }
            Kind::CpuTimer(t) => {
                if t.work_ms.is_empty() || t.work_ms.iter().any(|&w| w == 0 || w > 10_000) {
                    return Err(KeyError::new(
                        "work_ms",
                        "list one or more durations of 1..=10000 ms",
                    ));
                }
            }
            Kind::GpuTimer(s) | Kind::Benchmark(s) => {
                if !s.size.iter().all(|&d| d > 0 && d <= 4096) {
                    return Err(KeyError::new(
                        "size",
                        "give the shape as [m, k, n], each 1..=4096",
                    ));
                }
            }
            Kind::CpuSpeedup(s) | Kind::GpuSpeedup(s) => s.check(points)?,
            Kind::DeviceSelect => {}
            Kind::BatchedMatmul(b) | Kind::GpuBatchedMatmul(b) => b.check()?,
            Kind::GpuBatchedTimer(t) => t.check()?,
            Kind::GpuBatchedSpeedup(s) => s.check(points)?,
        }
        Ok(())
    }
}
