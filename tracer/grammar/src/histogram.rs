//! Histogram coding of one block of binned compute volumes (Pilgrim `000_*` §2.3.2: "the
//! durations of identical calls have a bell-shaped distribution ... entropy encoding").
//!
//! A block of `n` values at relative error bound ε starts with one byte saying how it is
//! coded; the encoder writes both codings and keeps the smaller (ties: histogram).
//!
//! **Histogram** (byte 0): the block's histogram of bins followed by the bin of each value,
//! entropy-coded against that histogram ([`crate::rans`]). It wins where few bins hold the
//! block (coarse bounds, a loop's bursts):
//!
//! ```text
//! varint  E                       distinct entries (>= 1), in increasing code order
//! E ×     varint code delta       code = 0 for an exact zero, else 1 + zigzag(bin);
//!                                 delta from the previous entry's code (the first: from 0)
//!         varint count            values of the block in this entry (>= 1; they sum to n)
//!         u16 LE q                (code != 0 only) where the entry decodes inside its bin
//! bytes   rANS                    (E > 1 only) the entry index of each value, in order
//! ```
//!
//! **Codes** (byte 1): zstd of each value's code as a varint, decoded at its bin's centre. It
//! wins at fine bounds, where most bins of a block hold one value and a histogram entry costs
//! more than the value's code; it is taken only where the centres keep the block's total
//! within ε/8, so that it never trades the totals for bytes.
//!
//! Bins are those of [`crate::Precision`]: base `b = 1 + 2ε`, bin `k` spans
//! `[b^(k-1/2), b^(k+1/2))` and the old decoding was its centre `b^k`, within ε of every
//! value of the bin. Here an entry decodes to `b^(k - 1/2 + q/65534)`, the point nearest to
//! the **mean** of the block's values in that bin that is still within ε of each of them
//! (`q = 32767` is the centre, always admissible). Where the values of a bin stay within ε of
//! their mean, which is the common case of a loop's bursts, the block's total flops per bin are
//! kept (to the 1/65534 bin step of `q`) instead of drifting by up to ε: coarse bounds bias a
//! simulated time far less than the bound (validation/compression/README.md).

use crate::rans;
use crate::varint::{put_u64, unzigzag, zigzag, Reader};

/// Steps of the decode point across one bin (`q` in `0..=Q_STEPS`; `Q_STEPS / 2` is the centre).
const Q_STEPS: f64 = 65534.0;

/// The code of a value: 0 for an exact zero (and anything not finite and positive, which the
/// TI parser never produces), else `1 + zigzag(bin)` with `bin = round(ln v / log_base)`.
fn code_of(v: f64, log_base: f64) -> u64 {
    if v > 0.0 && v.is_finite() {
        1 + zigzag((v.ln() / log_base).round() as i64)
    } else {
        0
    }
}

/// One distinct code of a block with its statistics while encoding.
#[derive(Debug, Clone, Copy)]
struct Entry {
    code: u64,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

/// Encodes `values` (finite, >= 0) binned at relative error `epsilon` (in
/// `[Precision::MIN_RELATIVE, Precision::MAX_RELATIVE]`) as one block (layout: module doc).
pub fn encode_block(values: &[f64], epsilon: f64, zstd_level: i32) -> Vec<u8> {
    let log_base = (2.0 * epsilon).ln_1p();
    let codes: Vec<u64> = values.iter().map(|&v| code_of(v, log_base)).collect();
    let histogram = histogram_coding(values, &codes, log_base, epsilon);
    let mut raw = Vec::with_capacity(codes.len() * 3);
    for &c in &codes {
        put_u64(&mut raw, c);
    }
    let zstd = zstd::bulk::compress(&raw, zstd_level).expect("zstd of a memory buffer");
    let (tag, body) = if zstd.len() < histogram.len() && centres_keep_the_total(values, epsilon) {
        (CODES, zstd)
    } else {
        (HISTOGRAM, histogram)
    };
    let mut out = Vec::with_capacity(body.len() + 1);
    out.push(tag);
    out.extend_from_slice(&body);
    out
}

/// Whether decoding every value at its bin's centre keeps the block's total within ε/8: true
/// where many values spread over their bins, so that the centres' errors average out (fine
/// bounds); false for a few values, or values gathered in one part of their bins, whose
/// centres would all err the same way (a coarse bound on a short trace: ring, 15 bursts per
/// rank, lost 4.8 % of its simulated time at ε = 0.2 with centre decoding).
fn centres_keep_the_total(values: &[f64], epsilon: f64) -> bool {
    let p = crate::Precision::Relative(epsilon);
    let total: f64 = values.iter().sum();
    let centres: f64 = values.iter().map(|&v| p.quantize(v.max(0.0))).sum();
    total == 0.0 || ((centres - total) / total).abs() <= epsilon / 8.0
}

/// First byte of a histogram-coded block.
const HISTOGRAM: u8 = 0;
/// First byte of a block of zstd-compressed varint codes.
const CODES: u8 = 1;

/// The histogram coding of a block (after its tag byte).
fn histogram_coding(values: &[f64], codes: &[u64], log_base: f64, epsilon: f64) -> Vec<u8> {
    let mut entries: Vec<Entry> = Vec::new();
    {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by_key(|&i| codes[i]);
        for i in order {
            let v = values[i];
            match entries.last_mut() {
                Some(e) if e.code == codes[i] => {
                    e.count += 1;
                    e.sum += v;
                    e.min = e.min.min(v);
                    e.max = e.max.max(v);
                }
                _ => entries.push(Entry {
                    code: codes[i],
                    count: 1,
                    sum: v,
                    min: v,
                    max: v,
                }),
            }
        }
    }
    let mut out = Vec::new();
    put_u64(&mut out, entries.len() as u64);
    let mut prev = 0;
    for e in &entries {
        put_u64(&mut out, e.code - prev);
        prev = e.code;
        put_u64(&mut out, e.count);
        if e.code != 0 {
            out.extend_from_slice(&decode_point_q(e, log_base, epsilon).to_le_bytes());
        }
    }
    if entries.len() > 1 {
        let index_of = |code: u64| entries.partition_point(|e| e.code < code) as u32;
        let symbols: Vec<u32> = codes.iter().map(|&c| index_of(c)).collect();
        let counts: Vec<u64> = entries.iter().map(|e| e.count).collect();
        let freqs = rans::quantize_frequencies(&counts)
            .expect("at most BLOCK_VALUES entries, each counted at least once");
        out.extend_from_slice(&rans::encode(&symbols, &freqs));
    }
    out
}

/// `q` of an entry: the mean of its values, moved into the range of decode points within
/// `epsilon` of both its smallest and largest value, as a step across its bin.
fn decode_point_q(e: &Entry, log_base: f64, epsilon: f64) -> u16 {
    let bin = unzigzag(e.code - 1) as f64;
    let step = |x: f64| (x.ln() / log_base - (bin - 0.5)) * Q_STEPS;
    let mean = e.sum / e.count as f64;
    // Admissible d: d <= min (1 + ε) and d >= max (1 - ε); nudged inwards by a step so
    // that the exp/ln round trip stays inside.
    let lo = (step(e.max * (1.0 - epsilon)).ceil() + 1.0).max(0.0);
    let hi = (step(e.min * (1.0 + epsilon)).floor() - 1.0).min(Q_STEPS);
    let centre = Q_STEPS / 2.0;
    let q = if lo <= hi {
        step(mean).round().clamp(lo, hi)
    } else {
        centre
    };
    if q.is_finite() {
        q as u16
    } else {
        centre as u16
    }
}

/// Decodes a block of `n` values written by [`encode_block`] at the same `epsilon`.
///
/// # Errors
/// A message naming the byte offset within the block and what was expected.
pub fn decode_block(block: &[u8], n: usize, epsilon: f64) -> Result<Vec<f64>, String> {
    let log_base = (2.0 * epsilon).ln_1p();
    match block.first() {
        Some(&HISTOGRAM) => decode_histogram(block, n, log_base),
        Some(&CODES) => decode_codes(block, n, log_base),
        Some(t) => Err(format!(
            "byte 0: block coding {t}, expected 0 (histogram) or 1 (codes)"
        )),
        None => Err("byte 0: empty block, expected its coding".into()),
    }
}

/// Decodes a block of zstd-compressed varint codes (tag byte included in `block`).
fn decode_codes(block: &[u8], n: usize, log_base: f64) -> Result<Vec<f64>, String> {
    // A varint code of a finite f64 bin takes at most 10 bytes.
    let raw = zstd::bulk::decompress(&block[1..], n * 10).map_err(|e| format!("byte 1: {e}"))?;
    let mut r = Reader::new(&raw, 0);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let code = r
            .varint("bin code")
            .map_err(|e| format!("decompressed {e}"))?;
        out.push(if code == 0 {
            0.0
        } else {
            (unzigzag(code - 1) as f64 * log_base).exp()
        });
    }
    if !r.is_empty() {
        return Err(format!(
            "byte 1: {} decompressed bytes after {n} codes",
            r.remaining()
        ));
    }
    Ok(out)
}

/// Decodes a histogram-coded block (tag byte included in `block`).
fn decode_histogram(block: &[u8], n: usize, log_base: f64) -> Result<Vec<f64>, String> {
    let mut r = Reader::new(&block[1..], 1);
    let text = |e: crate::GrammarError| e.to_string();
    let entries = r.count("histogram entry count", 2).map_err(text)?;
    if entries == 0 || entries > n.max(1) {
        return Err(format!(
            "byte 1: {entries} histogram entries for a block of {n} values"
        ));
    }
    let mut points = Vec::with_capacity(entries);
    let mut counts = Vec::with_capacity(entries);
    let mut code = 0u64;
    for i in 0..entries {
        let at = r.offset();
        let delta = r.varint("histogram code delta").map_err(text)?;
        if i > 0 && delta == 0 {
            return Err(format!("byte {at}: histogram codes must increase"));
        }
        code = code
            .checked_add(delta)
            .ok_or_else(|| format!("byte {at}: histogram code overflows"))?;
        let count = r.varint("histogram count").map_err(text)?;
        if count == 0 {
            return Err(format!("byte {}: histogram count 0", r.offset()));
        }
        counts.push(count);
        points.push(if code == 0 {
            0.0
        } else {
            let q = f64::from(r.u16_le("decode point").map_err(text)?);
            if q > Q_STEPS {
                return Err(format!(
                    "byte {}: decode point {q} out of its bin",
                    r.offset()
                ));
            }
            let bin = unzigzag(code - 1) as f64;
            ((bin - 0.5 + q / Q_STEPS) * log_base).exp()
        });
    }
    if counts.iter().sum::<u64>() != n as u64 {
        return Err(format!(
            "byte {}: histogram counts sum to {}, the block holds {n} values",
            r.offset(),
            counts.iter().sum::<u64>()
        ));
    }
    if entries == 1 {
        if !r.is_empty() {
            return Err(format!(
                "byte {}: {} bytes after a one-entry histogram",
                r.offset(),
                r.remaining()
            ));
        }
        return Ok(vec![points[0]; n]);
    }
    let payload_at = r.offset();
    let payload = r.take(r.remaining(), "coded values").map_err(text)?;
    let freqs = rans::quantize_frequencies(&counts)
        .ok_or_else(|| format!("byte {payload_at}: histogram cannot be coded"))?;
    let symbols =
        rans::decode(payload, &freqs, n).map_err(|e| format!("byte {payload_at}+: {e}"))?;
    let mut seen = vec![0u64; entries];
    let mut out = Vec::with_capacity(n);
    for s in symbols {
        seen[s as usize] += 1;
        out.push(points[s as usize]);
    }
    if seen != counts {
        return Err(format!(
            "byte {payload_at}: coded values do not match the histogram"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `n` pseudo-random numbers (xorshift64*): no runs or periods for zstd to find.
    fn scrambled(n: usize) -> Vec<u64> {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        (0..n)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32
            })
            .collect()
    }

    fn within(v: f64, w: f64, eps: f64) -> bool {
        if v == 0.0 {
            w == 0.0
        } else {
            (w / v - 1.0).abs() <= eps * (1.0 + 1e-9) + 1e-12
        }
    }

    /// Bursts of a loop: 4096 values 23,000 flops ± 2 % (22,540 to 23,460) at ε = 0.1 all fall
    /// in bin 55 of base b = 1.2 (ln 23,000 / ln 1.2 = 55.09; the bin spans [20,672, 24,806)),
    /// whose centre 1.2^55 = 22,645 is 1.5 % below their mean. The block is a one-entry
    /// histogram, and decodes to the mean: total kept to 1e-4 where centre decoding lost 1.5 %.
    #[test]
    fn a_loops_bursts_keep_their_total() {
        let values: Vec<f64> = (0..4096)
            .map(|i| 23_000.0 * (1.0 + 0.02 * (((i * 7919) % 101) as f64 / 50.0 - 1.0)))
            .collect();
        let block = encode_block(&values, 0.1, 19);
        let out = decode_block(&block, values.len(), 0.1).unwrap();
        for (v, w) in values.iter().zip(&out) {
            assert!(within(*v, *w, 0.1), "{v} -> {w}");
        }
        let (a, b): (f64, f64) = (values.iter().sum(), out.iter().sum());
        assert!((b / a - 1.0).abs() < 1e-4, "{a} vs {b}");
        let centre: f64 = values
            .iter()
            .map(|&v| crate::Precision::Relative(0.1).quantize(v))
            .sum();
        assert!((centre / a - 1.0).abs() > 0.01, "{a} vs centre {centre}");
        assert_eq!(
            block.len(),
            1 + 1 + 1 + 2 + 2,
            "tag, E, code, count 4096 (2 bytes), q"
        );
    }

    #[test]
    fn one_entry_blocks_have_no_payload() {
        let block = encode_block(&[5e6; 100], 1e-3, 19);
        // Tag, E = 1, code (2 bytes), count 100 (1 byte), q (2 bytes).
        assert_eq!(block.len(), 1 + 1 + 2 + 1 + 2);
        let out = decode_block(&block, 100, 1e-3).unwrap();
        assert!(out.iter().all(|&w| w == out[0] && within(5e6, w, 1e-3)));
        // A lone value decodes to itself (to the q step, 2ε/65534 of its bin).
        assert!((out[0] / 5e6 - 1.0).abs() < 1e-7, "{}", out[0]);
        assert_eq!(
            decode_block(&encode_block(&[0.0; 3], 0.1, 19), 3, 0.1).unwrap(),
            vec![0.0; 3]
        );
    }

    #[test]
    fn bad_blocks_are_errors_with_offsets() {
        let values: Vec<f64> = scrambled(500)
            .into_iter()
            .map(|h| 1e3 + (h % 17) as f64 * 40.0)
            .collect();
        let log_base = (2.0f64 * 1e-2).ln_1p();
        let codes: Vec<u64> = values.iter().map(|&v| code_of(v, log_base)).collect();
        let mut block = vec![HISTOGRAM];
        block.extend(histogram_coding(&values, &codes, log_base, 1e-2));
        assert_eq!(decode_block(&block, 500, 1e-2).unwrap().len(), 500);
        assert!(decode_block(&block, 499, 1e-2)
            .unwrap_err()
            .contains("sum to 500"));
        for cut in 0..block.len() {
            let e = decode_block(&block[..cut], 500, 1e-2).unwrap_err();
            assert!(e.starts_with("byte "), "{e}");
        }
        assert!(decode_block(&[], 1, 0.1).is_err());
        assert!(decode_block(&[0, 0], 1, 0.1)
            .unwrap_err()
            .contains("0 histogram entries"));
        assert!(decode_block(&[7], 1, 0.1)
            .unwrap_err()
            .contains("block coding 7"));
        // A codes block: truncated zstd, or too few codes for the block.
        let fine: Vec<f64> = (0..500).map(|i| 1e3 + i as f64).collect();
        let block = encode_block(&fine, 1e-6, 19);
        assert_eq!(block[0], CODES);
        assert!(decode_block(&block[..block.len() - 1], 500, 1e-6).is_err());
        assert!(decode_block(&block, 501, 1e-6).is_err());
        assert!(decode_block(&block, 499, 1e-6).is_err());
    }

    /// At a fine bound every value of a varied block has its own bin: the codes coding is
    /// chosen (a histogram entry would cost more than the code) and decodes at the centres; at
    /// a coarse bound the same block falls in a few bins and the histogram is chosen.
    #[test]
    fn each_block_takes_the_smaller_coding() {
        // 1e4 to 1.41e4 in a scrambled order.
        let values: Vec<f64> = scrambled(4096)
            .into_iter()
            .map(|h| 1e4 * (1.0 + (h % 4096) as f64 * 1e-4))
            .collect();
        let block = encode_block(&values, 1e-6, 19);
        assert_eq!(block[0], CODES);
        let out = decode_block(&block, values.len(), 1e-6).unwrap();
        for (v, w) in values.iter().zip(&out) {
            assert_eq!(*w, crate::Precision::Relative(1e-6).quantize(*v));
        }
        // 15 values, each alone in its bin and 0.4 of a bin below its centre (1.4^(k - 0.4),
        // k = 20..34): codes would be smaller (a histogram entry per value), but every centre
        // would be 1.4^0.4 = 14 % high: the histogram is taken, and keeps each value.
        let low: Vec<f64> = (20..35).map(|k| 1.4f64.powf(k as f64 - 0.4)).collect();
        let log_base = 0.4f64.ln_1p();
        let codes: Vec<u64> = low.iter().map(|&v| code_of(v, log_base)).collect();
        let mut raw = Vec::new();
        for &c in &codes {
            put_u64(&mut raw, c);
        }
        let zstd_len = zstd::bulk::compress(&raw, 19).unwrap().len();
        assert!(zstd_len < histogram_coding(&low, &codes, log_base, 0.2).len());
        let block = encode_block(&low, 0.2, 19);
        assert_eq!(block[0], HISTOGRAM);
        let out = decode_block(&block, low.len(), 0.2).unwrap();
        for (v, w) in low.iter().zip(&out) {
            assert!((w / v - 1.0).abs() < 1e-5, "{v} -> {w}");
        }

        // A skewed block (one value in 20 twice as large, scattered): under a bit per value
        // for the histogram, at least one for zstd's literals.
        let skewed: Vec<f64> = scrambled(4096)
            .into_iter()
            .map(|h| {
                if h % 20 == 0 {
                    2e4
                } else {
                    1e4 + (h % 100) as f64
                }
            })
            .collect();
        let coarse = encode_block(&skewed, 0.2, 19);
        assert_eq!(coarse[0], HISTOGRAM);
        let out = decode_block(&coarse, skewed.len(), 0.2).unwrap();
        assert!(skewed.iter().zip(&out).all(|(v, w)| within(*v, *w, 0.2)));
    }

    proptest! {
        #[test]
        fn every_value_within_the_bound(
            values in proptest::collection::vec(
                prop_oneof![Just(0.0), 1e-3f64..1e3, 1e3f64..1e12, 9e5f64..1.1e6], 1..600),
            eps in prop_oneof![Just(1e-9), Just(1e-3), Just(1e-2), Just(0.2), Just(0.5)],
        ) {
            let block = encode_block(&values, eps, 3);
            let out = decode_block(&block, values.len(), eps).unwrap();
            prop_assert_eq!(out.len(), values.len());
            for (v, w) in values.iter().zip(&out) {
                prop_assert!(within(*v, *w, eps), "{} -> {} at {}", v, w, eps);
            }
        }
    }
}
