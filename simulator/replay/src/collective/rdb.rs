//! MPICH's recursive-doubling exchange with the non-power-of-two fix-up, shared by
//! `allgather` `rdb`, `allgatherv` `mpich_rdb`, `alltoall` `rdb` and `bcast`
//! `scatter_rdb_allgather`.
//!
//! At step `mask = 2^i` every rank `r` whose partner `d = r ^ mask` exists exchanges all it
//! holds with `d` (a `sendrecv`). When the communicator is not a power of two, some subtrees
//! had no partner: the "haves" of the subtree then forward what they last received to the
//! "have-nots" with a recursive-halving pass of blocking `send`/`recv` (MPICH's "experimental"
//! block, which *is* executed for non-power-of-two sizes).
//!
//! What a rank sends depends on what its peers received before, so the sizes cannot be
//! computed rank by rank: [`Rdb::run`] simulates every rank's state step by step (each rank's
//! role in a step depends only on the state before the step) and emits the calling rank's ops.
//! Cost O(n log n) per call.
//!
//! The quantities are kept in the algorithm's own "units" (elements of some datatype, or bytes)
//! because SimGrid's code mixes datatypes: what is sent is `units × size(send type)` but what is
//! received is counted with `Status::get_count` in units of the receive type.

use super::sched::Sched;

/// One instance of the exchange; every closure takes and returns plain numbers.
pub(crate) struct Rdb<'a> {
    /// Number of participating ranks (relative ranks 0..n).
    pub n: u32,
    /// Tag of every message.
    pub tag: i32,
    /// Units held by relative rank `r` before the first step.
    pub init: &'a dyn Fn(u32) -> u64,
    /// Step exchange: bytes sent when holding `curr` units.
    pub xchg_send_bytes: &'a dyn Fn(u64) -> u64,
    /// Step exchange: bytes posted by rank `r` whose partner's subtree root is `dst_tree_root`,
    /// at step `mask`.
    pub xchg_recv_posted: &'a dyn Fn(u32, u32, u32) -> u64,
    /// Step exchange: units credited for `bytes` received.
    pub xchg_recv_units: &'a dyn Fn(u64) -> u64,
    /// Fix-up: bytes sent when the last receive brought `last` units.
    pub fix_send_bytes: &'a dyn Fn(u64) -> u64,
    /// Fix-up: bytes posted by rank `r` with subtree root `my_tree_root`, at step `mask`, when
    /// `completed` ranks of the subtree hold all the data.
    pub fix_recv_posted: &'a dyn Fn(u32, u32, u32, u32) -> u64,
    /// Fix-up: units credited for `bytes` received.
    pub fix_recv_units: &'a dyn Fn(u64) -> u64,
}

impl Rdb<'_> {
    /// Appends the ops of relative rank `me` (actual rank `peer(me)`), mapping relative ranks to
    /// communicator ranks with `peer`. Returns the units every relative rank ends with.
    pub fn run(&self, me: u32, peer: &dyn Fn(u32) -> u32, s: &mut Sched) -> Vec<u64> {
        let n = self.n;
        let mut curr: Vec<u64> = (0..n).map(|r| (self.init)(r)).collect();
        // `last_recv_count`: units brought by the last receive (0 before any).
        let mut last = vec![0u64; n as usize];
        let mut mask = 1u32;
        let mut i = 0u32;
        while mask < n {
            // Step exchange, with the state before the step.
            let before = curr.clone();
            for r in 0..n {
                let d = r ^ mask;
                if d >= n {
                    continue;
                }
                let dst_tree_root = (d >> i) << i;
                let sent = (self.xchg_send_bytes)(before[d as usize]);
                let posted = (self.xchg_recv_posted)(r, dst_tree_root, mask);
                debug_assert!(sent <= posted, "rdb: truncated exchange {d} -> {r}");
                let got = (self.xchg_recv_units)(sent.min(posted));
                last[r as usize] = got;
                curr[r as usize] += got;
                if r == me {
                    let own = (self.xchg_send_bytes)(before[r as usize]);
                    s.sendrecv(peer(d), own, peer(d), posted, self.tag);
                }
            }
            // Fix-up inside the subtrees that lacked a partner, one halving level at a time.
            let mut tmp_mask = mask >> 1;
            let mut k = i; // number of low bits cleared to find the current tree root
            while tmp_mask > 0 {
                let before_last = last.clone();
                for r in 0..n {
                    let dst_tree_root = ((r ^ mask) >> i) << i;
                    if dst_tree_root + mask <= n {
                        continue;
                    }
                    let my_tree_root = (r >> i) << i;
                    // May be negative (C `int` in SimGrid) for subtrees that have no "haves".
                    let completed = i64::from(n) - i64::from(my_tree_root) - i64::from(mask);
                    let dst = r ^ tmp_mask;
                    let tree_root = (r >> k) << k;
                    let edge = i64::from(tree_root) + completed;
                    let (r64, d64) = (i64::from(r), i64::from(dst));
                    if dst > r && r64 < edge && d64 >= edge {
                        debug_assert!(dst < n, "rdb: fix-up send to a missing rank");
                        if r == me {
                            let bytes = (self.fix_send_bytes)(before_last[r as usize]);
                            s.send(peer(dst), bytes, self.tag);
                        }
                    } else if dst < r && d64 < edge && r64 >= edge {
                        let sent = (self.fix_send_bytes)(before_last[dst as usize]);
                        // `completed` ≥ 0 here since a lower rank `dst` is below `edge`.
                        let completed = completed as u32;
                        let posted = (self.fix_recv_posted)(r, my_tree_root, mask, completed);
                        debug_assert!(sent <= posted, "rdb: truncated fix-up {dst} -> {r}");
                        let got = (self.fix_recv_units)(sent.min(posted));
                        last[r as usize] = got;
                        curr[r as usize] += got;
                        if r == me {
                            s.recv(peer(dst), posted, self.tag);
                        }
                    }
                }
                tmp_mask >>= 1;
                k = k.saturating_sub(1);
            }
            mask <<= 1;
            i += 1;
        }
        curr
    }
}
