//! `MPI_Alltoall` (`src/smpi/colls/alltoall/*.cpp`, `smpi_openmpi_selector.cpp`). Tag
//! [`tags::ALLTOALL`](super::tags::ALLTOALL) (the `*_mpi_barrier` / `*_one_barrier` variants
//! add barriers with their own tag).
//!
//! Default (`alltoall__default`): `alltoall__ompi`, OpenMPI's decision table on the communicator
//! size and `sendcount × size(sendtype)` (see [`ompi_choice`]).
//!
//! Difference from SimGrid: the `pair*` algorithms throw in SimGrid 3.32 on a communicator whose
//! size is not a power of two (and the default can pick `pair`: the replay then aborts). Here
//! they fall back to the same exchange in ring order (step i: send to rank+i, receive from
//! rank-i), i.e. the matching `ring*` algorithm, which is correct for any size.

use super::rdb::Rdb;
use super::sched::{algo_names, check_comm, is_pow2, units, Sched};
use super::tags::ALLTOALL as TAG;
use super::{barrier, CollectiveConfig, CollectiveError, Op, Payload};

/// `smpi/alltoall` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlltoallAlgo {
    /// `alltoall__default` = [`AlltoallAlgo::Ompi`].
    #[default]
    Default,
    /// Post every receive, then every send, then wait.
    BasicLinear,
    /// Modified Bruck: ⌈log2 n⌉ `sendrecv`s of packed blocks with rank ± 2^k.
    Bruck,
    /// Step i: `sendrecv` with `rank ^ i` (power-of-two n; else as [`AlltoallAlgo::Ring`]).
    Pair,
    /// [`AlltoallAlgo::Pair`] with a 1-byte `sendrecv` with the next partner after each step.
    PairLightBarrier,
    /// [`AlltoallAlgo::Pair`] with a configured barrier before each step.
    PairMpiBarrier,
    /// [`AlltoallAlgo::Pair`] after one configured barrier.
    PairOneBarrier,
    /// Recursive doubling over whole gathered buffers (MPICH-style, with the non-power-of-two
    /// fix-up).
    Rdb,
    /// Step i: `sendrecv` to rank+i, from rank-i.
    Ring,
    /// [`AlltoallAlgo::Ring`] with a 1-byte `sendrecv` after each step.
    RingLightBarrier,
    /// [`AlltoallAlgo::Ring`] with a configured barrier before each step.
    RingMpiBarrier,
    /// [`AlltoallAlgo::Ring`] after one configured barrier.
    RingOneBarrier,
    /// MVAPICH2: rounds of at most 4 `irecv`/`isend` pairs (self included), each waited.
    Mvapich2ScatterDest,
    /// OpenMPI's decision table (basic linear, pairwise or modified Bruck).
    Ompi,
    /// MPICH's decision: Bruck, scatter-dest, pair or ring.
    Mpich,
}

algo_names!(AlltoallAlgo {
    Default => "default",
    BasicLinear => "basic_linear",
    Bruck => "bruck",
    Pair => "pair",
    PairLightBarrier => "pair_light_barrier",
    PairMpiBarrier => "pair_mpi_barrier",
    PairOneBarrier => "pair_one_barrier",
    Rdb => "rdb",
    Ring => "ring",
    RingLightBarrier => "ring_light_barrier",
    RingMpiBarrier => "ring_mpi_barrier",
    RingOneBarrier => "ring_one_barrier",
    Mvapich2ScatterDest => "mvapich2_scatter_dest",
    Ompi => "ompi",
    Mpich => "mpich",
});

/// Appends rank `rank`'s alltoall schedule: `send` is the per-peer send buffer (trace
/// `sendcount` and send datatype), `recv` the per-peer receive buffer.
pub fn alltoall(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    send: Payload,
    recv: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    let mut s = Sched::new(rank, size, out);
    run(cfg, &mut s, send, recv)?;
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::alltoall` as called from inside other algorithms.
pub(crate) fn run(
    cfg: &CollectiveConfig,
    s: &mut Sched,
    send: Payload,
    recv: Payload,
) -> Result<(), CollectiveError> {
    let algo = match cfg.alltoall {
        AlltoallAlgo::Default | AlltoallAlgo::Ompi => ompi_choice(s.size, send.bytes()),
        AlltoallAlgo::Mpich => mpich_choice(s.size, send.bytes()),
        other => other,
    };
    let pow2 = is_pow2(s.size);
    let sb = |_peer: u32| send.bytes();
    let rb = |_peer: u32| recv.bytes();
    match algo {
        AlltoallAlgo::BasicLinear => basic_linear(s, send.bytes(), recv.bytes()),
        AlltoallAlgo::Bruck => bruck(s, send, recv),
        AlltoallAlgo::Pair if pow2 => steps(s, &sb, &rb, TAG, Order::Xor, Sync::None, cfg)?,
        AlltoallAlgo::Pair | AlltoallAlgo::Ring => {
            steps(s, &sb, &rb, TAG, Order::Ring, Sync::None, cfg)?
        }
        AlltoallAlgo::PairLightBarrier if pow2 => {
            steps(s, &sb, &rb, TAG, Order::Xor, Sync::Light, cfg)?
        }
        AlltoallAlgo::PairLightBarrier | AlltoallAlgo::RingLightBarrier => {
            steps(s, &sb, &rb, TAG, Order::Ring, Sync::Light, cfg)?
        }
        AlltoallAlgo::PairMpiBarrier if pow2 => {
            steps(s, &sb, &rb, TAG, Order::Xor, Sync::EachStep, cfg)?
        }
        AlltoallAlgo::PairMpiBarrier | AlltoallAlgo::RingMpiBarrier => {
            steps(s, &sb, &rb, TAG, Order::Ring, Sync::EachStep, cfg)?
        }
        AlltoallAlgo::PairOneBarrier if pow2 => {
            steps(s, &sb, &rb, TAG, Order::Xor, Sync::Once, cfg)?
        }
        AlltoallAlgo::PairOneBarrier | AlltoallAlgo::RingOneBarrier => {
            steps(s, &sb, &rb, TAG, Order::Ring, Sync::Once, cfg)?
        }
        AlltoallAlgo::Rdb => rdb(s, send, recv),
        AlltoallAlgo::Mvapich2ScatterDest => mvapich2_scatter_dest(s, send.bytes(), recv),
        AlltoallAlgo::Default | AlltoallAlgo::Ompi | AlltoallAlgo::Mpich => {
            unreachable!("selectors are resolved above")
        }
    }
    Ok(())
}

/// `alltoall__ompi`: the algorithm OpenMPI's fixed decision picks for `n` ranks and
/// `d = sendcount × size(sendtype)` bytes per peer. Its "linear", "linear_sync" and "two_proc"
/// entries all map to `basic_linear` in SimGrid.
pub fn ompi_choice(n: u32, d: u64) -> AlltoallAlgo {
    use AlltoallAlgo::{BasicLinear as L, Bruck as B, Pair as P};
    let thresholds: &[(u64, AlltoallAlgo)] = match n {
        2 => &[
            (2, P),
            (4, L),
            (16, P),
            (64, L),
            (256, P),
            (4096, L),
            (32768, P),
            (262144, L),
            (1048576, L),
            (u64::MAX, P),
        ],
        _ if n < 8 => &[(524288, L), (1048576, P), (u64::MAX, L)],
        _ if n < 16 => &[(u64::MAX, L)],
        _ if n < 32 => &[(4, L), (512, B), (u64::MAX, L)],
        _ if n < 64 => &[(512, B), (u64::MAX, L)],
        _ if n < 128 => &[(1024, B), (262144, L), (u64::MAX, P)],
        _ if n < 256 => &[(1024, B), (262144, L), (u64::MAX, P)],
        _ if n < 512 => &[(1024, B), (32768, L), (u64::MAX, P)],
        _ if n < 1024 => &[(512, B), (262144, L), (u64::MAX, P)],
        _ if n < 2048 => &[(512, B), (u64::MAX, L)],
        _ if n < 4096 => &[(1024, B), (u64::MAX, L)],
        _ => &[(2048, B), (u64::MAX, L)],
    };
    thresholds
        .iter()
        .find(|&&(limit, _)| d < limit || limit == u64::MAX)
        .map_or(L, |&(_, algo)| algo)
}

/// `alltoall__mpich`: Bruck below 256 B per peer on ≥ 8 ranks, MVAPICH2 scatter-dest below
/// 32 KiB, else pair on odd sizes and ring on even ones.
fn mpich_choice(n: u32, block: u64) -> AlltoallAlgo {
    if block < 256 && n >= 8 {
        AlltoallAlgo::Bruck
    } else if block < 32768 {
        AlltoallAlgo::Mvapich2ScatterDest
    } else if n & 1 == 1 {
        AlltoallAlgo::Pair
    } else {
        AlltoallAlgo::Ring
    }
}

/// `alltoall__basic_linear` (= `colls::ialltoall` + wait): `irecv` from rank+1, rank+2, …,
/// then `isend` to rank-1, rank-2, …, then one wait.
fn basic_linear(s: &mut Sched, send_bytes: u64, recv_bytes: u64) {
    if s.size == 1 {
        return;
    }
    for d in 1..u64::from(s.size) {
        s.irecv(s.plus(d), recv_bytes, TAG);
    }
    for d in 1..u64::from(s.size) {
        s.isend(s.minus(d), send_bytes, TAG);
    }
    s.waitall();
}

/// Peer order of the step-by-step exchanges.
#[derive(Clone, Copy)]
pub(crate) enum Order {
    /// Step i: `rank ^ i` both ways (`pair*`).
    Xor,
    /// Step i: send to rank+i, receive from rank-i (`ring*`).
    Ring,
}

/// Synchronisation added by the `*_barrier` variants.
#[derive(Clone, Copy)]
pub(crate) enum Sync {
    None,
    /// After each data step but the last: a 1-byte `sendrecv` with the next step's partners.
    Light,
    /// `colls::barrier` before each step.
    EachStep,
    /// `colls::barrier` once before the loop.
    Once,
}

/// The `pair*` / `ring*` families (also of `alltoallv`): `send_bytes(dst)` and
/// `recv_bytes(src)` give the sizes exchanged with each peer. Step 0 is the self copy (free).
pub(crate) fn steps(
    s: &mut Sched,
    send_bytes: &dyn Fn(u32) -> u64,
    recv_bytes: &dyn Fn(u32) -> u64,
    tag: i32,
    order: Order,
    sync: Sync,
    cfg: &CollectiveConfig,
) -> Result<(), CollectiveError> {
    let n = s.size;
    let peers = |s: &Sched, i: u32| match order {
        Order::Xor => (s.rank ^ i, s.rank ^ i),
        Order::Ring => (s.plus(u64::from(i)), s.minus(u64::from(i))),
    };
    if let Sync::Once = sync {
        barrier::run(cfg.barrier, s)?;
    }
    for i in 0..n {
        if let Sync::EachStep = sync {
            barrier::run(cfg.barrier, s)?;
        }
        let (dst, src) = peers(s, i);
        s.sendrecv(dst, send_bytes(dst), src, recv_bytes(src), tag);
        if let Sync::Light = sync {
            if i >= 1 && i + 1 < n {
                // pair: both ways with rank ^ (i+1); ring: send to rank-(i+1), receive from
                // rank+(i+1) (sic, alltoall-ring-light-barrier.cpp).
                let (next_dst, next_src) = peers(s, i + 1);
                match order {
                    Order::Xor => s.sendrecv(next_dst, 1, next_src, 1, tag),
                    Order::Ring => s.sendrecv(next_src, 1, next_dst, 1, tag),
                }
            }
        }
    }
    Ok(())
}

/// `alltoall__bruck`: at step 2^k, `sendrecv` to rank+2^k from rank-2^k of the blocks whose
/// index has bit k set, packed with `MPI_Pack` (block = `sendcount` elements of the *receive*
/// type). The rotations before and after are self `sendrecv`s (free).
fn bruck(s: &mut Sched, send: Payload, recv: Payload) {
    let n = s.size;
    let block = send.count * recv.dt_size;
    let mut pof2 = 1u32;
    while pof2 < n {
        let dst = s.plus(u64::from(pof2));
        let src = s.minus(u64::from(pof2));
        let blocks = (1..n).filter(|b| b & pof2 != 0).count() as u64;
        s.sendrecv(dst, blocks * block, src, blocks * block, TAG);
        pof2 *= 2;
    }
}

/// `alltoall__rdb`: recursive doubling on the whole send buffers (`sendcount × n` elements at
/// the start), see [`Rdb`]; the final reordering is local.
fn rdb(s: &mut Sched, send: Payload, recv: Payload) {
    let n = s.size;
    let nn = u64::from(n);
    let init = |_r: u32| send.count * nn;
    let xchg_send_bytes = |c: u64| c * send.dt_size;
    let xchg_recv_posted =
        |_r: u32, _dtr: u32, mask: u32| u64::from(mask) * recv.count * nn * recv.dt_size;
    let xchg_recv_units = |b: u64| units(b, recv.dt_size);
    let fix_send_bytes = |c: u64| c * send.dt_size;
    let fix_recv_posted = |_r: u32, _mtr: u32, mask: u32, _done: u32| {
        u64::from(mask) * nn * send.count * send.dt_size
    };
    let fix_recv_units = |b: u64| units(b, send.dt_size);
    let rdb = Rdb {
        n,
        tag: TAG,
        init: &init,
        xchg_send_bytes: &xchg_send_bytes,
        xchg_recv_posted: &xchg_recv_posted,
        xchg_recv_units: &xchg_recv_units,
        fix_send_bytes: &fix_send_bytes,
        fix_recv_posted: &fix_recv_posted,
        fix_recv_units: &fix_recv_units,
    };
    rdb.run(s.rank, &|r| r, s);
}

/// `alltoall__mvapich2_scatter_dest`: nothing if `recvcount` is 0; else rounds of
/// `min(4, n)` peers: `irecv` from rank+i+ii, `isend` to rank-i-ii (self included: real
/// messages to itself), then a wait per round.
fn mvapich2_scatter_dest(s: &mut Sched, send_bytes: u64, recv: Payload) {
    if recv.count == 0 {
        return;
    }
    let n = u64::from(s.size);
    let bblock = 4.min(n);
    let mut ii = 0;
    while ii < n {
        let ss = (n - ii).min(bblock);
        for i in 0..ss {
            s.irecv(s.plus(i + ii), recv.bytes(), TAG);
        }
        for i in 0..ss {
            s.isend(s.minus(i + ii), send_bytes, TAG);
        }
        s.waitall();
        ii += bblock;
    }
}
