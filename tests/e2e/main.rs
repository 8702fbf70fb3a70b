//! The end-to-end tests, one test binary: `cargo test --test e2e` (add a module's name to run
//! only its tests: `cargo test --test e2e matmul_gpu::`). One binary, not one per file, so
//! that its tests share both cores: a test that waits (a build stopped at its limit, a grading
//! that times code alone) leaves the other core to the next test, where separate binaries ran
//! one after another. Gradings that time code still run alone: the grader's own machine-wide
//! timing lock (`grader_engine::check::machine_turn`) and this crate's turn
//! (`gpu_labs_e2e::one_at_a_time`) hold across every module of it. It is also linked once
//! instead of once per file.
//!
//! Each module is what was one file's binary; the default `cargo test --workspace` runs the
//! newcomer's share of them, `GPU_LABS_FULL=1` all (README, docs/developer.md).

mod batch;
mod batch_names;
mod bounded_reads;
mod build_hostile;
mod chart;
mod gradescope;
mod hostile;
mod i18n;
mod injection;
mod intake;
mod layers;
mod matmul_cpu;
mod matmul_gpu;
mod real_gpu_check;
mod real_gpu_conditions;
mod release;
mod sandbox;
mod secrets;
mod similarity;
mod slurm;
mod training;
mod training_coverage;
mod training_mistakes;
mod worker_boundary;
