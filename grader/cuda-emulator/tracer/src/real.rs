//! The real entry points behind the tracer's own: looked up once, by name, in the real
//! library the grader linked to a placeholder name.

/// A real library the tracer stands in front of.
#[derive(Clone, Copy, Debug)]
pub enum Lib {
    /// The driver (`libcuda.so.1`), behind `libgpu_labs_real_cuda.so`.
    Driver,
    /// cuBLAS, behind `libgpu_labs_real_cublas.so`.
    Cublas,
}

impl Lib {
    fn placeholder(self) -> &'static std::ffi::CStr {
        match self {
            Lib::Driver => c"libgpu_labs_real_cuda.so",
            Lib::Cublas => c"libgpu_labs_real_cublas.so",
        }
    }
}

/// The address of `name` (NUL-terminated) in the real `lib`, or 0 when it has none.
pub fn lookup(lib: Lib, name: &'static str) -> usize {
    // SAFETY: the placeholder is one of the tracer's own dependencies, so it is loaded
    // (RTLD_NOLOAD only finds it); `name` ends with NUL.
    unsafe {
        let handle = libc::dlopen(
            lib.placeholder().as_ptr(),
            libc::RTLD_NOW | libc::RTLD_NOLOAD,
        );
        if handle.is_null() {
            return 0;
        }
        let sym = libc::dlsym(handle, name.as_ptr().cast());
        libc::dlclose(handle);
        sym as usize
    }
}

/// Calls the real entry point `$name` of `$lib` (with its C signature) on the arguments,
/// or gives `$missing` when the real library lacks it.
macro_rules! call_real {
    ($lib:ident, $name:ident, fn($($t:ty),* $(,)?) -> $r:ty, $missing:expr; $($arg:expr),* $(,)?) => {{
        static SYM: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let addr = *SYM.get_or_init(|| {
            $crate::real::lookup($crate::real::Lib::$lib, concat!(stringify!($name), "\0"))
        });
        if addr == 0 {
            $missing
        } else {
            // SAFETY: the real library's symbol has the documented C signature given here.
            let f: unsafe extern "C" fn($($t),*) -> $r = unsafe { std::mem::transmute(addr) };
            unsafe { f($($arg),*) }
        }
    }};
}
