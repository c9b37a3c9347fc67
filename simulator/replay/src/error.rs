//! Replay errors. Each names the rank, the trace file and line, and what was expected.

use std::fmt;
use std::path::PathBuf;

use timeless_trace::TraceError;

use crate::collective::CollectiveError;

/// Where in the traces something happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Rank whose trace it is.
    pub rank: u32,
    /// Trace file.
    pub file: PathBuf,
    /// 1-based line (0 = end of file, for leftover requests).
    pub line: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(
                f,
                "{} (end of trace, rank {})",
                self.file.display(),
                self.rank
            )
        } else {
            write!(
                f,
                "{}:{} (rank {})",
                self.file.display(),
                self.line,
                self.rank
            )
        }
    }
}

/// A rank that cannot progress, as listed in a deadlock report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedRank {
    /// Where the rank is stuck.
    pub at: Location,
    /// The action it is in.
    pub action: &'static str,
    /// What it waits for, one entry per pending request ("recv from rank 2, tag 0, 1000 bytes").
    pub waits_for: Vec<String>,
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A trace line is malformed or unreadable.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A message needs a route the platform does not have.
    #[error("{at}: no route from host '{src}' to host '{dst}': {why}")]
    Route {
        at: Location,
        src: String,
        dst: String,
        why: String,
    },
    /// A receive is smaller than the message it matches (MPI_ERR_TRUNCATE).
    #[error("{at}: message truncated: receive of {recv_bytes} bytes from rank {src} (tag {tag}{}) matches a send of {send_bytes} bytes", if *comm == 0 { String::new() } else { format!(" on sub-communicator #{comm}") })]
    Truncation {
        at: Location,
        src: u32,
        tag: i32,
        /// Global communicator index (0: world; others in order of first definition).
        comm: u32,
        recv_bytes: u64,
        send_bytes: u64,
    },
    /// A collective's arguments are invalid.
    #[error("{at}: {source}")]
    Collective {
        at: Location,
        source: CollectiveError,
    },
    /// An action refers to something that does not exist (a rank outside the world, ...).
    #[error("{at}: {what}")]
    Invalid { at: Location, what: String },
    /// A host property of the platform (`smpi/os`, `smpi/or`, `smpi/ois`) does not parse.
    #[error("host '{host}': property {key}: {why}")]
    HostProperty {
        host: String,
        key: String,
        why: String,
    },
    /// No rank can progress.
    #[error("{}", render_deadlock(*time_secs, blocked))]
    Deadlock {
        time_secs: f64,
        blocked: Vec<BlockedRank>,
    },
}

fn render_deadlock(time_secs: f64, blocked: &[BlockedRank]) -> String {
    let mut s = format!(
        "deadlock at simulated time {time_secs:.9} s: {} rank(s) cannot progress",
        blocked.len()
    );
    for b in blocked {
        s.push_str(&format!(
            "\n  rank {} blocked in '{}' at {}",
            b.at.rank, b.action, b.at
        ));
        for w in &b.waits_for {
            s.push_str(&format!("\n    waits for {w}"));
        }
    }
    s
}
