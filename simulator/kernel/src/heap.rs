//! Indexed binary min-heap of event dates, with a run of in-order insertions beside it.
//!
//! Keys are `(date, seq)`: equal dates pop in insertion order (`seq` counts insertions), so runs
//! are deterministic. Each item (a `u32` id, typically an activity slot) is in the heap at most
//! once; a back-index gives O(log n) `update` and `remove`, which flow completion dates need after
//! every re-solve.
//!
//! # The run
//! Many events are scheduled in the order they happen: latency phases of one message size
//! (`now + L`, `now` never decreasing), the members of a group of equal flows (virtual dates
//! `V + u`), executions of one length. An entry whose `(date, seq)` comes after the last entry
//! appended to the **run** is appended there (a queue, O(1)) instead of sifted into the binary
//! heap; the earliest entry is the smaller of the run's front and the heap's top, so the pop
//! order is exactly a single heap's. A removed run entry is marked and skipped when it reaches
//! the front. Example: latency ends at 1.0, 1.5, 2.0 go to the run; an execution ending at 1.2
//! comes before 2.0 and goes to the heap; pops give 1.0 (run), 1.2 (heap), 1.5, 2.0 (run). On
//! the 64-rank stencil the main thread executes 6.7 % fewer instructions than with the heap
//! alone, the 1024-rank stencil replays 4 % faster.
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
/// Children per node (see the module doc).
const ARITY: usize = 2;

/// A min-heap of `(date, id)` with a position index per id, and beside it a **run**: entries
/// inserted in increasing `(date, seq)` order, kept in a queue (see the module doc).
#[derive(Debug, Default)]
pub struct IndexedHeap {
    entries: Vec<Entry>,
    /// Per id: its index in `entries`, or [`IN_RUN`] | its absolute index in the run, or
    /// [`ABSENT`].
    pos: Vec<u32>,
    next_seq: u32,
    /// The run: `run[run_head..]` in increasing `(key, seq)` order; an entry removed from it is
    /// left in place with the id [`GONE`] (skipped when it reaches the front).
    run: Vec<Entry>,
    run_head: usize,
    /// Absolute index of `run[0]` (the run's prefix is dropped from time to time).
    run_base: u32,
    run_live: usize,
}

/// `pos` flag of an entry in the run.
const IN_RUN: u32 = 1 << 31;
/// The id of a run entry removed before reaching the front.
const GONE: u32 = u32::MAX;

impl IndexedHeap {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items. O(1).
    pub fn len(&self) -> usize {
        self.entries.len() + self.run_live
    }

    /// True when no item is scheduled. O(1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of the run's first live entry (always `run_head`: removals and pops move the
    /// head past removed entries).
    #[inline]
    fn run_front(&self) -> Option<usize> {
        (self.run_head < self.run.len()).then_some(self.run_head)
    }

    /// Marks run entry `i` (of `id`) removed, and moves the head past removed entries.
    fn unrun(&mut self, id: u32, i: usize) {
        self.run[i].id = GONE;
        self.run_live -= 1;
        self.pos[id as usize] = ABSENT;
        self.skip_gone();
    }

    /// Moves the run's head past removed entries.
    #[inline]
    fn skip_gone(&mut self) {
        while self.run_head < self.run.len() && self.run[self.run_head].id == GONE {
            self.run_head += 1;
        }
    }

    /// The earliest entry: the run's front (with its index) or the heap's top (`None`).
    #[inline]
    fn first(&self) -> Option<(Entry, Option<usize>)> {
        let r = self.run_front();
        match (r, self.entries.first()) {
            (Some(i), Some(h)) if h.before(&self.run[i]) => Some((*h, None)),
            (Some(i), _) => Some((self.run[i], Some(i))),
            (None, Some(h)) => Some((*h, None)),
            (None, None) => None,
        }
    }

    /// Earliest `(date, id)`. O(1) amortized.
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.first().map(|(e, _)| (date_of(e.key), e.id))
    }

    /// True if `id` is scheduled. O(1).
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != ABSENT)
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

    /// Gives the entries (heap and run) sequence numbers 0, 1, ... in their `(date, seq)`
    /// order, which keeps every comparison's outcome (so the heap order, the run's order and
    /// the pop order).
    fn renumber(&mut self) {
        let head = self.run_head;
        let mut all: Vec<(u64, u32, bool, usize)> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.key, e.seq, false, i))
            .chain(
                self.run[head..]
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.id != GONE)
                    .map(|(i, e)| (e.key, e.seq, true, head + i)),
            )
            .collect();
        all.sort_unstable_by_key(|&(key, seq, _, _)| (key, seq));
        for (rank, &(_, _, in_run, i)) in all.iter().enumerate() {
            if in_run {
                self.run[i].seq = rank as u32;
            } else {
                self.entries[i].seq = rank as u32;
            }
        }
        self.next_seq = all.len() as u32;
    }

    /// Schedules `id` at `date`, or moves it there if already scheduled (it then keeps its place
    /// among equal dates only if the date is unchanged). O(log n); O(1) when it comes after
    /// every entry of the run.
    pub fn set(&mut self, id: u32, date: f64) {
        if self.pos.len() <= id as usize {
            self.pos.resize(id as usize + 1, ABSENT);
        }
        let key = key_of(date);
        let p = self.pos[id as usize];
        if p != ABSENT && p & IN_RUN != 0 {
            let i = (p & !IN_RUN) as usize - self.run_base as usize;
            if date_of(self.run[i].key) == date {
                return;
            }
            self.unrun(id, i);
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
        // After the run's last entry (live or not: the run stays sorted): append to the run.
        if self.run.last().is_none_or(|last| last.before(&e)) {
            self.push_run(e);
        } else {
            self.entries.push(e);
            let i = self.entries.len() - 1;
            self.sift_up(i, e);
        }
    }

    /// Appends `e` to the run, dropping the consumed prefix once it is most of the vector.
    fn push_run(&mut self, e: Entry) {
        if self.run_head >= 1024 && self.run_head * 2 >= self.run.len() {
            self.run.drain(..self.run_head);
            self.run_base += self.run_head as u32;
            self.run_head = 0;
        }
        if self.run_live == 0 {
            // Empty: restart at the front (absolute indices go on growing).
            self.run_base += self.run.len() as u32;
            self.run.clear();
            self.run_head = 0;
        }
        if self.run_base >= IN_RUN / 2 {
            self.rebase_run();
        }
        let abs = self.run_base + self.run.len() as u32;
        self.run.push(e);
        self.run_live += 1;
        self.pos[e.id as usize] = IN_RUN | abs;
    }

    /// Renumbers the run's absolute indices from 0 (before they reach [`IN_RUN`]).
    fn rebase_run(&mut self) {
        self.run.drain(..self.run_head);
        self.run_head = 0;
        self.run_base = 0;
        for (i, e) in self.run.iter().enumerate() {
            if e.id != GONE {
                self.pos[e.id as usize] = IN_RUN | i as u32;
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
            let i = (p & !IN_RUN) as usize - self.run_base as usize;
            self.unrun(id, i);
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
            if p > 0 && last.before(&self.entries[(p - 1) / ARITY]) {
                self.sift_up(p, last);
            } else {
                self.sift_down(p, last);
            }
        }
    }

    /// Removes and returns the earliest item. O(log n); O(1) from the run.
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        let (top, in_run) = self.first()?;
        if let Some(i) = in_run {
            self.run_head = i + 1;
            self.run_live -= 1;
            self.pos[top.id as usize] = ABSENT;
            self.skip_gone();
        } else {
            self.remove_at(top.id, 0);
        }
        Some((date_of(top.key), top.id))
    }

    /// Places `e` at hole `i` or above it, moving the parents it precedes down.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
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
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let last = (first + ARITY).min(n);
            let mut c = first;
            let mut ce = self.entries[first];
            for k in first + 1..last {
                let ke = self.entries[k];
                if ke.before(&ce) {
                    c = k;
                    ce = ke;
                }
            }
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

    /// The module doc's example, plus removals: in-order dates go to the run, an earlier one
    /// to the heap; removing the run's front and a middle entry, and moving a run entry, keep
    /// the pop order of a single heap.
    #[test]
    fn the_run_and_the_heap_pop_in_one_order() {
        let mut h = IndexedHeap::new();
        for (id, date) in [(1, 1.0), (2, 1.5), (3, 2.0)] {
            h.set(id, date);
        }
        assert_eq!(h.run_live, 3, "in-order dates go to the run");
        h.set(4, 1.2);
        assert_eq!(h.entries.len(), 1, "an earlier date goes to the heap");
        let order: Vec<(f64, u32)> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(order, vec![(1.0, 1), (1.2, 4), (1.5, 2), (2.0, 3)]);
        for (id, date) in [(1, 1.0), (2, 2.0), (3, 3.0), (5, 4.0), (6, 5.0)] {
            h.set(id, date);
        }
        h.remove(1); // the run's front
        h.remove(3); // in the middle
        h.set(2, 4.5); // moved: leaves its place, goes after 4.0 (and before 5.0: the heap)
        h.set(7, 0.5); // earliest of all: the heap
        assert_eq!(h.len(), 4);
        assert_eq!(h.peek(), Some((0.5, 7)));
        let order: Vec<(f64, u32)> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(order, vec![(0.5, 7), (4.0, 5), (4.5, 2), (5.0, 6)]);
        assert!(h.is_empty());
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
