//! The replay driver: ranks as state machines over their action streams, on the kernel's clock.
//!
//! Each round, every runnable rank runs its steps until it blocks (on an execution, a sleep or
//! requests); then the engine advances to the next event and wakes the ranks whose activities or
//! requests completed, in event order. Ranks start in rank order. This mirrors SimGrid's
//! maestro loop (`EngineImpl::run`): actors run until they block on a simcall, then the models
//! solve and advance.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use timeless_kernel::{ActivityId, Engine, PiecewiseFactor};
use timeless_platform::{HostId, Platform};
use timeless_trace::{Action, CommId, RecvCount, RequestKey, TraceSet, WORLD};

use crate::collective::Op;
use crate::comm::{comm_of, mpi_tag, tag_in, Comms, GlobalComm, Tag};
use crate::config::ReplayConfig;
use crate::error::{BlockedRank, Location, ReplayError};
use crate::jobs::{shift_ranks, Job, JobReport};
use crate::mailbox::{Mailboxes, PendingSend, ReqId, Request, Transfer, TransferId};
use crate::rank::{Account, Block, Dest, RankState, RecvSize, Step, Stored};
use crate::report::{CallInfo, Observer, RankReport, Report};

/// Bytes SMPI adds to every message (reference §12.1).
pub const ENVELOPE_BYTES: u64 = 16;

#[derive(Debug, Clone, Copy)]
enum Owner {
    None,
    Rank(u32),
    Transfer(TransferId),
    /// The poll of a blocked rank (`timeless/poll-cpu-share`), done when its spin ends.
    Poll(u32),
    /// The wait of a rendezvous send whose receiver came late (`timeless/rendezvous-late-wait`):
    /// the request completes when it ends.
    LateWait(ReqId),
}

struct Route {
    links: Vec<u32>,
    latency_secs: f64,
}

/// A replay in progress. Build it with [`Simulation::new`], run it with [`Simulation::run`].
pub struct Simulation<'p> {
    platform: &'p Platform,
    cfg: ReplayConfig,
    engine: Engine,
    ranks: Vec<RankState>,
    mail: Mailboxes,
    owners: Vec<Owner>,
    routes: HashMap<(u32, u32), u32>,
    route_list: Vec<Route>,
    /// Per-host software overheads: the config's `smpi/os`, `smpi/or`, `smpi/ois`, or the
    /// host's property of the same name, which overrides it (SimGrid 3.32 `smpi_host.cpp`).
    overheads: Vec<[PiecewiseFactor; 3]>,
    ready: VecDeque<u32>,
    /// Ranks whose probe back-off is running: when every activity in progress is one of these
    /// and no rank is ready, no message can ever arrive and the probes are a deadlock.
    probing: usize,
    finished: usize,
    ops: Vec<Op>,
    done: Vec<ActivityId>,
    /// Rendezvous sends whose transfer ended this step and that wait
    /// `timeless/rendezvous-late-wait` seconds more: started once every completed activity of
    /// the step is handled (a new activity may reuse the id of one not yet handled).
    late_waits: Vec<(ReqId, f64)>,
    actions: u64,
    warnings: Vec<String>,
    comms: Comms,
    /// The jobs, in replay rank order (one for an ordinary replay).
    jobs: Vec<JobSlot>,
}

/// A job's name and its replay ranks.
struct JobSlot {
    name: String,
    first_rank: u32,
    ranks: u32,
}

impl<'p> Simulation<'p> {
    /// Prepares the replay of `traces` with rank i on host `placement[i]`.
    ///
    /// # Errors
    /// A rank's trace cannot be opened, or a host's `smpi/os`/`smpi/or`/`smpi/ois` property is
    /// malformed.
    pub fn new(
        platform: &'p Platform,
        placement: &[HostId],
        traces: &dyn TraceSet,
        cfg: ReplayConfig,
    ) -> Result<Self, ReplayError> {
        let job = Job {
            name: String::new(),
            traces,
            hosts: placement.to_vec(),
            start_delay_flops: 0.0,
        };
        Self::with_jobs(platform, &[job], cfg)
    }

    /// Prepares the replay of several jobs at once (see [`crate::jobs`]): job `j`'s rank `i` is
    /// replay rank (sizes of jobs before `j`) + `i`, on host `jobs[j].hosts[i]`, and starts by
    /// executing `jobs[j].start_delay_flops` flops there. One job with no delay is [`Self::new`].
    ///
    /// Delays must be finite (callers validate them where they are read); a delay <= 0 is none.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn with_jobs(
        platform: &'p Platform,
        jobs: &[Job<'_>],
        cfg: ReplayConfig,
    ) -> Result<Self, ReplayError> {
        let mut engine = Engine::new(cfg.net.clone());
        for link in platform.links() {
            engine.add_link(
                link.bandwidth_bytes_per_sec,
                link.policy == timeless_platform::SharingPolicy::FatPipe,
            );
        }
        for host in platform.hosts() {
            engine.add_cpu(host.speed_flops_per_sec, host.cores);
        }
        let mut overheads = Vec::with_capacity(platform.hosts().len());
        for (i, host) in platform.hosts().iter().enumerate() {
            let mut o = [cfg.os.clone(), cfg.or.clone(), cfg.ois.clone()];
            for (k, key) in ["smpi/os", "smpi/or", "smpi/ois"].iter().enumerate() {
                if let Some(v) = platform.host_prop(HostId(i as u32), key) {
                    o[k] = PiecewiseFactor::parse(v, 1).map_err(|e| ReplayError::HostProperty {
                        host: host.name.clone(),
                        key: (*key).to_string(),
                        why: e.to_string(),
                    })?;
                }
            }
            overheads.push(o);
        }
        let mut ranks = Vec::new();
        let mut slots = Vec::with_capacity(jobs.len());
        let mut sizes = Vec::with_capacity(jobs.len());
        for (j, job) in jobs.iter().enumerate() {
            let n = job.hosts.len() as u32;
            slots.push(JobSlot {
                name: job.name.clone(),
                first_rank: ranks.len() as u32,
                ranks: n,
            });
            sizes.push(n);
            for (r, h) in job.hosts.iter().enumerate() {
                let reader = job.traces.open_stream(r as u32, n)?;
                let mut st = RankState::new(reader, h.0);
                st.job = j as u32;
                if job.start_delay_flops > 0.0 {
                    st.steps.push_back(Step::StartDelay(job.start_delay_flops));
                }
                ranks.push(st);
            }
        }
        Ok(Simulation {
            platform,
            cfg,
            engine,
            ranks,
            mail: Mailboxes::default(),
            owners: Vec::new(),
            routes: HashMap::default(),
            overheads,
            route_list: Vec::new(),
            ready: VecDeque::new(),
            probing: 0,
            finished: 0,
            ops: Vec::new(),
            done: Vec::new(),
            late_waits: Vec::new(),
            actions: 0,
            warnings: Vec::new(),
            comms: Comms::with_jobs(&sizes),
            jobs: slots,
        })
    }

    /// Forces full max-min re-solves (the slow reference path) instead of incremental ones.
    pub fn set_full_solve(&mut self, full: bool) {
        self.engine.set_full_solve(full);
    }

    /// Runs the replay to its end.
    ///
    /// # Errors
    /// A malformed trace line, a missing route, a truncated message, invalid collective
    /// arguments, or a deadlock (with every blocked rank).
    pub fn run(mut self, observer: &mut dyn Observer) -> Result<Report, ReplayError> {
        let n = self.ranks.len();
        for r in 0..n as u32 {
            self.make_ready(r);
        }
        let mut next_progress = 1u64 << 16;
        loop {
            while let Some(r) = self.ready.pop_front() {
                self.ranks[r as usize].queued = false;
                self.run_rank(r, observer)?;
            }
            if self.actions >= next_progress {
                observer.progress(self.actions, self.engine.now());
                next_progress = self.actions + (1 << 16);
            }
            if self.finished == n {
                break;
            }
            let mut done = std::mem::take(&mut self.done);
            done.clear();
            if !self.engine.step(&mut done) {
                return Err(self.deadlock());
            }
            for &a in &done {
                self.on_activity_done(a);
            }
            for (q, secs) in std::mem::take(&mut self.late_waits) {
                let w = self.engine.start_sleep(secs);
                self.set_owner(w, Owner::LateWait(q));
            }
            self.done = done;
        }
        observer.progress(self.actions, self.engine.now());
        Ok(self.report())
    }

    fn report(self) -> Report {
        let mut last: Option<&RankState> = None;
        for r in &self.ranks {
            if last.is_none_or(|l| r.finish_secs >= l.finish_secs) {
                last = Some(r);
            }
        }
        let simulated = last.map_or(0.0, |l| l.finish_secs - l.init_secs);
        let mut warnings = self.warnings;
        let ranks = self
            .ranks
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.reader.foreign_lines() > 0 {
                    warnings.push(format!(
                        "{}: {} line(s) naming another rank were ignored (as SimGrid does)",
                        r.reader.origin().display(),
                        r.reader.foreign_lines()
                    ));
                }
                RankReport {
                    rank: i as u32,
                    host: self.platform.hosts()[r.host as usize].name.clone(),
                    finish_secs: r.finish_secs,
                    init_secs: r.init_secs,
                    compute_secs: r.compute_secs,
                    comm_secs: r.comm_secs,
                    wait_secs: r.wait_secs,
                    sleep_secs: r.sleep_secs,
                    actions: r.actions,
                }
            })
            .collect();
        let jobs = self
            .jobs
            .iter()
            .map(|j| {
                let mine = &self.ranks[j.first_rank as usize..(j.first_rank + j.ranks) as usize];
                let mut last: Option<&RankState> = None;
                for r in mine {
                    if last.is_none_or(|l| r.finish_secs >= l.finish_secs) {
                        last = Some(r);
                    }
                }
                JobReport {
                    name: j.name.clone(),
                    first_rank: j.first_rank,
                    ranks: j.ranks,
                    start_secs: mine
                        .iter()
                        .map(|r| r.init_secs)
                        .fold(f64::INFINITY, f64::min),
                    end_secs: last.map_or(0.0, |l| l.finish_secs),
                    time_secs: last.map_or(0.0, |l| l.finish_secs - l.init_secs),
                }
            })
            .collect();
        Report {
            simulated_time_secs: simulated,
            ranks,
            actions: self.actions,
            warnings,
            jobs,
        }
    }

    fn make_ready(&mut self, r: u32) {
        let st = &mut self.ranks[r as usize];
        if !st.queued {
            st.queued = true;
            self.ready.push_back(r);
        }
    }

    fn set_owner(&mut self, a: ActivityId, o: Owner) {
        let i = a.0 as usize;
        if self.owners.len() <= i {
            self.owners.resize(i + 1, Owner::None);
        }
        self.owners[i] = o;
    }

    fn loc(&self, r: u32) -> Location {
        let st = &self.ranks[r as usize];
        Location {
            rank: r,
            file: st.reader.origin().to_path_buf(),
            line: st.current.map_or(0, |c| c.1),
        }
    }

    // ----------------------------------------------------------------------------------------
    // Interpreter

    fn run_rank(&mut self, r: u32, obs: &mut dyn Observer) -> Result<(), ReplayError> {
        loop {
            if self.ranks[r as usize].block != Block::Running {
                return Ok(());
            }
            if let Some(step) = self.ranks[r as usize].steps.pop_front() {
                self.exec_step(r, step)?;
                continue;
            }
            let now = self.engine.now();
            let st = &mut self.ranks[r as usize];
            if let Some((kw, line, start)) = st.current.take() {
                obs.action(r, kw, line, start, now);
                if let Some((d, comm)) = st.call.take() {
                    obs.call(&CallInfo {
                        rank: r,
                        op: d.op,
                        comm,
                        bytes_sent: d.bytes_sent,
                        bytes_recv: d.bytes_recv,
                        start_secs: start,
                        end_secs: now,
                    });
                }
            }
            if st.eof {
                st.block = Block::Finished;
                st.finish_secs = now;
                self.finished += 1;
                return Ok(());
            }
            match st.reader.next_event()? {
                None => {
                    st.eof = true;
                    // Leftover requests: wait for all of them (SimGrid 3.32 waits only the last
                    // of each key, reference §4.7; we do not drop the others).
                    if !st.store.is_empty() {
                        st.current = Some(("(end of trace)", 0, now));
                        st.steps.push_back(Step::WaitStore);
                    }
                }
                Some(mut ev) => {
                    shift_ranks(&mut ev.action, self.jobs[st.job as usize].first_rank);
                    st.actions += 1;
                    self.actions += 1;
                    st.current = Some((ev.action.keyword(), ev.location, now));
                    if obs.wants_calls() {
                        self.describe_call(r, &ev.action, ev.comm, obs);
                    }
                    self.expand(r, ev.action, ev.comm)?;
                }
            }
        }
    }

    /// Records what the action about to run is as an MPI call (see [`crate::calls`]), and
    /// tells the observer of communicator definitions.
    fn describe_call(&mut self, r: u32, action: &Action, comm: CommId, obs: &mut dyn Observer) {
        if let Action::CommDef { id, world_ranks } = action {
            obs.comm_defined(r, *id, world_ranks);
            return;
        }
        let Some(g) = self.comms.resolve(r, comm) else {
            return; // expand reports the undefined communicator
        };
        let me = self.comms.comm_rank(g, r).unwrap_or(0);
        let size = self.comms.members(g).len() as u32;
        let root = match *action {
            Action::Bcast { root, .. }
            | Action::Reduce { root, .. }
            | Action::Gather { root, .. }
            | Action::GatherV { root, .. }
            | Action::Scatter { root, .. }
            | Action::ScatterV { root, .. } => Some(root),
            _ => None,
        };
        let st = &self.ranks[r as usize];
        let Some(desc) = crate::calls::describe(action, st, me, size, root == Some(r)) else {
            return;
        };
        // waitall names no communicator: the oldest request it completes does.
        let comm = if matches!(action, Action::WaitAll) {
            st.store
                .iter()
                .find(|s| s.req.is_some())
                .and_then(|s| self.comms.local_id(r, comm_of(s.key.2)))
                .unwrap_or(WORLD)
        } else {
            comm
        };
        self.ranks[r as usize].call = Some((desc, comm));
    }

    /// Turns an action on communicator `comm` (the rank's own id) into steps. On a
    /// sub-communicator, peers and roots are world ranks that must be members, matching happens
    /// within it only, and collectives run over its comm ranks.
    fn expand(&mut self, r: u32, action: Action, comm: CommId) -> Result<(), ReplayError> {
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
            self.check_members(r, g, &action)?;
        }
        let n = self.ranks.len() as u32;
        let st = &mut self.ranks[r as usize];
        let t = |tag: i32| tag_in(g, tag);
        match action {
            Action::CommDef { id, world_ranks } => {
                self.comms
                    .define(r, id, &world_ranks)
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
            collective if g == 0 => self.expand_collective(r, &collective, 0, r, n)?,
            // A job's world in a multi-job replay takes the sub-communicator path below.
            collective => {
                let me = self
                    .comms
                    .comm_rank(g, r)
                    .expect("a rank resolves only communicators it is a member of");
                let size = self.comms.members(g).len() as u32;
                let local =
                    localize_root(&collective, |w| self.comms.comm_rank(g, w)).map_err(|w| {
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

    /// Queues the point-to-point schedule of collective `action` for world rank `r`, which is
    /// rank `me` of the `size` members of communicator `g` (roots in `action` are comm ranks).
    fn expand_collective(
        &mut self,
        r: u32,
        action: &Action,
        g: GlobalComm,
        me: u32,
        size: u32,
    ) -> Result<(), ReplayError> {
        let mut ops = std::mem::take(&mut self.ops);
        ops.clear();
        let flops = crate::collectives::schedule(
            &self.cfg.colls,
            &self.ranks[r as usize],
            me,
            size,
            action,
            &mut ops,
        )
        .map_err(|source| ReplayError::Collective {
            at: self.loc(r),
            source,
        })?;
        for &op in &ops {
            let world = |peer: u32| {
                if g == 0 {
                    peer
                } else {
                    self.comms.members(g)[peer as usize]
                }
            };
            match op {
                Op::Isend { peer, bytes, tag } => {
                    self.push_send(r, world(peer), tag_in(g, tag), bytes, Dest::Group)
                }
                Op::Send { peer, bytes, tag } => {
                    self.push_send(r, world(peer), tag_in(g, tag), bytes, Dest::Block)
                }
                Op::Irecv { peer, bytes, tag } => {
                    let peer = world(peer);
                    self.ranks[r as usize].steps.push_back(Step::Recv {
                        peer,
                        tag: tag_in(g, tag),
                        size: RecvSize::Bytes(bytes),
                        dest: Dest::Group,
                    })
                }
                Op::Recv { peer, bytes, tag } => {
                    let peer = world(peer);
                    self.ranks[r as usize].steps.push_back(Step::Recv {
                        peer,
                        tag: tag_in(g, tag),
                        size: RecvSize::Bytes(bytes),
                        dest: Dest::Block,
                    })
                }
                Op::WaitAll => self.ranks[r as usize].steps.push_back(Step::WaitGroup),
                Op::WaitEach => self.ranks[r as usize]
                    .steps
                    .push_back(Step::WaitGroupInOrder),
                Op::Exec { flops } => {
                    if flops > 0.0 {
                        self.ranks[r as usize].steps.push_back(Step::Exec(flops));
                    }
                }
            }
        }
        if flops > 0.0 {
            self.ranks[r as usize].steps.push_back(Step::Exec(flops));
        }
        self.ops = ops;
        Ok(())
    }

    /// Queues a send step, preceded by its software overhead (`smpi/ois` for every isend,
    /// `smpi/os` for a blocking detached send; reference §4.3).
    fn push_send(&mut self, r: u32, peer: u32, tag: Tag, bytes: u64, dest: Dest) {
        let [os, _, ois] = &self.overheads[self.ranks[r as usize].host as usize];
        let overhead = match dest {
            Dest::Block if bytes < self.cfg.detached_thresh_bytes => os.overhead_secs(bytes as f64),
            Dest::Block => 0.0,
            Dest::Store | Dest::Group => ois.overhead_secs(bytes as f64),
        };
        let st = &mut self.ranks[r as usize];
        if overhead > 0.0 {
            st.steps.push_back(Step::Sleep(overhead));
        }
        st.steps.push_back(Step::Send {
            peer,
            tag,
            bytes,
            dest,
        });
    }

    fn exec_step(&mut self, r: u32, step: Step) -> Result<(), ReplayError> {
        let now = self.engine.now();
        match step {
            Step::Exec(flops) => {
                let cpu = self.ranks[r as usize].host;
                let a = self.engine.start_exec(cpu, flops);
                self.block_on_activity(r, a, Account::Compute);
            }
            Step::StartDelay(flops) => {
                let cpu = self.ranks[r as usize].host;
                let a = self.engine.start_exec(cpu, flops);
                self.block_on_activity(r, a, Account::Delay);
            }
            Step::Sleep(secs) => {
                let a = self.engine.start_sleep(secs);
                self.block_on_activity(r, a, Account::Sleep);
            }
            Step::Backoff(secs) => {
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
                    let a = self.engine.start_exec(st.host, flops);
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
                let reqs: Vec<ReqId> = self.ranks[r as usize]
                    .store
                    .drain(..)
                    .filter_map(|s| s.req)
                    .collect();
                self.wait_on(r, &reqs, now);
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

    /// Puts a freshly posted request where `dest` says.
    fn place(&mut self, r: u32, req: ReqId, src: u32, dst: u32, tag: Tag, dest: Dest) {
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

    // Completion of requests (SimGrid 3.32, `smpi_request.cpp`).
    //
    // `Request::finish_wait` ends every wait of a request; for a receive whose sender was
    // detached (S < `smpi/send-is-detached-thresh`) it sleeps `smpi/or`(S) on the receiver's host
    // (reference §4.3). Sends never pay there: a detached send has no activity and completes when
    // posted, a rendezvous one when its transfer ends.
    // * `wait` (and blocking `send`/`recv`, and `test` when it succeeds): the request's
    //   completion, then its sleep.
    // * `waitall` (the trace action, `sendRecv`, the end-of-trace wait and every collective's
    //   group) loops on `waitany`, which finishes a request that is already complete if there is
    //   one, else blocks until the first one completes. So each receive's `or` is slept right
    //   after its own completion, and requests completing meanwhile are finished when the sleep
    //   ends: with completion dates t_1 <= ... <= t_n and wait entry t_0, the wait ends at e_n
    //   where e_0 = t_0 and e_k = max(e_{k-1}, t_k) + or_k. Which of several completed requests
    //   goes first does not change e_n (the sleeps form a work-conserving sequence), so ours go in
    //   posting order, then in completion order.
    // * `scan`/`exscan` `Request::wait` on each request in posting order instead: the same
    //   recurrence with the t_k in posting order ([`Step::WaitGroupInOrder`]).

    /// Starts rank `r`'s wait for every request of `reqs` (a `wait` is a set of one); the
    /// rank blocks, sleeps or goes on at once as the rules above say.
    fn wait_on(&mut self, r: u32, reqs: &[ReqId], now: f64) {
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
    fn wait_next(&mut self, r: u32, now: f64) {
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
            if self.cfg.poll_cpu_share > 0.0 && st.poll.is_none() {
                let host = st.host;
                let a =
                    self.engine
                        .start_poll(host, self.cfg.poll_cpu_share, self.cfg.poll_spin_secs);
                self.set_owner(a, Owner::Poll(r));
                self.ranks[r as usize].poll = Some(a);
            }
        } else {
            self.ranks[r as usize].waiting.clear();
        }
    }

    /// The `smpi/or` sleep the owner of completed request `q` owes when finishing it: a
    /// receive whose sender was detached (reference §4.3), nothing otherwise.
    fn recv_overhead_secs(&self, q: ReqId) -> f64 {
        let req = &self.mail.reqs[q as usize];
        let or = &self.overheads[self.ranks[req.owner as usize].host as usize][1];
        if !req.is_send && req.sender_detached && !or.is_zero() {
            or.overhead_secs(req.sender_bytes as f64)
        } else {
            0.0
        }
    }

    // ----------------------------------------------------------------------------------------
    // Messages

    fn post_send(&mut self, r: u32, dst: u32, tag: Tag, bytes: u64) -> Result<ReqId, ReplayError> {
        let now = self.engine.now();
        let detached = bytes < self.cfg.detached_thresh_bytes;
        let req = self.mail.new_request(Request {
            owner: r,
            is_send: true,
            peer: dst,
            tag,
            bytes,
            done: detached,
            waited: false,
            matched_secs: f64::NAN,
            sender_bytes: bytes,
            sender_detached: detached,
        });
        let send_req = (!detached).then_some(req);
        let eager = bytes < self.cfg.async_small_thresh_bytes;
        if let Some(rq) = self.mail.take_recv(dst, r, tag) {
            self.check_truncation(dst, rq, r, tag, bytes)?;
            self.start_transfer(r, dst, bytes, detached, send_req, Some(rq))?;
        } else if eager {
            let t = self.start_transfer(r, dst, bytes, detached, send_req, None)?;
            self.mail.push_send(
                dst,
                r,
                tag,
                PendingSend {
                    req: send_req,
                    bytes,
                    detached,
                    eager: Some(t),
                    posted_secs: now,
                },
            );
        } else {
            self.mail.push_send(
                dst,
                r,
                tag,
                PendingSend {
                    req: send_req,
                    bytes,
                    detached,
                    eager: None,
                    posted_secs: now,
                },
            );
        }
        if detached {
            self.mail.reqs[req as usize].matched_secs = now;
        }
        Ok(req)
    }

    fn post_recv(
        &mut self,
        r: u32,
        src: u32,
        tag: Tag,
        size: RecvSize,
    ) -> Result<ReqId, ReplayError> {
        let bytes = match size {
            RecvSize::Bytes(b) => b,
            RecvSize::FromSender => u64::MAX,
        };
        let req = self.mail.new_request(Request {
            owner: r,
            is_send: false,
            peer: src,
            tag,
            bytes,
            done: false,
            waited: false,
            matched_secs: f64::NAN,
            sender_bytes: 0,
            sender_detached: false,
        });
        if let Some(ps) = self.mail.take_send(r, src, tag) {
            self.check_truncation(r, req, src, tag, ps.bytes)?;
            match ps.eager {
                Some(t) => {
                    let now = self.engine.now();
                    let tr = &mut self.mail.transfers[t as usize];
                    tr.recv_req = Some(req);
                    let finished = tr.done;
                    let rq = &mut self.mail.reqs[req as usize];
                    rq.matched_secs = now;
                    rq.sender_bytes = ps.bytes;
                    rq.sender_detached = ps.detached;
                    if finished {
                        rq.done = true;
                        self.mail.free_transfer(t);
                    }
                }
                None => {
                    let t =
                        self.start_transfer(src, r, ps.bytes, ps.detached, ps.req, Some(req))?;
                    // A rendezvous send found by a receiver posted after it (strictly later:
                    // posts at the same date are not late): its sender sees the
                    // acknowledgement a `timeless/rendezvous-late-wait` after the transfer.
                    let late = &self.cfg.rendezvous_late_wait;
                    if ps.req.is_some() && !late.is_zero() && self.engine.now() > ps.posted_secs {
                        self.mail.transfers[t as usize].send_late_wait_secs =
                            late.overhead_secs(ps.bytes as f64).max(0.0);
                    }
                }
            }
        } else {
            self.mail.push_recv(r, src, tag, req);
        }
        Ok(req)
    }

    fn check_truncation(
        &self,
        dst: u32,
        rq: ReqId,
        src: u32,
        tag: Tag,
        send_bytes: u64,
    ) -> Result<(), ReplayError> {
        let recv_bytes = self.mail.reqs[rq as usize].bytes;
        if recv_bytes < send_bytes {
            return Err(ReplayError::Truncation {
                at: self.loc(dst),
                src,
                tag: mpi_tag(tag),
                comm: comm_of(tag),
                recv_bytes,
                send_bytes,
            });
        }
        Ok(())
    }

    /// Route index for `src_host → dst_host`. A forward route must exist (links or latency);
    /// the reverse route used for cross-traffic may be empty, as in SimGrid 3.32
    /// (`NetworkCm02Model::comm_get_route_info` only asserts on the forward route).
    fn route(
        &mut self,
        src_host: u32,
        dst_host: u32,
        rank: u32,
        forward: bool,
    ) -> Result<u32, ReplayError> {
        let i = match self.routes.get(&(src_host, dst_host)) {
            Some(&i) => i,
            None => self.fetch_route(src_host, dst_host, rank)?,
        };
        let r = &self.route_list[i as usize];
        if forward && r.links.is_empty() && r.latency_secs <= 0.0 {
            let why = match self.platform.route(HostId(src_host), HostId(dst_host)) {
                Err(e) => e.to_string(),
                Ok(_) => "the route is empty".to_string(),
            };
            return Err(self.route_error(src_host, dst_host, rank, why));
        }
        Ok(i)
    }

    fn route_error(&self, src_host: u32, dst_host: u32, rank: u32, why: String) -> ReplayError {
        ReplayError::Route {
            at: self.loc(rank),
            src: self.platform.hosts()[src_host as usize].name.clone(),
            dst: self.platform.hosts()[dst_host as usize].name.clone(),
            why,
        }
    }

    fn fetch_route(&mut self, src_host: u32, dst_host: u32, rank: u32) -> Result<u32, ReplayError> {
        let route = self
            .platform
            .route_or_empty(HostId(src_host), HostId(dst_host))
            .map_err(|e| self.route_error(src_host, dst_host, rank, e.to_string()))?;
        self.route_list.push(Route {
            links: route.links.iter().map(|l| l.0).collect(),
            latency_secs: route.latency_secs,
        });
        let i = self.route_list.len() as u32 - 1;
        self.routes.insert((src_host, dst_host), i);
        Ok(i)
    }

    fn start_transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        detached: bool,
        send_req: Option<ReqId>,
        recv_req: Option<ReqId>,
    ) -> Result<TransferId, ReplayError> {
        let now = self.engine.now();
        let (hs, hd) = (self.ranks[src as usize].host, self.ranks[dst as usize].host);
        let fwd = self.route(hs, hd, src, true)?;
        let back = if self.cfg.net.crosstraffic {
            Some(self.route(hd, hs, src, false)?)
        } else {
            None
        };
        let f = &self.route_list[fwd as usize];
        let empty: &[u32] = &[];
        let b = back.map_or(empty, |b| &self.route_list[b as usize].links[..]);
        let act =
            self.engine
                .start_comm(&f.links, b, f.latency_secs, (bytes + ENVELOPE_BYTES) as f64);
        let t = self.mail.new_transfer(Transfer {
            send_req,
            recv_req,
            done: false,
            send_late_wait_secs: 0.0,
        });
        self.set_owner(act, Owner::Transfer(t));
        for q in [send_req, recv_req].into_iter().flatten() {
            let rq = &mut self.mail.reqs[q as usize];
            rq.matched_secs = now;
            if !rq.is_send {
                rq.sender_bytes = bytes;
                rq.sender_detached = detached;
            }
        }
        Ok(t)
    }

    fn on_activity_done(&mut self, a: ActivityId) {
        let owner = self.owners[a.0 as usize];
        self.owners[a.0 as usize] = Owner::None;
        let now = self.engine.now();
        match owner {
            Owner::Rank(r) => {
                let st = &mut self.ranks[r as usize];
                if let Block::Activity(_, account) = st.block {
                    let d = now - st.activity_start;
                    match account {
                        Account::Compute => st.compute_secs += d,
                        Account::Sleep => st.sleep_secs += d,
                        Account::Wait | Account::Probe => st.wait_secs += d,
                        // The trace starts now (its `init`, if any, comes next).
                        Account::Delay => st.init_secs = now,
                    }
                }
                st.block = Block::Running;
                self.make_ready(r);
            }
            Owner::Transfer(t) => {
                let tr = self.mail.transfers[t as usize];
                self.mail.transfers[t as usize].done = true;
                if let Some(q) = tr.send_req {
                    if tr.send_late_wait_secs > 0.0 {
                        self.late_waits.push((q, tr.send_late_wait_secs));
                    } else {
                        self.complete_request(q);
                    }
                }
                if let Some(q) = tr.recv_req {
                    self.complete_request(q);
                }
                if tr.recv_req.is_some() {
                    self.mail.free_transfer(t);
                }
            }
            Owner::Poll(r) => self.ranks[r as usize].poll = None,
            Owner::LateWait(q) => self.complete_request(q),
            Owner::None => {}
        }
    }

    /// Marks request `q` complete. If its owner waits for it, the request is freed at once
    /// when it owes no `smpi/or`, else queued to be finished; the owner wakes when it has a
    /// sleep to pay or nothing left to wait for.
    fn complete_request(&mut self, q: ReqId) {
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
            self.engine.cancel(p);
        }
        self.make_ready(r);
    }

    fn deadlock(&self) -> ReplayError {
        let mut blocked = Vec::new();
        for (r, st) in self.ranks.iter().enumerate() {
            if st.block == Block::Finished {
                continue;
            }
            let mut waits_for = Vec::new();
            for &q in &st.waiting {
                let rq = &self.mail.reqs[q as usize];
                if rq.done || rq.owner != r as u32 {
                    continue;
                }
                let tag = describe_tag(rq.tag);
                if rq.is_send {
                    waits_for.push(format!(
                        "send to rank {} ({tag}, {} bytes) to be received",
                        rq.peer, rq.bytes
                    ));
                } else if rq.bytes == u64::MAX {
                    waits_for.push(format!("recv from rank {} ({tag})", rq.peer));
                } else {
                    waits_for.push(format!(
                        "recv from rank {} ({tag}, {} bytes)",
                        rq.peer, rq.bytes
                    ));
                }
            }
            if let Some(Step::Probe { peer, tag } | Step::ProbeCheck { peer, tag, .. }) =
                st.steps.front()
            {
                waits_for.push(format!(
                    "a message from rank {peer} ({}) to probe",
                    describe_tag(*tag)
                ));
            }
            for (src, tag, bytes) in self.mail.unmatched_sends_to(r as u32) {
                waits_for.push(format!(
                    "(unreceived message from rank {src}, {}, {bytes} bytes)",
                    describe_tag(tag)
                ));
            }
            blocked.push(BlockedRank {
                at: self.loc(r as u32),
                action: st.current.map_or("(between actions)", |c| c.0),
                waits_for,
            });
        }
        ReplayError::Deadlock {
            time_secs: self.engine.now(),
            blocked,
        }
    }
}

fn describe_tag(t: Tag) -> String {
    let (tag, comm) = (mpi_tag(t), comm_of(t));
    let kind = if tag < 0 { "collective tag" } else { "tag" };
    if comm == 0 {
        format!("{kind} {tag}")
    } else {
        format!("{kind} {tag} on sub-communicator #{comm}")
    }
}

/// `action` with its root (a world rank) replaced by its rank in the communicator; the world
/// rank back as the error when it is not a member.
fn localize_root(action: &Action, comm_rank: impl Fn(u32) -> Option<u32>) -> Result<Action, u32> {
    let mut a = action.clone();
    match &mut a {
        Action::Bcast { root, .. }
        | Action::Reduce { root, .. }
        | Action::Gather { root, .. }
        | Action::GatherV { root, .. }
        | Action::Scatter { root, .. }
        | Action::ScatterV { root, .. } => *root = comm_rank(*root).ok_or(*root)?,
        _ => {}
    }
    Ok(a)
}
