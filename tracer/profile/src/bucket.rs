//! Message sizes in power-of-two buckets.
//!
//! Bucket 0 holds empty messages; bucket k >= 1 holds sizes in [2^(k-1), 2^k) bytes. Example:
//! 1 byte is bucket 1, 40,000 bytes bucket 16 (32,768 <= 40,000 < 65,536), 65,536 bytes
//! bucket 17. Completions and operations without a size are recorded in bucket 0.

/// The bucket of a message of `bytes` bytes.
pub fn of(bytes: u64) -> u8 {
    (64 - bytes.leading_zeros()) as u8
}

/// The bucket's size range `[lo, hi)` in bytes; `hi` is `None` for the last bucket (64).
pub fn range(bucket: u8) -> (u64, Option<u64>) {
    match bucket {
        0 => (0, Some(1)),
        64 => (1 << 63, None),
        k => (1u64 << (k - 1), Some(1u64 << k)),
    }
}

/// A readable label: `0`, `[1, 2)`, `[32 KiB, 64 KiB)`, ...
pub fn label(bucket: u8) -> String {
    let (lo, hi) = range(bucket);
    match (bucket, hi) {
        (0, _) => "0".to_string(),
        (_, Some(hi)) => format!("[{}, {})", bytes(lo), bytes(hi)),
        (_, None) => format!("[{}, inf)", bytes(lo)),
    }
}

fn bytes(b: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024 && v & 1023 == 0 && u + 1 < UNITS.len() {
        v /= 1024;
        u += 1;
    }
    format!("{v} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_by_hand() {
        assert_eq!(of(0), 0);
        assert_eq!(of(1), 1);
        assert_eq!(of(2), 2);
        assert_eq!(of(3), 2);
        assert_eq!(of(40_000), 16);
        assert_eq!(of(65_535), 16);
        assert_eq!(of(65_536), 17);
        assert_eq!(of(u64::MAX), 64);
        assert_eq!(range(16), (32_768, Some(65_536)));
        assert_eq!(label(16), "[32 KiB, 64 KiB)");
        assert_eq!(label(1), "[1 B, 2 B)");
        assert_eq!(label(0), "0");
        for b in [1u64, 7, 4096, 1 << 40, u64::MAX] {
            let (lo, hi) = range(of(b));
            assert!(lo <= b && hi.is_none_or(|h| b < h), "{b}");
        }
    }
}
