//! What the engine asks of a training item's kind ([`KindSpec`]): its track, what it needs
//! from the machine, its tiers, its part of the work order, and which judge grades it. The
//! kinds themselves are data ([`super::kinds`]); the judges read them, and only this file
//! reaches both.

use super::kinds::Kind;
use super::{gpu_judge, judge, t};
use grader_engine::check::GradeContext;
use grader_engine::report::ItemResult;
use grader_engine::rubric::{Item, KindSpec, Needs, Tier};
use grader_engine::supervisor::SupervisorError;

impl KindSpec for Kind {
    fn gpu_track(&self) -> bool {
        self.runs_on_device() || matches!(self, Kind::DeviceSelect)
    }

    fn measures_speed(&self) -> bool {
        matches!(self, Kind::GpuSpeedup(_))
    }

    fn tiers(&self) -> &[Tier] {
        match self {
            Kind::GpuSpeedup(s) => &s.tiers,
            _ => &[],
        }
    }

    fn needs(&self) -> Needs {
        match self {
            Kind::GpuSpeedup(s) => Needs::RealGpu(s.policy),
            Kind::GpuTransfer
            | Kind::GpuLoader(_)
            | Kind::GpuEpoch(_)
            | Kind::GpuTrainOn(_)
            | Kind::GpuTimer(_) => Needs::Gpu,
            _ => Needs::Nothing,
        }
    }

    fn describe_case(&self, case: usize) -> Option<String> {
        let (total, shape) = match self {
            Kind::Init(c) => (
                c.cases.len(),
                c.cases
                    .get(case)
                    .map(|[i, o]| t!("shape-init", inputs = i, outputs = o)),
            ),
            Kind::Forward(c) | Kind::Backward(c) => (
                c.cases.len(),
                c.cases
                    .get(case)
                    .map(|[b, i, o]| t!("shape-layer", batch = b, inputs = i, outputs = o)),
            ),
            Kind::Elementwise(c) | Kind::Loss(c) => (
                c.cases.len() + usize::from(matches!(self, Kind::Loss(_))),
                Some(match c.cases.get(case) {
                    Some([r, k]) => format!("{r}×{k}"),
                    None => t!("shape-extreme"),
                }),
            ),
            Kind::Model(c) => (
                c.cases.len(),
                c.cases.get(case).map(|[b]| t!("shape-model", batch = b)),
            ),
            Kind::Batches(c) => (
                c.cases.len(),
                c.cases
                    .get(case)
                    .map(|[n, b]| t!("shape-batches", n = n, batch = b)),
            ),
            Kind::GpuLoader(c) => (
                c.cases.len(),
                c.cases
                    .get(case)
                    .map(|[n, b]| t!("shape-loader", n = n, batch = b)),
            ),
            Kind::GpuTransfer => (2, Some(["SimpleNN", "Mlp"].get(case).copied()?.to_string())),
            _ => return None,
        };
        Some(t!(
            "case-on",
            case = case.saturating_add(1),
            total = total,
            shape = shape?
        ))
    }

    fn task(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    fn grade(&self, ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError> {
        match self {
            Kind::DeviceSelect => grader_engine::check::gpu::grade_device_select(ctx, item),
            Kind::GpuTimer(s) => gpu_judge::timer(ctx, item, s),
            Kind::GpuSpeedup(s) => gpu_judge::speedup(ctx, item, s),
            Kind::GpuTransfer | Kind::GpuLoader(_) | Kind::GpuEpoch(_) | Kind::GpuTrainOn(_) => {
                gpu_judge::grade(ctx, item, self)
            }
            _ => judge::grade(ctx, item, self),
        }
    }
}
