//! A submission's code as the comparison reads it: one [`Token`] per Rust token (the source
//! scan's lexer: comments and doc comments are gone) and per C token of each kernel in a
//! string literal or `.cu` file, normalized so that renaming hides nothing: every name that
//! is not a keyword (or a CUDA built-in) is the same token, every number one token, every
//! string one token. What is left is the code's shape: keywords, operators and brackets.

use super::cuda::{self, CKind};
use grader_engine::source_scan::listing::{self, TokenKind};

/// One normalized token: what it is, for comparing, and where it came from, for showing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    /// The normalized token's code (a hash of `ID`, `NUM`, a keyword, an operator).
    pub(crate) code: u64,
    /// The line it is on (1-based) in its file.
    pub(crate) line: u32,
}

/// Rust's keywords and primitive types: kept as themselves (a name cannot be renamed to one).
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "bool", "char", "f32", "f64", "i8", "i16", "i32", "i64",
    "i128", "isize", "str", "u8", "u16", "u32", "u64", "u128", "usize",
];

/// C's keywords and CUDA's built-ins: kept as themselves.
const C_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "define",
    "do",
    "double",
    "else",
    "extern",
    "float",
    "for",
    "if",
    "include",
    "int",
    "long",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "unsigned",
    "void",
    "while",
    "__global__",
    "__device__",
    "__shared__",
    "__syncthreads",
    "__restrict__",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "x",
    "y",
    "z",
    "atomicAdd",
    "expf",
    "logf",
    "fmaxf",
    "sqrtf",
];

/// FNV-1a of `text` with a tag byte: the code of a normalized token.
fn code(tag: u8, text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in std::iter::once(tag).chain(text.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The codes every name, number and string share.
fn name() -> u64 {
    code(b'n', "")
}
fn number() -> u64 {
    code(b'#', "")
}
fn string() -> u64 {
    code(b's', "")
}

/// Whether a string literal holds a CUDA kernel worth reading as C.
fn holds_kernel(body: &str) -> bool {
    body.contains("__global__") || body.contains("__device__")
}

/// The normalized tokens of a Rust file, at most `limit` (a string holding a kernel counts
/// its C tokens), or `None` when the lexer cannot read it.
pub(crate) fn rust(file: &str, text: &str, limit: usize) -> Option<Vec<Token>> {
    let listed = listing::lex(file, text).ok()?;
    let mut out = Vec::new();
    for t in listed {
        if out.len() >= limit {
            break;
        }
        let line = u32::try_from(t.line).unwrap_or(u32::MAX);
        let code = match t.kind {
            TokenKind::Ident if RUST_KEYWORDS.contains(&t.text.as_str()) => code(b'r', &t.text),
            TokenKind::Ident => name(),
            TokenKind::Punct => code(b'p', &t.text),
            TokenKind::Literal => match string_body(&t.text) {
                Some(body) if holds_kernel(&body) => {
                    let left = limit - out.len();
                    out.extend(c_tokens(&body, left).map(|mut c| {
                        c.line = c.line.saturating_add(line);
                        c
                    }));
                    continue;
                }
                Some(_) => string(),
                None if t.text.starts_with(|c: char| c.is_ascii_digit()) => number(),
                None => string(),
            },
        };
        out.push(Token { code, line });
    }
    Some(out)
}

/// The normalized tokens of C text (a `.cu` file), at most `limit`, lines 1-based.
pub(crate) fn c(text: &str, limit: usize) -> Vec<Token> {
    c_tokens(text, limit)
        .map(|mut t| {
            t.line = t.line.saturating_add(1);
            t
        })
        .collect()
}

/// C tokens normalized, lines counted from 0.
fn c_tokens(text: &str, limit: usize) -> impl Iterator<Item = Token> + '_ {
    cuda::tokenize(text, limit).into_iter().map(|t| Token {
        code: match t.kind {
            CKind::Word if C_KEYWORDS.contains(&t.text) => code(b'c', t.text),
            CKind::Word => name(),
            CKind::Number => number(),
            CKind::Text => string(),
            CKind::Punct => code(b'p', t.text),
        },
        line: u32::try_from(t.line).unwrap_or(u32::MAX),
    })
}

/// The text of a string literal as written (`"…"`, `r#"…"#`, `b"…"`, `c"…"`), its escapes
/// read so that its source lines are kept: an escaped `\n` ends a line for C (a `\r`, which
/// the C tokenizer does not count as a line), a real line break stays one; `None` for a
/// literal that is not a string.
fn string_body(literal: &str) -> Option<String> {
    let rest = literal.trim_start_matches(['b', 'c']);
    if let Some(raw) = rest.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let inner = raw[hashes..].strip_prefix('"')?;
        let end = inner.rfind('"')?;
        return Some(inner[..end].to_string());
    }
    let inner = rest.strip_prefix('"')?;
    let inner = &inner[..inner.rfind('"')?];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some('\\') => out.push('\\'),
            // A line continuation: the break stays, the next line's indent goes.
            Some('\n') => {
                out.push('\n');
                while chars.next_if(|c| c.is_whitespace() && *c != '\n').is_some() {}
            }
            Some('n') => out.push('\r'),
            _ => out.push(' '),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(tokens: &[Token]) -> Vec<u64> {
        tokens.iter().map(|t| t.code).collect()
    }

    #[test]
    fn renaming_and_comments_change_nothing_and_a_keyword_does() {
        let a = rust("a.rs", "fn add(x: u32) -> u32 { x + 1 }", usize::MAX).expect("lexes");
        let b = rust(
            "b.rs",
            "/// Adds.\nfn plus(  value: u32 ) -> u32 {\n  // one\n  value + 7 }",
            usize::MAX,
        )
        .expect("lexes");
        assert_eq!(codes(&a), codes(&b));
        assert_eq!(b.last().map(|t| t.line), Some(4));
        let c = rust("c.rs", "fn add(x: u64) -> u32 { x + 1 }", usize::MAX).expect("lexes");
        assert_ne!(codes(&a), codes(&c));
    }

    #[test]
    fn a_kernel_in_a_string_is_read_as_c_on_its_own_lines() {
        let text = "const K: &str = r#\"\nextern \"C\" __global__ void f(float* a) {\n    a[0] = 1.0f; // x\n}\n\"#;\n";
        let tokens = rust("k.rs", text, usize::MAX).expect("lexes");
        // `const K : & str =` then the kernel's tokens, then `;`.
        assert!(tokens.len() > 20, "{}", tokens.len());
        let lines: Vec<u32> = tokens.iter().map(|t| t.line).collect();
        assert_eq!(lines[6], 2, "{lines:?}");
        assert_eq!(lines[lines.len() - 2], 4, "{lines:?}");
        let escaped = "const K: &str = \"extern \\\"C\\\" __global__ void f(float* a) {\\n    a[0] = 1.0f; // x\\n}\";";
        let same = rust("k.rs", escaped, usize::MAX).expect("lexes");
        assert_eq!(codes(&same), codes(&tokens));
        let renamed = text
            .replace("f(float* a)", "g(float* b)")
            .replace("a[0]", "b[0]");
        assert_eq!(
            codes(&rust("k.rs", &renamed, usize::MAX).expect("lexes")),
            codes(&tokens)
        );
    }

    #[test]
    fn the_budget_holds_and_unreadable_rust_is_none() {
        let long = "fn f() { 1 + 2; }\n".repeat(1000);
        assert_eq!(rust("l.rs", &long, 50).map(|t| t.len()), Some(50));
        assert!(rust("u.rs", "fn f() { \"open", 50).is_none());
        assert_eq!(c("int a; int b;", 3).len(), 3);
        assert_eq!(string_body("r##\"a\"#b\"##").as_deref(), Some("a\"#b"));
        assert_eq!(string_body("b\"x\\ty\"").as_deref(), Some("x y"));
        assert_eq!(string_body("'c'"), None);
    }
}
