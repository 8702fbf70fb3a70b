//! End-to-end: the hostile corpus of `tests/hostile/` (one small edit of the matmul solution per
//! attack: code that runs before `main`, processes that outlive or escape their worker, memory
//! spread over processes, limits raised back, a yardstick slowed from outside, a build that
//! never ends) graded in one batch beside honest submissions. Each hostile one loses only its
//! own items, with a message naming what it tried; each honest one gets exactly the grade it
//! gets alone; nothing outside the workers' scratch folders changes; no process is left.

use gpu_labs_e2e::{copy_crate, grader_bin, solution, workspace};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One attack of the corpus, read from its file's `// key: value` header.
struct Attack {
    name: String,
    /// Where its code goes: `items` (before `matmul_naive`), `naive` (first in its body),
    /// `wrap-fast` (before `matmul_fast`, which becomes `matmul_fast_inner`).
    at: String,
    code: String,
    /// Another file of `src/` and its text.
    extra: Option<(String, String)>,
    lost: Vec<String>,
    status: String,
    says: String,
    /// Text in the command line of every process it starts.
    marker: Option<String>,
    /// An honest submission whose CPU speedup it must not beat by half (it tries to slow the
    /// yardstick).
    no_faster_than: Option<String>,
}

const NAIVE: &str = "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n";
const FAST: &str = "pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n";

fn corpus() -> Vec<Attack> {
    let dir = workspace().join("tests/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/hostile")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("an attack");
            let (text, extra) = match text.split_once("\n// ---- ") {
                Some((code, rest)) => {
                    let (name, body) = rest.split_once('\n').expect("an extra file's name");
                    (code.to_string(), Some((name.to_string(), body.to_string())))
                }
                None => (text, None),
            };
            let mut header = BTreeMap::new();
            let mut code = String::new();
            for line in text.lines() {
                match line
                    .strip_prefix("// ")
                    .and_then(|l| l.split_once(": "))
                    .filter(|_| code.is_empty())
                {
                    Some((key, value)) => {
                        header.insert(key.to_string(), value.to_string());
                    }
                    None => {
                        code.push_str(line);
                        code.push('\n');
                    }
                }
            }
            let get = |key: &str| header.get(key).cloned().unwrap_or_default();
            assert!(
                !get("tries").is_empty(),
                "{}: says what it tries",
                path.display()
            );
            Attack {
                name: path
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .replace('_', "-"),
                at: get("at"),
                code,
                extra,
                lost: get("lost")
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
                status: header.get("status").cloned().unwrap_or("graded".into()),
                says: get("says"),
                marker: header.get("marker").cloned(),
                no_faster_than: header.get("no-faster-than").cloned(),
            }
        })
        .collect()
}

/// Makes `attack`'s submission in `to`.
fn make(attack: &Attack, to: &Path) {
    copy_crate(&solution(), to);
    let lib = to.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("lib.rs");
    let (find, replace) = match attack.at.as_str() {
        "items" => (NAIVE, format!("{}\n{NAIVE}", attack.code)),
        "naive" => (NAIVE, format!("{NAIVE}{}", attack.code)),
        "wrap-fast" => (
            FAST,
            format!(
                "{}\nfn matmul_fast_inner(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n",
                attack.code
            ),
        ),
        other => panic!("{}: unknown place {other:?}", attack.name),
    };
    assert_eq!(text.matches(find).count(), 1, "{}", attack.name);
    std::fs::write(&lib, text.replace(find, &replace)).expect("write lib.rs");
    if let Some((name, body)) = &attack.extra {
        std::fs::write(to.join("src").join(name), body).expect("the extra file");
    }
}

/// A hash of every file under `dir` (names and contents).
fn tree_hash(dir: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for file in files {
        file.hash(&mut hasher);
        std::fs::read(&file).unwrap_or_default().hash(&mut hasher);
    }
    hasher.finish()
}

/// The CPU speedup a feedback.md shows ("21.5× faster than naive").
fn speedup_in(feedback: &str) -> f64 {
    feedback
        .lines()
        .find(|l| l.contains("faster than naive"))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_suffix('×').and_then(|n| n.parse().ok()))
        })
        .unwrap_or_else(|| panic!("no speedup in:\n{feedback}"))
}

/// Each item's score in a results.json.
fn scores(results: &Value) -> BTreeMap<String, f64> {
    results["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["extra_data"]["item"].as_str().unwrap_or("").to_string(),
                t["score"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect()
}

#[test]
fn every_attack_says_what_it_tries_and_a_path_module_is_refused_before_any_build() {
    let attacks = corpus();
    assert!(attacks.len() >= 8, "the corpus");
    let attack = attacks
        .iter()
        .find(|a| a.name == "path-module")
        .expect("path_module.rs");
    let dir = tempfile::tempdir().expect("temp dir");
    make(attack, dir.path());
    let g = gpu_labs_e2e::grade(dir.path(), &["--gpu", "off"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(
        g.output("naive_correct").contains(&attack.says),
        "{}",
        g.stdout
    );
    assert!(!Path::new("/tmp/planted-by-path-module").exists());
}

#[test]
fn the_hostile_corpus_graded_beside_honest_submissions_moves_no_other_grade() {
    if !gpu_labs_e2e::full_suite() {
        eprintln!("full suite only (GPU_LABS_FULL=1): a batch of the whole hostile corpus");
        return;
    }
    let attacks = corpus();
    let class = tempfile::Builder::new()
        .prefix("hostile-class-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    copy_crate(&solution(), &subs.join("alice"));
    copy_crate(&solution(), &subs.join("carol"));
    gpu_labs_e2e::use_alternative_matmul_sources(&subs.join("carol"));
    for attack in &attacks {
        make(attack, &subs.join(&attack.name));
    }
    // A folder of the instructor's beside the class, which no worker may change.
    let private = class.path().join("private");
    std::fs::create_dir_all(&private).expect("mkdir");
    std::fs::write(private.join("answers.txt"), "the key").expect("plant");
    let before = (
        tree_hash(&subs),
        tree_hash(&private),
        tree_hash(&solution()),
    );

    let ipc_before = gpu_labs_e2e::ipc_objects();
    let seed = ["--seed", "2024", "--gpu", "off"];
    let alone: BTreeMap<&str, BTreeMap<String, f64>> = ["alice", "carol"]
        .into_iter()
        .map(|name| {
            let g = gpu_labs_e2e::grade(&subs.join(name), &seed);
            assert_eq!(g.code, Some(0), "{}", g.stderr);
            (name, scores(&g.json))
        })
        .collect();

    // The instructor's shell allows any stack: the workers must not inherit that.
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -s unlimited 2>/dev/null; exec \"$0\" \"$@\"",
            grader_bin().to_str().expect("utf-8 path"),
            "batch",
            "submissions",
            "--assignment",
            "matmul",
            "--jobs",
            "2",
        ])
        .args(seed)
        .current_dir(class.path())
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .env("GPU_LABS_BUILD_CPU_SECS", "30")
        .output()
        .expect("grader runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let feedback = class.path().join("feedback");
    let results = |name: &str| -> Value {
        serde_json::from_slice(
            &std::fs::read(feedback.join(name).join("results.json")).expect("results.json"),
        )
        .expect("JSON")
    };
    for (name, scores_alone) in &alone {
        assert_eq!(
            &scores(&results(name)),
            scores_alone,
            "{name}: the same grade in the batch as alone\n{}",
            std::fs::read_to_string(feedback.join(name).join("feedback.md")).unwrap_or_default()
        );
    }
    let gradebook = std::fs::read_to_string(class.path().join("grades.csv")).expect("grades.csv");
    for attack in &attacks {
        let name = &attack.name;
        let text = std::fs::read_to_string(feedback.join(name).join("feedback.md"))
            .unwrap_or_else(|_| panic!("{name} has feedback"));
        assert!(
            text.contains(&attack.says),
            "{name}'s feedback should say {:?}:\n{text}",
            attack.says
        );
        let row = gradebook
            .lines()
            .find(|l| l.starts_with(&format!("{name},")))
            .unwrap_or_else(|| panic!("{name} in the gradebook"));
        assert!(
            row.contains(&attack.status),
            "{name}: {} expected in {row}",
            attack.status
        );
        if attack.status == "graded" {
            let got = scores(&results(name));
            let lost: Vec<&String> = got
                .iter()
                .filter(|(id, score)| alone["alice"].get(*id).is_some_and(|full| *score < full))
                // A speed item's points depend on this machine: counted only where expected.
                .filter(|(id, _)| !id.ends_with("_speedup") || attack.lost.contains(id))
                .map(|(id, _)| id)
                .collect();
            let lost: Vec<String> = lost.into_iter().cloned().collect();
            assert_eq!(lost, attack.lost, "{name}: only its own items\n{text}");
        }
        if let Some(honest) = &attack.no_faster_than {
            let theirs = std::fs::read_to_string(feedback.join(honest).join("feedback.md"))
                .expect("the honest feedback");
            let (x, h) = (speedup_in(&text), speedup_in(&theirs));
            assert!(x < h * 1.5, "{name}: {x}× against {honest}'s {h}×");
        }
        if let Some(marker) = &attack.marker {
            assert_eq!(
                gpu_labs_e2e::live_processes_with(marker),
                Vec::<String>::new(),
                "{name} left processes"
            );
        }
    }
    let after = (
        tree_hash(&subs),
        tree_hash(&private),
        tree_hash(&solution()),
    );
    assert_eq!(
        before, after,
        "nothing outside the workers' scratch folders changed"
    );
    assert!(!Path::new("/tmp/planted-by-path-module").exists());
    let ipc_left: Vec<String> = gpu_labs_e2e::ipc_objects()
        .into_iter()
        .filter(|o| !ipc_before.contains(o))
        .collect();
    assert!(
        ipc_left.is_empty(),
        "IPC objects outlived the batch: {ipc_left:?}"
    );
}
