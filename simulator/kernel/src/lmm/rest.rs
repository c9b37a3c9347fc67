//! Solves along a trajectory from rest: a system that, since it was last without an active
//! variable, has gone through the same changes and solves as once before takes the values that
//! solve stored, without walking the component.
//!
//! # Why
//! A replay repeats itself: every iteration of an iterative application, every call of a
//! collective, sends the same messages on the same paths in the same order. Between two such
//! phases the max-min system is often **at rest** (no active variable: every flow of the phase
//! has ended, the ranks compute), and the next phase then activates the same paths' parked
//! variables, solves, parks some, activates others, solves, ... exactly as the phase before.
//! The component memo (`memo`) hits on most of those solves, but a hit still walks the whole
//! component to write its key: on `validation/bench`'s allreduce over a 1,024-rank torus, whose
//! binomial trees put hundreds of 24-byte flows on overlapping routes at once, each solve walks
//! a component of 326 constraints, 56 % of the replay's instructions, although only one flow
//! started or ended. Here the key is the *history* since rest, kept up to date in O(1) per
//! change, so a solve met before costs one hash probe and the writing of its values.
//!
//! # Why the history is a key
//! At rest every constraint's list of active elements (`Cnst::elems`) is empty. From there the
//! lists, the list of active variables and `modified` are a function of the changes in order:
//! an activation ([`System::set_penalty`] from 0, or a variable added active with its shape's
//! elements, which does the same to the lists, `engine::path`'s parking) appends the variable's
//! elements in element order and lists their constraints in `modified`; a deactivation or the
//! removal of an active variable takes its elements out (the last of each list takes its place)
//! and lists their constraints; the removal of an idle variable lists its shape's constraints.
//! A solve reads the lists from `modified` and the capacities, weights, penalties and bounds,
//! recomputes the variables of the components it reaches (listing them in
//! [`System::touched`]) and clears `modified`; while no hub is alive (`hubs::dormant`) it
//! reads nothing else (the general path, `general`; the region path, `region`, equals it to
//! rounding). So while the system stays dormant, the sequence of (activation: shape, penalty,
//! bound), (deactivation or removal: the variable's position among the activations), (idle
//! removal: shape) and solves since rest determines each solve's `touched` order and values.
//! The changes since the last solve are logged as words, and each solve hashes them with the
//! digest so far into the history's new 128-bit XXH3 digest (collision odds about 2^-128 per
//! pair of histories; one hash per solve, of the words its changes wrote); the solve looks the
//! digest up, and a miss stores its result by activation positions (the variables' slots do
//! not matter). The
//! wake decision (`hubs::dormant`) runs before the lookup as before, on the same counts, so
//! that the lookup happens only where the system stays dormant; any other change (a bound, an
//! expansion, a penalty changed while active, a variable added active without a shape) and any
//! solve that leaves a hub alive end the log until the next rest.
//!
//! # Worked example
//! The 16-rank ring: ranks 0, 2, .., 14 send to their right neighbours while 1, 3, .., 15
//! receive, then the reverse. The first phase ends with no flow in progress: rest. The second
//! phase's latencies end together and the engine re-activates the 8 paths' parked variables in
//! rank order: 8 × (shape, penalty, bound) logged, hashed by the solve. The first time, the lookup misses,
//! the ordinary solve runs (walk, memo lookup, filling) and its touched list, say paths 3, 1,
//! 5, .. by walk order, is stored as activation positions (1, 0, 2, ..) with the 8 values. The
//! flows end one by one: each end is a deactivation (position k) and a solve of the 7, 6, ..
//! left, each stored under its own history. Every later iteration activates other (or the
//! same) slots in the same order and ends them in the same order: each solve is one probe and
//! a few values written, no walk.
//!
//! # Lists moved late
//! A solve the memo answers reads no list: only a miss (or a solve the memo does not serve)
//! walks them. So while the log runs with fewer than `on` active variables and the last
//! lookup hit, an activation or deactivation ([`System::set_penalty`]) marks its constraints
//! modified at once but only records its element moves; they are made, in order, before
//! anything reads or changes the lists otherwise (a miss, a solve not looked up, the wake
//! decision with `on` active variables, an idle or active removal, a variable added active,
//! any change that ends the log). When the system is at rest again and no element has moved
//! since the last rest, the recorded moves are dropped: they listed and unlisted the same
//! elements, and the lists are empty, as they were. On the 16-rank ring, whose every solve is
//! found, no flow's elements move any more: 4 % fewer instructions.
//!
//! # Bounds
//! Entries are kept while they hold at most [`BUDGET_WORDS`]; each window of
//! [`WINDOW`](super::memo::WINDOW) lookups that hits less than one in
//! [`MIN_HIT_DIVISOR`](super::memo::MIN_HIT_DIVISOR) turns lookups off for the rest of the run
//! (the component memo's rule, [`HitCount`]); a history longer than [`MAX_LOGGED`] activations
//! is not followed further. The decisions depend only on the sequence of solves: runs stay
//! deterministic, and [`System::set_memo`]`(false)` turns this off with the component memo.

use super::memo::HitCount;
use super::{cross_active_boundary, System, VarId, NONE};
use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_128;

/// Most words (8 bytes) all entries may hold together: 64 MiB. A phase's entries hold its
/// solves' `touched` lists: the 4,096-rank allreduce on a torus stores about 1,700 solves per
/// call, the first ones over the 2,048 flows of a binomial step; with 8 MiB its later calls
/// found 23 % of their solves (5.7 s), with 64 MiB 86 % (1.9 s, 12 MiB more at the peak).
pub const BUDGET_WORDS: usize = 1 << 23;
/// Most activations a history since rest may log (4 bytes each); past them the log stops
/// until the next rest.
pub const MAX_LOGGED: usize = 1 << 20;

/// The kinds of change in the log (first word of each: the kind in its low byte; an
/// activation is 3 words, the others 2, so a batch of changes reads back one way).
const ACTIVATION: u64 = 1;
const DEACTIVATION: u64 = 2;
const REMOVAL: u64 = 3;
const IDLE_REMOVAL: u64 = 4;

/// A solve's result by activation position: `order[i]` is the activation whose variable the
/// solve listed `i`-th in `touched`, with its value and fixed flag.
struct Entry {
    order: Box<[u32]>,
    values: Box<[f64]>,
    fixed: Box<[bool]>,
}

/// The history since rest and the stored solves.
#[derive(Default)]
pub(super) struct RestMemo {
    /// Lookups are switched off (by [`System::set_memo`] or a window of too few hits).
    off: bool,
    /// Every change since the last rest is in the log.
    logging: bool,
    /// The activated variables in order.
    vars: Vec<u32>,
    /// The digest of the history since rest up to the last solve.
    digest: u128,
    /// The changes since the last solve, folded into `digest` by the next one (one hash per
    /// solve instead of one per change).
    batch: Vec<u64>,
    index: FxHashMap<u128, u32>,
    entries: Vec<Entry>,
    words: usize,
    /// The digest of a lookup that missed, for [`System::rest_store`].
    missed: Option<u128>,
    /// Element moves not made yet (module doc, "Lists moved late"): (variable, into the
    /// active lists or out), in order.
    pub(super) deferred: Vec<(u32, bool)>,
    /// Moves may be deferred: from rest until the log ends or `on` variables are active.
    deferring: bool,
    /// No element has moved in the lists since the last rest (every move since is in
    /// `deferred`): the lists are still empty.
    pub(super) clean: bool,
    /// The last lookup hit: the next solve is likely to hit too, so moves are deferred only
    /// then (a miss makes them anyway, a second pass over the elements).
    last_hit: bool,
    /// Lookups and hits (for the switch-off and tests).
    count: HitCount,
}

impl std::fmt::Debug for RestMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestMemo")
            .field("off", &self.off)
            .field("logging", &self.logging)
            .field("entries", &self.entries.len())
            .field("lookups", &self.count.lookups)
            .field("hits", &self.count.hits)
            .finish()
    }
}

impl RestMemo {
    /// After a window of too few hits: lookups are off and the entries are freed.
    fn switch_off(&mut self) {
        self.off = true;
        self.logging = false;
        self.index = FxHashMap::default();
        self.entries = Vec::new();
        self.words = 0;
        self.vars = Vec::new();
        self.batch = Vec::new();
    }

    /// Starts a new history (the system is at rest, its deferred moves made or dropped).
    fn restart(&mut self) {
        debug_assert!(self.deferred.is_empty());
        self.logging = true;
        self.deferring = true;
        self.clean = true;
        self.digest = 0;
        self.batch.clear();
        self.vars.clear();
    }

    /// A solve: the digest of the history so far and the changes since the last solve.
    fn fold(&mut self) {
        let d = self.digest;
        self.batch.push(d as u64);
        self.batch.push((d >> 64) as u64);
        self.digest = xxh3_128(bytemuck::cast_slice(&self.batch));
        self.batch.clear();
    }
}

impl System {
    /// Ends the log until the next rest (a change the history does not describe); the
    /// deferred moves are made first.
    pub(super) fn rest_interrupt(&mut self) {
        self.rest_stop_deferring();
        self.rest.logging = false;
    }

    /// Turns lookups on or off ([`System::set_memo`]).
    pub(super) fn rest_set_enabled(&mut self, on: bool) {
        self.rest_interrupt();
        self.rest.off = !on;
    }

    /// Makes the deferred element moves and defers no more until the next rest.
    pub(super) fn rest_stop_deferring(&mut self) {
        self.rest.deferring = false;
        self.flush_deferred();
    }

    /// Whether an element move may be deferred now (the log runs, the last lookup hit, fewer
    /// than `on` variables are active); stops deferring at `on` active variables.
    #[inline]
    pub(super) fn rest_defers(&mut self) -> bool {
        if !self.rest.deferring || !self.rest.last_hit {
            return false;
        }
        if self.active_vars.len() as u64 >= u64::from(self.hubs.on()) {
            self.rest_stop_deferring();
            return false;
        }
        true
    }

    /// Makes the deferred element moves, in order.
    #[inline]
    pub(super) fn flush_deferred(&mut self) {
        if !self.rest.deferred.is_empty() {
            self.apply_deferred();
        }
    }

    fn apply_deferred(&mut self) {
        self.rest.clean = false;
        let mut ops = std::mem::take(&mut self.rest.deferred);
        for &(v, to_active) in &ops {
            for &e in self.vars[v as usize].elems.iter() {
                cross_active_boundary(&mut self.elems, &mut self.cnsts, e, to_active);
            }
        }
        ops.clear();
        self.rest.deferred = ops;
    }

    /// (lookups, hits) of solves along a history from rest since the system was made (module
    /// `lmm::rest`).
    pub fn rest_counts(&self) -> (u64, u64) {
        (self.rest.count.lookups, self.rest.count.hits)
    }

    /// Logs the activation of variable `v` (penalty from 0, or added active with its shape's
    /// elements) if the log runs: only a variable whose elements are its shape's can be logged.
    #[inline]
    pub(super) fn rest_log_activation(&mut self, v: u32) {
        if !self.rest.logging {
            return;
        }
        let var = &self.vars[v as usize];
        if var.shape == NONE || self.rest.vars.len() >= MAX_LOGGED {
            self.rest_interrupt();
            return;
        }
        let words = [
            ACTIVATION | u64::from(var.shape) << 8,
            var.penalty.to_bits(),
            var.bound.to_bits(),
        ];
        self.vars[v as usize].rest_pos = self.rest.vars.len() as u32;
        self.rest.vars.push(v);
        self.rest.batch.extend_from_slice(&words);
    }

    /// Logs the deactivation (`removed`: the removal) of active variable `v` if the log runs.
    #[inline]
    pub(super) fn rest_log_deactivation(&mut self, v: u32, removed: bool) {
        if !self.rest.logging {
            return;
        }
        let pos = self.vars[v as usize].rest_pos;
        // Every variable active while the log runs was activated since rest, in the log.
        if self.rest.vars.get(pos as usize) != Some(&v) {
            self.rest_interrupt();
            return;
        }
        let kind = if removed { REMOVAL } else { DEACTIVATION };
        self.rest.batch.extend_from_slice(&[kind, u64::from(pos)]);
    }

    /// Logs the removal of variable `v` (before it happens) if the log runs.
    pub(super) fn rest_log_removal(&mut self, v: u32) {
        if !self.rest.logging {
            return;
        }
        let var = &self.vars[v as usize];
        if var.penalty > 0.0 {
            self.rest_log_deactivation(v, true);
        } else if var.shape == NONE {
            self.rest_interrupt();
        } else {
            // Its elements are not listed, but their constraints go to `modified`.
            let shape = u64::from(var.shape);
            self.rest.batch.extend_from_slice(&[IDLE_REMOVAL, shape]);
        }
    }

    /// In [`System::solve`], once the wake decision has run: when every change since rest is
    /// in the log, the system is still dormant with nothing pending and this history's solve
    /// was stored, gives the variables their values, lists them in `touched` in the stored
    /// order, consumes `modified` as the general path's collection does, and returns `true`.
    /// Otherwise returns `false` (and remembers a miss for [`System::rest_store`]).
    pub(super) fn rest_solve(&mut self) -> bool {
        let r = &mut self.rest;
        r.missed = None;
        if !r.logging {
            debug_assert!(r.deferred.is_empty(), "moves deferred without a log");
            return false;
        }
        r.fold();
        if r.off || !self.hubs.dormant || self.hubs.has_pending() || self.full_solve {
            self.flush_deferred();
            return false;
        }
        let digest = r.digest;
        let found = r.index.get(&digest).copied();
        if r.count.record(found.is_some()) {
            self.rest_interrupt();
            self.rest.switch_off();
            return false;
        }
        self.rest.last_hit = found.is_some();
        let Some(i) = found else {
            // The ordinary solve reads the lists.
            self.flush_deferred();
            self.rest.missed = Some(digest);
            return false;
        };
        let r = &mut self.rest;
        let e = &r.entries[i as usize];
        for k in 0..e.order.len() {
            let v = r.vars[e.order[k] as usize];
            let var = &mut self.vars[v as usize];
            var.value = e.values[k];
            var.fixed = e.fixed[k];
            var.bneck = NONE;
            self.touched.push(VarId(v));
        }
        self.modified.clear();
        self.modified_serial += 1;
        true
    }

    /// At the end of [`System::solve`]: stores the solve whose lookup missed (if the system is
    /// still dormant), then starts a new history if the system is at rest (no active variable,
    /// nothing modified, dormant), or ends the log if a hub is alive.
    pub(super) fn rest_store(&mut self) {
        let dormant = self.hubs.dormant && !self.hubs.has_pending();
        if let Some(digest) = self.rest.missed.take() {
            if dormant {
                self.rest_store_entry(digest);
            }
        }
        if self.rest.off {
            return;
        }
        if self.active_vars.is_empty() && self.modified.is_empty() && dormant {
            if self.rest.clean {
                // Every move since the last rest is deferred: they list and unlist the same
                // elements (no variable is active now), so the lists are empty as they were.
                self.rest.deferred.clear();
            } else {
                self.flush_deferred();
            }
            self.rest.restart();
        } else if !dormant {
            self.rest_interrupt();
        }
    }

    fn rest_store_entry(&mut self, digest: u128) {
        let n = self.touched.len();
        let words = 2 + n * 17 / 8;
        if self.rest.words + words > BUDGET_WORDS || self.rest.entries.len() >= u32::MAX as usize {
            return;
        }
        let mut order = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(n);
        let mut fixed = Vec::with_capacity(n);
        for &VarId(v) in &self.touched {
            let var = &self.vars[v as usize];
            // A touched variable is active, so activated since rest: in the log.
            let pos = var.rest_pos;
            if self.rest.vars.get(pos as usize) != Some(&v) {
                return;
            }
            order.push(pos);
            values.push(var.value);
            fixed.push(var.fixed);
        }
        self.rest
            .index
            .insert(digest, self.rest.entries.len() as u32);
        self.rest.entries.push(Entry {
            order: order.into(),
            values: values.into(),
            fixed: fixed.into(),
        });
        self.rest.words += words;
    }
}
