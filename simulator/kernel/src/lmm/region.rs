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
//! filled again. After [`MAX_ROUNDS`] rounds, or on a FATPIPE constraint (where a bound tied
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
//! The region path runs when the solution memo is off (`memo`: components that come back in
//! the same shape are looked up instead, bit for bit; its windows switch it off where they
//! do not come back, as on the 256-rank fat-tree) and [`System::set_region_filling`] allows
//! it.

use super::{Sharing, System, VarId, NONE};
use crate::precision::{double_positive, double_update, MAXMIN_PRECISION};

/// Rounds of growth after which the region gives up and the component is solved in full.
pub const MAX_ROUNDS: u32 = 8;

/// Relative tolerance of the certificate: a constraint is saturated when its load is within
/// this fraction of its capacity, a variable is at the top level of a constraint when its
/// level is within this fraction of the top, at its bound when within this fraction of it.
pub const CERT_TOLERANCE: f64 = 1e-11;

/// Scratch state of the region path, by variable and by constraint (stamps instead of
/// clearing).
#[derive(Debug)]
pub(super) struct Region {
    /// Off: the general path always fills the whole component.
    pub(super) enabled: bool,
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

impl System {
    /// The region path (module doc): solves the changes in `modified` by re-filling the
    /// variables they reach, or gives up.
    pub(super) fn solve_region(&mut self) -> Outcome {
        if !self.region_start() {
            return Outcome::Off;
        }
        // What `settle_cuts` reads as the solved constraints: none until solved.
        self.set.clear();
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
            if !self.region_take_cnst_vars(c) {
                return Outcome::GaveUp;
            }
        }
        if self.region.vars.is_empty() {
            self.region_finish();
            return Outcome::Solved;
        }
        for round in 0.. {
            if round == MAX_ROUNDS {
                return Outcome::GaveUp;
            }
            if !self.region_fill() || !self.region_check() {
                return Outcome::GaveUp;
            }
            if self.region.grow.is_empty() {
                break;
            }
            let grow = std::mem::take(&mut self.region.grow);
            for &v in &grow {
                if !self.region_add_var(v) {
                    self.region.grow = grow;
                    return Outcome::GaveUp;
                }
            }
            self.region.grow = grow;
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
        let System {
            vars,
            elems,
            cnsts,
            region,
            light,
            ..
        } = self;
        let serial = region.serial;
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
                }
            }
            cn.remaining = remaining;
            cn.usage = usage;
            cn.light_pos = NONE;
            if usage > 0.0 && double_positive(remaining, cap * MAXMIN_PRECISION) {
                cn.light_pos = light.len() as u32;
                light.push(c);
            }
        }
        self.stats.fillings += 1;
        self.fill(true);
        true
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
        let mut counted = false;
        let mut certified = at_bound;
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
        }
        Some(certified || !counted)
    }

    /// The certificate check of a filled region (module doc): lists in `region.grow` the
    /// variables the region must take in. `false`: give up.
    fn region_check(&mut self) -> bool {
        self.region.check_serial = self.region.check_serial.wrapping_add(1);
        if self.region.check_serial == 0 {
            self.region.check_stamp.fill(0);
            self.region.check_serial = 1;
        }
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
