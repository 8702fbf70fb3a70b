//! Device work the grader counts: kernel launches and cuBLAS computations, each counted when
//! the real library accepts it (the emulator counts the same calls).

use crate::counters::{count_blas_call, count_launch};
use crate::status::{
    CUresult, CublasStatus, CUBLAS_NOT_SUPPORTED, CUBLAS_SUCCESS, NOT_SUPPORTED, SUCCESS,
};
use std::ffi::c_void;

type Ptr = *mut c_void;

fn launched(r: CUresult) -> CUresult {
    if r == SUCCESS {
        count_launch();
    }
    r
}

fn computed(r: CublasStatus) -> CublasStatus {
    if r == CUBLAS_SUCCESS {
        count_blas_call();
    }
    r
}

/// `cuLaunchKernel`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    f: Ptr,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: u32,
    h: Ptr,
    params: *mut Ptr,
    extra: *mut Ptr,
) -> CUresult {
    launched(call_real!(Driver, cuLaunchKernel,
        fn(Ptr, u32, u32, u32, u32, u32, u32, u32, Ptr, *mut Ptr, *mut Ptr) -> CUresult,
        NOT_SUPPORTED; f, gx, gy, gz, bx, by, bz, shared, h, params, extra))
}

/// `cuLaunchCooperativeKernel`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    f: Ptr,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: u32,
    h: Ptr,
    params: *mut Ptr,
) -> CUresult {
    launched(call_real!(Driver, cuLaunchCooperativeKernel,
        fn(Ptr, u32, u32, u32, u32, u32, u32, u32, Ptr, *mut Ptr) -> CUresult,
        NOT_SUPPORTED; f, gx, gy, gz, bx, by, bz, shared, h, params))
}

/// `cuLaunchKernelEx`, counted.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const c_void,
    f: Ptr,
    params: *mut Ptr,
    extra: *mut Ptr,
) -> CUresult {
    launched(call_real!(Driver, cuLaunchKernelEx,
        fn(*const c_void, Ptr, *mut Ptr, *mut Ptr) -> CUresult,
        NOT_SUPPORTED; config, f, params, extra))
}

/// Defines a counted cuBLAS entry point with the given C parameters.
macro_rules! counted_blas {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $t:ty),* $(,)?);)*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> CublasStatus {
            computed(call_real!(Cublas, $name, fn($($t),*) -> CublasStatus,
                CUBLAS_NOT_SUPPORTED; $($arg),*))
        }
    )*};
}

counted_blas! {
    /// `cublasSgemm_v2`, counted.
    cublasSgemm_v2(h: Ptr, ta: u32, tb: u32, m: i32, n: i32, k: i32, alpha: *const f32,
        a: *const f32, lda: i32, b: *const f32, ldb: i32, beta: *const f32, c: *mut f32,
        ldc: i32);
    /// `cublasDgemm_v2`, counted.
    cublasDgemm_v2(h: Ptr, ta: u32, tb: u32, m: i32, n: i32, k: i32, alpha: *const f64,
        a: *const f64, lda: i32, b: *const f64, ldb: i32, beta: *const f64, c: *mut f64,
        ldc: i32);
    /// `cublasSgemmStridedBatched`, counted.
    cublasSgemmStridedBatched(h: Ptr, ta: u32, tb: u32, m: i32, n: i32, k: i32,
        alpha: *const f32, a: *const f32, lda: i32, sa: i64, b: *const f32, ldb: i32, sb: i64,
        beta: *const f32, c: *mut f32, ldc: i32, sc: i64, batch: i32);
    /// `cublasDgemmStridedBatched`, counted.
    cublasDgemmStridedBatched(h: Ptr, ta: u32, tb: u32, m: i32, n: i32, k: i32,
        alpha: *const f64, a: *const f64, lda: i32, sa: i64, b: *const f64, ldb: i32, sb: i64,
        beta: *const f64, c: *mut f64, ldc: i32, sc: i64, batch: i32);
    /// `cublasSgemv_v2`, counted.
    cublasSgemv_v2(h: Ptr, trans: u32, m: i32, n: i32, alpha: *const f32, a: *const f32,
        lda: i32, x: *const f32, incx: i32, beta: *const f32, y: *mut f32, incy: i32);
    /// `cublasDgemv_v2`, counted.
    cublasDgemv_v2(h: Ptr, trans: u32, m: i32, n: i32, alpha: *const f64, a: *const f64,
        lda: i32, x: *const f64, incx: i32, beta: *const f64, y: *mut f64, incy: i32);
}
