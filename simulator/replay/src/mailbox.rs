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
    sends: VecDeque<PendingSend>,
    recvs: VecDeque<ReqId>,
}

/// All matching state of a replay.
///
/// The queues are kept per receiving rank (`boxes[dst]`, keyed by (source, tag)): a rank's
/// lookups stay in its own small table, which it touched when it last matched, instead of
/// missing the cache in one table of every (receiver, sender, tag) of the run (at 4096 ranks the
/// stencil's 80 k queues, 6 MB).
#[derive(Debug, Default)]
pub struct Mailboxes {
    boxes: Vec<HashMap<(u32, Tag), Queues>>,
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
        boxes.resize_with(ranks, HashMap::default);
        Mailboxes {
            boxes,
            ..Mailboxes::default()
        }
    }

    fn mailbox(&mut self, dst: u32) -> &mut HashMap<(u32, Tag), Queues> {
        let i = dst as usize;
        if self.boxes.len() <= i {
            self.boxes.resize_with(i + 1, HashMap::default);
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
        let q = self.boxes.get_mut(dst as usize)?.get_mut(&(src, tag))?;
        q.recvs.pop_front()
    }

    /// Oldest pending send from `src` to `dst` with `tag`, removed from its queue.
    pub fn take_send(&mut self, dst: u32, src: u32, tag: Tag) -> Option<PendingSend> {
        let q = self.boxes.get_mut(dst as usize)?.get_mut(&(src, tag))?;
        q.sends.pop_front()
    }

    /// True if a send from `src` to `dst` with `tag` waits to be received (what a probe sees).
    pub fn has_send(&self, dst: u32, src: u32, tag: Tag) -> bool {
        self.boxes
            .get(dst as usize)
            .and_then(|b| b.get(&(src, tag)))
            .is_some_and(|q| !q.sends.is_empty())
    }

    /// Queues a send nobody receives yet.
    pub fn push_send(&mut self, dst: u32, src: u32, tag: Tag, s: PendingSend) {
        self.mailbox(dst)
            .entry((src, tag))
            .or_default()
            .sends
            .push_back(s);
    }

    /// Queues a receive no send matches yet.
    pub fn push_recv(&mut self, dst: u32, src: u32, tag: Tag, r: ReqId) {
        self.mailbox(dst)
            .entry((src, tag))
            .or_default()
            .recvs
            .push_back(r);
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
