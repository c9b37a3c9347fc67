//! Incremental filling: after a change, re-fill only the region of the component that the
//! change can reach, and prove that the rest of the component keeps its values.
//!
//! # Why
//! The general path (`general.rs`) walks the whole component of the changed constraints and
//! fills it again. Where no hub forms (a fat-tree, a torus) a component is every flow in
//! progress, and a change reaches a small part of it: on the 256-rank stencil of
//! `validation/bench/scaling.py` on the fat-tree, a filling sets 377.6 variables on 362.6
//! constraints, of which 12.6 change, on 22.8 constraints (session 27, `SCALING.md`).
//!
//! # How
//! The variables on the changed constraints form the **region** `R`; the constraints they use
//! are `K`. Every other active variable on a constraint of `K` is a **boundary** variable: it
//! keeps its value and is charged to the constraints it uses, as a variable fixed by an earlier
//! round would be. `R` is filled alone (SimGrid 3.32's bottleneck filling, `general.rs`, on
//! `K` with the boundary's consumption subtracted). The result is then checked with the
//! max-min **certificate**: an allocation is max-min fair if and only if every constraint
//! holds and every variable is at its bound or crosses a saturated constraint on which no
//! variable has a higher level `x·p` (Bertsekas & Gallager, *Data Networks*, § 6.5.2, weighted
//! by the penalty as SimGrid's filling is). The constraints outside `K` carry no variable of
//! `R`, so their loads and levels did not change, and the variables that use none of `K`
//! keep their certificate: only `K`'s constraints and the variables on them need a check.
//! Where it fails, the region grows: a boundary variable without a certificate joins `R`,
//! an overloaded constraint's boundary variables join it, and a region variable whose
//! bottleneck holds a boundary variable of higher level takes that variable in. Then `R` is
//! filled again. After [`MAX_ROUNDS`] rounds, past a budget of one component's filling
//! ([`Policy::budget`]), or on a FATPIPE constraint (where a bound tied
//! with a saturation has two max-min answers, `lmm::tests::naive`), the component is solved
//! in full as before.
//!
//! The check's tolerance is [`CERT_TOLERANCE`], relative: the region's values are the
//! filling's up to rounding (the boundary's consumption is subtracted before the region's
//! instead of in SimGrid's order of rounds), so results equal a full solve's to about 1e-15
//! relative rather than bit for bit (the proptests of `lmm/tests/region.rs` compare both at
//! 1e-9). A constraint SimGrid's filling left with up to `maxmin/precision` of its capacity
//! unused (`double_update`'s snapping) fails the check and is re-filled with its variables.
//!
//! # Worked example
//! Links A (C = 10) and B (C = 4); flow 1 on A, flow 2 on A and B, flow 3 on B: the solution
//! is x2 = x3 = 2 (B is the bottleneck), x1 = 8. Flow 4 arrives on A alone. `R` = {1, 2, 4}
//! (A's variables), `K` = {A, B}, flow 3 is a boundary variable: B has 4 − 2 = 2 left for
//! flow 2, A 10 for flows 1, 2, 4. The filling: A offers 10/3, B offers 2/1: flow 2 gets 2,
//! then A's 8 go to flows 1 and 4, 4 each. The check: A carries 10 (saturated, top level 4:
//! flows 1 and 4 certified), B carries 4 (saturated, levels 2 and 2: flows 2 and 3
//! certified). Flow 3 kept its value and its completion date: the engine re-dates only `R`.
//!
//! The region path runs where the solution memo is off (`memo`: components that come back in
//! the same shape are looked up instead, bit for bit; its windows switch it off where they do
//! not come back, as on the 256-rank fat-tree), and where the memo is on but the regions are
//! much smaller than the components ([`Policy`]), unless [`System::set_region_filling`]`(false)`.
//! Each variable remembers the constraint that certified it last (`Var::bneck`, with the value
//! it had then), so that a boundary variable bottlenecked outside `K` is certified without a
//! look at its constraints; the memo, the solves from rest and the hubs, which set values
//! without a certificate, forget it.

use super::general::open_constraint_with;
use super::{Sharing, System, VarId, NONE};
use crate::precision::{double_positive, double_update, MAXMIN_PRECISION};

/// [`super::Var`]'s `bneck` of a variable fixed at its bound.
pub(super) const AT_BOUND: u32 = u32::MAX - 1;

/// Rounds of growth after which the region gives up and the component is solved in full (it
/// also gives up when its fillings have filled more variables than one filling of a
/// component does, [`Policy::budget`]).
pub const MAX_ROUNDS: u32 = 8;

/// Relative tolerance of the certificate: a constraint is saturated when its load is within
/// this fraction of its capacity, a variable is at the top level of a constraint when its
/// level is within this fraction of the top, at its bound when within this fraction of it.
pub const CERT_TOLERANCE: f64 = 1e-11;

/// One general solve in this many takes the path the policy does not prefer, to follow the
/// other path's size as the replay's phases change.
pub const POLICY_PROBE_EVERY: u64 = 128;
/// Samples of each path before the policy prefers one (the first general solves alternate).
pub const POLICY_FIRST_SAMPLES: u32 = 16;
/// The region path is preferred to the memo's walk while the regions hold fewer than
/// `1 / POLICY_RATIO` of the components' variables (moving averages).
pub const POLICY_RATIO: f64 = 5.0;
/// Weight of a new sample in the moving averages.
const POLICY_WEIGHT: f64 = 1.0 / 32.0;

/// Which path a general solve takes while the solution memo is on: the memo's walk of the
/// whole component (a lookup, or a filling stored for the next time) or the region. A memo hit
/// costs a walk of the component; a region solve a filling of the region and the check of its
/// boundary, several times the work per variable. The policy keeps moving averages of the
/// variables a walk finds and a region solve re-fills (the first general solves
/// alternate, the memo's path first, [`POLICY_FIRST_SAMPLES`] of each), prefers the region while its regions are under
/// a third of the components ([`POLICY_RATIO`]), and sends one solve in
/// [`POLICY_PROBE_EVERY`] the other way to keep both averages current. On
/// `validation/bench`'s stencils (callgrind, one thread): on the flat cluster at 64 ranks the
/// region is the whole component (40.5 variables against 40) and the memo path stays; on
/// the fat-tree at 64 ranks regions are 15.3 variables against 100, on the 256-rank torus 5.7
/// against 64 (in the first iterations, where every flow starts together, 45 against 95), and
/// the region path takes over. The choice depends only on the sequence of solves, so runs stay
/// deterministic.
#[derive(Debug, Default)]
pub(super) struct Policy {
    solves: u64,
    component_avg: f64,
    components: u32,
    region_avg: f64,
    regions: u32,
}

/// `avg` moved towards sample `n` (the first `POLICY_FIRST_SAMPLES` samples averaged evenly).
fn moving_average(avg: &mut f64, count: &mut u32, n: usize) {
    *count = count.saturating_add(1);
    let w = (1.0 / f64::from(*count)).max(POLICY_WEIGHT);
    *avg += (n as f64 - *avg) * w;
}

impl Policy {
    /// Whether this general solve should try the region path.
    pub(super) fn prefers_region(&mut self) -> bool {
        self.solves += 1;
        if self.components < POLICY_FIRST_SAMPLES || self.regions < POLICY_FIRST_SAMPLES {
            // The memo's path first, so that a region knows the components' size (`limit`).
            return self.solves.is_multiple_of(2);
        }
        let region = self.region_avg * POLICY_RATIO < self.component_avg;
        region != self.solves.is_multiple_of(POLICY_PROBE_EVERY)
    }

    /// A region solve re-filled `n` variables (or gave up on a component of `n`).
    pub(super) fn note_region(&mut self, n: usize) {
        moving_average(&mut self.region_avg, &mut self.regions, n);
    }

    /// A walk found a component of `n` variables.
    pub(super) fn note_component(&mut self, n: usize) {
        moving_average(&mut self.component_avg, &mut self.components, n);
    }

    /// The region path's budget: variables filled over all its rounds, beyond which it gives
    /// up, the size of one filling of a component as seen so far (at least
    /// [`REGION_MIN_BUDGET`]). On the 4,096-rank stencil of `validation/bench` on the flat
    /// cluster the first iterations' components hold 5,000 flows, all reached by any change:
    /// without a budget 32 region solves of 5,265 variables, each grown over several
    /// fillings, took a second of the run's 2.9 s.
    pub(super) fn budget(&self) -> usize {
        (self.component_avg as usize).max(REGION_MIN_BUDGET)
    }
}

/// The least [`Policy::budget`]: regions of a few dozen variables always try.
pub const REGION_MIN_BUDGET: usize = 64;

/// Scratch state of the region path, by variable and by constraint (stamps instead of
/// clearing).
#[derive(Debug)]
pub(super) struct Region {
    /// Off: the general path always fills the whole component.
    pub(super) enabled: bool,
    /// Region or memo while the memo is on.
    pub(super) policy: Policy,
    serial: u32,
    /// By variable: `serial` when in `R`, `serial + 1` when seen on the boundary.
    var_stamp: Vec<u32>,
    /// By constraint: `serial` when in `K`.
    cnst_stamp: Vec<u32>,
    /// By constraint: the stamp of `checked`'s entry (a constraint's load and top level).
    check_stamp: Vec<u32>,
    /// By constraint: (load, top level, saturated) when `check_stamp` is current.
    checked: Vec<(f64, f64, bool)>,
    /// Serial of the current check pass.
    check_serial: u32,
    vars: Vec<u32>,
    cnsts: Vec<u32>,
    boundary: Vec<u32>,
    grow: Vec<u32>,
}

impl Default for Region {
    fn default() -> Self {
        Self {
            enabled: true,
            policy: Policy::default(),
            serial: 0,
            var_stamp: Vec::new(),
            cnst_stamp: Vec::new(),
            check_stamp: Vec::new(),
            checked: Vec::new(),
            check_serial: 0,
            vars: Vec::new(),
            cnsts: Vec::new(),
            boundary: Vec::new(),
            grow: Vec::new(),
        }
    }
}

/// What the region path did with a solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Solved: the region's variables are in `touched`, `modified` is consumed.
    Solved,
    /// Not solved (the values it changed are the component's, which the full filling
    /// sets again): fill the component.
    GaveUp,
    /// Not tried ([`System::set_region_filling`]`(false)`).
    Off,
}

impl Region {
    /// Variables of the last region solved.
    pub(super) fn last_vars(&self) -> usize {
        self.vars.len()
    }
}

impl System {
    /// The region path (module doc): solves the changes in `modified` by re-filling the
    /// variables they reach, or gives up.
    pub(super) fn solve_region(&mut self) -> Outcome {
        if !self.region_start() {
            return Outcome::Off;
        }
        // What `settle_cuts` reads as the solved constraints: none until solved.
        self.set.clear();
        let budget = self.region.policy.budget();
        let mut filled = 0;
        let hubs_live = self.hubs.n_live > 0;
        // Seeds: the modified constraints the general path would solve (see `collect`).
        for i in 0..self.modified.len() {
            let c = self.modified[i];
            if hubs_live && (self.in_group_region(c) || self.is_cut(c)) {
                continue;
            }
            if self.cnsts[c as usize].n_active == 0 {
                continue;
            }
            if !self.region_take_cnst_vars(c) || self.region.vars.len() > budget {
                return Outcome::GaveUp;
            }
        }
        if self.region.vars.is_empty() {
            self.region_finish();
            return Outcome::Solved;
        }
        for round in 0.. {
            filled += self.region.vars.len();
            if round == MAX_ROUNDS || filled > budget {
                return Outcome::GaveUp;
            }
            if !self.region_fill() || !self.region_check() {
                return Outcome::GaveUp;
            }
            if self.region.grow.is_empty() {
                break;
            }
            // `region_add_var` leaves `grow` alone (`region_start` empties it on a give-up).
            for i in 0..self.region.grow.len() {
                if !self.region_add_var(self.region.grow[i]) {
                    return Outcome::GaveUp;
                }
            }
            self.region.grow.clear();
        }
        self.stats.region_solves += 1;
        self.stats.region_vars += self.region.vars.len() as u64;
        for i in 0..self.region.vars.len() {
            self.touched.push(VarId(self.region.vars[i]));
        }
        // The hubs' cut decisions read the solved constraints (`settle_cuts`).
        self.set.clear();
        self.set.extend_from_slice(&self.region.cnsts);
        self.region_finish();
        Outcome::Solved
    }

    /// Starts a solve: new stamps, empty lists. `false` when the region path is off.
    fn region_start(&mut self) -> bool {
        let r = &mut self.region;
        if !r.enabled {
            return false;
        }
        if r.var_stamp.len() < self.vars.len() {
            r.var_stamp.resize(self.vars.len(), 0);
        }
        if r.cnst_stamp.len() < self.cnsts.len() {
            r.cnst_stamp.resize(self.cnsts.len(), 0);
            r.check_stamp.resize(self.cnsts.len(), 0);
            r.checked.resize(self.cnsts.len(), (0.0, 0.0, false));
        }
        if r.serial >= u32::MAX - 2 {
            r.serial = 0;
            r.var_stamp.fill(0);
            r.cnst_stamp.fill(0);
        }
        r.serial += 2;
        r.vars.clear();
        r.cnsts.clear();
        r.boundary.clear();
        r.grow.clear();
        true
    }

    /// After a solve: `modified` consumed as the general path's collection does.
    fn region_finish(&mut self) {
        self.modified.clear();
        self.modified_serial += 1;
    }

    /// Puts every active variable of constraint `c` in the region. `false`: give up.
    fn region_take_cnst_vars(&mut self, c: u32) -> bool {
        let n = self.cnsts[c as usize].n_active as usize;
        for k in 0..n {
            let e = self.cnsts[c as usize].elems[k];
            let v = self.elems[e as usize].var;
            if self.vars[v as usize].penalty > 0.0
                && self.region.var_stamp[v as usize] != self.region.serial
                && !self.region_add_var(v)
            {
                return false;
            }
        }
        true
    }

    /// Puts variable `v` in the region and its constraints in `K`. `false` on a FATPIPE
    /// constraint (give up).
    fn region_add_var(&mut self, v: u32) -> bool {
        let serial = self.region.serial;
        if self.region.var_stamp[v as usize] == serial {
            return true;
        }
        if self.vars[v as usize].reg.in_group {
            // A group's values are its share's (`hubs`): the general path takes it apart.
            return false;
        }
        self.region.var_stamp[v as usize] = serial;
        self.region.vars.push(v);
        let hubs_live = self.hubs.n_live > 0;
        let System {
            vars,
            elems,
            cnsts,
            region,
            ..
        } = self;
        for &e in vars[v as usize].elems.iter() {
            let c = elems[e as usize].cnst as usize;
            if region.cnst_stamp[c] == serial || (hubs_live && cnsts[c].reg.cut) {
                continue;
            }
            if cnsts[c].sharing == Sharing::FatPipe {
                return false;
            }
            region.cnst_stamp[c] = serial;
            region.cnsts.push(c as u32);
        }
        true
    }

    /// The filling of the region: its variables reset, `K`'s constraints opened with the
    /// boundary's consumption subtracted (boundary variables marked fixed, as the filling's
    /// earlier rounds leave theirs), then the rounds of `general.rs`. `false` (nothing
    /// filled): a boundary variable is in a hub's group; give up.
    fn region_fill(&mut self) -> bool {
        self.region_next_check();
        let System {
            vars,
            elems,
            cnsts,
            region,
            light,
            ..
        } = self;
        let serial = region.serial;
        let check = region.check_serial;
        for &v in &region.vars {
            let var = &mut vars[v as usize];
            var.value = 0.0;
            var.fixed = false;
        }
        light.clear();
        for &c in &region.cnsts {
            let cn = &mut cnsts[c as usize];
            let cap = cn.capacity;
            let mut remaining = cap;
            let mut usage = 0.0f64;
            // The boundary's part of the check's load and top level (the region's is added
            // after the filling, `region_fill_state`).
            let mut load = 0.0f64;
            let mut top = 0.0f64;
            for &e in &cn.elems[..cn.n_active as usize] {
                let el = elems[e as usize];
                let v = el.var as usize;
                let var = &mut vars[v];
                if var.penalty <= 0.0 {
                    continue;
                }
                if region.var_stamp[v] == serial {
                    if el.weight > 0.0 {
                        usage += el.weight / var.penalty;
                    }
                } else {
                    if var.reg.in_group {
                        // A group's values are its share's (`hubs`): give up.
                        return false;
                    }
                    var.fixed = true;
                    if region.var_stamp[v] != serial + 1 {
                        region.var_stamp[v] = serial + 1;
                        region.boundary.push(v as u32);
                    }
                    double_update(
                        &mut remaining,
                        el.weight * var.value,
                        cap * MAXMIN_PRECISION,
                    );
                    if el.weight > 0.0 {
                        load += el.weight * var.value;
                        top = top.max(var.value * var.penalty);
                    }
                }
            }
            region.check_stamp[c as usize] = check;
            region.checked[c as usize] = (load, top, false);
            open_constraint_with(cn, c, usage, remaining, light);
        }
        self.stats.fillings += 1;
        self.fill(true);
        self.region_fill_state();
        true
    }

    /// Adds the region's variables to the load and top level of `K`'s constraints (their
    /// boundary's part is `region_fill`'s) and decides which are saturated.
    fn region_fill_state(&mut self) {
        let System {
            vars,
            elems,
            cnsts,
            region,
            ..
        } = self;
        let serial = region.serial;
        for &v in &region.vars {
            let var = &vars[v as usize];
            for &e in var.elems.iter() {
                let el = &elems[e as usize];
                let c = el.cnst as usize;
                if region.cnst_stamp[c] != serial || el.weight <= 0.0 {
                    continue;
                }
                let st = &mut region.checked[c];
                st.0 += el.weight * var.value;
                st.1 = st.1.max(var.value * var.penalty);
            }
        }
        for &c in &region.cnsts {
            let st = &mut region.checked[c as usize];
            st.2 = st.0 >= cnsts[c as usize].capacity * (1.0 - CERT_TOLERANCE);
        }
    }

    /// A new check pass: constraints' states computed before are stale.
    fn region_next_check(&mut self) {
        let r = &mut self.region;
        r.check_serial = r.check_serial.wrapping_add(1);
        if r.check_serial == 0 {
            r.check_stamp.fill(0);
            r.check_serial = 1;
        }
    }

    /// Load, top level and saturation of constraint `c` (cached for this check pass).
    fn region_cnst_state(&mut self, c: u32) -> (f64, f64, bool) {
        let cu = c as usize;
        if self.region.check_stamp[cu] == self.region.check_serial {
            return self.region.checked[cu];
        }
        let cn = &self.cnsts[cu];
        let mut load = 0.0f64;
        let mut top = 0.0f64;
        for &e in &cn.elems[..cn.n_active as usize] {
            let el = self.elems[e as usize];
            let var = &self.vars[el.var as usize];
            if var.penalty <= 0.0 || el.weight <= 0.0 {
                continue;
            }
            load += el.weight * var.value;
            top = top.max(var.value * var.penalty);
        }
        let cap = cn.capacity;
        let saturated = load >= cap * (1.0 - CERT_TOLERANCE);
        let state = (load, top, saturated);
        self.region.check_stamp[cu] = self.region.check_serial;
        self.region.checked[cu] = state;
        state
    }

    /// Whether variable `v` holds its certificate: at its bound, or on a saturated constraint
    /// (not cut) where its level is the top one; a variable on no constraint that counts
    /// (capacity or weight zero, as the filling skips them) holds one at any value. `None` when
    /// it uses a FATPIPE constraint (the region gives up).
    fn region_certified(&mut self, v: u32) -> Option<bool> {
        let hubs_live = self.hubs.n_live > 0;
        let (value, penalty, bound) = {
            let var = &self.vars[v as usize];
            (var.value, var.penalty, var.bound)
        };
        let at_bound = bound > 0.0 && value >= bound * (1.0 - CERT_TOLERANCE);
        let level = value * penalty;
        // First the constraint the filling (or the last check) found it bottlenecked by.
        let recorded = self.vars[v as usize].bneck;
        if recorded != NONE && recorded != AT_BOUND && !at_bound {
            let cn = &self.cnsts[recorded as usize];
            if cn.sharing == Sharing::Shared && !(hubs_live && cn.reg.cut) {
                let (_, top, saturated) = self.region_cnst_state(recorded);
                if saturated && level >= top * (1.0 - CERT_TOLERANCE) {
                    self.vars[v as usize].bneck_value = value;
                    return Some(true);
                }
            }
        }
        let mut counted = false;
        let mut certified = at_bound;
        let mut bneck = if at_bound { AT_BOUND } else { NONE };
        for j in 0..self.vars[v as usize].elems.len() {
            let el = self.elems[self.vars[v as usize].elems[j] as usize];
            let cn = &self.cnsts[el.cnst as usize];
            if cn.sharing == Sharing::FatPipe {
                return None;
            }
            if certified
                || el.weight <= 0.0
                || (hubs_live && cn.reg.cut)
                || !double_positive(cn.capacity, cn.capacity * MAXMIN_PRECISION)
            {
                continue;
            }
            counted = true;
            let (_, top, saturated) = self.region_cnst_state(el.cnst);
            certified = saturated && level >= top * (1.0 - CERT_TOLERANCE);
            if certified {
                bneck = el.cnst;
            }
        }
        let var = &mut self.vars[v as usize];
        var.bneck = bneck;
        var.bneck_value = value;
        Some(certified || !counted)
    }

    /// The certificate check of a filled region (module doc): lists in `region.grow` the
    /// variables the region must take in. `false`: give up.
    fn region_check(&mut self) -> bool {
        let serial = self.region.serial;
        // Constraints of `K` overloaded (a boundary saturated them, and the region's variables
        // went past): their boundary variables join.
        for i in 0..self.region.cnsts.len() {
            let c = self.region.cnsts[i];
            let (load, _, _) = self.region_cnst_state(c);
            let cap = self.cnsts[c as usize].capacity;
            if load > cap * (1.0 + CERT_TOLERANCE) {
                let cn = &self.cnsts[c as usize];
                for &e in &cn.elems[..cn.n_active as usize] {
                    let v = self.elems[e as usize].var;
                    if self.region.var_stamp[v as usize] == serial + 1 {
                        self.region.grow.push(v);
                    }
                }
            }
        }
        // Boundary variables without a certificate join.
        for i in 0..self.region.boundary.len() {
            let v = self.region.boundary[i];
            if self.region.var_stamp[v as usize] != serial + 1 {
                continue;
            }
            // Its value did not change; a certificate on a constraint outside `K` still holds
            // (no variable there changed).
            let var = &self.vars[v as usize];
            if var.bneck_value.to_bits() == var.value.to_bits()
                && (var.bneck == AT_BOUND
                    || (var.bneck != NONE && self.region.cnst_stamp[var.bneck as usize] != serial))
            {
                continue;
            }
            match self.region_certified(v) {
                None => return false,
                Some(false) => self.region.grow.push(v),
                Some(true) => {}
            }
        }
        // Region variables without one take in the higher boundary variables of their
        // constraints in `K`.
        let mut unexplained = false;
        for i in 0..self.region.vars.len() {
            let v = self.region.vars[i];
            match self.region_certified(v) {
                None => return false,
                Some(true) => continue,
                Some(false) => {}
            }
            let before = self.region.grow.len();
            let Self {
                vars,
                elems,
                cnsts,
                region,
                ..
            } = self;
            let var = &vars[v as usize];
            let level = var.value * var.penalty;
            for &ev in var.elems.iter() {
                let c = elems[ev as usize].cnst as usize;
                if region.cnst_stamp[c] != serial {
                    continue;
                }
                let cn = &cnsts[c];
                for &e in &cn.elems[..cn.n_active as usize] {
                    let u = elems[e as usize].var;
                    let uv = &vars[u as usize];
                    if region.var_stamp[u as usize] == serial + 1
                        && uv.value * uv.penalty > level * (1.0 + CERT_TOLERANCE)
                    {
                        region.grow.push(u);
                    }
                }
            }
            unexplained |= region.grow.len() == before;
        }
        // A region variable whose failure no boundary variable explains, and nothing else to
        // take in: the region cannot do better than this filling.
        if unexplained && self.region.grow.is_empty() {
            return false;
        }
        true
    }
}
