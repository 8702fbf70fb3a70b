//! End-to-end: the matmul lab's GPU track graded on the CPU emulator. Faulty submissions made
//! from the solution lose exactly the GPU items they should, with the right explanation.

use gpu_labs_e2e::{
    assert_lost, assert_says, faulty_copy_edits, faulty_copy_of, grade, solution, Graded,
};

/// The GPU track's items: a mistake in `src/gpu.rs` is graded on these alone, which keeps
/// the runs short (the CPU items do not use that file).
const GPU_TRACK: [&str; 7] = [
    "gpu_correct",
    "gpu_tiled_correct",
    "cublas_correct",
    "gpu_timer_sync",
    "default_device",
    "benchmark",
    "gpu_speedup",
];

/// Grades the solution with `edits` made in its `file`, on the emulator, on `items` alone (the
/// items the edits can touch); the grading itself must complete.
fn grade_edited_on(items: &[&str], file: &str, edits: &[(&str, &str)]) -> Graded {
    let dir = faulty_copy_edits(&solution(), file, edits);
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", items);
    let rubric = rubric.to_str().expect("a UTF-8 path");
    let graded = grade(dir.path(), &["--gpu", "emulate", "--assignment", rubric]);
    assert_eq!(graded.code, Some(0), "grading completes: {}", graded.stderr);
    graded
}

/// Grades the solution with one piece of `src/gpu.rs` replaced, on the GPU track's items.
fn grade_gpu_faulty(find: &str, replace: &str) -> Graded {
    grade_edited_on(&GPU_TRACK, "src/gpu.rs", &[(find, replace)])
}

const AFTER_LAUNCH: &str =
    "launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;";
const BEFORE_CLOCK: &str = "stream.synchronize()?;\n    let start = Instant::now();";

#[test]
fn a_timer_with_no_synchronize_stopped_before_the_gpu_finished() {
    let dir = faulty_copy_edits(
        &solution(),
        "src/gpu.rs",
        &[
            (
                AFTER_LAUNCH,
                "launch_product(stream, &kernel, (a, b, c), shape)?;",
            ),
            (BEFORE_CLOCK, "let start = Instant::now();"),
        ],
    );
    let g = grade(dir.path(), &["--gpu", "emulate"]);
    assert_lost(&g, &["gpu_timer_sync"]);
    assert_says(&g, "gpu_timer_sync", "stopped before the GPU finished");
}

#[test]
fn a_timer_synchronized_only_before_the_launch_is_caught() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        AFTER_LAUNCH,
        "launch_product(stream, &kernel, (a, b, c), shape)?;",
    );
    assert_lost(&g, &["gpu_timer_sync"]);
    assert_says(&g, "gpu_timer_sync", "stopped before the GPU finished");
}

#[test]
fn a_clock_started_before_pending_work_drained_is_caught() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(BEFORE_CLOCK, "let start = Instant::now();");
    assert_lost(&g, &["gpu_timer_sync"]);
    assert_says(
        &g,
        "gpu_timer_sync",
        "started before earlier GPU work finished",
    );
}

#[test]
fn a_kernel_without_its_bounds_check_is_reported_by_the_emulator() {
    let g = grade_gpu_faulty(
        "    if (row < m && col < n) {\n        float sum = 0.0f;",
        "    {\n        float sum = 0.0f;",
    );
    assert_lost(&g, &["gpu_correct"]);
    let out = g.output("gpu_correct");
    assert!(
        out.contains("if (row < m && col < n)") && out.contains("emulator"),
        "{out}"
    );
}

/// Issue 51, second class: a kernel that covers only part of C is told so from the launch the
/// device saw (its grid and block against C, the axis that falls short, x and y swapped),
/// never with the CPU lab's "rows left over after the last full block", on every seed.
#[test]
fn a_launch_that_covers_part_of_c_is_told_by_its_grid_and_block() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    const GRID: &str = "grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),";
    // (what, the edit of src/gpu.rs, items lost, what gpu_correct must say)
    type Mistake = (
        &'static str,
        (&'static str, &'static str),
        &'static [&'static str],
        &'static [&'static str],
    );
    const MISTAKES: &[Mistake] = &[
        (
            "blocks rounded down on both axes",
            (
                GRID,
                "grid_dim: ((n / 16).max(1) as u32, (m / 16).max(1) as u32, 1),",
            ),
            &["gpu_correct", "gpu_tiled_correct"],
            &["blocks of 16×16 threads", "The grid is too small"],
        ),
        (
            "rows rounded down, columns right",
            (
                GRID,
                "grid_dim: (n.div_ceil(16) as u32, (m / 16).max(1) as u32, 1),",
            ),
            &["gpu_correct", "gpu_tiled_correct"],
            &["threads along y for C's", "The grid is too small"],
        ),
        (
            "the grid sized for C on its side",
            (
                GRID,
                "grid_dim: (m.div_ceil(16) as u32, n.div_ceil(16) as u32, 1),",
            ),
            &["gpu_correct", "gpu_tiled_correct"],
            &["sized for C on its side"],
        ),
        (
            "the naive kernel's row from x and column from y",
            (
                "    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;",
                "    int row = blockIdx.x * blockDim.x + threadIdx.x;\n    int col = blockIdx.y * blockDim.y + threadIdx.y;",
            ),
            &["gpu_correct"],
            &["takes its row from x and its column from y"],
        ),
    ];
    let dirs: Vec<tempfile::TempDir> = MISTAKES
        .iter()
        .map(|(_, (find, replace), _, _)| faulty_copy_of(&solution(), "src/gpu.rs", find, replace))
        .collect();
    let paths: Vec<&std::path::Path> = dirs.iter().map(|d| d.path()).collect();
    let built = gpu_labs_e2e::harness::harnesses("matmul-coverage", "matmul", &paths);
    let mut surprises = Vec::new();
    for ((what, _, lost, says), built) in MISTAKES.iter().zip(&built) {
        for seed in [1, 2] {
            let g = built.grade("emulate", Some(seed), &["gpu_correct", "gpu_tiled_correct"]);
            if g.lost() != *lost {
                surprises.push(format!(
                    "{what}, seed {seed}: lost {:?}, expected {lost:?}",
                    g.lost()
                ));
            }
            let out = g.output("gpu_correct");
            for text in *says {
                if !out.contains(text) || out.contains("left over") {
                    surprises.push(format!(
                        "{what}, seed {seed}: gpu_correct should say {text:?} (and nothing of blocks left over); it says:\n{out}"
                    ));
                }
            }
        }
    }
    assert!(surprises.is_empty(), "{}", surprises.join("\n\n"));
}

#[test]
fn a_cublas_row_and_column_major_mix_up_loses_cublas_correct() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        "    unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }",
        "    unsafe { blas.gemm(config, &a_dev, &b_dev, &mut c_dev) }",
    );
    assert_lost(&g, &["cublas_correct"]);
}

#[test]
fn a_tiled_kernel_without_its_second_syncthreads_races_and_is_told_why() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Without the barrier after the tiles are used, a thread loads the next tile over one that
    // others still read. The correctness run is race-checked: the item is lost with the race
    // (both threads, the shared array, the lines, the hint). time_gpu_matmul launches the
    // tiled kernel unchecked, where the emulator's order makes its product wrong too.
    let g = grade_gpu_faulty(
        "        }\n        __syncthreads();\n    }\n    if (row < m",
        "        }\n    }\n    if (row < m",
    );
    assert_lost(&g, &["gpu_tiled_correct", "gpu_timer_sync"]);
    let out = g.output("gpu_tiled_correct");
    assert!(
        out.contains("kernel `matmul_tiled` is a data race: thread (1,0,0) of block (0,0,0) read 4 bytes (line 16) in __shared__ `tile_a` (byte offset 0) and thread (0,0,0) of block (0,0,0) wrote it (line 12)"),
        "{out}"
    );
    assert!(out.contains("Hint: put __syncthreads()"), "{out}");
    // The race check is for correctness runs: the plain kernels still pass theirs.
    assert!(
        !g.lost().contains(&"gpu_correct".to_string()),
        "{}",
        g.stdout
    );
}

/// What a submission prints around its GPU calls, to bury the emulator's verdict: lines that
/// look like the emulator's (a race included), a megabyte without a line end before the
/// launch (the race report then starts mid-line and sits where kept output is cut), more
/// after it.
const PRINTS_AROUND_THE_LAUNCH: &str = "    // BEGIN SOLUTION
    for _ in 0..12 {
        eprintln!(\"gpu-labs emulator: note: every kernel checked, no race found\");
    }
    eprintln!(\"gpu-labs emulator: kernel `matmul_tiled` is a data race: thread (1,0,0)\");
    eprint!(\"{}\", \"x\".repeat(1 << 20));
    let c = product_on_gpu(stream, a, b, (TILED_KERNEL, \"matmul_tiled\"));
    print!(\"{}\", \"y\".repeat(200 << 10));
    eprint!(\"{}\", \"z\".repeat(200 << 10));
    c
    // END SOLUTION
    //@template todo!(\"matmul_gpu_tiled: the shared-memory version\")";

/// The tiled function's body in the solution, which [`PRINTS_AROUND_THE_LAUNCH`] replaces.
const TILED_BODY: &str = "    // BEGIN SOLUTION
    product_on_gpu(stream, a, b, (TILED_KERNEL, \"matmul_tiled\"))
    // END SOLUTION
    //@template todo!(\"matmul_gpu_tiled: the shared-memory version\")";

#[test]
fn what_a_submission_prints_never_changes_the_race_checks_verdict() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The emulator's findings travel in its record, sealed into the worker's report; the
    // submission's output is only shown. So the racing kernel (no barrier after the tiles are
    // used) loses its item whatever it prints, and its honest twin, printing the same
    // (a fake race report included), keeps it.
    let graded =
        |edits: &[(&str, &str)]| grade_edited_on(&["gpu_tiled_correct"], "src/gpu.rs", edits);
    let racing = graded(&[
        (TILED_BODY, PRINTS_AROUND_THE_LAUNCH),
        (
            "        }\n        __syncthreads();\n    }\n    if (row < m",
            "        }\n    }\n    if (row < m",
        ),
    ]);
    assert_lost(&racing, &["gpu_tiled_correct"]);
    assert_says(&racing, "gpu_tiled_correct", "kernel `matmul_tiled` is a data race: thread (1,0,0) of block (0,0,0) read 4 bytes (line 16)");
    let honest = graded(&[(TILED_BODY, PRINTS_AROUND_THE_LAUNCH)]);
    assert_lost(&honest, &[]);
}

#[test]
fn host_computation_dressed_as_gpu_work_is_refused() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        "    product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"))",
        "    let c = crate::matmul_naive(a, b);\n    let c_dev = upload(stream, &c)?;\n    Ok(Array2::from_shape_vec(c.dim(), stream.clone_dtoh(&c_dev)?)?)",
    );
    assert_lost(&g, &["gpu_correct"]);
    assert_says(&g, "gpu_correct", "launched no kernel");
}

#[test]
fn gpu_off_skips_gpu_items_with_a_reason() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade(&solution(), &["--gpu", "off"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(
        g.json["score"], g.json["extra_data"]["max_score"],
        "{}",
        g.stdout
    );
    for id in [
        "gpu_correct",
        "gpu_tiled_correct",
        "cublas_correct",
        "gpu_timer_sync",
        "gpu_speedup",
    ] {
        assert_eq!(g.item(id)["max_score"].as_f64(), Some(0.0), "{id}");
        assert!(
            g.output(id).contains("GPU mode is off"),
            "{id}: {}",
            g.output(id)
        );
    }
}

#[test]
fn the_gpu_speedup_is_skipped_on_the_emulator_and_the_mode_is_reported() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade(&solution(), &["--gpu", "emulate"]);
    assert_eq!(g.item("gpu_speedup")["max_score"].as_f64(), Some(0.0));
    assert_says(&g, "gpu_speedup", "needs a real GPU");
    assert_says(&g, "gpu_correct", "[graded on: emulated GPU]");
    assert!(g.stdout.contains("[emulated GPU]"), "{}", g.stdout);
}

#[test]
fn a_kernel_that_does_not_compile_shows_the_compilers_message_with_its_line() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        "sum += a[row * k + p] * b[p * n + col];",
        "sum += a[row * k + p] * b[p * n + col]",
    );
    assert_lost(&g, &["gpu_correct"]);
    let out = g.output("gpu_correct");
    assert!(
        out.contains("does not compile") && out.contains("default_program(8): error"),
        "{out}"
    );
}

#[test]
fn a_synchronizing_copy_back_counts_as_synchronizing() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        AFTER_LAUNCH,
        "launch_product(stream, &kernel, (a, b, c), shape)?;\n    let _result = stream.clone_dtoh(c)?;",
    );
    assert_lost(&g, &[]);
    assert_says(&g, "gpu_timer_sync", "waits for the GPU on both sides");
}

/// The emulator queues less work before each timed call than a real GPU (the worker's
/// `busy::EMULATED_QUEUED_MS`): a correct timer that compiles and loads its kernel inside the
/// clock (which the lesson advises against, but which synchronizes) must still pass there.
#[test]
fn a_kernel_loaded_inside_the_clock_still_synchronizes() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        "let kernel = load_kernel(stream, TILED_KERNEL, \"matmul_tiled\")?;\n    stream.synchronize()?;\n    let start = Instant::now();",
        "stream.synchronize()?;\n    let start = Instant::now();\n    let kernel = load_kernel(stream, TILED_KERNEL, \"matmul_tiled\")?;",
    );
    assert_lost(&g, &[]);
    assert_says(&g, "gpu_timer_sync", "waits for the GPU on both sides");
}

#[test]
fn a_context_wide_synchronize_counts_too() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let dir = faulty_copy_edits(
        &solution(),
        "src/gpu.rs",
        &[
            (
                AFTER_LAUNCH,
                "launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.context().synchronize()?;",
            ),
            (
                BEFORE_CLOCK,
                "stream.context().synchronize()?;\n    let start = Instant::now();",
            ),
        ],
    );
    let g = grade(dir.path(), &["--gpu", "emulate"]);
    assert_lost(&g, &[]);
}

#[test]
fn the_real_gpu_speedup_path_runs_end_to_end_on_the_emulator_posing_as_a_gpu() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Only the plumbing is checked: an emulator's "speedup" means nothing.
    let g = gpu_labs_e2e::grade_with_env(
        &solution(),
        &["--gpu", "real"],
        &[("GPU_LABS_EMULATOR_AS_REAL", "1")],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(g.item("gpu_speedup")["max_score"].as_f64(), Some(4.0));
    let out = g.output("gpu_speedup");
    assert!(
        out.contains("as fast as ndarray's CPU product") && out.contains("posing as a real GPU"),
        "{out}"
    );
    for id in [
        "gpu_correct",
        "gpu_tiled_correct",
        "cublas_correct",
        "gpu_timer_sync",
    ] {
        assert_eq!(
            g.item(id)["score"],
            g.item(id)["max_score"],
            "{id}: {}",
            g.output(id)
        );
    }
}

#[test]
fn an_independent_correct_submission_scores_full_marks() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // tests/fixtures/matmul_alternative: written apart from the solution (transposed-B dot
    // products, a 1-D grid, 8×8 tiles, cuBLAS with transposes, catch_unwind for the device).
    let dir = gpu_labs_e2e::copy_with_sources(
        &solution(),
        &gpu_labs_e2e::workspace().join("tests/fixtures/matmul_alternative/src"),
    );
    let g = grade(dir.path(), &["--gpu", "emulate"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_lost(&g, &[]);
    assert_eq!(g.json["score"].as_f64(), Some(32.0), "{}", g.stdout);
}

#[test]
fn a_syncthreads_inside_an_if_is_explained_by_the_emulator() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_gpu_faulty(
        "        tile_b[threadIdx.y][threadIdx.x] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;\n        __syncthreads();",
        "        tile_b[threadIdx.y][threadIdx.x] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;\n        if (row < m && col < n) __syncthreads();",
    );
    assert_lost(&g, &["gpu_tiled_correct"]);
    let out = g.output("gpu_tiled_correct");
    assert!(
        out.contains("threads waited at different __syncthreads() (line 14 and line 18)"),
        "{out}"
    );
    assert_eq!(
        out.matches("gpu-labs emulator:").count(),
        1,
        "one report: {out}"
    );
}

#[test]
fn a_cpu_function_that_hands_its_work_to_the_gpu_finds_none() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // matmul_fast multiplying on the GPU: on a machine with one, that would pass for a CPU
    // speedup. CPU items run with every GPU hidden; the benchmark (a GPU item) still runs.
    let dir = faulty_copy_of(
        &solution(),
        "src/lib.rs",
        "use rayon::prelude::*;",
        "if a.nrows() > 0 {\n        let gpu = cudarc::driver::CudaContext::new(0).expect(\"a GPU\");\n        return crate::gpu::matmul_gpu(&gpu.default_stream(), a, b).expect(\"a GPU product\");\n    }\n    use rayon::prelude::*;",
    );
    let g = grade(dir.path(), &["--gpu", "emulate"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_lost(&g, &["fast_correct", "fast_speedup"]);
    assert_says(&g, "fast_correct", "CPU items run with no GPU visible");
}

#[test]
fn a_product_computed_on_the_host_next_to_a_real_launch_earns_no_gpu_points() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Launches the real kernel, then returns a CPU triple loop's product instead of what the
    // kernel wrote: the emulator saw a launch, but the values never came back from the device.
    let g = grade_gpu_faulty(
        "    let c = stream.clone_dtoh(&c_dev)?;\n    Ok(Array2::from_shape_vec((shape[0], shape[2]), c)?)\n}\n// END SOLUTION",
        "    stream.synchronize()?;\n    drop(c_dev);\n    Ok(crate::matmul_naive(a, b))\n}\n// END SOLUTION",
    );
    assert_lost(&g, &["gpu_correct", "gpu_tiled_correct"]);
    assert_says(&g, "gpu_correct", "were never copied back from GPU memory");
}

#[test]
fn a_host_product_passed_through_the_device_earns_no_cublas_points() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Runs the gemm into a buffer it ignores, and copies back a CPU product it uploaded.
    let g = grade_gpu_faulty(
        "unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?;\n    let c = stream.clone_dtoh(&c_dev)?;",
        "unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?;\n    let host = crate::matmul_naive(a, b);\n    let host_dev = upload(stream, &host)?;\n    let c = stream.clone_dtoh(&host_dev)?;",
    );
    assert_lost(&g, &["cublas_correct"]);
    assert_says(&g, "cublas_correct", "only passed through it");
}

#[test]
fn a_kernel_that_faults_after_the_timer_returns_costs_that_item_only() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The launch reads and writes four times past its buffers and the function returns at
    // once: the fault surfaces in the grader's own next GPU call, and is still the student's.
    let g = grade_gpu_faulty(
        "launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;\n    Ok(start.elapsed())",
        "launch_product(stream, &kernel, (a, b, c), [shape[0] * 4, shape[1], shape[2]])?;\n    Ok(start.elapsed())",
    );
    assert_lost(&g, &["gpu_timer_sync"]);
    // Where the fault surfaces depends on when the emulated stream ran the launch: in the
    // grader's next GPU call, or (on a busy machine) in the student's own next call of the
    // timer. Either way it is the student's, said with the emulator's report.
    let said = g.output("gpu_timer_sync");
    assert!(
        said.contains("the GPU reported an error after `time_gpu_matmul` ran")
            || (said.contains("`time_gpu_matmul` returned an error")
                && said.contains("CUDA_ERROR_ILLEGAL_ADDRESS")
                && said.contains("past the end of")),
        "{said}"
    );
}

/// Grades the solution with `edits` made in `src/gpu.rs`, on the timer's item and
/// `benchmark` alone: the items a mistake in either can touch.
fn grade_timer_and_benchmark(edits: &[(&str, &str)]) -> Graded {
    grade_edited_on(&["gpu_timer_sync", "benchmark"], "src/gpu.rs", edits)
}

#[test]
fn a_timer_that_faults_costs_the_timer_and_not_benchmark_which_calls_it() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The timer waits for its faulting launch, so every call of it (benchmark's too) returns
    // the error: benchmark fails only because the timer does, and is not charged again.
    let g = grade_timer_and_benchmark(&[(
        "launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;\n    Ok(start.elapsed())",
        "launch_product(stream, &kernel, (a, b, c), [shape[0] * 4, shape[1], shape[2]])?;\n    stream.synchronize()?;\n    Ok(start.elapsed())",
    )]);
    assert_lost(&g, &["gpu_timer_sync"]);
    assert_says(&g, "benchmark", "fails on its own in a fresh process too");
    assert_says(&g, "benchmark", "CUDA_ERROR_ILLEGAL_ADDRESS");
}

#[test]
fn a_benchmark_that_hands_the_timer_a_wrong_shape_is_charged_itself() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The timer is right; benchmark calls it on a shape four times its buffers: the fault is
    // benchmark's own, which the timer alone (the supervisor's second look) tells apart.
    let g = grade_timer_and_benchmark(&[(
        "time_gpu_matmul(&stream, &a_dev, &b_dev, &mut c_dev, [size; 3])?",
        "time_gpu_matmul(&stream, &a_dev, &b_dev, &mut c_dev, [size * 4, size, size])?",
    )]);
    assert_lost(&g, &["benchmark"]);
    assert_says(&g, "benchmark", "CUDA_ERROR_ILLEGAL_ADDRESS");
}

#[test]
fn times_the_grader_did_not_see_happen_earn_no_benchmark_point() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Each time `benchmark` reports is held against work the grader saw: the CPU time against
    // its own runs of `matmul_fast` at that size, the GPU time against the device time of the
    // launches during the call. The timer's item is untouched by either forgery; the honest
    // benchmark keeps its point in every full-marks test.
    let runs_nothing = grade_timer_and_benchmark(&[(
        "    println!(\"Benchmarking {size}x{size} matrix multiplication...\");",
        "    let tiny = Duration::from_micros(1);\n    if size > 0 {\n        return Ok(Benchmark { cpu: tiny, gpu: Some(tiny) });\n    }\n    println!(\"Benchmarking {size}x{size} matrix multiplication...\");",
    )]);
    assert_lost(&runs_nothing, &["benchmark"]);
    assert_says(
        &runs_nothing,
        "benchmark",
        "the grader ran it there 5 times after the call and measured it itself",
    );
    let gpu_made_up =
        grade_timer_and_benchmark(&[("            Some(gpu)\n", "            Some(gpu / 100)\n")]);
    assert_lost(&gpu_made_up, &["benchmark"]);
    assert_says(
        &gpu_made_up,
        "benchmark",
        "alone reads its own launch right",
    );
}

/// `matmul_gpu`'s body in the solution, which the arithmetic tests replace.
const NAIVE_BODY: &str = "    // BEGIN SOLUTION
    product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"))
    // END SOLUTION
    //@template todo!(\"matmul_gpu: your naive CUDA kernel\")";

/// The attack: the product computed on the host, uploaded negated (so that no value copied
/// back is one uploaded), and turned back by an element-wise kernel.
const HOST_PRODUCT_FLIPPED: &str = "    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let mut negated = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0f32;
            for p in 0..k {
                sum += a[[i, p]] * b[[p, j]];
            }
            negated[i * n + j] = -sum;
        }
    }
    const FLIP: &str = \"extern \\\"C\\\" __global__ void flip(float* c, int len) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < len) c[i] = -c[i];
    }\";
    let kernel = load_kernel(stream, FLIP, \"flip\")?;
    let mut c_dev = stream.clone_htod(&negated)?;
    let len = (m * n) as i32;
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&mut c_dev).arg(&len);
    unsafe { launch.launch(LaunchConfig::for_num_elems((m * n) as u32)) }?;
    let c = stream.clone_dtoh(&c_dev)?;
    Ok(Array2::from_shape_vec((m, n), c)?)";

/// An honest twin that reads A transposed and splits k in two launches (split-K), each
/// adding its half into C.
const SPLIT_K_TRANSPOSED: &str = "    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    const SPLIT: &str = \"extern \\\"C\\\" __global__ void split(const float* at, const float* b,
        float* c, int m, int k, int n, int k0, int k1) {
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        if (row < m && col < n) {
            float sum = 0.0f;
            for (int p = k0; p < k1; p++) sum += at[p * m + row] * b[p * n + col];
            c[row * n + col] += sum;
        }
    }\";
    let kernel = load_kernel(stream, SPLIT, \"split\")?;
    let at = upload(stream, &a.t().to_owned())?;
    let b_dev = upload(stream, b)?;
    let mut c_dev = stream.alloc_zeros::<f32>(m * n)?;
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (mi, ki, ni) = (m as i32, k as i32, n as i32);
    for (k0, k1) in [(0, ki / 2), (ki / 2, ki)] {
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(&at).arg(&b_dev).arg(&mut c_dev).arg(&mi).arg(&ki).arg(&ni).arg(&k0).arg(&k1);
        unsafe { launch.launch(config) }?;
    }
    let c = stream.clone_dtoh(&c_dev)?;
    Ok(Array2::from_shape_vec((m, n), c)?)";

#[test]
fn a_host_product_passed_through_an_element_wise_kernel_earns_no_gpu_points() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The emulator counts what checked kernels read (and cuBLAS's multiply-adds): a product
    // needs on the order of m·n·k, a result only passed through the device reads m·n. The
    // values copied back are not the ones uploaded, so the check of where values came from
    // alone let this pass. Its honest twin (A read transposed, k split over two launches)
    // keeps its points.
    let graded =
        |body: &str| grade_edited_on(&["gpu_correct"], "src/gpu.rs", &[(NAIVE_BODY, body)]);
    let flipped = graded(HOST_PRODUCT_FLIPPED);
    assert_lost(&flipped, &["gpu_correct"]);
    assert_says(
        &flipped,
        "gpu_correct",
        "the device did far less work than they need",
    );
    let honest = graded(SPLIT_K_TRANSPOSED);
    assert_lost(&honest, &[]);
}

/// The attack made to pass the arithmetic count: the negated host product of
/// [`HOST_PRODUCT_FLIPPED`], beside a kernel that reads A and B as often as a product does
/// (m·n·k values) and computes something else.
const HOST_PRODUCT_BESIDE_BUSY_WORK: &str = "    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    const BUSY: &str = \"extern \\\"C\\\" __global__ void busy(const float* a, const float* b,
        float* s, int m, int k, int n) {
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        if (row < m && col < n) {
            float t = 0.0f;
            for (int p = 0; p < k; p++) t += a[row * k + p] - b[p * n + col];
            s[row * n + col] = t;
        }
    }\";
    let busy = load_kernel(stream, BUSY, \"busy\")?;
    let a_dev = upload(stream, a)?;
    let b_dev = upload(stream, b)?;
    let mut scratch = stream.alloc_zeros::<f32>(m * n)?;
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (mi, ki, ni) = (m as i32, k as i32, n as i32);
    let mut launch = stream.launch_builder(&busy);
    launch.arg(&a_dev).arg(&b_dev).arg(&mut scratch).arg(&mi).arg(&ki).arg(&ni);
    unsafe { launch.launch(config) }?;
    stream.synchronize()?;
";

#[test]
fn a_host_product_beside_busy_work_is_told_by_the_replay_with_other_values() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The arithmetic count sees m·n·k values read; where the values came from sees none
    // uploaded as they are. Run again with A's values replaced, the device's result stays the
    // host's product, so it cannot be φ(A)·B. The honest twins keep their points: the
    // solution's naive, tiled and cuBLAS products in the same grading, and split-K with A read
    // transposed (a_host_product_passed_through_an_element_wise_kernel_earns_no_gpu_points).
    let (_, flipped) = HOST_PRODUCT_FLIPPED.split_once('\n').expect("two lines");
    let body = format!("{HOST_PRODUCT_BESIDE_BUSY_WORK}{flipped}");
    let g = grade_edited_on(
        &["gpu_correct", "gpu_tiled_correct", "cublas_correct"],
        "src/gpu.rs",
        &[(NAIVE_BODY, &body)],
    );
    assert_lost(&g, &["gpu_correct"]);
    assert_says(
        &g,
        "gpu_correct",
        "again with other values in A, the device's result did not follow them",
    );
}

#[test]
fn a_kernel_that_calls_a_host_function_does_not_compile() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // On the emulator a kernel is CPU code: without this rule it could read the grader's files
    // or its environment from inside a "GPU" function.
    let g = grade_gpu_faulty(
        "    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n    if (row < m && col < n) {",
        "    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n    if (getenv(\"HOME\") != 0) { row += 0; }\n    if (row < m && col < n) {",
    );
    assert_lost(&g, &["gpu_correct"]);
    assert_says(&g, "gpu_correct", "calls the host function `getenv`");
}

/// The batched items (seed 004): a mistake in `src/batched.rs` is graded on these alone.
const BATCHED: [&str; 4] = [
    "batched_correct",
    "gpu_batched_correct",
    "gpu_batched_timer_sync",
    "gpu_batched_speedup",
];

/// Grades the solution with `edits` made in `src/batched.rs`, on the batched items.
fn grade_batched_faulty(edits: &[(&str, &str)]) -> Graded {
    grade_edited_on(&BATCHED, "src/batched.rs", edits)
}

/// B's batch stride one row instead of one matrix: in bounds, batch 0 right, the others wrong.
const WRONG_BATCH_STRIDE: (&str, &str) = (
    "const float* b_z = b + (long long)z * k * n;",
    "const float* b_z = b + (long long)z * n;",
);

#[test]
fn a_wrong_batch_stride_loses_the_gpu_batch_items_and_names_the_batch() {
    let g = grade_batched_faulty(&[WRONG_BATCH_STRIDE]);
    assert_lost(&g, &["gpu_batched_correct", "gpu_batched_timer_sync"]);
    assert_says(
        &g,
        "gpu_batched_correct",
        "is wrong on case 1 of 8 (a batch of 3: A[b] is 7×5, B[b] is 5×9): in batch 1 of 0..3, C[1][0][0] should be",
    );
    assert_says(
        &g,
        "gpu_batched_correct",
        "Hint: batch 0 is right and every later batch is wrong",
    );
    // The timer's batch is grown until the GPU is busy 20 ms (more on a busy machine), and a
    // large one is checked by Freivalds' method, row by row: the batch is named either way.
    assert_says(&g, "gpu_batched_timer_sync", "in batch 1 of 0..");
    assert_says(
        &g,
        "gpu_batched_timer_sync",
        "Hint: batch 0 is right and every later batch is wrong",
    );
}

#[test]
fn faulty_batches_lose_exactly_their_items_with_the_batch_index() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // (what, edits of src/batched.rs, items lost, (item, text its feedback must contain)…)
    type Fault = (
        &'static str,
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
    );
    const FAULTS: &[Fault] = &[
        (
            "the last batch skipped by the kernel's guard",
            &[(
                "if (z < batch && row < m && col < n)",
                "if (z < batch - 1 && row < m && col < n)",
            )],
            &["gpu_batched_correct", "gpu_batched_timer_sync"],
            &[
                ("gpu_batched_correct", "in batch 2 of 0..3, C[2][0][0] should be"),
                ("gpu_batched_correct", "Hint: batch 2 of 0..3 is all zeros"),
                // The timed batch grows with the machine's speed: its last batch is the one.
                ("gpu_batched_timer_sync", "is all zeros while the others are right"),
            ],
        ),
        (
            "the batched timer without its synchronize after the launch",
            &[(
                "launch_batched(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;",
                "launch_batched(stream, &kernel, (a, b, c), shape)?;",
            )],
            &["gpu_batched_timer_sync"],
            &[(
                "gpu_batched_timer_sync",
                "stopped before the GPU finished",
            )],
        ),
        (
            "the first batch skipped by the CPU loop",
            &[(
                "in c.outer_iter_mut().enumerate() {",
                "in c.outer_iter_mut().enumerate().skip(1) {",
            )],
            &["batched_correct"],
            &[
                ("batched_correct", "in batch 0 of 0..3, C[0][0][0] should be"),
                ("batched_correct", "Hint: batch 0 of 0..3 is all zeros"),
            ],
        ),
        (
            "the batch as a loop of single launches (right, but the rule the emulator can grade is broken: a third of the item)",
            &[(
                "    launch_batched(stream, &kernel, (&a_dev, &b_dev, &mut c_dev), shape)?;",
                "    for z in 0..batch {\n        let a_z = stream.clone_dtod(&a_dev.slice(z * m * k..(z + 1) * m * k))?;\n        let b_z = stream.clone_dtod(&b_dev.slice(z * k * n..(z + 1) * k * n))?;\n        let mut c_z = stream.alloc_zeros::<f32>(m * n)?;\n        launch_batched(stream, &kernel, (&a_z, &b_z, &mut c_z), [1, m, k, n])?;\n        stream.memcpy_dtod(&c_z, &mut c_dev.slice_mut(z * m * n..(z + 1) * m * n))?;\n    }",
            )],
            &["gpu_batched_correct"],
            &[
                (
                    "gpu_batched_correct",
                    "made 37 kernel launches and 0 cuBLAS calls for 8 batches of 37 matrices in all: one call per matrix",
                ),
                ("gpu_batched_correct", "it costs 1 of the 3 points"),
            ],
        ),
        (
            "the batch as a loop of the student's own single cuBLAS product, one per matrix",
            &[(
                "    launch_batched(stream, &kernel, (&a_dev, &b_dev, &mut c_dev), shape)?;\n    let c = stream.clone_dtoh(&c_dev)?;\n    Ok(Array3::from_shape_vec((batch, m, n), c)?)",
                "    let _ = (&kernel, &a_dev, &b_dev, &mut c_dev, shape);\n    let mut c = Array3::<f32>::zeros((batch, m, n));\n    for z in 0..batch {\n        let a_z = a.index_axis(Axis(0), z).to_owned();\n        let b_z = b.index_axis(Axis(0), z).to_owned();\n        c.index_axis_mut(Axis(0), z).assign(&crate::matmul_cublas(stream, &a_z, &b_z)?);\n    }\n    Ok(c)",
            )],
            &["gpu_batched_correct"],
            &[
                (
                    "gpu_batched_correct",
                    "made 0 kernel launches and 37 cuBLAS calls for 8 batches of 37 matrices in all: one call per matrix",
                ),
                ("gpu_batched_correct", "it costs 1 of the 3 points"),
            ],
        ),
    ];
    // Every copy built in one cargo invocation, then graded with its own test binary.
    let dirs: Vec<tempfile::TempDir> = FAULTS
        .iter()
        .map(|(_, edits, _, _)| faulty_copy_edits(&solution(), "src/batched.rs", edits))
        .collect();
    let paths: Vec<&std::path::Path> = dirs.iter().map(|d| d.path()).collect();
    let built = gpu_labs_e2e::harness::harnesses("matmul-faulty-batches", "matmul", &paths);
    let mut surprises = Vec::new();
    for ((what, _, lost, says), built) in FAULTS.iter().zip(&built) {
        let g = built.grade("emulate", None, &BATCHED);
        if g.lost() != *lost {
            surprises.push(format!(
                "{what}: lost {:?}, expected {lost:?}\n{}",
                g.lost(),
                g.stdout
            ));
        }
        for (id, text) in *says {
            let output = g.output(id);
            if !output.contains(text) {
                surprises.push(format!(
                    "{what}: {id} should say {text:?}; it says:\n{output}"
                ));
            }
        }
        // The rule the emulator grades costs a third of the item, no more.
        if says
            .iter()
            .any(|(_, text)| text.contains("costs 1 of the 3 points"))
        {
            let test = g.json["tests"].as_array().and_then(|t| {
                t.iter()
                    .find(|t| t["extra_data"]["item"] == "gpu_batched_correct")
            });
            let score = test.and_then(|t| t["score"].as_f64());
            if score != Some(2.0) {
                surprises.push(format!(
                    "{what}: gpu_batched_correct scored {score:?}, not 2 of 3"
                ));
            }
        }
    }
    assert!(surprises.is_empty(), "{}", surprises.join("\n\n"));
}

/// The solution's GPU timer, before its clock starts.
const TIMER_START: &str = "    let kernel = load_kernel(stream, TILED_KERNEL, \"matmul_tiled\")?;\n    stream.synchronize()?;\n    let start = Instant::now();";

/// A kernel launched from the timer that reads a host buffer through its address: in a timed
/// run it could as well read the worker's memory (the report's secret, the emulator's device
/// times) and forge what the timer item takes.
const TIMER_READS_HOST: &str = "    let host = vec![1.0f32; 256];\n    let at = host.as_ptr() as u64;\n    let peek = load_kernel(stream, \"extern \\\"C\\\" __global__ void peek(unsigned long long from, float* to) { to[threadIdx.x] = ((const float*)from)[threadIdx.x]; }\", \"peek\")?;\n    let mut to = stream.alloc_zeros::<f32>(256)?;\n    let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };\n    let mut launch = stream.launch_builder(&peek);\n    launch.arg(&at).arg(&mut to);\n    unsafe { launch.launch(config) }?;\n    let _ = stream.clone_dtoh(&to)?;\n";

#[test]
fn a_timed_runs_kernel_cannot_read_host_memory() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Timed runs are not race-checked, but their kernels are confined to device memory all
    // the same (issue 48): a kernel there is native code in the worker's process, and one
    // that could follow a host address could forge what the worker reports.
    let reads_host = format!("{TIMER_READS_HOST}{TIMER_START}");
    let g = grade_edited_on(
        &["gpu_timer_sync"],
        "src/gpu.rs",
        &[(TIMER_START, &reads_host)],
    );
    assert_lost(&g, &["gpu_timer_sync"]);
    assert_says(&g, "gpu_timer_sync", "a kernel can only read GPU memory");
    // Its honest twin reads a device buffer of the same data and keeps the point.
    let honest = TIMER_READS_HOST.replace(
        "let at = host.as_ptr() as u64;",
        "let on_device = stream.clone_htod(&host)?;\n    let at = on_device.device_ptr(stream).0;",
    );
    let honest = format!("    use cudarc::driver::DevicePtr;\n{honest}{TIMER_START}");
    let g = grade_edited_on(&["gpu_timer_sync"], "src/gpu.rs", &[(TIMER_START, &honest)]);
    assert_lost(&g, &[]);
}

/// Code a submission could run before its timer's kernel: a `cmath` (the real one, then a
/// macro that leaves a function uninstrumented) put in every folder of its kernel cache, where
/// the emulator once kept its CUDA headers, searched before the system's. A kernel then uses
/// the macro for a helper that reads a host buffer.
const PLANTED_HEADER: &str = "    if let Some(cache) = std::env::var_os(\"GPU_LABS_EMULATOR_CACHE\") {\n        let mut folders = vec![std::path::PathBuf::from(cache)];\n        while let Some(dir) = folders.pop() {\n            let _ = std::fs::write(dir.join(\"cmath\"), \"#pragma once\\n#include_next <cmath>\\n#define SNEAKY __attribute__((no_sanitize_thread))\\n\");\n            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {\n                if entry.path().is_dir() { folders.push(entry.path()); }\n            }\n        }\n    }\n    let host = vec![1.0f32; 256];\n    let at = host.as_ptr() as u64;\n    let peek = load_kernel(stream, \"SNEAKY __device__ float load(unsigned long long a, int i) { return ((const float*)a)[i]; }\\nextern \\\"C\\\" __global__ void peek(unsigned long long from, float* to) { to[threadIdx.x] = load(from, threadIdx.x); }\", \"peek\")?;\n    let mut to = stream.alloc_zeros::<f32>(256)?;\n    let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };\n    let mut launch = stream.launch_builder(&peek);\n    launch.arg(&at).arg(&mut to);\n    unsafe { launch.launch(config) }?;\n    let _ = stream.clone_dtoh(&to)?;\n";

#[test]
fn a_header_planted_in_the_kernel_cache_does_not_reach_the_prelude() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The emulator's CUDA headers come from the folder the grader laid out beside the library,
    // which no worker can write; the program's own folders are searched after the system's.
    // So the planted `cmath` is never included, the macro is unknown, and the kernel does not
    // compile (before, it compiled and read the host buffer unchecked).
    let planted = format!("{PLANTED_HEADER}{TIMER_START}");
    let g = grade_edited_on(
        &["gpu_timer_sync"],
        "src/gpu.rs",
        &[(TIMER_START, &planted)],
    );
    assert_lost(&g, &["gpu_timer_sync"]);
    assert_says(&g, "gpu_timer_sync", "‘SNEAKY’ does not name a type");
}

/// Code a submission could run beside its own compile: a thread that watches its kernel cache
/// for the translation unit the emulator writes and hands to the C++ compiler a moment later,
/// and rewrites it in that moment. Here the rewrite only mends a wrong kernel (it halves C),
/// which shows the rewrite reached the compiler; the same moment would take a unit with no
/// prelude and no checks (inline assembly, a kernel that reads the worker's memory).
const COMPILE_WINDOW: &str = "    let cache = std::env::var_os(\"GPU_LABS_EMULATOR_CACHE\").map(std::path::PathBuf::from);\n    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));\n    let watching = Arc::clone(&stop);\n    let watcher = std::thread::spawn(move || {\n        while !watching.load(std::sync::atomic::Ordering::Relaxed) {\n            let mut folders: Vec<std::path::PathBuf> = cache.iter().cloned().collect();\n            while let Some(dir) = folders.pop() {\n                for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {\n                    let path = entry.path();\n                    if path.is_dir() {\n                        folders.push(path);\n                        continue;\n                    }\n                    let name = entry.file_name().to_string_lossy().into_owned();\n                    if name.starts_with(\"kernels\") && name.ends_with(\".cpp\") {\n                        if let Ok(text) = std::fs::read_to_string(&path) {\n                            if text.contains(\"sum * 0.5f\") {\n                                let _ = std::fs::write(&path, text.replace(\"sum * 0.5f\", \"sum\"));\n                            }\n                        }\n                    }\n                }\n            }\n        }\n    });\n    let product = product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"));\n    stop.store(true, std::sync::atomic::Ordering::Relaxed);\n    let _ = watcher.join();\n    product\n";

#[test]
fn a_translation_unit_rewritten_during_its_compile_is_out_of_reach() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The grader's kernel compiler writes a build's files in a folder the worker can read and
    // not write: the rewrite fails, the kernel runs as its source says (C halved), and the item
    // is lost on its values. (Before, the unit lay in the worker's own cache folder, and the
    // rewrite could reach the compiler.)
    let g = grade_edited_on(
        &["gpu_correct"],
        "src/gpu.rs",
        &[
            (
                "        }\n        c[row * n + col] = sum;",
                "        }\n        c[row * n + col] = sum * 0.5f;",
            ),
            (
                "    product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"))\n",
                COMPILE_WINDOW,
            ),
        ],
    );
    assert_lost(&g, &["gpu_correct"]);
    assert_says(&g, "gpu_correct", "should be");
}

/// A mistake in the cuBLAS call, where the fault is the call's description of its operands:
/// (what to replace in the solution's call, the operand the feedback must name).
const CUBLAS_CALL_MISTAKES: [(&str, &str, &str); 2] = [
    // m and n as in the row-major product: the second operand (A's buffer, k×m column by
    // column) is described as k×n, past the end of its buffer on 33×17×45.
    (
        "        m: n as i32,\n        n: m as i32,",
        "        m: m as i32,\n        n: n as i32,",
        "matrix B",
    ),
    // The first operand's leading dimension from the wrong matrix: k, below its n rows.
    (
        "        lda: n as i32,",
        "        lda: k as i32,",
        "lda = 17 is less than 45",
    ),
];

#[test]
fn a_fault_in_a_cublas_call_is_explained_by_the_call_not_by_a_kernel() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The emulator names the call, the operand and its leading dimension; the hint under it
    // follows where the fault happened (issue 51): it explains cuBLAS's column-major operands,
    // never "guard the kernel body" to a student who launched no kernel there.
    for (find, replace, operand) in CUBLAS_CALL_MISTAKES {
        let g = grade_edited_on(&["cublas_correct"], "src/gpu.rs", &[(find, replace)]);
        assert_lost(&g, &["cublas_correct"]);
        assert_says(&g, "cublas_correct", operand);
        assert_says(
            &g,
            "cublas_correct",
            "the cuBLAS call, not a kernel of yours",
        );
        let output = g.output("cublas_correct");
        assert!(!output.contains("guard the kernel body"), "{output}");
    }
}

/// The solution's GPU timer, from its clock's start to its return.
const TIMER_BODY: &str = "    let start = Instant::now();\n    launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;\n    Ok(start.elapsed())";

/// Realistic timer mistakes whose feedback must say what the clock measured (issue 51):
/// (the timer's body, what the student reads).
const TIMER_MISTAKES: [(&str, &str); 2] = [
    // Milliseconds handed over as seconds: a thousand times the device's time.
    (
        "    let start = Instant::now();\n    launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;\n    let ms = start.elapsed().as_secs_f64() * 1000.0;\n    Ok(Duration::from_secs_f64(ms))",
        "unit slip",
    ),
    // A synchronized warm-up on a quarter of the rows is what the clock times; the product
    // returned is launched after it, untimed.
    (
        "    let start = Instant::now();\n    launch_product(stream, &kernel, (a, b, c), [shape[0] / 4, shape[1], shape[2]])?;\n    stream.synchronize()?;\n    let warm_up = start.elapsed();\n    launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;\n    Ok(warm_up)",
        "not a small warm-up launch",
    ),
];

#[test]
fn a_timer_verdict_says_what_the_clock_measured() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", &["gpu_timer_sync"]);
    let rubric = rubric.to_str().expect("a UTF-8 path");
    for (body, says) in TIMER_MISTAKES {
        let dir = faulty_copy_edits(&solution(), "src/gpu.rs", &[(TIMER_BODY, body)]);
        for seed in ["1", "2"] {
            let g = grade(
                dir.path(),
                &["--gpu", "emulate", "--assignment", rubric, "--seed", seed],
            );
            assert_eq!(g.code, Some(0), "grading completes: {}", g.stderr);
            assert_lost(&g, &["gpu_timer_sync"]);
            assert_says(&g, "gpu_timer_sync", says);
        }
    }
}
