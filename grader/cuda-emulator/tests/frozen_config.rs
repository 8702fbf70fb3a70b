//! The emulator's configuration is frozen when the library is loaded: a program that changes
//! the emulator's variables with `std::env::set_var` after loading it (as a submission could,
//! before its first CUDA call) changes nothing. Race checks stay on, the device stays
//! visible, and kernels are still compiled by the compiler of the load-time environment.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

use common::{CORRECT, RACY};

/// Loads the emulator (a context), then flips every switch a submission could reach, then
/// compiles and launches `src` and checks what it can of the result.
fn flip_switches_then_launch(src: &str, correct: bool) {
    let ctx = CudaContext::new(0).unwrap();
    // What a submission would do before its first kernel (safe Rust in edition 2021).
    std::env::set_var("GPU_LABS_EMULATOR_RACECHECK", "0");
    std::env::set_var("GPU_LABS_EMULATOR_DEVICES", "0");
    std::env::set_var("GPU_LABS_EMULATOR_CONDITIONS", "old-driver");
    std::env::set_var("CXX", "/bin/false");
    std::env::set_var("PATH", "/nonexistent");
    std::env::set_var("GPU_LABS_EMULATOR_CACHE", "/nonexistent/cache");
    let count = cudarc::driver::result::device::get_count().unwrap();
    assert_eq!(count, 1, "the device was hidden after load");
    let stream = ctx.default_stream();
    let module = ctx
        .load_module(compile_ptx(src).expect("the kernel must still compile"))
        .expect("the module must still load (no old-driver condition)");
    let f = module.load_function("k").unwrap();
    let n = 1024usize;
    let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out).arg(&ni);
    unsafe { l.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    if correct {
        let want: Vec<f32> = input.iter().map(|x| 2.0 * x).collect();
        assert_eq!(out, want);
    }
    println!("done");
}

/// Runs test `name` in a child with race checks on and a kernel cache of its own (so that the
/// compiler really runs), and returns its stderr.
fn run_checked(name: &str) -> String {
    let cache = common::profile_dir().join(format!("frozen-config-cache-{name}"));
    let _ = std::fs::remove_dir_all(&cache);
    let cache_s = cache.to_string_lossy().into_owned();
    let stderr = common::checked_child(name, &[("GPU_LABS_EMULATOR_CACHE", &cache_s)]);
    let _ = std::fs::remove_dir_all(&cache);
    stderr
}

fn race_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("gpu-labs emulator: kernel `k`") && l.contains("data race"))
        .collect()
}

#[test]
fn race_check_survives_set_var_after_load() {
    if common::is_child("race_check_survives_set_var_after_load") {
        flip_switches_then_launch(RACY, false);
        return;
    }
    let stderr = run_checked("race_check_survives_set_var_after_load");
    let races = race_lines(&stderr);
    assert_eq!(races.len(), 1, "the race was not reported: {stderr}");
    assert!(races[0].contains("atomicAdd"), "{}", races[0]);
}

#[test]
fn correct_kernel_stays_silent_after_set_var() {
    if common::is_child("correct_kernel_stays_silent_after_set_var") {
        flip_switches_then_launch(CORRECT, true);
        return;
    }
    let stderr = run_checked("correct_kernel_stays_silent_after_set_var");
    assert!(race_lines(&stderr).is_empty(), "{stderr}");
    assert!(!stderr.contains("gpu-labs emulator:"), "{stderr}");
}
