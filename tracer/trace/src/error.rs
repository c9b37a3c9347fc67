//! Trace errors: every one names the file and line it comes from and what was expected.

use std::fmt;
use std::path::PathBuf;

/// The advice for running out of file descriptors (`EMFILE`, errno 24 on Linux and macOS).
fn emfile_hint(e: &std::io::Error) -> &'static str {
    if e.raw_os_error() == Some(24) {
        " (each rank of a text trace keeps its file open: raise the open-file limit, \
         `ulimit -n`, or replay a compressed trace, `timeless compress`, which is one file)"
    } else {
        ""
    }
}

/// What is wrong with a trace line or file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceErrorKind {
    /// The file could not be opened or read. Out of file descriptors (EMFILE: every rank of a
    /// per-rank or shared text trace keeps its file open), the message says how to go on.
    #[error("cannot read: {0}{hint}", hint = emfile_hint(.0))]
    Io(#[from] std::io::Error),
    /// The action keyword is not one the format knows.
    #[error("unknown action '{0}' (expected one of: {known})", known = crate::parse::KNOWN_ACTIONS)]
    UnknownAction(String),
    /// A field has the wrong shape, or fields are missing or in excess.
    #[error("malformed '{action}': {expected}")]
    Malformed { action: String, expected: String },
    /// A datatype id outside SimGrid's table.
    #[error(
        "unknown datatype id '{0}' (expected an integer in 0..=59, SimGrid 3.32 Datatype::decode)"
    )]
    UnknownDatatype(String),
    /// A line's first field is not a rank.
    #[error("bad rank field '{0}' (expected a rank number such as 3, or p3 in the seed's format)")]
    BadRank(String),
    /// A rank has no trace source.
    #[error("no trace for rank {0}")]
    MissingRank(u32),
    /// A line is not UTF-8 text: the file is binary, or in another encoding.
    #[error(
        "not UTF-8 text: byte 0x{byte:02x} at byte offset {offset} of the file (a TI trace is text; is this a binary file?)"
    )]
    NotUtf8 {
        /// The first byte that is not valid UTF-8.
        byte: u8,
        /// Its 0-based offset from the start of the file.
        offset: u64,
    },
    /// A path named by a list file is a directory, not a trace file.
    #[error("'{0}' is a directory, expected a trace file")]
    IsDirectory(PathBuf),
}

/// A trace error located at `file:line` (line 0 = the file as a whole).
#[derive(Debug)]
pub struct TraceError {
    /// File the error was found in.
    pub file: PathBuf,
    /// 1-based line number; 0 when the error concerns the whole file.
    pub line: u64,
    /// What is wrong.
    pub kind: TraceErrorKind,
}

impl TraceError {
    /// A [`TraceErrorKind::Malformed`] line of a table or record `action` at `file:line`.
    pub fn malformed(file: impl Into<PathBuf>, line: u64, action: &str, expected: String) -> Self {
        TraceError::new(
            file,
            line,
            TraceErrorKind::Malformed {
                action: action.into(),
                expected,
            },
        )
    }

    /// Builds an error at `file:line`.
    pub fn new(file: impl Into<PathBuf>, line: u64, kind: TraceErrorKind) -> Self {
        TraceError {
            file: file.into(),
            line,
            kind,
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.kind)
        } else {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.kind)
        }
    }
}

/// No source: the message already embeds its cause (an I/O error's text), and a front end that
/// prints the chain (`anyhow`'s `{:#}`) would say it twice.
impl std::error::Error for TraceError {}

/// An optional file of a trace directory, parsed by `parse` (its text and path): `Ok(None)`
/// when there is no such file.
///
/// # Errors
/// [`TraceErrorKind::Io`] at `path` if it exists but cannot be read; those of `parse`.
pub(crate) fn read_optional<T>(
    path: &std::path::Path,
    parse: impl FnOnce(&str, &std::path::Path) -> Result<T, TraceError>,
) -> Result<Option<T>, TraceError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TraceError::new(path, 0, TraceErrorKind::Io(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_file_descriptors_says_what_to_do() {
        let k = TraceErrorKind::Io(std::io::Error::from_raw_os_error(24));
        let text = k.to_string();
        assert!(text.starts_with("cannot read: "), "{text}");
        assert!(text.ends_with("`ulimit -n`, or replay a compressed trace, `timeless compress`, which is one file)"), "{text}");
        let other = TraceErrorKind::Io(std::io::Error::from_raw_os_error(2)).to_string();
        assert!(!other.contains("ulimit"), "{other}");
    }
}
