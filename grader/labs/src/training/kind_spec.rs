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

    /// From the shapes a right answer sends: its cases' tensors, its models' layers (four
    /// tensors each), its indices, with half again for the fields between them.
    fn report_bytes(&self) -> u64 {
        let (values, matrices) = sent_values(self);
        let slack = values / 2;
        grader_engine::report_size::bound_for_values(
            values.saturating_add(slack),
            matrices.saturating_mul(2),
        )
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

/// The values (matrix elements and indices) and matrices a right answer to `kind` sends at
/// most: see [`KindSpec::report_bytes`].
fn sent_values(kind: &Kind) -> (u64, u64) {
    use super::data::IMAGE_PIXELS;
    use super::inputs::{classes, shapes_with, OPTIMIZER_SHAPES};
    use super::Net;
    let times = |dims: &[usize]| dims.iter().fold(1u64, |a, &d| a.saturating_mul(d as u64));
    // A layer's weight, bias and their gradients.
    let layer = |(i, o): (usize, usize)| 2 * (times(&[i, o]) + o as u64);
    let layers = |shapes: &[(usize, usize)]| shapes.iter().map(|&s| layer(s)).sum::<u64>();
    let net = |net: Net, hidden: Option<usize>| layers(&shapes_with(net, hidden));
    let both_nets = net(Net::SimpleNn, None) + net(Net::Mlp, None);
    let sum = |each: &mut dyn FnMut(&[usize]) -> u64, cases: &[&[usize]]| {
        cases.iter().map(|c| each(c)).sum::<u64>()
    };
    match kind {
        Kind::Init(c) => {
            let cases: Vec<&[usize]> = c.cases.iter().map(|c| &c[..]).collect();
            let n = cases.len() as u64;
            (sum(&mut |c| 3 * layer((c[0], c[1])), &cases), 12 * n)
        }
        Kind::Forward(c) => {
            let cases: Vec<&[usize]> = c.cases.iter().map(|c| &c[..]).collect();
            (
                sum(&mut |c| times(&[c[0], c[2]]), &cases),
                cases.len() as u64,
            )
        }
        Kind::Backward(c) => {
            let cases: Vec<&[usize]> = c.cases.iter().map(|c| &c[..]).collect();
            let n = cases.len() as u64;
            let each = &mut |c: &[usize]| times(&[c[0], c[1]]) + 2 * layer((c[1], c[2]));
            (sum(each, &cases), 9 * n)
        }
        Kind::Elementwise(c) | Kind::Loss(c) => {
            let cases: Vec<&[usize]> = c.cases.iter().map(|c| &c[..]).collect();
            // The loss's last case, of extreme values, is the grader's own and small.
            let extreme = 4096;
            (
                sum(&mut |c| times(c), &cases) + extreme,
                cases.len() as u64 + 1,
            )
        }
        Kind::Model(c) => {
            // The item's function names the model; the larger is counted.
            let each =
                |b: usize| times(&[b, classes(Net::Mlp)]) + 2 * net(Net::Mlp, None) + b as u64;
            let passes: u64 = c.cases.iter().map(|&[b]| each(b)).sum();
            // The pass and the one written out by hand, each case.
            (2 * passes, 2 * 9 * c.cases.len() as u64)
        }
        Kind::Optimizer(s) => {
            let steps = s.steps as u64 + 1;
            (steps * layers(&OPTIMIZER_SHAPES), steps * 8)
        }
        Kind::Batches(c) => {
            // Three orders of every index, in batches.
            let each = |&[n, size]: &[usize; 2]| 3 * (n as u64 + n.div_ceil(size.max(1)) as u64);
            (c.cases.iter().map(each).sum(), 0)
        }
        Kind::Epoch(s) => (net(s.model, None), 8),
        Kind::Train(t) => (2 * net(t.model, None) + 4 * t.epochs as u64, 16),
        Kind::GpuTransfer => (2 * both_nets, 32),
        Kind::GpuLoader(c) => {
            let each = |&[examples, size]: &[usize; 2]| {
                let batches = examples.div_ceil(size.max(1)) as u64;
                (times(&[examples, IMAGE_PIXELS + 1]), batches)
            };
            c.cases
                .iter()
                .map(each)
                .fold((0, 0), |(v, m), (cv, cm)| (v + cv, m + cm))
        }
        // The layers at the end, those of the direct call or of the CPU's epoch, and the
        // layers before and after the first step where the GPU parted from the CPU.
        Kind::GpuEpoch(s) | Kind::GpuTrainOn(s) | Kind::CpuFallback(s) => {
            (4 * net(s.model, s.hidden), 32)
        }
        Kind::GpuTimer(s) => (s.examples as u64, 0),
        Kind::Accuracy(_) | Kind::DeviceSelect | Kind::GpuSpeedup(_) => (0, 0),
    }
}
