//! A matrix's bits on the wire: one string of 8 lower-case hex digits per `u32`. A JSON array
//! of numbers would let a report of `n` bytes ("0,0,0,…") become `2n` bytes of `u32`s in the
//! supervisor; a string of hex digits becomes at most half its length, whatever it holds.

use serde::{Deserializer, Serializer};

/// Writes `bits` as one hex string.
pub fn serialize<S: Serializer>(bits: &[u32], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&grader_hot::wire::hex_encode(bits))
}

/// Reads a hex string written by [`serialize`]; anything else is an error.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u32>, D::Error> {
    deserializer.deserialize_str(Hex)
}

struct Hex;

impl serde::de::Visitor<'_> for Hex {
    type Value = Vec<u32>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string of 8 hex digits per element")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Vec<u32>, E> {
        grader_hot::wire::hex_decode(text.as_bytes())
            .ok_or_else(|| E::custom("a matrix's bits are not 8 hex digits each"))
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::Matrix;

    #[test]
    fn bits_survive_the_trip_and_nothing_else_is_read() {
        let m = Matrix {
            rows: 1,
            cols: 4,
            bits: vec![0, u32::MAX, f32::NAN.to_bits(), 1.5f32.to_bits()],
        };
        let json = serde_json::to_string(&m).unwrap();
        assert!(
            json.contains("\"00000000ffffffff7fc000003fc00000\""),
            "{json}"
        );
        let back: Matrix = serde_json::from_str(&json).unwrap();
        assert_eq!(back.bits, m.bits);
        for bad in [
            r#"{"rows":1,"cols":1,"bits":[0]}"#,
            r#"{"rows":1,"cols":1,"bits":"0000000"}"#,
            r#"{"rows":1,"cols":1,"bits":"0000000g"}"#,
            r#"{"rows":1,"cols":1,"bits":"+0000000"}"#,
        ] {
            assert!(serde_json::from_str::<Matrix>(bad).is_err(), "{bad}");
        }
    }
}
