//! Hubs: solving a crowded constraint's component in O(changes) instead of O(its variables).
//!
//! # Why
//! On a cluster with a backbone every inter-node flow crosses the backbone link, so all flows in
//! progress form one connected component. SimGrid (and the general path of [`System::solve`])
//! re-solve that component whenever one flow starts or ends, and the engine then updates every
//! flow's remaining bytes and completion date: O(flows) per event, O(flows²) per replay.
//!
//! # The certificate
//! A **hub** is a SHARED constraint B with many active variables (at least `hub_on`, 32 by
//! default; it stops being one below `hub_off`, 8). Each active variable belongs to at most one
//! hub, its **registered** hub: the hub of smallest constraint index among the constraints it
//! uses with a positive weight, leaving out cut hubs unless all its hubs are cut (`cut`: a
//! variable whose hub is cut moves to the next live one, and back when the hub is put back).
//! Let N(B) be the constraints used by B's members. If
//! 1. every constraint of N(B), B included, is *clean*: SHARED, and every active variable on it is
//!    a member of B (so B's members form a component of their own);
//! 2. B offers the smallest share: m = C_B / Σ_{v∈B} w_vB/p_v ≤ C_c / Σ_{v on c} w_vc/p_v for
//!    every other c ∈ N(B);
//! 3. no member's bound binds first: b_v·p_v ≥ m for every bounded member,
//!
//! then the first round of bottleneck filling (see the parent module) picks B (and any constraint
//! tied with it) and fixes *every* member at x_v = m/p_v, which ends the component's solve. So
//! the whole solution is the one number m, the hub's **share**: the members form a **group**
//! whose values are read as `share / p_v` ([`System::value`]). Each condition is maintained
//! incrementally: per constraint the count of active variables, the hubs they belong to and
//! Σ w/p as an unevaluated sum of two doubles (TwoSum: the sum is exact to ~1e-32 and never
//! drifts however many variables come and go); per hub the number of unclean constraints of N(B), a min-heap of the other constraints'
//! offers and of its members' `b·p`, each kept as a *floor*: a lower bound lowered in O(1)
//! whenever an offer falls (or a member arrives), and recomputed exactly from the list of N(B)
//! (or of the members) only when it is below the share. While the hub bottlenecks its
//! component with room to spare, a change costs O(elements of the variable) and a check O(1);
//! a recomputation costs O(|N(B)|), no more than the general path the hub would fall back to.
//!
//! When a check fails the hub leaves the group regime: its members are listed in
//! [`System::group_left`] and its component goes to the general path. When it passes again they
//! are listed in [`System::group_joined`]. Between the two, members come and go one at a time.
//!
//! # Worked example
//! Backbone B (C = 2.25e9 B/s) and private links up_i, down_i (1.25e8 B/s) of a 1024-host
//! cluster; 4096 flows i→j in progress, each with weight 1 on up_i, B, down_j and 0.05 on up_j,
//! B, down_i (cross-traffic), penalty p = 600e-6 + 8775 × (2/1.25e8 + 1/2.25e9) = 7.443e-4 s.
//! Σ over B = 4096 × 1.05/p, so m = 2.25e9 × 7.443e-4 / 4300.8 = 389.4 and every flow gets
//! m/p = 2.25e9 / 4300.8 = 5.23e5 B/s. up_i carries 4 flows at weight 1 and 4 at 0.05: offer
//! 1.25e8 × 7.443e-4 / 4.2 = 2.215e4 ≥ m, clean. A fifth flow i→k starting re-registers on its
//! five constraints (counts, sums, floors), m becomes 2.25e9 × 7.443e-4 / 4301.85 and the check
//! passes again: no other flow is looked at. The engine
//! keeps the group's flows in one virtual time advancing at m (see `engine`), so their
//! completion dates need no update either.

use super::{Sharing, System, VarId};
use smallvec::SmallVec;

mod cut;
mod dormant;
pub use dormant::{
    DEFAULT_WAKE_RATIO, GROUPED_SHARE_PAYS, LOW_STRETCHES, STRETCH_DECAY, UNPAID_WEIGHT,
};
mod exceptions;
mod registration;

/// A group: the members of one hub while it is in the group regime. The id of a hub, reused
/// after the hub is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub u32);

/// A constraint becomes a hub at this many active variables ...
pub const DEFAULT_HUB_ON: u32 = 32;
/// ... and stops being one below this many.
pub const DEFAULT_HUB_OFF: u32 = 8;

/// `w/p`, or `None` when it is not a finite positive number (the variable then belongs to no
/// hub and keeps its constraints on the general path).
fn usage_term(w: f64, p: f64) -> Option<f64> {
    let x = w / p;
    (x.is_finite() && x >= 0.0).then_some(x)
}

/// `w/p` of a registered variable whose terms were found finite at registration (`fx`), or
/// of a group member: [`usage_term`] without the check, on the paths that run per element.
#[inline]
fn known_term(w: f64, p: f64) -> f64 {
    let x = w / p;
    debug_assert!(x.is_finite() && x >= 0.0, "a term checked at registration");
    x
}

/// A sum of terms that come and go, kept as an unevaluated pair `hi + lo` (Knuth's TwoSum):
/// each addition's rounding error goes to `lo`, so after any number of additions and removals
/// the value is the exact sum to ~1e-32 relative, whatever the order, and never drifts.
#[derive(Debug, Clone, Copy, Default)]
struct ExactSum {
    hi: f64,
    lo: f64,
}

impl ExactSum {
    fn add(&mut self, x: f64) {
        let s = self.hi + x;
        let bb = s - self.hi;
        let err = (self.hi - (s - bb)) + (x - bb);
        self.hi = s;
        self.lo += err;
    }

    fn value(&self) -> f64 {
        self.hi + self.lo
    }
}

/// Per-constraint bookkeeping of the registered (active) variables.
#[derive(Debug, Clone)]
pub(super) struct CnstReg {
    pub(super) n_active: u32,
    n_unhubbed: u32,
    /// The hubs whose members use this constraint, usually one.
    hubs: SmallVec<[HubEntry; 1]>,
    /// Σ w/p of the registered variables with finite terms, while [`CnstReg::tracked`].
    usage: ExactSum,
    /// The hub this constraint is, if it is one.
    hub: Option<u32>,
    count_dirty: bool,
    /// The hub whose exceptions this constraint is in ([`NO_HUB`] if none): its offer is then
    /// left out of that hub's offer floor.
    exception_of: u32,
    /// This constraint's index in the work list of the hub filling in progress.
    slot: u32,
    /// The constraint is a hub cut from its component (`cut`): the general path ignores it.
    pub(super) cut: bool,
    /// While dormant: the constraint is in the crowded period's list (`dormant`).
    crowded: bool,
}

/// One hub's members on a constraint ([`CnstReg::hubs`]).
#[derive(Debug, Clone, Copy)]
struct HubEntry {
    hub: u32,
    /// How many of the hub's members use the constraint.
    members: u32,
    /// Position of the constraint in the hub's `neighbours`, `u32::MAX` for the hub's own.
    pos: u32,
    /// While the constraint is a cut hub: Σ w/p of the hub's members here that are in its group
    /// (their load is the group's share times this, `cut`).
    grouped: ExactSum,
}

/// No hub (in [`CnstReg::exception_of`]).
const NO_HUB: u32 = u32::MAX;

impl Default for CnstReg {
    fn default() -> Self {
        CnstReg {
            n_active: 0,
            n_unhubbed: 0,
            hubs: SmallVec::new(),
            usage: ExactSum::default(),
            hub: None,
            count_dirty: false,
            exception_of: NO_HUB,
            slot: 0,
            cut: false,
            crowded: false,
        }
    }
}

/// Puts the emptied buffer `spare` back into `list` unless `list` received new entries meanwhile.
fn recycle<T>(list: &mut Vec<T>, spare: Vec<T>) {
    if list.is_empty() && list.capacity() < spare.capacity() {
        *list = spare;
    }
}

impl CnstReg {
    /// Whether the usage and offers are kept up to date: the constraint is a hub or carries a
    /// hub's member.
    fn tracked(&self) -> bool {
        self.hub.is_some() || !self.hubs.is_empty()
    }
}

/// Per-variable registration.
#[derive(Debug, Clone, Default)]
pub(super) struct VarReg {
    pub(super) registered: bool,
    /// Whether the terms were added to the constraints' usages.
    fx: bool,
    hub: Option<u32>,
    penalty: f64,
    /// `bound · penalty` of a bounded member of a hub, +∞ otherwise.
    bp: f64,
    pub(super) in_group: bool,
    /// Fixed by its hub's filling of the exceptions: the variable has a value of its own
    /// while its hub is in the group regime.
    excepted: bool,
    pending: bool,
}

#[derive(Debug)]
struct Hub {
    cnst: u32,
    alive: bool,
    fast: bool,
    share: f64,
    unclean: u32,
    /// The constraints of N(B) other than B.
    neighbours: Vec<u32>,
    /// The neighbours that may offer less than the share (the exceptions, module doc).
    exceptions: Vec<u32>,
    /// The variables the last filling fixed below the share.
    excepted_vars: Vec<u32>,
    /// A lower bound of the offers C_c / Σ w/p of the `neighbours` that are not exceptions
    /// (+∞ when there are none).
    offer_floor: f64,
    /// A lower bound of the members' `b·p` (+∞ when none is bounded).
    bound_floor: f64,
    dirty: bool,
    changed: bool,
    /// The hub is cut from its component (`cut`), with this load Σ w·x of the variables on it
    /// that are in no group (the groups' part is in [`HubEntry::grouped`]).
    cut: bool,
    load: ExactSum,
    /// Listed in `Hubs::cut_check` since the last check.
    check: bool,
    /// The cut constraints that this hub's members use: their loads follow its share.
    cut_neighbours: Vec<u32>,
    /// The [`Hubs::serial`] of the last solve that put this hub back: it is not cut again in
    /// that solve (so that a solve always ends).
    uncut_serial: u32,
}

impl Hub {
    /// Lists this hub (`h`) in `dirty`, the hubs to evaluate, unless it is there already.
    #[inline]
    fn mark_dirty(&mut self, h: u32, dirty: &mut Vec<u32>) {
        if !self.dirty {
            self.dirty = true;
            dirty.push(h);
        }
    }
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            cnst: 0,
            alive: false,
            fast: false,
            share: 0.0,
            unclean: 0,
            neighbours: Vec::new(),
            exceptions: Vec::new(),
            excepted_vars: Vec::new(),
            offer_floor: f64::INFINITY,
            bound_floor: f64::INFINITY,
            dirty: false,
            changed: false,
            cut: false,
            load: ExactSum::default(),
            check: false,
            cut_neighbours: Vec::new(),
            uncut_serial: 0,
        }
    }
}

/// Every hub and the events of the group regime since the engine last read them.
#[derive(Debug)]
pub(super) struct Hubs {
    list: Vec<Hub>,
    free: Vec<u32>,
    on: u32,
    off: u32,
    pending: Vec<u32>,
    count_dirty: Vec<u32>,
    dirty: Vec<u32>,
    new_members: Vec<u32>,
    joined: Vec<VarId>,
    left: Vec<VarId>,
    changed: Vec<GroupId>,
    /// Scratch of the exceptions' filling: (constraint, remaining, usage), the hub first.
    work: Vec<(u32, f64, f64)>,
    /// Scratch of the exceptions' filling: (variable, value) fixed below the share.
    fixes: Vec<(u32, f64)>,
    /// Cut hubs whose load changed since the last check.
    cut_check: Vec<u32>,
    /// Cut hubs that a variable using no other live constraint joined: put back before the
    /// hubs are evaluated.
    uncut_pending: Vec<u32>,
    /// Counts the calls of [`System::solve`] (for [`Hub::uncut_serial`]).
    serial: u32,
    /// How many hubs are cut (none: the cut bookkeeping is skipped).
    n_cut: u32,
    /// How many hubs are alive.
    pub(super) n_live: u32,
    /// How many variables are in a group (`VarReg::in_group`): what the general path does not
    /// walk thanks to the hubs, the saving the wake decision learns (`dormant`).
    pub(super) n_grouped: u32,
    /// No hub is alive and no variable is registered (`dormant`): registration waits until
    /// a constraint has `on` active variables.
    pub(super) dormant: bool,
    /// When a dormant system wakes (`dormant`).
    pub(super) crowding: dormant::Crowding,
    /// Test statistics: cuts, hubs put back, variables moved to another hub by a cut or an
    /// uncut, and evaluations in the group regime of a hub with cut neighbours.
    #[cfg(test)]
    pub(super) stats: [u64; 4],
}

impl Default for Hubs {
    fn default() -> Self {
        Hubs {
            list: Vec::new(),
            free: Vec::new(),
            on: DEFAULT_HUB_ON,
            off: DEFAULT_HUB_OFF,
            pending: Vec::new(),
            count_dirty: Vec::new(),
            dirty: Vec::new(),
            new_members: Vec::new(),
            joined: Vec::new(),
            left: Vec::new(),
            changed: Vec::new(),
            work: Vec::new(),
            fixes: Vec::new(),
            cut_check: Vec::new(),
            uncut_pending: Vec::new(),
            serial: 0,
            n_cut: 0,
            n_live: 0,
            n_grouped: 0,
            dormant: true,
            crowding: dormant::Crowding::default(),
            #[cfg(test)]
            stats: [0; 4],
        }
    }
}

impl Hubs {
    /// The hub threshold `on` ([`System::set_hub_thresholds`]).
    pub(super) fn on(&self) -> u32 {
        self.on
    }

    pub(super) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
            || !self.dirty.is_empty()
            || !self.count_dirty.is_empty()
            || !self.uncut_pending.is_empty()
    }

    /// A new [`System::solve`] begins.
    pub(super) fn next_serial(&mut self) {
        self.serial = self.serial.wrapping_add(1);
    }

    fn mark_dirty(&mut self, h: u32) {
        self.list[h as usize].mark_dirty(h, &mut self.dirty);
    }

    fn mark_changed(&mut self, h: u32) {
        let hub = &mut self.list[h as usize];
        if !hub.changed {
            hub.changed = true;
            self.changed.push(GroupId(h));
        }
    }
}

impl System {
    /// A SHARED constraint becomes a hub when it has `on` active variables and stops being one
    /// below `off` (`off ≤ on`; `u32::MAX` disables hubs). Defaults 32 and 8. Takes effect at the
    /// next solve; the values do not depend on it (tests use small thresholds).
    pub fn set_hub_thresholds(&mut self, on: u32, off: u32) {
        self.rest_interrupt();
        self.hubs.on = on;
        self.hubs.off = off.min(on);
        if self.hubs.dormant {
            let all: Vec<u32> = (0..self.cnsts.len() as u32).collect();
            self.wake_if_crowded(&all);
            return;
        }
        for c in 0..self.cnsts.len() as u32 {
            self.count_changed(c);
        }
    }

    /// How long a crowded constraint waits for registration (`lmm::hubs::dormant`, "When to
    /// wake"): the system wakes once the general solves of a crowded period have walked `ratio`
    /// times the active variables waking would register ([`DEFAULT_WAKE_RATIO`], 16); 0 wakes at
    /// the first solve at which a constraint has `on` active variables. The values do not
    /// depend on it beyond rounding.
    pub fn set_wake_ratio(&mut self, ratio: u32) {
        self.rest_interrupt();
        self.hubs.crowding.ratio = u64::from(ratio);
    }

    /// The group `var` belongs to, if its hub is in the group regime: its value is then
    /// [`System::group_share`]` / penalty`.
    pub fn group_of(&self, var: VarId) -> Option<GroupId> {
        let r = &self.vars[var.0 as usize].reg;
        if r.in_group {
            r.hub.map(GroupId)
        } else {
            None
        }
    }

    /// The share m of group `g` (capacity / Σ w/p of its hub, in the hub's unit per second
    /// times penalty units), as of the last solve.
    pub fn group_share(&self, g: GroupId) -> f64 {
        self.hubs.list[g.0 as usize].share
    }

    /// Variables that entered a group since [`System::clear_group_events`] (their individual
    /// values are no longer maintained).
    pub fn group_joined(&self) -> &[VarId] {
        &self.hubs.joined
    }

    /// Variables that left a group for a reason other than their removal since
    /// [`System::clear_group_events`] (listed before any later [`System::touched`] value).
    pub fn group_left(&self) -> &[VarId] {
        &self.hubs.left
    }

    /// Groups whose share or membership changed since [`System::clear_group_events`].
    pub fn groups_changed(&self) -> &[GroupId] {
        &self.hubs.changed
    }

    /// Makes the events of a solve consistent for the caller, whatever happened in between: a
    /// variable is listed in [`System::group_joined`] once, only if it ends the solve in a
    /// group, and in [`System::touched`] only if it does not (a solve may give a variable a
    /// value, then put it in a group when a hub is cut).
    pub(super) fn settle_group_events(&mut self) {
        if self.hubs.joined.is_empty() {
            return;
        }
        let epoch = self.next_epoch();
        let vars = &mut self.vars;
        self.hubs.joined.retain(|&VarId(v)| {
            let var = &mut vars[v as usize];
            let keep = var.reg.in_group && var.mark != epoch;
            var.mark = epoch;
            keep
        });
        self.touched
            .retain(|&VarId(v)| !vars[v as usize].reg.in_group);
    }

    /// Forgets the group events once the caller has applied them.
    pub fn clear_group_events(&mut self) {
        self.hubs.joined.clear();
        self.hubs.left.clear();
        for i in 0..self.hubs.changed.len() {
            let g = self.hubs.changed[i];
            self.hubs.list[g.0 as usize].changed = false;
        }
        self.hubs.changed.clear();
    }

    /// True if `c` is a clean constraint of a hub in the group regime: its variables' values are
    /// the group's and the general path must not solve it.
    pub(super) fn in_group_region(&self, c: u32) -> bool {
        let reg = &self.cnsts[c as usize].reg;
        reg.hubs.len() == 1 && self.is_clean(c) && self.hubs.list[reg.hubs[0].hub as usize].fast
    }

    /// The hub phase of [`System::solve`]: registrations, hub changes, then each changed hub's
    /// regime and share. Constraints leaving the group regime go to `modified`.
    pub(super) fn solve_hubs(&mut self) {
        let mut pending = std::mem::take(&mut self.hubs.pending);
        for &v in &pending {
            self.vars[v as usize].reg.pending = false;
            self.register(v);
        }
        pending.clear();
        self.hubs.pending = pending;
        let mut counted = std::mem::take(&mut self.hubs.count_dirty);
        for &c in &counted {
            self.cnsts[c as usize].reg.count_dirty = false;
        }
        for &c in &counted {
            let cn = &self.cnsts[c as usize];
            match cn.reg.hub {
                None if cn.sharing == Sharing::Shared && cn.reg.n_active >= self.hubs.on => {
                    self.make_hub(c)
                }
                Some(_) if cn.reg.n_active < self.hubs.off || self.hubs.on == u32::MAX => {
                    self.drop_hub(c)
                }
                _ => {}
            }
        }
        counted.clear();
        // Hub changes re-register variables, which counts their constraints again: keep those.
        recycle(&mut self.hubs.count_dirty, counted);
        self.process_uncut_pending();
        let mut dirty = std::mem::take(&mut self.hubs.dirty);
        for &h in &dirty {
            self.hubs.list[h as usize].dirty = false;
            if self.hubs.list[h as usize].alive {
                self.evaluate_hub(h);
            }
        }
        dirty.clear();
        recycle(&mut self.hubs.dirty, dirty);
        let mut new_members = std::mem::take(&mut self.hubs.new_members);
        for &v in &new_members {
            let reg = &self.vars[v as usize].reg;
            let Some(h) = reg.hub else { continue };
            if reg.registered && !reg.in_group && !reg.excepted && self.hubs.list[h as usize].fast {
                self.set_in_group(v, true);
                self.hubs.joined.push(VarId(v));
                self.hubs.mark_changed(h);
            }
        }
        new_members.clear();
        recycle(&mut self.hubs.new_members, new_members);
    }

    fn evaluate_hub(&mut self, h: u32) {
        if self.hubs.list[h as usize].cut {
            return;
        }
        let share = self.hub_solution(h);
        let was_fast = self.hubs.list[h as usize].fast;
        let c = self.hubs.list[h as usize].cnst;
        match share {
            Some(m) => {
                self.apply_hub_solution(h);
                if !was_fast {
                    self.hubs.list[h as usize].fast = true;
                    for v in self.registered_on(c) {
                        let reg = &self.vars[v as usize].reg;
                        if reg.hub == Some(h) && !reg.in_group && !reg.excepted {
                            self.set_in_group(v, true);
                            self.hubs.joined.push(VarId(v));
                        }
                    }
                }
                let hub = &mut self.hubs.list[h as usize];
                if hub.share != m || !was_fast {
                    hub.share = m;
                    self.hubs.mark_changed(h);
                    self.check_cut_neighbours(h);
                }
                #[cfg(test)]
                if !self.hubs.list[h as usize].cut_neighbours.is_empty() {
                    self.hubs.stats[3] += 1;
                }
            }
            None if was_fast => {
                self.hubs.list[h as usize].fast = false;
                self.clear_hub_solution(h);
                for v in self.registered_on(c) {
                    if self.set_in_group(v, false) {
                        self.hubs.left.push(VarId(v));
                    }
                }
                self.hubs.mark_changed(h);
                self.modified.push(c);
            }
            None => {}
        }
    }
}
