//! The cost of race checking on the matmul lab's GPU correctness items: the solution's two
//! kernels (`matmul`, `matmul_tiled`, read from `solutions/matmul/src/gpu.rs`) run on the
//! items' cases, plain and checked (`GPU_LABS_EMULATOR_RACECHECK=1`), in child processes.
//! Ignored by default (timing means nothing while other tests share the cores):
//! `cargo test --test race_overhead -- --ignored --nocapture`.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;
use std::time::Instant;

/// The cases of the `gpu_correct` and `gpu_tiled_correct` items (assignments/matmul), then
/// the GPU speed item's size, for scale.
const CASES: &[[u32; 3]] = &[
    [1, 1, 1],
    [64, 64, 64],
    [33, 17, 45],
    [1, 200, 1],
    [7, 1, 9],
    [100, 37, 61],
];
const LARGE: [u32; 3] = [256, 256, 256];
const ROUNDS: usize = 5;

/// The solution's kernel source named `name` (a `const NAME: &str = r#"..."#;`).
fn solution_kernel(name: &str) -> String {
    let text = include_str!("../../../solutions/matmul/src/gpu.rs");
    let start = text
        .find(&format!("const {name}: &str = r#\""))
        .expect("the kernel constant");
    let body = &text[start..];
    let open = body.find("r#\"").expect("raw string") + 3;
    let close = body.find("\"#;").expect("end of raw string");
    body[open..close].to_string()
}

/// Median seconds of ROUNDS runs of `kernel` on every case of `cases`, launch to synchronize.
fn time_cases(kernel: &str, entry: &str, cases: &[[u32; 3]]) -> (f64, f64) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let compiled = Instant::now();
    let module = ctx.load_module(compile_ptx(kernel).unwrap()).unwrap();
    let compile_s = compiled.elapsed().as_secs_f64();
    let f = module.load_function(entry).unwrap();
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let mut total = 0.0;
        for &[m, k, n] in cases {
            let a = stream.clone_htod(&vec![1.0f32; (m * k) as usize]).unwrap();
            let b = stream.clone_htod(&vec![1.0f32; (k * n) as usize]).unwrap();
            let mut c = stream.alloc_zeros::<f32>((m * n) as usize).unwrap();
            let (mi, ki, ni) = (m as i32, k as i32, n as i32);
            let cfg = LaunchConfig {
                grid_dim: (n.div_ceil(16), m.div_ceil(16), 1),
                block_dim: (16, 16, 1),
                shared_mem_bytes: 0,
            };
            let started = Instant::now();
            let mut l = stream.launch_builder(&f);
            l.arg(&a).arg(&b).arg(&mut c).arg(&mi).arg(&ki).arg(&ni);
            unsafe { l.launch(cfg) }.unwrap();
            stream.synchronize().unwrap();
            total += started.elapsed().as_secs_f64();
            assert_eq!(stream.clone_dtoh(&c).unwrap()[0], k as f32);
        }
        rounds.push(total);
    }
    rounds.sort_by(f64::total_cmp);
    (compile_s, rounds[ROUNDS / 2])
}

#[test]
#[ignore]
fn race_check_overhead_on_the_matmul_items() {
    const NAME: &str = "race_check_overhead_on_the_matmul_items";
    if common::is_child(NAME) {
        for (constant, entry) in [
            ("MATMUL_KERNEL", "matmul"),
            ("TILED_KERNEL", "matmul_tiled"),
        ] {
            let src = solution_kernel(constant);
            let (compile_s, items_s) = time_cases(&src, entry, CASES);
            let (_, large_s) = time_cases(&src, entry, &[LARGE]);
            println!("TIMES {entry} {compile_s} {items_s} {large_s}");
        }
        return;
    }
    let measure = |vars: &[(&str, &str)]| -> Vec<(String, [f64; 3])> {
        let out = common::run_child_with(NAME, vars);
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("data race") && !stderr.contains("race-checking build"),
            "{stderr}"
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.find("TIMES ").map(|at| &l[at + "TIMES ".len()..]))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let v = |i: usize| w[i].parse::<f64>().unwrap();
                (w[0].to_string(), [v(1), v(2), v(3)])
            })
            .collect()
    };
    // A fresh kernel cache each, so that the compile times include the compiler.
    let cache = |tag: &str| {
        let dir = common::profile_dir().join(format!("race-overhead-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.to_string_lossy().into_owned()
    };
    let (plain_cache, checked_cache) = (cache("plain"), cache("checked"));
    let plain = measure(&[
        ("GPU_LABS_EMULATOR_RACECHECK", "0"),
        ("GPU_LABS_EMULATOR_CACHE", &plain_cache),
    ]);
    let checked = measure(&[
        ("GPU_LABS_EMULATOR_RACECHECK", "1"),
        ("GPU_LABS_EMULATOR_CACHE", &checked_cache),
    ]);
    for dir in [&plain_cache, &checked_cache] {
        let _ = std::fs::remove_dir_all(dir);
    }
    println!("kernel        | compile plain / checked | item cases plain / checked (×) | 256³ plain / checked (×)");
    for ((name, p), (_, c)) in plain.iter().zip(&checked) {
        println!(
            "{name:13} | {:.2} s / {:.2} s | {:.2} ms / {:.2} ms ({:.1}×) | {:.1} ms / {:.1} ms ({:.1}×)",
            p[0],
            c[0],
            p[1] * 1e3,
            c[1] * 1e3,
            c[1] / p[1],
            p[2] * 1e3,
            c[2] * 1e3,
            c[2] / p[2]
        );
    }
}
