//! Errors of timed-trace parsing, of the compensation engine and of the metadata reader.

use std::fmt;
use std::path::PathBuf;

/// What is wrong. Every kind is fatal to the compensation of the trace it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be opened or read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// A line that does not follow the timed trace format.
    #[error("{0}")]
    Malformed(String),
    /// The records cannot be ordered by happened-before: a receive whose send never comes, or a
    /// collective some member never reaches. Names each stuck rank and what it waits for.
    #[error("the trace cannot be completed: {0}")]
    Unmatched(String),
    /// Ranks disagree on a collective (operation or root) or on a communicator.
    #[error("{0}")]
    Inconsistent(String),
    /// `trace-meta.json` is not what the tracer writes.
    #[error("bad trace metadata: {0}")]
    Metadata(String),
}

/// An error located at `file:line` (line 0: the file as a whole; empty path: no file).
#[derive(Debug)]
pub struct Error {
    /// File the error was found in.
    pub file: PathBuf,
    /// 1-based line, or 0.
    pub line: u64,
    /// What is wrong.
    pub kind: ErrorKind,
}

impl Error {
    /// An error at `file:line`.
    pub fn new(file: impl Into<PathBuf>, line: u64, kind: ErrorKind) -> Self {
        Error {
            file: file.into(),
            line,
            kind,
        }
    }

    /// An error not tied to a file.
    pub fn bare(kind: ErrorKind) -> Self {
        Error::new(PathBuf::new(), 0, kind)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.file.as_os_str().is_empty(), self.line) {
            (true, _) => write!(f, "{}", self.kind),
            (false, 0) => write!(f, "{}: {}", self.file.display(), self.kind),
            (false, l) => write!(f, "{}:{l}: {}", self.file.display(), self.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}
