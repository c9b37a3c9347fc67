//! Offline compression of a TI trace read from text (`timeless compress`): every rank's stream
//! is read with [`timeless_trace::RankReader`], encoded, and the ranks merged in log P rounds.

use timeless_trace::{Rank, TraceSource};

use crate::encoder::RankEncoder;
use crate::error::GrammarError;
use crate::merge::{merge_rounds, MergedRanks};
use crate::trace::CompressedTrace;
use crate::volume::Precision;

/// Compresses ranks `0..nranks` of `source` at `precision`. Memory: one rank's grammar and
/// volume stream at a time, plus the merged result.
///
/// # Errors
/// A trace error (file:line) from reading a rank's stream.
pub fn compress(
    source: &TraceSource,
    nranks: u32,
    precision: Precision,
) -> Result<CompressedTrace, GrammarError> {
    let mut groups = Vec::with_capacity(nranks as usize);
    for r in 0..nranks {
        let mut reader = source.open_rank(r as Rank, nranks)?;
        let mut enc = RankEncoder::new(r, precision);
        while let Some(ev) = reader.next_event()? {
            enc.push(&ev.action, ev.comm, ev.callsite);
        }
        groups.push(MergedRanks::from(enc.finish()));
    }
    let merged = merge_rounds(groups).map(|(m, _)| m).unwrap_or_default();
    CompressedTrace::from_merged(merged, nranks, precision)
}

/// Number of ranks of `source`: the number of files of a per-rank list, or one more than the
/// largest rank field of a shared file (one pass over the rank fields only).
///
/// # Errors
/// The shared file cannot be read, or holds no action line.
pub fn rank_count(source: &TraceSource) -> Result<u32, GrammarError> {
    use std::io::BufRead;
    match source {
        TraceSource::PerRank(v) => Ok(v.len() as u32),
        TraceSource::Shared(path) => {
            let io =
                |e| timeless_trace::TraceError::new(path, 0, timeless_trace::TraceErrorKind::Io(e));
            let f = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
            let mut max: Option<u32> = None;
            for line in f.lines() {
                let line = line.map_err(io)?;
                let t = line.trim();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let first = timeless_trace::parse::fields(t).next();
                if let Some(Ok((r, _))) = first.map(timeless_trace::parse::rank_field) {
                    max = Some(max.map_or(r, |m| m.max(r)));
                }
            }
            max.map(|m| m + 1).ok_or_else(|| {
                GrammarError::Invalid(format!(
                    "{}: no action line, cannot tell the number of ranks",
                    path.display()
                ))
            })
        }
    }
}
