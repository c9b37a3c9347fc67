//! `MPI_Alltoallv` (`src/smpi/colls/alltoallv/*.cpp`). Tag
//! [`tags::ALLTOALLV`](super::tags::ALLTOALLV).
//!
//! Default (`alltoallv__default` = `colls::ialltoallv` + wait): `irecv` from every other rank
//! in increasing order, then `isend` to every other rank in increasing order, then one wait.
//! The displacements never matter.
//!
//! As for `alltoall`, the `pair*` algorithms fall back to ring order on non-power-of-two sizes
//! where SimGrid throws.

use super::alltoall::{steps, Order, Sync};
use super::sched::{algo_names, check_comm, check_len, is_pow2, Sched};
use super::tags::ALLTOALLV as TAG;
use super::{CollectiveConfig, CollectiveError, Op, VarPayload};

/// `smpi/alltoallv` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlltoallvAlgo {
    /// `alltoallv__default`: linear, all requests posted at once.
    #[default]
    Default,
    /// Rounds of at most 4 `irecv`/`isend` pairs, each round waited (MPICH's throttled linear).
    Bruck,
    /// Step i: `sendrecv` with `rank ^ i` (power-of-two n; else ring order).
    Pair,
    /// [`AlltoallvAlgo::Pair`] with a 1-byte `sendrecv` with the next partner after each step.
    PairLightBarrier,
    /// [`AlltoallvAlgo::Pair`] with a configured barrier before each step.
    PairMpiBarrier,
    /// [`AlltoallvAlgo::Pair`] after one configured barrier.
    PairOneBarrier,
    /// `rank ^ i` on power-of-two sizes, else send to rank+i / receive from rank-i.
    Ring,
    /// Ring order with a 1-byte `sendrecv` after each step.
    RingLightBarrier,
    /// Ring order with a configured barrier before each step.
    RingMpiBarrier,
    /// Ring order after one configured barrier.
    RingOneBarrier,
    /// OpenMPI's decision on the size: basic linear or pairwise.
    Ompi,
    /// `alltoallv__mpich` = [`AlltoallvAlgo::Bruck`].
    Mpich,
    /// OpenMPI's basic linear: same messages as the default.
    OmpiBasicLinear,
}

algo_names!(AlltoallvAlgo {
    Default => "default",
    Bruck => "bruck",
    Pair => "pair",
    PairLightBarrier => "pair_light_barrier",
    PairMpiBarrier => "pair_mpi_barrier",
    PairOneBarrier => "pair_one_barrier",
    Ring => "ring",
    RingLightBarrier => "ring_light_barrier",
    RingMpiBarrier => "ring_mpi_barrier",
    RingOneBarrier => "ring_one_barrier",
    Ompi => "ompi",
    Mpich => "mpich",
    OmpiBasicLinear => "ompi_basic_linear",
});

/// Appends rank `rank`'s alltoallv schedule: `send.counts[i]` elements go to rank i and
/// `recv.counts[i]` are expected from it.
pub fn alltoallv(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    send: VarPayload<'_>,
    recv: VarPayload<'_>,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    check_len("alltoallv sendcounts", send.counts.len(), size)?;
    check_len("alltoallv recvcounts", recv.counts.len(), size)?;
    let mut s = Sched::new(rank, size, out);
    run(cfg, &mut s, send, recv)?;
    debug_assert!(s.is_settled());
    Ok(())
}

fn run(
    cfg: &CollectiveConfig,
    s: &mut Sched,
    send: VarPayload<'_>,
    recv: VarPayload<'_>,
) -> Result<(), CollectiveError> {
    let n = s.size;
    let algo = match cfg.alltoallv {
        AlltoallvAlgo::Ompi => match n {
            _ if n < 4 => AlltoallvAlgo::Pair,
            _ if n < 64 => AlltoallvAlgo::OmpiBasicLinear,
            _ if n < 128 => AlltoallvAlgo::Pair,
            _ if n < 256 => AlltoallvAlgo::OmpiBasicLinear,
            _ if n < 1024 => AlltoallvAlgo::Pair,
            _ => AlltoallvAlgo::OmpiBasicLinear,
        },
        AlltoallvAlgo::Mpich => AlltoallvAlgo::Bruck,
        other => other,
    };
    let pow2 = is_pow2(n);
    let sb = |dst: u32| send.bytes(dst);
    let rb = |src: u32| recv.bytes(src);
    let xor_or_ring = if pow2 { Order::Xor } else { Order::Ring };
    match algo {
        AlltoallvAlgo::Default | AlltoallvAlgo::OmpiBasicLinear => linear(s, send, recv),
        AlltoallvAlgo::Bruck => bruck(s, send, recv),
        AlltoallvAlgo::Pair | AlltoallvAlgo::Ring => {
            steps(s, &sb, &rb, TAG, xor_or_ring, Sync::None, cfg)?
        }
        AlltoallvAlgo::PairLightBarrier => steps(s, &sb, &rb, TAG, xor_or_ring, Sync::Light, cfg)?,
        AlltoallvAlgo::PairMpiBarrier => steps(s, &sb, &rb, TAG, xor_or_ring, Sync::EachStep, cfg)?,
        AlltoallvAlgo::PairOneBarrier => steps(s, &sb, &rb, TAG, xor_or_ring, Sync::Once, cfg)?,
        AlltoallvAlgo::RingLightBarrier => steps(s, &sb, &rb, TAG, Order::Ring, Sync::Light, cfg)?,
        AlltoallvAlgo::RingMpiBarrier => steps(s, &sb, &rb, TAG, Order::Ring, Sync::EachStep, cfg)?,
        AlltoallvAlgo::RingOneBarrier => steps(s, &sb, &rb, TAG, Order::Ring, Sync::Once, cfg)?,
        AlltoallvAlgo::Ompi | AlltoallvAlgo::Mpich => unreachable!("selectors are resolved above"),
    }
    Ok(())
}

/// `colls::ialltoallv` + wait / `alltoallv__ompi_basic_linear`.
fn linear(s: &mut Sched, send: VarPayload<'_>, recv: VarPayload<'_>) {
    for i in s.others() {
        s.irecv(i, recv.bytes(i), TAG);
    }
    for i in s.others() {
        s.isend(i, send.bytes(i), TAG);
    }
    s.waitall();
}

/// `alltoallv__bruck` (despite its name, MPICH's throttled linear exchange): rounds of 4 peers;
/// `irecv` from rank+i+ii, `isend` to rank-i-ii (self skipped), wait.
fn bruck(s: &mut Sched, send: VarPayload<'_>, recv: VarPayload<'_>) {
    let n = u64::from(s.size);
    if n == 1 {
        return;
    }
    let bblock = 4;
    let mut ii = 0;
    while ii < n {
        let ss = (n - ii).min(bblock);
        for i in 0..ss {
            let src = s.plus(i + ii);
            if src != s.rank {
                s.irecv(src, recv.bytes(src), TAG);
            }
        }
        for i in 0..ss {
            let dst = s.minus(i + ii);
            if dst != s.rank {
                s.isend(dst, send.bytes(dst), TAG);
            }
        }
        s.waitall();
        ii += bblock;
    }
}
