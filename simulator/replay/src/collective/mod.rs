//! Collective operations decomposed into point-to-point messages, as SimGrid 3.32's SMPI does.
//!
//! CONTRACT between the replay interpreter and the collective algorithms:
//! every algorithm is a pure function of (rank, communicator size, arguments) that appends the
//! rank's schedule of [`Op`]s to a buffer. The interpreter runs the ops in order; `WaitAll` (or
//! `WaitEach`) waits for every request posted since the previous one (or since the start of the
//! collective).
//! A schedule never ends with posted-but-unwaited requests.
//!
//! # Design
//!
//! SimGrid replays a collective by running one of its C++ algorithms (`src/smpi/colls/*`) on
//! fake buffers. Everything an algorithm does that costs simulated time is a point-to-point
//! message, so an algorithm is fully described, for timing purposes, by the sequence of
//! `Request::send` / `recv` / `isend` / `irecv` / `waitall` calls each rank makes. This module
//! rebuilds those sequences:
//!
//! * one file per collective ([`barrier`](mod@barrier), [`bcast`](mod@bcast), ...) holds an algorithm enum named after
//!   SimGrid's `--cfg=smpi/<coll>:<algo>` values and one private function per algorithm;
//! * [`CollectiveConfig`] is the `smpi/<coll>` configuration (plus `smpi/coll-selector`);
//! * the public dispatchers ([`bcast()`], [`allreduce()`], ...) validate their arguments, pick
//!   the configured algorithm and append the calling rank's [`Op`]s.
//!
//! Conventions shared by every algorithm (see `sched.rs`):
//! * `Request::sendrecv(dst, src)` with `dst == src == self` is a local copy and emits nothing;
//!   any other sendrecv is `Isend`, `Irecv`, `WaitAll`, in that order.
//! * `Request::send` / `recv` become [`Op::Send`] / [`Op::Recv`]; `isend` / `irecv` /
//!   `isend_init`+`start` become [`Op::Isend`] / [`Op::Irecv`]. Non-blocking collectives
//!   waited on at once (`igather` + `wait`, SimGrid's defaults) are a group of requests and one
//!   `WaitAll`.
//! * A `WaitAll` is only emitted when a request is pending (an empty `Request::waitall` costs
//!   nothing in SimGrid).
//! * Sizes are payload bytes S; the interpreter adds the 16-byte envelope.
//! * Receives carry the size the algorithm *posts*, which may exceed what the matching send
//!   carries (SimGrid algorithms often post "up to" sizes). The transfer always moves the
//!   sender's bytes.
//! * A peer may be the calling rank itself (a few algorithms send real messages to self).
//!
//! The reduction computation of `reduce`, `allreduce`, `reducescatter`, `scan` and `exscan` is
//! **not** part of the schedules: replay executes the trace's `flops` on every rank after the
//! collective, and the caller appends that `Exec` itself (SimGrid applies the `MPI_Op` with
//! `MPI_OP_NULL` during replay, which costs nothing).

pub mod allgather;
pub mod allgatherv;
pub mod allreduce;
pub mod alltoall;
pub mod alltoallv;
pub mod barrier;
pub mod bcast;
mod config;
mod error;
pub mod gather;
mod rdb;
pub mod reduce;
pub mod reduce_scatter;
pub mod scan;
pub mod scatter;
mod sched;
pub mod tags;

#[cfg(test)]
mod tests;

pub use allgather::{allgather, AllgatherAlgo};
pub use allgatherv::{allgatherv, AllgathervAlgo};
pub use allreduce::{allreduce, AllreduceAlgo};
pub use alltoall::{alltoall, AlltoallAlgo};
pub use alltoallv::{alltoallv, AlltoallvAlgo};
pub use barrier::{barrier, BarrierAlgo};
pub use bcast::{bcast, BcastAlgo};
pub use config::CollectiveConfig;
pub use error::CollectiveError;
pub use gather::{gather, gatherv, GatherAlgo};
pub use reduce::{reduce, ReduceAlgo};
pub use reduce_scatter::{reduce_scatter, ReduceScatterAlgo};
pub use scan::{exscan, scan};
pub use scatter::{scatter, scatterv, ScatterAlgo};

/// One step of a rank's part in a collective.
///
/// `peer` is a rank in the communicator the collective runs on (0..size), `bytes` is the payload
/// size S in bytes (the network model adds its own 16-byte envelope), `tag` an internal negative
/// tag distinct per collective kind so collective messages never match user point-to-point ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `MPI_Isend`: post a send, completed by the next `WaitAll`.
    Isend { peer: u32, bytes: u64, tag: i32 },
    /// `MPI_Irecv`: post a receive, completed by the next `WaitAll`.
    Irecv { peer: u32, bytes: u64, tag: i32 },
    /// Blocking `MPI_Send`: returns at once when detached (bytes < `smpi/send-is-detached-thresh`),
    /// else when the transfer completes.
    Send { peer: u32, bytes: u64, tag: i32 },
    /// Blocking `MPI_Recv`: returns when the transfer completes.
    Recv { peer: u32, bytes: u64, tag: i32 },
    /// Wait for every request posted since the last wait (`Request::waitall`: each request is
    /// finished, and its `smpi/or` slept, as it completes).
    WaitAll,
    /// Wait for each request posted since the last wait in posting order (`Request::wait` on
    /// each in turn: the `smpi/or` sleeps follow the posting order, not the completion order).
    WaitEach,
    /// Execute `flops` on the rank's host (the reduction's computation in replay).
    Exec { flops: f64 },
}

/// A contiguous buffer argument of a collective: `count` elements of a datatype of `dt_size`
/// bytes (the trace's count and `Datatype::size()` of its datatype id).
///
/// Most algorithms only need the byte size, but several of SimGrid's decisions and splittings
/// work on element counts (`allreduce` `lr` splits `count` elements into `size` blocks, the
/// pipelined `bcast`s cut segments of `8192 / dt_size` elements, ...), so both are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Payload {
    /// Number of elements.
    pub count: u64,
    /// Size of one element in bytes.
    pub dt_size: u64,
}

impl Payload {
    /// `count` elements of `dt_size` bytes each.
    pub const fn new(count: u64, dt_size: u64) -> Self {
        Self { count, dt_size }
    }

    /// `bytes` bytes of `MPI_BYTE`.
    pub const fn bytes_of(bytes: u64) -> Self {
        Self {
            count: bytes,
            dt_size: 1,
        }
    }

    /// Size in bytes (`count × dt_size`).
    pub const fn bytes(self) -> u64 {
        self.count * self.dt_size
    }
}

/// A per-rank buffer argument of a v-collective: `counts[i]` elements of `dt_size` bytes for
/// rank `i`. `counts.len()` must equal the communicator size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarPayload<'a> {
    /// Element count per rank.
    pub counts: &'a [u64],
    /// Size of one element in bytes.
    pub dt_size: u64,
}

impl<'a> VarPayload<'a> {
    /// `counts[i]` elements of `dt_size` bytes for rank `i`.
    pub const fn new(counts: &'a [u64], dt_size: u64) -> Self {
        Self { counts, dt_size }
    }

    /// Bytes for rank `i`.
    pub fn bytes(&self, i: u32) -> u64 {
        self.counts[i as usize] * self.dt_size
    }

    /// Sum of the counts, in elements.
    pub fn total_count(&self) -> u64 {
        self.counts.iter().sum()
    }
}
