//! Grades this lab: `cargo test` runs every rubric item and prints your score.
//!
//! Options go after `--`: `cargo test --test grade -- --seed 7 fast_correct` repeats a run
//! with seed 7 and grades only `fast_correct`; `--gpu emulate|real|off` chooses where GPU
//! items run (default: a real GPU if there is one, else the grader's CPU emulator).
//! Official grading uses the grader's own copy of this file, so changing it changes nothing
//! there.

use matmul_lab as lab;

fn main() -> std::process::ExitCode {
    grader::harness::main(grader::matmul::Submission {
        matmul_naive: lab::matmul_naive,
        matmul_fast: lab::matmul_fast,
        time_cpu: |work| lab::time_cpu(work),
        matmul_gpu: lab::matmul_gpu,
        matmul_gpu_tiled: lab::matmul_gpu_tiled,
        matmul_cublas: lab::matmul_cublas,
        time_gpu_matmul: lab::time_gpu_matmul,
        default_device_is_gpu: || matches!(lab::default_device(), lab::Device::Gpu(_)),
        benchmark: |size| lab::benchmark(size).map(|b| (b.cpu, b.gpu)),
        matmul_batched: lab::matmul_batched,
        matmul_batched_gpu: lab::matmul_batched_gpu,
        time_gpu_matmul_batched: lab::time_gpu_matmul_batched,
    })
}
