//! Writing records: each action record goes, after the compute burst before it, to the TI
//! trace (the writer), to the timestamped copy (`stamps`) and to the profile (`profile`) when
//! they are kept, with its call site; then flushing the buffered lines and closing the files.

use std::fmt;

use super::{CommField, Fail, Tracer};
use crate::clock::thread_cpu_chained_secs;
use crate::record::{Record, RecordKey};

/// ` @cs=<id>` after an action record of a call whose site is recorded (see `callsite`),
/// nothing otherwise.
pub struct SiteField(pub Option<u32>);

impl fmt::Display for SiteField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, " {}{id}", timeless_trace::parse::CALLSITE_FIELD),
            None => Ok(()),
        }
    }
}

/// Space-separated counts.
pub struct Counts<'a>(pub &'a [u64]);

impl fmt::Display for Counts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl Tracer {
    /// Appends `"<rank> <args>"`, after the compute burst that precedes it.
    pub fn rec(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        if crate::profile::only() {
            // The profile is all that is kept: no compute records, no trace line.
            if let Some(p) = &mut self.profile {
                p.record(args);
            }
            return Ok(());
        }
        self.flush_compute()?;
        self.action(args, self.callsite)
    }

    /// As [`Tracer::rec`], without a call site (definitions such as `comm_def`).
    pub(super) fn rec_no_site(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        if crate::profile::only() {
            if let Some(p) = &mut self.profile {
                p.record(args);
            }
            return Ok(());
        }
        self.flush_compute()?;
        self.action(args, None)
    }

    fn action(&mut self, args: fmt::Arguments<'_>, site: Option<u32>) -> Result<(), Fail> {
        self.stamped_only(args)?;
        self.untimed_action(args, site, None, None)
    }

    /// Writes a typed record (see `record`) on communicator field `comm`, after the compute
    /// burst that precedes it; its text is what [`Tracer::rec`] would write.
    pub fn rec_record(&mut self, record: Record, comm: Option<u32>) -> Result<(), Fail> {
        let args = format_args!("{record}{}", CommField(comm));
        if crate::profile::only() {
            if let Some(p) = &mut self.profile {
                p.record(args);
            }
            return Ok(());
        }
        self.flush_compute()?;
        self.stamped_only(args)?;
        let key = RecordKey {
            record,
            comm,
            site: self.callsite,
        };
        self.untimed_action(args, key.site, Some(&key), None)
    }

    /// A record of the TI trace only (compute bursts: the gaps of the timestamped file),
    /// ending with the call site `site` if any; `key` is its typed key (see `record`) and
    /// `volume` a `compute` record's flops.
    pub(super) fn untimed_action(
        &mut self,
        args: fmt::Arguments<'_>,
        site: Option<u32>,
        key: Option<&RecordKey>,
        volume: Option<f64>,
    ) -> Result<(), Fail> {
        self.count_record();
        let rank = self.rank;
        self.out.record(
            key,
            volume,
            format_args!("{rank} {args}{}", SiteField(site)),
        )?;
        if let Some(p) = &mut self.profile {
            p.record(args);
        }
        Ok(())
    }

    /// Counts one record written or reserved (a wildcard `irecv`'s hole counts too, so that
    /// `TIMELESS_INJECT_PANIC` hits whatever record comes n-th).
    pub(super) fn count_record(&mut self) {
        self.records += 1;
        if self.settings.inject_panic_at == Some(self.records) {
            panic!(
                "panic injected by TIMELESS_INJECT_PANIC at record {}",
                self.records
            );
        }
    }

    /// Appends a comment line `"# <args>"` (SimGrid skips it).
    pub fn note(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        self.out.line(format_args!("# {args}"))?;
        Ok(())
    }

    /// Writes a record to the timestamped file only (what the TI trace keeps as a comment).
    pub fn stamped_only(&mut self, args: fmt::Arguments<'_>) -> Result<(), Fail> {
        let rank = self.rank;
        if let Some(s) = &mut self.stamped {
            s.line(rank, args)?;
        }
        Ok(())
    }

    /// Marks the end of the tracer's work for this call: writes the buffered lines if the last
    /// flush is older than the flush period, then starts the next burst (after the write, so
    /// that its cost stays out of the burst).
    pub fn end_event(&mut self) -> Result<(), Fail> {
        if crate::profile::only() {
            return Ok(());
        }
        let r = self.flush_if_due(crate::clock::last_point_wall_secs());
        self.last_exit = thread_cpu_chained_secs();
        self.in_call
            .exit(crate::clock::last_point_wall_secs(), self.last_exit);
        self.mark_counter();
        r
    }

    /// Writes the buffered whole lines (up to the first unresolved wildcard `irecv`) of both
    /// files if the last flush is at least the flush period before `now_wall` (seconds,
    /// `CLOCK_MONOTONIC`).
    pub fn flush_if_due(&mut self, now_wall: f64) -> Result<(), Fail> {
        let period = self.settings.flush_secs;
        if period > 0.0 && now_wall - self.last_flush_wall >= period && !self.closed {
            self.flush_buffered()?;
        }
        Ok(())
    }

    /// Writes the buffered whole lines of both files now.
    pub fn flush_buffered(&mut self) -> Result<(), Fail> {
        self.last_flush_wall = crate::clock::wall_secs();
        self.out.flush_ready()?;
        if let Some(s) = &mut self.stamped {
            s.writer().flush_ready()?;
        }
        Ok(())
    }

    /// Writes the last records and closes the trace (`MPI_Finalize`, `MPI_Abort`, exit).
    pub fn close(&mut self, last: &str) -> Result<(), Fail> {
        if self.closed {
            return Ok(());
        }
        self.clock_note()?;
        self.closed = true;
        if !last.is_empty() {
            self.out.line(format_args!("{last}"))?;
        }
        if let Some(c) = &self.callsites {
            crate::callsite::closed(c);
        }
        crate::incall::closed(&self.in_call);
        let unfilled =
            |id| format!("# irecv #{id} from MPI_ANY_SOURCE/MPI_ANY_TAG never completed");
        self.out.finish(&unfilled)?;
        if let Some(s) = &mut self.stamped {
            s.writer().finish(&unfilled)?;
        }
        Ok(())
    }

    /// From a signal handler: writes the buffered whole lines, then `last`, and closes the
    /// trace (see `signals`).
    pub fn flush_on_signal(&mut self, last: &'static [u8]) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.out.write_on_signal(last);
        if let Some(s) = &self.stamped {
            s.writer_ref().write_on_signal(last);
        }
    }

    /// After a failure: write what is recorded, with a comment, and stop.
    pub fn abandon(&mut self, reason: &str) {
        if self.closed {
            return;
        }
        let _ = self.close(&format!("# tracing stopped here: {reason}"));
    }
}
