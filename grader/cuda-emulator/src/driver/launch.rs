//! Kernel launches: validated like the driver, then queued on the stream; they return at once.

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::code;
use super::device::{MAX_BLOCK, MAX_GRID, MAX_THREADS, SHARED_PER_BLOCK_OPTIN};
use super::module::{self, CUfunction};
use super::stream::{self, OpKind};
use crate::exec::{self, Job};
use crate::status::*;

/// Checks a launch configuration the way the driver does; the message says what is wrong.
pub fn validate(
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    static_shared: u32,
    max_dynamic: u32,
) -> Result<(), (CUresult, String)> {
    let bad = |msg: String| Err((INVALID_VALUE, msg));
    if grid.contains(&0) || block.contains(&0) {
        return bad(format!(
            "grid {grid:?} or block {block:?} has a zero dimension"
        ));
    }
    for (axis, (g, m)) in ["x", "y", "z"].iter().zip(grid.iter().zip(MAX_GRID)) {
        if *g > m {
            return bad(format!("grid dimension {axis} is {g} (the limit is {m})"));
        }
    }
    for (axis, (b, m)) in ["x", "y", "z"].iter().zip(block.iter().zip(MAX_BLOCK)) {
        if *b > m {
            return bad(format!("block dimension {axis} is {b} (the limit is {m})"));
        }
    }
    let threads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
    if threads > u64::from(MAX_THREADS) {
        return bad(format!(
            "{threads} threads per block (the limit is {MAX_THREADS})"
        ));
    }
    if static_shared as usize > SHARED_PER_BLOCK_OPTIN {
        return Err((
            LAUNCH_OUT_OF_RESOURCES,
            format!("{static_shared} bytes of static shared memory (the limit is {SHARED_PER_BLOCK_OPTIN})"),
        ));
    }
    if shared > max_dynamic {
        return bad(format!(
            "{shared} bytes of dynamic shared memory with {static_shared} static (the limit is {} in all, \
             raise it with cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))",
            u64::from(max_dynamic) + u64::from(static_shared)
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn launch(
    f: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    h: stream::CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<(), CUresult> {
    let func = module::lookup(f)?;
    let s = stream::resolve(h)?;
    s.ctx.check()?;
    let max_dynamic = func.max_dynamic_shared.load(Ordering::Relaxed);
    if let Err((code, msg)) = validate(grid, block, shared, func.static_shared, max_dynamic) {
        crate::refused(format!(
            "gpu-labs emulator: cannot launch kernel `{}`: {msg}",
            func.name
        ));
        return Err(code);
    }
    if func.nargs > 0 && params.is_null() {
        if !extra.is_null() {
            crate::refused(
                "gpu-labs emulator: cuLaunchKernel: passing arguments through `extra` is not \
                 supported"
                    .into(),
            );
            return Err(NOT_SUPPORTED);
        }
        return Err(INVALID_VALUE);
    }
    crate::util::host_side_of_a_launch();
    let _gate = crate::replay::gate();
    func.launches.fetch_add(1, Ordering::Relaxed);
    crate::counters::count_launch();
    let build = if func.module.checked.is_some() {
        crate::findings::Build::Checked
    } else if func.module.confined {
        crate::findings::Build::Confined
    } else {
        crate::findings::Build::Plain
    };
    // Counted as run or skipped when the queued work ends, for the grader's record.
    let mut end = crate::findings::accepted(&func.name, grid, block);
    let job = Arc::new(Job::new(func, grid, block, shared, params));
    s.enqueue(OpKind::Work, move || {
        if crate::replay::logging() {
            let logged = Arc::clone(&job);
            crate::replay::log_run(move || exec::rerun(Arc::new(logged.again())));
        }
        let started = std::time::Instant::now();
        let result = exec::run(job);
        end.ran(build, started.elapsed());
        result
    })
    .map(drop)
}

/// Launches a kernel on a stream (asynchronously).
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    f: CUfunction,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: u32,
    h: stream::CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    code(launch(
        f,
        [gx, gy, gz],
        [bx, by, bz],
        shared,
        h,
        params,
        extra,
    ))
}

/// A cooperative launch: all blocks must be resident at once on a GPU, which the emulator
/// does not need; it runs like [`cuLaunchKernel`].
#[no_mangle]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    f: CUfunction,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: u32,
    h: stream::CUstream,
    params: *mut *mut c_void,
) -> CUresult {
    code(launch(
        f,
        [gx, gy, gz],
        [bx, by, bz],
        shared,
        h,
        params,
        std::ptr::null_mut(),
    ))
}

/// `CUlaunchConfig`.
#[repr(C)]
#[derive(Debug)]
pub struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: stream::CUstream,
    attrs: *mut c_void,
    num_attrs: u32,
}

/// Launch with a configuration structure (attributes are ignored).
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const LaunchConfig,
    f: CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    let Some(c) = config.as_ref() else {
        return INVALID_VALUE;
    };
    code(launch(
        f, c.grid, c.block, c.shared, c.stream, params, extra,
    ))
}
