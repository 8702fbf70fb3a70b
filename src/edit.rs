//! Edits of a Rust source that only match its code: a faulty copy is made by replacing one
//! exact piece of the solution, and a doc comment that quotes that piece (as the solutions'
//! docs do, to show students the call) must not make the edit ambiguous.

use std::fmt;

/// Why an edit of a source does not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The text is not in the code (it may still be quoted in a comment): the source changed.
    NotFound {
        /// The text looked for.
        find: String,
    },
    /// The text is in the code more than once: the edit would be a guess.
    Ambiguous {
        /// The text looked for.
        find: String,
        /// The 1-based lines where it starts.
        lines: Vec<usize>,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::NotFound { find } => write!(
                f,
                "{find:?} is no longer in the code (comments are not searched): the source \
                 changed, so update the edit to the new code"
            ),
            EditError::Ambiguous { find, lines } => write!(
                f,
                "{find:?} is in the code {} times (lines {}): anchor the edit on more of the \
                 code around the one to change",
                lines.len(),
                lines
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl std::error::Error for EditError {}

/// Makes `edits` (find, replace) in `text` one after the other, each `find` in the code of
/// the text exactly once. An occurrence counts when it starts in code or exactly where a
/// comment starts (an edit may anchor on a whole comment); one that starts inside a comment,
/// a doc quoting the code say, does not.
pub fn apply(text: &str, edits: &[(&str, &str)]) -> Result<String, (usize, EditError)> {
    let mut text = text.to_string();
    for (index, (find, replace)) in edits.iter().enumerate() {
        let at = find_in_code(&text, find).map_err(|e| (index, e))?;
        text.replace_range(at..at + find.len(), replace);
    }
    Ok(text)
}

/// Where `find` starts in the code of `text`, when it is there exactly once.
pub fn find_in_code(text: &str, find: &str) -> Result<usize, EditError> {
    let comments = comment_spans(text);
    let in_comment_body = |at: usize| comments.iter().any(|&(start, end)| start < at && at < end);
    let starts: Vec<usize> = text
        .match_indices(find)
        .map(|(at, _)| at)
        .filter(|&at| !in_comment_body(at))
        .collect();
    match starts.as_slice() {
        [] => Err(EditError::NotFound {
            find: find.to_string(),
        }),
        [at] => Ok(*at),
        _ => Err(EditError::Ambiguous {
            find: find.to_string(),
            lines: starts
                .iter()
                .map(|&at| text[..at].matches('\n').count() + 1)
                .collect(),
        }),
    }
}

/// Whether `text` (a fragment of code) holds a comment.
pub fn has_comment(text: &str) -> bool {
    !comment_spans(text).is_empty()
}

/// The byte ranges of the comments of a Rust source (line comments without their newline,
/// block comments nested as Rust nests them). String, raw string and character literals are
/// skipped, so `"//"` in a literal (a URL, a CUDA kernel's source) is code.
pub fn comment_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
            spans.push((i, end));
            i = end;
        } else if rest.starts_with(b"/*") {
            let end = block_comment_end(bytes, i);
            spans.push((i, end));
            i = end;
        } else if bytes[i] == b'"' {
            i = quoted_end(bytes, i + 1, b'"');
        } else if bytes[i] == b'r' && !continues_word(bytes, i) {
            i = raw_string_end(bytes, i).unwrap_or(i + 1);
        } else if bytes[i] == b'\'' {
            i = char_literal_end(text, i);
        } else {
            i += 1;
        }
    }
    spans
}

/// Whether the byte at `i` continues an identifier (so an `r` there is no raw string prefix).
fn continues_word(bytes: &[u8], i: usize) -> bool {
    i > 0
        && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')
        && !(bytes[i - 1] == b'b' && (i < 2 || !bytes[i - 2].is_ascii_alphanumeric()))
}

/// The end of the block comment opened at `start` (after its `*/`, or the end of the text).
fn block_comment_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0;
    let mut i = start;
    while i + 1 < bytes.len() {
        match &bytes[i..i + 2] {
            b"/*" => {
                depth += 1;
                i += 2;
            }
            b"*/" => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The end of a literal whose body starts at `i` and closes with `close` (escapes skipped).
fn quoted_end(bytes: &[u8], mut i: usize, close: u8) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == close => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The end of the raw string `r#…"…"#…` at `start`, or None when no raw string starts there.
fn raw_string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let hashes = bytes[start + 1..]
        .iter()
        .take_while(|&&b| b == b'#')
        .count();
    let open = start + 1 + hashes;
    if bytes.get(open) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = open + 1;
    Some(
        bytes[body..]
            .windows(close.len())
            .position(|w| w == close.as_slice())
            .map_or(bytes.len(), |n| body + n + close.len()),
    )
}

/// The end of the character literal at `start`, or just past the quote of a lifetime.
fn char_literal_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    match text[start + 1..].chars().next() {
        Some('\\') => quoted_end(bytes, start + 1, b'\''),
        // One character and a closing quote; else a lifetime (`'a`).
        Some(c) if bytes.get(start + 1 + c.len_utf8()) == Some(&b'\'') => start + 2 + c.len_utf8(),
        _ => start + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r##"
/// Call `unsafe { gemm(b, a) }?;` with the operands swapped.
fn f() {
    let url = "http://x"; // not a comment: "gemm(b, a)"
    let q = '"';
    let raw = r#"// kernel comment"#;
    /* a block /* nested gemm(b, a) */ still a comment */
    unsafe { gemm(b, a) }?;
    // END
}
"##;

    #[test]
    fn a_doc_comment_quoting_the_code_does_not_count() {
        let at = find_in_code(SOURCE, "unsafe { gemm(b, a) }?;").expect("once in the code");
        assert_eq!(SOURCE[..at].matches('\n').count() + 1, 8);
        let edited = apply(SOURCE, &[("gemm(b, a)", "gemm(a, b)")]).expect("applies");
        assert!(edited.contains("unsafe { gemm(a, b) }?;"));
        assert!(edited.contains("/// Call `unsafe { gemm(b, a) }?;`"));
    }

    #[test]
    fn literals_are_code_and_comments_are_not() {
        let spans: Vec<&str> = comment_spans(SOURCE)
            .into_iter()
            .map(|(s, e)| &SOURCE[s..e])
            .collect();
        assert_eq!(
            spans,
            [
                "/// Call `unsafe { gemm(b, a) }?;` with the operands swapped.",
                "// not a comment: \"gemm(b, a)\"",
                "/* a block /* nested gemm(b, a) */ still a comment */",
                "// END",
            ]
        );
    }

    #[test]
    fn an_edit_may_anchor_on_a_whole_comment() {
        assert!(find_in_code(SOURCE, "// END\n}").is_ok());
    }

    #[test]
    fn ambiguous_and_missing_edits_say_so() {
        let twice = "fn g() { h(); }\nfn k() { h(); }\n";
        assert_eq!(
            apply(twice, &[("x", "y"), ("h();", "i();")]),
            Err((
                0,
                EditError::NotFound {
                    find: "x".to_string()
                }
            ))
        );
        let (index, error) = apply(twice, &[("fn g", "fn gg"), ("h();", "i();")]).unwrap_err();
        assert_eq!(index, 1);
        assert_eq!(
            error.to_string().split(" (lines").nth(1).map(|s| &s[..5]),
            Some(" 1, 2")
        );
        assert!(has_comment("a(); // b") && !has_comment("a(\"//\");"));
    }
}
