//! Which `__device__` and `__constant__` variables a source defines in the global namespace:
//! the ones the emulator registers for `cuModuleGetGlobal`. The words also stand before
//! functions, operators (`__device__ T& operator[](int)` in a header's struct), conversion
//! functions, templates and declarations of what is defined elsewhere, none of which is a
//! variable; a declaration is read the way a C++ parser reads it, as far as telling those
//! apart needs.

use super::source::{find_word, tokens};

/// Words that are never a variable's name (types, qualifiers, attributes, CUDA's keywords).
const NOT_NAMES: &[&str] = &[
    "__device__",
    "__constant__",
    "__managed__",
    "__shared__",
    "__restrict__",
    "__forceinline__",
    "__noinline__",
    "static",
    "inline",
    "const",
    "volatile",
    "constexpr",
    "unsigned",
    "signed",
    "int",
    "long",
    "short",
    "char",
    "float",
    "double",
    "bool",
    "void",
    "auto",
    "struct",
    "class",
    "union",
    "enum",
    "typename",
];

/// Words followed by a parenthesised argument that belongs to the declaration, not a
/// declarator: attributes and alignment.
const WITH_ARGUMENTS: &[&str] = &[
    "__align__",
    "alignas",
    "__attribute__",
    "__declspec",
    "__launch_bounds__",
    "decltype",
];

/// The variables `code` (a [`super::source::code_view`]) defines with `__device__` or
/// `__constant__` in the global namespace (or in an anonymous namespace or `extern "C"` block,
/// whose names are used as they are), in order, without duplicates.
pub fn global_variables(code: &[u8]) -> Vec<String> {
    let code = without_directives(code);
    let mut found: Vec<String> = Vec::new();
    let mut starts: Vec<usize> = ["__device__", "__constant__"]
        .iter()
        .flat_map(|w| find_word(&code, w))
        .collect();
    starts.sort_unstable();
    let mut done_until = 0;
    for pos in starts {
        // `__device__ __constant__ float x;` is one declaration.
        if pos < done_until {
            continue;
        }
        let start = statement_start(&code, pos);
        if !global_scope(&code, start) || leads_with(&code, start, pos, &["extern", "template"]) {
            continue;
        }
        let (names, end) = declarators(&code, pos);
        done_until = end;
        for name in names {
            if !found.contains(&name) {
                found.push(name);
            }
        }
    }
    found
}

/// `code` with every preprocessor directive blanked (a `#define` of a declaration declares
/// nothing until it is used; the expanded text is scanned for those).
fn without_directives(code: &[u8]) -> Vec<u8> {
    let mut out = code.to_vec();
    let mut i = 0;
    let mut line_start = true;
    while i < out.len() {
        if line_start && out[i] == b'#' {
            while i < out.len() && out[i] != b'\n' {
                let continued = out[i] == b'\\' && out.get(i + 1) == Some(&b'\n');
                out[i] = b' ';
                i += if continued { 2 } else { 1 };
            }
            continue;
        }
        if out[i] == b'\n' {
            line_start = true;
        } else if !out[i].is_ascii_whitespace() {
            line_start = false;
        }
        i += 1;
    }
    out
}

/// Where the statement holding `pos` starts: just after the last `;`, `{` or `}` before it.
fn statement_start(code: &[u8], pos: usize) -> usize {
    code[..pos]
        .iter()
        .rposition(|&c| c == b';' || c == b'{' || c == b'}')
        .map_or(0, |p| p + 1)
}

/// Whether the statement from `start` to `pos` starts with one of `words`.
fn leads_with(code: &[u8], start: usize, pos: usize, words: &[&str]) -> bool {
    tokens(&code[..pos], start)
        .next()
        .is_some_and(|(_, t)| words.contains(&t.as_str()))
}

/// Whether `pos` lies in no braces but those of `extern "C" { … }` and anonymous namespaces.
fn global_scope(code: &[u8], pos: usize) -> bool {
    // For each open brace, whether names declared in it are global ones.
    let mut open: Vec<bool> = Vec::new();
    let mut statement = 0;
    for (i, &c) in code[..pos].iter().enumerate() {
        match c {
            b'{' => {
                let head: Vec<String> = tokens(&code[..i], statement).map(|(_, t)| t).collect();
                let heads: Vec<&str> = head.iter().map(String::as_str).collect();
                let transparent =
                    matches!(heads.as_slice(), ["namespace"] | ["extern", "\"", "\""]);
                open.push(transparent);
                statement = i + 1;
            }
            b'}' => {
                open.pop();
                statement = i + 1;
            }
            b';' => statement = i + 1,
            _ => {}
        }
    }
    open.iter().all(|&t| t)
}

/// The names of the variables the declaration at `pos` defines (none for a function), and
/// where it ends.
fn declarators(code: &[u8], pos: usize) -> (Vec<String>, usize) {
    let toks: Vec<(usize, String)> = tokens(code, pos).take(4096).collect();
    let mut names = Vec::new();
    let mut prev: Option<String> = None;
    let mut named = false;
    let mut i = 0;
    let end_at = |i: usize| toks.get(i).map_or(code.len(), |(at, _)| *at + 1);
    while i < toks.len() {
        let t = toks[i].1.as_str();
        match t {
            "operator" => return (Vec::new(), end_at(skip_to_end(&toks, i))),
            "(" => {
                if prev.as_deref().is_some_and(|p| WITH_ARGUMENTS.contains(&p)) {
                    i = skip_balanced(&toks, i);
                    prev = None;
                    continue;
                }
                // `T (*name)(args)`: a pointer to a function, a variable.
                if !named && matches!(toks.get(i + 1).map(|t| t.1.as_str()), Some("*" | "&")) {
                    let close = skip_balanced(&toks, i);
                    let inner = toks[i + 1..close.saturating_sub(1)]
                        .iter()
                        .rev()
                        .find(|(_, t)| is_name(t));
                    if let Some((_, name)) = inner {
                        names.push(name.clone());
                        named = true;
                    }
                    i = close;
                    // Its parameters, or an array's bounds.
                    while matches!(toks.get(i).map(|t| t.1.as_str()), Some("(" | "[")) {
                        i = skip_balanced(&toks, i);
                    }
                    prev = None;
                    continue;
                }
                // A function's parameters (or an initialisation in parentheses, which reads
                // the same and which CUDA code does not write for device variables).
                return (Vec::new(), end_at(skip_to_end(&toks, i)));
            }
            "<" => {
                i = skip_angles(&toks, i);
                prev = None;
                continue;
            }
            "[" | "=" | "{" | "," | ";" => {
                if !named {
                    if let Some(name) = prev.take().filter(|p| is_name(p)) {
                        names.push(name);
                    }
                }
                match t {
                    "[" => {
                        named = true;
                        i = skip_balanced(&toks, i);
                        continue;
                    }
                    "=" | "{" => {
                        // The initialiser, up to the next declarator or the end.
                        named = true;
                        i = skip_initialiser(&toks, i);
                        continue;
                    }
                    "," => {
                        named = false;
                        prev = None;
                    }
                    _ => return (names, end_at(i)),
                }
            }
            _ => prev = Some(t.to_string()),
        }
        i += 1;
    }
    (names, code.len())
}

/// Whether `t` can be a variable's name.
fn is_name(t: &str) -> bool {
    t.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && !NOT_NAMES.contains(&t)
        && !WITH_ARGUMENTS.contains(&t)
}

/// The index just past the bracket closing the one at `i` (`(`, `[` or `{`).
fn skip_balanced(toks: &[(usize, String)], i: usize) -> usize {
    let mut depth = 0i32;
    for (j, (_, t)) in toks.iter().enumerate().skip(i) {
        match t.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth <= 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The index just past the `>` closing the `<` at `i` (template arguments in a type).
fn skip_angles(toks: &[(usize, String)], i: usize) -> usize {
    let mut depth = 0i32;
    let mut j = i;
    while j < toks.len() {
        match toks[j].1.as_str() {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth <= 0 {
                    return j + 1;
                }
            }
            "(" | "[" | "{" => {
                j = skip_balanced(toks, j);
                continue;
            }
            ";" => return j,
            _ => {}
        }
        j += 1;
    }
    toks.len()
}

/// The index of the `,` or `;` that ends the initialiser starting at `i` (`=` or `{`).
fn skip_initialiser(toks: &[(usize, String)], i: usize) -> usize {
    let mut j = if toks[i].1 == "{" {
        skip_balanced(toks, i)
    } else {
        i + 1
    };
    while j < toks.len() {
        match toks[j].1.as_str() {
            "(" | "[" | "{" => j = skip_balanced(toks, j),
            "," | ";" => return j,
            _ => j += 1,
        }
    }
    toks.len()
}

/// The index of the `;` or the closing `}` of the body that ends the declaration at `i`.
fn skip_to_end(toks: &[(usize, String)], i: usize) -> usize {
    let mut j = i;
    while j < toks.len() {
        match toks[j].1.as_str() {
            "(" | "[" => j = skip_balanced(toks, j),
            "{" => return skip_balanced(toks, j).saturating_sub(1),
            ";" => return j,
            _ => j += 1,
        }
    }
    toks.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvrtc::source::code_view;

    /// Declarations that CUDA headers and public codebases write, each beside what a C++
    /// compiler makes of it.
    const CORPUS: &str = r#"
struct Packed { float v[4];
    __device__ float& operator[](int i) { return v[i]; }
    __device__ const float& operator[](int i) const { return v[i]; }
    __device__ Packed& operator=(const Packed& o) = default;
    __device__ explicit operator float() const { return v[0]; }
};
template <class T> struct Vec { T x; __device__ T& operator[](int) { return x; } };
__device__ __forceinline__ float warpReduceSum(float v) { return v; }
__device__ inline float twice(float a) { return 2.0f * a; }
template <int N> __device__ float first(const float (&a)[N]) { return a[0]; }
template <class T> __device__ T zero_of() { return T(0); }
__device__ float scale = 1.0f;
__device__ int counters[16];
__constant__ float table[8] = {0, 1, 2, 3, 4, 5, 6, 7};
__device__ __align__(16) float aligned_buf[4];
__device__ unsigned int a_count, b_count = 3, c_counts[2];
__device__ int braced{5};
__device__ Vec<float> templated_var;
__device__ Vec<Vec<int>> nested_var;
__device__ float (*fn_ptr)(float);
__device__ __constant__ int both_words = 1;
static __device__ float hidden_scale = 2.0f;
extern __device__ int defined_elsewhere;
namespace inner { __device__ int namespaced; __device__ float f(float a) { return a; } }
namespace { __device__ int anonymous_ns; }
extern "C" { __device__ int in_extern_c; }
#define DEVICE_VAR(name) __device__ float name
__device__ float after_macro;
__device__ void declared_only(int n);
"#;

    /// The variables in the global namespace the host compiler defines for the corpus, with
    /// CUDA's words defined away: its data symbols (`nm`) whose names have no `::`.
    fn compiler_view(corpus: &str) -> Option<Vec<String>> {
        let dir = std::env::temp_dir().join(format!("gpu-labs-corpus-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let source = dir.join("corpus.cpp");
        let header = "#define __device__\n#define __constant__\n#define __forceinline__ inline\n\
                      #define __align__(n) alignas(n)\n";
        // Static variables are kept (`-O0` keeps unused ones), and used so none is dropped.
        std::fs::write(&source, format!("{header}{corpus}")).ok()?;
        let object = dir.join("corpus.o");
        let compiled = std::process::Command::new("c++")
            .args(["-std=c++17", "-O0", "-fkeep-static-consts", "-c"])
            .arg(&source)
            .arg("-o")
            .arg(&object)
            .status()
            .ok()?;
        assert!(compiled.success(), "the corpus is C++ the compiler accepts");
        let out = std::process::Command::new("nm")
            .args(["--defined-only", "-C"])
            .arg(&object)
            .output()
            .ok()?;
        let _ = std::fs::remove_dir_all(&dir);
        let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, ' ');
                let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
                let data = "BbDdRrVvGgSs".contains(kind);
                (data && !name.contains("::") && !name.starts_with('.')).then(|| name.to_string())
            })
            .collect();
        names.sort();
        Some(names)
    }

    #[test]
    fn the_variables_found_are_those_a_compiler_defines() {
        let mut found = global_variables(&code_view(CORPUS));
        found.sort();
        let mut expected =
            compiler_view(CORPUS).expect("c++ and nm (binutils), which the emulator needs");
        // An anonymous namespace's names are local to the file; the compiler names them
        // `(anonymous namespace)::…`, and they are used as they are.
        expected.push("anonymous_ns".into());
        expected.sort();
        assert_eq!(found, expected);
        for name in [
            "operator",
            "name",
            "defined_elsewhere",
            "namespaced",
            "fn_ptr",
        ] {
            assert_eq!(
                found.contains(&name.to_string()),
                name == "fn_ptr",
                "{name}"
            );
        }
    }
}
