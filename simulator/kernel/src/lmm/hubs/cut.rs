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
use super::{usage_term, ExactSum, NO_HUB};

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
        self.cnsts[c as usize]
            .reg
            .hub
            .expect("a cut constraint is a hub")
    }

    /// Lists cut hub `h` for the load check at the end of the solve.
    fn mark_cut_check(&mut self, h: u32) {
        let hub = &mut self.hubs.list[h as usize];
        if !hub.check {
            hub.check = true;
            self.hubs.cut_check.push(h);
        }
    }

    /// Hub `h`'s share changed: the loads of the cut constraints its members use change too.
    pub(super) fn check_cut_neighbours(&mut self, h: u32) {
        for i in 0..self.hubs.list[h as usize].cut_neighbours.len() {
            let c = self.hubs.list[h as usize].cut_neighbours[i];
            self.mark_cut_check(self.cut_hub(c));
        }
    }

    /// Cut constraint `c` is no longer used by hub `h`'s members.
    pub(super) fn forget_cut_neighbour(&mut self, h: u32, c: u32) {
        let list = &mut self.hubs.list[h as usize].cut_neighbours;
        if let Some(i) = list.iter().position(|&c2| c2 == c) {
            list.swap_remove(i);
        }
    }

    /// The load Σ w·x of cut hub `h`: its charged elements, and the groups' members at their
    /// groups' shares.
    fn cut_load(&self, h: u32) -> f64 {
        let hub = &self.hubs.list[h as usize];
        let mut load = hub.load;
        for e in &self.cnsts[hub.cnst as usize].reg.hubs {
            let g = &self.hubs.list[e.hub as usize];
            if g.fast {
                load.add(g.share * e.grouped.value());
            }
        }
        load.value()
    }

    /// Hub `h` is no longer cut (its elements' charges are forgotten), and the variables on it
    /// that it would have as members move back to it. Not called while a variable is being
    /// registered (see [`System::cut_registration`]).
    pub(super) fn uncut(&mut self, h: u32) {
        if !self.hubs.list[h as usize].cut {
            return;
        }
        let b = self.hubs.list[h as usize].cnst;
        self.cnst_detach(b);
        let hub = &mut self.hubs.list[h as usize];
        hub.cut = false;
        hub.load = ExactSum::default();
        hub.uncut_serial = self.hubs.serial;
        self.cnsts[b as usize].reg.cut = false;
        self.cnst_attach(b);
        for k in 0..self.cnsts[b as usize].elems.len() {
            let e = self.cnsts[b as usize].elems[k];
            self.elems[e as usize].charged = 0.0;
        }
        for i in 0..self.cnsts[b as usize].reg.hubs.len() {
            let entry = &mut self.cnsts[b as usize].reg.hubs[i];
            entry.grouped = ExactSum::default();
            let g = entry.hub;
            self.forget_cut_neighbour(g, b);
        }
        #[cfg(test)]
        {
            self.hubs.stats[1] += 1;
        }
        if self.cnsts[b as usize].reg.hub.is_some() {
            let _moved = self.reregister_on(b, |s, v| {
                s.choose_hub(v).map(|(_, h2)| h2) != s.vars[v as usize].reg.hub
            });
            #[cfg(test)]
            {
                self.hubs.stats[2] += _moved as u64;
            }
        }
    }

    /// Puts back the cut hubs that a variable using no other live constraint joined.
    pub(super) fn process_uncut_pending(&mut self) {
        while let Some(h) = self.hubs.uncut_pending.pop() {
            if self.hubs.list[h as usize].cut {
                let b = self.hubs.list[h as usize].cnst;
                self.uncut(h);
                self.modified.push(b);
                self.hubs.mark_dirty(h);
            }
        }
    }

    /// Variable `v` registers (`sign > 0`) or unregisters on the cut constraint of its element
    /// `e`: an unregistering one is discharged; a registering one is charged its current value,
    /// unless it uses no other constraint: the hub must then be put back (deferred to
    /// [`System::process_uncut_pending`], the registration being under way).
    pub(super) fn cut_registration(&mut self, v: u32, e: u32, sign: i32) {
        let c = self.elems[e as usize].cnst;
        let h = self.cut_hub(c);
        if sign < 0 {
            let charged = std::mem::take(&mut self.elems[e as usize].charged);
            self.hubs.list[h as usize].load.add(-charged);
            self.mark_cut_check(h);
        } else if !self.limited_elsewhere(v, c) {
            self.hubs.uncut_pending.push(h);
        } else if !self.vars[v as usize].reg.in_group {
            let charge = self.elems[e as usize].weight * self.vars[v as usize].value;
            let old = std::mem::replace(&mut self.elems[e as usize].charged, charge);
            self.hubs.list[h as usize].load.add(charge - old);
            self.mark_cut_check(h);
        }
    }

    /// Member `v` (penalty `p`) of hub `g` joins (`in_group`) or leaves `g`'s group, with its
    /// element `e` on a cut constraint: its part of the load moves between the element's charge
    /// and the group's sum there.
    pub(super) fn cut_group_change(&mut self, e: u32, g: u32, p: f64, in_group: bool) {
        let el = self.elems[e as usize];
        let h = self.cut_hub(el.cnst);
        let term = usage_term(el.weight, p).expect("a group member has finite terms");
        let reg = &mut self.cnsts[el.cnst as usize].reg;
        let entry = reg
            .hubs
            .iter_mut()
            .find(|entry| entry.hub == g)
            .expect("a member is counted on its constraints");
        if in_group {
            entry.grouped.add(term);
            let charged = std::mem::take(&mut self.elems[e as usize].charged);
            self.hubs.list[h as usize].load.add(-charged);
        } else {
            entry.grouped.add(-term);
        }
        self.mark_cut_check(h);
    }

    /// Whether variable `v` uses a constraint other than `b`, not cut, with a positive weight
    /// (the general path then gives it a value without `b`).
    fn limited_elsewhere(&self, v: u32, b: u32) -> bool {
        self.vars[v as usize].elems.iter().any(|&e| {
            let el = &self.elems[e as usize];
            el.cnst != b && el.weight > 0.0 && !self.cnsts[el.cnst as usize].reg.cut
        })
    }

    /// After the general path (or the hubs alone): charges the elements on cut hubs of the
    /// variables given values since `charged_upto` in [`System::touched`], cuts the hubs of the
    /// solved components that do not bind (if `solved_set`), and puts back the cut hubs that
    /// bind now. Returns `true` if the solve must go on: a hub was put back (its component must
    /// be solved again) or variables moved to other hubs (to be evaluated).
    pub(crate) fn settle_cuts(&mut self, charged_upto: &mut usize, solved_set: bool) -> bool {
        for i in *charged_upto..self.touched.len() {
            let v = self.touched[i].0 as usize;
            let reg = &self.vars[v].reg;
            if !reg.registered || reg.in_group {
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
                self.hubs.list[h as usize].load.add(charge - el.charged);
                self.mark_cut_check(h);
            }
        }
        *charged_upto = self.touched.len();
        if solved_set {
            for i in 0..self.set.len() {
                let c = self.set[i];
                if let Some(h) = self.cnsts[c as usize].reg.hub {
                    self.try_cut(h);
                }
            }
        }
        let mut check = std::mem::take(&mut self.hubs.cut_check);
        for &h in &check {
            let hub = &mut self.hubs.list[h as usize];
            hub.check = false;
            if !hub.cut {
                continue;
            }
            let b = hub.cnst;
            let cap = self.cnsts[b as usize].capacity;
            if !(self.cut_load(h) <= cap * (1.0 - CUT_MARGIN)) {
                self.uncut(h);
                self.modified.push(b);
                self.hubs.mark_dirty(h);
            }
        }
        check.clear();
        if self.hubs.cut_check.is_empty() {
            self.hubs.cut_check = check;
        }
        !self.modified.is_empty() || self.hubs.has_pending()
    }

    /// Cuts hub `h` if its constraint is shared, not in the group regime, every active variable
    /// on it uses another constraint, and the values the general path just gave them load it
    /// below the margin. Its members then register with their next live hub.
    fn try_cut(&mut self, h: u32) {
        let hub = &self.hubs.list[h as usize];
        if !hub.alive || hub.fast || hub.cut || hub.uncut_serial == self.hubs.serial {
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
            debug_assert!(!var.reg.in_group, "a solved component has no group member");
            load.add(el.weight * var.value);
        }
        if !(load.value() <= cn.capacity * (1.0 - CUT_MARGIN)) {
            return;
        }
        for k in 0..self.cnsts[b as usize].n_active as usize {
            let e = self.cnsts[b as usize].elems[k] as usize;
            self.elems[e].charged =
                self.elems[e].weight * self.vars[self.elems[e].var as usize].value;
        }
        // An exception of a hub leaves its list: a cut constraint is out of every component.
        let owner = self.cnsts[b as usize].reg.exception_of;
        if owner != NO_HUB {
            self.cnsts[b as usize].reg.exception_of = NO_HUB;
            let list = &mut self.hubs.list[owner as usize].exceptions;
            let i = list.iter().position(|&c| c == b);
            list.swap_remove(i.expect("an exception is listed by its hub"));
        }
        self.cnst_detach(b);
        let hub = &mut self.hubs.list[h as usize];
        hub.cut = true;
        hub.load = load;
        self.cnsts[b as usize].reg.cut = true;
        self.cnst_attach(b);
        for i in 0..self.cnsts[b as usize].reg.hubs.len() {
            let g = self.cnsts[b as usize].reg.hubs[i].hub;
            self.hubs.list[g as usize].cut_neighbours.push(b);
        }
        let _moved = self.reregister_on(b, |s, v| s.vars[v as usize].reg.hub == Some(h));
        #[cfg(test)]
        {
            self.hubs.stats[0] += 1;
            self.hubs.stats[2] += _moved as u64;
        }
    }
}
