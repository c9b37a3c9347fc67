//! Time inside the traced MPI calls: per rank, how many calls, their wall time and the CPU
//! time the rank's thread spent in them, written by rank 0 at `MPI_Finalize` to
//! [`FILE`] in its trace directory.
//!
//! A TI trace keeps the compute between calls (thread CPU time × the reference speed) and
//! the calls' volumes; what a rank's thread did on its core *inside* the calls (the MPI
//! library's progress polls, its shared-memory copies, its `sched_yield`s) is in neither, and
//! neither is how long the calls lasted. On a run folded K ranks per core that CPU time is
//! taken from the core's other ranks (`validation/external/README.md`, "Attribution"):
//! this file measures it, in the same run as the trace.
//!
//! Each call is timed between the tracer's two points of the call: the CPU clock read that
//! ends the compute burst before it (enter) and the one that starts the next (exit), both
//! [`crate::clock::thread_cpu_chained_secs`] reads, so an interval of at most the chained
//! clock's threshold (20 µs) counts its wall time as CPU time, as the bursts do. The tracer's
//! own work inside the call (a record: `tracer_overhead.per_rank_per_event_secs` of
//! `trace-meta.json` per event) is included.
//!
//! Example: a rank that posts an `irecv` (1 µs) and then waits 2 ms in `MPI_Wait` for a late
//! sender, polling half of that time and yielding its core the other half, writes `2` calls,
//! wall `0.002001` s and CPU about `0.001001` s: 50 % of its wait on its core.

use std::sync::Mutex;

/// File name of the per-rank table, in rank 0's trace directory (format:
/// [`timeless_trace::incall`]): a header line, then one line per rank in rank order (a rank
/// whose tracer did not close gets empty fields).
pub const FILE: &str = timeless_trace::incall::FILE;

/// One rank's sums over its traced calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InCall {
    /// Calls timed (entered and exited).
    pub calls: u64,
    /// Their wall time, seconds (`CLOCK_MONOTONIC`).
    pub wall_secs: f64,
    /// The thread's CPU time in them, seconds (`CLOCK_THREAD_CPUTIME_ID`, chained).
    pub cpu_secs: f64,
    /// The open call's enter point, (wall, CPU) seconds.
    open: Option<(f64, f64)>,
}

impl InCall {
    /// A call starts: its enter point, wall and CPU seconds.
    pub fn enter(&mut self, wall_secs: f64, cpu_secs: f64) {
        self.open = Some((wall_secs, cpu_secs));
    }

    /// The open call ends at this exit point (wall and CPU seconds); nothing without an open
    /// call. Negative intervals (a clock read out of order) count as 0.
    pub fn exit(&mut self, wall_secs: f64, cpu_secs: f64) {
        if let Some((w0, c0)) = self.open.take() {
            self.calls += 1;
            self.wall_secs += (wall_secs - w0).max(0.0);
            self.cpu_secs += (cpu_secs - c0).max(0.0);
        }
    }

    /// This rank's line of [`FILE`], without its rank.
    fn fields(&self) -> String {
        format!("{},{:.9},{:.9}", self.calls, self.wall_secs, self.cpu_secs)
    }
}

static CLOSED: Mutex<Option<InCall>> = Mutex::new(None);

/// The part a rank without sums sends (never an empty part: Open MPI's `MPI_Gatherv` rejects
/// a gather of nothing at all, every rank's tracing having failed).
const NO_SUMS: &str = "-";

/// The trace is closed: keep this rank's sums for `MPI_Finalize`.
pub fn closed(sums: &InCall) {
    *CLOSED.lock().unwrap_or_else(|p| p.into_inner()) = Some(*sums);
}

/// The text of [`FILE`] from every rank's fields (`None`: that rank sent none).
fn table(parts: &[Option<String>]) -> String {
    let mut s = format!("{}\n", timeless_trace::incall::HEADER);
    for (r, p) in parts.iter().enumerate() {
        match p {
            Some(f) => s.push_str(&format!("{r},{f}\n")),
            None => s.push_str(&format!("{r},,,\n")),
        }
    }
    s
}

/// At `MPI_Finalize`, on every rank (collective: every rank must call it): when the tracer
/// started and writes the text trace (not a profile or a flow graph only, not a compressed
/// trace only: `--no-text`), gathers the ranks' sums on rank 0, which writes [`FILE`] in its
/// trace directory. (The conditions come from the environment, the same on every rank.)
pub fn at_finalize() {
    if !crate::setup::started()
        || crate::profile::only()
        || crate::flowcapture::only()
        || !crate::online::text_enabled()
    {
        return;
    }
    let part = CLOSED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .map_or_else(|| NO_SUMS.to_string(), |s| s.fields())
        .into_bytes();
    let Some(all) = crate::parts::gather(Some(part)) else {
        return;
    };
    let path = crate::setup::trace_dir(0).join(FILE);
    let written = all.map_err(|e| e.to_string()).and_then(|parts| {
        let parts: Vec<Option<String>> = parts
            .iter()
            .map(|b| (b != NO_SUMS.as_bytes()).then(|| String::from_utf8_lossy(b).into_owned()))
            .collect();
        if parts.iter().all(Option::is_none) {
            return Ok(()); // every rank's tracing failed: no trace, no table
        }
        std::fs::write(&path, table(&parts)).map_err(|e| e.to_string())
    });
    if let Err(why) = written {
        eprintln!(
            "timeless-preload: no in-call times written to {}: {why}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module doc's example: an `irecv` of 1 µs, then a 2 ms wait of which half on the
    /// core; an exit without an enter and a clock read out of order change nothing.
    #[test]
    fn sums_by_hand() {
        let mut s = InCall::default();
        s.exit(5.0, 5.0);
        assert_eq!(s.calls, 0);
        s.enter(10.0, 1.0);
        s.exit(10.000001, 1.000001);
        s.enter(10.000001, 1.000001);
        s.exit(10.002001, 1.001001);
        assert_eq!(s.calls, 2);
        assert!((s.wall_secs - 0.002001).abs() < 1e-12, "{}", s.wall_secs);
        assert!((s.cpu_secs - 0.001001).abs() < 1e-12, "{}", s.cpu_secs);
        s.enter(11.0, 2.0);
        s.exit(10.5, 1.5);
        assert_eq!(s.calls, 3);
        assert!((s.wall_secs - 0.002001).abs() < 1e-12);
        assert_eq!(
            table(&[Some(s.fields()), None]),
            "rank,calls,wall_secs,cpu_secs\n0,3,0.002001000,0.001001000\n1,,,\n"
        );
    }
}
