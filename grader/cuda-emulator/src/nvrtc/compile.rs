//! Compiles a CUDA C source into a shared object with the host C++ compiler, caching the
//! result by a hash of everything that affects it.
//!
//! Kernels run as native code inside the graded process, so they get no more than a GPU
//! kernel could do: on a GPU a kernel can call device functions (math, atomics, `printf`)
//! but never the host's C library or the operating system, and the grader forbids the
//! student's Rust code the files, processes, environment and system calls that a kernel
//! compiled for the CPU could otherwise reach. So a source that uses inline assembly (or
//! places code in a chosen section) is refused before compiling ([`source::forbidden`], and
//! `asm` is poisoned after the prelude), and a compiled object is refused when it needs from
//! the process anything but what the prelude needs, compiler-inserted runtime hooks, CUDA's
//! device runtime and the math library ([`symbols::check`]). Refused objects never enter the
//! cache, cache hits are checked again, and `cuModuleLoadData` checks every object it loads.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::names::{self, Lowered};
use super::{expand, source, symbols};
use crate::util::hash_hex;

/// The prelude every source is compiled against.
pub const PRELUDE: &str = include_str!("prelude.h");

/// First line of the text the emulator returns from `nvrtcGetPTX`.
pub const MODULE_MAGIC: &str = "// gpu-labs CPU emulator module: not PTX";

/// Flags that do not depend on the program. Optimised but portable (no -march=native).
/// Kernels reinterpret memory freely (a `float4` load read as eight `__nv_bfloat16`), which
/// NVCC compiles as written: strict aliasing is off.
const BASE_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O3",
    "-fno-strict-aliasing",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    // Calls bind to what the module defines (its own `malloc`, `free`, `memcpy`... in the
    // prelude), never to a definition of the same name elsewhere in the process.
    "-Wl,-Bsymbolic",
    "-fno-math-errno",
    "-fno-exceptions",
    "-U_FORTIFY_SOURCE",
    "-D_FORTIFY_SOURCE=0",
    "-w",
    "-pthread",
];

/// Extra compiler flags of a checked (race-detecting) build: the compiler instruments every
/// load and store that other threads could see with a call of a `__tsan_*` hook, which the
/// prelude defines (no sanitizer runtime is linked), volatile accesses apart; `-g1` keeps the
/// line table that race reports read.
const RACECHECK_FLAGS: &[&str] = &[
    "-fsanitize=thread",
    "--param",
    "tsan-distinguish-volatile=1",
    "--param",
    "tsan-instrument-func-entry-exit=0",
    // Every index of an array of known size is checked before the access: the hooks above
    // never see a local array whose address is not taken, so without this `local[i]` could
    // reach any address of the process. An index out of bounds stops the launch
    // (`__ubsan_handle_out_of_bounds_abort` in the prelude; no sanitizer runtime is linked).
    "-fsanitize=bounds-strict",
    "-fno-sanitize-recover=bounds-strict",
    // A kernel's calls and jumps through pointers go through the prelude's thunks, which stop
    // the launch: a pointer could name any function of the process. Switches compile to
    // compares, not jump tables, so that a kernel's own code makes none.
    "-mindirect-branch=thunk-extern",
    "-mindirect-branch-register",
    "-fno-jump-tables",
    // Each of a kernel's functions records where it returns and what its caller keeps
    // (`__fentry__`), and each return is checked against that record (`__x86_return_thunk`):
    // a kernel that writes over its own stack frame stops there. Every function returns
    // itself (no sibling calls), so each record is checked once.
    "-pg",
    "-mfentry",
    "-mfunction-return=thunk-extern",
    "-fno-optimize-sibling-calls",
    "-g1",
    // The prelude's thread-locals have initialisers: in .tdata, apart from `__shared__`
    // variables (.tbss), which alone a kernel may write.
    "-fno-zero-initialized-in-bss",
    // Thread-locals through descriptors: the hooks read their state on every access, and a
    // descriptor's resolved path is a few instructions where `__tls_get_addr` is a call.
    "-mtls-dialect=gnu2",
    // Block copies and fills the compiler does not split into loads and stores (a large
    // `__builtin_memcpy`, a struct assignment) become calls of `memcpy` and `memset`, which
    // are the prelude's checked ones, instead of inline code no hook sees.
    "-mstringop-strategy=libcall",
];

/// The link step of an instrumented build (the others compile and link in one command, with
/// [`BASE_FLAGS`], which hold the same).
const LINK_FLAGS: &[&str] = &["-shared", "-fPIC", "-pthread", "-Wl,-Bsymbolic"];

/// The variable that asks for checked builds: the grader sets it for correctness runs only;
/// its timed runs are confined builds instead ([`CONFINE_VARIABLE`]).
pub const RACECHECK_VARIABLE: &str = "GPU_LABS_EMULATOR_RACECHECK";

/// The variable that asks for confined builds where builds are not checked (`1`): kernels are
/// instrumented as checked ones are, but each access is only confined to device memory,
/// shared memory and the thread's own locals (`__GL_CONFINE` in the prelude). The grader sets
/// it for every worker on the emulator, so that no kernel of a graded run can read or write
/// the host memory of the process it runs in.
pub const CONFINE_VARIABLE: &str = "GPU_LABS_EMULATOR_CONFINE";

/// Whether this process compiles kernels with race detection ([`RACECHECK_VARIABLE`] was `1`
/// when the library was loaded: [`crate::config`]).
pub fn race_check_asked() -> bool {
    crate::config::get().race_check
}

/// A successful compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The shared object.
    pub so: PathBuf,
    /// The kernels it defines.
    pub kernels: Vec<String>,
    /// Its `__constant__` and `__device__` variables.
    pub globals: Vec<String>,
    /// Compiler output (warnings), already in NVRTC's style.
    pub log: String,
    /// The name expressions' lowered names.
    pub lowered: Vec<Lowered>,
}

/// The kernel cache directory ([`crate::config::Config::kernel_cache`], frozen at load).
pub fn cache_dir() -> PathBuf {
    crate::config::get().kernel_cache.clone()
}

/// The C++ compiler command ([`crate::config::Config::cxx`], frozen at load).
fn compiler() -> Vec<String> {
    crate::config::get().cxx.clone()
}

/// Options of `nvrtcCompileProgram` that reach the host compiler: macro definitions and
/// include paths. The others (architecture, fast math, ...) do not apply on a CPU.
fn host_flags(options: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = options.iter();
    while let Some(o) = it.next() {
        if let Some(v) = o
            .strip_prefix("--define-macro=")
            .or_else(|| o.strip_prefix("-D"))
        {
            let v = if v.is_empty() {
                it.next().map_or("", String::as_str)
            } else {
                v
            };
            out.push(format!("-D{v}"));
        } else if let Some(v) = o
            .strip_prefix("--include-path=")
            .or_else(|| o.strip_prefix("-I"))
        {
            let v = if v.is_empty() {
                it.next().map_or("", String::as_str)
            } else {
                v
            };
            out.push(format!("-I{v}"));
        } else if let Some(v) = o
            .strip_prefix("--undefine-macro=")
            .or_else(|| o.strip_prefix("-U"))
        {
            out.push(format!("-U{v}"));
        }
    }
    out
}

/// The program's `-D` and `-U` options ([`host_flags`]) as `#define` and `#undef` lines, which
/// the translation unit holds after the prelude: a macro of the program's never reaches the
/// prelude's code (a `-Dconfine(...)=` would otherwise rewrite the checks).
fn program_macros(flags: &[String]) -> Vec<String> {
    flags
        .iter()
        .filter_map(|f| {
            if let Some(d) = f.strip_prefix("-D") {
                let (name, value) = d.split_once('=').unwrap_or((d, "1"));
                Some(format!("#define {name} {value}"))
            } else {
                f.strip_prefix("-U").map(|u| format!("#undef {u}"))
            }
        })
        .collect()
}

use super::stub_headers::{EXPORTS_FILE, STUB_HEADERS};

/// The folder of the stub headers: the one the grader laid out beside the emulator library
/// ([`crate::config::STUBS_VARIABLE`], which no worker can write), else (a student's own
/// runs, `grader emulate`) written once per version into the kernel cache. Where the grader
/// named one without its marker, none: kernels that include a stub then fail to compile,
/// rather than take headers from a folder the program could write.
fn stub_headers() -> std::io::Result<PathBuf> {
    if let Some(dir) = &crate::config::get().stubs {
        return if dir.join(".complete").is_file() {
            Ok(dir.clone())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "the grader's CUDA headers are missing from {}",
                    dir.display()
                ),
            ))
        };
    }
    let dir = cache_dir().join(format!("include-{}", &stub_headers_hash()[..8]));
    let done = dir.join(".complete");
    if !done.is_file() {
        for (name, text) in STUB_HEADERS {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        std::fs::write(done, "")?;
    }
    Ok(dir)
}

/// A hash of the prelude and the stub headers: their folder's name, and part of each
/// compilation's cache key (a kernel that includes one is compiled again when it changes).
fn stub_headers_hash() -> String {
    let mut parts: Vec<&[u8]> = vec![PRELUDE.as_bytes()];
    for (name, text) in STUB_HEADERS {
        parts.push(name.as_bytes());
        parts.push(text.as_bytes());
    }
    hash_hex(&parts)
}

/// Rewrites GCC diagnostics (`file:12:5: error: ...`) into NVRTC's style (`file(12): error: ...`).
pub fn nvrtc_style(log: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let mut done = false;
        let parts: Vec<&str> = line.splitn(4, ':').collect();
        if parts.len() == 4 && parts[1].chars().all(|c| c.is_ascii_digit()) && !parts[1].is_empty()
        {
            if parts[2].chars().all(|c| c.is_ascii_digit()) {
                out.push_str(&format!("{}({}):{}\n", parts[0], parts[1], parts[3]));
                done = true;
            }
        } else if parts.len() >= 3
            && parts[1].chars().all(|c| c.is_ascii_digit())
            && !parts[1].is_empty()
        {
            out.push_str(&format!(
                "{}({}):{}\n",
                parts[0],
                parts[1],
                parts[2..].join(":")
            ));
            done = true;
        }
        if !done {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// What `src` defines ([`source::scan`]), after the preprocessor when the text alone cannot
/// say ([`expand::needed`]: kernels made by macros, barriers in its own headers).
fn scan_program(
    src: &str,
    headers: &[(String, String)],
    cxx: &[String],
    flags: &[String],
) -> source::Scan {
    let include_paths = flags.iter().any(|f| f.starts_with("-I"));
    // A macro given in the options can expand to anything in the source (a barrier, a
    // kernel): what the program is, only the preprocessor knows.
    let macros = flags.iter().any(|f| f.starts_with("-D"));
    if !macros && !expand::needed(src, !headers.is_empty(), include_paths) {
        return source::scan(src);
    }
    let unique = format!("{}-{:?}", std::process::id(), std::thread::current().id())
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
    let dir = cache_dir().join(format!("preprocess-{unique}"));
    let text = (|| {
        for (n, h) in headers {
            let p = dir.join(n);
            std::fs::create_dir_all(p.parent()?).ok()?;
            std::fs::write(&p, h).ok()?;
        }
        std::fs::create_dir_all(&dir).ok()?;
        let file = dir.join("program.cu");
        std::fs::write(&file, src).ok()?;
        let stubs = stub_headers().ok()?;
        let args = expand::arguments(flags, &[stubs.as_path(), dir.as_path()], &file);
        let out = crate::config::get()
            .command(&cxx[0])
            .args(&cxx[1..])
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    expand::merged_scan(src, text)
}

/// Runs the host compiler on the translation unit `cpp` (called `name` in diagnostics),
/// writing the shared object `so`; `inc` (the program's headers) is searched when `with_inc`.
/// Returns the compiler's diagnostics in NVRTC's style, as `Err` when it failed.
/// A checked or confined build compiles (with [`RACECHECK_FLAGS`]) and links in two steps, so
/// that the driver does not link the sanitizer's runtime.
#[allow(clippy::too_many_arguments)]
fn run_compiler(
    name: &str,
    cxx: &[String],
    flags: &[String],
    inc: &Path,
    with_inc: bool,
    cpp: &Path,
    so: &Path,
    variant: Variant,
) -> Result<String, String> {
    // Checked and confined builds are both instrumented (and link in two steps).
    let instrumented = variant == Variant::Checked || confined_build(variant);
    let mut cmd = crate::config::get().command(&cxx[0]);
    cmd.args(&cxx[1..]).args(BASE_FLAGS);
    // Without its headers' folder a module would be built without the list of what it
    // exports (`EXPORTS_FILE`): refused, never built another way.
    let stubs = stub_headers().map_err(|e| {
        format!(
            "{name}: error: the emulator's CUDA headers are not available ({e}), so no kernel \
             is built: the grader's set-up, not your code (delete the grader cache, \
             ~/.cache/gpu-labs, and run again, or tell your instructor)\n"
        )
    })?;
    let exports = format!(
        "-Wl,--version-script={}",
        stubs.join(EXPORTS_FILE).display()
    );
    cmd.arg("-I").arg(stubs);
    if !instrumented {
        // One step: this command links too.
        cmd.arg(&exports);
    }
    // The program's folders are searched after the system's: a header of theirs named like
    // one the prelude includes (`cmath`) cannot take its place before the prelude's rules.
    // Their macros are in the translation unit, after the prelude (`program_macros`).
    if with_inc {
        cmd.arg("-idirafter").arg(inc);
    }
    for dir in flags.iter().filter_map(|f| f.strip_prefix("-I")) {
        cmd.arg("-idirafter").arg(dir);
    }
    let object = so.with_extension("o");
    if variant == Variant::Coroutines {
        cmd.arg("-fcoroutines");
    }
    if instrumented {
        cmd.args(RACECHECK_FLAGS).arg("-c");
    }
    cmd.arg("-x")
        .arg("c++")
        .arg(cpp)
        .arg("-o")
        .arg(if instrumented { &object } else { so });
    let mut log = compiler_output(name, cxx, cpp, &mut cmd)?;
    if instrumented {
        let mut link = crate::config::get().command(&cxx[0]);
        link.args(&cxx[1..])
            .args(LINK_FLAGS)
            .arg(&exports)
            .arg(&object)
            .arg("-o")
            .arg(so);
        let linked = compiler_output(name, cxx, cpp, &mut link);
        let _ = std::fs::remove_file(&object);
        log.push_str(&linked?);
    }
    Ok(log)
}

/// Runs one compiler command; its diagnostics in NVRTC's style, as `Err` when it failed.
fn compiler_output(
    name: &str,
    cxx: &[String],
    cpp: &Path,
    cmd: &mut Command,
) -> Result<String, String> {
    let output = cmd.output().map_err(|e| {
        format!(
            "gpu-labs emulator: cannot run the C++ compiler `{}`: {e} (install g++ or set CXX)",
            cxx[0]
        )
    })?;
    let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&output.stdout));
    let log = nvrtc_style(&log.replace(&cpp.display().to_string(), name));
    if output.status.success() {
        Ok(log)
    } else {
        Err(log)
    }
}

/// Compiles (or finds in the cache) `src`, named `name` in diagnostics. `headers` are
/// `(include name, contents)` pairs given to `nvrtcCreateProgram`. Where the grader started a
/// kernel compiler for this process ([`crate::config::Config::compiler`]) it compiles there and
/// nowhere else ([`super::remote`]); otherwise here ([`compile_here`]). Notes (a checked build
/// that fell back to a plain one) go to the run's record.
pub fn compile(
    src: &str,
    name: &str,
    headers: &[(String, String)],
    options: &[String],
    exprs: &[String],
) -> Result<Compiled, String> {
    let (built, notes) = match crate::config::get().compiler {
        Some(fds) => {
            let request = super::remote::Request {
                src: src.to_string(),
                name: name.to_string(),
                headers: headers.to_vec(),
                options: options.to_vec(),
                exprs: exprs.to_vec(),
            };
            match super::remote::compile_there(fds, &request) {
                Ok((compiled, digest, notes)) => {
                    // What `cuModuleLoadData` will load, with the digest of the bytes the
                    // grader's compiler wrote (in a folder this process cannot write).
                    produced(&compiled.so, digest);
                    (Ok(compiled), notes)
                }
                Err(log) => (Err(log), Vec::new()),
            }
        }
        None => compile_here(src, name, headers, options, exprs),
    };
    for note in notes {
        crate::findings::report(crate::findings::Kind::Note, note);
    }
    built
}

/// [`compile`] in this process: the build, and the notes for the run's record. When race
/// checks are asked for ([`race_check_asked`]) the checked build is tried first; should it
/// fail where the plain one compiles (a compiler without `-fsanitize=thread`), the plain one
/// is used and a note says the kernels ran unchecked.
pub fn compile_here(
    src: &str,
    name: &str,
    headers: &[(String, String)],
    options: &[String],
    exprs: &[String],
) -> (Result<Compiled, String>, Vec<String>) {
    let texts = headers.iter().map(|(n, h)| (n.as_str(), h.as_str()));
    for (file, text) in std::iter::once((name, src)).chain(texts) {
        if let Some((line, message)) = source::forbidden(text) {
            return (
                Err(format!("{file}({line}): error: {message}\n")),
                Vec::new(),
            );
        }
    }
    if race_check_asked() {
        let why = match compile_variant(src, src, name, headers, options, exprs, Variant::Checked) {
            Ok(c) => return (Ok(c), Vec::new()),
            Err(log) => log,
        };
        let plain = compile_plain(src, name, headers, options, exprs);
        let mut notes = Vec::new();
        if plain.is_ok() {
            let first = why.lines().find(|l| l.contains("error")).unwrap_or("");
            notes.push(format!(
                "gpu-labs emulator: note: the race-checking build of `{name}` failed, so \
                 its kernels ran without race checks ({first})"
            ));
        }
        return (plain, notes);
    }
    (
        compile_plain(src, name, headers, options, exprs),
        Vec::new(),
    )
}

/// Whether a build of `variant` is confined ([`CONFINE_VARIABLE`]): every build that is not
/// checked, where the process asked for confinement.
fn confined_build(variant: Variant) -> bool {
    variant != Variant::Checked && crate::config::get().confine
}

/// How a module's kernels are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// As fast as the host compiler makes them; threads that synchronise run as fibers.
    Plain,
    /// With race detection ([`RACECHECK_FLAGS`]).
    Checked,
    /// Plain, with barrier kernels as coroutines ([`super::coroutine`]).
    Coroutines,
}

/// The build without race checks (confined where asked: [`confined_build`]): barrier kernels
/// as coroutines where the source allows it and the build is not confined,
/// else (or when the compiler refuses that rewrite) threads as fibers.
fn compile_plain(
    src: &str,
    name: &str,
    headers: &[(String, String)],
    options: &[String],
    exprs: &[String],
) -> Result<Compiled, String> {
    // As scan_program reads the options.
    let flags = host_flags(options);
    let include_paths = flags.iter().any(|f| f.starts_with("-I"));
    // A source with headers of its own is rewritten with them written into it, so that the
    // rewrite sees the device functions its kernels call there (a `warpReduceSum` in a
    // shared header).
    let whole = || {
        if expand::needed(src, !headers.is_empty(), include_paths) {
            expand::inline_headers(src, headers, &flags, &name.replace(['"', '\\'], "_"))
        } else {
            Some(src.to_string())
        }
    };
    // Name expressions' lowered names are read from symbols, which the rewrite can change.
    // Confined builds run barrier kernels as fibers, as checked ones do: the coroutines' block
    // runner calls the standard library's coroutine handles, whose code the instrumentation
    // would confine as the kernel's.
    if crate::config::get().coroutines && !crate::config::get().confine && exprs.is_empty() {
        if let Some(rewritten) = whole().and_then(|text| super::coroutine::rewrite(&text)) {
            let built = compile_variant(
                src,
                &rewritten,
                name,
                headers,
                options,
                exprs,
                Variant::Coroutines,
            );
            if built.is_ok() {
                return built;
            }
        }
    }
    compile_variant(src, src, name, headers, options, exprs, Variant::Plain)
}

/// [`compile`] for one variant; `text` is what is compiled (`src` rewritten, for
/// [`Variant::Coroutines`]), `src` what is scanned.
fn compile_variant(
    src: &str,
    text: &str,
    name: &str,
    headers: &[(String, String)],
    options: &[String],
    exprs: &[String],
    variant: Variant,
) -> Result<Compiled, String> {
    let cxx = compiler();
    let flags = host_flags(options);
    let scan = scan_program(src, headers, &cxx, &flags);
    let mut tu =
        source::translation_unit_for(&scan, text, name, PRELUDE, exprs, &program_macros(&flags));
    let checked = variant == Variant::Checked;
    if checked {
        tu.insert_str(0, "#define __GL_RACECHECK 1\n");
    } else if confined_build(variant) {
        tu.insert_str(0, "#define __GL_CONFINE 1\n");
    }
    if variant == Variant::Coroutines {
        tu.insert_str(0, "#define __GL_USE_CORO 1\n");
    }
    let stubs = stub_headers_hash();
    let mut key_parts: Vec<&[u8]> = vec![tu.as_bytes(), stubs.as_bytes()];
    key_parts.extend(cxx.iter().map(|s| s.as_bytes()));
    key_parts.extend(flags.iter().map(|s| s.as_bytes()));
    key_parts.extend(BASE_FLAGS.iter().map(|s| s.as_bytes()));
    // The instrumented builds' own flags too: a change of them must not load an object built
    // before it.
    if checked || confined_build(variant) {
        key_parts.extend(
            RACECHECK_FLAGS
                .iter()
                .chain(LINK_FLAGS)
                .map(|s| s.as_bytes()),
        );
    }
    for (n, h) in headers {
        key_parts.push(n.as_bytes());
        key_parts.push(h.as_bytes());
    }
    let key = hash_hex(&key_parts);
    let dir = cache_dir().join(&key);
    let so = dir.join("kernels.so");
    let source::Scan {
        kernels, globals, ..
    } = scan;
    let hit = |so: PathBuf, kernels, globals| {
        // Checked on every hit too: the cache is a directory anyone in the account can write.
        if let Err(refused) = symbols::check(&so, name) {
            let _ = std::fs::remove_file(&so);
            return Err(refused);
        }
        produced(&so, None);
        let lowered = lowered_names(&so, exprs)?;
        Ok(Compiled {
            so,
            kernels,
            globals,
            log: String::new(),
            lowered,
        })
    };
    // Where only this process's own objects load, an object on disk that it did not compile
    // was left there by someone else: compiled again, it is replaced.
    let own_objects = crate::config::get().own_objects;
    let takes_hit = |so: &Path| so.is_file() && (!own_objects || produced_here(so));
    if takes_hit(&so) {
        return hit(so, kernels, globals);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Items graded at once share their submission's folder: the first to need a kernel
    // compiles it, the others wait for its object instead of compiling it too.
    let _turn = compile_turn(&dir);
    if takes_hit(&so) {
        return hit(so, kernels, globals);
    }
    let unique = format!("{}-{:?}", std::process::id(), std::thread::current().id())
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
    let cpp = dir.join(format!("kernels-{unique}.cpp"));
    let tmp_so = dir.join(format!("kernels-{unique}.so"));
    std::fs::write(&cpp, &tu).map_err(|e| format!("cannot write {}: {e}", cpp.display()))?;
    let inc = dir.join(format!("include-{unique}"));
    if !headers.is_empty() {
        for (n, h) in headers {
            let p = inc.join(n);
            if let Some(parent) = p.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            std::fs::write(&p, h).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        }
    }
    let output = run_compiler(
        name,
        &cxx,
        &flags,
        &inc,
        !headers.is_empty(),
        &cpp,
        &tmp_so,
        variant,
    );
    let _ = std::fs::remove_dir_all(&inc);
    let log = match output {
        Ok(log) => log,
        Err(mut log) => {
            // Nothing of a failed compile stays (a student's own runs keep this folder).
            let _ = std::fs::remove_file(&tmp_so);
            let _ = std::fs::remove_file(&cpp);
            let poisoned = |w: &&str| log.contains(&format!("attempt to use poisoned \"{w}\""));
            if source::ASM_WORDS.iter().any(poisoned) {
                log.push_str(&format!(
                    "{name}: note: kernels cannot use inline assembly on the gpu-labs emulator, and \
                     the code above does (a header that uses it cannot be included in a kernel)\n"
                ));
            } else if source::POISONED.iter().any(poisoned) {
                log.push_str(&format!(
                    "{name}: note: kernels cannot use the emulator's internals (`__gl`) or turn its \
                     checks off (`no_sanitize` attributes); write the kernel in plain CUDA C\n"
                ));
            } else if let Some(w) = source::HOST_ONLY.iter().find(|w| poisoned(w)) {
                log.push_str(&format!(
                    "{name}: note: `{w}` is a host function: CUDA device code cannot call it                      (kernels may use printf, malloc/free, memcpy/memset and the math functions)\n"
                ));
            }
            return Err(log);
        }
    };
    // A refused object never enters the cache (and `cuModuleLoadData` checks again anyway).
    if let Err(refused) = symbols::check(&tmp_so, name) {
        let _ = std::fs::remove_file(&tmp_so);
        let _ = std::fs::remove_file(&cpp);
        return Err(format!("{log}{refused}"));
    }
    let _ = std::fs::remove_file(&cpp);
    std::fs::write(dir.join("kernels.cpp"), &tu).ok();
    // The bytes the compiler wrote, as soon as it ended: what `cuModuleLoadData` will load
    // where only this process's own objects load.
    let digest = std::fs::read(&tmp_so)
        .map(|bytes| hash_hex(&[&bytes]))
        .map_err(|e| format!("cannot read {}: {e}", tmp_so.display()))?;
    std::fs::rename(&tmp_so, &so).map_err(|e| format!("cannot write {}: {e}", so.display()))?;
    produced(&so, Some(digest));
    let lowered = lowered_names(&so, exprs)?;
    Ok(Compiled {
        so,
        kernels,
        globals,
        log,
        lowered,
    })
}

/// The longest a process waits for another's compile of the same program (a compile takes
/// about a second; a process that holds the lock and never compiles costs this much, once).
const COMPILE_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The turn to compile the program of cache folder `dir`: a lock on a file in it, held until
/// dropped; `None` when the lock cannot be had (no file, or [`COMPILE_WAIT`] passed), and the
/// compile goes ahead anyway (each writes its object under its own name, then renames it).
fn compile_turn(dir: &Path) -> Option<std::fs::File> {
    let file = std::fs::File::create(dir.join("compiling.lock")).ok()?;
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < COMPILE_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(_) => return None,
        }
    }
}

/// The lowered names of the name expressions `exprs` in the compiled object `so`.
fn lowered_names(so: &Path, exprs: &[String]) -> Result<Vec<Lowered>, String> {
    if exprs.is_empty() {
        return Ok(Vec::new());
    }
    let elf = std::fs::read(so).map_err(|e| format!("cannot read {}: {e}", so.display()))?;
    names::lowered(&elf, exprs)
}

/// The objects this process's NVRTC produced: the only ones `cuModuleLoadData` loads, so a
/// module text that names any other file (one the submission wrote, say) loads nothing. Each
/// with the digest of the bytes its compiler wrote, when this process compiled it (`None`: a
/// hit in a cache kept from run to run).
static PRODUCED: std::sync::Mutex<Vec<(PathBuf, Option<String>)>> =
    std::sync::Mutex::new(Vec::new());

fn produced(so: &Path, digest: Option<String>) {
    if let Ok(mut all) = PRODUCED.lock() {
        match all.iter_mut().find(|(p, _)| p == so) {
            Some(entry) => entry.1 = digest.or(entry.1.take()),
            None => all.push((so.to_path_buf(), digest)),
        }
    }
}

/// Whether `so` is an object this process's NVRTC produced (compiled or found in its cache).
pub fn produced_here(so: &Path) -> bool {
    PRODUCED
        .lock()
        .is_ok_and(|all| all.iter().any(|(p, _)| p == so))
}

/// The digest of the bytes this process's compiler wrote for `so`, if it compiled it.
pub fn compiled_digest(so: &Path) -> Option<String> {
    PRODUCED
        .lock()
        .ok()?
        .iter()
        .find(|(p, _)| p == so)
        .and_then(|(_, d)| d.clone())
}

/// The text handed back as "PTX": identifies the compiled artifact for `cuModuleLoadData`.
pub fn module_text(c: &Compiled) -> String {
    let mut text = format!(
        "{MODULE_MAGIC}\n// so: {}\n// kernels: {}\n// globals: {}\n",
        c.so.display(),
        c.kernels.join(" "),
        c.globals.join(" ")
    );
    for l in &c.lowered {
        text.push_str(&names::module_line(l));
    }
    text
}

/// The shared object named by a module text, if the text is one of ours.
pub fn parse_module_text(text: &str) -> Option<PathBuf> {
    let mut lines = text.lines();
    if lines.next()? != MODULE_MAGIC {
        return None;
    }
    lines.find_map(|l| l.strip_prefix("// so: ").map(PathBuf::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two items of one submission that need the same program at once: the second waits for
    /// the first's compile (and then finds its object) instead of compiling it too.
    #[test]
    fn a_second_compile_of_the_same_program_waits_for_the_first() {
        let dir = std::env::temp_dir().join(format!("gl-compile-turn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let first = compile_turn(&dir).expect("the first turn");
        let (tx, rx) = std::sync::mpsc::channel();
        let waiting = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let second = compile_turn(&dir);
                let _ = tx.send(());
                second.is_some()
            })
        };
        let held = std::time::Duration::from_millis(300);
        assert!(
            rx.recv_timeout(held).is_err(),
            "the second turn came while the first compile ran"
        );
        drop(first);
        assert!(
            rx.recv_timeout(COMPILE_WAIT).is_ok(),
            "the second turn never came"
        );
        assert!(waiting.join().expect("no panic"), "the second had the lock");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn converts_gcc_diagnostics() {
        let log =
            "k.cu:3:5: error: 'x' was not declared in this scope\nk.cu: In function 'void f()':\n";
        assert_eq!(
            nvrtc_style(log),
            "k.cu(3): error: 'x' was not declared in this scope\nk.cu: In function 'void f()':\n"
        );
    }

    /// The prelude's own needs (with an empty kernel, with one that runs its threads as
    /// fibers, and with one that runs them as coroutines) must all be in `symbols::PRELUDE_NEEDS` or `symbols::COMPILER_INSERTED`: a
    /// prelude change that needs more from the process fails here.
    #[test]
    fn prelude_needs_only_allowed_symbols() {
        let dir =
            std::env::temp_dir().join(format!("gpu-labs-prelude-needs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let barrier = "extern \"C\" __global__ void k() { __syncthreads(); }\n";
        let coroutine = format!(
            "#define __GL_USE_CORO 1\n{}",
            source::translation_unit(
                &super::super::coroutine::rewrite(barrier).expect("a coroutine kernel"),
                "empty.cu",
                PRELUDE,
                &[]
            )
        );
        let units = [
            (
                source::translation_unit(
                    "extern \"C\" __global__ void k() {}\n",
                    "empty.cu",
                    PRELUDE,
                    &[],
                ),
                Variant::Plain,
            ),
            (
                source::translation_unit(barrier, "empty.cu", PRELUDE, &[]),
                Variant::Plain,
            ),
            (coroutine, Variant::Coroutines),
        ];
        for (i, (unit, variant)) in units.iter().enumerate() {
            let cpp = dir.join(format!("p{i}.cpp"));
            let so = dir.join(format!("p{i}.so"));
            std::fs::write(&cpp, unit).unwrap();
            let log = run_compiler(
                "empty.cu",
                &compiler(),
                &[],
                &dir,
                false,
                &cpp,
                &so,
                *variant,
            );
            assert!(log.is_ok(), "{log:?}");
            let needs = symbols::undefined(&so).unwrap();
            assert!(!needs.is_empty());
            for s in needs {
                assert!(
                    symbols::PRELUDE_NEEDS.contains(&s.name.as_str())
                        || symbols::COMPILER_INSERTED.contains(&s.name.as_str()),
                    "the prelude needs `{}`, which is not in symbols::PRELUDE_NEEDS",
                    s.name
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
