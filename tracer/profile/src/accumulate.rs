//! What one rank fills while it runs (the tracer's wrappers, or a replayed rank), and how the
//! ranks' parts become one [`Profile`].
//!
//! A rank keys its statistics by (its local communicator id, operation, bucket): no name is
//! known while the program runs (names need every rank's creation log, see
//! [`crate::naming`]). At the end, [`assemble`] names the communicators and turns each rank's
//! cells into rows. [`RankPart::encode`]/[`RankPart::decode`] carry a rank's part to rank 0
//! as text (one line per cell or event; sizes are checked before anything is allocated).
//!
//! Example: rank 1 calls `MPI_Allreduce` of 8 bytes on its communicator 2 twice, 1 ms each:
//! one cell (2, `MPI_Allreduce`, bucket 4) with 2 calls, 16 bytes, 0.002 s.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::bucket;
use crate::model::{LocalComm, Profile, Row, RunMeta, Stats};
use crate::naming::{name_all, Child, Event, Kind, NamingError, RankLog};

/// A cell's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The rank's local communicator id (0 is `W`).
    pub comm: u32,
    /// Operation (`MPI_Send`).
    pub op: Cow<'static, str>,
    /// Size bucket.
    pub bucket: u8,
}

/// One rank's statistics and communicator log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankPart {
    /// Cells.
    pub cells: HashMap<Key, Stats>,
    /// Creation calls and communicators seen, in call order.
    pub log: RankLog,
}

impl RankPart {
    /// Records one call of `op` on local communicator `comm` moving `bytes_sent` /
    /// `bytes_recv` (the bucket is taken from their sum) in `secs` seconds.
    pub fn record(
        &mut self,
        comm: u32,
        op: &'static str,
        bytes_sent: u64,
        bytes_recv: u64,
        secs: f64,
    ) {
        let key = Key {
            comm,
            op: Cow::Borrowed(op),
            bucket: bucket::of(bytes_sent.saturating_add(bytes_recv)),
        };
        match self.cells.get_mut(&key) {
            Some(s) => s.add(bytes_sent, bytes_recv, secs),
            None => {
                self.cells
                    .insert(key, Stats::one(bytes_sent, bytes_recv, secs));
            }
        }
    }

    /// The part as text: `c <comm> <op> <bucket> <calls> <sent> <recv> <sum> <min> <max>`
    /// per cell (sorted), `n <letter> <parent> -` / `n <letter> <parent> <local> <w..>` per
    /// creation, `s <local> <w..>` per communicator seen. Times are written in full precision
    /// (Rust's shortest round-trip form).
    pub fn encode(&self) -> Vec<u8> {
        use std::fmt::Write as _;
        let mut out = String::new();
        for ev in &self.log.events {
            match ev {
                Event::Created {
                    kind,
                    parent,
                    child,
                } => {
                    let _ = write!(out, "n {} {parent}", kind.letter());
                    match child {
                        None => out.push_str(" -"),
                        Some(c) => {
                            let _ = write!(out, " {}", c.local);
                            for w in &c.members {
                                let _ = write!(out, " {w}");
                            }
                        }
                    }
                    out.push('\n');
                }
                Event::Seen(c) => {
                    let _ = write!(out, "s {}", c.local);
                    for w in &c.members {
                        let _ = write!(out, " {w}");
                    }
                    out.push('\n');
                }
            }
        }
        let mut cells: Vec<(&Key, &Stats)> = self.cells.iter().collect();
        cells.sort_by(|a, b| a.0.cmp(b.0));
        for (k, s) in cells {
            let _ = writeln!(
                out,
                "c {} {} {} {} {} {} {:?} {:?} {:?}",
                k.comm,
                k.op,
                k.bucket,
                s.calls,
                s.bytes_sent,
                s.bytes_recv,
                s.time_sum_secs,
                s.time_min_secs,
                s.time_max_secs
            );
        }
        out.into_bytes()
    }

    /// Parses [`RankPart::encode`]'s text of a run of `ranks` ranks.
    ///
    /// # Errors
    /// A message naming the line and what was expected.
    pub fn decode(text: &[u8], ranks: u32) -> Result<RankPart, String> {
        let text = std::str::from_utf8(text).map_err(|e| format!("not UTF-8: {e}"))?;
        let mut part = RankPart::default();
        for (i, line) in text.lines().enumerate() {
            let at = |what: &str| format!("line {}: {what}: {line:?}", i + 1);
            let f: Vec<&str> = line.split(' ').collect();
            let int = |s: &str| s.parse::<u64>().map_err(|_| at("expected an integer"));
            let rank = |s: &str| -> Result<u32, String> {
                let v = int(s)?;
                if v < u64::from(ranks) {
                    Ok(v as u32)
                } else {
                    Err(at("world rank out of range"))
                }
            };
            let local = |s: &str| -> Result<u32, String> {
                u32::try_from(int(s)?).map_err(|_| at("communicator id out of range"))
            };
            match f.first().copied() {
                Some("n") if f.len() >= 4 => {
                    let kind = f[1]
                        .chars()
                        .next()
                        .filter(|_| f[1].len() == 1)
                        .and_then(Kind::from_letter)
                        .ok_or_else(|| at("unknown creation letter"))?;
                    let parent = local(f[2])?;
                    let child = if f[3] == "-" && f.len() == 4 {
                        None
                    } else {
                        if f.len() - 4 > ranks as usize {
                            return Err(at("more members than ranks"));
                        }
                        Some(Child {
                            local: local(f[3])?,
                            members: f[4..].iter().map(|s| rank(s)).collect::<Result<_, _>>()?,
                        })
                    };
                    part.log.events.push(Event::Created {
                        kind,
                        parent,
                        child,
                    });
                }
                Some("s") if f.len() >= 3 => {
                    if f.len() - 2 > ranks as usize {
                        return Err(at("more members than ranks"));
                    }
                    part.log.events.push(Event::Seen(Child {
                        local: local(f[1])?,
                        members: f[2..].iter().map(|s| rank(s)).collect::<Result<_, _>>()?,
                    }));
                }
                Some("c") if f.len() == 10 => {
                    let float = |s: &str| {
                        s.parse::<f64>()
                            .ok()
                            .filter(|v| v.is_finite())
                            .ok_or_else(|| at("expected a finite number"))
                    };
                    let bucket = u8::try_from(int(f[3])?)
                        .ok()
                        .filter(|&b| b <= 64)
                        .ok_or_else(|| at("bucket out of range"))?;
                    let key = Key {
                        comm: local(f[1])?,
                        op: Cow::Owned(f[2].to_string()),
                        bucket,
                    };
                    let stats = Stats {
                        calls: int(f[4])?,
                        bytes_sent: int(f[5])?,
                        bytes_recv: int(f[6])?,
                        time_sum_secs: float(f[7])?,
                        time_min_secs: float(f[8])?,
                        time_max_secs: float(f[9])?,
                    };
                    part.cells.insert(key, stats);
                }
                _ => return Err(at("expected a c, n or s record")),
            }
        }
        Ok(part)
    }
}

/// Errors assembling a profile.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The ranks' logs do not fit together.
    #[error(transparent)]
    Naming(#[from] NamingError),
    /// A rank recorded calls on a communicator its log does not define.
    #[error(
        "rank {rank}: calls recorded on its communicator {comm}, which its log does not define"
    )]
    UnknownComm {
        /// World rank.
        rank: u32,
        /// Local id.
        comm: u32,
    },
}

/// Names the communicators of `parts` (`parts[r]` is world rank r's) and builds the profile.
///
/// # Errors
/// [`AssembleError`] when the logs do not fit together or a cell names an unknown communicator.
pub fn assemble(meta: RunMeta, parts: &[RankPart]) -> Result<Profile, AssembleError> {
    let logs: Vec<RankLog> = parts.iter().map(|p| p.log.clone()).collect();
    let naming = name_all(&logs)?;
    let mut rows = Vec::new();
    for (r, part) in parts.iter().enumerate() {
        for (k, s) in &part.cells {
            let comm = naming
                .name(r as u32, k.comm)
                .ok_or(AssembleError::UnknownComm {
                    rank: r as u32,
                    comm: k.comm,
                })?;
            rows.push(Row {
                comm: comm.to_string(),
                op: k.op.to_string(),
                rank: r as u32,
                bucket: k.bucket,
                stats: *s,
            });
        }
    }
    let mut locals = Vec::new();
    for (r, map) in naming.local.iter().enumerate() {
        for (&local, &g) in map {
            if local != 0 {
                locals.push(LocalComm {
                    rank: r as u32,
                    local,
                    comm: naming.comms[g].name.clone(),
                });
            }
        }
    }
    let mut p = Profile {
        meta,
        comms: naming.comms,
        rows,
        locals,
    };
    p.sort_rows();
    Ok(p)
}
