//! What the engine asks of a matmul item's kind ([`KindSpec`]): its track, what it needs
//! from the machine, its tiers, how feedback names a case, its part of the work order, and
//! which judge grades it. The kinds themselves are data ([`super::kinds`]); the judges read
//! them, and only this file reaches both.

use super::kinds::Kind;
use super::{batched_judge, judge, t};
use grader_engine::check::GradeContext;
use grader_engine::report::ItemResult;
use grader_engine::rubric::{Item, KindSpec, Needs, Tier};
use grader_engine::supervisor::SupervisorError;

impl KindSpec for Kind {
    fn gpu_track(&self) -> bool {
        !matches!(
            self,
            Kind::Matmul(_) | Kind::CpuTimer(_) | Kind::CpuSpeedup(_) | Kind::BatchedMatmul(_)
        )
    }

    fn measures_speed(&self) -> bool {
        matches!(
            self,
            Kind::CpuSpeedup(_) | Kind::GpuSpeedup(_) | Kind::GpuBatchedSpeedup(_)
        )
    }

    fn needs(&self) -> Needs {
        match self {
            Kind::GpuMatmul(_)
            | Kind::GpuTimer(_)
            | Kind::GpuBatchedMatmul(_)
            | Kind::GpuBatchedTimer(_) => Needs::Gpu,
            Kind::GpuSpeedup(s) => Needs::RealGpu(s.policy),
            Kind::GpuBatchedSpeedup(s) => Needs::RealGpu(s.policy),
            _ => Needs::Nothing,
        }
    }

    fn tiers(&self) -> &[Tier] {
        match self {
            Kind::CpuSpeedup(s) | Kind::GpuSpeedup(s) => &s.tiers,
            Kind::GpuBatchedSpeedup(s) => &s.tiers,
            _ => &[],
        }
    }

    fn describe_case(&self, case: usize) -> Option<String> {
        if let Kind::BatchedMatmul(b) | Kind::GpuBatchedMatmul(b) = self {
            return b.describe(case).map(|c| t!("batch-case-on", case = c));
        }
        let (Kind::Matmul(p) | Kind::GpuMatmul(p)) = self else {
            return None;
        };
        let [m, k, n] = p.cases.get(case)?;
        Some(t!(
            "case-on",
            case = case + 1,
            total = p.cases.len(),
            m = m,
            k = k,
            n = n
        ))
    }

    fn task(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// From the shapes a right answer returns: every case's product, the timers' C at the
    /// largest shape they grow to, the batched speedup's C of every timed run; the rest send
    /// counts and times only.
    fn report_bytes(&self) -> u64 {
        let product = |dims: &[usize]| dims.iter().fold(1u64, |a, &d| a.saturating_mul(d as u64));
        let (values, matrices) = match self {
            Kind::Matmul(p) | Kind::GpuMatmul(p) => (
                p.cases.iter().map(|[m, _, n]| product(&[*m, *n])).sum(),
                p.cases.len() as u64,
            ),
            Kind::BatchedMatmul(b) | Kind::GpuBatchedMatmul(b) => (
                b.cases
                    .iter()
                    .map(|[s, m, _, n]| product(&[*s, *m, *n]))
                    .sum(),
                b.cases.len() as u64,
            ),
            Kind::GpuTimer(s) => {
                let [m, _, n] = s.size;
                let largest = super::gpu::MAX_TIMED_DIM as u64;
                (product(&[m, n]).max(largest * largest), 1)
            }
            Kind::GpuBatchedTimer(t) => {
                let [s, m, _, n] = t.size;
                (
                    product(&[s, m, n]).max(super::batched::MAX_TIMED_C as u64),
                    1,
                )
            }
            Kind::GpuBatchedSpeedup(s) => {
                let [b, m, _, n] = s.size;
                let runs = s.samples as u64;
                (product(&[b, m, n]).saturating_mul(runs), runs)
            }
            Kind::CpuTimer(_)
            | Kind::CpuSpeedup(_)
            | Kind::GpuSpeedup(_)
            | Kind::DeviceSelect
            | Kind::Benchmark(_) => (0, 0),
        };
        // A GPU product also sends each case's replay ([`grader_worker::protocol::Replay`]):
        // a 4-bit count and up to four values per element.
        let replayed = match self {
            Kind::GpuMatmul(_) | Kind::GpuBatchedMatmul(_) => {
                values.saturating_mul(grader_worker::protocol::Replay::MOST as u64 + 1)
            }
            _ => 0,
        };
        grader_engine::report_size::bound_for_values(values.saturating_add(replayed), matrices)
    }

    fn grade(&self, ctx: &GradeContext, item: &Item) -> Result<ItemResult, SupervisorError> {
        match self {
            Kind::Matmul(p) | Kind::GpuMatmul(p) => judge::products(ctx, item, p),
            Kind::CpuTimer(t) => judge::cpu_timer(ctx, item, t),
            Kind::CpuSpeedup(s) => judge::cpu_speedup(ctx, item, s),
            Kind::GpuTimer(_) => grader_engine::check::gpu::grade_timer(ctx, item),
            Kind::GpuSpeedup(s) => {
                let mut result = grader_engine::check::gpu::grade_speedup(ctx, item, s)?;
                let lines = super::chart::gpu_lines(&item.function);
                super::chart::extend(ctx, item, s, &mut result, lines);
                Ok(result)
            }
            Kind::DeviceSelect => grader_engine::check::gpu::grade_device_select(ctx, item),
            Kind::Benchmark(s) => grader_engine::check::gpu::grade_benchmark(ctx, item, s.size[0]),
            Kind::BatchedMatmul(b) | Kind::GpuBatchedMatmul(b) => {
                batched_judge::products(ctx, item, b)
            }
            Kind::GpuBatchedTimer(_) => batched_judge::timer(ctx, item),
            Kind::GpuBatchedSpeedup(s) => batched_judge::speedup(ctx, item, s),
        }
    }
}
