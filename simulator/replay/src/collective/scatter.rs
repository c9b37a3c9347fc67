//! `MPI_Scatter` and `MPI_Scatterv` (`src/smpi/colls/scatter/*.cpp`, `smpi_nbc_impl.cpp`).
//! Tags [`tags::SCATTER`](super::tags::SCATTER) and [`tags::SCATTERV`](super::tags::SCATTERV).
//!
//! Default (`scatter__default` = `colls::iscatter` + wait): non-roots `irecv` from the root, the
//! root `isend`s to every other rank in increasing order; one wait each. `scatterv` is not
//! configurable: always `colls::iscatterv` + wait, the same pattern with per-rank send sizes.

use super::gather::in_order_bmtree;
use super::sched::{algo_names, check_comm, check_len, Sched};
use super::tags::{SCATTER as TAG, SCATTERV as TAG_V};
use super::{CollectiveConfig, CollectiveError, Op, Payload, VarPayload};

/// `smpi/scatter` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScatterAlgo {
    /// `scatter__default`: linear, all requests posted at once.
    #[default]
    Default,
    /// OpenMPI's decision table (basic linear, binomial or linear non-blocking).
    Ompi,
    /// Non-roots `recv`; the root `send`s to each rank in increasing order.
    OmpiBasicLinear,
    /// Non-roots `recv`; the root `isend`s to every rank, then waits.
    OmpiLinearNb,
    /// OpenMPI's in-order binomial tree.
    OmpiBinomial,
    /// `scatter__mpich` = [`ScatterAlgo::OmpiBinomial`].
    Mpich,
}

algo_names!(ScatterAlgo {
    Default => "default",
    Ompi => "ompi",
    OmpiBasicLinear => "ompi_basic_linear",
    OmpiLinearNb => "ompi_linear_nb",
    OmpiBinomial => "ompi_binomial",
    Mpich => "mpich",
});

/// Appends rank `rank`'s schedule for a scatter from `root`: the root sends `send` to each
/// rank, each rank receives `recv`.
pub fn scatter(
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
    let algo = match cfg.scatter {
        // The table is evaluated per rank on its own buffer, as in SimGrid.
        ScatterAlgo::Ompi => ompi_choice(size, if rank == root { send } else { recv }.bytes()),
        other => other,
    };
    match algo {
        ScatterAlgo::Default => linear_nb(&mut s, root, &|_| send.bytes(), recv.bytes(), TAG),
        ScatterAlgo::OmpiBasicLinear => ompi_basic_linear(&mut s, root, send.bytes(), recv.bytes()),
        ScatterAlgo::OmpiLinearNb => ompi_linear_nb(&mut s, root, send.bytes(), recv.bytes()),
        ScatterAlgo::OmpiBinomial | ScatterAlgo::Mpich => ompi_binomial(&mut s, root, send, recv),
        ScatterAlgo::Ompi => unreachable!("resolved above"),
    }
    debug_assert!(s.is_settled());
    Ok(())
}

/// `scatter__ompi`'s decision for `n` ranks and `d` bytes (the root's send block, or the
/// others' receive block).
fn ompi_choice(n: u32, d: u64) -> ScatterAlgo {
    use ScatterAlgo::{OmpiBasicLinear as L, OmpiBinomial as B, OmpiLinearNb as Nb};
    let table: &[(u64, ScatterAlgo)] = match n {
        _ if n < 4 => &[(2, Nb), (131072, L), (262144, Nb), (u64::MAX, L)],
        _ if n < 8 => &[
            (2048, B),
            (4096, L),
            (8192, B),
            (32768, L),
            (1048576, Nb),
            (u64::MAX, L),
        ],
        _ if n < 16 => &[(16384, B), (1048576, Nb), (u64::MAX, L)],
        _ if n < 32 => &[(16384, B), (32768, L), (u64::MAX, Nb)],
        _ if n < 64 => &[(512, B), (8192, Nb), (16384, B), (u64::MAX, Nb)],
        _ => &[(512, B), (u64::MAX, Nb)],
    };
    table
        .iter()
        .find(|&&(limit, _)| d < limit || limit == u64::MAX)
        .map_or(L, |&(_, algo)| algo)
}

/// Appends rank `rank`'s schedule for a scatterv from `root`: the root sends `send.counts[i]`
/// elements to rank i, each rank receives `recv`.
pub fn scatterv(
    _cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    root: u32,
    send: VarPayload<'_>,
    recv: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, Some(root))?;
    check_len("scatterv sendcounts", send.counts.len(), size)?;
    let mut s = Sched::new(rank, size, out);
    scatterv_fixed(&mut s, root, send, recv.bytes());
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::scatterv` (= `iscatterv` + wait).
pub(crate) fn scatterv_fixed(s: &mut Sched, root: u32, send: VarPayload<'_>, recv_bytes: u64) {
    linear_nb(s, root, &|dst| send.bytes(dst), recv_bytes, TAG_V);
}

/// `colls::iscatter` / `iscatterv` + wait.
fn linear_nb(s: &mut Sched, root: u32, send_bytes: &dyn Fn(u32) -> u64, recv_bytes: u64, tag: i32) {
    if s.rank != root {
        s.irecv(root, recv_bytes, tag);
    } else {
        for dst in (0..s.size).filter(|&dst| dst != root) {
            s.isend(dst, send_bytes(dst), tag);
        }
    }
    s.waitall();
}

/// `scatter__ompi_basic_linear`.
fn ompi_basic_linear(s: &mut Sched, root: u32, send_bytes: u64, recv_bytes: u64) {
    if s.rank != root {
        s.recv(root, recv_bytes, TAG);
        return;
    }
    for i in (0..s.size).filter(|&i| i != root) {
        s.send(i, send_bytes, TAG);
    }
}

/// `scatter__ompi_linear_nb`.
fn ompi_linear_nb(s: &mut Sched, root: u32, send_bytes: u64, recv_bytes: u64) {
    if s.rank != root {
        s.recv(root, recv_bytes, TAG);
        return;
    }
    for i in (0..s.size).filter(|&i| i != root) {
        s.isend(i, send_bytes, TAG);
    }
    s.waitall();
}

/// `scatter__ompi_binomial`: even relative ranks other than the root `recv` (posting the whole
/// `recvcount × n`) from their parent, then `send` each child its subtree's blocks; odd ones
/// only `recv` their block. The root counts in send elements, the others in receive elements.
fn ompi_binomial(s: &mut Sched, root: u32, send: Payload, recv: Payload) {
    let n = s.size;
    let vrank = (s.rank + n - root) % n;
    let (parent, children) = in_order_bmtree(vrank, n);
    let to_rank = |v: u32| (v + root) % n;
    if vrank & 1 == 0 {
        if let Some(parent) = parent {
            s.recv(
                to_rank(parent),
                recv.count * u64::from(n) * recv.dt_size,
                TAG,
            );
        }
        let unit = if s.rank == root { send } else { recv };
        for vkid in children {
            let blocks = u64::from((vkid - vrank).min(n - vkid));
            s.send(to_rank(vkid), blocks * unit.count * unit.dt_size, TAG);
        }
    } else if let Some(parent) = parent {
        s.recv(to_rank(parent), recv.bytes(), TAG);
    }
}
