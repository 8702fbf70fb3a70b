//! NVRTC's name-expression flow, for tests that load template kernels.

use std::ffi::{CStr, CString};

use cudarc::nvrtc::{sys, Ptx};

/// Compiles `src` with NVRTC's name-expression flow: each of `exprs` is added before
/// compiling, and the function is then looked up by its lowered name. Returns the PTX text
/// and the lowered names.
pub fn compile_with_names(src: &str, exprs: &[&str]) -> (Ptx, Vec<String>) {
    let src = CString::new(src).unwrap();
    let cexprs: Vec<CString> = exprs.iter().map(|e| CString::new(*e).unwrap()).collect();
    // SAFETY: NVRTC calls with valid strings and out-pointers, in the documented order.
    unsafe {
        let mut prog = std::ptr::null_mut();
        let r = sys::nvrtcCreateProgram(
            &mut prog,
            src.as_ptr(),
            c"names.cu".as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        );
        assert_eq!(r, sys::nvrtcResult::NVRTC_SUCCESS);
        for e in &cexprs {
            let r = sys::nvrtcAddNameExpression(prog, e.as_ptr());
            assert_eq!(r, sys::nvrtcResult::NVRTC_SUCCESS);
        }
        let r = sys::nvrtcCompileProgram(prog, 0, std::ptr::null());
        if r != sys::nvrtcResult::NVRTC_SUCCESS {
            let mut size = 0usize;
            sys::nvrtcGetProgramLogSize(prog, &mut size);
            let mut log = vec![0u8; size.max(1)];
            sys::nvrtcGetProgramLog(prog, log.as_mut_ptr().cast());
            panic!("compilation failed: {}", String::from_utf8_lossy(&log));
        }
        let mut lowered = Vec::new();
        for e in &cexprs {
            let mut name: *const std::ffi::c_char = std::ptr::null();
            let r = sys::nvrtcGetLoweredName(prog, e.as_ptr(), &mut name);
            assert_eq!(r, sys::nvrtcResult::NVRTC_SUCCESS, "{e:?}");
            lowered.push(CStr::from_ptr(name).to_string_lossy().into_owned());
        }
        let mut size = 0usize;
        assert_eq!(
            sys::nvrtcGetPTXSize(prog, &mut size),
            sys::nvrtcResult::NVRTC_SUCCESS
        );
        let mut ptx = vec![0u8; size];
        sys::nvrtcGetPTX(prog, ptx.as_mut_ptr().cast());
        sys::nvrtcDestroyProgram(&mut prog);
        let text = CStr::from_bytes_until_nul(&ptx).unwrap().to_string_lossy();
        (Ptx::from_src(text.into_owned()), lowered)
    }
}
