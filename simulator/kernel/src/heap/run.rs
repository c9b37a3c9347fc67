//! A run: entries appended in increasing `(date, seq)` order, popped from the front (see the
//! parent module's "Runs"). Positions are absolute indices (the consumed prefix is dropped from
//! time to time without renumbering the live entries), so that the heap's position index can
//! name a run entry.

use super::{Entry, ABSENT};

/// The id of an entry removed before reaching the front.
pub(super) const GONE: u32 = u32::MAX;
/// Absolute indices stay below this (the position index keeps run number and flag above).
pub(super) const INDEX_LIMIT: u32 = 1 << 28;

#[derive(Debug, Default)]
pub(super) struct Run {
    /// `entries[head..]` in increasing `(key, seq)` order; `entries[head]` is live (or the run
    /// is empty).
    entries: Vec<Entry>,
    head: usize,
    /// Absolute index of `entries[0]`.
    base: u32,
    live: usize,
    /// The key of the last entry appended, 0 (below every key) while the run is empty.
    tail_key: u64,
}

impl Run {
    /// Live entries.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// The earliest live entry.
    #[inline]
    pub(super) fn front(&self) -> Option<&Entry> {
        self.entries.get(self.head)
    }

    /// The id of the entry `d` places behind the front, [`GONE`] past the end or if removed.
    #[inline]
    pub(super) fn id_ahead(&self, d: usize) -> u32 {
        self.entries.get(self.head + d).map_or(GONE, |e| e.id)
    }

    /// True if `e`, a new entry (its `seq` above every entry's, [`super::IndexedHeap::set`]),
    /// may be appended: the run is empty or `e` comes after its last entry, which with a
    /// larger `seq` means a key no smaller.
    #[inline]
    pub(super) fn accepts(&self, e: &Entry) -> bool {
        e.key >= self.tail_key
    }

    /// Appends `e` (which it [`Run::accepts`]); `pos` is the heap's position index, written
    /// with `tag | absolute index` for `e` (and for every live entry if they are renumbered).
    #[inline]
    pub(super) fn push(&mut self, e: Entry, pos: &mut [u32], tag: u32) {
        if self.live == 0
            || (self.head >= 1024 && self.head * 2 >= self.entries.len())
            || self.base + self.entries.len() as u32 >= INDEX_LIMIT
        {
            self.make_room(pos, tag);
        }
        pos[e.id as usize] = tag | (self.base + self.entries.len() as u32);
        self.entries.push(e);
        self.live += 1;
        self.tail_key = e.key;
    }

    /// [`Run::push`]'s upkeep, before an append: an empty run restarts at the front, a consumed
    /// prefix of at least 1,024 entries and half the run is dropped, and absolute indices are
    /// renumbered from 0 before they reach [`INDEX_LIMIT`].
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, pos: &mut [u32], tag: u32) {
        if self.live == 0 {
            // Empty: restart at the front (absolute indices go on growing).
            self.base += self.entries.len() as u32;
            self.entries.clear();
            self.head = 0;
        } else if self.head >= 1024 && self.head * 2 >= self.entries.len() {
            self.entries.drain(..self.head);
            self.base += self.head as u32;
            self.head = 0;
        }
        if self.base + self.entries.len() as u32 >= INDEX_LIMIT {
            self.entries.drain(..self.head);
            self.head = 0;
            self.base = 0;
            for (i, x) in self.entries.iter().enumerate() {
                if x.id != GONE {
                    pos[x.id as usize] = tag | i as u32;
                }
            }
        }
    }

    /// The entry at absolute index `abs`.
    pub(super) fn at(&self, abs: u32) -> &Entry {
        &self.entries[(abs - self.base) as usize]
    }

    /// Removes the entry at absolute index `abs` (of id `id`).
    pub(super) fn remove(&mut self, abs: u32, pos: &mut [u32]) {
        let i = (abs - self.base) as usize;
        pos[self.entries[i].id as usize] = ABSENT;
        self.entries[i].id = GONE;
        self.live -= 1;
        self.emptied();
        self.skip_gone();
    }

    /// Removes and returns the front entry.
    pub(super) fn pop_front(&mut self, pos: &mut [u32]) -> Entry {
        let e = self.entries[self.head];
        pos[e.id as usize] = ABSENT;
        self.head += 1;
        self.live -= 1;
        self.emptied();
        self.skip_gone();
        e
    }

    /// An empty run accepts any entry.
    #[inline]
    fn emptied(&mut self) {
        if self.live == 0 {
            self.tail_key = 0;
        }
    }

    #[inline]
    fn skip_gone(&mut self) {
        while self.head < self.entries.len() && self.entries[self.head].id == GONE {
            self.head += 1;
        }
    }

    /// The live entries (for renumbering their sequence numbers).
    pub(super) fn live_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        self.entries[self.head..]
            .iter_mut()
            .filter(|e| e.id != GONE)
    }
}
