//! The grader's floors. Cargo keeps its three crates from forming a circle (`grader-engine` →
//! `grader-labs` → `grader`); this test keeps the top-level modules inside each crate in
//! layers too: no module reaches, through `crate::` paths, a module that reaches it back. A
//! folder module (its `mod.rs` and the files under it) counts as one module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("read the crate's sources")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments and its unit tests.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names right after each `crate::` in `code`, and inside `crate::{…}`.
fn reached(code: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `grader_engine::…` is another crate, `some_crate::…` too
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            found.extend(group.split(',').map(|n| word(n.trim())));
        } else {
            found.insert(word(rest));
        }
    }
    found.retain(|n| !n.is_empty());
    found
}

/// Each top-level module of the crate at `src` and the top-level modules it reaches.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let module = |file: &Path| -> String {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a name");
        first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string()
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let name = module(file);
        let text = std::fs::read_to_string(file).expect("read a source");
        let reaches = graph.entry(name.clone()).or_default();
        reaches.extend(reached(&code(&text)).into_iter().filter(|m| *m != name));
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    for reaches in graph.values_mut() {
        reaches.retain(|m| names.contains(m));
    }
    graph
}

/// A circle in `graph`, as the modules along it, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut found = path[start..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_modules_of_each_grader_crate_stand_in_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("grader");
    // The labs crate's modules are the labs, which reach nothing (each_lab_stands_alone).
    for src in [root.join("engine/src"), root.join("src")] {
        let graph = graph(&src);
        assert!(graph.len() > 1, "{} has modules", src.display());
        assert!(
            graph.values().any(|reaches| !reaches.is_empty()),
            "{}: no module reaches another (the scan reads nothing)",
            src.display()
        );
        if let Some(found) = circle(&graph) {
            panic!(
                "{}: the modules {} reach each other in a circle; move what both need into a \
                 module below them",
                src.display(),
                found.join(" → ")
            );
        }
    }
}

#[test]
fn each_lab_stands_alone() {
    let labs = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("grader/labs/src"));
    for lab in ["matmul", "training"] {
        let reaches = labs
            .get(lab)
            .unwrap_or_else(|| panic!("the labs crate has `{lab}`"));
        assert!(
            reaches.is_empty(),
            "`{lab}` reaches {reaches:?}: a lab needs no other lab"
        );
    }
}

#[test]
fn the_engine_reads_as_floors() {
    let engine = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("grader/engine/src"));
    let reaches = |from: &str, to: &str| engine.get(from).is_some_and(|r| r.contains(to));
    // The checks stand on the rubric, the rubric on what grading a submission needs.
    assert!(reaches("check", "rubric") && reaches("rubric", "context"));
    assert!(!reaches("report", "rubric") && !reaches("supervisor", "rubric"));
}

#[test]
fn the_engine_names_no_lab() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("grader");
    let manifest = std::fs::read_to_string(root.join("engine/Cargo.toml")).expect("manifest");
    assert!(
        !manifest.contains("grader-labs"),
        "the engine depends on the labs"
    );
    let mut files = Vec::new();
    sources(&root.join("engine/src"), &mut files);
    for file in files {
        let text = code(&std::fs::read_to_string(&file).expect("read a source"));
        for lab in ["grader_labs", "labs::matmul", "labs::training", "::LABS"] {
            assert!(!text.contains(lab), "{} names `{lab}`", file.display());
        }
    }
}

#[test]
fn the_check_finds_a_circle_it_is_shown() {
    let mut graph = BTreeMap::new();
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")];
    for (from, to) in edges {
        graph
            .entry(from.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(to.to_string());
        graph.entry(to.to_string()).or_insert_with(BTreeSet::new);
    }
    let found = circle(&graph).expect("a circle");
    assert_eq!(found.first(), found.last());
    assert_eq!(found.len(), 4);
    graph.get_mut("c").expect("c").clear();
    assert_eq!(circle(&graph), None);
    assert_eq!(
        reached("use crate::{a, b::C};\nlet x = crate::c::d();\nmy_crate::e();"),
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    );
}
