//! `MPI_Allgatherv` (`src/smpi/colls/allgatherv/*.cpp`). Tag
//! [`tags::ALLGATHERV`](super::tags::ALLGATHERV) (`GB` uses gatherv's and bcast's).
//!
//! Default (`allgatherv__default` = `colls::iallgatherv` + waitall): for each other rank in
//! increasing order, an `isend` of the own block and an `irecv` of its block; one wait.
//!
//! Displacements only matter for `GB`, which broadcasts `max(displs[i] + counts[i])` elements;
//! the replay's `allgatherv` action defaults them to 0.

use super::gather::gatherv_fixed;
use super::rdb::Rdb;
use super::sched::{algo_names, check_comm, check_len, is_pow2, units, Sched};
use super::tags::ALLGATHERV as TAG;
use super::{bcast, CollectiveConfig, CollectiveError, Op, Payload, VarPayload};

/// `smpi/allgatherv` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllgathervAlgo {
    /// `allgatherv__default`: linear, all requests posted at once.
    #[default]
    Default,
    /// `colls::gatherv` to 0, then the configured bcast from 0.
    Gb,
    /// Step i: `sendrecv` with `rank ^ i` (power-of-two n; else as [`AllgathervAlgo::Ring`]).
    Pair,
    /// Step i: send the own block to rank+i, receive rank-i's.
    Ring,
    /// OpenMPI's decision table on the average block size.
    Ompi,
    /// OpenMPI's neighbour exchange (ring when n is odd).
    OmpiNeighborexchange,
    /// OpenMPI's Bruck: ⌈log2 n⌉ `sendrecv`s of growing groups of blocks.
    OmpiBruck,
    /// MPICH's decision: mpich_rdb, ompi_bruck or mpich_ring.
    Mpich,
    /// MPICH's recursive doubling (with the non-power-of-two fix-up).
    MpichRdb,
    /// MPICH's ring, pipelined in chunks of at least 256 KiB.
    MpichRing,
}

algo_names!(AllgathervAlgo {
    Default => "default",
    Gb => "GB",
    Pair => "pair",
    Ring => "ring",
    Ompi => "ompi",
    OmpiNeighborexchange => "ompi_neighborexchange",
    OmpiBruck => "ompi_bruck",
    Mpich => "mpich",
    MpichRdb => "mpich_rdb",
    MpichRing => "mpich_ring",
});

/// Appends rank `rank`'s allgatherv schedule: each rank contributes `send` and receives
/// `recv.counts[i]` elements from rank i. `displs` (elements, one per rank) may be empty,
/// meaning all zero.
pub fn allgatherv(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    send: Payload,
    recv: VarPayload<'_>,
    displs: &[u64],
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    check_len("allgatherv recvcounts", recv.counts.len(), size)?;
    if !displs.is_empty() {
        check_len("allgatherv displs", displs.len(), size)?;
    }
    let mut s = Sched::new(rank, size, out);
    let n = size;
    let algo = match cfg.allgatherv {
        AllgathervAlgo::Ompi => {
            let per_rank = recv.total_count() * send.dt_size / u64::from(n);
            ompi_choice(n, per_rank)
        }
        AllgathervAlgo::Mpich => {
            let total = recv.total_count();
            if total == 0 {
                return Ok(());
            }
            if is_pow2(n) && total < 524288 {
                AllgathervAlgo::MpichRdb
            } else if total <= 81920 {
                AllgathervAlgo::OmpiBruck
            } else {
                AllgathervAlgo::MpichRing
            }
        }
        other => other,
    };
    let sb = send.bytes();
    match algo {
        AllgathervAlgo::Default => {
            for other in (0..n).filter(|&o| o != rank) {
                s.isend(other, sb, TAG);
                s.irecv(other, recv.bytes(other), TAG);
            }
            s.waitall();
        }
        AllgathervAlgo::Ring => ring(&mut s, sb, recv),
        AllgathervAlgo::Pair if is_pow2(n) => {
            for i in 1..n {
                let p = rank ^ i;
                s.sendrecv(p, sb, p, recv.bytes(p), TAG);
            }
        }
        AllgathervAlgo::Pair => ring(&mut s, sb, recv),
        AllgathervAlgo::Gb => {
            gatherv_fixed(&mut s, 0, send, recv);
            let extent = (0..n as usize)
                .map(|i| displs.get(i).copied().unwrap_or(0) + recv.counts[i])
                .max()
                .unwrap_or(0);
            bcast::run(cfg.bcast, &mut s, 0, Payload::new(extent, recv.dt_size));
        }
        AllgathervAlgo::OmpiBruck => ompi_bruck(&mut s, recv),
        AllgathervAlgo::OmpiNeighborexchange => neighborexchange(&mut s, sb, recv),
        AllgathervAlgo::MpichRing => mpich_ring(&mut s, recv),
        AllgathervAlgo::MpichRdb => mpich_rdb(&mut s, recv),
        AllgathervAlgo::Ompi | AllgathervAlgo::Mpich => {
            unreachable!("selectors are resolved above")
        }
    }
    debug_assert!(s.is_settled());
    Ok(())
}

/// `allgatherv__ompi`'s decision on `per_rank = Σ size(sendtype) × recvcounts[i] / n`.
fn ompi_choice(n: u32, per_rank: u64) -> AllgathervAlgo {
    use AllgathervAlgo::{
        Gb as G, MpichRing as R, OmpiBruck as B, OmpiNeighborexchange as Ne, Pair as P,
    };
    let table: &[(u64, AllgathervAlgo)] = match n {
        2 => &[(2048, R), (4096, P), (8192, R), (u64::MAX, P)],
        _ if n < 8 => &[
            (256, G),
            (4096, Ne),
            (8192, R),
            (16384, Ne),
            (262144, B),
            (u64::MAX, Ne),
        ],
        _ if n < 16 => &[(1024, G), (u64::MAX, B)],
        _ if n < 32 => &[(128, G), (262144, B), (u64::MAX, R)],
        _ if n < 64 => &[(256, G), (8192, B), (u64::MAX, R)],
        _ if n < 128 => &[(256, G), (4096, B), (u64::MAX, R)],
        _ if n < 256 => &[(1024, B), (65536, Ne), (u64::MAX, R)],
        _ if n < 512 => &[(1024, B), (u64::MAX, R)],
        _ if n < 1024 => &[(512, B), (1024, G), (4096, B), (1048576, Ne), (u64::MAX, R)],
        _ => &[(4096, B), (u64::MAX, Ne)],
    };
    table
        .iter()
        .find(|&&(limit, _)| per_rank < limit || limit == u64::MAX)
        .map_or(G, |&(_, algo)| algo)
}

/// `allgatherv__ring`.
fn ring(s: &mut Sched, send_bytes: u64, recv: VarPayload<'_>) {
    for i in 1..u64::from(s.size) {
        let (dst, src) = (s.plus(i), s.minus(i));
        s.sendrecv(dst, send_bytes, src, recv.bytes(src), TAG);
    }
}

/// `allgatherv__ompi_bruck`: at distance d, send the blocks of ranks rank … rank+b-1 to
/// rank-d and receive those of rank+d … rank+d+b-1, with b = d (or n - d at the last step).
fn ompi_bruck(s: &mut Sched, recv: VarPayload<'_>) {
    let n = s.size;
    let blocks = |first: u32, count: u32| -> u64 {
        (0..count)
            .map(|i| recv.counts[((first + i) % n) as usize])
            .sum::<u64>()
            * recv.dt_size
    };
    let mut distance = 1u32;
    while distance < n {
        let recvfrom = s.plus(u64::from(distance));
        let sendto = s.minus(u64::from(distance));
        let blockcount = if distance <= n / 2 {
            distance
        } else {
            n - distance
        };
        let send_bytes = blocks(s.rank, blockcount);
        let recv_bytes = blocks(recvfrom, blockcount);
        s.sendrecv(sendto, send_bytes, recvfrom, recv_bytes, TAG);
        distance <<= 1;
    }
}

/// `allgatherv__ompi_neighborexchange`: ring for odd n; else the own block with the first
/// neighbour, then pairs of blocks alternately with each neighbour.
fn neighborexchange(s: &mut Sched, send_bytes: u64, recv: VarPayload<'_>) {
    let n = s.size;
    if n & 1 == 1 {
        ring(s, send_bytes, recv);
        return;
    }
    let rank = s.rank;
    let even = rank & 1 == 0;
    let neighbor = if even {
        [s.plus(1), s.minus(1)]
    } else {
        [s.minus(1), s.plus(1)]
    };
    let mut recv_data_from = if even {
        [rank, rank]
    } else {
        [neighbor[0], neighbor[0]]
    };
    let offset_at_step: [i64; 2] = if even { [2, -2] } else { [-2, 2] };
    let c = |i: u32| recv.counts[i as usize];
    s.sendrecv(
        neighbor[0],
        c(rank) * recv.dt_size,
        neighbor[0],
        c(neighbor[0]) * recv.dt_size,
        TAG,
    );
    let mut send_data_from = if even { rank } else { recv_data_from[0] };
    for i in 1..n / 2 {
        let p = (i % 2) as usize;
        recv_data_from[p] = ((i64::from(recv_data_from[p]) + offset_at_step[p] + i64::from(n))
            % i64::from(n)) as u32;
        // Block pairs start on even ranks, so `+ 1` stays below n (no wrap in SimGrid either).
        let send_bytes = (c(send_data_from) + c(send_data_from + 1)) * recv.dt_size;
        let rdf = recv_data_from[p];
        let recv_bytes = (c(rdf) + c(rdf + 1)) * recv.dt_size;
        s.sendrecv(neighbor[p], send_bytes, neighbor[p], recv_bytes, TAG);
        send_data_from = rdf;
    }
}

/// `allgatherv__mpich_ring`: blocks travel around the ring (send to rank+1, receive from
/// rank-1) in chunks of `max(min(counts), 262144 / size(type))` elements; a step with only one
/// direction active uses a blocking `send` or `recv`.
fn mpich_ring(s: &mut Sched, recv: VarPayload<'_>) {
    let n = s.size;
    let counts = recv.counts;
    let dt = recv.dt_size;
    let total: u64 = counts.iter().sum();
    let left = s.minus(1);
    let right = s.plus(1);
    let mut torecv = total - counts[s.rank as usize];
    let mut tosend = total - counts[right as usize];
    let mut chunk = counts.iter().copied().min().unwrap_or(0);
    if chunk * dt < 32768 * 8 {
        // SimGrid divides by the extent; a 0-byte datatype would crash it.
        chunk = 32768 * 8 / dt.max(1);
    }
    if chunk == 0 {
        chunk = 1;
    }
    let (mut sidx, mut ridx) = (s.rank, left);
    let (mut soffset, mut roffset) = (0u64, 0u64);
    while tosend > 0 || torecv > 0 {
        let mut sendnow = (counts[sidx as usize] - soffset).min(chunk);
        let mut recvnow = (counts[ridx as usize] - roffset).min(chunk);
        if tosend == 0 {
            sendnow = 0;
        }
        if torecv == 0 {
            recvnow = 0;
        }
        match (sendnow, recvnow) {
            (0, 0) => {}
            (0, r) => {
                s.recv(left, r * dt, TAG);
                torecv -= r;
            }
            (w, 0) => {
                s.send(right, w * dt, TAG);
                tosend -= w;
            }
            (w, r) => {
                s.sendrecv(right, w * dt, left, r * dt, TAG);
                tosend -= w;
                torecv -= r;
            }
        }
        soffset += sendnow;
        roffset += recvnow;
        if soffset == counts[sidx as usize] {
            soffset = 0;
            sidx = (sidx + n - 1) % n;
        }
        if roffset == counts[ridx as usize] {
            roffset = 0;
            ridx = (ridx + n - 1) % n;
        }
    }
}

/// `allgatherv__mpich_rdb`: nothing when all counts are 0; else [`Rdb`] in receive elements,
/// receives posted up to the end of the gathered buffer.
fn mpich_rdb(s: &mut Sched, recv: VarPayload<'_>) {
    let n = s.size;
    let total = recv.total_count();
    if total == 0 {
        return;
    }
    let mut prefix = vec![0u64; n as usize + 1];
    for i in 0..n as usize {
        prefix[i + 1] = prefix[i] + recv.counts[i];
    }
    let dt = recv.dt_size;
    let before = |r: u32| prefix[(r.min(n)) as usize];
    let init = |r: u32| recv.counts[r as usize];
    let to_bytes = |c: u64| c * dt;
    let to_units = |b: u64| units(b, dt);
    let xchg_recv_posted = |_r: u32, dtr: u32, _mask: u32| (total - before(dtr)) * dt;
    let fix_recv_posted =
        |_r: u32, mtr: u32, mask: u32, _done: u32| (total - before(mtr + mask)) * dt;
    let rdb = Rdb {
        n,
        tag: TAG,
        init: &init,
        xchg_send_bytes: &to_bytes,
        xchg_recv_posted: &xchg_recv_posted,
        xchg_recv_units: &to_units,
        fix_send_bytes: &to_bytes,
        fix_recv_posted: &fix_recv_posted,
        fix_recv_units: &to_units,
    };
    rdb.run(s.rank, &|r| r, s);
}
