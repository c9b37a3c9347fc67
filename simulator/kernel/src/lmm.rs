//! Weighted max-min sharing: the linear max-min (LMM) system of SimGrid's kernel.
//!
//! # The model
//! Resources are **constraints** with a capacity `C` (bytes/s for a link, flop/s for a CPU).
//! Activities in progress are **variables**: the rate `x` each one gets. A variable uses a
//! constraint with a consumption **weight** `w` (1 for a link on the route, 0.05 for a link on the
//! reverse route with `network/crosstraffic`), has a **penalty** `p > 0` (SimGrid's
//! `sharing_penalty`; a variable with `p = 0` is inactive and gets nothing) and an optional
//! **bound** `b` (an upper limit on `x`). A SHARED constraint requires `Σ w·x ≤ C`, a FATPIPE one
//! `max w·x ≤ C`.
//!
//! # Bottleneck filling (SimGrid 3.32 `src/kernel/lmm/maxmin.cpp`)
//! Each round, every live constraint offers `remaining / usage` where `usage = Σ w/p` over its
//! unfixed variables (max for FATPIPE). The smallest offer `m` is the bottleneck; its variables
//! get `x = m/p` — so on a bottleneck, shares are proportional to `1/p`, TCP's RTT-unfairness —
//! unless some of them hit their bound first (`b·p < m`): then only the variables with the
//! smallest `b·p` are fixed, at `x = b`. Fixed variables consume `w·x` of every constraint they
//! use; a constraint whose usage or remaining drops to (nearly) zero leaves. Repeat until none is
//! left.
//!
//! Example: link A (C = 10) carries flows 1 and 2, link B (C = 4) carries flow 2, all `w = p = 1`.
//! Round 1: A offers 10/2 = 5, B offers 4/1 = 4, so B is the bottleneck and flow 2 gets 4.
//! Round 2: A has 10 − 4 = 6 left for flow 1 alone: flow 1 gets 6. Both links are saturated.
//!
//! # Incremental solving
//! A change (variable added, removed, penalty or bound changed) marks the variable's constraints
//! as modified. [`System::solve`] re-solves only the connected component of those constraints
//! (constraints linked through active variables), which gives the same values as a full solve
//! because components do not interact. [`System::set_selective`]`(false)` forces full solves, for
//! testing one against the other. After a solve, [`System::touched`] lists every variable whose
//! value was recomputed. A component that comes back in a shape solved before (an iterative
//! application's next iteration) takes the stored values instead of a new filling (`memo`:
//! same values bit for bit; a 64-rank stencil on a fat-tree, where no hub forms, hits 88 % of
//! its general solves). While no hub is alive, a solve whose history since the system last
//! had no active variable (the activations, deactivations and removals of shaped variables,
//! and the solves between them) was met before takes that solve's values and skips even the
//! walk (`rest`: the phases of a ring or of a collective; 96 % of the solves of a 1,024-rank
//! allreduce on a torus, whose walks were 56 % of its instructions).
//! Where components do not come back (the memo switched itself off), or where the regions
//! are much smaller than the components (a policy from the sizes seen), a change re-fills only
//! the **region** it reaches, the variables on the changed constraints, with the others on
//! those constraints charged at their values, and the max-min certificate (every variable at
//! its bound or at the top level of a saturated constraint) proves the rest unchanged or
//! grows the region (`region`). Example: on the 256-rank stencil of `validation/bench` on a
//! fat-tree, a filling of the whole component set 377.6 variables on 362.6 constraints; the
//! region re-fills 19.2 variables, and the replay takes 0.83 s instead of 3.79 s.
//!
//! That alone costs O(flows) per event once one link carries most flows (a cluster's backbone):
//! the component is everything in progress. A constraint with many active variables becomes a
//! **hub** (`hubs`): while it provably bottlenecks its whole component alone (a certificate
//! maintained in O(log) per change), its variables form a **group** whose values are one share
//! divided by each penalty ([`System::group_of`], [`System::group_share`]); arrivals and
//! departures then cost O(their own elements), and the engine advances the group in one virtual
//! time. When the certificate fails the component goes back to bottleneck filling, so results
//! never depend on it (proptests compare both with a full solve after random sequences).
//! A hub may also let a few neighbours that offer less than its share be filled first
//! (`hubs/exceptions.rs`), and a hub that does not bind is **cut** from its component
//! (`hubs/cut.rs`): its variables then belong to their next hub. Example: in a 4096-rank
//! allreduce hundreds of flows go into rank 0 through the backbone; the backbone has capacity
//! to spare and is cut, and the flows' next hub, rank 0's link, holds them in one group, where
//! before every arrival re-solved rank 0's link and the senders' links (about 560 constraints).
//!
//! Variables of penalty 0 (the engine's parked transfer variables, `engine/path.rs`) keep their
//! elements (so that activation costs O(their elements)) but take no part in a solve. A
//! constraint therefore lists only the elements of its active variables: activation appends
//! each element to its constraint's list, deactivation swap-removes it, and every loop of the
//! solve walks the list. Example: a 65,536-rank stencil leaves a parked variable on each of
//! its 262,144 paths; the backbone lists only the few hundred flows in progress. (Keeping the
//! parked elements after the active ones, as before, made every activation swap a parked
//! element into place and write its position: on the 4,096-rank allreduce of
//! `validation/bench`, 2.0 M of the run's 11 M simulated L2 write misses.)

//! Inputs: capacities, weights, penalties, bounds. Computed: values.

use smallvec::SmallVec;

mod general;
mod hubs;
mod memo;
mod prefetch;
mod region;
mod rest;

pub use hubs::{
    GroupId, DEFAULT_WAKE_RATIO, GROUPED_SHARE_PAYS, LOW_STRETCHES, STRETCH_DECAY, UNPAID_WEIGHT,
};

/// A constraint (resource) index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CnstId(pub u32);

/// A variable (activity share) index. Slots are reused after [`System::remove_variable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// An element list prepared once for many variables ([`System::add_shape`]): a transfer path's
/// merged route and reverse route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeId(pub u32);

/// How a constraint adds up its variables' consumptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// `Σ w·x ≤ C`.
    Shared,
    /// `max w·x ≤ C`: every variable may use the whole capacity.
    FatPipe,
}

impl Sharing {
    /// A variable's weight `weight` on a constraint of this sharing after it consumes `more` of
    /// it again: the sum (SHARED) or the larger (FATPIPE), as SimGrid's `System::expand`; the
    /// same for a constraint's usage and one more variable's `w/p` (`maxmin.cpp`).
    fn merged(self, weight: f64, more: f64) -> f64 {
        match self {
            Sharing::Shared => weight + more,
            Sharing::FatPipe => weight.max(more),
        }
    }
}

/// A constraint. Laid out for the cache (`repr(C)`, 64-byte aligned): the fields a solve reads
/// on every constraint it visits (elements, capacity, remaining, usage, counts, sharing)
/// fill the first cache line, the hub bookkeeping the next ones. At 4,096 ranks a solve's
/// component outgrows the caches, and a constraint spread over three lines missed in each.
/// With this layout and [`Var`]'s, cachegrind's simulated misses out of a 512 KiB L2 on
/// `validation/bench`'s 4,096-rank stencil (10 iterations) fell by 6 % in the general solve
/// (4.38 -> 4.14 M reads, 0.28 -> 0.05 M writes) and by 20 % in `set_penalty` (0.96 -> 0.76 M
/// reads); the ring's misses over the whole run by 7.6 % (17.2 -> 15.9 M).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
struct Cnst {
    /// The elements of the active variables (penalty > 0) using this constraint (`n_active`
    /// of them): an inactive variable's elements are not listed, so that solving never walks
    /// flows in their latency phase (most of a backbone's elements in a latency-bound
    /// collective), and listing or unlisting one moves only the list's last element (an
    /// active flow's, which the solves keep in the cache). While the solves follow a history
    /// from rest, the moves may be made late (`rest`, "Lists moved late").
    elems: Vec<u32>,
    capacity: f64,
    remaining: f64,
    usage: f64,
    n_active: u32,
    light_pos: u32,
    sharing: Sharing,
    /// Hub bookkeeping of the registered (active) variables here ([`hubs`]).
    reg: hubs::CnstReg,
}

// The fields a solve reads fill the first cache line, the hub bookkeeping starts the second.
const _: () = assert!(std::mem::offset_of!(Cnst, reg) == 64);

/// A variable, laid out as [`Cnst`]: what the filling and the walk read on every visit
/// (penalty, value, bound, elements, mark, fixed, alive) in the first cache line.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
struct Var {
    penalty: f64,
    value: f64,
    bound: f64,
    /// Its elements; a flow with cross-traffic has 5 or 6, kept inline (no pointer to follow).
    elems: SmallVec<[u32; 6]>,
    mark: u32,
    fixed: bool,
    alive: bool,
    /// Local number in the component whose memo key is being built ([`memo`]).
    memo_slot: u32,
    /// The shape its elements were made from ([`System::add_variable_shaped`]), while they
    /// are still exactly the shape's; [`NONE`] otherwise. The memo key names the shape
    /// instead of listing the elements.
    shape: u32,
    /// Position in [`System::active_vars`] while alive with a positive penalty ([`NONE`]
    /// otherwise).
    active_pos: u32,
    /// Its position among the activations logged since rest (`rest`), if it was activated
    /// while the log ran (checked against the log before use).
    rest_pos: u32,
    /// Hub bookkeeping: registration and group membership ([`hubs`]).
    reg: hubs::VarReg,
    /// The constraint on which the last filling or certificate check found this variable at
    /// the top level of a saturated constraint ([`region::AT_BOUND`]: at its bound; [`NONE`]:
    /// not known), valid while its value is still `bneck_value` ([`region`]).
    bneck: u32,
    bneck_value: f64,
}

// Two cache lines; the filling's fields in the first.
const _: () = assert!(std::mem::size_of::<Var>() == 128);

#[derive(Debug, Clone, Copy)]
struct Elem {
    cnst: u32,
    var: u32,
    weight: f64,
    /// Index of this element in its constraint's `elems` while its variable is active,
    /// [`NONE`] otherwise (not listed).
    pos: u32,
}

const NONE: u32 = u32::MAX;

/// The max-min system. Constraints are created once; variables come and go.
#[derive(Debug, Default)]
pub struct System {
    /// What the solves did ([`System::stats`]).
    stats: crate::KernelStats,
    cnsts: Vec<Cnst>,
    /// By constraint: the epoch of the walk or filling that last reached it. Apart from
    /// [`Cnst`], in 4 bytes per constraint, so that a walk's test of each element's
    /// constraint (reached already?) reads a dense array instead of a constraint's cache line:
    /// on a 4,096-rank ring a walk tests ~20,000 elements of ~8,000 constraints.
    cnst_mark: Vec<u32>,
    vars: Vec<Var>,
    free_vars: Vec<u32>,
    /// The alive variables of positive penalty, in no particular order: what registration
    /// wakes or forgets at once (`hubs::dormant`) without walking every variable slot.
    active_vars: Vec<u32>,
    elems: Vec<Elem>,
    /// By element: while its constraint is a cut hub, `w·x` of the variable there, counted in
    /// the hub's load (`hubs::cut`). Apart from [`Elem`] so that the elements every pass reads
    /// stay 24 bytes.
    elem_charged: Vec<f64>,
    free_elems: Vec<u32>,
    /// Shapes ([`System::add_shape`]): each one's `shape_elems[start..start + len]`.
    shapes: Vec<(u32, u32)>,
    shape_elems: Vec<(CnstId, f64)>,
    modified: Vec<u32>,
    /// By constraint: the [`System::modified_serial`] at which a variable's move last listed
    /// it in `modified`, so that the flows of one event list each constraint once (16 flows
    /// starting together list 96 elements of 33 constraints; every pass over `modified`, the
    /// wake decision's and the collection's with its group and cut checks, then reads each
    /// constraint once: 4 % fewer instructions on `validation/bench`'s 64- and 4,096-rank
    /// stencils, callgrind). Other changes may still list a constraint twice: each pass takes a
    /// constraint's first listing and skips the others, so the order and the results are the
    /// same.
    modified_stamp: Vec<u64>,
    /// Counts the times `modified` was emptied (by the general path's collection); a new
    /// constraint's stamp is `u64::MAX`, which it never reaches.
    modified_serial: u64,
    epoch: u32,
    full_solve: bool,
    /// Hubs and their groups ([`hubs`]).
    hubs: hubs::Hubs,
    /// Results of earlier general solves by component shape ([`memo`]).
    memo: memo::SolveMemo,
    /// Results of earlier solves by their history since rest ([`rest`]).
    rest: rest::RestMemo,
    /// The incremental filling's scratch state ([`region`]).
    region: region::Region,
    // scratch, reused between solves
    set: Vec<u32>,
    light: Vec<u32>,
    saturated: Vec<u32>,
    sat_vars: Vec<u32>,
    touched: Vec<VarId>,
}

impl System {
    /// An empty system with selective (incremental) solving.
    pub fn new() -> Self {
        Self::default()
    }

    /// `true` (default): solve only components touched since the last solve; `false`: solve every
    /// constraint each time (the slow reference, same results).
    pub fn set_selective(&mut self, selective: bool) {
        self.full_solve = !selective;
        self.memo.enabled = selective;
        self.rest_set_enabled(selective);
        if !selective {
            self.set_hub_thresholds(u32::MAX, u32::MAX);
        }
    }

    /// `true` (default): a general solve of a component in a shape solved before takes the
    /// stored values instead of filling again (module `lmm::memo`; same values, bit for bit);
    /// `false`: always fill. Forced off by `set_selective(false)`.
    pub fn set_memo(&mut self, on: bool) {
        self.memo.enabled = on && !self.full_solve;
        self.rest_set_enabled(self.memo.enabled);
    }

    /// `true` (default): when the solution memo is off, or its components are much larger
    /// than the regions (`region::Policy`), a general solve re-fills only the region its
    /// changes reach and checks the max-min certificate around it (module `lmm::region`;
    /// values equal a full filling's to rounding, about 1e-15 relative, not bit for bit);
    /// `false`: fill the whole component.
    pub fn set_region_filling(&mut self, on: bool) {
        self.region.enabled = on;
    }

    /// What the solves did since the system was made (solves, general-path components, memo
    /// hits, filling rounds; the engine's rate counts are 0 here).
    pub fn stats(&self) -> crate::KernelStats {
        crate::KernelStats {
            rest_hits: self.rest_counts().1,
            memo_hits: self.memo_counts().1,
            ..self.stats
        }
    }

    /// (lookups, hits) of the solution memo since the system was made ([`System::set_memo`]).
    pub fn memo_counts(&self) -> (u64, u64) {
        (self.memo.count.lookups, self.memo.count.hits)
    }

    /// Makes room for `n` more constraints ([`System::add_constraint`]).
    pub fn reserve_constraints(&mut self, n: usize) {
        self.cnsts.reserve(n);
        self.cnst_mark.reserve(n);
        self.modified_stamp.reserve(n);
    }

    /// Adds a constraint of `capacity` (in the resource's unit per second). O(1).
    pub fn add_constraint(&mut self, capacity: f64, sharing: Sharing) -> CnstId {
        self.cnsts.push(Cnst {
            capacity,
            sharing,
            elems: Vec::new(),
            n_active: 0,
            remaining: 0.0,
            usage: 0.0,
            light_pos: NONE,
            reg: hubs::CnstReg::default(),
        });
        self.cnst_mark.push(0);
        self.modified_stamp.push(u64::MAX);
        CnstId(self.cnsts.len() as u32 - 1)
    }

    /// Adds a variable with `penalty` (0 = inactive) and `bound` (≤ 0 = unbounded). O(1).
    pub fn add_variable(&mut self, penalty: f64, bound: f64) -> VarId {
        let id = self.new_variable(penalty, bound);
        if penalty > 0.0 {
            // Its elements come one by one (`expand`): not a logged activation (`rest`).
            self.rest_interrupt();
        }
        id
    }

    /// [`System::add_variable`] without a word to the log of changes since rest.
    fn new_variable(&mut self, penalty: f64, bound: f64) -> VarId {
        let v = Var {
            penalty,
            bound,
            value: 0.0,
            elems: SmallVec::new(),
            fixed: false,
            mark: 0,
            alive: true,
            active_pos: NONE,
            reg: hubs::VarReg::default(),
            memo_slot: 0,
            rest_pos: NONE,
            shape: NONE,
            bneck: NONE,
            bneck_value: 0.0,
        };
        let id = match self.free_vars.pop() {
            Some(i) => {
                let elems = std::mem::take(&mut self.vars[i as usize].elems);
                self.vars[i as usize] = Var { elems, ..v };
                VarId(i)
            }
            None => {
                self.vars.push(v);
                VarId(self.vars.len() as u32 - 1)
            }
        };
        if penalty > 0.0 {
            self.list_active(id.0);
            self.want_registration(id.0);
        }
        id
    }

    /// Puts variable `v` in [`System::active_vars`].
    fn list_active(&mut self, v: u32) {
        debug_assert_eq!(self.vars[v as usize].active_pos, NONE);
        self.vars[v as usize].active_pos = self.active_vars.len() as u32;
        self.active_vars.push(v);
        self.hubs.crowding.activations += 1;
    }

    /// Takes variable `v` out of [`System::active_vars`] (the last one takes its place).
    fn unlist_active(&mut self, v: u32) {
        let pos = self.vars[v as usize].active_pos;
        if pos == NONE {
            return;
        }
        self.vars[v as usize].active_pos = NONE;
        self.active_vars.swap_remove(pos as usize);
        if let Some(&moved) = self.active_vars.get(pos as usize) {
            self.vars[moved as usize].active_pos = pos;
        }
    }

    /// Appends `elems` to `out` merged per constraint as successive [`System::expand`] calls
    /// merge them: one pair per constraint, in the order of first appearance, the weights of a
    /// constraint named again added (SHARED) or the larger kept (FATPIPE). Only the pairs
    /// appended from `out.len()` on are merged. O(elements²), elements being a route's few
    /// links.
    ///
    /// Example: (up_3, 1), (B, 1), (down_7, 1), (up_7, 0.05), (B, 0.05), (down_3, 0.05) with B
    /// SHARED gives (up_3, 1), (B, 1.05), (down_7, 1), (up_7, 0.05), (down_3, 0.05).
    pub fn merge_elements(
        &self,
        elems: impl IntoIterator<Item = (CnstId, f64)>,
        out: &mut Vec<(CnstId, f64)>,
    ) {
        let start = out.len();
        for (cnst, weight) in elems {
            match out[start..].iter_mut().find(|(c, _)| *c == cnst) {
                Some((_, w)) => *w = self.cnsts[cnst.0 as usize].sharing.merged(*w, weight),
                None => out.push((cnst, weight)),
            }
        }
    }

    /// Adds a variable of `penalty` and `bound` consuming each `(constraint, weight)` of `elems`,
    /// each constraint at most once (merged by [`System::merge_elements`]): the same system as
    /// [`System::add_variable`] followed by one [`System::expand`] per pair, without looking
    /// for an element to merge with or re-checking the new variable's registration at every
    /// element. O(elements).
    pub fn add_variable_merged(
        &mut self,
        penalty: f64,
        bound: f64,
        elems: &[(CnstId, f64)],
    ) -> VarId {
        let var = self.add_variable(penalty, bound);
        let active = penalty > 0.0;
        for &(cnst, weight) in elems {
            debug_assert!(
                self.elem_on(var, cnst).is_none(),
                "add_variable_merged: a constraint named twice"
            );
            self.new_elem(cnst, var, weight, active);
        }
        var
    }

    /// Prepares the element list `elems` (each constraint at most once, as
    /// [`System::merge_elements`] gives them) for [`System::add_variable_shaped`]. O(elements);
    /// the shape lives as long as the system.
    pub fn add_shape(&mut self, elems: &[(CnstId, f64)]) -> ShapeId {
        let start = self.shape_elems.len() as u32;
        self.shape_elems.extend_from_slice(elems);
        self.shapes.push((start, elems.len() as u32));
        ShapeId(self.shapes.len() as u32 - 1)
    }

    /// [`System::add_variable_merged`] with the elements of `shape`: the same system, and the
    /// variable remembers its shape, so that a memo key names the shape in one word instead of
    /// listing the elements (`memo`) until an [`System::expand`] changes them. O(elements).
    pub fn add_variable_shaped(&mut self, penalty: f64, bound: f64, shape: ShapeId) -> VarId {
        let var = self.new_variable(penalty, bound);
        let active = penalty > 0.0;
        if active {
            self.flush_deferred();
        }
        let (start, len) = self.shapes[shape.0 as usize];
        for i in start..start + len {
            let (cnst, weight) = self.shape_elems[i as usize];
            debug_assert!(
                self.elem_on(var, cnst).is_none(),
                "add_variable_shaped: a constraint named twice"
            );
            self.new_elem(cnst, var, weight, active);
        }
        self.vars[var.0 as usize].shape = shape.0;
        if active {
            // The same lists, `modified` and active variables as a parked variable of this
            // shape activated (`engine::path`'s parking): logged as an activation.
            self.rest_log_activation(var.0);
        }
        var
    }

    /// `var`'s element on `cnst`, if it has one.
    fn elem_on(&self, var: VarId, cnst: CnstId) -> Option<u32> {
        self.vars[var.0 as usize]
            .elems
            .iter()
            .copied()
            .find(|&e| self.elems[e as usize].cnst == cnst.0)
    }

    /// Adds `weight` to element `e` (SHARED) or keeps the larger (FATPIPE), as SimGrid's
    /// `System::expand` on a constraint the variable already uses.
    fn merge_weight(&mut self, e: u32, weight: f64) {
        let el = &mut self.elems[e as usize];
        el.weight = self.cnsts[el.cnst as usize]
            .sharing
            .merged(el.weight, weight);
    }

    /// A new element of `var` on `cnst`, in the active prefix if `active`; the constraint is
    /// marked modified when the variable is active.
    fn new_elem(&mut self, cnst: CnstId, var: VarId, weight: f64, active: bool) {
        let el = Elem {
            cnst: cnst.0,
            var: var.0,
            weight,
            pos: NONE,
        };
        let id = match self.free_elems.pop() {
            Some(i) => {
                self.elems[i as usize] = el;
                self.elem_charged[i as usize] = 0.0;
                i
            }
            None => {
                self.elems.push(el);
                self.elem_charged.push(0.0);
                self.elems.len() as u32 - 1
            }
        };
        self.vars[var.0 as usize].elems.push(id);
        if active {
            self.activate_elem(id);
            self.modified.push(cnst.0);
        }
    }

    /// Makes `var` consume `weight` of `cnst`. Expanding twice onto the same constraint adds the
    /// weights (SHARED) or keeps the larger (FATPIPE), as SimGrid's `System::expand`.
    /// O(elements of `var`).
    pub fn expand(&mut self, cnst: CnstId, var: VarId, weight: f64) {
        self.rest_interrupt();
        self.unregister(var.0, false);
        self.vars[var.0 as usize].shape = NONE;
        let active = self.vars[var.0 as usize].penalty > 0.0;
        if active {
            self.want_registration(var.0);
        }
        let existing = self.elem_on(var, cnst);
        match existing {
            Some(e) => {
                self.merge_weight(e, weight);
                if active {
                    self.modified.push(cnst.0);
                }
            }
            None => self.new_elem(cnst, var, weight, active),
        }
    }

    /// Removes `var`; its slot may be reused. O(elements of `var`).
    pub fn remove_variable(&mut self, var: VarId) {
        // Its elements are freed (and may be reused at once): the lists first.
        self.flush_deferred();
        self.rest_log_removal(var.0);
        self.unregister(var.0, true);
        let mut elems = std::mem::take(&mut self.vars[var.0 as usize].elems);
        let active = self.vars[var.0 as usize].penalty > 0.0;
        for &e in &elems {
            if active {
                self.deactivate_elem(e);
            }
            self.modified.push(self.elems[e as usize].cnst);
            self.free_elems.push(e);
        }
        elems.clear();
        self.unlist_active(var.0);
        let v = &mut self.vars[var.0 as usize];
        v.elems = elems;
        v.alive = false;
        v.penalty = 0.0;
        v.value = 0.0;
        self.free_vars.push(var.0);
    }

    /// Changes `var`'s penalty (0 deactivates it). O(elements of `var`).
    pub fn set_penalty(&mut self, var: VarId, penalty: f64) {
        if self.vars[var.0 as usize].penalty == penalty {
            return;
        }
        self.unregister(var.0, false);
        if penalty > 0.0 {
            self.want_registration(var.0);
        }
        let v = &mut self.vars[var.0 as usize];
        let was_active = v.penalty > 0.0;
        let alive = v.alive;
        v.penalty = penalty;
        if penalty <= 0.0 {
            v.value = 0.0;
        }
        if alive && !was_active && penalty > 0.0 {
            self.list_active(var.0);
            self.rest_log_activation(var.0);
        } else if was_active && penalty <= 0.0 {
            self.rest_log_deactivation(var.0, false);
            self.unlist_active(var.0);
        } else {
            self.rest_interrupt();
        }
        let to_active = penalty > 0.0;
        let mut from_active = was_active;
        if was_active != to_active {
            if self.rest_defers() {
                // The lists move later, or never if the solves find this history (`rest`);
                // the constraints are marked modified now.
                self.rest.deferred.push((var.0, to_active));
                from_active = to_active;
            } else {
                self.flush_deferred();
                self.rest.clean = false;
            }
        }
        self.move_elems(var.0, from_active, to_active);
    }

    /// Moves variable `v`'s elements into their constraints' active prefixes (`to_active`
    /// and not `from_active`), out of them (the reverse), or neither, and marks each constraint
    /// modified, in one pass with the fields borrowed apart.
    fn move_elems(&mut self, v: u32, from_active: bool, to_active: bool) {
        let System {
            vars,
            elems,
            cnsts,
            modified,
            modified_stamp,
            modified_serial,
            ..
        } = self;
        // Slices and the serial held in locals: `modified.push` writes memory the compiler
        // cannot tell apart from the vectors' headers, which it otherwise reloads per element.
        let (elems, cnsts, stamps) = (&mut elems[..], &mut cnsts[..], &mut modified_stamp[..]);
        let serial = *modified_serial;
        let cross = from_active != to_active;
        for &e in vars[v as usize].elems.iter() {
            let c = if cross {
                cross_active_boundary(elems, cnsts, e, to_active)
            } else {
                elems[e as usize].cnst
            };
            let stamp = &mut stamps[c as usize];
            if *stamp != serial {
                *stamp = serial;
                modified.push(c);
            }
        }
    }

    /// Moves element `e` (of a variable becoming active) into its constraint's active prefix.
    #[inline]
    fn activate_elem(&mut self, e: u32) {
        self.rest.clean = false;
        cross_active_boundary(&mut self.elems, &mut self.cnsts, e, true);
    }

    /// Moves element `e` (of a variable becoming inactive) out of the active prefix.
    #[inline]
    fn deactivate_elem(&mut self, e: u32) {
        self.rest.clean = false;
        cross_active_boundary(&mut self.elems, &mut self.cnsts, e, false);
    }

    /// The elements of constraint `c` whose variables are active (penalty > 0).
    fn active_elems(&self, c: u32) -> &[u32] {
        let cn = &self.cnsts[c as usize];
        &cn.elems[..cn.n_active as usize]
    }

    /// Changes `var`'s bound (≤ 0 = unbounded).
    pub fn set_bound(&mut self, var: VarId, bound: f64) {
        self.rest_interrupt();
        self.unregister(var.0, false);
        if self.vars[var.0 as usize].penalty > 0.0 {
            self.want_registration(var.0);
        }
        let v = &mut self.vars[var.0 as usize];
        v.bound = bound;
        for &e in &v.elems {
            self.modified.push(self.elems[e as usize].cnst);
        }
    }

    /// Current value (rate) of `var`, as of the last solve.
    pub fn value(&self, var: VarId) -> f64 {
        let v = &self.vars[var.0 as usize];
        match self.group_of(var) {
            Some(g) => self.group_share(g) / v.penalty,
            None => v.value,
        }
    }

    /// Penalty of `var`.
    pub fn penalty(&self, var: VarId) -> f64 {
        self.vars[var.0 as usize].penalty
    }

    /// True if a change is waiting for [`System::solve`].
    pub fn needs_solve(&self) -> bool {
        !self.modified.is_empty() || self.hubs.has_pending()
    }

    /// Variables whose value the last [`System::solve`] recomputed, in a deterministic order.
    pub fn touched(&self) -> &[VarId] {
        &self.touched
    }

    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.cnst_mark.fill(0);
            for v in &mut self.vars {
                v.mark = 0;
            }
            self.epoch = 1;
        }
        self.epoch
    }

    /// Recomputes the values of every variable connected to a change. Cost: linear in the
    /// elements of the solved component per bottleneck round.
    pub fn solve(&mut self) {
        self.touched.clear();
        self.hubs.next_serial();
        self.stats.solves += 1;
        self.stats.grouped += u64::from(self.hubs.n_grouped);
        self.solve_changes();
        self.rest_store();
    }

    /// [`System::solve`] of the changes since the last solve: the wake decision, then the
    /// values stored for the changes since rest (`rest`) or the hubs' and the general path's.
    fn solve_changes(&mut self) {
        if self.active_vars.len() as u64 >= u64::from(self.hubs.on()) {
            // The wake decision reads the lists' counts.
            self.rest_stop_deferring();
        }
        let modified = std::mem::take(&mut self.modified);
        self.crowding_step(&modified);
        self.modified = modified;
        if self.rest_solve() {
            return;
        }
        let mut charged_upto = 0;
        loop {
            self.solve_hubs();
            let general = !self.modified.is_empty() || self.full_solve;
            if general {
                self.solve_general();
            }
            // A hub cut or put back moves variables between hubs, and a cut hub that binds again
            // must have its component solved once more: go on until nothing changes.
            if !self.settle_cuts(&mut charged_upto, general) || self.full_solve {
                break;
            }
        }
        self.settle_group_events();
        self.sleep_if_hubless();
    }
}

/// Lists element `e` in its constraint (`activate`: at the end) or takes it out (its place
/// gets the list's last element, as `swap_remove`), and returns its constraint. The element
/// arena and the constraints are passed apart so that a caller may hold other fields of the
/// system.
#[inline]
fn cross_active_boundary(elems: &mut [Elem], cnsts: &mut [Cnst], e: u32, activate: bool) -> u32 {
    let Elem { cnst, pos, .. } = elems[e as usize];
    let c = &mut cnsts[cnst as usize];
    if activate {
        debug_assert!(pos == NONE, "element already listed");
        elems[e as usize].pos = c.elems.len() as u32;
        c.elems.push(e);
        c.n_active += 1;
    } else {
        debug_assert!(pos != NONE, "element not listed");
        c.elems.swap_remove(pos as usize);
        if let Some(&moved) = c.elems.get(pos as usize) {
            elems[moved as usize].pos = pos;
        }
        elems[e as usize].pos = NONE;
        c.n_active -= 1;
    }
    cnst
}

#[cfg(test)]
mod tests;
