//! A small C tokenizer for CUDA kernels: the kernels students write in Rust string literals
//! (compiled at run time by NVRTC) and any `.cu` file beside their sources. It only cuts text
//! into words, numbers, strings and punctuation with their lines, skipping comments; it never
//! fails, whatever the text, and stops at a token budget. A `\r` ends a line comment as a
//! line break does but is not counted as a line (an escaped `\n` in a Rust string).

/// What a C token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CKind {
    /// A name or keyword.
    Word,
    /// A number (`16`, `0.0f`, `1e-3`).
    Number,
    /// A string or character literal.
    Text,
    /// One punctuation character.
    Punct,
}

/// One C token: its kind, its text and its line (0 for the text's first line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CToken<'a> {
    /// Its kind.
    pub(super) kind: CKind,
    /// Its text as written.
    pub(super) text: &'a str,
    /// Lines before it in the text.
    pub(super) line: usize,
}

/// The tokens of `text`, at most `limit` of them.
pub(super) fn tokenize(text: &str, limit: usize) -> Vec<CToken<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 0;
    let mut at = 0;
    while at < bytes.len() && out.len() < limit {
        let b = bytes[at];
        let start = at;
        let kind = match b {
            b'\n' => {
                line += 1;
                at += 1;
                continue;
            }
            _ if b.is_ascii_whitespace() => {
                at += 1;
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                while at < bytes.len() && !matches!(bytes[at], b'\n' | b'\r') {
                    at += 1;
                }
                continue;
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at += 2;
                while at < bytes.len() && !(bytes[at] == b'*' && bytes.get(at + 1) == Some(&b'/')) {
                    line += usize::from(bytes[at] == b'\n');
                    at += 1;
                }
                at = (at + 2).min(bytes.len());
                continue;
            }
            b'"' | b'\'' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b && !matches!(bytes[at], b'\n' | b'\r') {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                at = (at + 1).min(bytes.len());
                CKind::Text
            }
            b'0'..=b'9' => {
                at += 1;
                while at < bytes.len() {
                    let c = bytes[at];
                    let exponent = matches!(c, b'+' | b'-') && matches!(bytes[at - 1], b'e' | b'E');
                    if c.is_ascii_alphanumeric() || c == b'.' || exponent {
                        at += 1;
                    } else {
                        break;
                    }
                }
                CKind::Number
            }
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
                CKind::Word
            }
            _ => {
                // One character, whole (a non-ASCII one is punctuation too).
                at += text[at..].chars().next().map_or(1, char::len_utf8);
                CKind::Punct
            }
        };
        // Slicing stays on character boundaries: every cut above is at an ASCII byte, or
        // after a whole character.
        let end = at.min(bytes.len());
        let end = (end..=bytes.len())
            .find(|e| text.is_char_boundary(*e))
            .unwrap_or(bytes.len());
        at = end;
        out.push(CToken {
            kind,
            text: &text[start..end],
            line,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(CKind, &str, usize)> {
        tokenize(text, usize::MAX)
            .into_iter()
            .map(|t| (t.kind, t.text, t.line))
            .collect()
    }

    #[test]
    fn a_kernel_is_cut_into_tokens_with_their_lines_and_no_comments() {
        let kernel = "// sum\nextern \"C\" __global__ void f(float* a) {\n  /* two\n lines */ a[0] = 1.5e-3f;\n}";
        assert_eq!(
            texts(kernel),
            [
                (CKind::Word, "extern", 1),
                (CKind::Text, "\"C\"", 1),
                (CKind::Word, "__global__", 1),
                (CKind::Word, "void", 1),
                (CKind::Word, "f", 1),
                (CKind::Punct, "(", 1),
                (CKind::Word, "float", 1),
                (CKind::Punct, "*", 1),
                (CKind::Word, "a", 1),
                (CKind::Punct, ")", 1),
                (CKind::Punct, "{", 1),
                (CKind::Word, "a", 3),
                (CKind::Punct, "[", 3),
                (CKind::Number, "0", 3),
                (CKind::Punct, "]", 3),
                (CKind::Punct, "=", 3),
                (CKind::Number, "1.5e-3f", 3),
                (CKind::Punct, ";", 3),
                (CKind::Punct, "}", 4),
            ]
        );
    }

    #[test]
    fn any_text_is_cut_without_panicking_and_within_the_budget() {
        for odd in [
            "\"never closed",
            "/* never closed",
            "'\\",
            "é∑ x\u{0}",
            "1e+",
            "\\",
        ] {
            let _ = tokenize(odd, usize::MAX);
        }
        assert_eq!(tokenize(&"a ".repeat(1000), 10).len(), 10);
    }
}
