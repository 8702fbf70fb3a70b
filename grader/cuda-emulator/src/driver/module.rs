//! Modules: the shared objects NVRTC produced, loaded with `dlopen`; their kernels (by the
//! descriptors the generated code exports) and their `__constant__`/`__device__` globals.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use super::{written, Registry};
use crate::memory::{self, Kind};
use crate::nvrtc::compile;
use crate::status::*;
use crate::util::{c_str, write_out};

/// A kernel descriptor exported by a module (`__gl::KernelDesc` in the prelude).
#[repr(C)]
#[derive(Debug)]
pub struct KernelDesc {
    /// Kernel name.
    pub name: *const c_char,
    /// Trampoline: unpacks `void**` arguments and calls the kernel for one thread.
    pub tramp: *const c_void,
    /// Number of parameters.
    pub nargs: u32,
    /// Size of each parameter.
    pub sizes: *const u32,
    /// Alignment of each parameter.
    pub aligns: *const u32,
    /// Static shared memory of the kernel (the declarations whose size the scan could compute).
    pub static_smem: u64,
    /// How the kernel's blocks run: 1 when its own code never synchronises (its threads run
    /// in a loop), 2 as coroutines, 0 as fibers (the prelude's `Launch::plain`).
    pub plain: u32,
    /// Padding.
    pub plain_pad: u32,
}

/// A global variable descriptor exported by a module (`__gl::GlobalDesc`).
#[repr(C)]
#[derive(Debug)]
struct GlobalDesc {
    addr: *mut c_void,
    size: u64,
}

/// `__gl_run_blocks` of a module: it takes the launch's description (`exec::LaunchDesc`,
/// `__gl::Launch` in the prelude), which the block runner above this module fills in.
pub type RunBlocks = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `__gl_fault_jump` of a module.
pub type FaultJump = unsafe extern "C" fn(c_int) -> !;

/// A loaded module.
#[derive(Debug)]
pub struct Module {
    lib: usize,
    /// Runs blocks of a launch on the calling thread.
    pub run_blocks: RunBlocks,
    /// Leaves a faulting kernel (called from the signal handler).
    pub fault_jump: FaultJump,
    globals: Vec<usize>,
    /// A checked (race-detecting) module: the compiled object, whose line table race reports
    /// read; `None` for a plain module.
    pub checked: Option<std::path::PathBuf>,
    /// A confined module (not checked, but every access of its kernels confined to device
    /// memory, shared memory and their own locals).
    pub confined: bool,
    /// Name expressions' kernels: lowered name → (descriptor id, expression).
    lowered: std::collections::HashMap<String, (String, String)>,
}

/// A kernel of a loaded module.
#[derive(Debug)]
pub struct Function {
    /// The module, kept loaded while the function lives.
    pub module: Arc<Module>,
    /// The kernel's name.
    pub name: String,
    /// Number of parameters.
    pub nargs: usize,
    /// Size and alignment of each parameter.
    pub params: Vec<(usize, usize)>,
    /// Trampoline address.
    pub tramp: usize,
    /// How its blocks run, from its descriptor: 1 when its own code never synchronises
    /// (its threads in a loop: the scan's `plain_kernels`), 2 as coroutines, 0 as fibers.
    pub plain: u32,
    /// Static shared memory per block.
    pub static_shared: u32,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
    pub max_dynamic_shared: AtomicU32,
    /// Launches so far (for reports).
    pub launches: AtomicU64,
}

/// Handle types.
pub type CUmodule = *mut Module;
/// Handle type of functions.
pub type CUfunction = *mut Function;

/// Live modules.
pub static MODULES: LazyLock<Registry<Module>> = LazyLock::new(Registry::default);
/// Live functions.
pub static FUNCTIONS: LazyLock<Registry<Function>> = LazyLock::new(Registry::default);

static LOAD_COUNTER: AtomicU64 = AtomicU64::new(0);

unsafe fn sym(lib: *mut c_void, name: &str) -> Option<*mut c_void> {
    let c = CString::new(name).ok()?;
    let p = libc::dlsym(lib, c.as_ptr());
    (!p.is_null()).then_some(p)
}

/// The copy of a compiled object that one load maps: a file of its own beside the object, or,
/// in a graded run (where only this process's own objects load,
/// [`crate::config::Config::own_objects`], or where the grader's kernel compiler writes the
/// objects in a folder this process cannot write, [`crate::config::Config::compiler`]), a
/// sealed in-memory file, which nothing can change between the checks and `dlopen`. Where only
/// own objects load, it holds exactly the bytes the compiler wrote, checked by their digest.
/// Removed when dropped.
struct PrivateCopy {
    /// What the checks read and `dlopen` maps.
    path: PathBuf,
    /// The sealed in-memory file, when that is what `path` names.
    memory: Option<std::os::fd::OwnedFd>,
}

impl PrivateCopy {
    /// A private copy of `so`, at `file` unless it is held in memory.
    fn of(so: &Path, file: PathBuf) -> Result<PrivateCopy, String> {
        let config = crate::config::get();
        if !config.own_objects && config.compiler.is_none() {
            std::fs::copy(so, &file).map_err(|e| e.to_string())?;
            return Ok(PrivateCopy {
                path: file,
                memory: None,
            });
        }
        let bytes = std::fs::read(so).map_err(|e| e.to_string())?;
        let wrote = crate::nvrtc::compile::compiled_digest(so);
        if config.own_objects && wrote.as_deref() != Some(crate::util::hash_hex(&[&bytes]).as_str())
        {
            return Err(
                "it is not the object this process's compiler wrote (it was changed \
                        on disk after it was compiled)"
                    .into(),
            );
        }
        if let Some(memory) = sealed_memory_file(&bytes) {
            use std::os::fd::AsRawFd;
            let path = PathBuf::from(format!("/proc/self/fd/{}", memory.as_raw_fd()));
            return Ok(PrivateCopy {
                path,
                memory: Some(memory),
            });
        }
        std::fs::write(&file, &bytes).map_err(|e| e.to_string())?;
        Ok(PrivateCopy {
            path: file,
            memory: None,
        })
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        match self.memory.take() {
            // The object stays mapped for the process's life (see `Module`'s drop), and the
            // loader knows it by this path: a later object under the same descriptor number
            // would be taken for this one. So the descriptor is never closed.
            Some(memory) => {
                let _ = std::os::fd::IntoRawFd::into_raw_fd(memory);
            }
            None => {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// An in-memory file holding `bytes`, sealed against any change; `None` where the system
/// has none (the caller then writes a file).
fn sealed_memory_file(bytes: &[u8]) -> Option<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: memfd_create with a valid C string; the descriptor it returns is owned here.
    let fd = unsafe {
        libc::memfd_create(
            c"gpu-labs-kernels".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    file.write_all(bytes).ok()?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a descriptor this function owns.
    if unsafe {
        libc::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            libc::F_ADD_SEALS,
            seals,
        )
    } != 0
    {
        return None;
    }
    Some(OwnedFd::from(file))
}

impl Module {
    /// Loads a private copy of a compiled module (so that two loads do not share globals).
    unsafe fn load(so: &Path) -> Result<Module, CUresult> {
        let n = LOAD_COUNTER.fetch_add(1, Ordering::Relaxed);
        let file = so.with_file_name(format!("loaded-{}-{n}.so", std::process::id()));
        let copy = match PrivateCopy::of(so, file) {
            Ok(copy) => copy,
            Err(e) => {
                crate::refused(format!(
                    "gpu-labs emulator: cannot load module {}: {e}",
                    so.display()
                ));
                return Err(if so.exists() {
                    INVALID_IMAGE
                } else {
                    FILE_NOT_FOUND
                });
            }
        };
        let private = copy.path.clone();
        // What `nvrtcCompileProgram` refuses is never loaded, whatever the module text names:
        // the copy about to be loaded is checked (kernels get no more than a GPU kernel could).
        if let Err(refused) = crate::nvrtc::symbols::check(&private, &so.display().to_string()) {
            crate::refused(format!(
                "gpu-labs emulator: cannot load module: {}",
                refused.trim_end()
            ));
            return Err(INVALID_IMAGE);
        }
        let path = CString::new(private.to_string_lossy().as_bytes()).map_err(|_| INVALID_VALUE)?;
        let lib = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        drop(copy);
        if lib.is_null() {
            let err = c_str(libc::dlerror()).unwrap_or_default().into_owned();
            crate::refused(format!(
                "gpu-labs emulator: cannot load module {}: {err}",
                so.display()
            ));
            return Err(INVALID_IMAGE);
        }
        let (Some(abi), Some(run), Some(jump)) = (
            sym(lib, "__gl_module_abi"),
            sym(lib, "__gl_run_blocks"),
            sym(lib, "__gl_fault_jump"),
        ) else {
            return Err(INVALID_IMAGE);
        };
        if *(abi as *const u32) != 14 {
            return Err(INVALID_IMAGE);
        }
        let checked = sym(lib, "__gl_racecheck").map(|_| so.to_path_buf());
        let confined = sym(lib, "__gl_confined").is_some();
        Ok(Module {
            lib: lib as usize,
            run_blocks: std::mem::transmute::<*mut c_void, RunBlocks>(run),
            fault_jump: std::mem::transmute::<*mut c_void, FaultJump>(jump),
            globals: Vec::new(),
            checked,
            confined,
            lowered: Default::default(),
        })
    }

    fn global(&self, name: &str) -> Option<(usize, usize)> {
        // SAFETY: looking up a descriptor the generated code exports.
        unsafe {
            let d =
                sym(self.lib as *mut c_void, &format!("__gl_global_{name}"))? as *const GlobalDesc;
            Some(((*d).addr as usize, usize::try_from((*d).size).ok()?))
        }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        for g in &self.globals {
            memory::unregister(*g);
        }
        // The shared object stays mapped: worker threads may still hold its thread-locals.
    }
}

unsafe fn load_text(pm: *mut CUmodule, text: &str) -> CUresult {
    if pm.is_null() {
        return INVALID_VALUE;
    }
    if crate::util::condition("old-driver") {
        // As a driver older than the NVRTC that compiled the module.
        return UNSUPPORTED_PTX_VERSION;
    }
    let Some(so) = compile::parse_module_text(text) else {
        crate::refused(
            "gpu-labs emulator: cuModuleLoadData: this is not a module compiled by the emulator's \
             NVRTC; precompiled PTX or cubin cannot run on the CPU emulator (compile CUDA C source \
             at run time with cudarc::nvrtc instead)"
                .into(),
        );
        return INVALID_PTX;
    };
    if !compile::produced_here(&so) {
        crate::refused(format!(
            "gpu-labs emulator: cuModuleLoadData: the module names {}, which this process's NVRTC \
             did not produce; load the text nvrtcGetPTX returned, unchanged",
            so.display()
        ));
        return INVALID_PTX;
    }
    let mut m = match Module::load(&so) {
        Ok(m) => m,
        Err(e) => return e,
    };
    for (lowered, id, expr) in crate::nvrtc::names::parse_module_lines(text) {
        m.lowered.insert(lowered, (id, expr));
    }
    for line in text.lines() {
        if let Some(names) = line.strip_prefix("// globals: ") {
            for g in names.split_whitespace() {
                if let Some((addr, size)) = m.global(g) {
                    memory::register(addr, size, Kind::ModuleGlobal);
                    m.globals.push(addr);
                }
            }
        }
    }
    *pm = MODULES.insert(Arc::new(m)) as CUmodule;
    SUCCESS
}

/// Loads a module from the text `nvrtcGetPTX` returned.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(pm: *mut CUmodule, image: *const c_void) -> CUresult {
    if let Err(e) = super::context::current() {
        return e;
    }
    match c_str(image.cast()) {
        Some(t) => load_text(pm, &t),
        None => INVALID_VALUE,
    }
}

/// Same as [`cuModuleLoadData`] (JIT options are ignored).
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    pm: *mut CUmodule,
    image: *const c_void,
    _n: u32,
    _options: *mut c_void,
    _values: *mut *mut c_void,
) -> CUresult {
    cuModuleLoadData(pm, image)
}

/// Loads a module from a file holding the text `nvrtcGetPTX` returned.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoad(pm: *mut CUmodule, fname: *const c_char) -> CUresult {
    if let Err(e) = super::context::current() {
        return e;
    }
    let Some(f) = c_str(fname) else {
        return INVALID_VALUE;
    };
    match std::fs::read_to_string(f.as_ref()) {
        Ok(t) => load_text(pm, &t),
        Err(_) => FILE_NOT_FOUND,
    }
}

/// Unloads a module (its functions keep it alive until they are gone).
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(m: CUmodule) -> CUresult {
    if MODULES.remove(m as usize).is_some() {
        SUCCESS
    } else {
        INVALID_HANDLE
    }
}

/// Looks up a kernel by name.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    pf: *mut CUfunction,
    m: CUmodule,
    name: *const c_char,
) -> CUresult {
    let Some(module) = MODULES.get(m as usize) else {
        return INVALID_HANDLE;
    };
    let (Some(name), false) = (c_str(name), pf.is_null()) else {
        return INVALID_VALUE;
    };
    // A lowered name (a name expression's) names its own descriptor; reports then show the
    // expression (`scale<float, 4>`) rather than the mangled name.
    let (desc, name) = match module.lowered.get(name.as_ref()) {
        Some((id, expr)) => (id.clone(), expr.trim_start_matches('&').trim().to_string()),
        None => (name.to_string(), name.into_owned()),
    };
    let Some(d) = sym(module.lib as *mut c_void, &format!("__gl_kernel_{desc}")) else {
        return NOT_FOUND;
    };
    let d = &*(d as *const KernelDesc);
    let nargs = d.nargs as usize;
    let params = (0..nargs)
        .map(|i| (*d.sizes.add(i) as usize, *d.aligns.add(i) as usize))
        .collect();
    let f = Arc::new(Function {
        module,
        name,
        nargs,
        params,
        tramp: d.tramp as usize,
        plain: d.plain,
        static_shared: u32::try_from(d.static_smem).unwrap_or(u32::MAX),
        max_dynamic_shared: AtomicU32::new(
            (super::device::SHARED_PER_BLOCK as u32)
                .saturating_sub(u32::try_from(d.static_smem).unwrap_or(u32::MAX)),
        ),
        launches: AtomicU64::new(0),
    });
    *pf = FUNCTIONS.insert(f) as CUfunction;
    SUCCESS
}

/// Address and size of a `__constant__` or `__device__` variable.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(
    dptr: *mut u64,
    bytes: *mut usize,
    m: CUmodule,
    name: *const c_char,
) -> CUresult {
    let Some(module) = MODULES.get(m as usize) else {
        return INVALID_HANDLE;
    };
    let Some(name) = c_str(name) else {
        return INVALID_VALUE;
    };
    match module.global(&name) {
        Some((addr, size)) => {
            write_out(dptr, addr as u64);
            write_out(bytes, size);
            SUCCESS
        }
        None => NOT_FOUND,
    }
}

/// The function behind a handle.
pub fn lookup(f: CUfunction) -> Result<Arc<Function>, CUresult> {
    FUNCTIONS.get(f as usize).ok_or(INVALID_HANDLE)
}

/// Function attributes (plausible fixed values; the dynamic shared memory limit as set).
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetAttribute(value: *mut i32, attr: i32, f: CUfunction) -> CUresult {
    let func = match lookup(f) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let v = match attr {
        0 => 1024,
        1 => i32::try_from(func.static_shared).unwrap_or(i32::MAX),
        2 | 3 => 0,
        4 => 32,
        5 | 6 => 80,
        7 => 0,
        8 => func.max_dynamic_shared.load(Ordering::Relaxed) as i32,
        9..=17 => 0,
        _ => return INVALID_VALUE,
    };
    written(write_out(value, v))
}

/// Sets the dynamic shared memory limit (up to the opt-in maximum); other attributes are accepted.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetAttribute(f: CUfunction, attr: i32, value: i32) -> CUresult {
    let func = match lookup(f) {
        Ok(f) => f,
        Err(e) => return e,
    };
    if attr == 8 {
        match u32::try_from(value) {
            Ok(v)
                if (v as usize) + (func.static_shared as usize)
                    <= super::device::SHARED_PER_BLOCK_OPTIN =>
            {
                func.max_dynamic_shared.store(v, Ordering::Relaxed);
            }
            _ => return INVALID_VALUE,
        }
    }
    SUCCESS
}

/// Cache preferences are accepted and ignored.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetCacheConfig(f: CUfunction, _config: u32) -> CUresult {
    match lookup(f) {
        Ok(_) => SUCCESS,
        Err(e) => e,
    }
}

/// Occupancy: as many blocks as fit in 2048 threads per multiprocessor (at most 32).
#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut i32,
    f: CUfunction,
    block_size: i32,
    _dyn_smem: usize,
) -> CUresult {
    if let Err(e) = lookup(f) {
        return e;
    }
    if block_size <= 0 {
        return INVALID_VALUE;
    }
    write_out(blocks, (2048 / block_size).clamp(0, 32));
    SUCCESS
}

/// Same as [`cuOccupancyMaxActiveBlocksPerMultiprocessor`].
#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut i32,
    f: CUfunction,
    block_size: i32,
    dyn_smem: usize,
    _flags: u32,
) -> CUresult {
    cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, block_size, dyn_smem)
}

/// Suggests 256 threads per block (or the limit) and two blocks per core.
#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSize(
    min_grid: *mut i32,
    block: *mut i32,
    f: CUfunction,
    _smem_fn: *mut c_void,
    _dyn_smem: usize,
    limit: i32,
) -> CUresult {
    if let Err(e) = lookup(f) {
        return e;
    }
    let b = if limit > 0 { limit.min(256) } else { 256 };
    write_out(block, b);
    write_out(
        min_grid,
        2 * i32::try_from(crate::util::cores()).unwrap_or(1),
    );
    SUCCESS
}

/// Same as [`cuOccupancyMaxPotentialBlockSize`].
#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSizeWithFlags(
    min_grid: *mut i32,
    block: *mut i32,
    f: CUfunction,
    smem_fn: *mut c_void,
    dyn_smem: usize,
    limit: i32,
    _flags: u32,
) -> CUresult {
    cuOccupancyMaxPotentialBlockSize(min_grid, block, f, smem_fn, dyn_smem, limit)
}
