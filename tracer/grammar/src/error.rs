//! Errors of the compressed trace format. Decoding errors carry the byte offset of the problem.

/// What went wrong while building, reading or replaying a compressed trace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrammarError {
    /// The file is truncated or corrupt at byte `offset` (from the start of the file).
    #[error("byte {offset}: {what}")]
    Corrupt {
        /// Byte offset of the field that could not be decoded.
        offset: u64,
        /// What was expected there.
        what: String,
    },
    /// A grammar violates its structural rules (cycle, dangling rule, zero exponent...).
    #[error("invalid grammar: {0}")]
    Invalid(String),
    /// A rank's stream cannot be replayed (peer out of range, volume stream too short...).
    #[error("rank {rank}: {what}")]
    Replay {
        /// World rank whose stream failed.
        rank: u32,
        /// What is wrong.
        what: String,
    },
    /// An action cannot be written in the TI text format.
    #[error("cannot write action as TI text: {0}")]
    Unrepresentable(String),
    /// Reading a TI trace failed (file:line inside).
    #[error(transparent)]
    Trace(#[from] timeless_trace::TraceError),
    /// An I/O error on the compressed file.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Shorthand for a corrupt-input error at `offset`.
pub(crate) fn corrupt(offset: usize, what: impl Into<String>) -> GrammarError {
    GrammarError::Corrupt {
        offset: offset as u64,
        what: what.into(),
    }
}
