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

/// Whether `src` needs the preprocessor to be scanned: it includes a header of its own (one
/// given to `nvrtcCreateProgram` or found on an include path), or a macro defines a kernel.
pub fn needed(src: &str, has_headers: bool, has_include_paths: bool) -> bool {
    // Logical lines: a directive continued with `\` is one line.
    let joined = src.replace("\\\r\n", " ").replace("\\\n", " ");
    let directives = joined
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('#'))
        .map(|l| l[1..].trim_start());
    let mut includes = false;
    for d in directives {
        if d.starts_with("include") {
            includes = true;
        } else if d.starts_with("define")
            && ["__global__", "__device__", "__constant__"]
                .iter()
                .any(|w| d.contains(w))
        {
            // A macro that defines kernels or device variables: what it defines is known
            // where it is used.
            return true;
        }
    }
    includes && (has_headers || has_include_paths || src.contains("#include \""))
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
