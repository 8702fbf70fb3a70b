//! Scans a source after the preprocessor when the text alone cannot say what it defines:
//! kernels written by a macro (`#define UNARY_OP(T, NAME) extern "C" __global__ void NAME(...)`,
//! as libraries of kernels do), and barriers or shuffles inside included headers. The
//! preprocessor runs with CUDA's predefined macros but without the prelude, so `__global__`,
//! `__device__` and `__syncthreads` stay words the scan can find.

use std::path::Path;

use super::source::{self, Scan};

/// The macros NVRTC predefines, as the prelude defines them (a test checks that they agree).
pub const PREDEFINED: &[(&str, &str)] = &[
    ("__CUDACC__", "1"),
    ("__CUDACC_RTC__", "1"),
    ("__CUDA_ARCH__", "800"),
    ("__CUDACC_VER_MAJOR__", "12"),
    ("__CUDACC_VER_MINOR__", "8"),
    ("warpSize", "32"),
];

/// The directives of `src`, each after its `#`, one per logical line (a directive continued
/// with `\` is one line).
fn directives(src: &str) -> Vec<String> {
    let joined = src.replace("\\\r\n", " ").replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim_start)
        .filter_map(|l| l.strip_prefix('#'))
        .map(|d| d.trim_start().to_string())
        .collect()
}

/// Whether the directive `d` (after its `#`) is a macro that defines kernels or device
/// variables: what it defines is known only where it is used.
fn defines_device_code(d: &str) -> bool {
    d.starts_with("define")
        && ["__global__", "__device__", "__constant__"]
            .iter()
            .any(|w| d.contains(w))
}

/// Whether `src` needs the preprocessor to be scanned: it includes a header of its own (one
/// given to `nvrtcCreateProgram` or found on an include path), or a macro defines a kernel.
pub fn needed(src: &str, has_headers: bool, has_include_paths: bool) -> bool {
    let mut includes = false;
    for d in directives(src) {
        if d.starts_with("include") {
            includes = true;
        } else if defines_device_code(&d) {
            // A macro that defines kernels or device variables: what it defines is known
            // where it is used.
            return true;
        }
    }
    includes && (has_headers || has_include_paths || src.contains("#include \""))
}

/// `src` with its own headers written into it, each between `#line` markers so that
/// diagnostics still name the header and the line, for the coroutine rewrite to see every
/// device function a kernel calls (`name` is the program's name, as the translation unit's
/// `#line` gives it). A program's own header is one given to the program by name, or one
/// found on an include path from `flags` (or, for a quoted include in a header read from a
/// folder, beside that header): the places the compiler would look before its own.
/// `None` when it cannot be done entirely: a macro that defines kernels (the rewrite would
/// not see them), a quoted header found nowhere, a name found in two places (the compiler's
/// order would decide), or a name of the emulator's CUDA headers. An `<…>` header found in
/// none of those places (the C++ library's) stays included.
pub fn inline_headers(
    src: &str,
    headers: &[(String, String)],
    flags: &[String],
    name: &str,
) -> Option<String> {
    let dirs: Vec<&Path> = flags
        .iter()
        .filter_map(|f| f.strip_prefix("-I"))
        .map(Path::new)
        .collect();
    let mut once = Vec::new();
    inline_into(src, headers, &dirs, None, name, &mut once, 0)
}

/// [`inline_headers`] for one file's text, `depth` includes deep; `here` is the folder the
/// file was read from, `once` the headers with `#pragma once` already written.
fn inline_into(
    text: &str,
    headers: &[(String, String)],
    dirs: &[&Path],
    here: Option<&Path>,
    name: &str,
    once: &mut Vec<String>,
    depth: usize,
) -> Option<String> {
    if depth > 16 || directives(text).iter().any(|d| defines_device_code(d)) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let d = line.trim_start();
        let directive = d.strip_prefix('#').map(str::trim_start);
        let Some(target) = directive
            .and_then(|d| d.strip_prefix("include"))
            .map(str::trim)
        else {
            out.push_str(line);
            continue;
        };
        let quoted = target.starts_with('"');
        let inner = target
            .get(1..)
            .and_then(|t| t.split(['"', '>']).next())
            .unwrap_or("");
        // One of the emulator's own CUDA headers: the compiler's search order decides which
        // file that name means, so the rewrite does not guess.
        if super::stub_headers::STUB_HEADERS
            .iter()
            .any(|(n, _)| *n == inner)
            || inner.starts_with("cuda")
            || inner.starts_with("cooperative_groups")
        {
            if quoted {
                return None;
            }
            out.push_str(line);
            continue;
        }
        // Every place the name is found: given by name, beside this file (quoted), on an
        // include path; with the folder each was read from.
        let mut found: Vec<(String, Option<std::path::PathBuf>)> = headers
            .iter()
            .filter(|(n, _)| n == inner)
            .map(|(_, h)| (h.clone(), None))
            .collect();
        let beside = here.filter(|_| quoted).into_iter();
        for dir in beside.chain(dirs.iter().copied()) {
            let path = dir.join(inner);
            if let Ok(t) = std::fs::read_to_string(&path) {
                found.push((t, path.parent().map(Path::to_path_buf)));
            }
        }
        let (body, folder) = match found.len() {
            0 if quoted => return None,
            0 => {
                out.push_str(line);
                continue;
            }
            1 => found.pop()?,
            _ => return None,
        };
        if once.iter().any(|o| o == inner) {
            out.push('\n');
            continue;
        }
        if body.lines().any(|l| l.trim() == "#pragma once") {
            once.push(inner.to_string());
        }
        let safe = inner.replace(['"', '\\'], "_");
        out.push_str(&format!("#line 1 \"{safe}\"\n"));
        let written = inline_into(
            &body,
            headers,
            dirs,
            folder.as_deref(),
            &safe,
            once,
            depth + 1,
        )?;
        out.push_str(&written);
        out.push_str(&format!("\n#line {} \"{name}\"\n", i + 2));
    }
    Some(out)
}

/// The scan of `src` merged with the scan of its `preprocessed` text (`None` when the
/// preprocessor failed: the compilation then reports the error): the kernels and globals the
/// preprocessed text defines, whether either synchronises threads, and the raw source's
/// shared-memory declarations (their sizes are computed after the raw source).
pub fn merged_scan(src: &str, preprocessed: Option<String>) -> Scan {
    let raw = source::scan(src);
    let Some(text) = preprocessed else {
        return raw;
    };
    let pp = source::scan(&text);
    Scan {
        kernels: pp.kernels,
        globals: pp.globals,
        needs_fibers: raw.needs_fibers || pp.needs_fibers,
        // Decided on the text the compiler sees (whatever its headers and macros hold).
        plain_kernels: pp.plain_kernels,
        shared: raw.shared,
    }
}

/// The preprocessor's arguments (after the compiler command): CUDA's predefined macros,
/// `flags` (the program's `-D`/`-I`), the include directories, then the file.
pub fn arguments(flags: &[String], includes: &[&Path], file: &Path) -> Vec<String> {
    let mut args = vec![
        "-E".to_string(),
        "-P".to_string(),
        "-w".to_string(),
        "-std=c++17".to_string(),
        "-x".to_string(),
        "c++".to_string(),
    ];
    args.extend(PREDEFINED.iter().map(|(n, v)| format!("-D{n}={v}")));
    args.extend(flags.iter().cloned());
    for i in includes {
        args.push(format!("-I{}", i.display()));
    }
    args.push(file.display().to_string());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_programs_own_headers_are_written_in_between_line_markers() {
        let headers = vec![
            (
                "a.cuh".to_string(),
                "#pragma once\n#include \"b.cuh\"\nint a;\n".to_string(),
            ),
            ("b.cuh".to_string(), "int b;\n".to_string()),
        ];
        let src = "#include <cstdint>\n#include \"a.cuh\"\n#include \"a.cuh\"\nint main_line;\n";
        let out = inline_headers(src, &headers, &[], "prog.cu").expect("inlined");
        assert_eq!(
            out,
            "#include <cstdint>\n\
             #line 1 \"a.cuh\"\n#pragma once\n\
             #line 1 \"b.cuh\"\nint b;\n\n#line 3 \"a.cuh\"\nint a;\n\n#line 3 \"prog.cu\"\n\
             \n\
             int main_line;\n"
        );
        // A quoted header nobody gave, one named as a CUDA header, or a macro that writes
        // kernels: not done.
        let shadow = vec![("cuda_fp16.h".to_string(), "int h;\n".to_string())];
        assert_eq!(
            inline_headers("#include \"cuda_fp16.h\"\n", &shadow, &[], "p"),
            None
        );
        assert_eq!(
            inline_headers("#include \"missing.cuh\"\n", &headers, &[], "p"),
            None
        );
        // The same name given and on an include path: the compiler's order would decide.
        let dir = std::env::temp_dir().join(format!("gpu-labs-inline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("b.cuh"), "int other_b;\n").unwrap();
        let flags = vec![format!("-I{}", dir.display())];
        assert_eq!(
            inline_headers("#include \"b.cuh\"\n", &headers, &flags, "p"),
            None
        );
        // An `<…>` header of the program's own, on an include path: written in too.
        let angle = inline_headers("#include <b.cuh>\n", &[], &flags, "p").expect("inlined");
        assert!(angle.contains("int other_b;"), "{angle}");
        let _ = std::fs::remove_dir_all(&dir);
        let macro_kernels = "#define K(N) __global__ void N() {}\nK(k)\n";
        assert_eq!(inline_headers(macro_kernels, &headers, &[], "p"), None);
        // The same, with the macro continued on the next line, and in a header.
        let continued = "#define K(N) \\\n  __global__ void N() {}\nK(k)\n";
        assert_eq!(inline_headers(continued, &headers, &[], "p"), None);
        let in_header = vec![("k.cuh".to_string(), continued.to_string())];
        assert_eq!(
            inline_headers("#include \"k.cuh\"\n", &in_header, &[], "p"),
            None
        );
    }

    #[test]
    fn predefined_macros_agree_with_the_prelude() {
        for (n, v) in PREDEFINED {
            assert!(
                super::super::compile::PRELUDE.contains(&format!("#define {n} {v}\n")),
                "the prelude does not define {n} as {v}"
            );
        }
    }

    #[test]
    fn preprocessor_needed_for_macro_kernels_and_own_headers() {
        assert!(!needed("__global__ void k() {}\n", false, false));
        assert!(!needed(
            "#include <cuda_runtime.h>\n__global__ void k() {}\n",
            false,
            false
        ));
        assert!(needed("#include \"utils.cuh\"\n", false, false));
        assert!(needed("#include <utils.cuh>\n", true, false));
        assert!(needed("#include <utils.cuh>\n", false, true));
        assert!(needed(
            "#define OP(N) extern \"C\" __global__ void N() {}\n",
            false,
            false
        ));
        assert!(needed(
            "#define OP(N) \\\n extern \"C\" __global__ \\\n void N() {}\n",
            false,
            false
        ));
    }

    #[test]
    fn kernels_made_by_macros_are_found() {
        let src = "#define OP(N) extern \"C\" __global__ void N(float* a) { a[0] = 1; }\nOP(one)\nOP(two)\n";
        let pp = "extern \"C\" __global__ void one(float* a) { a[0] = 1; }\n\
                  extern \"C\" __global__ void two(float* a) { a[0] = 1; }\n";
        let s = merged_scan(src, Some(pp.to_string()));
        assert_eq!(s.kernels, vec!["one", "two"]);
        assert!(!s.needs_fibers);
        let s = merged_scan(src, Some(format!("{pp}void h() {{ __syncthreads(); }}\n")));
        assert!(s.needs_fibers);
    }
}
