//! Per-rank volume streams: the flops of every `compute` and the seconds of every `sleep`, in
//! action order, kept apart from the grammar (Pilgrim `000_*` §2.3.2 keeps timings apart from
//! the call signatures likewise), with the places of the compute actions
//! ([`crate::placement`]).
//!
//! Values are encoded either losslessly (the f64 bits, little-endian, zstd-compressed) or binned
//! on a log scale with a relative error bound ε (Pilgrim §2.3.2's exponential bins): with base
//! `b = 1 + 2ε`, a value `v > 0` falls in bin `k = round(ln v / ln b)`, whose centre `b^k` is
//! within `sqrt(b) - 1 <= ε` of it. Zero is kept exactly. Binned blocks are histogram-coded
//! ([`crate::histogram`]: the block's bins, each decoded at the admissible point nearest to the
//! mean of its values, then each value's bin entropy-coded against the histogram). Values are
//! cut into blocks of [`BLOCK_VALUES`] values, each coded on its own, so a replay holds one
//! decoded block per rank (at most 8 × 4096 bytes) however long the stream.

use crate::blocks::BlockWriter;
use crate::placement::PlacementStream;

/// Values per zstd block.
pub const BLOCK_VALUES: usize = 4096;

/// zstd level of the lossless blocks written by `timeless compress` (offline: size first).
pub const OFFLINE_ZSTD_LEVEL: i32 = 19;
/// zstd level of the blocks compressed while an MPI program runs (the tracer's online
/// compression: time first). On a 2-rank stencil2d trace (122,007 actions, 60,005 compute
/// volumes; this project's 2-core VM) the encoder cost 430 ns per action at level 19 and 290 ns
/// at level 3 with precision 1e-3 (2.2 µs and 0.31 µs lossless), for volume blocks 6.5 %
/// (lossless 20 %) larger. The level changes the blocks' bytes, never the values.
pub const ONLINE_ZSTD_LEVEL: i32 = 3;

/// How volumes are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Precision {
    /// Exact f64 bits.
    Lossless,
    /// Log-binned with this maximum relative error per value (0 < ε < 1).
    Relative(f64),
}

/// The default: a relative error of at most 1e-3 per compute volume, which changes a simulated
/// time by at most 0.1 % (every compute phase is scaled by a factor within 1 ± 1e-3), and by
/// far less where a bin's values keep their mean ([`crate::histogram`]).
pub const DEFAULT_PRECISION: Precision = Precision::Relative(1e-3);

impl Precision {
    /// The bound as stored in a file header: 0 for lossless.
    pub fn as_f64(self) -> f64 {
        match self {
            Precision::Lossless => 0.0,
            Precision::Relative(e) => e,
        }
    }

    /// Smallest relative error accepted: below it, bins of f64 values would overflow `i64` for
    /// extreme magnitudes; use lossless instead.
    pub const MIN_RELATIVE: f64 = 1e-9;
    /// Largest relative error accepted.
    pub const MAX_RELATIVE: f64 = 0.5;

    /// [`Precision::from_f64`] of the value of a `--precision` option.
    ///
    /// # Errors
    /// [`PrecisionError`] (naming `--precision` and the accepted range) for a value that is
    /// neither 0 nor in `[MIN_RELATIVE, MAX_RELATIVE]`.
    pub fn from_flag(e: f64) -> Result<Precision, PrecisionError> {
        Precision::from_f64(e).ok_or(PrecisionError(e))
    }

    /// Inverse of [`Precision::as_f64`]; `None` for a bound that is neither 0 nor in
    /// `[MIN_RELATIVE, MAX_RELATIVE]`.
    pub fn from_f64(e: f64) -> Option<Precision> {
        if e == 0.0 {
            Some(Precision::Lossless)
        } else if (Self::MIN_RELATIVE..=Self::MAX_RELATIVE).contains(&e) {
            Some(Precision::Relative(e))
        } else {
            None
        }
    }

    fn log_base(self) -> f64 {
        match self {
            Precision::Lossless => 0.0,
            Precision::Relative(e) => (2.0 * e).ln_1p(),
        }
    }

    /// The value `v` as this precision stores it (identity when lossless).
    /// (Centre decoding: what a lone value of its bin would decode to, to the step of
    /// [`crate::histogram`]'s decode point.)
    pub fn quantize(self, v: f64) -> f64 {
        match self {
            Precision::Lossless => v,
            Precision::Relative(_) => {
                if v == 0.0 {
                    0.0
                } else {
                    self.unbin(self.bin(v))
                }
            }
        }
    }

    fn bin(self, v: f64) -> i64 {
        (v.ln() / self.log_base()).round() as i64
    }

    fn unbin(self, k: i64) -> f64 {
        (k as f64 * self.log_base()).exp()
    }
}

/// A finished stream: value count and zstd blocks, with the placement of the rank's compute
/// actions among its other actions ([`crate::placement`]): a rank's timings, stored (and
/// deduplicated across ranks) as one unit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VolumeStream {
    /// Number of values.
    pub count: u64,
    /// Coded blocks, [`BLOCK_VALUES`] values each (the last fewer): zstd-compressed f64 bits
    /// when lossless, histogram-coded bins otherwise ([`crate::histogram`]).
    pub blocks: Vec<Vec<u8>>,
    /// One gap per compute action: where it goes among the grammar's actions.
    pub placement: PlacementStream,
}

impl VolumeStream {
    /// Compressed size in bytes of the values (block payloads only).
    pub fn compressed_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }
}

/// Encodes a stream value by value; compresses each full block as it fills.
#[derive(Debug, Clone)]
pub struct VolumeEncoder {
    precision: Precision,
    zstd_level: i32,
    /// Lossless blocks.
    blocks: BlockWriter,
    /// The open binned block's values (relative precision).
    binned: Vec<f64>,
    /// Finished binned blocks.
    binned_blocks: Vec<Vec<u8>>,
    stream: VolumeStream,
}

impl VolumeEncoder {
    /// An empty stream at `precision`, blocks compressed at [`OFFLINE_ZSTD_LEVEL`].
    pub fn new(precision: Precision) -> Self {
        Self::with_zstd_level(precision, OFFLINE_ZSTD_LEVEL)
    }

    /// An empty stream at `precision`, blocks compressed at zstd level `zstd_level`
    /// (e.g. [`ONLINE_ZSTD_LEVEL`]).
    pub fn with_zstd_level(precision: Precision, zstd_level: i32) -> Self {
        VolumeEncoder {
            precision,
            zstd_level,
            blocks: BlockWriter::new(zstd_level),
            binned: Vec::new(),
            binned_blocks: Vec::new(),
            stream: VolumeStream {
                count: 0,
                blocks: Vec::new(),
                placement: PlacementStream::default(),
            },
        }
    }

    /// Appends one volume (a finite value >= 0, as the TI parser guarantees).
    pub fn push(&mut self, v: f64) {
        match self.precision {
            Precision::Lossless => {
                self.blocks
                    .open_block()
                    .extend_from_slice(&v.to_bits().to_le_bytes());
                self.blocks.end_value();
            }
            Precision::Relative(e) => {
                self.binned.push(v);
                if self.binned.len() == BLOCK_VALUES {
                    self.binned_blocks.push(crate::histogram::encode_block(
                        &self.binned,
                        e,
                        self.zstd_level,
                    ));
                    self.binned.clear();
                }
            }
        }
        self.stream.count += 1;
    }

    /// Ends the stream (with an empty placement: [`crate::RankEncoder`] sets it).
    pub fn finish(mut self) -> VolumeStream {
        self.stream.blocks = match self.precision {
            Precision::Lossless => self.blocks.finish(),
            Precision::Relative(e) => {
                if !self.binned.is_empty() {
                    self.binned_blocks.push(crate::histogram::encode_block(
                        &self.binned,
                        e,
                        self.zstd_level,
                    ));
                }
                self.binned_blocks
            }
        };
        self.stream
    }
}

/// Reads a stream value by value, one decompressed block at a time.
#[derive(Debug, Clone)]
pub struct VolumeCursor {
    block_index: usize,
    /// The current lossless block's bytes.
    decoded: Vec<u8>,
    /// The current binned block's values.
    values: Vec<f64>,
    pos: usize,
    left_in_block: usize,
    read: u64,
}

impl Default for VolumeCursor {
    fn default() -> Self {
        Self::new()
    }
}

impl VolumeCursor {
    /// A cursor at the start of a stream.
    pub fn new() -> Self {
        VolumeCursor {
            block_index: 0,
            decoded: Vec::new(),
            values: Vec::new(),
            pos: 0,
            left_in_block: 0,
            read: 0,
        }
    }

    /// The next value of `stream`, or `Ok(None)` past its end.
    ///
    /// # Errors
    /// A block that does not decompress or decode (the message says which block).
    pub fn next(
        &mut self,
        stream: &VolumeStream,
        precision: Precision,
    ) -> Result<Option<f64>, String> {
        if self.read == stream.count {
            return Ok(None);
        }
        if self.left_in_block == 0 {
            let block = stream
                .blocks
                .get(self.block_index)
                .ok_or_else(|| format!("volume block {} missing", self.block_index))?;
            let values = (stream.count - self.read).min(BLOCK_VALUES as u64) as usize;
            match precision {
                // Exactly 8 bytes per value.
                Precision::Lossless => {
                    self.decoded = zstd::bulk::decompress(block, values * 8)
                        .map_err(|e| format!("volume block {}: {e}", self.block_index))?;
                }
                Precision::Relative(e) => {
                    self.values = crate::histogram::decode_block(block, values, e)
                        .map_err(|m| format!("volume block {}, {m}", self.block_index))?;
                }
            }
            self.block_index += 1;
            self.pos = 0;
            self.left_in_block = values;
        }
        let v =
            match precision {
                Precision::Lossless => {
                    let b = self.decoded.get(self.pos..self.pos + 8).ok_or_else(|| {
                        format!("volume block {} too short", self.block_index - 1)
                    })?;
                    self.pos += 8;
                    f64::from_bits(u64::from_le_bytes(b.try_into().expect("8 bytes")))
                }
                Precision::Relative(_) => {
                    let v = self.values.get(self.pos).copied().ok_or_else(|| {
                        format!("volume block {} too short", self.block_index - 1)
                    })?;
                    self.pos += 1;
                    v
                }
            };
        self.left_in_block -= 1;
        self.read += 1;
        Ok(Some(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(p: Precision, values: &[f64]) -> Vec<f64> {
        let mut e = VolumeEncoder::new(p);
        for &v in values {
            e.push(v);
        }
        let s = e.finish();
        assert_eq!(s.count, values.len() as u64);
        let mut c = VolumeCursor::new();
        let mut out = Vec::new();
        while let Some(v) = c.next(&s, p).unwrap() {
            out.push(v);
        }
        out
    }

    #[test]
    fn lossless_is_bit_exact_across_blocks() {
        let values: Vec<f64> = (0..10_000).map(|i| (i as f64).sqrt() * 1e6 + 0.1).collect();
        let out = round_trip(Precision::Lossless, &values);
        assert_eq!(
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn binned_error_is_bounded() {
        for eps in [0.5, 1e-1, 1e-2, 1e-3, 1e-6, 1e-9] {
            let p = Precision::Relative(eps);
            let values: Vec<f64> = (0..5000)
                .map(|i| 1.0 + (i as f64).powf(2.7) * 13.7)
                .chain([0.0, 1e-12, 3e15])
                .collect();
            let out = round_trip(p, &values);
            for (v, w) in values.iter().zip(&out) {
                if *v == 0.0 {
                    assert_eq!(*w, 0.0);
                } else {
                    // ε plus a few ulps of the exp/ln round trip.
                    assert!(
                        (w / v - 1.0).abs() <= eps * (1.0 + 1e-9) + 1e-12,
                        "{v} -> {w} at {eps}"
                    );
                }
            }
        }
    }
}

/// A `--precision` value that is neither 0 (lossless) nor a relative error in the accepted
/// range ([`Precision::from_flag`]).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error(
    "--precision {0}: expected 0 (lossless) or a relative error in [{min}, {max}]",
    min = Precision::MIN_RELATIVE,
    max = Precision::MAX_RELATIVE
)]
pub struct PrecisionError(pub f64);
