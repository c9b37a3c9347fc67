//! Requests completed and waits ended: when a waiting rank wakes, and what it sleeps first.
//!
//! Completion of requests (SimGrid 3.32, `smpi_request.cpp`).
//!
//! `Request::finish_wait` ends every wait of a request; for a receive whose sender was
//! detached (S < `smpi/send-is-detached-thresh`) it sleeps `smpi/or`(S) on the receiver's host
//! (reference §4.3). Sends never pay there: a detached send has no activity and completes when
//! posted, a rendezvous one when its transfer ends.
//! * `wait` (and blocking `send`/`recv`, and `test` when it succeeds): the request's
//!   completion, then its sleep.
//! * `waitall` (the trace action, `sendRecv`, the end-of-trace wait and every collective's
//!   group) loops on `waitany`, which finishes a request that is already complete if there is
//!   one, else blocks until the first one completes. So each receive's `or` is slept right
//!   after its own completion, and requests completing meanwhile are finished when the sleep
//!   ends: with completion dates t_1 <= ... <= t_n and wait entry t_0, the wait ends at e_n
//!   where e_0 = t_0 and e_k = max(e_{k-1}, t_k) + or_k. Which of several completed requests
//!   goes first does not change e_n (the sleeps form a work-conserving sequence), so ours go in
//!   posting order, then in completion order.
//! * `scan`/`exscan` `Request::wait` on each request in posting order instead: the same
//!   recurrence with the t_k in posting order ([`Step::WaitGroupInOrder`]).
//!
//! For example, a `waitall` entered at t_0 = 0 on two receives of detached messages that
//! complete at t_1 = 1 s and t_2 = 1.5 s, each owing `or` = 1 s, ends at e_2 = 3 s:
//! e_1 = max(0, 1) + 1 = 2, and the second request, complete since 1.5 s, is finished when that
//! sleep ends, e_2 = max(2, 1.5) + 1 = 3.

use super::{Owner, Simulation};
use crate::comm::Tag;
use crate::mailbox::ReqId;
use crate::rank::{Block, Dest, Step, Stored};

impl Simulation<'_> {
    /// Puts a freshly posted request where `dest` says.
    pub(super) fn place(&mut self, r: u32, req: ReqId, src: u32, dst: u32, tag: Tag, dest: Dest) {
        match dest {
            Dest::Block => {
                let now = self.engine.now();
                self.wait_on(r, &[req], now);
            }
            Dest::Store => self.ranks[r as usize].store.push(Stored {
                key: (src, dst, tag),
                req: Some(req),
            }),
            Dest::Group => self.ranks[r as usize].group.push(req),
        }
    }

    /// Starts rank `r`'s wait for every request of `reqs` (a `wait` is a set of one); the
    /// rank blocks, sleeps or goes on at once as the rules in the module doc say.
    pub(super) fn wait_on(&mut self, r: u32, reqs: &[ReqId], now: f64) {
        let st = &mut self.ranks[r as usize];
        st.waiting.clear();
        st.wait_finish.clear();
        st.wait_pending = 0;
        for &q in reqs {
            let req = &mut self.mail.reqs[q as usize];
            if req.done {
                if self.recv_overhead_secs(q) > 0.0 {
                    self.ranks[r as usize].wait_finish.push_back(q);
                } else {
                    self.mail.free_request(q);
                }
            } else {
                req.waited = true;
                let st = &mut self.ranks[r as usize];
                st.wait_pending += 1;
                st.waiting.push(q);
            }
        }
        self.wait_next(r, now);
    }

    /// Goes on with rank `r`'s current wait: sleeps the `smpi/or` of the next completed
    /// request, blocks until a request completes, or ends the wait when nothing is left.
    pub(super) fn wait_next(&mut self, r: u32, now: f64) {
        let st = &self.ranks[r as usize];
        if let Some(&q) = st.wait_finish.front() {
            let secs = self.recv_overhead_secs(q);
            self.mail.free_request(q);
            let st = &mut self.ranks[r as usize];
            st.wait_finish.pop_front();
            if st.wait_pending > 0 || !st.wait_finish.is_empty() {
                st.steps.push_front(Step::WaitNext);
            }
            st.steps.push_front(Step::Sleep(secs));
        } else if st.wait_pending > 0 {
            let st = &mut self.ranks[r as usize];
            st.wait_start = now;
            st.wait_last_match = now;
            st.block = Block::Requests;
            st.steps.push_front(Step::WaitNext);
            // A poll only with `timeless/poll-cpu-share` or a budget to spend: the common
            // case tests two numbers and starts nothing.
            if (self.cfg.poll_cpu_share > 0.0 || st.poll_budget_secs > 0.0) && st.poll.is_none() {
                let cpu = st.cpu;
                let a = if self.cfg.poll_cpu_share > 0.0 {
                    self.engine
                        .start_poll(cpu, self.cfg.poll_cpu_share, self.cfg.poll_spin_secs)
                } else {
                    let budget = std::mem::take(&mut st.poll_budget_secs);
                    self.engine.start_poll(cpu, 1.0, budget)
                };
                self.set_owner(a, Owner::Poll(r));
                self.ranks[r as usize].poll = Some(a);
            }
        } else {
            self.ranks[r as usize].waiting.clear();
        }
    }

    /// The `smpi/or` sleep the owner of completed request `q` owes when finishing it: a
    /// receive whose sender was detached (reference §4.3), nothing otherwise.
    pub(super) fn recv_overhead_secs(&self, q: ReqId) -> f64 {
        let req = &self.mail.reqs[q as usize];
        // The request's own fields first: most completions (sends, rendezvous receives) owe
        // nothing, and the owner's host and its table are then not read.
        if req.is_send || !req.sender_detached {
            return 0.0;
        }
        let or = self.overhead(self.ranks[req.owner as usize].host, 1);
        if or.is_zero() {
            0.0
        } else {
            or.overhead_secs(req.sender_bytes as f64)
        }
    }

    /// Marks request `q` complete. If its owner waits for it, the request is freed at once
    /// when it owes no `smpi/or`, else queued to be finished; the owner wakes when it has a
    /// sleep to pay or nothing left to wait for.
    pub(super) fn complete_request(&mut self, q: ReqId) {
        let now = self.engine.now();
        let req = &mut self.mail.reqs[q as usize];
        req.done = true;
        if !req.waited {
            return;
        }
        let (r, matched) = (req.owner, req.matched_secs);
        let owes = self.recv_overhead_secs(q) > 0.0;
        let st = &mut self.ranks[r as usize];
        st.wait_pending -= 1;
        if owes {
            st.wait_finish.push_back(q);
        } else {
            self.mail.free_request(q);
        }
        let st = &mut self.ranks[r as usize];
        if st.block != Block::Requests {
            // Sleeping an earlier request's `or`: this one is finished when the sleep ends.
            return;
        }
        if matched > st.wait_last_match {
            st.wait_last_match = matched;
        }
        if !owes && st.wait_pending > 0 {
            return;
        }
        // Wake up: account the blocked time, then `Step::WaitNext` goes on.
        let waited = (st.wait_last_match.min(now) - st.wait_start).max(0.0);
        st.wait_secs += waited;
        st.comm_secs += (now - st.wait_start) - waited;
        st.block = Block::Running;
        if let Some(p) = st.poll.take() {
            let left = self.engine.cancel_poll_secs(p);
            if self.cfg.poll_cpu_share == 0.0 {
                // A budget poll (`timeless/poll-cpu-from-trace`): its unspent CPU time waits
                // for the rank's next wait.
                self.ranks[r as usize].poll_budget_secs += left;
            }
        }
        let delay = self.core_turn_delay_secs(r);
        if delay > 0.0 {
            self.ranks[r as usize]
                .steps
                .push_front(Step::CoreTurn(delay));
        }
        self.make_ready(r);
    }
}
