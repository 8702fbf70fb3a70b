//! The tracer's build: the same refusal stubs as the emulator (every cudarc entry point the
//! emulator does not implement), and two placeholder libraries the tracer is linked against,
//! so that it names them as dependencies (`DT_NEEDED`). At run time the grader makes those
//! names links to the real libcuda and libcublas: the dynamic loader then forwards every
//! entry point the tracer does not define to the real library, and the tracer defines only
//! what it counts or refuses.

use std::path::Path;
use std::process::Command;

#[path = "../build.rs"]
mod emulator_build;

/// The dependency names the grader links to the real libraries (see `grader/src/gpu/trace.rs`).
const PLACEHOLDERS: [&str; 2] = ["gpu_labs_real_cuda", "gpu_labs_real_cublas"];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    emulator_build::write_stubs(&root.join(".."), &out.join("stubs.rs"));
    println!("cargo:rerun-if-changed=build.rs");

    let empty = out.join("empty.c");
    std::fs::write(&empty, "").expect("write empty.c");
    let cc = std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".into());
    for name in PLACEHOLDERS {
        let so = out.join(format!("lib{name}.so"));
        let status = Command::new(&cc)
            .args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(format!("-Wl,-soname,lib{name}.so"))
            .arg(&empty)
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}` (set CC): {e}"));
        assert!(status.success(), "`{cc}` could not build {}", so.display());
    }
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,--no-as-needed");
    for name in PLACEHOLDERS {
        println!("cargo:rustc-cdylib-link-arg=-l{name}");
    }
}
