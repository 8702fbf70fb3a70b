//! How much a worker's report may hold, and what the supervisor checks of one before it reads
//! it into the grader's types: a report comes from the process that runs the submission, so
//! its size is bounded by what a right answer to its item sends ([`bound_for_values`]), and
//! its shape by what the grader's types can hold without costing many times its bytes
//! ([`census`]). Both are checked whole, before anything is parsed.

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

/// What any report may hold beside its results: a panic message (kept to
/// [`PANIC_MESSAGE_BYTES`] by the worker), an error, the emulator's record of at most a few
/// dozen findings, and the item's counts.
pub const TEXT_BYTES: u64 = 256 << 10;

/// The most of a panic's message a worker sends: a first-year's longest `assert!` message is
/// a few lines; one of 400 MB is cut here, with how much was left out.
pub const PANIC_MESSAGE_BYTES: usize = 16 << 10;

/// The bound of an item of a kind that does not say what its right answer sends
/// (`KindSpec::report_bytes`); every kind of the embedded labs says.
pub const DEFAULT_BYTES: u64 = 16 << 20;

/// Bytes on the wire per matrix element (8 hex digits).
pub const BYTES_PER_VALUE: u64 = 8;

/// The bound of an item whose right answer sends `values` matrix elements in `matrices`
/// matrices: their hex digits, each matrix's few fields, and [`TEXT_BYTES`].
pub fn bound_for_values(values: u64, matrices: u64) -> u64 {
    values
        .saturating_mul(BYTES_PER_VALUE)
        .saturating_add(matrices.saturating_mul(64))
        .saturating_add(TEXT_BYTES)
}

/// The most JSON numbers a report may hold: results travel as hex strings, so numbers are
/// counts, times, losses and indices. A right answer's most with the embedded rubrics is
/// 3,237 (the training lab's `batches`; both labs' solutions, 2026-12-06); a `batches` case
/// over all 60,000 MNIST images would send 180,000. Each costs the supervisor at most 8
/// bytes.
pub const NUMBERS: u64 = 1 << 18;

/// The most other JSON values (objects, arrays, strings, `null`s, booleans) a report may
/// hold: a right answer's are its matrices, cases and layers, 260 at most with the embedded
/// rubrics (`simple_nn`). Each costs the supervisor at most the size of the largest type it
/// can land in (a few hundred bytes).
pub const OTHERS: u64 = 1 << 14;

/// What a report's JSON holds, counted without building any of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    /// Numbers.
    pub numbers: u64,
    /// Every other value.
    pub others: u64,
}

/// Counts `json`'s values without allocating for them, and refuses it past [`NUMBERS`] or
/// [`OTHERS`] (or when it is not JSON): `Err` says which, for the item's failure.
pub fn census(json: &[u8]) -> Result<Census, String> {
    let mut counted = Census::default();
    let mut de = serde_json::Deserializer::from_slice(json);
    de.deserialize_any(Counter(&mut counted, false))
        .map_err(|e| format!("the report is not one the grader reads: {e}"))?;
    de.end()
        .map_err(|e| format!("the report is not one the grader reads: {e}"))?;
    Ok(counted)
}

/// Counts one value and everything inside it; `bits` when it is a matrix's `bits` field, the
/// one text that may be long.
struct Counter<'a>(&'a mut Census, bool);

impl Counter<'_> {
    fn other<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.0.others += 1;
        if self.0.others > OTHERS {
            return Err(E::custom(format!(
                "it holds more than {OTHERS} lists, records and texts, far more than any \
                 right answer sends"
            )));
        }
        Ok(())
    }

    fn number<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.0.numbers += 1;
        if self.0.numbers > NUMBERS {
            return Err(E::custom(format!(
                "it holds more than {NUMBERS} numbers, far more than any right answer sends"
            )));
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Counter<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a worker's report")
    }

    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> Result<(), E> {
        self.other()
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> Result<(), E> {
        self.number()
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> Result<(), E> {
        self.number()
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> Result<(), E> {
        self.number()
    }
    fn visit_str<E: serde::de::Error>(mut self, text: &str) -> Result<(), E> {
        if !self.1 && text.len() as u64 > TEXT_BYTES {
            return Err(E::custom(format!(
                "it holds a text of {} bytes, and no text but a matrix's values may pass \
                 {TEXT_BYTES}",
                text.len()
            )));
        }
        self.other()
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.other()
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.other()?;
        while seq.next_element_seed(Counter(self.0, false))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.other()?;
        // Keys are read in place, and only compared.
        while let Some(bits) = map.next_key_seed(IsBits)? {
            map.next_value_seed(Counter(self.0, bits))?;
        }
        Ok(())
    }
}

/// Reads a map's key: whether it is `bits`, without keeping it.
struct IsBits;

impl<'de> serde::de::DeserializeSeed<'de> for IsBits {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for IsBits {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a field's name")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
        if key.len() as u64 > TEXT_BYTES {
            return Err(E::custom(
                "it holds a field name far longer than the grader's",
            ));
        }
        Ok(key == "bits")
    }
}

/// The length `value` serializes to, or `Err(bound + 1)` as soon as it passes `bound`: the
/// worker's check before it writes, which never holds a report larger than its bound.
pub fn serialized_len<T: serde::Serialize>(value: &T, bound: u64) -> Result<u64, u64> {
    let mut counter = Counting { bytes: 0, bound };
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => Ok(counter.bytes),
        Err(_) => Err(counter.bytes.max(bound.saturating_add(1))),
    }
}

/// A writer that keeps nothing and fails past its bound.
struct Counting {
    bytes: u64,
    bound: u64,
}

impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len() as u64;
        if self.bytes > self.bound {
            return Err(std::io::Error::other("over the bound"));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_census_counts_without_building_and_refuses_floods() {
        let counted = census(br#"{"a":[1,2,3],"b":"x","c":null,"d":[[],[]]}"#).unwrap();
        assert_eq!(
            counted,
            Census {
                numbers: 3,
                others: 7
            }
        );
        let numbers = format!("[{}0]", "0,".repeat(NUMBERS as usize));
        assert!(census(numbers.as_bytes()).unwrap_err().contains("numbers"));
        let nulls = format!("[{}null]", "null,".repeat(OTHERS as usize));
        assert!(census(nulls.as_bytes()).unwrap_err().contains("lists"));
        let long = "x".repeat(TEXT_BYTES as usize + 1);
        assert!(census(format!(r#"{{"bits":"{long}"}}"#).as_bytes()).is_ok());
        let refused = census(format!(r#"{{"message":"{long}"}}"#).as_bytes()).unwrap_err();
        assert!(refused.contains("a text of"), "{refused}");
        assert!(census(format!(r#"["{long}"]"#).as_bytes()).is_err());
        assert!(census(b"[1] x").is_err());
        assert!(census(b"[1").is_err());
    }

    #[test]
    fn the_worker_counts_a_report_without_writing_it() {
        let v: Vec<u32> = (0..1000).collect();
        let len = serde_json::to_vec(&v).unwrap().len() as u64;
        assert_eq!(serialized_len(&v, len), Ok(len));
        assert!(serialized_len(&v, len - 1).is_err());
    }
}
