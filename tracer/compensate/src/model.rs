//! The timed event model: what a measured run recorded, per rank, with timestamps.
//!
//! Each record is one interval on one rank: an MPI call or a user region, entered at
//! `enter_secs` and left at `exit_secs` (seconds on a clock common to all ranks). Following
//! `004_*` §3.2, with PMPI interposition the `send` event of a point-to-point send coincides with
//! its `enter.send` and the `recv` event of a receive with its `exit.recv`, so a record carries
//! two events (enter and exit) and, for communication, the message identity: peer, tag,
//! communicator and size. Messages between one ordered pair of ranks on one communicator and tag
//! match in order (MPI's non-overtaking rule), which identifies a message without ids.

/// A rank in `MPI_COMM_WORLD`.
pub type Rank = u32;

/// A rank-local communicator id (0 is `MPI_COMM_WORLD`; others are declared by `comm_def`, as
/// in the project's TI communicator extension).
pub type CommId = u32;

/// How a collective's members depend on each other (`004_*` §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveShape {
    /// Every member's exit depends on every member's enter (barrier, allreduce, ...).
    NToN,
    /// Every non-root member's exit depends on the root's enter (bcast, scatter).
    OneToN,
    /// The root's exit depends on every member's enter (reduce, gather). Not in `004_*`, which
    /// considers only n-to-n and 1-to-n: treated as the mirror image of 1-to-n.
    NToOne,
}

/// A collective operation, named as in SimGrid's TI format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveOp {
    Barrier,
    Allreduce,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Reducescatter,
    Scan,
    Exscan,
    Bcast,
    Scatter,
    Scatterv,
    Reduce,
    Gather,
    Gatherv,
}

impl CollectiveOp {
    /// Every operation, for the parser and error messages.
    pub const ALL: [CollectiveOp; 15] = [
        CollectiveOp::Barrier,
        CollectiveOp::Allreduce,
        CollectiveOp::Allgather,
        CollectiveOp::Allgatherv,
        CollectiveOp::Alltoall,
        CollectiveOp::Alltoallv,
        CollectiveOp::Reducescatter,
        CollectiveOp::Scan,
        CollectiveOp::Exscan,
        CollectiveOp::Bcast,
        CollectiveOp::Scatter,
        CollectiveOp::Scatterv,
        CollectiveOp::Reduce,
        CollectiveOp::Gather,
        CollectiveOp::Gatherv,
    ];

    /// The keyword of the operation in a timed trace.
    pub fn keyword(self) -> &'static str {
        match self {
            CollectiveOp::Barrier => "barrier",
            CollectiveOp::Allreduce => "allreduce",
            CollectiveOp::Allgather => "allgather",
            CollectiveOp::Allgatherv => "allgatherv",
            CollectiveOp::Alltoall => "alltoall",
            CollectiveOp::Alltoallv => "alltoallv",
            CollectiveOp::Reducescatter => "reducescatter",
            CollectiveOp::Scan => "scan",
            CollectiveOp::Exscan => "exscan",
            CollectiveOp::Bcast => "bcast",
            CollectiveOp::Scatter => "scatter",
            CollectiveOp::Scatterv => "scatterv",
            CollectiveOp::Reduce => "reduce",
            CollectiveOp::Gather => "gather",
            CollectiveOp::Gatherv => "gatherv",
        }
    }

    /// The operation named `kw`, if any.
    pub fn from_keyword(kw: &str) -> Option<CollectiveOp> {
        CollectiveOp::ALL.into_iter().find(|op| op.keyword() == kw)
    }

    /// Its dependency shape. Scans are prefix operations; treating them as n-to-n can only
    /// delay exits, never violate happened-before.
    pub fn shape(self) -> CollectiveShape {
        match self {
            CollectiveOp::Bcast | CollectiveOp::Scatter | CollectiveOp::Scatterv => {
                CollectiveShape::OneToN
            }
            CollectiveOp::Reduce | CollectiveOp::Gather | CollectiveOp::Gatherv => {
                CollectiveShape::NToOne
            }
            _ => CollectiveShape::NToN,
        }
    }
}

/// What a record is.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordKind {
    /// A user region or an MPI call without dependencies (`004_*` §3.1, independent events).
    Region { name: String },
    /// A blocking send, assumed not to wait for the receiver (`004_*` §3's assumption).
    Send {
        dst: Rank,
        tag: i32,
        bytes: u64,
        comm: CommId,
    },
    /// A blocking receive; `src` and `tag` are the matched ones (from the status).
    Recv {
        src: Rank,
        tag: i32,
        bytes: u64,
        comm: CommId,
    },
    /// A blocking probe (`MPI_Probe`): waits for the message that the next receive from
    /// (`src`, `tag`, `comm`) consumes, without consuming it. Only the envelope arrives, so
    /// no copy cost.
    Probe { src: Rank, tag: i32, comm: CommId },
    /// A collective. `bytes` is this rank's per-peer payload with the root: received from it
    /// (1-to-n) or sent to it (n-to-1); for n-to-n operations and for the root it is informative.
    Collective {
        op: CollectiveOp,
        bytes: u64,
        root: Option<Rank>,
        comm: CommId,
    },
}

impl RecordKind {
    /// The keyword this record has in a timed trace.
    pub fn keyword(&self) -> &'static str {
        match self {
            RecordKind::Region { .. } => "region",
            RecordKind::Send { .. } => "send",
            RecordKind::Recv { .. } => "recv",
            RecordKind::Probe { .. } => "probe",
            RecordKind::Collective { op, .. } => op.keyword(),
        }
    }
}

/// One measured interval of one rank.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedRecord {
    /// Rank it belongs to.
    pub rank: Rank,
    /// 1-based line of the record in its file (0 for records built in memory).
    pub line: u64,
    /// Measured enter timestamp, seconds.
    pub enter_secs: f64,
    /// Measured exit timestamp, seconds (`>= enter_secs`).
    pub exit_secs: f64,
    /// What it is.
    pub kind: RecordKind,
}

/// One item of a rank's timed stream.
#[derive(Debug, Clone, PartialEq)]
pub enum TimedItem {
    /// Rank-local communicator `id` with its members' world ranks in communicator-rank order.
    CommDef { id: CommId, members: Vec<Rank> },
    /// A measured interval.
    Record(TimedRecord),
}
