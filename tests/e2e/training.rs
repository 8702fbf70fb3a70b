//! End-to-end: `grader grade` on the training lab. The solution and an independently written
//! correct fixture score full marks, the template scores zero with "not implemented"
//! everywhere, and faulty copies of the solution lose exactly the items their mistake breaks,
//! each with the specific diagnosis, over the whole lab. The table of mistakes graded on eight
//! seeds is `tests/e2e/training_mistakes.rs`.

use gpu_labs_e2e::harness::{harnesses, Harness};
use gpu_labs_e2e::{
    assert_says, faulty_copy_edits, faulty_copy_of, grade, workspace, Graded, HOST_STEP,
};
use std::path::PathBuf;

fn solution() -> PathBuf {
    workspace().join("solutions/training")
}

/// Grades the solution with one piece of `file` replaced; asserts the grading completed. A
/// mistake in the CPU part (`src/lib.rs`) is graded with `--gpu off`: the GPU items, which do
/// not use that code, are skipped (out of the maximum), which keeps these runs short; the CPU
/// fallback still runs.
fn grade_faulty(file: &str, find: &str, replace: &str) -> Graded {
    let dir = faulty_copy_of(&solution(), file, find, replace);
    let gpu = if file == "src/gpu.rs" {
        "emulate"
    } else {
        "off"
    };
    let graded = grade(dir.path(), &["--gpu", gpu]);
    assert_eq!(graded.code, Some(0), "grading completes: {}", graded.stderr);
    graded
}

/// Asserts that every item in `must` is lost and nothing outside `must` and `may` is: `may`
/// are the items downstream of the mistake whose outcome depends on how much it hurts
/// training (a wrong ReLU gradient may still learn the toy set).
fn assert_lost_within(graded: &Graded, must: &[&str], may: &[&str]) {
    let lost = graded.lost();
    for id in must {
        assert!(
            lost.iter().any(|l| l == id),
            "{id} should be lost:\n{}",
            graded.stdout
        );
    }
    for id in &lost {
        assert!(
            must.contains(&id.as_str()) || may.contains(&id.as_str()),
            "{id} should not be lost:\n{}",
            graded.stdout
        );
    }
}

#[test]
fn the_solution_scores_full_marks_and_the_whole_lab_grades_in_two_minutes() {
    let started = std::time::Instant::now();
    let graded = grade(&solution(), &[]);
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(
        graded.json["extra_data"]["max_score"].as_f64(),
        Some(44.0),
        "{}",
        graded.stdout
    );
    assert_eq!(
        graded.json["score"], graded.json["extra_data"]["max_score"],
        "{}",
        graded.stdout
    );
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("graded the training solution (build included) in {seconds:.1} s");
    assert!(seconds < 120.0, "grading took {seconds:.0} s");
}

#[test]
fn an_independently_written_solution_scores_full_marks() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // tests/fixtures/training_alternative: written apart from the solution (explicit loops,
    // its own softmax and shuffle), in the template's crate.
    let dir = gpu_labs_e2e::copy_with_sources(
        &workspace().join("templates/training"),
        &workspace().join("tests/fixtures/training_alternative/src"),
    );
    let graded = grade(dir.path(), &[]);
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(
        graded.json["score"].as_f64(),
        Some(44.0),
        "{}",
        graded.stdout
    );
}

#[test]
fn the_template_scores_zero_and_every_item_says_not_implemented() {
    let graded = grade(&workspace().join("templates/training"), &[]);
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_eq!(graded.json["score"].as_f64(), Some(0.0));
    for test in graded.json["tests"].as_array().expect("tests") {
        let output = test["output"].as_str().unwrap_or("");
        if test["extra_data"]["item"] == "gpu_speedup" {
            // Measured only on a real GPU: on the emulator it is left out, and says why.
            assert!(output.contains("needs a real GPU"), "{output}");
            continue;
        }
        assert!(output.contains("not implemented yet"), "{output}");
        assert!(!output.contains("backtrace"), "{output}");
    }
}

#[test]
fn a_relu_gradient_that_multiplies_by_x_loses_relu_backward() {
    let g = grade_faulty(
        "src/layers.rs",
        "if v > 0.0 { g } else { 0.0 }",
        "if v > 0.0 { g * v } else { 0.0 }",
    );
    // The models compose the student's own relu_backward right: they keep their points.
    assert_lost_within(&g, &["relu_backward"], &[]);
    assert_says(&g, "relu_backward", "`output`[");
    assert_says(&g, "mlp", "compose your own layers, activations and losses");
}

#[test]
fn a_missing_bias_gradient_is_named() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "src/layers.rs",
        "self.bias_grad += &grad_output.sum_axis(Axis(0));",
        "",
    );
    // The loop items run the grader's own model, and the models are also judged by the
    // student's own pieces: the mistake costs the layer's item alone.
    assert_lost_within(&g, &["linear_backward"], &[]);
    assert_says(&g, "linear_backward", "bias_grad did not change");
    assert_says(&g, "simple_nn", "their own items charge for that");
}

#[test]
fn a_model_cannot_earn_its_points_by_composing_pieces_that_do_nothing() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // A model is also judged by the same pass written out from the student's own pieces, so
    // that a wrong layer costs only the layer's item. A layer whose forward returns zeros
    // makes every output the same: that shows nothing about the model, which keeps failing.
    let dir = faulty_copy_of(
        &solution(),
        "src/layers.rs",
        "        x.dot(&self.weight.t()) + &self.bias\n",
        "        Array2::zeros((x.nrows(), self.weight.nrows()))\n",
    );
    let g = grade(
        dir.path(),
        &[
            "--gpu",
            "off",
            "--only",
            "linear_forward",
            "--only",
            "simple_nn",
            "--only",
            "mlp",
        ],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(
        g.lost(),
        ["linear_forward", "mlp", "simple_nn"],
        "{}",
        g.stdout
    );
}

#[test]
fn a_sign_flipped_loss_gradient_is_named() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let g = grade_faulty(
        "src/losses.rs",
        "        row[label] -= 1.0 / n;\n    }\n    grad",
        "        row[label] -= 1.0 / n;\n    }\n    -grad",
    );
    assert_lost_within(&g, &["cross_entropy_grad"], &[]);
    assert_says(&g, "cross_entropy_grad", "wrong sign");
}

#[test]
fn a_bias_gradient_added_with_plain_plus_equals_races_and_loses_the_gpu_epochs() {
    // Threads stride over every element of the gradient and add into bias_grad[column] with
    // `+=`: the emulator's sequential threads get the right sums, a GPU loses updates. The
    // race check of the correctness runs fails both GPU epochs, with the race and the hint.
    let g = grade_faulty(
        "src/gpu.rs",
        "    int c = blockIdx.x * blockDim.x + threadIdx.x;\n    if (c < cols) {\n        float sum = 0.0f;\n        for (int r = 0; r < rows; ++r) {\n            sum += grad[(long long)r * cols + c];\n        }\n        bias_grad[c] += sum;\n    }",
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n    for (int i = t; i < rows * cols; i += gridDim.x * blockDim.x) {\n        bias_grad[i % cols] += grad[i];\n    }",
    );
    // train_on's GPU branch runs the same kernel.
    assert_lost_within(
        &g,
        &["gpu_epoch_simple_nn", "gpu_epoch_mlp", "train_on_gpu"],
        &[],
    );
    for id in ["gpu_epoch_simple_nn", "gpu_epoch_mlp", "train_on_gpu"] {
        assert_says(&g, id, "kernel `bias_grad` is a data race: thread (");
        assert_says(&g, id, "use atomicAdd");
    }
}

/// The attack the replay closes: the whole epoch trained on the host, from what the host
/// had before it (the data, the batches and the starting layers, kept by `to_device`,
/// `DeviceDataLoader::new` and `GpuModel::to_device`, which the harness calls before its
/// first mark), uploaded negated (no value uploaded is a parameter) and turned back by a
/// kernel, next to every real step run with a learning rate of 0 (the cuBLAS calls and
/// launches an epoch makes). Nothing in the counts or the provenance tells it apart.
const HOST_EPOCH: [(&str, &str); 5] = [
    (
        "        let stream = data.x.stream();\n        let mut flat = Vec::with_capacity(batches.iter().map(Vec::len).sum());",
        "        *KEPT_BATCHES.lock().unwrap() = batches.to_vec();\n        let stream = data.x.stream();\n        let mut flat = Vec::with_capacity(batches.iter().map(Vec::len).sum());",
    ),
    (
        "    let (rows, cols) = x.dim();\n    if labels.len() != rows {",
        "    *KEPT_DATA.lock().unwrap() = Some((x.clone(), labels.to_vec()));\n    let (rows, cols) = x.dim();\n    if labels.len() != rows {",
    ),
    (
        "        let layer1 = GpuLinear::to_device(first, stream)?;",
        "        *KEPT_LAYERS.lock().unwrap() = vec![(**first).clone(), (**second).clone()];\n        let layer1 = GpuLinear::to_device(first, stream)?;",
    ),
    (
        "    let stream = model.stream.clone();\n    let mut loss_sum = stream.alloc_zeros::<f32>(1)?;\n    let count = launch_epoch(model, loader, lr, &mut loss_sum)?;\n    mean_loss(&stream, &loss_sum, count)",
        r#"    let stream = model.stream.clone();
    let mut loss_sum = stream.alloc_zeros::<f32>(1)?;
    launch_epoch(model, loader, 0.0, &mut loss_sum)?;
    let (x, labels) = KEPT_DATA.lock().unwrap().clone().ok_or("no data kept")?;
    let batches = KEPT_BATCHES.lock().unwrap().clone();
    let mut kept = std::mem::take(&mut *KEPT_LAYERS.lock().unwrap());
    let mut rng = <crate::StdRng as crate::SeedableRng>::seed_from_u64(0);
    let mut cpu: Box<dyn Model> = match model.head {
        Head::Sigmoid => Box::new(crate::SimpleNN::new(model.layer1.inputs, &mut rng)),
        Head::Softmax => Box::new(crate::Mlp::new(&mut rng)),
    };
    for (mine, k) in cpu.layers_mut().into_iter().zip(kept.iter_mut()) {
        std::mem::swap(mine, k);
    }
    let loss = crate::train_epoch(&mut *cpu, &mut Sgd { lr }, &x, &labels, &batches);
    let ptx = compile_ptx("extern \"C\" __global__ void negate(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = -a[i]; }")?;
    let negate = stream.context().load_module(ptx)?.load_function("negate")?;
    let trained = cpu.layers_mut();
    for (gpu, host) in [&mut model.layer1, &mut model.layer2].into_iter().zip(trained) {
        for (dst, values) in [(&mut gpu.weight, row_major(&host.weight)), (&mut gpu.bias, host.bias.to_vec())] {
            let up = stream.clone_htod(&values.iter().map(|v| -v).collect::<Vec<f32>>())?;
            let n = int(values.len())?;
            let mut launch = stream.launch_builder(&negate);
            launch.arg(&up).arg(dst).arg(&n);
            let config = cover(values.len())?;
            unsafe { launch.launch(config) }?;
        }
    }
    stream.synchronize()?;
    Ok(loss)"#,
    ),
    (
        "use std::time::{Duration, Instant};",
        "use std::time::{Duration, Instant};\n\nstatic KEPT_DATA: Mutex<Option<(Array2<f32>, Vec<usize>)>> = Mutex::new(None);\nstatic KEPT_BATCHES: Mutex<Vec<Vec<usize>>> = Mutex::new(Vec::new());\nstatic KEPT_LAYERS: Mutex<Vec<Linear>> = Mutex::new(Vec::new());",
    ),
];

#[test]
fn an_epoch_trained_on_the_host_and_passed_through_a_kernel_loses_the_gpu_epochs() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let dir = gpu_labs_e2e::faulty_copy_edits(&solution(), "src/gpu.rs", &HOST_EPOCH);
    let (_rubric_dir, rubric) =
        gpu_labs_e2e::rubric_with("training", &["gpu_epoch_mlp", "train_on_gpu"]);
    let g = grade(
        dir.path(),
        &[
            "--gpu",
            "emulate",
            "--assignment",
            rubric.to_str().expect("a UTF-8 path"),
        ],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(g.lost(), ["gpu_epoch_mlp", "train_on_gpu"], "{}", g.stdout);
    for id in ["gpu_epoch_mlp", "train_on_gpu"] {
        assert_says(&g, id, "the parameters did not follow them");
        assert_says(
            &g,
            id,
            "Parameters trained on the CPU and only passed through the GPU",
        );
    }
}

#[test]
fn on_a_real_gpu_the_tracer_sees_the_host_step_too() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The emulator posing as a GPU stands for the real driver and cuBLAS, with the tracer in
    // front as on hardware: the bytes it counted are all the grader sees.
    let dir = faulty_copy_of(&solution(), "src/gpu.rs", HOST_STEP.0, HOST_STEP.1);
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("training", &["gpu_epoch_mlp"]);
    let g = gpu_labs_e2e::grade_with_env(
        dir.path(),
        &[
            "--gpu",
            "real",
            "--assignment",
            rubric.to_str().expect("a UTF-8 path"),
        ],
        &[("GPU_LABS_EMULATOR_AS_REAL", "1")],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(g.stderr.contains("; device work traced"), "{}", g.stderr);
    assert_eq!(g.lost(), ["gpu_epoch_mlp"], "{}", g.stdout);
    assert_says(&g, "gpu_epoch_mlp", "went through the host");
}

#[test]
fn the_gpu_speedup_path_runs_end_to_end_on_the_emulator_posing_as_a_gpu() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Only the plumbing is checked (both workers timed, the losses compared, the tiers
    // applied): an emulator's "speedup" means nothing.
    let rubric = std::fs::read_to_string(workspace().join("assignments/training/assignment.toml"))
        .expect("the training rubric");
    let head = &rubric[..rubric.find("[[item]]").expect("items")];
    let item = &rubric[rubric.find("id = \"gpu_speedup\"").expect("the speed item")..];
    // The rubric's sizes (hidden 1024, 4096 examples): posing, the grader times a quarter of
    // each (784→256→10 on 1024 examples).
    let small = format!("{head}[[item]]\n{item}");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("speed.toml");
    std::fs::write(&path, small).expect("write the rubric");
    let g = gpu_labs_e2e::grade_with_env(
        &solution(),
        &[
            "--gpu",
            "real",
            "--assignment",
            path.to_str().expect("a UTF-8 path"),
        ],
        &[("GPU_LABS_EMULATOR_AS_REAL", "1")],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert_eq!(g.item("gpu_speedup")["max_score"].as_f64(), Some(2.0));
    let out = g.output("gpu_speedup");
    assert!(
        out.contains("784→256→10")
            && out.contains("as fast as the grader's CPU epoch")
            && out.contains("posing as a real GPU"),
        "{out}"
    );
}

/// Eight seeds for the epoch items: 1 and 2, and six on which a correct f32 loop once took
/// the other side of a ReLU kink from the f64 reference (measured when the loop ran the
/// student's own model: 23, 43 and 47 in the MLP's epoch, 39 in `train_epoch`, 29, 39 and 60
/// in `cpu_fallback`).
const EPOCH_SEEDS: [u64; 8] = [1, 2, 23, 29, 39, 43, 47, 60];

/// For each of [`EPOCH_SEEDS`], whether `train_epoch` passed for the built crate (the loop
/// against the reference trajectory; `cpu_fallback` is judged by the student's own epoch, and
/// tests/e2e/training_mistakes.rs watches it).
fn epochs_on_eight_seeds(built: &Harness) -> Vec<(u64, bool)> {
    gpu_labs_e2e::on_every_core(&EPOCH_SEEDS, |&seed| {
        let g = built.grade("off", Some(seed), &["train_epoch"]);
        let max = g.item("train_epoch")["max_score"].as_f64().unwrap_or(-1.0);
        (seed, g.score("train_epoch") == max)
    })
}

/// The solution's loop body, as the variants below rewrite it.
const LOOP: &str = "        model.zero_grad();\n        let out = model.forward(&x);\n        total += f64::from(model.loss(&out, &y));\n        model.backward(&out, &y);\n        optimizer.step(&mut model.layers_mut());\n";

#[test]
fn the_epoch_tolerance_separates_right_from_wrong_on_every_seed() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // Right, four loops written differently: the solution; the independent fixture; rows
    // gathered by hand and the losses kept in f32 and summed last to first; gradients zeroed
    // after each step instead of before (they start at zero).
    let fixture = gpu_labs_e2e::copy_with_sources(
        &solution(),
        &workspace().join("tests/fixtures/training_alternative/src"),
    );
    let by_hand = faulty_copy_edits(
        &solution(),
        "src/data_loop.rs",
        &[
            (
                "        let x = inputs.select(Axis(0), batch);\n",
                "        let mut x = Array2::<f32>::zeros((batch.len(), inputs.ncols()));\n        for (r, &i) in batch.iter().enumerate() {\n            x.row_mut(r).assign(&inputs.row(i));\n        }\n",
            ),
            (
                "        total += f64::from(model.loss(&out, &y));\n",
                "        losses.push(model.loss(&out, &y));\n        let _ = total;\n",
            ),
            (
                "    (total / batches.len().max(1) as f64) as f32\n",
                "    losses.iter().rev().sum::<f32>() / losses.len().max(1) as f32\n",
            ),
            (
                "    let mut total = 0.0f64;\n",
                "    let total = 0.0f64;\n    let mut losses: Vec<f32> = Vec::new();\n",
            ),
        ],
    );
    let zero_after = faulty_copy_of(
        &solution(),
        "src/data_loop.rs",
        LOOP,
        "        let out = model.forward(&x);\n        total += f64::from(model.loss(&out, &y));\n        model.backward(&out, &y);\n        optimizer.step(&mut model.layers_mut());\n        model.zero_grad();\n",
    );
    // Wrong, the smallest loop mistake: the last batch never steps (one step of 63 missing).
    let last_unstepped = faulty_copy_of(
        &solution(),
        "src/data_loop.rs",
        "        optimizer.step(&mut model.layers_mut());\n    }\n    (total",
        "        if !std::ptr::eq(batch, &batches[batches.len() - 1]) {\n            optimizer.step(&mut model.layers_mut());\n        }\n    }\n    (total",
    );
    let solution = solution();
    let right = [
        solution.as_path(),
        fixture.path(),
        by_hand.path(),
        zero_after.path(),
    ];
    let mut built = harnesses(
        "training-epoch-tolerance",
        "training",
        &[&right[..], &[last_unstepped.path()]].concat(),
    );
    let last_unstepped = built.pop().expect("the wrong loop, built");
    for (dir, built) in right.iter().zip(&built) {
        for (seed, passed) in epochs_on_eight_seeds(built) {
            assert!(
                passed,
                "{}: seed {seed}: a right loop failed train_epoch",
                dir.display()
            );
        }
    }
    for (seed, passed) in epochs_on_eight_seeds(&last_unstepped) {
        assert!(
            !passed,
            "seed {seed}: a loop whose last batch never steps must lose train_epoch"
        );
    }
    // A model's mistake (SimpleNN's backward without the sigmoid's derivative) costing no loop
    // item is a row of tests/e2e/training_mistakes.rs, graded there on these items and seeds.
}

/// Whether each of `items` passed for the built crate on seeds 1–4 (graded on those items
/// only).
fn passes_on_four_seeds(built: &Harness, items: &[&str]) -> Vec<(u64, Vec<bool>)> {
    gpu_labs_e2e::on_every_core(&[1, 2, 3, 4], |&seed| {
        let g = built.grade("off", Some(seed), items);
        let passed = items
            .iter()
            .map(|id| g.score(id) == g.item(id)["max_score"].as_f64().unwrap_or(-1.0))
            .collect();
        (seed, passed)
    })
}

#[test]
fn elementwise_items_test_relu_at_exactly_zero_and_the_sigmoid_where_it_overflows() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    const ITEMS: &[&str] = &["relu", "relu_backward", "sigmoid"];
    let fixture = gpu_labs_e2e::copy_with_sources(
        &solution(),
        &workspace().join("tests/fixtures/training_alternative/src"),
    );
    // ReLU's gradient passed at exactly 0 (x >= 0): random inputs never hit 0.
    let at_zero = faulty_copy_of(
        &solution(),
        "src/layers.rs",
        ".map_collect(|&g, &v| if v > 0.0 { g } else { 0.0 })",
        ".map_collect(|&g, &v| if v >= 0.0 { g } else { 0.0 })",
    );
    // The sigmoid as e^x / (1 + e^x) everywhere: ∞/∞ at x = 100.
    let naive = faulty_copy_of(
        &solution(),
        "src/layers.rs",
        "        if v >= 0.0 {\n            1.0 / (1.0 + (-v).exp())\n        } else {\n            let e = v.exp();\n            e / (1.0 + e)\n        }",
        "        let e = v.exp();\n        e / (1.0 + e)",
    );
    let solution = solution();
    let right = [solution.as_path(), fixture.path()];
    let built = harnesses(
        "training-elementwise",
        "training",
        &[right[0], right[1], at_zero.path(), naive.path()],
    );
    for (dir, built) in right.iter().zip(&built) {
        for (seed, passed) in passes_on_four_seeds(built, ITEMS) {
            assert!(
                passed.iter().all(|p| *p),
                "{}: seed {seed}: {passed:?}",
                dir.display()
            );
        }
    }
    for (seed, passed) in passes_on_four_seeds(&built[2], ITEMS) {
        assert_eq!(passed, [true, false, true], "ReLU at 0, seed {seed}");
    }
    for (seed, passed) in passes_on_four_seeds(&built[3], ITEMS) {
        assert_eq!(passed, [true, true, false], "naive sigmoid, seed {seed}");
    }
}

#[test]
fn items_graded_at_once_give_the_report_that_one_at_a_time_gives() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // A copy whose GPU step adds 0.5 to one bias gradient: it loses the GPU epochs and keeps
    // the rest (the GPU loop is judged against its own pieces). Items that pass, items
    // that fail, CPU and emulated GPU items, graded one at a time and three at once on one
    // seed. Each item is its own worker with its own limits, so its result cannot depend on
    // what ran beside it.
    let dir = faulty_copy_of(
        &solution(),
        "src/gpu.rs",
        "        bias_grad[c] += sum;",
        "        bias_grad[c] += sum;\n        if (c == 0) { bias_grad[c] += 0.5f; }",
    );
    let graded = |jobs: &str| {
        let g = grade(
            dir.path(),
            &["--gpu", "emulate", "--seed", "11", "--jobs", jobs],
        );
        assert_eq!(g.code, Some(0), "{}", g.stderr);
        g
    };
    let (alone, at_once) = (graded("1"), graded("3"));
    let items = |g: &Graded| -> Vec<(String, String, String, String)> {
        g.json["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .map(|t| {
                let item = t["extra_data"]["item"].to_string();
                // The timer's feedback quotes the times it measured, which vary run to run.
                let output = if item.contains("time_gpu_epoch") {
                    String::new()
                } else {
                    t["output"].to_string()
                };
                (
                    item,
                    t["score"].to_string(),
                    t["status"].to_string(),
                    output,
                )
            })
            .collect()
    };
    assert!(
        !alone.lost().is_empty() && alone.lost().len() < 10,
        "{}",
        alone.stdout
    );
    assert_eq!(
        items(&alone),
        items(&at_once),
        "{}\n{}",
        alone.stdout,
        at_once.stdout
    );
}
