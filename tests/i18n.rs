//! End-to-end: a run in Traditional Chinese (`grader grade --lang zh-TW`) writes no English
//! sentence of the grader's. Every text of the English catalogues that the Chinese ones do not
//! share (code, units and libtest's words are shared) is looked for in what the grader printed
//! and in its results.json; the student's own panic messages and the compiler's output are not
//! the grader's and are not looked at.
//!
//! Scope: the catalogues of the engine, the flows and the matmul lab. The training lab's
//! messages are only partly translated (its GPU items, `cpu_fallback` and the data loader
//! still write English, outside any catalogue), so its runs are not checked here. Two texts
//! are left out on purpose: the rubric's own words (item titles and hints: the instructor's
//! text, in the rubric's language; results.json's test names are `id: title`), and the
//! sandbox's one-line protection report (`沙箱：filesystem: landlock …`, technical names for
//! whoever runs the grader).

use gpu_labs_e2e::{grade, solution, workspace, Graded};
use grader::i18n::{Catalogue, Lang};

/// The catalogues whose every message exists in zh-TW.
fn catalogues() -> [&'static Catalogue; 3] {
    [
        &grader::i18n::MESSAGES,
        &grader::messages::MESSAGES,
        &grader::matmul::MESSAGES,
    ]
}

/// The English texts a zh-TW run must not show: the text between a message's variables, when
/// it holds a word (three letters or more) and no Chinese message has it.
fn english_only() -> Vec<String> {
    let chinese: Vec<String> = catalogues()
        .iter()
        .flat_map(|c| c.texts(Lang::ZhTw))
        .collect();
    let mut texts: Vec<String> = catalogues()
        .iter()
        .flat_map(|c| c.texts(Lang::En))
        .flat_map(|t| t.lines().map(str::to_string).collect::<Vec<_>>())
        .map(|t| t.trim().to_string())
        .filter(|t| {
            t.len() >= 6
                && t.split(|c: char| !c.is_ascii_alphabetic())
                    .any(|w| w.len() >= 3)
        })
        .filter(|t| !chinese.iter().any(|z| z.contains(t.as_str())))
        .collect();
    texts.sort();
    texts.dedup();
    texts
}

/// What the grader wrote for a student: its output and every item's output in results.json
/// (the solution and the template print nothing of their own, and compile), less the sandbox's
/// report.
fn graders_words(graded: &Graded) -> String {
    let mut text = graded.stdout.clone();
    text.push('\n');
    text.push_str(graded.json["output"].as_str().unwrap_or_default());
    for test in graded.json["tests"].as_array().into_iter().flatten() {
        text.push('\n');
        text.push_str(test["output"].as_str().unwrap_or_default());
    }
    text.lines()
        .filter(|l| !l.starts_with("沙箱："))
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_no_english(graded: &Graded) {
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    let words = graders_words(graded);
    let found: Vec<String> = english_only()
        .into_iter()
        .filter(|t| words.contains(t.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "English in a zh-TW run: {found:#?}\n--- output ---\n{words}"
    );
    assert!(words.contains("分數") || words.contains("總分"), "{words}");
}

#[test]
fn the_english_texts_looked_for_are_many() {
    // A guard on the test itself: the filter above must leave the catalogues' sentences in.
    let texts = english_only();
    assert!(texts.len() > 150, "{}", texts.len());
    assert!(
        texts.iter().any(|t| t.contains("is not implemented yet")),
        "{texts:#?}"
    );
}

#[test]
fn a_zh_tw_run_of_the_matmul_solution_writes_no_english_sentence() {
    assert_no_english(&grade(&solution(), &["--lang", "zh-TW"]));
}

#[test]
fn a_zh_tw_run_of_the_matmul_template_writes_no_english_sentence() {
    let graded = grade(&workspace().join("templates/matmul"), &["--lang", "zh-TW"]);
    assert_no_english(&graded);
    assert!(graded.stdout.contains("還沒實作"), "{}", graded.stdout);
}
