//! Indexed binary min-heap of event dates, with a run of in-order insertions beside it.
//!
//! Keys are `(date, seq)`: equal dates pop in insertion order (`seq` counts insertions), so runs
//! are deterministic. Each item (a `u32` id, typically an activity slot) is in the heap at most
//! once; a back-index gives O(log n) `update` and `remove`, which flow completion dates need after
//! every re-solve.
//!
//! # Runs
//! Many events are scheduled in the order they happen: latency phases of one message size
//! (`now + L`, `now` never decreasing), the members of a group of equal flows (virtual dates
//! `V + u`), executions of one length. Beside the binary heap are `RUNS` (2) **runs**
//! (`heap/run.rs`): an entry whose `(date, seq)` comes after the last entry of a run (the
//! first such run, or an empty one) is appended there (a queue, O(1)) instead of sifted into
//! the heap; the earliest entry is the smallest of the runs' fronts and the heap's top, so the
//! pop order is exactly a single heap's. A removed run entry is marked and skipped when it
//! reaches the front. Two runs take two interleaved streams, e.g. latency ends (`now + 0.6`)
//! and compute ends (`now + 1`). Example: 1.0, 1.5, 2.0 go to the first run; 1.2 comes before
//! 2.0 and opens the second; 1.1 comes before both runs' last entries and goes to the heap;
//! pops give 1.0, 1.1 (heap), 1.2 (second run), 1.5, 2.0. On the 64-rank stencil one run cut
//! the main thread's instructions by 6.7 % and the 1024-rank stencil's wall time by 4 %; the
//! second run cuts the latter by 6.5 % more (medians of 5 alternated runs), where four runs
//! gained no more and cost the 16-rank ring 3.7 % more instructions (each peek compares every
//! run's front).
//!
//! # Layout
//! An entry is 16 bytes: the date as an integer of the same order (IEEE total order, so a
//! comparison is integer compares and the date is read back exactly), a 32-bit sequence number
//! and the id; four entries share a 64-byte line. (32 bytes with the date beside its key and a
//! 64-bit sequence number: the 64-rank stencil replayed 3 % slower, the 16-rank ring 2.6 %,
//! medians of 7 alternated runs. Four children per node instead of two: 1 % slower than two,
//! with 2 % more instructions, on heaps of a few hundred entries.)
//!
//! When the 32-bit sequence numbers run out (after 2^32 insertions), the entries are renumbered
//! 0, 1, ... in their `(date, seq)` order: every comparison keeps its outcome, so the heap stays
//! valid and the pop order is unchanged.

mod run;

use run::Run;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// `date` mapped to an unsigned integer of the same order (IEEE total order).
    key: u64,
    seq: u32,
    id: u32,
}

/// The unsigned integer of the same order as `date` (`f64::total_cmp`'s order).
#[inline]
fn key_of(date: f64) -> u64 {
    let bits = date.to_bits();
    bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
}

/// The date of key `key` (inverse of [`key_of`]).
#[inline]
fn date_of(key: u64) -> f64 {
    let bits = if key >> 63 == 1 {
        key ^ (1 << 63)
    } else {
        !key
    };
    f64::from_bits(bits)
}

impl Entry {
    #[inline]
    fn before(&self, other: &Entry) -> bool {
        (self.key, self.seq) < (other.key, other.seq)
    }
}

const ABSENT: u32 = u32::MAX;

/// A min-heap of `(date, id)` with a position index per id, and beside it two **runs**:
/// queues of entries inserted in increasing `(date, seq)` order (see the module doc).
#[derive(Debug, Default)]
pub struct IndexedHeap {
    entries: Vec<Entry>,
    /// Per id: its index in `entries`, or [`IN_RUN`] | run number << [`RUN_SHIFT`] | its
    /// absolute index in that run, or [`ABSENT`].
    pos: Vec<u32>,
    next_seq: u32,
    runs: [Run; RUNS],
}

/// Runs beside the heap.
pub const RUNS: usize = 2;
/// `pos` flag of an entry in a run ...
const IN_RUN: u32 = 1 << 31;
/// ... whose number is in the bits from here (below: its absolute index in the run).
const RUN_SHIFT: u32 = 28;

impl IndexedHeap {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items. O(1).
    pub fn len(&self) -> usize {
        self.entries.len() + self.runs.iter().map(Run::len).sum::<usize>()
    }

    /// True when no item is scheduled. O(1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The earliest entry, and the run it heads (`None`: the heap's top).
    #[inline]
    fn first(&self) -> Option<(Entry, Option<usize>)> {
        let mut best: Option<(Entry, Option<usize>)> = self.entries.first().map(|e| (*e, None));
        for (r, run) in self.runs.iter().enumerate() {
            if let Some(f) = run.front() {
                if best.is_none_or(|(b, _)| f.before(&b)) {
                    best = Some((*f, Some(r)));
                }
            }
        }
        best
    }

    /// Earliest `(date, id)`. O(1).
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.first().map(|(e, _)| (date_of(e.key), e.id))
    }

    /// The id `d` places behind the front of run `r` (`r` < [`RUNS`]), `u32::MAX` past its end
    /// or for a removed entry: an entry likely to come soon, for a caller's prefetch (not in
    /// pop order: the heap's own entries are left out and the runs interleave). O(1).
    #[inline]
    pub fn run_id_at(&self, r: usize, d: usize) -> u32 {
        self.runs[r].id_ahead(d)
    }

    /// The id at index `i` of the binary heap beside the runs (0 is its top, 1 and 2 the top's
    /// children: the heap's next entries), `u32::MAX` past its end: for a caller's prefetch,
    /// as [`IndexedHeap::run_id_at`]. O(1).
    #[inline]
    pub fn heap_id_at(&self, i: usize) -> u32 {
        self.entries.get(i).map_or(u32::MAX, |e| e.id)
    }

    /// True if `id` is scheduled. O(1).
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != ABSENT)
    }

    /// The date `id` is scheduled at, `None` if it is not scheduled. O(1).
    pub fn date(&self, id: u32) -> Option<f64> {
        let p = *self.pos.get(id as usize)?;
        if p == ABSENT {
            None
        } else if p & IN_RUN != 0 {
            let (r, abs) = Self::run_of(p);
            Some(date_of(self.runs[r].at(abs).key))
        } else {
            Some(date_of(self.entries[p as usize].key))
        }
    }

    /// The next sequence number; renumbers the entries first when the numbers run out.
    #[inline]
    fn take_seq(&mut self) -> u32 {
        if self.next_seq == u32::MAX {
            self.renumber();
        }
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// Gives the entries (heap and runs) sequence numbers 0, 1, ... in their `(date, seq)`
    /// order, which keeps every comparison's outcome (so the heap order, each run's order and
    /// the pop order).
    fn renumber(&mut self) {
        let mut all: Vec<(u64, u32)> = self.entries.iter().map(|e| (e.key, e.seq)).collect();
        for run in &mut self.runs {
            all.extend(run.live_mut().map(|e| (e.key, e.seq)));
        }
        all.sort_unstable();
        let rank = |e: &Entry| all.binary_search(&(e.key, e.seq)).expect("listed") as u32;
        for e in &mut self.entries {
            e.seq = rank(e);
        }
        for run in &mut self.runs {
            for e in run.live_mut() {
                e.seq = rank(e);
            }
        }
        self.next_seq = all.len() as u32;
    }

    /// The run and absolute index of a run position `p`.
    #[inline]
    fn run_of(p: u32) -> (usize, u32) {
        (
            ((p & !IN_RUN) >> RUN_SHIFT) as usize,
            p & ((1 << RUN_SHIFT) - 1),
        )
    }

    /// Schedules `id` at `date`, or moves it there if already scheduled (it then keeps its place
    /// among equal dates only if the date is unchanged). O(log n); O(1) when it comes after
    /// every entry of a run.
    pub fn set(&mut self, id: u32, date: f64) {
        if self.pos.len() <= id as usize {
            self.pos.resize(id as usize + 1, ABSENT);
        }
        let key = key_of(date);
        let p = self.pos[id as usize];
        if p != ABSENT && p & IN_RUN != 0 {
            let (r, abs) = Self::run_of(p);
            if date_of(self.runs[r].at(abs).key) == date {
                return;
            }
            self.runs[r].remove(abs, &mut self.pos);
        } else if p != ABSENT {
            let old = self.entries[p as usize];
            if date_of(old.key) == date {
                return;
            }
            let e = Entry {
                key,
                seq: self.take_seq(),
                id,
            };
            // A later date can only go down, an earlier one only up.
            if key < old.key {
                self.sift_up(p as usize, e);
            } else {
                self.sift_down(p as usize, e);
            }
            return;
        }
        let e = Entry {
            key,
            seq: self.take_seq(),
            id,
        };
        // The first run it can close (deterministic), else the heap.
        match self.runs.iter().position(|run| run.accepts(&e)) {
            Some(r) => self.runs[r].push(e, &mut self.pos, IN_RUN | (r as u32) << RUN_SHIFT),
            None => {
                self.entries.push(e);
                let i = self.entries.len() - 1;
                self.sift_up(i, e);
            }
        }
    }

    /// Unschedules `id` if present. O(log n).
    pub fn remove(&mut self, id: u32) {
        let Some(&p) = self.pos.get(id as usize) else {
            return;
        };
        if p == ABSENT {
            return;
        }
        if p & IN_RUN != 0 {
            let (r, abs) = Self::run_of(p);
            self.runs[r].remove(abs, &mut self.pos);
            return;
        }
        self.remove_at(id, p as usize);
    }

    /// Removes the heap entry of `id` at position `p`.
    #[inline]
    fn remove_at(&mut self, id: u32, p: usize) {
        self.pos[id as usize] = ABSENT;
        let last = self.entries.pop().expect("a present id has an entry");
        if p < self.entries.len() {
            // The last entry fills the hole: it goes either up or down, never both.
            if p > 0 && last.before(&self.entries[(p - 1) / 2]) {
                self.sift_up(p, last);
            } else {
                self.sift_down(p, last);
            }
        }
    }

    /// Removes and returns the earliest item. O(log n); O(1) from a run.
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        self.pop_if(|_| true)
    }

    /// Removes and returns the earliest item if `take` accepts its date: [`IndexedHeap::peek`]
    /// then [`IndexedHeap::pop`] with the earliest entry found once (the runs' fronts and the
    /// heap's top compared once, not twice). O(log n); O(1) from a run.
    #[inline]
    pub fn pop_if(&mut self, take: impl FnOnce(f64) -> bool) -> Option<(f64, u32)> {
        let (top, run) = self.first()?;
        if !take(date_of(top.key)) {
            return None;
        }
        match run {
            Some(r) => {
                self.runs[r].pop_front(&mut self.pos);
            }
            None => self.remove_at(top.id, 0),
        }
        Some((date_of(top.key), top.id))
    }

    /// Places `e` at hole `i` or above it, moving the parents it precedes down.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / 2;
            let pe = self.entries[parent];
            if !e.before(&pe) {
                break;
            }
            self.entries[i] = pe;
            self.pos[pe.id as usize] = i as u32;
            i = parent;
        }
        self.entries[i] = e;
        self.pos[e.id as usize] = i as u32;
    }

    /// Places `e` at hole `i` or below it, moving the smallest children up.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.entries.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.entries[r].before(&self.entries[l]) {
                r
            } else {
                l
            };
            let ce = self.entries[c];
            if !ce.before(&e) {
                break;
            }
            self.entries[i] = ce;
            self.pos[ce.id as usize] = i as u32;
            i = c;
        }
        self.entries[i] = e;
        self.pos[e.id as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The key keeps `f64::total_cmp`'s order and gives the date back bit for bit.
    #[test]
    fn keys_order_and_invert_dates() {
        let dates = [
            f64::NEG_INFINITY,
            -2.5,
            -1e-300,
            -0.0,
            0.0,
            1e-300,
            1.0,
            2.5,
            f64::INFINITY,
        ];
        for w in dates.windows(2) {
            assert!(key_of(w[0]) < key_of(w[1]), "{} before {}", w[0], w[1]);
        }
        for d in dates.into_iter().chain([f64::NAN]) {
            assert_eq!(date_of(key_of(d)).to_bits(), d.to_bits());
        }
    }

    /// Running out of sequence numbers renumbers the entries without changing the pop order:
    /// ties still pop in insertion order across the renumbering.
    #[test]
    fn renumbering_keeps_the_order() {
        let mut h = IndexedHeap::new();
        h.next_seq = u32::MAX - 3;
        for (id, date) in [(1, 2.0), (2, 1.0), (3, 2.0)] {
            h.set(id, date);
        }
        // The next insertions cross the end of the numbers.
        for (id, date) in [(4, 1.0), (5, 2.0), (6, 0.5)] {
            h.set(id, date);
        }
        assert!(h.next_seq < 10, "renumbered: next_seq = {}", h.next_seq);
        let order: Vec<u32> = std::iter::from_fn(|| h.pop().map(|(_, id)| id)).collect();
        assert_eq!(order, vec![6, 2, 4, 1, 3, 5]);
    }

    /// The module doc's example, plus removals: in-order dates go to the first run, an earlier
    /// one opens the second, one earlier than both runs' last entries goes to the heap;
    /// removing a run's front and a middle entry, and moving a run entry, keep the pop order
    /// of a single heap.
    #[test]
    fn the_runs_and_the_heap_pop_in_one_order() {
        let mut h = IndexedHeap::new();
        for (id, date) in [(1, 1.0), (2, 1.5), (3, 2.0), (4, 1.2), (5, 1.1)] {
            h.set(id, date);
        }
        assert_eq!(h.runs[0].len(), 3, "in-order dates go to the first run");
        assert_eq!(h.runs[1].len(), 1, "1.2 opens the second run");
        assert_eq!(h.entries.len(), 1, "1.1 goes to the heap");
        // Each id's date read back wherever it lives (run or heap); none for an absent id.
        for (id, date) in [(1, 1.0), (2, 1.5), (3, 2.0), (4, 1.2), (5, 1.1)] {
            assert_eq!(h.date(id), Some(date));
        }
        assert_eq!((h.date(6), h.date(1000)), (None, None));
        let order: Vec<(f64, u32)> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(
            order,
            vec![(1.0, 1), (1.1, 5), (1.2, 4), (1.5, 2), (2.0, 3)]
        );
        for (id, date) in [(1, 1.0), (2, 2.0), (3, 3.0), (5, 4.0), (6, 5.0)] {
            h.set(id, date);
        }
        h.remove(1); // the first run's front
        h.remove(3); // in the middle
        h.set(2, 4.5); // moved: before 5.0, the first run's last: the (empty) second run
        h.set(7, 0.5); // before both runs' last entries: the heap
        assert_eq!((h.runs[1].len(), h.entries.len()), (1, 1));
        assert_eq!(h.len(), 4);
        assert_eq!(h.peek(), Some((0.5, 7)));
        let order: Vec<(f64, u32)> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(order, vec![(0.5, 7), (4.0, 5), (4.5, 2), (5.0, 6)]);
        assert!(h.is_empty());
    }

    /// The ids a prefetch reads ahead in each run: `d` places behind its front, `u32::MAX`
    /// past its end or for a removed entry.
    #[test]
    fn ids_ahead_in_the_runs() {
        let mut h = IndexedHeap::new();
        // 1.0, 1.5, 2.0 go to the first run, 1.2 opens the second, 1.1 goes to the heap.
        for (id, date) in [(1, 1.0), (2, 1.5), (3, 2.0), (4, 1.2), (5, 1.1)] {
            h.set(id, date);
        }
        let ahead = |h: &IndexedHeap, d| [h.run_id_at(0, d), h.run_id_at(1, d)];
        let none = u32::MAX;
        assert_eq!(ahead(&h, 0), [1, 4]);
        assert_eq!(ahead(&h, 1), [2, none]);
        assert_eq!(ahead(&h, 2), [3, none]);
        assert_eq!(ahead(&h, 3), [none, none]);
        // A removed entry is not named; popping moves the fronts.
        h.remove(2);
        assert_eq!(ahead(&h, 1), [none, none]);
        assert_eq!(h.pop(), Some((1.0, 1)));
        assert_eq!(ahead(&h, 0), [3, 4], "the removed 1.5 was skipped");
    }

    /// `pop_if` pops the earliest entry wherever it lives (heap or run) only when the test
    /// accepts its date, and otherwise leaves everything in place.
    #[test]
    fn pop_if_takes_the_earliest_only_when_accepted() {
        let mut h = IndexedHeap::new();
        // 1.0, 1.5, 2.0 go to the first run, 1.2 opens the second, 1.1 goes to the heap.
        for (id, date) in [(1, 1.0), (2, 1.5), (3, 2.0), (4, 1.2), (5, 1.1)] {
            h.set(id, date);
        }
        let upto = |limit: f64| move |d: f64| d <= limit;
        assert_eq!(
            h.pop_if(upto(1.15)),
            Some((1.0, 1)),
            "the first run's front"
        );
        assert_eq!(h.pop_if(upto(1.15)), Some((1.1, 5)), "the heap's top");
        assert_eq!(h.pop_if(upto(1.15)), None, "1.2 is after the limit");
        assert_eq!(
            (h.len(), h.date(4)),
            (3, Some(1.2)),
            "refused: nothing moved"
        );
        assert_eq!(
            h.pop_if(upto(1.2)),
            Some((1.2, 4)),
            "the second run's front"
        );
        let rest: Vec<(f64, u32)> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(rest, vec![(1.5, 2), (2.0, 3)]);
        assert_eq!(h.pop_if(|_| true), None, "empty");
    }

    #[test]
    fn equal_dates_pop_in_insertion_order() {
        let mut h = IndexedHeap::new();
        h.set(5, 1.0);
        h.set(2, 1.0);
        h.set(9, 0.5);
        h.set(7, 1.0);
        let order: Vec<u32> = std::iter::from_fn(|| h.pop().map(|(_, id)| id)).collect();
        assert_eq!(order, vec![9, 5, 2, 7]);
    }

    /// One heap operation of a proptest.
    enum Op {
        Set(u32, f64),
        Remove(u32),
        Pop,
    }

    /// Applies `ops` to a heap and to a list sorted by (date, insertion number) at each pop;
    /// every pop and length must agree.
    fn check_against_model(ops: impl Iterator<Item = Op>) -> Result<(), TestCaseError> {
        let mut h = IndexedHeap::new();
        let mut model: Vec<(f64, u64, u32)> = Vec::new();
        let mut seq = 0u64;
        for op in ops {
            match op {
                Op::Set(id, date) => {
                    h.set(id, date);
                    if let Some(e) = model.iter_mut().find(|e| e.2 == id) {
                        if e.0 != date {
                            e.0 = date;
                            e.1 = seq;
                        }
                    } else {
                        model.push((date, seq, id));
                    }
                    seq += 1;
                }
                Op::Remove(id) => {
                    h.remove(id);
                    model.retain(|e| e.2 != id);
                }
                Op::Pop => {
                    model.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    let expected = (!model.is_empty()).then(|| {
                        let e = model.remove(0);
                        (e.0, e.2)
                    });
                    prop_assert_eq!(h.pop(), expected);
                }
            }
            prop_assert_eq!(h.len(), model.len());
        }
        Ok(())
    }

    proptest! {
        /// Mostly increasing dates (as a replay schedules them) with some earlier ones: the run
        /// takes most entries, and the pops still agree with a sorted list.
        #[test]
        fn mostly_in_order_agrees_with_sorted_reference(
            ops in proptest::collection::vec((0u8..4, 0u32..64, 0u32..3), 1..400),
        ) {
            let mut clock = 0.0f64;
            check_against_model(ops.into_iter().map(|(op, id, step)| match op {
                // Later than everything so far, or (step 0) the current clock.
                0 | 1 => {
                    clock += f64::from(step);
                    Op::Set(id, clock)
                }
                2 => Op::Remove(id),
                _ => Op::Pop,
            }))?;
        }

        /// The heap agrees with a sorted list under random set/remove/pop sequences.
        #[test]
        fn agrees_with_sorted_reference(ops in proptest::collection::vec((0u8..3, 0u32..40, 0u32..10), 1..300)) {
            check_against_model(ops.into_iter().map(|(op, id, d)| match op {
                0 => Op::Set(id, f64::from(d)),
                1 => Op::Remove(id),
                _ => Op::Pop,
            }))?;
        }
    }
}
