//! Typed time-independent actions: one trace line decoded once.
//!
//! Volumes are kept as the trace states them: compute amounts in flops, message sizes as element
//! counts with an optional [`Datatype`]. Bytes are resolved at replay time because the default
//! datatype depends on the rank's `init` (SimGrid 3.32 `smpi_replay.cpp`, `InitAction`).

use crate::datatype::Datatype;

/// A rank in `MPI_COMM_WORLD`.
pub type Rank = u32;

/// A rank's own id of a communicator (timeless extension, README "Communicators"): 0 is
/// `MPI_COMM_WORLD`; other ids are defined by the rank's `comm_def` lines, in order of creation.
pub type CommId = u32;

/// `MPI_COMM_WORLD`'s id.
pub const WORLD: CommId = 0;

/// Element count of a receive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RecvCount {
    /// Known element count.
    Count(u64),
    /// Negative count in a SimGrid trace: probe first, then receive what was probed
    /// (reference §4.5).
    Probe,
    /// No count (the seed's original format, `003_*` Table 1): receive what the sender sends.
    FromSender,
}

/// Which request a `wait` or `test` designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKey {
    /// SimGrid 3.32: the oldest request stored under (src, dst, tag).
    Key { src: Rank, dst: Rank, tag: i32 },
    /// The seed's format: `wait` with no argument waits for the oldest pending request.
    Oldest,
}

/// The per-rank counts of a v-collective or the members of a `comm_def`, boxed. A `Vec` inline
/// (24 bytes) would make every [`Action`] 64 bytes where the other variants need 32, and a replay
/// moves one action per event: from the decoder thread to the replay (`DecodeAhead`), through
/// the line memo and the replay loop. Boxed, the action is 32 bytes and an
/// [`Event`](crate::Event) 56 (88 with the lists inline), one cache line.
#[allow(clippy::box_collection)]
pub type List<T> = Box<Vec<T>>;

/// One action of a rank's trace (reference §2; the seed's Table 1 maps onto the same variants).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `init [x]`: with an argument the default datatype becomes `MPI_DOUBLE`, else `MPI_BYTE`.
    Init { double_default: bool },
    /// `finalize`: nothing.
    Finalize,
    /// `comm_size`, `comm_split`, `comm_dup`: no-ops in SimGrid 3.32's format.
    CommNoop,
    /// `location file line`: source location, no simulated effect.
    Location,
    /// `comm_def id size w_0 .. w_size-1` (timeless extension): this rank's communicator `id`
    /// has `size` members, comm rank i being world rank `world_ranks[i]`.
    CommDef { id: CommId, world_ranks: List<Rank> },
    /// `compute flops`.
    Compute { flops: f64 },
    /// `sleep secs`: a pure delay that does not use the CPU.
    Sleep { secs: f64 },
    /// `send`/`isend dst tag count [dt]`. `blocking` is false for `isend`.
    Send {
        dst: Rank,
        tag: i32,
        count: u64,
        dt: Option<Datatype>,
        blocking: bool,
    },
    /// `recv`/`irecv src tag count [dt]`.
    Recv {
        src: Rank,
        tag: i32,
        count: RecvCount,
        dt: Option<Datatype>,
        blocking: bool,
    },
    /// `wait src dst tag`.
    Wait(RequestKey),
    /// `test src dst tag`.
    Test(RequestKey),
    /// `waitall`.
    WaitAll,
    /// `sendRecv sendcount dst recvcount src sdt rdt` (tag 0 both ways).
    SendRecv {
        send_count: u64,
        dst: Rank,
        recv_count: u64,
        src: Rank,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `barrier`.
    Barrier,
    /// `bcast count [root] [dt]`.
    Bcast {
        count: u64,
        root: Rank,
        dt: Option<Datatype>,
    },
    /// `reduce count flops [root] [dt]`.
    Reduce {
        count: u64,
        flops: f64,
        root: Rank,
        dt: Option<Datatype>,
    },
    /// `allreduce count flops [dt]`.
    AllReduce {
        count: u64,
        flops: f64,
        dt: Option<Datatype>,
    },
    /// `alltoall sendcount recvcount [sdt] [rdt]` (per-peer counts).
    AllToAll {
        send_count: u64,
        recv_count: u64,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `alltoallv sendbufsize sendcounts[N] recvbufsize recvcounts[N] [sdt] [rdt]`.
    AllToAllV {
        send_counts: List<u64>,
        recv_counts: List<u64>,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `gather sendcount recvcount [root] [sdt] [rdt]`.
    Gather {
        send_count: u64,
        recv_count: u64,
        root: Rank,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `allgather sendcount recvcount [sdt] [rdt]`.
    AllGather {
        send_count: u64,
        recv_count: u64,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `gatherv sendcount recvcounts[N] [root] [sdt] [rdt]`.
    GatherV {
        send_count: u64,
        recv_counts: List<u64>,
        root: Rank,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `allgatherv sendcount recvcounts[N] [sdt rdt] [disps[N]]`.
    AllGatherV {
        send_count: u64,
        recv_counts: List<u64>,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
        /// Displacements in elements, empty when the line has none.
        disps: List<u64>,
    },
    /// `scatter sendcount recvcount [root] [sdt] [rdt]`.
    Scatter {
        send_count: u64,
        recv_count: u64,
        root: Rank,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `scatterv sendcounts[N] recvcount [root] [sdt] [rdt]`.
    ScatterV {
        send_counts: List<u64>,
        recv_count: u64,
        root: Rank,
        send_dt: Option<Datatype>,
        recv_dt: Option<Datatype>,
    },
    /// `reducescatter recvcounts[N] flops [dt]`.
    ReduceScatter {
        recv_counts: List<u64>,
        flops: f64,
        dt: Option<Datatype>,
    },
    /// `scan count flops [dt]`.
    Scan {
        count: u64,
        flops: f64,
        dt: Option<Datatype>,
    },
    /// `exscan count flops [dt]`.
    ExScan {
        count: u64,
        flops: f64,
        dt: Option<Datatype>,
    },
}

impl Action {
    /// Whether the action may name a communicator with a trailing `comm=<id>` field:
    /// point-to-point, wait/test and collectives.
    pub fn takes_comm(&self) -> bool {
        !matches!(
            self,
            Action::Init { .. }
                | Action::Finalize
                | Action::CommNoop
                | Action::Location
                | Action::CommDef { .. }
                | Action::Compute { .. }
                | Action::Sleep { .. }
                | Action::WaitAll
        )
    }

    /// Whether the action owns lists on the heap (`comm_def` and the v-collectives): only
    /// those need dropping; a consumer that drops millions of the others may forget them
    /// instead (the drop glue of `Action` is an out-of-line call per action). Every variant is
    /// named, so that a new one has to say.
    #[inline]
    pub fn holds_lists(&self) -> bool {
        match self {
            Action::CommDef { .. }
            | Action::AllToAllV { .. }
            | Action::GatherV { .. }
            | Action::AllGatherV { .. }
            | Action::ScatterV { .. }
            | Action::ReduceScatter { .. } => true,
            Action::Init { .. }
            | Action::Finalize
            | Action::CommNoop
            | Action::Location
            | Action::Compute { .. }
            | Action::Sleep { .. }
            | Action::Send { .. }
            | Action::Recv { .. }
            | Action::Wait(_)
            | Action::Test(_)
            | Action::WaitAll
            | Action::SendRecv { .. }
            | Action::Barrier
            | Action::Bcast { .. }
            | Action::Reduce { .. }
            | Action::AllReduce { .. }
            | Action::AllToAll { .. }
            | Action::Gather { .. }
            | Action::AllGather { .. }
            | Action::Scatter { .. }
            | Action::Scan { .. }
            | Action::ExScan { .. } => false,
        }
    }

    /// Whether the action is a collective (every rank of its communicator takes part): all
    /// but the rank's own (`init`, `compute`, ...), point-to-point and request actions. Every
    /// variant is named, so that a new one has to say.
    pub fn is_collective(&self) -> bool {
        match self {
            Action::Init { .. }
            | Action::Finalize
            | Action::CommNoop
            | Action::Location
            | Action::CommDef { .. }
            | Action::Compute { .. }
            | Action::Sleep { .. }
            | Action::Send { .. }
            | Action::Recv { .. }
            | Action::Wait(_)
            | Action::Test(_)
            | Action::WaitAll
            | Action::SendRecv { .. } => false,
            Action::Barrier
            | Action::Bcast { .. }
            | Action::Reduce { .. }
            | Action::AllReduce { .. }
            | Action::AllToAll { .. }
            | Action::AllToAllV { .. }
            | Action::Gather { .. }
            | Action::AllGather { .. }
            | Action::GatherV { .. }
            | Action::AllGatherV { .. }
            | Action::Scatter { .. }
            | Action::ScatterV { .. }
            | Action::ReduceScatter { .. }
            | Action::Scan { .. }
            | Action::ExScan { .. } => true,
        }
    }

    /// The trace keyword of this action, as SimGrid 3.32 writes it.
    pub fn keyword(&self) -> &'static str {
        match self {
            Action::Init { .. } => "init",
            Action::Finalize => "finalize",
            Action::CommNoop => "comm_size",
            Action::Location => "location",
            Action::CommDef { .. } => "comm_def",
            Action::Compute { .. } => "compute",
            Action::Sleep { .. } => "sleep",
            Action::Send { blocking: true, .. } => "send",
            Action::Send {
                blocking: false, ..
            } => "isend",
            Action::Recv { blocking: true, .. } => "recv",
            Action::Recv {
                blocking: false, ..
            } => "irecv",
            Action::Wait(_) => "wait",
            Action::Test(_) => "test",
            Action::WaitAll => "waitall",
            Action::SendRecv { .. } => "sendRecv",
            Action::Barrier => "barrier",
            Action::Bcast { .. } => "bcast",
            Action::Reduce { .. } => "reduce",
            Action::AllReduce { .. } => "allreduce",
            Action::AllToAll { .. } => "alltoall",
            Action::AllToAllV { .. } => "alltoallv",
            Action::Gather { .. } => "gather",
            Action::AllGather { .. } => "allgather",
            Action::GatherV { .. } => "gatherv",
            Action::AllGatherV { .. } => "allgatherv",
            Action::Scatter { .. } => "scatter",
            Action::ScatterV { .. } => "scatterv",
            Action::ReduceScatter { .. } => "reducescatter",
            Action::Scan { .. } => "scan",
            Action::ExScan { .. } => "exscan",
        }
    }
}
