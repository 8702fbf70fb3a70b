//! Names a lab may not write anywhere: the macros that bring in assembly or code from another
//! file, and the attributes that export a C symbol or plant a static constructor.
//!
//! The rule is on the name token, wherever it stands (after `r#` is dropped): a call
//! (`asm!`), a `use` tree (`use core::arch::global_asm as notes;`, a `pub use` re-export, a
//! path `::core::arch::asm`), a macro's arguments (`m!(global_asm)`) or a `macro_rules!` body.
//! Stable Rust cannot assemble an identifier from pieces (`concat_idents!` is unstable; a
//! procedural macro such as `paste` is not a dependency a lab may have), so a forbidden macro
//! or attribute cannot be reached without writing its name, and so the rule holds however it
//! is reached. A glob import (`use core::arch::*;`) names nothing, and the call then writes
//! the name. Strings, comments and doc comments are not names.

use super::tokens::{Kind, Scanned};
use super::Refused;

/// Why assembly is refused.
const ASSEMBLY: &str = "assembly is not part of this lab";

/// Why an assembly macro's name is refused without a call.
const ASSEMBLY_NAME: &str =
    "it names an assembly macro (`asm!`, `global_asm!`, `naked_asm!`), and \
                             assembly is not part of this lab under any name (`use … as`, a \
                             re-export or a macro's argument included); if it is a name of \
                             your own, choose another";

/// Why `include!` is refused.
const INCLUDE: &str = "it pulls code in from a file the grader does not read; keep all code in \
                       .rs files under src/ (include_str! for kernel sources is fine)";

/// Why `include!`'s name is refused without a call.
const INCLUDE_NAME: &str = "it names the `include!` macro, which pulls code in from a file the \
                            grader does not read, under any name (`use std::include as …`, a \
                            re-export or a macro's argument included); if it is a name of your \
                            own, choose another (include_str! for kernel sources is fine)";

/// Why an exported C name is refused.
const EXPORTS: &str = "it exports a function under a fixed C name, which can replace a \
                       function the grader's own code uses (its clock, say)";

/// Macros a lab may not reach under any name: (name, why a call, why the name alone).
const MACROS: &[(&str, &str, &str)] = &[
    ("asm", ASSEMBLY, ASSEMBLY_NAME),
    ("global_asm", ASSEMBLY, ASSEMBLY_NAME),
    ("naked_asm", ASSEMBLY, ASSEMBLY_NAME),
    ("include", INCLUDE, INCLUDE_NAME),
];

/// Other names a lab may not write: (name, as shown, why).
const NAMES: &[(&str, &str, &str)] = &[
    ("no_mangle", "#[no_mangle]", EXPORTS),
    ("export_name", "#[export_name]", EXPORTS),
    ("link_section", "#[link_section]", "it places code in a linker section, which can run it before the program starts (a static constructor)"),
    ("naked", "#[naked]", ASSEMBLY),
    ("extern", "extern", "it declares or defines foreign (C) functions, which reach outside the lab's libraries; call only Rust and the lab's crates"),
];

/// The first refused name in `scanned`, or `None`.
pub(super) fn refused(scanned: &Scanned) -> Option<Refused> {
    let tokens = &scanned.tokens;
    tokens.iter().enumerate().find_map(|(at, token)| {
        if token.kind != Kind::Ident {
            return None;
        }
        let refuse = |construct: String, why: &'static str| Refused {
            file: scanned.file.clone(),
            line: token.line,
            construct,
            why,
        };
        if let Some((name, call, alone)) = MACROS.iter().find(|(n, _, _)| *n == token.name) {
            return Some(if token.bang {
                refuse(format!("{name}!"), call)
            } else {
                refuse(name.to_string(), alone)
            });
        }
        let (_, shown, why) = NAMES.iter().find(|(n, _, _)| *n == token.name)?;
        // `extern crate` only names a dependency.
        let names_a_crate = tokens
            .get(at + 1)
            .is_some_and(|t| t.is(Kind::Ident, "crate"));
        (token.name != "extern" || !names_a_crate).then(|| refuse(shown.to_string(), why))
    })
}

#[cfg(test)]
mod tests {
    use super::super::tokens::lex;
    use super::refused;

    fn construct(text: &str) -> Option<(usize, String)> {
        let scanned = lex("src/lib.rs", text).map_err(|r| r.why).expect("lexes");
        refused(&scanned).map(|r| (r.line, r.construct))
    }

    #[test]
    fn a_forbidden_macro_is_refused_however_it_is_reached() {
        let cases = [
            (
                "use core::arch::global_asm as notes;\nnotes!(\"nop\");",
                1,
                "global_asm",
            ),
            (
                "use std::include as notes;\nnotes!(\"../x.txt\");",
                1,
                "include",
            ),
            (
                "mod a { pub use core::arch::asm; }\nfn f() { a::asm!(\"\") }",
                1,
                "asm",
            ),
            (
                "mod a {\n    pub use ::core::arch::{global_asm as g};\n}",
                2,
                "global_asm",
            ),
            ("use core::arch::*;\nglobal_asm!(\"\");", 2, "global_asm!"),
            (
                "macro_rules! m { ($n:ident) => { core::arch::$n!(\"\"); } }\nm!(global_asm);",
                2,
                "global_asm",
            ),
            (
                "macro_rules! m { () => { $crate::x::include!(\"y\"); } }",
                1,
                "include!",
            ),
            ("fn f() { r#include!(\"x\") }", 1, "include!"),
            ("use std::r#include as i;", 1, "include"),
            ("fn f() { ::core::arch::asm\n!(\"nop\") }", 1, "asm!"),
            (
                "fn f() { unsafe { core::arch::naked_asm!(\"\") } }",
                1,
                "naked_asm!",
            ),
            ("fn f(include: u8) {}", 1, "include"),
            ("#[unsafe(no_mangle)]\nfn f() {}", 1, "#[no_mangle]"),
            (
                "#[unsafe(r#export_name = \"x\")]\nfn f() {}",
                1,
                "#[export_name]",
            ),
            (
                "#[cfg_attr(all(), link_section = \".init_array\")]\nstatic S: u8 = 0;",
                1,
                "#[link_section]",
            ),
            (
                "macro_rules! m { ($a:meta) => {} }\nm!(no_mangle);",
                2,
                "#[no_mangle]",
            ),
            ("#[unsafe(naked)]\nfn f() {}", 1, "#[naked]"),
            (
                "unsafe extern \"C\" {\n    fn time(t: *mut i64) -> i64;\n}",
                1,
                "extern",
            ),
            ("type F = extern \"C\" fn();", 1, "extern"),
        ];
        for (text, line, shown) in cases {
            assert_eq!(construct(text), Some((line, shown.to_string())), "{text}");
        }
    }

    #[test]
    fn names_in_text_and_honest_names_are_not_refused() {
        let fine = "// no_mangle in a comment\n/// `extern \"C\"` and `use std::include as x;`\n\
                    extern crate rayon;\nconst K: &str = include_str!(\"kernel.cu\");\n\
                    const B: &[u8] = include_bytes!(\"kernel.ptx\");\n\
                    fn f(included: u8, asm_like: u8) -> u8 { let s = \"asm!()\"; included + asm_like }\n\
                    #[doc = \"global_asm\"]\nstruct S;\n";
        assert_eq!(construct(fine), None);
    }
}
