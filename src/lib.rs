//! Support for the end-to-end tests in `tests/`: where the workspace is, and how to make a
//! faulty submission from the reference solution.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

pub mod browser;
pub mod edit;
pub mod harness;
pub mod kit;

/// Whether the full suite runs: `GPU_LABS_FULL=1`, which `.ci/run` sets. The default
/// `cargo test --workspace` is a newcomer's check of the main paths (one solution, one
/// template, one fault of each family, one small batch) and finishes in a few minutes; the
/// full suite adds every fault, every service and every hostile case.
pub fn full_suite() -> bool {
    std::env::var("GPU_LABS_FULL").is_ok_and(|v| v == "1")
}

/// For a test of the full suite only: whether it should return now (the default suite), after
/// saying so on stderr, so a newcomer sees what was left out and how to run it.
pub fn skip_unless_full() -> bool {
    if full_suite() {
        return false;
    }
    eprintln!("skipped: part of the full suite only (GPU_LABS_FULL=1 cargo test --workspace)");
    true
}

/// For a test of the default suite that a full-suite test covers whole (`by`, the test that
/// does): whether it should return now (the full suite), after saying so on stderr. The full
/// suite must fit in CI's 30 minutes, and grading the same submissions twice buys nothing.
pub fn skip_in_full(by: &str) -> bool {
    if !full_suite() {
        return false;
    }
    eprintln!("skipped: the full suite checks all of this and more in {by}");
    true
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the lab crate at `from` to a new temporary folder, replacing in `src/lib.rs` the
/// exact text `find` by `replace` (the text must be in the code once, so a test cannot
/// silently stop testing anything when the solution changes).
pub fn faulty_copy(from: &Path, find: &str, replace: &str) -> tempfile::TempDir {
    faulty_copy_of(from, "src/lib.rs", find, replace)
}

/// [`faulty_copy`] for another file of the crate (`src/gpu.rs`).
pub fn faulty_copy_of(from: &Path, file: &str, find: &str, replace: &str) -> tempfile::TempDir {
    faulty_copy_edits(from, file, &[(find, replace)])
}

/// [`faulty_copy`] with several edits of one file, each `find` there exactly once.
pub fn faulty_copy_edits(from: &Path, file: &str, edits: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("faulty-")
        .tempdir()
        .expect("temp dir");
    edited_copy(from, dir.path(), file, edits);
    dir
}

/// Copies the lab crate at `from` into `to` with `edits` made in `file` (each `find` in its
/// code exactly once, comments aside: see [`edit::apply`]), so a test cannot silently stop
/// testing anything when the crate changes.
pub fn edited_copy(from: &Path, to: &Path, file: &str, edits: &[(&str, &str)]) {
    copy_crate(from, to);
    let path = to.join(file);
    let text = std::fs::read_to_string(&path).expect("the file to change");
    let text = edit::apply(&text, edits).unwrap_or_else(|(index, e)| {
        panic!("edit {} of {file} of {}: {e}", index + 1, from.display())
    });
    std::fs::write(&path, text).expect("write the changed file");
}

/// Copies a lab crate (its Cargo.toml, src/ and tests/) into `to`.
pub fn copy_crate(from: &Path, to: &Path) {
    for sub in ["src", "tests"] {
        copy_dir(&from.join(sub), &to.join(sub));
    }
    let manifest = std::fs::read_to_string(from.join("Cargo.toml")).expect("Cargo.toml");
    // The copy lives elsewhere: point its grader dependency back at this workspace's grader.
    let grader = workspace().join("grader");
    let manifest = manifest.replace(
        "path = \"../../grader\"",
        &format!("path = {:?}", grader.display().to_string()),
    );
    std::fs::write(to.join("Cargo.toml"), manifest).expect("write Cargo.toml");
}

/// A copy of the lab crate at `from` whose `src/` is replaced by the folder `src` (an
/// independently written submission kept as a fixture).
pub fn copy_with_sources(from: &Path, src: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_crate(from, dir.path());
    let to = dir.path().join("src");
    std::fs::remove_dir_all(&to).expect("clear src");
    copy_dir(src, &to);
    dir
}

/// Puts the independently written matmul submission's sources (`tests/fixtures/
/// matmul_alternative/src`: `lib.rs` and `gpu.rs`) over those of the lab crate at `crate_dir`,
/// whose other files (`batched.rs`) stay.
pub fn use_alternative_matmul_sources(crate_dir: &Path) {
    copy_dir(
        &workspace().join("tests/fixtures/matmul_alternative/src"),
        &crate_dir.join("src"),
    );
}

/// Copies the folder `from` into `to`, its files and folders.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

/// The GPU mode of every grading in the tests that names none: the emulator, so that the
/// verdicts are the same on a machine with a GPU (the real-GPU path has tests of its own:
/// `real_gpu_conditions`, `real_gpu_check`).
pub const TEST_GPU_MODE: &str = "emulate";

/// Gradings that compare measured times run alone: speedups are measured, and another grading
/// beside them would disturb them. Gradings of items that compare none (a harness graded on
/// chosen items: [`harness::Harness::grade`]) share the turn with each other, so tables of
/// faulty copies keep both cores busy ([`on_every_core`]).
static ONE_AT_A_TIME: RwLock<()> = RwLock::new(());

/// The turn of a grading that may compare measured times: no other grading of this test
/// binary runs.
pub(crate) fn alone() -> RwLockWriteGuard<'static, ()> {
    ONE_AT_A_TIME.write().unwrap_or_else(|e| e.into_inner())
}

/// The turn of a grading that compares no measured times: only beside others like it.
pub(crate) fn beside_others() -> RwLockReadGuard<'static, ()> {
    ONE_AT_A_TIME.read().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f`, a grading of some other kind (a packaged autograder, say), while no other
/// grading of this test binary runs.
pub fn one_at_a_time<T>(f: impl FnOnce() -> T) -> T {
    let _turn = alone();
    f()
}

/// `f` on every element of `work`, on as many threads as the machine has cores (each takes
/// the next element when it is done), the results in `work`'s order: a table of faulty copies
/// graded on items that compare no measured times takes half the time on two cores.
pub fn on_every_core<T: Sync, R: Send>(work: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(work.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(w) = work.get(i) else { break };
                        mine.push((i, f(w)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The `grader` binary, built by cargo if needed: once per test binary (it does not change
/// while the tests run, and asking cargo again costs most of a second every grading).
pub fn grader_bin() -> PathBuf {
    static GRADER: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    GRADER.get_or_init(build_grader).clone()
}

fn build_grader() -> PathBuf {
    let out = Command::new(env!("CARGO"))
        .args([
            "build",
            "-q",
            "-p",
            "grader",
            "--bin",
            "grader",
            "--message-format=json",
        ])
        .current_dir(workspace())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reports the grader binary")
}

/// What one `grader grade` run produced.
pub struct Graded {
    /// The exit code.
    pub code: Option<i32>,
    /// What it printed.
    pub stdout: String,
    /// Its errors and progress.
    pub stderr: String,
    /// The results.json it wrote (Null if none).
    pub json: Value,
}

impl Graded {
    /// One test of the results.json by id.
    pub fn item(&self, id: &str) -> &Value {
        self.json["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["extra_data"]["item"] == id))
            .unwrap_or_else(|| panic!("no item {id} in {}", self.json))
    }

    /// An item's score.
    pub fn score(&self, id: &str) -> f64 {
        self.item(id)["score"].as_f64().expect("score")
    }

    /// An item's feedback.
    pub fn output(&self, id: &str) -> String {
        self.item(id)["output"]
            .as_str()
            .expect("output")
            .to_string()
    }

    /// Items that earned less than their maximum.
    pub fn lost(&self) -> Vec<String> {
        let mut lost: Vec<String> = self.json["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .filter(|t| t["score"].as_f64() < t["max_score"].as_f64())
            .map(|t| t["extra_data"]["item"].as_str().unwrap_or("").to_string())
            .collect();
        lost.sort();
        lost
    }
}

/// Runs `grader grade PATH --json …` with the workspace's shared build cache.
pub fn grade(path: &Path, extra: &[&str]) -> Graded {
    grade_with_env(path, extra, &[])
}

/// [`grade`] with extra environment variables for the grader. A grading that cannot compare
/// measured times ([`may_compare_times`]) runs beside others like it.
pub fn grade_with_env(path: &Path, extra: &[&str], env: &[(&str, &str)]) -> Graded {
    let _turn = if may_compare_times(extra, env) {
        Ok(alone())
    } else {
        Err(beside_others())
    };
    run_grader(path, extra, env, None)
}

/// The value after `flag` in `args`, every time it is given.
fn flag_values<'a>(args: &[&'a str], flag: &str) -> Vec<&'a str> {
    args.windows(2)
        .filter(|w| w[0] == flag)
        .map(|w| w[1])
        .collect()
}

/// The ids of the items, in every lab's rubric, that compare measured times and are measured
/// without a real GPU: the CPU speedups (a GPU speedup is skipped on the emulator).
fn cpu_speedups() -> &'static [String] {
    static IDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    IDS.get_or_init(read_cpu_speedups)
}

/// [`cpu_speedups`], read from the rubrics (once per test binary).
fn read_cpu_speedups() -> Vec<String> {
    ["matmul", "training"]
        .into_iter()
        .flat_map(rubric_items)
        .filter(|(_, kind)| kind.contains("speedup") && !kind.starts_with("gpu"))
        .map(|(id, _)| id)
        .collect()
}

/// Each item of lab `lab`'s rubric (`assignments/LAB/assignment.toml`), as (id, kind), in order.
pub(crate) fn rubric_items(lab: &str) -> Vec<(String, String)> {
    let path = workspace().join(format!("assignments/{lab}/assignment.toml"));
    let text = std::fs::read_to_string(&path).expect("the lab's rubric");
    let rubric: toml::Table = text.parse().expect("the lab's rubric is TOML");
    rubric["item"]
        .as_array()
        .expect("[[item]]s")
        .iter()
        .map(|item| {
            let field = |key: &str| {
                item[key]
                    .as_str()
                    .expect("an item's id and kind")
                    .to_string()
            };
            (field("id"), field("kind"))
        })
        .collect()
}

/// Whether `grader grade … EXTRA` (with `env`) may grade an item that compares measured times:
/// on a real GPU or `auto`, or with a rubric (the lab's own, or one given by path) or `--only`
/// items that hold a CPU speedup. Anything it cannot tell counts as measuring.
fn may_compare_times(extra: &[&str], env: &[(&str, &str)]) -> bool {
    let gpu = flag_values(extra, "--gpu")
        .last()
        .copied()
        .or_else(|| {
            env.iter()
                .rev()
                .find(|(k, _)| *k == "GRADER_GPU")
                .map(|(_, v)| *v)
        })
        .unwrap_or(TEST_GPU_MODE);
    if !matches!(gpu, "emulate" | "off") {
        return true;
    }
    let speedups = cpu_speedups();
    let only = flag_values(extra, "--only");
    if !only.is_empty() {
        return only.iter().any(|id| speedups.iter().any(|s| s == id));
    }
    match flag_values(extra, "--assignment").last() {
        Some(rubric) if rubric.ends_with(".toml") => {
            std::fs::read_to_string(rubric).map_or(true, |text| {
                text.contains("cpu-speedup")
                    || speedups.iter().any(|s| text.contains(&format!("\"{s}\"")))
            })
        }
        _ => true,
    }
}

/// [`grade_with_env`] with the grader started in `cwd` (an instructor's folder, say).
pub fn grade_from(cwd: &Path, path: &Path, extra: &[&str], env: &[(&str, &str)]) -> Graded {
    let _turn = alone();
    run_grader(path, extra, env, Some(cwd))
}

/// [`grade`] while a thread of this process spins on one core the whole time, as another
/// program on a shared machine would.
pub fn grade_with_a_busy_core(path: &Path, extra: &[&str]) -> Graded {
    use std::sync::atomic::{AtomicBool, Ordering};
    let _turn = alone();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let graded = run_grader(path, extra, &[], None);
        stop.store(true, Ordering::Relaxed);
        graded
    })
}

/// One `grader grade` run; callers hold [`ONE_AT_A_TIME`].
fn run_grader(path: &Path, extra: &[&str], env: &[(&str, &str)], cwd: Option<&Path>) -> Graded {
    let json = tempfile::NamedTempFile::new().expect("temp file");
    let mut command = Command::new(grader_bin());
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let out = command
        .arg("grade")
        .arg(path)
        .arg("--json")
        .arg(json.path())
        .args(extra)
        .env(
            "GPU_LABS_CACHE",
            workspace().join("target").join("grader-cache"),
        )
        .env("GRADER_GPU", TEST_GPU_MODE)
        .envs(env.iter().copied())
        .output()
        .expect("grader runs");
    let text = std::fs::read_to_string(json.path()).unwrap_or_default();
    Graded {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}

/// The matmul solution crate.
pub fn solution() -> PathBuf {
    workspace().join("solutions/matmul")
}

/// Grades the solution with one piece of `src/lib.rs` replaced. The CPU track's faults are
/// graded with `--gpu off`: GPU items are skipped (out of the maximum), which keeps these runs
/// short; the GPU track has its own tests.
pub fn grade_faulty(find: &str, replace: &str) -> Graded {
    let dir = faulty_copy(&solution(), find, replace);
    let graded = grade(dir.path(), &["--gpu", "off"]);
    assert_eq!(graded.code, Some(0), "grading completes: {}", graded.stderr);
    graded
}

/// Asserts that item `id`'s feedback contains `text`, showing the feedback when it does not.
pub fn assert_says(graded: &Graded, id: &str, text: &str) {
    let output = graded.output(id);
    assert!(
        output.contains(text),
        "{id} should say {text:?}; it says:\n{output}"
    );
}

/// Speed items: their points depend on how fast and how busy this machine is, so a fault that
/// is not about speed must not make a test depend on them.
pub const SPEED_ITEMS: [&str; 2] = ["fast_speedup", "gpu_speedup"];

/// Asserts exactly `items` lost points. A speed item not named in `items` is left out of the
/// comparison, but it must still have been measured: a fault elsewhere may not make it fail a
/// correctness check or crash (its feedback then says why it was not timed).
pub fn assert_lost(graded: &Graded, items: &[&str]) {
    let lost: Vec<String> = graded
        .lost()
        .into_iter()
        .filter(|id| items.contains(&id.as_str()) || !SPEED_ITEMS.contains(&id.as_str()))
        .collect();
    assert_eq!(lost, items, "{}", graded.stdout);
    for id in SPEED_ITEMS.iter().filter(|id| !items.contains(id)) {
        let Some(test) = graded.json["tests"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["extra_data"]["item"] == *id))
        else {
            continue;
        };
        let output = test["output"].as_str().unwrap_or("");
        let skipped = test["max_score"].as_f64() == Some(0.0);
        assert!(
            skipped || output.contains(" runs "),
            "{id} was not measured:\n{}",
            graded.stdout
        );
    }
}

/// A copy of lab `lab`'s rubric with only the items `ids` (in a temporary folder, with the
/// path to pass to `--assignment`), for tests about a few items that should not pay for the
/// whole lab's grading.
pub fn rubric_with(lab: &str, ids: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let path = workspace().join(format!("assignments/{lab}/assignment.toml"));
    let rubric = std::fs::read_to_string(&path).expect("the lab's rubric");
    let mut blocks = rubric.split("[[item]]");
    let mut kept = blocks.next().expect("the rubric's head").to_string();
    let mut found = 0;
    for block in blocks {
        let wanted = ids
            .iter()
            .any(|id| block.contains(&format!("\nid = \"{id}\"\n")));
        if wanted {
            kept.push_str("[[item]]");
            kept.push_str(block);
            found += 1;
        }
    }
    assert_eq!(found, ids.len(), "{lab}'s rubric should have items {ids:?}");
    let dir = tempfile::tempdir().expect("temp dir");
    let to = dir.path().join("assignment.toml");
    std::fs::write(&to, kept).expect("write the rubric");
    (dir, to)
}

/// Three ways to pass off host work as GPU work (each caught on the emulator by
/// `tests/e2e/matmul_gpu.rs`), all in one copy of the matmul solution's `src/gpu.rs`: on a real
/// GPU only the tracer catches them.
pub const HOST_WORK: [(&str, &str); 3] = [
    // gpu_correct: no launch at all, a host product uploaded and copied back.
    (
        "    product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"))",
        "    let c = crate::matmul_naive(a, b);\n    let c_dev = upload(stream, &c)?;\n    Ok(Array2::from_shape_vec(c.dim(), stream.clone_dtoh(&c_dev)?)?)",
    ),
    // gpu_tiled_correct: the kernel runs, the host product is returned.
    (
        "    let c = stream.clone_dtoh(&c_dev)?;\n    Ok(Array2::from_shape_vec((shape[0], shape[2]), c)?)\n}",
        "    stream.synchronize()?;\n    drop(c_dev);\n    Ok(crate::matmul_naive(a, b))\n}",
    ),
    // cublas_correct: the gemm runs, a host product passes through the device.
    (
        "unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?;\n    let c = stream.clone_dtoh(&c_dev)?;",
        "unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }?;\n    let host = crate::matmul_naive(a, b);\n    let host_dev = upload(stream, &host)?;\n    let c = stream.clone_dtoh(&host_dev)?;",
    ),
];

/// The natural shortcut for a GPU step, as an edit (find, replace) of the training solution's
/// `src/gpu.rs`: parameters and batch down to the host, the CPU model's step there, the new
/// parameters back up. The results are right; where they were computed is not.
pub const HOST_STEP: (&str, &str) = (
    "        stream.memset_zeros(&mut layer1.weight_grad)?;\n",
    r#"        // The step on the host, with the CPU part of the lab.
        {
            let x = stream.clone_dtoh(&batch.x)?;
            let x = Array2::from_shape_vec((rows, inputs), x[..rows * inputs].to_vec())?;
            let labels: Vec<usize> = stream.clone_dtoh(&batch.labels)?[..rows]
                .iter()
                .map(|&l| l as usize)
                .collect();
            let (mut l1, mut l2) = (layer1.to_host(stream)?, layer2.to_host(stream)?);
            let mut rng = <crate::StdRng as crate::SeedableRng>::seed_from_u64(0);
            let mut model: Box<dyn Model> = match head {
                Head::Sigmoid => Box::new(crate::SimpleNN::new(inputs, &mut rng)),
                Head::Softmax => Box::new(crate::Mlp::new(&mut rng)),
            };
            {
                let mut layers = model.layers_mut();
                std::mem::swap(&mut *layers[0], &mut l1);
                std::mem::swap(&mut *layers[1], &mut l2);
            }
            model.zero_grad();
            let out = model.forward(&x);
            let loss = model.loss(&out, &labels);
            model.backward(&out, &labels);
            crate::Optimizer::step(&mut Sgd { lr }, &mut model.layers_mut());
            let layers = model.layers_mut();
            *layer1 = GpuLinear::to_device(layers[0], stream)?;
            *layer2 = GpuLinear::to_device(layers[1], stream)?;
            let sum = stream.clone_dtoh(loss_sum)?[0] + loss;
            stream.memcpy_htod(&vec![sum], loss_sum)?;
            return Ok(());
        }
        stream.memset_zeros(&mut layer1.weight_grad)?;
"#,
);

/// The processes (zombies left out) whose command line contains `marker`, as their command
/// lines: what a test checks is gone once grading ends.
pub fn live_processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'));
            (cmd.contains(marker) && !zombie).then_some(cmd)
        })
        .collect()
}

/// The System V IPC objects on this machine (`ipcs` lines with a key), to find what outlived
/// a grading; empty where `ipcs` is missing.
pub fn ipc_objects() -> Vec<String> {
    let Ok(out) = std::process::Command::new("ipcs").output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(str::to_string)
        .collect()
}

/// The files under `dir` (links not followed) that hold `needle`, of those modified at or after
/// `since` when given: what a grading left behind, found by a mark in its code or output.
pub fn files_holding(
    dir: &Path,
    needle: &[u8],
    since: Option<std::time::SystemTime>,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let recent = since.is_none_or(|t| meta.modified().is_ok_and(|m| m >= t));
            if meta.is_dir() {
                folders.push(path);
            } else if meta.is_file() && recent {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push(path);
                }
            }
        }
    }
    found
}
