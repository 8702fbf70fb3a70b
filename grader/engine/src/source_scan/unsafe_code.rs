//! What `unsafe` may do in a lab: call the GPU library's unsafe functions (a kernel launch, a
//! cuBLAS call, an uninitialised device allocation) and nothing else. Everything else `unsafe`
//! allows (dereferencing raw pointers, `transmute`, `static mut`, unions, unsafe functions and
//! impls of one's own) can read or write any memory of the graded process, the grader's
//! included, and no lab needs it.

use super::tokens::{in_macros, Kind, Scanned, Token};
use super::Refused;

/// The functions a lab may call inside `unsafe { … }`: cudarc's unsafe launch, cuBLAS and
/// allocation calls, and harmless helpers commonly written in their arguments.
const ALLOWED_CALLS: &[&str] = &[
    "launch",
    "launch_cooperative",
    "launch_builder",
    "arg",
    "for_num_elems",
    "gemm",
    "gemm_strided_batched",
    "is_culib_present",
    "alloc",
    "alloc_zeros",
    "clone",
    "len",
    "into",
    "try_into",
    "from",
    "try_from",
    "min",
    "max",
    "Some",
    "Ok",
];

/// Keywords that may stand before `(` or `*` without being a call or a product.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "else", "if", "in", "let", "loop", "match", "move", "mut", "return",
    "unsafe", "where", "while", "yield", "box", "ref", "static", "dyn", "impl", "for",
];

/// Why the unsafe rules exist, in a student's words.
const WHY: &str = "inside `unsafe` a lab may only call the GPU library's unsafe functions \
                   (`launch`, `gemm`, `alloc`, `is_culib_present`); anything else unsafe can \
                   read or write the grader's memory, and this lab never needs it";

/// The first use of `unsafe` (or of what only `unsafe` makes usable) that a lab may not
/// contain, or `None`.
pub(super) fn refused_unsafe(scanned: &Scanned) -> Option<Refused> {
    let tokens = &scanned.tokens;
    let in_macro = in_macros(tokens);
    let refuse = |at: usize, construct: String, why: &'static str| {
        Some(Refused {
            file: scanned.file.clone(),
            line: tokens[at].line,
            construct,
            why,
        })
    };
    for (at, token) in tokens.iter().enumerate() {
        if token.kind != Kind::Ident {
            continue;
        }
        let next = tokens.get(at + 1);
        let next_is = |kind, name| next.is_some_and(|t: &Token| t.is(kind, name));
        match token.name.as_str() {
            "static" if next_is(Kind::Ident, "mut") => {
                return refuse(at, "static mut".into(), "a global anyone can change needs `unsafe` to use; keep state in the graded function, or use a `std::sync` type");
            }
            "union" if next.is_some_and(|t| t.kind == Kind::Ident) => {
                return refuse(at, "union".into(), "reading a union is unsafe and this lab never needs one; use a struct or an enum");
            }
            "unsafe" => {}
            _ => continue,
        }
        if in_macro[at] {
            return refuse(
                at,
                "unsafe".into(),
                "`unsafe` inside a macro (its definition or its call) cannot be checked; write the unsafe block in a function",
            );
        }
        match next {
            Some(t) if t.is(Kind::Punct, "{") => {
                if let Some((found, construct, why)) = refused_in_block(tokens, at + 1) {
                    return refuse(found, construct, why);
                }
            }
            // `#[unsafe(no_mangle)]`: the attribute's name decides (see REFUSED).
            Some(t) if t.is(Kind::Punct, "(") => {}
            Some(t)
                if t.kind == Kind::Ident && ["fn", "impl", "trait"].contains(&t.name.as_str()) =>
            {
                return refuse(at, format!("unsafe {}", t.name), "an unsafe function, impl or trait of your own can hide any unsafe operation; a lab's own code is always safe Rust");
            }
            // `unsafe extern`: the `extern` rule names it.
            Some(t) if t.is(Kind::Ident, "extern") => {}
            _ => {
                return refuse(
                    at,
                    "unsafe".into(),
                    "`unsafe` may only open a block around a GPU library call",
                );
            }
        }
    }
    None
}

/// Why a reborrow inside `unsafe` is refused, and where it belongs.
const REBORROW: &str = "a reborrow such as `&mut *x` needs no `unsafe`: make it before the \
                        `unsafe` block (`let arg = &mut *x;`) and pass `arg`; inside `unsafe` a \
                        lab may only call the GPU library's unsafe functions";

/// The first thing in the unsafe block opening at `open` that a lab may not do there: its
/// token index, how to show it, and why it is refused.
fn refused_in_block(tokens: &[Token], open: usize) -> Option<(usize, String, &'static str)> {
    refused_construct(tokens, open).map(|(at, construct)| {
        let why = if construct.starts_with('&') {
            REBORROW
        } else {
            WHY
        };
        (at, construct, why)
    })
}

/// [`refused_in_block`]'s search: the token index and how to show it.
fn refused_construct(tokens: &[Token], open: usize) -> Option<(usize, String)> {
    let close = tokens[open].closed_at.unwrap_or(tokens.len());
    for at in open + 1..close {
        let t = &tokens[at];
        let prev = &tokens[at - 1];
        let next = tokens.get(at + 1);
        match t.kind {
            Kind::Ident if t.bang => return Some((at, format!("{}! inside unsafe", t.name))),
            Kind::Punct if t.name == "$" => return Some((at, "$ inside unsafe".into())),
            Kind::Punct if t.name == "*" => {
                if next.is_some_and(|n| n.is(Kind::Ident, "const") || n.is(Kind::Ident, "mut")) {
                    return Some((at, "a raw pointer inside unsafe".into()));
                }
                if !ends_a_value(prev) {
                    // `&mut *x`, `&*x`: a reborrow, as a launch argument often is. It needs
                    // no `unsafe` for a reference, so say where it belongs.
                    let mutable = prev.is(Kind::Ident, "mut");
                    let after_and = prev.is(Kind::Punct, "&")
                        || (mutable && at >= 2 && tokens[at - 2].is(Kind::Punct, "&"));
                    if after_and {
                        let name = next.map(|n| n.name.as_str()).unwrap_or("x");
                        let and = if mutable { "&mut " } else { "&" };
                        return Some((at, format!("{and}*{name} inside unsafe")));
                    }
                    return Some((at, "*pointer inside unsafe".into()));
                }
            }
            Kind::Punct if t.name == "&" && next.is_some_and(|n| n.is(Kind::Ident, "raw")) => {
                return Some((at, "&raw inside unsafe".into()));
            }
            Kind::Punct if t.name == "(" => {
                if let Some(callee) = called(tokens, at) {
                    match callee {
                        Some(name) if ALLOWED_CALLS.contains(&name) => {}
                        Some(name) => return Some((at, format!("{name}(…) inside unsafe"))),
                        None => return Some((at, "calling a function value inside unsafe".into())),
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether a `*` after `prev` multiplies (a value ends at `prev`) rather than dereferences.
fn ends_a_value(prev: &Token) -> bool {
    match prev.kind {
        Kind::Literal => true,
        Kind::Ident => !KEYWORDS.contains(&prev.name.as_str()),
        Kind::Punct => [")", "]", "?"].contains(&prev.name.as_str()),
    }
}

/// When the `(` at `at` calls something: `Some(Some(name))` for a named function or method
/// (`f(`, `x.f(`, `f::<T>(`), `Some(None)` for a call of a value (`(f)(`, `v[0](`);
/// `None` when it only groups or starts a tuple.
fn called(tokens: &[Token], at: usize) -> Option<Option<&str>> {
    let prev = &tokens[at - 1];
    match prev.kind {
        Kind::Ident if KEYWORDS.contains(&prev.name.as_str()) => None,
        Kind::Ident => Some(Some(prev.name.as_str())),
        Kind::Literal => Some(None),
        Kind::Punct => match prev.name.as_str() {
            ")" | "]" | "?" => Some(None),
            // A turbofish: `name::<T>(`.
            ">" => Some(turbofish_name(tokens, at - 1)),
            _ => None,
        },
    }
}

/// The function named before the turbofish whose `>` is at `gt`, if it is one.
fn turbofish_name(tokens: &[Token], gt: usize) -> Option<&str> {
    let mut depth = 0usize;
    let mut at = gt;
    loop {
        let t = &tokens[at];
        if t.is(Kind::Punct, ">") {
            depth += 1;
        } else if t.is(Kind::Punct, "<") {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        at = at.checked_sub(1)?;
    }
    let colons = tokens.get(at.checked_sub(2)?..at)?;
    if colons.iter().all(|t| t.is(Kind::Punct, ":")) {
        let name = tokens.get(at.checked_sub(3)?)?;
        (name.kind == Kind::Ident).then_some(name.name.as_str())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan;
    use super::*;

    fn refused(src: &str) -> Option<(usize, String)> {
        refused_unsafe(&scan("src/gpu.rs", src)).map(|r| (r.line, r.construct))
    }

    #[test]
    fn the_labs_gpu_calls_are_allowed() {
        let ok = [
            "fn f() { unsafe { launch.launch(config) }?; }",
            "fn f() { unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?; }",
            "fn f() -> bool { unsafe { cudarc::driver::sys::is_culib_present() } }",
            "fn f() { unsafe { l.launch(LaunchConfig::for_num_elems((m * n) as u32)) }?; }",
            "fn f() { let d = unsafe { stream.alloc::<f32>(n * 2) }?; }",
            "fn f() { unsafe { b.arg(&x).arg(&n).launch(cfg) }?; }",
            "/// `unsafe { *p }` in a comment\nfn f() { let s = \"unsafe { *p }\"; }",
            "fn f(a: &[f32]) -> f32 { a[0] * a[1] }",
        ];
        for src in ok {
            assert_eq!(refused(src), None, "{src}");
        }
    }

    #[test]
    fn everything_else_unsafe_is_refused_with_its_line() {
        let cases = [
            (
                "fn f(p: *const u8) -> u8 {\n    unsafe { *p }\n}",
                2,
                "*pointer inside unsafe",
            ),
            (
                "fn f(l: &mut Launch, s: &mut Buf) { unsafe { l.arg(&mut *s).launch(c) }; }",
                1,
                "&mut *s inside unsafe",
            ),
            (
                "fn f(x: u32) -> f32 { unsafe { std::mem::transmute(x) } }",
                1,
                "transmute(…) inside unsafe",
            ),
            (
                "fn f(v: &[u8]) -> u8 { unsafe { *v.get_unchecked(9) } }",
                1,
                "*pointer inside unsafe",
            ),
            (
                "fn f(v: &[u8]) -> &u8 { unsafe { v.get_unchecked(9) } }",
                1,
                "get_unchecked(…) inside unsafe",
            ),
            (
                "fn f() { unsafe { std::ptr::read::<u64>(p) } }",
                1,
                "read(…) inside unsafe",
            ),
            (
                "fn f(p: usize) { unsafe { launch.launch(p as *const u8) } }",
                1,
                "a raw pointer inside unsafe",
            ),
            (
                "fn f(x: &u8) { unsafe { launch.launch(&raw const x) } }",
                1,
                "&raw inside unsafe",
            ),
            (
                "fn f() { unsafe { std::ptr::addr_of!(X) } }",
                1,
                "addr_of! inside unsafe",
            ),
            (
                "fn f(g: fn()) { unsafe { (g)() } }",
                1,
                "calling a function value inside unsafe",
            ),
            (
                "fn f() { unsafe { return *P } }",
                1,
                "*pointer inside unsafe",
            ),
            ("unsafe fn f() {}", 1, "unsafe fn"),
            ("unsafe impl Send for X {}", 1, "unsafe impl"),
            ("unsafe trait T {}", 1, "unsafe trait"),
            ("static mut N: u32 = 0;", 1, "static mut"),
            ("union U { a: u32, b: f32 }", 1, "union"),
            ("fn f() {\n    m!(unsafe)\n}", 2, "unsafe"),
            (
                "macro_rules! m { ($e:expr) => { unsafe { $e } } }",
                1,
                "unsafe",
            ),
            ("fn f() { m!(unsafe {}) }", 1, "unsafe"),
        ];
        for (src, line, construct) in cases {
            assert_eq!(refused(src), Some((line, construct.to_string())), "{src}");
        }
    }
}
