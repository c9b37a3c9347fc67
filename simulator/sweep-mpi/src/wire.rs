//! The messages between rank 0 and the workers, as bytes (MPI sends `u8` buffers).
//!
//! * work, tag [`TAG_WORK`]: the point's index in [`timeless_sweep::points`]' order, u64
//!   little-endian (8 bytes); every rank expands the same study, so an index names a point;
//! * stop, tag [`TAG_STOP`]: empty;
//! * result, tag [`TAG_RESULT`]: the index (u64), then `0` and the simulated time (f64 bits),
//!   the action count (u64) and the wall time (f64 bits), or `1` and the error text (UTF-8),
//!   all little-endian. Times travel as their bits, so rank 0 records exactly the worker's
//!   numbers.

use timeless_sweep::PointResult;

/// A point to replay.
pub const TAG_WORK: i32 = 1;
/// No more points.
pub const TAG_STOP: i32 = 2;
/// A point's result.
pub const TAG_RESULT: i32 = 3;

/// A work message.
pub fn work(index: usize) -> [u8; 8] {
    (index as u64).to_le_bytes()
}

/// The index of a work message; `None` if it is not 8 bytes.
pub fn parse_work(bytes: &[u8]) -> Option<usize> {
    Some(u64::from_le_bytes(bytes.try_into().ok()?) as usize)
}

/// A result message for point `index`.
pub fn result(index: usize, r: &Result<PointResult, String>) -> Vec<u8> {
    let mut b = (index as u64).to_le_bytes().to_vec();
    match r {
        Ok(p) => {
            b.push(0);
            b.extend(p.simulated_secs.to_bits().to_le_bytes());
            b.extend(p.actions.to_le_bytes());
            b.extend(p.wall_secs.to_bits().to_le_bytes());
        }
        Err(e) => {
            b.push(1);
            b.extend(e.as_bytes());
        }
    }
    b
}

/// A result message read back: the index and the result (its `key` is `key`); `None` if the
/// bytes are not one.
pub fn parse_result(bytes: &[u8], key: impl Fn(usize) -> Option<String>) -> Option<Decoded> {
    let u64_at = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(i..i + 8)?.try_into().ok()?))
    };
    let index = u64_at(0)? as usize;
    let result = match bytes.get(8)? {
        0 if bytes.len() == 33 => Ok(PointResult {
            key: key(index)?,
            simulated_secs: f64::from_bits(u64_at(9)?),
            actions: u64_at(17)?,
            wall_secs: f64::from_bits(u64_at(25)?),
        }),
        1 => Err(String::from_utf8_lossy(&bytes[9..]).into_owned()),
        _ => return None,
    };
    Some((index, result))
}

/// A decoded result message: point index and result.
pub type Decoded = (usize, Result<PointResult, String>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let key = |i: usize| Some(format!("k{i}"));
        assert_eq!(parse_work(&work(123_456)), Some(123_456));
        assert_eq!(parse_work(&[1, 2, 3]), None);
        let ok = PointResult {
            key: "k7".into(),
            // The ring trace's SimGrid time: every bit survives.
            simulated_secs: 0.223_726_707_037_085_41,
            actions: 76,
            wall_secs: 1.5e-3,
        };
        let b = result(7, &Ok(ok.clone()));
        assert_eq!(b.len(), 33);
        assert_eq!(parse_result(&b, key), Some((7, Ok(ok))));
        let e = result(9, &Err("bad: é".into()));
        assert_eq!(parse_result(&e, key), Some((9, Err("bad: é".into()))));
        assert_eq!(parse_result(&b[..20], key), None);
    }
}
