//! Barrier and warp regions as loops, chosen kernel by kernel. A kernel whose GPU threads
//! wait for each other only through `__syncthreads()` and the warp-wide operations (shuffles,
//! votes, `__syncwarp`, `__activemask`), in its own body or in device functions it calls,
//! runs each GPU thread as a C++ stackless coroutine instead of a fiber: each such call
//! becomes a `co_await`, and the block runner resumes the block's threads warp by warp, so
//! each region between two of them is a loop over the threads (what PoCL and CuPBoP compile
//! kernels into). A device function that waits becomes a coroutine too (its return type
//! `T` becomes `Sub<T>`, and each call of it a `co_await`). The compiler keeps what a thread
//! needs across a wait in its frame, in loops and branches too, so no source splitting is
//! needed; a switch costs a call, where a fiber switch saves and restores a stack.
//!
//! Only what is certain takes this path; every other kernel runs as fibers, as before: one
//! that reaches `__syncthreads_count` and friends, a lambda in a function that waits (its
//! `return` is not the function's), or a waiting function that is also reached from a fiber
//! kernel, declared apart from its body, or named other than in a plain call. A source with
//! cooperative groups or asynchronous copies (their waits are barriers inside the headers'
//! functions), or with a wait that only the preprocessor can see (a macro), runs all its
//! kernels as fibers. Checked runs always run fibers (their epochs and
//! warp reports are the fiber scheduler's). A rewrite the compiler still refuses falls back
//! to fibers for the whole source ([`super::compile`]).

use std::collections::{BTreeMap, BTreeSet};

use super::source::{code_view, find_word, function_defs, tokens, FunctionDef};

/// The block barrier: scheduled at block scope.
const BARRIER: &str = "__syncthreads";

/// The warp-wide operations: scheduled at warp scope. Each has a coroutine form in the
/// prelude, named `__gl_co_` and its name without the leading underscores.
const WARP_OPS: &[&str] = &[
    "__syncwarp",
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
    "__ballot_sync",
    "__any_sync",
    "__all_sync",
    "__activemask",
];

/// Words that make a function, and every kernel that reaches it, run as fibers: the block
/// barriers that count or vote (`__syncthreads_count` and friends), which wait inside a
/// function of the prelude.
const FIBER_ONLY: &[&str] = &["__syncthreads_"];

/// Words that keep a whole source on fibers: cooperative groups (whose `sync()` waits inside
/// the header), asynchronous copies (their waits are barriers inside the headers' functions,
/// reached through objects that a function may take as a parameter, where its body never
/// names the header's words), and coroutines of the source's own.
const SOURCE_FIBER_ONLY: &[&str] = &[
    "cooperative_groups",
    "memcpy_async",
    "pipeline",
    "cuda::barrier",
    "cuda/barrier",
    "arrive",
    "co_await",
    "co_return",
    "co_yield",
];

/// Declaration specifiers that may come before a waiting device function's return type.
const SPECIFIERS: &[&str] = &[
    "static",
    "inline",
    "__inline__",
    "__forceinline__",
    "__noinline__",
    "__device__",
    "__host__",
    "extern",
];

/// The specifier that asks for a function to be inlined, which a coroutine cannot be.
const FORCE_INLINE: &str = "__forceinline__";

/// Words that rule a waiting device function's return type out of the rewrite (a coroutine
/// cannot be `constexpr`, nor deduce its return type).
const NOT_A_TYPE: &[&str] = &[
    "constexpr",
    "consteval",
    "auto",
    "decltype",
    "__attribute__",
    "friend",
    "virtual",
    "operator",
    "__global__",
];

/// Spaces to blank an `extern "C"` with.
const BLANKS: &str = "                                ";

/// A `__global__` function of the source: where its `void` is, and where the `extern` of an
/// `extern "C"` before it is.
struct Kernel {
    name: String,
    void_at: usize,
    extern_at: Option<usize>,
}

/// The `__global__` functions of `code`, or `None` when one's return type is not a plain
/// `void` after `__global__` (left to fibers).
fn kernels(code: &[u8]) -> Option<Vec<Kernel>> {
    let mut out = Vec::new();
    for pos in find_word(code, "__global__") {
        let start = code[..pos]
            .iter()
            .rposition(|&c| c == b';' || c == b'}' || c == b'{')
            .map_or(0, |p| p + 1);
        let extern_at = find_word(&code[start..pos], "extern")
            .first()
            .map(|e| start + e);
        let mut void_at = None;
        let mut prev: Option<String> = None;
        let mut skip_parens = 0;
        for (at, tok) in tokens(code, pos + "__global__".len()) {
            if skip_parens > 0 {
                match tok.as_str() {
                    "(" => skip_parens += 1,
                    ")" => skip_parens -= 1,
                    _ => {}
                }
                continue;
            }
            match tok.as_str() {
                "void" => void_at = Some(at),
                "(" => match prev.as_deref() {
                    Some("__launch_bounds__") | Some("__align__") => skip_parens = 1,
                    Some(name) => {
                        out.push(Kernel {
                            name: name.to_string(),
                            void_at: void_at?,
                            extern_at,
                        });
                        break;
                    }
                    None => return None,
                },
                ";" | "{" | "<" | ">" | "," => return None,
                _ => {}
            }
            prev = Some(tok);
        }
    }
    Some(out)
}

/// Whether `body` holds something that looks like a lambda (`]` then `(` or `{`).
fn has_lambda(body: &[u8]) -> bool {
    body.iter().enumerate().any(|(i, &c)| {
        c == b']'
            && body[i + 1..]
                .iter()
                .find(|c| !c.is_ascii_whitespace())
                .is_some_and(|&n| n == b'(' || n == b'{' || n == b'm')
    })
}

/// Whether `code` has an `extern "C" { … }` block.
fn has_linkage_block(code: &[u8]) -> bool {
    find_word(code, "extern").into_iter().any(|at| {
        tokens(code, at + "extern".len())
            .find(|(_, t)| t != "\"")
            .is_some_and(|(_, t)| t == "{")
    })
}

/// What the rewrite knows of a function name of the source, over all its definitions
/// (overloads and specialisations share a name, and so a call's spelling).
#[derive(Default)]
struct NameInfo {
    /// A body calls `__syncthreads()` or a warp-wide operation itself.
    waits: bool,
    /// A body holds a word of [`FIBER_ONLY`].
    fiber: bool,
    /// A body holds something that looks like a lambda.
    lambda: bool,
    /// The source's function names that its bodies name.
    calls: BTreeSet<String>,
}

/// Adds to `names` every name of `info` that calls one of them, however deep.
fn spread_to_callers<'a>(info: &BTreeMap<&'a str, NameInfo>, names: &mut BTreeSet<&'a str>) {
    loop {
        let more: Vec<&str> = info
            .iter()
            .filter(|(n, i)| {
                !names.contains(*n) && i.calls.iter().any(|c| names.contains(c.as_str()))
            })
            .map(|(n, _)| *n)
            .collect();
        if more.is_empty() {
            return;
        }
        names.extend(more);
    }
}

/// Whether `code` holds `w` anywhere (not only as a word).
fn contains(code: &[u8], w: &str) -> bool {
    code.windows(w.len()).any(|c| c == w.as_bytes())
}

/// The calls that wait for other GPU threads: the barrier, then the warp-wide operations.
fn waits() -> impl Iterator<Item = &'static str> {
    std::iter::once(BARRIER).chain(WARP_OPS.iter().copied())
}

/// Whether the word `name` at `at` is a plain call (`name(` or `name<…>(`, not a member's,
/// a qualified name's or an address's), before which a `co_await` can go.
fn plain_call(code: &[u8], at: usize, name: &str) -> bool {
    if let Some(b) = code[..at].iter().rposition(|c| !c.is_ascii_whitespace()) {
        let c = code[b];
        if c == b'.' || c == b':' || c == b'&' || (c == b'>' && b > 0 && code[b - 1] == b'-') {
            return false;
        }
    }
    let mut toks = tokens(code, at + name.len());
    match toks.next() {
        Some((_, t)) if t == "(" => true,
        Some((lt, t)) if t == "<" => {
            let mut depth = 0i32;
            for (pos, &c) in code.iter().enumerate().skip(lt) {
                match c {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            return tokens(code, pos + 1).next().is_some_and(|(_, t)| t == "(");
                        }
                    }
                    b';' | b'{' | b'}' => return false,
                    _ => {}
                }
            }
            false
        }
        _ => false,
    }
}

/// Where the return type of the definition whose name is at `name_at` lies, when it is one
/// that `Sub<…>` can wrap: after the template header and the specifiers, before the name;
/// and where its `__forceinline__`s are (a coroutine cannot be inlined: the rewrite drops
/// them).
fn return_type(code: &[u8], name_at: usize) -> Option<((usize, usize), Vec<usize>)> {
    let from = code[..name_at]
        .iter()
        .rposition(|&c| c == b';' || c == b'}' || c == b'{')
        .map_or(0, |p| p + 1);
    // A preprocessor line in between (a `#define` above the function) is not part of it.
    let mut start = from;
    let mut line = from;
    for (i, &c) in code[from..name_at].iter().enumerate() {
        if c == b'\n' {
            if code[line..from + i].trim_ascii_start().starts_with(b"#") {
                start = from + i + 1;
            }
            line = from + i + 1;
        }
    }
    let toks: Vec<(usize, String)> = tokens(&code[..name_at], start).collect();
    let mut i = 0;
    if toks.first().is_some_and(|t| t.1 == "template") {
        let mut depth = 0i32;
        i = 1;
        loop {
            match toks.get(i)?.1.as_str() {
                "<" => depth += 1,
                ">" => depth -= 1,
                _ => {}
            }
            i += 1;
            if depth == 0 {
                break;
            }
        }
    }
    let mut forced = Vec::new();
    while let Some(t) = toks.get(i).filter(|t| SPECIFIERS.contains(&t.1.as_str())) {
        if t.1 == FORCE_INLINE {
            forced.push(t.0);
        }
        i += 1;
    }
    let ty = &toks[i..];
    let last = ty.last()?;
    if last.1 == ":"
        || ty.iter().any(|(_, t)| {
            SPECIFIERS.contains(&t.as_str())
                || NOT_A_TYPE.contains(&t.as_str())
                || t == "["
                || t == "("
                || t == "#"
        })
    {
        return None;
    }
    Some(((ty[0].0, last.0 + last.1.len()), forced))
}

/// `src` with the kernels that wait (see the module's doc) made coroutines, with the device
/// functions they reach that wait (same lines), or `None` when none can be: every kernel of
/// it then runs as before (fibers, or a loop for one that never waits).
///
/// An `extern "C"` before such a kernel is blanked: g++ 12 gives a C-linkage coroutine's
/// helper functions its own name and cannot assemble it. The emulator finds kernels by their
/// descriptors, never by symbol, so nothing else sees the difference; a program with name
/// expressions, whose lowered names are read from symbols, is not rewritten
/// ([`super::compile`]), nor one with an `extern "C" { … }` block.
pub fn rewrite(src: &str) -> Option<String> {
    let code = code_view(src);
    if SOURCE_FIBER_ONLY.iter().any(|w| contains(&code, w)) || has_linkage_block(&code) {
        return None;
    }
    let kernels = kernels(&code)?;
    let defs = function_defs(&code);
    // Every wait inside some function's body (one that only a macro makes is left alone).
    let waits_at: Vec<usize> = waits().flat_map(|w| find_word(&code, w)).collect();
    if waits_at.is_empty()
        || waits_at
            .iter()
            .any(|&p| !defs.iter().any(|d| d.body.0 < p && p < d.body.1))
    {
        return None;
    }
    let names: BTreeSet<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    let mut info: BTreeMap<&str, NameInfo> = BTreeMap::new();
    for d in &defs {
        let body = &code[d.body.0..d.body.1];
        let e = info.entry(d.name.as_str()).or_default();
        e.waits |= waits().any(|w| !find_word(body, w).is_empty());
        e.fiber |= FIBER_ONLY.iter().any(|w| contains(body, w));
        e.lambda |= has_lambda(body);
        for (_, tok) in tokens(&code[..d.body.1], d.body.0) {
            if names.contains(tok.as_str()) {
                e.calls.insert(tok);
            }
        }
    }
    // The names that wait, themselves or through a call.
    let mut suspends: BTreeSet<&str> = info
        .iter()
        .filter(|(_, i)| i.waits)
        .map(|(n, _)| *n)
        .collect();
    spread_to_callers(&info, &mut suspends);
    let is_kernel = |n: &str| kernels.iter().any(|k| k.name == n);
    // The names that must stay fibers: the fiber-only ones, a waiting one with a lambda, a
    // waiting device function that is declared apart, named other than in a plain call, or
    // whose return type the rewrite cannot wrap.
    let mut fiber: BTreeSet<&str> = info
        .iter()
        .filter(|(n, i)| i.fiber || (i.lambda && suspends.contains(*n)))
        .map(|(n, _)| *n)
        .collect();
    for &n in suspends.iter().filter(|n| !is_kernel(n)) {
        let own: Vec<&FunctionDef> = defs.iter().filter(|d| d.name == n).collect();
        // Each word of the name must be a definition's name or a plain call in a body.
        let named_well = |p: usize| {
            own.iter().any(|d| d.name_at == p)
                || (defs.iter().any(|d| d.body.0 < p && p < d.body.1) && plain_call(&code, p, n))
        };
        let odd = !find_word(&code, n).into_iter().all(named_well);
        if odd || own.iter().any(|d| return_type(&code, d.name_at).is_none()) {
            fiber.insert(n);
        }
    }
    // The waiting functions a kernel reaches.
    let reach = |k: &str| -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![k];
        while let Some(n) = todo.pop() {
            for c in info.get(n).map(|i| &i.calls).into_iter().flatten() {
                let c = c.as_str();
                if let Some(&c) = suspends.get(c) {
                    if seen.insert(c) {
                        todo.push(c);
                    }
                }
            }
        }
        seen
    };
    // Fibers spread to every caller; a waiting function that both a fiber kernel and a
    // coroutine kernel reach cannot be both, so it stays a fiber, and so do its callers.
    let coroutines: Vec<&str> = loop {
        spread_to_callers(&info, &mut fiber);
        let waiting = kernels
            .iter()
            .map(|k| k.name.as_str())
            .filter(|k| suspends.contains(k));
        let (fibers, coros): (Vec<&str>, Vec<&str>) = waiting.partition(|k| fiber.contains(k));
        let from_fibers: BTreeSet<&str> = fibers.iter().flat_map(|k| reach(k)).collect();
        let shared: Vec<&str> = coros
            .iter()
            .flat_map(|k| reach(k))
            .filter(|f| from_fibers.contains(f) && !fiber.contains(f))
            .collect();
        if shared.is_empty() {
            break coros;
        }
        fiber.extend(shared);
    };
    if coroutines.is_empty() {
        return None;
    }
    let functions: BTreeSet<&str> = coroutines
        .iter()
        .flat_map(|k| reach(k))
        .filter(|f| !is_kernel(f))
        .collect();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for k in kernels
        .iter()
        .filter(|k| coroutines.contains(&k.name.as_str()))
    {
        edits.push((k.void_at, "void".len(), "__GL_TASK".into()));
        if let Some(e) = k.extern_at {
            // `extern "C"` (the literal is blank in `code`): spaces, the same length.
            let literal = src[e + "extern".len()..].find('"').map_or(0, |q| {
                let from = e + "extern".len() + q + 1;
                src[from..].find('"').map_or(0, |end| from + end + 1 - e)
            });
            if literal == 0 || literal > k.void_at - e {
                return None;
            }
            edits.push((e, literal, BLANKS.get(..literal)?.into()));
        }
    }
    for d in &defs {
        let name = d.name.as_str();
        if !functions.contains(name) && !coroutines.contains(&name) {
            continue;
        }
        if functions.contains(name) {
            let ((a, b), forced) = return_type(&code, d.name_at)?;
            edits.push((a, 0, "__GL_SUB<".into()));
            edits.push((b, 0, ">".into()));
            for f in forced {
                edits.push((f, FORCE_INLINE.len(), "inline".into()));
            }
        }
        let (a, b) = d.body;
        let body = &code[a..b];
        for r in find_word(body, "return") {
            edits.push((a + r, "return".len(), "co_return".into()));
        }
        for r in find_word(body, BARRIER) {
            edits.push((a + r, BARRIER.len(), "__gl_co_syncthreads".into()));
        }
        for w in WARP_OPS {
            for r in find_word(body, w) {
                edits.push((a + r, w.len(), format!("co_await __gl_co_{}", &w[2..])));
            }
        }
        for f in &functions {
            for r in find_word(body, f) {
                edits.push((a + r, 0, "co_await ".into()));
            }
        }
    }
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = String::with_capacity(src.len() + 16 * edits.len());
    let mut last = 0;
    for (at, len, with) in edits {
        if at < last {
            return None;
        }
        out.push_str(&src[last..at]);
        out.push_str(&with);
        last = at + len;
    }
    out.push_str(&src[last..]);
    Some(out)
}
#[cfg(test)]
mod tests {
    use super::rewrite;

    const TILED: &str = "#define T 16\n\
        extern \"C\" __global__ void mm(const float* a, float* c, int n) {\n\
        __shared__ float s[T][T];\n\
        if (n == 0) return;\n\
        for (int t = 0; t < n; t++) { s[0][0] = a[t]; __syncthreads(); c[0] += s[0][0]; __syncthreads(); }\n\
        }\n\
        __global__ void plain(float* c) { c[0] = 1.0f; return; }\n";

    #[test]
    fn rewrites_only_the_kernels_that_wait_keeping_lines() {
        let out = rewrite(TILED).expect("eligible");
        assert!(out.contains("           __global__ __GL_TASK mm("));
        assert!(out.contains("if (n == 0) co_return;"));
        assert!(out.contains("__global__ void plain(float* c) { c[0] = 1.0f; return; }"));
        assert_eq!(out.lines().count(), TILED.lines().count());
    }

    #[test]
    fn template_kernels_and_launch_bounds_are_rewritten() {
        let src = "template <int B>\n__global__ void __launch_bounds__(256) k(float* x) \
                   { x[0] = B; __syncthreads(); }\n";
        let out = rewrite(src).expect("eligible");
        assert!(out.contains("__launch_bounds__(256) k(") && out.contains("__GL_TASK"));
    }

    const REDUCE: &str = "#define FULL 0xffffffffu\n\
        template <typename T>\n\
        __device__ __forceinline__ T warp_sum(T v) {\n\
        for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o);\n\
        return v;\n\
        }\n\
        __device__ float block_sum(float v, float* s) {\n\
        v = warp_sum(v);\n\
        if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;\n\
        __syncthreads();\n\
        return threadIdx.x < 32 ? warp_sum<float>(s[threadIdx.x]) : 0.0f;\n\
        }\n\
        extern \"C\" __global__ void norm(float* x) {\n\
        __shared__ float s[32];\n\
        float t = block_sum(x[threadIdx.x], s);\n\
        if (__all_sync(FULL, t > 0.0f)) x[threadIdx.x] /= t;\n\
        }\n";

    #[test]
    fn device_functions_that_wait_become_coroutines_and_their_calls_awaits() {
        let out = rewrite(REDUCE).expect("eligible");
        for want in [
            "__device__ inline __GL_SUB<T> warp_sum(T v) {",
            "v += co_await __gl_co_shfl_xor_sync(FULL, v, o);",
            "co_return v;",
            "__device__ __GL_SUB<float> block_sum(float v, float* s) {",
            "v = co_await warp_sum(v);",
            "__gl_co_syncthreads();",
            "co_return threadIdx.x < 32 ? co_await warp_sum<float>(s[threadIdx.x]) : 0.0f;",
            "__global__ __GL_TASK norm(float* x) {",
            "float t = co_await block_sum(x[threadIdx.x], s);",
            "if (co_await __gl_co_all_sync(FULL, t > 0.0f))",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
        assert_eq!(out.lines().count(), REDUCE.lines().count());
    }

    #[test]
    fn preprocessor_lines_above_a_function_are_not_its_return_type() {
        let src = "#line 1 \"r.cuh\"\n#pragma once\n#define FULL 0xffffffffu\n\
                   __device__ unsigned int lanes(unsigned int v) { return __ballot_sync(FULL, v); }\n\
                   __global__ void k(unsigned* x) { x[0] = lanes(x[1]); }\n";
        let out = rewrite(src).expect("eligible");
        assert!(
            out.contains("__device__ __GL_SUB<unsigned int> lanes(unsigned int v)"),
            "{out}"
        );
    }

    #[test]
    fn each_kernel_takes_its_own_path() {
        // A kernel that only fibers can run (a counting barrier) beside one with warp
        // reductions: the second is still a coroutine, the first is left as it was.
        let counted = "__global__ void count(int* x) { x[0] = __syncthreads_count(x[1]); }\n";
        let src = format!("{REDUCE}{counted}");
        let out = rewrite(&src).expect("eligible");
        assert!(out.contains("__global__ __GL_TASK norm(") && out.contains(counted));
        // A waiting function that a fiber kernel reaches too stays as it is, and so do
        // both kernels that call it.
        let shared = "__global__ void both(int* x) { x[0] = __syncthreads_count(1); \
                      x[1] = block_sum(1.0f, (float*)x); }\n";
        assert_eq!(rewrite(&format!("{REDUCE}{shared}")), None);
    }

    #[test]
    fn what_only_fibers_can_run_is_left_to_them() {
        let declared_apart = "__device__ void sync();\n\
                              __device__ void sync() { __syncthreads(); }\n\
                              __global__ void k() { sync(); }\n";
        let by_address = "__device__ void sync() { __syncthreads(); }\n\
                          __global__ void k() { void (*f)() = sync; f(); }\n";
        let deduced = "__device__ auto sync() { __syncthreads(); return 1; }\n\
                       __global__ void k() { sync(); }\n";
        let lambda = "__global__ void k(int* x) { auto f = [&](int v) { return v; }; \
                      __syncthreads(); x[0] = f(1); }";
        let macro_barrier = "#define SYNC __syncthreads()\n__global__ void k() { SYNC; }\n";
        let block = "extern \"C\" {\n__global__ void k(int* x) { __syncthreads(); }\n}\n";
        let counted = "__global__ void k(int* x) { x[0] = __syncthreads_count(1); }";
        let no_barrier = "__global__ void k(int* x) { x[0] = 1; }";
        let copied = "__global__ void k(float* x) { __shared__ float t[4]; \
                      __pipeline_memcpy_async(t, x, 4); __pipeline_wait_prior(0); \
                      __syncthreads(); x[0] = t[0]; }";
        // The pipeline's wait is reached through a parameter: the function's body never
        // names the header's words, the source does.
        let through_parameter = "#include <cuda/pipeline>\n\
            __device__ void drain(cuda::pipeline<cuda::thread_scope_thread>& p) { p.consumer_wait(); }\n\
            __global__ void k(float* x) { __syncthreads(); }\n";
        for src in [
            through_parameter,
            copied,
            declared_apart,
            by_address,
            deduced,
            lambda,
            macro_barrier,
            block,
            counted,
            no_barrier,
        ] {
            assert_eq!(rewrite(src), None, "{src}");
        }
    }

    #[test]
    fn comments_and_strings_do_not_count() {
        let src = "// __shfl_sync is not used here\n\
                   __global__ void k(int* x) { __syncthreads(); /* return */ x[0] = 1; }\n";
        let out = rewrite(src).expect("eligible");
        assert!(out.contains("/* return */"));
    }
}
