//! The sandbox of a submission's official build. Code is not run at build time (the lab's
//! manifest allows no build script or procedural macro of the student's), but the compiler
//! reads what the code names: `include_str!`, `include_bytes!`, `#[path]` and `env!` could
//! embed any file or variable of the grading machine in the binary, and a panic would carry it
//! into the student's feedback. So the build reads only the system's folders, the toolchain,
//! the registry, the grader's own crate and the staged crate, writes only the staged crate,
//! the build folder and the registry, and sees only the environment a build needs.

use super::SandboxError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folders of the Rust toolchain and of cargo's registry: read, and (the registry)
/// written when a crate is downloaded.
fn toolchain_folders() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (cargo_home, rustup_home) = real_homes();
    let mut readable = Vec::new();
    let mut writable = Vec::new();
    if let Some(cargo) = &cargo_home {
        // Not the whole of it, nor its configuration: it may hold a registry token or a proxy's
        // password. Builds have a cargo home of their own ([`made_cargo_home`]).
        readable.push(cargo.join("bin"));
        // Cargo's locks and download tracker: made now so that the rules can name them.
        for name in [".package-cache", ".package-cache-mutate", ".global-cache"] {
            let path = cargo.join(name);
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path);
            writable.push(path);
        }
        for name in ["registry", "git"] {
            let _ = std::fs::create_dir_all(cargo.join(name));
            writable.push(cargo.join(name));
        }
    }
    readable.extend(rustup_home);
    // Wherever the cargo and rustc in use live: the ones cargo named when it started the
    // grader, and the ones on PATH that the build will run (a system install, a CI's or an
    // image's toolchain folder outside CARGO_HOME and RUSTUP_HOME).
    let named = [std::env::var_os("CARGO"), std::env::var_os("RUSTC")];
    let found = ["cargo", "rustc"].map(on_path);
    for program in named
        .into_iter()
        .flatten()
        .map(PathBuf::from)
        .chain(found.into_iter().flatten())
    {
        readable.extend(toolchain_root(&program, cargo_home.as_deref()));
    }
    (readable, writable)
}

/// The first executable file called `name` in the folders of PATH, as a command would run it.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The toolchain folder of `program` (`<root>/bin/cargo` gives `<root>`, which holds its `lib`
/// with the compiler and the standard library), after following links. None for a program in
/// CARGO_HOME (rustup's proxies: their toolchains are in RUSTUP_HOME, and CARGO_HOME may hold a
/// registry token) or at the top of the filesystem (`/bin/cargo` would open all of `/`).
fn toolchain_root(program: &Path, cargo_home: Option<&Path>) -> Option<PathBuf> {
    let real = std::fs::canonicalize(program).ok()?;
    let root = real.parent()?.parent()?;
    let in_cargo_home = cargo_home
        .and_then(|h| std::fs::canonicalize(h).ok())
        .is_some_and(|h| root.starts_with(&h));
    (root.parent().is_some() && !in_cargo_home).then(|| root.to_path_buf())
}

/// The instructor's cargo home and rustup home, as cargo and rustup find them.
fn real_homes() -> (Option<PathBuf>, Option<PathBuf>) {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".cargo")));
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".rustup")));
    (cargo, rustup)
}

/// The cargo home a submission's build runs with, made under `root` (the grader's cache): the
/// instructor's downloaded crates (its `registry` and `git` are links to theirs), and a
/// `config.toml` with nothing of theirs but where crates come from (`[source]`: a mirror), so
/// no token, proxy password or other setting of the instructor's reaches a build.
pub fn made_cargo_home(root: &Path) -> std::io::Result<PathBuf> {
    let home = root.join("build-home");
    let cargo = home.join(".cargo");
    std::fs::create_dir_all(&cargo)?;
    let (real, _) = real_homes();
    let mut config = String::from(
        "# Made by the grader for submissions' builds: only where crates come from is taken \
         from the instructor's configuration.\n",
    );
    if let Some(real) = &real {
        for name in ["registry", "git"] {
            let _ = std::fs::create_dir_all(real.join(name));
            crate::emulate::ensure_link(&cargo.join(name), &real.join(name))?;
        }
        let theirs = std::fs::read_to_string(real.join("config.toml"))
            .or_else(|_| std::fs::read_to_string(real.join("config")))
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok());
        if let Some(source) = theirs.as_ref().and_then(|t| t.get("source")) {
            let mut only = toml::Table::new();
            only.insert("source".into(), source.clone());
            config.push_str(&toml::to_string(&only).unwrap_or_default());
        }
    }
    // Written aside and renamed: a build of another lab may be reading it.
    let aside = cargo.join(format!(".config.toml.{}", std::process::id()));
    std::fs::write(&aside, config)?;
    std::fs::rename(&aside, cargo.join("config.toml"))?;
    Ok(home)
}

/// The environment of a submission's build: the workers' (no token, key or proxy), with a home
/// and cargo home of its own ([`made_cargo_home`]), the instructor's rustup home (where the
/// toolchain is), and no network: the lab's crates were fetched before, by the grader.
pub fn build_environment(cmd: &mut Command, home: &Path) {
    super::clean_environment(cmd);
    let (_, rustup) = real_homes();
    for name in ["RUSTUP_TOOLCHAIN", "CARGO", "RUSTC"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    if let Some(rustup) = rustup.filter(|r| r.is_dir()) {
        cmd.env("RUSTUP_HOME", rustup);
    }
    cmd.env("HOME", home)
        .env("CARGO_HOME", home.join(".cargo"))
        .env("CARGO_NET_OFFLINE", "true");
}

/// Confines the build `cmd` will start: it may read the system's folders, the toolchain, the
/// grader's crate (`grader_dir`, and what it embeds from its repository) and `stage`, and
/// write `stage`, `target` and the registry. Nothing happens when the sandbox is off or this
/// kernel has no Landlock (the report says so).
pub fn confine(
    cmd: &mut Command,
    stage: &Path,
    target: &Path,
    grader_dir: &Path,
) -> Result<(), SandboxError> {
    let home = made_cargo_home(target.parent().unwrap_or(target))
        .map_err(|e| SandboxError(format!("cannot make the build's cargo home: {e}")))?;
    build_environment(cmd, &home);
    let protections = super::available();
    if !protections.filesystem {
        return Ok(());
    }
    let (mut readable, mut writable) = toolchain_folders();
    readable.push(home.clone());
    readable.extend(super::SYSTEM_READABLE.iter().map(PathBuf::from));
    readable.push(grader_dir.to_path_buf());
    if let Some(root) = grader_dir.parent() {
        // What the grader's crate embeds: the rubrics, the labs' manifests and harnesses; not
        // the solutions' sources.
        readable.extend(["Cargo.toml", "Cargo.lock", "assignments"].map(|p| root.join(p)));
        if let Ok(labs) = std::fs::read_dir(root.join("solutions")) {
            for lab in labs.flatten() {
                readable.push(lab.path().join("Cargo.toml"));
                readable.push(lab.path().join("tests"));
            }
        }
    }
    // Cargo reads the configuration of every folder above the one it builds in.
    for folder in stage.ancestors() {
        readable.push(folder.join(".cargo").join("config.toml"));
        readable.push(folder.join(".cargo").join("config"));
    }
    let _ = std::fs::create_dir_all(target);
    let tmp = target.join("tmp");
    let _ = std::fs::create_dir_all(&tmp);
    cmd.env("TMPDIR", &tmp);
    writable.extend([stage.to_path_buf(), target.to_path_buf()]);
    writable.extend(super::SYSTEM_WRITABLE.iter().map(PathBuf::from));
    readable.retain(|p| p.exists());
    writable.retain(|p| p.exists());
    restrict_child(cmd, &readable, &writable, protections)
}

#[cfg(target_os = "linux")]
fn restrict_child(
    cmd: &mut Command,
    readable: &[PathBuf],
    writable: &[PathBuf],
    protections: super::Protections,
) -> Result<(), SandboxError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    // Downloads of the lab's crates are allowed: only what the compiler reads is confined.
    let files_only = super::Protections {
        network: false,
        ..protections
    };
    let ruleset = super::files::ruleset(readable, writable, files_only)?;
    let fd: Option<std::os::fd::OwnedFd> = ruleset.into();
    let fd = fd.ok_or_else(|| SandboxError("Landlock gave no ruleset".into()))?;
    // SAFETY: the closure runs in the forked child before exec and calls only prctl and the
    // landlock_restrict_self system call (async-signal-safe); the ruleset's descriptor is owned
    // by the closure, so it stays open until then.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn restrict_child(
    _: &mut Command,
    _: &[PathBuf],
    _: &[PathBuf],
    _: super::Protections,
) -> Result<(), SandboxError> {
    Ok(())
}

/// The compiler's error when the build tried to read a file outside what it may read, as a
/// hint for the student (`None` for any other error).
pub fn outside_read(error: &str) -> Option<String> {
    let line = error
        .lines()
        .find(|l| l.contains("couldn't read") && l.contains("os error 13"))?;
    let path = line.split('`').nth(1).unwrap_or("a file");
    Some(format!(
        "the code reads `{path}` at compile time, outside the crate: official grading builds \
         in a sandbox that reads only the crate's own files, so `include_str!`, \
         `include_bytes!` and `#[path]` may name files inside `src/` only"
    ))
}
