//! cudarc's own example programs, unmodified (built from the cargo registry's copy of cudarc
//! with only the features changed), run under the emulator the way a user runs them:
//! `grader emulate -- <program>`.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{grader_bin, registry_crate};

/// Examples that compile CUDA C at run time (the others load precompiled PTX or need
/// libraries the emulator does not provide: cuPTX, cuFile, several GPUs).
const EXAMPLES: &[&str] = &[
    "01-allocate",
    "02-copy",
    "05-device-repr",
    "06-threading",
    "09-constant-memory",
    "12-context-config",
    "matmul-kernel",
    "nvrtc-compile",
];

#[test]
fn cudarc_examples_run_unmodified() {
    let Some(cudarc) = registry_crate("cudarc-0.19.") else {
        panic!("cudarc 0.19 sources not found in the cargo registry");
    };
    let version = cudarc
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_start_matches("cudarc-")
        .to_string();
    let project = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cudarc-examples");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "").unwrap();
    let mut manifest = format!(
        "[package]\nname = \"cudarc-examples-on-emulator\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\ncudarc = {{ version = \"={version}\", default-features = false, features = [\"std\", \"cuda-12080\", \"dynamic-loading\", \"driver\", \"nvrtc\", \"cublas\"] }}\n\n[workspace]\n"
    );
    for ex in EXAMPLES {
        let path = cudarc.join("examples").join(format!("{ex}.rs"));
        manifest.push_str(&format!(
            "\n[[example]]\nname = \"{ex}\"\npath = {:?}\n",
            path.to_string_lossy()
        ));
    }
    std::fs::write(project.join("Cargo.toml"), manifest).unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = project.join("target");
    let st = Command::new(&cargo)
        .args(["build", "--examples", "--offline", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .unwrap();
    assert!(st.success(), "building cudarc's examples failed");
    let grader = grader_bin();
    let mut failed = Vec::new();
    for ex in EXAMPLES {
        // Race-checked, as grading's correctness runs are: correct kernels get no report.
        let out = Command::new(&grader)
            .arg("emulate")
            .arg("--")
            .arg(target.join("debug").join("examples").join(ex))
            .current_dir(&cudarc)
            .env("GPU_LABS_EMULATOR_RACECHECK", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("data race")
            || stderr.contains("lockstep")
            || stderr.contains("uninitialized shared memory")
            || stderr.contains("race-checking build")
        {
            failed.push(*ex);
        }
        println!(
            "=== {ex}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            failed.push(*ex);
        }
    }
    assert!(
        failed.is_empty(),
        "examples failed (or raced) under the emulator: {failed:?}"
    );
}
