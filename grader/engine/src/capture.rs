//! A worker's output, read from its pipe as it is printed and kept to a bound: the first
//! [`HEAD`] bytes and the last [`TAIL`], with how much was left out between them. A submission
//! that prints without end costs neither disk nor memory, and its item is still graded.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bytes kept from the start of one stream.
pub const HEAD: usize = 960 << 10;
/// Bytes kept from its end.
pub const TAIL: usize = 64 << 10;
/// All that is kept of one stream.
pub const KEPT: usize = HEAD + TAIL;

/// What was kept of one stream.
#[derive(Debug, Default)]
pub struct Captured {
    head: Vec<u8>,
    /// The last bytes past the head, as a ring of `TAIL` bytes starting at `start`.
    tail: Vec<u8>,
    start: usize,
    /// Every byte printed.
    total: u64,
}

impl Captured {
    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < HEAD {
            let n = bytes.len().min(HEAD - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() >= TAIL {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - TAIL..]);
            self.start = 0;
            return;
        }
        for &b in bytes {
            if self.tail.len() < TAIL {
                self.tail.push(b);
            } else {
                self.tail[self.start] = b;
                self.start = (self.start + 1) % TAIL;
            }
        }
    }

    /// Bytes printed but not kept.
    pub fn left_out(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text, with a line saying how much was left out where it was.
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.left_out() > 0 {
            text.push_str(&format!(
                "\n[… {} of output left out: only the first {} KiB and the last {} KiB are kept …]\n",
                size(self.left_out()),
                HEAD >> 10,
                TAIL >> 10
            ));
        }
        let (newer, older) = self.tail.split_at(self.start);
        text.push_str(&String::from_utf8_lossy(&[older, newer].concat()));
        text
    }
}

/// A size in the unit a student reads best.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{bytes} bytes")
    }
}

/// One stream being read by a thread of its own.
pub struct Capture {
    kept: Arc<Mutex<Captured>>,
    ended: std::sync::mpsc::Receiver<()>,
}

impl Capture {
    /// Starts reading `pipe` until it closes.
    pub fn start(mut pipe: impl Read + Send + 'static) -> Capture {
        let kept = Arc::new(Mutex::new(Captured::default()));
        let (done, ended) = std::sync::mpsc::channel();
        let shared = Arc::clone(&kept);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Ok(mut k) = shared.lock() {
                            k.push(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        });
        Capture { kept, ended }
    }

    /// What was kept, once the pipe closed or after `wait` (a process the worker started may
    /// still hold it open).
    pub fn finish(self, wait: Duration) -> Captured {
        let _ = self.ended.recv_timeout(wait);
        self.kept
            .lock()
            .map(|mut k| std::mem::take(&mut *k))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_keeps_its_start_and_end_and_says_how_much_was_left_out() {
        let mut c = Captured::default();
        c.push(b"first line\n");
        for _ in 0..3000 {
            c.push(&[b'x'; 1000]);
        }
        c.push(b"\nlast line\n");
        let text = c.text();
        assert!(text.starts_with("first line\n"));
        assert!(text.ends_with("\nlast line\n"));
        assert_eq!(c.left_out(), c.total - KEPT as u64);
        assert!(
            text.contains("of output left out"),
            "{}",
            &text[HEAD..HEAD + 200]
        );
        let mut small = Captured::default();
        small.push(b"ok\n");
        assert_eq!(small.text(), "ok\n");
        assert_eq!(small.left_out(), 0);
    }
}
