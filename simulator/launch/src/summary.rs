//! Checking what a traced run wrote: every rank's text file ([`check_text`]), the online
//! compressed trace ([`check_online`]), and what `trace-meta.json` says of counters and the
//! gather ([`counters_line`], [`gathered`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use timeless_grammar::format::{self, LoadError};
use timeless_grammar::Stats;
use timeless_trace::Datatype;

use crate::LaunchError;

/// The compressed trace `timeless trace --compress` leaves in the trace directory (written by
/// rank 0 of the tracer, `timeless_preload::online::COMPRESSED_FILE`).
pub const ONLINE_FILE: &str = "trace.tlg";

/// What a rank file holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RankSummary {
    /// Action records per keyword (`comm_def` included).
    pub actions: BTreeMap<String, u64>,
    /// Bytes of the point-to-point sends (`send`, `isend`, the send half of `sendRecv`).
    pub sent_bytes: u64,
    /// The last record is `finalize`.
    pub finalized: bool,
}

/// A record [`summarize`] cannot read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct SummaryError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong, with the line's text.
    pub what: String,
}

/// Reads one rank's trace text.
///
/// # Errors
/// A record whose datatype id is unknown or whose count is not a number, with its line.
pub fn summarize(text: &str) -> Result<RankSummary, SummaryError> {
    let mut s = RankSummary::default();
    let mut last = "";
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |what: String| SummaryError { line: i + 1, what };
        let f: Vec<&str> = line
            .split_whitespace()
            .filter(|f| !f.starts_with("comm="))
            .collect();
        let Some(&kw) = f.get(1) else {
            return Err(err(format!("no action after the rank: '{line}'")));
        };
        last = kw;
        *s.actions.entry(kw.to_string()).or_default() += 1;
        let bytes = |count: usize, dt: usize| -> Result<u64, SummaryError> {
            let n: f64 = f
                .get(count)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| err(format!("bad count in '{line}'")))?;
            let size = match f.get(dt) {
                Some(d) => d
                    .parse::<u32>()
                    .ok()
                    .and_then(Datatype::from_id)
                    .ok_or_else(|| err(format!("unknown datatype in '{line}'")))?
                    .size_bytes(),
                None => 1,
            };
            Ok(n as u64 * u64::from(size))
        };
        match kw {
            "send" | "isend" => s.sent_bytes += bytes(4, 5)?,
            "sendRecv" => s.sent_bytes += bytes(2, 6)?,
            _ => {}
        }
    }
    s.finalized = last == "finalize";
    Ok(s)
}

/// The text trace of a run, checked by [`check_text`].
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSummary {
    /// Ranks.
    pub ranks: usize,
    /// Every rank's records added up.
    pub total: RankSummary,
    /// Bytes of the rank files.
    pub file_bytes: u64,
}

impl TraceSummary {
    /// Action records of all ranks.
    pub fn actions(&self) -> u64 {
        self.total.actions.values().sum()
    }
}

/// Checks that each of the `np` rank files `out/rank-<r>.txt` exists, reads and ends with
/// `finalize`, and adds them up.
///
/// # Errors
/// [`LaunchError::MissingRank`], [`LaunchError::BadRankFile`] or
/// [`LaunchError::NotFinalized`] for the first rank file at fault.
pub fn check_text(out: &Path, np: usize) -> Result<TraceSummary, LaunchError> {
    let mut total = RankSummary::default();
    let mut file_bytes = 0u64;
    for r in 0..np {
        let path = out.join(format!("rank-{r}.txt"));
        let text = std::fs::read_to_string(&path).map_err(|source| LaunchError::MissingRank {
            rank: r,
            path: path.clone(),
            source,
        })?;
        file_bytes += text.len() as u64;
        let s = summarize(&text).map_err(|source| LaunchError::BadRankFile {
            path: path.clone(),
            source,
        })?;
        if !s.finalized {
            return Err(LaunchError::NotFinalized { rank: r, path });
        }
        for (k, v) in s.actions {
            *total.actions.entry(k).or_default() += v;
        }
        total.sent_bytes += s.sent_bytes;
    }
    Ok(TraceSummary {
        ranks: np,
        total,
        file_bytes,
    })
}

/// The online compressed trace of a run, checked by [`check_online`].
#[derive(Debug, Clone)]
pub struct OnlineSummary {
    /// `out/trace.tlg`.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Bytes of the rank text files next to it (0 when none was written).
    pub text_bytes: u64,
    /// Its sizes (actions, terminals, grammars).
    pub stats: Stats,
}

/// After `timeless trace --compress`: checks the online compressed trace of `np` ranks in
/// `out`. `Ok(None)`: the file is missing but `text_written` (the tracer abandoned online
/// compression and said why; the text trace is complete).
///
/// # Errors
/// [`LaunchError::OnlineMissing`] (missing without a text trace), [`LaunchError::Online`]
/// (unreadable or undecodable), [`LaunchError::OnlineInvalid`], or
/// [`LaunchError::OnlineRanks`] (not of `np` ranks).
pub fn check_online(
    out: &Path,
    np: usize,
    text_written: bool,
) -> Result<Option<OnlineSummary>, LaunchError> {
    let path = out.join(ONLINE_FILE);
    if !path.is_file() {
        if text_written {
            return Ok(None);
        }
        return Err(LaunchError::OnlineMissing(path));
    }
    let (trace, sizes) = format::load(&path).map_err(|e: LoadError| LaunchError::Online(e))?;
    trace
        .validate()
        .map_err(|error| LaunchError::OnlineInvalid {
            path: path.clone(),
            error,
        })?;
    if trace.nranks as usize != np {
        return Err(LaunchError::OnlineRanks {
            path,
            held: trace.nranks,
            traced: np,
        });
    }
    let text_bytes: u64 = (0..np)
        .filter_map(|r| std::fs::metadata(out.join(format!("rank-{r}.txt"))).ok())
        .map(|m| m.len())
        .sum();
    Ok(Some(OnlineSummary {
        path,
        bytes: sizes.total() as u64,
        text_bytes,
        stats: trace.stats(),
    }))
}

/// What `trace-meta.json` in `out` says of requested hardware counters (`compute_volume`), as
/// one line; `None` when they were not requested.
pub fn counters_line(out: &Path) -> Option<String> {
    let text = std::fs::read_to_string(out.join("trace-meta.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let c = v.get("compute_volume")?;
    if c.get("requested")? == false {
        return None;
    }
    Some(match c.get("fallback").and_then(|f| f.as_str()) {
        Some(why) => format!("counters not used: {why}"),
        None => {
            format!(
            "compute volumes from hardware counters: instructions x {:e} flops per instruction \
             (rank 0's host)",
            c["flops_per_instruction_rank_0"].as_f64().unwrap_or(f64::NAN)
        )
        }
    })
}

/// The `gather` member the tracer added to `trace-meta.json` in `out`, as one line; `None`
/// when the run was not gathered.
pub fn gathered(out: &Path) -> Option<String> {
    let text = std::fs::read_to_string(out.join("trace-meta.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let g = v.get("gather")?;
    Some(format!(
        "gathered over MPI: {} files, {} bytes, {}-nomial tree in {} rounds, {:.3} s",
        g["files"],
        g["bytes"],
        g["radix"],
        g["rounds"],
        g["secs"].as_f64().unwrap_or(0.0)
    ))
}
