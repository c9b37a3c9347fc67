//! A memo of one rank's recently decoded lines: a line seen again is not parsed again.
//!
//! # Why
//! A TI trace repeats a handful of lines per rank over and over: a ring rank writes
//! `3 compute 1e6`, `3 send 4 0 10000`, `3 recv 2 0 10000` for every iteration, a stencil rank
//! its compute, four `irecv`, four `isend` and a `waitall`. Parsing a line (fields, rank, keyword,
//! numbers) costs about 100 ns; on the 16-rank ring of `validation/bench` the decoder thread
//! needed 0.23 s of CPU against the replay's 0.30 s, and the replay caught up with it and
//! waited. With the memo the decoder's CPU time falls by about half and the ring replays 6 %
//! faster (24 % on one core, `--no-decode-ahead`; `validation/bench/SCALING.md`, session 20).
//!
//! # How
//! [`LineMemo`] is a small set-associative table ([`WAYS`] entries per set) from a line's text
//! (its bytes without the newline, at most [`MEMO_TEXT_BYTES`]) to the [`Record`] parsing it
//! gave. A lookup hashes the text (FxHash), compares it with the entries of its set (their
//! lengths first), and clones the record of the one that matches, which moves to the front of
//! its set's order of last use (a permutation of the set's ways, 4 bytes: the entries
//! themselves, 96 bytes each, never move; rotating them instead cost 124 instructions a
//! lookup on the ring). A miss is parsed by the caller and stored in place of the set's least
//! recently used line. The table starts with one set and doubles (up to [`MAX_SETS`]) each
//! time its stores have dropped [`GROW_AFTER`] lines: a rank pays for entries only when its
//! lines need them. Each entry also names the entry read after it last time: a rank's lines
//! come in the same cycle iteration after iteration, so a lookup first compares the line with
//! the entry that followed the previous one, and hashes and searches its set only when that
//! prediction fails (a stale prediction, its entry since given to another line, just fails
//! the comparison).
//!
//! Decoding a line is a pure function of its text, the world size and the communicators the
//! rank defined before it, and a communicator once defined keeps its size (`comm_def` of a
//! defined id is an error): a record read from the memo is the one parsing would give. Only
//! lines that parsed to an action are stored, and never a `comm_def` (decoding it defines a
//! communicator: the reader must see it); blank, comment and malformed lines are parsed every
//! time, so errors are reported as before.
//!
//! # Example
//! A ring rank reads `3 compute 1e6`, `3 send 4 0 10000`, `3 recv 2 0 10000` in a loop: the
//! first iteration stores the three lines in the single set of four entries, and every later
//! read is a hit. A stencil rank reads a compute, four `irecv`, four `isend` and a `waitall`
//! (10 distinct lines): in its first iterations lines drop each other from the one set, the
//! table doubles after four drops (2 sets, 8 entries) and again (4 sets, 16 entries) until
//! no set holds more than four of the ten; from then on every read is a hit, and from the
//! second such iteration on every hit is the predicted entry (callgrind, one thread, with the
//! word-at-a-time newline scan of `lines`: the 16-rank ring 1,885 -> 1,858 M instructions,
//! the 64-rank stencil 1,864 -> 1,830 M).
//!
//! A full table takes `WAYS × sets` entries of 96 bytes per rank ([`sets_for`] caps the
//! sets so that all ranks' tables fit in [`MEMO_BUDGET_BYTES`]; no memo at 65,536 ranks).

use std::hash::Hasher;

use rustc_hash::FxHasher;

use crate::action::Action;
use crate::parse::Record;

/// The longest line text (newline excluded) the memo stores: `65535 isend 65279 0 40000` is 25
/// bytes; longer lines are parsed every time.
pub const MEMO_TEXT_BYTES: usize = 32;

/// The memory all ranks' memos may take together, at most: the entries per rank shrink with the
/// rank count (see [`sets_for`]).
pub const MEMO_BUDGET_BYTES: usize = 16 << 20;

/// Sets per rank at most.
pub const MAX_SETS: usize = 8;

/// Entries per set.
pub const WAYS: usize = 4;

/// A new set's order of last use: its ways in index order (all empty).
const FIRST_ORDER: [u8; WAYS] = [0, 1, 2, 3];

/// One stored line.
#[derive(Debug, Clone)]
struct Entry {
    /// Length of the text; 0 for an empty entry (a stored line is never empty).
    len: u8,
    /// The entry (index in [`LineMemo::entries`]) whose line followed this one the last time
    /// this one was read, [`NO_ENTRY`] if none: the prediction of the next lookup.
    next: u8,
    text: [u8; MEMO_TEXT_BYTES],
    record: Record,
}

/// No entry ([`Entry::next`], [`LineMemo::last`]).
const NO_ENTRY: u8 = u8::MAX;
const _: () = assert!(
    WAYS * MAX_SETS < NO_ENTRY as usize,
    "an entry index fits a u8"
);

impl Entry {
    /// An empty entry (`record` fills the field; it is never read).
    fn empty(record: &Record) -> Self {
        Entry {
            len: 0,
            next: NO_ENTRY,
            text: [0; MEMO_TEXT_BYTES],
            record: record.clone(),
        }
    }

    fn set(&mut self, text: &[u8], record: &Record) {
        self.len = text.len() as u8;
        self.next = NO_ENTRY;
        self.text[..text.len()].copy_from_slice(text);
        self.record = record.clone();
    }

    #[inline]
    fn holds(&self, text: &[u8]) -> bool {
        usize::from(self.len) == text.len() && same_text(&self.text[..text.len()], text)
    }
}

/// The most sets of a rank's memo when `nranks` ranks each keep one: a power of two, at most
/// [`MAX_SETS`], such that all full tables fit in [`MEMO_BUDGET_BYTES`]; 0 (no memo) when not
/// one set would fit. 8 sets up to 4,096 ranks, 2 at 16,384, none at 65,536.
pub fn sets_for(nranks: u32) -> usize {
    let per_rank = MEMO_BUDGET_BYTES / (nranks.max(1) as usize);
    let sets = per_rank / (WAYS * std::mem::size_of::<Entry>());
    if sets == 0 {
        return 0;
    }
    // The largest power of two not above `sets`.
    (1usize << (usize::BITS - 1 - sets.leading_zeros())).min(MAX_SETS)
}

/// A rank's memo of recently decoded lines (module doc).
#[derive(Debug, Clone)]
pub struct LineMemo {
    /// `WAYS * sets` entries, set `s` at `WAYS·s ..`; empty until the first store.
    entries: Vec<Entry>,
    /// Per set, its ways in order of last use (most recent first).
    order: Vec<[u8; WAYS]>,
    sets: usize,
    /// The most sets the table may grow to (0: the memo is disabled).
    max_sets: usize,
    /// Stores that dropped a line since the table last grew.
    evictions: usize,
    /// The entry of the line read last (found or stored), [`NO_ENTRY`] if none.
    last: u8,
    /// Lookups answered by the prediction.
    #[cfg(test)]
    predicted_hits: usize,
}

impl LineMemo {
    /// A memo of at most `max_sets` sets (a power of two; 0 disables it: every lookup misses,
    /// nothing is stored). It starts with one set and doubles whenever its stores have dropped
    /// [`GROW_AFTER`] lines since it last grew, so that a rank with three distinct
    /// lines keeps one set and one with a dozen grows to 4 or 8.
    pub fn new(max_sets: usize) -> Self {
        debug_assert!(max_sets == 0 || max_sets.is_power_of_two());
        LineMemo {
            entries: Vec::new(),
            order: Vec::new(),
            sets: 1,
            max_sets,
            evictions: 0,
            last: NO_ENTRY,
            #[cfg(test)]
            predicted_hits: 0,
        }
    }

    /// The set of `text`'s hash among `sets`.
    #[inline]
    fn set_of(text: &[u8], sets: usize) -> usize {
        if sets == 1 {
            return 0;
        }
        let mut h = FxHasher::default();
        h.write(text);
        // Fibonacci hashing: the top bits of the product, which every bit of the hash feeds
        // (the FxHash's own bits are poorly spread for texts differing in one or two digits).
        let bits = sets.trailing_zeros();
        (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The record `line` (as read, with its newline if any) decoded to when it was stored, if
    /// it is still in the memo.
    #[inline]
    pub fn lookup(&mut self, line: &str) -> Option<Record> {
        if self.entries.is_empty() {
            return None;
        }
        let Some(text) = storable(line) else {
            self.last = NO_ENTRY;
            return None;
        };
        let predicted = match self.entries.get(usize::from(self.last)) {
            Some(e) => usize::from(e.next),
            None => usize::from(NO_ENTRY),
        };
        let (si, way) = match self.entries.get(predicted) {
            Some(e) if e.holds(text) => {
                #[cfg(test)]
                {
                    self.predicted_hits += 1;
                }
                (predicted / WAYS, predicted % WAYS)
            }
            _ => {
                let si = Self::set_of(text, self.sets);
                let set = &self.entries[WAYS * si..WAYS * (si + 1)];
                // A miss keeps `last`: the caller stores the line next, after it.
                let way = set.iter().position(|e| e.holds(text))?;
                self.follows(WAYS * si + way);
                (si, way)
            }
        };
        self.last = (WAYS * si + way) as u8;
        // Move to the front of the order of last use.
        let order = &mut self.order[si];
        if let Some(k) = order.iter().position(|&w| usize::from(w) == way) {
            to_front(order, k);
        }
        Some(self.entries[WAYS * si + way].record.clone())
    }

    /// Records that the line of entry `i` was read right after the last one.
    #[inline]
    fn follows(&mut self, i: usize) {
        if let Some(e) = self.entries.get_mut(usize::from(self.last)) {
            e.next = i as u8;
        }
    }

    /// Stores the record `line` decoded to (a line it does not store is left out: too long, a
    /// `comm_def`, or the memo is disabled).
    pub fn store(&mut self, line: &str, record: &Record) {
        if self.max_sets == 0 || matches!(record.action, Action::CommDef { .. }) {
            self.last = NO_ENTRY;
            return;
        }
        let Some(text) = storable(line) else {
            self.last = NO_ENTRY;
            return;
        };
        if self.entries.is_empty() {
            self.entries = vec![Entry::empty(record); WAYS * self.sets];
            self.order = vec![FIRST_ORDER; self.sets];
        } else if self.evictions >= GROW_AFTER && self.sets < self.max_sets {
            self.grow(record);
        }
        let i = self.put(text, record);
        self.follows(i);
        self.last = i as u8;
    }

    /// Puts `text` in place of its set's least recently used line, first in the set's order;
    /// returns the entry's index.
    fn put(&mut self, text: &[u8], record: &Record) -> usize {
        let si = Self::set_of(text, self.sets);
        let order = &mut self.order[si];
        let i = WAYS * si + usize::from(order[WAYS - 1]);
        let victim = &mut self.entries[i];
        if victim.len > 0 {
            self.evictions += 1;
        }
        victim.set(text, record);
        to_front(order, WAYS - 1);
        i
    }

    /// Doubles the sets, keeping every stored line (the most recent of a set stays first).
    fn grow(&mut self, any: &Record) {
        let sets = 2 * self.sets;
        let old = std::mem::replace(&mut self.entries, vec![Entry::empty(any); WAYS * sets]);
        let old_order = std::mem::replace(&mut self.order, vec![FIRST_ORDER; sets]);
        self.sets = sets;
        // Least recent first (each set's last in its order, then the one before, ...): a
        // set's most recent line is put last, so it stays first. The table is twice as large:
        // a line never drops another here.
        for pos in (0..WAYS).rev() {
            for (si, order) in old_order.iter().enumerate() {
                let e = &old[WAYS * si + usize::from(order[pos])];
                if e.len > 0 {
                    self.put(&e.text[..usize::from(e.len)], &e.record);
                }
            }
        }
        self.evictions = 0;
        // The entries moved: no prediction survives.
        self.last = NO_ENTRY;
    }
}

/// `a == b` for two texts of the same length (at most [`MEMO_TEXT_BYTES`]), 8 bytes at a time
/// (the last word overlapping the one before when the length is not a multiple of 8), without
/// the library call a slice comparison makes.
#[inline]
fn same_text(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let n = a.len();
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let word = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().unwrap_or_default());
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    word(a, n - 8) == word(b, n - 8)
}

/// Moves `order[k]` to the front, the ones before it one place back (`order[..=k]
/// .rotate_right(1)`, which costs about 80 instructions on four bytes where this costs a few).
#[inline]
fn to_front(order: &mut [u8; WAYS], k: usize) {
    let w = order[k];
    for i in (1..=k).rev() {
        order[i] = order[i - 1];
    }
    order[0] = w;
}

/// Stores since the last growth that dropped a line, before the table doubles.
pub const GROW_AFTER: usize = 4;

/// `line`'s bytes without its newline, if 1 to [`MEMO_TEXT_BYTES`] long.
#[inline]
fn storable(line: &str) -> Option<&[u8]> {
    let b = line.as_bytes();
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    (!b.is_empty() && b.len() <= MEMO_TEXT_BYTES).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_line;

    fn rec(line: &str) -> Record {
        parse_line(line, 8).unwrap().unwrap()
    }

    #[test]
    fn a_stored_line_is_found_with_or_without_its_newline() {
        let mut m = LineMemo::new(4);
        let line = "3 send 4 0 10000\n";
        assert_eq!(m.lookup(line), None);
        m.store(line, &rec(line));
        let hit = m.lookup("3 send 4 0 10000").unwrap();
        assert_eq!(
            hit.action,
            Action::Send {
                dst: 4,
                tag: 0,
                count: 10000,
                dt: None,
                blocking: true
            }
        );
        assert_eq!(hit.rank, 3);
        // A different line of the same length is not mistaken for it.
        assert_eq!(m.lookup("3 send 5 0 10000\n"), None);
    }

    #[test]
    fn a_full_set_drops_its_least_recently_used_line() {
        // One set of four: the four most recently used lines stay.
        let mut m = LineMemo::new(1);
        let l: Vec<String> = (0..5).map(|i| format!("0 send {i} 0 10")).collect();
        for x in &l[..4] {
            m.store(x, &rec(x));
        }
        // Use order, most recent first: 0, 3, 2, 1 (the hit on line 0 moves it to the front).
        assert!(m.lookup(&l[0]).is_some());
        m.store(&l[4], &rec(&l[4])); // drops line 1, the least recently used
        assert!(m.lookup(&l[1]).is_none());
        for x in [&l[0], &l[2], &l[3], &l[4]] {
            assert_eq!(m.lookup(x), Some(rec(x)));
        }
    }

    #[test]
    fn long_lines_comm_defs_and_a_disabled_memo_store_nothing() {
        let mut m = LineMemo::new(2);
        let long = "0 isend 1 0 1000000000000 @cs=123456789";
        assert!(long.len() > MEMO_TEXT_BYTES);
        m.store(long, &rec(long));
        assert_eq!(m.lookup(long), None);
        let def = "0 comm_def 5 3 0 1 2";
        m.store(def, &rec(def));
        assert_eq!(m.lookup(def), None);
        let mut off = LineMemo::new(0);
        let a = "0 compute 1e6";
        off.store(a, &rec(a));
        assert_eq!(off.lookup(a), None);
    }

    #[test]
    fn a_table_grows_until_a_dozen_cycling_lines_all_hit() {
        let lines: Vec<String> = (0..12)
            .map(|i| format!("0 isend {} {i} 40000", i % 8))
            .collect();
        let mut m = LineMemo::new(MAX_SETS);
        let mut hits_per_cycle = Vec::new();
        for _cycle in 0..12 {
            let mut hits = 0;
            for l in &lines {
                match m.lookup(l) {
                    Some(r) => {
                        assert_eq!(r, rec(l), "a hit gives the record parsing gives");
                        hits += 1;
                    }
                    None => m.store(l, &rec(l)),
                }
            }
            hits_per_cycle.push(hits);
        }
        // The first cycle only stores; the table then grows (1, 2, 4, 8 sets at most: 32
        // entries for 12 lines) until the lines stop evicting each other.
        assert_eq!(hits_per_cycle[0], 0);
        assert!(m.sets > 1 && m.sets <= MAX_SETS, "{} sets", m.sets);
        assert_eq!(*hits_per_cycle.last().unwrap(), 12, "{hits_per_cycle:?}");
    }

    #[test]
    fn a_cycle_of_lines_is_predicted_and_a_stale_prediction_is_checked() {
        // A ring rank's three lines: the first pass stores them (each linked after the one
        // before), the second finds the first by its set (nothing was read before it) and
        // links it after the third; from then on every lookup is the predicted entry.
        let l = ["3 compute 1e6", "3 recv 2 0 10000", "3 send 4 0 10000"];
        let mut m = LineMemo::new(1);
        for x in l {
            assert_eq!(m.lookup(x), None);
            m.store(x, &rec(x));
        }
        for cycle in 0..3 {
            for x in l {
                assert_eq!(m.lookup(x), Some(rec(x)));
            }
            assert_eq!(m.predicted_hits, 3 * cycle + 2, "after cycle {cycle}");
        }
        // The predicted line (the compute, after the send) is dropped for another: the
        // lookup of the new line is not mistaken for it, the compute is stored again.
        let other = "3 compute 2e6";
        let mut full = LineMemo::new(1);
        for x in l.iter().chain(&["3 sleep 1", "3 sleep 2"]) {
            full.store(x, &rec(x));
        }
        // Ways in use order: sleep 2, sleep 1, send, recv (the compute was dropped).
        assert_eq!(full.lookup(l[0]), None);
        full.store(other, &rec(other));
        assert_eq!(full.lookup(other), Some(rec(other)));
        assert_eq!(full.lookup(l[0]), None);
    }

    #[test]
    fn same_text_compares_every_byte_at_every_length() {
        for n in 1..=MEMO_TEXT_BYTES {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
            assert!(same_text(&a, &a.clone()));
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 1;
                assert!(!same_text(&a, &b), "length {n}, byte {at} differs");
            }
        }
    }

    #[test]
    fn to_front_moves_one_way_and_keeps_the_others_in_order() {
        let mut o = FIRST_ORDER;
        to_front(&mut o, 2);
        assert_eq!(o, [2, 0, 1, 3]);
        to_front(&mut o, 0);
        assert_eq!(o, [2, 0, 1, 3]);
        to_front(&mut o, 3);
        assert_eq!(o, [3, 2, 0, 1]);
    }

    #[test]
    fn sets_shrink_with_the_rank_count() {
        let entry = std::mem::size_of::<Entry>();
        assert!((96..=128).contains(&entry), "{entry} bytes an entry");
        assert_eq!(sets_for(16), MAX_SETS);
        // 16 MiB / 4,096 ranks = 4 KiB a rank: 4096 / (4 × 96..128) = 8..10 sets: 8.
        assert_eq!(sets_for(4096), 8);
        // 1 KiB a rank: 2 sets; 256 bytes a rank: not one set of four entries.
        assert_eq!(sets_for(16_384), 2);
        assert_eq!(sets_for(65_536), 0);
    }
}
