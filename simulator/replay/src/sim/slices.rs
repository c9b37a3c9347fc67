//! Scheduler slices on a shared core (`timeless/fold-slice-secs`, a timeless extension).
//!
//! In a folded run pinned several ranks per core, Open MPI's waiting ranks poll their progress
//! engine and yield: they are always runnable, so the kernel's scheduler lets a rank that
//! computes keep the core for a whole slice before each poller gets a turn. A message that
//! arrives for a poller while a core-mate computes is seen only at the poller's next turn, up
//! to a slice later; SimGrid's model (and a plain replay) resumes the receiver at once. The
//! folded network calibration cannot see it: in its ping-pong every rank of a core polls and
//! none computes. `validation/external/foldlab/coremate.c` measures it: a round trip whose
//! sender shares its core with a computing rank takes one slice (1.9 ms on a Xeon VM, 2.3 ms
//! on an EPYC VM, kernel 6.18) against 2-5 µs with that core-mate idle.
//!
//! The model, on every CPU of one core that holds several ranks (`timeless/pin-ranks`, or
//! hosts of one core): a computing core-mate's slices start when it last got the core, the
//! later of its computation's start and the last time any rank of the core ran (its *turn*),
//! and follow each other every `S` = `timeless/fold-slice-secs` seconds. A rank whose wait
//! ends at `t` while core-mates compute resumes at the earliest of their next slice ends
//! (at least one slice after the slice's start) and their computations' ends, waiting in
//! between ([`crate::rank::Step::CoreTurn`], accounted as waiting). Only waits for requests
//! are delayed: a rank that ends its own computation or sleep holds the core already.
//!
//! # A worked example
//!
//! Ranks 0 and 2 share core 0, rank 1 is alone on core 1, `S` = 2 ms. Rank 2 computes from
//! t = 0 to t = 10 ms. Rank 0 sends to rank 1 at t = 1 ms and waits for the reply, which
//! arrives at t = 1.005 ms. Rank 0's turn ended at 1 ms, so rank 2's slice runs from 1 ms and
//! rank 0 resumes at 1 + 2 = 3 ms: the round trip takes a slice, as the lab measures. Had the
//! reply come at t = 9.5 ms (slices from 1 ms end at 3, 5, 7, 9, 11 ms), rank 0 would resume
//! at 10 ms, when rank 2's computation ends before its slice does.

use super::Simulation;
use crate::rank::{Account, Block, Step};

/// The slice model's state: which ranks share each one-core CPU and when each ran last.
#[derive(Debug)]
pub(super) struct CoreSlices {
    /// `S`, seconds (> 0).
    slice_secs: f64,
    /// Per CPU (the engine's index): the ranks whose executions run on it when it is one
    /// core holding several ranks, else empty.
    mates: Vec<Vec<u32>>,
    /// Per CPU: the last date (s) a rank of it ran, the start of its computing mates' slice.
    last_turn_secs: Vec<f64>,
}

impl CoreSlices {
    /// The model for ranks on CPUs `cpu_of_rank` (the engine's CPU index of each rank, in rank
    /// order), where CPU `c` has `cores_of_cpu[c]` cores; `None` when `slice_secs` is 0 (off)
    /// or no CPU of one core holds two ranks.
    pub(super) fn new(
        slice_secs: f64,
        cpu_of_rank: impl Iterator<Item = u32>,
        cores_of_cpu: &[u32],
    ) -> Option<Self> {
        if slice_secs <= 0.0 {
            return None;
        }
        let mut mates = vec![Vec::new(); cores_of_cpu.len()];
        for (r, c) in cpu_of_rank.enumerate() {
            if cores_of_cpu[c as usize] == 1 {
                mates[c as usize].push(r as u32);
            }
        }
        for m in &mut mates {
            if m.len() < 2 {
                m.clear();
            }
        }
        if mates.iter().all(Vec::is_empty) {
            return None;
        }
        Some(CoreSlices {
            slice_secs,
            last_turn_secs: vec![0.0; mates.len()],
            mates,
        })
    }

    /// A rank of CPU `cpu` runs at `now_secs`: its computing mates' slices start again.
    pub(super) fn turn(&mut self, cpu: u32, now_secs: f64) {
        if let Some(t) = self.last_turn_secs.get_mut(cpu as usize) {
            *t = now_secs;
        }
    }
}

impl Simulation<'_> {
    /// Rank `r` is about to run: the turn of its core's computing mates ends, unless `r` is
    /// only about to wait for its own turn ([`crate::rank::Step::CoreTurn`]). Called only with
    /// the model on, and kept out of the rank loop's body.
    #[inline(never)]
    pub(super) fn take_turn(&mut self, r: u32) {
        let now = self.engine.now();
        let st = &self.ranks[r as usize];
        if let Some(s) = &mut self.slices {
            if !matches!(st.steps.front(), Some(Step::CoreTurn(_))) {
                s.turn(st.cpu, now);
            }
        }
    }

    /// How long rank `r`, whose wait ends now, waits for its core's computing mates to yield
    /// it (module doc), in seconds; 0 with the model off or no mate computing.
    #[inline]
    pub(super) fn core_turn_delay_secs(&self, r: u32) -> f64 {
        match &self.slices {
            None => 0.0,
            Some(s) => self.core_turn_delay_with(s, r),
        }
    }

    #[inline(never)]
    fn core_turn_delay_with(&self, s: &CoreSlices, r: u32) -> f64 {
        let now = self.engine.now();
        let cpu = self.ranks[r as usize].cpu as usize;
        let mut resume = f64::INFINITY;
        for &m in &s.mates[cpu] {
            let mate = &self.ranks[m as usize];
            // `r` itself is not computing: its wait just ended.
            let Block::Activity(a, Account::Compute) = mate.block else {
                continue;
            };
            let start = mate.activity_start.max(s.last_turn_secs[cpu]);
            let slices = ((now - start) / s.slice_secs).ceil().max(1.0);
            let mut at = start + slices * s.slice_secs;
            if let Some(end) = self.engine.end_date(a) {
                at = at.min(end);
            }
            resume = resume.min(at);
        }
        if resume.is_finite() && resume > now {
            resume - now
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shared_one_core_cpus_have_mates() {
        // CPU 0: a host of 2 cores (ranks 0 and 3: not one core); CPU 1: one core with ranks
        // 1 and 4; CPU 2: one core with rank 2 alone.
        let s = CoreSlices::new(2e-3, [0, 1, 2, 0, 1].into_iter(), &[2, 1, 1])
            .expect("CPU 1 is shared");
        assert_eq!(s.mates, vec![vec![], vec![1, 4], vec![]]);
        assert!(
            CoreSlices::new(0.0, [0, 1, 2, 0, 1].into_iter(), &[2, 1, 1]).is_none(),
            "off"
        );
        assert!(
            CoreSlices::new(2e-3, [0, 1, 2].into_iter(), &[2, 1, 1]).is_none(),
            "nobody shares"
        );
    }
}
