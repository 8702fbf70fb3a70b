//! A stable hash (FNV-1a, 64 bits) of text: the same on every run, platform and Rust
//! version, for seeds the worker and the supervisor both derive from an order.

/// FNV-1a, 64 bits: stable across runs, platforms and Rust versions (unlike std's hasher),
/// and enough to tell one version of a small folder from another.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Adds a length-prefixed field, so ("ab", "c") and ("a", "bc") differ.
    pub fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// The hash of `text`, e.g. to turn a commit id into a seed.
pub fn of_text(text: &str) -> u64 {
    let mut h = Fnv::default();
    h.field(text.as_bytes());
    h.finish()
}
