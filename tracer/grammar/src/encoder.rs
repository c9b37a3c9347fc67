//! One rank's compression (Pilgrim `000_*` §2.3 steps 3 to 5): action → call signature →
//! terminal → Sequitur; volumes to their own stream; `compute` actions out of the grammar, as a
//! gap in the placement stream ([`crate::placement`]) and flops in the volume stream. Usable
//! online by a tracer: each [`RankEncoder::push`] is amortised O(1) and memory grows with the
//! grammar, not the trace.

use timeless_trace::{Action, Rank};

use crate::cst::CallSignatureTable;
use crate::grammar::Grammar;
use crate::placement::PlacementEncoder;
use crate::sequitur::Sequitur;
use crate::signature::split;
use crate::volume::{Precision, VolumeEncoder, VolumeStream};

/// A rank's compressed trace before the cross-rank merge.
#[derive(Debug, Clone)]
pub struct RankTrace {
    /// World rank.
    pub rank: Rank,
    /// Local call signature table (terminals of `grammar`).
    pub cst: CallSignatureTable,
    /// The rank's grammar, canonically numbered.
    pub grammar: Grammar,
    /// The rank's compute/sleep volumes and the placement of its compute actions.
    pub volumes: VolumeStream,
    /// Number of actions (the grammar's and the compute actions).
    pub actions: u64,
}

/// Builds one rank's CST, grammar and volume stream action by action.
#[derive(Debug, Clone)]
pub struct RankEncoder {
    rank: Rank,
    cst: CallSignatureTable,
    sequitur: Sequitur,
    volumes: VolumeEncoder,
    placement: PlacementEncoder,
    /// Grammar actions since the last compute action (or the start).
    since_compute: u64,
}

impl RankEncoder {
    /// An encoder for world rank `rank`, storing volumes at `precision` (zstd blocks at
    /// [`crate::volume::OFFLINE_ZSTD_LEVEL`]).
    pub fn new(rank: Rank, precision: Precision) -> Self {
        Self::with_zstd_level(rank, precision, crate::volume::OFFLINE_ZSTD_LEVEL)
    }

    /// As [`RankEncoder::new`], volume blocks compressed at zstd level `zstd_level` (a tracer
    /// compressing online uses [`crate::volume::ONLINE_ZSTD_LEVEL`]; the level changes the
    /// blocks' bytes, not the values).
    pub fn with_zstd_level(rank: Rank, precision: Precision, zstd_level: i32) -> Self {
        RankEncoder {
            rank,
            cst: CallSignatureTable::new(),
            sequitur: Sequitur::new(),
            volumes: VolumeEncoder::with_zstd_level(precision, zstd_level),
            placement: PlacementEncoder::new(zstd_level),
            since_compute: 0,
        }
    }

    /// Appends one action executed on communicator `comm` (0 = `MPI_COMM_WORLD`) at call site
    /// `callsite` (if recorded; part of the call signature); returns its
    /// terminal, or `None` for a `compute` (not in the grammar: its gap goes to the placement
    /// stream, its flops to the volume stream).
    pub fn push(&mut self, action: &Action, comm: u32, callsite: Option<u32>) -> Option<u32> {
        if let Action::Compute { flops } = action {
            self.placement.push(self.since_compute);
            self.since_compute = 0;
            self.volumes.push(*flops);
            return None;
        }
        let s = split(action, self.rank, comm, callsite);
        if let Some(v) = s.volume {
            self.volumes.push(v);
        }
        let t = self.cst.intern(&s.signature);
        self.sequitur.push(u64::from(t));
        self.since_compute += 1;
        Some(t)
    }

    /// Appends again the action of terminal `terminal`, as returned by an earlier
    /// [`RankEncoder::push`] of an action *without a volume* (not `compute`/`sleep`): a caller
    /// that recognises a repeated action skips building its signature. Amortised O(1).
    ///
    /// # Panics
    /// If `terminal` is not in the table (debug builds also check it takes no volume).
    pub fn push_terminal(&mut self, terminal: u32) {
        let sig = &self.cst.signatures()[terminal as usize];
        debug_assert!(!crate::signature::takes_volume(sig));
        self.sequitur.push(u64::from(terminal));
        self.since_compute += 1;
    }

    /// Ends the rank's stream.
    pub fn finish(self) -> RankTrace {
        let placement = self.placement.finish();
        let mut volumes = self.volumes.finish();
        let actions = self.sequitur.terminal_count() + placement.count;
        volumes.placement = placement;
        RankTrace {
            rank: self.rank,
            actions,
            grammar: self.sequitur.finish(),
            cst: self.cst,
            volumes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::MergedRanks;
    use crate::trace::CompressedTrace;
    use crate::volume::Precision;

    #[test]
    fn pushing_a_known_terminal_equals_pushing_its_action() {
        let send = Action::Send {
            dst: 1,
            tag: 0,
            count: 8,
            dt: None,
            blocking: true,
        };
        let compute = Action::Compute { flops: 5.0 };
        let mut a = RankEncoder::new(0, Precision::Lossless);
        let mut b = RankEncoder::new(0, Precision::Lossless);
        let t = a.push(&send, 0, None).expect("a send is a terminal");
        assert_eq!(a.push(&compute, 0, None), None, "a compute is not");
        b.push(&send, 0, None);
        b.push(&compute, 0, None);
        for _ in 0..10 {
            a.push(&compute, 0, None);
            a.push_terminal(t);
            b.push(&compute, 0, None);
            b.push(&send, 0, None);
        }
        let file = |e: RankEncoder| {
            let m = MergedRanks::from(e.finish());
            crate::format::write(&CompressedTrace::from_merged(m, 1, Precision::Lossless).unwrap())
                .0
        };
        assert_eq!(file(a), file(b));
    }
}
