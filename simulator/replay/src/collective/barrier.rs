//! `MPI_Barrier` (`src/smpi/colls/barrier/*.cpp`). Every message is 0 bytes of `MPI_BYTE` with
//! tag [`tags::BARRIER`](super::tags::BARRIER).
//!
//! Default (`barrier__default`): `ompi_basic_linear`.

use super::sched::{algo_names, check_comm, pof2_floor, Sched};
use super::tags::BARRIER as TAG;
use super::{CollectiveConfig, CollectiveError, Op};

/// `smpi/barrier` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BarrierAlgo {
    /// `barrier__default` = [`BarrierAlgo::OmpiBasicLinear`].
    #[default]
    Default,
    /// OpenMPI's decision table on the communicator size (`barrier__ompi`).
    Ompi,
    /// Non-roots send to 0 then receive from 0; 0 gathers then releases.
    OmpiBasicLinear,
    /// One `sendrecv` between ranks 0 and 1 (2 ranks only).
    OmpiTwoProcs,
    /// Up and down a binary tree of blocking sends/receives.
    OmpiTree,
    /// `sendrecv` with `rank ± 2^k` for k < ⌈log2 n⌉.
    OmpiBruck,
    /// Recursive doubling with a pre/post step for the ranks beyond the largest power of two.
    OmpiRecursiveDoubling,
    /// Two rounds around a ring of blocking sends.
    OmpiDoubleRing,
    /// `barrier__mpich` = [`BarrierAlgo::OmpiBruck`].
    Mpich,
    /// MVAPICH2's pairwise exchange.
    Mvapich2Pair,
}

algo_names!(BarrierAlgo {
    Default => "default",
    Ompi => "ompi",
    OmpiBasicLinear => "ompi_basic_linear",
    OmpiTwoProcs => "ompi_two_procs",
    OmpiTree => "ompi_tree",
    OmpiBruck => "ompi_bruck",
    OmpiRecursiveDoubling => "ompi_recursivedoubling",
    OmpiDoubleRing => "ompi_doublering",
    Mpich => "mpich",
    Mvapich2Pair => "mvapich2_pair",
});

/// Appends rank `rank`'s barrier schedule (communicator of `size` ranks) to `out`.
pub fn barrier(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    let mut s = Sched::new(rank, size, out);
    run(cfg.barrier, &mut s)?;
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::barrier` as called from inside other algorithms.
pub(crate) fn run(algo: BarrierAlgo, s: &mut Sched) -> Result<(), CollectiveError> {
    match algo {
        BarrierAlgo::Default | BarrierAlgo::OmpiBasicLinear => ompi_basic_linear(s),
        BarrierAlgo::Ompi => ompi(s)?,
        BarrierAlgo::OmpiTwoProcs => ompi_two_procs(s)?,
        BarrierAlgo::OmpiTree => ompi_tree(s),
        BarrierAlgo::OmpiBruck | BarrierAlgo::Mpich => ompi_bruck(s),
        BarrierAlgo::OmpiRecursiveDoubling => ompi_recursivedoubling(s),
        BarrierAlgo::OmpiDoubleRing => ompi_doublering(s),
        BarrierAlgo::Mvapich2Pair => mvapich2_pair(s),
    }
    Ok(())
}

/// `barrier__ompi`: the decision is on the communicator size only.
fn ompi(s: &mut Sched) -> Result<(), CollectiveError> {
    let n = s.size;
    match n {
        _ if n < 4 => ompi_recursivedoubling(s),
        _ if n < 8 => ompi_basic_linear(s),
        _ if n < 64 => ompi_recursivedoubling(s),
        _ if n < 256 => ompi_bruck(s),
        _ if n < 512 => ompi_tree(s),
        _ if n < 1024 => ompi_bruck(s),
        _ if n < 4096 => ompi_tree(s),
        _ => ompi_bruck(s),
    }
    Ok(())
}

/// `barrier__ompi_basic_linear` (barrier-ompi.cpp): non-roots `send` then `recv` 0 bytes with
/// rank 0; rank 0 `irecv`s from 1..n, waits, `isend`s to 1..n, waits.
fn ompi_basic_linear(s: &mut Sched) {
    if s.rank > 0 {
        s.send(0, 0, TAG);
        s.recv(0, 0, TAG);
    } else {
        for i in 1..s.size {
            s.irecv(i, 0, TAG);
        }
        s.waitall();
        for i in 1..s.size {
            s.isend(i, 0, TAG);
        }
        s.waitall();
    }
}

/// `barrier__ompi_two_procs`: one `sendrecv` with `(rank + 1) & 1`. SimGrid does not check the
/// size; anything but 2 ranks hangs or crashes there, so it is refused here.
fn ompi_two_procs(s: &mut Sched) -> Result<(), CollectiveError> {
    if s.size != 2 {
        return Err(CollectiveError::Unsupported {
            collective: "barrier",
            algo: "ompi_two_procs",
            reason: format!("needs exactly 2 ranks, the communicator has {}", s.size),
        });
    }
    let remote = (s.rank + 1) & 1;
    s.sendrecv(remote, 0, remote, 0, TAG);
    Ok(())
}

/// `barrier__ompi_tree`: fan-in then fan-out along a binary tree of blocking messages.
fn ompi_tree(s: &mut Sched) {
    let (rank, size) = (s.rank, s.size);
    let mut depth = 1u32;
    while depth < size {
        depth <<= 1;
    }
    let mut jump = 1;
    while jump < depth {
        let partner = rank ^ jump;
        if partner & (jump - 1) == 0 && partner < size {
            if partner > rank {
                s.recv(partner, 0, TAG);
            } else if partner < rank {
                s.send(partner, 0, TAG);
            }
        }
        jump <<= 1;
    }
    let mut jump = depth >> 1;
    while jump > 0 {
        let partner = rank ^ jump;
        if partner & (jump - 1) == 0 && partner < size {
            if partner > rank {
                s.send(partner, 0, TAG);
            } else if partner < rank {
                s.recv(partner, 0, TAG);
            }
        }
        jump >>= 1;
    }
}

/// `barrier__ompi_bruck`: `sendrecv(to rank + d, from rank - d)` for d = 1, 2, 4, … < n.
fn ompi_bruck(s: &mut Sched) {
    let mut distance = 1u64;
    while distance < u64::from(s.size) {
        let from = s.minus(distance);
        let to = s.plus(distance);
        s.sendrecv(to, 0, from, 0, TAG);
        distance <<= 1;
    }
}

/// `barrier__ompi_recursivedoubling`.
fn ompi_recursivedoubling(s: &mut Sched) {
    let (rank, size) = (s.rank, s.size);
    let adjsize = pof2_floor(size);
    if adjsize != size {
        if rank >= adjsize {
            let remote = rank - adjsize;
            s.sendrecv(remote, 0, remote, 0, TAG);
        } else if rank < size - adjsize {
            s.recv(rank + adjsize, 0, TAG);
        }
    }
    if rank < adjsize {
        let mut mask = 1;
        while mask < adjsize {
            let remote = rank ^ mask;
            mask <<= 1;
            if remote >= adjsize {
                continue;
            }
            s.sendrecv(remote, 0, remote, 0, TAG);
        }
    }
    if adjsize != size && rank < size - adjsize {
        s.send(rank + adjsize, 0, TAG);
    }
}

/// `barrier__ompi_doublering`: a token goes twice around the ring 0 → 1 → … → n-1 → 0. With
/// one rank, rank 0 sends to and receives from itself, as in SimGrid.
fn ompi_doublering(s: &mut Sched) {
    let left = s.minus(1);
    let right = s.plus(1);
    for _round in 0..2 {
        if s.rank > 0 {
            s.recv(left, 0, TAG);
        }
        s.send(right, 0, TAG);
        if s.rank == 0 {
            s.recv(left, 0, TAG);
        }
    }
}

/// `barrier__mvapich2_pair`.
fn mvapich2_pair(s: &mut Sched) {
    let (rank, size) = (s.rank, s.size);
    if size == 1 {
        return;
    }
    let n2_prev = pof2_floor(size);
    let surfeit = size - n2_prev;
    if rank < n2_prev {
        if rank < surfeit {
            s.recv(n2_prev + rank, 0, TAG);
        }
        let mut d = 1;
        while d < n2_prev {
            let dst = rank ^ d;
            s.sendrecv(dst, 0, dst, 0, TAG);
            d <<= 1;
        }
        if rank < surfeit {
            s.send(n2_prev + rank, 0, TAG);
        }
    } else {
        let src = rank - n2_prev;
        s.sendrecv(src, 0, src, 0, TAG);
    }
}
