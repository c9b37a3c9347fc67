//! Collective operations decomposed into point-to-point messages, as SimGrid 3.32's SMPI does.
//!
//! CONTRACT between the replay interpreter and the collective algorithms:
//! every algorithm is a pure function of (rank, communicator size, arguments) that appends the
//! rank's schedule of [`Op`]s to a buffer. The interpreter runs the ops in order; `WaitAll` waits
//! for every request posted since the previous `WaitAll` (or since the start of the collective).
//! A schedule never ends with posted-but-unwaited requests.

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
    /// Wait for every request posted since the last `WaitAll`.
    WaitAll,
    /// Execute `flops` on the rank's host (the reduction's computation in replay).
    Exec { flops: f64 },
}
