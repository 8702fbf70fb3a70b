//! NVRTC name expressions: a template kernel instantiated twice through
//! `nvrtcAddNameExpression`, each looked up with `cuModuleGetFunction` by the lowered name
//! `nvrtcGetLoweredName` gives (the real mangled name, as NVRTC gives it); and the errors of
//! the flow used out of order.

mod common;

use std::ffi::CString;

use common::names::compile_with_names;
use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::sys;

const SCALE: &str = r#"
template <typename T, int S>
__global__ void scale(T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * (T)S;
}
"#;

emulated!(template_kernel_instantiated_twice_by_name_expressions, {
    let (ptx, lowered) = compile_with_names(SCALE, &["scale<float, 2>", "&scale<double, 3>"]);
    assert_eq!(lowered, ["_Z5scaleIfLi2EEvPT_i", "_Z5scaleIdLi3EEvPT_i"]);
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(ptx).unwrap();
    let n = 100i32;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let f = module.load_function(&lowered[0]).unwrap();
    let mut xf = stream.clone_htod(&vec![1.5f32; n as usize]).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&mut xf).arg(&n);
    unsafe { l.launch(cfg) }.unwrap();
    let d = module.load_function(&lowered[1]).unwrap();
    let mut xd = stream.clone_htod(&vec![1.5f64; n as usize]).unwrap();
    let mut l = stream.launch_builder(&d);
    l.arg(&mut xd).arg(&n);
    unsafe { l.launch(cfg) }.unwrap();
    assert_eq!(stream.clone_dtoh(&xf).unwrap(), vec![3.0f32; n as usize]);
    assert_eq!(stream.clone_dtoh(&xd).unwrap(), vec![4.5f64; n as usize]);
    // The template itself is no kernel of the module: only its instances, by lowered name.
    assert!(module.load_function("scale").is_err());
});

emulated!(name_expressions_out_of_order_are_errors, {
    let src = CString::new(SCALE).unwrap();
    let expr = CString::new("scale<float, 2>").unwrap();
    let other = CString::new("scale<int, 2>").unwrap();
    // SAFETY: NVRTC calls with valid strings and out-pointers.
    unsafe {
        let mut prog = std::ptr::null_mut();
        let none = std::ptr::null();
        sys::nvrtcCreateProgram(&mut prog, src.as_ptr(), std::ptr::null(), 0, none, none);
        sys::nvrtcAddNameExpression(prog, expr.as_ptr());
        let mut name: *const std::ffi::c_char = std::ptr::null();
        assert_eq!(
            sys::nvrtcGetLoweredName(prog, expr.as_ptr(), &mut name),
            sys::nvrtcResult::NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION
        );
        assert_eq!(
            sys::nvrtcCompileProgram(prog, 0, std::ptr::null()),
            sys::nvrtcResult::NVRTC_SUCCESS
        );
        assert_eq!(
            sys::nvrtcGetLoweredName(prog, other.as_ptr(), &mut name),
            sys::nvrtcResult::NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID
        );
        assert_eq!(
            sys::nvrtcAddNameExpression(prog, other.as_ptr()),
            sys::nvrtcResult::NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION
        );
        assert_eq!(
            sys::nvrtcGetLoweredName(prog, expr.as_ptr(), &mut name),
            sys::nvrtcResult::NVRTC_SUCCESS
        );
        sys::nvrtcDestroyProgram(&mut prog);
    }
});
