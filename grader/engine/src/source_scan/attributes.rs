//! Attributes that make the compiler read code the rules do not, or keep what nothing uses:
//! `#[path]` (a module from any file, `.txt` included), `#[used]` (a static the linker would
//! drop: a constructor's table entry) and attributes built by a macro (`#[$a]`, which could
//! assemble any of them). The names [`super::names`] refuses anywhere are not repeated here.
//!
//! `path` and `used` are ordinary words outside attributes (`path: &Path`), so they are
//! refused only where an attribute can be made of them: inside `#[…]` (`cfg_attr` included)
//! and inside a macro the crate controls (a `macro_rules!` body, or the arguments of a macro
//! that is not one of the standard library's or ndarray's, whose expansions are fixed), since
//! such a macro can put `#`, a bracket and a name passed as separate pieces back together.
//! So that a standard name always means the standard macro, a `macro_rules!` named like one,
//! or a `use … as` that gives one its name, is refused. Outside a macro, an attribute is
//! `#[…]` written out, and the rule sees it whole.

use super::tokens::{in_macros, Kind, Scanned, Token};
use super::Refused;

/// Why `#[path]` and macro-built attributes are refused.
const HIDES_CODE: &str =
    "it makes the compiler read code from a file or a piece the grader does not \
     read as code; keep every module in its own .rs file under src/ (include_str! for kernel \
     sources is fine)";

/// Why `#[used]` is refused.
const KEEPS: &str = "it keeps a static in the program that nothing uses, which is how a static \
                     constructor is planted";

/// Why `path` and `used` are refused inside a macro.
const IN_MACRO: &str = "inside a macro (its arguments or a `macro_rules!` body) this name can be \
                        put together into an attribute (`#[path]`, `#[used]`) that makes the \
                        compiler read another file or keep a static constructor; use another \
                        name there";

/// Why a macro may not take a standard macro's name.
const TAKES_A_STANDARD_NAME: &str = "a macro of the crate named like a standard one would \
                                     make `println!` and the like mean something else; give it \
                                     a name of its own";

/// Macros whose expansion is fixed (the standard library's and ndarray's): what they are given
/// never becomes an attribute, so the words `path` and `used` are fine in their arguments.
const FIXED_MACROS: &[&str] = &[
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "format_args",
    "write",
    "writeln",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "vec",
    "dbg",
    "matches",
    "todo",
    "unimplemented",
    "unreachable",
    "array",
    "s",
];

/// The first refused attribute in `scanned`, or `None`.
pub(super) fn refused(scanned: &Scanned) -> Option<Refused> {
    let tokens = &scanned.tokens;
    let in_attribute = attribute_tokens(scanned);
    let in_macro = in_open_macros(tokens);
    tokens.iter().enumerate().find_map(|(at, t)| {
        let named_after = |before: &str| {
            // The token before, `!` skipped (`macro_rules! name`).
            let previous = tokens[..at].iter().rev().find(|p| !p.is(Kind::Punct, "!"));
            previous.is_some_and(|p| p.is(Kind::Ident, before))
                && FIXED_MACROS.contains(&t.name.as_str())
        };
        if t.kind == Kind::Ident && (named_after("macro_rules") || named_after("as")) {
            return Some(Refused {
                file: scanned.file.clone(),
                line: t.line,
                construct: format!("a macro named `{}`", t.name),
                why: TAKES_A_STANDARD_NAME,
            });
        }
        let (construct, why) = match (t.kind, t.name.as_str()) {
            (Kind::Punct, "$") if in_attribute[at] => ("#[$…]".to_string(), HIDES_CODE),
            (Kind::Ident, "path") if in_attribute[at] => ("#[path]".into(), HIDES_CODE),
            (Kind::Ident, "used") if in_attribute[at] => ("#[used]".into(), KEEPS),
            (Kind::Ident, name @ ("path" | "used")) if in_macro[at] => {
                (format!("{name} inside a macro"), IN_MACRO)
            }
            _ => return None,
        };
        Some(Refused {
            file: scanned.file.clone(),
            line: t.line,
            construct,
            why,
        })
    })
}

/// For each token, whether it sits inside a macro the crate controls: [`in_macros`] less the
/// arguments of the [`FIXED_MACROS`].
fn in_open_macros(tokens: &[Token]) -> Vec<bool> {
    let mut inside = in_macros(tokens);
    for (at, t) in tokens.iter().enumerate() {
        // Not a call that itself sits in a macro (a `macro_rules!` body, where `$…` can be
        // anything): that macro's tokens stay the crate's.
        if t.kind != Kind::Ident
            || !t.bang
            || inside[at]
            || !FIXED_MACROS.contains(&t.name.as_str())
        {
            continue;
        }
        if let Some(close) = tokens.get(at + 2).and_then(|o| o.closed_at) {
            for flag in &mut inside[at + 2..=close] {
                *flag = false;
            }
        }
    }
    inside
}

/// For each token, whether it sits inside an attribute's brackets (`#[…]` or `#![…]`).
fn attribute_tokens(scanned: &Scanned) -> Vec<bool> {
    let tokens = &scanned.tokens;
    let mut inside = vec![false; tokens.len()];
    for (at, t) in tokens.iter().enumerate() {
        if !t.is(Kind::Punct, "#") {
            continue;
        }
        let bracket = match tokens.get(at + 1) {
            Some(bang) if bang.is(Kind::Punct, "!") => at + 2,
            _ => at + 1,
        };
        if let Some(open) = tokens.get(bracket).filter(|t| t.is(Kind::Punct, "[")) {
            if let Some(close) = open.closed_at {
                for flag in &mut inside[bracket..=close] {
                    *flag = true;
                }
            }
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::super::tokens::lex;
    use super::refused;

    fn construct(text: &str) -> Option<(usize, String)> {
        let scanned = lex("src/lib.rs", text).map_err(|r| r.why).expect("lexes");
        refused(&scanned).map(|r| (r.line, r.construct))
    }

    #[test]
    fn what_hides_code_from_the_scan_is_refused() {
        let cases = [
            ("fn f() {}\n#[path = \"ctor.txt\"]\nmod ctor;\n", 2, "#[path]"),
            ("#[cfg_attr(all(), path = \"ctor.txt\")]\nmod ctor;\n", 1, "#[path]"),
            ("#[r#path = \"ctor.txt\"]\nmod ctor;\n", 1, "#[path]"),
            ("macro_rules! m { ($a:meta) => { #[$a] static X: u8 = 0; } }\n", 1, "#[$…]"),
            ("#[used]\nstatic X: u8 = 0;\n", 1, "#[used]"),
            ("#![cfg_attr(all(), used)]\n", 1, "#[used]"),
            // `#`, the brackets and the name passed as pieces and put together by a macro.
            ("macro_rules! a { ($h:tt, $b:tt) => { $h $b mod m; } }\na!(#, [path = \"x.txt\"]);", 2, "path inside a macro"),
            ("macro_rules! a { ($h:tt $d:tt) => { $h [used] static X: u8 = 0; } }\na!(\n/// x\n);", 1, "used inside a macro"),
            ("m!(used);", 1, "used inside a macro"),
            // A macro of the crate's own may not pass for a standard one.
            ("macro_rules! println { ($h:tt, $b:tt) => { $h $b mod m; } }\n", 1, "a macro named `println`"),
            ("macro_rules! a { ($h:tt, $b:tt) => { $h $b mod m; } }\nuse a as vec;\n", 2, "a macro named `vec`"),
            // Inside a macro_rules body even a standard macro's arguments are the crate's.
            ("macro_rules! a { ($b:tt) => { println!(\"{}\", $b); #[path = \"x\"] mod m; } }\n", 1, "#[path]"),
            ("macro_rules! a { () => { println!(\"{}\", used); } }\n", 1, "used inside a macro"),
        ];
        for (text, line, shown) in cases {
            assert_eq!(construct(text), Some((line, shown.to_string())), "{text}");
        }
    }

    #[test]
    fn ordinary_code_is_not_refused() {
        let fine = "use std::path::Path;\n#[derive(Debug)]\n#[allow(unused)]\nstruct S { path: u8, used: u8 }\n\
                    extern crate rayon;\nconst K: &str = include_str!(\"kernel.cu\");\n\
                    /// The `#[path]` attribute is refused.\n\
                    fn f(path: &Path) -> bool { let used = 1; assert!(1 > 0, \"{}\", \"path\"); path.exists() && used == 1 }\n";
        assert_eq!(construct(fine), None);
        // A standard macro's expansion is fixed: the word is only a value there.
        let honest = "fn f(path: &Path) {\n    println!(\"{}\", path.display());\n    \
                      assert!(path.exists(), \"{path:?}\");\n    let v = vec![path];\n}\n";
        assert_eq!(construct(honest), None);
    }
}
