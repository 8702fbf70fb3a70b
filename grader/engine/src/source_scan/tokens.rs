//! The one lexer every source rule reads: `proc-macro2`'s (the one procedural macros use, so
//! raw strings, nested comments, raw identifiers, byte and char literals and lifetimes are read
//! as rustc reads them), flattened into [`Token`]s with their lines and the `fn` body each sits
//! in. Nothing the compiler reads as code can hide from the rules as a comment or a string.
//!
//! Names are resolved as far as the rules need: a raw identifier `r#include` is the name
//! `include`. Comments vanish, doc comments included (`#[doc = "…"]` is text for people), and a
//! lifetime (`'a`) is no name at all.

use super::Refused;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// What a token is: the rules need punctuation and literals too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    /// A name or keyword.
    Ident,
    /// One punctuation character, or one delimiter of a group (`(`, `]`, `{`).
    Punct,
    /// A number, string, byte or char literal (its text, as written, is in [`Token::literal`]).
    Literal,
}

/// A token with its position.
pub(super) struct Token {
    pub(super) kind: Kind,
    /// The identifier (raw ones without their `r#`), the punctuation character, or empty for
    /// a literal.
    pub(super) name: String,
    /// 1-based line.
    pub(super) line: usize,
    /// Index of the function body it sits in, if any.
    pub(super) body: Option<usize>,
    /// Whether it calls a macro: a name (not a keyword) followed by `!` (`asm!`, not `a != b`).
    pub(super) bang: bool,
    /// For an opening delimiter, the index of the one closing it.
    pub(super) closed_at: Option<usize>,
    /// A literal's text as written (quotes, prefix and suffix included); empty for the other
    /// kinds. The rules never read it: the class's similarity report reads kernels in strings.
    pub(super) literal: String,
}

impl Token {
    /// Whether it is this kind of token with this text.
    pub(super) fn is(&self, kind: Kind, name: &str) -> bool {
        self.kind == kind && self.name == name
    }
}

/// A lexed file.
pub(super) struct Scanned {
    /// The file, as reports name it.
    pub(super) file: String,
    pub(super) tokens: Vec<Token>,
    /// The name of the function owning each body.
    pub(super) bodies: Vec<String>,
}

/// Keywords that may stand before `!` without calling a macro (`if !done`, `return !x`).
const NOT_MACROS: &[&str] = &[
    "as", "break", "else", "if", "in", "match", "move", "return", "while", "yield", "box", "mut",
];

/// Why a file the lexer cannot read is refused.
const UNREADABLE: &str = "the grader's Rust lexer cannot read this file (an unclosed string or \
                          comment, say), so it cannot check it; fix it as the compiler says";

/// Lexes `text` (the file `file`), or says why the rules cannot follow it.
pub(super) fn lex(file: &str, text: &str) -> Result<Scanned, Refused> {
    let cannot_read = |line: usize, why: &'static str| Refused {
        file: file.to_string(),
        line,
        construct: "code the grader cannot read".into(),
        why,
    };
    if has_shebang(text) {
        return Err(cannot_read(
            1,
            "its first line starts with `#!` (a script's first line), which the compiler skips \
             but the grader would read as code; remove that line",
        ));
    }
    let stream: Result<TokenStream, _> = text.parse();
    let mut flat = Flattener::new(file);
    let result = match stream {
        Ok(stream) => {
            flat.push_stream(stream);
            Ok(flat.finish())
        }
        Err(e) => Err(cannot_read(e.span().start().line, UNREADABLE)),
    };
    // Lines are read: let go of proc-macro2's copy of the text (it keeps every file it lexed
    // on this thread otherwise, which a batch of a whole class would feel).
    proc_macro2::extra::invalidate_current_thread_spans();
    result
}

/// Whether `text` opens with a line rustc skips as a shebang (`#!` not followed by `[`):
/// proc-macro2 would read it as code, and a `/*` on it would hide what follows from the rules.
fn has_shebang(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.strip_prefix("#!")
        .is_some_and(|rest| !rest.trim_start().starts_with('['))
}

/// Builds the flat token list from proc-macro2's trees, without recursion (a submission
/// decides how deep its brackets nest).
struct Flattener {
    file: String,
    tokens: Vec<Token>,
    bodies: Vec<String>,
    /// Open braces: `Some(body)` when the brace opened a fn body.
    braces: Vec<Option<usize>>,
    /// The name of the `fn` whose body the next `{` opens.
    pending_fn: Option<String>,
    expect_fn_name: bool,
}

/// What is left to flatten of one group: its trees, the next one, and its close.
struct Frame {
    trees: Vec<TokenTree>,
    at: usize,
    /// The closing delimiter, its line, and the index of the opening token (none at the top).
    close: Option<(char, usize, usize)>,
    brace: bool,
}

impl Flattener {
    fn new(file: &str) -> Flattener {
        Flattener {
            file: file.to_string(),
            tokens: Vec::new(),
            bodies: Vec::new(),
            braces: Vec::new(),
            pending_fn: None,
            expect_fn_name: false,
        }
    }

    fn finish(self) -> Scanned {
        Scanned {
            file: self.file,
            tokens: self.tokens,
            bodies: self.bodies,
        }
    }

    fn body(&self) -> Option<usize> {
        self.braces.iter().rev().find_map(|b| *b)
    }

    fn push(&mut self, kind: Kind, name: String, line: usize, bang: bool) {
        self.tokens.push(Token {
            kind,
            name,
            line,
            body: self.body(),
            bang,
            closed_at: None,
            literal: String::new(),
        });
    }

    fn push_stream(&mut self, stream: TokenStream) {
        let mut stack = vec![Frame {
            trees: stream.into_iter().collect(),
            at: 0,
            close: None,
            brace: false,
        }];
        while let Some(frame) = stack.last_mut() {
            let Some(tree) = frame.trees.get(frame.at).cloned() else {
                let done = stack.pop().expect("a frame");
                if let Some((c, line, open)) = done.close {
                    let close = self.tokens.len();
                    self.push(Kind::Punct, c.to_string(), line, false);
                    self.tokens[open].closed_at = Some(close);
                    if done.brace {
                        self.braces.pop();
                    }
                }
                continue;
            };
            let skip = skipped_at(&frame.trees, frame.at);
            if skip > 0 {
                frame.at += skip;
                continue;
            }
            let next = frame.trees.get(frame.at + 1).cloned();
            let after = frame.trees.get(frame.at + 2).cloned();
            frame.at += 1;
            match tree {
                TokenTree::Ident(ident) => {
                    let written = ident.to_string();
                    let name = written.strip_prefix("r#").unwrap_or(&written).to_string();
                    let bang = calls_macro(&written, next.as_ref(), after.as_ref());
                    if self.expect_fn_name {
                        self.pending_fn = Some(name.clone());
                        self.expect_fn_name = false;
                    }
                    if written == "fn" {
                        // `fn name` declares a function; `fn(` is a function-pointer type.
                        self.expect_fn_name = matches!(next, Some(TokenTree::Ident(_)));
                    }
                    self.push(Kind::Ident, name, ident.span().start().line, bang);
                }
                TokenTree::Punct(p) => {
                    // `fn f();` in a trait has no body.
                    if p.as_char() == ';' && self.braces.last().copied().flatten().is_none() {
                        self.pending_fn = None;
                    }
                    self.push(
                        Kind::Punct,
                        p.as_char().to_string(),
                        p.span().start().line,
                        false,
                    );
                }
                TokenTree::Literal(l) => {
                    self.push(Kind::Literal, String::new(), l.span().start().line, false);
                    if let Some(last) = self.tokens.last_mut() {
                        last.literal = l.to_string();
                    }
                }
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ('(', ')'),
                        Delimiter::Bracket => ('[', ']'),
                        Delimiter::Brace => ('{', '}'),
                        Delimiter::None => {
                            stack.push(Frame {
                                trees: g.stream().into_iter().collect(),
                                at: 0,
                                close: None,
                                brace: false,
                            });
                            continue;
                        }
                    };
                    let brace = open == '{';
                    if brace {
                        // The brace belongs to the body it opens.
                        match self.pending_fn.take() {
                            Some(name) => {
                                self.bodies.push(name);
                                self.braces.push(Some(self.bodies.len() - 1));
                            }
                            None => self.braces.push(None),
                        }
                    }
                    let at = self.tokens.len();
                    self.push(
                        Kind::Punct,
                        open.to_string(),
                        g.span_open().start().line,
                        false,
                    );
                    stack.push(Frame {
                        trees: g.stream().into_iter().collect(),
                        at: 0,
                        close: Some((close, g.span_close().start().line, at)),
                        brace,
                    });
                }
            }
        }
    }
}

/// How many trees from `at` are no code to the rules: 2 for a lifetime (`'a`), 2 or 3 for a
/// doc comment (`#[doc = "…"]`, `#![doc = "…"]`), else 0.
fn skipped_at(trees: &[TokenTree], at: usize) -> usize {
    let punct =
        |i: usize, c: char| matches!(trees.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
    if punct(at, '\'') && matches!(trees.get(at + 1), Some(TokenTree::Ident(_))) {
        return 2;
    }
    if punct(at, '#') {
        let bracket = if punct(at + 1, '!') { at + 2 } else { at + 1 };
        if let Some(TokenTree::Group(g)) = trees.get(bracket) {
            if g.delimiter() == Delimiter::Bracket && is_doc(g.stream()) {
                return bracket + 1 - at;
            }
        }
    }
    0
}

/// Whether an attribute's contents are `doc = "text"` and nothing else.
fn is_doc(stream: TokenStream) -> bool {
    let inner: Vec<TokenTree> = stream.into_iter().collect();
    matches!(
        inner.as_slice(),
        [TokenTree::Ident(doc), TokenTree::Punct(eq), TokenTree::Literal(_)]
            if doc == "doc" && eq.as_char() == '='
    )
}

/// Whether the name `written` (as written, `r#` included) calls a macro: `!` follows, and it
/// is not `!=` nor a keyword's operand (`if !done`).
fn calls_macro(written: &str, next: Option<&TokenTree>, after: Option<&TokenTree>) -> bool {
    let Some(TokenTree::Punct(bang)) = next else {
        return false;
    };
    let not_equal = bang.spacing() == Spacing::Joint
        && matches!(after, Some(TokenTree::Punct(eq)) if eq.as_char() == '=');
    bang.as_char() == '!' && !not_equal && !NOT_MACROS.contains(&written)
}

/// For each token, whether it sits in a macro's arguments (`m!(…)`) or a `macro_rules!`
/// definition: code the rules cannot read as Rust, since the macro decides what it becomes.
pub(super) fn in_macros(tokens: &[Token]) -> Vec<bool> {
    let mut inside = vec![false; tokens.len()];
    let mut at = 0;
    while at < tokens.len() {
        let t = &tokens[at];
        if t.kind == Kind::Ident && t.bang {
            // Skip `!` and, for `macro_rules! name`, the name; then the delimited group.
            let mut open = at + 2;
            if t.name == "macro_rules" && tokens.get(open).is_some_and(|t| t.kind == Kind::Ident) {
                open += 1;
            }
            if let Some(close) = tokens.get(open).and_then(|t| t.closed_at) {
                for flag in &mut inside[open..=close] {
                    *flag = true;
                }
                at = close + 1;
                continue;
            }
        }
        at += 1;
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, usize, bool)> {
        lex("src/lib.rs", text)
            .map_err(|r| r.why)
            .expect("lexes")
            .tokens
            .into_iter()
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| (t.name, t.line, t.bang))
            .collect()
    }

    fn n(name: &str, line: usize, bang: bool) -> (String, usize, bool) {
        (name.to_string(), line, bang)
    }

    #[test]
    fn the_code_after_each_trick_of_a_hand_lexer_is_read_as_code() {
        // Each literal or comment ends where rustc ends it, so `x` after it is seen on line 2.
        for trick in [
            "br\"\\\"",
            "br#\"\\\"#",
            "r#\"a \" b\"#",
            "r##\"a \"# b\"##",
            "/* a /* b */ c */",
            "'\\''",
            "b'\"'",
            "'\"'",
            "b\"\\\\\"",
            "c\"\\\"\"",
        ] {
            let text = format!("const S: u8 = {trick};\nx");
            let found = names(&text);
            assert_eq!(found.last(), Some(&n("x", 2, false)), "{trick}: {found:?}");
            assert_eq!(found.len(), 4, "{trick}: {found:?}");
        }
    }

    #[test]
    fn raw_names_lose_their_prefix_and_lifetimes_and_docs_are_no_names() {
        let text = "/// doc `asm`\n#[doc = \"x\"]\nfn r#include<'a>(x: &'static u8) -> bool { r#asm!(); a != b }";
        assert_eq!(
            names(text),
            vec![
                n("fn", 3, false),
                n("include", 3, false),
                n("x", 3, false),
                n("u8", 3, false),
                n("bool", 3, false),
                n("asm", 3, true),
                n("a", 3, false),
                n("b", 3, false),
            ]
        );
        assert_eq!(names("if !done { m!(x) }")[0], n("if", 1, false));
    }

    #[test]
    fn delimiters_know_their_match_and_bodies_their_function() {
        let s = lex("src/lib.rs", "fn f() { g(a[0]) }\nfn h();")
            .map_err(|r| r.why)
            .expect("lexes");
        let open = s
            .tokens
            .iter()
            .position(|t| t.is(Kind::Punct, "{"))
            .expect("{");
        let close = s.tokens[open].closed_at.expect("closed");
        assert!(s.tokens[close].is(Kind::Punct, "}"));
        assert_eq!(s.bodies, vec!["f".to_string()]);
        assert!(s.tokens[open..=close].iter().all(|t| t.body == Some(0)));
    }

    #[test]
    fn what_the_lexer_cannot_follow_is_refused() {
        for text in [
            "const S: &str = \"never closed;\n",
            "#!/bin/sh /*\n#[no_mangle] fn f() {}\n// */\n",
            "fn f() { (]",
        ] {
            let refused = lex("src/lib.rs", text).err().expect(text);
            assert_eq!(refused.construct, "code the grader cannot read", "{text}");
        }
        assert!(lex("src/lib.rs", "#![allow(unused)]\nfn f() {}").is_ok());
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let deep = format!(
            "const X: u8 = {}0{};",
            "(".repeat(50_000),
            ")".repeat(50_000)
        );
        let lexed = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || lex("src/lib.rs", &deep).map(|s| s.tokens.len()).ok())
            .expect("a thread")
            .join()
            .expect("no overflow");
        assert_eq!(lexed, Some(100_007));
    }
}
