//! The virtual clock of one group (see the `engine` module doc).

use crate::heap::IndexedHeap;

/// One group's virtual time. `v` is V at simulated time `last`; V grows at `share` per second.
/// `members` holds each member activity's virtual completion date V_end.
#[derive(Debug)]
pub(super) struct GroupClock {
    /// The activity slot standing for the group in the engine's event heap.
    pub(super) slot: u32,
    pub(super) share: f64,
    pub(super) v: f64,
    pub(super) last: f64,
    pub(super) members: IndexedHeap,
    pub(super) dirty: bool,
}

impl Default for GroupClock {
    fn default() -> Self {
        GroupClock {
            slot: u32::MAX,
            share: 0.0,
            v: 0.0,
            last: 0.0,
            members: IndexedHeap::new(),
            dirty: false,
        }
    }
}

impl GroupClock {
    /// Brings V to simulated time `now` (s) at the current share.
    pub(super) fn advance(&mut self, now: f64) {
        if now > self.last {
            self.v += self.share * (now - self.last);
        }
        self.last = now;
    }

    /// From `now` on, V grows at `share`.
    pub(super) fn set_share(&mut self, now: f64, share: f64) {
        self.advance(now);
        self.share = share;
    }

    /// Simulated date (s) at which the earliest member completes, never before `now`.
    pub(super) fn next_date(&self, now: f64) -> Option<f64> {
        let (vfinish, _) = self.members.peek()?;
        Some((self.last + (vfinish - self.v) / self.share).max(now))
    }

    /// With no member left, restarts V at 0 so that virtual dates stay small (precise).
    pub(super) fn rebase(&mut self, now: f64) {
        if self.members.is_empty() {
            self.v = 0.0;
            self.last = now;
        }
    }
}
