//! Where a rank's `compute` actions fall among its other actions, kept out of the grammar.
//!
//! A traced program's compute bursts are timings, not calls: whether a burst between two MPI
//! calls is long enough to be recorded depends on the machine's noise (a timer interrupt
//! charged to the thread, a cache miss), so on a real run the `compute` records of a loop land
//! at slightly different places in each iteration and on each rank. Were they terminals of the
//! grammar, every such irregularity would cost rules and make each rank's grammar unique.
//! Pilgrim keeps timings apart from the call signatures (`000_*` §2.3.2: a call's duration and
//! interval go to their own compressed stream); likewise the grammar here holds every action
//! *but* `compute`, and each rank's compute actions are stored as a stream of *gaps*: the
//! number of grammar actions between the previous compute (or the start) and this one, the
//! flops going to the volume stream as before. `c₁ a b c₂ c₃ d` has grammar `a b d` and gaps
//! 0, 2, 0. A loop that computes once per iteration gives a constant gap, which zstd reduces
//! to a few bytes per block.
//!
//! Gaps are LEB128 varints cut into zstd blocks of [`crate::volume::BLOCK_VALUES`] gaps, like
//! the volume stream, so a replay holds one decoded block per rank.

use crate::blocks::BlockWriter;
use crate::varint::{put_u64, Reader};
use crate::volume::BLOCK_VALUES;

/// A finished gap stream: one gap per compute action.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PlacementStream {
    /// Number of gaps (= compute actions).
    pub count: u64,
    /// zstd-compressed blocks of varint gaps, [`BLOCK_VALUES`] each (the last fewer).
    pub blocks: Vec<Vec<u8>>,
}

impl PlacementStream {
    /// Compressed size in bytes (block payloads only).
    pub fn compressed_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }
}

/// Encodes gaps one by one; compresses each full block as it fills.
#[derive(Debug, Clone)]
pub struct PlacementEncoder {
    blocks: BlockWriter,
    stream: PlacementStream,
}

impl PlacementEncoder {
    /// An empty stream whose blocks are compressed at zstd level `zstd_level`.
    pub fn new(zstd_level: i32) -> Self {
        PlacementEncoder {
            blocks: BlockWriter::new(zstd_level),
            stream: PlacementStream::default(),
        }
    }

    /// Appends the gap of one compute action (grammar actions since the previous one).
    pub fn push(&mut self, gap: u64) {
        put_u64(self.blocks.open_block(), gap);
        self.blocks.end_value();
        self.stream.count += 1;
    }

    /// Ends the stream.
    pub fn finish(mut self) -> PlacementStream {
        self.stream.blocks = self.blocks.finish();
        self.stream
    }
}

/// Reads a gap stream one gap at a time, one decompressed block at a time.
#[derive(Debug, Clone, Default)]
pub struct PlacementCursor {
    block_index: usize,
    decoded: Vec<u8>,
    pos: usize,
    left_in_block: usize,
    read: u64,
}

impl PlacementCursor {
    /// A cursor at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next gap of `stream`, or `Ok(None)` past its end.
    ///
    /// # Errors
    /// A block that does not decompress or decode (the message names the block).
    pub fn next(&mut self, stream: &PlacementStream) -> Result<Option<u64>, String> {
        if self.read == stream.count {
            return Ok(None);
        }
        if self.left_in_block == 0 {
            let block = stream
                .blocks
                .get(self.block_index)
                .ok_or_else(|| format!("compute placement block {} missing", self.block_index))?;
            let gaps = (stream.count - self.read).min(BLOCK_VALUES as u64) as usize;
            // A varint takes at most 10 bytes.
            self.decoded = zstd::bulk::decompress(block, gaps * 10)
                .map_err(|e| format!("compute placement block {}: {e}", self.block_index))?;
            self.block_index += 1;
            self.pos = 0;
            self.left_in_block = gaps;
        }
        let mut r = Reader::new(&self.decoded[self.pos..], 0);
        let gap = r
            .varint("gap")
            .map_err(|e| format!("compute placement block {}: {e}", self.block_index - 1))?;
        self.pos += r.offset();
        self.left_in_block -= 1;
        self.read += 1;
        Ok(Some(gap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_round_trip_across_blocks() {
        let gaps: Vec<u64> = (0..10_000u64)
            .map(|i| if i % 97 == 0 { i * 1_000_003 } else { 13 })
            .collect();
        let mut e = PlacementEncoder::new(3);
        gaps.iter().for_each(|&g| e.push(g));
        let s = e.finish();
        assert_eq!(s.count, 10_000);
        assert_eq!(s.blocks.len(), 3, "4096 + 4096 + 1808 gaps");
        let mut c = PlacementCursor::new();
        let mut out = Vec::new();
        while let Some(g) = c.next(&s).unwrap() {
            out.push(g);
        }
        assert_eq!(out, gaps);
    }

    #[test]
    fn a_constant_gap_costs_a_few_bytes_per_block() {
        let mut e = PlacementEncoder::new(3);
        (0..4096).for_each(|_| e.push(13));
        let s = e.finish();
        assert!(s.compressed_bytes() < 32, "{} bytes", s.compressed_bytes());
    }

    #[test]
    fn a_corrupt_block_is_an_error() {
        let s = PlacementStream {
            count: 2,
            blocks: vec![vec![1, 2, 3]],
        };
        let err = PlacementCursor::new().next(&s).unwrap_err();
        assert!(err.contains("compute placement block 0"), "{err}");
    }
}
