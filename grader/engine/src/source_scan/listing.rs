//! The source scan's lexer for readers outside its rules: [`lex`] lists a Rust file's tokens
//! as the rules see them (comments and doc comments gone, raw names without `r#`), each with
//! its line and, for a literal, its text. The class's similarity report compares submissions
//! with it, so that a comment or a string cannot hide code from it either.

use super::{tokens, Refused};

/// What a listed token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A name or keyword.
    Ident,
    /// One punctuation character, or one delimiter of a group.
    Punct,
    /// A number, string, byte or char literal.
    Literal,
}

/// One token of a Rust file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceToken {
    /// Its kind.
    pub kind: TokenKind,
    /// The name, the punctuation character, or the literal as written (quotes included).
    pub text: String,
    /// 1-based line where it starts.
    pub line: usize,
}

/// The tokens of `text` (the file `file`), or why the lexer cannot read it.
pub fn lex(file: &str, text: &str) -> Result<Vec<SourceToken>, Refused> {
    let scanned = tokens::lex(file, text)?;
    Ok(scanned
        .tokens
        .into_iter()
        .map(|t| {
            let (kind, text) = match t.kind {
                tokens::Kind::Ident => (TokenKind::Ident, t.name),
                tokens::Kind::Punct => (TokenKind::Punct, t.name),
                tokens::Kind::Literal => (TokenKind::Literal, t.literal),
            };
            SourceToken {
                kind,
                text,
                line: t.line,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_their_text_and_comments_are_gone() {
        let listed = lex(
            "src/lib.rs",
            "/// doc\nfn r#f() {\n    // note\n    let s = r#\"a \"b\"\"#; 7u8\n}",
        )
        .map_err(|r| r.why)
        .expect("lexes");
        let texts: Vec<(&str, usize)> = listed.iter().map(|t| (t.text.as_str(), t.line)).collect();
        assert_eq!(
            texts,
            [
                ("fn", 2),
                ("f", 2),
                ("(", 2),
                (")", 2),
                ("{", 2),
                ("let", 4),
                ("s", 4),
                ("=", 4),
                ("r#\"a \"b\"\"#", 4),
                (";", 4),
                ("7u8", 4),
                ("}", 5)
            ]
        );
        assert_eq!(listed[8].kind, TokenKind::Literal);
        assert!(lex("src/lib.rs", "const S: &str = \"open;").is_err());
    }
}
