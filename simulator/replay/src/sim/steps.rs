//! Steps run against the kernel: what a rank does next, one step at a time.
//!
//! A step either starts a kernel activity the rank blocks on (an execution, a sleep, a probe's
//! or test's back-off), posts a request ([`super::p2p`]) and puts it where the step says, or
//! starts or goes on with a wait ([`super::waits`]). Probes and tests are pairs of steps: the
//! back-off (`smpi/iprobe`, `smpi/test`, grown after each failure when
//! `smpi/grow-injected-times` is on), then the check.

use timeless_kernel::ActivityId;

use super::{Owner, Simulation};
use crate::error::ReplayError;
use crate::rank::{Account, Block, Step, Stored};

impl Simulation<'_> {
    pub(super) fn exec_step(&mut self, r: u32, step: Step) -> Result<(), ReplayError> {
        let now = self.engine.now();
        match step {
            Step::Exec(flops) => {
                let cpu = self.ranks[r as usize].cpu;
                let a = self.engine.start_exec(cpu, flops);
                self.block_on_activity(r, a, Account::Compute);
            }
            Step::StartDelay(flops) => {
                let cpu = self.ranks[r as usize].cpu;
                let a = self.engine.start_exec(cpu, flops);
                self.block_on_activity(r, a, Account::Delay);
            }
            Step::Sleep(secs) => {
                let a = self.engine.start_sleep(secs);
                self.block_on_activity(r, a, Account::Sleep);
            }
            Step::Backoff(secs) | Step::CoreTurn(secs) => {
                let a = self.engine.start_sleep(secs);
                self.block_on_activity(r, a, Account::Wait);
            }
            Step::Send {
                peer,
                tag,
                bytes,
                dest,
            } => {
                let req = self.post_send(r, peer, tag, bytes)?;
                self.place(r, req, r, peer, tag, dest);
            }
            Step::Recv {
                peer,
                tag,
                size,
                dest,
            } => {
                let req = self.post_recv(r, peer, tag, size)?;
                self.place(r, req, peer, r, tag, dest);
            }
            Step::Probe { peer, tag } => {
                let st = &mut self.ranks[r as usize];
                // Request::iprobe: burn nsleeps × smpi/iprobe × speed × cpu-usage flops, then look.
                let flops = f64::from(st.probe_sleeps)
                    * self.cfg.iprobe_secs
                    * self.platform.hosts()[st.host as usize].speed_flops_per_sec
                    * self.cfg.iprobe_cpu_usage;
                let burned = flops > 0.0;
                st.steps.push_front(Step::ProbeCheck { peer, tag, burned });
                if burned {
                    let a = self.engine.start_exec(st.cpu, flops);
                    self.probing += 1;
                    self.block_on_activity(r, a, Account::Probe);
                }
            }
            Step::ProbeCheck { peer, tag, burned } => {
                if burned {
                    self.probing -= 1;
                }
                let found = self.mail.has_send(r, peer, tag);
                let st = &mut self.ranks[r as usize];
                if found {
                    st.probe_sleeps = 1;
                } else {
                    if self.cfg.grow_injected_times {
                        st.probe_sleeps += 1;
                    }
                    st.steps.push_front(Step::Probe { peer, tag });
                    // Nothing but probe back-offs can happen (no rank ready, no other
                    // activity): no message will ever arrive, and probing on would loop
                    // forever (issue 18, fuzzing).
                    if self.ready.is_empty() && self.engine.in_progress() == self.probing {
                        return Err(self.deadlock());
                    }
                }
            }
            Step::WaitGroup => {
                let group = std::mem::take(&mut self.ranks[r as usize].group);
                self.wait_on(r, &group, now);
                self.ranks[r as usize].group = group;
                self.ranks[r as usize].group.clear();
            }
            Step::WaitGroupInOrder => {
                let st = &mut self.ranks[r as usize];
                for &q in st.group.iter().rev() {
                    st.steps.push_front(Step::WaitReq(q));
                }
                st.group.clear();
            }
            Step::WaitReq(q) => self.wait_on(r, &[q], now),
            Step::WaitNext => self.wait_next(r, now),
            Step::WaitKey(key) => {
                let st = &mut self.ranks[r as usize];
                let pos = match key {
                    Some(k) => st.store.iter().position(|s| s.key == k),
                    None => (!st.store.is_empty()).then_some(0),
                };
                if let Some(p) = pos {
                    if let Some(req) = st.store.remove(p).req {
                        self.wait_on(r, &[req], now);
                    }
                }
            }
            Step::WaitStore => {
                let mut reqs = std::mem::take(&mut self.wait_reqs);
                reqs.clear();
                // Copied, then cleared: `drain(..)` cost more than the copy.
                let store = &mut self.ranks[r as usize].store;
                reqs.extend(store.iter().filter_map(|s| s.req));
                store.clear();
                self.wait_on(r, &reqs, now);
                self.wait_reqs = reqs;
            }
            Step::Test(key) => {
                // Pop the request, sleep nsleeps × smpi/test, then test it (reference §4.4).
                let st = &mut self.ranks[r as usize];
                let Some(p) = st.store.iter().position(|s| s.key == key) else {
                    return Ok(());
                };
                match st.store[p].req {
                    // A marker left by an earlier successful test: nothing to test.
                    None => {}
                    Some(req) => {
                        st.store.remove(p);
                        st.steps.push_front(Step::TestCheck(key, req));
                        let backoff = f64::from(st.test_sleeps) * self.cfg.test_secs;
                        if backoff > 0.0 {
                            st.steps.push_front(Step::Backoff(backoff));
                        }
                    }
                }
            }
            Step::TestCheck(key, req) => {
                let done = self.mail.reqs[req as usize].done;
                let st = &mut self.ranks[r as usize];
                if done {
                    // `Request::test` succeeded: `finish_wait` sleeps `smpi/or` as a wait does.
                    st.store.push(Stored { key, req: None });
                    st.test_sleeps = 1;
                    let secs = self.recv_overhead_secs(req);
                    self.mail.free_request(req);
                    if secs > 0.0 {
                        self.ranks[r as usize].steps.push_front(Step::Sleep(secs));
                    }
                } else {
                    st.store.push(Stored {
                        key,
                        req: Some(req),
                    });
                    if self.cfg.grow_injected_times {
                        st.test_sleeps += 1;
                    }
                }
            }
        }
        Ok(())
    }

    fn block_on_activity(&mut self, r: u32, a: ActivityId, account: Account) {
        self.set_owner(a, Owner::Rank(r));
        let st = &mut self.ranks[r as usize];
        st.block = Block::Activity(a, account);
        st.activity_start = self.engine.now();
    }
}
