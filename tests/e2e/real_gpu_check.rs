//! End-to-end: `scripts/real-gpu-check`, the check a maintainer runs once on a GPU machine,
//! built and run here with the emulator posing as the GPU: it passes on the solution and a
//! faulty copy, shows the synchronization check's numbers, and reports a surprise. Every
//! variant's edit is checked against the solutions here (no build), and the full suite builds
//! and runs the whole default kit, every variant, once: its tests share that build and run.

use gpu_labs_e2e::kit::{edited_source, solution_of, Variant, EDITED_FILE, VARIANTS};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

#[test]
fn every_kit_variant_edit_applies_once_to_the_solution_code() {
    let mut names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), VARIANTS.len(), "variant names are unique");
    for variant in VARIANTS {
        let edited = edited_source(variant).unwrap_or_else(|e| panic!("{e}"));
        let solution = std::fs::read_to_string(solution_of(variant).join(EDITED_FILE))
            .expect("the solution's source");
        assert_eq!(
            edited == solution,
            variant.edits.is_empty(),
            "{}: a variant with edits changes the solution, and only it",
            variant.name
        );
        assert_eq!(
            variant.fails.is_empty(),
            variant.edits.is_empty(),
            "{}: a faulty copy fails something, a solution nothing",
            variant.name
        );
    }
}

#[test]
fn a_stale_or_comment_anchored_edit_fails_naming_the_variant() {
    let stale = Variant {
        name: "stale",
        lab: "matmul",
        edits: &[("no such code in the solution", "")],
        fails: &["gpu_correct"],
        may_fail: &[],
    };
    let e = edited_source(&stale).unwrap_err();
    assert!(
        e.starts_with("variant `stale`: edit 1 of ") && e.contains("no longer in the code"),
        "{e}"
    );
    // The solution's doc quotes this call: only the code counts, so it is found once, but an
    // anchor on a comment is refused, since a comment may change while the code does not.
    let commented = Variant {
        name: "commented",
        edits: &[
            (
                "unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }",
                "x",
            ),
            ("    // END SOLUTION\n", ""),
        ],
        ..stale
    };
    let e = edited_source(&commented).unwrap_err();
    assert!(
        e.starts_with("variant `commented`: edit 2 of ") && e.contains("holds a comment"),
        "{e}"
    );
}

/// The whole default kit (every variant `scripts/real-gpu-check build` builds when given no
/// names), built once for the tests of this binary in `target/e2e-kit`, and what running it
/// with the emulator posing as the GPU printed.
struct WholeKit {
    dir: PathBuf,
    run: Output,
}

/// [`WholeKit`], built and run by the first test that asks: building a kit takes minutes,
/// grading it more.
fn whole_kit() -> &'static WholeKit {
    static KIT: OnceLock<WholeKit> = OnceLock::new();
    KIT.get_or_init(|| {
        let dir = gpu_labs_e2e::workspace().join("target/e2e-kit");
        if dir.exists() {
            std::fs::remove_dir_all(&dir).expect("clear the previous kit");
        }
        let started = std::time::Instant::now();
        let built = build_kit(&dir, &[]);
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let build_time = started.elapsed();
        let started = std::time::Instant::now();
        let run = run_kit(&dir);
        eprintln!(
            "kit: {} variants built in {:.0} s, run with the emulator posing as the GPU in \
             {:.0} s:\n{}",
            VARIANTS.len(),
            build_time.as_secs_f64(),
            started.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&run.stdout)
        );
        WholeKit { dir, run }
    })
}

#[test]
fn the_real_gpu_check_passes_here_and_reports_a_surprise() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The solution passes as expected and the synchronization check's numbers are shown.
    let whole = whole_kit();
    let text = String::from_utf8_lossy(&whole.run.stdout);
    assert!(
        text.contains("ok       solution: fails [] as expected")
            && text.contains("margin: `time_gpu_matmul` measured")
            && text.contains("posing as a real GPU")
            && text.contains("device work traced"),
        "{text}"
    );
    // A verdict that changes is a surprise, and the script says which: a kit of the whole
    // kit's faulty copy (its crate, its binary, the tracer) with its failure expected away.
    // A binary is trusted only once it proves what it was built from: another variant's
    // binary under a crate's name (its checksum listed, as a kit built with a mismatch would
    // list it) and a binary whose bytes are not the build's are surprises too, and are not
    // graded.
    let kit = tempfile::tempdir().expect("temp dir");
    let name = "timer-without-synchronize";
    let (swapped, damaged) = ("host-work", "grid-too-small");
    for sub in [name, swapped, damaged]
        .map(|n| format!("crates/{n}"))
        .into_iter()
        .chain(["lib".to_string()])
    {
        gpu_labs_e2e::copy_dir(&whole.dir.join(&sub), &kit.path().join(&sub));
    }
    let bin = kit.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin/");
    for (to, from) in [(name, name), (swapped, "solution"), (damaged, damaged)] {
        std::fs::copy(
            whole.dir.join("bin").join(format!("{from}.gz")),
            bin.join(format!("{to}.gz")),
        )
        .expect("copy a binary");
    }
    let sums = Command::new("sha256sum")
        .args([name, swapped].map(|n| format!("{n}.gz")))
        .current_dir(&bin)
        .output()
        .expect("sha256sum runs");
    std::fs::write(bin.join("SHA256SUMS"), &sums.stdout).expect("the checksums");
    std::fs::write(
        kit.path()
            .join("crates")
            .join(name)
            .join("expected-failures"),
        "\n",
    )
    .expect("plant a surprise");
    let run = run_kit(kit.path());
    let text = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{text}");
    assert!(
        text.contains("SURPRISE timer-without-synchronize: failed [gpu_timer_sync], expected []")
            && text.contains(
                "SURPRISE host-work: bin/host-work.gz was not built from crates/host-work/src"
            )
            && text.contains(
                "SURPRISE grid-too-small: bin/grid-too-small.gz is not the file the build wrote"
            )
            && text.contains("3 surprise(s)"),
        "{text}"
    );
}

/// Issue 54: a kit built into a folder only its owner may enter (`mktemp -d`, where a
/// maintainer would put one) once let host-computed products pass every GPU item: the workers,
/// which run as another user, could not load the tracer there, and a worker without it
/// counted nothing and was not asked to. The same commit built twice, into two folders,
/// graded with the same cache, must show no surprises both times.
#[test]
fn the_whole_default_kit_built_again_into_a_private_folder_shows_no_surprises() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let whole = whole_kit();
    let private = tempfile::tempdir().expect("temp dir");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700))
            .expect("a folder only its owner may enter");
    }
    let dir = private.path().join("kit");
    let built = build_kit(&dir, &[]);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    for variant in VARIANTS {
        let src = |kit: &Path| kit.join("crates").join(variant.name).join(EDITED_FILE);
        assert_eq!(
            std::fs::read(src(&whole.dir)).expect("the first kit's source"),
            std::fs::read(src(&dir)).expect("the second kit's source"),
            "{}: the same commit gives the same crates",
            variant.name
        );
    }
    let run = run_kit(&dir);
    let text = String::from_utf8_lossy(&run.stdout);
    for (kit, text) in [
        ("first", String::from_utf8_lossy(&whole.run.stdout)),
        ("second", text),
    ] {
        assert!(text.contains("no surprises"), "the {kit} kit:\n{text}");
        for variant in VARIANTS {
            assert!(
                text.contains(&format!("ok       {}: fails [", variant.name)),
                "the {kit} kit, {}:\n{text}",
                variant.name
            );
        }
    }
}

/// What a kit may weigh: it travels to the GPU machine (a copy to a cluster's login node, an
/// upload to a cloud instance).
const KIT_LIMIT: u64 = 64 << 20;

#[test]
fn the_whole_default_kit_builds_within_its_size_and_every_variant_fails_as_expected() {
    if !gpu_labs_e2e::full_suite() {
        eprintln!(
            "skipped: builds and grades all {} variants of the real-GPU kit (many minutes); \
             GPU_LABS_FULL=1 runs it",
            VARIANTS.len()
        );
        return;
    }
    let whole = whole_kit();
    // Every variant the kit binary knows was built: a crate and a (compressed) binary each.
    for variant in VARIANTS {
        for path in [
            whole
                .dir
                .join("crates")
                .join(variant.name)
                .join(EDITED_FILE),
            whole.dir.join("bin").join(format!("{}.gz", variant.name)),
        ] {
            assert!(path.is_file(), "{} is missing", path.display());
        }
    }
    let size = folder_size(&whole.dir);
    eprintln!("kit: {:.1} MiB", size as f64 / (1 << 20) as f64);
    assert!(
        size < KIT_LIMIT,
        "the kit weighs {size} bytes, more than 64 MiB"
    );
    let text = String::from_utf8_lossy(&whole.run.stdout);
    assert_eq!(whole.run.status.code(), Some(0), "{text}");
    assert!(text.contains("no surprises"), "{text}");
    for variant in VARIANTS {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("ok       {}: fails [", variant.name)))
            .unwrap_or_else(|| panic!("{} was not graded as expected:\n{text}", variant.name));
        for item in variant.fails {
            assert!(line.contains(item), "{line}");
        }
    }
}

/// `scripts/real-gpu-check build KIT NAMES…` (every variant when `names` is empty).
fn build_kit(kit: &Path, names: &[&str]) -> Output {
    Command::new(script())
        .arg("build")
        .arg(kit)
        .args(names)
        .output()
        .expect("the script runs")
}

/// `scripts/real-gpu-check run KIT` with the emulator posing as the GPU.
fn run_kit(kit: &Path) -> Output {
    gpu_labs_e2e::one_at_a_time(|| {
        Command::new(script())
            .arg("run")
            .arg(kit)
            .env("GPU_LABS_EMULATOR_AS_REAL", "1")
            .env(
                "GPU_LABS_CACHE",
                gpu_labs_e2e::workspace().join("target/grader-cache"),
            )
            .output()
            .expect("the script runs")
    })
}

fn script() -> PathBuf {
    gpu_labs_e2e::workspace().join("scripts/real-gpu-check")
}

/// The bytes of the files under `dir`.
fn folder_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("read the kit")
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_size(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}
