//! Enforces a rubric's `forbid` list: identifiers a function must not use, in its own body or
//! in any function of the crate it calls (found by name, transitively), in `use` lines, macros
//! or anywhere else outside function bodies. Comments and string literals are ignored, so
//! mentioning `dot` in a doc comment is fine. Bodies of functions the graded function never
//! reaches (tests, other lab functions) are not scanned.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod lexed;
mod unsafe_code;

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

/// What a token is: the unsafe rules need punctuation and literals too.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A name or keyword.
    Ident,
    /// One punctuation character.
    Punct,
    /// A number, string or char literal (its text is not kept).
    Literal,
}

/// A token with its position.
struct Token {
    kind: Kind,
    /// The identifier, the punctuation character, or empty for a literal.
    name: String,
    line: usize,
    /// Index of the function body it sits in, if any.
    body: Option<usize>,
    /// Whether `!` follows it (a macro call: `asm!`).
    bang: bool,
}

impl Token {
    fn literal(line: usize, body: Option<usize>) -> Token {
        Token {
            kind: Kind::Literal,
            name: String::new(),
            line,
            body,
            bang: false,
        }
    }

    fn punct(c: char, line: usize, body: Option<usize>) -> Token {
        Token {
            kind: Kind::Punct,
            name: c.to_string(),
            line,
            body,
            bang: false,
        }
    }

    fn is(&self, kind: Kind, name: &str) -> bool {
        self.kind == kind && self.name == name
    }
}

/// A scanned file.
struct Scanned {
    file: String,
    tokens: Vec<Token>,
    /// The name of the function owning each body.
    bodies: Vec<String>,
}

/// Looks for `forbid`den identifiers used by `function` (or what it calls) in the `.rs` files
/// under `src_dir`. `None` when clean or when the sources cannot be read.
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
            let text = std::fs::read_to_string(path).ok()?;
            let name = path
                .strip_prefix(src_dir.parent().unwrap_or(src_dir))
                .unwrap_or(path)
                .display()
                .to_string();
            Some(scan(&name, &text))
        })
        .collect();
    find_in(&scanned, function, forbid)
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

/// Tokenizes Rust source into identifiers, skipping comments, strings and char literals, and
/// records which `fn` body each identifier is in.
fn scan(file: &str, text: &str) -> Scanned {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut bodies: Vec<String> = Vec::new();
    // Stack of open braces: Some(body index) when the brace opened a fn body.
    let mut braces: Vec<Option<usize>> = Vec::new();
    let mut pending_fn: Option<String> = None;
    let mut expect_fn_name = false;
    let mut line = 1;
    let mut i = 0;
    let current_body = |braces: &Vec<Option<usize>>| braces.iter().rev().find_map(|b| *b);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || (next == Some('#') && raw_string_ahead(&chars, i + 1)))
        {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|h| chars.get(j + h) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some('\n') => {
                        line += 1;
                        j += 1;
                    }
                    Some(_) => j += 1,
                }
            }
            i = j;
            tokens.push(Token::literal(line, current_body(&braces)));
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
            tokens.push(Token::literal(line, current_body(&braces)));
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                tokens.push(Token::literal(line, current_body(&braces)));
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                tokens.push(Token::literal(line, current_body(&braces)));
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            if expect_fn_name {
                pending_fn = Some(name.clone());
                expect_fn_name = false;
            }
            if name == "fn" {
                // `fn name` declares a function; `fn(` is a function-pointer type.
                let mut j = i;
                while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                expect_fn_name = chars.get(j).is_some_and(|c| c.is_alphabetic() || *c == '_');
            }
            let mut j = i;
            while chars.get(j).is_some_and(|c| *c == ' ' || *c == '\t') {
                j += 1;
            }
            tokens.push(Token {
                kind: Kind::Ident,
                name,
                line,
                body: current_body(&braces),
                bang: chars.get(j) == Some(&'!'),
            });
        } else if c.is_ascii_digit() {
            // A number: digits, suffixes (`1u32`, `0x1f`) and a fraction (`1.5`, not `1..`).
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || (chars[i] == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            tokens.push(Token::literal(line, current_body(&braces)));
        } else if c == '{' {
            // The brace belongs to the body it opens.
            if let Some(name) = pending_fn.take() {
                bodies.push(name);
                braces.push(Some(bodies.len() - 1));
            } else {
                braces.push(None);
            }
            tokens.push(Token::punct(c, line, current_body(&braces)));
            i += 1;
        } else if c == '}' {
            tokens.push(Token::punct(c, line, current_body(&braces)));
            braces.pop();
            i += 1;
        } else if c == ';' {
            // `fn f();` in a trait has no body.
            if braces.last().copied().flatten().is_none() {
                pending_fn = None;
            }
            tokens.push(Token::punct(c, line, current_body(&braces)));
            i += 1;
        } else {
            if !c.is_whitespace() {
                tokens.push(Token::punct(c, line, current_body(&braces)));
            }
            i += 1;
        }
    }
    Scanned {
        file: file.to_string(),
        tokens,
        bodies,
    }
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

/// What a lab may not contain: (identifier, needs a `!` after it, as shown, why).
const REFUSED: &[(&str, bool, &str, &str)] = &[
    ("no_mangle", false, "#[no_mangle]", "it exports a function under a fixed C name, which can replace a function the grader's own code uses (its clock, say)"),
    ("export_name", false, "#[export_name]", "it exports a function under a fixed C name, which can replace a function the grader's own code uses (its clock, say)"),
    ("link_section", false, "#[link_section]", "it places code in a linker section, which can run it before the program starts (a static constructor)"),
    ("asm", true, "asm!", "assembly is not part of this lab"),
    ("global_asm", true, "global_asm!", "assembly is not part of this lab"),
    ("naked_asm", true, "naked_asm!", "assembly is not part of this lab"),
    ("naked", false, "#[naked]", "assembly is not part of this lab"),
    ("extern", false, "extern", "it declares or defines foreign (C) functions, which reach outside the lab's libraries; call only Rust and the lab's crates"),
    ("include", true, "include!", "it pulls code in from a file the grader does not read; keep all code in .rs files under src/ (include_str! for kernel sources is fine)"),
];

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
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Some(Refused {
                file: name,
                line: 1,
                construct: "code the grader cannot read".into(),
                why: "the file is not UTF-8 text (or cannot be read), so the grader cannot \
                      check it",
            });
        };
        let scanned = scan(&name, &text);
        if let Some(found) = refused_in(&scanned)
            .or_else(|| lexed::refused(&name, &text))
            .or_else(|| unsafe_code::refused_unsafe(&scanned))
        {
            return Some(found);
        }
    }
    None
}

fn refused_in(scanned: &Scanned) -> Option<Refused> {
    let tokens = &scanned.tokens;
    tokens.iter().enumerate().find_map(|(at, token)| {
        if token.kind != Kind::Ident {
            return None;
        }
        let (_, _, construct, why) = REFUSED
            .iter()
            .find(|(name, bang, _, _)| *name == token.name && *bang == token.bang)?;
        // `extern crate` only names a dependency.
        if token.name == "extern"
            && tokens
                .get(at + 1)
                .is_some_and(|t| t.is(Kind::Ident, "crate"))
        {
            return None;
        }
        Some(Refused {
            file: scanned.file.clone(),
            line: token.line,
            construct: construct.to_string(),
            why,
        })
    })
}

/// Whether `#…#"` follows, making `r` the start of a raw string.
fn raw_string_ahead(chars: &[char], mut j: usize) -> bool {
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
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
    let text: String = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
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
        refused_in(&scan("src/lib.rs", src)).map(|r| (r.line, r.construct))
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
                    const K: &str = include_str!(\"kernel.cu\");\nfn f(include: u8, asm: u8) -> u8 { let s = \"asm!()\"; include + asm }\n";
        assert_eq!(refused(fine), None);
    }

    #[test]
    fn the_solution_the_alternative_and_the_template_contain_nothing_refused() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for dir in [
            "solutions/matmul/src",
            "tests/fixtures/matmul_alternative/src",
            "templates/matmul/src",
        ] {
            assert_eq!(find_refused(&root.join(dir)), None, "{dir}");
        }
    }
}
