//! Official grading builds a submission against the labs' worker halves alone (the staged
//! manifest names this crate without its `judge` feature): that binary must hold no
//! supervisor, judge, rubric or sandbox set-up. The dependency graph says so: without `judge`
//! the crate stands on `grader-worker` and links neither the engine nor what only the engine
//! uses (the sandbox's Landlock and seccomp, the source scan's lexer, the rubric's TOML).

use std::process::Command;

/// The crates the labs' crate links with `features` (normal dependencies, one name a line).
fn tree(features: &[&str]) -> String {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let mut args = vec![
        "tree",
        "--offline",
        "--manifest-path",
        manifest,
        "-e",
        "normal,no-proc-macro",
        "--prefix",
        "none",
        "--no-default-features",
    ];
    let joined = features.join(",");
    if !features.is_empty() {
        args.extend(["--features", joined.as_str()]);
    }
    let out = Command::new(env!("CARGO"))
        .args(&args)
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn links(tree: &str, name: &str) -> bool {
    tree.lines()
        .any(|l| l.split_whitespace().next() == Some(name))
}

#[test]
fn the_worker_halves_link_no_engine() {
    let worker = tree(&["matmul", "training"]);
    assert!(links(&worker, "grader-worker"), "{worker}");
    for supervisor_only in [
        "grader-engine",
        "landlock",
        "seccompiler",
        "proc-macro2",
        "toml",
    ] {
        assert!(
            !links(&worker, supervisor_only),
            "{supervisor_only} in:\n{worker}"
        );
    }
    // The twin: with its judging half the crate does stand on the engine, so the test above
    // can fail.
    let judging = tree(&["matmul", "training", "judge"]);
    assert!(links(&judging, "grader-engine"), "{judging}");
}
