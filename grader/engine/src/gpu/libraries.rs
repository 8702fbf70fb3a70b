//! Finding the real CUDA libraries a worker needs (the driver's libcuda, NVRTC, cuBLAS) on
//! the machines students and instructors have, and handing them to workers under the names
//! cudarc looks for.
//!
//! cudarc (built against CUDA 12) tries `libnvrtc.so`, `libnvrtc.so.12`, `.11`, … but not
//! `.13`, so a CUDA 13-only install looks like no NVRTC at all; a toolkit outside the loader's
//! path (`/usr/local/cuda/lib64` without `ldconfig`) is not found either. This module searches
//! the usual places for every major version (newest first), honours an explicit path per
//! library (`GPU_LABS_LIBCUDA`, `GPU_LABS_LIBNVRTC`, `GPU_LABS_LIBCUBLAS`), and makes a folder
//! of links (`libnvrtc.so -> /usr/local/cuda-13.0/lib64/libnvrtc.so.13`) that goes first on a
//! worker's `LD_LIBRARY_PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One CUDA library a GPU item may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// The driver API (`libcuda.so.1`), installed with the NVIDIA driver.
    Driver,
    /// The runtime compiler (`libnvrtc.so.N`), part of the CUDA toolkit.
    Nvrtc,
    /// cuBLAS (`libcublas.so.N`, with its `libcublasLt.so.N`), part of the CUDA toolkit.
    Cublas,
}

impl Library {
    /// Every library, in the order a trial uses them.
    pub const ALL: [Library; 3] = [Library::Driver, Library::Nvrtc, Library::Cublas];

    /// The file name cudarc asks the loader for first.
    pub fn link_name(self) -> &'static str {
        match self {
            Library::Driver => "libcuda.so",
            Library::Nvrtc => "libnvrtc.so",
            Library::Cublas => "libcublas.so",
        }
    }

    /// The variable that names this library's file explicitly.
    pub fn path_variable(self) -> &'static str {
        match self {
            Library::Driver => "GPU_LABS_LIBCUDA",
            Library::Nvrtc => "GPU_LABS_LIBNVRTC",
            Library::Cublas => "GPU_LABS_LIBCUBLAS",
        }
    }

    /// File names to look for, most specific (newest major version) first.
    fn file_names(self) -> Vec<String> {
        let base = self.link_name();
        match self {
            Library::Driver => vec![format!("{base}.1"), base.to_string()],
            Library::Nvrtc | Library::Cublas => {
                let mut names: Vec<String> = CUDA_MAJORS
                    .iter()
                    .map(|major| format!("{base}.{major}"))
                    .collect();
                names.push(base.to_string());
                names
            }
        }
    }

    /// What to install when it is missing, in one line.
    pub fn install_hint(self) -> &'static str {
        match self {
            Library::Driver => "install the NVIDIA driver",
            Library::Nvrtc => {
                "install the CUDA toolkit's NVRTC (package cuda-nvrtc-12-x or cuda-nvrtc-13-x)"
            }
            Library::Cublas => {
                "install the CUDA toolkit's cuBLAS (package libcublas-12-x or libcublas-13-x)"
            }
        }
    }
}

/// CUDA major versions whose libraries are searched, newest first.
const CUDA_MAJORS: &[u32] = &[13, 12, 11];

/// Where each library was found (or why not).
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// (library, its file) for each library found.
    pub paths: Vec<(Library, PathBuf)>,
    /// One line per explicit path that does not exist.
    pub problems: Vec<String>,
}

impl Found {
    /// The file found for `library`.
    pub fn path(&self, library: Library) -> Option<&Path> {
        self.paths
            .iter()
            .find(|(l, _)| *l == library)
            .map(|(_, p)| p.as_path())
    }
}

/// Looks for each library: its explicit variable first, then `LD_LIBRARY_PATH`, the CUDA
/// toolkit's folders and the system's library folders.
pub fn find() -> Found {
    let dirs = search_dirs();
    let mut found = Found::default();
    for library in Library::ALL {
        if let Some(explicit) = std::env::var_os(library.path_variable()).filter(|v| !v.is_empty())
        {
            let path = PathBuf::from(&explicit);
            if path.is_file() {
                found.paths.push((library, path));
            } else {
                found.problems.push(format!(
                    "{}={} is not a file: point it at the library itself (e.g. {}.13)",
                    library.path_variable(),
                    path.display(),
                    library.link_name()
                ));
            }
            continue;
        }
        if let Some(path) = find_in(&dirs, &library.file_names()) {
            found.paths.push((library, path));
        }
    }
    found
}

/// The first `names[i]` present in any of `dirs` (names in order of preference, then dirs).
fn find_in(dirs: &[PathBuf], names: &[String]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        dirs.iter()
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    })
}

/// The folders searched, in order.
fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
    }
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(Path::new(&root).join("lib64"));
            dirs.push(Path::new(&root).join("lib"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.push("/usr/local/cuda/targets/x86_64-linux/lib".into());
    // Versioned toolkits, newest first (`cuda-13.0` before `cuda-12.8`).
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        let mut versioned: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("cuda-"))
            })
            .collect();
        versioned.sort_by_key(|p| std::cmp::Reverse(version_of(p)));
        dirs.extend(versioned.into_iter().map(|p| p.join("lib64")));
    }
    for system in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/lib/wsl/lib",
    ] {
        dirs.push(system.into());
    }
    dirs
}

/// `(major, minor)` of a `cuda-12.8` folder.
fn version_of(dir: &Path) -> (u32, u32) {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut parts = name.trim_start_matches("cuda-").split('.');
    let mut next = || parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (next(), next())
}

/// The environment that lets a worker's cudarc load what `found` names: a folder of links
/// under the names cudarc asks for, then the libraries' own folders (cuBLAS loads its
/// `libcublasLt` from beside it), before any `LD_LIBRARY_PATH` already set.
pub fn worker_env(found: &Found, cache: &Path) -> std::io::Result<Vec<(OsString, OsString)>> {
    if found.paths.is_empty() {
        return Ok(Vec::new());
    }
    let key: Vec<u8> = found
        .paths
        .iter()
        .flat_map(|(_, p)| p.as_os_str().as_encoded_bytes().iter().copied().chain([0]))
        .collect();
    let mut hash = crate::fingerprint::Fnv::default();
    hash.write(&key);
    let dir = cache.join(format!("cuda-libs-{:016x}", hash.finish()));
    std::fs::create_dir_all(&dir)?;
    for (library, path) in &found.paths {
        let link = dir.join(library.link_name());
        if std::fs::read_link(&link).ok().as_deref() != Some(path.as_path()) {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(path, &link)?;
        }
    }
    let mut dirs = vec![dir];
    for (_, path) in &found.paths {
        if let Some(parent) = path.parent().filter(|p| !dirs.iter().any(|d| d == p)) {
            dirs.push(parent.to_path_buf());
        }
    }
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&old).filter(|p| !p.as_os_str().is_empty()));
    }
    let joined = std::env::join_paths(dirs)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    Ok(vec![("LD_LIBRARY_PATH".into(), joined)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_major_version_is_found_first_and_linked_under_cudarcs_name() {
        let root = tempfile::tempdir().expect("tempdir");
        let old = root.path().join("cuda-12.8");
        let new = root.path().join("cuda-13.0");
        for dir in [&old, &new] {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(old.join("libnvrtc.so.12"), "").expect("write");
        std::fs::write(new.join("libnvrtc.so.13"), "").expect("write");
        let dirs = vec![old.clone(), new.clone()];
        let path = find_in(&dirs, &Library::Nvrtc.file_names()).expect("found");
        assert_eq!(path, new.join("libnvrtc.so.13"));

        let found = Found {
            paths: vec![(Library::Nvrtc, path.clone())],
            problems: Vec::new(),
        };
        let cache = root.path().join("cache");
        let env = worker_env(&found, &cache).expect("env");
        let ld = std::env::split_paths(&env[0].1).collect::<Vec<_>>();
        assert_eq!(
            std::fs::read_link(ld[0].join("libnvrtc.so")).expect("link"),
            path
        );
        assert_eq!(ld[1], new, "the library's own folder follows the links");
        assert_eq!(
            version_of(Path::new("/usr/local/cuda-12.10")),
            (12, 10),
            "versions compare as numbers"
        );
    }
}
