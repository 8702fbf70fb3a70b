//! The grader's kernel compiler: a process the supervisor starts beside each worker on the
//! emulator, which compiles that worker's CUDA C into a folder the worker can read but not
//! write (`grader/cuda-emulator/src/nvrtc/remote.rs` says why a build's files must be out of
//! the graded process's reach).
//!
//! It is the supervisor's own program (the `grader` command, or a lab's test binary in a
//! student's `cargo test`) started with [`COMPILER_FLAG`], never the submission's: it loads
//! the emulator library and serves the worker's requests on its standard input and output,
//! which are pipes to the worker, until the worker is gone. Its sandbox is a worker's, with the
//! objects folder as the one folder it may write.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};

/// The first argument that makes a grader binary serve as a kernel compiler; the second is
/// the emulator library to compile with.
pub const COMPILER_FLAG: &str = "--grader-kernel-compiler";

/// The emulator's entry point that serves compile requests (`nvrtc::remote`).
const SERVE_SYMBOL: &[u8] = b"gpu_labs_compile_serve\0";

/// Serves as the kernel compiler when this process was started as one (by [`COMPILER_FLAG`])
/// and returns its exit code; `None` otherwise. Called first thing by every binary that can
/// start workers.
pub fn serve_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != OsStr::new(COMPILER_FLAG) {
        return None;
    }
    let code = match args.next() {
        Some(library) => match serve(Path::new(&library)) {
            Ok(0) => ExitCode::SUCCESS,
            Ok(_) => ExitCode::from(2),
            Err(why) => {
                eprintln!("grader kernel compiler: {why}");
                ExitCode::from(2)
            }
        },
        None => {
            eprintln!("grader kernel compiler: no emulator library was named");
            ExitCode::from(2)
        }
    };
    Some(code)
}

/// Loads the emulator at `library` and serves requests from standard input, answering on the
/// standard output it had at start (which from then on is standard error's, so that nothing
/// else printed in this process can reach the worker).
fn serve(library: &Path) -> Result<i32, String> {
    // SAFETY: dup and dup2 on this process's own standard descriptors.
    let (input, output) = unsafe {
        let input = libc::dup(0);
        let output = libc::dup(1);
        if input < 0 || output < 0 || libc::dup2(2, 1) < 0 {
            return Err(format!(
                "cannot set up its pipes: {}",
                std::io::Error::last_os_error()
            ));
        }
        (input, output)
    };
    // SAFETY: the grader's own emulator library, whose load runs only its configuration
    // snapshot; `serve` is its entry point of that name and type (`nvrtc::remote`).
    unsafe {
        let lib = libloading::Library::new(library)
            .map_err(|e| format!("cannot load the emulator {}: {e}", library.display()))?;
        let serve: libloading::Symbol<unsafe extern "C" fn(i32, i32) -> i32> = lib
            .get(SERVE_SYMBOL)
            .map_err(|e| format!("the emulator {} cannot compile: {e}", library.display()))?;
        Ok(serve(input, output))
    }
}

/// The emulator library a worker with the library path `library_path` loads: the first of
/// its folders that holds the emulator.
pub fn emulator_library(library_path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(library_path)
        .map(|dir| dir.join(crate::emulate::CDYLIB))
        .find(|so| so.is_file())
}

/// A running kernel compiler, and the worker's ends of its pipes until they are given.
#[derive(Debug)]
pub struct KernelCompiler {
    child: Child,
    /// Where requests are written (the worker's end).
    requests: OwnedFd,
    /// Where replies are read (the worker's end).
    replies: OwnedFd,
}

impl KernelCompiler {
    /// Starts `program` as the kernel compiler for a worker with `env`, writing its objects in
    /// `objects` under the sandbox `prepared` and the limits `limits`; what it prints goes to
    /// `log` (a file of the worker's scratch folder: the objects folder may be shared).
    pub fn start(
        program: &Path,
        library: &Path,
        env: &[(OsString, OsString)],
        objects: &Path,
        log: &Path,
        limits: crate::sandbox::limits::Limits,
        prepared: crate::sandbox::child::Prepared,
    ) -> std::io::Result<KernelCompiler> {
        let (request_reader, request_writer) = std::io::pipe()?;
        let (reply_reader, reply_writer) = std::io::pipe()?;
        let log = std::fs::File::create(log)?;
        let mut cmd = Command::new(program);
        crate::sandbox::clean_environment(&mut cmd);
        cmd.arg(COMPILER_FLAG)
            .arg(library)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env(crate::emulate::KERNEL_CACHE, objects)
            // The compiler's temporary files, in the one folder it may write.
            .env("TMPDIR", objects)
            .current_dir(objects)
            .stdin(Stdio::from(request_reader))
            .stdout(Stdio::from(reply_writer))
            .stderr(Stdio::from(log));
        crate::sandbox::limits::install(&mut cmd, limits, prepared);
        let child = cmd.spawn()?;
        crate::sandbox::tree::register(child.id() as i32);
        Ok(KernelCompiler {
            child,
            requests: OwnedFd::from(request_writer),
            replies: OwnedFd::from(reply_reader),
        })
    }

    /// The worker's descriptors, to keep open across its `exec`.
    pub fn worker_ends(&self) -> [&OwnedFd; 2] {
        [&self.requests, &self.replies]
    }

    /// The value of [`crate::emulate::COMPILER`] that tells the worker's emulator where to
    /// send its programs.
    pub fn variable(&self) -> String {
        format!("{},{}", self.requests.as_raw_fd(), self.replies.as_raw_fd())
    }

    /// Drops the supervisor's copies of the worker's ends, once the worker has them: the
    /// compiler then sees its requests end when the worker does.
    pub fn given(self) -> Running {
        Running { child: self.child }
    }
}

/// A kernel compiler whose worker holds its pipes; ended when dropped.
#[derive(Debug)]
pub struct Running {
    child: Child,
}

impl Drop for Running {
    fn drop(&mut self) {
        // Its process group: a compiler it started ends with it.
        let group = self.child.id() as i32;
        crate::sandbox::tree::signal(group, libc::SIGKILL);
        crate::sandbox::tree::forget(group);
        let _ = self.child.wait();
    }
}
