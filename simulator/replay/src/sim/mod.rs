//! The replay driver: ranks as state machines over their action streams, on the kernel's clock.
//!
//! Each round, every runnable rank runs its steps until it blocks (on an execution, a sleep or
//! requests); then the engine advances to the next event and wakes the ranks whose activities or
//! requests completed, in event order. Ranks start in rank order. This mirrors SimGrid's
//! maestro loop (`EngineImpl::run`): actors run until they block on a simcall, then the models
//! solve and advance.
//!
//! # Layout
//!
//! [`Simulation`] is one value; its methods live in the module named after what they model.
//! Calls only go down this list, except to the three helpers every part shares, kept here
//! (`make_ready`, `set_owner`, `loc`):
//!
//! * this module: the struct, its construction, the rank loop ([`Simulation::run`],
//!   `run_rank`) and the dispatch of finished kernel activities to their owners;
//! * [`actions`]: one trace action turned into steps (`expand`);
//! * [`collectives`]: a collective turned into its point-to-point schedule, on any communicator;
//! * [`steps`]: one step run against the engine and the mailboxes (`exec_step`);
//! * [`p2p`]: sends and receives posted, matched and moved as kernel transfers;
//! * [`waits`]: requests completed and waits ended, with their `smpi/or` sleeps;
//! * [`slices`]: a waiting rank's turn on a core a core-mate computes on
//!   (`timeless/fold-slice-secs`);
//! * [`routes`]: the platform's routes, looked up once per host pair and cached;
//! * [`report`]: the end-of-run report and the deadlock report.
//!
//! # A worked example
//!
//! Rank 0's trace says `0 send 1 0 1000` and rank 1's `1 recv 0 0 1000` (tag 0, 1000 elements
//! of the default datatype, bytes when no `init` says otherwise), with the default configuration
//! (`smpi/send-is-detached-thresh` 65536 B, `smpi/async-small-thresh` 0, `smpi/os` = `smpi/or`
//! = 0).
//!
//! 1. Round one, rank 0: `expand` turns the send into `Step::Send { dest: Block }` (after a
//!    `smpi/os` sleep, here none). `post_send` finds no posted receive; 1000 B is under the
//!    detached threshold, so the message waits in rank 1's mailbox and the request is complete
//!    at once: `wait_on` finds nothing pending and rank 0 reads its next action.
//! 2. Rank 1: `post_recv` takes the pending send, checks the sizes and starts a kernel transfer
//!    of 1000 + [`ENVELOPE_BYTES`] bytes over the route (`routes`); the blocking receive then
//!    waits on its request, and rank 1 blocks on `Block::Requests`.
//! 3. No rank is runnable: the engine steps to the transfer's end. `on_activity_done` finds its
//!    owner, a transfer, and `complete_request` wakes rank 1, counting the time from its wait's
//!    start to the match as waiting and the rest as communication. A nonzero `smpi/or` would
//!    make it sleep that long first, as the sender was detached (see [`waits`]).

mod actions;
mod collectives;
mod p2p;
mod report;
mod routes;
mod slices;
mod steps;
mod waits;

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use timeless_kernel::{ActivityId, Engine, PiecewiseFactor};
use timeless_platform::{HostId, Platform};
use timeless_trace::{Action, CommId, TraceSet, WORLD};

use crate::collective::Op;
use crate::comm::{comm_of, Comms};
use crate::config::ReplayConfig;
use crate::error::{Location, ReplayError};
use crate::jobs::{shift_ranks, Job};
use crate::mailbox::{Mailboxes, ReqId, TransferId};
use crate::rank::{Account, Block, RankState, Step};
use crate::report::{CallInfo, Observer, Report};

/// Distance in the ready queue between the stages of [`Simulation::prefetch_ready`].
const PREFETCH_AHEAD: usize = 4;

/// Replays of fewer ranks skip [`Simulation::prefetch_ready`]: their ranks' states (352 bytes
/// each, 90 KB at 256 ranks) stay in the core's 512 KB-1 MB L2 cache from one turn to the next,
/// so the hints only cost their instructions (0.6 % of the 16-rank ring's).
const PREFETCH_FROM_RANKS: usize = 256;

/// Replays of this many ranks or more turn on the engine's prefetch along its event heap
/// (`Engine::set_prefetching`). It costs 4.8 % more instructions on the 1,024-rank stencil of
/// `validation/bench` (callgrind), where its wall time moved by -7 % to +6.5 % against none
/// (alternated medians, 21-31 runs, with the VM's phase); at 4,096 ranks all but one
/// comparison favoured it (stencil -1.5 % to -10 %, allreduce -3 % to -15 %: `SCALING.md`,
/// session 36).
const ENGINE_PREFETCH_FROM_RANKS: usize = 4096;

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

/// A replay in progress. Build it with [`Simulation::new`], run it with [`Simulation::run`].
pub struct Simulation<'p> {
    platform: &'p Platform,
    cfg: ReplayConfig,
    engine: Engine,
    ranks: Vec<RankState>,
    mail: Mailboxes,
    owners: Vec<Owner>,
    /// The kernel's transfer path of each (source host, destination host) pair (`routes`).
    paths: routes::HostPaths,
    /// Per-host software overheads: the config's `smpi/os`, `smpi/or`, `smpi/ois`, or the
    /// host's property of the same name, which overrides it (SimGrid 3.32 `smpi_host.cpp`).
    /// Indices into `overhead_tables`, which holds each distinct table once: hosts without a
    /// property of their own share the config's tables, which stay in the cache at any host count.
    overheads: Vec<[u32; 3]>,
    overhead_tables: Vec<PiecewiseFactor>,
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
    /// Scratch for the requests a `waitall` waits on, kept from one to the next.
    wait_reqs: Vec<ReqId>,
    actions: u64,
    warnings: Vec<String>,
    comms: Comms,
    /// The jobs, in replay rank order (one for an ordinary replay).
    jobs: Vec<JobSlot>,
    /// `timeless/fold-slice-secs`'s model, when on and some core is shared.
    slices: Option<slices::CoreSlices>,
    /// The observer's [`Observer::wants_actions`] and [`Observer::wants_calls`], asked once.
    obs_actions: bool,
    obs_calls: bool,
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
        engine.reserve(platform.links().len(), platform.hosts().len());
        for link in platform.links() {
            engine.add_link(
                link.bandwidth_bytes_per_sec,
                link.policy == timeless_platform::SharingPolicy::FatPipe,
            );
        }
        // Cores of each of the engine's CPUs, in its order.
        let mut cores_of_cpu = Vec::with_capacity(platform.hosts().len());
        for host in platform.hosts() {
            engine.add_cpu(host.speed_flops_per_sec, host.cores);
            cores_of_cpu.push(host.cores);
        }
        // `timeless/pin-ranks`: the CPUs of the cores ranks are pinned to, made as they are
        // first needed (after the hosts' CPUs, so that CPU i < hosts is host i's).
        let mut core_cpus: HashMap<(u32, u32), u32> = HashMap::default();
        let mut placed_on_host = vec![0u32; platform.hosts().len()];
        let mut overheads = Vec::with_capacity(platform.hosts().len());
        let mut overhead_tables = vec![cfg.os.clone(), cfg.or.clone(), cfg.ois.clone()];
        // A property's text -> its table's index: hosts that say the same share one table.
        let mut table_of: HashMap<&str, u32> = HashMap::default();
        for (i, host) in platform.hosts().iter().enumerate() {
            let mut o = [0, 1, 2];
            for (k, key) in ["smpi/os", "smpi/or", "smpi/ois"].iter().enumerate() {
                if let Some(v) = platform.host_prop(HostId(i as u32), key) {
                    if let Some(&j) = table_of.get(v) {
                        o[k] = j;
                        continue;
                    }
                    let table =
                        PiecewiseFactor::parse(v, 1).map_err(|e| ReplayError::HostProperty {
                            host: host.name.clone(),
                            key: (*key).to_string(),
                            why: e.to_string(),
                        })?;
                    overhead_tables.push(table);
                    o[k] = overhead_tables.len() as u32 - 1;
                    table_of.insert(v, o[k]);
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
                let host = &platform.hosts()[h.0 as usize];
                if cfg.pin_ranks && host.cores > 1 {
                    let k = &mut placed_on_host[h.0 as usize];
                    let core = *k % host.cores;
                    *k += 1;
                    st.cpu = *core_cpus.entry((h.0, core)).or_insert_with(|| {
                        cores_of_cpu.push(1);
                        engine.add_cpu(host.speed_flops_per_sec, 1)
                    });
                }
                if job.start_delay_flops > 0.0 {
                    st.steps.push_back(Step::StartDelay(job.start_delay_flops));
                }
                ranks.push(st);
            }
        }
        let n_ranks = ranks.len();
        let slices = slices::CoreSlices::new(
            cfg.fold_slice_secs,
            ranks.iter().map(|st| st.cpu),
            &cores_of_cpu,
        );
        Ok(Simulation {
            platform,
            cfg,
            engine,
            ranks,
            mail: Mailboxes::with_ranks(n_ranks),
            owners: Vec::new(),
            paths: routes::HostPaths::default(),
            overheads,
            overhead_tables,
            ready: VecDeque::new(),
            probing: 0,
            finished: 0,
            ops: Vec::new(),
            done: Vec::new(),
            late_waits: Vec::new(),
            wait_reqs: Vec::new(),
            actions: 0,
            warnings: Vec::new(),
            comms: Comms::with_jobs(&sizes),
            jobs: slots,
            slices,
            obs_actions: true,
            obs_calls: false,
        })
    }

    /// Forces full max-min re-solves (the slow reference path) instead of incremental ones.
    pub fn set_full_solve(&mut self, full: bool) {
        self.engine.set_full_solve(full);
    }

    /// `false`: fill whole max-min components in SimGrid's order instead of the region a
    /// change reaches (`Engine::set_region_filling`; results equal to rounding).
    pub fn set_region_filling(&mut self, on: bool) {
        self.engine.set_region_filling(on);
    }

    /// Runs the replay to its end.
    ///
    /// # Errors
    /// A malformed trace line, a missing route, a truncated message, invalid collective
    /// arguments, or a deadlock (with every blocked rank).
    pub fn run(mut self, observer: &mut dyn Observer) -> Result<Report, ReplayError> {
        let n = self.ranks.len();
        self.obs_actions = observer.wants_actions();
        self.obs_calls = observer.wants_calls();
        for r in 0..n as u32 {
            self.make_ready(r);
        }
        let mut next_progress = 1u64 << 16;
        let slicing = self.slices.is_some();
        let prefetching = n >= PREFETCH_FROM_RANKS;
        self.engine.set_prefetching(n >= ENGINE_PREFETCH_FROM_RANKS);
        loop {
            while let Some(r) = self.ready.pop_front() {
                if prefetching {
                    self.prefetch_ready();
                }
                self.ranks[r as usize].queued = false;
                if slicing {
                    self.take_turn(r);
                }
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
            let mut waits = std::mem::take(&mut self.late_waits);
            for (q, secs) in waits.drain(..) {
                let w = self.engine.start_sleep(secs);
                self.set_owner(w, Owner::LateWait(q));
            }
            self.late_waits = waits; // keeps its buffer from step to step
            self.done = done;
        }
        observer.progress(self.actions, self.engine.now());
        Ok(self.report())
    }

    /// Software prefetch along the ready queue (a cache hint, no effect on results): with
    /// thousands of ranks a rank's state and its next decoded event have left the cache by the
    /// time it runs again, and each is a pointer away from the other. So while the rank at the
    /// head runs, the rank [`PREFETCH_AHEAD`]·3 places back has its `RankState` fetched, the one
    /// ·2 back its stream object, the one ·1 back its next event: each stage reads only what an
    /// earlier stage brought in.
    fn prefetch_ready(&self) {
        use timeless_trace::stream::prefetch;
        let ahead = PREFETCH_AHEAD;
        if let Some(&q) = self.ready.get(3 * ahead - 1) {
            let p = &self.ranks[q as usize] as *const RankState as *const u8;
            for line in 0..std::mem::size_of::<RankState>().div_ceil(64) {
                prefetch(p.wrapping_add(64 * line));
            }
        }
        if let Some(&q) = self.ready.get(2 * ahead - 1) {
            prefetch(&*self.ranks[q as usize].reader as *const dyn timeless_trace::ActionStream);
        }
        if let Some(&q) = self.ready.get(ahead - 1) {
            self.ranks[q as usize].reader.prefetch_next();
        }
    }

    fn make_ready(&mut self, r: u32) {
        let st = &mut self.ranks[r as usize];
        if !st.queued {
            st.queued = true;
            self.ready.push_back(r);
        }
    }

    /// Host `host`'s software overhead table `k` (0 `smpi/os`, 1 `smpi/or`, 2 `smpi/ois`).
    fn overhead(&self, host: u32, k: usize) -> &PiecewiseFactor {
        &self.overhead_tables[self.overheads[host as usize][k] as usize]
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
                if self.obs_actions {
                    obs.action(r, kw, line, start, now);
                }
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
            // Matched as it comes (no `?` on it): the `Try` conversion copied the event into
            // another stack slot with loads straddling the callee's stores, which the CPU
            // cannot forward (a stall per event; the decoded item's layout, `ahead::Item`).
            match st.reader.next_event_boxed() {
                Err(e) => return Err((*e).into()),
                Ok(None) => {
                    st.eof = true;
                    // Leftover requests: wait for all of them (SimGrid 3.32 waits only the last
                    // of each key, reference §4.7; we do not drop the others).
                    if !st.store.is_empty() {
                        st.current = Some(("(end of trace)", 0, now));
                        st.steps.push_back(Step::WaitStore);
                    }
                }
                Ok(Some(mut ev)) => {
                    shift_ranks(&mut ev.action, self.jobs[st.job as usize].first_rank);
                    st.actions += 1;
                    self.actions += 1;
                    st.current = Some((ev.action.keyword(), ev.location, now));
                    if self.obs_calls {
                        self.describe_call(r, &ev.action, ev.comm, obs);
                    }
                    self.expand(r, &ev.action, ev.comm)?;
                    if !ev.action.holds_lists() {
                        // Nothing on the heap: skip the out-of-line drop glue.
                        std::mem::forget(ev);
                    }
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
}
