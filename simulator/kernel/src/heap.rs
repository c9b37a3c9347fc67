//! Indexed binary min-heap of event dates.
//!
//! Keys are `(date, seq)`: equal dates pop in insertion order (`seq` is a global counter), so runs
//! are deterministic. Each item (a `u32` id, typically an activity slot) is in the heap at most
//! once; a back-index gives O(log n) `update` and `remove`, which flow completion dates need after
//! every re-solve.

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// `date` mapped to an integer of the same order (IEEE total order), so that a comparison
    /// is two integer compares.
    key: i64,
    seq: u64,
    date: f64,
    id: u32,
}

impl Entry {
    fn new(date: f64, seq: u64, id: u32) -> Self {
        let bits = date.to_bits() as i64;
        // f64::total_cmp's transformation: flips the magnitude bits of negative numbers.
        let key = bits ^ ((((bits >> 63) as u64) >> 1) as i64);
        Entry { key, seq, date, id }
    }

    #[inline]
    fn before(&self, other: &Entry) -> bool {
        (self.key, self.seq) < (other.key, other.seq)
    }
}

const ABSENT: u32 = u32::MAX;

/// A min-heap of `(date, id)` with a position index per id.
#[derive(Debug, Default)]
pub struct IndexedHeap {
    entries: Vec<Entry>,
    pos: Vec<u32>,
    next_seq: u64,
}

impl IndexedHeap {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items. O(1).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no item is scheduled. O(1).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Earliest `(date, id)`. O(1).
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.entries.first().map(|e| (e.date, e.id))
    }

    /// True if `id` is scheduled. O(1).
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != ABSENT)
    }

    /// Schedules `id` at `date`, or moves it there if already scheduled (it then keeps its place
    /// among equal dates only if the date is unchanged). O(log n).
    pub fn set(&mut self, id: u32, date: f64) {
        if self.pos.len() <= id as usize {
            self.pos.resize(id as usize + 1, ABSENT);
        }
        let p = self.pos[id as usize];
        if p != ABSENT {
            let old = self.entries[p as usize];
            if old.date == date {
                return;
            }
            let e = Entry::new(date, self.next_seq, id);
            self.next_seq += 1;
            // A later date (or an equal key with a newer sequence number) can only go down.
            if e.before(&old) {
                self.sift_up(p as usize, e);
            } else {
                self.sift_down(p as usize, e);
            }
        } else {
            let e = Entry::new(date, self.next_seq, id);
            self.next_seq += 1;
            self.entries.push(e);
            let i = self.entries.len() - 1;
            self.sift_up(i, e);
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
        self.pos[id as usize] = ABSENT;
        let p = p as usize;
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

    /// Removes and returns the earliest item. O(log n).
    pub fn pop(&mut self) -> Option<(f64, u32)> {
        let top = self.peek()?;
        self.remove(top.1);
        Some(top)
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

    /// Places `e` at hole `i` or below it, moving the smaller children up.
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

    proptest! {
        /// The heap agrees with a sorted list under random set/remove/pop sequences.
        #[test]
        fn agrees_with_sorted_reference(ops in proptest::collection::vec((0u8..3, 0u32..20, 0u32..10), 1..200)) {
            let mut h = IndexedHeap::new();
            let mut reference: Vec<(f64, u64, u32)> = Vec::new();
            let mut seq = 0u64;
            for (op, id, d) in ops {
                let date = f64::from(d);
                match op {
                    0 => {
                        h.set(id, date);
                        if let Some(e) = reference.iter_mut().find(|e| e.2 == id) {
                            if e.0 != date { e.0 = date; e.1 = seq; }
                        } else {
                            reference.push((date, seq, id));
                        }
                        seq += 1;
                    }
                    1 => {
                        h.remove(id);
                        reference.retain(|e| e.2 != id);
                    }
                    _ => {
                        reference.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                        let expected = if reference.is_empty() { None } else { let e = reference.remove(0); Some((e.0, e.2)) };
                        prop_assert_eq!(h.pop(), expected);
                    }
                }
                prop_assert_eq!(h.len(), reference.len());
            }
        }
    }
}
