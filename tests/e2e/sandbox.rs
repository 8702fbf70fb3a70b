//! End-to-end: hostile submissions against `grader grade`, each in a graded function of its
//! own (`matmul_naive`): it loses that item, with the reason in its feedback, every other item
//! is graded as usual, and nothing outside the worker's scratch folder changed.

use gpu_labs_e2e::{assert_lost, faulty_copy, grade_from, solution, Graded};

/// The solution with `code` run first in `matmul_naive`, graded from `instructor` (the
/// grader's working folder) with `home` as its home folder.
fn grade_hostile(code: &str, instructor: &std::path::Path, home: &std::path::Path) -> Graded {
    grade_hostile_before(code, "", instructor, home)
}

/// [`grade_hostile`] with `items` (a `const`, say) put before `matmul_naive`.
fn grade_hostile_before(
    code: &str,
    items: &str,
    instructor: &std::path::Path,
    home: &std::path::Path,
) -> Graded {
    let dir = faulty_copy(
        &solution(),
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        &format!(
            "{items}\npub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n{code}\n"
        ),
    );
    let graded = grade_from(
        instructor,
        dir.path(),
        &["--gpu", "off"],
        &[
            ("HOME", home.to_str().expect("utf-8 path")),
            ("DEPLOY_TOKEN", "PLANTED-TOKEN-5519"),
        ],
    );
    assert_eq!(graded.code, Some(0), "grading completes: {}", graded.stderr);
    graded
}

fn folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().expect("temp dir");
    let instructor = root.path().join("instructor");
    let home = root.path().join("home");
    std::fs::create_dir_all(&instructor).expect("mkdir");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    (root, instructor, home)
}

/// Lost only `matmul_naive`'s item, with `says` in its feedback, and named the sandbox.
fn only_naive_lost(g: &Graded, says: &str) {
    assert_lost(g, &["naive_correct"]);
    let out = g.output("naive_correct");
    assert!(out.contains(says), "{out}");
    assert!(
        g.stdout.contains("sandbox: filesystem: landlock") || g.stderr.contains("sandbox"),
        "the report names its protections: {}",
        g.stdout
    );
}

#[test]
fn a_submission_cannot_write_into_the_graders_folder() {
    let (_root, instructor, home) = folders();
    // It finds the grader's working folder through its parent's /proc entry.
    let g = grade_hostile(
        "    let parent = std::os::unix::process::parent_id();\n    let cwd = std::fs::read_link(format!(\"/proc/{parent}/cwd\")).unwrap_or_else(|_| std::path::PathBuf::from(\".\"));\n    std::fs::write(cwd.join(\"grades.csv\"), \"alice,100\").expect(\"escape\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "escape");
    assert!(
        std::fs::read_dir(&instructor).expect("ls").next().is_none(),
        "nothing was written into the grader's folder"
    );
}

#[test]
fn a_submission_cannot_read_the_instructors_files() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    std::fs::write(home.join(".ssh/id_ed25519"), "PLANTED-SECRET-7431").expect("plant");
    let g = grade_hostile(
        "    let token = std::env::var(\"DEPLOY_TOKEN\").unwrap_or_default();\n    let key = std::fs::read_to_string(format!(\"{}/.ssh/id_ed25519\", std::env::var(\"HOME\").unwrap_or_default())).unwrap_or_default();\n    panic!(\"steal: [{token}] [{key}]\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "steal: [] []");
    assert!(
        !g.stdout.contains("PLANTED-SECRET") && !g.stderr.contains("PLANTED-SECRET"),
        "the secret never reaches the feedback"
    );
    assert!(!g.json.to_string().contains("PLANTED"), "{}", g.json);
}

#[test]
fn a_submission_cannot_embed_the_instructors_files_or_variables_at_build_time() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    let key = home.join(".ssh/id_ed25519");
    std::fs::write(&key, "PLANTED-SECRET-8802").expect("plant");
    // A file named at compile time: the build may not read it, so the code does not compile.
    let g = grade_hostile_before(
        "    panic!(\"{KEY}\");",
        &format!("const KEY: &str = include_str!({:?});", key),
        &instructor,
        &home,
    );
    assert_eq!(g.json["score"].as_f64(), Some(0.0), "{}", g.stdout);
    let out = g.output("naive_correct");
    assert!(
        out.contains("outside the crate") && out.contains("include_str!"),
        "{out}"
    );
    assert!(!g.json.to_string().contains("PLANTED"), "{}", g.json);
    // A variable read at compile time is not in the build's environment.
    let g = grade_hostile_before(
        "    panic!(\"embedded: {:?}\", TOKEN);",
        "const TOKEN: Option<&str> = option_env!(\"DEPLOY_TOKEN\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "embedded: None");
    assert!(!g.json.to_string().contains("PLANTED"), "{}", g.json);
}

/// The processes whose command line contains `marker`.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .count()
}

#[test]
fn a_submission_that_forks_without_end_is_held_and_leaves_nothing_behind() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    // A few that try to leave its process group first, then as many as it can get (up to
    // 700: where the process limit cannot hold, on a machine without user namespaces, the
    // test stops the bomb itself rather than the machine's other tests).
    let g = grade_hostile(
        "    for _ in 0..3 { let _ = std::process::Command::new(\"setsid\").args([\"sleep\", \"987.5\"]).spawn(); }\n    let mut kids = Vec::new();\n    while kids.len() < 700 {\n        match std::process::Command::new(\"sleep\").arg(\"987.25\").spawn() {\n            Ok(k) => kids.push(k),\n            Err(e) => panic!(\"fork refused after {} processes: {e}\", kids.len()),\n        }\n    }\n    panic!(\"{} processes started\", kids.len());",
        &instructor,
        &home,
    );
    if g.stdout.contains("processes: ≤ 512") {
        only_naive_lost(&g, "fork refused after");
    } else {
        assert!(g.stdout.contains("processes: unlimited"), "{}", g.stdout);
        only_naive_lost(&g, "700 processes started");
    }
    assert_eq!(
        processes_with("987.25"),
        0,
        "every process it started ended"
    );
    assert_eq!(processes_with("987.5"), 0, "none left its process group");
}

#[test]
fn a_submission_cannot_become_root_again_to_escape_the_process_limit() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    // Under a grader run as root, a worker is root only inside its own user namespace, where
    // root's own uid is mapped to 1: becoming uid 1 would make it root again outside.
    let g = grade_hostile(
        r#"    let out = std::process::Command::new("python3").args(["-c", "import os\ntry:\n    os.setresuid(1, 1, 1)\n    print('became uid 1')\nexcept OSError as e:\n    print('refused:', e.strerror)"]).output().expect("python3 runs");
    panic!("{}", String::from_utf8_lossy(&out.stdout).trim());"#,
        &instructor,
        &home,
    );
    only_naive_lost(&g, "refused: Operation not permitted");
    assert!(g.stdout.contains("processes: ≤ 512"), "{}", g.stdout);
}

#[test]
fn a_submission_that_allocates_without_end_is_stopped() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    let g = grade_hostile(
        "    let mut hog: Vec<Vec<u8>> = Vec::new();\n    loop { hog.push(vec![1u8; 64 << 20]); }",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "ran out of memory");
    assert!(g.output("naive_correct").contains("4 GiB"));
}

#[test]
fn a_submission_that_floods_its_output_is_graded_and_told() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (root, instructor, home) = folders();
    let free_before = free_space(root.path());
    let g = grade_hostile(
        "    static FLOODED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);\n    if !FLOODED.swap(true, std::sync::atomic::Ordering::SeqCst) {\n        let line = \"x\".repeat(1 << 20);\n        for _ in 0..2048 { println!(\"{line}\"); }\n    }",
        &instructor,
        &home,
    );
    // Printing is no fault: every item is graded as usual, and the feedback says what was
    // dropped.
    assert_lost(&g, &[]);
    let out = g.output("naive_correct");
    assert!(out.contains("2.0 GiB more than the grader keeps"), "{out}");
    let used = free_before.saturating_sub(free_space(root.path()));
    assert!(
        used < 256 << 20,
        "the flood did not reach the disk ({used} bytes used)"
    );
}

/// Free bytes on the file system holding `path`.
fn free_space(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(path)
        .output()
        .expect("df");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df prints the free space")
}

#[test]
fn a_worker_that_cannot_be_sandboxed_runs_no_student_code_and_says_whose_fault() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, _home) = folders();
    // The sandbox is set up by the supervisor, between fork and exec, before the first
    // instruction of the worker: when it cannot be, no worker starts, and grading stops with
    // the machine's error instead of a grade (nothing the worker could say changes that).
    let g = grade_from(
        &instructor,
        &solution(),
        &["--gpu", "off", "--only", "naive_correct"],
        &[("GPU_LABS_SANDBOX", "broken")],
    );
    assert_ne!(
        g.code,
        Some(0),
        "no grade without the sandbox: {}",
        g.stdout
    );
    assert!(
        g.stderr.contains("sandbox") && g.stderr.contains("GPU_LABS_SANDBOX=broken"),
        "{}",
        g.stderr
    );
    assert!(
        g.json.is_null() || g.json["tests"].as_array().is_none_or(|t| t.is_empty()),
        "{}",
        g.json
    );
}

#[test]
fn a_submission_cannot_kill_the_grader() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    let g = grade_hostile(
        "    let parent = std::os::unix::process::parent_id();\n    let killed = std::process::Command::new(\"kill\").args([\"-9\", &parent.to_string()]).status().map(|s| s.success()).unwrap_or(false);\n    assert!(killed, \"the kill did not go through\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "the kill did not go through");
}

#[test]
fn a_submission_cannot_connect_to_the_network() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, home) = folders();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("port").port();
    let g = grade_hostile(
        &format!(
            "    std::net::TcpStream::connect((\"127.0.0.1\", {port})).expect(\"exfiltrate\");"
        ),
        &instructor,
        &home,
    );
    only_naive_lost(&g, "exfiltrate");
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
}

#[test]
fn grading_unsandboxed_is_said_in_the_report() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, _home) = folders();
    let g = grade_from(
        &instructor,
        &solution(),
        &["--gpu", "off", "--unsandboxed"],
        &[],
    );
    assert_eq!(g.code, Some(0), "{}", g.stderr);
    assert!(g.stdout.contains("sandbox: not sandboxed"), "{}", g.stdout);
}

#[test]
fn a_submissions_compiled_code_does_not_stay_where_the_next_build_can_read_it() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (_root, instructor, _home) = folders();
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
    // A submission whose compiled code carries a mark (a string its naive product uses).
    const MARK: &str = "submission-mark-5d41402abc4b2a76";
    let marked = faulty_copy(
        &solution(),
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        &format!(
            "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n    \
             assert!(a.ncols() < 1 << 30, \"{MARK}\");\n"
        ),
    );
    let g = grade_from(&instructor, marked.path(), &["--gpu", "off"], &[]);
    assert_eq!(g.code, Some(0), "grading completes: {}", g.stderr);
    assert_eq!(
        g.score("naive_correct"),
        3.0,
        "{}",
        g.output("naive_correct")
    );
    // The next submission's build may read the shared cache (its dependencies are there), so
    // `include_bytes!` of a file left there would carry this one's code away: no file written
    // since the grading started holds the mark. (The grader's own placeholder crate, built
    // there for the class's dependencies, holds no submission's code.)
    let cache = gpu_labs_e2e::workspace().join("target/grader-cache");
    let left = gpu_labs_e2e::files_holding(&cache, MARK.as_bytes(), Some(started));
    assert!(
        left.is_empty(),
        "the submission's code left in the cache: {left:?}"
    );
}

#[test]
fn a_submission_that_fills_the_disk_with_many_files_is_stopped() {
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let (root, instructor, home) = folders();
    let free_before = free_space(root.path());
    // Each file stays under the file-size limit; together they would fill the disk.
    let g = grade_hostile(
        "    use std::io::Write;\n    let chunk = vec![7u8; 64 << 20];\n    for i in 0..64 {\n        let mut f = std::fs::File::create(std::env::temp_dir().join(format!(\"fill-{i}\"))).expect(\"create\");\n        for _ in 0..8 { f.write_all(&chunk).expect(\"write\"); }\n    }\n    panic!(\"wrote 32 GiB\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "wrote more than 2 GiB");
    let used = free_before.saturating_sub(free_space(root.path()));
    assert!(
        used < 1 << 30,
        "its files are gone ({used} bytes still used)"
    );
}

#[test]
fn a_static_constructor_runs_already_confined_with_the_scan_turned_off() {
    let (_root, instructor, home) = folders();
    let planted = instructor.join("planted-by-constructor");
    // Code in `.init_array` runs before the worker's `main`: the scan would refuse it, so it
    // is turned off here, and the sandbox alone must hold (applied between fork and exec).
    let ctor = format!(
        "static SEEN: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());\n\
         #[used]\n#[link_section = \".init_array\"]\nstatic PLANT: extern \"C\" fn() = {{\n    \
         extern \"C\" fn plant() {{\n        \
         let wrote = std::fs::write({planted:?}, \"owned\").is_ok();\n        \
         let sid = std::process::Command::new(\"setsid\").arg(\"true\").status().is_ok_and(|s| s.success());\n        \
         let status = std::fs::read_to_string(\"/proc/self/status\").unwrap_or_default();\n        \
         let uid = status.lines().find(|l| l.starts_with(\"Uid\")).unwrap_or(\"\").split_whitespace().nth(1).unwrap_or(\"\").to_string();\n        \
         let seccomp = status.lines().find(|l| l.starts_with(\"Seccomp:\")).unwrap_or(\"\").to_string();\n        \
         *SEEN.lock().unwrap() = format!(\"constructor ran: wrote {{wrote}}, setsid {{sid}}, uid {{uid}}, {{seccomp}}\");\n    \
         }}\n    plant\n}};\n"
    );
    let dir = faulty_copy(
        &solution(),
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        &format!("{ctor}\npub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n    panic!(\"{{}}\", SEEN.lock().unwrap());\n"),
    );
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", &["naive_correct"]);
    let g = grade_from(
        &instructor,
        dir.path(),
        &[
            "--gpu",
            "off",
            "--assignment",
            rubric.to_str().expect("utf-8 path"),
        ],
        &[
            ("HOME", home.to_str().expect("utf-8 path")),
            ("GPU_LABS_SOURCE_SCAN", "off-for-tests"),
        ],
    );
    assert_eq!(g.code, Some(0), "grading completes: {}", g.stderr);
    assert!(
        !planted.exists(),
        "the constructor wrote outside its scratch folder"
    );
    assert!(
        std::fs::read_dir(&instructor).expect("ls").next().is_none(),
        "nothing was written into the grader's folder"
    );
    let out = g.output("naive_correct");
    // The constructor ran before `main`, and could do nothing: no write, no new session, not
    // root, under the seccomp filter (mode 2).
    assert!(
        out.contains("constructor ran: wrote false, setsid false"),
        "{out}\n{}\n{}",
        g.stdout,
        g.stderr
    );
    assert!(out.contains("Seccomp:\t2"), "{out}");
    if running_as_root() {
        assert!(!out.contains("uid 0,"), "{out}");
    }
}

/// Whether these tests run as root (then workers must not be).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[test]
fn ctrl_c_during_a_build_leaves_no_cargo_or_rustc_running() {
    // A cache of its own, so the build has its dependencies to compile and is still running.
    let cache = tempfile::tempdir().expect("cache");
    let marker = cache.path().to_str().expect("utf-8 path").to_string();
    let mut grader = std::process::Command::new(gpu_labs_e2e::grader_bin())
        .args(["grade", solution().to_str().expect("utf-8"), "--gpu", "off"])
        .env("GPU_LABS_CACHE", cache.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("grader starts");
    let started = std::time::Instant::now();
    while !gpu_labs_e2e::live_processes_with(&marker)
        .iter()
        .any(|cmd| cmd.contains("rustc") && cmd.contains("--crate-name"))
    {
        assert!(
            started.elapsed().as_secs() < 120,
            "no compiler started within two minutes"
        );
        assert!(
            grader.try_wait().expect("wait").is_none(),
            "grader ended early"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // As Ctrl-C in its terminal would (the build is in a group of its own, which that misses).
    let sent = std::process::Command::new("kill")
        .args(["-INT", &grader.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let status = grader.wait().expect("grader ends");
    assert_eq!(status.code(), Some(130), "ends as interrupted: {status:?}");
    // The kernel may take a moment to tear down what was killed.
    let started = std::time::Instant::now();
    while !gpu_labs_e2e::live_processes_with(&marker).is_empty() && started.elapsed().as_secs() < 10
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        gpu_labs_e2e::live_processes_with(&marker),
        Vec::<String>::new(),
        "nothing of the build is left"
    );
}

#[test]
fn a_build_that_keeps_the_compiler_busy_is_stopped_at_its_limit() {
    if !gpu_labs_e2e::full_suite() {
        eprintln!("full suite only (GPU_LABS_FULL=1): a build held to its CPU limit");
        return;
    }
    // A constant computed by a loop that never ends: the compiler evaluates it for ever.
    let dir = faulty_copy(
        &solution(),
        "pub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        "#[allow(long_running_const_eval)]\npub const SPIN: u64 = { let mut i = 1u64; while i != 0 { i = i.wrapping_mul(3); } i };\npub fn matmul_naive(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
    );
    let started = std::time::Instant::now();
    let g = gpu_labs_e2e::grade_with_env(
        dir.path(),
        &["--gpu", "off"],
        &[("GPU_LABS_BUILD_CPU_SECS", "20")],
    );
    assert_eq!(g.code, Some(0), "grading completes: {}", g.stderr);
    assert!(
        g.stdout.contains("the compiler was stopped")
            || g.output("naive_correct")
                .contains("the compiler was stopped"),
        "{}",
        g.stdout
    );
    assert!(started.elapsed().as_secs() < 240, "stopped near its limit");
    assert_eq!(
        gpu_labs_e2e::live_processes_with("SPIN"),
        Vec::<String>::new()
    );
}

/// The speedup the report's line for `id` shows ("12.3× faster than naive").
fn speedup_shown(g: &Graded, id: &str) -> f64 {
    let line = g
        .stdout
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("no line for {id}: {}", g.stdout));
    line.split_whitespace()
        .find_map(|w| w.strip_suffix('×').and_then(|n| n.parse().ok()))
        .unwrap_or_else(|| panic!("no speedup on: {line}"))
}

#[test]
fn children_left_busy_cannot_slow_the_yardstick_and_do_not_outlive_the_worker() {
    if !gpu_labs_e2e::full_suite() {
        eprintln!("full suite only (GPU_LABS_FULL=1): two speed gradings");
        return;
    }
    let (_rubric_dir, rubric) = gpu_labs_e2e::rubric_with("matmul", &["fast_speedup"]);
    let args = [
        "--gpu",
        "off",
        "--assignment",
        rubric.to_str().expect("utf-8 path"),
    ];
    let honest = gpu_labs_e2e::grade(&solution(), &args);
    // Four processes that spin only while the submission's own code is not running (it tells
    // them through a pipe when it starts and ends): were they left running while the worker is
    // held, the yardstick would share two cores with four spinners, and the submission look
    // two or three times as fast as it is.
    let spinner = "import os, time\nos.set_blocking(0, False)\nrunning = False\nwhile True:\n    try:\n        d = os.read(0, 4096)\n        if not d:\n            break\n        running = d[-1:] == b'1'\n    except BlockingIOError:\n        pass\n    if running:\n        time.sleep(0.0002)\n    else:\n        for _ in range(2000):\n            pass\n";
    let wrapper = format!(
        "static SPINNERS: std::sync::Mutex<Vec<std::process::ChildStdin>> = std::sync::Mutex::new(Vec::new());\n\
         fn tell(what: &[u8]) {{\n    let mut s = SPINNERS.lock().unwrap();\n    if s.is_empty() {{\n        \
         for _ in 0..4 {{\n            if let Ok(mut c) = std::process::Command::new(\"python3\").args([\"-c\", {spinner:?}, \"busy-9373\"]).stdin(std::process::Stdio::piped()).spawn() {{\n                \
         s.extend(c.stdin.take());\n            }}\n        }}\n    }}\n    \
         for p in s.iter_mut() {{ let _ = std::io::Write::write_all(p, what); }}\n}}\n\
         pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n    \
         tell(b\"1\");\n    let c = matmul_fast_inner(a, b);\n    tell(b\"0\");\n    c\n}}\n\
         fn matmul_fast_inner(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {{\n"
    );
    let dir = faulty_copy(
        &solution(),
        "pub fn matmul_fast(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {\n",
        &wrapper,
    );
    let hostile = gpu_labs_e2e::grade(dir.path(), &args);
    let (h, x) = (
        speedup_shown(&honest, "fast_speedup"),
        speedup_shown(&hostile, "fast_speedup"),
    );
    eprintln!("speedup: honest {h:.1}×, with busy children {x:.1}×");
    assert!(
        x < h * 1.5,
        "the busy children slowed the yardstick: {x:.1}× against {h:.1}× alone"
    );
    assert!(hostile.score("fast_speedup") <= honest.score("fast_speedup"));
    assert_eq!(
        gpu_labs_e2e::live_processes_with("busy-9373"),
        Vec::<String>::new(),
        "none outlived its worker"
    );
}

#[test]
fn memory_spread_over_many_processes_is_held_to_the_workers_limit() {
    if !gpu_labs_e2e::full_suite() {
        eprintln!("full suite only (GPU_LABS_FULL=1): five processes of 1.2 GiB each");
        return;
    }
    let (_root, instructor, home) = folders();
    // Each child stays under the 4 GiB a process may map; together they hold 6 GiB.
    let g = grade_hostile(
        "    let mut kids = Vec::new();\n    for _ in 0..5 { kids.push(std::process::Command::new(\"python3\").args([\"-c\", \"import time\\nb = b'x' * (1200 << 20)\\ntime.sleep(600)\", \"hog-4411\"]).spawn().expect(\"python3\")); }\n    std::thread::sleep(std::time::Duration::from_secs(60));\n    panic!(\"the hogs were left alone\");",
        &instructor,
        &home,
    );
    only_naive_lost(&g, "ran out of memory");
    assert_eq!(
        gpu_labs_e2e::live_processes_with("hog-4411"),
        Vec::<String>::new(),
        "none outlived its worker"
    );
}
