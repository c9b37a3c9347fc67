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
//! through its variables), and it is out of every other hub's certificate (neither unclean nor
//! an offer nor an exception: the system it leaves is the one x solves). After each solve a cut
//! hub whose load has reached the margin is **uncut** (put back) and its component solved again
//! in the same [`System::solve`], B included; so is a cut hub that a variable using no other
//! live constraint joins.
//!
//! # The members move to their next hub
//! B's members would otherwise stay in no group while B is cut: a variable's registered hub is
//! the live hub of smallest index among its constraints (parent module), and cutting B leaves
//! the one of B's members with a positive weight on another hub — typically the link into a
//! collective's root, which every flow of a gather crosses after the backbone — to that hub.
//! So when B is cut its members that use another live hub register again, with the next one,
//! whose certificate (with exceptions) may then hold: their component is solved in the group
//! regime. The others stay B's members (a cut hub is not evaluated, so they are in no group),
//! and so do variables arriving while B is cut with no live hub: a flow between two ordinary
//! hosts does not move twice when a stencil's backbone is cut and put back at every
//! iteration. When B is put back, the variables on it whose registered hub has a larger index
//! than B register with B again. Each move costs O(elements of the variable), as the cut or
//! uncut itself already costs O(variables on B).
//!
//! # The load of a cut hub
//! B's load `Σ w·x` is kept exactly in two parts. A variable in no group has its `w·x`
//! *charged* on its element (when a solve gives it a value, or it registers) and discharged
//! when it leaves or joins a group; the hub keeps the exact sum of the charges. The members of
//! a hub g in the group regime run at `share_g / p`, so their part is `share_g · Σ w/p` over
//! them: each hub's entry on B keeps that sum (updated when a member joins or leaves the
//! group), and a change of g's share lists B for the check (`Hub::cut_neighbours`). The check
//! sums the charges and, per hub on B, `share · Σ w/p`: O(hubs on B), not O(variables on B).
//!
//! # Worked example
//! Backbone B (C = 250, the hub of smallest index), root link D (C = 100), private links P_i
//! (C = 100); hubs from 4 variables (the test `cut_backbone_moves_members_to_the_root_link_and_back`).
//! Flows f1..f4 go P_i → B → D and g goes P5 → B → P6 (w = p = 1). All five register with B,
//! whose filling fails (D and the private links offer less than B's share and take all its
//! members first), so the general path solves: D gives f_i 100/4 = 25, P5 and P6 give g 100.
//! B's load is 4 × 25 + 100 = 200 < 250: B is cut, f1..f4 register with D, whose neighbours
//! P1..P4 offer 100 ≥ 25 (B being out of the certificate): a group of share 25; g, with no
//! other hub, stays B's member, solved by the general path on P5 and P6. B's load is the charge
//! of g (100) plus 25 × Σ w/p of D's members on B (4): 200.
//! f5 (P7 → B → D) arrives: it registers with D, share 100/5 = 20, load 100 + 20 × 5 = 200:
//! no variable is re-solved. g2 (P8 → B → P9) arrives: B's member (no live hub), solved by the
//! general path on P8 and P9 alone (g2 = 100); the load becomes 300 > 250, so B is put back
//! and f1..f5 register with B again; its filling takes D first (f_i = 20, D an exception),
//! then B's level (250 − 100) / 2 = 75 < 100: g and g2 form B's group at 75, the general
//! path's answer.
//!
//! At the 4096-rank allreduce the same happens with B the backbone and D rank 0's link:
//! hundreds of flows of the linear and binomial phases go into rank 0, D binds, the backbone
//! does not. Before the move D had no members (all were B's), and every arrival re-solved D
//! and the senders' links (about 560 constraints) by bottleneck filling.

use super::super::{Sharing, System};
use super::{known_term, ExactSum, NO_HUB};

/// Relative room a cut hub keeps below its capacity (rounding of the loads is ~1e-16).
pub(super) const CUT_MARGIN: f64 = 1e-9;

/// Whether a load leaves the margin free on a constraint of capacity `cap` (`false` for NaN).
fn below_margin(load: f64, cap: f64) -> bool {
    load <= cap * (1.0 - CUT_MARGIN)
}

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
        self.hubs.n_cut -= 1;
        self.cnsts[b as usize].reg.cut = false;
        self.cnst_attach(b);
        // Only listed (active) elements carry a charge: a variable is unregistered, which
        // takes its charges, before its elements leave the constraint's list (so the parked
        // variables of transfer paths, not listed, are not walked).
        for k in 0..self.cnsts[b as usize].n_active as usize {
            let e = self.cnsts[b as usize].elems[k];
            self.elem_charged[e as usize] = 0.0;
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
            let charged = std::mem::take(&mut self.elem_charged[e as usize]);
            self.hubs.list[h as usize].load.add(-charged);
            self.mark_cut_check(h);
        } else if !self.limited_elsewhere(v, c) {
            self.hubs.uncut_pending.push(h);
        } else if !self.vars[v as usize].reg.in_group {
            let charge = self.elems[e as usize].weight * self.vars[v as usize].value;
            let old = std::mem::replace(&mut self.elem_charged[e as usize], charge);
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
        let term = known_term(el.weight, p);
        let reg = &mut self.cnsts[el.cnst as usize].reg;
        let entry = reg
            .hubs
            .iter_mut()
            .find(|entry| entry.hub == g)
            .expect("a member is counted on its constraints");
        if in_group {
            entry.grouped.add(term);
            let charged = std::mem::take(&mut self.elem_charged[e as usize]);
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
        // (Only the elements on cut hubs are charged.)
        let from = if self.hubs.n_cut == 0 {
            self.touched.len()
        } else {
            *charged_upto
        };
        for i in from..self.touched.len() {
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
                let old = std::mem::replace(&mut self.elem_charged[e as usize], charge);
                let h = self.cut_hub(el.cnst);
                self.hubs.list[h as usize].load.add(charge - old);
                self.mark_cut_check(h);
            }
        }
        *charged_upto = self.touched.len();
        // Only a live hub's constraint has `reg.hub` (and no hub, nothing to cut).
        if solved_set && self.hubs.n_live > 0 {
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
            if !below_margin(self.cut_load(h), cap) {
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
        if !below_margin(load.value(), cn.capacity) {
            return;
        }
        for k in 0..self.cnsts[b as usize].n_active as usize {
            let e = self.cnsts[b as usize].elems[k] as usize;
            self.elem_charged[e] =
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
        self.hubs.n_cut += 1;
        self.cnsts[b as usize].reg.cut = true;
        self.cnst_attach(b);
        for i in 0..self.cnsts[b as usize].reg.hubs.len() {
            let g = self.cnsts[b as usize].reg.hubs[i].hub;
            self.hubs.list[g as usize].cut_neighbours.push(b);
        }
        let _moved = self.reregister_on(b, |s, v| {
            s.vars[v as usize].reg.hub == Some(h) && s.choose_hub(v) != Some((b, h))
        });
        #[cfg(test)]
        {
            self.hubs.stats[0] += 1;
            self.hubs.stats[2] += _moved as u64;
        }
    }
}
