//! LEB128 varints, zigzag signed integers and a bounds-checked reader that reports byte offsets.

use crate::error::{corrupt, GrammarError};

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Zigzag encoding: 0, -1, 1, -2... map to 0, 1, 2, 3...
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Appends `v` zigzag-encoded (small magnitudes of either sign take one byte).
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, zigzag(v));
}

/// Zigzag decoding.
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// A reader over a byte slice that knows the absolute offset of its first byte, so every error
/// names the byte where decoding failed.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes`, whose first byte is at absolute offset `base`.
    pub fn new(bytes: &'a [u8], base: usize) -> Self {
        Reader {
            bytes,
            pos: 0,
            base,
        }
    }

    /// Absolute offset of the next byte.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// True when every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// An error at the current offset.
    pub fn error(&self, what: impl Into<String>) -> GrammarError {
        corrupt(self.offset(), what)
    }

    /// One byte.
    ///
    /// # Errors
    /// [`GrammarError::Corrupt`] at end of input.
    pub fn u8(&mut self, what: &str) -> Result<u8, GrammarError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.error(format!("truncated: expected {what}")))?;
        self.pos += 1;
        Ok(b)
    }

    /// `n` raw bytes.
    ///
    /// # Errors
    /// [`GrammarError::Corrupt`] if fewer than `n` bytes are left.
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], GrammarError> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "truncated: expected {n} bytes of {what}, {} left",
                self.remaining()
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A little-endian u16.
    ///
    /// # Errors
    /// Truncated input.
    pub fn u16_le(&mut self, what: &str) -> Result<u16, GrammarError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// A little-endian u32.
    ///
    /// # Errors
    /// Truncated input.
    pub fn u32_le(&mut self, what: &str) -> Result<u32, GrammarError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    /// A little-endian u64.
    ///
    /// # Errors
    /// Truncated input.
    pub fn u64_le(&mut self, what: &str) -> Result<u64, GrammarError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// An unsigned LEB128 varint.
    ///
    /// # Errors
    /// Truncated input or a varint longer than 10 bytes / overflowing 64 bits.
    pub fn varint(&mut self, what: &str) -> Result<u64, GrammarError> {
        let start = self.offset();
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.u8(what)?;
            if shift == 63 && b > 1 {
                return Err(corrupt(start, format!("varint overflow in {what}")));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt(start, format!("varint too long in {what}")))
    }

    /// A zigzag varint.
    ///
    /// # Errors
    /// As [`Reader::varint`].
    pub fn zigzag(&mut self, what: &str) -> Result<i64, GrammarError> {
        self.varint(what).map(unzigzag)
    }

    /// A varint that must fit `u32`.
    ///
    /// # Errors
    /// As [`Reader::varint`], or a value above `u32::MAX`.
    pub fn varint_u32(&mut self, what: &str) -> Result<u32, GrammarError> {
        let at = self.offset();
        let v = self.varint(what)?;
        u32::try_from(v).map_err(|_| corrupt(at, format!("{what} {v} exceeds 32 bits")))
    }

    /// A count of items that each take at least `min_bytes` bytes: rejects counts the remaining
    /// input cannot hold, so a corrupt count never triggers a huge allocation.
    ///
    /// # Errors
    /// As [`Reader::varint`], or an implausible count.
    pub fn count(&mut self, what: &str, min_bytes: usize) -> Result<usize, GrammarError> {
        let at = self.offset();
        let v = self.varint(what)?;
        if v.saturating_mul(min_bytes.max(1) as u64) > self.remaining() as u64 {
            return Err(corrupt(
                at,
                format!(
                    "{what} {v} exceeds what the remaining {} bytes can hold",
                    self.remaining()
                ),
            ));
        }
        Ok(v as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_report_offsets() {
        let mut b = Vec::new();
        for v in [0u64, 1, 127, 128, 300, u64::MAX] {
            put_u64(&mut b, v);
        }
        put_i64(&mut b, -1);
        put_i64(&mut b, i64::MIN);
        // 0, 1, 127 take one byte; 128 and 300 two; u64::MAX ten.
        assert_eq!(b.len(), 3 + 2 + 2 + 10 + 1 + 10);
        let mut r = Reader::new(&b, 100);
        for v in [0u64, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(r.varint("v").unwrap(), v);
        }
        assert_eq!(r.zigzag("z").unwrap(), -1);
        assert_eq!(r.zigzag("z").unwrap(), i64::MIN);
        assert!(r.is_empty());
        let e = r.varint("next").unwrap_err().to_string();
        assert_eq!(e, "byte 128: truncated: expected next");
    }
}
