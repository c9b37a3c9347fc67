//! Experiments with the tracer's own intrusion: timestamped records (`TIMELESS_TIMESTAMPS`) for
//! overhead compensation (`timeless compensate`), and injected per-event cost
//! (`TIMELESS_INJECT_NS`).
//!
//! * With `TIMELESS_TIMESTAMPS=1`, every record of a traced call is also written to
//!   `rank-<r>.timed.txt` with the call's wall-clock enter and exit times (`CLOCK_MONOTONIC`,
//!   seconds; one clock for all the ranks of a host, so multi-host runs need synchronised
//!   clocks): `<rank> <enter> <exit> <action...>`, the timestamped TI lines of
//!   `timeless-compensate`'s `stamped` module. A call writing several records stamps the first
//!   with its interval and the others at its exit; compute bursts are left out (they are the
//!   gaps); a probe is written `probe <src> <tag>`. Rank 0 lists the files in
//!   `timed-list.txt`.
//! * With `TIMELESS_INJECT_NS=N`, each traced call busy-waits N ns of thread CPU time twice, one
//!   per event of the call, where a tracer writes its records in `004_*`'s model: after the
//!   enter timestamp (inside the call, and after the CPU clock read that ends the preceding
//!   burst) and after the exit timestamp (between calls, and after the CPU clock read that
//!   starts the next burst). The timed trace shows one N inside each call and one in each gap;
//!   each compute burst of the TI trace holds N per call it spans. `trace-meta.json` records N
//!   as `tracer_overhead.injected_per_event_secs`.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::clock::thread_cpu_secs;
use crate::writer::{HoleId, Writer};

static STAMPS: AtomicBool = AtomicBool::new(false);
static INJECT_NS: AtomicU64 = AtomicU64::new(0);

/// Name of rank `r`'s timestamped file.
pub fn timed_file(rank: u32) -> String {
    format!("rank-{rank}.timed.txt")
}

/// Name of the list of timestamped files.
pub const TIMED_LIST_FILE: &str = "timed-list.txt";

/// Turns timestamps on (read by every wrapper).
pub fn enable_stamps() {
    STAMPS.store(true, Ordering::Release);
}

/// Whether calls are timestamped.
#[inline]
pub fn stamps_enabled() -> bool {
    STAMPS.load(Ordering::Relaxed)
}

/// Sets the injected cost per event, nanoseconds.
pub fn set_inject_ns(ns: u64) {
    INJECT_NS.store(ns, Ordering::Release);
}

/// Busy-waits the injected cost (thread CPU time), if any.
#[inline]
pub fn inject() {
    let ns = INJECT_NS.load(Ordering::Relaxed);
    if ns == 0 {
        return;
    }
    let until = thread_cpu_secs() + ns as f64 * 1e-9;
    while thread_cpu_secs() < until {
        std::hint::spin_loop();
    }
}

/// Wall-clock time (`CLOCK_MONOTONIC`), seconds.
pub fn wall_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A rank's timestamped file.
pub struct Stamped {
    out: Writer,
    /// Enter and exit of the current call; after its first record, enter = exit.
    call: (f64, f64),
    /// Stamps of records whose text waits in a hole.
    holes: HashMap<HoleId, (f64, f64)>,
}

impl Stamped {
    /// A timestamped file written through `out`.
    pub fn new(out: Writer) -> Stamped {
        let now = wall_secs();
        Stamped {
            out,
            call: (now, now),
            holes: HashMap::new(),
        }
    }

    /// The call being recorded ran from `enter` to `exit` (wall seconds).
    pub fn set_call(&mut self, enter: f64, exit: f64) {
        self.call = (enter, exit);
    }

    /// Writes one record of the current call.
    pub fn line(&mut self, rank: u32, args: fmt::Arguments<'_>) -> std::io::Result<()> {
        let (enter, exit) = self.call;
        self.call.0 = exit;
        self.out
            .line(format_args!("{rank} {enter:.9} {exit:.9} {args}"))
    }

    /// Reserves the place of a record of the current call whose text comes later.
    pub fn hole(&mut self) -> HoleId {
        let id = self.out.hole();
        self.holes.insert(id, self.call);
        self.call.0 = self.call.1;
        id
    }

    /// Fills hole `id` with a record (stamped with its call) or, when `record` is false, a
    /// comment.
    pub fn fill(
        &mut self,
        id: HoleId,
        rank: u32,
        record: bool,
        args: fmt::Arguments<'_>,
    ) -> std::io::Result<()> {
        let (enter, exit) = self.holes.remove(&id).unwrap_or(self.call);
        if record {
            self.out
                .fill(id, format_args!("{rank} {enter:.9} {exit:.9} {args}"))
        } else {
            self.out.fill(id, args)
        }
    }

    /// The underlying writer (closing, signal flush).
    pub fn writer(&mut self) -> &mut Writer {
        &mut self.out
    }

    /// The underlying writer, read-only (signal flush).
    pub fn writer_ref(&self) -> &Writer {
        &self.out
    }
}
