//! Registration: each active variable counted on its constraints, for hub creation and for the
//! certificate (parent module).
//!
//! A variable registers when it becomes active (or changes penalty, bound or elements) and
//! unregisters before: [`System::register`] chooses its hub (the live hub of smallest constraint
//! index among its constraints, `choose_hub`) and [`System::apply_registration`] adds it to every
//! constraint it uses: the count of active variables (a count crossing `hub_on`/`hub_off` makes
//! or drops a hub), the per-hub member counts, and on a tracked constraint (a hub or a hub's
//! neighbour) Σ w/p as an exact sum, the clean/unclean state and the hub's offer floor. Each is
//! O(1) per element, so a flow's arrival or departure costs O(its elements). Making or dropping
//! a hub re-registers the variables on it (`make_hub`, `drop_hub`).
//!
//! Example: a flow with weight 1 on up_3, B, down_7 and 0.05 on up_7, B (merged: 1.05), down_3,
//! where B is a hub: it registers with B (the only hub), B's member count and Σ w/p grow by
//! 1.05/p, and on up_3, down_7, up_7, down_3 (B's neighbours) the hub entry's member count grows
//! by one and Σ w/p by w/p; each of those lowers B's offer floor to its new offer C/Σ, so the
//! next evaluation of B knows whether some neighbour may now offer less than B's share.

use smallvec::SmallVec;

use super::{known_term, usage_term, ExactSum, Hub, HubEntry, NO_HUB};
use crate::lmm::{Sharing, System, VarId};

/// The entry of hub `h` (`hub`) on constraint `c` for its first member there: `c` joins the
/// hub's neighbours unless it is the hub's own constraint.
fn first_member_entry(hub: &mut Hub, h: u32, c: u32) -> HubEntry {
    let pos = if hub.cnst == c {
        u32::MAX
    } else {
        hub.neighbours.push(c);
        hub.neighbours.len() as u32 - 1
    };
    HubEntry {
        hub: h,
        members: 1,
        pos,
        grouped: ExactSum::default(),
    }
}

/// [`System::choose_hub`]'s pass over a variable's elements: the live hub of smallest
/// constraint index met so far, and the cut one, as (constraint, hub).
#[derive(Default)]
struct HubChoice {
    live: Option<(u32, u32)>,
    cut: Option<(u32, u32)>,
}

impl HubChoice {
    /// An element of weight `weight` on constraint `c` (bookkeeping `reg`).
    #[inline]
    fn consider(&mut self, c: u32, weight: f64, reg: &super::CnstReg) {
        if let Some(h) = reg.hub {
            let best = if reg.cut {
                &mut self.cut
            } else {
                &mut self.live
            };
            if weight > 0.0 && best.is_none_or(|(b, _)| c < b) {
                *best = Some((c, h));
            }
        }
    }

    /// The live hub, else the cut one.
    fn hub(self) -> Option<(u32, u32)> {
        self.live.or(self.cut)
    }
}

impl System {
    pub(in crate::lmm) fn want_registration(&mut self, v: u32) {
        if self.hubs.dormant {
            return;
        }
        let reg = &mut self.vars[v as usize].reg;
        if !reg.pending {
            reg.pending = true;
            self.hubs.pending.push(v);
        }
    }

    pub(super) fn count_changed(&mut self, c: u32) {
        let (on, off) = (self.hubs.on, self.hubs.off);
        note_count(
            &mut self.cnsts[c as usize].reg,
            c,
            on,
            off,
            &mut self.hubs.count_dirty,
        );
    }

    pub(super) fn is_clean(&self, c: u32) -> bool {
        let cn = &self.cnsts[c as usize];
        cn.sharing == Sharing::Shared
            && cn.reg.n_unhubbed == 0
            && cn.reg.hubs.len() == 1
            && !cn.reg.cut
    }

    /// Takes `c` out of its hubs' unclean counts before a change. (The hubs are marked dirty by
    /// [`System::cnst_attach`], or by [`System::unregister`] for the one that leaves `c`.) A cut
    /// constraint counts for no hub: it is out of their components (`cut`).
    pub(super) fn cnst_detach(&mut self, c: u32) {
        if self.is_clean(c) || self.cnsts[c as usize].reg.cut {
            return;
        }
        for e in &self.cnsts[c as usize].reg.hubs {
            self.hubs.list[e.hub as usize].unclean -= 1;
        }
    }

    /// Puts `c` back into its hubs' unclean counts after a change, and lowers their offer
    /// floors to its offer.
    pub(super) fn cnst_attach(&mut self, c: u32) {
        let cut = self.cnsts[c as usize].reg.cut;
        let clean = cut || self.is_clean(c);
        let offer = if cut { f64::INFINITY } else { self.offer(c) };
        let exception_of = self.cnsts[c as usize].reg.exception_of;
        for e in &self.cnsts[c as usize].reg.hubs {
            let h = e.hub;
            let hub = &mut self.hubs.list[h as usize];
            if !clean {
                hub.unclean += 1;
            }
            if hub.cnst != c && exception_of != h {
                hub.offer_floor = hub.offer_floor.min(offer);
            }
            self.hubs.mark_dirty(h);
        }
        self.count_changed(c);
    }

    /// C_c / Σ w/p of a tracked constraint (+∞ for a FATPIPE one or a zero usage: such a
    /// constraint is unclean or never saturates first).
    pub(super) fn offer(&self, c: u32) -> f64 {
        offer_of(&self.cnsts[c as usize])
    }

    /// Adds (`sign = 1`) or removes (`-1`) variable `v`'s registration on each of its
    /// constraints.
    pub(super) fn apply_registration(&mut self, v: u32, sign: i32) {
        let (hub, fx, p) = {
            let r = &self.vars[v as usize].reg;
            (r.hub, r.fx, r.penalty)
        };
        // The element ids, copied out once: the loop changes constraints and hubs, never the
        // variable's own list (a flow has 5 or 6; re-reading the list through `self` at each
        // element cost more than the copy).
        let ids: SmallVec<[u32; 8]> = SmallVec::from_slice(&self.vars[v as usize].elems);
        let mut next = 0;
        while next < ids.len() {
            if let (Some(h), true) = (hub, fx) {
                next += self.members_on_clean(h, &ids[next..], p, sign);
                if next == ids.len() {
                    break;
                }
            }
            let e = ids[next];
            next += 1;
            let el = self.elems[e as usize];
            let c = el.cnst;
            let cut = self.cnsts[c as usize].reg.cut;
            if cut {
                self.cut_registration(v, e, sign);
            }
            let reg = &mut self.cnsts[c as usize].reg;
            let tracked = reg.tracked();
            if !tracked && hub.is_none() {
                // Neither a hub nor next to one: only the counts matter (hub creation).
                if sign > 0 {
                    reg.n_active += 1;
                    reg.n_unhubbed += 1;
                } else {
                    reg.n_active -= 1;
                    reg.n_unhubbed -= 1;
                }
                self.count_changed(c);
                continue;
            }
            // A cut constraint is out of every hub's certificate (`cut`): a change there
            // changes no hub's unclean count, offer floor or evaluation, only the counts.
            if !cut {
                self.cnst_detach(c);
            }
            let cn = &mut self.cnsts[c as usize];
            let shared = cn.sharing == Sharing::Shared;
            let reg = &mut cn.reg;
            if sign > 0 {
                reg.n_active += 1;
            } else {
                reg.n_active -= 1;
            }
            match hub {
                None if sign > 0 => reg.n_unhubbed += 1,
                None => reg.n_unhubbed -= 1,
                Some(h) => match reg.hubs.iter().position(|e| e.hub == h) {
                    Some(i) if sign > 0 => reg.hubs[i].members += 1,
                    Some(i) => {
                        reg.hubs[i].members -= 1;
                        if reg.hubs[i].members == 0 {
                            let pos = reg.hubs[i].pos;
                            reg.hubs.swap_remove(i);
                            if reg.cut {
                                self.forget_cut_neighbour(h, c);
                            }
                            if pos != u32::MAX {
                                self.remove_neighbour(h, pos);
                            }
                        }
                    }
                    None => {
                        debug_assert!(sign > 0, "unregistering a hub member never seen here");
                        reg.hubs
                            .push(first_member_entry(&mut self.hubs.list[h as usize], h, c));
                        if reg.cut {
                            self.hubs.list[h as usize].cut_neighbours.push(c);
                        }
                    }
                },
            }
            let reg = &mut self.cnsts[c as usize].reg;
            if !reg.tracked() || reg.n_active == 0 {
                reg.usage = ExactSum::default();
            } else if !tracked {
                // Becomes tracked: its usage was not kept up to date, sum it afresh.
                self.recompute_usage(c);
            } else if fx && shared {
                let t = known_term(el.weight, p);
                reg.usage.add(if sign > 0 { t } else { -t });
            }
            if cut {
                self.count_changed(c);
            } else {
                self.cnst_attach(c);
            }
        }
    }

    /// The common cases of [`System::apply_registration`] for the leading elements `ids` of a
    /// member of hub `h` (with finite terms), each in one pass over its constraint `c`: an
    /// uncut SHARED constraint that carries no variable outside a hub and no other hub's
    /// member, where the member (a) arrives on a constraint with no registered variable (the
    /// constraint becomes a clean neighbour of `h`), (b) arrives or leaves among other members
    /// of `h` (it stays clean), or (c) leaves as the last one (nothing registered is left).
    /// Each is the general case's count, member, neighbour and usage updates, offer floor
    /// (lowered by arrivals only), dirty mark and count check, without the unclean
    /// bookkeeping that cannot change (same values; `recompute_usage` of a constraint whose
    /// only registered variable is this one is its one term). Returns how many leading
    /// elements it took, stopping (with nothing changed for it) at the first in any other
    /// case. The system's fields are borrowed apart, so that the loop keeps the arenas in
    /// registers across its writes.
    #[inline]
    fn members_on_clean(&mut self, h: u32, ids: &[u32], p: f64, sign: i32) -> usize {
        let System {
            elems, cnsts, hubs, ..
        } = self;
        let (elems, cnsts) = (&elems[..], &mut cnsts[..]);
        let (on, off) = (hubs.on, hubs.off);
        let super::Hubs {
            list,
            dirty,
            count_dirty,
            ..
        } = hubs;
        for (taken, &e) in ids.iter().enumerate() {
            let el = &elems[e as usize];
            let c = el.cnst;
            let cn = &mut cnsts[c as usize];
            let reg = &mut cn.reg;
            if cn.sharing != Sharing::Shared || reg.cut || reg.n_unhubbed != 0 {
                return taken;
            }
            let t = known_term(el.weight, p);
            let hub = &mut list[h as usize];
            match (reg.hubs.len(), sign > 0) {
                // (a) the first registered variable: `h`'s new clean neighbour (or its own hub).
                (0, true) if reg.n_active == 0 && reg.hub.is_none_or(|own| own == h) => {
                    reg.n_active = 1;
                    reg.hubs.push(first_member_entry(hub, h, c));
                    reg.usage = ExactSum::default();
                    reg.usage.add(t);
                }
                (1, _) if reg.hubs[0].hub == h => {
                    if sign > 0 {
                        reg.n_active += 1;
                        reg.hubs[0].members += 1;
                        reg.usage.add(t);
                    } else if reg.hubs[0].members > 1 {
                        reg.n_active -= 1;
                        reg.hubs[0].members -= 1;
                        reg.usage.add(-t);
                    } else {
                        // (c) the last one leaves: no offer, no hub entry.
                        let pos = reg.hubs[0].pos;
                        reg.n_active -= 1;
                        reg.hubs.clear();
                        if !reg.tracked() || reg.n_active == 0 {
                            reg.usage = ExactSum::default();
                        } else {
                            reg.usage.add(-t);
                        }
                        if pos != u32::MAX {
                            remove_neighbour_of(hub, cnsts, h, pos);
                        }
                        note_count(&mut cnsts[c as usize].reg, c, on, off, count_dirty);
                        continue;
                    }
                }
                _ => return taken,
            }
            // An arrival lowers the offer C/Σ: the hub's offer floor follows. A departure
            // raises it, and the floor, a lower bound of the offers, stays one.
            // (`offer_of` without its SHARED test, which this case has passed.)
            if sign > 0 && hub.cnst != c && cn.reg.exception_of != h {
                let usage = cn.reg.usage.value();
                let offer = if usage > 0.0 {
                    cn.capacity / usage
                } else {
                    f64::INFINITY
                };
                hub.offer_floor = hub.offer_floor.min(offer);
            }
            hub.mark_dirty(h, dirty);
            note_count(&mut cn.reg, c, on, off, count_dirty);
        }
        ids.len()
    }

    /// Σ w/p over the registered variables of `c` with finite terms, from scratch.
    pub(super) fn recompute_usage(&mut self, c: u32) {
        let mut sum = ExactSum::default();
        if self.cnsts[c as usize].sharing == Sharing::Shared {
            for &e in self.active_elems(c) {
                let el = &self.elems[e as usize];
                let reg = &self.vars[el.var as usize].reg;
                if reg.registered && reg.fx {
                    sum.add(known_term(el.weight, reg.penalty));
                }
            }
        }
        self.cnsts[c as usize].reg.usage = sum;
    }

    /// Takes the neighbour at `pos` out of hub `h`'s list; the last one takes its place.
    pub(super) fn remove_neighbour(&mut self, h: u32, pos: u32) {
        remove_neighbour_of(&mut self.hubs.list[h as usize], &mut self.cnsts, h, pos);
    }

    /// The hub variable `v` would register with, as (constraint, hub): the live (not cut) hub
    /// of smallest constraint index among the constraints it uses with a positive weight, else
    /// the cut one of smallest index (a cut hub is not evaluated: its members are in no group,
    /// but need not move when it is put back).
    pub(super) fn choose_hub(&self, v: u32) -> Option<(u32, u32)> {
        let mut choice = HubChoice::default();
        for &e in &self.vars[v as usize].elems {
            let el = &self.elems[e as usize];
            choice.consider(el.cnst, el.weight, &self.cnsts[el.cnst as usize].reg);
        }
        choice.hub()
    }

    /// Registers active variable `v`: chooses its hub and counts it on its constraints.
    pub(super) fn register(&mut self, v: u32) {
        let var = &self.vars[v as usize];
        let p = var.penalty;
        if !var.alive || p <= 0.0 || var.reg.registered {
            return;
        }
        // The hub (`choose_hub`) and whether every SHARED term w/p is finite, in one pass over
        // the elements. Only a hub's members count in usages: a variable of no hub makes every
        // tracked constraint it uses unclean, so their offers do not matter while it is there.
        let mut choice = HubChoice::default();
        let mut finite = true;
        for &e in &var.elems {
            let el = &self.elems[e as usize];
            let cn = &self.cnsts[el.cnst as usize];
            choice.consider(el.cnst, el.weight, &cn.reg);
            finite &= cn.sharing != Sharing::Shared || usage_term(el.weight, p).is_some();
        }
        let hub = choice.hub();
        let fx = hub.is_some() && finite;
        let hub = if fx { hub.map(|(_, h)| h) } else { None };
        let bp = if var.bound > 0.0 && hub.is_some() {
            var.bound * p
        } else {
            f64::INFINITY
        };
        self.stats.registrations += 1;
        let reg = &mut self.vars[v as usize].reg;
        reg.registered = true;
        reg.fx = fx;
        reg.hub = hub;
        reg.penalty = p;
        reg.bp = bp;
        reg.in_group = false;
        reg.excepted = false;
        self.apply_registration(v, 1);
        if let Some(h) = hub {
            let hub = &mut self.hubs.list[h as usize];
            hub.bound_floor = hub.bound_floor.min(bp);
            self.hubs.mark_dirty(h);
            self.hubs.new_members.push(v);
        }
    }

    /// Registers the registered variables of constraint `c` for which `moves` holds again (a
    /// hub was cut or put back: their hub changes, `cut`). Returns how many moved.
    pub(super) fn reregister_on(&mut self, c: u32, moves: impl Fn(&Self, u32) -> bool) -> usize {
        let vars: Vec<u32> = self
            .registered_on(c)
            .into_iter()
            .filter(|&v| moves(self, v))
            .collect();
        for &v in &vars {
            self.unregister(v, false);
        }
        for &v in &vars {
            self.register(v);
        }
        vars.len()
    }

    /// Puts variable `v` in its hub's group (`true`) or takes it out, keeping the group sums of
    /// the cut constraints it uses (`cut`). Returns whether it changed.
    pub(super) fn set_in_group(&mut self, v: u32, in_group: bool) -> bool {
        let var = &mut self.vars[v as usize];
        // A group's values are its share's: the variable's bottleneck is not known any more.
        var.bneck = super::super::NONE;
        let reg = &mut var.reg;
        if reg.in_group == in_group {
            return false;
        }
        reg.in_group = in_group;
        if in_group {
            self.hubs.n_grouped += 1;
        } else {
            self.hubs.n_grouped -= 1;
        }
        if self.hubs.n_cut == 0 {
            return true;
        }
        let (h, p) = (reg.hub.expect("a group member has a hub"), reg.penalty);
        for j in 0..self.vars[v as usize].elems.len() {
            let e = self.vars[v as usize].elems[j];
            if self.cnsts[self.elems[e as usize].cnst as usize].reg.cut {
                self.cut_group_change(e, h, p, in_group);
            }
        }
        true
    }

    /// Undoes [`System::register`]. A member of a group leaves it, listed in
    /// [`System::group_left`] unless the variable is being `removed`.
    #[inline]
    pub(in crate::lmm) fn unregister(&mut self, v: u32, removed: bool) {
        if self.vars[v as usize].reg.registered {
            self.unregister_registered(v, removed);
        }
    }

    fn unregister_registered(&mut self, v: u32, removed: bool) {
        let reg = &mut self.vars[v as usize].reg;
        reg.registered = false;
        reg.excepted = false;
        let hub = reg.hub;
        if self.set_in_group(v, false) && !removed {
            self.hubs.left.push(VarId(v));
        }
        if let Some(h) = hub {
            self.hubs.mark_dirty(h);
            if self.hubs.list[h as usize].fast {
                self.hubs.mark_changed(h);
            }
        }
        self.apply_registration(v, -1);
    }

    /// The registered variables using constraint `c`, in element order.
    pub(super) fn registered_on(&self, c: u32) -> Vec<u32> {
        self.active_elems(c)
            .iter()
            .map(|&e| self.elems[e as usize].var)
            .filter(|&v| self.vars[v as usize].reg.registered)
            .collect()
    }

    pub(super) fn make_hub(&mut self, c: u32) {
        let h = match self.hubs.free.pop() {
            Some(h) => h,
            None => {
                self.hubs.list.push(Hub::default());
                self.hubs.list.len() as u32 - 1
            }
        };
        self.hubs.list[h as usize] = Hub {
            cnst: c,
            alive: true,
            ..Hub::default()
        };
        self.hubs.n_live += 1;
        let vars = self.registered_on(c);
        for &v in &vars {
            self.unregister(v, false);
        }
        self.cnsts[c as usize].reg.hub = Some(h);
        for &v in &vars {
            self.register(v);
        }
        self.hubs.mark_dirty(h);
    }

    pub(super) fn drop_hub(&mut self, c: u32) {
        let Some(h) = self.cnsts[c as usize].reg.hub else {
            return;
        };
        let vars = self.registered_on(c);
        for &v in &vars {
            self.unregister(v, false);
        }
        self.cnsts[c as usize].reg.hub = None;
        let hub = &mut self.hubs.list[h as usize];
        debug_assert!(hub.neighbours.is_empty() && hub.exceptions.is_empty() && hub.unclean == 0);
        hub.excepted_vars.clear();
        hub.alive = false;
        hub.fast = false;
        self.hubs.n_live -= 1;
        self.uncut(h);
        self.hubs.free.push(h);
        for &v in &vars {
            self.register(v);
        }
        self.modified.push(c);
    }
}

/// C_c / Σ w/p of a tracked constraint `cn` (+∞ for a FATPIPE one or a zero usage: such a
/// constraint is unclean or never saturates first).
#[inline]
fn offer_of(cn: &crate::lmm::Cnst) -> f64 {
    let usage = cn.reg.usage.value();
    if cn.sharing == Sharing::Shared && usage > 0.0 {
        cn.capacity / usage
    } else {
        f64::INFINITY
    }
}

/// Lists constraint `c` (bookkeeping `reg`) in `count_dirty` when its count of active
/// variables crossed the hub thresholds `on` (no hub yet) or `off` (a hub), or hubs are
/// disabled (`on` = `u32::MAX`).
#[inline]
fn note_count(reg: &mut super::CnstReg, c: u32, on: u32, off: u32, count_dirty: &mut Vec<u32>) {
    let crossing = match reg.hub {
        None => reg.n_active >= on,
        Some(_) => reg.n_active < off || on == u32::MAX,
    };
    if crossing && !reg.count_dirty {
        reg.count_dirty = true;
        count_dirty.push(c);
    }
}

/// Takes the neighbour at `pos` out of hub `h`'s (`hub`) list; the last one takes its place
/// (its entry for `h` in `cnsts` learns its new position), and a neighbour that was one of the
/// hub's exceptions leaves them.
fn remove_neighbour_of(hub: &mut Hub, cnsts: &mut [crate::lmm::Cnst], h: u32, pos: u32) {
    let gone = hub.neighbours[pos as usize];
    if cnsts[gone as usize].reg.exception_of == h {
        cnsts[gone as usize].reg.exception_of = NO_HUB;
        let i = hub.exceptions.iter().position(|&c| c == gone);
        hub.exceptions
            .swap_remove(i.expect("an exception is listed by its hub"));
    }
    let list = &mut hub.neighbours;
    list.swap_remove(pos as usize);
    if let Some(&moved) = list.get(pos as usize) {
        for e in cnsts[moved as usize].reg.hubs.iter_mut() {
            if e.hub == h {
                e.pos = pos;
            }
        }
    }
}
