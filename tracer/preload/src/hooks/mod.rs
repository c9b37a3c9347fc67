//! Record kinds: what each traced MPI call writes, in SimGrid 3.32's TI format extended with
//! communicators (see [`crate::tracer`]).
//!
//! A kind implements [`Hook`] for the C argument tuple of every function the table maps to it
//! (the blocking and nonblocking forms of a collective share one kind). `pre` runs before the
//! library call and keeps what the call destroys (request handles); `post` writes the records
//! once the call succeeded (a failed call records a comment only, see [`crate::runtime`]).
//! Every record on a communicator goes through [`Tracer::on`], which writes the
//! communicator's `comm_def` at first sight and the trailing `comm=<id>` field.
//!
//! Mapping to SimGrid 3.32 actions (reference §2), where the program's call has none:
//! * `ssend`/`rsend`/`bsend` → `send`; `issend`/`irsend`/`ibsend` → `isend`.
//! * `sendrecv` → `sendRecv` when both tags are 0 (SimGrid's action uses tag 0); otherwise
//!   `isend`, `irecv`, `wait`, `wait` with the real tags. With an `MPI_PROC_NULL` side, the
//!   other side alone as `send` or `recv`.
//! * `test` → `test src dst tag`; on success also `wait src dst tag`, so the replay completes the
//!   request where the program saw it complete.
//! * `waitall`/`testall` → `waitall` when they complete every pending point-to-point request of
//!   the rank (SimGrid waits for all stored requests), one `wait` per request otherwise;
//!   `waitany`/`waitsome`/`testany`/`testsome` → one `wait` per completed request.
//! * persistent requests: `send_init` and the like record nothing; each `start`/`startall`
//!   records the request's `isend` or `irecv`, completed like a nonblocking one.
//! * `mprobe`/`improbe` → a comment; `mrecv`/`imrecv` → `recv`/`irecv` from the sender and
//!   tag the probe matched.
//! * `probe`/`iprobe` → a comment (the following receive carries the size).
//! * nonblocking collectives → the blocking action, recorded when posted; their completion
//!   records nothing.
//! * reductions carry 0 flops (their arithmetic is inside MPI, excluded from bursts).
//! * `comm_split`, `comm_split_type` → SimGrid's no-op `comm_split`, `comm_dup` → `comm_dup`,
//!   each followed by the new communicator's `comm_def`; `comm_create`, `comm_create_group`,
//!   `cart_create`, `cart_sub`, `graph_create`, `dist_graph_create(_adjacent)` and (MPI-4
//!   sessions, see [`crate::session`]) `comm_create_from_group` → the `comm_def` only.
//! * collectives on intercommunicators → a comment.
//! * `alltoallw` → `alltoallv` in bytes (each peer's count × its datatype's size).
//! * `comm_idup` → `comm_dup` and the new communicator's `comm_def` (its members are the
//!   parent's), when posted; `intercomm_create` → a comment naming both groups.
//! * `neighbor_allgather`, `neighbor_alltoall` → `irecv`s, `isend`s and `wait`s with each
//!   neighbour of the topology (tags below zero, see [`NEIGHBOR_TAG`]).

use std::ffi::{c_int, c_void};

use crate::mpi::{
    self, handle_key, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Op, MPI_Request, MPI_Status,
};
use crate::record::{Record, Reduction};
use crate::runtime::Hook;
use crate::tracer::{
    CommField, Counts, Fail, Matched, Pending, Persistent, Tracer, WaitKey, BYTE_ID,
};

mod collective;
mod comm;
mod completion;
mod end;
mod neighbor;
mod p2p;

pub use collective::*;
pub use comm::*;
pub use completion::*;
pub use end::*;
pub use neighbor::*;
pub use p2p::*;

type SB = *const c_void;
type RB = *mut c_void;
type Dt = MPI_Datatype;
type Req = *mut MPI_Request;
type St = *mut MPI_Status;
type Ints = *const c_int;

fn in_place<T>(buf: *const T) -> bool {
    std::ptr::eq(buf as *const c_void, mpi::in_place())
}

/// The `n` counts of a significant count array (`None` for a null pointer).
fn ints<'a>(p: Ints, n: usize) -> Option<&'a [c_int]> {
    // SAFETY: a significant count array of a successful call has one entry per rank of the
    // communicator.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, n) })
}

/// Reads a status the wrapper guarantees to be real storage (never `MPI_STATUS_IGNORE`).
fn status<'a>(p: *mut MPI_Status) -> &'a MPI_Status {
    // SAFETY: the `Status`/`Statuses` argument kinds substitute the ignore sentinels.
    unsafe { &*p }
}

fn wait_rec(t: &mut Tracer, k: WaitKey) -> Result<(), Fail> {
    let WaitKey {
        src,
        dst,
        tag,
        comm,
    } = k;
    t.rec_record(Record::Wait { src, dst, tag }, comm)
}

fn test_rec(t: &mut Tracer, k: WaitKey) -> Result<(), Fail> {
    let WaitKey {
        src,
        dst,
        tag,
        comm,
    } = k;
    t.rec_record(Record::Test { src, dst, tag }, comm)
}

fn read_reqs(count: c_int, reqs: Req) -> Vec<u64> {
    if reqs.is_null() || count <= 0 {
        return Vec::new();
    }
    // SAFETY: an array of `count` requests, read before the call completes them.
    unsafe { std::slice::from_raw_parts(reqs, count as usize) }
        .iter()
        .map(|&r| handle_key(r))
        .collect()
}
