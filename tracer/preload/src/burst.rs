//! When a compute burst becomes a `compute` record.
//!
//! The tracer measures the CPU time between consecutive traced calls (seed 003 §3: compute
//! volumes between MPI calls). Most of those gaps are a few tens of nanoseconds of loop code
//! and wrapper trampolines, not application compute; writing each would bloat the trace and
//! the replay with records that are noise. A gap shorter than the minimum burst is therefore
//! **carried** into the next written burst, so no CPU time is ever dropped.
//!
//! Which gaps carry is decided on the gap's **own** length, not on the carried total: a burst
//! is written where the CPU time since the last record reaches `min_burst_secs` (a real
//! compute phase), and the small gaps before it ride along. Deciding on the carried total
//! instead wrote a record wherever a run of small gaps happened to cross the threshold, in
//! the middle of a halo exchange at places that changed from one iteration to the next (real
//! stencil captures had 1.45 to 2 `compute` records per iteration where the program has one;
//! see validation/compression/README.md), which is timing noise in the action sequence.
//!
//! Carried time must not drift arbitrarily far from where it was spent, so it is written
//! anyway once it reaches `max_carry_secs` (latency-bound loops with no real compute between
//! their calls get one record per `max_carry_secs` of accumulated gaps).
//!
//! A gap whose length hovers around the threshold (stencil captures: the ~1 µs between an
//! `MPI_Allreduce` and the next `MPI_Irecv`, written after half of the allreduces) would still
//! make the action sequence change from one iteration to the next. So the threshold has
//! **hysteresis per call site** (the pair of calls around the gap, [`SiteState`]): a site whose
//! last gap was written keeps writing down to half the minimum, one whose last gap was carried
//! keeps carrying up to twice the minimum, and a new site starts at the minimum (a Schmitt
//! trigger). A site changes its decision only when its gaps move by a factor of two.

/// The compute not yet written, split into what was carried over and the current burst.
///
/// All quantities are thread CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BurstCarry {
    /// Carried CPU seconds: gaps before the last record that were too short to be written.
    carried_secs: f64,
    /// CPU seconds since the last record (possibly several gaps, when calls in between
    /// recorded nothing, e.g. a failed `MPI_Iprobe`).
    own_secs: f64,
}

/// What a call site (the pair of traced calls around a gap) did with its last gap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SiteState {
    /// No gap seen at this site yet: threshold `min_burst_secs`.
    #[default]
    New,
    /// Its last gap was written: threshold `min_burst_secs / 2`.
    Writes,
    /// Its last gap was carried: threshold `2 × min_burst_secs`.
    Carries,
}

impl SiteState {
    /// The threshold on a gap's own CPU time at a site in this state, seconds.
    pub fn threshold_secs(self, rule: &BurstRule) -> f64 {
        match self {
            SiteState::New => rule.min_burst_secs,
            SiteState::Writes => 0.5 * rule.min_burst_secs,
            SiteState::Carries => 2.0 * rule.min_burst_secs,
        }
    }
}

/// Thresholds of [`BurstCarry::take_at`], CPU seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstRule {
    /// A burst whose own CPU time reaches this is written (`TIMELESS_MIN_BURST_SECS`,
    /// default 1e-6 s).
    pub min_burst_secs: f64,
    /// Carried plus own CPU time reaching this is written even if the burst itself is short
    /// (`TIMELESS_MAX_CARRY_SECS`, default 20e-6 s).
    pub max_carry_secs: f64,
}

impl Default for BurstRule {
    fn default() -> Self {
        BurstRule {
            min_burst_secs: 1e-6,
            max_carry_secs: 20e-6,
        }
    }
}

impl BurstCarry {
    /// Adds one measured gap (CPU seconds, negative values count as 0) to the current burst.
    pub fn add(&mut self, cpu_secs: f64) {
        self.own_secs += cpu_secs.max(0.0);
    }

    /// CPU seconds not written yet (carried + current burst).
    pub fn pending_secs(&self) -> f64 {
        self.carried_secs + self.own_secs
    }

    /// Called where a record is about to be written, at a call site in state `site`: returns
    /// the CPU seconds to write as a `compute` record before it (carried + own, then both
    /// reset), or `None` when the burst is carried over to the next record. Updates `site`
    /// with what its own gap decided (a write forced by the carry cap leaves it unchanged).
    pub fn take_at(&mut self, rule: &BurstRule, site: &mut SiteState) -> Option<f64> {
        let total = self.pending_secs();
        let own_writes = self.own_secs >= site.threshold_secs(rule);
        if self.own_secs > 0.0 {
            *site = if own_writes {
                SiteState::Writes
            } else {
                SiteState::Carries
            };
        }
        if total > 0.0 && (own_writes || total >= rule.max_carry_secs) {
            *self = BurstCarry::default();
            Some(total)
        } else {
            self.carried_secs = total;
            self.own_secs = 0.0;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl BurstCarry {
        /// [`BurstCarry::take_at`] at a site seen for the first time (threshold
        /// `min_burst_secs`).
        fn take(&mut self, rule: &BurstRule) -> Option<f64> {
            self.take_at(rule, &mut SiteState::New)
        }
    }

    const RULE: BurstRule = BurstRule {
        min_burst_secs: 1e-6,
        max_carry_secs: 20e-6,
    };

    /// One halo exchange as the stencils make it: eight 150 ns gaps between the calls, then
    /// a 5 µs sweep. Under the carried-total rule the seventh gap (7 × 150 ns = 1.05 µs)
    /// would have written a record mid-exchange; here only the sweep writes one, holding the
    /// eight gaps: 8 × 0.15 + 5 = 6.2 µs.
    #[test]
    fn small_gaps_ride_with_the_next_real_burst() {
        let mut b = BurstCarry::default();
        for _ in 0..8 {
            b.add(0.15e-6);
            assert_eq!(b.take(&RULE), None);
        }
        b.add(5e-6);
        let w = b.take(&RULE).unwrap();
        assert!((w - 6.2e-6).abs() < 1e-15, "{w}");
        assert_eq!(b.pending_secs(), 0.0);
    }

    /// Gaps split by calls that record nothing form one burst: 3 × 0.4 µs = 1.2 µs ≥ 1 µs.
    #[test]
    fn a_burst_is_all_gaps_since_the_last_record() {
        let mut b = BurstCarry::default();
        b.add(0.4e-6);
        b.add(0.4e-6);
        b.add(0.4e-6);
        let w = b.take(&RULE).unwrap();
        assert!((w - 1.2e-6).abs() < 1e-15, "{w}");
    }

    /// With no real burst, short gaps are written once their sum reaches the cap, and nothing
    /// is lost. Times in units of 2^-20 s (binary fractions, so the sums are exact): minimum
    /// 2 units, cap 40 units, gaps of 1 unit: the 40th, 80th gaps write 40 units each, 20
    /// units stay pending after 100 gaps.
    #[test]
    fn carried_time_is_written_at_the_cap() {
        let unit = (2.0f64).powi(-20);
        let rule = BurstRule {
            min_burst_secs: 2.0 * unit,
            max_carry_secs: 40.0 * unit,
        };
        let mut b = BurstCarry::default();
        let mut written = Vec::new();
        for i in 1..=100 {
            b.add(unit);
            if let Some(w) = b.take(&rule) {
                written.push((i, w / unit));
            }
        }
        assert_eq!(written, vec![(40, 40.0), (80, 40.0)]);
        assert_eq!(b.pending_secs() / unit, 20.0);
    }

    /// A site whose gaps hover around the minimum (0.6 to 1.9 µs) decides once and keeps to
    /// it: after a first gap of 1.1 µs (written) it writes down to 0.5 µs; after a first gap
    /// of 0.9 µs (carried) it carries up to 2 µs. A gap of 2.5 µs at a carrying site is
    /// written and turns it into a writing site; 0.4 µs at a writing site is carried.
    #[test]
    fn sites_keep_their_decision_within_a_factor_of_two() {
        let hover = [1.1e-6, 0.9e-6, 1.05e-6, 0.95e-6, 0.6e-6, 1.9e-6];
        let mut writes = SiteState::New;
        let mut b = BurstCarry::default();
        for (i, g) in hover.iter().enumerate() {
            b.add(*g);
            assert!(b.take_at(&RULE, &mut writes).is_some(), "gap {i}");
            assert_eq!(writes, SiteState::Writes);
        }
        let mut carries = SiteState::New;
        for (i, g) in hover[1..].iter().enumerate() {
            b.add(*g);
            assert_eq!(b.take_at(&RULE, &mut carries), None, "gap {i}");
            assert_eq!(carries, SiteState::Carries);
        }
        // 5 carried gaps (0.9 + 1.05 + 0.95 + 0.6 + 1.9 = 5.4 µs) ride with the 2.5 µs one.
        b.add(2.5e-6);
        let w = b.take_at(&RULE, &mut carries).unwrap();
        assert!((w - 7.9e-6).abs() < 1e-15, "{w}");
        assert_eq!(carries, SiteState::Writes);
        b.add(0.4e-6);
        assert_eq!(b.take_at(&RULE, &mut writes), None);
        assert_eq!(writes, SiteState::Carries);
    }

    /// A zero minimum writes every non-empty gap; empty gaps write nothing.
    #[test]
    fn zero_minimum_writes_every_gap() {
        let rule = BurstRule {
            min_burst_secs: 0.0,
            max_carry_secs: 20e-6,
        };
        let mut b = BurstCarry::default();
        assert_eq!(b.take(&rule), None);
        b.add(1e-9);
        assert_eq!(b.take(&rule), Some(1e-9));
        b.add(-1.0);
        assert_eq!(b.take(&rule), None);
    }
}
