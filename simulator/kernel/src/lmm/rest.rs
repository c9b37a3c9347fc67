//! Solves from rest: a system with no active variable that activates the same flows again
//! takes the stored values without walking the component.
//!
//! # Why
//! A latency-bound replay often runs its communication phases one after the other: every flow
//! of a phase ends before the next phase's flows start, so each phase begins with no active
//! variable (the system is *at rest*) and activates the same paths' parked variables in the
//! same order as the phase before. The component memo (`memo`) then hits every time, but a hit
//! still walks the whole component to write its key, makes the wake decision's pass over the
//! modified constraints and applies the values: on `validation/bench`'s 16-rank ring (8 flows of
//! 5-6 elements, a component of 33 constraints) about 8,500 instructions per solve, 41,666
//! solves, 17 % of the run's instructions.
//!
//! # Why the activations alone are a key
//! From rest, what a solve reads is a function of the activations since then: a constraint
//! lists only the elements of active variables (`Cnst::elems`), so every list is empty at rest
//! and is then filled in activation order; each activation lists its variable's constraints in
//! `modified` in element order; the walk starts from `modified` and follows the lists, and the
//! filling reads the capacities (fixed when the constraint is made), the weights, penalties and
//! bounds. So when every change since rest is the activation ([`System::set_penalty`] from 0)
//! of a variable whose elements are still those of its shape, the sequence (shape, penalty
//! bits, bound bits) of the activations determines the component, the order in which the solve
//! lists the variables in [`System::touched`], and every value and fixed flag bit for bit. Any
//! other change (a variable added active, expanded, removed, deactivated, a bound or a
//! threshold changed) ends the log until the next rest. The variables' slots do not matter:
//! an entry stores, for each variable the solve listed, its position among the activations.
//!
//! A solve from rest also skips what it provably would not do: with fewer activations than the
//! hub threshold `on` no constraint can be crowded, so the dormant system stays dormant and its
//! wake decision has nothing to count (the period was closed when rest began); no hub is alive
//! or cut, so the hub phase, the cuts and the group events have nothing to do.
//!
//! # Worked example
//! The 16-rank ring: ranks 0, 2, .., 14 send to their right neighbours while 1, 3, .., 15
//! receive, then the reverse. The first phase ends with no flow in progress: rest. The second
//! phase's latencies end together and the engine re-activates the 8 paths' parked variables in
//! rank order: the log holds 8 × (shape, penalty, bound) = 24 words. The first time this
//! happens the lookup misses, the ordinary solve runs (walk, memo lookup, filling) and its
//! touched list, say paths 3, 1, 5, .. by walk order, is stored as activation positions
//! (1, 0, 2, ..) with the 8 values. Every later iteration activates other (or the same) slots
//! in the same order: one 24-word digest, one probe, 8 values written, no walk.
//!
//! # Bounds
//! Entries are kept while they hold at most [`BUDGET_WORDS`]; each window of
//! [`WINDOW`](super::memo::WINDOW) lookups that hits less than one in
//! [`MIN_HIT_DIVISOR`](super::memo::MIN_HIT_DIVISOR) turns lookups off for the rest of the run
//! (the component memo's rule, [`HitCount`]). As
//! in `memo`, entries are found by the key's 128-bit XXH3 digest (collision odds about 2^-128
//! per pair of keys) and the decision depends only on the sequence of solves: runs stay
//! deterministic, and [`System::set_memo`]`(false)` turns this off with the component memo.

use super::memo::HitCount;
use super::{System, VarId, NONE};
use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_128;

/// Most words (8 bytes) all entries may hold together: 8 MiB.
pub const BUDGET_WORDS: usize = 1 << 20;

/// A solve's result by activation position: `order[i]` is the activation whose variable the
/// solve listed `i`-th in `touched`, with its value and fixed flag.
struct Entry {
    order: Box<[u32]>,
    values: Box<[f64]>,
    fixed: Box<[bool]>,
}

/// The log of activations since rest and the stored solves.
#[derive(Default)]
pub(super) struct RestMemo {
    /// Lookups are switched off (by [`System::set_memo`] or a window of too few hits).
    off: bool,
    /// The system was at rest after the last solve and every change since is a logged
    /// activation.
    logging: bool,
    /// The activated variables in order.
    vars: Vec<u32>,
    /// Scratch for the key: (shape, penalty bits, bound bits) of each.
    key: Vec<u64>,
    index: FxHashMap<u128, u32>,
    entries: Vec<Entry>,
    words: usize,
    /// The digest of a lookup that missed, for [`System::rest_store`].
    missed: Option<u128>,
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
    /// Ends the log until the next rest (any change other than an activation from rest).
    #[inline]
    pub(super) fn interrupt(&mut self) {
        self.logging = false;
    }

    /// Turns lookups on or off ([`System::set_memo`]).
    pub(super) fn set_enabled(&mut self, on: bool) {
        self.off = !on;
        self.logging = false;
    }

    /// After a window of too few hits: lookups are off and the entries are freed.
    fn switch_off(&mut self) {
        self.off = true;
        self.logging = false;
        self.index = FxHashMap::default();
        self.entries = Vec::new();
        self.words = 0;
    }
}

impl System {
    /// (lookups, hits) of solves from rest since the system was made (module `lmm::rest`).
    pub fn rest_counts(&self) -> (u64, u64) {
        (self.rest.count.lookups, self.rest.count.hits)
    }

    /// Logs the activation of variable `v` (penalty from 0) if the system is logging since
    /// rest: only a variable whose elements are its shape's can be logged.
    #[inline]
    pub(super) fn rest_log_activation(&mut self, v: u32) {
        if !self.rest.logging {
            return;
        }
        let var = &self.vars[v as usize];
        // A log as long as the hub threshold is never looked up (`rest_solve`): stop at once.
        if var.shape == NONE || self.rest.vars.len() as u64 + 1 >= u64::from(self.hubs.on()) {
            self.rest.logging = false;
            return;
        }
        self.rest.vars.push(v);
    }

    /// At the start of [`System::solve`]: when the changes since rest are logged activations
    /// (fewer than the hub threshold) and their solve was stored, gives the variables their
    /// values, lists them in `touched` in the stored order, consumes `modified` as the general
    /// path's collection does, and returns `true`. Otherwise returns `false` (and remembers a
    /// miss for [`System::rest_store`]).
    pub(super) fn rest_solve(&mut self) -> bool {
        let r = &mut self.rest;
        r.missed = None;
        if !r.logging
            || r.off
            || r.vars.is_empty()
            || r.vars.len() as u64 >= u64::from(self.hubs.on())
        {
            return false;
        }
        debug_assert!(self.hubs.dormant && !self.hubs.has_pending());
        // The key: (shape, penalty, bound) of each activation, read now (a logged variable's
        // penalty, bound and elements have not changed since: any such change ends the log).
        r.key.clear();
        for &v in &r.vars {
            let var = &self.vars[v as usize];
            r.key.extend_from_slice(&[
                u64::from(var.shape),
                var.penalty.to_bits(),
                var.bound.to_bits(),
            ]);
        }
        let digest = xxh3_128(bytemuck::cast_slice(&r.key));
        let found = r.index.get(&digest).copied();
        if r.count.record(found.is_some()) {
            r.switch_off();
        }
        if r.off {
            return false;
        }
        let Some(i) = found else {
            r.missed = Some(digest);
            return false;
        };
        let e = &r.entries[i as usize];
        for k in 0..e.order.len() {
            let v = r.vars[e.order[k] as usize];
            let var = &mut self.vars[v as usize];
            var.value = e.values[k];
            var.fixed = e.fixed[k];
            var.bneck = super::NONE;
            self.touched.push(VarId(v));
        }
        self.modified.clear();
        self.modified_serial += 1;
        true
    }

    /// At the end of [`System::solve`]: stores the solve whose lookup missed (when it listed
    /// exactly the logged variables and left no hub), then starts a new log if the system is
    /// at rest (no active variable, nothing modified, dormant, no crowded period).
    pub(super) fn rest_store(&mut self) {
        if let Some(digest) = self.rest.missed.take() {
            self.rest_store_entry(digest);
        }
        let at_rest = self.active_vars.is_empty()
            && self.modified.is_empty()
            && self.hubs.dormant
            && !self.hubs.has_pending()
            && self.hubs.crowding.is_closed()
            && !self.rest.off;
        self.rest.logging = at_rest;
        self.rest.vars.clear();
    }

    fn rest_store_entry(&mut self, digest: u128) {
        let n = self.rest.vars.len();
        if self.touched.len() != n || !self.hubs.dormant {
            return;
        }
        let words = 2 + n * 17 / 8;
        if self.rest.words + words > BUDGET_WORDS || self.rest.entries.len() >= u32::MAX as usize {
            return;
        }
        let mut order = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(n);
        let mut fixed = Vec::with_capacity(n);
        for &VarId(v) in &self.touched {
            // Fewer variables than the hub threshold: a linear search is cheap, and it runs on
            // misses only.
            let Some(pos) = self.rest.vars.iter().position(|&a| a == v) else {
                return;
            };
            if order.contains(&(pos as u32)) {
                return;
            }
            order.push(pos as u32);
            let var = &self.vars[v as usize];
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
