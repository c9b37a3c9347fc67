//! The block framing shared by the per-rank value streams (compute volumes, compute
//! placement): values are appended as bytes to a block that is zstd-compressed once it holds
//! [`BLOCK_VALUES`] values, so a reader keeps one decoded block per stream.

use crate::volume::BLOCK_VALUES;

/// Collects encoded values into zstd-compressed blocks of [`BLOCK_VALUES`] values.
#[derive(Debug, Clone)]
pub struct BlockWriter {
    zstd_level: i32,
    block: Vec<u8>,
    in_block: usize,
    blocks: Vec<Vec<u8>>,
}

impl BlockWriter {
    /// No blocks yet; blocks are compressed at zstd level `zstd_level`.
    pub fn new(zstd_level: i32) -> Self {
        BlockWriter {
            zstd_level,
            block: Vec::new(),
            in_block: 0,
            blocks: Vec::new(),
        }
    }

    /// The open block's bytes, to append one encoded value to (then call [`Self::end_value`]).
    pub fn open_block(&mut self) -> &mut Vec<u8> {
        &mut self.block
    }

    /// One more value is in the open block; compresses the block when it is full.
    pub fn end_value(&mut self) {
        self.in_block += 1;
        if self.in_block == BLOCK_VALUES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.in_block == 0 {
            return;
        }
        let z = zstd::bulk::compress(&self.block, self.zstd_level)
            .expect("zstd compression of a memory buffer");
        self.blocks.push(z);
        self.block.clear();
        self.in_block = 0;
    }

    /// The compressed blocks, the last one possibly short.
    pub fn finish(mut self) -> Vec<Vec<u8>> {
        self.flush();
        self.blocks
    }
}
