//! Kernels compiled outside the graded process: the grader's kernel compiler, a process the
//! grader starts beside each worker on the emulator, with a sandbox of its own that may write
//! one folder (the objects), which the worker may read but not write.
//!
//! Why: compiling writes files (the translation unit, the program's headers, the object before
//! and after linking) and the compiler reads them back a moment later. In a folder the graded
//! process can write, its safe Rust (`std::fs`) could replace one of them in that moment, with
//! a unit that has no prelude or no checks, and the object sealed afterwards would be native
//! code of the submission's choosing. Here no file of a build is writable by the process whose
//! code is graded: the worker's emulator sends the program over a pipe and gets back the
//! object's path and the digest of its bytes; the compiler decides how to build (checked or
//! confined) from its own configuration, never from the request.
//!
//! The pipe's descriptors are out of reach of the submission's code: safe Rust cannot use a
//! descriptor by number, and the worker's sandbox gives it no path to them (`/proc/self/fd`).
//!
//! A message is a list of byte strings: a count, then each string's length and bytes (all
//! lengths as 4-byte little-endian numbers).

use std::ffi::c_int;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::path::PathBuf;
use std::sync::Mutex;

use super::compile::{self, Compiled};
use super::names::Lowered;

/// The most bytes of one message: programs, their headers and the compiler's log are
/// kilobytes. A message past it is an error on the reading side, so the compile fails.
const MESSAGE_BYTES: usize = 64 << 20;

/// The most strings in one message.
const MESSAGE_PARTS: usize = 1 << 16;

/// The first string of a request.
const COMPILE: &[u8] = b"compile";

/// The first string of a reply: built, or not.
const BUILT: &[u8] = b"built";
const FAILED: &[u8] = b"failed";

/// Writes `parts` as one message.
fn write_message(out: &mut impl Write, parts: &[Vec<u8>]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(4 + parts.iter().map(|p| p.len() + 4).sum::<usize>());
    let count = |n: usize| {
        u32::try_from(n).map_err(|_| std::io::Error::other("a message too long to send"))
    };
    bytes.extend_from_slice(&count(parts.len())?.to_le_bytes());
    for part in parts {
        bytes.extend_from_slice(&count(part.len())?.to_le_bytes());
        bytes.extend_from_slice(part);
    }
    out.write_all(&bytes)?;
    out.flush()
}

/// Reads one message; `Ok(None)` at the end of the stream before its first byte.
fn read_message(input: &mut impl Read) -> std::io::Result<Option<Vec<Vec<u8>>>> {
    let mut word = [0u8; 4];
    match input.read_exact(&mut word) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let count = u32::from_le_bytes(word) as usize;
    if count > MESSAGE_PARTS {
        return Err(std::io::Error::other("a message of too many parts"));
    }
    let mut parts = Vec::with_capacity(count);
    let mut total = 0usize;
    for _ in 0..count {
        input.read_exact(&mut word)?;
        let len = u32::from_le_bytes(word) as usize;
        total = total.saturating_add(len);
        if total > MESSAGE_BYTES {
            return Err(std::io::Error::other("a message over its size limit"));
        }
        let mut part = vec![0u8; len];
        input.read_exact(&mut part)?;
        parts.push(part);
    }
    Ok(Some(parts))
}

/// A program to compile, as `nvrtcCompileProgram` was given it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The CUDA C source.
    pub src: String,
    /// Its name in diagnostics.
    pub name: String,
    /// `(include name, contents)` pairs.
    pub headers: Vec<(String, String)>,
    /// The compile options.
    pub options: Vec<String>,
    /// The name expressions.
    pub exprs: Vec<String>,
}

impl Request {
    fn encode(&self) -> Vec<Vec<u8>> {
        let mut parts = vec![
            COMPILE.to_vec(),
            self.src.clone().into_bytes(),
            self.name.clone().into_bytes(),
        ];
        parts.push(self.headers.len().to_string().into_bytes());
        for (n, h) in &self.headers {
            parts.push(n.clone().into_bytes());
            parts.push(h.clone().into_bytes());
        }
        list(&mut parts, &self.options);
        list(&mut parts, &self.exprs);
        parts
    }

    fn decode(parts: Vec<Vec<u8>>) -> Option<Request> {
        let mut it = parts.into_iter().map(text);
        if it.next()?.as_bytes() != COMPILE {
            return None;
        }
        let src = it.next()?;
        let name = it.next()?;
        let n: usize = it.next()?.parse().ok()?;
        let mut headers = Vec::new();
        for _ in 0..n {
            headers.push((it.next()?, it.next()?));
        }
        let options = unlist(&mut it)?;
        let exprs = unlist(&mut it)?;
        Some(Request {
            src,
            name,
            headers,
            options,
            exprs,
        })
    }
}

/// What the compiler answers: the build (with the digest of the object's bytes, when this
/// compiler wrote them) or the compiler's log; and the notes to record either way (a checked
/// build that fell back to a plain one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The build, or the log of why there is none.
    pub built: Result<(Compiled, Option<String>), String>,
    /// Notes for the run's record.
    pub notes: Vec<String>,
}

impl Reply {
    fn encode(&self) -> Vec<Vec<u8>> {
        let mut parts = match &self.built {
            Ok((c, digest)) => {
                let mut parts = vec![
                    BUILT.to_vec(),
                    c.so.to_string_lossy().into_owned().into_bytes(),
                    digest.clone().unwrap_or_default().into_bytes(),
                    c.log.clone().into_bytes(),
                ];
                list(&mut parts, &c.kernels);
                list(&mut parts, &c.globals);
                parts.push(c.lowered.len().to_string().into_bytes());
                for l in &c.lowered {
                    parts.push(l.expr.clone().into_bytes());
                    parts.push(l.lowered.clone().into_bytes());
                    parts.push(l.id.clone().into_bytes());
                }
                parts
            }
            Err(log) => vec![FAILED.to_vec(), log.clone().into_bytes()],
        };
        list(&mut parts, &self.notes);
        parts
    }

    fn decode(parts: Vec<Vec<u8>>) -> Option<Reply> {
        let mut it = parts.into_iter().map(text);
        let first = it.next()?;
        let built = if first.as_bytes() == BUILT {
            let so = PathBuf::from(it.next()?);
            let digest = Some(it.next()?).filter(|d| !d.is_empty());
            let log = it.next()?;
            let kernels = unlist(&mut it)?;
            let globals = unlist(&mut it)?;
            let n: usize = it.next()?.parse().ok()?;
            let mut lowered = Vec::new();
            for _ in 0..n {
                lowered.push(Lowered {
                    expr: it.next()?,
                    lowered: it.next()?,
                    id: it.next()?,
                });
            }
            Ok((
                Compiled {
                    so,
                    kernels,
                    globals,
                    log,
                    lowered,
                },
                digest,
            ))
        } else if first.as_bytes() == FAILED {
            Err(it.next()?)
        } else {
            return None;
        };
        let notes = unlist(&mut it)?;
        Some(Reply { built, notes })
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn list(parts: &mut Vec<Vec<u8>>, items: &[String]) {
    parts.push(items.len().to_string().into_bytes());
    parts.extend(items.iter().map(|s| s.clone().into_bytes()));
}

fn unlist(it: &mut impl Iterator<Item = String>) -> Option<Vec<String>> {
    let n: usize = it.next()?.parse().ok()?;
    (0..n).map(|_| it.next()).collect()
}

/// The worker's end of the pipe, taken from the configuration's descriptors on first use.
/// One request at a time: a reply answers the request before it.
static PIPE: Mutex<Option<(ManuallyDrop<std::fs::File>, ManuallyDrop<std::fs::File>)>> =
    Mutex::new(None);

/// Compiles through the grader's kernel compiler at `fds` (request, reply). Every failure to
/// reach it is a failed compile that says it is the grader's, never a compile in this process.
pub fn compile_there(
    fds: (i32, i32),
    request: &Request,
) -> Result<(Compiled, Option<String>, Vec<String>), String> {
    let unreachable = |why: String| {
        format!(
            "{}: error: the grader's kernel compiler could not be reached ({why}), so no kernel \
             is built in this run: the grader's set-up, not your code (run again, or tell your \
             instructor)\n",
            request.name
        )
    };
    if fds.0 < 0 || fds.1 < 0 {
        return Err(unreachable("the grader named no descriptors".into()));
    }
    let mut pipe = PIPE.lock().unwrap_or_else(|e| e.into_inner());
    let (to, from) = pipe.get_or_insert_with(|| {
        // SAFETY: descriptors the grader gave this process for this use alone, never closed
        // (ManuallyDrop): the files only borrow them.
        unsafe {
            (
                ManuallyDrop::new(std::fs::File::from_raw_fd(fds.0)),
                ManuallyDrop::new(std::fs::File::from_raw_fd(fds.1)),
            )
        }
    });
    write_message(&mut **to, &request.encode()).map_err(|e| unreachable(e.to_string()))?;
    let reply = read_message(&mut **from)
        .map_err(|e| unreachable(e.to_string()))?
        .ok_or_else(|| unreachable("it stopped".into()))?;
    let Reply { built, notes } =
        Reply::decode(reply).ok_or_else(|| unreachable("its answer was malformed".into()))?;
    built.map(|(compiled, digest)| (compiled, digest, notes))
}

/// Serves requests from descriptor `input`, answering on `output`, until `input` ends: what the
/// grader's kernel compiler runs (`grader_engine::kernel_compiler`). Returns 0 at the end of
/// the requests, 2 when a request or the pipe was broken.
///
/// # Safety
/// `input` and `output` must be open descriptors that nothing else in the process uses.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_compile_serve(input: c_int, output: c_int) -> c_int {
    // SAFETY: the caller's promise.
    let (mut input, mut output) = unsafe {
        (
            ManuallyDrop::new(std::fs::File::from_raw_fd(input)),
            ManuallyDrop::new(std::fs::File::from_raw_fd(output)),
        )
    };
    loop {
        let request = match read_message(&mut *input) {
            Ok(Some(parts)) => parts,
            Ok(None) => return 0,
            Err(_) => return 2,
        };
        let Some(request) = Request::decode(request) else {
            return 2;
        };
        let (built, notes) = compile::compile_here(
            &request.src,
            &request.name,
            &request.headers,
            &request.options,
            &request.exprs,
        );
        let built = built.map(|c| {
            let digest = compile::compiled_digest(&c.so);
            (c, digest)
        });
        if write_message(&mut *output, &Reply { built, notes }.encode()).is_err() {
            return 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parts` written as one message and read back.
    fn sent(parts: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let mut bytes = Vec::new();
        write_message(&mut bytes, &parts).expect("written");
        read_message(&mut bytes.as_slice())
            .expect("read")
            .expect("a message")
    }

    #[test]
    fn requests_and_replies_read_back_as_written() {
        let request = Request {
            src: "extern \"C\" __global__ void k() {}\n".into(),
            name: "k.cu".into(),
            headers: vec![("a.h".into(), "#define A 1\n".into())],
            options: vec!["-DN=4".into(), "--use_fast_math".into()],
            exprs: vec!["k".into()],
        };
        assert_eq!(Request::decode(sent(request.encode())), Some(request));

        let built = Reply {
            built: Ok((
                Compiled {
                    so: "/k/kernels.so".into(),
                    kernels: vec!["k".into(), "m".into()],
                    globals: vec![],
                    log: "warning\n".into(),
                    lowered: vec![Lowered {
                        expr: "k".into(),
                        lowered: "_Z1kv".into(),
                        id: "__gl_expr_0".into(),
                    }],
                },
                Some("abc".into()),
            )),
            notes: vec!["a note".into()],
        };
        let failed = Reply {
            built: Err("k.cu(1): error: x\n".into()),
            notes: vec![],
        };
        for reply in [built, failed] {
            assert_eq!(Reply::decode(sent(reply.encode())), Some(reply));
        }
    }

    #[test]
    fn a_short_or_oversized_message_is_an_error_and_an_empty_stream_the_end() {
        assert!(read_message(&mut [].as_slice()).unwrap().is_none());
        let mut short = Vec::new();
        short.extend_from_slice(&1u32.to_le_bytes());
        short.extend_from_slice(&10u32.to_le_bytes());
        short.extend_from_slice(b"abc");
        assert!(read_message(&mut short.as_slice()).is_err());
        let mut huge = Vec::new();
        huge.extend_from_slice(&1u32.to_le_bytes());
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(read_message(&mut huge.as_slice()).is_err());
        let mut many = Vec::new();
        many.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(read_message(&mut many.as_slice()).is_err());
    }

    /// Both sides over real pipes: a program built by the serving side comes back with its
    /// kernels, its object's path and the digest of the bytes in that file, and the serving
    /// side ends when the requests do.
    #[test]
    fn a_program_built_by_the_serving_side_comes_back_with_its_digest() {
        use std::os::fd::{AsRawFd, IntoRawFd};
        let (request_reader, request_writer) = std::io::pipe().unwrap();
        let (reply_reader, reply_writer) = std::io::pipe().unwrap();
        let (input, output) = (request_reader.into_raw_fd(), reply_writer.into_raw_fd());
        // SAFETY: two descriptors this test made for the server alone.
        let server = std::thread::spawn(move || unsafe { gpu_labs_compile_serve(input, output) });
        // A source no earlier run compiled: a cache hit carries no digest (the bytes were not
        // written by this compiler).
        let fresh = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let request = Request {
            src: format!(
                "// {fresh}\nextern \"C\" __global__ void twice(float* x) {{ x[threadIdx.x] *= 2.0f; }}\n"
            ),
            name: "twice.cu".into(),
            headers: vec![],
            options: vec![],
            exprs: vec![],
        };
        let fds = (request_writer.as_raw_fd(), reply_reader.as_raw_fd());
        let (compiled, digest, _notes) = compile_there(fds, &request).expect("built");
        assert_eq!(compiled.kernels, ["twice"]);
        let bytes = std::fs::read(&compiled.so).expect("the object");
        assert_eq!(digest, Some(crate::util::hash_hex(&[&bytes])));
        let broken = Request {
            src: "extern \"C\" __global__ void broken( {}\n".into(),
            ..request
        };
        let log = compile_there(fds, &broken).expect_err("not built");
        assert!(log.contains("twice.cu(1): error"), "{log}");
        drop(request_writer);
        assert_eq!(server.join().expect("no panic"), 0);
    }

    /// A worker whose grader named no usable descriptors compiles nothing, and says whose
    /// fault it is.
    #[test]
    fn no_compiler_to_reach_is_a_failed_compile_not_a_local_one() {
        let request = Request {
            src: String::new(),
            name: "k.cu".into(),
            headers: vec![],
            options: vec![],
            exprs: vec![],
        };
        let why = compile_there((-1, -1), &request).unwrap_err();
        assert!(
            why.contains("the grader's kernel compiler could not be reached"),
            "{why}"
        );
    }
}
