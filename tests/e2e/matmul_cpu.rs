//! End-to-end: `grader grade` on the matmul lab's CPU track. The solution scores full marks,
//! the template scores zero with "not implemented" everywhere, and faulty submissions made
//! from the solution lose exactly the items they should, with the right explanation.

use gpu_labs_e2e::{
    assert_lost, assert_says, faulty_copy, grade, grade_faulty, grade_with_a_busy_core, solution,
    workspace, Graded,
};
use std::path::Path;

#[test]
fn the_solution_scores_full_marks() {
    let started = std::time::Instant::now();
    let graded = grade(&solution(), &[]);
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(
        graded.json["score"], graded.json["extra_data"]["max_score"],
        "{}",
        graded.stdout
    );
    // 14 CPU points and 18 GPU points; the GPU speedups need a real GPU and are skipped here.
    assert_eq!(graded.json["extra_data"]["max_score"].as_f64(), Some(32.0));
    for (id, points) in [
        ("naive_correct", 3.0),
        ("fast_correct", 3.0),
        ("time_cpu", 2.0),
        ("fast_speedup", 4.0),
        ("batched_correct", 2.0),
        ("gpu_batched_correct", 3.0),
        ("gpu_batched_timer_sync", 2.0),
    ] {
        assert_eq!(graded.score(id), points, "{id}: {}", graded.output(id));
    }
    assert!(graded.stdout.contains("32/32"), "{}", graded.stdout);
    eprintln!(
        "graded the solution in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn the_template_scores_zero_and_every_item_says_what_is_not_implemented() {
    let graded = grade(&workspace().join("templates/matmul"), &[]);
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(graded.json["score"].as_f64(), Some(0.0));
    for (id, function) in [
        ("naive_correct", "matmul_naive"),
        ("fast_correct", "matmul_fast"),
        ("time_cpu", "time_cpu"),
        ("fast_speedup", "matmul_fast"),
        ("gpu_correct", "matmul_gpu"),
        ("gpu_tiled_correct", "matmul_gpu_tiled"),
        ("cublas_correct", "matmul_cublas"),
        ("gpu_timer_sync", "time_gpu_matmul"),
        ("default_device", "default_device"),
        ("benchmark", "benchmark"),
        ("batched_correct", "matmul_batched"),
        ("gpu_batched_correct", "matmul_batched_gpu"),
        ("gpu_batched_timer_sync", "time_gpu_matmul_batched"),
    ] {
        let output = graded.output(id);
        assert!(
            output.contains("not implemented yet") && output.contains(function),
            "{id}: {output}"
        );
        assert!(!output.contains("backtrace"), "{output}");
    }
    assert!(!graded.stdout.contains("backtrace") && !graded.stderr.contains("backtrace"));
}

#[test]
fn a_transposed_result_loses_naive_correct() {
    let g = grade_faulty("c[[i, j]] = sum;", "c[[j, i]] = sum;");
    assert_lost(&g, &["naive_correct"]);
    assert_says(&g, "naive_correct", "transposed");
}

#[test]
fn nan_output_loses_naive_correct() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty("let mut sum = 0.0f32;", "let mut sum = f32::NAN;");
    assert_lost(&g, &["naive_correct"]);
    assert_says(&g, "naive_correct", "NaN");
}

#[test]
fn a_panic_loses_only_its_item() {
    let g = grade_faulty(
        "let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());\n    let mut c = Array2::zeros((m, n));",
        "let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());\n    if k == 17 { panic!(\"seventeen is unlucky\") }\n    let mut c = Array2::zeros((m, n));",
    );
    assert_lost(&g, &["naive_correct"]);
    let out = g.output("naive_correct");
    assert!(
        out.contains("panicked on case 3 of 6") && out.contains("seventeen is unlucky"),
        "{out}"
    );
}

#[test]
fn a_stack_overflow_loses_only_its_item() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "let mut sum = 0.0f32;",
        "let big = [1u8; 64 << 20];\n            let mut sum = std::hint::black_box(&big)[i] as f32 - 1.0;",
    );
    assert_lost(&g, &["naive_correct"]);
    assert_says(&g, "naive_correct", "overflowed the stack");
}

#[test]
fn a_missing_bound_on_leftover_rows_loses_fast_correct_only() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Rows past the last full block of 16 are never computed; 256×256 is a multiple of 16,
    // so the speed item still counts.
    let g = grade_faulty(
        "c.par_chunks_mut(ROWS * n)",
        "c.par_chunks_exact_mut(ROWS * n)",
    );
    assert_lost(&g, &["fast_correct"]);
    let out = g.output("fast_correct");
    assert!(
        out.contains("m (rows of A) is a multiple of 16") && out.contains("left over"),
        "{out}"
    );
}

#[test]
fn a_fast_version_slower_than_naive_loses_the_speedup() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "use rayon::prelude::*;",
        "use rayon::prelude::*;\n    let _slow = (matmul_naive(a, b), matmul_naive(a, b));",
    );
    assert_lost(&g, &["fast_speedup"]);
    assert_says(&g, "fast_speedup", "below the first tier");
}

#[test]
fn using_ndarray_dot_in_the_fast_version_is_refused() {
    // The product goes through a helper, which calls `dot`.
    let dir = faulty_copy(
        &solution(),
        "use rayon::prelude::*;",
        "return helper(a, b);\n    #[allow(unreachable_code)]\n    use rayon::prelude::*;",
    );
    let lib = dir.path().join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).expect("lib.rs");
    text.push_str(
        "\nfn helper(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n    a.dot(b)\n}\n",
    );
    std::fs::write(&lib, text).expect("write");
    let g = grade(dir.path(), &[]);
    assert_lost(&g, &["fast_correct", "fast_speedup"]);
    assert_says(&g, "fast_correct", "`dot`");
}

#[test]
fn a_submission_that_fills_the_disk_is_stopped_and_loses_only_its_item() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "let value = work();",
        "let value = work();\n    {\n        use std::io::Write;\n        let mut f = std::fs::File::create(std::env::temp_dir().join(\"fill\")).unwrap();\n        let chunk = vec![7u8; 64 << 20];\n        for _ in 0..64 { f.write_all(&chunk).unwrap(); }\n    }",
    );
    assert_lost(&g, &["time_cpu"]);
    assert_says(&g, "time_cpu", "wrote more than 1024 MiB to one file");
}

#[test]
fn an_infinite_loop_is_stopped_at_the_timeout() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "let value = work();",
        "let value = work();\n    loop { std::hint::spin_loop() }\n    #[allow(unreachable_code)]",
    );
    assert_lost(&g, &["time_cpu"]);
    assert_says(&g, "time_cpu", "did not finish within 10 s");
}

#[test]
fn process_exit_in_student_code_loses_only_its_item() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "let value = work();",
        "let value = work();\n    std::process::exit(0);\n    #[allow(unreachable_code)]",
    );
    assert_lost(&g, &["time_cpu"]);
    assert_says(&g, "time_cpu", "exit code 0");
}

#[test]
fn a_timer_read_before_the_work_runs_is_caught() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "let value = work();\n    (value, start.elapsed())",
        "let took = start.elapsed();\n    let value = work();\n    (value, took)",
    );
    assert_lost(&g, &["time_cpu"]);
    assert_says(&g, "time_cpu", "before calling the work");
}

#[test]
fn a_submission_that_does_not_compile_scores_zero_with_the_compilers_first_error() {
    let g = grade_faulty("let mut sum = 0.0f32;", "let mut sum = 0.0f32 +;");
    assert_eq!(g.json["score"].as_f64(), Some(0.0));
    let out = g.output("time_cpu");
    assert!(
        out.contains("does not compile") && out.contains("error: expected expression"),
        "{out}"
    );
    assert!(out.contains("src/lib.rs"), "{out}");
}

#[test]
fn a_renamed_function_is_explained_as_a_signature_change() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty("pub fn time_cpu<T>(", "pub fn time_it<T>(");
    assert_eq!(g.json["score"].as_f64(), Some(0.0));
    let out = g.output("naive_correct");
    assert!(
        out.contains("time_cpu") && out.contains("keep each `pub fn` name"),
        "{out}"
    );
}

#[test]
fn a_path_that_is_not_a_lab_crate_is_a_one_line_error() {
    let empty = tempfile::tempdir().expect("temp dir");
    let g = grade(empty.path(), &[]);
    assert_eq!(g.code, Some(2));
    assert_eq!(g.stderr.trim().lines().count(), 1, "{}", g.stderr);
    assert!(
        g.stderr.contains("is not a lab crate") && g.stderr.contains("Cargo.toml"),
        "{}",
        g.stderr
    );
}

#[test]
fn a_malformed_rubric_names_file_line_and_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rubric = std::fs::read_to_string(workspace().join("assignments/matmul/assignment.toml"))
        .expect("rubric")
        .replacen("tolerance = 2.0", "tolerance = \"tight\"", 1);
    let path = dir.path().join("assignment.toml");
    std::fs::write(&path, &rubric).expect("write");
    let g = grade(
        &solution(),
        &["--assignment", path.to_str().expect("utf-8 path")],
    );
    assert_eq!(g.code, Some(2));
    let line = rubric
        .lines()
        .position(|l| l.contains("\"tight\""))
        .expect("line")
        + 1;
    assert!(
        g.stderr.contains(&format!("assignment.toml:{line}:")),
        "{}",
        g.stderr
    );
    assert!(g.stderr.contains("tolerance = \"tight\""), "{}", g.stderr);
}

#[test]
fn the_same_seed_gives_the_same_feedback_and_another_seed_other_inputs() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let dir = faulty_copy(&solution(), "c[[i, j]] = sum;", "c[[j, i]] = sum;");
    let first = grade(dir.path(), &["--seed", "12345", "--gpu", "off"]);
    assert!(first.stdout.contains("--seed 12345"), "{}", first.stdout);
    let again = grade(dir.path(), &["--seed", "12345", "--gpu", "off"]);
    let other = grade(dir.path(), &["--seed", "54321", "--gpu", "off"]);
    // The feedback quotes the expected and returned values at the first wrong element.
    assert_eq!(first.output("naive_correct"), again.output("naive_correct"));
    assert_ne!(first.output("naive_correct"), other.output("naive_correct"));
}

/// The solution's speed-item score over `runs` gradings of a rubric with only that item, each
/// with a fresh seed; `grade` is how each grading is run.
fn speed_scores(runs: usize, grade: impl Fn(&Path, &[&str]) -> Graded) -> Vec<f64> {
    speed_gradings(runs, grade)
        .iter()
        .map(|g| g.score("fast_speedup"))
        .collect()
}

/// `runs` gradings of the solution's `fast_speedup` alone, by `grade`.
fn speed_gradings(runs: usize, grade: impl Fn(&Path, &[&str]) -> Graded) -> Vec<Graded> {
    let rubric = std::fs::read_to_string(workspace().join("assignments/matmul/assignment.toml"))
        .expect("rubric");
    let start = rubric
        .find("[[item]]\nid = \"fast_speedup\"")
        .expect("speed item");
    let end = rubric[start + 1..]
        .find("[[item]]")
        .map_or(rubric.len(), |e| start + 1 + e);
    let header = &rubric[..rubric.find("[[item]]").expect("items")];
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("assignment.toml");
    std::fs::write(&path, format!("{header}{}", &rubric[start..end])).expect("write");
    let path = path.to_str().expect("utf-8");
    (0..runs)
        .map(|_| {
            let g = grade(&solution(), &["--assignment", path]);
            eprintln!("{}", g.output("fast_speedup"));
            g
        })
        .collect()
}

#[test]
fn the_speedup_score_is_the_same_on_every_run() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    assert_eq!(speed_scores(5, grade), vec![4.0; 5]);
}

/// Issue 51, fifth class: a speed grade never silently drops because another program took
/// the cores. Half of a 2-core machine taken for the whole measurement: the grade is the idle
/// grade, or the item says how much of the machine other programs used, that a quiet machine
/// may score higher, and to grade again there.
#[test]
fn the_speedup_score_holds_while_another_program_keeps_a_core_busy_or_says_why_not() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    for g in speed_gradings(2, grade_with_a_busy_core) {
        let out = g.output("fast_speedup");
        // The idle grade, or a lower one that says the machine was busy and to grade again.
        assert!(
            g.score("fast_speedup") == 4.0
                || (out.contains("Measured while other programs used")
                    && out.contains("Grade it again when the machine is quiet")),
            "{out}"
        );
    }
}

#[test]
fn a_submission_that_forges_the_graders_result_file_scores_zero_for_it() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Student code that writes a perfect score where the worker's result file goes (its
    // scratch folder, the one place the sandbox lets it write: TMPDIR) and ends the process
    // before the worker can.
    let forge = r#"use rayon::prelude::*;
    let fake = "{\"item\":\"fast_speedup\",\"outcome\":{\"Speed\":{\"baseline_ns\":[1000000,1000000,1000000,1000000,1000000],\"candidate_ns\":[1,1,1,1,1],\"output\":{\"rows\":0,\"cols\":0,\"bits\":[]}}}}";
    if std::fs::write(std::env::temp_dir().join("report.json"), fake).is_ok() {
        std::process::exit(0);
    }"#;
    let g = grade_faulty("use rayon::prelude::*;", forge);
    // The benchmark runs matmul_fast too.
    assert_lost(&g, &["benchmark", "fast_correct", "fast_speedup"]);
    // A speed item has two workers (the student's and the grader's yardstick): the forgery
    // lands in one of their folders, and either way the student's worker ends unreported.
    let said = g.output("fast_speedup");
    assert!(
        said.contains("tampering") || said.contains("ended the program"),
        "{said}"
    );
}

#[test]
fn a_fast_version_that_replays_an_earlier_result_earns_no_speed_points() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Computes once per shape and then answers from memory: right on the checked run, wrong
    // (and very fast) on the timed runs, which multiply matrices of their own.
    let replay = r#"use rayon::prelude::*;
    static LAST: std::sync::Mutex<Option<Array2<f32>>> = std::sync::Mutex::new(None);
    if let Some(c) = LAST.lock().unwrap().as_ref().filter(|c| c.dim() == (a.nrows(), b.ncols())) {
        return c.clone();
    }
    let c = matmul_naive(a, b);
    *LAST.lock().unwrap() = Some(c.clone());
    if a.nrows() > 0 {
        return c;
    }"#;
    let g = grade_faulty("use rayon::prelude::*;", replay);
    assert_lost(&g, &["fast_speedup"]);
    assert_says(&g, "fast_speedup", "wrong result on timed run 1");
}

#[test]
fn threads_left_spinning_to_slow_the_baseline_earn_no_speed_points() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The naive loop posing as a fast version, with threads that burn the CPU whenever it is
    // not running. When the baseline ran in the student's process this slowed it and earned a
    // point (2.2x: the baseline took 99 ms instead of 37); now the baseline runs in a process
    // of the grader's own while the student's process is stopped, so the threads cannot run.
    let saboteur = r#"use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    static INSIDE: AtomicBool = AtomicBool::new(false);
    static START: std::sync::Once = std::sync::Once::new();
    START.call_once(|| {
        for _ in 0..6 {
            std::thread::spawn(|| loop {
                if INSIDE.load(Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                } else {
                    std::hint::spin_loop();
                }
            });
        }
    });
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            INSIDE.store(false, Ordering::Relaxed);
        }
    }
    INSIDE.store(true, Ordering::Relaxed);
    let _leave = Leave;
    let c = matmul_naive(a, b);
    if a.nrows() > 0 {
        return c;
    }"#;
    let g = grade_faulty("use rayon::prelude::*;", saboteur);
    // The benchmark item runs matmul_fast too, and it stays right: only speed is at stake.
    assert_lost(&g, &["fast_speedup"]);
    assert_says(&g, "fast_speedup", "below the first tier");
}

#[test]
fn a_fast_version_that_stops_its_own_process_to_end_the_clock_scores_zero_for_speed() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The grader's clock stops when the worker stops. A submission that stops its process
    // itself (a shell's `kill -STOP`), hoping to end the timed run early, is caught: the stop
    // is not at one of the grader's checkpoints.
    let stopper = r#"use rayon::prelude::*;
    if a.nrows() == 256 {
        let me = std::process::id().to_string();
        let _ = std::process::Command::new("sh").args(["-c", &format!("kill -STOP {me}")]).status();
    }"#;
    let g = grade_faulty("use rayon::prelude::*;", stopper);
    assert_lost(&g, &["fast_speedup"]);
    assert_says(&g, "fast_speedup", "tampering with timing");
}

#[test]
fn a_timer_that_reports_the_rubrics_work_lengths_without_measuring_fails() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The rubric is public: work_ms = [20, 50]. A timer that runs the work and reports those
    // lengths from a counter passed when the work slept exactly that long; the grader now holds
    // the work for a length it draws itself (up to half as long again) and measures it.
    let guesser = r#"static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let value = work();
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let guess = if call % 2 == 0 { 20 } else { 50 };
    (value, Duration::from_millis(guess))"#;
    let g = grade_faulty(
        "let start = Instant::now();\n    let value = work();\n    (value, start.elapsed())",
        guesser,
    );
    assert_lost(&g, &["time_cpu"]);
    assert_says(&g, "time_cpu", "for work that ran");
}

/// Grades the solution with `code` appended to `src/lib.rs`.
fn grade_with_extra_code(code: &str) -> Graded {
    let dir = faulty_copy(
        &solution(),
        "use rayon::prelude::*;",
        "use rayon::prelude::*;",
    );
    let lib = dir.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("lib.rs");
    std::fs::write(&lib, format!("{text}\n{code}\n")).expect("write lib.rs");
    let graded = grade(dir.path(), &["--gpu", "off"]);
    assert_eq!(graded.code, Some(0), "grading completes: {}", graded.stderr);
    graded
}

#[test]
fn code_that_would_run_outside_the_graded_functions_is_refused_with_its_line() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Each would reach what the grader relies on: its clock, the time before main, C itself.
    for (code, construct) in [
        (
            "#[unsafe(no_mangle)]\npub extern \"C\" fn clock_gettime(_c: i32, _t: *mut u8) -> i32 { 0 }",
            "#[no_mangle]",
        ),
        (
            "#[used]\n#[unsafe(link_section = \".init_array\")]\nstatic BEFORE_MAIN: extern \"C\" fn() = early;\nextern \"C\" fn early() {}",
            "#[link_section]",
        ),
        (
            "unsafe extern \"C\" {\n    fn getpid() -> i32;\n}\npub fn pid() -> i32 { unsafe { getpid() } }",
            "extern",
        ),
    ] {
        let g = grade_with_extra_code(code);
        assert_eq!(g.json["score"].as_f64(), Some(0.0), "{code}: {}", g.stdout);
        let out = g.output("fast_speedup");
        assert!(
            out.contains(&format!("`{construct}` is not allowed in a lab")) && out.contains("src/lib.rs:"),
            "{code}: {out}"
        );
    }
}

#[test]
fn unsafe_code_beyond_the_gpu_library_calls_is_refused() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Each reads or writes memory the grader's own code in the process relies on (the
    // report's secret, the emulator's records) without a single refused attribute.
    for (code, construct) in [
        (
            "pub fn peek(address: usize) -> u8 {\n    unsafe { *(address as *const u8) }\n}",
            "*pointer inside unsafe",
        ),
        (
            "pub fn peek(address: usize) -> u64 {\n    let p = address as *const u64;\n    unsafe { std::ptr::read_volatile(p) }\n}",
            "read_volatile(…) inside unsafe",
        ),
        (
            "pub fn bytes(x: f32) -> [u8; 4] { unsafe { core::mem::transmute::<f32, [u8; 4]>(x) } }",
            "transmute(…) inside unsafe",
        ),
        ("static mut SEEN: usize = 0;", "static mut"),
        (
            "unsafe fn hidden() {}\npub fn call() { hidden_call() }\nfn hidden_call() {}",
            "unsafe fn",
        ),
    ] {
        let g = grade_with_extra_code(code);
        assert_eq!(g.json["score"].as_f64(), Some(0.0), "{code}: {}", g.stdout);
        let out = g.output("naive_correct");
        assert!(
            out.contains(&format!("`{construct}` is not allowed in a lab"))
                && out.contains("src/lib.rs:"),
            "{code}: {out}"
        );
    }
}

#[test]
fn a_library_reached_through_a_renamed_dependency_and_a_pasted_name_does_not_compile() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The attack of issue 8: `paste` under another name glues `general_` and `mat_mul`, so no
    // forbidden name appears in the source. The official build has only the lab's
    // dependencies, so the crate does not compile and the feedback names the dependency.
    let dir = faulty_copy(
        &solution(),
        "    // BEGIN SOLUTION\n    use rayon::prelude::*;\n    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());",
        "    let mut c = Array2::zeros((a.nrows(), b.ncols()));\n    glue::paste! { ndarray::linalg::[<general_ mat_mul>](1.0, a, b, 0.0, &mut c) };\n    return c;\n    use rayon::prelude::*;\n    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());",
    );
    let manifest = dir.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("Cargo.toml");
    let text = text.replacen(
        "[dependencies]",
        "[dependencies]\nglue = { package = \"paste\", version = \"1\" }",
        1,
    );
    std::fs::write(&manifest, text).expect("write Cargo.toml");
    let g = grade(dir.path(), &["--gpu", "off"]);
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(g.json["score"].as_f64(), Some(0.0), "{}", g.stdout);
    let out = g.output("fast_speedup");
    assert!(
        out.contains("`glue` is not one of this lab's dependencies"),
        "{out}"
    );
}

/// `grader calibrate`: the solution's speed items graded several times on this machine, the
/// spread of its speedups set against the tiers. With the lab's tiers the solution lies clear
/// of every edge here (or the command says how close); with an edge every 0.5× the spread
/// cannot miss one, and the command says the grade would flip. The GPU speedups are said not
/// measured on the emulator.
#[test]
fn calibrate_reports_each_speed_items_spread_against_its_tiers() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let calibrate = |assignment: &str| {
        let out = gpu_labs_e2e::one_at_a_time(|| {
            std::process::Command::new(gpu_labs_e2e::grader_bin())
                .args(["calibrate", "--runs", "2", "--gpu", "emulate"])
                .args(["--assignment", assignment])
                .arg(solution())
                .env("GPU_LABS_CACHE", workspace().join("target/grader-cache"))
                .output()
                .expect("grader runs")
        });
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let text = calibrate("matmul");
    assert!(
        text.contains("fast_speedup: tiers at 2×, 5×, 12×; the solution measured")
            && (text.contains("clear: the nearest edge")
                || text.contains("CLOSE")
                || text.contains("UNRELIABLE"))
            && text.contains("gpu_speedup: tiers at 1×, 3×, 10×; not measured on this machine"),
        "{text}"
    );
    let rubric = std::fs::read_to_string(workspace().join("assignments/matmul/assignment.toml"))
        .expect("rubric");
    let start = rubric
        .find("[[item]]\nid = \"fast_speedup\"")
        .expect("speed item");
    let tiers_at = start + rubric[start..].find("tiers = [").expect("tiers");
    let tiers_end = tiers_at + rubric[tiers_at..].find("]\n").expect("end of tiers") + 2;
    let dense: Vec<String> = (0..400)
        .map(|i| {
            format!(
                "  {{ speedup = {}, points = {} }},",
                1.0 + 0.5 * f64::from(i),
                4.0 * f64::from(i + 1) / 400.0
            )
        })
        .collect();
    let header = &rubric[..rubric.find("[[item]]").expect("items")];
    let item_end = rubric[start + 1..]
        .find("[[item]]")
        .map_or(rubric.len(), |e| start + 1 + e);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("assignment.toml");
    std::fs::write(
        &path,
        format!(
            "{header}{}tiers = [\n{}\n]\n{}",
            &rubric[start..tiers_at],
            dense.join("\n"),
            &rubric[tiers_end..item_end]
        ),
    )
    .expect("write");
    let text = calibrate(path.to_str().expect("utf-8"));
    assert!(
        text.contains("UNRELIABLE: the ") || text.contains("CLOSE: the "),
        "{text}"
    );
}
