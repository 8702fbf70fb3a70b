//! cuBLAS: handles bound to a stream, pointer modes, SGEMM/DGEMM (plain and strided batched)
//! and SGEMV/DGEMV, run asynchronously on the handle's stream.

pub mod gemm;

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use crate::driver::stream::{self, OpKind};
use crate::driver::Registry;
use crate::memory;
use crate::status::*;
use crate::util::write_out;
use gemm::{Gemm, Real};

/// A cuBLAS handle.
#[derive(Debug, Default)]
pub struct Handle {
    stream: AtomicUsize,
    pointer_mode: AtomicU32,
    math_mode: AtomicU32,
}

/// Handle type.
pub type CublasHandle = *mut Handle;

static HANDLES: LazyLock<Registry<Handle>> = LazyLock::new(Registry::default);

fn lookup(h: CublasHandle) -> Result<Arc<Handle>, CublasStatus> {
    HANDLES.get(h as usize).ok_or(CUBLAS_NOT_INITIALIZED)
}

fn status(r: Result<(), CublasStatus>) -> CublasStatus {
    r.err().unwrap_or(CUBLAS_SUCCESS)
}

/// Creates a handle bound to the default stream.
#[no_mangle]
pub unsafe extern "C" fn cublasCreate_v2(h: *mut CublasHandle) -> CublasStatus {
    if h.is_null() {
        return CUBLAS_INVALID_VALUE;
    }
    *h = HANDLES.insert(Arc::new(Handle::default())) as CublasHandle;
    CUBLAS_SUCCESS
}

/// Destroys a handle.
#[no_mangle]
pub unsafe extern "C" fn cublasDestroy_v2(h: CublasHandle) -> CublasStatus {
    if HANDLES.remove(h as usize).is_some() {
        CUBLAS_SUCCESS
    } else {
        CUBLAS_NOT_INITIALIZED
    }
}

/// Binds a handle to a stream.
#[no_mangle]
pub unsafe extern "C" fn cublasSetStream_v2(h: CublasHandle, s: stream::CUstream) -> CublasStatus {
    status(lookup(h).map(|h| h.stream.store(s as usize, Ordering::Relaxed)))
}

/// The handle's stream.
#[no_mangle]
pub unsafe extern "C" fn cublasGetStream_v2(
    h: CublasHandle,
    s: *mut stream::CUstream,
) -> CublasStatus {
    status(lookup(h).and_then(|h| {
        if write_out(s, h.stream.load(Ordering::Relaxed) as stream::CUstream) {
            Ok(())
        } else {
            Err(CUBLAS_INVALID_VALUE)
        }
    }))
}

/// Sets whether scalars are read from host (0) or device (1) memory.
#[no_mangle]
pub unsafe extern "C" fn cublasSetPointerMode_v2(h: CublasHandle, mode: u32) -> CublasStatus {
    if mode > 1 {
        return CUBLAS_INVALID_VALUE;
    }
    status(lookup(h).map(|h| h.pointer_mode.store(mode, Ordering::Relaxed)))
}

/// The pointer mode.
#[no_mangle]
pub unsafe extern "C" fn cublasGetPointerMode_v2(h: CublasHandle, mode: *mut u32) -> CublasStatus {
    status(lookup(h).and_then(|h| {
        if write_out(mode, h.pointer_mode.load(Ordering::Relaxed)) {
            Ok(())
        } else {
            Err(CUBLAS_INVALID_VALUE)
        }
    }))
}

/// Records the math mode (computation is always in the element type).
#[no_mangle]
pub unsafe extern "C" fn cublasSetMathMode(h: CublasHandle, mode: u32) -> CublasStatus {
    status(lookup(h).map(|h| h.math_mode.store(mode, Ordering::Relaxed)))
}

/// The math mode.
#[no_mangle]
pub unsafe extern "C" fn cublasGetMathMode(h: CublasHandle, mode: *mut u32) -> CublasStatus {
    status(lookup(h).map(|h| {
        write_out(mode, h.math_mode.load(Ordering::Relaxed));
    }))
}

/// cuBLAS 12.8.
#[no_mangle]
pub unsafe extern "C" fn cublasGetVersion_v2(_h: CublasHandle, version: *mut i32) -> CublasStatus {
    write_out(version, 120_800);
    CUBLAS_SUCCESS
}

/// Workspaces are not needed.
#[no_mangle]
pub unsafe extern "C" fn cublasSetWorkspace_v2(
    _h: CublasHandle,
    _w: *mut std::ffi::c_void,
    _n: usize,
) -> CublasStatus {
    CUBLAS_SUCCESS
}

fn op(t: u32) -> Result<bool, CublasStatus> {
    match t {
        0 => Ok(false),
        1 | 2 => Ok(true),
        _ => Err(CUBLAS_INVALID_VALUE),
    }
}

/// Checks that every matrix lies inside a device allocation; describes the first that does not.
fn check_extents<T: Real>(g: &Gemm<T>, name: &str) -> Result<(), String> {
    let size = std::mem::size_of::<T>();
    for (label, (addr, rows, cols, ld)) in ["A", "B", "C"].iter().zip(g.extents()) {
        if rows == 0 || cols == 0 {
            continue;
        }
        let bytes = ((cols - 1) * ld + rows) * size;
        if !memory::is_device_range(addr, bytes) {
            let last = addr + bytes - 1;
            return Err(format!(
                "gpu-labs emulator: {name}: matrix {label} ({rows}x{cols}, leading dimension {ld}) \
                 is not inside one device allocation: its last element is {}",
                memory::describe(last)
            ));
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn gemm_batched<T: Real>(
    name: &'static str,
    h: CublasHandle,
    ta: u32,
    tb: u32,
    m: i32,
    n: i32,
    k: i32,
    alpha: *const T,
    a: *const T,
    lda: i32,
    stride_a: i64,
    b: *const T,
    ldb: i32,
    stride_b: i64,
    beta: *const T,
    c: *mut T,
    ldc: i32,
    stride_c: i64,
    batch: i32,
) -> Result<(), CublasStatus> {
    crate::util::host_side_of_a_launch();
    let _gate = crate::replay::gate();
    crate::counters::count_blas_call();
    let handle = lookup(h)?;
    let (ta, tb) = (op(ta)?, op(tb)?);
    let dims = |v: i32| usize::try_from(v).map_err(|_| CUBLAS_INVALID_VALUE);
    let (m, n, k, lda, ldb, ldc, batch) = (
        dims(m)?,
        dims(n)?,
        dims(k)?,
        dims(lda)?,
        dims(ldb)?,
        dims(ldc)?,
        dims(batch)?,
    );
    let rows_a = if ta { k } else { m };
    let rows_b = if tb { n } else { k };
    // As cuBLAS does, a leading dimension below its operand's rows is refused; the record
    // says which, so that the student is pointed at the call, not at a kernel of theirs.
    let short = [
        (
            "lda",
            lda,
            rows_a,
            "first operand (its A",
            if ta { "k: A is transposed" } else { "m" },
        ),
        (
            "ldb",
            ldb,
            rows_b,
            "second operand (its B",
            if tb { "n: B is transposed" } else { "k" },
        ),
        ("ldc", ldc, m, "result (its C", "m"),
    ]
    .into_iter()
    .find(|&(_, ld, rows, _, _)| ld < rows.max(1));
    if let Some((which, ld, rows, operand, dim)) = short {
        crate::refused(format!(
            "gpu-labs emulator: {name}: {which} = {ld} is less than {rows}, the rows of the \
             call's {operand}, {dim} = {rows} rows): cuBLAS stores matrices column by column, \
             so each operand's leading dimension is at least its number of rows (the call's \
             m={m}, n={n}, k={k}); the call returned CUBLAS_STATUS_INVALID_VALUE"
        ));
        return Err(CUBLAS_INVALID_VALUE);
    }
    if alpha.is_null() || beta.is_null() {
        return Err(CUBLAS_INVALID_VALUE);
    }
    let s = stream::resolve(handle.stream.load(Ordering::Relaxed) as stream::CUstream)
        .map_err(|_| CUBLAS_NOT_INITIALIZED)?;
    let device_scalars = handle.pointer_mode.load(Ordering::Relaxed) == 1;
    let (alpha_v, beta_v) = if device_scalars {
        (T::default(), T::default())
    } else {
        (*alpha, *beta)
    };
    let (alpha_p, beta_p) = (alpha as usize, beta as usize);
    let size = std::mem::size_of::<T>() as i64;
    let mut gemms = Vec::with_capacity(batch);
    for i in 0..batch as i64 {
        let at = |p: usize, stride: i64| (p as i64 + i * stride * size) as usize;
        let g = Gemm {
            ta,
            tb,
            m,
            n,
            k,
            alpha: alpha_v,
            beta: beta_v,
            a: at(a as usize, stride_a),
            lda,
            b: at(b as usize, stride_b),
            ldb,
            c: at(c as usize, stride_c),
            ldc,
        };
        if let Err(report) = check_extents(&g, name) {
            crate::refused(report);
            // As on a GPU, the bad access surfaces as a sticky error of the stream's context.
            s.enqueue(OpKind::Work, || Err(ILLEGAL_ADDRESS))
                .map_err(|_| CUBLAS_EXECUTION_FAILED)?;
            return Ok(());
        }
        gemms.push(g);
    }
    s.enqueue(OpKind::Work, move || {
        let mut gemms = gemms;
        for g in &mut gemms {
            if device_scalars {
                // SAFETY: device scalars are read when the stream reaches the operation.
                unsafe {
                    g.alpha = *(alpha_p as *const T);
                    g.beta = *(beta_p as *const T);
                }
            }
            crate::findings::count_multiply_adds((g.m * g.n * g.k) as u64);
            // SAFETY: extents checked at submission; the application keeps the buffers alive.
            unsafe { g.run() };
        }
        if crate::replay::logging() {
            crate::replay::log_run(move || {
                for g in &gemms {
                    // SAFETY: as above; the replay log holds the buffers until it closes.
                    unsafe { g.run() };
                }
                true
            });
        }
        Ok(())
    })
    .map(drop)
    .map_err(|_| CUBLAS_EXECUTION_FAILED)
}

/// Single-precision GEMM.
#[no_mangle]
pub unsafe extern "C" fn cublasSgemm_v2(
    h: CublasHandle,
    ta: u32,
    tb: u32,
    m: i32,
    n: i32,
    k: i32,
    alpha: *const f32,
    a: *const f32,
    lda: i32,
    b: *const f32,
    ldb: i32,
    beta: *const f32,
    c: *mut f32,
    ldc: i32,
) -> CublasStatus {
    status(gemm_batched(
        "cublasSgemm",
        h,
        ta,
        tb,
        m,
        n,
        k,
        alpha,
        a,
        lda,
        0,
        b,
        ldb,
        0,
        beta,
        c,
        ldc,
        0,
        1,
    ))
}

/// Double-precision GEMM.
#[no_mangle]
pub unsafe extern "C" fn cublasDgemm_v2(
    h: CublasHandle,
    ta: u32,
    tb: u32,
    m: i32,
    n: i32,
    k: i32,
    alpha: *const f64,
    a: *const f64,
    lda: i32,
    b: *const f64,
    ldb: i32,
    beta: *const f64,
    c: *mut f64,
    ldc: i32,
) -> CublasStatus {
    status(gemm_batched(
        "cublasDgemm",
        h,
        ta,
        tb,
        m,
        n,
        k,
        alpha,
        a,
        lda,
        0,
        b,
        ldb,
        0,
        beta,
        c,
        ldc,
        0,
        1,
    ))
}

/// Single-precision strided batched GEMM.
#[no_mangle]
pub unsafe extern "C" fn cublasSgemmStridedBatched(
    h: CublasHandle,
    ta: u32,
    tb: u32,
    m: i32,
    n: i32,
    k: i32,
    alpha: *const f32,
    a: *const f32,
    lda: i32,
    sa: i64,
    b: *const f32,
    ldb: i32,
    sb: i64,
    beta: *const f32,
    c: *mut f32,
    ldc: i32,
    sc: i64,
    batch: i32,
) -> CublasStatus {
    status(gemm_batched(
        "cublasSgemmStridedBatched",
        h,
        ta,
        tb,
        m,
        n,
        k,
        alpha,
        a,
        lda,
        sa,
        b,
        ldb,
        sb,
        beta,
        c,
        ldc,
        sc,
        batch,
    ))
}

/// Double-precision strided batched GEMM.
#[no_mangle]
pub unsafe extern "C" fn cublasDgemmStridedBatched(
    h: CublasHandle,
    ta: u32,
    tb: u32,
    m: i32,
    n: i32,
    k: i32,
    alpha: *const f64,
    a: *const f64,
    lda: i32,
    sa: i64,
    b: *const f64,
    ldb: i32,
    sb: i64,
    beta: *const f64,
    c: *mut f64,
    ldc: i32,
    sc: i64,
    batch: i32,
) -> CublasStatus {
    status(gemm_batched(
        "cublasDgemmStridedBatched",
        h,
        ta,
        tb,
        m,
        n,
        k,
        alpha,
        a,
        lda,
        sa,
        b,
        ldb,
        sb,
        beta,
        c,
        ldc,
        sc,
        batch,
    ))
}

#[allow(clippy::too_many_arguments)]
unsafe fn gemv<T: Real>(
    name: &'static str,
    h: CublasHandle,
    trans: u32,
    m: i32,
    n: i32,
    alpha: *const T,
    a: *const T,
    lda: i32,
    x: *const T,
    incx: i32,
    beta: *const T,
    y: *mut T,
    incy: i32,
) -> Result<(), CublasStatus> {
    crate::util::host_side_of_a_launch();
    let _gate = crate::replay::gate();
    crate::counters::count_blas_call();
    let handle = lookup(h)?;
    let t = op(trans)?;
    let dims = |v: i32| usize::try_from(v).map_err(|_| CUBLAS_INVALID_VALUE);
    let (m, n, lda) = (dims(m)?, dims(n)?, dims(lda)?);
    if lda < m.max(1) || incx == 0 || incy == 0 || alpha.is_null() || beta.is_null() {
        return Err(CUBLAS_INVALID_VALUE);
    }
    let (xlen, ylen) = if t { (m, n) } else { (n, m) };
    let size = std::mem::size_of::<T>();
    let span =
        |len: usize, inc: i32| (len.saturating_sub(1) * inc.unsigned_abs() as usize + 1) * size;
    let s = stream::resolve(handle.stream.load(Ordering::Relaxed) as stream::CUstream)
        .map_err(|_| CUBLAS_NOT_INITIALIZED)?;
    let ok = m == 0
        || n == 0
        || (memory::is_device_range(a as usize, ((n - 1) * lda + m) * size)
            && memory::is_device_range(x as usize, span(xlen, incx))
            && memory::is_device_range(y as usize, span(ylen, incy)));
    if !ok {
        crate::refused(format!(
            "gpu-labs emulator: {name}: A, x or y is not inside one device allocation"
        ));
        return s
            .enqueue(OpKind::Work, || Err(ILLEGAL_ADDRESS))
            .map(drop)
            .map_err(|_| CUBLAS_EXECUTION_FAILED);
    }
    let device_scalars = handle.pointer_mode.load(Ordering::Relaxed) == 1;
    let scalars = if device_scalars {
        None
    } else {
        Some((*alpha, *beta))
    };
    let (alpha, beta, a, x, y) = (
        alpha as usize,
        beta as usize,
        a as usize,
        x as usize,
        y as usize,
    );
    s.enqueue(OpKind::Work, move || {
        crate::findings::count_multiply_adds((m * n) as u64);
        // SAFETY: device scalars are read when the stream reaches the operation.
        let (alpha, beta) =
            scalars.unwrap_or_else(|| unsafe { (*(alpha as *const T), *(beta as *const T)) });
        // SAFETY: ranges checked at submission; the application keeps the buffers alive (and
        // a replay log holds them until it closes).
        let product = move || unsafe {
            let (a, x, y) = (a as *const T, x as *const T, y as *mut T);
            let at = |p: usize, inc: i32, len: usize| {
                if inc > 0 {
                    p * inc as usize
                } else {
                    (len - 1 - p) * inc.unsigned_abs() as usize
                }
            };
            for i in 0..ylen {
                let mut sum = T::default();
                for j in 0..xlen {
                    let aij = if t {
                        *a.add(j + i * lda)
                    } else {
                        *a.add(i + j * lda)
                    };
                    sum = sum + aij * *x.add(at(j, incx, xlen));
                }
                let yi = y.add(at(i, incy, ylen));
                *yi = if beta == T::default() {
                    alpha * sum
                } else {
                    alpha * sum + beta * *yi
                };
            }
            true
        };
        product();
        crate::replay::log_run(product);
        Ok(())
    })
    .map(drop)
    .map_err(|_| CUBLAS_EXECUTION_FAILED)
}

/// Single-precision matrix-vector product.
#[no_mangle]
pub unsafe extern "C" fn cublasSgemv_v2(
    h: CublasHandle,
    trans: u32,
    m: i32,
    n: i32,
    alpha: *const f32,
    a: *const f32,
    lda: i32,
    x: *const f32,
    incx: i32,
    beta: *const f32,
    y: *mut f32,
    incy: i32,
) -> CublasStatus {
    status(gemv(
        "cublasSgemv",
        h,
        trans,
        m,
        n,
        alpha,
        a,
        lda,
        x,
        incx,
        beta,
        y,
        incy,
    ))
}

/// Double-precision matrix-vector product.
#[no_mangle]
pub unsafe extern "C" fn cublasDgemv_v2(
    h: CublasHandle,
    trans: u32,
    m: i32,
    n: i32,
    alpha: *const f64,
    a: *const f64,
    lda: i32,
    x: *const f64,
    incx: i32,
    beta: *const f64,
    y: *mut f64,
    incy: i32,
) -> CublasStatus {
    status(gemv(
        "cublasDgemv",
        h,
        trans,
        m,
        n,
        alpha,
        a,
        lda,
        x,
        incx,
        beta,
        y,
        incy,
    ))
}
