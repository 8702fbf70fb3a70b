//! The source rules: what a lab's `.rs` files may not contain ([`find_refused`]: code that runs
//! outside the graded functions or reaches outside the lab's libraries), a rubric's `forbid`
//! list ([`find_forbidden`]: identifiers a function must not use, in its own body or in any
//! function of the crate it calls, found by name, transitively, in `use` lines, macros or
//! anywhere else outside function bodies) and its `require` list ([`find_missing`]).
//!
//! Every rule reads the tokens of one lexer, rustc's own rules as `proc-macro2` implements them
//! ([`tokens`]), so comments and string literals are ignored (mentioning `dot` in a doc comment
//! is fine) and nothing the compiler reads as code hides in one. Bodies of functions the graded
//! function never reaches (tests, other lab functions) are not searched for `forbid`den names.
//! The scan is the second wall, never the first: the sandbox holds without it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod attributes;
pub mod listing;
mod names;
mod tokens;
mod unsafe_code;

use tokens::{Kind, Scanned};

/// Where a forbidden identifier was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The file, relative to the crate's `src/` parent when possible.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The identifier found.
    pub name: String,
}

/// Looks for `forbid`den identifiers used by `function` (or what it calls) in the `.rs` files
/// under `src_dir`. `None` when clean or when the sources cannot be read or lexed (grading
/// refuses such a file first: [`find_refused`]).
pub fn find_forbidden(src_dir: &Path, function: &str, forbid: &[String]) -> Option<Hit> {
    if forbid.is_empty() {
        return None;
    }
    let mut files = Vec::new();
    collect_rs(src_dir, &mut files);
    files.sort();
    let scanned: Vec<Scanned> = files
        .iter()
        .filter_map(|path| {
            let text = read_source(path).ok()?;
            let name = path
                .strip_prefix(src_dir.parent().unwrap_or(src_dir))
                .unwrap_or(path)
                .display()
                .to_string();
            tokens::lex(&name, &text).ok()
        })
        .collect();
    find_in(&scanned, function, forbid)
}

/// The first construct a lab may not contain in `text` (the file `file`), or `None`.
fn refused_in(file: &str, text: &str) -> Option<Refused> {
    let scanned = match tokens::lex(file, text) {
        Ok(scanned) => scanned,
        Err(cannot_read) => return Some(cannot_read),
    };
    names::refused(&scanned)
        .or_else(|| attributes::refused(&scanned))
        .or_else(|| unsafe_code::refused_unsafe(&scanned))
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn find_in(scanned: &[Scanned], function: &str, forbid: &[String]) -> Option<Hit> {
    // Which bodies belong to which function name, across files.
    let mut bodies_of: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for (f, s) in scanned.iter().enumerate() {
        for (b, name) in s.bodies.iter().enumerate() {
            bodies_of.entry(name.as_str()).or_default().push((f, b));
        }
    }
    // Functions reachable from `function` by name.
    let mut reached: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut queue: Vec<(usize, usize)> = bodies_of.get(function).cloned().unwrap_or_default();
    while let Some(body) = queue.pop() {
        if !reached.insert(body) {
            continue;
        }
        for t in scanned[body.0]
            .tokens
            .iter()
            .filter(|t| t.body == Some(body.1) && t.kind == Kind::Ident)
        {
            if let Some(callees) = bodies_of.get(t.name.as_str()) {
                queue.extend(callees.iter().filter(|c| !reached.contains(c)));
            }
        }
    }
    for (f, s) in scanned.iter().enumerate() {
        for t in &s.tokens {
            let counts = match t.body {
                None => true,
                Some(b) => reached.contains(&(f, b)),
            };
            if counts && t.kind == Kind::Ident && forbid.iter().any(|x| x == &t.name) {
                return Some(Hit {
                    file: s.file.clone(),
                    line: t.line,
                    name: t.name.clone(),
                });
            }
        }
    }
    None
}

/// Code a lab may not contain, found in a submission's sources: it runs outside the graded
/// functions or reaches outside the lab's libraries.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The file, relative to the crate's `src/` parent when possible.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What was found, as written (`#[no_mangle]`, `asm!`).
    pub construct: String,
    /// Why a lab may not contain it, in a student's words.
    pub why: &'static str,
}

/// A test hook: `GPU_LABS_SOURCE_SCAN=off-for-tests` refuses nothing, so that tests can show
/// the sandbox holds on its own against code the scan would have refused (it is the second
/// wall, not the first).
pub const SCAN_SWITCH: &str = "GPU_LABS_SOURCE_SCAN";

/// The first construct a lab may not contain in the `.rs` files under `src_dir` (comments and
/// strings do not count), or `None`.
pub fn find_refused(src_dir: &Path) -> Option<Refused> {
    if std::env::var(SCAN_SWITCH).is_ok_and(|v| v == "off-for-tests") {
        return None;
    }
    let mut files = Vec::new();
    collect_rs(src_dir, &mut files);
    files.sort();
    for path in files {
        let name = path
            .strip_prefix(src_dir.parent().unwrap_or(src_dir))
            .unwrap_or(&path)
            .display()
            .to_string();
        let Ok(text) = read_source(&path) else {
            return Some(Refused {
                file: name,
                line: 1,
                construct: "code the grader cannot read".into(),
                why: "the file is not UTF-8 text (or cannot be read), so the grader cannot \
                      check it",
            });
        };
        if let Some(found) = refused_in(&name, &text) {
            return Some(found);
        }
    }
    None
}

/// The first of `required` that appears nowhere in the `.rs` and `.cu` files under `src_dir`
/// (kernels live in string literals, so this is a plain text search). `None` when all appear
/// or nothing is required.
pub fn find_missing(src_dir: &Path, required: &[String]) -> Option<String> {
    if required.is_empty() {
        return None;
    }
    let mut files = Vec::new();
    collect_rs(src_dir, &mut files);
    collect_ext(src_dir, "cu", &mut files);
    let text: String = files.iter().filter_map(|p| read_source(p).ok()).collect();
    required
        .iter()
        .find(|r| !text.contains(r.as_str()))
        .cloned()
}

fn collect_ext(dir: &Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_ext(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Lexes `text` for a test, which expects it to lex.
/// A staged source file's text (intake took it within its limits).
fn read_source(path: &Path) -> Result<String, crate::intake::Refusal> {
    crate::intake::read_text(path, crate::intake::SOURCES.file_bytes, "")
}

#[cfg(test)]
fn scan(file: &str, text: &str) -> Scanned {
    match tokens::lex(file, text) {
        Ok(scanned) => scanned,
        Err(refused) => panic!("{file} does not lex: {}", refused.why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str, function: &str) -> Option<(usize, String)> {
        let s = scan("src/lib.rs", src);
        find_in(
            &[s],
            function,
            &["dot".to_string(), "general_mat_mul".to_string()],
        )
        .map(|h| (h.line, h.name))
    }

    #[test]
    fn a_direct_call_is_found_with_its_line() {
        let src = "pub fn fast(a: &A, b: &A) -> A {\n    a.dot(b)\n}\n";
        assert_eq!(check(src, "fast"), Some((2, "dot".into())));
    }

    #[test]
    fn a_call_through_a_helper_is_found() {
        let src = "fn helper(a: &A) -> A { a.dot(a) }\npub fn fast(a: &A) -> A { helper(a) }\n";
        assert_eq!(check(src, "fast"), Some((1, "dot".into())));
    }

    #[test]
    fn comments_strings_and_unreached_functions_do_not_count() {
        let src = "/// Unlike `dot`, this is mine.\npub fn fast(a: &A) -> A { let _s = \"dot\"; mine(a) }\n\
                   fn mine(a: &A) -> A { a.clone() } // not dot\n\
                   pub fn naive(a: &A) -> A { a.dot(a) }\n#[cfg(test)] mod t { fn x() { a.dot(b); } }\n";
        assert_eq!(check(src, "fast"), None);
    }

    #[test]
    fn a_use_line_counts_everywhere() {
        let src = "use ndarray::linalg::general_mat_mul as g;\npub fn fast() { g() }\n";
        assert_eq!(check(src, "fast"), Some((1, "general_mat_mul".into())));
    }

    #[test]
    fn function_pointer_types_are_not_functions() {
        let src = "pub fn fast(g: fn(u8) -> u8) -> u8 { helper() }\nfn helper() -> u8 { dot() }\n";
        assert_eq!(check(src, "fast"), Some((2, "dot".into())));
    }

    #[test]
    fn lifetimes_and_chars_do_not_confuse_the_scanner() {
        let src = "pub fn fast<'a>(a: &'a A) -> char { let c = '{'; let d = '\\''; a.dot(c) }\n";
        assert_eq!(check(src, "fast"), Some((1, "dot".into())));
    }

    #[test]
    fn required_text_is_found_in_kernel_strings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("gpu.rs"),
            "const K: &str = \"__shared__ float t[16]; __syncthreads();\";",
        )
        .unwrap();
        let req = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            find_missing(dir.path(), &req(&["__shared__", "__syncthreads"])),
            None
        );
        assert_eq!(
            find_missing(dir.path(), &req(&["atomicAdd"])),
            Some("atomicAdd".into())
        );
    }

    fn refused(src: &str) -> Option<(usize, String)> {
        refused_in("src/lib.rs", src).map(|r| (r.line, r.construct))
    }

    #[test]
    fn code_that_runs_outside_the_graded_functions_is_found_with_its_line() {
        let clock =
            "use std::x;\n#[unsafe(no_mangle)]\npub extern \"C\" fn clock_gettime() -> i32 { 0 }\n";
        assert_eq!(refused(clock), Some((2, "#[no_mangle]".into())));
        let ctor = "#[used]\n#[link_section = \".init_array\"]\nstatic S: fn() = f;\n";
        assert_eq!(refused(ctor), Some((2, "#[link_section]".into())));
        let block = "unsafe extern \"C\" {\n    fn time(t: *mut i64) -> i64;\n}\n";
        assert_eq!(refused(block), Some((1, "extern".into())));
        assert_eq!(
            refused("fn f() { unsafe { core::arch::asm!(\"nop\") } }"),
            Some((1, "asm!".into()))
        );
        assert_eq!(
            refused("include!(\"../secret.txt\");"),
            Some((1, "include!".into()))
        );
    }

    #[test]
    fn comments_strings_and_ordinary_names_are_not_refused() {
        let fine = "// no_mangle in a comment\n/// `extern \"C\"` in a doc\nextern crate rayon;\n\
                    const K: &str = include_str!(\"kernel.cu\");\nfn f(included: u8, asm_like: u8) -> u8 { let s = \"asm!()\"; included + asm_like }\n";
        assert_eq!(refused(fine), None);
        // A macro's name is refused even as a name of one's own: `use std::include as x;`
        // would reach the macro with nothing else written.
        assert_eq!(
            refused("fn f(include: u8) -> u8 { include }"),
            Some((1, "include".into()))
        );
    }

    #[test]
    fn each_trick_that_hid_unsafe_code_from_the_hand_written_lexer_is_refused() {
        // The old lexer read `br"\"` as `br` and a string whose `\"` is an escape, so the
        // string ran on to the next quote and the code between was text to it.
        let peek = "pub fn peek(a: usize) -> u8 {\n    unsafe { *(a as *const u8) }\n}";
        let bits = "pub fn bits(x: f32) -> u32 {\n    unsafe { std::mem::transmute(x) }\n}";
        for (before, after) in [
            ("const B: &[u8] = br\"\\\";", "const C: &str = \"\";"),
            ("const B: &[u8] = br#\"\\\"#;", "const C: &str = \"\";"),
            (
                "const B: &core::ffi::CStr = cr\"\\\";",
                "const C: &str = \"\";",
            ),
            ("const S: &str = r#\"a\" \"b\"#;", ""),
            ("/* a /* b */ c */", "/* d */"),
            (
                "const Q: [char; 3] = ['\\'', '\"', 'a'];\nfn g<'a>(x: &'a u8) -> &'a u8 { x }",
                "",
            ),
            ("const B: [u8; 2] = [b'\\'', b'\"'];", ""),
        ] {
            for (code, construct) in [
                (peek, "*pointer inside unsafe"),
                (bits, "transmute(…) inside unsafe"),
            ] {
                let text = format!("{before}\n{code}\n{after}\n");
                let line = before.lines().count() + 2;
                assert_eq!(
                    refused(&text),
                    Some((line, construct.to_string())),
                    "{text}"
                );
            }
        }
        // A first line rustc skips as a script's (`#!`) opens no comment for it.
        let shebang = format!("#!/usr/bin/env run /*\n{peek}\n// */\n");
        assert_eq!(
            refused(&shebang),
            Some((1, "code the grader cannot read".into()))
        );
    }

    #[test]
    fn a_forbidden_macro_reached_through_a_renamed_import_is_refused() {
        for (text, construct) in [
            (
                "use core::arch::global_asm as notes;\nnotes!(\".section .init_array\");",
                "global_asm",
            ),
            (
                "use std::include as notes;\nnotes!(\"../plan.txt\");",
                "include",
            ),
            ("pub use core::arch::asm as a;", "asm"),
        ] {
            assert_eq!(refused(text), Some((1, construct.to_string())), "{text}");
        }
    }

    #[test]
    fn the_solution_the_alternative_and_the_template_contain_nothing_refused() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for dir in [
            "solutions/matmul/src",
            "tests/fixtures/matmul_alternative/src",
            "templates/matmul/src",
            "solutions/training/src",
            "tests/fixtures/training_alternative/src",
            "templates/training/src",
        ] {
            assert_eq!(find_refused(&root.join(dir)), None, "{dir}");
        }
    }
}
