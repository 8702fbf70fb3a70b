//! End-to-end (issue 49): nothing a submission controls makes the grader itself wait or swell.
//! One submission tries every class at once, each in the function of one item: results far
//! larger than the item asks for, a panic with a 256 MiB message, a named pipe and an
//! oversized file left where the report goes, and a report forged with the order's secret (read
//! from the worker's own memory) at the largest size its item allows. Another is the solution
//! with a `data/` folder of 12,000 sparse 1 MiB files and 30,000 small ones. Each is graded
//! beside the solution, its honest twin, in `grader grade` and in `grader batch --jobs 2`; the
//! grader's peak memory (`VmHWM`, its own process) is measured in every run.

use gpu_labs_e2e::{copy_crate, grader_bin, rubric_with, solution, workspace};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The items the attacks touch, one per attack.
const ITEMS: [&str; 5] = [
    "naive_correct",
    "fast_correct",
    "gpu_correct",
    "cublas_correct",
    "gpu_timer_sync",
];

/// The most the grader's peak may rise above its honest twin's (the issue's goal).
const ABOVE_TWIN: u64 = 64 << 20;

/// Code put first in a function's body (between the two texts that find the place, in
/// `src/lib.rs` or `src/gpu.rs`), and what the item's feedback then says.
const ATTACKS: [(&str, &str, &str, &str, &str); 4] = [
    (
        "src/lib.rs",
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        "",
        "    let _ = (a, b);\n    return Array2::zeros((4000, 4000));\n",
        "results that come to more than",
    ),
    (
        "src/lib.rs",
        "pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        "",
        "    if a.nrows() > 0 { panic!(\"{}\", \"x\".repeat(256 << 20)); }\n",
        "panicked on case 1",
    ),
    (
        "src/gpu.rs",
        ") -> GpuResult<Array2<f32>> {\n    // BEGIN SOLUTION\n",
        "    product_on_gpu(stream, a, b, (MATMUL_KERNEL, \"matmul\"))",
        "    let _ = std::process::Command::new(\"mkfifo\").arg(std::env::temp_dir().join(\"report.json\")).status();\n    std::process::exit(0);\n    #[allow(unreachable_code)]\n",
        "named pipe",
    ),
    (
        "src/gpu.rs",
        ") -> GpuResult<Array2<f32>> {\n    // BEGIN SOLUTION\n",
        "    use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;",
        "    let _ = std::fs::write(std::env::temp_dir().join(\"report.json\"), vec![b' '; 1 << 20]);\n    std::process::exit(0);\n    #[allow(unreachable_code)]\n",
        "more than a right answer to this item sends",
    ),
];

/// The forger: looks for the order (its secret and the report's path) in the worker's memory
/// with a kernel that reads host addresses (it found it in some runs before timed runs were
/// confined: issue 48), writes a
/// report of a 2048×2048 C (the timer's largest) sealed with what it found, and exits before
/// the worker writes its own.
const FORGER: &str = r#"
const PEEK: &str = "extern \"C\" __global__ void peek(unsigned long long from, unsigned char* to, unsigned long long n) {
    for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) { to[i] = ((const unsigned char*)from)[i]; }
}";

fn peek(stream: &Arc<CudaStream>, at: u64, len: usize) -> GpuResult<Vec<u8>> {
    let kernel = load_kernel(stream, PEEK, "peek")?;
    let mut buf = stream.alloc_zeros::<u8>(len)?;
    let n = len as u64;
    let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&at).arg(&mut buf).arg(&n);
    unsafe { launch.launch(config) }?;
    Ok(stream.clone_dtoh(&buf)?)
}

fn forged_report(stream: &Arc<CudaStream>) -> ! {
    use std::io::Write;
    let maps = std::fs::read_to_string("/proc/self/maps").expect("the memory map");
    let mut found: Option<(u64, String)> = None;
    let mut regions: Vec<(u64, u64, bool)> = Vec::new();
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        let Some((a, b)) = range.split_once('-') else { continue };
        let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) else { continue };
        if perms.starts_with("rw") && b - a <= (64 << 20) {
            regions.push((a, b, line.ends_with("[heap]")));
        }
    }
    regions.sort_by_key(|r| !r.2);
    for (a, b, _) in regions {
        let Ok(buf) = peek(stream, a, (b - a) as usize) else { continue };
        let key = b"\"nonce\":";
        let path_key = b",\"report_path\":\"";
        let mut at = 0;
        while let Some(i) = buf[at..].windows(key.len()).position(|w| w == key) {
            let start = at + i + key.len();
            let digits: String = buf[start..].iter().take_while(|c| c.is_ascii_digit()).map(|&c| c as char).collect();
            let rest = &buf[start + digits.len()..];
            if rest.starts_with(path_key) {
                let path: String = rest[path_key.len()..].iter().take_while(|&&c| c != b'"').map(|&c| c as char).collect();
                if let Ok(nonce) = digits.parse() { found = Some((nonce, path)); break; }
            }
            at = start;
        }
        if found.is_some() { break; }
    }
    // Without the secret (the emulator refuses a kernel's reads outside device memory), the
    // report goes where the worker's would, sealed with a guess.
    let path = std::env::temp_dir().join("report.json").display().to_string();
    let (nonce, path) = found.unwrap_or((0, path));
    let side = 2048usize;
    let mut body = String::with_capacity(side * side * 8 + 512);
    body.push_str("{\"item\":\"gpu_timer_sync\",\"outcome\":{\"GpuTimer\":{\"shape\":[2048,2048,2048],\"queued_ms\":1.0,\"samples\":[],\"output\":{\"rows\":2048,\"cols\":2048,\"bits\":\"");
    for _ in 0..side * side { body.push_str("00000000"); }
    body.push_str("\"}}},\"emulator\":null}");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in nonce.to_le_bytes().iter().chain(body.as_bytes()).chain(&nonce.to_be_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut file = std::fs::File::create(&path).expect("the report's path");
    write!(file, "{h:016x}\n{body}").expect("written");
    drop(file);
    std::process::exit(0);
}
"#;

/// Writes the solution with every attack into `dir`.
fn hostile(dir: &Path) {
    copy_crate(&solution(), dir);
    let edit = |file: &str, from: &str, to: &str| {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("a source file");
        assert_eq!(text.matches(from).count(), 1, "{file}: {from}");
        std::fs::write(&path, text.replacen(from, to, 1)).expect("written");
    };
    for (file, before, after, code, _) in ATTACKS {
        edit(
            file,
            &format!("{before}{after}"),
            &format!("{before}{code}{after}"),
        );
    }
    edit(
        "src/gpu.rs",
        "    let kernel = load_kernel(stream, TILED_KERNEL, \"matmul_tiled\")?;\n    stream.synchronize()?;\n    let start = Instant::now();",
        "    forged_report(stream);\n    #[allow(unreachable_code)]\n    let kernel = load_kernel(stream, TILED_KERNEL, \"matmul_tiled\")?;\n    stream.synchronize()?;\n    let start = Instant::now();",
    );
    let gpu = dir.join("src/gpu.rs");
    let mut text = std::fs::read_to_string(&gpu).expect("gpu.rs");
    text.push_str(FORGER);
    std::fs::write(&gpu, text).expect("written");
}

/// The solution with a `data/` folder no grading reads: 12,000 sparse 1 MiB files and 30,000
/// small ones.
fn flooded(dir: &Path) {
    copy_crate(&solution(), dir);
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("more")).expect("data/");
    for i in 0..12_000 {
        std::fs::File::create(data.join(format!("{i}.bin")))
            .and_then(|f| f.set_len(1 << 20))
            .expect("a sparse file");
    }
    for i in 0..30_000 {
        std::fs::write(data.join("more").join(format!("{i}.txt")), "x").expect("a file");
    }
}

/// What one run of the grader did: its output, how long it took, and its peak memory (bytes).
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
    peak: u64,
}

/// Runs the grader with `args` in `cwd`, reading its own peak resident memory (`VmHWM`, which
/// counts none of its workers) until it exits.
fn measured(args: &[&str], cwd: &Path) -> Run {
    let started = Instant::now();
    let mut child = Command::new(grader_bin())
        .args(args)
        .current_dir(cwd)
        .env("GPU_LABS_CACHE", workspace().join("target/grader-cache"))
        .env("GRADER_GPU", gpu_labs_e2e::TEST_GPU_MODE)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the grader starts");
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("stdout")));
    let stderr = read(Box::new(child.stderr.take().expect("stderr")));
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            if let Some(kib) = hwm {
                peak = peak.max(kib << 10);
            }
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        took: started.elapsed(),
        peak,
    }
}

/// The results.json at `path`: item → (score, max, feedback).
fn results(path: &Path) -> Vec<(String, f64, f64, String)> {
    let json: Value = serde_json::from_slice(&std::fs::read(path).expect("results.json"))
        .expect("results.json is JSON");
    json["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .map(|t| {
            (
                t["extra_data"]["item"].as_str().unwrap_or("").to_string(),
                t["score"].as_f64().unwrap_or(-1.0),
                t["max_score"].as_f64().unwrap_or(-1.0),
                t["output"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Checks the hostile submission's results: every item lost, each saying what its attack met.
fn assert_hostile(results: &[(String, f64, f64, String)]) {
    for (id, says) in ITEMS
        .iter()
        .zip(ATTACKS.iter().map(|a| a.4).chain(["tampering"]))
    {
        let (_, score, max, output) = results
            .iter()
            .find(|r| r.0 == *id)
            .unwrap_or_else(|| panic!("no {id} in {results:?}"));
        assert!(score < max, "{id} kept its points: {output}");
        assert!(
            output.len() < 20 << 10,
            "{id}: {} bytes of feedback",
            output.len()
        );
        // The forged report (33.5 MB, the item's largest) is read whole, within the item's
        // bound, and refused for its seal: the forger's kernel, in a timed run, is confined
        // to device memory like a checked one (issue 48), so it never finds the order's
        // secret in the worker's memory.
        assert!(
            output.contains(says),
            "{id} does not say `{says}`: {output}"
        );
    }
}

/// Says both runs' peaks and times, and checks the hostile one's peak is within
/// [`ABOVE_TWIN`] of its twin's.
fn assert_within(what: &str, hostile: &Run, twin: &Run) {
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    eprintln!(
        "{what}: honest twin {:.0} MiB in {:.0} s; hostile {:.0} MiB in {:.0} s",
        mib(twin.peak),
        twin.took.as_secs_f64(),
        mib(hostile.peak),
        hostile.took.as_secs_f64()
    );
    assert!(
        hostile.peak <= twin.peak + ABOVE_TWIN,
        "{what}: the hostile run peaked at {} bytes, its twin at {}",
        hostile.peak,
        twin.peak
    );
}

fn assert_full_marks(results: &[(String, f64, f64, String)], who: &str) {
    for (id, score, max, output) in results {
        assert_eq!(score, max, "{who}: {id} lost points: {output}");
    }
}

/// `grader grade` of the hostile submission beside its honest twin, then `grader batch --jobs
/// 2` of a class holding it, the flooded copy and the solution, beside the same class with a
/// second copy of the solution in the hostile one's place.
#[test]
fn no_submission_stalls_or_swells_the_grader() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_rubric_dir, rubric) = rubric_with("matmul", &ITEMS);
    let rubric = rubric.to_str().expect("utf-8").to_string();
    let class = tempfile::Builder::new()
        .prefix("bounded-")
        .tempdir()
        .expect("temp dir");
    let subs = class.path().join("submissions");
    hostile(&subs.join("mallory"));
    copy_crate(&solution(), &subs.join("alice"));
    flooded(&subs.join("dave"));
    let twin_class = class.path().join("twins");
    copy_crate(&solution(), &twin_class.join("alice"));
    copy_crate(&solution(), &twin_class.join("mallory"));
    flooded(&twin_class.join("dave"));

    // Every run grades the rubric's items on one seed.
    let run = |args: &[&str], cwd: &Path| {
        measured(
            &[args, &["--assignment", &rubric, "--seed", "11"]].concat(),
            cwd,
        )
    };
    // grader grade: the twin first (its build warms the shared cache for the others).
    let grade = |who: &str| {
        let json = class.path().join(format!("{who}.json"));
        let path = subs.join(who);
        let json_arg = json.to_str().expect("utf-8");
        let graded = run(
            &["grade", path.to_str().expect("utf-8"), "--json", json_arg],
            class.path(),
        );
        (graded, results(&json))
    };
    let (twin, twin_results) = grade("alice");
    assert_full_marks(&twin_results, "alice");
    let (hostile, hostile_results) = grade("mallory");
    assert_hostile(&hostile_results);
    assert_within("grade", &hostile, &twin);
    // Its items' timeouts (60 s each at most) and the build's limit bound its time.
    let limit = Duration::from_secs(ITEMS.len() as u64 * 60 + 600);
    assert!(hostile.took < limit, "{:?}", hostile.took);

    // grader batch --jobs 2: the class, then the twins' class.
    let batch = |dir: &Path| {
        // Each batch in its own folder: its gradebook and feedback are its own.
        let cwd = dir.with_extension("run");
        std::fs::create_dir_all(&cwd).expect("a folder");
        let batched = run(
            &["batch", dir.to_str().expect("utf-8"), "--jobs", "2"],
            &cwd,
        );
        assert_eq!(
            batched.code,
            Some(0),
            "{}\n{}",
            batched.stdout,
            batched.stderr
        );
        batched
    };
    let twins = batch(&twin_class);
    let with_hostile = batch(&subs);
    let feedback = subs.with_extension("run").join("feedback");
    assert_hostile(&results(&feedback.join("mallory/results.json")));
    assert_full_marks(&results(&feedback.join("alice/results.json")), "alice");
    assert_full_marks(&results(&feedback.join("dave/results.json")), "dave");
    assert_within("batch --jobs 2", &with_hostile, &twins);
    // The honest classmates finish in their normal time: the class takes no longer than the
    // twins' class by more than the hostile one's own build and items.
    assert!(
        with_hostile.took < twins.took + limit,
        "{:?} against {:?}",
        with_hostile.took,
        twins.took
    );
}
