//! One rank's replay state: its trace stream, the steps of its current action, its request
//! store and its accounts.

use std::collections::VecDeque;

use timeless_kernel::ActivityId;
use timeless_trace::{ActionStream, Datatype, Rank};

use crate::comm::Tag;
use crate::mailbox::ReqId;

/// What a receive expects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RecvSize {
    /// A receive buffer of this many bytes.
    Bytes(u64),
    /// Whatever the sender sends (the seed's format, or after a probe).
    FromSender,
}

/// Where a posted request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// Blocking call: wait for it now.
    Block,
    /// `isend`/`irecv`: into the request store, for `wait`/`waitall`/`test`.
    Store,
    /// Inside a collective or `sendRecv`: into the group completed by the next `WaitGroup`.
    Group,
}

/// One step of an action, run by the interpreter in order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Post a send of `bytes` to `peer`.
    Send {
        peer: Rank,
        tag: Tag,
        bytes: u64,
        dest: Dest,
    },
    /// Post a receive from `peer`.
    Recv {
        peer: Rank,
        tag: Tag,
        size: RecvSize,
        dest: Dest,
    },
    /// Probe back-off then check for a pending send (negative-count `recv`, reference §4.5).
    Probe { peer: Rank, tag: Tag },
    /// The check that follows a probe's back-off (`burned`: the back-off ran as an activity,
    /// counted in `Simulation::probing` until this check).
    ProbeCheck { peer: Rank, tag: Tag, burned: bool },
    /// Wait for the group (`Request::waitall`: each request finished as it completes).
    WaitGroup,
    /// Wait for each request of the group in posting order (`Request::wait` on each in turn).
    WaitGroupInOrder,
    /// Wait for this one request (one of a [`Step::WaitGroupInOrder`]).
    WaitReq(ReqId),
    /// Go on with the current wait: finish the next completed request (paying its `smpi/or`),
    /// or block until one completes.
    WaitNext,
    /// `wait`: the oldest stored request with this key (or the oldest of all with `None`).
    WaitKey(Option<(Rank, Rank, Tag)>),
    /// `waitall`: every stored request.
    WaitStore,
    /// `test` on a key.
    Test((Rank, Rank, Tag)),
    /// The check that follows a test's back-off, on a request taken out of the store.
    TestCheck((Rank, Rank, Tag), ReqId),
    /// Execute flops on the host.
    Exec(f64),
    /// A job's start delay: flops executed on the host before the trace (no account).
    StartDelay(f64),
    /// Sleep, accounted as sleep/overhead time.
    Sleep(f64),
    /// Sleep accounted as waiting (test back-off).
    Backoff(f64),
    /// Wait for a turn on a core that a core-mate computes on (`timeless/fold-slice-secs`,
    /// `sim::slices`), accounted as waiting.
    CoreTurn(f64),
}

/// What a rank is blocked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// Runnable.
    Running,
    /// Waiting for one engine activity (exec or sleep).
    Activity(ActivityId, Account),
    /// Waiting for a request of the current wait to complete (see `RankState::waiting`).
    Requests,
    /// Trace done.
    Finished,
}

/// Which account an activity's duration goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Account {
    /// Computing.
    Compute,
    /// Sleeping or paying a software overhead.
    Sleep,
    /// Back-off while waiting.
    Wait,
    /// A probe's CPU back-off (counted as waiting).
    Probe,
    /// A job's start delay (in no account).
    Delay,
}

/// A stored request: its (src, dst, tag) key and the request, `None` for the marker a
/// successful `test` leaves behind.
#[derive(Debug, Clone, Copy)]
pub struct Stored {
    /// (src, dst, tag) in world ranks.
    pub key: (Rank, Rank, Tag),
    /// The request, or `None` after a successful test.
    pub req: Option<ReqId>,
}

/// A rank being replayed.
pub struct RankState {
    /// Its trace stream.
    pub reader: Box<dyn ActionStream>,
    /// Host index in the platform.
    pub host: u32,
    /// The kernel CPU its executions and polls run on: its host's (index = host index), or,
    /// with `timeless/pin-ranks`, one core of its host (see [`crate::ReplayConfig::pin_ranks`]).
    pub cpu: u32,
    /// Index of its job (0 unless several jobs are replayed).
    pub job: u32,
    /// Steps left in the current action.
    pub steps: VecDeque<Step>,
    /// Requests of the current collective/sendRecv group.
    pub group: Vec<ReqId>,
    /// Request store of `isend`/`irecv`, in posting order.
    pub store: Vec<Stored>,
    /// Current blocking state.
    pub block: Block,
    /// Requests of the current wait that were not complete when it began (for deadlock
    /// reports; completed ones may already be freed).
    pub waiting: Vec<ReqId>,
    /// Requests of the current wait not complete yet.
    pub wait_pending: u32,
    /// Completed requests of the current wait that still owe their `smpi/or` sleep, in the
    /// order they will be finished.
    pub wait_finish: VecDeque<ReqId>,
    /// Date the rank last blocked on requests.
    pub wait_start: f64,
    /// Latest start of a transfer among the requests completed since the rank last blocked
    /// (splits the blocked time into waiting for a peer and communicating).
    pub wait_last_match: f64,
    /// Current action: keyword, line, start date; `None` between actions.
    pub current: Option<(&'static str, u64, f64)>,
    /// The current action as an MPI call and the rank's id of its communicator, when the
    /// observer profiles calls.
    pub call: Option<(crate::calls::CallDesc, u32)>,
    /// Datatype of counts that carry none (`init` decides).
    pub default_dt: Datatype,
    /// The trace is exhausted (leftover requests may still be waited).
    pub eof: bool,
    /// Test back-off multiplier (reference §4.4; per rank here, global in SimGrid 3.32).
    pub test_sleeps: u32,
    /// The poll this rank runs on its host while blocked in [`Block::Requests`]
    /// (`timeless/poll-cpu-share`).
    pub poll: Option<ActivityId>,
    /// CPU seconds of in-call time not polled yet (`timeless/poll-cpu-from-trace`).
    pub poll_budget_secs: f64,
    /// The rank's last action was a burst of at least `timeless/cold-call-after-secs` (with
    /// `timeless/cold-call-before:collective`).
    pub cold_burst: bool,
    /// Probe back-off multiplier (per rank here, global in SimGrid 3.32).
    pub probe_sleeps: u32,
    /// Start date of the blocking activity.
    pub activity_start: f64,
    /// Accounts.
    pub init_secs: f64,
    /// Finish date.
    pub finish_secs: f64,
    /// Seconds computing.
    pub compute_secs: f64,
    /// Seconds in communication with transfers moving.
    pub comm_secs: f64,
    /// Seconds waiting for a peer.
    pub wait_secs: f64,
    /// Seconds sleeping or in overheads.
    pub sleep_secs: f64,
    /// Actions replayed.
    pub actions: u64,
    /// Is in the ready queue.
    pub queued: bool,
}

impl RankState {
    /// A rank at the start of its trace, on host `host`.
    pub fn new(reader: Box<dyn ActionStream>, host: u32) -> Self {
        RankState {
            reader,
            host,
            cpu: host,
            job: 0,
            steps: VecDeque::new(),
            group: Vec::new(),
            store: Vec::new(),
            block: Block::Running,
            waiting: Vec::new(),
            wait_pending: 0,
            wait_finish: VecDeque::new(),
            wait_start: 0.0,
            wait_last_match: 0.0,
            current: None,
            call: None,
            default_dt: Datatype::BYTE,
            eof: false,
            test_sleeps: 1,
            poll: None,
            poll_budget_secs: 0.0,
            cold_burst: false,
            probe_sleeps: 1,
            activity_start: 0.0,
            init_secs: 0.0,
            finish_secs: 0.0,
            compute_secs: 0.0,
            comm_secs: 0.0,
            wait_secs: 0.0,
            sleep_secs: 0.0,
            actions: 0,
            queued: false,
        }
    }

    /// Bytes of `count` elements of `dt`, or of the default datatype.
    pub fn bytes(&self, count: u64, dt: Option<Datatype>) -> u64 {
        count.saturating_mul(u64::from(dt.unwrap_or(self.default_dt).size_bytes()))
    }

    /// Size in bytes of `dt` or of the default datatype.
    pub fn dt_size(&self, dt: Option<Datatype>) -> u64 {
        u64::from(dt.unwrap_or(self.default_dt).size_bytes())
    }
}
