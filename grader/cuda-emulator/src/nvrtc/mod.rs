//! NVRTC: "compiles" CUDA C by handing it, wrapped in a prelude, to the host C++ compiler.
//! The "PTX" returned is a short text naming the compiled shared object, which
//! `cuModuleLoadData` loads.

pub mod compile;
pub mod coroutine;
pub mod declarations;
pub mod expand;
pub mod names;
pub mod remote;
pub mod source;
/// The CUDA headers the emulator provides in place of the toolkit's.
pub mod stub_headers;
pub mod symbols;

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CString};
use std::sync::{LazyLock, Mutex};

use crate::status::*;
use crate::util::{c_str, write_out};

/// An NVRTC program.
#[derive(Debug, Default)]
pub struct Program {
    src: String,
    name: String,
    headers: Vec<(String, String)>,
    ptx: Option<CString>,
    log: CString,
    /// Name expressions, in the order they were added (before compilation).
    exprs: Vec<String>,
    /// Their lowered names (after a successful compilation).
    lowered: HashMap<String, CString>,
}

/// Live programs, by handle.
static PROGRAMS: LazyLock<Mutex<HashMap<usize, Box<Program>>>> = LazyLock::new(Default::default);

fn with_program<R>(
    prog: *mut Program,
    f: impl FnOnce(&mut Program) -> R,
) -> Result<R, NvrtcResult> {
    let mut map = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    map.get_mut(&(prog as usize))
        .map(|p| f(p))
        .ok_or(NVRTC_ERROR_INVALID_PROGRAM)
}

fn status(r: Result<NvrtcResult, NvrtcResult>) -> NvrtcResult {
    r.unwrap_or_else(|e| e)
}

/// Creates a program from a CUDA C source, its name and headers.
#[no_mangle]
pub unsafe extern "C" fn nvrtcCreateProgram(
    prog: *mut *mut Program,
    src: *const c_char,
    name: *const c_char,
    num_headers: c_int,
    headers: *const *const c_char,
    include_names: *const *const c_char,
) -> NvrtcResult {
    let (Some(text), false) = (c_str(src), prog.is_null()) else {
        return NVRTC_ERROR_INVALID_INPUT;
    };
    let mut p = Box::new(Program {
        src: text.into_owned(),
        name: c_str(name).map_or_else(|| "default_program".to_string(), |n| n.into_owned()),
        ..Default::default()
    });
    for i in 0..usize::try_from(num_headers).unwrap_or(0) {
        if headers.is_null() || include_names.is_null() {
            return NVRTC_ERROR_INVALID_INPUT;
        }
        let (Some(h), Some(n)) = (c_str(*headers.add(i)), c_str(*include_names.add(i))) else {
            return NVRTC_ERROR_INVALID_INPUT;
        };
        p.headers.push((n.into_owned(), h.into_owned()));
    }
    let handle = &mut *p as *mut Program;
    PROGRAMS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(handle as usize, p);
    *prog = handle;
    NVRTC_SUCCESS
}

/// Destroys a program and sets the handle to null.
#[no_mangle]
pub unsafe extern "C" fn nvrtcDestroyProgram(prog: *mut *mut Program) -> NvrtcResult {
    if prog.is_null() {
        return NVRTC_ERROR_INVALID_PROGRAM;
    }
    let removed = PROGRAMS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(*prog as usize));
    *prog = std::ptr::null_mut();
    if removed.is_some() {
        NVRTC_SUCCESS
    } else {
        NVRTC_ERROR_INVALID_PROGRAM
    }
}

/// Compiles a program; on failure the log holds the compiler's diagnostics.
#[no_mangle]
pub unsafe extern "C" fn nvrtcCompileProgram(
    prog: *mut Program,
    num_options: c_int,
    options: *const *const c_char,
) -> NvrtcResult {
    let mut opts = Vec::new();
    for i in 0..usize::try_from(num_options).unwrap_or(0) {
        if options.is_null() {
            return NVRTC_ERROR_INVALID_INPUT;
        }
        match c_str(*options.add(i)) {
            Some(o) => opts.push(o.into_owned()),
            None => return NVRTC_ERROR_INVALID_INPUT,
        }
    }
    let Ok((src, name, headers, exprs)) = with_program(prog, |p| {
        (
            p.src.clone(),
            p.name.clone(),
            p.headers.clone(),
            p.exprs.clone(),
        )
    }) else {
        return NVRTC_ERROR_INVALID_PROGRAM;
    };
    let result = compile::compile(&src, &name, &headers, &opts, &exprs);
    status(with_program(prog, |p| match result {
        Ok(c) => {
            p.ptx = CString::new(compile::module_text(&c)).ok();
            p.log = CString::new(c.log.clone()).unwrap_or_default();
            p.lowered = c
                .lowered
                .iter()
                .map(|l| {
                    let lowered = CString::new(l.lowered.clone()).unwrap_or_default();
                    (l.expr.clone(), lowered)
                })
                .collect();
            NVRTC_SUCCESS
        }
        Err(log) => {
            p.ptx = None;
            p.log = CString::new(log.replace('\0', " ")).unwrap_or_default();
            NVRTC_ERROR_COMPILATION
        }
    }))
}

unsafe fn get_size(
    prog: *mut Program,
    size: *mut usize,
    pick: fn(&Program) -> Option<&CString>,
) -> NvrtcResult {
    status(with_program(prog, |p| match pick(p) {
        Some(s) if write_out(size, s.as_bytes_with_nul().len()) => NVRTC_SUCCESS,
        Some(_) => NVRTC_ERROR_INVALID_INPUT,
        None => NVRTC_ERROR_INVALID_PROGRAM,
    }))
}

unsafe fn get_text(
    prog: *mut Program,
    out: *mut c_char,
    pick: fn(&Program) -> Option<&CString>,
) -> NvrtcResult {
    if out.is_null() {
        return NVRTC_ERROR_INVALID_INPUT;
    }
    status(with_program(prog, |p| match pick(p) {
        Some(s) => {
            let b = s.as_bytes_with_nul();
            std::ptr::copy_nonoverlapping(b.as_ptr().cast::<c_char>(), out, b.len());
            NVRTC_SUCCESS
        }
        None => NVRTC_ERROR_INVALID_PROGRAM,
    }))
}

/// Size of the compiled module text, NUL included.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetPTXSize(prog: *mut Program, size: *mut usize) -> NvrtcResult {
    get_size(prog, size, |p| p.ptx.as_ref())
}

/// The compiled module text (what `cuModuleLoadData` accepts).
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetPTX(prog: *mut Program, ptx: *mut c_char) -> NvrtcResult {
    get_text(prog, ptx, |p| p.ptx.as_ref())
}

/// Same as [`nvrtcGetPTXSize`]: the emulator has one kind of compiled module.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetCUBINSize(prog: *mut Program, size: *mut usize) -> NvrtcResult {
    get_size(prog, size, |p| p.ptx.as_ref())
}

/// Same as [`nvrtcGetPTX`].
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetCUBIN(prog: *mut Program, cubin: *mut c_char) -> NvrtcResult {
    get_text(prog, cubin, |p| p.ptx.as_ref())
}

/// Size of the compilation log, NUL included.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetProgramLogSize(
    prog: *mut Program,
    size: *mut usize,
) -> NvrtcResult {
    get_size(prog, size, |p| Some(&p.log))
}

/// The compilation log.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetProgramLog(prog: *mut Program, log: *mut c_char) -> NvrtcResult {
    get_text(prog, log, |p| Some(&p.log))
}

/// Records a name expression (`my_kernel<float, 4>`, or `&my_kernel<float, 4>`): the
/// compilation instantiates it, and [`nvrtcGetLoweredName`] then gives its lowered name.
#[no_mangle]
pub unsafe extern "C" fn nvrtcAddNameExpression(
    prog: *mut Program,
    name: *const c_char,
) -> NvrtcResult {
    let Some(n) = c_str(name) else {
        return NVRTC_ERROR_INVALID_INPUT;
    };
    let n = n.into_owned();
    if n.trim().trim_start_matches('&').trim().is_empty() || n.contains(['\n', ';', '{', '}']) {
        return NVRTC_ERROR_INVALID_INPUT;
    }
    status(with_program(prog, |p| {
        if p.ptx.is_some() {
            return NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
        }
        if !p.exprs.contains(&n) {
            p.exprs.push(n);
        }
        NVRTC_SUCCESS
    }))
}

/// The lowered (mangled) name of an expression given to [`nvrtcAddNameExpression`], after a
/// successful compilation.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetLoweredName(
    prog: *mut Program,
    name: *const c_char,
    lowered: *mut *const c_char,
) -> NvrtcResult {
    let Some(n) = c_str(name) else {
        return NVRTC_ERROR_INVALID_INPUT;
    };
    status(with_program(prog, |p| match p.lowered.get(n.as_ref()) {
        Some(l) if write_out(lowered, l.as_ptr()) => NVRTC_SUCCESS,
        Some(_) => NVRTC_ERROR_INVALID_INPUT,
        None if p.ptx.is_none() => NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION,
        None => NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID,
    }))
}

/// NVRTC 12.8.
#[no_mangle]
pub unsafe extern "C" fn nvrtcVersion(major: *mut c_int, minor: *mut c_int) -> NvrtcResult {
    if write_out(major, 12) && write_out(minor, 8) {
        NVRTC_SUCCESS
    } else {
        NVRTC_ERROR_INVALID_INPUT
    }
}

/// One supported architecture: compute_80.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetNumSupportedArchs(n: *mut c_int) -> NvrtcResult {
    if write_out(n, 1) {
        NVRTC_SUCCESS
    } else {
        NVRTC_ERROR_INVALID_INPUT
    }
}

/// Writes the supported architectures (80).
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetSupportedArchs(archs: *mut c_int) -> NvrtcResult {
    if write_out(archs, 80) {
        NVRTC_SUCCESS
    } else {
        NVRTC_ERROR_INVALID_INPUT
    }
}

/// A static description of an NVRTC result.
#[no_mangle]
pub unsafe extern "C" fn nvrtcGetErrorString(result: NvrtcResult) -> *const c_char {
    let s: &std::ffi::CStr = match result {
        0 => c"NVRTC_SUCCESS",
        1 => c"NVRTC_ERROR_OUT_OF_MEMORY",
        2 => c"NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
        3 => c"NVRTC_ERROR_INVALID_INPUT",
        4 => c"NVRTC_ERROR_INVALID_PROGRAM",
        5 => c"NVRTC_ERROR_INVALID_OPTION",
        6 => c"NVRTC_ERROR_COMPILATION",
        7 => c"NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        8 => c"NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        9 => c"NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        10 => c"NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        11 => c"NVRTC_ERROR_INTERNAL_ERROR",
        _ => c"NVRTC_ERROR unknown",
    };
    s.as_ptr()
}
