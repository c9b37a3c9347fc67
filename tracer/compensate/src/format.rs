//! The timed trace text format (version 1), its line decoder and streaming per-rank readers.
//!
//! A timed trace is what `timeless trace --timestamps` is meant to write next to the
//! time-independent one: the same rank-prefixed line layout as SimGrid's TI format, with the
//! measured enter and exit timestamps of every call. Lines are split on spaces and tabs; blank
//! lines and lines starting with `#` are ignored. Times are seconds (decimal or exponent form,
//! `1.5e-3`) on a clock common to all ranks; sizes are bytes; peers and roots are world ranks.
//!
//! ```text
//! <rank> region <enter> <exit> <name>                         user region or MPI call without dependency
//! <rank> send   <enter> <exit> <dst> <tag> <bytes> [comm=<id>] MPI_Send (the send event is at <enter>)
//! <rank> recv   <enter> <exit> <src> <tag> <bytes> [comm=<id>] MPI_Recv, matched source and tag (recv event at <exit>)
//! <rank> probe  <enter> <exit> <src> <tag> [comm=<id>]         MPI_Probe, matched source and tag
//! <rank> <op>   <enter> <exit> <bytes> [root=<w>] [comm=<id>]  collective
//! <rank> comm_def <id> <size> <w_0> ... <w_size-1>             communicator (as in the TI extension)
//! ```
//!
//! `<op>` is one of `barrier allreduce allgather allgatherv alltoall alltoallv reducescatter
//! scan exscan` (n-to-n), `bcast scatter scatterv` (1-to-n) or `reduce gather gatherv` (n-to-1);
//! the last two groups need `root=`. A collective's `<bytes>` is what the rank receives from the
//! root (1-to-n) or sends to it (n-to-1). Within a rank, records are in program order and do not
//! overlap: each `<enter>` is at least the previous `<exit>`.
//!
//! How a tracer maps other MPI calls: `MPI_Isend` is a `send` (sends are taken as
//! non-blocking anyway, `004_*` §3); `MPI_Irecv` is a `region` and the wait that completes it a
//! `recv` spanning the wait (a wait completing k receives: k `recv` records, the first spanning
//! the wait, the others of zero length at its exit); calls without dependencies are `region`s
//! named after the call.
//!
//! A file may also hold timestamped TI lines, `<rank> <enter> <exit> <TI action...>`, the
//! tracer's `--timestamps` output, decoded by [`crate::stamped`]; the two forms can be mixed.
//!
//! Files: one per rank (rank r's lines all start with `r`), listed one per line in a list file,
//! or one file shared by all ranks; a directory stands for its `timed-list.txt`.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};
use crate::model::{CollectiveOp, CommId, Rank, RecordKind, TimedItem, TimedRecord};
use crate::stamped::{is_stamped, StampedDecoder};

/// Name of the list file looked up when a directory is given.
pub const TIMED_LIST_FILE: &str = "timed-list.txt";

fn bad(msg: impl Into<String>) -> ErrorKind {
    ErrorKind::Malformed(msg.into())
}

fn time(tok: Option<&str>, what: &str) -> Result<f64, ErrorKind> {
    let tok = tok.ok_or_else(|| bad(format!("missing {what} (seconds)")))?;
    tok.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| {
            bad(format!(
                "{what} '{tok}' is not a non-negative number of seconds"
            ))
        })
}

fn unsigned(tok: Option<&str>, what: &str) -> Result<u64, ErrorKind> {
    let tok = tok.ok_or_else(|| bad(format!("missing {what}")))?;
    if let Ok(v) = tok.parse::<u64>() {
        return Ok(v);
    }
    // Sizes may be written as 1e6.
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64 => {
            Ok(v as u64)
        }
        _ => Err(bad(format!("{what} '{tok}' is not a non-negative integer"))),
    }
}

fn rank_of(tok: Option<&str>, what: &str, nranks: u32) -> Result<Rank, ErrorKind> {
    let v = unsigned(tok, what)?;
    if v >= u64::from(nranks) {
        return Err(bad(format!(
            "{what} {v} is not a rank of a {nranks}-rank run"
        )));
    }
    Ok(v as Rank)
}

fn tag_of(tok: Option<&str>) -> Result<i32, ErrorKind> {
    let tok = tok.ok_or_else(|| bad("missing tag"))?;
    tok.parse::<i32>()
        .map_err(|_| bad(format!("tag '{tok}' is not an integer")))
}

/// Decodes one line of a run of `nranks` ranks: `Ok(None)` for blank and comment lines.
///
/// # Errors
/// [`ErrorKind::Malformed`] naming what was expected (the caller adds `file:line`).
pub fn parse_line(line: &str, nranks: u32) -> Result<Option<(Rank, TimedItem)>, ErrorKind> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(None);
    }
    let mut f = trimmed.split_ascii_whitespace();
    let rank = rank_of(f.next(), "rank field", nranks)?;
    let kw = f
        .next()
        .ok_or_else(|| bad("missing record keyword after the rank"))?;
    if kw == "comm_def" {
        let id = unsigned(f.next(), "communicator id")?;
        if id == 0 || id > u64::from(u32::MAX) {
            return Err(bad(
                "comm_def id must be in 1..=4294967295 (0 is MPI_COMM_WORLD)",
            ));
        }
        let size = unsigned(f.next(), "communicator size")?;
        let members = (0..size)
            .map(|i| rank_of(f.next(), &format!("member {i}"), nranks))
            .collect::<Result<Vec<_>, _>>()?;
        if !members.contains(&rank) {
            return Err(bad(format!(
                "comm_def {id} does not list rank {rank} itself among its members"
            )));
        }
        if let Some(extra) = f.next() {
            return Err(bad(format!(
                "unexpected field '{extra}' after {size} members"
            )));
        }
        return Ok(Some((
            rank,
            TimedItem::CommDef {
                id: id as CommId,
                members,
            },
        )));
    }
    let enter = time(f.next(), "enter time")?;
    let exit = time(f.next(), "exit time")?;
    if exit < enter {
        return Err(bad(format!(
            "exit time {exit} is before enter time {enter}"
        )));
    }
    let mut positional = Vec::new();
    let mut comm: CommId = 0;
    let mut root = None;
    for tok in f {
        if let Some(v) = tok.strip_prefix("comm=") {
            let id = v
                .parse::<u32>()
                .map_err(|_| bad(format!("comm='{v}' is not a communicator id")))?;
            comm = id;
        } else if let Some(v) = tok.strip_prefix("root=") {
            root = Some(rank_of(Some(v), "root", nranks)?);
        } else {
            positional.push(tok);
        }
    }
    let mut p = positional.into_iter();
    let kind = match kw {
        "region" => {
            let name = p
                .next()
                .ok_or_else(|| bad("region needs a name"))?
                .to_string();
            RecordKind::Region { name }
        }
        "probe" => {
            let src = rank_of(p.next(), "src", nranks)?;
            let tag = tag_of(p.next())?;
            RecordKind::Probe { src, tag, comm }
        }
        "send" | "recv" => {
            let peer = rank_of(p.next(), if kw == "send" { "dst" } else { "src" }, nranks)?;
            let tag = tag_of(p.next())?;
            let bytes = unsigned(p.next(), "size in bytes")?;
            if kw == "send" {
                RecordKind::Send {
                    dst: peer,
                    tag,
                    bytes,
                    comm,
                }
            } else {
                RecordKind::Recv {
                    src: peer,
                    tag,
                    bytes,
                    comm,
                }
            }
        }
        other => {
            let op = CollectiveOp::from_keyword(other).ok_or_else(|| {
                let ops: Vec<_> = CollectiveOp::ALL.iter().map(|o| o.keyword()).collect();
                bad(format!(
                    "unknown record '{other}' (expected comm_def, region, send, recv, probe or a collective: {})",
                    ops.join(" ")
                ))
            })?;
            let bytes = unsigned(p.next(), "size in bytes")?;
            let rooted = op.shape() != crate::model::CollectiveShape::NToN;
            if rooted && root.is_none() {
                return Err(bad(format!("{other} needs root=<world rank>")));
            }
            if !rooted && root.is_some() {
                return Err(bad(format!("{other} takes no root")));
            }
            RecordKind::Collective {
                op,
                bytes,
                root,
                comm,
            }
        }
    };
    if matches!(kind, RecordKind::Region { .. }) && (comm != 0 || root.is_some()) {
        return Err(bad("region takes no comm= or root="));
    }
    if matches!(
        kind,
        RecordKind::Send { .. } | RecordKind::Recv { .. } | RecordKind::Probe { .. }
    ) && root.is_some()
    {
        return Err(bad(format!("{kw} takes no root=")));
    }
    if let Some(extra) = p.next() {
        return Err(bad(format!("unexpected field '{extra}' in {kw}")));
    }
    Ok(Some((
        rank,
        TimedItem::Record(TimedRecord {
            rank,
            line: 0,
            enter_secs: enter,
            exit_secs: exit,
            kind,
        }),
    )))
}

/// Where each rank's timed records come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimedSource {
    /// Path i holds rank i's records.
    PerRank(Vec<PathBuf>),
    /// One file holds every rank's records, `nranks` ranks in all (the largest rank field + 1).
    Shared { path: PathBuf, nranks: u32 },
}

impl TimedSource {
    /// Opens a timed trace: a directory (its [`TIMED_LIST_FILE`]), a list file of per-rank
    /// files (relative paths resolved against the list's directory), or a shared trace file,
    /// recognised by its first non-comment line starting with a rank and a record keyword. A
    /// shared file is scanned once to count its ranks.
    ///
    /// # Errors
    /// Unreadable files, a listed file that does not exist, an empty list, or a bad rank field.
    pub fn open(path: &Path) -> Result<TimedSource, Error> {
        let path = if path.is_dir() {
            path.join(TIMED_LIST_FILE)
        } else {
            path.to_path_buf()
        };
        let io = |e| Error::new(&path, 0, ErrorKind::Io(e));
        let reader = BufReader::new(File::open(&path).map_err(io)?);
        let base = path.parent().unwrap_or(Path::new(""));
        let mut entries = Vec::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(io)?;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let mut f = t.split_ascii_whitespace();
            let looks_like_record =
                f.next().is_some_and(|x| x.parse::<u32>().is_ok()) && f.next().is_some();
            if entries.is_empty() && looks_like_record {
                let nranks = count_ranks(&path)?;
                return Ok(TimedSource::Shared { path, nranks });
            }
            let candidate = base.join(t);
            if !candidate.is_file() {
                return Err(Error::new(
                    &path,
                    i as u64 + 1,
                    bad(format!(
                        "listed timed trace '{}' does not exist",
                        candidate.display()
                    )),
                ));
            }
            entries.push(candidate);
        }
        if entries.is_empty() {
            return Err(Error::new(
                &path,
                0,
                bad("neither a timed trace nor a list of per-rank timed traces (no entry)"),
            ));
        }
        Ok(TimedSource::PerRank(entries))
    }

    /// Number of ranks.
    pub fn nranks(&self) -> u32 {
        match self {
            TimedSource::PerRank(v) => v.len() as u32,
            TimedSource::Shared { nranks, .. } => *nranks,
        }
    }

    /// The directory the trace lives in (where `trace-meta.json` is looked up).
    pub fn directory(&self) -> PathBuf {
        let p = match self {
            TimedSource::PerRank(v) => &v[0],
            TimedSource::Shared { path, .. } => path,
        };
        p.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    /// Opens rank `rank`'s stream.
    ///
    /// # Errors
    /// The file cannot be opened, or `rank` is out of range.
    pub fn open_rank(&self, rank: Rank) -> Result<TimedReader, Error> {
        let (path, shared) = match self {
            TimedSource::PerRank(v) => match v.get(rank as usize) {
                Some(p) => (p.clone(), false),
                None => {
                    return Err(Error::bare(bad(format!("no timed trace for rank {rank}"))));
                }
            },
            TimedSource::Shared { path, .. } => (path.clone(), true),
        };
        let file = File::open(&path).map_err(|e| Error::new(&path, 0, ErrorKind::Io(e)))?;
        Ok(TimedReader {
            reader: BufReader::with_capacity(64 * 1024, file),
            path,
            rank,
            nranks: self.nranks(),
            shared,
            line_no: 0,
            buf: String::new(),
            last_exit_secs: 0.0,
            stamped: StampedDecoder::default(),
            queue: VecDeque::new(),
        })
    }
}

fn count_ranks(path: &Path) -> Result<u32, Error> {
    let io = |e| Error::new(path, 0, ErrorKind::Io(e));
    let reader = BufReader::new(File::open(path).map_err(io)?);
    let mut max: Option<u32> = None;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(io)?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let first = t.split_ascii_whitespace().next().unwrap_or("");
        let r = first.parse::<u32>().map_err(|_| {
            Error::new(
                path,
                i as u64 + 1,
                bad(format!("rank field '{first}' is not a rank number")),
            )
        })?;
        max = Some(max.map_or(r, |m| m.max(r)));
    }
    Ok(max.map_or(0, |m| m + 1))
}

/// A source of one rank's timed items, in program order.
pub trait TimedStream {
    /// The next item, or `None` at the end.
    ///
    /// # Errors
    /// Read errors and malformed records, located at `file:line`.
    fn next_item(&mut self) -> Result<Option<TimedItem>, Error>;

    /// Where the items come from, for error messages.
    fn origin(&self) -> &Path;
}

/// Rank `rank`'s records read line by line from a file. Memory: one line buffer.
#[derive(Debug)]
pub struct TimedReader {
    reader: BufReader<File>,
    path: PathBuf,
    rank: Rank,
    nranks: u32,
    shared: bool,
    line_no: u64,
    buf: String,
    last_exit_secs: f64,
    stamped: StampedDecoder,
    queue: VecDeque<TimedItem>,
}

impl TimedStream for TimedReader {
    fn next_item(&mut self) -> Result<Option<TimedItem>, Error> {
        if let Some(item) = self.queue.pop_front() {
            return Ok(Some(item));
        }
        loop {
            self.buf.clear();
            let n = self
                .reader
                .read_line(&mut self.buf)
                .map_err(|e| Error::new(&self.path, self.line_no + 1, ErrorKind::Io(e)))?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let here = |k| Error::new(&self.path, self.line_no, k);
            if self.shared {
                let first = self.buf.split_ascii_whitespace().next();
                if let Some(r) = first.and_then(|t| t.parse::<u32>().ok()) {
                    if r != self.rank {
                        continue;
                    }
                }
            }
            let trimmed = self.buf.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let second = trimmed.split_ascii_whitespace().nth(1);
            let items = if is_stamped(trimmed) || matches!(second, Some("comm_def" | "compute")) {
                // Timestamped TI lines (and their declarations), see `stamped`.
                let rank = trimmed.split_ascii_whitespace().next().unwrap_or("");
                if rank.parse::<u32>().ok() != Some(self.rank) {
                    return Err(here(bad(format!(
                        "a line of rank '{rank}' in rank {}'s file",
                        self.rank
                    ))));
                }
                self.stamped.decode(trimmed, self.nranks).map_err(here)?
            } else {
                let Some((rank, item)) = parse_line(trimmed, self.nranks).map_err(here)? else {
                    continue;
                };
                if rank != self.rank {
                    return Err(here(bad(format!(
                        "a record of rank {rank} in rank {}'s file",
                        self.rank
                    ))));
                }
                vec![item]
            };
            for mut item in items {
                if let TimedItem::Record(r) = &mut item {
                    r.line = self.line_no;
                    if r.enter_secs < self.last_exit_secs {
                        return Err(here(bad(format!(
                            "enter time {} is before the previous record's exit time {} (records of a rank must not overlap)",
                            r.enter_secs, self.last_exit_secs
                        ))));
                    }
                    self.last_exit_secs = r.exit_secs;
                }
                self.queue.push_back(item);
            }
            if let Some(item) = self.queue.pop_front() {
                return Ok(Some(item));
            }
        }
    }

    fn origin(&self) -> &Path {
        &self.path
    }
}

/// A rank's items held in memory (tests, and traces built by programs).
#[derive(Debug, Clone)]
pub struct VecStream {
    items: std::vec::IntoIter<TimedItem>,
    origin: PathBuf,
}

impl VecStream {
    /// A stream yielding `items` in order.
    pub fn new(items: Vec<TimedItem>) -> Self {
        VecStream {
            items: items.into_iter(),
            origin: PathBuf::from("<memory>"),
        }
    }
}

impl TimedStream for VecStream {
    fn next_item(&mut self) -> Result<Option<TimedItem>, Error> {
        Ok(self.items.next())
    }

    fn origin(&self) -> &Path {
        &self.origin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(line: &str) -> TimedRecord {
        match parse_line(line, 4).unwrap().unwrap().1 {
            TimedItem::Record(r) => r,
            other => panic!("not a record: {other:?}"),
        }
    }

    fn err(line: &str) -> String {
        parse_line(line, 4).unwrap_err().to_string()
    }

    #[test]
    fn decodes_every_record_kind() {
        let r = rec("1 send 0.5 0.75 2 7 1e3 comm=3");
        assert_eq!((r.rank, r.enter_secs, r.exit_secs), (1, 0.5, 0.75));
        assert_eq!(
            r.kind,
            RecordKind::Send {
                dst: 2,
                tag: 7,
                bytes: 1000,
                comm: 3
            }
        );
        assert_eq!(
            rec("2 recv 1 2 1 -1 8").kind,
            RecordKind::Recv {
                src: 1,
                tag: -1,
                bytes: 8,
                comm: 0
            }
        );
        assert_eq!(
            rec("0 bcast 1 2 64 root=3").kind,
            RecordKind::Collective {
                op: CollectiveOp::Bcast,
                bytes: 64,
                root: Some(3),
                comm: 0
            }
        );
        assert_eq!(
            rec("0 region 0 1e-6 get_coords").kind,
            RecordKind::Region {
                name: "get_coords".into()
            }
        );
        assert_eq!(
            parse_line("3 comm_def 1 2 3 1", 4).unwrap().unwrap().1,
            TimedItem::CommDef {
                id: 1,
                members: vec![3, 1]
            }
        );
        assert_eq!(
            rec("3 probe 1 2 0 5 comm=2").kind,
            RecordKind::Probe {
                src: 0,
                tag: 5,
                comm: 2
            }
        );
        assert_eq!(parse_line("  # comment", 4).unwrap(), None);
        assert_eq!(parse_line("", 4).unwrap(), None);
    }

    #[test]
    fn rejects_malformed_lines_saying_what_was_expected() {
        assert!(err("0 send 1 0.5 2 0 8").contains("exit time 0.5 is before enter time 1"));
        assert!(err("0 send 0 1 9 0 8").contains("dst 9 is not a rank of a 4-rank run"));
        assert!(err("0 bcast 0 1 8").contains("needs root="));
        assert!(err("0 barrier 0 1 0 root=1").contains("takes no root"));
        assert!(err("0 frobnicate 0 1").contains("unknown record 'frobnicate'"));
        assert!(err("0 recv 0 1 1 0 8 9").contains("unexpected field '9'"));
        assert!(err("0 region x 1 f").contains("enter time 'x'"));
        assert!(err("0 comm_def 1 2 1 2").contains("does not list rank 0"));
        assert!(err("x send 0 1 1 0 8").contains("rank field 'x'"));
    }

    #[test]
    fn reader_locates_errors_at_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(
            &p,
            "# header\n0 region 0 1 a\n1 region 0 1 b\n0 region 0.5 2 c\n",
        )
        .unwrap();
        let src = TimedSource::open(&p).unwrap();
        assert_eq!(src.nranks(), 2);
        let mut r0 = src.open_rank(0).unwrap();
        assert!(matches!(r0.next_item().unwrap(), Some(TimedItem::Record(r)) if r.line == 2));
        let e = r0.next_item().unwrap_err().to_string();
        assert!(e.contains("t.txt:4:"), "{e}");
        assert!(e.contains("must not overlap"), "{e}");
        let mut r1 = src.open_rank(1).unwrap();
        assert!(matches!(r1.next_item().unwrap(), Some(TimedItem::Record(r)) if r.line == 3));
        assert_eq!(r1.next_item().unwrap(), None);
    }

    #[test]
    fn list_files_and_directories_name_per_rank_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "0 region 0 1 x\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "0 region 0 1 x\n").unwrap();
        std::fs::write(dir.path().join(TIMED_LIST_FILE), "a.txt\nb.txt\n").unwrap();
        let src = TimedSource::open(dir.path()).unwrap();
        assert_eq!(src.nranks(), 2);
        let e = src
            .open_rank(1)
            .unwrap()
            .next_item()
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.txt:1:"), "{e}");
        assert!(e.contains("a record of rank 0 in rank 1's file"), "{e}");
        std::fs::write(dir.path().join(TIMED_LIST_FILE), "a.txt\nmissing.txt\n").unwrap();
        let e = TimedSource::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("timed-list.txt:2:"), "{e}");
    }
}
