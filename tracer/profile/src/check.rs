//! The sanity check of `001_*` §II: on every communicator, point-to-point bytes sent equal
//! bytes received, and send calls equal receive calls.
//!
//! Example: on `W`, rank 0 `MPI_Send`s 100 bytes twice and rank 1 `MPI_Recv`s them with two
//! calls: sends 2 calls / 200 bytes, receives 2 calls / 200 bytes, no violation. A receive
//! is counted at the size of the message it got (not its buffer's), so only unmatched
//! messages (a program that ends with messages in flight, a paused recording) violate it.

use std::collections::BTreeMap;

use crate::model::Profile;
use crate::op::{class, p2p_calls, OpClass};

/// One communicator whose point-to-point traffic does not balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The communicator.
    pub comm: String,
    /// Send calls (`MPI_Sendrecv` counts one).
    pub send_calls: u64,
    /// Receive calls.
    pub recv_calls: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received.
    pub bytes_recv: u64,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: point-to-point sends {} calls / {} bytes, receives {} calls / {} bytes",
            self.comm, self.send_calls, self.bytes_sent, self.recv_calls, self.bytes_recv
        )
    }
}

/// Communicators where point-to-point sends and receives differ, in profile order.
pub fn p2p_balance(p: &Profile) -> Vec<Violation> {
    let mut acc: BTreeMap<&str, [u64; 4]> = BTreeMap::new();
    for r in &p.rows {
        if !matches!(
            class(&r.op),
            OpClass::Send | OpClass::Recv | OpClass::SendRecv
        ) {
            continue;
        }
        let (s, v) = p2p_calls(&r.op);
        let a = acc.entry(r.comm.as_str()).or_default();
        a[0] += s * r.stats.calls;
        a[1] += v * r.stats.calls;
        a[2] += r.stats.bytes_sent;
        a[3] += r.stats.bytes_recv;
    }
    p.comms
        .iter()
        .filter_map(|c| {
            let a = acc.get(c.name.as_str())?;
            (a[0] != a[1] || a[2] != a[3]).then(|| Violation {
                comm: c.name.clone(),
                send_calls: a[0],
                recv_calls: a[1],
                bytes_sent: a[2],
                bytes_recv: a[3],
            })
        })
        .collect()
}
