//! Errors of proxy generation.

use timeless_trace::TraceError;

/// Why a proxy could not be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// A trace line is malformed or unreadable (file:line inside).
    #[error(transparent)]
    Trace(#[from] Box<TraceError>),
    /// The trace holds something a proxy cannot reproduce (named with its rank and location).
    #[error("rank {rank}, action {location}: {what}")]
    Unsupported {
        rank: u32,
        location: u64,
        what: String,
    },
    /// The output directory cannot be written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl From<TraceError> for ProxyError {
    fn from(e: TraceError) -> Self {
        ProxyError::Trace(Box::new(e))
    }
}
