//! Per-rank action streams, whatever stores them.
//!
//! The replay consumes each rank's actions one at a time through [`ActionStream`] and opens the
//! ranks of a trace through [`TraceSet`], so a text trace ([`crate::TraceSource`]), a compressed
//! grammar or an adapter that rewrites actions on the fly (overhead compensation) all replay the
//! same way, streamed, never materialised.

use std::path::Path;

use crate::action::{Action, CommId, Rank};
use crate::error::TraceError;

/// One action of a rank, with the communicator it names and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The action.
    pub action: Action,
    /// Its communicator: [`crate::action::WORLD`] unless the action carries `comm=<id>`.
    pub comm: CommId,
    /// Its call site, when the trace records them (`@cs=<id>`, README "Call sites").
    pub callsite: Option<u32>,
    /// Where it was read, for messages: the 1-based line of a text trace, the 1-based action
    /// index of a compressed one.
    pub location: u64,
}

/// A rank's actions in trace order. `Send`, so that a stream can be decoded on another thread
/// ([`crate::DecodeAhead`]).
pub trait ActionStream: Send {
    /// The next action, or `None` at the end of the rank's trace.
    ///
    /// # Errors
    /// A read error or malformed input, located at [`ActionStream::origin`]:`location`.
    fn next_event(&mut self) -> Result<Option<Event>, TraceError>;

    /// [`ActionStream::next_event`] with the error boxed: a result the size of an event, for a
    /// caller that reads millions of them (the replay). The same events and errors.
    ///
    /// # Errors
    /// As [`ActionStream::next_event`].
    fn next_event_boxed(&mut self) -> Result<Option<Event>, Box<TraceError>> {
        self.next_event().map_err(Box::new)
    }

    /// The file the actions come from, for messages.
    fn origin(&self) -> &Path;

    /// Lines skipped because they named another rank (per-rank text files only).
    fn foreign_lines(&self) -> u64 {
        0
    }

    /// A hint that [`ActionStream::next_event`] will be called soon: a stream that holds decoded
    /// events asks the CPU to bring the next one into the cache. No effect on the results.
    fn prefetch_next(&self) {}
}

/// Asks the CPU to bring the cache line at `p` into the cache (a hint: no effect on results,
/// nothing on other architectures).
#[inline(always)]
pub fn prefetch<T: ?Sized>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A trace: one [`ActionStream`] per rank.
pub trait TraceSet {
    /// Opens rank `rank`'s stream in a world of `nranks` ranks.
    ///
    /// # Errors
    /// The trace has no actions for `rank`, or its storage cannot be read.
    fn open_stream(&self, rank: Rank, nranks: u32) -> Result<Box<dyn ActionStream>, TraceError>;

    /// Number of ranks the trace holds, when it says (`None` for a shared text file).
    fn ranks(&self) -> Option<usize>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_fits_a_cache_line() {
        // The lists of v-collectives and `comm_def` are boxed (`action::List`): the largest
        // variant left is `SendRecv` (two u64 counts, two ranks, two datatypes: 28 bytes), 32
        // with the discriminant; the event adds its communicator, call site and location.
        assert_eq!(std::mem::size_of::<Action>(), 32);
        assert_eq!(std::mem::size_of::<Event>(), 56);
    }
}
