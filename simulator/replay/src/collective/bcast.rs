//! `MPI_Bcast` (`src/smpi/colls/bcast/*.cpp`). Tag [`tags::BCAST`](super::tags::BCAST).
//!
//! Default (`bcast__default`): `binomial_tree`.

use super::rdb::Rdb;
use super::sched::{algo_names, check_comm, pof2_ceil, Sched};
use super::tags::BCAST as TAG;
use super::{CollectiveConfig, CollectiveError, Op, Payload};

/// `smpi/bcast` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BcastAlgo {
    /// `bcast__default` = [`BcastAlgo::BinomialTree`].
    #[default]
    Default,
    /// Binomial tree of blocking sends (Faraj & Yuan / MPICH).
    BinomialTree,
    /// The root `isend`s to every other rank.
    Flattree,
    /// The root sends 8 KiB segments to each rank in turn with blocking sends.
    FlattreePipeline,
    /// Binomial scatter of `⌈S/n⌉`-byte blocks, then a ring allgather.
    ScatterLrAllgather,
    /// Binomial scatter, then MPICH's recursive-doubling allgather.
    ScatterRdbAllgather,
}

algo_names!(BcastAlgo {
    Default => "default",
    BinomialTree => "binomial_tree",
    Flattree => "flattree",
    FlattreePipeline => "flattree_pipeline",
    ScatterLrAllgather => "scatter_LR_allgather",
    ScatterRdbAllgather => "scatter_rdb_allgather",
});

/// Appends rank `rank`'s schedule for a broadcast of `data` from `root` to `out`.
pub fn bcast(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    root: u32,
    data: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, Some(root))?;
    let mut s = Sched::new(rank, size, out);
    run(cfg.bcast, &mut s, root, data);
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::bcast` as called from inside other algorithms.
pub(crate) fn run(algo: BcastAlgo, s: &mut Sched, root: u32, data: Payload) {
    match algo {
        BcastAlgo::Default | BcastAlgo::BinomialTree => binomial_tree(s, root, data.bytes()),
        BcastAlgo::Flattree => flattree(s, root, data.bytes()),
        BcastAlgo::FlattreePipeline => flattree_pipeline(s, root, data),
        BcastAlgo::ScatterLrAllgather => scatter_lr_allgather(s, root, data.bytes()),
        BcastAlgo::ScatterRdbAllgather => scatter_rdb_allgather(s, root, data.bytes()),
    }
}

/// `bcast__binomial_tree`: receive from `rank - lowbit(r)` (r = rank relative to the root),
/// then blocking sends to `rank + m` for m = lowbit(r)/2, …, 1 (the root starts from the
/// largest power of two below n), skipping relative ranks ≥ n.
pub(crate) fn binomial_tree(s: &mut Sched, root: u32, bytes: u64) {
    let n = s.size;
    let rel = (s.rank + n - root) % n;
    let mut mask = 1u32;
    while mask < n {
        if rel & mask != 0 {
            s.recv(s.minus(u64::from(mask)), bytes, TAG);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            s.send(s.plus(u64::from(mask)), bytes, TAG);
        }
        mask >>= 1;
    }
}

/// `bcast__flattree`: non-roots `recv` from the root; the root `isend`s to every other rank in
/// increasing order, then waits.
fn flattree(s: &mut Sched, root: u32, bytes: u64) {
    if s.rank != root {
        s.recv(root, bytes, TAG);
    } else {
        for i in s.others() {
            s.isend(i, bytes, TAG);
        }
        s.waitall();
    }
}

/// `bcast__flattree_pipeline`: segments of `8192 / dt_size` elements; with fewer elements than
/// one segment, plain `flattree`. The root sends all segments to rank 0, then all to rank 1, …
/// with blocking sends; the others `irecv` all their segments and wait. As in SimGrid the
/// `count % segment` trailing elements are never sent.
fn flattree_pipeline(s: &mut Sched, root: u32, data: Payload) {
    // SimGrid divides by the extent; a 0-byte datatype would crash it.
    let segment = (8192 / data.dt_size.max(1)).max(1);
    let pipe_length = data.count / segment;
    if pipe_length == 0 {
        flattree(s, root, data.bytes());
        return;
    }
    let seg_bytes = segment * data.dt_size;
    if s.rank != root {
        for _ in 0..pipe_length {
            s.irecv(root, seg_bytes, TAG);
        }
        s.waitall();
    } else {
        for j in s.others() {
            for _ in 0..pipe_length {
                s.send(j, seg_bytes, TAG);
            }
        }
    }
}

/// Ceiling of `nbytes / n` (SimGrid's `scatter_size`).
fn scatter_size(nbytes: u64, n: u32) -> u64 {
    nbytes.div_ceil(u64::from(n))
}

/// The binomial scatter shared by `scatter_LR_allgather` and `scatter_rdb_allgather`
/// (`scatter_for_bcast`): relative rank r receives the bytes from `r × ⌈S/n⌉` on (posting
/// `S - r⌈S/n⌉`), then forwards to each child the part beyond its own subtree. Returns the
/// number of bytes this rank holds afterwards (`curr_size`).
fn binomial_scatter(s: &mut Sched, root: u32, nbytes: u64) -> u64 {
    let n = s.size;
    let ssize = scatter_size(nbytes, n);
    // What each relative rank actually receives depends on what its parent held: simulate the
    // tree from the root down (parents have lower relative ranks than their children).
    let mut held = vec![0u64; n as usize];
    held[0] = nbytes;
    let me = (s.rank + n - root) % n;
    for r in 0..n {
        let mut curr = held[r as usize];
        let posted = nbytes.saturating_sub(u64::from(r) * ssize);
        if r == me && r != 0 && posted > 0 {
            s.recv(s.minus(u64::from(r & r.wrapping_neg())), posted, TAG);
        }
        let mut mask = if r == 0 {
            pof2_ceil(n) >> 1
        } else {
            (r & r.wrapping_neg()) >> 1
        };
        while mask > 0 {
            if r + mask < n {
                let send = curr.saturating_sub(ssize * u64::from(mask));
                if send > 0 {
                    held[(r + mask) as usize] = send;
                    curr -= send;
                    if r == me {
                        s.send(s.plus(u64::from(mask)), send, TAG);
                    }
                }
            }
            mask >>= 1;
        }
        if r == me {
            return curr;
        }
    }
    unreachable!("the calling rank has a relative rank below n")
}

/// `bcast__scatter_LR_allgather`: binomial scatter, then n-1 ring steps where each rank passes
/// the block it got last to its right neighbour (`sendrecv(right, left)`).
fn scatter_lr_allgather(s: &mut Sched, root: u32, nbytes: u64) {
    let n = s.size;
    let ssize = scatter_size(nbytes, n);
    binomial_scatter(s, root, nbytes);
    let block = |i: u32| nbytes.saturating_sub(u64::from(i) * ssize).min(ssize);
    let left = s.minus(1);
    let right = s.plus(1);
    let rel = |x: u32| (x + n - root) % n;
    let mut src = s.rank;
    let mut next_src = left;
    for _ in 1..n {
        s.sendrecv(right, block(rel(src)), left, block(rel(next_src)), TAG);
        src = next_src;
        next_src = (next_src + n - 1) % n;
    }
}

/// `bcast__scatter_rdb_allgather`: nothing for one rank or 0 bytes; else the binomial scatter,
/// then MPICH's recursive-doubling allgather on ranks relative to the root.
fn scatter_rdb_allgather(s: &mut Sched, root: u32, nbytes: u64) {
    let n = s.size;
    if n == 1 || nbytes == 0 {
        return;
    }
    let ssize = scatter_size(nbytes, n);
    binomial_scatter(s, root, nbytes);
    let me = (s.rank + n - root) % n;
    let init = |r: u32| nbytes.saturating_sub(u64::from(r) * ssize).min(ssize);
    let identity = |b: u64| b;
    let xchg_recv_posted = |_r: u32, dst_tree_root: u32, _mask: u32| {
        nbytes.saturating_sub(u64::from(dst_tree_root) * ssize)
    };
    let fix_recv_posted = |_r: u32, my_tree_root: u32, mask: u32, _done: u32| {
        nbytes.saturating_sub(ssize * u64::from(my_tree_root + mask))
    };
    let rdb = Rdb {
        n,
        tag: TAG,
        init: &init,
        xchg_send_bytes: &identity,
        xchg_recv_posted: &xchg_recv_posted,
        xchg_recv_units: &identity,
        fix_send_bytes: &identity,
        fix_recv_posted: &fix_recv_posted,
        fix_recv_units: &identity,
    };
    let held = rdb.run(me, &|r| (r + root) % n, s);
    debug_assert!(
        held.iter().all(|&h| h == nbytes),
        "scatter_rdb_allgather: incomplete"
    );
}
