//! Typed errors of calibration. Input errors name the file and line; model errors name the
//! message sizes involved.

use std::path::PathBuf;

/// Why a calibration could not be made. Every variant is fatal for the calibration at hand: no
/// output file should be written after one of them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// The input file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line of an input file does not parse.
    #[error("{origin}:{line}: {what}")]
    Parse {
        /// File name (or another description of the input).
        origin: String,
        /// 1-based line number.
        line: u64,
        /// What was found and what was expected.
        what: String,
    },
    /// Not enough distinct message sizes for the requested model.
    #[error("{what}: {found} distinct message size(s), at least {needed} needed")]
    TooFewSizes {
        /// Which series or model.
        what: String,
        /// Distinct sizes available.
        found: usize,
        /// Distinct sizes required.
        needed: usize,
    },
    /// A measured time decreases with the message size by more than noise explains.
    #[error(
        "{what}: time is not monotonic in size: {time_a_secs:.4e} s at {size_a_bytes} B but {time_b_secs:.4e} s at {size_b_bytes} B (a drop of more than {tolerance_pct}%)"
    )]
    NonMonotonic {
        /// Which series.
        what: String,
        /// Smaller size.
        size_a_bytes: u64,
        /// Median time at the smaller size.
        time_a_secs: f64,
        /// Larger size.
        size_b_bytes: u64,
        /// Median time at the larger size.
        time_b_secs: f64,
        /// Tolerated relative drop, in percent.
        tolerance_pct: f64,
    },
    /// A derived quantity is negative or not finite (e.g. the per-call overheads exceed the
    /// ping-pong time).
    #[error("{what}")]
    Invalid {
        /// What is wrong, with the sizes and values.
        what: String,
    },
    /// A required series is missing from the measurements.
    #[error("no '{op}' measurements in the input (expected rows with op '{op}')")]
    MissingSeries {
        /// The missing operation.
        op: String,
    },
    /// A table of a trace directory does not read (the in-call times, whose error names
    /// file:line).
    #[error(transparent)]
    Trace(#[from] timeless_trace::TraceError),
}
