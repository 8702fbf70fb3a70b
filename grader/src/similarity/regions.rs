//! The matched regions of a pair, for the side-by-side view: the shared fingerprints, in the
//! first submission's order, grouped into runs that go on in both (the same files, the next
//! fingerprint close after the last on each side), each run shown as the source lines it
//! covers on each side, bounded in lines and in characters per line.

use super::compare::Loc;
use super::sources::Code;

/// Regions shown per pair at most (the largest).
pub const MAX_REGIONS: usize = 6;
/// Lines shown per side of a region at most.
pub const MAX_LINES: usize = 30;
/// Characters shown of one line at most.
const MAX_LINE_CHARS: usize = 160;

/// The lines of one side of a matched region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The file, `src/…`.
    pub file: String,
    /// The first line's number (1-based).
    pub first_line: usize,
    /// The last line's number.
    pub last_line: usize,
    /// The lines shown (at most [`MAX_LINES`], each cut to a bound).
    pub lines: Vec<String>,
}

/// A region both submissions share: each side's lines, and how many fingerprints match in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The first submission's lines.
    pub a: Excerpt,
    /// The second submission's lines.
    pub b: Excerpt,
    /// Fingerprints matched in it.
    pub prints: usize,
}

/// The largest regions (at most [`MAX_REGIONS`]) of the matches `matched` (in `a`'s order)
/// between the code `a` and `b`, shown in `a`'s order; `k` and `w` are the comparison's.
pub(crate) fn regions(
    a: &Code,
    b: &Code,
    matched: &[(Loc, Loc)],
    k: usize,
    w: usize,
) -> Vec<Region> {
    let gap = (k + w) as u32;
    // Runs of matches: (start index, end index) into `matched`.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, (la, lb)) in matched.iter().enumerate() {
        let goes_on = i > 0 && {
            let (pa, pb) = matched[i - 1];
            pa.file == la.file
                && pb.file == lb.file
                && la.at <= pa.at + gap
                && lb.at > pb.at
                && lb.at <= pb.at + gap
        };
        match runs.last_mut() {
            Some(run) if goes_on => run.1 = i,
            _ => runs.push((i, i)),
        }
    }
    runs.sort_by_key(|(s, e)| std::cmp::Reverse(e - s));
    runs.truncate(MAX_REGIONS);
    runs.sort_unstable();
    runs.into_iter()
        .filter_map(|(s, e)| {
            let run = &matched[s..=e];
            let side = |code: &Code, locs: &mut dyn Iterator<Item = Loc>| {
                let locs: Vec<Loc> = locs.collect();
                let file = code.files.get(locs.first()?.file as usize)?;
                let from = locs.iter().map(|l| l.at).min()? as usize;
                let to = locs.iter().map(|l| l.at).max()? as usize + k - 1;
                let line = |i: usize| file.tokens.get(i.min(file.tokens.len().saturating_sub(1)));
                let first = line(from)?.line as usize;
                let last = (line(to)?.line as usize).max(first);
                Some(excerpt(&file.path, &file.text, first, last))
            };
            Some(Region {
                a: side(a, &mut run.iter().map(|m| m.0))?,
                b: side(b, &mut run.iter().map(|m| m.1))?,
                prints: run.len(),
            })
        })
        .collect()
}

/// Lines `first..=last` of `text`, at most [`MAX_LINES`], each cut to a bound.
fn excerpt(file: &str, text: &str, first: usize, last: usize) -> Excerpt {
    let lines = text
        .lines()
        .skip(first.saturating_sub(1))
        .take((last + 1 - first).min(MAX_LINES))
        .map(|l| {
            if l.chars().count() > MAX_LINE_CHARS {
                let cut: String = l.chars().take(MAX_LINE_CHARS).collect();
                format!("{cut}…")
            } else {
                l.to_string()
            }
        })
        .collect();
    Excerpt {
        file: file.to_string(),
        first_line: first,
        last_line: last,
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_is_bounded_in_lines_and_characters() {
        let text: String = (1..=100)
            .map(|i| format!("line {i} {}\n", "x".repeat(i * 5)))
            .collect();
        let e = excerpt("src/lib.rs", &text, 10, 80);
        assert_eq!(e.lines.len(), MAX_LINES);
        assert!(e.lines[0].starts_with("line 10 "));
        assert_eq!((e.first_line, e.last_line), (10, 80));
        assert!(e
            .lines
            .iter()
            .all(|l| l.chars().count() <= MAX_LINE_CHARS + 1));
        assert!(e.lines[MAX_LINES - 1].ends_with('…'));
    }
}
