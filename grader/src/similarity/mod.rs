//! The class report's similarity section: which submissions of a class share code beyond
//! the template. [`of_class`] reads every submission's `src/` ([`sources`]), and
//! [`compare`] finds the pairs, as MOSS does (winnowing, [`winnow`]): each Rust token (the
//! source scan's lexer) and each C token of the CUDA kernels in string literals is normalized
//! ([`normalize`]: names, numbers and strings each one token, so renaming hides nothing,
//! comments and layout gone), every k-gram in the template students are given is removed,
//! and the fingerprints left are compared through an inverted index. A pair's score is its
//! share of matched fingerprints on each side; pairs whose larger share reaches the threshold
//! are reported, with the regions they share side by side ([`regions`]).
//!
//! `grader batch` and `grader collect --submissions` call it; the class report renders the
//! [`SimilaritySection`] it returns; the CSV gradebook never sees it. It is a lead for a
//! person to read, never a verdict: see docs/instructor.md.

mod compare;
mod cuda;
mod normalize;
pub mod regions;
pub mod sources;
mod winnow;

use regions::Region;
use sources::Code;
use std::path::Path;
use std::time::Instant;

/// Tokens per k-gram: shorter shared runs never match.
pub const K: usize = 15;
/// Window of the winnowing: any shared run of `W + K - 1` tokens or more matches.
pub const W: usize = 8;
/// The default threshold: a pair is reported when one side shares this much.
pub const DEFAULT_THRESHOLD: f64 = 0.5;
/// Fingerprints a pair must share to be reported, whatever the shares (a submission with a
/// few lines beyond the template would otherwise match many others entirely).
pub const MIN_MATCHED: usize = 12;
/// Pairs shown at most (the most similar).
pub const MAX_PAIRS: usize = 25;
/// A fingerprint held by more than this many submissions, or this share of the class, is
/// code common to the class (boilerplate the lab's hints lead to), and is not counted.
pub const COMMON_FLOOR: usize = 10;
/// See [`COMMON_FLOOR`].
pub const COMMON_SHARE: f64 = 0.25;
/// Notes shown at most (what the bounds left out).
const MAX_NOTES: usize = 50;

/// How to compare, resolved from the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A pair is reported when the larger of its two shares is at least this (0 to 1).
    pub threshold: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

/// Reads a threshold from the command line: a share (`0.6`) or a percentage (`60%`).
pub fn parse_threshold(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(percent) => (percent, 100.0),
        None => (text.trim(), 1.0),
    };
    let share = number
        .trim()
        .parse::<f64>()
        .map(|v| v / scale)
        .map_err(|_| format!("`{text}` is not a share: write one such as 0.6 or 60%"))?;
    if share.is_finite() && share > 0.0 && share <= 1.0 {
        Ok(share)
    } else {
        Err(format!(
            "`{text}` is not a share between 0 and 1 (0.6, or 60%); 0 would report every pair"
        ))
    }
}

/// What the class report shows about similarity.
#[derive(Debug, Clone, PartialEq)]
pub enum SimilaritySection {
    /// The class was compared.
    Compared(ClassSimilarity),
    /// It could not be, and why (said on the page).
    NotCompared(String),
}

/// The comparison of a class.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSimilarity {
    /// The threshold used.
    pub threshold: f64,
    /// Tokens per k-gram.
    pub k: usize,
    /// The winnowing window.
    pub w: usize,
    /// Submissions read.
    pub submissions: usize,
    /// Submissions with code of their own beyond the template (the others match nothing).
    pub with_code: usize,
    /// A fingerprint held by more submissions than this was not counted (common code).
    pub common_limit: usize,
    /// Pairs at or above the threshold (more than are shown when over [`MAX_PAIRS`]).
    pub pairs_above: usize,
    /// The most similar pairs at or above the threshold, most similar first.
    pub pairs: Vec<SimilarPair>,
    /// What the bounds left out, by student.
    pub notes: Vec<(String, String)>,
    /// Seconds the comparison took (reading included).
    pub seconds: f64,
}

/// One side of a pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The student.
    pub student: String,
    /// Their fingerprints (the template's and the common ones removed).
    pub prints: usize,
    /// The share of them the other side holds too.
    pub share: f64,
}

/// Two submissions that share code.
#[derive(Debug, Clone, PartialEq)]
pub struct SimilarPair {
    /// The first (by name).
    pub a: Side,
    /// The second.
    pub b: Side,
    /// Fingerprints both hold.
    pub matched: usize,
    /// The largest shared regions, side by side.
    pub regions: Vec<Region>,
}

impl SimilarPair {
    /// The pair's score: the larger of its two shares.
    pub fn score(&self) -> f64 {
        self.a.share.max(self.b.share)
    }
}

/// Compares the submissions `class` (name, crate folder): reads each one's sources (a link
/// is not read, as batch grades none), then [`compare`]s them, the lab's `template` (its
/// `src/` files as students get them: [`crate::release::template_sources`], or why it could
/// not be made) excluded. The caller makes the template, so that this module reaches nothing
/// of the grader's flows (the class report, below them, shows what it finds).
pub fn of_class<'a>(
    class: impl IntoIterator<Item = (&'a str, &'a Path)>,
    template: Result<Vec<(String, String)>, String>,
    settings: Settings,
) -> SimilaritySection {
    let started = Instant::now();
    let template = match template {
        Ok(files) => Code::of_texts(files.iter().map(|(p, t)| (p.as_str(), t.as_str()))),
        Err(why) => {
            return SimilaritySection::NotCompared(format!(
                "{why}; without it every submission would match what all students were given"
            ))
        }
    };
    let mut read = Vec::new();
    for (name, folder) in class {
        let is_link = folder.symlink_metadata().is_ok_and(|m| m.is_symlink());
        let code = if is_link {
            Code {
                files: Vec::new(),
                notes: vec!["a link, not a folder: not compared".into()],
            }
        } else {
            Code::of_crate(folder)
        };
        read.push((name.to_string(), code));
    }
    let mut found = compare(&read, &template, settings);
    found.seconds = started.elapsed().as_secs_f64();
    SimilaritySection::Compared(found)
}

/// Compares every pair of `class` (name, code), `template`'s k-grams excluded.
pub fn compare(class: &[(String, Code)], template: &Code, settings: Settings) -> ClassSimilarity {
    let started = Instant::now();
    let excluded = compare::every_kgram(template, K);
    let prints: Vec<compare::Prints> = class
        .iter()
        .map(|(_, code)| compare::prints(code, K, W, &excluded))
        .collect();
    let common_limit = COMMON_FLOOR.max((class.len() as f64 * COMMON_SHARE).ceil() as usize);
    let counted = compare::count(prints, common_limit);
    let sizes: Vec<usize> = counted.prints.iter().map(Vec::len).collect();
    let mut above: Vec<(usize, usize, usize, f64, f64)> = counted
        .pairs
        .iter()
        .filter(|(_, _, n)| *n >= MIN_MATCHED)
        .map(|&(a, b, n)| {
            let share = |size: usize| n as f64 / size.max(1) as f64;
            (a, b, n, share(sizes[a]), share(sizes[b]))
        })
        .filter(|(.., sa, sb)| sa.max(*sb) >= settings.threshold)
        .collect();
    above.sort_by(|x, y| {
        y.3.max(y.4)
            .total_cmp(&x.3.max(x.4))
            .then(y.2.cmp(&x.2))
            .then((x.0, x.1).cmp(&(y.0, y.1)))
    });
    let pairs_above = above.len();
    let pairs = above
        .into_iter()
        .take(MAX_PAIRS)
        .map(|(a, b, matched, sa, sb)| {
            let found = compare::matches(&counted.prints[a], &counted.prints[b]);
            SimilarPair {
                a: Side {
                    student: class[a].0.clone(),
                    prints: sizes[a],
                    share: sa,
                },
                b: Side {
                    student: class[b].0.clone(),
                    prints: sizes[b],
                    share: sb,
                },
                matched,
                regions: regions::regions(&class[a].1, &class[b].1, &found, K, W),
            }
        })
        .collect();
    let notes = class
        .iter()
        .flat_map(|(name, code)| code.notes.iter().map(move |n| (name.clone(), n.clone())))
        .take(MAX_NOTES)
        .collect();
    ClassSimilarity {
        threshold: settings.threshold,
        k: K,
        w: W,
        submissions: class.len(),
        with_code: sizes.iter().filter(|s| **s > 0).count(),
        common_limit: counted.common_limit,
        pairs_above,
        pairs,
        notes,
        seconds: started.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests;
