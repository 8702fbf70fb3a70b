//! A worker's report on the wire, element by element: a matrix's bits as hex text (both ways)
//! and the report's seal. The serde glue around them is the worker's (`hex_bits`,
//! `protocol`); the loops over every byte are here, optimised.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bits` as text: 8 lower-case hex digits per word.
pub fn hex_encode(bits: &[u32]) -> String {
    let mut text = Vec::with_capacity(bits.len() * 8);
    for word in bits {
        for shift in (0..8).rev() {
            text.push(DIGITS[((word >> (shift * 4)) & 0xf) as usize]);
        }
    }
    // Only ASCII digits were pushed.
    String::from_utf8(text).unwrap_or_default()
}

/// The words of `text`, 8 hex digits each; `None` for any other text.
pub fn hex_decode(text: &[u8]) -> Option<Vec<u32>> {
    if !text.len().is_multiple_of(8) {
        return None;
    }
    text.chunks_exact(8)
        .map(|chunk| {
            chunk.iter().try_fold(0u32, |word, &c| {
                let digit = (c as char).to_digit(16)?;
                Some(word << 4 | digit)
            })
        })
        .collect()
}

/// The seal of a report's body under the supervisor's nonce (FNV-1a over the nonce, the
/// body and the nonce again): a report without it was not written by this order's worker.
pub fn seal(nonce: u64, body: &[u8]) -> u64 {
    let mut h = crate::hash::Fnv::default();
    h.write(&nonce.to_le_bytes());
    h.write(body);
    h.write(&nonce.to_be_bytes());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_text_round_trips_and_refuses_anything_else() {
        let bits = [0, u32::MAX, 0x7fc0_0000, 0x3fc0_0000];
        let text = hex_encode(&bits);
        assert_eq!(text, "00000000ffffffff7fc000003fc00000");
        assert_eq!(hex_decode(text.as_bytes()).as_deref(), Some(&bits[..]));
        for bad in ["0000000", "0000000g", "+0000000"] {
            assert_eq!(hex_decode(bad.as_bytes()), None, "{bad}");
        }
    }
}
