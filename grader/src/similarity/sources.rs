//! What is compared of a submission: its `src/` folder's `.rs` files (and `.cu` files), read
//! as [`Code`] with bounds a submission cannot pass: regular files only (no link is
//! followed), a few folders deep, a number of files, a size per file and a number of tokens
//! per file and per submission. What a bound leaves out is said in [`Code::notes`].

use super::normalize::{self, Token};
use std::path::Path;

/// Files read per submission at most.
pub const MAX_FILES: usize = 64;
/// Bytes of one file at most: a larger file is not compared.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Bytes read of one submission at most: the files after are not compared. (The labs'
/// solutions are 31 kB and 107 kB.)
pub const MAX_BYTES: usize = 1024 * 1024;
/// Tokens read of one file at most.
pub const MAX_FILE_TOKENS: usize = 30_000;
/// Tokens read of one submission at most.
pub const MAX_TOKENS: usize = 60_000;
/// Folders below `src/` that are entered at most.
const MAX_DEPTH: usize = 4;

/// One file of a submission: its path under the crate and its text (for showing its lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The path, `src/…`.
    pub path: String,
    /// Its text.
    pub text: String,
    /// Its normalized tokens.
    pub(crate) tokens: Vec<Token>,
}

/// A submission's code, or the template's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Code {
    /// Its files, by path.
    pub files: Vec<SourceFile>,
    /// What was left out, and why (a file too large, the token budget spent).
    pub notes: Vec<String>,
}

impl Code {
    /// The code of the crate at `dir` (its `src/` folder).
    pub fn of_crate(dir: &Path) -> Code {
        let mut found = Vec::new();
        let mut notes = Vec::new();
        walk(&dir.join("src"), "src", 0, &mut found, &mut notes);
        found.sort();
        let mut code = Code {
            files: Vec::new(),
            notes,
        };
        for (path, file) in found {
            if code.files.len() >= MAX_FILES {
                code.notes.push(format!(
                    "only its first {MAX_FILES} source files are compared"
                ));
                break;
            }
            match read_bounded(&file) {
                Ok(bytes) => code.add(path, &String::from_utf8_lossy(&bytes)),
                Err(e) => code.notes.push(format!("{path}: not read ({})", e.why)),
            }
        }
        code
    }

    /// Code from `(path, text)` pairs (the template the release makes), with the same bounds.
    pub fn of_texts<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Code {
        let mut code = Code::default();
        for (path, text) in files {
            if is_source(path) && code.files.len() < MAX_FILES {
                code.add(path.to_string(), text);
            }
        }
        code
    }

    /// How many tokens are read so far.
    pub fn token_count(&self) -> usize {
        self.files.iter().map(|f| f.tokens.len()).sum()
    }

    /// Adds the file `path` with `text`, within the budgets.
    fn add(&mut self, path: String, text: &str) {
        if text.len() as u64 > MAX_FILE_BYTES {
            self.notes.push(format!(
                "{path}: not compared (larger than {} KiB)",
                MAX_FILE_BYTES / 1024
            ));
            return;
        }
        let read: usize = self.files.iter().map(|f| f.text.len()).sum();
        if read + text.len() > MAX_BYTES {
            self.notes.push(format!(
                "{path}: not compared (the submission's first files already hold {} KiB)",
                read / 1024
            ));
            return;
        }
        let left = MAX_TOKENS.saturating_sub(self.token_count());
        let limit = left.min(MAX_FILE_TOKENS);
        let tokens = if path.ends_with(".rs") {
            // A file the lexer cannot read (it does not compile either) is cut as C.
            normalize::rust(&path, text, limit).unwrap_or_else(|| normalize::c(text, limit))
        } else {
            normalize::c(text, limit)
        };
        if tokens.len() >= limit {
            self.notes.push(format!(
                "{path}: only its first {limit} tokens are compared"
            ));
        }
        self.files.push(SourceFile {
            path,
            text: text.to_string(),
            tokens,
        });
    }
}

/// The first [`MAX_FILE_BYTES`] + 1 bytes of `file` at most (one more says it is too large),
/// a regular file only, never through a link.
fn read_bounded(file: &Path) -> Result<Vec<u8>, grader_engine::intake::Refusal> {
    grader_engine::intake::read_head(file, MAX_FILE_BYTES + 1, "")
}

/// Whether `path` is a source the comparison reads: a `.rs` or `.cu`/`.cuh` file under `src/`.
fn is_source(path: &str) -> bool {
    path.starts_with("src/") && [".rs", ".cu", ".cuh"].iter().any(|e| path.ends_with(e))
}

/// The sources under `dir` (shown as `shown`), regular files only, `depth` folders down.
fn walk(
    dir: &Path,
    shown: &str,
    depth: usize,
    out: &mut Vec<(String, std::path::PathBuf)>,
    notes: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for (seen, entry) in entries.flatten().enumerate() {
        // Entries of any kind count: a folder of a million files that are not sources is
        // not read to its end either.
        if out.len() > MAX_FILES * 4 || seen > MAX_FILES * 64 {
            notes.push(format!(
                "{shown}: too many files; the rest are not compared"
            ));
            return;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{shown}/{name}");
        if kind.is_dir() && depth < MAX_DEPTH {
            walk(&entry.path(), &path, depth + 1, out, notes);
        } else if kind.is_file() && is_source(&path) {
            out.push((path, entry.path()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_source_files_under_src_are_read_within_the_bounds() {
        let dir = tempfile::tempdir().expect("a folder");
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("deep/a/b/c/d/e")).expect("folders");
        std::fs::write(src.join("lib.rs"), "fn f() {}").expect("lib.rs");
        std::fs::write(src.join("k.cu"), "__global__ void k() {}").expect("k.cu");
        std::fs::write(src.join("notes.txt"), "fn g() {}").expect("notes");
        std::fs::write(src.join("deep/a/b/c/d/e/far.rs"), "fn far() {}").expect("far");
        std::fs::write(src.join("big.rs"), "x".repeat(MAX_FILE_BYTES as usize + 1)).expect("big");
        std::fs::write(src.join("many.rs"), "x;".repeat(MAX_FILE_TOKENS)).expect("many");
        std::os::unix::fs::symlink("/etc/passwd", src.join("link.rs")).expect("a link");
        let code = Code::of_crate(dir.path());
        let paths: Vec<&str> = code.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/k.cu", "src/lib.rs", "src/many.rs"]);
        assert_eq!(code.files[2].tokens.len(), MAX_FILE_TOKENS);
        assert!(code
            .notes
            .iter()
            .any(|n| n.contains("src/big.rs: not compared")));
        assert!(code
            .notes
            .iter()
            .any(|n| n.contains("src/many.rs: only its first")));
        let template = Code::of_texts([("src/lib.rs", "fn f() {}"), ("Cargo.toml", "[package]")]);
        assert_eq!(template.files.len(), 1);
    }
}
