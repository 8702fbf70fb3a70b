//! The replay of a product's device work with A's values changed (`src/replay.rs`), through the
//! entry points the grader's worker calls: a product a kernel computed on the device comes
//! back as φ(A)·B, a product computed on the host and only turned back by a kernel comes back
//! unchanged, and device memory is as the real run left it afterwards.

mod common;

use cudarc::driver::{CudaContext, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;
use gpu_labs_cuda_emulator::replay::{phi, CANDIDATES};
use std::sync::Arc;

/// Turns back a product uploaded negated, and says so once.
const FLIP: &str = r#"
extern "C" __global__ void flip(float* c, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) c[i] = -c[i];
    if (i == 0) printf("replay probe: flip ran\n");
}
"#;

const M: usize = 5;
const K: usize = 7;
const N: usize = 3;

/// A (m×k) and B (k×n), row by row, of distinct values in (-1, 1).
fn operands() -> (Vec<f32>, Vec<f32>) {
    let a = (0..M * K).map(|i| (i as f32 * 0.37).sin() * 0.9).collect();
    let b = (0..K * N)
        .map(|i| (i as f32 * 0.53 + 0.1).cos() * 0.8)
        .collect();
    (a, b)
}

/// `a`·`b` in f64, row by row.
fn product(a: &[f32], b: &[f32]) -> Vec<f64> {
    let mut c = vec![0.0; M * N];
    for i in 0..M {
        for j in 0..N {
            c[i * N + j] = (0..K)
                .map(|p| f64::from(a[i * K + p]) * f64::from(b[p * N + j]))
                .sum();
        }
    }
    c
}

/// The emulator's own entry point named `name` (the library cudarc loaded as `libcuda.so`).
fn entry(name: &str) -> *mut libc::c_void {
    let lib = std::ffi::CString::new("libcuda.so").expect("a name");
    let sym = std::ffi::CString::new(name).expect("a name");
    // SAFETY: looks up a symbol of a library this process already loaded.
    unsafe {
        let handle = libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        assert!(!handle.is_null(), "the emulator is loaded");
        let f = libc::dlsym(handle, sym.as_ptr());
        assert!(!f.is_null(), "the emulator exports {name}");
        f
    }
}

fn log(open: bool) {
    // SAFETY: the emulator's `gpu_labs_emulator_replay_log` has this signature.
    let f: extern "C" fn(bool) =
        unsafe { std::mem::transmute(entry("gpu_labs_emulator_replay_log")) };
    f(open);
}

/// Replays the open log with A's values mapped: the key and each returned value's candidates.
fn replay(a: &[f32], c: &[f32]) -> (u64, Vec<Vec<u32>>) {
    replay_through("gpu_labs_emulator_replay", a, c)
}

/// [`replay`] through entry point `name` (`gpu_labs_emulator_replay`, or `…_memory_too`,
/// which also maps A's values in device memory as it was when the log opened).
fn replay_through(name: &str, a: &[f32], c: &[f32]) -> (u64, Vec<Vec<u32>>) {
    type Replay =
        extern "C" fn(*const u32, usize, *const u32, usize, *mut u32, *mut u8, *mut u64) -> i32;
    // SAFETY: both entry points have this signature.
    let f: Replay = unsafe { std::mem::transmute(entry(name)) };
    let mapped: Vec<u32> = a.iter().map(|v| v.to_bits()).collect();
    let values: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
    let mut found = vec![0u32; values.len() * CANDIDATES];
    let mut counts = vec![0u8; values.len()];
    let mut key = 0;
    let code = f(
        mapped.as_ptr(),
        mapped.len(),
        values.as_ptr(),
        values.len(),
        found.as_mut_ptr(),
        counts.as_mut_ptr(),
        &mut key,
    );
    assert_eq!(code, 0, "replayed");
    let lists = found
        .chunks_exact(CANDIDATES)
        .zip(&counts)
        .map(|(f, &n)| f[..usize::from(n)].to_vec())
        .collect();
    (key, lists)
}

fn stream() -> (Arc<CudaStream>, Arc<cudarc::driver::CudaModule>) {
    let ctx = CudaContext::new(0).expect("a device");
    let module = ctx
        .load_module(compile_ptx(format!("{}{FLIP}", common::NAIVE_MATMUL)).expect("compiles"))
        .expect("loads");
    (ctx.default_stream(), module)
}

/// The product on the device, as a student's kernel would; the C read back.
fn on_the_device(a: &[f32], b: &[f32]) -> (Vec<f32>, cudarc::driver::CudaSlice<f32>) {
    let (stream, module) = stream();
    let a_d = stream.clone_htod(a).expect("upload");
    let b_d = stream.clone_htod(b).expect("upload");
    product_of(&stream, &module, &a_d, &b_d)
}

/// The naive kernel's product of A and B already on the device; the C read back.
fn product_of(
    stream: &Arc<CudaStream>,
    module: &Arc<cudarc::driver::CudaModule>,
    a_d: &cudarc::driver::CudaSlice<f32>,
    b_d: &cudarc::driver::CudaSlice<f32>,
) -> (Vec<f32>, cudarc::driver::CudaSlice<f32>) {
    let f = module.load_function("matmul").expect("matmul");
    let mut c_d = stream.alloc_zeros::<f32>(M * N).expect("alloc");
    let (m, k, n) = (M as i32, K as i32, N as i32);
    let mut l = stream.launch_builder(&f);
    l.arg(a_d).arg(b_d).arg(&mut c_d).arg(&m).arg(&n).arg(&k);
    let config = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (4, 8, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(config) }.expect("launch");
    (stream.clone_dtoh(&c_d).expect("read back"), c_d)
}

/// The product computed here, uploaded negated and turned back by a kernel.
fn passed_through(a: &[f32], b: &[f32]) -> Vec<f32> {
    let (stream, module) = stream();
    let f = module.load_function("flip").expect("flip");
    let negated: Vec<f32> = product(a, b).iter().map(|v| -(*v as f32)).collect();
    let mut c_d = stream.clone_htod(&negated).expect("upload");
    let len = (M * N) as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&mut c_d).arg(&len);
    unsafe { l.launch(LaunchConfig::for_num_elems(len as u32)) }.expect("launch");
    stream.clone_dtoh(&c_d).expect("read back")
}

/// Whether each element's one candidate is φ(A)·B at its place, within f32 rounding.
fn follows_a(key: u64, a: &[f32], b: &[f32], found: &[Vec<u32>]) -> bool {
    let moved: Vec<f32> = a
        .iter()
        .map(|v| f32::from_bits(phi(key, v.to_bits())))
        .collect();
    product(&moved, b).iter().zip(found).all(|(want, got)| {
        got.len() == 1 && (f64::from(f32::from_bits(got[0])) - want).abs() < 1e-5
    })
}

/// In a checked run, as the grader's correctness items run.
#[test]
fn a_product_the_device_computed_follows_a_and_one_passed_through_does_not() {
    let name = "a_product_the_device_computed_follows_a_and_one_passed_through_does_not";
    if !common::is_child(name) {
        common::checked_child(name, &[]);
        // The replay prints nothing: the kernel's line once, from the real run.
        let out = common::run_child_with(name, &[("GPU_LABS_EMULATOR_RACECHECK", "1")]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.matches("replay probe: flip ran").count(),
            1,
            "{stdout}"
        );
        return;
    }
    let (a, b) = operands();
    // cudarc loads the library on first use.
    CudaContext::new(0).expect("a device");
    log(true);
    let (c, c_d) = on_the_device(&a, &b);
    let (key, found) = replay(&a, &c);
    assert!(follows_a(key, &a, &b, &found), "{found:?}");
    // Device memory is as the real run left it.
    let stream = c_d.stream().clone();
    assert_eq!(stream.clone_dtoh(&c_d).expect("read back"), c);
    drop(c_d);
    log(false);

    log(true);
    let c = passed_through(&a, &b);
    let (key, found) = replay(&a, &c);
    assert!(!follows_a(key, &a, &b, &found));
    let unchanged: Vec<Vec<u32>> = c.iter().map(|v| vec![v.to_bits()]).collect();
    assert_eq!(found, unchanged, "the host's product comes back as it was");
    log(false);
}

/// Inputs uploaded before the log opened (a training epoch's data set, which the student's
/// loader uploads first): the plain replay leaves them as they were, so even a product the
/// device computed does not follow A; the replay that also maps device memory as it was when
/// the log opened moves them, and the device's product follows A.
#[test]
fn inputs_already_on_the_device_are_moved_only_by_the_replay_that_maps_memory() {
    let name = "inputs_already_on_the_device_are_moved_only_by_the_replay_that_maps_memory";
    if !common::is_child(name) {
        common::checked_child(name, &[]);
        return;
    }
    let (a, b) = operands();
    let (stream, module) = stream();
    let a_d = stream.clone_htod(&a).expect("upload");
    let b_d = stream.clone_htod(&b).expect("upload");
    log(true);
    let (c, c_d) = product_of(&stream, &module, &a_d, &b_d);
    let (key, found) = replay(&a, &c);
    assert!(!follows_a(key, &a, &b, &found), "{found:?}");
    let (key, found) = replay_through("gpu_labs_emulator_replay_memory_too", &a, &c);
    assert!(follows_a(key, &a, &b, &found), "{found:?}");
    // Device memory is as the real run left it, A included.
    assert_eq!(stream.clone_dtoh(&a_d).expect("read back"), a);
    assert_eq!(stream.clone_dtoh(&c_d).expect("read back"), c);
    drop(c_d);
    log(false);
}
