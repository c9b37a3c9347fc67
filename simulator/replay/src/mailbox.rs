//! Point-to-point matching: requests, per-(receiver, sender, tag) queues, and transfers.
//!
//! SMPI semantics (reference §4.1): a send matches the oldest pending receive with the same
//! (source, tag) and vice versa, so messages between a pair with one tag arrive in send order.
//! Replay has no wildcards, so the queues are keyed exactly and matching is O(1).

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use crate::comm::Tag;

/// A request slot index.
pub type ReqId = u32;
/// A transfer slot index.
pub type TransferId = u32;

/// One side of a message: what a rank posted and whether it completed.
#[derive(Debug, Clone)]
pub struct Request {
    /// Rank that posted it.
    pub owner: u32,
    /// Send (true) or receive.
    pub is_send: bool,
    /// Destination (send) or source (receive) rank.
    pub peer: u32,
    /// Message tag.
    pub tag: Tag,
    /// Bytes posted (for a receive, `u64::MAX` when the size comes from the sender).
    pub bytes: u64,
    /// Completed.
    pub done: bool,
    /// Its owner is blocked waiting for it.
    pub waited: bool,
    /// Date the transfer started (NaN before).
    pub matched_secs: f64,
    /// For a receive: bytes of the matched send, and whether that send was detached (the
    /// receiver then pays `smpi/or`).
    pub sender_bytes: u64,
    /// See `sender_bytes`.
    pub sender_detached: bool,
}

/// A send waiting in the receiver's queue.
#[derive(Debug, Clone, Copy)]
pub struct PendingSend {
    /// Sender's request, `None` if the send is detached (it completed when posted).
    pub req: Option<ReqId>,
    /// Payload bytes S.
    pub bytes: u64,
    /// Detached send.
    pub detached: bool,
    /// Already moving (`smpi/async-small-thresh`): its transfer.
    pub eager: Option<TransferId>,
    /// Date the send was posted.
    pub posted_secs: f64,
}

/// A message in flight.
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    /// Sender's request if the sender waits for the end of the transfer.
    pub send_req: Option<ReqId>,
    /// Receiver's request once matched.
    pub recv_req: Option<ReqId>,
    /// The bytes have arrived.
    pub done: bool,
    /// Seconds the sender's request completes after the transfer ends
    /// (`timeless/rendezvous-late-wait`, for a rendezvous send whose receiver came late); 0
    /// otherwise.
    pub send_late_wait_secs: f64,
}

#[derive(Debug, Default)]
struct Queues {
    sends: SmallQueue<PendingSend>,
    recvs: SmallQueue<ReqId>,
}

/// A FIFO queue holding its one element inline, spilling to a `VecDeque` from the second on:
/// a (sender, tag) pair rarely has more than one message or receive pending, and an inline
/// one is read with the queues that hold it instead of behind a pointer to a buffer of its
/// own (a cache miss per match at thousands of ranks). Once spilled it stays a `VecDeque`.
#[derive(Debug)]
enum SmallQueue<T> {
    One(Option<T>),
    Many(VecDeque<T>),
}

impl<T> Default for SmallQueue<T> {
    fn default() -> Self {
        SmallQueue::One(None)
    }
}

impl<T> SmallQueue<T> {
    fn push_back(&mut self, x: T) {
        match self {
            SmallQueue::One(slot @ None) => *slot = Some(x),
            SmallQueue::One(slot) => {
                let mut q = VecDeque::with_capacity(4);
                q.extend(slot.take());
                q.push_back(x);
                *self = SmallQueue::Many(q);
            }
            SmallQueue::Many(q) => q.push_back(x),
        }
    }

    fn pop_front(&mut self) -> Option<T> {
        match self {
            SmallQueue::One(slot) => slot.take(),
            SmallQueue::Many(q) => q.pop_front(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            SmallQueue::One(slot) => slot.is_none(),
            SmallQueue::Many(q) => q.is_empty(),
        }
    }

    /// The elements, oldest first.
    fn iter(&self) -> impl Iterator<Item = &T> {
        let (one, many) = match self {
            SmallQueue::One(slot) => (slot.as_ref(), None),
            SmallQueue::Many(q) => (None, Some(q.iter())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

/// How many (source, tag) pairs a rank keeps inline ([`Mailbox`]).
const INLINE_PAIRS: usize = 4;

/// One receiving rank's queues by (source, tag). The first [`INLINE_PAIRS`] pairs the rank
/// uses keep their queues inline, in the rank's own slot of [`Mailboxes`] (the keys side by
/// side, scanned; the queues after them); further pairs go to a hash table. A rank that
/// hears from a few peers (a ring, a stencil's neighbours, most ranks of a tree) then finds
/// its queues without a table's control bytes and bucket, each a cache miss (and a page) of
/// its own at thousands of ranks: on `validation/bench`'s 4,096-rank ring, one table per rank
/// took 13 % of the replay's wall time more.
#[derive(Debug, Default)]
struct Mailbox {
    keys: [(u32, Tag); INLINE_PAIRS],
    n_inline: usize,
    queues: [Queues; INLINE_PAIRS],
    rest: HashMap<(u32, Tag), Queues>,
}

impl Mailbox {
    fn inline_slot(&self, key: (u32, Tag)) -> Option<usize> {
        self.keys[..self.n_inline].iter().position(|&k| k == key)
    }

    fn get(&self, key: (u32, Tag)) -> Option<&Queues> {
        match self.inline_slot(key) {
            Some(i) => Some(&self.queues[i]),
            None => self.rest.get(&key),
        }
    }

    fn get_mut(&mut self, key: (u32, Tag)) -> Option<&mut Queues> {
        match self.inline_slot(key) {
            Some(i) => Some(&mut self.queues[i]),
            None => self.rest.get_mut(&key),
        }
    }

    /// The queues of `key`, made empty if new.
    fn entry(&mut self, key: (u32, Tag)) -> &mut Queues {
        if let Some(i) = self.inline_slot(key) {
            return &mut self.queues[i];
        }
        if self.n_inline < INLINE_PAIRS {
            let i = self.n_inline;
            self.keys[i] = key;
            self.n_inline += 1;
            return &mut self.queues[i];
        }
        self.rest.entry(key).or_default()
    }

    /// Every (source, tag) with its queues, in no particular order.
    fn iter(&self) -> impl Iterator<Item = (&(u32, Tag), &Queues)> {
        self.keys[..self.n_inline]
            .iter()
            .zip(&self.queues)
            .chain(self.rest.iter())
    }
}

/// All matching state of a replay.
///
/// The queues are kept per receiving rank (`boxes[dst]`, a [`Mailbox`] keyed by (source,
/// tag)): a rank's lookups stay in its own slot, which it touched when it last matched,
/// instead of missing the cache in one table of every (receiver, sender, tag) of the run (at
/// 4096 ranks the stencil's 80 k queues, 6 MB).
///
/// Example: rank 5 of a ring receives from rank 4 on tag 0 only: its slot's first key is
/// (4, 0), and `take_send(5, 4, 0)` compares one key and pops the inline pending send, with
/// no table and no queue buffer touched. Rank 0 of a 4096-rank binomial tree hears from 12
/// children: its first four are inline, the other eight in its table.
#[derive(Debug, Default)]
pub struct Mailboxes {
    boxes: Vec<Mailbox>,
    /// Request slots.
    pub reqs: Vec<Request>,
    free_reqs: Vec<ReqId>,
    /// Transfer slots.
    pub transfers: Vec<Transfer>,
    free_transfers: Vec<TransferId>,
}

impl Mailboxes {
    /// Mailboxes for `ranks` receiving ranks (a rank beyond them gets its box when first used).
    pub fn with_ranks(ranks: usize) -> Self {
        let mut boxes = Vec::new();
        boxes.resize_with(ranks, Mailbox::default);
        Mailboxes {
            boxes,
            ..Mailboxes::default()
        }
    }

    fn mailbox(&mut self, dst: u32) -> &mut Mailbox {
        let i = dst as usize;
        if self.boxes.len() <= i {
            self.boxes.resize_with(i + 1, Mailbox::default);
        }
        &mut self.boxes[i]
    }

    /// Allocates a request.
    pub fn new_request(&mut self, r: Request) -> ReqId {
        match self.free_reqs.pop() {
            Some(i) => {
                self.reqs[i as usize] = r;
                i
            }
            None => {
                self.reqs.push(r);
                self.reqs.len() as ReqId - 1
            }
        }
    }

    /// Frees a completed request nobody refers to any more.
    pub fn free_request(&mut self, id: ReqId) {
        self.free_reqs.push(id);
    }

    /// Allocates a transfer.
    pub fn new_transfer(&mut self, t: Transfer) -> TransferId {
        match self.free_transfers.pop() {
            Some(i) => {
                self.transfers[i as usize] = t;
                i
            }
            None => {
                self.transfers.push(t);
                self.transfers.len() as TransferId - 1
            }
        }
    }

    /// Frees a finished transfer nobody refers to any more.
    pub fn free_transfer(&mut self, id: TransferId) {
        self.free_transfers.push(id);
    }

    /// Oldest pending receive posted by `dst` for (`src`, `tag`), removed from its queue.
    pub fn take_recv(&mut self, dst: u32, src: u32, tag: Tag) -> Option<ReqId> {
        let q = self.boxes.get_mut(dst as usize)?.get_mut((src, tag))?;
        q.recvs.pop_front()
    }

    /// Oldest pending send from `src` to `dst` with `tag`, removed from its queue.
    pub fn take_send(&mut self, dst: u32, src: u32, tag: Tag) -> Option<PendingSend> {
        let q = self.boxes.get_mut(dst as usize)?.get_mut((src, tag))?;
        q.sends.pop_front()
    }

    /// True if a send from `src` to `dst` with `tag` waits to be received (what a probe sees).
    pub fn has_send(&self, dst: u32, src: u32, tag: Tag) -> bool {
        self.boxes
            .get(dst as usize)
            .and_then(|b| b.get((src, tag)))
            .is_some_and(|q| !q.sends.is_empty())
    }

    /// Queues a send nobody receives yet.
    pub fn push_send(&mut self, dst: u32, src: u32, tag: Tag, s: PendingSend) {
        self.mailbox(dst).entry((src, tag)).sends.push_back(s);
    }

    /// Queues a receive no send matches yet.
    pub fn push_recv(&mut self, dst: u32, src: u32, tag: Tag, r: ReqId) {
        self.mailbox(dst).entry((src, tag)).recvs.push_back(r);
    }

    /// Sends still queued towards `dst`, as (src, tag, bytes), sorted (for deadlock reports).
    pub fn unmatched_sends_to(&self, dst: u32) -> Vec<(u32, Tag, u64)> {
        let mut v: Vec<(u32, Tag, u64)> = self
            .boxes
            .get(dst as usize)
            .into_iter()
            .flat_map(|b| b.iter())
            .flat_map(|(k, q)| q.sends.iter().map(move |s| (k.0, k.1, s.bytes)))
            .collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(bytes: u64) -> PendingSend {
        PendingSend {
            req: None,
            bytes,
            detached: true,
            eager: None,
            posted_secs: 0.0,
        }
    }

    /// Six (source, tag) pairs towards one rank: four inline, two in the table. Each pair's
    /// sends come out in posting order, and a pair never sees another's.
    #[test]
    fn pairs_beyond_the_inline_ones_keep_their_own_fifo() {
        let mut m = Mailboxes::with_ranks(2);
        let pairs: [(u32, Tag); 6] = [(0, 1), (0, 2), (1, 1), (1, -7), (0, 3), (1, 2)];
        for round in 0..3u64 {
            for (i, &(src, tag)) in pairs.iter().enumerate() {
                m.push_send(1, src, tag, send(100 * i as u64 + round));
            }
        }
        assert_eq!(m.unmatched_sends_to(1).len(), 18);
        for (i, &(src, tag)) in pairs.iter().enumerate() {
            assert!(m.has_send(1, src, tag));
            for round in 0..3u64 {
                let s = m.take_send(1, src, tag).expect("queued");
                assert_eq!(s.bytes, 100 * i as u64 + round);
            }
            assert!(!m.has_send(1, src, tag));
            assert!(m.take_send(1, src, tag).is_none());
        }
        assert!(m.take_send(0, 1, 1).is_none(), "nothing was sent to rank 0");
        m.push_recv(1, 1, 2, 41);
        m.push_recv(1, 1, 2, 42);
        assert_eq!(m.take_recv(1, 1, 2), Some(41));
        assert_eq!(m.take_recv(1, 1, 2), Some(42));
        assert_eq!(m.take_recv(1, 1, 2), None);
    }
}
