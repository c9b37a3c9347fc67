//! What the kernel did during a run, counted: the figures that explain a replay's speed
//! (`timeless simulate --kernel-stats`).
//!
//! A replay's cost is mostly its solves. A solve answered from rest (`lmm::rest`) or by a hub
//! in the group regime (`lmm::hubs`) costs what changed; a solve on the general path walks the
//! whole component of the changed constraints, then either takes a stored solution (the
//! solution memo, `lmm::memo`) or runs a bottleneck filling, one round per bottleneck level,
//! each round scanning the live constraints, or re-fills only the region its changes reach
//! (`lmm::region`); after every solve the engine re-dates each variable the solve set. So the
//! general solves, the size of their components, the memo's share, the region solves and
//! their size, the rounds per filling and the share of re-dated variables whose rate did not
//! change tell where the time goes.
//!
//! # Worked example
//! The 256-rank stencil of `validation/bench/scaling.py` on the fat-tree. Before the region
//! path (session 27): 80,241 general solves of 362 constraints each, the memo switched off
//! after missing (0.6 % of them answered), 4.8 rounds per filling with 252 live constraints
//! per round, and 30.3 M rate updates of which 96.6 % left the rate unchanged: nearly all of a
//! solve's work confirmed the previous solution. With it (session 28): 76,145 region solves
//! of 19.2 variables, 2.6 rounds with 48.6 live constraints, 3.1 M rate updates. On the flat
//! cluster with a backbone the 64-rank stencil takes 8,480 general solves in all (its
//! backbone's flows are solved as a hub's group).

use std::fmt;

/// Counts of a run's solves and rate updates (module doc). All are totals since the
/// [`Engine`](crate::Engine) (or [`System`](crate::lmm::System)) was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelStats {
    /// Calls of [`System::solve`](crate::lmm::System::solve).
    pub solves: u64,
    /// Of those, answered from rest (the values stored for the same history since the system
    /// last had no active variable, `lmm::rest`; its own hit count,
    /// [`System::rest_counts`](crate::lmm::System::rest_counts)).
    pub rest_hits: u64,
    /// Solves of a component on the general path (a solve may solve several).
    pub general_solves: u64,
    /// Σ over the general solves of the constraints in the component.
    pub general_constraints: u64,
    /// General solves answered by the solution memo (its own hit count,
    /// [`System::memo_counts`](crate::lmm::System::memo_counts); a hit found by the lookup
    /// that switches the memo off counts, though that solve fills).
    pub memo_hits: u64,
    /// General solves that ran a bottleneck filling.
    pub fillings: u64,
    /// Σ over the fillings of their rounds (one per bottleneck level).
    pub filling_rounds: u64,
    /// Σ over the rounds of the live constraints scanned for the smallest share.
    pub live_scanned: u64,
    /// Variables registered in the hubs' bookkeeping (`lmm::hubs`): each flow that starts
    /// while some constraint is a hub, or would be one (none while the system is dormant).
    pub registrations: u64,
    /// Times the dormant hub bookkeeping woke (`lmm::hubs::dormant`): each registers every
    /// active variable.
    pub wakes: u64,
    /// Σ over the solves of the variables in a hub's group regime as the solve began (what
    /// the general path did not walk thanks to the hubs, `lmm::hubs`).
    pub grouped: u64,
    /// General solves answered by the incremental filling of the region the changes reach
    /// (`lmm::region`).
    pub region_solves: u64,
    /// Σ over those of the variables re-filled.
    pub region_vars: u64,
    /// Region solves that gave up (grew for too many rounds, met a FATPIPE constraint) and
    /// filled the whole component.
    pub region_gave_up: u64,
    /// Running variables given a new rate and completion date after a solve (engine).
    pub rate_updates: u64,
    /// Of those, whose rate was bit for bit the one they had.
    pub unchanged_rates: u64,
}

impl KernelStats {
    /// The counts by name, in declaration order: the names of the JSON report's `kernel`
    /// member and of the Python package's `Simulation.kernel`.
    pub fn named(&self) -> [(&'static str, u64); 16] {
        [
            ("solves", self.solves),
            ("rest_hits", self.rest_hits),
            ("general_solves", self.general_solves),
            ("general_constraints", self.general_constraints),
            ("memo_hits", self.memo_hits),
            ("fillings", self.fillings),
            ("filling_rounds", self.filling_rounds),
            ("live_scanned", self.live_scanned),
            ("region_solves", self.region_solves),
            ("region_vars", self.region_vars),
            ("region_gave_up", self.region_gave_up),
            ("registrations", self.registrations),
            ("wakes", self.wakes),
            ("grouped", self.grouped),
            ("rate_updates", self.rate_updates),
            ("unchanged_rates", self.unchanged_rates),
        ]
    }
}

/// `num / den`, or `None` when `den` is 0.
fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl fmt::Display for KernelStats {
    /// One paragraph: `S solves (R from rest); general path: G component solves, C constraints
    /// per component, M % from the solution memo, F fillings of K rounds with L live
    /// constraints per round; H hub registrations (K wakes, G grouped per solve); U rate
    /// updates, N % unchanged` (averages
    /// with one decimal; a
    /// part with nothing to average is left out).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} solves ({} from rest); general path: {} component solves",
            self.solves, self.rest_hits, self.general_solves
        )?;
        if let Some(c) = ratio(self.general_constraints, self.general_solves) {
            let memo = 100.0 * self.memo_hits as f64 / self.general_solves as f64;
            write!(
                f,
                ", {c:.1} constraints per component, {memo:.1} % from the solution memo"
            )?;
        }
        write!(f, ", {} fillings", self.fillings)?;
        if let (Some(k), Some(l)) = (
            ratio(self.filling_rounds, self.fillings),
            ratio(self.live_scanned, self.filling_rounds),
        ) {
            write!(
                f,
                " of {k:.1} rounds with {l:.1} live constraints per round"
            )?;
        }
        if self.region_solves + self.region_gave_up > 0 {
            write!(f, "; {} region solves", self.region_solves)?;
            if let Some(v) = ratio(self.region_vars, self.region_solves) {
                write!(f, " of {v:.1} variables")?;
            }
            write!(f, ", {} gave up", self.region_gave_up)?;
        }
        write!(f, "; {} hub registrations", self.registrations)?;
        if self.wakes > 0 {
            write!(f, " ({} wakes", self.wakes)?;
            if let Some(g) = ratio(self.grouped, self.solves) {
                write!(f, ", {g:.1} grouped per solve")?;
            }
            write!(f, ")")?;
        }
        write!(f, "; {} rate updates", self.rate_updates)?;
        if let Some(u) = ratio(self.unchanged_rates, self.rate_updates) {
            write!(f, ", {:.1} % unchanged", 100.0 * u)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counts_print_as_a_paragraph_with_averages_and_by_name() {
        let s = KernelStats {
            solves: 10,
            rest_hits: 2,
            general_solves: 4,
            general_constraints: 10,
            memo_hits: 1,
            fillings: 3,
            filling_rounds: 6,
            live_scanned: 9,
            region_solves: 2,
            region_vars: 7,
            region_gave_up: 1,
            registrations: 5,
            wakes: 2,
            grouped: 25,
            rate_updates: 8,
            unchanged_rates: 6,
        };
        // 10/4 = 2.5 constraints, 1/4 = 25 %, 6/3 = 2 rounds, 9/6 = 1.5 live, 7/2 = 3.5
        // variables per region, 25/10 = 2.5 grouped per solve, 6/8 = 75 %.
        assert_eq!(
            s.to_string(),
            "10 solves (2 from rest); general path: 4 component solves, 2.5 constraints per \
             component, 25.0 % from the solution memo, 3 fillings of 2.0 rounds with 1.5 live \
             constraints per round; 2 region solves of 3.5 variables, 1 gave up; 5 hub \
             registrations (2 wakes, 2.5 grouped per solve); 8 rate updates, 75.0 % unchanged"
        );
        assert_eq!(
            s.named(),
            [
                ("solves", 10),
                ("rest_hits", 2),
                ("general_solves", 4),
                ("general_constraints", 10),
                ("memo_hits", 1),
                ("fillings", 3),
                ("filling_rounds", 6),
                ("live_scanned", 9),
                ("region_solves", 2),
                ("region_vars", 7),
                ("region_gave_up", 1),
                ("registrations", 5),
                ("wakes", 2),
                ("grouped", 25),
                ("rate_updates", 8),
                ("unchanged_rates", 6),
            ]
        );
        assert_eq!(
            KernelStats::default().to_string(),
            "0 solves (0 from rest); general path: 0 component solves, 0 fillings; 0 hub \
             registrations; 0 rate updates"
        );
    }
}
