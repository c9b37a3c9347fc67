//! Dormant registration: no bookkeeping while no constraint is crowded enough to be a hub.
//!
//! Registration (`registration`) counts every active variable on each of its constraints so
//! that a constraint reaching `on` active variables becomes a hub. While no hub is alive those
//! counts are all it keeps, and the max-min system counts the same thing already: a
//! constraint's active prefix (`Cnst::n_active`, the elements of its variables of positive
//! penalty). So while no hub is alive the system is **dormant**: no variable is registered, and
//! each solve only looks at the constraints the change touched (`modified`) for one with `on`
//! active variables. The first such solve **wakes** the system: every active variable is
//! registered, from the list of active variables (`System::active_vars`: walking every variable
//! slot instead missed the cache 650 k times in a 10-iteration stencil on 4096 ranks), into
//! the hubs that incremental registration would have made (each SHARED constraint with `on` or
//! more), made first, in the order the registrations' counts would reach `on`: so each
//! variable registers once, with its hub, where registering first and making the hubs after
//! moved every member of a new hub again (`make_hub`; 160 k of the 670 k registrations of
//! `validation/bench`'s 4,096-rank allreduce, 3.9 % of its instructions; same values, reports
//! byte-identical). When the last hub is dropped (and none is cut) the system **sleeps**
//! again: every registration is forgotten, O(registered elements).
//!
//! The general path never reads registrations, so the values are the same either way; a
//! replay without hubs (16 ranks on a ring: at most 16 flows) no longer pays a registration and
//! an unregistration per flow (15 % of its instructions, callgrind).
//!
//! Example (on = 32): 20 flows cross the backbone B: dormant, each arrival costs nothing here.
//! The solve after the 32nd activation sees B in `modified` with 32 active elements: it wakes,
//! makes B a hub and registers the 32 flows with it, and from then on
//! arrivals and departures register one by one. When B's count falls below `off` its hub is
//! dropped, no hub is left, and the solve ends by forgetting the registrations.
//!
//! # When to wake: registration only where it pays
//! Registering a variable and later unregistering it costs about four times what one general
//! solve spends on one active variable of the component it walks (callgrind, 64-rank stencil:
//! about 3,000 instructions per registered variable's life against 770 per active variable and
//! solve); with the hubs' other costs (evaluations, the engine's group events) the best ratio
//! measured is R = [`DEFAULT_WAKE_RATIO`] = 16 (the 100-iteration 64-rank stencil: 436 M
//! instructions waking at once, 380 M with R = 4, 373 M with 8 and with 16; since dormant
//! solves met before skip their walk, `rest`, the 1,000-iteration one: main thread 1,421 M
//! with R = 4, 1,368 M with 8, 1,321 M with 16, 1,357 M with 32; with 16 rather than 8 the
//! 1,024-rank stencil and the 4,096-rank allreduce run 0.04 % and 0.7 % fewer instructions,
//! the 4,096-rank stencil 0.2 % more). A crowded
//! constraint makes waking worth it only if the solves while it stays crowded are many: flows
//! that arrive in one batch and leave in the next (a ring of 64 ranks: 64 flows start at once
//! and end at once, two solves) are cheaper on the general path, while flows that come and go
//! one at a time among thousands (a 1,024-rank stencil: 188 solves per crowded period, 1,664
//! active variables on average, 5,900 arrivals)
//! need the hubs. So the dormant system decides like a ski rental, per **crowded period**
//! (from the first solve at which a constraint has `on` active variables until every such
//! constraint is below `off` while dormant, or until the system sleeps again):
//! * *walked* W = Σ over the period's solves of the active variables (what the general path
//!   walks, or would walk, on a cluster where every flow crosses the crowded constraint);
//! * *needed* N = the active variables at the period's start plus those activated during it
//!   (what waking at its start would have registered).
//!
//! A period begins dormant unless the previous one found W > R·N (waking at once would have
//! paid), and a dormant period wakes as soon as its W reaches R times the active variables
//! (what waking now registers): at most about twice the cheaper choice in any period, and the
//! right one at once when periods repeat, as in an iterative application. R = 0 wakes at the
//! first crowded solve (the hub tests use it). Either way the values are the same (the hub
//! path and the general path agree to rounding, `hubs`).
//!
//! Example (R = 8, on = 32): 64 flows start in one solve (W = 64 < 8·64: dormant) and end in
//! the next (no constraint crowded: the period ends with W = 64 ≤ 8·N = 512, so the next
//! period begins dormant too). In a period where 1,000 flows stay and one more comes and goes
//! per solve, W reaches 8 × 1,000 at the eighth solve: the system wakes; the period ends with
//! W far above 8·N, so the next one wakes at its first solve.
//!
//! # When the groups do not form
//! W assumes that waking saves the general path its walk of every active variable, which holds
//! where the crowded constraint is every flow's bottleneck (a backbone). On a torus or a
//! fat-tree a crowded link is one of several on each flow's route: its members use other
//! crowded links, of other hubs, its neighbours are not clean, no group forms, and the
//! registrations buy nothing (`validation/bench`'s 1,024-rank allreduce on the torus: 2,433
//! wakes, 5.5 of 35 active variables grouped per solve, 2.63 s against 1.66 s with hubs off).
//! So the saving is measured while awake: each awake solve adds the variables in a group
//! ([`Hubs::n_grouped`](super::Hubs)) and the active ones, and when a period with an awake
//! stretch closes, the stretch is added to the past ones (their sums halved,
//! [`STRETCH_DECAY`]). Once the grouped share of those sums is below [`GROUPED_SHARE_PAYS`]
//! and [`LOW_STRETCHES`] stretches in a row were below it on their own (a run's first stretch,
//! where every flow starts at once, is often low on a backbone too), a dormant solve's active
//! variable counts for [`UNPAID_WEIGHT`] in W, and no period wakes at once; one stretch at or
//! above the share counts them in full again. The shares measured (`--kernel-stats`, grouped
//! per solve against active per solve): 0.79 to 0.99 on the flat cluster's stencil and
//! allreduce from 64 to 4,096 ranks, 0 to 0.16 on the torus and the fat-tree. The 1,024-rank
//! torus allreduce then wakes 6 times (1.64 s), the 4,096-rank one 361 times instead of 1,021
//! (5.6 s against 6.9 s; 5.5 s with hubs off); the flat cluster's wakes are unchanged.
//!
//! Example (R = 8, on = 32): each awake stretch of a torus replay groups 5 % of its active
//! variables. After two such stretches a crowded period of 100 active variables needs
//! W = 800, i.e. 512 solves at 100 active counting 1/64 each, before it wakes again (8 solves
//! before the lesson). Values never depend on the decision (module doc above).

use super::super::{Sharing, System};
use super::CnstReg;

/// R of the wake decision (module doc, "When to wake"), measured on the 64-rank stencil.
pub const DEFAULT_WAKE_RATIO: u32 = 16;

/// The share of the active variables that must be in a group, over the awake solves, for
/// waking to count as paying (module doc, "When the groups do not form").
pub const GROUPED_SHARE_PAYS: f64 = 0.5;
/// Weight of the previous stretches' sums when a new awake stretch is added to them.
pub const STRETCH_DECAY: f64 = 0.5;
/// Awake stretches in a row below [`GROUPED_SHARE_PAYS`] before the estimate is discounted.
pub const LOW_STRETCHES: u32 = 2;
/// What a dormant solve's active variable counts for in W once waking has not paid.
pub const UNPAID_WEIGHT: f64 = 1.0 / 64.0;

/// The wake decision's state (module doc, "When to wake").
#[derive(Debug, Clone)]
pub(in crate::lmm) struct Crowding {
    /// R: 0 wakes at the first crowded solve.
    pub(in crate::lmm) ratio: u64,
    /// A crowded period is in progress.
    open: bool,
    /// The constraints found crowded while dormant in this period, kept while they have
    /// `off` active variables.
    crowd: Vec<u32>,
    /// W: Σ over the period's solves of the active variables (each weighted by
    /// [`Crowding::weight`] while dormant).
    walked: f64,
    /// Active variables at the period's start, and [`Crowding::activations`] then.
    start_active: u64,
    start_activations: u64,
    /// The last period found W > R·N: the next one wakes at its first solve.
    wake_at_once: bool,
    /// Variables made active since the system was made.
    pub(in crate::lmm) activations: u64,
    /// This period's awake solves: Σ of the variables in a group and of the active ones.
    grouped: u64,
    awake_active: u64,
    /// The same sums over the past awake stretches, the older ones weighted down by
    /// [`STRETCH_DECAY`] per stretch.
    past_grouped: f64,
    past_active: f64,
    /// Awake stretches in a row whose own share was below [`GROUPED_SHARE_PAYS`].
    low_stretches: u32,
    /// Waking has not paid (module doc, "When the groups do not form").
    unpaid: bool,
}

impl Default for Crowding {
    fn default() -> Self {
        Crowding {
            ratio: u64::from(DEFAULT_WAKE_RATIO),
            open: false,
            crowd: Vec::new(),
            walked: 0.0,
            start_active: 0,
            start_activations: 0,
            wake_at_once: false,
            activations: 0,
            grouped: 0,
            awake_active: 0,
            past_grouped: 0.0,
            past_active: 0.0,
            low_stretches: 0,
            unpaid: false,
        }
    }
}

impl Crowding {
    /// The last period's verdict: the next one wakes at its first crowded solve.
    #[cfg(test)]
    pub(in crate::lmm) fn wake_at_once(&self) -> bool {
        self.wake_at_once
    }

    /// Ends the period in progress with its verdict for the next one.
    fn close(&mut self) {
        if !self.open {
            return;
        }
        let needed = self.start_active + (self.activations - self.start_activations);
        if self.awake_active > 0 {
            self.learn_share();
        }
        self.wake_at_once = !self.unpaid && self.walked > self.ratio.saturating_mul(needed) as f64;
        self.open = false;
        debug_assert!(
            self.crowd.is_empty(),
            "closed with crowded constraints listed"
        );
    }

    /// Adds the period's awake stretch to the past ones and decides whether waking has paid
    /// (module doc, "When the groups do not form").
    fn learn_share(&mut self) {
        self.past_grouped = self.past_grouped * STRETCH_DECAY + self.grouped as f64;
        self.past_active = self.past_active * STRETCH_DECAY + self.awake_active as f64;
        let own = self.grouped as f64 / self.awake_active as f64;
        self.low_stretches = if own < GROUPED_SHARE_PAYS {
            self.low_stretches.saturating_add(1)
        } else {
            0
        };
        let pays = self.past_grouped >= GROUPED_SHARE_PAYS * self.past_active;
        self.unpaid = !pays && self.low_stretches >= LOW_STRETCHES;
        self.grouped = 0;
        self.awake_active = 0;
    }

    /// What a dormant solve's active variable counts for in W: 1, or [`UNPAID_WEIGHT`] once
    /// waking has not paid.
    pub(in crate::lmm) fn weight(&self) -> f64 {
        if self.unpaid {
            UNPAID_WEIGHT
        } else {
            1.0
        }
    }
}

impl System {
    /// The wake decision at the start of [`System::solve`] (module doc, "When to wake"):
    /// counts the solve in the crowded period and, while dormant, opens or closes the period
    /// from the crowded constraints among `modified` and wakes when it pays.
    pub(in crate::lmm) fn crowding_step(&mut self, modified: &[u32]) {
        let (on, off) = (self.hubs.on, self.hubs.off);
        if on == u32::MAX {
            return;
        }
        let active = self.active_vars.len() as u64;
        if !self.hubs.dormant {
            let grouped = u64::from(self.hubs.n_grouped);
            let cr = &mut self.hubs.crowding;
            cr.walked += active as f64;
            cr.grouped += grouped;
            cr.awake_active += active;
            return;
        }
        let mut crowd = std::mem::take(&mut self.hubs.crowding.crowd);
        // A variable has one element per constraint at most: with fewer than `on` active
        // variables no constraint has `on` of them, and the pass would find none.
        if active >= u64::from(on) {
            for &c in modified {
                let cn = &mut self.cnsts[c as usize];
                if cn.sharing == Sharing::Shared && cn.n_active >= on && !cn.reg.crowded {
                    cn.reg.crowded = true;
                    crowd.push(c);
                }
            }
        } else {
            debug_assert!(modified
                .iter()
                .all(|&c| self.cnsts[c as usize].n_active < on));
        }
        crowd.retain(|&c| {
            let cn = &mut self.cnsts[c as usize];
            cn.reg.crowded = cn.n_active >= off;
            cn.reg.crowded
        });
        let crowded = crowd.iter().any(|&c| self.cnsts[c as usize].n_active >= on);
        let cr = &mut self.hubs.crowding;
        cr.crowd = crowd;
        if cr.crowd.is_empty() {
            cr.close();
            return;
        }
        if !cr.open {
            cr.open = true;
            cr.walked = 0.0;
            cr.start_active = active;
            cr.start_activations = cr.activations;
        }
        cr.walked += active as f64 * cr.weight();
        if crowded && (cr.wake_at_once || cr.walked >= cr.ratio.saturating_mul(active) as f64) {
            self.wake();
        }
    }

    /// Leaves the dormant state if one of `cnsts` (SHARED) has `on` active variables: registers
    /// every active variable.
    pub(in crate::lmm) fn wake_if_crowded(&mut self, cnsts: &[u32]) {
        let on = self.hubs.on;
        if on == u32::MAX {
            return;
        }
        let crowded = cnsts.iter().any(|&c| {
            let cn = &self.cnsts[c as usize];
            cn.sharing == Sharing::Shared && cn.n_active >= on
        });
        if crowded {
            self.wake();
        }
    }

    /// Leaves the dormant state: registers every active variable. (The period stays open; its
    /// list of crowded constraints is a dormant state's and is dropped.)
    fn wake(&mut self) {
        self.stats.wakes += 1;
        for i in 0..self.hubs.crowding.crowd.len() {
            let c = self.hubs.crowding.crowd[i];
            self.cnsts[c as usize].reg.crowded = false;
        }
        self.hubs.crowding.crowd.clear();
        self.hubs.dormant = false;
        // The constraints that registering every active variable would make hubs, in the
        // order their counts reach `on`, are made hubs first (empty), so that each variable
        // registers once, with its hub, instead of once without and again when `make_hub`
        // moves the members of each new hub (the counts are the registrations' own: while
        // dormant they are all 0, and they are reset after this pass).
        let on = self.hubs.on;
        let mut made = Vec::new();
        for i in 0..self.active_vars.len() {
            let v = self.active_vars[i] as usize;
            for j in 0..self.vars[v].elems.len() {
                let c = self.elems[self.vars[v].elems[j] as usize].cnst as usize;
                let cn = &mut self.cnsts[c];
                cn.reg.n_active += 1;
                if cn.reg.n_active == on && cn.sharing == Sharing::Shared {
                    made.push(c as u32);
                }
            }
        }
        for i in 0..self.active_vars.len() {
            let v = self.active_vars[i] as usize;
            for j in 0..self.vars[v].elems.len() {
                let c = self.elems[self.vars[v].elems[j] as usize].cnst as usize;
                self.cnsts[c].reg.n_active = 0;
            }
        }
        for &c in &made {
            self.make_hub(c);
        }
        for i in 0..self.active_vars.len() {
            self.register(self.active_vars[i]);
        }
    }

    /// Enters the dormant state when no hub is alive or cut: forgets every registration.
    pub(in crate::lmm) fn sleep_if_hubless(&mut self) {
        let h = &self.hubs;
        if h.dormant || h.n_live > 0 || h.n_cut > 0 || !h.uncut_pending.is_empty() {
            return;
        }
        debug_assert!(h.dirty.is_empty() && h.new_members.is_empty());
        debug_assert_eq!(h.n_grouped, 0, "a group without a live hub");
        self.hubs.dormant = true;
        self.hubs.crowding.close();
        for i in 0..self.hubs.pending.len() {
            let v = self.hubs.pending[i];
            self.vars[v as usize].reg.pending = false;
        }
        self.hubs.pending.clear();
        for &c in &self.hubs.count_dirty {
            self.cnsts[c as usize].reg.count_dirty = false;
        }
        self.hubs.count_dirty.clear();
        for i in 0..self.active_vars.len() {
            let v = self.active_vars[i] as usize;
            if !self.vars[v].reg.registered {
                continue;
            }
            for j in 0..self.vars[v].elems.len() {
                let c = self.elems[self.vars[v].elems[j] as usize].cnst;
                self.cnsts[c as usize].reg = CnstReg::default();
            }
            self.vars[v].reg = Default::default();
        }
    }
}
