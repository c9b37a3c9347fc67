//! Line decoder for SimGrid 3.32's TI text format and the seed's original format.
//!
//! A line is trimmed, split on runs of spaces and tabs; empty lines and lines starting with `#`
//! carry no action (SimGrid 3.32 `xbt/replay.cpp`). The first field is the rank: `3` in SimGrid's
//! format, `p3` in the seed's (`003_*` Table 1, where sizes are bytes, tags do not exist and
//! `recv` has no size). Field layouts follow SimGrid 3.32's `smpi_replay.cpp` argument parsers;
//! numbers are decoded with nom. Unlike SimGrid, excess fields are an error, and the count arrays
//! of the v-collectives accept the same numbers as other counts (SimGrid reads them with `stoi`,
//! so `1e3` is 1 there).

use nom::character::complete::{i64 as int64, u32 as uint32};
use nom::combinator::all_consuming;

use crate::action::{Action, CommId, Rank, RecvCount, RequestKey, WORLD};
use crate::datatype::Datatype;
use crate::error::TraceErrorKind;

/// Every action keyword the decoder accepts (SimGrid 3.32 names, then the seed's spellings).
pub const KNOWN_ACTIONS: &str = "init finalize comm_size comm_split comm_dup comm_def location compute sleep \
send isend recv irecv wait test waitall sendRecv barrier bcast reduce allreduce alltoall alltoallv \
gather allgather gatherv allgatherv scatter scatterv reducescatter scan exscan; seed format: Isend Irecv allReduce";

/// Prefix of the optional last field naming the call site of an action (`@cs=<id>`).
pub const CALLSITE_FIELD: &str = "@cs=";

/// Which of the two text formats a line is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SimGrid 3.32 TI format: `0 send 1 0 1e6`.
    SimGrid,
    /// The seed's format (`003_*` Table 1): `p0 send p1 1e6`.
    Seed,
}

/// A decoded line: the rank it belongs to and its action.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Rank named by the line's first field.
    pub rank: Rank,
    /// Format of the line.
    pub dialect: Dialect,
    /// The decoded action.
    pub action: Action,
    /// Communicator named by a trailing `comm=<id>` field, [`WORLD`] without one.
    pub comm: CommId,
    /// Call site named by a trailing `@cs=<id>` field (timeless extension, README "Call
    /// sites"): an id of the trace's `callsites.txt`. The replay ignores it.
    pub callsite: Option<u32>,
}

/// `line` without leading and trailing white space (`str::trim`). A line read with its
/// newline that otherwise starts and ends with a printable ASCII byte, nearly every trace
/// line, is cut without decoding characters (no white space is a byte in 0x21..0x7e).
fn trim(line: &str) -> &str {
    let b = line.as_bytes();
    let printable = |c: u8| c > b' ' && c < 0x7f;
    let body = match b {
        [.., b'\n'] => &b[..b.len() - 1],
        _ => b,
    };
    match (body.first(), body.last()) {
        (Some(&f), Some(&l)) if printable(f) && printable(l) => &line[..body.len()],
        _ => line.trim(),
    }
}

/// The byte position of the last space or tab of `line` (`line.rfind([' ', '\t'])`): a byte
/// scan from the end, which the last field's few bytes end.
fn last_blank(line: &str) -> Option<usize> {
    line.as_bytes()
        .iter()
        .rposition(|&b| b == b' ' || b == b'\t')
}

/// Splits a line into fields the way SimGrid does (runs of spaces and tabs; `\r` too, so CRLF
/// files work). Scans bytes: the separators are ASCII, so every field is a valid `&str` slice.
pub fn fields(line: &str) -> impl Iterator<Item = &str> {
    let bytes = line.as_bytes();
    let mut pos = 0;
    std::iter::from_fn(move || {
        // Every separator is at most b' ': a byte above it is never one (one comparison for
        // nearly every byte of a field).
        let is_sep = |b: u8| b <= b' ' && (b == b' ' || b == b'\t' || b == b'\r' || b == b'\n');
        while pos < bytes.len() && is_sep(bytes[pos]) {
            pos += 1;
        }
        if pos == bytes.len() {
            return None;
        }
        let start = pos;
        while pos < bytes.len() && !is_sep(bytes[pos]) {
            pos += 1;
        }
        Some(&line[start..pos])
    })
}

/// A number as C's `strtod` reads a whole field (`1e6`, `2.5`, `-1`); `None` if the field is not
/// a finite number. Digits-only fields, the common case, skip the general float parser.
pub fn number(tok: &str) -> Option<f64> {
    if !tok.is_empty() && tok.len() <= 15 && tok.bytes().all(|b| b.is_ascii_digit()) {
        return Some(
            tok.bytes()
                .fold(0u64, |acc, b| acc * 10 + u64::from(b - b'0')) as f64,
        );
    }
    tok.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The value of a field of 1 to 18 ASCII digits (no sign), the common case of integer fields,
/// without the general parser; `None` for anything else (then parsed, or rejected, by nom).
fn plain_digits(tok: &str) -> Option<u64> {
    let b = tok.as_bytes();
    if b.is_empty() || b.len() > 18 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        b.iter()
            .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0')),
    )
}

/// Decodes the rank field only (`3` or `p3`); used to skip other ranks' lines in a shared file
/// without decoding their actions.
pub fn rank_field(tok: &str) -> Result<(Rank, Dialect), TraceErrorKind> {
    let (digits, dialect) = match tok.strip_prefix('p') {
        Some(rest) => (rest, Dialect::Seed),
        None => (tok, Dialect::SimGrid),
    };
    if let Some(r) = plain_digits(digits).and_then(|v| Rank::try_from(v).ok()) {
        return Ok((r, dialect));
    }
    all_consuming(uint32::<_, ()>)(digits)
        .map(|(_, r)| (r, dialect))
        .map_err(|_| TraceErrorKind::BadRank(tok.to_string()))
}

/// Decodes one line. `nranks` is the size of `MPI_COMM_WORLD` (the v-collectives carry one count
/// per rank). Returns `Ok(None)` for blank and comment lines.
///
/// # Errors
/// [`TraceErrorKind::UnknownAction`], [`TraceErrorKind::Malformed`] (with what was expected),
/// [`TraceErrorKind::UnknownDatatype`] or [`TraceErrorKind::BadRank`].
pub fn parse_line(line: &str, nranks: u32) -> Result<Option<Record>, TraceErrorKind> {
    parse_line_in(line, nranks, &|_| None)
}

/// Decodes one line like [`parse_line`], resolving a trailing `comm=<id>` field (timeless
/// extension, README "Communicators") with `comm_size`, which gives the size of each communicator
/// the rank defined so far: per-peer count vectors then have that many entries. Peers and roots
/// stay world ranks, checked against `nranks`.
///
/// # Errors
/// As [`parse_line`], and [`TraceErrorKind::Malformed`] for a `comm=` naming an undefined
/// communicator or following an action that takes none.
pub fn parse_line_in(
    line: &str,
    nranks: u32,
    comm_size: &dyn Fn(CommId) -> Option<u32>,
) -> Result<Option<Record>, TraceErrorKind> {
    let mut line = trim(line);
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let mut callsite = None;
    if let Some(pos) = last_blank(line) {
        if let Some(id) = line[pos + 1..].strip_prefix(CALLSITE_FIELD) {
            callsite = Some(
                all_consuming(uint32::<_, ()>)(id)
                    .map(|(_, v)| v)
                    .map_err(|_| TraceErrorKind::Malformed {
                        action: CALLSITE_FIELD.into(),
                        expected: format!("a call-site id (0..2^32), found '{CALLSITE_FIELD}{id}'"),
                    })?,
            );
            line = line[..pos].trim_end();
        }
    }
    let mut comm = WORLD;
    let mut explicit_comm = false;
    let mut vector_len = nranks;
    if let Some(pos) = last_blank(line) {
        if let Some(id) = line[pos + 1..].strip_prefix("comm=") {
            let bad = |expected: String| TraceErrorKind::Malformed {
                action: "comm=".into(),
                expected,
            };
            comm = all_consuming(uint32::<_, ()>)(id)
                .map(|(_, v)| v)
                .map_err(|_| bad(format!("a communicator id, found 'comm={id}'")))?;
            if comm != WORLD {
                vector_len = comm_size(comm).ok_or_else(|| {
                    bad(format!(
                        "a communicator defined by an earlier comm_def line of this rank, \
                         comm {comm} is not"
                    ))
                })?;
            }
            line = line[..pos].trim_end();
            explicit_comm = true;
        }
    }
    let mut it = fields(line);
    let rank_tok = it.next().unwrap_or_default();
    let (rank, dialect) = rank_field(rank_tok)?;
    let name = it.next().ok_or_else(|| TraceErrorKind::Malformed {
        action: String::new(),
        expected: "an action name after the rank".into(),
    })?;
    let mut f = Fields {
        name,
        it,
        n: nranks,
        vector_len,
        dialect,
    };
    let action = match dialect {
        Dialect::SimGrid => f.simgrid()?,
        Dialect::Seed => f.seed()?,
    };
    if explicit_comm && !action.takes_comm() {
        return Err(TraceErrorKind::Malformed {
            action: name.to_string(),
            expected: "no comm= field: only point-to-point, wait/test and collective actions \
                       name a communicator"
                .into(),
        });
    }
    if callsite.is_some() && (dialect == Dialect::Seed || matches!(action, Action::Compute { .. }))
    {
        return Err(TraceErrorKind::Malformed {
            action: name.to_string(),
            expected: "no @cs= field: compute records and the seed's format have no call site"
                .into(),
        });
    }
    Ok(Some(Record {
        rank,
        dialect,
        action,
        comm,
        callsite,
    }))
}

struct Fields<'a, I: Iterator<Item = &'a str>> {
    name: &'a str,
    it: I,
    /// World size: bound of peers and roots.
    n: u32,
    /// Entries of per-peer count vectors: the communicator's size.
    vector_len: u32,
    dialect: Dialect,
}

impl<'a, I: Iterator<Item = &'a str>> Fields<'a, I> {
    fn malformed(&self, expected: String) -> TraceErrorKind {
        TraceErrorKind::Malformed {
            action: self.name.to_string(),
            expected,
        }
    }

    #[inline]
    fn next_tok(&mut self, what: &str) -> Result<&'a str, TraceErrorKind> {
        match self.it.next() {
            Some(tok) => Ok(tok),
            None => Err(self.missing(what)),
        }
    }

    /// The error of a missing field `what`.
    #[cold]
    fn missing(&self, what: &str) -> TraceErrorKind {
        TraceErrorKind::Malformed {
            action: self.name.to_string(),
            expected: format!("missing field <{what}>"),
        }
    }

    #[inline]
    fn float(&mut self, what: &str) -> Result<f64, TraceErrorKind> {
        let tok = self.next_tok(what)?;
        match number(tok) {
            Some(v) => Ok(v),
            None => Err(self.not_a_number(tok, what)),
        }
    }

    #[cold]
    fn not_a_number(&self, tok: &str, what: &str) -> TraceErrorKind {
        self.malformed(format!("<{what}> must be a finite number, found '{tok}'"))
    }

    /// A non-negative volume (flops, seconds).
    fn volume(&mut self, what: &str) -> Result<f64, TraceErrorKind> {
        let v = self.float(what)?;
        if v < 0.0 {
            return Err(self.malformed(format!("<{what}> must be >= 0, found {v}")));
        }
        Ok(v)
    }

    /// An element count: a number truncated toward zero, as SimGrid's `parse_integer`.
    fn count(&mut self, what: &str) -> Result<u64, TraceErrorKind> {
        let v = self.float(what)?.trunc();
        if !(0.0..=9.0e15).contains(&v) {
            return Err(self.malformed(format!("<{what}> must be a count in 0..9e15, found {v}")));
        }
        Ok(v as u64)
    }

    #[inline]
    fn int(&mut self, what: &str) -> Result<i64, TraceErrorKind> {
        let tok = self.next_tok(what)?;
        if let Some(v) = plain_digits(tok) {
            // At most 18 digits: below 10^18 < i64::MAX.
            return Ok(v as i64);
        }
        self.signed_int(tok, what)
    }

    /// An integer field that is not plain digits (a sign, or an error).
    #[cold]
    fn signed_int(&self, tok: &str, what: &str) -> Result<i64, TraceErrorKind> {
        all_consuming(int64::<_, ()>)(tok)
            .map(|(_, v)| v)
            .map_err(|_| self.malformed(format!("<{what}> must be an integer, found '{tok}'")))
    }

    fn tag(&mut self) -> Result<i32, TraceErrorKind> {
        let v = self.int("tag")?;
        i32::try_from(v).map_err(|_| self.malformed(format!("<tag> out of range: {v}")))
    }

    fn rank(&mut self, what: &str) -> Result<Rank, TraceErrorKind> {
        if self.dialect == Dialect::Seed {
            let tok = self.next_tok(what)?;
            return match rank_field(tok) {
                Ok((r, Dialect::Seed)) => Ok(r),
                _ => Err(self.malformed(format!(
                    "<{what}> must be a process id such as p1, found '{tok}'"
                ))),
            };
        }
        let v = self.int(what)?;
        if v < 0 || v >= i64::from(self.n) {
            return Err(self.bad_rank(what, v));
        }
        Ok(v as Rank)
    }

    #[cold]
    fn bad_rank(&self, what: &str, v: i64) -> TraceErrorKind {
        self.malformed(format!(
            "<{what}> must be a rank in 0..{}, found {v}",
            self.n
        ))
    }

    fn counts(&mut self, what: &str) -> Result<Vec<u64>, TraceErrorKind> {
        (0..self.vector_len)
            .map(|i| {
                self.count(&format!(
                    "{what}[{i}] (one per rank, {} ranks)",
                    self.vector_len
                ))
            })
            .collect()
    }

    fn opt_tok(&mut self) -> Option<&'a str> {
        self.it.next()
    }

    fn datatype(&self, tok: &str) -> Result<Datatype, TraceErrorKind> {
        all_consuming(uint32::<_, ()>)(tok)
            .ok()
            .and_then(|(_, id)| Datatype::from_id(id))
            .ok_or_else(|| TraceErrorKind::UnknownDatatype(tok.to_string()))
    }

    fn opt_dt(&mut self) -> Result<Option<Datatype>, TraceErrorKind> {
        match self.opt_tok() {
            None => Ok(None),
            Some(tok) => self.datatype(tok).map(Some),
        }
    }

    fn opt_root(&mut self) -> Result<Option<Rank>, TraceErrorKind> {
        match self.opt_tok() {
            None => Ok(None),
            Some(tok) => match all_consuming(uint32::<_, ()>)(tok) {
                Ok((_, r)) if r < self.n => Ok(Some(r)),
                _ => Err(self.malformed(format!(
                    "<root> must be a rank in 0..{}, found '{tok}'",
                    self.n
                ))),
            },
        }
    }

    fn end(&mut self, layout: &str) -> Result<(), TraceErrorKind> {
        match self.it.next() {
            None => Ok(()),
            Some(tok) => Err(self.malformed(format!(
                "unexpected extra field '{tok}'; layout is: {layout}"
            ))),
        }
    }

    fn simgrid(&mut self) -> Result<Action, TraceErrorKind> {
        let a = match self.name {
            "init" => {
                return Ok(Action::Init {
                    double_default: self.opt_tok().is_some(),
                })
            }
            "finalize" => Action::Finalize,
            "comm_size" | "comm_split" | "comm_dup" => return Ok(Action::CommNoop),
            "comm_def" => {
                let id = self.int("id")?;
                let id = match u32::try_from(id) {
                    Ok(v) if v != WORLD => v,
                    _ => {
                        return Err(self.malformed(format!(
                            "<id> must be a communicator id >= 1 (0 is MPI_COMM_WORLD), found {id}"
                        )))
                    }
                };
                let size = self.count("size")?;
                if size == 0 || size > u64::from(self.n) {
                    return Err(
                        self.malformed(format!("<size> must be in 1..={}, found {size}", self.n))
                    );
                }
                let world_ranks = (0..size)
                    .map(|i| self.rank(&format!("w_{i} (world rank of comm rank {i})")))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut seen = world_ranks.clone();
                seen.sort_unstable();
                if seen.windows(2).any(|w| w[0] == w[1]) {
                    return Err(self.malformed("distinct world ranks".into()));
                }
                self.end("id size w_0 .. w_size-1")?;
                return Ok(Action::CommDef {
                    id,
                    world_ranks: world_ranks.into(),
                });
            }
            "location" => {
                self.next_tok("file")?;
                self.int("line")?;
                Action::Location
            }
            "compute" => Action::Compute {
                flops: self.volume("flops")?,
            },
            "sleep" => Action::Sleep {
                secs: self.volume("seconds")?,
            },
            "send" | "isend" => {
                let dst = self.rank("dst")?;
                let tag = self.tag()?;
                let count = self.count("count")?;
                let dt = self.opt_dt()?;
                self.end("dst tag count [datatype]")?;
                Action::Send {
                    dst,
                    tag,
                    count,
                    dt,
                    blocking: self.name == "send",
                }
            }
            "recv" | "irecv" => {
                let src = self.rank("src")?;
                let tag = self.tag()?;
                let c = self.float("count")?.trunc();
                let count = if c < 0.0 {
                    RecvCount::Probe
                } else if c <= 9.0e15 {
                    RecvCount::Count(c as u64)
                } else {
                    return Err(self.malformed(format!("<count> out of range: {c}")));
                };
                let dt = self.opt_dt()?;
                self.end("src tag count [datatype]")?;
                Action::Recv {
                    src,
                    tag,
                    count,
                    dt,
                    blocking: self.name == "recv",
                }
            }
            "wait" | "test" => {
                let src = self.rank("src")?;
                let dst = self.rank("dst")?;
                let tag = self.tag()?;
                self.end("src dst tag")?;
                let key = RequestKey::Key { src, dst, tag };
                if self.name == "wait" {
                    Action::Wait(key)
                } else {
                    Action::Test(key)
                }
            }
            "waitall" => Action::WaitAll,
            "sendRecv" => {
                let send_count = self.count("sendcount")?;
                let dst = self.rank("dst")?;
                let recv_count = self.count("recvcount")?;
                let src = self.rank("src")?;
                let sdt = self.next_tok("send datatype")?;
                let send_dt = Some(self.datatype(sdt)?);
                let rdt = self.next_tok("recv datatype")?;
                let recv_dt = Some(self.datatype(rdt)?);
                Action::SendRecv {
                    send_count,
                    dst,
                    recv_count,
                    src,
                    send_dt,
                    recv_dt,
                }
            }
            "barrier" => Action::Barrier,
            "bcast" => {
                let count = self.count("count")?;
                let root = self.opt_root()?.unwrap_or(0);
                let dt = self.opt_dt()?;
                self.end("count [root] [datatype]")?;
                Action::Bcast { count, root, dt }
            }
            "reduce" => {
                let count = self.count("count")?;
                let flops = self.volume("flops")?;
                let root = self.opt_root()?.unwrap_or(0);
                let dt = self.opt_dt()?;
                self.end("count flops [root] [datatype]")?;
                Action::Reduce {
                    count,
                    flops,
                    root,
                    dt,
                }
            }
            "allreduce" | "scan" | "exscan" => {
                let count = self.count("count")?;
                let flops = self.volume("flops")?;
                let dt = self.opt_dt()?;
                self.end("count flops [datatype]")?;
                match self.name {
                    "allreduce" => Action::AllReduce { count, flops, dt },
                    "scan" => Action::Scan { count, flops, dt },
                    _ => Action::ExScan { count, flops, dt },
                }
            }
            "alltoall" | "allgather" => {
                let send_count = self.count("sendcount")?;
                let recv_count = self.count("recvcount")?;
                let send_dt = self.opt_dt()?;
                let recv_dt = self.opt_dt()?;
                self.end("sendcount recvcount [send datatype] [recv datatype]")?;
                if self.name == "alltoall" {
                    Action::AllToAll {
                        send_count,
                        recv_count,
                        send_dt,
                        recv_dt,
                    }
                } else {
                    Action::AllGather {
                        send_count,
                        recv_count,
                        send_dt,
                        recv_dt,
                    }
                }
            }
            "gather" | "scatter" => {
                let send_count = self.count("sendcount")?;
                let recv_count = self.count("recvcount")?;
                let root = self.opt_root()?.unwrap_or(0);
                let send_dt = self.opt_dt()?;
                let recv_dt = self.opt_dt()?;
                self.end("sendcount recvcount [root] [send datatype] [recv datatype]")?;
                if self.name == "gather" {
                    Action::Gather {
                        send_count,
                        recv_count,
                        root,
                        send_dt,
                        recv_dt,
                    }
                } else {
                    Action::Scatter {
                        send_count,
                        recv_count,
                        root,
                        send_dt,
                        recv_dt,
                    }
                }
            }
            "alltoallv" => {
                self.count("sendbufsize")?;
                let send_counts = self.counts("sendcounts")?;
                self.count("recvbufsize")?;
                let recv_counts = self.counts("recvcounts")?;
                let send_dt = self.opt_dt()?;
                let recv_dt = self.opt_dt()?;
                self.end("sendbufsize sendcounts[N] recvbufsize recvcounts[N] [sdt] [rdt]")?;
                Action::AllToAllV {
                    send_counts: send_counts.into(),
                    recv_counts: recv_counts.into(),
                    send_dt,
                    recv_dt,
                }
            }
            "gatherv" => {
                let send_count = self.count("sendcount")?;
                let recv_counts = self.counts("recvcounts")?;
                let root = self.opt_root()?.unwrap_or(0);
                let send_dt = self.opt_dt()?;
                let recv_dt = self.opt_dt()?;
                self.end("sendcount recvcounts[N] [root] [sdt] [rdt]")?;
                Action::GatherV {
                    send_count,
                    recv_counts: recv_counts.into(),
                    root,
                    send_dt,
                    recv_dt,
                }
            }
            "allgatherv" => {
                let send_count = self.count("sendcount")?;
                let recv_counts = self.counts("recvcounts")?;
                // SimGrid 3.32 GatherVArgParser: N+2 more fields = sdt rdt disps[N];
                // N more = disps[N]; fewer = [sdt] [rdt].
                let rest: Vec<&str> = self.it.by_ref().collect();
                let n = self.vector_len as usize;
                let (dts, disps): (&[&str], &[&str]) = if rest.len() == n + 2 {
                    (&rest[..2], &rest[2..])
                } else if rest.len() == n && n > 2 {
                    (&[], &rest[..])
                } else if rest.len() <= 2 {
                    (&rest[..], &[])
                } else {
                    return Err(self.malformed(format!(
                        "expected sendcount recvcounts[{n}] [sdt rdt] [disps[{n}]], found {} trailing fields",
                        rest.len()
                    )));
                };
                let disps =
                    disps
                        .iter()
                        .map(|&d| match all_consuming(int64::<_, ()>)(d) {
                            Ok((_, v)) if v >= 0 => Ok(v as u64),
                            _ => Err(self
                                .malformed(format!("<disps> must be integers >= 0, found '{d}'"))),
                        })
                        .collect::<Result<Vec<u64>, _>>()?;
                let send_dt = dts.first().map(|t| self.datatype(t)).transpose()?;
                let recv_dt = dts.get(1).map(|t| self.datatype(t)).transpose()?;
                Action::AllGatherV {
                    send_count,
                    recv_counts: recv_counts.into(),
                    send_dt,
                    recv_dt,
                    disps: disps.into(),
                }
            }
            "scatterv" => {
                let send_counts = self.counts("sendcounts")?;
                let recv_count = self.count("recvcount")?;
                let root = self.opt_root()?.unwrap_or(0);
                let send_dt = self.opt_dt()?;
                let recv_dt = self.opt_dt()?;
                self.end("sendcounts[N] recvcount [root] [sdt] [rdt]")?;
                Action::ScatterV {
                    send_counts: send_counts.into(),
                    recv_count,
                    root,
                    send_dt,
                    recv_dt,
                }
            }
            "reducescatter" => {
                let recv_counts = self.counts("recvcounts")?;
                let flops = self.volume("flops")?;
                let dt = self.opt_dt()?;
                self.end("recvcounts[N] flops [datatype]")?;
                Action::ReduceScatter {
                    recv_counts: recv_counts.into(),
                    flops,
                    dt,
                }
            }
            other => return Err(TraceErrorKind::UnknownAction(other.to_string())),
        };
        if !matches!(a, Action::Send { .. } | Action::Recv { .. }) {
            self.end("no further fields")?;
        }
        Ok(a)
    }

    /// The seed's Table 1. Volumes are bytes; there are no tags (tag 0).
    fn seed(&mut self) -> Result<Action, TraceErrorKind> {
        let byte = Some(Datatype::BYTE);
        let a = match self.name {
            "compute" => Action::Compute {
                flops: self.volume("volume in flops")?,
            },
            "send" | "Isend" | "isend" => {
                let dst = self.rank("dst_id")?;
                let count = self.count("volume in bytes")?;
                Action::Send {
                    dst,
                    tag: 0,
                    count,
                    dt: byte,
                    blocking: self.name == "send",
                }
            }
            "recv" | "Irecv" | "irecv" => {
                let src = self.rank("src_id")?;
                let count = match self.opt_tok() {
                    None => RecvCount::FromSender,
                    Some(tok) => match number(tok) {
                        Some(v) if v >= 0.0 => RecvCount::Count(v.trunc() as u64),
                        _ => {
                            return Err(self.malformed(format!(
                                "<volume> must be a number of bytes, found '{tok}'"
                            )))
                        }
                    },
                };
                Action::Recv {
                    src,
                    tag: 0,
                    count,
                    dt: byte,
                    blocking: self.name == "recv",
                }
            }
            "bcast" => Action::Bcast {
                count: self.count("volume in bytes")?,
                root: 0,
                dt: byte,
            },
            "reduce" => {
                let count = self.count("vcomm in bytes")?;
                let flops = self.volume("vcomp in flops")?;
                Action::Reduce {
                    count,
                    flops,
                    root: 0,
                    dt: byte,
                }
            }
            "allReduce" | "allreduce" => {
                let count = self.count("vcomm in bytes")?;
                let flops = self.volume("vcomp in flops")?;
                Action::AllReduce {
                    count,
                    flops,
                    dt: byte,
                }
            }
            "barrier" => Action::Barrier,
            "comm_size" => {
                self.count("#proc")?;
                Action::CommNoop
            }
            "wait" => Action::Wait(RequestKey::Oldest),
            "init" => Action::Init {
                double_default: false,
            },
            "finalize" => Action::Finalize,
            other => return Err(TraceErrorKind::UnknownAction(other.to_string())),
        };
        self.end("the seed's Table 1 layout")?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod comm_tests;
