//! Test support (each test binary uses part of it): cudarc reads LD_LIBRARY_PATH only at
//! process start, so each test runs its body in a child process (the same test binary)
//! started with the emulator's environment.

#![allow(dead_code)]

pub mod names;

/// Many threads add into one element with `+=` (a data race in global memory).
pub const RACY: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i % 4] += in[i];
}
"#;

/// The honest twin of [`RACY`], with the same name and signature: each thread writes its own
/// element.
pub const CORRECT: &str = r#"
extern "C" __global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}
"#;

/// The naive product C = A·B (row-major, m×k by k×n), one thread per element of C.
pub const NAIVE_MATMUL: &str = r#"
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < k; i++) sum += a[row * k + i] * b[i * n + col];
        c[row * n + col] = sum;
    }
}
"#;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

const CHILD: &str = "GPU_LABS_EMULATOR_TEST_CHILD";

/// The names cudarc tries for the three libraries (the first candidates are enough).
pub const LIB_NAMES: &[&str] = &[
    "libcuda.so",
    "libcuda.so.1",
    "libnvrtc.so",
    "libnvrtc.so.12",
    "libcublas.so",
    "libcublas.so.12",
];

/// `target/<profile>` of this test binary.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .to_path_buf()
}

/// Builds the emulator cdylib (cargo does not build a cdylib for integration tests) in its
/// own target directory, so as not to wait for the lock of the one running the tests.
fn build_cdylib() -> PathBuf {
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let target = profile_dir().join("emulator-build");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "--lib", "--manifest-path"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building the emulator failed");
        target.join("release").join("libgpu_labs_cuda_emulator.so")
    })
    .clone()
}

/// A directory with the library names linked to the freshly built emulator (made once per
/// test process: tests run on parallel threads).
pub fn lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(make_lib_dir).clone()
}

fn make_lib_dir() -> PathBuf {
    let dir = profile_dir().join("emulator-lib");
    let so = build_cdylib();
    assert!(
        so.is_file(),
        "the emulator cdylib is missing: {}",
        so.display()
    );
    std::fs::create_dir_all(&dir).expect("create lib dir");
    for name in LIB_NAMES {
        let link = dir.join(name);
        if std::fs::read_link(&link).ok().as_deref() != Some(so.as_path()) {
            let tmp = dir.join(format!("{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(&so, &tmp).expect("symlink");
            std::fs::rename(&tmp, &link).expect("rename symlink");
        }
    }
    dir
}

/// The environment a child needs to run under the emulator.
pub fn emulator_env(cmd: &mut Command) {
    let cache = profile_dir().join("emulator-kernel-cache");
    let libs = lib_dir();
    cmd.env("LD_LIBRARY_PATH", libs)
        .env("GPU_LABS_EMULATOR_CACHE", cache)
        .env("GPU_LABS_EMULATOR", "1");
}

/// The newest copy in the cargo registry of the crate whose folder name starts with `prefix`
/// (`cudarc-0.19.`): crates' own sources, read at test time, never copied here.
pub fn registry_crate(prefix: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found = Vec::new();
    for index in std::fs::read_dir(home.join("registry").join("src"))
        .ok()?
        .flatten()
    {
        for krate in std::fs::read_dir(index.path()).ok()?.flatten() {
            let name = krate.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) {
                found.push(krate.path());
            }
        }
    }
    found.sort();
    found.pop()
}

/// The workspace's `grader` binary, built by cargo if needed.
pub fn grader_bin() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "-q",
            "-p",
            "grader",
            "--bin",
            "grader",
            "--message-format=json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split("\"executable\":\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .map(PathBuf::from)
        .next_back()
        .expect("cargo names the grader binary")
}

/// Runs test `name` of this binary in a child the way a user would: `grader emulate FLAGS --
/// <this test binary> name`, with the environment's race-check variable removed.
pub fn run_child_by_grader(flags: &[&str], name: &str) -> Output {
    let out = Command::new(grader_bin())
        .arg("emulate")
        .args(flags)
        .arg("--")
        .arg(std::env::current_exe().expect("current exe"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .env_remove("GPU_LABS_EMULATOR_RACECHECK")
        .output()
        .expect("run grader emulate");
    eprintln!(
        "--- grader emulate {flags:?} `{name}` stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether this process is the child that should run test `name`.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD).is_ok_and(|v| v == name)
}

/// Runs test `name` of this binary in a child under the emulator.
pub fn run_child(name: &str) -> Output {
    run_child_with(name, &[])
}

/// Runs test `name` in a child with the race check on (and `vars`), checks that it passed and
/// really ran checked, and returns its stderr (where the emulator's reports go).
pub fn checked_child(name: &str, vars: &[(&str, &str)]) -> String {
    let mut all = vec![("GPU_LABS_EMULATOR_RACECHECK", "1")];
    all.extend_from_slice(vars);
    let out = run_child_with(name, &all);
    assert!(out.status.success(), "child failed: {:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("race-checking build"),
        "ran unchecked: {stderr}"
    );
    stderr
}

/// The report lines of a checked run of test `name` (races, reads of unwritten shared memory,
/// synccheck).
pub fn checked_reports(name: &str) -> Vec<String> {
    checked_child(name, &[])
        .lines()
        .filter(|l| {
            l.contains("data race") || l.contains("uninitialized") || l.contains("synccheck")
        })
        .map(str::to_string)
        .collect()
}

/// Runs test `name` of this binary in a child under the emulator, with extra variables.
pub fn run_child_with(name: &str, vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().expect("current exe"));
    cmd.args([
        name,
        "--exact",
        "--nocapture",
        "--test-threads=1",
        "--include-ignored",
    ])
    .env(CHILD, name);
    emulator_env(&mut cmd);
    // After the emulator's environment, so that a test may override it (its kernel cache).
    cmd.envs(vars.iter().copied());
    let out = cmd.output().expect("run child");
    eprintln!(
        "--- child `{name}` stdout:\n{}--- stderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Defines a test whose body runs under the emulator; `check` then sees the child's output.
#[macro_export]
macro_rules! emulated {
    ($(#[$attr:meta])* $name:ident, $body:block) => {
        emulated!($(#[$attr])* $name, $body, |out: &std::process::Output| {
            assert!(out.status.success(), "child failed: {:?}", out.status);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains("1 passed"), "the child did not run the test");
        });
    };
    ($(#[$attr:meta])* $name:ident, $body:block, $check:expr) => {
        #[test]
        $(#[$attr])*
        fn $name() {
            if common::is_child(stringify!($name)) {
                $body
                return;
            }
            let out = common::run_child(stringify!($name));
            let check: &dyn Fn(&std::process::Output) = &$check;
            check(&out);
        }
    };
}

/// The translation unit that the module of a program compiled by the emulator's NVRTC was
/// built from (`ptx_text`, the program's PTX text, names the shared object; the unit is kept
/// beside it), if any.
pub fn translation_unit(ptx_text: &str) -> Option<String> {
    let so = ptx_text.lines().find_map(|l| l.strip_prefix("// so: "))?;
    std::fs::read_to_string(std::path::Path::new(so).with_file_name("kernels.cpp")).ok()
}

/// Whether the program of `ptx_text` runs its kernel `name` as coroutines (its translation
/// unit says so: `nvrtc/coroutine.rs` made it return `__GL_TASK`).
pub fn runs_as_coroutine(ptx_text: &str, name: &str) -> bool {
    translation_unit(ptx_text).is_some_and(|unit| unit.contains(&format!("__GL_TASK {name}(")))
}

/// Panics naming the first element where `got` differs from `want`, as thread and output
/// when each GPU thread writes `outs` of them.
pub fn assert_outputs<T: PartialEq + std::fmt::Display>(got: &[T], want: &[T], outs: usize) {
    assert_eq!(got.len(), want.len(), "how many outputs");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "thread {} output {}: expected {}, got {}",
            i / outs,
            i % outs,
            want[i],
            got[i]
        );
    }
}

/// Runs test `name` in a child with `vars` and checks that it ran and passed.
pub fn child_passes_with(name: &str, vars: &[(&str, &str)]) {
    let out = run_child_with(name, vars);
    assert!(out.status.success(), "child failed: {:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
}
