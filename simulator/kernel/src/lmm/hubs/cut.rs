//! Cut hubs: a crowded constraint that does not bind leaves its component.
//!
//! # Why
//! A backbone carrying many flows is not always their bottleneck: in a latency-bound collective
//! most of them are limited by their private links (the root's link in a linear gather, a
//! binomial tree's parents), and the backbone has capacity to spare. Every flow still crosses
//! it, so every event re-solved the whole component (the backbone and hundreds of private
//! links, every flow in progress), although the solution is the one of the component without
//! the backbone, which falls apart into small pieces.
//!
//! # The certificate
//! Let x be the solution of the system without constraint B. If x satisfies B with room to
//! spare, `Σ w_vB·x_v ≤ C_B·(1 − CUT_MARGIN)`, then x is also the solution with B: in each
//! round of bottleneck filling with B, B's level `remaining/usage` stays above the round's
//! smallest level ℓ (otherwise B's unfixed variables, which all end at `x ≥ ℓ/p`, would load B
//! beyond its capacity), so B is never taken and every round takes the same constraints, with
//! the same numbers, as without B. The margin covers rounding. Every variable on B must also
//! use another constraint with a positive weight, else nothing would give it a value without B.
//!
//! So when the general path has solved a component containing a hub B loaded below the margin,
//! B is **cut**: the general path no longer enters it (neither from the modified list nor
//! through its variables); each element on B keeps the `w·x` it contributes (*charged* when a
//! solve gives its variable a value, discharged when the variable leaves) and the hub their
//! exact sum, its **load**. After each solve a cut hub whose load has reached the margin is
//! **uncut** and its component solved again in the same [`System::solve`], B included; so is a
//! cut hub that a variable using no other constraint joins. A cut constraint is unclean for
//! the group regime of its neighbours (its load would not follow their share).
//!
//! # Worked example
//! A backbone B (C = 2.25e9 B/s) and 125 MB/s private links; 280 flows into host 0 (weight 1 on
//! its down link D, 0.05 on its up link), 10 other flows between other hosts. D gives the 280
//! flows 1.25e8 / 280.5 ≈ 4.5e5 B/s each, the 10 others get their private links' 1.25e8 / 1.05
//! ≈ 1.19e8 B/s: B's load is 280 × 4.5e5 × 1.05 + 10 × 1.19e8 × 1.05 ≈ 1.38e9 < 2.25e9, so B is
//! cut. A flow ending between hosts 7 and 9 is then re-solved with their four private links
//! alone; the load changes by −1.25e8 and B stays cut.

use super::super::{Sharing, System};
use super::ExactSum;

/// Relative room a cut hub keeps below its capacity (rounding of the loads is ~1e-16).
pub(super) const CUT_MARGIN: f64 = 1e-9;

impl System {
    /// Whether constraint `c` is a hub cut from its component.
    #[inline]
    pub(crate) fn is_cut(&self, c: u32) -> bool {
        self.cnsts[c as usize].reg.cut
    }

    /// The hub of cut constraint `c`.
    fn cut_hub(&self, c: u32) -> u32 {
        self.cnsts[c as usize].reg.hub.expect("a cut constraint is a hub")
    }

    /// Hub `h` is no longer cut (its elements' charges are forgotten).
    pub(super) fn uncut(&mut self, h: u32) {
        if !self.hubs.list[h as usize].cut {
            return;
        }
        let b = self.hubs.list[h as usize].cnst;
        self.cnst_detach(b);
        let hub = &mut self.hubs.list[h as usize];
        hub.cut = false;
        hub.load = ExactSum::default();
        self.cnsts[b as usize].reg.cut = false;
        self.cnst_attach(b);
        for k in 0..self.cnsts[b as usize].elems.len() {
            let e = self.cnsts[b as usize].elems[k];
            self.elems[e as usize].charged = 0.0;
        }
    }

    /// Variable `v` registers (`sign > 0`) or unregisters on the cut constraint of its element
    /// `e`: an unregistering one is discharged; a registering one that uses no other
    /// constraint puts the hub back.
    pub(super) fn cut_registration(&mut self, v: u32, e: u32, sign: i32) {
        let c = self.elems[e as usize].cnst;
        let h = self.cut_hub(c);
        if sign < 0 {
            let charged = std::mem::take(&mut self.elems[e as usize].charged);
            self.hubs.list[h as usize].load.add(-charged);
        } else if !self.limited_elsewhere(v, c) {
            self.uncut(h);
            self.modified.push(c);
        }
    }

    /// Whether variable `v` uses a constraint other than `b`, not cut, with a positive weight
    /// (the general path then gives it a value without `b`).
    fn limited_elsewhere(&self, v: u32, b: u32) -> bool {
        self.vars[v as usize].elems.iter().any(|&e| {
            let el = &self.elems[e as usize];
            el.cnst != b && el.weight > 0.0 && !self.cnsts[el.cnst as usize].reg.cut
        })
    }

    /// After the general path: charges the elements on cut hubs of the variables it gave values
    /// to (the touched variables from `from` on), cuts the hubs of its components that do not
    /// bind (if `solved_set`), and puts back the cut hubs that bind now. Returns `true` if one
    /// was put back: its component must then be solved again.
    pub(crate) fn settle_cuts(&mut self, from: usize, solved_set: bool) -> bool {
        for i in from..self.touched.len() {
            let v = self.touched[i].0 as usize;
            if !self.vars[v].reg.registered {
                continue;
            }
            let value = self.vars[v].value;
            for j in 0..self.vars[v].elems.len() {
                let e = self.vars[v].elems[j];
                let el = self.elems[e as usize];
                if !self.cnsts[el.cnst as usize].reg.cut {
                    continue;
                }
                let charge = el.weight * value;
                self.elems[e as usize].charged = charge;
                let h = self.cut_hub(el.cnst);
                let hub = &mut self.hubs.list[h as usize];
                hub.load.add(charge - el.charged);
                if !hub.check {
                    hub.check = true;
                    self.hubs.cut_check.push(h);
                }
            }
        }
        if solved_set {
            for i in 0..self.set.len() {
                let c = self.set[i];
                if let Some(h) = self.cnsts[c as usize].reg.hub {
                    self.try_cut(h);
                }
            }
        }
        let mut uncut_any = false;
        let mut check = std::mem::take(&mut self.hubs.cut_check);
        for &h in &check {
            let hub = &mut self.hubs.list[h as usize];
            hub.check = false;
            if !hub.cut {
                continue;
            }
            let b = hub.cnst;
            let cap = self.cnsts[b as usize].capacity;
            if !(hub.load.value() <= cap * (1.0 - CUT_MARGIN)) {
                self.uncut(h);
                self.modified.push(b);
                self.hubs.mark_dirty(h);
                uncut_any = true;
            }
        }
        check.clear();
        if self.hubs.cut_check.is_empty() {
            self.hubs.cut_check = check;
        }
        uncut_any
    }

    /// Cuts hub `h` if its constraint is shared, not in the group regime, every active variable
    /// on it uses another constraint, and the values the general path just gave them load it
    /// below the margin.
    fn try_cut(&mut self, h: u32) {
        let hub = &self.hubs.list[h as usize];
        if !hub.alive || hub.fast || hub.cut {
            return;
        }
        let b = hub.cnst;
        let cn = &self.cnsts[b as usize];
        if cn.sharing != Sharing::Shared {
            return;
        }
        let mut load = ExactSum::default();
        for k in 0..cn.n_active as usize {
            let el = &self.elems[cn.elems[k] as usize];
            let var = &self.vars[el.var as usize];
            if !var.reg.registered || !self.limited_elsewhere(el.var, b) {
                return;
            }
            load.add(el.weight * var.value);
        }
        if !(load.value() <= cn.capacity * (1.0 - CUT_MARGIN)) {
            return;
        }
        for k in 0..self.cnsts[b as usize].n_active as usize {
            let e = self.cnsts[b as usize].elems[k] as usize;
            self.elems[e].charged = self.elems[e].weight * self.vars[self.elems[e].var as usize].value;
        }
        self.cnst_detach(b);
        let hub = &mut self.hubs.list[h as usize];
        hub.cut = true;
        hub.load = load;
        self.cnsts[b as usize].reg.cut = true;
        self.cnst_attach(b);
    }
}
