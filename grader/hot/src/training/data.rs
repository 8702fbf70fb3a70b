//! The data the training lab trains on. Grading never downloads anything: the toy set and the
//! digit images are generated from a seed, so the worker and the supervisor build the same
//! examples and a run repeats exactly with `--seed N`. (Every grading run generates them, a
//! random draw and a few operations per pixel: hot code. Reading MNIST's own files is the
//! lab's, `grader_labs::training::data::mnist`.)

use ndarray::{Array2, ArrayView1};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Examples to train or evaluate on: what a data loader of the lesson yields, in f64 so the
/// supervisor's references are computed in full precision.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// One row per example, one column per feature.
    pub inputs: Array2<f64>,
    /// The class of each example, in `0..classes`, one per row of `inputs`.
    pub labels: Vec<usize>,
    /// How many classes there are (the width of the model's output).
    pub classes: usize,
}

/// Features of the toy set, as in the lesson's `torch.randn(n, 10)`.
pub const TOY_FEATURES: usize = 10;

/// MNIST's pixel mean, which the lesson subtracts (`transforms.Normalize((0.1307,), (0.3081,))`).
pub const MNIST_MEAN: f64 = 0.1307;
/// MNIST's pixel standard deviation, which the lesson divides by.
pub const MNIST_STD: f64 = 0.3081;
/// Rows and columns of an MNIST image.
pub const IMAGE_SIDE: usize = 28;
/// Features of an MNIST image, flattened row by row.
pub const IMAGE_PIXELS: usize = IMAGE_SIDE * IMAGE_SIDE;

/// Standard normal samples by Box–Muller, using both values of each pair.
struct Gaussian {
    rng: StdRng,
    spare: Option<f64>,
}

impl Gaussian {
    fn new(seed: u64) -> Self {
        Gaussian {
            rng: StdRng::seed_from_u64(seed),
            spare: None,
        }
    }

    fn sample(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        // In (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.rng.random::<f64>();
        let u2 = self.rng.random::<f64>();
        let radius = (-2.0 * u1.ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
        self.spare = Some(radius * sin);
        radius * cos
    }
}

/// The lesson's toy binary problem, to train a small classifier on in seconds: `n` rows of
/// 10 features drawn from N(0, 1); the label is 1 when the first five features sum to more
/// than 0, else 0.
pub fn toy_set(n: usize, seed: u64) -> Dataset {
    let mut gaussian = Gaussian::new(seed);
    let inputs = Array2::from_shape_simple_fn((n, TOY_FEATURES), || gaussian.sample());
    let labels = inputs
        .rows()
        .into_iter()
        .map(|row| usize::from(row.iter().take(5).sum::<f64>() > 0.0))
        .collect();
    Dataset {
        inputs,
        labels,
        classes: 2,
    }
}

/// The strokes of a seven-segment glyph as pixel rectangles `[top, bottom, left, right)`,
/// in the order a, b, c, d, e, f, g (top, upper right, lower right, bottom, lower left,
/// upper left, middle).
const SEGMENTS: [[usize; 4]; 7] = [
    [4, 7, 8, 20],
    [4, 15, 17, 20],
    [13, 24, 17, 20],
    [21, 24, 8, 20],
    [13, 24, 8, 11],
    [4, 15, 8, 11],
    [13, 16, 8, 20],
];

/// Which segments each digit lights.
const DIGIT_SEGMENTS: [&str; 10] = [
    "abcdef", "bc", "abdeg", "abcdg", "bcfg", "acdfg", "acdefg", "abc", "abcdefg", "abcdfg",
];

/// How far an example may be moved from the centre, in pixels, each way.
const MAX_SHIFT: usize = 2;
/// The side of the canvas a glyph is drawn on: the image with a `MAX_SHIFT` margin all
/// round, so that every 28×28 window of it is the glyph moved by up to `MAX_SHIFT` pixels.
const CANVAS_SIDE: usize = IMAGE_SIDE + 2 * MAX_SHIFT;
/// The range of a stroke's brightness; each stroke of each example draws its own.
const STROKE_BRIGHTNESS: std::ops::Range<f64> = 0.4..1.0;
/// The chance that an example has a slip: one stroke left out or one stroke too many, as
/// in a badly written digit, so that some examples are ambiguous like some of MNIST's.
const SLIP_CHANCE: f64 = 0.1;
/// The standard deviation of the noise added to every pixel.
const PIXEL_NOISE: f64 = 0.15;
/// The most bright stray pixels an example gets.
const MAX_SPECKLES: usize = 3;

/// Draws the strokes of one example onto `canvas` (`CANVAS_SIDE` pixels square), each with
/// its brightness (0 for a stroke left out).
fn draw_glyph(canvas: &mut [f64], brightness: &[f64; 7]) {
    canvas.fill(0.0);
    for (&[top, bottom, left, right], &stroke_brightness) in SEGMENTS.iter().zip(brightness) {
        for row in top + MAX_SHIFT..bottom + MAX_SHIFT {
            let start = row * CANVAS_SIDE + MAX_SHIFT;
            for pixel in &mut canvas[start + left..start + right] {
                // Where strokes meet, the brighter shows.
                *pixel = pixel.max(stroke_brightness);
            }
        }
    }
}

/// A sample of about N(0, 1) from 32 random bits: the sum of four 8-bit uniforms, centred
/// and scaled (Irwin–Hall). Bell-shaped and bounded by ±3.5; several times cheaper than
/// Box–Muller, which matters for the 47 million noisy pixels of 60 000 images.
fn approximate_normal(bits: u32) -> f64 {
    let sum: u32 = bits.to_le_bytes().into_iter().map(u32::from).sum();
    // Each byte is uniform on 0..256: mean 127.5, variance (256² − 1) / 12.
    const MEAN: f64 = 4.0 * 127.5;
    let std = (4.0 * (256.0f64 * 256.0 - 1.0) / 12.0).sqrt();
    // Multiplying by the reciprocal (folded at compile time) is much faster than dividing.
    (f64::from(sum) - MEAN) * (1.0 / std)
}

/// MNIST's normalisation of a pixel in [0, 1], as the lesson's transform does it.
pub fn normalise(pixel: f64) -> f64 {
    (pixel - MNIST_MEAN) / MNIST_STD
}

/// A stand-in for MNIST that needs no download: `n` 28×28 images (784 features, normalised
/// like the lesson's MNIST) of seven-segment digits with uniformly random labels. Each is its
/// digit's glyph with every stroke at its own brightness in [0.4, 1), one in ten with a
/// stroke left out or added, moved up to 2 pixels each way, with noise of standard deviation
/// 0.15 on every pixel and up to 3 bright speckles, clamped to [0, 1] before normalising. A
/// 784→128→ReLU→10 MLP trained with SGD learns it to about 90% in an epoch and 95% in a few,
/// like MNIST, while no single pixel gives a digit away.
pub fn synthetic_digits(n: usize, seed: u64) -> Dataset {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut inputs = Array2::zeros((n, IMAGE_PIXELS));
    let mut labels = Vec::with_capacity(n);
    let mut canvas = [0.0; CANVAS_SIDE * CANVAS_SIDE];
    let mut pixels = [0.0; IMAGE_PIXELS];
    let mut noise_bits = [0u32; IMAGE_PIXELS];
    for mut image in inputs.rows_mut() {
        let label = rng.random_range(0..10usize);
        let mut brightness = [0.0; 7];
        for segment in DIGIT_SEGMENTS[label].bytes() {
            brightness[usize::from(segment - b'a')] = rng.random_range(STROKE_BRIGHTNESS);
        }
        if rng.random_bool(SLIP_CHANCE) {
            let segment = rng.random_range(0..7);
            brightness[segment] = if brightness[segment] > 0.0 {
                0.0
            } else {
                rng.random_range(STROKE_BRIGHTNESS)
            };
        }
        draw_glyph(&mut canvas, &brightness);
        // The window's corner on the canvas; (MAX_SHIFT, MAX_SHIFT) leaves the glyph centred.
        let top = rng.random_range(0..=2 * MAX_SHIFT);
        let left = rng.random_range(0..=2 * MAX_SHIFT);
        rng.fill(&mut noise_bits);
        let rows = pixels
            .chunks_exact_mut(IMAGE_SIDE)
            .zip(noise_bits.chunks_exact(IMAGE_SIDE));
        for (row, (pixel_row, bits_row)) in rows.enumerate() {
            let start = (top + row) * CANVAS_SIDE + left;
            let strokes = &canvas[start..start + IMAGE_SIDE];
            for ((pixel, &stroke), &bits) in pixel_row.iter_mut().zip(strokes).zip(bits_row) {
                let noise = PIXEL_NOISE * approximate_normal(bits);
                *pixel = normalise((stroke + noise).clamp(0.0, 1.0));
            }
        }
        for _ in 0..rng.random_range(0..=MAX_SPECKLES) {
            let pixel = rng.random_range(0..IMAGE_PIXELS);
            pixels[pixel] = normalise(rng.random_range(0.5..1.0));
        }
        image.assign(&ArrayView1::from(&pixels));
        labels.push(label);
    }
    Dataset {
        inputs,
        labels,
        classes: 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_toy_set_repeats_with_its_seed_and_changes_with_another() {
        let set = toy_set(50, 3);
        assert_eq!(set, toy_set(50, 3));
        assert_ne!(set.inputs, toy_set(50, 4).inputs);
        assert_eq!(set.inputs.dim(), (50, TOY_FEATURES));
        assert_eq!(set.labels.len(), 50);
        assert_eq!(set.classes, 2);
    }

    #[test]
    fn toy_labels_say_whether_the_first_five_features_sum_above_zero() {
        let set = toy_set(1000, 11);
        for (row, &label) in set.inputs.rows().into_iter().zip(&set.labels) {
            let first_five: f64 = row.iter().take(5).sum();
            assert_eq!(label, usize::from(first_five > 0.0), "row {row}");
        }
        let ones = set.labels.iter().filter(|&&label| label == 1).count();
        assert!((400..=600).contains(&ones), "{ones} of 1000 labels are 1");
    }

    #[test]
    fn toy_features_are_standard_normal() {
        let set = toy_set(5000, 5);
        for (feature, column) in set.inputs.columns().into_iter().enumerate() {
            let mean = column.mean().unwrap_or(f64::NAN);
            let std = column.std(0.0);
            assert!(mean.abs() < 0.05, "feature {feature}: mean {mean}");
            assert!((std - 1.0).abs() < 0.05, "feature {feature}: std {std}");
        }
    }

    #[test]
    fn synthetic_digits_repeat_with_their_seed_and_hold_every_digit() {
        let set = synthetic_digits(500, 1);
        assert_eq!(set, synthetic_digits(500, 1));
        assert_ne!(set.inputs, synthetic_digits(500, 2).inputs);
        assert_ne!(set.labels, synthetic_digits(500, 2).labels);
        assert_eq!(set.inputs.dim(), (500, IMAGE_PIXELS));
        assert_eq!(set.labels.len(), 500);
        assert_eq!(set.classes, 10);
        for digit in 0..10 {
            let count = set.labels.iter().filter(|&&label| label == digit).count();
            assert!((25..=75).contains(&count), "digit {digit}: {count} of 500");
        }
    }

    #[test]
    fn synthetic_pixels_are_normalised_like_mnist() {
        let set = synthetic_digits(200, 9);
        let (black, white) = (normalise(0.0), normalise(1.0));
        assert!((black - (-0.1307 / 0.3081)).abs() < 1e-12);
        assert!((white - (0.8693 / 0.3081)).abs() < 1e-12);
        for &value in &set.inputs {
            assert!((black - 1e-12..=white + 1e-12).contains(&value), "{value}");
        }
        // Clamping makes both ends common: background below 0, strokes above 1.
        assert!(set.inputs.iter().any(|&value| value == black));
        assert!(set.inputs.iter().any(|&value| value == white));
    }

    /// The share of `test` that the nearest class mean of `train` classifies right.
    fn nearest_class_mean_accuracy(train: &Dataset, test: &Dataset) -> f64 {
        let mut means = Array2::<f64>::zeros((train.classes, train.inputs.ncols()));
        let mut counts = vec![0.0; train.classes];
        for (row, &label) in train.inputs.rows().into_iter().zip(&train.labels) {
            let mut mean = means.row_mut(label);
            mean += &row;
            counts[label] += 1.0;
        }
        for (mut mean, count) in means.rows_mut().into_iter().zip(counts) {
            mean /= count;
        }
        let right = test
            .inputs
            .rows()
            .into_iter()
            .zip(&test.labels)
            .filter(|(row, label)| {
                let distance = |class: usize| {
                    let difference = &means.row(class) - row;
                    difference.dot(&difference)
                };
                let nearest = (0..test.classes)
                    .min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
                    .unwrap_or(usize::MAX);
                nearest == **label
            })
            .count();
        right as f64 / test.labels.len() as f64
    }

    #[test]
    fn synthetic_digits_are_learnable_from_class_means() {
        let accuracy =
            nearest_class_mean_accuracy(&synthetic_digits(2000, 1), &synthetic_digits(1000, 2));
        eprintln!("nearest class mean: {accuracy}");
        assert!(accuracy > 0.6, "nearest class mean scores {accuracy}");
    }

    /// The best balanced accuracy (mean of the hit rates on `class` and on the rest) of a
    /// classifier that thresholds one pixel.
    fn best_single_pixel_balanced_accuracy(set: &Dataset, class: usize) -> f64 {
        let positives = set.labels.iter().filter(|&&label| label == class).count() as f64;
        let negatives = set.labels.len() as f64 - positives;
        let mut best: f64 = 0.0;
        for column in set.inputs.columns() {
            let mut examples: Vec<(f64, bool)> = column
                .iter()
                .zip(&set.labels)
                .map(|(&value, &label)| (value, label == class))
                .collect();
            examples.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Predicting `class` above each cut; below it is the same with the sides swapped.
            let (mut positives_below, mut negatives_below) = (0.0, 0.0);
            for (index, &(value, positive)) in examples.iter().enumerate() {
                if positive {
                    positives_below += 1.0;
                } else {
                    negatives_below += 1.0;
                }
                if examples.get(index + 1).is_some_and(|next| next.0 == value) {
                    continue;
                }
                let above =
                    ((positives - positives_below) / positives + negatives_below / negatives) / 2.0;
                best = best.max(above).max(1.0 - above);
            }
        }
        best
    }

    #[test]
    fn no_single_pixel_gives_a_digit_away() {
        let set = synthetic_digits(2000, 4);
        for class in 0..10 {
            let accuracy = best_single_pixel_balanced_accuracy(&set, class);
            eprintln!("digit {class}: the best single pixel scores {accuracy:.3} balanced");
            // Chance is 0.5; a pixel inside a stroke only this digit lacks would score ~1.
            assert!(accuracy < 0.9, "digit {class}: one pixel scores {accuracy}");
            assert!(
                accuracy > 0.55,
                "digit {class}: pixels say nothing ({accuracy})"
            );
        }
    }

    #[test]
    fn sixty_thousand_digits_generate_in_under_five_seconds() {
        let start = Instant::now();
        let set = synthetic_digits(60_000, 0);
        let elapsed = start.elapsed();
        eprintln!("60 000 digits in {elapsed:?}");
        assert_eq!(set.inputs.nrows(), 60_000);
        assert!(elapsed.as_secs_f64() < 5.0, "took {elapsed:?}");
    }
}
