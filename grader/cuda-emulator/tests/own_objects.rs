//! Where only a process's own objects load (`GPU_LABS_EMULATOR_OWN_OBJECTS=1`, every worker of
//! official grading, whose kernel cache is its own scratch folder), what a checked run loads is
//! what its own compiler wrote: an object left in the cache by anyone else (an unchecked build
//! of a racing kernel, say) is compiled again, and an object changed on disk after it was
//! compiled is refused. Without it (a student's own cache, kept from run to run) the attack
//! works, which shows the test can fail.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

use common::{CORRECT as QUIET, RACY};

/// Compiles `src`, loads it and runs `k` once; the load's error, if any.
fn launch(src: &str) -> Result<(), String> {
    let ctx = CudaContext::new(0).map_err(|e| e.to_string())?;
    let stream = ctx.default_stream();
    let module = ctx
        .load_module(compile_ptx(src).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let f = module.load_function("k").map_err(|e| e.to_string())?;
    let n = 256usize;
    let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let in_d = stream.clone_htod(&input).map_err(|e| e.to_string())?;
    let mut out = stream.alloc_zeros::<f32>(n).map_err(|e| e.to_string())?;
    let ni = n as i32;
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out).arg(&ni);
    unsafe { l.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(|e| e.to_string())?;
    stream.synchronize().map_err(|e| e.to_string())
}

/// The object file a module text (what NVRTC hands back as PTX) names.
fn object_of(ptx: &cudarc::nvrtc::Ptx) -> std::path::PathBuf {
    let text = ptx.to_src();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("// so: "))
        .expect("the emulator's module text names its object");
    std::path::PathBuf::from(line)
}

fn races(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("gpu-labs emulator: kernel `k` is a data race"))
        .count()
}

/// The cache folder whose program holds `needle`.
fn folder_holding(cache: &std::path::Path, needle: &str) -> std::path::PathBuf {
    std::fs::read_dir(cache)
        .expect("the cache")
        .flatten()
        .map(|e| e.path())
        .find(|d| std::fs::read_to_string(d.join("kernels.cpp")).is_ok_and(|t| t.contains(needle)))
        .expect("a compiled program")
}

#[test]
fn an_object_left_in_the_cache_by_another_process_is_compiled_again() {
    let name = "an_object_left_in_the_cache_by_another_process_is_compiled_again";
    if common::is_child(name) {
        launch(QUIET).expect("the quiet kernel runs");
        launch(RACY).expect("the racing kernel runs");
        return;
    }
    let cache = common::profile_dir().join("own-objects-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let cache_s = cache.to_string_lossy().into_owned();
    let run = |own: &str| {
        common::checked_child(
            name,
            &[
                ("GPU_LABS_EMULATOR_CACHE", &cache_s),
                ("GPU_LABS_EMULATOR_OWN_OBJECTS", own),
            ],
        )
    };
    let first = run("0");
    assert_eq!(races(&first), 1, "{first}");
    // What another worker could do with a cache it can write: the racing program's object
    // replaced by one that passes every check of its symbols.
    let swap = || {
        std::fs::copy(
            folder_holding(&cache, "2.0f * in[i]").join("kernels.so"),
            folder_holding(&cache, "out[i % 4] +=").join("kernels.so"),
        )
        .expect("swap the objects");
    };
    swap();
    let trusting = run("0");
    assert_eq!(
        races(&trusting),
        0,
        "the swap is what hides the race: {trusting}"
    );
    swap();
    let own = run("1");
    assert_eq!(races(&own), 1, "{own}");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn an_object_changed_after_its_compile_is_not_loaded() {
    let name = "an_object_changed_after_its_compile_is_not_loaded";
    if common::is_child(name) {
        let quiet = compile_ptx(QUIET).expect("compiles");
        let racy = compile_ptx(RACY).expect("compiles");
        std::fs::copy(object_of(&quiet), object_of(&racy)).expect("swap the objects");
        let ctx = CudaContext::new(0).expect("a context");
        let loaded = ctx.load_module(racy);
        assert!(loaded.is_err(), "a changed object was loaded");
        return;
    }
    let cache = common::profile_dir().join("own-objects-changed");
    let _ = std::fs::remove_dir_all(&cache);
    let cache_s = cache.to_string_lossy().into_owned();
    let stderr = common::checked_child(
        name,
        &[
            ("GPU_LABS_EMULATOR_CACHE", &cache_s),
            ("GPU_LABS_EMULATOR_OWN_OBJECTS", "1"),
        ],
    );
    assert!(
        stderr.contains("is not the object this process's compiler wrote"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// A module is never built without the list of what it may export (the version script among
/// the grader's CUDA headers): where that folder is missing, NVRTC fails with the reason, for
/// a kernel that includes nothing too, and nothing is built another way.
#[test]
fn no_kernel_is_built_without_the_graders_headers() {
    const NAME: &str = "no_kernel_is_built_without_the_graders_headers";
    if common::is_child(NAME) {
        let err = compile_ptx(QUIET).expect_err("built without the export list");
        let log = format!("{err:?}");
        assert!(log.contains("CUDA headers are not available"), "{log}");
        println!("refused");
        return;
    }
    let missing = common::profile_dir().join("no-such-stub-headers");
    let cache = common::profile_dir().join("own-objects-no-headers-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let out = common::run_child_with(
        NAME,
        &[
            ("GPU_LABS_EMULATOR_STUBS", &missing.to_string_lossy()),
            ("GPU_LABS_EMULATOR_CACHE", &cache.to_string_lossy()),
        ],
    );
    let _ = std::fs::remove_dir_all(&cache);
    assert!(out.status.success(), "child failed: {:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stdout).contains("refused"));
}
