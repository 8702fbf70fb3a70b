//! Reads a CUDA C source the way the emulator needs: which kernels and globals it defines,
//! whether its threads synchronise, and rewriting `extern __shared__` arrays, then wraps it
//! with the prelude and the per-kernel descriptors into one C++ translation unit.

/// What a scan of a CUDA C source found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Names of the (non-template) `__global__` functions, in order, without duplicates.
    pub kernels: Vec<String>,
    /// Names of the `__constant__` and `__device__` variables at namespace scope.
    pub globals: Vec<String>,
    /// Whether the source uses block or warp synchronisation (then threads run as fibers).
    pub needs_fibers: bool,
    /// The kernels whose own code (their bodies and every function of the source they call)
    /// never synchronises, in a source that does: their threads run in a loop, not as fibers.
    pub plain_kernels: Vec<String>,
    /// Static `__shared__` declarations whose size can be computed after the source.
    pub shared: Vec<SharedDecl>,
}

/// A static `__shared__` declaration, for the launch check of shared memory per block.
#[derive(Debug, PartialEq, Eq)]
pub struct SharedDecl {
    /// The kernel whose body declares it (`None`: outside kernels, counted for all of them).
    pub kernel: Option<String>,
    /// A C++ type whose `sizeof` is its size, e.g. `float[TILE][TILE]`.
    pub ty: String,
    /// Identifiers the type uses, which must be macros still defined after the source.
    pub macros: Vec<String>,
}

/// Element types a `__shared__` array may have for its size to be computed.
const SHARED_TYPES: &[&str] = &[
    "unsigned", "signed", "volatile", "const", "float", "double", "int", "char", "short", "long",
    "bool", "size_t", "float2", "float3", "float4", "double2", "int2", "int3", "int4", "uint2",
    "uint3", "uint4", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
    "uint64_t",
];

/// Tokens that make a module run its threads as fibers.
const SYNC_TOKENS: &[&str] = &[
    "__syncthreads",
    "__syncwarp",
    "__shfl",
    "__ballot_sync",
    "__any_sync",
    "__all_sync",
    "cooperative_groups",
];

/// The source with comments and string/char literals blanked out (same length, same lines).
pub fn code_view(src: &str) -> Vec<u8> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            let end = (i + 2).min(b.len());
            out[i..end].fill(b' ');
            i += 2;
        } else if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            i += 1;
            while i < b.len() && b[i] != q && b[i] != b'\n' {
                if b[i] == b'\\' {
                    out[i] = b' ';
                    i += 1;
                }
                if i < b.len() {
                    out[i] = b' ';
                }
                i += 1;
            }
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Positions where `word` occurs as a whole identifier.
pub(crate) fn find_word(code: &[u8], word: &str) -> Vec<usize> {
    let w = word.as_bytes();
    let mut hits = Vec::new();
    let mut i = 0;
    while i + w.len() <= code.len() {
        if &code[i..i + w.len()] == w
            && (i == 0 || !is_ident(code[i - 1]))
            && code.get(i + w.len()).is_none_or(|&c| !is_ident(c))
        {
            hits.push(i);
            i += w.len();
        } else {
            i += 1;
        }
    }
    hits
}

/// Spellings of inline assembly, poisoned after the prelude (see [`translation_unit`]).
pub const ASM_WORDS: &[&str] = &["asm", "__asm__", "__asm"];

/// C library functions the prelude needs (`symbols::PRELUDE_NEEDS`) that CUDA device code
/// has no use for, poisoned after the prelude: jumps to a saved context, allocations resized
/// or aligned by hand, the C library's own `free` (a kernel's `free` is the prelude's, device
/// code's heap), formatted output into a buffer or a stream (a kernel's module may
/// still need them, for the prelude, so the symbol check alone would let a kernel call them).
pub const HOST_ONLY: &[&str] = &[
    "__sigsetjmp",
    "sigsetjmp",
    "siglongjmp",
    "setjmp",
    "longjmp",
    "_setjmp",
    "_longjmp",
    "aligned_alloc",
    "realloc",
    "fflush",
    "fprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "__libc_free",
];

/// Identifiers poisoned after the prelude (besides [`ASM_WORDS`]): the namespace of the
/// prelude's state (the race check's and the device-memory check's), and the attributes that
/// would leave a function uninstrumented in a checked build (its accesses or its array
/// indices). Macro expansion and `##` pasting
/// cannot make them either (the compiler refuses a poisoned identifier wherever it appears,
/// except in the prelude's own macros).
pub const POISONED: &[&str] = &[
    "__gl",
    "no_sanitize",
    "__no_sanitize__",
    "no_sanitize_thread",
    "__no_sanitize_thread__",
    "no_sanitize_undefined",
    "__no_sanitize_undefined__",
    "indirect_branch",
    "__indirect_branch__",
    "function_return",
    "__function_return__",
    "nocf_check",
    "__nocf_check__",
    // The runtime's own entry points, which trust their arguments (a launch, a fiber, a saved
    // context): a kernel cannot call them by name. The test
    // `runtime_entry_points_are_poisoned` keeps this list whole.
    "__gl_run_blocks",
    "__gl_fault_jump",
    "__gl_switch",
    "__gl_fiber_main",
    "__gl_fiber_start",
    "__gl_indirect_call",
    "__ubsan_handle_out_of_bounds",
    "__ubsan_handle_out_of_bounds_abort",
    "__fentry__",
    "__x86_return_thunk",
    "__gl_bad_return",
    "__gl_shadow_sp",
    "no_instrument_function",
    "__no_instrument_function__",
    "disable_sanitizer_instrumentation",
    "__disable_sanitizer_instrumentation__",
];

/// The first thing in `src` (comments and string literals aside) that a kernel cannot do on
/// the emulator, as `(line, message)`: inline assembly, or placing code or data in a chosen
/// section (which could put machine code among the module's instructions).
pub fn forbidden(src: &str) -> Option<(usize, String)> {
    let code = code_view(src);
    let mut hits: Vec<(usize, String)> = Vec::new();
    for w in ASM_WORDS {
        if let Some(&at) = find_word(&code, w).first() {
            hits.push((
                at,
                format!(
                    "inline assembly ({w}) cannot run on the gpu-labs emulator; write the kernel \
                     in CUDA C"
                ),
            ));
        }
    }
    for w in ["section", "__section__"] {
        let called = find_word(&code, w).into_iter().find(|&at| {
            tokens(&code, at + w.len())
                .next()
                .is_some_and(|(_, t)| t == "(")
        });
        if let Some(at) = called {
            hits.push((
                at,
                format!(
                    "the attribute `{w}` is not allowed on the gpu-labs emulator (a kernel's code \
                     and data stay where the compiler puts them)"
                ),
            ));
        }
    }
    let (at, msg) = hits.into_iter().min_by_key(|(at, _)| *at)?;
    let line = 1 + code[..at].iter().filter(|&&c| c == b'\n').count();
    Some((line, msg))
}

/// Identifiers and single punctuation characters from `start`, skipping whitespace.
pub(crate) fn tokens(code: &[u8], start: usize) -> impl Iterator<Item = (usize, String)> + '_ {
    let mut i = start;
    std::iter::from_fn(move || {
        while i < code.len() && code[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= code.len() {
            return None;
        }
        let s = i;
        if is_ident(code[i]) {
            while i < code.len() && is_ident(code[i]) {
                i += 1;
            }
        } else {
            i += 1;
        }
        Some((s, String::from_utf8_lossy(&code[s..i]).into_owned()))
    })
}

/// Whether the declaration that contains `pos` starts with `template`.
fn is_template(code: &[u8], pos: usize) -> bool {
    let start = code[..pos]
        .iter()
        .rposition(|&c| c == b';' || c == b'}' || c == b'{')
        .map_or(0, |p| p + 1);
    !find_word(&code[start..pos], "template").is_empty()
}

/// The position of the bracket closing the one at `open`.
fn matching(code: &[u8], open: usize) -> Option<usize> {
    let (o, c) = (code[open], if code[open] == b'(' { b')' } else { b'}' });
    let mut depth = 0usize;
    for (i, &ch) in code.iter().enumerate().skip(open) {
        if ch == o {
            depth += 1;
        } else if ch == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The body `{...}` of the function whose parameter list opens at `paren`.
pub(crate) fn body_after(code: &[u8], paren: usize) -> Option<(usize, usize)> {
    let close = matching(code, paren)?;
    let rest = close
        + 1
        + code[close + 1..]
            .iter()
            .position(|c| !c.is_ascii_whitespace())?;
    if code[rest] != b'{' {
        return None;
    }
    Some((rest, matching(code, rest)?))
}

/// Static `__shared__` declarations with a computable size.
fn shared_decls(code: &[u8], bodies: &[(String, usize, usize)]) -> Vec<SharedDecl> {
    let mut out = Vec::new();
    for pos in find_word(code, "__shared__") {
        if String::from_utf8_lossy(&code[..pos])
            .trim_end()
            .ends_with("extern")
        {
            continue;
        }
        let Some(semi) = code[pos..].iter().position(|&c| c == b';').map(|p| p + pos) else {
            continue;
        };
        let decl = strip_align(&String::from_utf8_lossy(
            &code[pos + "__shared__".len()..semi],
        ));
        if decl.contains(['=', ',', '(', '{']) {
            continue;
        }
        let head_end = decl.find('[').unwrap_or(decl.len());
        let head: Vec<&str> = decl[..head_end].split_whitespace().collect();
        let Some((_name, ty)) = head.split_last() else {
            continue;
        };
        if ty.is_empty() || !ty.iter().all(|t| SHARED_TYPES.contains(t)) {
            continue;
        }
        let dims = &decl[head_end..];
        if !dims
            .chars()
            .all(|c| c.is_alphanumeric() || "_[]+-*/ \t\n".contains(c))
        {
            continue;
        }
        let mut macros: Vec<String> = Vec::new();
        for w in dims.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if w.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && !macros.iter().any(|m| m == w)
            {
                macros.push(w.to_string());
            }
        }
        let kernel = bodies
            .iter()
            .find(|(_, a, b)| (*a..*b).contains(&pos))
            .map(|(k, _, _)| k.clone());
        out.push(SharedDecl {
            kernel,
            ty: format!(
                "{}{}",
                ty.join(" "),
                dims.split_whitespace().collect::<String>()
            ),
            macros,
        });
    }
    out
}

/// Scans a source for kernels, globals and synchronisation.
pub fn scan(src: &str) -> Scan {
    let code = code_view(src);
    let mut out = Scan::default();
    let mut bodies = Vec::new();
    for pos in find_word(&code, "__global__") {
        if is_template(&code, pos) {
            continue;
        }
        let mut prev: Option<String> = None;
        let mut depth = 0;
        for (at, tok) in tokens(&code, pos + "__global__".len()) {
            if depth > 0 {
                match tok.as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
                continue;
            }
            if tok == "(" {
                match prev.as_deref() {
                    Some("__launch_bounds__") | Some("__align__") => depth = 1,
                    Some(name) => {
                        if !out.kernels.iter().any(|k| k == name) {
                            out.kernels.push(name.to_string());
                        }
                        if let Some((a, b)) = body_after(&code, at) {
                            bodies.push((name.to_string(), a, b));
                        }
                        break;
                    }
                    None => break,
                }
            } else if tok == ";" || tok == "{" {
                break;
            }
            prev = Some(tok);
        }
    }
    out.globals = super::declarations::global_variables(&code);
    out.shared = shared_decls(&code, &bodies);
    out.needs_fibers = SYNC_TOKENS
        .iter()
        .any(|t| code.windows(t.len()).any(|w| w == t.as_bytes()));
    if out.needs_fibers {
        out.plain_kernels = plain_kernels(&code, &bodies);
    }
    out
}

/// Words that may synchronise threads, wherever they stand (a call, a member's name, a macro):
/// a function whose body holds one is taken to synchronise.
const MAY_SYNC: &[&str] = &[
    "__sync",
    "_sync",
    "__shfl",
    "__activemask",
    "this_thread_block",
    "tiled_partition",
    "coalesced_threads",
    "grid_group",
    "barrier",
    "co_await",
    "co_yield",
    "co_return",
    "memcpy_async",
    "pipeline",
];

/// The kernels of `kernels` (name and body range) whose code never synchronises: no word of
/// [`MAY_SYNC`] in their body nor in the body of any function of the source they name, however
/// deep. Conservative: a source with cooperative groups, or with such a word outside every
/// function body found (an operator's, a macro's), has none.
fn plain_kernels(code: &[u8], kernels: &[(String, usize, usize)]) -> Vec<String> {
    let has = |a: usize, b: usize, w: &str| code[a..b].windows(w.len()).any(|x| x == w.as_bytes());
    if has(0, code.len(), "cooperative_groups") {
        return Vec::new();
    }
    let defs = function_bodies(code);
    for w in MAY_SYNC {
        let outside = code
            .windows(w.len())
            .enumerate()
            .filter(|(_, x)| *x == w.as_bytes())
            .any(|(p, _)| !defs.iter().any(|(_, a, b)| *a <= p && p < *b));
        if outside {
            return Vec::new();
        }
    }
    let syncs = |a: usize, b: usize| MAY_SYNC.iter().any(|w| has(a, b, w));
    let mut plain = Vec::new();
    for (kernel, a, b) in kernels {
        let mut seen: Vec<(usize, usize)> = vec![(*a, *b)];
        let mut todo = vec![(*a, *b)];
        let mut synchronises = false;
        while let Some((a, b)) = todo.pop() {
            if syncs(a, b) || seen.len() > 4096 {
                synchronises = true;
                break;
            }
            for (_, tok) in tokens(&code[..b], a) {
                for (name, da, db) in &defs {
                    if *name == tok && !seen.contains(&(*da, *db)) {
                        seen.push((*da, *db));
                        todo.push((*da, *db));
                    }
                }
            }
        }
        if !synchronises {
            plain.push(kernel.clone());
        }
    }
    plain
}

/// Every function definition of `code` with a body: its name (the identifier before its
/// parameters) and the body's range. Keywords that take parentheses are not names.
fn function_bodies(code: &[u8]) -> Vec<(String, usize, usize)> {
    function_defs(code)
        .into_iter()
        .map(|d| (d.name, d.body.0, d.body.1))
        .collect()
}

/// A function definition of a source: its name, where the name is, and its body `{...}`.
pub(crate) struct FunctionDef {
    pub name: String,
    pub name_at: usize,
    pub body: (usize, usize),
}

/// Every function definition of `code` with a body, in order (see [`function_bodies`]).
pub(crate) fn function_defs(code: &[u8]) -> Vec<FunctionDef> {
    const NOT_FUNCTIONS: &[&str] = &[
        "if",
        "for",
        "while",
        "switch",
        "catch",
        "return",
        "sizeof",
        "alignof",
        "decltype",
        "__launch_bounds__",
        "__align__",
        "__attribute__",
        "alignas",
        "defined",
    ];
    let mut out = Vec::new();
    let mut prev: Option<(usize, String)> = None;
    for (at, tok) in tokens(code, 0) {
        if tok == "(" {
            if let Some((name_at, name)) = prev.take().filter(|(_, p)| {
                p.bytes()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                    && !NOT_FUNCTIONS.contains(&p.as_str())
            }) {
                if let Some(body) = body_after_qualifiers(code, at) {
                    out.push(FunctionDef {
                        name,
                        name_at,
                        body,
                    });
                }
            }
            continue;
        }
        prev = Some((at, tok));
    }
    out
}

/// The body `{...}` of the function whose parameter list opens at `paren`, past qualifiers
/// (`const`, `noexcept`, `override`, a trailing return type) between them.
fn body_after_qualifiers(code: &[u8], paren: usize) -> Option<(usize, usize)> {
    let close = matching(code, paren)?;
    for (at, tok) in tokens(code, close + 1).take(16) {
        match tok.as_str() {
            "{" => return Some((at, matching(code, at)?)),
            ";" | "=" | "," | ")" | "(" | "}" => return None,
            _ => {}
        }
    }
    None
}

/// Whether `pos` is outside every `{...}` of `code` (namespace scope, for a source whose
/// namespaces have no braces of their own around the position).
fn at_file_scope(code: &[u8], pos: usize) -> bool {
    let mut depth = 0i64;
    for &c in &code[..pos] {
        match c {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
    }
    depth <= 0
}

/// Rewrites `extern __shared__ T name[];` into `T* name = (T*)__GL_DYN_SMEM();` inside a
/// function (each call reads the running block's buffer), and at file scope, where a pointer
/// would be set once at load, into a macro `#define name ((T*)__GL_DYN_SMEM())` when the
/// declaration starts its line. Every other byte (and so every line number) is kept.
pub fn rewrite_dynamic_shared(src: &str) -> String {
    let code = code_view(src);
    let mut out = String::with_capacity(src.len() + 64);
    let mut last = 0;
    for pos in find_word(&code, "extern") {
        if pos < last {
            continue;
        }
        let mut toks = tokens(&code, pos + "extern".len());
        if toks.next().map(|(_, t)| t) != Some("__shared__".to_string()) {
            continue;
        }
        let Some(semi) = code[pos..].iter().position(|&c| c == b';').map(|p| p + pos) else {
            continue;
        };
        let decl = &src[pos..semi];
        let body = decl
            .trim_start_matches("extern")
            .trim_start()
            .trim_start_matches("__shared__");
        let body = strip_align(body);
        let body = body
            .trim()
            .trim_end_matches(|c: char| c == ']' || c == '[' || c.is_whitespace());
        let split = body
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let (ty, name) = (body[..split].trim(), &body[split..]);
        if ty.is_empty() || name.is_empty() {
            continue;
        }
        let line_start = code[..pos]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let starts_line = code[line_start..pos].iter().all(u8::is_ascii_whitespace);
        out.push_str(&src[last..pos]);
        if starts_line && at_file_scope(&code, pos) {
            out.push_str(&format!("#define {name} (({ty}*)__GL_DYN_SMEM())"));
        } else {
            out.push_str(&format!("{ty}* {name} = ({ty}*)__GL_DYN_SMEM();"));
        }
        out.extend(std::iter::repeat_n('\n', decl.matches('\n').count()));
        last = semi + 1;
    }
    out.push_str(&src[last..]);
    out
}

fn strip_align(s: &str) -> String {
    let mut s = s.to_string();
    while let Some(p) = s.find("__align__") {
        let end = s[p..].find(')').map_or(s.len(), |e| p + e + 1);
        s.replace_range(p..end, "");
    }
    s
}

/// The whole translation unit handed to the C++ compiler; `exprs` are the program's name
/// expressions ([`super::names`]).
pub fn translation_unit(src: &str, name: &str, prelude: &str, exprs: &[String]) -> String {
    translation_unit_for(&scan(src), src, name, prelude, exprs, &[])
}

/// [`translation_unit`] with the scan already made (by [`super::expand`] when the source
/// needs the preprocessor to be scanned).
pub fn translation_unit_for(
    scan: &Scan,
    src: &str,
    name: &str,
    prelude: &str,
    exprs: &[String],
    macros: &[String],
) -> String {
    let mut tu = String::with_capacity(prelude.len() + src.len() + 1024);
    tu.push_str(&format!(
        "#define __GL_USE_FIBERS {}\n",
        u8::from(scan.needs_fibers)
    ));
    tu.push_str("#line 1 \"gpu-labs-prelude.h\"\n");
    tu.push_str(prelude);
    // Kernels get no inline assembly: what `forbidden` does not see (a header, a macro) the
    // compiler refuses. The prelude and the generated code below use none.
    tu.push_str(&format!("\n#pragma GCC poison {}", ASM_WORDS.join(" ")));
    // Nor a way past the checks of checked builds: the prelude's state (all in namespace
    // `__gl`) and the attributes that leave a function uninstrumented.
    tu.push_str(&format!("\n#pragma GCC poison {}", POISONED.join(" ")));
    // Nor the C library's functions that the prelude alone needs (CUDA device code has none
    // of them, and each could write host memory or jump anywhere); `printf` is the prelude's,
    // without `%n`.
    tu.push_str(&format!("\n#pragma GCC poison {}", HOST_ONLY.join(" ")));
    tu.push_str(
        "\n#define printf __gl_printf\n#define __builtin_printf __gl_printf\n\
         namespace std { using ::__gl_printf; }",
    );
    // The program's own macros (`-D`, `-U`) apply to its source, never to the prelude.
    for m in macros {
        tu.push('\n');
        tu.push_str(m);
    }
    tu.push_str(&format!(
        "\n#line 1 \"{}\"\n",
        name.replace(['"', '\\'], "_")
    ));
    tu.push_str(&rewrite_dynamic_shared(src));
    tu.push_str("\n#line 1 \"gpu-labs-generated\"\n");
    for k in &scan.kernels {
        tu.push_str(&format!(
            "static constexpr unsigned __gl_plain_{k} = {};\n",
            u8::from(scan.plain_kernels.contains(k))
        ));
        tu.push_str(&format!(
            "static constexpr unsigned long long __gl_smem_{k} = 0ULL\n"
        ));
        for d in scan
            .shared
            .iter()
            .filter(|d| d.kernel.as_ref().is_none_or(|o| o == k))
        {
            if d.macros.is_empty() {
                tu.push_str(&format!("    + sizeof({})\n", d.ty));
            } else {
                let cond: Vec<String> = d.macros.iter().map(|m| format!("defined({m})")).collect();
                tu.push_str(&format!(
                    "#if {}\n    + sizeof({})\n#endif\n",
                    cond.join(" && "),
                    d.ty
                ));
            }
        }
        tu.push_str(";\n");
        tu.push_str(&format!("__GL_KERNEL({k})\n"));
    }
    for g in &scan.globals {
        tu.push_str(&format!("__GL_GLOBAL({g})\n"));
    }
    tu.push_str(&super::names::generated(exprs));
    tu
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_inline_assembly_and_sections() {
        let ok = "// asm(\"syscall\") in a comment\nconst char* s = \"__asm__\";\n\
                  __global__ void k(float* a) { int section = 1; a[0] = section; }\n";
        assert_eq!(forbidden(ok), None);
        let (line, msg) =
            forbidden("__global__ void k() {\n  asm volatile(\"syscall\");\n}\n").unwrap();
        assert_eq!(line, 2);
        assert!(msg.contains("inline assembly (asm)"), "{msg}");
        let (line, msg) = forbidden("int x;\n\n__asm__(\"nop\");\n").unwrap();
        assert_eq!(line, 3);
        assert!(msg.contains("(__asm__)"), "{msg}");
        let (line, msg) =
            forbidden("\n__attribute__((section(\".text\"))) const char c[] = {0x0f, 0x05};")
                .unwrap();
        assert_eq!(line, 2);
        assert!(msg.contains("`section`"), "{msg}");
        let tu = translation_unit("", "k.cu", "// prelude\n", &[]);
        assert!(
            tu.contains(
                "#pragma GCC poison asm __asm__ __asm\n#pragma GCC poison __gl no_sanitize "
            ),
            "{tu}"
        );
        assert!(
            tu.contains("__disable_sanitizer_instrumentation__\n#pragma GCC poison __sigsetjmp "),
            "{tu}"
        );
        assert!(
            tu.contains("namespace std { using ::__gl_printf; }\n#line 1 \"k.cu\""),
            "{tu}"
        );
    }

    /// One warp reduction in a shared helper sends only the kernels that call it (however
    /// deep) to fibers; the others run as loops. Anything the scan cannot place keeps every
    /// kernel on fibers.
    #[test]
    fn only_kernels_that_reach_a_synchronisation_run_as_fibers() {
        let src = r#"
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__device__ float row_sum(const float* x) { return warp_sum(x[threadIdx.x]); }
__device__ float twice(float a) const_like { return 2.0f * a; }
extern "C" __global__ void norm(const float* x, float* y) { y[0] = row_sum(x); }
extern "C" __global__ void scale(const float* x, float* y) { y[threadIdx.x] = twice(x[threadIdx.x]); }
extern "C" __global__ void tile(float* y) { __shared__ float s[32]; s[threadIdx.x] = 1; __syncthreads(); y[0] = s[1]; }
"#;
        let s = scan(&src.replace("const_like", ""));
        assert!(s.needs_fibers);
        assert_eq!(s.plain_kernels, vec!["scale"]);
        let tu = translation_unit(&src.replace("const_like", ""), "k.cu", "", &[]);
        assert!(tu.contains("__gl_plain_scale = 1;"), "{tu}");
        assert!(tu.contains("__gl_plain_norm = 0;"), "{tu}");
        // A synchronisation the scan cannot place (in a macro) keeps them all on fibers.
        let hidden = format!(
            "#define WAIT() __syncthreads()\n{}",
            src.replace("const_like", "")
        );
        assert!(scan(&hidden).plain_kernels.is_empty());
        // So do cooperative groups.
        let cg = format!(
            "namespace cg = cooperative_groups;\n{}",
            src.replace("const_like", "")
        );
        assert!(scan(&cg).plain_kernels.is_empty());
    }

    #[test]
    fn finds_kernels_globals_and_sync() {
        let src = r#"
// __global__ void commented(int x) {}
__constant__ float coef[4];
__device__ int counter = 0;
__device__ float helper(float x) { return x; }
extern "C" __global__ void __launch_bounds__(256) add(float* a, int n) { __syncthreads(); }
extern "C" __global__ void mul(const float* __restrict__ a) {}
template <int N> __global__ void tmpl(float* a) {}
"#;
        let s = scan(src);
        assert_eq!(s.kernels, vec!["add", "mul"]);
        assert!(s.shared.is_empty());
        assert_eq!(s.globals, vec!["coef", "counter"]);
        assert!(s.needs_fibers);
    }

    #[test]
    fn finds_static_shared_sizes() {
        let src = "#define T 16\n__device__ void f() { __shared__ int x; }\n\
                   extern \"C\" __global__ void k(float* a) {\n  __shared__ float s[T][T + 1];\n\
                   extern __shared__ float d[];\n  __shared__ Foo skip[4];\n}\n";
        let s = scan(src);
        assert_eq!(
            s.shared,
            vec![
                SharedDecl {
                    kernel: None,
                    ty: "int".into(),
                    macros: vec![]
                },
                SharedDecl {
                    kernel: Some("k".into()),
                    ty: "float[T][T+1]".into(),
                    macros: vec!["T".into()]
                },
            ]
        );
        let tu = translation_unit(src, "p", "", &[]);
        assert!(
            tu.contains("#if defined(T)\n    + sizeof(float[T][T+1])\n#endif\n"),
            "{tu}"
        );
    }

    #[test]
    fn rewrites_dynamic_shared_keeping_lines() {
        let src = "a\nextern __shared__ __align__(16) float\n sdata[];\nb";
        let out = rewrite_dynamic_shared(src);
        assert_eq!(out, "a\n#define sdata ((float*)__GL_DYN_SMEM())\n\nb");
        let src =
            "__global__ void k() {\n  extern __shared__ int s[];\n}\nextern __shared__ char c[];\n";
        let out = rewrite_dynamic_shared(src);
        assert_eq!(
            out,
            "__global__ void k() {\n  int* s = (int*)__GL_DYN_SMEM();\n}\n#define c ((char*)__GL_DYN_SMEM())\n"
        );
    }
}
