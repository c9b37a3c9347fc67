//! `MPI_Scan` and `MPI_Exscan` (`colls::scan` / `colls::exscan` in `smpi_coll.cpp`; not
//! configurable). Tag [`tags::SCAN`](super::tags::SCAN) (the literal -888).
//!
//! Both post an `irecv` from every lower rank (increasing order) and an `isend` to every higher
//! rank (increasing order), start them all, then — since replay's `MPI_OP_NULL` takes the
//! non-commutative branch — `Request::wait` on each request in posting order.
//!
//! Waiting on each request in order ([`Op::WaitEach`]) instead of `waitall` differs in when the
//! `smpi/or` overhead sleeps happen: in posting order rather than completion order.
//!
//! The `flops` of the trace action are left to the caller.

use super::sched::{check_comm, Sched};
use super::tags::SCAN as TAG;
use super::{CollectiveConfig, CollectiveError, Op, Payload};

/// Appends rank `rank`'s `MPI_Scan` schedule for `data` (without the `flops`).
pub fn scan(
    _cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    data: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    let mut s = Sched::new(rank, size, out);
    linear(&mut s, data.bytes());
    Ok(())
}

/// Appends rank `rank`'s `MPI_Exscan` schedule for `data` (without the `flops`); the same
/// messages as [`scan`].
pub fn exscan(
    _cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    data: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    let mut s = Sched::new(rank, size, out);
    linear(&mut s, data.bytes());
    Ok(())
}

fn linear(s: &mut Sched, bytes: u64) {
    for other in 0..s.rank {
        s.irecv(other, bytes, TAG);
    }
    for other in s.rank + 1..s.size {
        s.isend(other, bytes, TAG);
    }
    s.wait_each();
}
