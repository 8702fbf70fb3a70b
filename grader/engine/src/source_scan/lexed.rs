//! The scan's check with a real Rust lexer (`proc-macro2`'s, the one procedural macros use:
//! raw strings, nested comments, raw identifiers and byte literals as rustc reads them), so
//! that nothing the compiler reads as code hides from the scan as a comment or a string.
//!
//! A `.rs` file it cannot lex is refused (the scan cannot follow it). In every file, besides
//! the names the hand-written scan refuses, it refuses what lets the compiler read code the
//! scan does not: `#[path]` (a module from any file, `.txt` included) and attributes built by
//! a macro (`#[$a]`, which could assemble any of the refused ones); and `#[used]`, which keeps
//! a static the linker would drop (a constructor's table entry).

use super::{Refused, REFUSED};
use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// Why `#[path]` and macro-built attributes are refused.
const HIDES_CODE: &str =
    "it makes the compiler read code from a file or a piece the grader does not \
     read as code; keep every module in its own .rs file under src/ (include_str! for kernel \
     sources is fine)";

/// The first refused construct in `text` (the file `file`), or `None`.
pub fn refused(file: &str, text: &str) -> Option<Refused> {
    let tokens: TokenStream = match text.parse() {
        Ok(tokens) => tokens,
        Err(e) => {
            return Some(Refused {
                file: file.to_string(),
                line: e.span().start().line,
                construct: "code the grader cannot read".into(),
                why: "the grader's Rust lexer cannot read this file (an unclosed string or \
                      comment, say), so it cannot check it; fix it as the compiler says",
            });
        }
    };
    walk(file, tokens, false)
}

/// Looks through `tokens` (inside an attribute when `in_attribute`).
fn walk(file: &str, tokens: TokenStream, in_attribute: bool) -> Option<Refused> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (at, tree) in trees.iter().enumerate() {
        let refuse = |line: usize, construct: &str, why: &'static str| {
            Some(Refused {
                file: file.to_string(),
                line,
                construct: construct.to_string(),
                why,
            })
        };
        match tree {
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name);
                let line = ident.span().start().line;
                let bang =
                    matches!(trees.get(at + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                let after_crate =
                    matches!(trees.get(at + 1), Some(TokenTree::Ident(i)) if i == "crate");
                if let Some((_, _, construct, why)) = REFUSED
                    .iter()
                    .find(|(n, needs_bang, _, _)| *n == name && *needs_bang == bang)
                {
                    if !(name == "extern" && after_crate) {
                        return refuse(line, construct, why);
                    }
                }
                if in_attribute && name == "path" {
                    return refuse(line, "#[path]", HIDES_CODE);
                }
                if in_attribute && name == "used" {
                    return refuse(
                        line,
                        "#[used]",
                        "it keeps a static in the program that nothing uses, which is how a \
                         static constructor is planted",
                    );
                }
            }
            TokenTree::Punct(p) if in_attribute && p.as_char() == '$' => {
                return refuse(p.span().start().line, "#[$…]", HIDES_CODE);
            }
            TokenTree::Punct(p) if p.as_char() == '#' => {
                // `#[…]` or `#![…]`: what is inside is an attribute.
                let next = match trees.get(at + 1) {
                    Some(TokenTree::Punct(bang)) if bang.as_char() == '!' => trees.get(at + 2),
                    other => other,
                };
                if let Some(TokenTree::Group(g)) = next {
                    if g.delimiter() == Delimiter::Bracket {
                        if let Some(found) = walk(file, g.stream(), true) {
                            return Some(found);
                        }
                    }
                }
            }
            TokenTree::Group(g) => {
                if let Some(found) = walk(file, g.stream(), in_attribute) {
                    return Some(found);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::refused;

    fn construct(text: &str) -> Option<(usize, String)> {
        refused("src/lib.rs", text).map(|r| (r.line, r.construct))
    }

    #[test]
    fn what_hides_code_from_the_scan_is_refused() {
        let path = "fn f() {}\n#[path = \"ctor.txt\"]\nmod ctor;\n";
        assert_eq!(construct(path), Some((2, "#[path]".into())));
        let wrapped = "#[cfg_attr(all(), path = \"ctor.txt\")]\nmod ctor;\n";
        assert_eq!(construct(wrapped), Some((1, "#[path]".into())));
        let built = "macro_rules! m { ($a:meta) => { #[$a] static X: u8 = 0; } }\n";
        assert_eq!(construct(built), Some((1, "#[$…]".into())));
        let used = "#[used]\nstatic X: u8 = 0;\n";
        assert_eq!(construct(used), Some((1, "#[used]".into())));
        let raw = "#[unsafe(r#link_section = \".init_array\")]\nstatic X: u8 = 0;\n";
        assert_eq!(construct(raw), Some((1, "#[link_section]".into())));
    }

    #[test]
    fn code_after_strings_and_comments_a_hand_lexer_may_misread_is_seen() {
        // A raw string with a quote and hashes, a nested comment, a byte char: the code after
        // them is code.
        let raw = "const S: &str = r##\"a \"# b\"##;\n#[no_mangle]\npub fn f() {}\n";
        assert_eq!(construct(raw), Some((2, "#[no_mangle]".into())));
        let nested = "/* a /* b */ c */\nglobal_asm!(\"\");\n";
        assert_eq!(construct(nested), Some((2, "global_asm!".into())));
        let byte = "const B: u8 = b'\"';\n#[export_name = \"x\"]\npub fn f() {}\n";
        assert_eq!(construct(byte), Some((2, "#[export_name]".into())));
        let unclosed = "const S: &str = \"never closed;\n";
        assert_eq!(
            construct(unclosed).map(|c| c.1),
            Some("code the grader cannot read".into())
        );
    }

    #[test]
    fn ordinary_code_is_not_refused() {
        let fine = "use std::path::Path;\n#[derive(Debug)]\n#[allow(unused)]\nstruct S { path: u8, used: u8 }\n\
                    extern crate rayon;\nconst K: &str = include_str!(\"kernel.cu\");\n\
                    fn f(path: &Path) -> bool { let used = 1; path.exists() && used == 1 }\n";
        assert_eq!(construct(fine), None);
    }
}
