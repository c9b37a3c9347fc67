//! `MPI_Reduce_scatter` (`src/smpi/colls/reduce_scatter/*.cpp`, `smpi_default_selector.cpp`,
//! `smpi_mpich_selector.cpp`). Tag [`tags::REDUCE_SCATTER`](super::tags::REDUCE_SCATTER),
//! except the default's regular case, which is a reduce and a scatterv.
//!
//! Default (`reduce_scatter__default`):
//! * all `recvcounts` equal: `reduce__default` of the Σcounts elements to root 0, then
//!   `colls::scatterv` from 0;
//! * otherwise `reduce_scatter__mpich`: `mpich_pair` when Σcounts > 524288 elements (replay's
//!   `MPI_OP_NULL` counts as commutative), else `mpich_rdb`.
//!
//! The `flops` of the trace action are left to the caller.

use super::sched::{algo_names, check_comm, check_len, pof2_floor, Sched};
use super::tags::REDUCE_SCATTER as TAG;
use super::{reduce, scatter, CollectiveConfig, CollectiveError, Op, VarPayload};

/// `smpi/reduce_scatter` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReduceScatterAlgo {
    /// `reduce_scatter__default`: reduce + scatterv when regular, else `mpich`.
    #[default]
    Default,
    /// OpenMPI's recursive halving (commutative operations).
    OmpiBasicRecursivehalving,
    /// Träff's butterfly, with a final exchange along the mirror permutation.
    OmpiButterfly,
    /// MPICH's decision: `mpich_pair` above 524288 elements, else `mpich_rdb`.
    Mpich,
    /// n-1 `sendrecv`s: to rank+i the block of rank+i, from rank-i the own block.
    MpichPair,
    /// MPICH's recursive doubling on indexed halves, with the non-power-of-two fix-up.
    MpichRdb,
}

algo_names!(ReduceScatterAlgo {
    Default => "default",
    OmpiBasicRecursivehalving => "ompi_basic_recursivehalving",
    OmpiButterfly => "ompi_butterfly",
    Mpich => "mpich",
    MpichPair => "mpich_pair",
    MpichRdb => "mpich_rdb",
});

/// Appends rank `rank`'s schedule for a reduce-scatter where rank i ends with
/// `recv.counts[i]` reduced elements (without the `flops`).
pub fn reduce_scatter(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    recv: VarPayload<'_>,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    check_len("reducescatter recvcounts", recv.counts.len(), size)?;
    let mut s = Sched::new(rank, size, out);
    match cfg.reduce_scatter {
        ReduceScatterAlgo::Default => {
            let first = recv.counts[0];
            if recv.counts.iter().all(|&c| c == first) {
                reduce::default(&mut s, 0, recv.total_count() * recv.dt_size);
                scatter::scatterv_fixed(&mut s, 0, recv, recv.bytes(rank));
            } else {
                mpich(&mut s, recv);
            }
        }
        ReduceScatterAlgo::Mpich => mpich(&mut s, recv),
        ReduceScatterAlgo::MpichPair => mpich_pair(&mut s, recv),
        ReduceScatterAlgo::MpichRdb => mpich_rdb(&mut s, recv),
        ReduceScatterAlgo::OmpiBasicRecursivehalving => recursive_halving(&mut s, recv),
        ReduceScatterAlgo::OmpiButterfly => butterfly(&mut s, recv),
    }
    debug_assert!(s.is_settled());
    Ok(())
}

/// `reduce_scatter__mpich` with a commutative (`MPI_OP_NULL`) operation.
fn mpich(s: &mut Sched, recv: VarPayload<'_>) {
    if recv.total_count() > 524288 {
        mpich_pair(s, recv);
    } else {
        mpich_rdb(s, recv);
    }
}

/// `reduce_scatter__mpich_pair`: nothing when all counts are 0; else for i = 1 … n-1,
/// `sendrecv` of rank+i's block to rank+i and of the own block from rank-i.
fn mpich_pair(s: &mut Sched, recv: VarPayload<'_>) {
    if recv.total_count() == 0 {
        return;
    }
    for i in 1..u64::from(s.size) {
        let (dst, src) = (s.plus(i), s.minus(i));
        s.sendrecv(dst, recv.bytes(dst), src, recv.bytes(s.rank), TAG);
    }
}

/// `reduce_scatter__mpich_rdb`: at step `mask = 2^i`, `sendrecv` with `rank ^ mask` of every
/// block outside the own subtree (`[tree_root, tree_root + mask)`) against every block outside
/// the partner's; subtrees without a partner then forward the received part to their
/// "have-nots" with blocking messages. Sizes are structural (no dependence on peers' state).
fn mpich_rdb(s: &mut Sched, recv: VarPayload<'_>) {
    let n = s.size;
    let rank = s.rank;
    let mut prefix = vec![0u64; n as usize + 1];
    for i in 0..n as usize {
        prefix[i + 1] = prefix[i] + recv.counts[i];
    }
    let total = prefix[n as usize];
    // Elements outside [root, root + mask), clamped to the communicator.
    let outside = |root: u32, mask: u32| -> u64 {
        let lo = prefix[root.min(n) as usize];
        let hi = prefix[(root.saturating_add(mask)).min(n) as usize];
        total - (hi - lo)
    };
    let dt = recv.dt_size;
    let mut mask = 1u32;
    let mut i = 0u32;
    while mask < n {
        let dst = rank ^ mask;
        let dst_tree_root = (dst >> i) << i;
        let my_tree_root = (rank >> i) << i;
        let send_size = outside(my_tree_root, mask) * dt;
        let recv_size = outside(dst_tree_root, mask) * dt;
        if dst < n {
            s.sendrecv(dst, send_size, dst, recv_size, TAG);
        }
        if u64::from(dst_tree_root) + u64::from(mask) > u64::from(n) {
            let completed = i64::from(n) - i64::from(my_tree_root) - i64::from(mask);
            let mut k = i;
            let mut tmp_mask = mask >> 1;
            while tmp_mask > 0 {
                let peer = rank ^ tmp_mask;
                let edge = i64::from((rank >> k) << k) + completed;
                let (r64, p64) = (i64::from(rank), i64::from(peer));
                if peer > rank && r64 < edge && p64 >= edge {
                    s.send(peer, recv_size, TAG);
                } else if peer < rank && p64 < edge && r64 >= edge {
                    s.recv(peer, recv_size, TAG);
                }
                tmp_mask >>= 1;
                k = k.saturating_sub(1);
            }
        }
        mask <<= 1;
        i += 1;
    }
}

/// `reduce_scatter__ompi_basic_recursivehalving`: nothing for 0 elements; fold to a power of
/// two (even ranks of the first `2 rem` send everything to the next odd rank), recursive
/// halving with `irecv` + blocking `send` + wait, then the odd ranks send the even ones their
/// results.
fn recursive_halving(s: &mut Sched, recv: VarPayload<'_>) {
    let count = recv.total_count();
    if count == 0 {
        return;
    }
    let (rank, n, dt) = (s.rank, s.size, recv.dt_size);
    let rc = |i: u32| recv.counts[i as usize];
    let tmp_size = pof2_floor(n);
    let remain = n - tmp_size;
    let tmp_rank = if rank < 2 * remain {
        if rank & 1 == 0 {
            s.send(rank + 1, count * dt, TAG);
            None
        } else {
            s.recv(rank - 1, count * dt, TAG);
            Some(rank / 2)
        }
    } else {
        Some(rank - remain)
    };
    if let Some(tmp_rank) = tmp_rank {
        let tmp_rcounts: Vec<u64> = (0..tmp_size)
            .map(|i| {
                if i < remain {
                    rc(i * 2 + 1) + rc(i * 2)
                } else {
                    rc(i + remain)
                }
            })
            .collect();
        let sum = |a: u32, b: u32| -> u64 { tmp_rcounts[a as usize..b as usize].iter().sum() };
        let mut mask = tmp_size >> 1;
        let (mut send_index, mut recv_index, mut last_index) = (0u32, 0u32, tmp_size);
        while mask > 0 {
            let tmp_peer = tmp_rank ^ mask;
            let peer = if tmp_peer < remain {
                tmp_peer * 2 + 1
            } else {
                tmp_peer + remain
            };
            let (send_count, recv_count);
            if tmp_rank < tmp_peer {
                send_index = recv_index + mask;
                send_count = sum(send_index, last_index);
                recv_count = sum(recv_index, send_index);
            } else {
                recv_index = send_index + mask;
                send_count = sum(send_index, recv_index);
                recv_count = sum(recv_index, last_index);
            }
            if send_count > 0 && recv_count != 0 {
                s.irecv(peer, recv_count * dt, TAG);
            }
            if recv_count > 0 && send_count != 0 {
                s.send(peer, send_count * dt, TAG);
            }
            s.waitall();
            send_index = recv_index;
            last_index = recv_index + mask;
            mask >>= 1;
        }
    }
    if rank < 2 * remain {
        if rank & 1 == 0 {
            if rc(rank) != 0 {
                s.recv(rank + 1, rc(rank) * dt, TAG);
            }
        } else if rc(rank - 1) != 0 {
            s.send(rank - 1, rc(rank - 1) * dt, TAG);
        }
    }
}

/// `ompi_mirror_perm`: the `nbits` low bits of `x`, reversed.
fn mirror_perm(x: u32, nbits: u32) -> u32 {
    debug_assert!((1..=32).contains(&nbits));
    x.reverse_bits() >> (32 - nbits)
}

/// `reduce_scatter__ompi_butterfly`: nothing for one rank; fold to a power of two, butterfly
/// `sendrecv`s over halving block ranges, then exchange the result blocks along the mirror
/// permutation (and send the excluded even ranks theirs).
fn butterfly(s: &mut Sched, recv: VarPayload<'_>) {
    let (rank, n, dt) = (s.rank, s.size, recv.dt_size);
    if n < 2 {
        return;
    }
    let rc = |i: u32| recv.counts[i as usize];
    let mut displs = vec![0u64; n as usize];
    for i in 1..n as usize {
        displs[i] = displs[i - 1] + recv.counts[i - 1];
    }
    let totalcount = displs[n as usize - 1] + rc(n - 1);
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let log2_size = pof2.trailing_zeros();
    let unfold = |v: u32| if v < rem { v * 2 + 1 } else { v + rem };
    // Blocks [lo, hi] of the folded communicator, in elements of the full one.
    let sum_counts = |lo: u32, hi: u32| -> u64 {
        let lo = if lo < rem { lo * 2 } else { lo + rem };
        let hi = if hi < rem { hi * 2 + 1 } else { hi + rem };
        displs[hi as usize] + rc(hi) - displs[lo as usize]
    };
    let vrank = if rank < 2 * rem {
        if rank & 1 == 0 {
            s.send(rank + 1, totalcount * dt, TAG);
            None
        } else {
            s.recv(rank - 1, totalcount * dt, TAG);
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    };
    match vrank {
        Some(vrank) => {
            let mut nblocks = pof2;
            let (mut send_index, mut recv_index) = (0u32, 0u32);
            let mut mask = 1u32;
            while mask < pof2 {
                let peer = unfold(vrank ^ mask);
                nblocks /= 2;
                if vrank & mask == 0 {
                    send_index += nblocks;
                } else {
                    recv_index += nblocks;
                }
                let send_count = sum_counts(send_index, send_index + nblocks - 1);
                let recv_count = sum_counts(recv_index, recv_index + nblocks - 1);
                s.sendrecv(peer, send_count * dt, peer, recv_count * dt, TAG);
                send_index = recv_index;
                mask <<= 1;
            }
            let vpeer = mirror_perm(vrank, log2_size);
            let peer = unfold(vpeer);
            let mut index = if send_index < rem {
                2 * send_index
            } else {
                rem + send_index
            };
            if vpeer < rem {
                s.send(peer - 1, rc(index) * dt, TAG);
                index += 1;
            }
            if vpeer != vrank {
                s.sendrecv(peer, rc(index) * dt, peer, rc(rank) * dt, TAG);
            }
        }
        None => {
            let vpeer = mirror_perm(rank.div_ceil(2), log2_size);
            s.recv(unfold(vpeer), rc(rank) * dt, TAG);
        }
    }
}
