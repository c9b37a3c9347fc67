//! What a time-independent action is as an MPI call, for profiles (mpisee's view, `001_*` §II):
//! the operation's MPI name and the bytes it sends and receives. The tracer's measured profiles
//! and the replay's simulated ones both take their bytes from here, so they agree by
//! construction.
//!
//! Bytes follow `timeless_profile::volume`: point-to-point sends count their message, receives
//! the size the trace states (a receive without a count, which takes the sender's size, counts
//! 0), collectives the rank's share of mpisee's lower bound (`001_*` Appendix A). Completions
//! (`wait`, `test`, `waitall`) carry no bytes. Example: `bcast 100` on 4 ranks: the root
//! records 0 bytes, each other rank 100.

use timeless_trace::{Action, Datatype, RecvCount};

use crate::volume::{contribution, Collective};

/// An action as an MPI call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallDesc {
    /// MPI name (`MPI_Isend`).
    pub op: &'static str,
    /// Bytes sent, or the collective volume share.
    pub bytes_sent: u64,
    /// Bytes received (point-to-point).
    pub bytes_recv: u64,
}

/// The call `action` stands for, run by rank `me` of a communicator of `size` members whose
/// counts without a datatype are in `default_dt` (the rank's `init` decides: `MPI_BYTE`, or
/// `MPI_DOUBLE` with an argument); `root_is_me` says whether a rooted collective's root is this
/// rank. `None` for actions that are not MPI communication (compute, sleep, init, ...).
pub fn describe(
    action: &Action,
    default_dt: Datatype,
    me: u32,
    size: u32,
    root_is_me: bool,
) -> Option<CallDesc> {
    let st = Bytes(default_dt);
    let call = |op, bytes_sent, bytes_recv| {
        Some(CallDesc {
            op,
            bytes_sent,
            bytes_recv,
        })
    };
    let coll = |op, c: Collective<'_>| call(op, contribution(c), 0);
    match action {
        Action::Init { .. }
        | Action::Finalize
        | Action::CommNoop
        | Action::Location
        | Action::CommDef { .. }
        | Action::Compute { .. }
        | Action::Sleep { .. } => None,
        Action::Send {
            count,
            dt,
            blocking,
            ..
        } => call(
            if *blocking { "MPI_Send" } else { "MPI_Isend" },
            st.bytes(*count, *dt),
            0,
        ),
        Action::Recv {
            count,
            dt,
            blocking,
            ..
        } => {
            let bytes = match count {
                RecvCount::Count(c) => st.bytes(*c, *dt),
                RecvCount::Probe | RecvCount::FromSender => 0,
            };
            call(if *blocking { "MPI_Recv" } else { "MPI_Irecv" }, 0, bytes)
        }
        Action::Wait(_) => call("MPI_Wait", 0, 0),
        Action::Test(_) => call("MPI_Test", 0, 0),
        Action::WaitAll => call("MPI_Waitall", 0, 0),
        Action::SendRecv {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
            ..
        } => call(
            "MPI_Sendrecv",
            st.bytes(*send_count, *send_dt),
            st.bytes(*recv_count, *recv_dt),
        ),
        Action::Barrier => coll("MPI_Barrier", Collective::Barrier),
        Action::Bcast { count, dt, .. } => coll(
            "MPI_Bcast",
            Collective::Bcast {
                m: st.bytes(*count, *dt),
                root: root_is_me,
            },
        ),
        Action::Reduce { count, dt, .. } => coll(
            "MPI_Reduce",
            Collective::Block {
                m: st.bytes(*count, *dt),
            },
        ),
        Action::AllReduce { count, dt, .. } => coll(
            "MPI_Allreduce",
            Collective::Block {
                m: st.bytes(*count, *dt),
            },
        ),
        Action::AllToAll {
            send_count,
            send_dt,
            ..
        } => coll(
            "MPI_Alltoall",
            Collective::AllToAll {
                m: st.bytes(*send_count, *send_dt),
                p: size,
            },
        ),
        Action::AllToAllV {
            send_counts,
            send_dt,
            ..
        } => {
            let sends: Vec<u64> = send_counts.iter().map(|&c| st.bytes(c, *send_dt)).collect();
            coll("MPI_Alltoallv", Collective::PerPeer { sends: &sends })
        }
        Action::Gather {
            send_count,
            send_dt,
            ..
        } => coll(
            "MPI_Gather",
            Collective::Block {
                m: st.bytes(*send_count, *send_dt),
            },
        ),
        Action::AllGather {
            send_count,
            send_dt,
            ..
        } => coll(
            "MPI_Allgather",
            Collective::Block {
                m: st.bytes(*send_count, *send_dt),
            },
        ),
        Action::GatherV {
            send_count,
            send_dt,
            ..
        } => coll(
            "MPI_Gatherv",
            Collective::OwnBlock {
                m_i: st.bytes(*send_count, *send_dt),
            },
        ),
        Action::AllGatherV {
            send_count,
            send_dt,
            ..
        } => coll(
            "MPI_Allgatherv",
            Collective::OwnBlock {
                m_i: st.bytes(*send_count, *send_dt),
            },
        ),
        Action::Scatter {
            recv_count,
            recv_dt,
            ..
        } => coll(
            "MPI_Scatter",
            Collective::Block {
                m: st.bytes(*recv_count, *recv_dt),
            },
        ),
        Action::ScatterV {
            recv_count,
            recv_dt,
            ..
        } => coll(
            "MPI_Scatterv",
            Collective::OwnBlock {
                m_i: st.bytes(*recv_count, *recv_dt),
            },
        ),
        Action::ReduceScatter {
            recv_counts, dt, ..
        } => coll(
            "MPI_Reduce_scatter",
            Collective::OwnBlock {
                m_i: recv_counts
                    .get(me as usize)
                    .map_or(0, |&c| st.bytes(c, *dt)),
            },
        ),
        Action::Scan { count, dt, .. } => coll(
            "MPI_Scan",
            Collective::Scan {
                m: st.bytes(*count, *dt),
                rank: me,
            },
        ),
        Action::ExScan { count, dt, .. } => coll(
            "MPI_Exscan",
            Collective::Scan {
                m: st.bytes(*count, *dt),
                rank: me,
            },
        ),
    }
}

/// Bytes of element counts, with the rank's default datatype.
struct Bytes(Datatype);

impl Bytes {
    fn bytes(&self, count: u64, dt: Option<Datatype>) -> u64 {
        count.saturating_mul(u64::from(dt.unwrap_or(self.0).size_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_by_hand() {
        let byte = Datatype::BYTE;
        let send = Action::Send {
            dst: 1,
            tag: 0,
            count: 40_000,
            dt: None,
            blocking: false,
        };
        assert_eq!(
            describe(&send, byte, 0, 4, false),
            Some(CallDesc {
                op: "MPI_Isend",
                bytes_sent: 40_000,
                bytes_recv: 0
            })
        );
        // 10 doubles by default after `init 1`: 80 bytes.
        let recv = Action::Recv {
            src: 0,
            tag: 0,
            count: RecvCount::Count(10),
            dt: None,
            blocking: true,
        };
        assert_eq!(
            describe(&recv, Datatype::DOUBLE, 1, 4, false).map(|c| (c.op, c.bytes_recv)),
            Some(("MPI_Recv", 80))
        );
        // alltoall of 100 bytes per peer on 4 ranks: 400 (Appendix A: p p m over the ranks).
        let a2a = Action::AllToAll {
            send_count: 100,
            recv_count: 100,
            send_dt: None,
            recv_dt: None,
        };
        assert_eq!(
            describe(&a2a, byte, 2, 4, false).map(|c| c.bytes_sent),
            Some(400)
        );
        // bcast: the root records 0.
        let bcast = Action::Bcast {
            count: 100,
            root: 0,
            dt: None,
        };
        assert_eq!(
            describe(&bcast, byte, 0, 4, true).map(|c| c.bytes_sent),
            Some(0)
        );
        assert_eq!(
            describe(&bcast, byte, 1, 4, false).map(|c| c.bytes_sent),
            Some(100)
        );
        assert_eq!(
            describe(&Action::Compute { flops: 1.0 }, byte, 0, 4, false),
            None
        );
    }
}
