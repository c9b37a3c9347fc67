//! Trace actions into steps: what each record of a rank's trace asks the rank to do.
//!
//! `expand` is a `match` over [`Action`]: point-to-point calls become `Step::Send`/`Step::Recv`
//! with a destination for their request (block on it, store it under its key for a later
//! `wait`/`test`, or add it to the group a `waitall` ends), waits and tests become steps over the
//! stored requests, and collectives go to [`super::collectives`]. On a sub-communicator the
//! action's peers and roots are world ranks, checked for membership here, and tags are tied to
//! the communicator so that matching happens within it only.

use timeless_trace::{Action, CommId, RecvCount, RequestKey};

use super::collectives::localize_root;
use super::Simulation;
use crate::comm::{tag_in, GlobalComm};
use crate::error::ReplayError;
use crate::rank::{Dest, RecvSize, Step};

impl Simulation<'_> {
    /// Turns an action on communicator `comm` (the rank's own id) into steps. On a
    /// sub-communicator, peers and roots are world ranks that must be members, matching happens
    /// within it only, and collectives run over its comm ranks.
    pub(super) fn expand(
        &mut self,
        r: u32,
        action: &Action,
        comm: CommId,
    ) -> Result<(), ReplayError> {
        let invalid = |s: &Self, why: String| ReplayError::Invalid {
            at: s.loc(r),
            what: why,
        };
        let Some(g) = self.comms.resolve(r, comm) else {
            return Err(invalid(
                self,
                format!("communicator {comm} is not defined by a comm_def of rank {r}"),
            ));
        };
        if g != 0 {
            self.check_members(r, g, action)?;
        }
        let n = self.ranks.len() as u32;
        let per_call = self.cfg.poll_cpu_secs_per_call.get(r as usize).copied();
        let st = &mut self.ranks[r as usize];
        // Empty unless `timeless/poll-cpu-from-trace` read a table: one bounds check per action.
        if let Some(c) = per_call {
            // Every MPI call the tracer timed (`timeless/poll-cpu-from-trace`).
            if !matches!(
                action,
                Action::Init { .. }
                    | Action::Finalize
                    | Action::Compute { .. }
                    | Action::Sleep { .. }
                    | Action::Location
                    | Action::CommDef { .. }
            ) {
                st.poll_budget_secs += c;
            }
        }
        // `timeless/cold-call-before:collective`: the collective right after a long burst (set
        // only with the option on; cleared by any other action).
        if st.cold_burst {
            st.cold_burst = false;
            if action.is_collective() {
                let speed = self.platform.hosts()[st.host as usize].speed_flops_per_sec;
                st.steps
                    .push_back(Step::Exec(self.cfg.cold_call_secs * speed));
            }
        }
        let t = |tag: i32| tag_in(g, tag);
        match *action {
            Action::CommDef {
                id,
                ref world_ranks,
            } => {
                self.comms
                    .define(r, id, world_ranks)
                    .map_err(|why| invalid(self, why))?;
            }
            Action::Init { double_default } => {
                st.default_dt = if double_default {
                    timeless_trace::Datatype::DOUBLE
                } else {
                    timeless_trace::Datatype::BYTE
                };
                st.init_secs = self.engine.now();
            }
            Action::Finalize | Action::CommNoop | Action::Location => {}
            Action::Compute { flops } => {
                if self.cfg.simulate_computation && flops > 0.0 {
                    let mut flops = flops;
                    if self.cfg.cold_call_secs > 0.0 {
                        // `timeless/cold-call-secs`: the call after a long burst is cold.
                        let speed = self.platform.hosts()[st.host as usize].speed_flops_per_sec;
                        if flops >= self.cfg.cold_call_after_secs * speed {
                            if self.cfg.cold_call_collective_only {
                                st.cold_burst = true;
                            } else {
                                flops += self.cfg.cold_call_secs * speed;
                            }
                        }
                    }
                    st.steps.push_back(Step::Exec(flops));
                }
            }
            Action::Sleep { secs } => st.steps.push_back(Step::Sleep(secs)),
            Action::Send {
                dst,
                tag,
                count,
                dt,
                blocking,
            } => {
                let bytes = st.bytes(count, dt);
                let dest = if blocking { Dest::Block } else { Dest::Store };
                self.push_send(r, dst, t(tag), bytes, dest);
            }
            Action::Recv {
                src,
                tag,
                count,
                dt,
                blocking,
            } => {
                let dest = if blocking { Dest::Block } else { Dest::Store };
                let size = match count {
                    RecvCount::Count(c) => RecvSize::Bytes(st.bytes(c, dt)),
                    RecvCount::FromSender => RecvSize::FromSender,
                    RecvCount::Probe => {
                        st.steps.push_back(Step::Probe {
                            peer: src,
                            tag: t(tag),
                        });
                        RecvSize::FromSender
                    }
                };
                st.steps.push_back(Step::Recv {
                    peer: src,
                    tag: t(tag),
                    size,
                    dest,
                });
            }
            Action::Wait(RequestKey::Key { src, dst, tag }) => {
                st.steps.push_back(Step::WaitKey(Some((src, dst, t(tag)))))
            }
            Action::Wait(RequestKey::Oldest) => st.steps.push_back(Step::WaitKey(None)),
            Action::Test(RequestKey::Key { src, dst, tag }) => {
                st.steps.push_back(Step::Test((src, dst, t(tag))))
            }
            Action::Test(RequestKey::Oldest) => {}
            Action::WaitAll => st.steps.push_back(Step::WaitStore),
            Action::SendRecv {
                send_count,
                dst,
                recv_count,
                src,
                send_dt,
                recv_dt,
            } => {
                let sb = st.bytes(send_count, send_dt);
                let rb = st.bytes(recv_count, recv_dt);
                // Request::sendrecv: a self sendrecv is a local copy; else isend, irecv, waitall.
                if !(dst == r && src == r) {
                    self.push_send(r, dst, t(0), sb, Dest::Group);
                    let st = &mut self.ranks[r as usize];
                    st.steps.push_back(Step::Recv {
                        peer: src,
                        tag: t(0),
                        size: RecvSize::Bytes(rb),
                        dest: Dest::Group,
                    });
                    st.steps.push_back(Step::WaitGroup);
                }
            }
            ref collective if g == 0 => self.expand_collective(r, collective, 0, r, n)?,
            // A job's world in a multi-job replay takes the sub-communicator path below.
            ref collective => {
                let me = self
                    .comms
                    .comm_rank(g, r)
                    .expect("a rank resolves only communicators it is a member of");
                let size = self.comms.members(g).len() as u32;
                let local =
                    localize_root(collective, |w| self.comms.comm_rank(g, w)).map_err(|w| {
                        invalid(
                            self,
                            format!(
                                "root {w} is not a member of the communicator (world ranks {:?})",
                                self.comms.members(g)
                            ),
                        )
                    })?;
                self.expand_collective(r, &local, g, me, size)?;
            }
        }
        Ok(())
    }

    /// The peers of a point-to-point action on sub-communicator `g` must be among its members.
    fn check_members(&self, r: u32, g: GlobalComm, action: &Action) -> Result<(), ReplayError> {
        let peers = match *action {
            Action::Send { dst, .. } => [Some((dst, "destination")), None],
            Action::Recv { src, .. } => [Some((src, "source")), None],
            Action::SendRecv { dst, src, .. } => {
                [Some((dst, "destination")), Some((src, "source"))]
            }
            _ => [None, None],
        };
        for (w, what) in peers.into_iter().flatten() {
            if self.comms.comm_rank(g, w).is_none() {
                return Err(ReplayError::Invalid {
                    at: self.loc(r),
                    what: format!(
                        "{what} {w} is not a member of the communicator (world ranks {:?})",
                        self.comms.members(g)
                    ),
                });
            }
        }
        Ok(())
    }
}
