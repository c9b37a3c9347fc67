//! `MPI_Reduce` (`src/smpi/colls/reduce/*.cpp`, `smpi_default_selector.cpp`). Tag
//! [`tags::REDUCE`](super::tags::REDUCE).
//!
//! Default (`reduce__default`): replay passes `MPI_OP_NULL`, so the non-commutative branch is
//! skipped and `colls::ireduce` + `wait` runs: every non-root `isend`s its buffer to the root,
//! the root `irecv`s from every other rank in increasing order, then each waits.
//!
//! The `flops` of the trace action are not part of the schedule: the caller executes them on
//! every rank afterwards (SimGrid: `exec_init(flops)` after `colls::reduce`, skipped if 0).

use super::sched::{algo_names, check_comm, Sched};
use super::tags::REDUCE as TAG;
use super::{CollectiveConfig, CollectiveError, Op, Payload};

/// `smpi/reduce` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReduceAlgo {
    /// `reduce__default`: linear, all receives posted at once at the root.
    #[default]
    Default,
    /// Binomial tree of blocking messages (MPICH).
    Binomial,
    /// The root receives from n-1, n-2, …, 0 in turn with blocking receives.
    FlatTree,
    /// OpenMPI's basic linear reduce; same messages as [`ReduceAlgo::FlatTree`].
    OmpiBasicLinear,
}

algo_names!(ReduceAlgo {
    Default => "default",
    Binomial => "binomial",
    FlatTree => "flat_tree",
    OmpiBasicLinear => "ompi_basic_linear",
});

/// Appends rank `rank`'s schedule for a reduction of `data` to `root` (without the `flops`).
pub fn reduce(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    root: u32,
    data: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, Some(root))?;
    let mut s = Sched::new(rank, size, out);
    run(cfg.reduce, &mut s, root, data);
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::reduce` as called from inside other algorithms.
pub(crate) fn run(algo: ReduceAlgo, s: &mut Sched, root: u32, data: Payload) {
    match algo {
        ReduceAlgo::Default => default(s, root, data.bytes()),
        ReduceAlgo::Binomial => binomial(s, root, data),
        ReduceAlgo::FlatTree | ReduceAlgo::OmpiBasicLinear => flat_tree(s, root, data.bytes()),
    }
}

/// `reduce__default` with `MPI_OP_NULL` (`colls::ireduce` + `Request::wait`).
pub(crate) fn default(s: &mut Sched, root: u32, bytes: u64) {
    if s.rank != root {
        s.isend(root, bytes, TAG);
    } else {
        for src in (0..s.size).filter(|&src| src != root) {
            s.irecv(src, bytes, TAG);
        }
    }
    s.waitall();
}

/// `reduce__flat_tree` / `reduce__ompi_basic_linear`: non-roots `send` to the root; the root
/// `recv`s from n-1 (unless it is n-1 itself), then from n-2 down to 0, skipping itself.
fn flat_tree(s: &mut Sched, root: u32, bytes: u64) {
    if s.rank != root {
        s.send(root, bytes, TAG);
        return;
    }
    for i in (0..s.size).rev().filter(|&i| i != root) {
        s.recv(i, bytes, TAG);
    }
}

/// `reduce__binomial` (commutative, since `MPI_OP_NULL` counts as commutative there): nothing
/// for 0 elements; else relative rank r receives from r|m for each m below its lowest set bit
/// and then sends to r & !m.
fn binomial(s: &mut Sched, root: u32, data: Payload) {
    if data.count == 0 {
        return;
    }
    let n = s.size;
    let bytes = data.bytes();
    let rel = (s.rank + n - root) % n;
    let mut mask = 1u32;
    while mask < n {
        if mask & rel == 0 {
            let source = rel | mask;
            if source < n {
                s.recv((source + root) % n, bytes, TAG);
            }
        } else {
            s.send(((rel & !mask) + root) % n, bytes, TAG);
            break;
        }
        mask <<= 1;
    }
}
