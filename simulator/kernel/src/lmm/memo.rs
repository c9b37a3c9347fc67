//! Solution memo: a component solved before, in the same shape, is not solved again.
//!
//! # Why
//! An iterative application replays the same communication pattern every iteration: the same
//! flows, on the same links, with the same penalties and bounds, arrive and leave in the same
//! order, so the general path of [`System::solve`](super::System::solve) sees the same component again and again.
//! Bottleneck filling is a deterministic function of what it reads, so the second time its
//! result can be looked up instead of computed. Where no flow crosses a hub (a fat-tree's
//! uplinks, where 32 links each bottleneck their own flows; a ring with cross-traffic) the
//! general path is most of the replay's work, and a lookup costs one pass over the component
//! where the filling costs a pass per bottleneck round.
//!
//! # The key
//! Everything the filling reads, in the order it reads it, with variables renamed by order of
//! first appearance (so a flow of the next iteration, in another variable slot, matches):
//! for each constraint of the component in collection order, its index and active-element
//! count (its capacity and sharing are fixed when it is made, so the index stands for them),
//! then for each active element its variable's local number; a variable seen for the first time
//! also writes its penalty, bound and elements (constraint, weight) in its own order (the order
//! in which fixing it updates its constraints), or, when its elements are still exactly those
//! of the shape it was made from (`System::add_variable_shaped`: a transfer path's), the
//! shape's number, which stands for the same list. Bits, not values, are keyed. Entries are
//! found by the key's 128-bit XXH3 digest and the key itself is not kept:
//! a fat-tree component's key is 20 kB, and comparing it on every hit missed the cache more
//! than the filling it saved. Two different keys share a digest with probability about 2^-128
//! per pair (10^-32 for a run's thousands of shapes), far below the odds of a memory error;
//! apart from that a hit gives exactly the values the filling would give, bit for bit, so
//! results never depend on the memo (`set_selective(false)`, the reference, turns it off).
//!
//! Example: a ring flow with cross-traffic has 5 elements. Listed, its first appearance writes
//! 4 header words and 10 element words; shaped, 4 words. A 16-flow component of 33
//! constraints: 33 constraint words, 80 element references and 16 × 14 = 224 variable words
//! (337) against 33 + 80 + 64 = 177 words (the constraint headers held their capacity too
//! before: 370).
//!
//! # Cost and bounds
//! The key is written by the walk that collects the component (`System::collect`), so a
//! lookup costs a few stores per element, one digest and one hash probe; a hit skips the
//! filling's INIT pass and every bottleneck round. Entries are kept while their total size
//! stays under [`BUDGET_WORDS`]; each window of [`WINDOW`] lookups that hits less than one in
//! [`MIN_HIT_DIVISOR`] switches the memo off for the rest of the run (a replay whose components
//! never repeat pays nothing more), a decision that depends only on the sequence of solves, so
//! runs stay deterministic. The encoding is unambiguous: a new variable's word has bit 63 set
//! and says how many element words follow, [`INACTIVE`] is no new variable's word.
//!
//! # Worked example
//! A 16-rank ring on a cluster with a backbone (`validation/bench/scaling.py`'s ring, 2,000
//! iterations): rank r sends 10 kB to r+1 each iteration; with cross-traffic every flow shares
//! its private links with its neighbours' reverse elements, so the flows in progress form one
//! component (each host's up and down links and the backbone: up to 33 constraints), which the
//! general path solves 4 times per iteration. The first iterations store 32 shapes; after that
//! the same components come back (other variable slots, same local numbering): 7,967 of the
//! 7,999 solves are hits, and the replay executes 5 % fewer instructions.

use super::NONE;
use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_128;

/// Most words (8 bytes) all entries' values may hold together: 32 MiB.
pub const BUDGET_WORDS: usize = 1 << 22;
/// Lookups per hit-rate window.
pub const WINDOW: u32 = 4096;
/// A window with fewer than `WINDOW / MIN_HIT_DIVISOR` hits switches the memo off.
pub const MIN_HIT_DIVISOR: u32 = 8;
/// Lookups of a window after which [`SolveMemo::hits_rarely`] judges its hit ratio.
const JUDGE_AFTER: u32 = 32;

/// Lookups and hits of a memo: since the start, and in the current window of [`WINDOW`]
/// lookups, whose hit rate decides whether the memo stays on (this one and `rest`'s).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct HitCount {
    pub(super) lookups: u64,
    pub(super) hits: u64,
    window_lookups: u32,
    window_hits: u32,
}

impl HitCount {
    /// Counts a lookup; `true` when it closes a window with fewer than
    /// `WINDOW / MIN_HIT_DIVISOR` hits (the memo then switches off).
    pub(super) fn record(&mut self, hit: bool) -> bool {
        self.lookups += 1;
        self.window_lookups += 1;
        if hit {
            self.hits += 1;
            self.window_hits += 1;
        }
        if self.window_lookups < WINDOW {
            return false;
        }
        let rare = self.window_hits < WINDOW / MIN_HIT_DIVISOR;
        self.window_lookups = 0;
        self.window_hits = 0;
        rare
    }

    /// True when the current window has seen enough lookups to judge, with hits fewer than
    /// the switch-off threshold's ratio so far.
    fn hits_rarely(&self) -> bool {
        self.window_lookups >= JUDGE_AFTER
            && self.window_hits.saturating_mul(MIN_HIT_DIVISOR) < self.window_lookups
    }
}

/// A key word marking an element whose variable is seen for the first time.
const NEW_VAR: u64 = 1 << 63;
/// The key word of an element whose variable has penalty 0 (the filling skips it).
pub(super) const INACTIVE: u64 = u64::MAX;
/// In a new variable's last header word: the elements are those of the shape in the low bits
/// (none follow); without it the word is the number of element words that follow.
const SHAPED: u64 = 1 << 63;

/// A filling's result: each variable's value and whether the filling fixed it, by local number.
struct Entry {
    values: Box<[f64]>,
    fixed: Box<[bool]>,
}

/// The memo's state and the scratch of one lookup.
pub(super) struct SolveMemo {
    pub(super) enabled: bool,
    /// Entry index by key digest.
    index: FxHashMap<u128, u32>,
    entries: Vec<Entry>,
    words: usize,
    /// The key being built.
    key: Vec<u64>,
    digest: u128,
    /// The component's variables by local number.
    pub(super) vars: Vec<u32>,
    /// Lookups and hits (for the switch-off, reports and tests).
    pub(super) count: HitCount,
}

impl std::fmt::Debug for SolveMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolveMemo")
            .field("enabled", &self.enabled)
            .field("entries", &self.entries.len())
            .field("words", &self.words)
            .field("lookups", &self.count.lookups)
            .field("hits", &self.count.hits)
            .finish()
    }
}

impl Default for SolveMemo {
    fn default() -> Self {
        Self {
            enabled: true,
            index: FxHashMap::default(),
            entries: Vec::new(),
            words: 0,
            key: Vec::new(),
            digest: 0,
            vars: Vec::new(),
            count: HitCount::default(),
        }
    }
}

impl SolveMemo {
    /// Starts a new key.
    pub(super) fn begin(&mut self) {
        self.key.clear();
        self.vars.clear();
    }

    /// Appends one word to the key.
    #[inline]
    pub(super) fn push(&mut self, w: u64) {
        self.key.push(w);
    }

    /// Appends two words to the key.
    #[inline]
    pub(super) fn push2(&mut self, a: u64, b: u64) {
        self.key.extend_from_slice(&[a, b]);
    }

    /// Appends constraint `c`'s header: index and active-element count.
    #[inline]
    pub(super) fn push_constraint(&mut self, c: u32, n_active: u32) {
        self.push(u64::from(c) | u64::from(n_active) << 32);
    }

    /// Numbers variable `v`, seen for the first time, and appends its header: local number,
    /// penalty, bound, then `SHAPED | shape` if `shape` is not [`NONE`] (the variable's elements
    /// are the shape's) or else the element count (its elements follow, as (constraint, weight
    /// bits)). Returns the local number.
    #[inline]
    pub(super) fn new_var(
        &mut self,
        v: u32,
        penalty: f64,
        bound: f64,
        n_elems: usize,
        shape: u32,
    ) -> u32 {
        let slot = self.vars.len() as u32;
        self.vars.push(v);
        let last = if shape == NONE {
            n_elems as u64
        } else {
            SHAPED | u64::from(shape)
        };
        self.key.extend_from_slice(&[
            NEW_VAR | u64::from(slot),
            penalty.to_bits(),
            bound.to_bits(),
            last,
        ]);
        slot
    }

    /// The entry stored under the current key, if any (see [`SolveMemo::entry`]).
    pub(super) fn lookup(&mut self) -> Option<u32> {
        self.digest = xxh3_128(bytemuck::cast_slice(&self.key));
        let found = self.index.get(&self.digest).copied();
        if self.count.record(found.is_some()) {
            self.switch_off();
        }
        found.filter(|_| self.enabled)
    }

    /// True when the current window has seen enough lookups to judge, with hits fewer than
    /// the switch-off threshold's ratio so far (a hint for work that only a miss needs; it
    /// never changes a value).
    pub(super) fn hits_rarely(&self) -> bool {
        self.count.hits_rarely()
    }

    /// Entry `i`'s (values, fixed), by local number.
    pub(super) fn entry(&self, i: u32) -> (&[f64], &[bool]) {
        let e = &self.entries[i as usize];
        (&e.values, &e.fixed)
    }

    /// After a window of too few hits: the memo is off and its entries are freed.
    fn switch_off(&mut self) {
        self.enabled = false;
        self.index = FxHashMap::default();
        self.entries = Vec::new();
        self.key = Vec::new();
        self.words = 0;
    }

    /// Stores the filling's result for the current key, within the budget. `value(v)` gives
    /// (value, fixed) of variable `v`.
    pub(super) fn store(&mut self, mut value: impl FnMut(u32) -> (f64, bool)) {
        if !self.enabled {
            return;
        }
        let words = 2 + self.vars.len() * 9 / 8;
        if self.words + words > BUDGET_WORDS || self.entries.len() >= u32::MAX as usize {
            return;
        }
        let (values, fixed): (Vec<f64>, Vec<bool>) = self.vars.iter().map(|&v| value(v)).unzip();
        self.index.insert(self.digest, self.entries.len() as u32);
        self.entries.push(Entry {
            values: values.into(),
            fixed: fixed.into(),
        });
        self.words += words;
    }
}
