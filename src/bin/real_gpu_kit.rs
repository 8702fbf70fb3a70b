//! Builds the kit that `scripts/real-gpu-check run KIT` grades on a machine with a real GPU
//! (which needs no Rust toolchain there): the solution and faulty copies of it, each as a
//! student crate (`crates/NAME/`, with the items it must fail in `expected-failures`) and its
//! grading test binary (`bin/NAME.gz`, stripped and compressed), and the tracer (`lib/`) that lets the grader
//! count device work there.
//!
//! Each binary proves what it was built from: the kit adds to its crate's library the bytes
//! of every source file the library was compiled from, and to its grading test a switch
//! (`GPU_LABS_KIT_SOURCES=DIR`) that writes them out; `run` compares them with the crate
//! before it trusts the binary. `bin/SHA256SUMS` lets `run` see a binary damaged on its way.
//!
//! Usage: `cargo run --bin real_gpu_kit -- KIT [NAME…]` (all variants when no name is given).

use gpu_labs_e2e::kit::{edited_source, solution_of, Variant, EDITED_FILE, VARIANTS};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(kit) = args.first().map(PathBuf::from) else {
        eprintln!("usage: real_gpu_kit KIT [NAME…]  (variants: {})", names());
        return ExitCode::from(2);
    };
    let wanted = &args[1..];
    if let Some(unknown) = wanted
        .iter()
        .find(|w| !VARIANTS.iter().any(|v| v.name == w.as_str()))
    {
        eprintln!("error: no variant `{unknown}` (variants: {})", names());
        return ExitCode::from(2);
    }
    let kit = std::path::absolute(&kit).unwrap_or(kit);
    let chosen: Vec<&Variant> = VARIANTS
        .iter()
        .filter(|v| wanted.is_empty() || wanted.iter().any(|w| w == v.name))
        .collect();
    // Every edit is checked before anything is built: a solution that changed under a
    // variant stops the build at once, naming each variant whose edit no longer applies.
    let stale: Vec<String> = chosen
        .iter()
        .filter_map(|v| edited_source(v).err())
        .collect();
    if !stale.is_empty() {
        for e in &stale {
            eprintln!("error: {e}");
        }
        return ExitCode::from(2);
    }
    eprintln!("building the tracer …");
    if let Err(e) = tracer(&kit) {
        eprintln!("error: the tracer: {e}");
        return ExitCode::from(2);
    }
    for variant in &chosen {
        if let Err(e) = write_crate(&kit, variant) {
            eprintln!("error: {}: {e}", variant.name);
            return ExitCode::from(2);
        }
    }
    eprintln!(
        "building {} …",
        chosen.iter().map(|v| v.name).collect::<Vec<_>>().join(", ")
    );
    if let Err(e) = binaries(&kit, &chosen) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    eprintln!(
        "kit ready in {}: on the GPU machine, run scripts/real-gpu-check run {}",
        kit.display(),
        kit.display()
    );
    ExitCode::SUCCESS
}

fn names() -> String {
    VARIANTS
        .iter()
        .map(|v| v.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes `crates/NAME` for one variant.
fn write_crate(kit: &Path, variant: &Variant) -> Result<(), String> {
    let ws = gpu_labs_e2e::workspace();
    let dir = kit.join("crates").join(variant.name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    // The crate a student has: the template's manifest (optimised, a workspace of its own)
    // with the solution's sources.
    let source = edited_source(variant)?;
    gpu_labs_e2e::copy_crate(&solution_of(variant), &dir);
    std::fs::write(dir.join(EDITED_FILE), source)
        .map_err(|e| format!("cannot write {EDITED_FILE}: {e}"))?;
    let manifest =
        std::fs::read_to_string(ws.join("templates").join(variant.lab).join("Cargo.toml"))
            .map_err(|e| format!("cannot read the template's Cargo.toml: {e}"))?
            .replace(
                "path = \"../../grader\"",
                &format!("path = {:?}", ws.join("grader").display().to_string()),
            );
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
    };
    write("Cargo.toml", &manifest)?;
    // The versions this workspace tested (cargo drops what the crate does not use).
    let lock = std::fs::read_to_string(ws.join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    write("Cargo.lock", &lock)?;
    write(
        "expected-failures",
        &format!("{}\n", variant.fails.join(" ")),
    )?;
    write("may-fail", &format!("{}\n", variant.may_fail.join(" ")))?;
    prove_sources(&dir)
}

/// The variable that makes a kit binary write the sources it was built from into a folder.
const SOURCES_SWITCH: &str = "GPU_LABS_KIT_SOURCES";

/// Makes the crate in `dir` able to prove its sources: `src/lib.rs` gets `KIT_SOURCES`, every
/// file of `src/` (itself included) as compiled, and `tests/grade.rs` a switch that writes
/// them out. Added after the edits, so a variant's code is as its edits made it.
fn prove_sources(dir: &Path) -> Result<(), String> {
    let src = dir.join("src");
    let mut files = Vec::new();
    source_files(&src, Path::new(""), &mut files)?;
    files.sort();
    let entries: String = files
        .iter()
        .map(|f| format!("    ({f:?}, include_bytes!({f:?})),\n"))
        .collect();
    let lib = src.join("lib.rs");
    let mut text =
        std::fs::read_to_string(&lib).map_err(|e| format!("cannot read src/lib.rs: {e}"))?;
    text.push_str(&format!(
        "\n// Added by the real-GPU kit: the sources this library was compiled from, which its\n\
         // grading binary writes out for `scripts/real-gpu-check run` to compare.\n\
         #[doc(hidden)]\npub const KIT_SOURCES: &[(&str, &[u8])] = &[\n{entries}];\n"
    ));
    std::fs::write(&lib, text).map_err(|e| format!("cannot write src/lib.rs: {e}"))?;
    let grade = dir.join("tests/grade.rs");
    let text =
        std::fs::read_to_string(&grade).map_err(|e| format!("cannot read tests/grade.rs: {e}"))?;
    let main = "fn main() -> std::process::ExitCode {\n";
    if text.matches(main).count() != 1 {
        return Err(format!(
            "tests/grade.rs has no single `{}`",
            main.trim_end()
        ));
    }
    let text = text.replacen(
        main,
        &format!(
            "{main}    // Added by the real-GPU kit: the sources the library was built from.\n    \
             if let Some(dir) = std::env::var_os({SOURCES_SWITCH:?}) {{\n        \
             return kit_sources(std::path::Path::new(&dir));\n    }}\n"
        ),
        1,
    ) + "\n/// Added by the real-GPU kit: writes `lab::KIT_SOURCES` into `dir`.\n\
         fn kit_sources(dir: &std::path::Path) -> std::process::ExitCode {\n    \
         for (name, bytes) in lab::KIT_SOURCES {\n        \
         let path = dir.join(name);\n        \
         let made = path.parent().map_or(Ok(()), std::fs::create_dir_all);\n        \
         if made.and_then(|()| std::fs::write(&path, bytes)).is_err() {\n            \
         return std::process::ExitCode::from(2);\n        }\n    }\n    \
         std::process::ExitCode::SUCCESS\n}\n";
    std::fs::write(&grade, text).map_err(|e| format!("cannot write tests/grade.rs: {e}"))
}

/// The files under `dir` (`at` within `src/`), as paths relative to `src/`.
fn source_files(dir: &Path, at: &Path, files: &mut Vec<String>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let rel = at.join(entry.file_name());
        if entry.path().is_dir() {
            source_files(&entry.path(), &rel, files)?;
        } else {
            files.push(rel.display().to_string());
        }
    }
    Ok(())
}

/// Builds the grading test binaries of the variants' crates, all in one cargo invocation
/// (sharing the workspace's compiled dependencies), into `bin/NAME.gz`.
fn binaries(kit: &Path, variants: &[&Variant]) -> Result<(), String> {
    let dirs: Vec<PathBuf> = variants
        .iter()
        .map(|v| kit.join("crates").join(v.name))
        .collect();
    let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    // One build workspace per kit, so that two kits can be built at once.
    let mut hash = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(kit, &mut hash);
    let name = format!("real-gpu-kit-{:016x}", std::hash::Hasher::finish(&hash));
    let built = gpu_labs_e2e::harness::build(&name, &dirs)?;
    let bin_dir = kit.join("bin");
    std::fs::create_dir_all(&bin_dir)
        .map_err(|e| format!("cannot create {}: {e}", bin_dir.display()))?;
    for (variant, binary) in variants.iter().zip(built) {
        let to = bin_dir.join(variant.name);
        std::fs::copy(&binary, &to)
            .map_err(|e| format!("cannot copy {}: {e}", binary.display()))?;
        // Debug information makes each binary tens of MB; the kit travels (64 MiB at most,
        // nine binaries of ~7 MiB each): stripped, then compressed, and unpacked by `run`.
        let _ = Command::new("strip").arg(&to).status();
        let packed = Command::new("gzip")
            .args(["-9", "-n", "-f"])
            .arg(&to)
            .status()
            .map_err(|e| format!("cannot run gzip: {e}"))?;
        if !packed.success() {
            return Err(format!("gzip could not compress {}", to.display()));
        }
    }
    checksums(&bin_dir)
}

/// Writes `bin/SHA256SUMS` (`sha256sum`'s format) for every binary there, which `run` checks
/// before it unpacks one.
fn checksums(bin_dir: &Path) -> Result<(), String> {
    let mut packed: Vec<String> = std::fs::read_dir(bin_dir)
        .map_err(|e| format!("cannot read {}: {e}", bin_dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gz"))
        .collect();
    packed.sort();
    let out = Command::new("sha256sum")
        .args(&packed)
        .current_dir(bin_dir)
        .output()
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "sha256sum failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    std::fs::write(bin_dir.join("SHA256SUMS"), out.stdout)
        .map_err(|e| format!("cannot write SHA256SUMS: {e}"))
}

/// Builds the tracer (release, like the emulator's own build) into `lib/` of the kit, where
/// `run` points the grader at it: the GPU machine has no Rust toolchain to build it.
fn tracer(kit: &Path) -> Result<(), String> {
    let ws = gpu_labs_e2e::workspace();
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "-q", "--release", "-p", "gpu-labs-cuda-tracer"])
        .current_dir(&ws)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("cargo could not build it".into());
    }
    let lib = kit.join("lib");
    std::fs::create_dir_all(&lib).map_err(|e| format!("cannot create {}: {e}", lib.display()))?;
    let name = "libgpu_labs_cuda_tracer.so";
    std::fs::copy(ws.join("target/release").join(name), lib.join(name))
        .map_err(|e| format!("cannot copy it: {e}"))?;
    Ok(())
}
