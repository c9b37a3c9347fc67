//! Per-rank tracer state: the trace writer, the compute-burst clock, the communicators and
//! datatypes seen so far, and the requests not completed yet.
//!
//! One [`Tracer`] per rank, used under the runtime's mutex. Its state is split by what it
//! models, each part in a submodule adding its own methods to [`Tracer`]:
//!
//! * [`comms`]: the communicators, by handle, and their `comm_def` records (every record
//!   names peers and roots by their rank in `MPI_COMM_WORLD`);
//! * [`datatypes`]: the predefined datatypes SimGrid knows, and element counts;
//! * [`requests`]: nonblocking and persistent requests, matched messages, and the wildcard
//!   `irecv`s whose record is a hole until they complete;
//! * [`bursts`]: the compute between MPI calls (CPU time or instructions), written as
//!   `compute` records;
//! * [`output`]: writing records to the trace, the timestamped copy and the profile;
//!   flushing and closing.
//!
//! The submodules share the parent's [`Tracer`] and [`Fail`]; `comms` and `requests` write
//! their records through `output`, which first has `bursts` write the compute that precedes
//! each action record.

pub mod bursts;
pub mod comms;
pub mod datatypes;
pub mod output;
pub mod requests;

use std::any::TypeId;
use std::fmt;

use rustc_hash::FxHashMap;

use crate::burst::{BurstCarry, BurstRule, SiteState};
use crate::clock::thread_cpu_chained_secs;
use crate::mpi::MPI_Comm;
use crate::stamps::Stamped;
use crate::writer::{HoleId, Writer};

use bursts::Counted;
pub use comms::{CommField, CommInfo, CommTable};
pub use datatypes::{TypeTable, BYTE_ID};
pub use output::{Counts, SiteField};
use requests::Requests;
pub use requests::{Matched, Pending, Persistent, WaitKey};

/// An internal failure: tracing stops, the program does not.
#[derive(Debug)]
pub struct Fail(String);

impl Fail {
    pub fn new(msg: impl Into<String>) -> Fail {
        Fail(msg.into())
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail(format!("trace write failed: {e}"))
    }
}

/// Settings read from the environment at start-up.
#[derive(Debug, Clone)]
pub struct Settings {
    /// When a burst is written rather than carried over (CPU seconds, see `burst`).
    pub burst_rule: BurstRule,
    /// Test hook: panic when this many records have been written.
    pub inject_panic_at: Option<u64>,
    /// Buffered lines older than this (wall seconds) are written out, at the end of a traced
    /// call or by the flusher thread (`runtime`); 0: only when the buffer fills.
    pub flush_secs: f64,
}

/// One rank's tracer.
pub struct Tracer {
    rank: u32,
    size: u32,
    out: Writer,
    /// Reference speed in flop/s.
    speed: f64,
    /// Thread CPU time when the tracer last handed control back to the program.
    last_exit: f64,
    /// Compute not written yet (carried over, and the current burst; see `burst`).
    pending: BurstCarry,
    /// Per call site (hook of the call that wrote the last record, hook of the call writing
    /// the next one): what it did with its last gap (`burst`'s hysteresis).
    sites: FxHashMap<(TypeId, TypeId), SiteState>,
    /// Hook of the call that wrote the last record, and of the call being traced.
    last_record_call: TypeId,
    current_call: TypeId,
    /// Compute measured in instructions, when hardware counters are used (see `counters`).
    counted: Option<Counted>,
    settings: Settings,
    pub comms: CommTable,
    pub types: TypeTable,
    /// Pending requests by handle. Handles are not unique: Open MPI returns one shared,
    /// already complete request for every send that completed at once, so each handle keeps a
    /// queue, oldest first.
    reqs: Requests,
    /// Persistent requests by handle, from their creation to `MPI_Request_free`.
    persistent: FxHashMap<u64, Persistent>,
    /// Messages matched by `MPI_Mprobe`/`MPI_Improbe` and not received yet, by handle.
    messages: FxHashMap<u64, Matched>,
    records: u64,
    closed: bool,
    /// Wall-clock time (`CLOCK_MONOTONIC`, seconds) of the last periodic flush.
    last_flush_wall: f64,
    /// The clock note is written (see [`Tracer::clock_note`]).
    clock_noted: bool,
    /// The timestamped copy of the records (`TIMELESS_TIMESTAMPS`, see `stamps`).
    stamped: Option<Stamped>,
    /// The communicator-centric profile (`TIMELESS_PROFILE`, see `profile`).
    pub profile: Option<crate::profile::Capture>,
    /// Call sites, when recorded (`TIMELESS_CALLSITES`, see `callsite`).
    pub callsites: Option<crate::callsite::CallSites>,
    /// Call site of the call being traced (its action records end with `@cs=<id>`).
    callsite: Option<u32>,
    /// Call sites of the wildcard `irecv`s whose hole is not filled yet.
    hole_sites: FxHashMap<HoleId, u32>,
    /// Wall and CPU time inside the traced calls (see `incall`).
    in_call: crate::incall::InCall,
}

// SAFETY: the tracer holds MPI handles (plain identifiers, pointers under Open MPI) and raw
// pointers to nothing else; it is only used under the runtime's mutex, from threads the MPI
// library allows to make MPI calls.
unsafe impl Send for Tracer {}

impl Tracer {
    pub fn new(
        rank: u32,
        size: u32,
        out: Writer,
        speed: f64,
        settings: Settings,
        comms: CommTable,
    ) -> Tracer {
        Tracer {
            rank,
            size,
            out,
            speed,
            last_exit: thread_cpu_chained_secs(),
            pending: BurstCarry::default(),
            sites: FxHashMap::default(),
            last_record_call: TypeId::of::<()>(),
            current_call: TypeId::of::<()>(),
            counted: None,
            settings,
            comms,
            types: TypeTable::from_library(),
            reqs: Requests::default(),
            persistent: FxHashMap::default(),
            messages: FxHashMap::default(),
            records: 0,
            closed: false,
            last_flush_wall: crate::clock::wall_secs(),
            clock_noted: false,
            stamped: None,
            profile: None,
            callsites: None,
            callsite: None,
            hole_sites: FxHashMap::default(),
            in_call: crate::incall::InCall::default(),
        }
    }

    /// Takes the call site of the MPI call being traced, when call sites are recorded.
    pub fn capture_callsite(&mut self) {
        self.callsite = self.callsites.as_mut().and_then(|c| c.here());
    }

    /// Also writes every record, timestamped, to `stamped`.
    pub fn set_stamped(&mut self, stamped: Stamped) {
        self.stamped = Some(stamped);
    }

    /// The call whose records follow ran from `enter` to `exit` (wall seconds).
    pub fn set_call(&mut self, enter: f64, exit: f64) {
        if let Some(s) = &mut self.stamped {
            s.set_call(enter, exit);
        }
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Tells the profile (if kept) what the call being traced moves on `comm`: `sent` and
    /// `recv` bytes (see `profile::Capture::direct`). Call it before writing the record.
    pub fn profile_direct(&mut self, comm: MPI_Comm, sent: u64, recv: u64) -> Result<(), Fail> {
        if self.profile.is_some() {
            let id = self.comms.get(comm)?.id;
            if let Some(p) = &mut self.profile {
                p.direct(id, sent, recv);
            }
        }
        Ok(())
    }

    /// The periodic flush's period, seconds (0: none).
    pub fn settings_flush_secs(&self) -> f64 {
        self.settings.flush_secs
    }

    /// Number of records written or reserved so far.
    pub fn records(&self) -> u64 {
        self.records
    }
}
