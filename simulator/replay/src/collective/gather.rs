//! `MPI_Gather` and `MPI_Gatherv` (`src/smpi/colls/gather/*.cpp`, `smpi_nbc_impl.cpp`). Tags
//! [`tags::GATHER`](super::tags::GATHER) and [`tags::GATHERV`](super::tags::GATHERV).
//!
//! Default (`gather__default` = `colls::igather` + wait): every non-root `isend`s to the root,
//! the root `irecv`s from every other rank in increasing order; one wait each.
//! `gatherv` is not configurable in SimGrid: always `colls::igatherv` + wait, the same pattern
//! with per-rank receive sizes.

use super::sched::{algo_names, check_comm, check_len, Sched};
use super::tags::{GATHER as TAG, GATHERV as TAG_V};
use super::{CollectiveConfig, CollectiveError, Op, Payload, VarPayload};

/// `smpi/gather` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GatherAlgo {
    /// `gather__default`: linear, all requests posted at once.
    #[default]
    Default,
    /// Non-roots `send`; the root `recv`s from each rank in increasing order.
    OmpiBasicLinear,
    /// OpenMPI's in-order binomial tree.
    OmpiBinomial,
    /// `gather__mpich` = [`GatherAlgo::OmpiBinomial`].
    Mpich,
}

algo_names!(GatherAlgo {
    Default => "default",
    OmpiBasicLinear => "ompi_basic_linear",
    OmpiBinomial => "ompi_binomial",
    Mpich => "mpich",
});

/// Appends rank `rank`'s schedule for a gather to `root`: each rank contributes `send`, the root
/// receives `recv` from each rank.
pub fn gather(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    root: u32,
    send: Payload,
    recv: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, Some(root))?;
    let mut s = Sched::new(rank, size, out);
    run(cfg.gather, &mut s, root, send, recv);
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::gather` as called from inside other algorithms.
pub(crate) fn run(algo: GatherAlgo, s: &mut Sched, root: u32, send: Payload, recv: Payload) {
    match algo {
        GatherAlgo::Default => linear_nb(s, root, send.bytes(), &|_| recv.bytes(), TAG),
        GatherAlgo::OmpiBasicLinear => ompi_basic_linear(s, root, send.bytes(), recv.bytes()),
        GatherAlgo::OmpiBinomial | GatherAlgo::Mpich => ompi_binomial(s, root, send, recv),
    }
}

/// Appends rank `rank`'s schedule for a gatherv to `root`: each rank sends `send`, the root
/// receives `recv.counts[i]` elements from rank i.
pub fn gatherv(
    _cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    root: u32,
    send: Payload,
    recv: VarPayload<'_>,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, Some(root))?;
    check_len("gatherv recvcounts", recv.counts.len(), size)?;
    let mut s = Sched::new(rank, size, out);
    gatherv_fixed(&mut s, root, send, recv);
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::gatherv` (= `igatherv` + wait).
pub(crate) fn gatherv_fixed(s: &mut Sched, root: u32, send: Payload, recv: VarPayload<'_>) {
    linear_nb(s, root, send.bytes(), &|src| recv.bytes(src), TAG_V);
}

/// `colls::igather` / `igatherv` + wait.
fn linear_nb(s: &mut Sched, root: u32, send_bytes: u64, recv_bytes: &dyn Fn(u32) -> u64, tag: i32) {
    if s.rank != root {
        s.isend(root, send_bytes, tag);
    } else {
        for src in (0..s.size).filter(|&src| src != root) {
            s.irecv(src, recv_bytes(src), tag);
        }
    }
    s.waitall();
}

/// `gather__ompi_basic_linear`.
fn ompi_basic_linear(s: &mut Sched, root: u32, send_bytes: u64, recv_bytes: u64) {
    if s.rank != root {
        s.send(root, send_bytes, TAG);
        return;
    }
    for i in (0..s.size).filter(|&i| i != root) {
        s.recv(i, recv_bytes, TAG);
    }
}

/// OpenMPI's in-order binomial tree (`ompi_coll_tuned_topo_build_in_order_bmtree`) of
/// relative rank `vrank`: (parent, children in increasing mask order), as relative ranks.
pub(crate) fn in_order_bmtree(vrank: u32, n: u32) -> (Option<u32>, Vec<u32>) {
    let mut children = Vec::new();
    let mut mask = 1u32;
    while mask < n {
        let remote = vrank ^ mask;
        if remote < vrank {
            return (Some(remote), children);
        } else if remote < n {
            children.push(remote);
        }
        mask <<= 1;
    }
    (None, children)
}

/// `gather__ompi_binomial`: each even relative rank `recv`s from its children (in-order
/// binomial tree) the blocks of their whole subtrees, then every non-root `send`s everything it
/// holds to its parent. The root counts in receive elements, the others in send elements.
fn ompi_binomial(s: &mut Sched, root: u32, send: Payload, recv: Payload) {
    let n = s.size;
    let vrank = (s.rank + n - root) % n;
    let (parent, children) = in_order_bmtree(vrank, n);
    // (elements per block, element size) in which this rank counts.
    let unit = if s.rank == root { recv } else { send };
    let mut total = unit.count;
    if vrank & 1 == 0 {
        for vkid in children {
            let blocks = u64::from((vkid - vrank).min(n - vkid));
            let count = blocks * unit.count;
            s.recv((vkid + root) % n, count * unit.dt_size, TAG);
            total += count;
        }
    }
    if let Some(parent) = parent {
        s.send((parent + root) % n, total * send.dt_size, TAG);
    }
}
