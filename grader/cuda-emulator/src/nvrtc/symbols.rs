//! What a compiled module needs from the process it is loaded into: the undefined symbols of
//! its dynamic symbol table (read with a small ELF64 little-endian reader, so as not to depend
//! on binutils), and the check that they are all things a GPU kernel could use.

use std::path::Path;

/// An undefined dynamic symbol of a shared object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undefined {
    /// Its name (without version).
    pub name: String,
    /// Whether the object refers to it as a function (`STT_FUNC`).
    pub function: bool,
    /// Whether the reference is weak.
    pub weak: bool,
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?)).ok()
}

const SHT_DYNSYM: u32 = 11;
const SHN_UNDEF: u16 = 0;
/// `STT_FUNC`: a function symbol.
pub const STT_FUNC: u8 = 2;
const STB_WEAK: u8 = 2;

/// The undefined symbols of the dynamic symbol table (`.dynsym`) of an ELF64 little-endian
/// shared object given as bytes. An object without a dynamic symbol table needs nothing.
pub fn undefined_in(elf: &[u8]) -> Result<Vec<Undefined>, String> {
    let bad = |what: &str| format!("not a valid ELF64 shared object ({what})");
    if elf.get(0..4) != Some(b"\x7fELF".as_slice()) {
        return Err(bad("no ELF magic"));
    }
    if elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err(bad("not 64-bit little-endian"));
    }
    let all = sections(elf).map_err(bad)?;
    let mut out = Vec::new();
    for sec in &all {
        let (ty, off, size, link, entsize) = (sec.ty, sec.off, sec.size, sec.link, sec.entsize);
        if ty != SHT_DYNSYM {
            continue;
        }
        if entsize < 24 {
            return Err(bad("symbol entry size"));
        }
        let (str_off, str_size) = all
            .get(link)
            .map(|t| (t.off, t.size))
            .ok_or_else(|| bad("string table"))?;
        let strtab = str_off
            .checked_add(str_size)
            .and_then(|end| elf.get(str_off..end))
            .ok_or_else(|| bad("string table"))?;
        let syms = off
            .checked_add(size)
            .and_then(|end| elf.get(off..end))
            .ok_or_else(|| bad("symbol table"))?;
        for s in syms.chunks_exact(entsize).skip(1) {
            let name_at = u32_at(s, 0).ok_or_else(|| bad("symbol"))? as usize;
            let info = s[4];
            let shndx = u16_at(s, 6).ok_or_else(|| bad("symbol"))?;
            if shndx != SHN_UNDEF || name_at == 0 {
                continue;
            }
            let name = strtab
                .get(name_at..)
                .and_then(|t| t.split(|&c| c == 0).next())
                .ok_or_else(|| bad("symbol name"))?;
            out.push(Undefined {
                name: String::from_utf8_lossy(name).into_owned(),
                function: info & 0xf == STT_FUNC,
                weak: info >> 4 == STB_WEAK,
            });
        }
    }
    Ok(out)
}

/// A symbol of an ELF64 symbol table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name (raw, as mangled).
    pub name: String,
    /// `st_value`: an address relative to the load address, or a thread-local offset.
    pub value: usize,
    /// `st_size`.
    pub size: usize,
    /// The type (`st_info & 0xf`: `STT_FUNC`, `STT_TLS`...).
    pub kind: u8,
    /// The binding (`st_info >> 4`: 0 local, 1 global, 2 weak).
    pub bind: u8,
}

/// A section header of an ELF64 object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Section {
    /// `sh_type`.
    pub ty: u32,
    /// File offset of its contents.
    pub off: usize,
    /// Size of its contents.
    pub size: usize,
    /// `sh_link` (a symbol table's string table).
    pub link: usize,
    /// Size of one entry, for tables.
    pub entsize: usize,
}

/// The section headers of an ELF64 little-endian object, or what is wrong with them.
pub(crate) fn sections(elf: &[u8]) -> Result<Vec<Section>, &'static str> {
    let shoff = u64_at(elf, 0x28).ok_or("header")?;
    let shentsize = usize::from(u16_at(elf, 0x3A).ok_or("header")?);
    let shnum = usize::from(u16_at(elf, 0x3C).ok_or("header")?);
    if shnum == 0 || shentsize < 64 {
        return Err("no section headers");
    }
    (0..shnum)
        .map(|i| {
            let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
            Some(Section {
                ty: u32_at(elf, h + 4)?,
                off: u64_at(elf, h + 24)?,
                size: u64_at(elf, h + 32)?,
                link: u32_at(elf, h + 40)? as usize,
                entsize: u64_at(elf, h + 56)?,
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("section header")
}

/// The symbols of every table of type `table` (`SHT_SYMTAB` 2, `SHT_DYNSYM` 11) of an ELF64
/// little-endian object (empty when it has none or cannot be read).
pub fn symbols(elf: &[u8], table: u32) -> Vec<Symbol> {
    let mut out = Vec::new();
    let Ok(all) = sections(elf) else {
        return out;
    };
    for sec in &all {
        let (off, size) = (sec.off, sec.size);
        if sec.ty != table {
            continue;
        }
        let Some((str_off, str_size)) = all.get(sec.link).map(|t| (t.off, t.size)) else {
            continue;
        };
        let strtab = str_off
            .checked_add(str_size)
            .and_then(|end| elf.get(str_off..end));
        let syms = off.checked_add(size).and_then(|end| elf.get(off..end));
        let (Some(strtab), Some(syms)) = (strtab, syms) else {
            continue;
        };
        for s in syms.chunks_exact(24) {
            let (Some(name_at), Some(value), Some(size)) =
                (u32_at(s, 0), u64_at(s, 8), u64_at(s, 16))
            else {
                continue;
            };
            let Some(raw) = strtab
                .get(name_at as usize..)
                .and_then(|t| t.split(|&c| c == 0).next())
            else {
                continue;
            };
            out.push(Symbol {
                name: String::from_utf8_lossy(raw).into_owned(),
                value,
                size,
                kind: s[4] & 0xf,
                bind: s[4] >> 4,
            });
        }
    }
    out
}

/// `SHT_SYMTAB`: the full symbol table.
pub const SHT_SYMTAB: u32 = 2;
const STT_TLS: u8 = 6;

/// The thread-local data object (`.symtab`, `STT_TLS`) of an ELF64 little-endian object that
/// holds offset `vaddr` of its thread-local block: its name, demangled for a function's local
/// static (`_ZZ6kernelE4tile` is `tile`), and the offset of `vaddr` in it. Race reports name
/// `__shared__` arrays (thread-local statics in the emulator) this way.
pub fn object_at(elf: &[u8], vaddr: usize) -> Option<(String, usize)> {
    symbols(elf, SHT_SYMTAB)
        .into_iter()
        .find(|s| s.kind == STT_TLS && (s.value..s.value + s.size.max(1)).contains(&vaddr))
        .map(|s| (demangle_local(&s.name), vaddr - s.value))
}

/// The variable's own name in a mangled local static (`_ZZ6kernelE4tile` → `tile`) or
/// internal-linkage variable (`_ZL4tile` → `tile`); other names unchanged.
fn demangle_local(raw: &str) -> String {
    let tail = if let Some(rest) = raw.strip_prefix("_ZZ") {
        rest.rsplit_once('E').map(|(_, t)| t)
    } else {
        raw.strip_prefix("_ZL")
    };
    match tail {
        Some(t) => {
            // A length-prefixed name: `6tile_a` (maybe followed by a discriminator).
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let len: usize = t[..digits].parse().unwrap_or(0);
            t.get(digits..digits + len).unwrap_or(t).to_string()
        }
        None => raw.to_string(),
    }
}

/// The undefined dynamic symbols of the shared object at `path`.
pub fn undefined(path: &Path) -> Result<Vec<Undefined>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    undefined_in(&bytes)
}

/// What the prelude alone needs from the process. Found by compiling the prelude with an empty
/// kernel, once with `__GL_USE_FIBERS` 0 and once with 1, at -O0 and -O3 (g++ 12), and listing
/// the result's undefined dynamic symbols (`nm -D --undefined-only`, or [`undefined`]); the test
/// `prelude_needs_only_allowed_symbols` recompiles it and fails if it ever needs more.
pub const PRELUDE_NEEDS: &[&str] = &[
    "__sigsetjmp",
    "siglongjmp",
    "aligned_alloc",
    "realloc",
    "__libc_free",
    "fflush",
    "fprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "stdout",
    "stderr",
];

/// What the compiler and linker insert by themselves (weak hooks of the C runtime, thread-local
/// storage, stack protection, C++ static initialisation and `new`/`delete`, block copies).
pub const COMPILER_INSERTED: &[&str] = &[
    "__cxa_finalize",
    "__gmon_start__",
    "_ITM_deregisterTMCloneTable",
    "_ITM_registerTMCloneTable",
    "__tls_get_addr",
    "__stack_chk_fail",
    "__cxa_atexit",
    "__cxa_thread_atexit",
    "__cxa_thread_atexit_impl",
    "__cxa_guard_acquire",
    "__cxa_guard_release",
    "__cxa_guard_abort",
    "__cxa_pure_virtual",
    "__cxa_deleted_virtual",
];

/// What CUDA device code may call that the emulator takes from the C library: `printf` (which
/// the compiler may turn into `puts` or `putchar`) and `assert`. Its `malloc`/`free`,
/// `new`/`delete` and `memcpy`/`memmove`/`memset`/`memcmp` are the prelude's own, defined in
/// the module (device code's heap, and copies confined like any access): a module that still
/// needs one of them from the C library is refused.
pub const DEVICE_RUNTIME: &[&str] = &["printf", "puts", "putchar", "__assert_fail"];

/// The compiler's own runtime helpers (libgcc, and compiler-rt's names for the same): what
/// `g++ -O3` calls for an operation the portable target has no instruction for — `__popc`
/// becomes `__popcountdi2` without `-mpopcnt`, 128-bit division `__divti3`, overflow checks
/// `__mulodi4`, and so on. They compute on their arguments only; a student never names them.
pub const COMPILER_RUNTIME: &[&str] = &[
    // Bit counting, parity, byte swaps.
    "__popcountsi2",
    "__popcountdi2",
    "__popcountti2",
    "__paritysi2",
    "__paritydi2",
    "__parityti2",
    "__clzsi2",
    "__clzdi2",
    "__clzti2",
    "__ctzsi2",
    "__ctzdi2",
    "__ctzti2",
    "__ffssi2",
    "__ffsdi2",
    "__ffsti2",
    "__clrsbsi2",
    "__clrsbdi2",
    "__clrsbti2",
    "__bswapsi2",
    "__bswapdi2",
    // 128-bit (and 64-bit) integer arithmetic and shifts.
    "__divti3",
    "__udivti3",
    "__modti3",
    "__umodti3",
    "__divmodti4",
    "__udivmodti4",
    "__divdi3",
    "__udivdi3",
    "__moddi3",
    "__umoddi3",
    "__udivmoddi4",
    "__multi3",
    "__negti2",
    "__ashlti3",
    "__ashrti3",
    "__lshrti3",
    "__cmpti2",
    "__ucmpti2",
    // Arithmetic that traps or reports overflow (-ftrapv, __builtin_*_overflow).
    "__mulosi4",
    "__mulodi4",
    "__muloti4",
    "__addvsi3",
    "__addvdi3",
    "__addvti3",
    "__subvsi3",
    "__subvdi3",
    "__subvti3",
    "__mulvsi3",
    "__mulvdi3",
    "__mulvti3",
    "__negvsi2",
    "__negvdi2",
    "__negvti2",
    "__absvsi2",
    "__absvdi2",
    "__absvti2",
    // Conversions between floating point and 128-bit integers, and half precision.
    "__floattisf",
    "__floattidf",
    "__floattixf",
    "__floatuntisf",
    "__floatuntidf",
    "__floatuntixf",
    "__fixsfti",
    "__fixdfti",
    "__fixxfti",
    "__fixunssfti",
    "__fixunsdfti",
    "__fixunsxfti",
    "__extendhfsf2",
    "__extendhfdf2",
    "__truncsfhf2",
    "__truncdfhf2",
    // Integer powers and complex multiplication/division.
    "__powisf2",
    "__powidf2",
    "__powixf2",
    "__mulsc3",
    "__muldc3",
    "__mulxc3",
    "__divsc3",
    "__divdc3",
    "__divxc3",
];

/// The C math library functions behind CUDA's math API (each in its `double` form; the `float`
/// form, with an `f` suffix, is allowed too).
pub const MATH: &[&str] = &[
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sincos",
    "exp",
    "exp2",
    "exp10",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "logb",
    "ilogb",
    "pow",
    "sqrt",
    "cbrt",
    "hypot",
    "erf",
    "erfc",
    "tgamma",
    "lgamma",
    "fabs",
    "floor",
    "ceil",
    "round",
    "trunc",
    "rint",
    "nearbyint",
    "lround",
    "llround",
    "lrint",
    "llrint",
    "fmod",
    "remainder",
    "remquo",
    "modf",
    "frexp",
    "ldexp",
    "scalbn",
    "scalbln",
    "fmin",
    "fmax",
    "fdim",
    "fma",
    "copysign",
    "nextafter",
    "nan",
    "j0",
    "j1",
    "jn",
    "y0",
    "y1",
    "yn",
];

/// Device code's C library that a module defines itself (the prelude's end: a heap of device
/// memory, copies that check both ranges, and the names the compiler calls them by), never
/// taken from the process.
pub const MODULE_OWN: &[&str] = &[
    "malloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "bcmp",
    "mempcpy",
    "__memcpy_chk",
    "__memmove_chk",
    "__mempcpy_chk",
    "__memset_chk",
];

/// Whether a kernel's module may need `name` from the process.
pub fn allowed(name: &str) -> bool {
    let math =
        |n: &str| MATH.contains(&n) || n.strip_suffix('f').is_some_and(|d| MATH.contains(&d));
    PRELUDE_NEEDS.contains(&name)
        || COMPILER_INSERTED.contains(&name)
        || DEVICE_RUNTIME.contains(&name)
        || COMPILER_RUNTIME.contains(&name)
        || math(name)
}

/// Checks the shared object at `path`: `Err` with an NVRTC-style log line (the source named
/// `name`) when it needs a host symbol a GPU kernel could not use, or cannot be read.
pub fn check(path: &Path, name: &str) -> Result<(), String> {
    let needs = undefined(path).map_err(|e| format!("{name}: error: {e}\n"))?;
    match needs.iter().find(|s| !allowed(&s.name)) {
        None => Ok(()),
        Some(s) => Err(refusal(s, name)),
    }
}

/// The log line for a symbol a kernel may not use.
pub fn refusal(s: &Undefined, name: &str) -> String {
    let shown = if s.name.starts_with("_Z") {
        format!("`{}` (a C++ function)", s.name)
    } else {
        format!("`{}`", s.name)
    };
    let what = if s.function || s.name.starts_with("_Z") {
        format!("calls the host function {shown}")
    } else {
        format!("uses the host symbol {shown}")
    };
    format!(
        "{name}: error: the kernel {what}, which a GPU cannot run; a kernel may only use \
         CUDA's device functions (and printf)\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_math_and_runtime_not_host_functions() {
        for ok in [
            "expf",
            "sqrtf",
            "exp",
            "tanhf",
            "printf",
            "__tls_get_addr",
            "__popcountdi2",
            "__divti3",
            "__udivmodti4",
            "__mulodi4",
        ] {
            assert!(allowed(ok), "{ok}");
        }
        // Device code's heap and copies are the module's own: from the C library, refused.
        for no in MODULE_OWN.iter().copied().chain([
            "_Znwm",
            "_ZdlPv",
            "__libc_malloc",
            "fopen",
            "open",
            "kill",
            "syscall",
            "dlsym",
            "getenv",
            "system",
            "f",
            "__libc_start_main",
            "__popcount",
            "__divti",
            "popen",
        ]) {
            assert!(!allowed(no), "{no}");
        }
    }

    #[test]
    fn local_statics_are_named_as_written() {
        assert_eq!(demangle_local("_ZZ12matmul_tiledE6tile_a"), "tile_a");
        assert_eq!(demangle_local("_ZL4tile"), "tile");
        assert_eq!(demangle_local("partial"), "partial");
    }

    #[test]
    fn rejects_what_is_not_elf() {
        assert!(undefined_in(b"hello").is_err());
        assert!(undefined_in(b"\x7fELF\x02\x01").is_err());
    }

    #[test]
    fn reads_the_emulators_own_needs() {
        // The test binary itself is an ELF64 object with a dynamic symbol table.
        let exe = std::env::current_exe().unwrap();
        let needs = undefined(&exe).unwrap();
        assert!(
            needs.iter().any(|s| s.name == "malloc" && s.function),
            "{needs:?}"
        );
    }
}
