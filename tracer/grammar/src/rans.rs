//! A static range-asymmetric-numeral-system (rANS) coder over a small alphabet, the entropy
//! stage of the histogram coding of compute volumes ([`crate::histogram`]).
//!
//! Pilgrim's HIST (`000_*` §2.3.2) codes each binned timing of a block in K + 1 bits against
//! the block's most frequent bins. Coding against the block's whole histogram with rANS
//! (J. Duda, "Asymmetric numeral systems", 2013; byte-wise renormalisation as in F. Giesen's
//! `rans_byte`) spends `-log2(f_s / M)` bits per symbol instead, which matters on real
//! captures where one bin holds most of a rank's bursts (0.2 to 1 bit per value instead of
//! HIST's K + 1 >= 1).
//!
//! State `x` is a `u32` kept in `[L, 256 L)` with `L = 2^23`; frequencies sum to
//! `M = 2^`[`PROB_BITS`]. The encoder runs over the symbols backwards and its bytes are
//! reversed, so the decoder reads forwards. The final state of the decoder must be `L` again,
//! which catches most corruptions.

/// Frequencies are quantised to sum to `2^PROB_BITS`.
pub const PROB_BITS: u32 = 14;
/// Sum of the quantised frequencies.
pub const PROB_SCALE: u32 = 1 << PROB_BITS;
const RANS_L: u32 = 1 << 23;

/// Scales `counts` (occurrences per symbol, each >= 1, at most [`PROB_SCALE`] symbols) to
/// frequencies summing to [`PROB_SCALE`], each >= 1. Deterministic: the decoder recomputes the
/// same frequencies from the same counts.
///
/// Returns `None` when there are no symbols, more than [`PROB_SCALE`] of them, or a count is 0.
pub fn quantize_frequencies(counts: &[u64]) -> Option<Vec<u32>> {
    let n = counts.len();
    if n == 0 || n > PROB_SCALE as usize || counts.contains(&0) {
        return None;
    }
    let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    let mut f: Vec<u32> = counts
        .iter()
        .map(|&c| {
            let scaled = (u128::from(c) * u128::from(PROB_SCALE) + total / 2) / total;
            scaled.clamp(1, u128::from(PROB_SCALE)) as u32
        })
        .collect();
    // Fix the sum on the largest frequencies (ties: the lowest index), one unit at a time
    // when taking away, so that no frequency drops below 1.
    let mut sum: i64 = f.iter().map(|&x| i64::from(x)).sum();
    let target = i64::from(PROB_SCALE);
    while sum != target {
        let largest = (0..n).max_by_key(|&i| (f[i], std::cmp::Reverse(i)))?;
        if sum < target {
            f[largest] += (target - sum) as u32;
            sum = target;
        } else {
            let room = i64::from(f[largest]) - 1;
            if room == 0 {
                return None;
            }
            let take = room.min(sum - target);
            f[largest] -= take as u32;
            sum -= take;
        }
    }
    Some(f)
}

/// Cumulative starts of `freqs` (`starts[s]` = sum of the frequencies before `s`).
fn starts_of(freqs: &[u32]) -> Vec<u32> {
    let mut acc = 0;
    freqs
        .iter()
        .map(|&f| {
            let s = acc;
            acc += f;
            s
        })
        .collect()
}

/// Codes `symbols` (each an index into `freqs`, which sum to [`PROB_SCALE`]) into bytes.
///
/// # Panics
/// Never on valid input; a symbol out of range of `freqs` is a caller bug (debug assertion)
/// and is coded as symbol 0.
pub fn encode(symbols: &[u32], freqs: &[u32]) -> Vec<u8> {
    let starts = starts_of(freqs);
    let mut out = Vec::with_capacity(symbols.len() / 4 + 8);
    let mut x: u32 = RANS_L;
    for &s in symbols.iter().rev() {
        debug_assert!((s as usize) < freqs.len());
        let s = if (s as usize) < freqs.len() {
            s as usize
        } else {
            0
        };
        let (f, c) = (freqs[s], starts[s]);
        let x_max = ((RANS_L >> PROB_BITS) << 8) * f;
        while x >= x_max {
            out.push(x as u8);
            x >>= 8;
        }
        x = ((x / f) << PROB_BITS) + (x % f) + c;
    }
    out.extend_from_slice(&x.to_le_bytes());
    out.reverse();
    out
}

/// Decodes `n` symbols coded by [`encode`] with the same `freqs`.
///
/// # Errors
/// A message naming the byte offset within `bytes` where the data ran out, or saying that
/// the final state is wrong (corrupt or mismatched data).
pub fn decode(bytes: &[u8], freqs: &[u32], n: usize) -> Result<Vec<u32>, String> {
    let starts = starts_of(freqs);
    if freqs.is_empty() || starts.last().zip(freqs.last()).map(|(s, f)| s + f) != Some(PROB_SCALE) {
        return Err("symbol frequencies do not sum to the coder's scale".into());
    }
    // slot -> symbol, by binary search over the starts (alphabets are small).
    let symbol_of = |slot: u32| starts.partition_point(|&c| c <= slot) - 1;
    let mut pos = 0usize;
    let mut x: u32 = 0;
    for _ in 0..4 {
        let b = *bytes
            .get(pos)
            .ok_or_else(|| format!("coded symbols end at byte {pos}, state needs 4 bytes"))?;
        x = (x << 8) | u32::from(b);
        pos += 1;
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let slot = x & (PROB_SCALE - 1);
        let s = symbol_of(slot);
        out.push(s as u32);
        x = freqs[s] * (x >> PROB_BITS) + slot - starts[s];
        while x < RANS_L {
            let b = *bytes.get(pos).ok_or_else(|| {
                format!("coded symbols end at byte {pos}, after {i} of {n} symbols")
            })?;
            x = (x << 8) | u32::from(b);
            pos += 1;
        }
    }
    if x != RANS_L || pos != bytes.len() {
        return Err(format!(
            "coded symbols do not end cleanly (state {x:#x}, {} of {} bytes read)",
            pos,
            bytes.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn frequencies_sum_to_the_scale_and_stay_positive() {
        let f = quantize_frequencies(&[1, 1_000_000, 3]).unwrap();
        assert_eq!(f.iter().sum::<u32>(), PROB_SCALE);
        // 1 and 3 out of 1,000,004 round to 0 and are raised to 1; the largest absorbs it.
        assert_eq!(f, vec![1, PROB_SCALE - 2, 1]);
        assert_eq!(quantize_frequencies(&[5]).unwrap(), vec![PROB_SCALE]);
        // Equal counts: 3 × 5461 = 16383, the first (largest, lowest index) takes the rest.
        assert_eq!(
            quantize_frequencies(&[7, 7, 7]).unwrap(),
            vec![5462, 5461, 5461]
        );
        assert_eq!(quantize_frequencies(&[]), None);
        assert_eq!(quantize_frequencies(&[0, 1]), None);
    }

    /// A skewed source costs about its entropy: 97 % / 3 % has H = 0.194 bits per symbol, so
    /// 4096 symbols need about 100 bytes; the coder's overhead (frequency quantisation, 4
    /// bytes of final state) keeps it under 120.
    #[test]
    fn skewed_source_costs_about_its_entropy() {
        let symbols: Vec<u32> = (0..4096).map(|i| u32::from(i % 33 == 0)).collect();
        let ones = symbols.iter().filter(|&&s| s == 1).count() as u64;
        let f = quantize_frequencies(&[4096 - ones, ones]).unwrap();
        let bytes = encode(&symbols, &f);
        assert!(bytes.len() < 120, "{} bytes", bytes.len());
        assert_eq!(decode(&bytes, &f, symbols.len()).unwrap(), symbols);
    }

    #[test]
    fn truncated_and_corrupt_inputs_are_errors() {
        let symbols: Vec<u32> = (0..1000).map(|i| (i * 7 % 5) as u32).collect();
        let f = quantize_frequencies(&[200, 200, 200, 200, 200]).unwrap();
        let bytes = encode(&symbols, &f);
        for cut in 0..bytes.len() {
            assert!(
                decode(&bytes[..cut], &f, symbols.len()).is_err(),
                "cut {cut}"
            );
        }
        let mut bad = bytes.clone();
        bad[bytes.len() / 2] ^= 0x55;
        // A flipped byte either fails or decodes to other symbols; it never panics.
        if let Ok(s) = decode(&bad, &f, symbols.len()) {
            assert_ne!(s, symbols);
        }
    }

    proptest! {
        #[test]
        fn round_trip(counts in proptest::collection::vec(1u64..50, 1..40), seed in any::<u64>()) {
            let mut symbols = Vec::new();
            for (s, &c) in counts.iter().enumerate() {
                symbols.extend(std::iter::repeat_n(s as u32, c as usize));
            }
            // A deterministic shuffle.
            let mut r = seed | 1;
            for i in (1..symbols.len()).rev() {
                r ^= r << 13; r ^= r >> 7; r ^= r << 17;
                symbols.swap(i, (r % (i as u64 + 1)) as usize);
            }
            let f = quantize_frequencies(&counts).unwrap();
            prop_assert_eq!(f.iter().sum::<u32>(), PROB_SCALE);
            let bytes = encode(&symbols, &f);
            prop_assert_eq!(decode(&bytes, &f, symbols.len()).unwrap(), symbols);
        }
    }
}
