//! Call signatures (Pilgrim `000_*` §2.1, §2.4): an action minus its compute volume, encoded
//! so that SPMD ranks produce identical bytes.
//!
//! A signature is `opcode, fields..., comm`: peers (send destination, receive source, the two
//! ranks of a wait/test request key, sendRecv's peers) are stored as the displacement
//! `peer - caller` (zigzag varint, Pilgrim §2.4.1), so rank i sending to i+1 has the same
//! signature on every rank. Tags, counts, roots and datatype ids are stored as values (roots are
//! absolute: they are usually the same world rank everywhere). A collective's reduction flops
//! are stored exactly (f64 bits), as they are part of the call, not a compute phase. The
//! members of a `comm_def` are displacements too. The
//! volume of `compute` (flops) and `sleep` (seconds) is *not* in the signature: it goes to the
//! rank's volume stream ([`crate::volume`]). The last field is the communicator id of the
//! `comm=<id>` extension (0 = `MPI_COMM_WORLD`), so sub-communicator calls get their own
//! terminals. A call site (`@cs=<id>`, README "Call sites") follows it when the action has
//! one, so the same call made at two places of the program gets two terminals; a signature
//! without one is byte for byte what it was before call sites existed.
//!
//! Request identity: a TI `wait`/`test` names its request by `(src, dst, tag)`, which is kept
//! (rank-relative); SimGrid's replay pairs requests by that key, so the signature carries
//! exactly the information the replay needs.

use timeless_trace::{Action, Datatype, Rank, RecvCount, RequestKey};

use crate::error::GrammarError;
use crate::varint::{put_i64, put_u64, Reader};

/// One action split into its signature bytes and its volume (flops or seconds, if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    /// Canonical signature bytes (the CST key).
    pub signature: Vec<u8>,
    /// The compute volume removed from the signature: flops of `compute`, seconds of `sleep`.
    pub volume: Option<f64>,
}

mod op {
    pub const INIT: u8 = 0;
    pub const FINALIZE: u8 = 1;
    pub const COMM_NOOP: u8 = 2;
    pub const LOCATION: u8 = 3;
    pub const COMPUTE: u8 = 4;
    pub const SLEEP: u8 = 5;
    pub const SEND: u8 = 6;
    pub const RECV: u8 = 7;
    pub const WAIT: u8 = 8;
    pub const TEST: u8 = 9;
    pub const WAITALL: u8 = 10;
    pub const SENDRECV: u8 = 11;
    pub const BARRIER: u8 = 12;
    pub const BCAST: u8 = 13;
    pub const REDUCE: u8 = 14;
    pub const ALLREDUCE: u8 = 15;
    pub const ALLTOALL: u8 = 16;
    pub const ALLTOALLV: u8 = 17;
    pub const GATHER: u8 = 18;
    pub const ALLGATHER: u8 = 19;
    pub const GATHERV: u8 = 20;
    pub const ALLGATHERV: u8 = 21;
    pub const SCATTER: u8 = 22;
    pub const SCATTERV: u8 = 23;
    pub const REDUCESCATTER: u8 = 24;
    pub const SCAN: u8 = 25;
    pub const EXSCAN: u8 = 26;
    pub const COMM_DEF: u8 = 27;
}

struct Enc {
    b: Vec<u8>,
    rank: Rank,
}

impl Enc {
    fn u(&mut self, v: u64) {
        put_u64(&mut self.b, v);
    }
    fn peer(&mut self, p: Rank) {
        put_i64(&mut self.b, i64::from(p) - i64::from(self.rank));
    }
    fn tag(&mut self, t: i32) {
        put_i64(&mut self.b, i64::from(t));
    }
    fn dt(&mut self, d: Option<Datatype>) {
        self.u(d.map_or(0, |d| u64::from(d.0) + 1));
    }
    fn flops(&mut self, f: f64) {
        self.b.extend_from_slice(&f.to_bits().to_le_bytes());
    }
    fn counts(&mut self, v: &[u64]) {
        self.u(v.len() as u64);
        for &c in v {
            self.u(c);
        }
    }
    fn flag(&mut self, f: bool) {
        self.b.push(u8::from(f));
    }
}

/// Splits `action`, executed by world rank `rank` on communicator `comm` (0 = world) at call
/// site `callsite` (if recorded), into its signature and its volume.
pub fn split(action: &Action, rank: Rank, comm: u32, callsite: Option<u32>) -> Split {
    let mut e = Enc {
        b: Vec::with_capacity(16),
        rank,
    };
    let mut volume = None;
    match action {
        Action::Init { double_default } => {
            e.b.push(op::INIT);
            e.flag(*double_default);
        }
        Action::Finalize => e.b.push(op::FINALIZE),
        Action::CommNoop => e.b.push(op::COMM_NOOP),
        Action::Location => e.b.push(op::LOCATION),
        Action::CommDef { id, world_ranks } => {
            // Members as displacements from the caller: a row communicator of an SPMD code
            // has the same signature on every rank of the row.
            e.b.push(op::COMM_DEF);
            e.u(u64::from(*id));
            e.u(world_ranks.len() as u64);
            for &w in world_ranks.iter() {
                e.peer(w);
            }
        }
        Action::Compute { flops } => {
            e.b.push(op::COMPUTE);
            volume = Some(*flops);
        }
        Action::Sleep { secs } => {
            e.b.push(op::SLEEP);
            volume = Some(*secs);
        }
        Action::Send {
            dst,
            tag,
            count,
            dt,
            blocking,
        } => {
            e.b.push(op::SEND);
            e.peer(*dst);
            e.tag(*tag);
            e.u(*count);
            e.dt(*dt);
            e.flag(*blocking);
        }
        Action::Recv {
            src,
            tag,
            count,
            dt,
            blocking,
        } => {
            e.b.push(op::RECV);
            e.peer(*src);
            e.tag(*tag);
            e.u(match count {
                RecvCount::Probe => 0,
                RecvCount::FromSender => 1,
                RecvCount::Count(c) => c.saturating_add(2),
            });
            e.dt(*dt);
            e.flag(*blocking);
        }
        Action::Wait(key) | Action::Test(key) => {
            e.b.push(if matches!(action, Action::Wait(_)) {
                op::WAIT
            } else {
                op::TEST
            });
            match key {
                RequestKey::Oldest => e.flag(false),
                RequestKey::Key { src, dst, tag } => {
                    e.flag(true);
                    e.peer(*src);
                    e.peer(*dst);
                    e.tag(*tag);
                }
            }
        }
        Action::WaitAll => e.b.push(op::WAITALL),
        Action::SendRecv {
            send_count,
            dst,
            recv_count,
            src,
            send_dt,
            recv_dt,
        } => {
            e.b.push(op::SENDRECV);
            e.u(*send_count);
            e.peer(*dst);
            e.u(*recv_count);
            e.peer(*src);
            e.dt(*send_dt);
            e.dt(*recv_dt);
        }
        Action::Barrier => e.b.push(op::BARRIER),
        Action::Bcast { count, root, dt } => {
            e.b.push(op::BCAST);
            e.u(*count);
            e.u(u64::from(*root));
            e.dt(*dt);
        }
        Action::Reduce {
            count,
            flops,
            root,
            dt,
        } => {
            e.b.push(op::REDUCE);
            e.u(*count);
            e.flops(*flops);
            e.u(u64::from(*root));
            e.dt(*dt);
        }
        Action::AllReduce { count, flops, dt }
        | Action::Scan { count, flops, dt }
        | Action::ExScan { count, flops, dt } => {
            e.b.push(match action {
                Action::AllReduce { .. } => op::ALLREDUCE,
                Action::Scan { .. } => op::SCAN,
                _ => op::EXSCAN,
            });
            e.u(*count);
            e.flops(*flops);
            e.dt(*dt);
        }
        Action::AllToAll {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        }
        | Action::AllGather {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        } => {
            e.b.push(if matches!(action, Action::AllToAll { .. }) {
                op::ALLTOALL
            } else {
                op::ALLGATHER
            });
            e.u(*send_count);
            e.u(*recv_count);
            e.dt(*send_dt);
            e.dt(*recv_dt);
        }
        Action::AllToAllV {
            send_counts,
            recv_counts,
            send_dt,
            recv_dt,
        } => {
            e.b.push(op::ALLTOALLV);
            e.counts(send_counts);
            e.counts(recv_counts);
            e.dt(*send_dt);
            e.dt(*recv_dt);
        }
        Action::Gather {
            send_count,
            recv_count,
            root,
            send_dt,
            recv_dt,
        }
        | Action::Scatter {
            send_count,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            e.b.push(if matches!(action, Action::Gather { .. }) {
                op::GATHER
            } else {
                op::SCATTER
            });
            e.u(*send_count);
            e.u(*recv_count);
            e.u(u64::from(*root));
            e.dt(*send_dt);
            e.dt(*recv_dt);
        }
        Action::GatherV {
            send_count,
            recv_counts,
            root,
            send_dt,
            recv_dt,
        } => {
            e.b.push(op::GATHERV);
            e.u(*send_count);
            e.counts(recv_counts);
            e.u(u64::from(*root));
            e.dt(*send_dt);
            e.dt(*recv_dt);
        }
        Action::AllGatherV {
            send_count,
            recv_counts,
            send_dt,
            recv_dt,
            disps,
        } => {
            e.b.push(op::ALLGATHERV);
            e.u(*send_count);
            e.counts(recv_counts);
            e.dt(*send_dt);
            e.dt(*recv_dt);
            e.counts(disps);
        }
        Action::ScatterV {
            send_counts,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            e.b.push(op::SCATTERV);
            e.counts(send_counts);
            e.u(*recv_count);
            e.u(u64::from(*root));
            e.dt(*send_dt);
            e.dt(*recv_dt);
        }
        Action::ReduceScatter {
            recv_counts,
            flops,
            dt,
        } => {
            e.b.push(op::REDUCESCATTER);
            e.counts(recv_counts);
            e.flops(*flops);
            e.dt(*dt);
        }
    }
    e.u(u64::from(comm));
    if let Some(cs) = callsite {
        e.u(u64::from(cs));
    }
    Split {
        signature: e.b,
        volume,
    }
}

/// True if the signature's action takes a volume from the rank's volume stream.
pub fn takes_volume(signature: &[u8]) -> bool {
    matches!(signature.first(), Some(&op::COMPUTE) | Some(&op::SLEEP))
}

struct Dec<'a> {
    r: Reader<'a>,
    rank: Rank,
    nranks: u32,
}

impl Dec<'_> {
    fn u(&mut self, what: &str) -> Result<u64, GrammarError> {
        self.r.varint(what)
    }
    fn peer(&mut self, what: &str) -> Result<Rank, GrammarError> {
        let at = self.r.offset();
        let d = self.r.zigzag(what)?;
        let p = i64::from(self.rank).checked_add(d).unwrap_or(-1);
        if p < 0 || p >= i64::from(self.nranks) {
            return Err(crate::error::corrupt(
                at,
                format!(
                    "{what}: rank {} + displacement {d} is outside 0..{}",
                    self.rank, self.nranks
                ),
            ));
        }
        Ok(p as Rank)
    }
    fn root(&mut self) -> Result<Rank, GrammarError> {
        let at = self.r.offset();
        let v = self.u("root")?;
        if v >= u64::from(self.nranks) {
            return Err(crate::error::corrupt(
                at,
                format!("root {v} outside 0..{}", self.nranks),
            ));
        }
        Ok(v as Rank)
    }
    fn tag(&mut self) -> Result<i32, GrammarError> {
        let at = self.r.offset();
        let v = self.r.zigzag("tag")?;
        i32::try_from(v).map_err(|_| crate::error::corrupt(at, format!("tag {v} out of range")))
    }
    fn dt(&mut self) -> Result<Option<Datatype>, GrammarError> {
        let at = self.r.offset();
        match self.u("datatype")? {
            0 => Ok(None),
            v => u32::try_from(v - 1)
                .ok()
                .and_then(Datatype::from_id)
                .map(Some)
                .ok_or_else(|| crate::error::corrupt(at, format!("unknown datatype id {}", v - 1))),
        }
    }
    fn flops(&mut self) -> Result<f64, GrammarError> {
        Ok(f64::from_bits(self.r.u64_le("flops")?))
    }
    fn counts(&mut self) -> Result<Vec<u64>, GrammarError> {
        let n = self.r.count("count vector length", 1)?;
        (0..n).map(|_| self.u("count")).collect()
    }
    fn flag(&mut self) -> Result<bool, GrammarError> {
        let at = self.r.offset();
        match self.r.u8("flag")? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(crate::error::corrupt(
                at,
                format!("flag byte {v}, expected 0 or 1"),
            )),
        }
    }
}

/// Rebuilds the action of `signature` for world rank `rank` of `nranks`, with `volume` for
/// `compute`/`sleep`. Returns the action, its communicator id and its call site. `base` is the absolute file
/// offset of the signature's first byte (for error messages).
///
/// # Errors
/// [`GrammarError::Corrupt`] if the bytes are not a signature, a peer falls outside the world,
/// or a `compute`/`sleep` gets no volume.
pub fn rebuild(
    signature: &[u8],
    base: usize,
    rank: Rank,
    nranks: u32,
    volume: Option<f64>,
) -> Result<(Action, u32, Option<u32>), GrammarError> {
    let mut d = Dec {
        r: Reader::new(signature, base),
        rank,
        nranks,
    };
    let at = d.r.offset();
    let opcode = d.r.u8("opcode")?;
    let need_volume = || {
        volume
            .ok_or_else(|| crate::error::corrupt(at, "compute/sleep without a volume".to_string()))
    };
    let a = match opcode {
        op::INIT => Action::Init {
            double_default: d.flag()?,
        },
        op::FINALIZE => Action::Finalize,
        op::COMM_NOOP => Action::CommNoop,
        op::LOCATION => Action::Location,
        op::COMM_DEF => {
            let id = d.r.varint_u32("communicator id")?;
            let n = d.r.count("communicator size", 1)?;
            let world_ranks = (0..n)
                .map(|_| d.peer("communicator member"))
                .collect::<Result<Vec<_>, _>>()?;
            Action::CommDef {
                id,
                world_ranks: world_ranks.into(),
            }
        }
        op::COMPUTE => Action::Compute {
            flops: need_volume()?,
        },
        op::SLEEP => Action::Sleep {
            secs: need_volume()?,
        },
        op::SEND => Action::Send {
            dst: d.peer("dst")?,
            tag: d.tag()?,
            count: d.u("count")?,
            dt: d.dt()?,
            blocking: d.flag()?,
        },
        op::RECV => Action::Recv {
            src: d.peer("src")?,
            tag: d.tag()?,
            count: match d.u("count")? {
                0 => RecvCount::Probe,
                1 => RecvCount::FromSender,
                c => RecvCount::Count(c - 2),
            },
            dt: d.dt()?,
            blocking: d.flag()?,
        },
        op::WAIT | op::TEST => {
            let key = if d.flag()? {
                RequestKey::Key {
                    src: d.peer("request src")?,
                    dst: d.peer("request dst")?,
                    tag: d.tag()?,
                }
            } else {
                RequestKey::Oldest
            };
            if opcode == op::WAIT {
                Action::Wait(key)
            } else {
                Action::Test(key)
            }
        }
        op::WAITALL => Action::WaitAll,
        op::SENDRECV => Action::SendRecv {
            send_count: d.u("sendcount")?,
            dst: d.peer("dst")?,
            recv_count: d.u("recvcount")?,
            src: d.peer("src")?,
            send_dt: d.dt()?,
            recv_dt: d.dt()?,
        },
        op::BARRIER => Action::Barrier,
        op::BCAST => Action::Bcast {
            count: d.u("count")?,
            root: d.root()?,
            dt: d.dt()?,
        },
        op::REDUCE => Action::Reduce {
            count: d.u("count")?,
            flops: d.flops()?,
            root: d.root()?,
            dt: d.dt()?,
        },
        op::ALLREDUCE | op::SCAN | op::EXSCAN => {
            let (count, flops, dt) = (d.u("count")?, d.flops()?, d.dt()?);
            match opcode {
                op::ALLREDUCE => Action::AllReduce { count, flops, dt },
                op::SCAN => Action::Scan { count, flops, dt },
                _ => Action::ExScan { count, flops, dt },
            }
        }
        op::ALLTOALL | op::ALLGATHER => {
            let (send_count, recv_count) = (d.u("sendcount")?, d.u("recvcount")?);
            let (send_dt, recv_dt) = (d.dt()?, d.dt()?);
            if opcode == op::ALLTOALL {
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
        op::ALLTOALLV => Action::AllToAllV {
            send_counts: d.counts()?.into(),
            recv_counts: d.counts()?.into(),
            send_dt: d.dt()?,
            recv_dt: d.dt()?,
        },
        op::GATHER | op::SCATTER => {
            let (send_count, recv_count, root) = (d.u("sendcount")?, d.u("recvcount")?, d.root()?);
            let (send_dt, recv_dt) = (d.dt()?, d.dt()?);
            if opcode == op::GATHER {
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
        op::GATHERV => Action::GatherV {
            send_count: d.u("sendcount")?,
            recv_counts: d.counts()?.into(),
            root: d.root()?,
            send_dt: d.dt()?,
            recv_dt: d.dt()?,
        },
        op::ALLGATHERV => Action::AllGatherV {
            send_count: d.u("sendcount")?,
            recv_counts: d.counts()?.into(),
            send_dt: d.dt()?,
            recv_dt: d.dt()?,
            disps: d.counts()?.into(),
        },
        op::SCATTERV => Action::ScatterV {
            send_counts: d.counts()?.into(),
            recv_count: d.u("recvcount")?,
            root: d.root()?,
            send_dt: d.dt()?,
            recv_dt: d.dt()?,
        },
        op::REDUCESCATTER => Action::ReduceScatter {
            recv_counts: d.counts()?.into(),
            flops: d.flops()?,
            dt: d.dt()?,
        },
        other => return Err(crate::error::corrupt(at, format!("unknown opcode {other}"))),
    };
    let comm = d.r.varint_u32("communicator id")?;
    let callsite = if d.r.is_empty() {
        None
    } else {
        Some(d.r.varint_u32("call site id")?)
    };
    if !d.r.is_empty() {
        return Err(d
            .r
            .error("trailing bytes after the signature's call site id"));
    }
    Ok((a, comm, callsite))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spmd_neighbours_share_a_signature() {
        let send = |me: Rank| Action::Send {
            dst: me + 1,
            tag: 3,
            count: 1000,
            dt: Some(Datatype::DOUBLE),
            blocking: false,
        };
        let a = split(&send(4), 4, 0, None);
        let b = split(&send(9), 9, 0, None);
        assert_eq!(a, b);
        // opcode, +1 zigzag = 2, tag 3 zigzag = 6, 1000 = [0xe8, 0x07], dt 0 + 1, flag 0, comm 0.
        assert_eq!(a.signature, vec![6, 2, 6, 0xe8, 0x07, 1, 0, 0]);
        let (back, comm, cs) = rebuild(&a.signature, 0, 9, 16, None).unwrap();
        assert_eq!((back, comm, cs), (send(9), 0, None));
        // A call site follows the communicator: same call, two sites, two signatures.
        let s7 = split(&send(4), 4, 0, Some(7));
        let s300 = split(&send(4), 4, 0, Some(300));
        assert_eq!(s7.signature, vec![6, 2, 6, 0xe8, 0x07, 1, 0, 0, 7]);
        assert_eq!(
            s300.signature,
            vec![6, 2, 6, 0xe8, 0x07, 1, 0, 0, 0xac, 0x02]
        );
        let (back, comm, cs) = rebuild(&s300.signature, 0, 9, 16, None).unwrap();
        assert_eq!((back, comm, cs), (send(9), 0, Some(300)));
        let mut extra = s7.signature.clone();
        extra.push(1);
        let e = rebuild(&extra, 0, 9, 16, None).unwrap_err().to_string();
        assert!(
            e.contains("trailing bytes after the signature's call site id"),
            "{e}"
        );
        // Rank 15's +1 neighbour does not exist.
        let e = rebuild(&a.signature, 40, 15, 16, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("byte 41: dst: rank 15 + displacement 1 is outside 0..16"),
            "{e}"
        );
    }

    #[test]
    fn compute_volume_is_not_in_the_signature() {
        let a = split(&Action::Compute { flops: 1e6 }, 0, 0, None);
        let b = split(&Action::Compute { flops: 2.5e9 }, 3, 0, None);
        assert_eq!(a.signature, b.signature);
        assert_eq!((a.volume, b.volume), (Some(1e6), Some(2.5e9)));
        assert!(takes_volume(&a.signature));
    }
}
