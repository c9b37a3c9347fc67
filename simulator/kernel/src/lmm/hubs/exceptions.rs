//! A hub's solution when a few of its neighbours offer less than its share: the exceptions.
//!
//! # Why
//! The certificate of the parent module asks every neighbour c of hub B to offer at least B's
//! share, `C_c / Σ w/p ≥ m`. In a collective on a cluster one private link often carries
//! several of the backbone's flows at once (a binomial tree's parent receiving from its
//! children): that link offers less than the backbone's share, the certificate fails, and the
//! whole component (the backbone, hundreds of private links, every flow in progress) went back
//! to bottleneck filling at every event. At 4,096-rank allreduce 49,000 of 98,000 large solves
//! were such refusals, 41,000 of them caused by a single link.
//!
//! # The filling
//! The hub keeps a short list E of **exceptions**: neighbours that may offer less than the
//! share. Its solution is bottleneck filling restricted to E ∪ {B}: each round the constraint of
//! smallest level `remaining / usage` among them is taken; if it is B the filling stops, and
//! every member not yet fixed gets `m' / p` with m' B's level then (the group's share); else the
//! constraint's unfixed members are fixed at `level / p` (they leave the group and get values of
//! their own, [`System::value`]) and charged to the constraints of E ∪ {B} they use. Usages
//! start from the exact sums of the parent module; remaining and usage are updated as SimGrid's
//! `maxmin.cpp` does (`double_update` with `maxmin/precision`).
//!
//! This is the general path's filling, provided no other neighbour would have been taken before
//! B: every constraint c outside E must have a level of at least m' when B is taken. A member
//! fixed at a level ℓ ≤ m' raises the level of every other constraint it uses whose level is at
//! least ℓ, so c's offer with all members unfixed is a lower bound of its level at that time,
//! and it suffices that the offer floor of the neighbours outside E is at least m'. When it is
//! not, the neighbours outside E are scanned: those offering less than m' join E and the
//! filling starts again (E only grows, so this ends; past [`MAX_EXCEPTIONS`] the hub leaves the
//! group regime). After a success, exceptions offering at least m' go back to the floor.
//! No member's bound may bind: every member's `b·p` must be at least m' (the bound floor).
//!
//! # Worked example
//! Backbone B (C = 1000) carries 10 members of penalty 1, one of them also alone on link L
//! (C = 50), the others on private links of capacity 1000. B's offer is 1000 / 10 = 100, L's is
//! 50: L is an exception. Filling: L's level 50 < B's 100, so its member gets 50 and is charged
//! to B, whose level becomes (1000 − 50) / 9 = 105.6; B is now the smallest: the 9 other
//! members get 105.6 each (the share), and the private links offer 1000 ≥ 105.6. When a flow
//! arrives on another private link only its registration is counted; L's member keeps its own
//! value until L offers at least the share again.

use super::{System, VarId, NO_HUB};
use crate::precision::{double_positive, double_update, MAXMIN_PRECISION};

/// At most this many exceptions per hub; beyond, the hub's component is solved by the general
/// path (the filling then costs about as much as the general solve).
pub(super) const MAX_EXCEPTIONS: usize = 64;

impl System {
    /// The share of hub `h` and, in `self.hubs.fixes`, the members fixed below it, if the hub's
    /// region is clean and no other neighbour or bound binds first (module doc); else `None`.
    pub(super) fn hub_solution(&mut self, h: u32) -> Option<f64> {
        let hub = &self.hubs.list[h as usize];
        let cn = &self.cnsts[hub.cnst as usize];
        if hub.unclean != 0 || !self.is_clean(hub.cnst) || cn.reg.hubs[0].hub != h {
            return None;
        }
        let usage = cn.reg.usage.value();
        let cap = cn.capacity;
        if usage.is_nan() || usage <= 0.0 || !double_positive(cap, cap * MAXMIN_PRECISION) {
            return None;
        }
        loop {
            let m = self.fill_exceptions(h)?;
            if !(m.is_finite() && m > 0.0 && self.bounds_allow(h, m)) {
                return None;
            }
            if self.hubs.list[h as usize].offer_floor >= m {
                self.prune_exceptions(h, m);
                return Some(m);
            }
            // Rescan the neighbours outside E: the exact floor, and the new exceptions.
            let mut floor = f64::INFINITY;
            let mut added = false;
            for i in 0..self.hubs.list[h as usize].neighbours.len() {
                let c = self.hubs.list[h as usize].neighbours[i];
                if self.cnsts[c as usize].reg.exception_of == h || self.cnsts[c as usize].reg.cut {
                    continue;
                }
                let offer = self.offer(c);
                if offer < m {
                    if self.hubs.list[h as usize].exceptions.len() >= MAX_EXCEPTIONS {
                        return None;
                    }
                    self.cnsts[c as usize].reg.exception_of = h;
                    self.hubs.list[h as usize].exceptions.push(c);
                    added = true;
                } else {
                    floor = floor.min(offer);
                }
            }
            self.hubs.list[h as usize].offer_floor = floor;
            if !added {
                self.prune_exceptions(h, m);
                return Some(m);
            }
        }
    }

    /// Whether every bounded member of hub `h` has `b·p ≥ m` (the bound floor, recomputed from
    /// the members when it is below `m`: a departed member may have held it).
    fn bounds_allow(&mut self, h: u32, m: f64) -> bool {
        if self.hubs.list[h as usize].bound_floor >= m {
            return true;
        }
        let mut floor = f64::INFINITY;
        for &e in self.active_elems(self.hubs.list[h as usize].cnst) {
            let reg = &self.vars[self.elems[e as usize].var as usize].reg;
            if reg.registered && reg.hub == Some(h) {
                floor = floor.min(reg.bp);
            }
        }
        self.hubs.list[h as usize].bound_floor = floor;
        floor >= m
    }

    /// Exceptions of hub `h` that offer at least the share `m` go back to the offer floor.
    fn prune_exceptions(&mut self, h: u32, m: f64) {
        let mut i = 0;
        while i < self.hubs.list[h as usize].exceptions.len() {
            let c = self.hubs.list[h as usize].exceptions[i];
            let offer = self.offer(c);
            if offer >= m {
                self.cnsts[c as usize].reg.exception_of = NO_HUB;
                let hub = &mut self.hubs.list[h as usize];
                hub.exceptions.swap_remove(i);
                hub.offer_floor = hub.offer_floor.min(offer);
            } else {
                i += 1;
            }
        }
    }

    /// Bottleneck filling over hub `h`'s exceptions and the hub (module doc): returns the hub's
    /// level when it is taken, the members fixed before in `self.hubs.fixes`; `None` if the
    /// hub's constraint runs out first (a degenerate system: the general path decides).
    fn fill_exceptions(&mut self, h: u32) -> Option<f64> {
        let epoch = self.next_epoch();
        let mut work = std::mem::take(&mut self.hubs.work);
        self.hubs.fixes.clear();
        work.clear();
        let b = self.hubs.list[h as usize].cnst;
        for i in 0..=self.hubs.list[h as usize].exceptions.len() {
            let c = if i == 0 {
                b
            } else {
                self.hubs.list[h as usize].exceptions[i - 1]
            };
            self.cnst_mark[c as usize] = epoch;
            let cn = &mut self.cnsts[c as usize];
            cn.reg.slot = i as u32;
            work.push((c, cn.capacity, cn.reg.usage.value()));
        }
        let result = loop {
            // The live constraint of smallest level; the hub (first) wins ties.
            let mut best: Option<(usize, f64)> = None;
            for (i, &(c, remaining, usage)) in work.iter().enumerate() {
                let cap = self.cnsts[c as usize].capacity;
                if !double_positive(usage, MAXMIN_PRECISION)
                    || !double_positive(remaining, cap * MAXMIN_PRECISION)
                {
                    continue;
                }
                let level = remaining / usage;
                if best.is_none_or(|(_, l)| level < l) {
                    best = Some((i, level));
                }
            }
            match best {
                None => break None,
                Some((0, level)) => break Some(level),
                Some((i, level)) => {
                    let c = work[i].0;
                    work[i].2 = 0.0;
                    for k in 0..self.cnsts[c as usize].n_active as usize {
                        let el = self.elems[self.cnsts[c as usize].elems[k] as usize];
                        let v = el.var as usize;
                        if el.weight <= 0.0 || self.vars[v].mark == epoch {
                            continue;
                        }
                        debug_assert_eq!(self.vars[v].reg.hub, Some(h), "a clean region");
                        self.vars[v].mark = epoch;
                        let p = self.vars[v].reg.penalty;
                        let x = level / p;
                        self.hubs.fixes.push((el.var, x));
                        for j in 0..self.vars[v].elems.len() {
                            let e2 = self.elems[self.vars[v].elems[j] as usize];
                            if self.cnst_mark[e2.cnst as usize] != epoch {
                                continue;
                            }
                            let cn = &self.cnsts[e2.cnst as usize];
                            let cap = cn.capacity;
                            let w = &mut work[cn.reg.slot as usize];
                            double_update(&mut w.1, e2.weight * x, cap * MAXMIN_PRECISION);
                            double_update(&mut w.2, e2.weight / p, MAXMIN_PRECISION);
                        }
                    }
                }
            }
        };
        self.hubs.work = work;
        result
    }

    /// Applies hub `h`'s solution of share `m` (fast regime): the members fixed by the filling
    /// get their values and leave the group (listed in [`System::touched`], and in
    /// [`System::group_left`] if they were in it); the previous exceptions not fixed any more
    /// join it.
    pub(super) fn apply_hub_solution(&mut self, h: u32) {
        let previous = std::mem::take(&mut self.hubs.list[h as usize].excepted_vars);
        for &v in &previous {
            self.unexcept(h, v);
        }
        let mut now = Vec::with_capacity(self.hubs.fixes.len());
        for i in 0..self.hubs.fixes.len() {
            let (v, x) = self.hubs.fixes[i];
            self.vars[v as usize].value = x;
            self.vars[v as usize].bneck = super::super::NONE;
            if self.set_in_group(v, false) {
                self.hubs.left.push(VarId(v));
            }
            self.vars[v as usize].reg.excepted = true;
            self.touched.push(VarId(v));
            now.push(v);
        }
        for &v in &previous {
            let reg = &self.vars[v as usize].reg;
            if reg.registered && reg.hub == Some(h) && !reg.excepted && !reg.in_group {
                self.set_in_group(v, true);
                self.hubs.joined.push(VarId(v));
            }
        }
        let changed = !previous.is_empty() || !now.is_empty();
        self.hubs.list[h as usize].excepted_vars = now;
        if changed {
            self.hubs.mark_changed(h);
        }
    }

    /// Hub `h` leaves the group regime: its exceptions' members lose their mark (the general
    /// path gives them their values).
    pub(super) fn clear_hub_solution(&mut self, h: u32) {
        for v in std::mem::take(&mut self.hubs.list[h as usize].excepted_vars) {
            self.unexcept(h, v);
        }
    }

    /// Variable `v`, listed among hub `h`'s excepted variables, is no longer excepted by `h`.
    /// The list may be stale: `v` may have moved to another hub since (a hub cut or put back),
    /// which may have excepted it in the same solve: its mark is then that hub's.
    fn unexcept(&mut self, h: u32, v: u32) {
        let reg = &mut self.vars[v as usize].reg;
        if reg.registered && reg.hub == Some(h) {
            reg.excepted = false;
        }
    }
}
