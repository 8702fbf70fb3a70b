//! What a worker of a grader run as root needs of root's files once it is no longer root (see
//! [`super::child::Identity`]): its scratch folder and kernel cache become its own, and its
//! program, working folder and libraries, where another user could not reach them (a
//! temporary folder only root may enter, a cache in root's home), are given to it as hard
//! links (copies across file systems) inside its scratch folder. Nothing of root's is made
//! more open than it was.

use super::child::Identity;
use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Whether a user other than the owner can reach `path`: every folder above it searchable by
/// others, the path itself readable (and searchable, for a folder) by others.
pub fn reachable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    let mode = meta.permissions().mode();
    let own = if meta.is_dir() { 0o005 } else { 0o004 };
    if mode & own != own {
        return false;
    }
    path.ancestors()
        .skip(1)
        .all(|dir| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// Whether a user other than the owner can load every library in `dir`: the folder, and the
/// file each of its entries leads to. A folder anyone may enter can hold links to files in a
/// folder only root may enter (the tracer in a kit unpacked under `mktemp -d`): the dynamic
/// loader would be refused that file and go on down the path to the next library of the
/// same name, the one the link was there to stand in front of.
fn all_reachable(dir: &Path) -> bool {
    reachable(dir)
        && std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().all(|entry| {
                std::fs::canonicalize(entry.path()).map_or(true, |target| reachable(&target))
            })
        })
}

/// Makes `path` (a folder and what it holds, not deeper) owned by `id`.
pub fn own(path: &Path, id: Identity) -> std::io::Result<()> {
    std::os::unix::fs::chown(path, Some(id.uid), Some(id.gid))?;
    if path.is_dir() {
        for entry in std::fs::read_dir(path)?.flatten() {
            let p = entry.path();
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.uid() != id.uid) {
                std::os::unix::fs::lchown(&p, Some(id.uid), Some(id.gid))?;
                if p.is_dir() && !p.is_symlink() {
                    own(&p, id)?;
                }
            }
        }
    }
    Ok(())
}

/// A hard link to `file` (a copy where no link can be made) at `to`.
fn link(file: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::hard_link(file, to).or_else(|_| std::fs::copy(file, to).map(|_| ()))
}

/// What the worker runs, where, with which libraries, as given to it in `scratch`.
pub struct Given {
    /// Its program.
    pub program: PathBuf,
    /// Its working folder.
    pub cwd: Option<PathBuf>,
    /// `LD_LIBRARY_PATH` to set, when one of its folders had to be given.
    pub library_path: Option<OsString>,
}

/// Gives the worker `id` in `scratch` what it needs that it could not reach: `program`,
/// `cwd`, the folders of `library_path` (each file in them under its own name, links
/// followed).
pub fn give(
    scratch: &Path,
    program: &Path,
    cwd: Option<&Path>,
    library_path: Option<&OsString>,
) -> std::io::Result<Given> {
    let program = if reachable(program) {
        program.to_path_buf()
    } else {
        let to = scratch.join(program.file_name().unwrap_or("worker".as_ref()));
        link(program, &to)?;
        to
    };
    let cwd = cwd.map(|dir| {
        if reachable(dir) {
            dir.to_path_buf()
        } else {
            scratch.to_path_buf()
        }
    });
    let mut changed = false;
    let mut folders = Vec::new();
    for (i, dir) in library_path
        .map(std::env::split_paths)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if dir.as_os_str().is_empty() || !dir.is_dir() || all_reachable(&dir) {
            folders.push(dir);
            continue;
        }
        let given = scratch.join(format!("lib-{i}"));
        std::fs::create_dir_all(&given)?;
        for entry in std::fs::read_dir(&dir)?.flatten() {
            if let Ok(target) = std::fs::canonicalize(entry.path()) {
                if target.is_file() {
                    link(&target, &given.join(entry.file_name()))?;
                }
            }
        }
        folders.push(given);
        changed = true;
    }
    let library_path = if changed {
        Some(std::env::join_paths(folders).map_err(std::io::Error::other)?)
    } else {
        None
    };
    Ok(Given {
        program,
        cwd,
        library_path,
    })
}

/// Gives a worker in `scratch` the folder `dir` (every file in it and its subfolders, links
/// followed) as `scratch/name`, when the worker could not reach it; `None` when it can. The
/// kernel compiler's CUDA headers, which the grader lays out beside the emulator library in a
/// cache a worker's identity may not enter (root's own `~/.cache`).
pub fn give_folder(scratch: &Path, dir: &Path, name: &str) -> std::io::Result<Option<PathBuf>> {
    if !dir.is_dir() || (reachable(dir) && all_reachable_below(dir)) {
        return Ok(None);
    }
    let given = scratch.join(name);
    copy_tree(dir, &given)?;
    Ok(Some(given))
}

/// Whether everything below `dir`, at any depth, is reachable.
fn all_reachable_below(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().all(|entry| {
            std::fs::canonicalize(entry.path()).is_ok_and(|target| {
                reachable(&target) && (!target.is_dir() || all_reachable_below(&target))
            })
        })
    })
}

/// Links every file under `from` into the same place under `to`, making the folders.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)?.flatten() {
        let target = std::fs::canonicalize(entry.path())?;
        let dest = to.join(entry.file_name());
        if target.is_dir() {
            copy_tree(&target, &dest)?;
        } else if target.is_file() {
            link(&target, &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_the_worker_cannot_enter_is_given_with_its_subfolders() {
        let closed = folder(0o700);
        let headers = made(&closed.path().join("include"), None, 0o755);
        made(&headers.join(".complete"), Some(""), 0o644);
        let sub = made(&headers.join("cuda"), None, 0o755);
        made(&sub.join("barrier"), Some("// barrier"), 0o644);
        let scratch = folder(0o755);
        let given = give_folder(scratch.path(), &headers, "include")
            .expect("given")
            .expect("the folder is out of reach");
        assert!(given.join(".complete").is_file());
        assert_eq!(
            std::fs::read_to_string(given.join("cuda/barrier")).expect("read"),
            "// barrier"
        );
        // What the worker can reach stays where it is.
        assert_eq!(
            give_folder(scratch.path(), &given, "again").expect("ok"),
            None
        );
    }

    /// A temporary folder with `mode`.
    fn folder(mode: u32) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).expect("mode");
        dir
    }

    /// `path` made a folder (with `mode`) or a file holding `text` (mode 0755).
    fn made(path: &Path, text: Option<&str>, mode: u32) -> PathBuf {
        match text {
            Some(text) => std::fs::write(path, text).expect("write"),
            None => std::fs::create_dir(path).expect("mkdir"),
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("mode");
        path.to_path_buf()
    }

    #[test]
    fn a_file_in_a_private_folder_is_not_reachable_and_is_given_by_link() {
        let private = folder(0o700);
        let program = made(&private.path().join("prog"), Some("x"), 0o755);
        assert!(!reachable(&program), "its folder is 0700");
        assert!(reachable(Path::new("/usr/bin")));
        let scratch = tempfile::tempdir().expect("scratch");
        let given = give(scratch.path(), &program, Some(private.path()), None).expect("given");
        assert_eq!(given.program, scratch.path().join("prog"));
        assert_eq!(std::fs::read(&given.program).expect("read"), b"x");
        assert_eq!(given.cwd.as_deref(), Some(scratch.path()));
    }

    #[test]
    fn a_library_folder_anyone_may_enter_is_given_when_a_link_in_it_leads_to_a_private_file() {
        let private = folder(0o700);
        let tracer = made(&private.path().join("libtracer.so"), Some("tracer"), 0o755);
        // The links' folder, as in a cache anyone may enter (`cuda-traced-…`).
        let open = folder(0o755);
        let links = made(&open.path().join("links"), None, 0o755);
        std::os::unix::fs::symlink(&tracer, links.join("libcuda.so")).expect("link");
        let public = made(&open.path().join("libpublic.so"), Some("public"), 0o755);
        let only_public = made(&open.path().join("only-public"), None, 0o755);
        std::os::unix::fs::symlink(&public, only_public.join("libcublas.so")).expect("link");
        if !(reachable(&links) && reachable(&only_public)) {
            eprintln!("skipped: a folder above the temporary folder is closed to others");
            return;
        }
        let scratch = tempfile::tempdir().expect("scratch");
        let path = std::env::join_paths([&only_public, &links]).expect("path");
        let given = give(scratch.path(), Path::new("/bin/true"), None, Some(&path)).expect("given");
        let folders: Vec<PathBuf> =
            std::env::split_paths(&given.library_path.expect("a path given")).collect();
        assert_eq!(
            folders[0], only_public,
            "every link there leads to a file others reach"
        );
        assert_eq!(folders[1], scratch.path().join("lib-1"));
        assert_eq!(
            std::fs::read(folders[1].join("libcuda.so")).expect("the tracer, given"),
            b"tracer"
        );
    }
}
