//! The general path of [`System::solve`](super::System::solve): the component of the modified
//! constraints is collected (its memo key written on the way, `memo`), then looked up or solved
//! by bottleneck filling (SimGrid 3.32 `src/kernel/lmm/maxmin.cpp`; the parent module's doc
//! gives the algorithm and its worked example).

use super::region::{Outcome, AT_BOUND};
use super::{memo, Cnst, Sharing, System, VarId, NONE};
use crate::precision::{double_positive, double_update, MAXMIN_PRECISION};

/// The filling's first step on constraint `c` of usage `usage` (Σ or max of w/p over its
/// active variables, [`Sharing::merged`]): its whole capacity remains, and it is live (listed
/// in `light`) when it has usage and capacity (SimGrid 3.32 `maxmin.cpp`, the solve's start).
#[inline]
fn open_constraint(cn: &mut Cnst, c: u32, usage: f64, light: &mut Vec<u32>) {
    open_constraint_with(cn, c, usage, cn.capacity, light);
}

/// [`open_constraint`] with `remaining` of the capacity left (the region path charges the
/// boundary's variables first, `region`).
#[inline]
pub(super) fn open_constraint_with(
    cn: &mut Cnst,
    c: u32,
    usage: f64,
    remaining: f64,
    light: &mut Vec<u32>,
) {
    let cap = cn.capacity;
    cn.remaining = remaining;
    cn.usage = usage;
    cn.light_pos = NONE;
    if usage > 0.0 && double_positive(remaining, cap * MAXMIN_PRECISION) {
        cn.light_pos = light.len() as u32;
        light.push(c);
    }
}

impl System {
    /// Collects the constraints to solve into `self.set`.
    /// Returns `true` if the walk also did the filling's first step (`walk_component`).
    pub(super) fn collect(&mut self) -> bool {
        let epoch = self.next_epoch();
        self.set.clear();
        if self.full_solve {
            for (i, c) in self.cnsts.iter().enumerate() {
                if !c.elems.is_empty() {
                    self.cnst_mark[i] = epoch;
                    self.set.push(i as u32);
                }
            }
            self.modified.clear();
            self.modified_serial += 1;
            return false;
        }
        // Breadth-first closure of the modified constraints through active variables.
        let mut modified = std::mem::take(&mut self.modified);
        // Without a live hub no constraint is in a group's region or cut: the flags (in the
        // constraint's third cache line) are not read, so that each constraint costs one line.
        let hubs_live = self.hubs.n_live > 0;
        for &c in &modified {
            // A constraint whose variables all belong to a hub in the group regime was solved
            // by [`System::solve_hubs`] (see `hubs`): the general path leaves it alone.
            if hubs_live && (self.in_group_region(c) || self.is_cut(c)) {
                continue;
            }
            // A constraint left without active variables is a component of its own with
            // nothing to solve (no active element links it to another).
            if self.cnst_mark[c as usize] != epoch && self.cnsts[c as usize].n_active > 0 {
                self.cnst_mark[c as usize] = epoch;
                self.set.push(c);
            }
        }
        modified.clear();
        self.modified = modified;
        self.modified_serial += 1;
        // The walk also writes the component's memo key (see [`memo`]), in the order the
        // filling reads it: constraints in discovery order, each one's active elements.
        let memo_on = self.memo.enabled;
        if memo_on {
            self.memo.begin();
        }
        // A walk that ends in a memo hit needs no filling: the walk initialises the filling
        // when the memo is off or hits rarely in its current window (`memo`; a 4,096-rank
        // ring's 300 solves never fill a window and never hit).
        let init = !memo_on || self.memo.hits_rarely();
        match (memo_on, init) {
            (true, true) => self.walk_component::<true, true>(epoch),
            (true, false) => self.walk_component::<true, false>(epoch),
            (false, _) => self.walk_component::<false, true>(epoch),
        }
        // Discovery order is deterministic (modified order, then breadth-first), so no sort.
        !memo_on || init
    }

    /// The breadth-first walk of [`System::collect`] from the constraints in `self.set`,
    /// writing the memo key when `MEMO` (the fields borrowed apart, so that no access goes
    /// through `self` twice), and, when `INIT`, doing the filling's first step on the way
    /// (each constraint's remaining capacity, usage and place among the live constraints, each
    /// variable's reset and place in [`System::touched`]) in the order a separate pass over
    /// the collected set would: a component larger than the cache is then read once less (a
    /// 4,096-rank ring walks 8,193 constraints per solve).
    fn walk_component<const MEMO: bool, const INIT: bool>(&mut self, epoch: u32) {
        // No cut constraint without a live hub (see `collect`).
        let hubs_live = self.hubs.n_live > 0;
        let System {
            cnsts,
            cnst_mark,
            vars,
            elems,
            set,
            memo,
            light,
            touched,
            ..
        } = self;
        if INIT {
            light.clear();
        }
        let mut head = 0;
        while head < set.len() {
            let c = set[head] as usize;
            head += 1;
            let n_active = cnsts[c].n_active as usize;
            let sharing = cnsts[c].sharing;
            if MEMO {
                memo.push_constraint(c as u32, n_active as u32);
            }
            let mut usage = 0.0f64;
            // Only read in the loop (the filling's first step writes after it): one bounds
            // check for the list instead of two per element.
            let listed = &cnsts[c].elems[..n_active];
            for &e in listed {
                let el = elems[e as usize];
                let v = el.var as usize;
                let var = &mut vars[v];
                if var.penalty <= 0.0 {
                    if MEMO {
                        memo.push(memo::INACTIVE);
                    }
                    continue;
                }
                if INIT && el.weight > 0.0 {
                    usage = sharing.merged(usage, el.weight / var.penalty);
                }
                if var.mark == epoch {
                    if MEMO {
                        memo.push(u64::from(var.memo_slot));
                    }
                    continue;
                }
                debug_assert!(
                    !var.reg.in_group,
                    "a group's variable is reachable only through its clean region"
                );
                var.mark = epoch;
                if INIT {
                    var.value = 0.0;
                    var.fixed = false;
                    touched.push(VarId(v as u32));
                }
                // A shaped variable's elements are named by its shape (`memo`).
                let list_elems = MEMO && var.shape == NONE;
                if MEMO {
                    var.memo_slot =
                        memo.new_var(v as u32, var.penalty, var.bound, var.elems.len(), var.shape);
                }
                for &e in var.elems.iter() {
                    let el = &elems[e as usize];
                    let c2 = el.cnst;
                    if list_elems {
                        memo.push2(u64::from(c2), el.weight.to_bits());
                    }
                    let c2u = c2 as usize;
                    if cnst_mark[c2u] != epoch && !(hubs_live && cnsts[c2u].reg.cut) {
                        cnst_mark[c2u] = epoch;
                        set.push(c2);
                    }
                }
            }
            if INIT {
                open_constraint(&mut cnsts[c], c as u32, usage, light);
            }
        }
    }

    /// The general path: bottleneck filling of the components of the modified constraints.
    pub(super) fn solve_general(&mut self) {
        // The region path (`region`) where the memo is off or the sampled regions are much
        // smaller than the components (`region::Policy`).
        let mut gave_up = false;
        if !self.full_solve && (!self.memo.enabled || self.region.policy.prefers_region()) {
            match self.solve_region() {
                Outcome::Solved => {
                    let n = self.region.last_vars();
                    self.region.policy.note_region(n);
                    return;
                }
                Outcome::GaveUp => {
                    self.stats.region_gave_up += 1;
                    gave_up = true;
                }
                Outcome::Off => {}
            }
        }
        let touched_before = self.touched.len();
        let initialized = self.collect();
        if self.set.is_empty() {
            // Only constraints left empty were modified: no variable to solve.
            return;
        }
        let component_vars = if self.memo.enabled {
            self.memo.vars.len()
        } else {
            self.touched.len() - touched_before
        };
        if gave_up {
            self.region.policy.note_region(component_vars);
        }
        self.region.policy.note_component(component_vars);
        self.stats.general_solves += 1;
        self.stats.general_constraints += self.set.len() as u64;
        if self.memo.enabled && self.memo_apply(touched_before) {
            return;
        }
        self.stats.fillings += 1;
        self.fill(initialized);
        if self.memo.enabled {
            let vars = &self.vars;
            self.memo.store(|v| {
                let var = &vars[v as usize];
                (var.value, var.fixed)
            });
        }
    }

    /// On a memo hit, gives the component's variables their stored values (in the order the
    /// filling would have listed them in [`System::touched`]) and returns `true`.
    fn memo_apply(&mut self, touched_before: usize) -> bool {
        let Some(entry) = self.memo.lookup() else {
            return false;
        };
        // A walk that initialised the filling listed the variables and the live constraints:
        // the hit lists the variables again (in the walk's order) and leaves no constraint
        // live, as a filling does.
        self.touched.truncate(touched_before);
        for &c in &self.light {
            self.cnsts[c as usize].light_pos = NONE;
        }
        self.light.clear();
        let (values, fixed) = self.memo.entry(entry);
        for (i, &v) in self.memo.vars.iter().enumerate() {
            let var = &mut self.vars[v as usize];
            var.value = values[i];
            var.fixed = fixed[i];
            var.bneck = NONE;
            self.touched.push(VarId(v));
        }
        true
    }

    /// Bottleneck filling of the constraints in `self.set` (SimGrid 3.32 `maxmin.cpp`);
    /// `initialized` when the walk did its first step (see `walk_component`).
    pub(super) fn fill(&mut self, initialized: bool) {
        if !initialized {
            self.init_fill();
        }
        let mut min_usage = self.find_saturated();
        while !self.light.is_empty() {
            self.stats.filling_rounds += 1;
            self.saturated_vars();
            // Does some candidate hit its bound before the bottleneck share?
            let mut min_bound = -1.0f64;
            for &v in &self.sat_vars {
                let var = &self.vars[v as usize];
                if var.bound > 0.0 && var.bound * var.penalty < min_usage {
                    let bp = var.bound * var.penalty;
                    min_bound = if min_bound < 0.0 {
                        bp
                    } else {
                        min_bound.min(bp)
                    };
                }
            }
            let mut fixed_any = false;
            for i in 0..self.sat_vars.len() {
                let v = self.sat_vars[i] as usize;
                let value = if min_bound < 0.0 {
                    min_usage / self.vars[v].penalty
                } else if (min_bound - self.vars[v].bound * self.vars[v].penalty).abs()
                    < MAXMIN_PRECISION
                {
                    self.vars[v].bneck = AT_BOUND;
                    self.vars[v].bound
                } else {
                    continue;
                };
                self.fix(v, value);
                fixed_any = true;
            }
            if !fixed_any {
                // Cannot happen with positive usages; guards against an endless loop on NaN input.
                debug_assert!(false, "max-min round fixed no variable");
                break;
            }
            min_usage = self.find_saturated();
        }
    }

    /// The filling's first step over the whole of `self.set`, for a set not walked
    /// (`full_solve`): usage and remaining of every constraint, reset of its variables.
    fn init_fill(&mut self) {
        let epoch = self.next_epoch();
        self.light.clear();
        for si in 0..self.set.len() {
            let c = self.set[si] as usize;
            let sharing = self.cnsts[c].sharing;
            let mut usage = 0.0f64;
            for k in 0..self.cnsts[c].n_active as usize {
                let el = self.elems[self.cnsts[c].elems[k] as usize];
                let v = &mut self.vars[el.var as usize];
                if v.penalty <= 0.0 {
                    continue;
                }
                if v.mark != epoch {
                    v.mark = epoch;
                    v.value = 0.0;
                    v.fixed = false;
                    self.touched.push(VarId(el.var));
                }
                if el.weight > 0.0 {
                    usage = sharing.merged(usage, el.weight / v.penalty);
                }
            }
            open_constraint(&mut self.cnsts[c], c as u32, usage, &mut self.light);
        }
    }

    /// Sets `var = value` and charges it to its constraints. The fields are borrowed apart
    /// (as in `walk_component`), so that the loop over the variable's elements reads its list
    /// once and indexes each array once per element: with `self` re-borrowed at every access
    /// a fix took 394 instructions (63 per element) on the 256-rank fat-tree stencil of
    /// `validation/bench`, which fixes 30 M variables; borrowed apart, 322 (52).
    fn fix(&mut self, v: usize, value: f64) {
        let System {
            vars,
            elems,
            cnsts,
            light,
            ..
        } = self;
        let var = &mut vars[v];
        var.value = value;
        var.fixed = true;
        var.bneck_value = value;
        let penalty = var.penalty;
        let var = &vars[v];
        for &e in var.elems.iter() {
            let el = elems[e as usize];
            let c = el.cnst as usize;
            let cn = &mut cnsts[c];
            let cap = cn.capacity;
            match cn.sharing {
                Sharing::Shared => {
                    double_update(&mut cn.remaining, el.weight * value, cap * MAXMIN_PRECISION);
                    double_update(&mut cn.usage, el.weight / penalty, MAXMIN_PRECISION);
                }
                Sharing::FatPipe => {
                    let mut usage = 0.0f64;
                    for &e2 in &cn.elems[..cn.n_active as usize] {
                        let el2 = elems[e2 as usize];
                        let v2 = &vars[el2.var as usize];
                        if v2.penalty > 0.0 && !v2.fixed && el2.weight > 0.0 {
                            usage = usage.max(el2.weight / v2.penalty);
                        }
                    }
                    cn.usage = usage;
                }
            }
            if cn.light_pos != NONE
                && (!double_positive(cn.usage, MAXMIN_PRECISION)
                    || !double_positive(cn.remaining, cap * MAXMIN_PRECISION))
            {
                let p = cn.light_pos as usize;
                cn.light_pos = NONE;
                light.swap_remove(p);
                if let Some(&moved) = light.get(p) {
                    cnsts[moved as usize].light_pos = p as u32;
                }
            }
        }
    }

    /// The smallest `remaining/usage` over live constraints; the constraints reaching it exactly
    /// go to `self.saturated`. Returns -1 when none is live.
    fn find_saturated(&mut self) -> f64 {
        let System {
            cnsts,
            light,
            saturated,
            stats,
            ..
        } = self;
        stats.live_scanned += light.len() as u64;
        let mut min_usage = -1.0f64;
        saturated.clear();
        for &c in light.iter() {
            let cn = &cnsts[c as usize];
            let rou = cn.remaining / cn.usage;
            if min_usage < 0.0 || min_usage > rou {
                min_usage = rou;
                saturated.clear();
                saturated.push(c);
            } else if min_usage == rou {
                saturated.push(c);
            }
        }
        min_usage
    }

    /// Unfixed active variables of the saturated constraints, without duplicates.
    fn saturated_vars(&mut self) {
        let epoch = self.next_epoch();
        let System {
            cnsts,
            elems,
            vars,
            saturated,
            sat_vars,
            ..
        } = self;
        sat_vars.clear();
        for &c in saturated.iter() {
            let cn = &cnsts[c as usize];
            for &e in &cn.elems[..cn.n_active as usize] {
                let el = elems[e as usize];
                let v = &mut vars[el.var as usize];
                if el.weight > 0.0 && v.penalty > 0.0 && !v.fixed && v.mark != epoch {
                    v.mark = epoch;
                    // Its bottleneck if the round fixes it by this constraint's share.
                    v.bneck = c;
                    sat_vars.push(el.var);
                }
            }
        }
    }
}
