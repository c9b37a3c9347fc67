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
//! slot instead missed the cache 650 k times in a 10-iteration stencil on 4096 ranks), which
//! makes the hubs that incremental registration would have made (each constraint with `on` or
//! more). When the last hub is dropped (and none is cut) the system **sleeps** again: every
//! registration is forgotten, O(registered elements).
//!
//! The general path never reads registrations, so the values are the same either way; a
//! replay without hubs (16 ranks on a ring: at most 16 flows) no longer pays a registration and
//! an unregistration per flow (15 % of its instructions, callgrind).
//!
//! Example (on = 32): 20 flows cross the backbone B: dormant, each arrival costs nothing here.
//! The solve after the 32nd activation sees B in `modified` with 32 active elements: it wakes,
//! registers the 32 flows (B's count reaches 32, B becomes a hub at once), and from then on
//! arrivals and departures register one by one. When B's count falls below `off` its hub is
//! dropped, no hub is left, and the solve ends by forgetting the registrations.

use super::super::{Sharing, System};
use super::CnstReg;

impl System {
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
        if !crowded {
            return;
        }
        self.hubs.dormant = false;
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
        self.hubs.dormant = true;
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
