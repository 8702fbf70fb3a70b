//! End-to-end: a run in Traditional Chinese (`grader grade --lang zh-TW`) writes no English
//! sentence of the grader's. Every text of the English catalogues that the Chinese ones do not
//! share (code, units and libtest's words are shared) is looked for in what the grader printed
//! and in its results.json; the student's own panic messages and the compiler's output are not
//! the grader's and are not looked at.
//!
//! Scope: the catalogues of the engine, the flows and both labs (matmul and training), and a
//! zh-TW run of each lab's solution and template (the training lab's GPU items on the
//! emulator). Two texts are left out on purpose: the rubric's own words (item titles and
//! hints: the instructor's text, in the rubric's language; results.json's test names are
//! `id: title`, and the titles are taken out of what is searched, as a title such as "train_on
//! trains on the GPU" may share words with a message), and the sandbox's one-line protection
//! report (`沙箱：filesystem: landlock …`, technical names for whoever runs the grader).
//!
//! The default run grades both templates and the matmul solution; the training solution and
//! a faulty training copy (a minute and a half more) are graded in the full suite.

use gpu_labs_e2e::{faulty_copy_edits, grade, solution, workspace, Graded};
use grader::i18n::{Catalogue, Lang};

/// The catalogues whose every message exists in zh-TW.
fn catalogues() -> [&'static Catalogue; 4] {
    [
        &grader::i18n::MESSAGES,
        &grader::messages::MESSAGES,
        &grader::matmul::MESSAGES,
        &grader::training::MESSAGES,
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
/// report and the rubric's item titles (results.json's test names, `id: title`).
fn graders_words(graded: &Graded) -> String {
    let tests: Vec<&serde_json::Value> = graded.json["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let mut text = graded.stdout.clone();
    text.push('\n');
    text.push_str(graded.json["output"].as_str().unwrap_or_default());
    for test in &tests {
        text.push('\n');
        text.push_str(test["output"].as_str().unwrap_or_default());
    }
    let mut titles: Vec<&str> = tests
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter_map(|name| name.split_once(": ").map(|(_, title)| title))
        .filter(|title| !title.is_empty())
        .collect();
    // The longest first, so that a title inside another is not cut out of it first.
    titles.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let mut text = text
        .lines()
        .filter(|l| !l.starts_with("沙箱："))
        .collect::<Vec<_>>()
        .join("\n");
    for title in titles {
        text = text.replace(title, "");
    }
    text
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

#[test]
fn a_zh_tw_run_of_the_training_solution_writes_no_english_sentence() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let graded = grade(
        &workspace().join("solutions/training"),
        &["--lang", "zh-TW"],
    );
    assert_no_english(&graded);
    // Its GPU items ran (on the emulator where there is no GPU) and spoke Chinese.
    let words = graders_words(&graded);
    assert!(words.contains("逐位元相同"), "{words}");
}

#[test]
fn a_zh_tw_run_of_the_training_template_writes_no_english_sentence() {
    let graded = grade(
        &workspace().join("templates/training"),
        &["--lang", "zh-TW"],
    );
    assert_no_english(&graded);
    assert!(graded.stdout.contains("還沒實作"), "{}", graded.stdout);
}

#[test]
fn a_zh_tw_run_of_a_faulty_training_gpu_part_writes_no_english_sentence() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Three mistakes in `src/gpu.rs`, each failing one item with the messages of a part that
    // the solution's run never shows: the CPU branch trains with Adam (the trajectory
    // comparison), `to_host` zeroes the weight gradients (the round trip), and the GPU branch
    // trains on the CPU (the device-work check).
    let dir = faulty_copy_edits(
        &workspace().join("solutions/training"),
        "src/gpu.rs",
        &[
            (
                "            &mut Sgd { lr },\n",
                "            &mut crate::Adam::new(lr),\n",
            ),
            (
                "            weight_grad: matrix(&self.weight_grad)?,\n",
                "            weight_grad: Array2::zeros(shape),\n",
            ),
            (
                "            let loss = train_epoch_gpu(&mut gpu, loader, lr)?;\n            gpu.to_host(model)?;\n            Ok(loss)\n",
                "            let _ = (&mut gpu, loader);\n            Ok(crate::train_epoch(model, &mut Sgd { lr }, x, labels, batches))\n",
            ),
        ],
    );
    let items = ["cpu_fallback", "gpu_to_device", "train_on_gpu"];
    let mut args = vec!["--lang", "zh-TW", "--gpu", "emulate"];
    for item in items {
        args.extend(["--only", item]);
    }
    let graded = grade(dir.path(), &args);
    assert_no_english(&graded);
    assert_eq!(graded.lost(), items, "{}", graded.stdout);
}
