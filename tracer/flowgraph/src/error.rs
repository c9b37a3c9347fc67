//! Errors of flow graphs.

use std::path::PathBuf;

/// What can go wrong building, reading or reconstructing a flow graph.
#[derive(Debug, thiserror::Error)]
pub enum FlowGraphError {
    /// Reading the trace failed (names file:line).
    #[error(transparent)]
    Trace(#[from] timeless_trace::TraceError),
    /// A graph file that is not one, or is damaged: the byte offset and what was expected.
    #[error("{path}: byte {offset}: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Offset of the offending byte.
        offset: usize,
        /// What was expected.
        what: String,
    },
    /// A line of a timed trace that is not one.
    #[error("{path}:{line}: {what}")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What was expected.
        what: String,
    },
    /// A signature that does not rebuild into an action, or an action no TI line expresses.
    #[error("{path}: rank {rank}: {source}")]
    Signature {
        /// The file.
        path: PathBuf,
        /// World rank.
        rank: u32,
        /// The grammar crate's error.
        source: timeless_grammar::GrammarError,
    },
    /// I/O on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}
