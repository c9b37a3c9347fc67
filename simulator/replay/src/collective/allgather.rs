//! `MPI_Allgather` (`src/smpi/colls/allgather/*.cpp`). Tag
//! [`tags::ALLGATHER`](super::tags::ALLGATHER) (`GB` uses gather's and bcast's).
//!
//! Default (`allgather__default` = `colls::iallgather` + wait): for each other rank in
//! increasing order, an `isend` of the own block and an `irecv` of its block; one wait.
//!
//! `pair` and `rhv` throw in SimGrid on non-power-of-two sizes; here they fall back to `ring`.

use super::rdb::Rdb;
use super::sched::{algo_names, check_comm, is_pow2, units, Sched};
use super::tags::ALLGATHER as TAG;
use super::{bcast, gather, CollectiveConfig, CollectiveError, Op, Payload};

/// `smpi/allgather` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllgatherAlgo {
    /// `allgather__default`: linear, all requests posted at once.
    #[default]
    Default,
    /// Bruck: ⌊log2 n⌋ doubling `sendrecv`s with rank ∓ 2^k, plus one for the remainder.
    Bruck,
    /// The configured gather to 0, then the configured bcast of the whole buffer from 0.
    Gb,
    /// Ring with per-step tags `ALLGATHER + i`; default when send and receive sizes differ.
    Ntslr,
    /// Step i: `sendrecv` with `rank ^ i` (power-of-two n; else as [`AllgatherAlgo::Ring`]).
    Pair,
    /// Recursive doubling (MPICH-style, with the non-power-of-two fix-up).
    Rdb,
    /// Recursive halving of the distance, doubling the data (power-of-two n; else ring).
    Rhv,
    /// Step i: send the own block to rank+i, receive from rank-i.
    Ring,
    /// All `irecv`s then all `isend`s in ring order, one wait.
    SpreadingSimple,
    /// OpenMPI's neighbour exchange (ring when n is odd).
    OmpiNeighborexchange,
    /// OpenMPI's decision table (bruck, rdb, ring, neighbour exchange or pair).
    Ompi,
    /// MPICH's decision: rdb, bruck or ring.
    Mpich,
}

algo_names!(AllgatherAlgo {
    Default => "default",
    Bruck => "bruck",
    Gb => "GB",
    Ntslr => "NTSLR",
    Pair => "pair",
    Rdb => "rdb",
    Rhv => "rhv",
    Ring => "ring",
    SpreadingSimple => "spreading_simple",
    Ompi => "ompi",
    OmpiNeighborexchange => "ompi_neighborexchange",
    Mpich => "mpich",
});

/// Appends rank `rank`'s allgather schedule: each rank contributes `send` and receives `recv`
/// from every rank.
pub fn allgather(
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

/// `colls::allgather` as called from inside other algorithms.
pub(crate) fn run(
    cfg: &CollectiveConfig,
    s: &mut Sched,
    send: Payload,
    recv: Payload,
) -> Result<(), CollectiveError> {
    let n = s.size;
    let algo = match cfg.allgather {
        AllgatherAlgo::Ompi => ompi_choice(n, send.bytes()),
        AllgatherAlgo::Mpich => {
            let total = send.bytes() * u64::from(n);
            if is_pow2(n) && total < 524288 {
                AllgatherAlgo::Rdb
            } else if total <= 81920 {
                AllgatherAlgo::Bruck
            } else {
                AllgatherAlgo::Ring
            }
        }
        other => other,
    };
    let (sb, rb) = (send.bytes(), recv.bytes());
    match algo {
        AllgatherAlgo::Default => default(s, sb, rb),
        AllgatherAlgo::Ring => ring(s, sb, rb),
        AllgatherAlgo::Pair if is_pow2(n) => {
            for i in 1..n {
                let p = s.rank ^ i;
                s.sendrecv(p, sb, p, rb, TAG);
            }
        }
        AllgatherAlgo::Pair => ring(s, sb, rb),
        AllgatherAlgo::Rdb => rdb(s, send, recv),
        AllgatherAlgo::Bruck => bruck(s, recv),
        AllgatherAlgo::OmpiNeighborexchange => neighborexchange(s, sb, rb),
        AllgatherAlgo::Ntslr => {
            if sb != rb {
                default(s, sb, rb);
            } else {
                let (to, from) = (s.plus(1), s.minus(1));
                for i in 0..n - 1 {
                    let tag = TAG + i as i32;
                    s.sendrecv_tags(to, sb, tag, from, rb, tag);
                }
            }
        }
        AllgatherAlgo::Gb => {
            gather::run(cfg.gather, s, 0, send, recv);
            let whole = Payload::new(recv.count * u64::from(n), recv.dt_size);
            bcast::run(cfg.bcast, s, 0, whole);
        }
        AllgatherAlgo::SpreadingSimple => {
            for i in 1..u64::from(n) {
                s.irecv(s.plus(i), rb, TAG);
            }
            for i in 1..u64::from(n) {
                s.isend(s.plus(i), sb, TAG);
            }
            s.waitall();
        }
        AllgatherAlgo::Rhv if !is_pow2(n) => ring(s, sb, rb),
        AllgatherAlgo::Rhv => rhv(s, send, recv),
        AllgatherAlgo::Ompi | AllgatherAlgo::Mpich => unreachable!("selectors are resolved above"),
    }
    Ok(())
}

/// `allgather__ompi`'s decision for `n` ranks and `d = sendcount × size(sendtype)`.
fn ompi_choice(n: u32, d: u64) -> AllgatherAlgo {
    use AllgatherAlgo::{Bruck as B, OmpiNeighborexchange as Ne, Rdb as R, Ring as Ri};
    let table: &[(u64, AllgatherAlgo)] = match n {
        2 => return AllgatherAlgo::Pair,
        _ if n < 32 => &[(u64::MAX, R)],
        _ if n < 64 => &[(1024, R), (65536, Ne), (u64::MAX, Ri)],
        _ if n < 128 => &[(512, R), (65536, Ne), (u64::MAX, Ri)],
        _ if n < 256 => &[
            (512, R),
            (131072, Ne),
            (524288, Ri),
            (1048576, Ne),
            (u64::MAX, Ri),
        ],
        _ if n < 512 => &[
            (32, R),
            (128, B),
            (1024, R),
            (131072, Ne),
            (524288, Ri),
            (1048576, Ne),
            (u64::MAX, Ri),
        ],
        _ if n < 1024 => &[(64, R), (256, B), (2048, R), (u64::MAX, Ne)],
        _ if n < 2048 => &[
            (4, R),
            (8, B),
            (16, R),
            (32, B),
            (256, R),
            (512, B),
            (4096, R),
            (u64::MAX, Ne),
        ],
        _ if n < 4096 => &[(32, B), (128, R), (512, B), (4096, R), (u64::MAX, Ne)],
        _ => &[(2, R), (8, B), (16, R), (512, B), (4096, R), (u64::MAX, Ne)],
    };
    table
        .iter()
        .find(|&&(limit, _)| d < limit || limit == u64::MAX)
        .map_or(R, |&(_, algo)| algo)
}

/// `colls::iallgather` + wait.
fn default(s: &mut Sched, send_bytes: u64, recv_bytes: u64) {
    for other in s.others() {
        s.isend(other, send_bytes, TAG);
        s.irecv(other, recv_bytes, TAG);
    }
    s.waitall();
}

/// `allgather__ring`: step i, `sendrecv` to rank+i from rank-i.
fn ring(s: &mut Sched, send_bytes: u64, recv_bytes: u64) {
    for i in 1..u64::from(s.size) {
        s.sendrecv(s.plus(i), send_bytes, s.minus(i), recv_bytes, TAG);
    }
}

/// `allgather__rdb`: [`Rdb`] on `recvcount`-element blocks. As in SimGrid the exchange sends
/// `curr_count` elements of the *send* type and counts what arrives in receive elements.
fn rdb(s: &mut Sched, send: Payload, recv: Payload) {
    let init = |_r: u32| recv.count;
    let xchg_send_bytes = |c: u64| c * send.dt_size;
    let xchg_recv_posted =
        |_r: u32, _dtr: u32, mask: u32| u64::from(mask) * recv.count * recv.dt_size;
    let to_units = |b: u64| units(b, recv.dt_size);
    let fix_send_bytes = |c: u64| c * recv.dt_size;
    let fix_recv_posted =
        |_r: u32, _mtr: u32, _mask: u32, done: u32| recv.count * u64::from(done) * recv.dt_size;
    let rdb = Rdb {
        n: s.size,
        tag: TAG,
        init: &init,
        xchg_send_bytes: &xchg_send_bytes,
        xchg_recv_posted: &xchg_recv_posted,
        xchg_recv_units: &to_units,
        fix_send_bytes: &fix_send_bytes,
        fix_recv_posted: &fix_recv_posted,
        fix_recv_units: &to_units,
    };
    rdb.run(s.rank, &|r| r, s);
}

/// `allgather__bruck`: while 2^k ≤ n/2, `sendrecv` of 2^k blocks to rank-2^k from rank+2^k;
/// then the `n - 2^k` remaining blocks. All in receive elements.
fn bruck(s: &mut Sched, recv: Payload) {
    let n = s.size;
    let mut count = recv.count;
    let mut pof2 = 1u32;
    while pof2 <= n / 2 {
        let (src, dst) = (s.plus(u64::from(pof2)), s.minus(u64::from(pof2)));
        let bytes = count * recv.dt_size;
        s.sendrecv(dst, bytes, src, bytes, TAG);
        count *= 2;
        pof2 *= 2;
    }
    let remainder = n - pof2;
    if remainder > 0 {
        let (src, dst) = (s.plus(u64::from(pof2)), s.minus(u64::from(pof2)));
        let bytes = u64::from(remainder) * recv.count * recv.dt_size;
        s.sendrecv(dst, bytes, src, bytes, TAG);
    }
}

/// `allgather__ompi_neighborexchange`: ring for odd n; else one block with the first neighbour
/// (rank+1 for even ranks, rank-1 for odd ones), then n/2 - 1 exchanges of two blocks,
/// alternating between the two neighbours.
fn neighborexchange(s: &mut Sched, send_bytes: u64, recv_bytes: u64) {
    if s.size & 1 == 1 {
        ring(s, send_bytes, recv_bytes);
        return;
    }
    let neighbor = if s.rank & 1 == 0 {
        [s.plus(1), s.minus(1)]
    } else {
        [s.minus(1), s.plus(1)]
    };
    s.sendrecv(neighbor[0], recv_bytes, neighbor[0], recv_bytes, TAG);
    for i in 1..s.size / 2 {
        let p = neighbor[(i % 2) as usize];
        s.sendrecv(p, 2 * recv_bytes, p, 2 * recv_bytes, TAG);
    }
}

/// `allgather__rhv` (power-of-two n): falls back to the default when the send and receive
/// blocks differ; else a first `sendrecv` with the bit-reversed rank (free when it is the rank
/// itself), then `rank ^ mask` for mask = n/2 … 1 with a doubling number of blocks.
fn rhv(s: &mut Sched, send: Payload, recv: Payload) {
    let (sb, rb) = (send.bytes(), recv.bytes());
    if sb != rb {
        default(s, sb, rb);
        return;
    }
    let n = s.size;
    let mut half = n / 2;
    let mut base_offset = 0u32;
    let mut mask = 1u32;
    while mask < n {
        if s.rank & mask != 0 {
            base_offset += half;
        }
        mask <<= 1;
        half /= 2;
    }
    s.sendrecv(base_offset, sb, base_offset, rb, TAG);
    mask >>= 1;
    let mut curr = recv.count;
    while mask >= 1 {
        let dst = s.rank ^ mask;
        let bytes = curr * recv.dt_size;
        s.sendrecv(dst, bytes, dst, bytes, TAG);
        curr *= 2;
        mask >>= 1;
    }
}
