//! The comparison on the labs' own code: a copy of the solution disguised (names changed,
//! functions reordered, comments added) matches it; an independently written solution does
//! not; the template matches nothing; the matched regions are the copied lines.

use super::*;
use std::path::PathBuf;

fn repo(path: &str) -> PathBuf {
    Path::new(crate::stage::GRADER_DIR).join("..").join(path)
}

/// The `.rs` files of the crate at `dir`, as (path, text).
fn files_of(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir.join("src"))
        .expect("src")
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(e.path()).expect("a source");
            (format!("src/{name}"), text)
        })
        .collect();
    out.sort();
    out
}

fn code(files: &[(String, String)]) -> Code {
    Code::of_texts(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))
}

/// `text` with each whole word `from` replaced by `to`.
fn rename(text: &str, names: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let renamed = names
            .iter()
            .find(|(f, _)| *f == word.as_str())
            .map(|(_, t)| *t);
        out.push_str(renamed.unwrap_or(word));
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `text` with its top-level items (after the first) in reverse order, a comment after each
/// statement and the blank lines doubled.
fn disguise(text: &str) -> String {
    let starts = [
        "///",
        "pub fn",
        "fn ",
        "const ",
        "pub struct",
        "pub enum",
        "#[",
    ];
    let mut items: Vec<String> = vec![String::new()];
    for chunk in text.split("\n\n") {
        let last = items.last_mut().expect("an item");
        if starts.iter().any(|s| chunk.starts_with(s)) && !last.is_empty() {
            items.push(chunk.to_string());
        } else {
            last.push_str("\n\n");
            last.push_str(chunk);
        }
    }
    let head = items.remove(0);
    items.reverse();
    let moved = std::iter::once(head)
        .chain(items)
        .collect::<Vec<_>>()
        .join("\n\n\n");
    moved.replace(";\n", "; // my own work\n")
}

/// The names a copier would change in the matmul solution, in Rust and in the kernels.
const NEW_NAMES: &[(&str, &str)] = &[
    ("sum", "total"),
    ("row", "r"),
    ("col", "cc"),
    ("tile_a", "sa"),
    ("tile_b", "sb"),
    ("first_row", "start"),
    ("c_rows", "out_rows"),
    ("a_row", "lhs"),
    ("b_row", "rhs"),
    ("stream", "queue"),
    ("start", "begin"),
    ("value", "result"),
    ("upload", "to_device"),
    ("launch_product", "run_product"),
    ("load_kernel", "get_kernel"),
];

fn solution() -> Vec<(String, String)> {
    files_of(&repo("solutions/matmul"))
}

fn template() -> Code {
    // As `release::template_sources` makes it (this module reaches no flow).
    let files = crate::template::generate(&repo("solutions/matmul")).expect("the matmul template");
    Code::of_texts(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))
}

fn pair_of<'a>(found: &'a ClassSimilarity, a: &str, b: &str) -> Option<&'a SimilarPair> {
    found
        .pairs
        .iter()
        .find(|p| (p.a.student == a && p.b.student == b) || (p.a.student == b && p.b.student == a))
}

#[test]
fn a_disguised_copy_matches_and_an_honest_solution_does_not() {
    let original = solution();
    let copied: Vec<(String, String)> = original
        .iter()
        .map(|(p, t)| (p.clone(), disguise(&rename(t, NEW_NAMES))))
        .collect();
    assert_ne!(copied, original);
    // The independent solution: the fixture's lib.rs and gpu.rs, the template's batched.rs
    // filled in by the solution's (that part of both is the same: left out of the honest pair).
    let mut honest = files_of(&repo("tests/fixtures/matmul_alternative"));
    honest.extend(
        original
            .iter()
            .filter(|(p, _)| p == "src/batched.rs")
            .cloned(),
    );
    let mut solo = original.clone();
    solo.retain(|(p, _)| p != "src/batched.rs");
    let class = vec![
        ("alice".to_string(), code(&solo)),
        ("bob".to_string(), code(&copied)),
        ("carol".to_string(), code(&honest)),
    ];
    let found = compare(&class, &template(), Settings::default());
    let copy = pair_of(&found, "alice", "bob").expect("the copy is found");
    eprintln!("disguised copy: {:?} {:?}", copy.a, copy.b);
    assert!(copy.score() >= 0.8, "{:?} {:?}", copy.a, copy.b);
    assert!(
        pair_of(&found, "alice", "carol").is_none(),
        "an honest pair: {found:#?}"
    );
    // The shared regions show the copied lines on both sides: the kernel's loop, renamed.
    let shown: Vec<&regions::Region> = copy.regions.iter().collect();
    assert!(!shown.is_empty());
    let a_text: String = shown.iter().flat_map(|r| r.a.lines.clone()).collect();
    let b_text: String = shown.iter().flat_map(|r| r.b.lines.clone()).collect();
    assert!(a_text.contains("sum +="), "{a_text}");
    assert!(b_text.contains("total +="), "{b_text}");
    for r in &shown {
        assert_eq!(r.a.file, r.b.file, "{r:?}");
        assert!(r.a.first_line <= r.a.last_line);
    }
}

#[test]
fn the_scores_of_an_honest_pair_are_low_each_side() {
    let mut honest = files_of(&repo("tests/fixtures/matmul_alternative"));
    honest.retain(|(p, _)| p != "src/batched.rs");
    let mut solo = solution();
    solo.retain(|(p, _)| p != "src/batched.rs");
    let class = vec![
        ("alice".to_string(), code(&solo)),
        ("carol".to_string(), code(&honest)),
    ];
    // Every pair that shares anything, whatever the threshold.
    let found = compare(
        &class,
        &template(),
        Settings {
            threshold: f64::MIN_POSITIVE,
        },
    );
    let score = found.pairs.first().map_or(0.0, SimilarPair::score);
    eprintln!(
        "honest pair: {:?}",
        found.pairs.first().map(|p| (&p.a, &p.b))
    );
    assert!(score < 0.25, "{score}");
}

#[test]
fn template_only_submissions_match_nothing() {
    let given: Vec<(String, String)> = crate::template::generate(&repo("solutions/matmul"))
        .expect("the template")
        .into_iter()
        .filter(|(p, _)| p.starts_with("src/"))
        .collect();
    let commented: Vec<(String, String)> = given
        .iter()
        .map(|(p, t)| (p.clone(), rename(t, &[("a", "lhs"), ("b", "rhs")])))
        .collect();
    let class = vec![
        ("bob".to_string(), code(&given)),
        ("dan".to_string(), code(&commented)),
        ("eve".to_string(), code(&solution())),
    ];
    let found = compare(
        &class,
        &template(),
        Settings {
            threshold: f64::MIN_POSITIVE,
        },
    );
    assert!(found.pairs.is_empty(), "{:#?}", found.pairs);
    assert_eq!(found.with_code, 1, "only the solution has code of its own");
    // Against an empty template, the two copies of it are the same work.
    let found = compare(&class, &Code::default(), Settings::default());
    assert!(pair_of(&found, "bob", "dan").is_some_and(|p| p.score() > 0.99));
}

#[test]
fn thresholds_are_read_as_shares_or_percentages() {
    assert_eq!(parse_threshold("0.6"), Ok(0.6));
    assert_eq!(parse_threshold("60%"), Ok(0.6));
    assert_eq!(parse_threshold("1"), Ok(1.0));
    for bad in ["0", "-0.2", "1.5", "150%", "NaN", "half", ""] {
        assert!(parse_threshold(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_labs_solutions_are_read_whole_within_the_bounds() {
    for lab in ["matmul", "training"] {
        let code = Code::of_crate(&repo(&format!("solutions/{lab}")));
        eprintln!("{lab}: {} tokens", code.token_count());
        assert!(code.notes.is_empty(), "{lab}: {:?}", code.notes);
        assert!(code.token_count() * 2 < sources::MAX_TOKENS, "{lab}");
    }
}

/// A generator of token soup: every k-gram of it is new, the most fingerprints a text can
/// have.
fn soup(seed: u64, bytes: usize) -> String {
    let words = [
        "a", "+", "(", ")", "let", "fn", "{", "}", ";", "1", "*", "if", "x", "-",
    ];
    let mut state = seed | 1;
    let mut out = String::new();
    while out.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(words[(state % words.len() as u64) as usize]);
        out.push(' ');
    }
    out
}

#[test]
fn submissions_at_every_bound_are_compared_in_bounded_time() {
    // 100 submissions, each as large as the bounds let it be (16 files of 64 kB of token
    // soup: many more tokens than the budget), no two alike but the planted pair; timed from
    // their text (tokenizing included).
    let started = Instant::now();
    let class: Vec<(String, Code)> = (0..100u64)
        .map(|s| {
            let seed = if s == 99 { 1 } else { s };
            let files: Vec<(String, String)> = (0..16u64)
                .map(|f| (format!("src/f{f:02}.rs"), soup(seed * 1000 + f, 64 * 1024)))
                .collect();
            (format!("s{s:03}"), code(&files))
        })
        .collect();
    for (_, c) in &class {
        assert_eq!(c.token_count(), sources::MAX_TOKENS);
    }
    let found = compare(&class, &template(), Settings::default());
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "100 submissions of {} tokens each, read and compared: {seconds:.2} s",
        sources::MAX_TOKENS
    );
    assert_eq!(found.pairs.len(), 1, "the planted pair only");
    assert!(pair_of(&found, "s001", "s099").is_some_and(|p| p.score() > 0.99));
    assert!(seconds < 20.0, "{seconds} s");
}
