//! The sandbox of a submission's official build. Code is not run at build time (the lab's
//! manifest allows no build script or procedural macro of the student's), but the compiler
//! reads what the code names: `include_str!`, `include_bytes!`, `#[path]` and `env!` could
//! embed any file or variable of the grading machine in the binary, and a panic would carry it
//! into the student's feedback. So the build reads only the system's folders, the toolchain,
//! the registry, the grader's own crate and the staged crate, writes only the staged crate,
//! the build folder and the registry, and sees only the environment a build needs.
//!
//! A submission's own crate is built apart from its classmates' ([`Place`]): its own stage and
//! target folder (the class's dependencies given by hard links, [`link_tree`]), the class's
//! cargo home read only, as the workers' unprivileged identity when the grader runs as root.
//! What that identity could not reach of root's (a toolchain and a registry in `/root`) is
//! given the same way, once ([`Toolchain::for_builds`], [`made_cargo_home`]): nothing of
//! root's is made more open than it was.

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

/// The instructor's cargo home, as cargo finds it (where the grader's own build took the
/// registry's crates from).
pub fn instructor_cargo_home() -> Option<PathBuf> {
    real_homes().0
}

/// The cargo home a submission's build runs with, made under `root` (the grader's cache): the
/// instructor's downloaded crates, and a `config.toml` with nothing of theirs but where crates
/// come from (`[source]`: a mirror), so no token, proxy password or other setting of the
/// instructor's reaches a build. Its `registry` and `git` are links to the instructor's, or,
/// with `linked` (builds that run as another user, who could not enter a cargo home in
/// `/root`), folders of hard links to their files, brought up to date on each call.
///
/// The two kinds are two homes ([`BUILD_HOMES`]): graders of both kinds may share one cache at
/// once (a Slurm array's tasks, root's and a user's), and one home turned from links into
/// folders and back under another grader's build failed it ("Directory not empty", "Is a
/// directory").
pub fn made_cargo_home(root: &Path, linked: bool) -> std::io::Result<PathBuf> {
    let home = root.join(BUILD_HOMES[usize::from(linked)]);
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
            let ours = cargo.join(name);
            if linked {
                if std::fs::symlink_metadata(&ours).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&ours)?;
                }
                link_tree(&real.join(name), &ours, Share::Everything, &|_| true)?;
            } else {
                if std::fs::symlink_metadata(&ours).is_ok_and(|m| m.is_dir()) {
                    // A tree here was made by a grader from before the two homes were apart,
                    // which may still be adding to it: renamed aside first (atomic), then
                    // removed, as removing it in place would fail ("Directory not empty").
                    let aside = cargo.join(format!(".{name}.old.{}", std::process::id()));
                    match std::fs::rename(&ours, &aside) {
                        Ok(()) => {
                            let _ = std::fs::remove_dir_all(&aside);
                        }
                        // Another grader moved it first.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                }
                crate::emulate::ensure_link(&ours, &real.join(name))?;
            }
        }
        let read = |name: &str| {
            crate::intake::read_text(&real.join(name), crate::intake::SMALL_FILE_BYTES, name)
        };
        let theirs = read("config.toml")
            .or_else(|_| read("config"))
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

/// The folders of a cache that [`made_cargo_home`] makes: with links to the instructor's
/// registry, and with folders of hard links to it.
pub const BUILD_HOMES: [&str; 2] = ["build-home", "build-home-linked"];

/// Which files [`link_tree`] links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// Every file (a toolchain, a registry: nothing rewrites them).
    Everything,
    /// Only what a compiler writes anew when it writes it again, never in place (libraries,
    /// programs); the rest (cargo's fingerprints, dependency lists, build scripts' outputs,
    /// which cargo rewrites in place) is copied, so a build can never change the class's.
    Outputs,
}

/// Whether [`Share::Outputs`] links `path` (of `meta`) rather than copying it.
fn is_output(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(ext, "rlib" | "rmeta" | "so" | "a" | "dylib") || meta.permissions().mode() & 0o111 != 0
}

/// Makes `to` hold every file under `from` that `keep` keeps (given its path relative to
/// `from`) as a hard link (a copy across file systems, or where `share` says), as `cp -al`
/// would: folders made, symbolic links made again, a file already linked left alone, any other
/// replaced. Returns the folders it made and the files it copied, which the caller may give to
/// the build's user: linked files stay whose they were, so a build given them can read them
/// but not change the originals.
pub fn link_tree(
    from: &Path,
    to: &Path,
    share: Share,
    keep: &dyn Fn(&Path) -> bool,
) -> std::io::Result<Vec<PathBuf>> {
    use std::os::unix::fs::MetadataExt;
    let mut made = Vec::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(relative) = folders.pop() {
        let there = to.join(&relative);
        if std::fs::symlink_metadata(&there).is_err() {
            std::fs::create_dir_all(&there)?;
            made.push(there.clone());
        }
        for entry in std::fs::read_dir(from.join(&relative))? {
            let entry = entry?;
            let name = relative.join(entry.file_name());
            if !keep(&name) {
                continue;
            }
            let meta = std::fs::symlink_metadata(entry.path())?;
            let dest = to.join(&name);
            let existing = std::fs::symlink_metadata(&dest).ok();
            if meta.is_dir() {
                folders.push(name);
            } else if meta.file_type().is_symlink() {
                if existing.is_none() {
                    std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &dest)?;
                }
            } else if meta.is_file() {
                let same = existing.as_ref().is_some_and(|e| {
                    (e.ino() == meta.ino() && e.dev() == meta.dev())
                        // A copy made before (across file systems), not changed since.
                        || (share == Share::Everything
                            && e.len() == meta.len()
                            && e.modified().ok() == meta.modified().ok())
                });
                if same {
                    continue;
                }
                if existing.is_some() {
                    std::fs::remove_file(&dest)?;
                }
                let linked = (share == Share::Everything || is_output(&name, &meta))
                    && std::fs::hard_link(entry.path(), &dest).is_ok();
                if !linked {
                    std::fs::copy(entry.path(), &dest)?;
                    // As old as the original: cargo compares these times to tell what is
                    // built already.
                    let times = std::fs::FileTimes::new()
                        .set_modified(meta.modified()?)
                        .set_accessed(meta.accessed()?);
                    std::fs::File::options()
                        .write(true)
                        .open(&dest)?
                        .set_times(times)?;
                    made.push(dest);
                }
            }
        }
    }
    Ok(made)
}

/// The `cargo` and `rustc` every build of submissions runs, and the toolchain folder they are
/// in when it had to be given to the builds' user.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// Cargo.
    pub cargo: PathBuf,
    /// The compiler (`RUSTC` of the builds).
    pub rustc: Option<PathBuf>,
    /// The toolchain's folder, when it is a copy made for the builds (to be readable).
    pub folder: Option<PathBuf>,
}

impl Toolchain {
    /// The toolchain of builds run as `user`: the grader's own cargo (`$CARGO`, else the one on
    /// PATH) when the build runs as the grader or can reach it; else the grader's toolchain
    /// (`rustc --print sysroot`, asked in `cwd`, where the builds run) given by hard links under
    /// `cache/toolchain/` (its programs and libraries, not its documentation), made once.
    pub fn for_builds(
        cache: &Path,
        cwd: &Path,
        user: Option<super::child::Identity>,
    ) -> std::io::Result<Toolchain> {
        let cargo = std::env::var_os("CARGO")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("cargo"));
        let plain = Toolchain {
            cargo: cargo.clone(),
            rustc: None,
            folder: None,
        };
        if user.is_none() {
            return Ok(plain);
        }
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let out = Command::new(&rustc)
            .args(["--print", "sysroot"])
            .current_dir(cwd)
            .output()?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !out.status.success() || !sysroot.join("bin").join("cargo").is_file() {
            return Err(std::io::Error::other(format!(
                "cannot find the toolchain's cargo (rustc --print sysroot gave {})",
                sysroot.display()
            )));
        }
        if super::root::reachable(&sysroot.join("bin").join("rustc")) {
            return Ok(Toolchain {
                cargo: sysroot.join("bin").join("cargo"),
                rustc: Some(sysroot.join("bin").join("rustc")),
                folder: Some(sysroot),
            });
        }
        let version = Command::new(sysroot.join("bin").join("rustc"))
            .arg("-vV")
            .output()?;
        let name = format!(
            "{}-{:016x}",
            sysroot
                .file_name()
                .map_or("toolchain".into(), |n| n.to_string_lossy()),
            fnv(&[sysroot.as_os_str().as_encoded_bytes(), &version.stdout].concat())
        );
        let folder = cache.join("toolchain").join(name);
        if !folder.join("bin").join("rustc").is_file() {
            // Made aside and renamed: another grader may be making the same one.
            let aside = cache
                .join("toolchain")
                .join(format!(".making-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&aside);
            for part in ["bin", "lib", "libexec", "etc"] {
                if sysroot.join(part).is_dir() {
                    link_tree(
                        &sysroot.join(part),
                        &aside.join(part),
                        Share::Everything,
                        &|_| true,
                    )?;
                }
            }
            if std::fs::rename(&aside, &folder).is_err() {
                let _ = std::fs::remove_dir_all(&aside);
            }
        }
        Ok(Toolchain {
            cargo: folder.join("bin").join("cargo"),
            rustc: Some(folder.join("bin").join("rustc")),
            folder: Some(folder),
        })
    }
}

/// FNV-1a of `bytes`: a stable name for a toolchain's copy.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The environment of a submission's build: the workers' (no token, key or proxy), with a home
/// and cargo home of its own ([`made_cargo_home`]), the instructor's rustup home (where the
/// toolchain is) or the `toolchain` given to the builds, and no network: the lab's crates were
/// fetched before, by the grader.
pub fn build_environment(cmd: &mut Command, home: &Path, toolchain: &Toolchain) {
    super::clean_environment(cmd);
    let (_, rustup) = real_homes();
    for name in ["RUSTUP_TOOLCHAIN", "CARGO", "RUSTC"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    if let Some(rustc) = &toolchain.rustc {
        cmd.env("CARGO", &toolchain.cargo).env("RUSTC", rustc);
    }
    if let Some(rustup) = rustup.filter(|r| r.is_dir()) {
        cmd.env("RUSTUP_HOME", rustup);
    }
    cmd.env("HOME", home)
        .env("CARGO_HOME", home.join(".cargo"))
        .env("CARGO_NET_OFFLINE", "true");
}

/// Where one build runs and what it may touch besides the system and the toolchain.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The staged crate (read and written).
    pub stage: &'a Path,
    /// Its target folder (read and written; its `tmp` is the build's TMPDIR).
    pub target: &'a Path,
    /// Its home, holding its cargo home (read; written by the dependencies' build only).
    /// Every build of the class has the same: cargo tells the registry's crates apart by
    /// where they are, so another path would rebuild them all.
    pub home: &'a Path,
    /// The grader's crate, which the harness depends on (read).
    pub grader_dir: &'a Path,
    /// Files besides (read): the compiler wrapper.
    pub also_readable: &'a [PathBuf],
    /// The cargo and rustc it runs.
    pub toolchain: &'a Toolchain,
    /// Whether it builds only the class's dependencies (the grader's code and the registry's,
    /// no submission's): it may then also write its home and the instructor's registry.
    pub dependencies: bool,
}

/// Confines the build `cmd` will start at `place`: it may read the system's folders, the
/// toolchain, the registry, the grader's crate (and what it embeds from its repository) and
/// the stage, and write the stage and the target folder (and, building the dependencies, its
/// home and the registry; cargo goes on without its locks there). Nothing happens when the
/// sandbox is off or this kernel has no Landlock (the report says so).
pub fn confine(cmd: &mut Command, place: Place<'_>) -> Result<(), SandboxError> {
    build_environment(cmd, place.home, place.toolchain);
    let protections = super::available();
    if !protections.filesystem {
        return Ok(());
    }
    let (mut readable, registry_writable) = toolchain_folders();
    let mut writable = Vec::new();
    if place.dependencies {
        writable.extend(registry_writable);
        writable.push(place.home.to_path_buf());
    } else {
        readable.push(place.home.to_path_buf());
    }
    readable.extend(place.toolchain.folder.clone());
    readable.extend(place.also_readable.iter().cloned());
    let cargo_home = place.home.join(".cargo");
    for name in ["registry", "git"] {
        // What the home's links lead to: Landlock rules follow a path to its end.
        readable.extend(std::fs::canonicalize(cargo_home.join(name)));
    }
    readable.extend(super::SYSTEM_READABLE.iter().map(PathBuf::from));
    readable.push(place.grader_dir.to_path_buf());
    if let Some(root) = place.grader_dir.parent() {
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
    for folder in place.stage.ancestors() {
        readable.push(folder.join(".cargo").join("config.toml"));
        readable.push(folder.join(".cargo").join("config"));
    }
    let _ = std::fs::create_dir_all(place.target);
    let tmp = place.target.join("tmp");
    let _ = std::fs::create_dir_all(&tmp);
    cmd.env("TMPDIR", &tmp);
    writable.extend([place.stage.to_path_buf(), place.target.to_path_buf()]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn builds_as_another_user_and_as_the_grader_keep_a_cargo_home_each() {
        let Some(real) = instructor_cargo_home().filter(|h| h.join("registry").is_dir()) else {
            eprintln!("no instructor cargo registry here: nothing to link");
            return;
        };
        let cache = tempfile::tempdir().expect("cache");
        let linked = made_cargo_home(cache.path(), true).expect("linked home");
        let plain = made_cargo_home(cache.path(), false).expect("plain home");
        assert_ne!(linked, plain);
        // The plain home's links did not turn the linked home's folders into links (a build of
        // another user's may be reading them), nor the other way round.
        let kind = |home: &Path| {
            std::fs::symlink_metadata(home.join(".cargo/registry"))
                .expect("registry")
                .file_type()
        };
        assert!(kind(&linked).is_dir());
        assert!(kind(&plain).is_symlink());
        made_cargo_home(cache.path(), true).expect("linked again");
        assert!(kind(&plain).is_symlink());
        assert_eq!(
            std::fs::read_link(plain.join(".cargo/registry")).expect("a link"),
            real.join("registry")
        );
    }

    #[test]
    fn a_target_folder_is_given_by_links_to_its_libraries_and_copies_of_what_cargo_rewrites() {
        let from = tempfile::tempdir().expect("from");
        let deps = from.path().join("deps");
        std::fs::create_dir_all(deps.join("sub")).expect("mkdir");
        std::fs::write(deps.join("libx-0123.rlib"), "lib").expect("rlib");
        std::fs::write(deps.join("x-0123.d"), "dep-info").expect("d");
        std::fs::write(deps.join("sub/output"), "cargo:rerun").expect("output");
        std::fs::write(deps.join("skipped"), "no").expect("skipped");
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        std::fs::File::options()
            .write(true)
            .open(deps.join("x-0123.d"))
            .and_then(|f| f.set_modified(old))
            .expect("an old time");
        let to = tempfile::tempdir().expect("to");
        let made = link_tree(from.path(), to.path(), Share::Outputs, &|p| {
            !p.ends_with("skipped")
        })
        .expect("linked");
        let ino = |p: &Path| std::fs::metadata(p).expect("there").ino();
        let (a, b) = (from.path().join("deps"), to.path().join("deps"));
        assert_eq!(
            ino(&a.join("libx-0123.rlib")),
            ino(&b.join("libx-0123.rlib"))
        );
        assert_ne!(ino(&a.join("x-0123.d")), ino(&b.join("x-0123.d")));
        assert_eq!(
            std::fs::read(b.join("sub/output")).expect("copy"),
            b"cargo:rerun"
        );
        let modified = |p: &Path| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .expect("time")
        };
        assert_eq!(modified(&b.join("x-0123.d")), old, "a copy keeps its time");
        assert!(!b.join("skipped").exists());
        // What the caller gives to the build's user: folders and copies, never a link.
        assert!(made.contains(&b.join("x-0123.d")) && made.contains(&b.join("sub")));
        assert!(!made.contains(&b.join("libx-0123.rlib")));
        // Again, everything kept: copies made before and not changed since are left alone.
        let again = link_tree(from.path(), to.path(), Share::Everything, &|_| true).expect("again");
        assert!(again.is_empty(), "{again:?}");
        assert_eq!(ino(&a.join("skipped")), ino(&b.join("skipped")));
        assert_ne!(ino(&a.join("x-0123.d")), ino(&b.join("x-0123.d")));
    }
}
