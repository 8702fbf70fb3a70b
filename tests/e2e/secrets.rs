//! End-to-end: nothing secret of the instructor's reaches a submission, at build time or when
//! its functions run: not a proxy's password, not the `[env]` or tokens of the instructor's
//! cargo configuration, not the instructor's cargo home. Builds run offline with a cargo home
//! the grader made; workers get a scrubbed environment.

use gpu_labs_e2e::{assert_lost, faulty_copy, grade_with_env, solution};

/// What the hostile `matmul_naive` reports: the variables it could name at build time, and
/// the proxy it could read when it runs.
const STEAL: &str = r#"    panic!(
        "build: proxy={:?} config_env={:?} cargo_home={:?} rustflags={:?}; run: proxy={:?} cargo_home={:?}",
        option_env!("HTTPS_PROXY"),
        option_env!("SECRET_FROM_CONFIG"),
        option_env!("CARGO_HOME"),
        option_env!("CARGO_ENCODED_RUSTFLAGS"),
        std::env::var("HTTPS_PROXY").ok(),
        std::env::var("CARGO_HOME").ok(),
    );
"#;

#[test]
fn proxies_cargo_settings_and_the_cargo_home_stay_out_of_builds_and_workers() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    // The instructor's cargo home: this machine's downloaded crates, and a configuration with
    // an [env] secret and a registry token.
    let instructor = tempfile::Builder::new()
        .prefix("instructor-")
        .tempdir()
        .expect("temp dir");
    let cargo_home = instructor.path().join("cargo-home");
    std::fs::create_dir_all(&cargo_home).expect("mkdir");
    let real = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))
        .expect("a cargo home");
    for name in ["registry", "git", "bin"] {
        if real.join(name).exists() {
            std::os::unix::fs::symlink(real.join(name), cargo_home.join(name)).expect("link");
        }
    }
    std::fs::write(
        cargo_home.join("config.toml"),
        "[env]\nSECRET_FROM_CONFIG = \"PLANTED-CONFIG-ENV\"\n\n[registries.private]\nindex = \"sparse+https://registry.invalid/\"\ntoken = \"PLANTED-REGISTRY-TOKEN\"\n",
    )
    .expect("config");
    let dir = faulty_copy(
        &solution(),
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        &format!(
            "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n{STEAL}"
        ),
    );
    let graded = grade_with_env(
        dir.path(),
        &["--gpu", "off"],
        &[
            ("CARGO_HOME", cargo_home.to_str().expect("utf-8")),
            (
                "HTTPS_PROXY",
                "http://grader:PLANTED-PROXY-PASSWORD@127.0.0.1:9",
            ),
            ("CARGO_ENCODED_RUSTFLAGS", "--cfg=planted_flag"),
        ],
    );
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_lost(&graded, &["naive_correct"]);
    let said = graded.output("naive_correct");
    assert!(
        said.contains("build: proxy=None config_env=None"),
        "nothing of the proxy or the instructor's cargo [env] at build time: {said}"
    );
    assert!(said.contains("rustflags=None"), "{said}");
    assert!(said.contains("run: proxy=None cargo_home=None"), "{said}");
    // The build's own cargo home is the grader's, not the instructor's.
    assert!(
        !said.contains(cargo_home.to_str().expect("utf-8")),
        "{said}"
    );
    let everything = format!("{}{}{}", graded.stdout, graded.stderr, graded.json);
    assert!(!everything.contains("PLANTED"), "{everything}");

    // With the instructor's own cargo settings the grader links the submission against its
    // own build's libraries (`grader/src/stage/prebuilt.rs`), which it names to cargo: none of
    // that reaches the compiler's environment either.
    let graded = grade_with_env(
        dir.path(),
        &["--gpu", "off"],
        &[(
            "HTTPS_PROXY",
            "http://grader:PLANTED-PROXY-PASSWORD@127.0.0.1:9",
        )],
    );
    assert_eq!(graded.code, Some(0), "{}", graded.stderr);
    assert_lost(&graded, &["naive_correct"]);
    let said = graded.output("naive_correct");
    assert!(said.contains("build: proxy=None config_env=None"), "{said}");
    assert!(said.contains("rustflags=None"), "{said}");
    assert!(said.contains("run: proxy=None cargo_home=None"), "{said}");
    let everything = format!("{}{}{}", graded.stdout, graded.stderr, graded.json);
    assert!(!everything.contains("PLANTED"), "{everything}");
}
