//! End-to-end: the class report's similarity section, written by `grader collect
//! --submissions` (the comparison `grader batch` runs at its end, without grading anything):
//! a copy of the solution with its names changed, its functions reordered and comments added
//! is reported beside the original; an independently written solution is not; submissions of
//! the template alone match nothing; the page opens in headless Chromium with every pair, its
//! shares and its regions side by side, a hostile name and hostile code shown as text;
//! `grader batch` writes the same section (and none with `--no-similarity`). A class of 300
//! generated submissions is compared in seconds (the figure is printed).

use gpu_labs_e2e::{copy_crate, grader_bin, solution, workspace};
use std::path::Path;
use std::process::{Command, Output};

/// A folder name a student chose, and a line of their code, that are markup.
const EVE: &str = "eve<img src=x onerror=document.body.dataset.pwned=1>";
const EVE_LINE: &str = "// </pre></td><script>document.body.dataset.pwned=2</script>";

fn grader(args: &[&str], cwd: &Path) -> Output {
    Command::new(grader_bin())
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("grader runs")
}

/// `text` with every whole word of `names` replaced (a copier's search and replace).
fn renamed(text: &str, names: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_alphanumeric() || c == '_') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        out.push_str(names.iter().find(|(f, _)| *f == word).map_or(word, |n| n.1));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `text` with its `pub fn` items moved to the front of the file after the first one's
/// (their order reversed) and a comment before each `let`.
fn reordered(text: &str) -> String {
    let parts: Vec<&str> = text.split("\npub fn ").collect();
    let (head, fns) = parts.split_first().expect("a head");
    let mut out = head.to_string();
    for f in fns.iter().rev() {
        out.push_str("\n// moved here\npub fn ");
        out.push_str(f);
    }
    out.replace("    let ", "    // the next value\n    let ")
}

/// The class: alice (the solution), bob (alice disguised), carol (an independent solution),
/// dan and erin (the template as given), eve (alice's code with a hostile line, in a folder
/// with a hostile name).
fn make_class(class: &Path) {
    let sol = solution();
    copy_crate(&sol, &class.join("alice"));
    copy_crate(&sol, &class.join("bob"));
    let names = [
        ("sum", "acc"),
        ("row", "y"),
        ("col", "x_"),
        ("tile_a", "sh_a"),
        ("tile_b", "sh_b"),
        ("c_rows", "chunk"),
        ("a_row", "left"),
        ("b_row", "right"),
        ("stream", "s"),
        ("value", "v"),
        ("upload", "send"),
        ("config", "cfg"),
    ];
    for file in ["lib.rs", "gpu.rs", "batched.rs"] {
        let path = class.join("bob/src").join(file);
        let text = std::fs::read_to_string(&path).expect("bob's source");
        std::fs::write(&path, reordered(&renamed(&text, &names))).expect("disguised");
    }
    copy_crate(&sol, &class.join("carol"));
    gpu_labs_e2e::use_alternative_matmul_sources(&class.join("carol"));
    // carol's batched.rs is the template's (she did not do that part).
    let template = workspace().join("templates/matmul");
    std::fs::copy(
        template.join("src/batched.rs"),
        class.join("carol/src/batched.rs"),
    )
    .expect("the template's batched.rs");
    copy_crate(&template, &class.join("dan"));
    copy_crate(&template, &class.join("erin"));
    let eve = class.join(EVE);
    copy_crate(&sol, &eve);
    let lib = std::fs::read_to_string(eve.join("src/lib.rs")).expect("eve's lib.rs");
    let lib = lib.replace(
        "            c[[i, j]] = sum;",
        &format!("            {EVE_LINE}\n            c[[i, j]] = sum;"),
    );
    std::fs::write(eve.join("src/lib.rs"), lib).expect("eve's lib.rs");
}

/// The pairs the page lists, as (a, b, share of a, share of b).
fn pairs(page: &str) -> Vec<(String, String, f64, f64)> {
    gpu_labs_e2e::browser::elements(page, "tr")
        .into_iter()
        .filter(|r| r.attributes.contains_key("data-pair") && r.attributes.contains_key("data-a"))
        .map(|r| {
            let share = |k| r.attr(k).parse::<f64>().expect("a share");
            (
                r.attr("data-a").to_string(),
                r.attr("data-b").to_string(),
                share("data-share-a"),
                share("data-share-b"),
            )
        })
        .collect()
}

fn has_pair(pairs: &[(String, String, f64, f64)], a: &str, b: &str) -> bool {
    pairs
        .iter()
        .any(|p| (p.0 == a && p.1 == b) || (p.0 == b && p.1 == a))
}

#[test]
fn the_class_report_shows_disguised_copies_and_not_honest_or_template_work() {
    let dir = tempfile::tempdir().expect("a folder");
    let class = dir.path().join("class");
    make_class(&class);
    std::fs::create_dir_all(dir.path().join("feedback")).expect("feedback");
    let out = grader(
        &[
            "collect",
            "feedback",
            "--assignment",
            "matmul",
            "--out",
            "out/grades.csv",
            "--submissions",
            "class",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.path().join("out/grades.html");
    let html = std::fs::read_to_string(&page).expect("the class report");
    assert!(html.contains("<section id=\"similarity\">"), "{html}");
    // The gradebook gets nothing of it.
    let csv = std::fs::read_to_string(dir.path().join("out/grades.csv")).expect("the CSV");
    assert!(!csv.to_lowercase().contains("simil"), "{csv}");

    let found = pairs(&html);
    eprintln!("pairs: {found:?}");
    let copy = found
        .iter()
        .find(|p| has_pair(std::slice::from_ref(p), "alice", "bob"))
        .expect("alice and bob are reported");
    assert!(copy.2 >= 0.8 && copy.3 >= 0.8, "{copy:?}");
    assert!(has_pair(&found, "alice", EVE), "{found:?}");
    for p in &found {
        for honest in ["carol", "dan", "erin"] {
            assert!(
                p.0 != honest && p.1 != honest,
                "{honest} is reported: {p:?}"
            );
        }
    }

    // The same page, as a browser shows it.
    use gpu_labs_e2e::browser::{self, elements};
    let Some(chromium) = browser::chromium_or_skip() else {
        return;
    };
    let shown = browser::dump_dom(&chromium, &page);
    let dom = &shown.dom;
    assert!(shown.console.is_empty(), "{:?}", shown.console);
    for markup in ["<img", "<script", "data-pwned"] {
        assert!(!dom.contains(markup), "{markup} in the page:\n{dom}");
    }
    assert_eq!(
        pairs(dom),
        found,
        "the browser reads the pairs the file holds"
    );
    // Each listed pair links to its side-by-side view, whose rows hold both sides' lines.
    let links: Vec<String> = elements(dom, "a")
        .into_iter()
        .filter_map(|a| a.attributes.get("href").cloned())
        .filter(|h| h.starts_with("#pair-"))
        .collect();
    assert_eq!(links.len(), found.len(), "{links:?}");
    let views = elements(dom, "table")
        .into_iter()
        .filter(|t| t.attributes.get("class").is_some_and(|c| c == "regions"))
        .count();
    assert_eq!(views, found.len());
    let regions: Vec<_> = elements(dom, "tr")
        .into_iter()
        .filter(|r| r.attributes.contains_key("data-prints"))
        .collect();
    assert!(!regions.is_empty());
    let text: String = regions.iter().map(|r| r.text.clone()).collect();
    assert!(text.contains("sum +="), "the original's lines");
    assert!(text.contains("acc +="), "the copy's lines, renamed");
    assert!(text.contains(EVE_LINE), "a hostile line shows as text");
    let headings: String = elements(dom, "h3").into_iter().map(|h| h.text).collect();
    assert!(
        headings.contains(EVE),
        "a hostile name shows as text: {headings}"
    );
}

#[test]
fn the_flags_turn_it_off_set_the_threshold_and_say_when_it_cannot_run() {
    let dir = tempfile::tempdir().expect("a folder");
    let class = dir.path().join("class");
    make_class(&class);
    std::fs::create_dir_all(dir.path().join("feedback")).expect("feedback");
    let collect = |extra: &[&str]| {
        let mut args = vec!["collect", "feedback", "--assignment", "matmul"];
        args.extend_from_slice(extra);
        let out = grader(&args, dir.path());
        let page = std::fs::read_to_string(dir.path().join("grades.html")).unwrap_or_default();
        (out, page)
    };
    let (out, page) = collect(&["--submissions", "class", "--no-similarity"]);
    assert!(out.status.success());
    assert!(!page.contains("id=\"similarity\""), "{page}");
    assert!(
        page.contains("id=\"students\""),
        "the rest of the report is there"
    );
    let (_, page) = collect(&[]);
    assert!(page.contains("Not compared: `grader collect` compares the submissions"));
    // eve's code is alice's (a comment aside): 100%; bob's, disguised, is less.
    let (_, page) = collect(&["--submissions", "class", "--similarity-threshold", "100%"]);
    let found = pairs(&page);
    assert!(has_pair(&found, "alice", EVE), "{found:?}");
    assert!(!has_pair(&found, "alice", "bob"), "{found:?}");
    let (out, _) = collect(&["--submissions", "class", "--similarity-threshold", "0"]);
    assert!(!out.status.success(), "a threshold of 0 is refused");
    for command in ["batch", "collect"] {
        let help = grader(&[command, "--help"], dir.path());
        let help = String::from_utf8_lossy(&help.stdout);
        for flag in ["--no-similarity", "--similarity-threshold <SHARE>"] {
            assert!(help.contains(flag), "{command} --help: {help}");
        }
    }
}

/// Code every lab refuses before building it: a batch of such submissions grades in seconds.
const REFUSED: &str = "#[no_mangle]\npub extern \"C\" fn clock_gettime() -> i32 { 0 }\n";

#[test]
fn grader_batch_writes_the_section_and_no_similarity_leaves_it_out() {
    let dir = tempfile::tempdir().expect("a folder");
    let class = dir.path().join("class");
    make_class(&class);
    for student in ["alice", "bob", "carol", "dan", "erin", EVE] {
        std::fs::write(class.join(student).join("src/sneaky.rs"), REFUSED).expect("sneaky.rs");
    }
    let batch = |extra: &[&str]| {
        let mut args = vec![
            "batch",
            "class",
            "--assignment",
            "matmul",
            "--gpu",
            "emulate",
        ];
        args.extend_from_slice(extra);
        let out = Command::new(grader_bin())
            .args(&args)
            .current_dir(dir.path())
            .env(
                "GPU_LABS_CACHE",
                workspace().join("target").join("grader-cache"),
            )
            .output()
            .expect("grader runs");
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(dir.path().join("grades.html")).expect("the class report")
    };
    let page = batch(&["--similarity-threshold", "80%"]);
    assert!(
        page.contains("refused"),
        "the submissions were refused, not built"
    );
    let found = pairs(&page);
    assert!(has_pair(&found, "alice", "bob"), "{found:?}");
    assert!(
        !found.iter().any(|p| p.0 == "carol" || p.1 == "carol"),
        "{found:?}"
    );
    assert!(page.contains("data-threshold=\"0.8\""));
    let csv = std::fs::read_to_string(dir.path().join("grades.csv")).expect("the CSV");
    assert!(!csv.to_lowercase().contains("simil"), "{csv}");
    let page = batch(&["--no-similarity"]);
    assert!(!page.contains("id=\"similarity\""), "{page}");
}

/// A small deterministic generator (a linear congruential one).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// An expression over the variables `v0..v{vars}`, of random shape.
fn expression(rng: &mut Lcg, vars: u64, depth: u32) -> String {
    if depth == 0 || rng.below(3) == 0 {
        return match rng.below(3) {
            0 => format!("{}.0", rng.below(100)),
            _ => format!("v{}", rng.below(vars)),
        };
    }
    let op = ["+", "-", "*", "/"][rng.below(4) as usize];
    let (l, r) = (
        expression(rng, vars, depth - 1),
        expression(rng, vars, depth - 1),
    );
    match rng.below(4) {
        0 => format!("({l} {op} {r}).abs()"),
        1 => format!("{l}.max({r})"),
        _ => format!("({l} {op} {r})"),
    }
}

/// Statements of random shape.
fn statements(rng: &mut Lcg, vars: u64, depth: u32, out: &mut String) {
    for _ in 0..2 + rng.below(4) {
        let v = rng.below(vars);
        let e = expression(rng, vars, 3);
        match rng.below(if depth == 0 { 3 } else { 6 }) {
            0 => out.push_str(&format!("v{v} = {e};\n")),
            1 => out.push_str(&format!("v{v} += {e} * {}.0;\n", rng.below(9))),
            2 => out.push_str(&format!("out.push({e});\n")),
            3 => {
                out.push_str(&format!(
                    "for i in 0..{} {{\nv{v} -= i as f32;\n",
                    rng.below(50)
                ));
                statements(rng, vars, depth - 1, out);
                out.push_str("}\n");
            }
            4 => {
                out.push_str(&format!("if v{v} > {e} {{\n"));
                statements(rng, vars, depth - 1, out);
                out.push_str("} else {\n");
                statements(rng, vars, depth - 1, out);
                out.push_str("}\n");
            }
            _ => {
                out.push_str(&format!(
                    "while v{v} < {} {{\nv{v} += 1.0;\n",
                    rng.below(1000)
                ));
                statements(rng, vars, depth - 1, out);
                out.push_str("}\n");
            }
        }
    }
}

/// A student's own code: functions of random shape, about 600 lines.
fn student_code(seed: u64) -> String {
    let mut rng = Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = String::new();
    for f in 0..12 {
        let vars = 2 + rng.below(4);
        let params: Vec<String> = (0..vars).map(|v| format!("mut v{v}: f32")).collect();
        out.push_str(&format!(
            "pub fn step{f}({}) -> Vec<f32> {{\nlet mut out = Vec::new();\n",
            params.join(", ")
        ));
        statements(&mut rng, vars, 2, &mut out);
        out.push_str("out\n}\n\n");
    }
    out
}

#[test]
fn a_class_of_three_hundred_is_compared_in_seconds() {
    let dir = tempfile::tempdir().expect("a folder");
    let class = dir.path().join("class");
    let template = workspace().join("templates/matmul");
    for s in 0..300u64 {
        let folder = class.join(format!("student{s:03}"));
        copy_crate(&template, &folder);
        // Two copies are planted: 7 of 3 and 250 of 120.
        let own = match s {
            7 => 3,
            250 => 120,
            _ => s,
        };
        std::fs::write(folder.join("src/work.rs"), student_code(own)).expect("work.rs");
    }
    std::fs::create_dir_all(dir.path().join("feedback")).expect("feedback");
    let started = std::time::Instant::now();
    let out = grader(
        &[
            "collect",
            "feedback",
            "--assignment",
            "matmul",
            "--submissions",
            "class",
        ],
        dir.path(),
    );
    let wall = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("grades.html")).expect("the page");
    let summary = gpu_labs_e2e::browser::elements(&html, "p")
        .into_iter()
        .find(|p| {
            p.attributes
                .get("id")
                .is_some_and(|i| i == "similarity-summary")
        })
        .expect("the similarity summary");
    let seconds: f64 = summary.attr("data-seconds").parse().expect("seconds");
    let own = student_code(1);
    eprintln!(
        "300 submissions (the template and {} lines, {} words of their own each): compared \
         in {seconds:.2} s (reading included); `grader collect` took {wall:.2} s in all",
        own.lines().count(),
        own.split_whitespace().count()
    );
    assert_eq!(summary.attr("data-submissions"), "300");
    let found = pairs(&html);
    assert!(has_pair(&found, "student003", "student007"), "{found:?}");
    assert!(has_pair(&found, "student120", "student250"), "{found:?}");
    assert_eq!(found.len(), 2, "only the planted copies: {found:?}");
    assert!(seconds < 10.0, "{seconds} s");
}
