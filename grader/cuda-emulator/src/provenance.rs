//! Where a GPU result's values came from. While the grader holds a window open (around one
//! call of a student's GPU function), the emulator notes the 32-bit words that host-to-device
//! copies and memsets wrote to the device, and the words that device-to-host copies brought
//! back. The grader then asks, through `gpu_labs_emulator_provenance`, how many of the values
//! the function returned were never copied back from the device (computed on the host), and
//! how many were uploaded from the host (computed there, and only passed through the device).
//! Real drivers have no such symbol: there the check is not made.

use std::collections::HashSet;
use std::sync::Mutex;

/// The words seen in one window.
#[derive(Default)]
struct Log {
    uploaded: HashSet<u32>,
    copied_back: HashSet<u32>,
}

static LOG: Mutex<Option<Log>> = Mutex::new(None);

/// Runs `f` on the open window's log, if a window is open.
fn with_log(f: impl FnOnce(&mut Log)) {
    if let Ok(mut log) = LOG.lock() {
        if let Some(log) = log.as_mut() {
            f(log);
        }
    }
}

/// The 32-bit words of `bytes` (a trailing partial word is ignored).
fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
}

/// Notes bytes a host-to-device copy wrote.
pub fn note_upload(bytes: &[u8]) {
    with_log(|log| log.uploaded.extend(words(bytes)));
}

/// Notes a memset's repeated 32-bit pattern.
pub fn note_fill(pattern: u32) {
    with_log(|log| {
        log.uploaded.insert(pattern);
    });
}

/// Notes bytes a device-to-host copy brought back.
pub fn note_copy_back(bytes: &[u8]) {
    with_log(|log| log.copied_back.extend(words(bytes)));
}

/// Whether a window is open (copies skip the noting work otherwise).
pub fn is_open() -> bool {
    LOG.lock().map(|l| l.is_some()).unwrap_or(false)
}

/// Opens a window (`open` true: forgetting what an earlier one saw) or closes it.
#[no_mangle]
pub extern "C" fn gpu_labs_emulator_provenance_window(open: bool) {
    if let Ok(mut log) = LOG.lock() {
        *log = open.then(Log::default);
    }
}

/// For the `len` words at `values` (a result's f32 bits): how many were never copied back
/// from the device in the open window, and how many were uploaded from the host in it. Either
/// out-pointer may be null. Returns false when no window is open.
///
/// # Safety
/// `values` must point to `len` readable words; the out-pointers must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn gpu_labs_emulator_provenance(
    values: *const u32,
    len: usize,
    not_copied_back: *mut u64,
    uploaded: *mut u64,
) -> bool {
    let Ok(log) = LOG.lock() else {
        return false;
    };
    let Some(log) = log.as_ref() else {
        return false;
    };
    let values = if len == 0 || values.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(values, len)
    };
    let missing = values
        .iter()
        .filter(|v| !log.copied_back.contains(v))
        .count();
    let from_host = values.iter().filter(|v| log.uploaded.contains(v)).count();
    if !not_copied_back.is_null() {
        *not_copied_back = missing as u64;
    }
    if !uploaded.is_null() {
        *uploaded = from_host as u64;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(values: &[f32]) -> (u64, u64) {
        let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        let (mut missing, mut uploaded) = (0, 0);
        // SAFETY: `bits` is a live slice; the out-pointers are locals.
        let open = unsafe {
            gpu_labs_emulator_provenance(bits.as_ptr(), bits.len(), &mut missing, &mut uploaded)
        };
        assert!(open);
        (missing, uploaded)
    }

    fn bytes(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    #[test]
    fn results_are_traced_to_copies_back_and_uploads() {
        gpu_labs_emulator_provenance_window(true);
        note_upload(&bytes(&[1.5, 2.5]));
        note_copy_back(&bytes(&[3.75, 1.5]));
        assert_eq!(check(&[3.75]), (0, 0), "computed on the device");
        assert_eq!(check(&[1.5]), (0, 1), "uploaded, then copied back");
        assert_eq!(check(&[9.0, 3.75]), (1, 0), "one value made on the host");
        gpu_labs_emulator_provenance_window(true);
        assert_eq!(check(&[3.75]), (1, 0), "a new window forgets the old one");
        gpu_labs_emulator_provenance_window(false);
        assert!(!is_open());
    }
}
