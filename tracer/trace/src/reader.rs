//! Streaming trace sources: each rank reads its own lines one at a time, never the whole trace.
//!
//! SimGrid 3.32 (`smpirun -replay LIST`) takes a list file: one path per line, line i being rank
//! i's trace, or a single line naming one file shared by all ranks, each rank keeping the lines
//! whose first field is its own number. timeless also accepts the shared trace file itself, and
//! per-rank files named by the deployment's `<argument>`s.

use std::fs::File;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap as HashMap;

use crate::action::{Action, CommId, Rank};
use crate::error::{TraceError, TraceErrorKind};
use crate::line_memo::{self, LineMemo};
use crate::lines::LineReader;
use crate::listed::{self, Kind, Kinds};
use crate::parse::{fields, parse_line_in, rank_field};
use crate::stream::{ActionStream, Event, TraceSet};

/// Where each rank's actions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceSource {
    /// Path i holds rank i's actions.
    PerRank(Vec<PathBuf>),
    /// One file holds every rank's actions; each line starts with its rank.
    Shared(PathBuf),
}

impl TraceSource {
    /// Opens `path` as SimGrid's `-replay` argument: a list file of per-rank trace paths (one per
    /// line, blank and `#` lines skipped, relative paths resolved against the list file's directory, then
    /// the current directory), a list with a single entry (shared-trace mode), or a trace file
    /// itself (its first action line starts with a rank), which is then shared by all ranks.
    ///
    /// # Errors
    /// The file cannot be read, or a listed path does not exist (named with its list line).
    pub fn open(path: &Path) -> Result<TraceSource, TraceError> {
        let io = |e| TraceError::new(path, 0, TraceErrorKind::Io(e));
        if path.is_dir() {
            return Err(TraceError::new(
                path,
                0,
                TraceErrorKind::IsDirectory(path.to_path_buf()),
            ));
        }
        let mut lines = LineReader::new(File::open(path).map_err(io)?, 64 * 1024);
        let base = path.parent().unwrap_or(Path::new(""));
        // The entries with their list lines, then their kinds (`listed`: one listing of a
        // directory holding many of them rather than a `stat` each; a list may name 65,536
        // files).
        let mut listed: Vec<(u64, String, PathBuf)> = Vec::new();
        for i in 0u64.. {
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(k) => return Err(TraceError::new(path, i + 1, k)),
            };
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if listed.is_empty() && looks_like_action(trimmed) {
                return Ok(TraceSource::Shared(path.to_path_buf()));
            }
            listed.push((i + 1, trimmed.to_string(), base.join(trimmed)));
        }
        let kinds = Kinds::new(listed.iter().map(|(_, _, p)| p.as_path()));
        let mut entries = Vec::with_capacity(listed.len());
        for (line, trimmed, candidate) in listed {
            // The path against the list's directory, else as written.
            let (resolved, kind) = match kinds.kind(&candidate) {
                Kind::Missing => {
                    let p = PathBuf::from(&trimmed);
                    let k = listed::stat(&p);
                    (p, k)
                }
                k => (candidate, k),
            };
            match kind {
                Kind::File => entries.push(resolved),
                Kind::Dir => {
                    return Err(TraceError::new(
                        path,
                        line,
                        TraceErrorKind::IsDirectory(resolved),
                    ))
                }
                Kind::Missing => {
                    return Err(TraceError::new(
                        path,
                        line,
                        TraceErrorKind::Malformed {
                            action: "list file".into(),
                            expected: format!(
                                "an existing trace file path, '{trimmed}' does not exist"
                            ),
                        },
                    ))
                }
            }
        }
        match entries.len() {
            0 => Err(TraceError::new(
                path,
                0,
                TraceErrorKind::Malformed {
                    action: "list file".into(),
                    expected: "at least one trace path".into(),
                },
            )),
            1 => Ok(TraceSource::Shared(entries.pop().expect("one entry"))),
            _ => Ok(TraceSource::PerRank(entries)),
        }
    }

    /// Number of per-rank files, or `None` in shared mode.
    pub fn rank_count(&self) -> Option<usize> {
        match self {
            TraceSource::PerRank(v) => Some(v.len()),
            TraceSource::Shared(_) => None,
        }
    }

    /// Opens rank `rank`'s stream in a world of `nranks` ranks.
    ///
    /// # Errors
    /// [`TraceErrorKind::MissingRank`] if the list has no file for `rank`, or an I/O error.
    pub fn open_rank(&self, rank: Rank, nranks: u32) -> Result<RankReader, TraceError> {
        let (path, shared) = match self {
            TraceSource::PerRank(v) => match v.get(rank as usize) {
                Some(p) => (p.clone(), false),
                None => {
                    let list_hint = v.first().cloned().unwrap_or_default();
                    return Err(TraceError::new(
                        list_hint,
                        0,
                        TraceErrorKind::MissingRank(rank),
                    ));
                }
            },
            TraceSource::Shared(p) => (p.clone(), true),
        };
        let file =
            File::open(&path).map_err(|e| TraceError::new(&path, 0, TraceErrorKind::Io(e)))?;
        // A block no larger than the file: thousands of small rank files read in one call
        // each, without 64 KiB apiece of buffers; and no larger than the rank's share of
        // [`BLOCK_BUDGET_BYTES`], since every rank's stream is open at once.
        let share = (BLOCK_BUDGET_BYTES / u64::from(nranks.max(1))).clamp(MIN_BLOCK, 64 * 1024);
        // The open file's own metadata (no second path lookup) gives its length and whether it
        // is a directory (which opens on Unix). From 4,096 ranks the block is the smallest
        // whatever the length, and a listed path was checked by [`TraceSource::open`]: no
        // `fstat` for each of thousands of files (a directory named otherwise fails at its
        // first read, `EISDIR`).
        let len = if share > MIN_BLOCK || shared {
            match file.metadata() {
                Ok(m) if m.is_dir() => {
                    return Err(TraceError::new(
                        &path,
                        0,
                        TraceErrorKind::IsDirectory(path.clone()),
                    ))
                }
                Ok(m) => m.len(),
                Err(_) => u64::MAX,
            }
        } else {
            u64::MAX
        };
        let block = len.saturating_add(1).clamp(MIN_BLOCK, share) as usize;
        Ok(RankReader {
            lines: LineReader::new(file, block),
            path,
            rank,
            nranks,
            shared,
            line_no: 0,
            foreign_lines: 0,
            comm_sizes: HashMap::default(),
            memo: LineMemo::new(line_memo::sets_for(nranks)),
        })
    }
}

/// The smallest read block (bytes).
const MIN_BLOCK: u64 = 1024;

/// The read blocks of all ranks' streams together, at most (each at least 1 KiB, at most 64 KiB).
/// A replay opens every rank's stream at once, and a block larger than the file holds the
/// whole file: at 4,096 ranks the stencil of `validation/bench` (10 KB per rank) kept 40 MB of
/// trace text in memory, which a fresh process pays for in page faults. 4 MiB gives 64 KiB
/// blocks up to 64 ranks, 4 KiB at 1,024 and 1 KiB from 4,096: the decoder thread makes more
/// reads, and the replay shares the last-level cache with less of the trace's text (16 MiB
/// before: at 1,024 ranks the decoder's instructions 462 -> 442 M and the simulated 2 MiB
/// cache's misses of both threads 15.8 -> 15.3 M, `validation/bench/cachesim.sh`, the
/// replay's thread unchanged; at 4,096 ranks 50.0 -> 49.4 M misses).
pub const BLOCK_BUDGET_BYTES: u64 = 4 << 20;

fn looks_like_action(line: &str) -> bool {
    let mut f = fields(line);
    matches!((f.next().map(rank_field), f.next()), (Some(Ok(_)), Some(_)))
}

/// A rank's action stream, decoded line by line. Memory is one block of the file ([`LineReader`]).
#[derive(Debug)]
pub struct RankReader {
    lines: LineReader<File>,
    path: PathBuf,
    rank: Rank,
    nranks: u32,
    shared: bool,
    line_no: u64,
    foreign_lines: u64,
    /// Size of each communicator this rank defined with `comm_def`.
    comm_sizes: HashMap<CommId, u32>,
    /// The records of recently decoded lines (`line_memo`).
    memo: LineMemo,
}

impl RankReader {
    /// Next action of this rank and its 1-based line number, or `None` at the end of the file.
    /// Unlike SimGrid 3.32, a last line without a trailing newline is read, not dropped.
    ///
    /// # Errors
    /// A read error or a malformed line, located at `file:line`.
    pub fn next_action(&mut self) -> Result<Option<(Action, u64)>, TraceError> {
        Ok(self.next_event()?.map(|e| (e.action, e.location)))
    }

    /// Next action with its communicator (see [`ActionStream::next_event`]). A `comm_def` line
    /// defines its communicator for the lines after it.
    ///
    /// # Errors
    /// A read error, a malformed line, a `comm=` naming an undefined communicator, or a
    /// communicator id defined twice, located at `file:line`.
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            let line = match self.lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(None),
                Err(k) => return Err(TraceError::new(&self.path, self.line_no + 1, k)),
            };
            self.line_no += 1;
            if self.shared {
                // Skip other ranks' lines without decoding their actions.
                let first = fields(line.trim()).next();
                match first.map(rank_field) {
                    Some(Ok((r, _))) if r != self.rank => continue,
                    _ => {}
                }
            }
            let parsed = match self.memo.lookup(line) {
                Some(rec) => Ok(Some(rec)),
                None => {
                    let sizes = &self.comm_sizes;
                    let parsed = parse_line_in(line, self.nranks, &|c| sizes.get(&c).copied());
                    if let Ok(Some(rec)) = &parsed {
                        self.memo.store(line, rec);
                    }
                    parsed
                }
            };
            match parsed {
                Ok(None) => continue,
                Ok(Some(rec)) if rec.rank != self.rank => {
                    // SimGrid ignores such a line with a warning; we count them for the caller.
                    self.foreign_lines += 1;
                    continue;
                }
                Ok(Some(rec)) => {
                    if let Action::CommDef { id, world_ranks } = &rec.action {
                        let size = world_ranks.len() as u32;
                        if self.comm_sizes.insert(*id, size).is_some() {
                            return Err(TraceError::new(
                                &self.path,
                                self.line_no,
                                TraceErrorKind::Malformed {
                                    action: "comm_def".into(),
                                    expected: format!(
                                        "a communicator id not defined before, {id} already is"
                                    ),
                                },
                            ));
                        }
                    }
                    return Ok(Some(Event {
                        action: rec.action,
                        comm: rec.comm,
                        callsite: rec.callsite,
                        location: self.line_no,
                    }));
                }
                Err(kind) => return Err(TraceError::new(&self.path, self.line_no, kind)),
            }
        }
    }

    /// The file this rank reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines of a per-rank file that named another rank and were skipped (SimGrid warns likewise).
    pub fn foreign_lines(&self) -> u64 {
        self.foreign_lines
    }
}

impl ActionStream for RankReader {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        RankReader::next_event(self)
    }

    fn origin(&self) -> &Path {
        &self.path
    }

    fn foreign_lines(&self) -> u64 {
        self.foreign_lines
    }
}

impl TraceSet for TraceSource {
    fn open_stream(&self, rank: Rank, nranks: u32) -> Result<Box<dyn ActionStream>, TraceError> {
        Ok(Box::new(self.open_rank(rank, nranks)?))
    }

    fn ranks(&self) -> Option<usize> {
        self.rank_count()
    }
}
