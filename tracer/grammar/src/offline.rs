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

/// The tracer's metadata file (`trace-meta.json`) that [`compress_file`] embeds.
pub const TRACER_META_FILE: &str = "trace-meta.json";

/// What [`compress_file`] and [`decompress_to`] can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The input trace is bad (list file, record, rank count).
    #[error(transparent)]
    Input(#[from] GrammarError),
    /// An input file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// An output file cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

impl FileError {
    /// Whether the input is at fault (rather than an output).
    pub fn is_input(&self) -> bool {
        !matches!(self, FileError::Write { .. })
    }
}

/// Compresses the TI trace `trace` (a list file or a file shared by `np` ranks, default: the
/// largest rank field + 1) at `precision`, and embeds the tracer's `trace-meta.json` found next
/// to `trace`, else next to the first rank file (where `timeless simulate` looks for it), with
/// the call-site table (`callsites.txt`) next to it when there is one. Returns the trace and
/// the metadata file embedded.
///
/// # Errors
/// [`FileError::Input`] for a bad trace, [`FileError::Read`] for an unreadable metadata file.
pub fn compress_file(
    trace: &std::path::Path,
    np: Option<u32>,
    precision: Precision,
) -> Result<(CompressedTrace, Option<std::path::PathBuf>), FileError> {
    let source = TraceSource::open(trace).map_err(GrammarError::from)?;
    let nranks = match np {
        Some(n) => n,
        None => rank_count(&source)?,
    };
    let mut compressed = compress(&source, nranks, precision)?;
    let first = match &source {
        TraceSource::PerRank(v) => v.first().cloned(),
        TraceSource::Shared(p) => Some(p.clone()),
    };
    let dirs = [
        trace.parent(),
        first.as_deref().and_then(std::path::Path::parent),
    ];
    for dir in dirs.into_iter().flatten() {
        let p = dir.join(TRACER_META_FILE);
        if p.is_file() {
            let bytes = std::fs::read(&p).map_err(|source| FileError::Read {
                path: p.clone(),
                source,
            })?;
            compressed.tracer_meta = Some(bytes);
            let cs = dir.join(timeless_trace::callsites::FILE);
            if cs.is_file() {
                compressed.callsites =
                    Some(std::fs::read(&cs).map_err(|source| FileError::Read {
                        path: cs.clone(),
                        source,
                    })?);
            }
            return Ok((compressed, Some(p)));
        }
    }
    Ok((compressed, None))
}

/// Expands `trace` into the directory `dir` (created): `rank<r>.txt` per rank, the list file
/// `traces.txt`, and the embedded `trace-meta.json` and call-site table when there are.
///
/// # Errors
/// [`FileError::Input`] for a rank stream that does not decode, [`FileError::Write`] for a
/// file that cannot be written.
pub fn decompress_to(trace: CompressedTrace, dir: &std::path::Path) -> Result<(), FileError> {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let trace = std::sync::Arc::new(trace);
    let write_err = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| FileError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(write_err(dir))?;
    let mut list = String::new();
    let mut line = String::new();
    for r in 0..trace.nranks {
        let name = format!("rank{r}.txt");
        let path = dir.join(&name);
        let f = std::fs::File::create(&path).map_err(write_err(&path))?;
        let mut w = std::io::BufWriter::new(f);
        let mut stream = trace.rank_stream(r)?;
        let mut text = crate::text::RankTextWriter::new(r, trace.nranks);
        while let Some((action, comm, callsite, _)) = stream.next_action()? {
            line.clear();
            text.write(&mut line, &action, comm, callsite)?;
            w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        }
        w.flush().map_err(write_err(&path))?;
        let _ = writeln!(list, "{name}");
    }
    if let Some(m) = &trace.tracer_meta {
        let mp = dir.join(TRACER_META_FILE);
        std::fs::write(&mp, m).map_err(write_err(&mp))?;
    }
    if let Some(c) = &trace.callsites {
        let cp = dir.join(timeless_trace::callsites::FILE);
        std::fs::write(&cp, c).map_err(write_err(&cp))?;
    }
    let lp = dir.join("traces.txt");
    std::fs::write(&lp, list).map_err(write_err(&lp))?;
    Ok(())
}
