//! MPI operations and their classes.
//!
//! Rows name operations as MPI does (`MPI_Send`, `MPI_Allreduce`, ...). The class says how a
//! row's bytes are read: a point-to-point send counts `bytes_sent`, a receive `bytes_recv`,
//! `MPI_Sendrecv` both; a collective's `bytes_sent` is the rank's contribution to mpisee's lower
//! bound ([`crate::volume`]); completions (wait/test) carry time only.

use serde::Serialize;

/// How an operation's calls and bytes are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpClass {
    /// Point-to-point send (blocking or not): one send per call, `bytes_sent`.
    Send,
    /// Point-to-point receive: one receive per call, `bytes_recv`.
    Recv,
    /// `MPI_Sendrecv` (and `_replace`): one send and one receive per call.
    SendRecv,
    /// Collective (blocking, non-blocking or neighbourhood): `bytes_sent` is the volume.
    Collective,
    /// Wait, test, probe: time attributed to a request's communicator.
    Completion,
    /// Communicator creation and anything else.
    Other,
}

const SENDS: &[&str] = &[
    "MPI_Send",
    "MPI_Isend",
    "MPI_Ssend",
    "MPI_Issend",
    "MPI_Bsend",
    "MPI_Ibsend",
    "MPI_Rsend",
    "MPI_Irsend",
];
const RECVS: &[&str] = &["MPI_Recv", "MPI_Irecv", "MPI_Mrecv", "MPI_Imrecv"];
const SENDRECVS: &[&str] = &["MPI_Sendrecv", "MPI_Sendrecv_replace"];
const COMPLETIONS: &[&str] = &[
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Waitany",
    "MPI_Waitsome",
    "MPI_Test",
    "MPI_Testall",
    "MPI_Testany",
    "MPI_Testsome",
    "MPI_Probe",
    "MPI_Iprobe",
    "MPI_Mprobe",
    "MPI_Improbe",
];
const COLLECTIVES: &[&str] = &[
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Reduce",
    "MPI_Allreduce",
    "MPI_Gather",
    "MPI_Gatherv",
    "MPI_Scatter",
    "MPI_Scatterv",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Alltoallw",
    "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block",
    "MPI_Scan",
    "MPI_Exscan",
    "MPI_Neighbor_allgather",
    "MPI_Neighbor_allgatherv",
    "MPI_Neighbor_alltoall",
    "MPI_Neighbor_alltoallv",
    "MPI_Neighbor_alltoallw",
];

/// The class of operation `op` (an MPI name; `MPI_I<collective>` counts as the collective).
pub fn class(op: &str) -> OpClass {
    if SENDS.contains(&op) {
        OpClass::Send
    } else if RECVS.contains(&op) {
        OpClass::Recv
    } else if SENDRECVS.contains(&op) {
        OpClass::SendRecv
    } else if COMPLETIONS.contains(&op) {
        OpClass::Completion
    } else if COLLECTIVES.contains(&op) || nonblocking_collective(op) {
        OpClass::Collective
    } else {
        OpClass::Other
    }
}

fn nonblocking_collective(op: &str) -> bool {
    op.strip_prefix("MPI_I").is_some_and(|rest| {
        let mut c = rest.chars();
        c.next().is_some_and(|f| {
            let blocking = format!("MPI_{}{}", f.to_ascii_uppercase(), c.as_str());
            COLLECTIVES.contains(&blocking.as_str())
        })
    })
}

/// Calls counted as sends and as receives by one call of `op` (for the sanity check of
/// `001_*` §II: sends = receives per communicator).
pub fn p2p_calls(op: &str) -> (u64, u64) {
    match class(op) {
        OpClass::Send => (1, 0),
        OpClass::Recv => (0, 1),
        OpClass::SendRecv => (1, 1),
        _ => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class("MPI_Isend"), OpClass::Send);
        assert_eq!(class("MPI_Irecv"), OpClass::Recv);
        assert_eq!(class("MPI_Sendrecv"), OpClass::SendRecv);
        assert_eq!(class("MPI_Waitall"), OpClass::Completion);
        assert_eq!(class("MPI_Allreduce"), OpClass::Collective);
        assert_eq!(class("MPI_Iallreduce"), OpClass::Collective);
        assert_eq!(class("MPI_Ineighbor_alltoallv"), OpClass::Collective);
        assert_eq!(class("MPI_Comm_split"), OpClass::Other);
        assert_eq!(class("MPI_Init"), OpClass::Other);
        assert_eq!(p2p_calls("MPI_Sendrecv"), (1, 1));
        assert_eq!(p2p_calls("MPI_Bcast"), (0, 0));
    }
}
