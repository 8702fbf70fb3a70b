//! How far an epoch's parameters end from a reference run's, hidden unit by hidden unit.
//!
//! An f32 loop and the f64 reference compute every ReLU input with different rounding. Now
//! and then one of those inputs lies within rounding of 0 (measured: in 11 of 600 correct
//! epochs); there the two runs take opposite sides of the kink, and that hidden unit's
//! gradient gains or loses one example. From then on that unit (its row of `layer1`, its bias
//! and its column of `layer2`) follows its own path, and its drift can reach other units
//! through later batches: the whole model ended 0.57% of its movement away from the reference
//! (seed 60, `cpu_fallback`), as far as a wrong loop. That is rounding, not a mistake. Every
//! mistake of the training loop (a missing factor, a summed loss, gradients never zeroed, a
//! wrong order) moves every unit, so the grade reads the typical unit: the median over hidden
//! units of each unit's distance, with the whole model's distance only bounded loosely.

use super::reference::TwoLayer;
use super::Layer;
use grader_engine::check::speedup::median;
use ndarray::{ArrayView1, ArrayView2};

/// One layer's parameters as a student's epoch left them.
pub type Parameters<'a> = (ArrayView2<'a, f32>, ArrayView1<'a, f32>);

/// Distances of an epoch's parameters from a reference's, each relative to how far the
/// reference moved the whole model from the start.
#[derive(Debug, Clone, PartialEq)]
pub struct Distance {
    /// All parameters together.
    pub all: f64,
    /// The median hidden unit's: the distance of its parameters as a share of an equal
    /// share (1 / hidden units) of the whole movement, so that a mistake that moves every
    /// unit alike reads about as `all` does.
    pub typical: f64,
}

impl Distance {
    /// A model of another shape: infinitely far.
    fn infinite() -> Distance {
        Distance {
            all: f64::INFINITY,
            typical: f64::INFINITY,
        }
    }

    /// Whether the parameters follow the reference: the typical unit within `typical`, and
    /// the whole model within `all`.
    pub fn within(&self, tolerance: Tolerance) -> bool {
        self.typical <= tolerance.typical && self.all <= tolerance.all
    }
}

/// The limits an epoch's [`Distance`] must keep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// For [`Distance::typical`]: set from the measured spread of correct loops.
    pub typical: f64,
    /// For [`Distance::all`]: a loose bound, above what a rounding cascade reaches.
    pub all: f64,
}

/// The distance of `got` from `reference`, both having started from `start`.
pub fn distance(reference: &TwoLayer, start: &[Layer; 2], got: &[Parameters]) -> Distance {
    let [first, second] = start;
    let shapes_fit = got.len() == 2
        && got[0].0.dim() == first.weight.dim()
        && got[0].1.len() == first.bias.len()
        && got[1].0.dim() == second.weight.dim()
        && got[1].1.len() == second.bias.len()
        && reference.layer1.weight.dim() == first.weight.dim()
        && reference.layer2.weight.dim() == second.weight.dim();
    if !shapes_fit {
        return Distance::infinite();
    }
    let hidden = first.bias.len();
    // Squared distances off the reference, per hidden unit and for layer2's bias.
    let mut unit_off = vec![0.0f64; hidden];
    let (mut bias2_off, mut moved) = (0.0f64, 0.0f64);
    let mut add = |off: &mut f64, r: f64, b: f32, g: f32| {
        *off += (r - f64::from(g)).powi(2);
        moved += (r - f64::from(b)).powi(2);
    };
    for ((unit, r), (b, g)) in reference
        .layer1
        .weight
        .indexed_iter()
        .zip(first.weight.iter().zip(got[0].0.iter()))
    {
        add(&mut unit_off[unit.0], *r, *b, *g);
    }
    for (unit, (r, (b, g))) in reference
        .layer1
        .bias
        .iter()
        .zip(first.bias.iter().zip(got[0].1.iter()))
        .enumerate()
    {
        add(&mut unit_off[unit], *r, *b, *g);
    }
    for (((_, unit), r), (b, g)) in reference
        .layer2
        .weight
        .indexed_iter()
        .zip(second.weight.iter().zip(got[1].0.iter()))
    {
        add(&mut unit_off[unit], *r, *b, *g);
    }
    for (r, (b, g)) in reference
        .layer2
        .bias
        .iter()
        .zip(second.bias.iter().zip(got[1].1.iter()))
    {
        add(&mut bias2_off, *r, *b, *g);
    }
    let moved = moved.max(1e-30);
    let all = ((unit_off.iter().sum::<f64>() + bias2_off) / moved).sqrt();
    let units: Vec<f64> = unit_off
        .iter()
        .map(|off| (off * hidden as f64 / moved).sqrt())
        .collect();
    Distance {
        all,
        typical: median(&units),
    }
}

/// One tensor's movement against a reference's from the same start: what the GPU epoch's
/// feedback names.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorStep {
    /// The tensor, as the lesson names it (`layer1.bias`).
    pub name: String,
    /// How far it moved along the reference's movement, as a multiple of it (1 is right, 64
    /// a step 64 times too large, 0 no movement, negative the wrong way).
    pub scale: f64,
    /// How far it ended from the reference, as a share of the reference's movement.
    pub off: f64,
}

/// Each weight and bias of `got` against `reference`, both from `start` (a model of another
/// shape gives nothing to name).
pub fn tensor_steps(reference: &TwoLayer, start: &[Layer; 2], got: &[Layer; 2]) -> Vec<TensorStep> {
    let references = [&reference.layer1, &reference.layer2];
    let mut steps = Vec::new();
    for (n, ((r, s), g)) in references.iter().zip(start).zip(got).enumerate() {
        let fits = r.weight.dim() == s.weight.dim()
            && g.weight.dim() == s.weight.dim()
            && r.bias.len() == s.bias.len()
            && g.bias.len() == s.bias.len();
        if !fits {
            return Vec::new();
        }
        let flat = |a: &ndarray::Array2<f32>| a.iter().copied().collect::<Vec<f32>>();
        let tensors = [
            (
                "weight",
                r.weight.iter().copied().collect::<Vec<f64>>(),
                flat(&s.weight),
                flat(&g.weight),
            ),
            ("bias", r.bias.to_vec(), s.bias.to_vec(), g.bias.to_vec()),
        ];
        for (what, r, s, g) in tensors {
            let (mut along, mut moved, mut off) = (0.0f64, 0.0f64, 0.0f64);
            for ((r, s), g) in r.iter().zip(&s).zip(&g) {
                let (s, g) = (f64::from(*s), f64::from(*g));
                along += (g - s) * (r - s);
                moved += (r - s).powi(2);
                off += (g - r).powi(2);
            }
            let (scale, off) = if moved > 0.0 {
                (along / moved, (off / moved).sqrt())
            } else if off > 0.0 {
                (f64::INFINITY, f64::INFINITY)
            } else {
                (1.0, 0.0)
            };
            steps.push(TensorStep {
                name: format!("layer{}.{what}", n + 1),
                scale: if scale.is_nan() { f64::INFINITY } else { scale },
                off: if off.is_nan() { f64::INFINITY } else { off },
            });
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::training::reference::{Head, Linear};
    use ndarray::{Array1, Array2};

    const HIDDEN: usize = 8;
    const TIGHT: Tolerance = Tolerance {
        typical: 1e-4,
        all: 0.05,
    };

    fn layer(outputs: usize, inputs: usize, at: f32) -> Layer {
        Layer {
            weight: Array2::from_shape_fn((outputs, inputs), |(o, i)| {
                at + (o * 7 + i) as f32 / 100.0
            }),
            bias: Array1::from_shape_fn(outputs, |o| at - o as f32 / 50.0),
            weight_grad: Array2::zeros((outputs, inputs)),
            bias_grad: Array1::zeros(outputs),
        }
    }

    /// A start, and a reference that moved every parameter by 0.01.
    fn start_and_reference() -> ([Layer; 2], TwoLayer) {
        let start = [layer(HIDDEN, 3, 0.1), layer(2, HIDDEN, -0.2)];
        let moved = |l: &Layer| {
            Linear::from_parameters(
                l.weight.mapv(|v| f64::from(v) + 0.01),
                l.bias.mapv(|v| f64::from(v) + 0.01),
            )
        };
        let reference = TwoLayer {
            layer1: moved(&start[0]),
            layer2: moved(&start[1]),
            head: Head::LogitsCrossEntropy,
        };
        (start, reference)
    }

    /// The reference's parameters in f32, each moved by `off(unit)` times its step.
    fn student(
        reference: &TwoLayer,
        off: impl Fn(usize) -> f64,
    ) -> Vec<(Array2<f32>, Array1<f32>)> {
        let l1 = &reference.layer1;
        let l2 = &reference.layer2;
        vec![
            (
                Array2::from_shape_fn(l1.weight.dim(), |(u, i)| {
                    (l1.weight[[u, i]] + 0.01 * off(u)) as f32
                }),
                Array1::from_shape_fn(HIDDEN, |u| (l1.bias[u] + 0.01 * off(u)) as f32),
            ),
            (
                Array2::from_shape_fn(l2.weight.dim(), |(o, u)| {
                    (l2.weight[[o, u]] + 0.01 * off(u)) as f32
                }),
                l2.bias.mapv(|v| v as f32),
            ),
        ]
    }

    fn measure(
        start: &[Layer; 2],
        reference: &TwoLayer,
        got: &[(Array2<f32>, Array1<f32>)],
    ) -> Distance {
        let views: Vec<Parameters> = got.iter().map(|(w, b)| (w.view(), b.view())).collect();
        distance(reference, start, &views)
    }

    #[test]
    fn the_reference_itself_is_at_distance_zero_up_to_f32() {
        let (start, reference) = start_and_reference();
        let d = measure(&start, &reference, &student(&reference, |_| 0.0));
        assert!(d.within(TIGHT), "{d:?}");
        assert!(d.all < 1e-5, "{d:?}");
    }

    #[test]
    fn a_mistake_that_moves_every_unit_fails_however_small_each_step() {
        let (start, reference) = start_and_reference();
        // 1% of every step, on every unit: the typical unit reads it.
        let d = measure(&start, &reference, &student(&reference, |_| 0.01));
        assert!(!d.within(TIGHT), "{d:?}");
        assert!((d.typical - 0.01).abs() < 0.002, "{d:?}");
    }

    #[test]
    fn one_unit_on_its_own_path_is_rounding_and_passes() {
        let (start, reference) = start_and_reference();
        // Unit 5 a tenth of its step off (a ReLU input on the other side of 0), the others
        // exact: the whole model is off by more than the typical tolerance, the typical unit
        // is not.
        let d = measure(
            &start,
            &reference,
            &student(&reference, |u| if u == 5 { 0.1 } else { 0.0 }),
        );
        assert!(d.all > TIGHT.typical, "{d:?}");
        assert!(d.within(TIGHT), "{d:?}");
    }

    #[test]
    fn units_all_far_off_fail_the_loose_bound_too() {
        let (start, reference) = start_and_reference();
        let d = measure(&start, &reference, &student(&reference, |_| 1.0));
        assert!(d.all > TIGHT.all && !d.within(TIGHT), "{d:?}");
    }

    #[test]
    fn a_model_of_another_shape_is_infinitely_far() {
        let (start, reference) = start_and_reference();
        let mut got = student(&reference, |_| 0.0);
        got[1].1 = Array1::zeros(3);
        let d = measure(&start, &reference, &got);
        assert!(d.all.is_infinite() && !d.within(TIGHT), "{d:?}");
    }

    /// The student's layers as the grader's, with zero gradients.
    fn as_layers(got: &[(Array2<f32>, Array1<f32>)]) -> [Layer; 2] {
        let layer = |(w, b): &(Array2<f32>, Array1<f32>)| Layer {
            weight_grad: Array2::zeros(w.raw_dim()),
            bias_grad: Array1::zeros(b.len()),
            weight: w.clone(),
            bias: b.clone(),
        };
        [layer(&got[0]), layer(&got[1])]
    }

    #[test]
    fn each_tensor_of_the_reference_steps_once_and_on_its_path() {
        let (start, reference) = start_and_reference();
        let steps = tensor_steps(
            &reference,
            &start,
            &as_layers(&student(&reference, |_| 0.0)),
        );
        assert_eq!(steps.len(), 4);
        for step in &steps {
            assert!(
                (step.scale - 1.0).abs() < 1e-3 && step.off < 1e-3,
                "{step:?}"
            );
        }
    }

    #[test]
    fn a_bias_that_steps_twice_as_far_is_the_one_named() {
        let (start, reference) = start_and_reference();
        let mut got = as_layers(&student(&reference, |_| 0.0));
        got[0].bias = Array1::from_shape_fn(HIDDEN, |u| {
            (2.0 * reference.layer1.bias[u] - f64::from(start[0].bias[u])) as f32
        });
        let steps = tensor_steps(&reference, &start, &got);
        let worst = steps
            .iter()
            .max_by(|a, b| a.off.total_cmp(&b.off))
            .expect("four tensors");
        assert_eq!(worst.name, "layer1.bias");
        assert!(
            (worst.scale - 2.0).abs() < 1e-3 && (worst.off - 1.0).abs() < 1e-3,
            "{worst:?}"
        );
        // Another shape: nothing to name.
        got[1].bias = Array1::zeros(3);
        assert!(tensor_steps(&reference, &start, &got).is_empty());
    }
}
