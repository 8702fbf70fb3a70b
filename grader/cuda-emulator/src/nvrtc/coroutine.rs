//! Barrier regions as loops. A kernel whose `__syncthreads()` are all in its own body runs
//! each GPU thread as a C++ stackless coroutine instead of a fiber: the barrier becomes
//! `co_await`, and the block runner resumes the block's threads one after another, so each
//! region between two barriers is a loop over the threads (what PoCL and CuPBoP compile
//! kernels into). The compiler keeps what a thread needs across a barrier in its frame, in
//! loops and branches too, so no source splitting is needed; a switch costs a call, where a
//! fiber switch saves and restores a stack, which kept the tiled matmul 4× slower than a
//! one-thread C loop.
//!
//! Only what is certain takes this path; every other source runs as fibers, as before:
//! warp operations and cooperative groups (lanes wait for each other mid-region), barriers
//! outside a kernel's body (a device function or a macro: only a coroutine may `co_await`),
//! lambdas inside a kernel with barriers (their `return` is not the kernel's), checked runs
//! (their epochs and warp reports are the fiber scheduler's), and sources whose kernels or
//! barriers only the preprocessor can see. A rewrite the compiler still refuses falls back
//! to fibers too ([`super::compile`]).

use super::source::{body_after, code_view, find_word, tokens};

/// Words that make a source run as fibers whatever else it does: warp-wide operations wait
/// for the other lanes of their warp in the middle of a region; `__syncthreads_count` and
/// friends, and the waits of asynchronous copies, are barriers inside functions of the
/// prelude or its headers.
const FIBER_ONLY: &[&str] = &[
    "__syncwarp",
    "__shfl",
    "__ballot_sync",
    "__any_sync",
    "__all_sync",
    "__activemask",
    "__syncthreads_",
    "cooperative_groups",
    // Asynchronous copies: their waits are barriers inside the headers' functions.
    "memcpy_async",
    "pipeline",
    "cuda::barrier",
    "arrive",
    "co_await",
    "co_return",
    "co_yield",
];

/// Spaces to blank an `extern "C"` with.
const BLANKS: &str = "                                ";

/// A `__global__` function of the source: where its `void` is, its body if it has one, and
/// where the `extern` of an `extern "C"` before it is.
struct Kernel {
    name: String,
    void_at: usize,
    body: Option<(usize, usize)>,
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
                            body: body_after(code, at),
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

/// `src` with its barrier kernels made coroutines (`void` → `__GL_TASK`, `return` →
/// `co_return`, same lines), or `None` when it must run as fibers (see the module's doc).
///
/// An `extern "C"` before such a kernel is blanked: g++ 12 gives a C-linkage coroutine's
/// helper functions its own name and cannot assemble it. The emulator finds kernels by their
/// descriptors, never by symbol, so nothing else sees the difference; a program with name
/// expressions, whose lowered names are read from symbols, is not rewritten
/// ([`super::compile`]), nor one with an `extern "C" { … }` block.
pub fn rewrite(src: &str) -> Option<String> {
    let code = code_view(src);
    if FIBER_ONLY
        .iter()
        .any(|w| code.windows(w.len()).any(|c| c == w.as_bytes()))
        || has_linkage_block(&code)
    {
        return None;
    }
    let barriers = find_word(&code, "__syncthreads");
    if barriers.is_empty() {
        return None;
    }
    let kernels = kernels(&code)?;
    let within = |at: usize| {
        kernels
            .iter()
            .filter_map(|k| k.body.map(|b| (k, b)))
            .find(|(_, (a, b))| *a < at && at < *b)
            .map(|(k, _)| k.name.clone())
    };
    let mut waiting = Vec::new();
    for &at in &barriers {
        waiting.push(within(at)?);
    }
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    for k in kernels.iter().filter(|k| waiting.contains(&k.name)) {
        edits.push((k.void_at, "void".len(), "__GL_TASK"));
        if let Some(e) = k.extern_at {
            // `extern "C"` (the literal is blank in `code`): spaces, the same length.
            let literal = src[e + "extern".len()..].find('"').map_or(0, |q| {
                let from = e + "extern".len() + q + 1;
                src[from..].find('"').map_or(0, |end| from + end + 1 - e)
            });
            if literal == 0 || literal > k.void_at - e {
                return None;
            }
            edits.push((e, literal, BLANKS.get(..literal)?));
        }
        if let Some((a, b)) = k.body {
            if has_lambda(&code[a..b]) {
                return None;
            }
            for r in find_word(&code[a..b], "return") {
                edits.push((a + r, "return".len(), "co_return"));
            }
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::with_capacity(src.len() + 16 * edits.len());
    let mut last = 0;
    for (at, len, with) in edits {
        out.push_str(&src[last..at]);
        out.push_str(with);
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

    #[test]
    fn what_only_fibers_can_run_is_left_to_them() {
        let device_fn = "__device__ void sync() { __syncthreads(); }\n\
                         __global__ void k() { sync(); }\n";
        let warp =
            "__global__ void k(int* x) { __syncthreads(); x[0] = __shfl_sync(~0u, x[0], 0); }";
        let lambda = "__global__ void k(int* x) { auto f = [&](int v) { return v; }; \
                      __syncthreads(); x[0] = f(1); }";
        let macro_barrier = "#define SYNC __syncthreads()\n__global__ void k() { SYNC; }\n";
        let block = "extern \"C\" {\n__global__ void k(int* x) { __syncthreads(); }\n}\n";
        let counted = "__global__ void k(int* x) { x[0] = __syncthreads_count(1); }";
        let no_barrier = "__global__ void k(int* x) { x[0] = 1; }";
        let copied = "__global__ void k(float* x) { __shared__ float t[4]; \
                      __pipeline_memcpy_async(t, x, 4); __pipeline_wait_prior(0); \
                      __syncthreads(); x[0] = t[0]; }";
        for src in [
            copied,
            device_fn,
            warp,
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
