//! The discrete-event engine: a clock, the activities in progress and their completion dates.
//!
//! Four kinds of activity, each a client of the [`lmm`](crate::lmm) system:
//! * **execution** (CPU model Cas01, SimGrid 3.32 `src/surf/cpu_cas01.cpp`): a variable of
//!   penalty 1 and bound `speed` (one core) on its host's constraint of capacity
//!   `cores × speed`; it completes when its flops are done.
//! * **transfer** (network model CM02 with SMPI factors, `src/surf/network_cm02.cpp`): for a
//!   message of P bytes (payload + 16-byte envelope) over a route of raw latency `L` and links
//!   `B_i`, a latency phase of `lat_factor(P)·L` seconds (no bandwidth: SimGrid's variable of
//!   penalty 0, which takes no part in any solve; here the variable is only made when the phase
//!   ends, so a flow in its latency phase costs the max-min system nothing), then a
//!   variable of penalty `L + Σ weight_S/B_i` (`network/weight-S`, 8775 for SMPI) and bound
//!   `min(min_i B_i, TCP_gamma/(2L))` (`network/TCP-gamma`), weight 1 on every route link and,
//!   with `network/crosstraffic`, 0.05 on every link of the reverse route. The bytes drain at
//!   `bw_factor(P)·x`. If `L = 0` the penalty is 1 and there is no latency phase (a SimGrid quirk,
//!   reference §6.2).
//! * **sleep**: no resource, a fixed date (at least `surf/precision` after now if positive).
//! * **poll** (a timeless extension, [`Engine::start_poll`]): an execution without end and of
//!   penalty `1/share`, cancelled by its owner ([`Engine::cancel`]); it is never in the event
//!   heap; [`Engine::cancel_poll_secs`] says how much of its spin was left.
//!
//! Updates are lazy (`network/optim:Lazy`): an activity's remaining amount is brought up to date
//! only when its rate changes, and its completion date lives in an indexed heap. Events less than
//! `surf/precision` apart are processed together; equal dates in insertion order.
//!
//! # Groups: one virtual time for the flows of a crowded bottleneck
//! When the max-min system puts a hub's variables in a group (see `lmm::hubs`), each member's
//! rate is `bw_factor · m / p` for the group's one share m. Writing a member's remaining work in
//! *virtual* units u = remaining · p / bw_factor, every member's u falls at the same rate m. So
//! the group keeps a virtual clock V (dV/dt = m) and each member the virtual date at which it
//! completes, V_end = V(join) + u(join), in a heap of its own (`group::GroupClock`). A change
//! of m only advances V and moves the group's one entry in the event heap (to
//! t = t_last + (V_end_min − V)/m): no member is touched, and members finish in V_end order
//! whatever m does. A member leaving the group gets its remaining bytes back from V.
//!
//! Example: members a (u = 10) and b (u = 30) join at V = 0 with m = 5: the group's entry is at
//! t = 2. At t = 1 a third flow arrives and m drops to 4: V(1) = 5, the entry moves to
//! 1 + (10 − 5)/4 = 2.25; neither a nor b is looked at. a completes at 2.25 (V = 10), b's entry
//! is then 2.25 + (30 − 10)/m for the m of that time.
//!
//! # Prefetch along the heaps
//! With thousands of flows, the records an event's handling reads have left the cache since it
//! was scheduled. With [`Engine::set_prefetching`] each pop fetches them ahead in stages along
//! the event heap's runs, its binary heap's top and a popping group's members (activity, then
//! path, then variable: `prefetch_upcoming`); a hint only, the dates are the same bit for bit.

use crate::factors::PiecewiseFactor;
use crate::heap::{IndexedHeap, RUNS};
use crate::lmm::{CnstId, GroupId, Sharing, System, VarId};
use crate::prefetch::prefetch;

mod cpu;
mod group;
mod path;

use crate::precision::{double_equals, double_update, MAXMIN_PRECISION, SURF_PRECISION};
use cpu::Cpu;
use group::GroupClock;
pub use path::PathId;

/// An activity slot. Valid from its `start_*` call until [`Engine::step`] reports it done; the
/// slot is then reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActivityId(pub u32);

/// Network model parameters (SimGrid 3.32 config keys in each field's doc).
#[derive(Debug, Clone)]
pub struct NetworkConfig {
    /// `smpi/bw-factor`, looked up with P bytes.
    pub bw_factor: PiecewiseFactor,
    /// `smpi/lat-factor`, looked up with P bytes.
    pub lat_factor: PiecewiseFactor,
    /// `network/weight-S` in bytes (8775 for the SMPI model).
    pub weight_s_bytes: f64,
    /// `network/TCP-gamma` in bytes (4194304): the window bounding a flow at γ/(2L) B/s.
    pub tcp_gamma_bytes: f64,
    /// `network/crosstraffic`: charge 0.05 of each flow to its reverse route.
    pub crosstraffic: bool,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            bw_factor: PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_BW, 1)
                .expect("valid default"),
            lat_factor: PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_LAT, 1)
                .expect("valid default"),
            weight_s_bytes: 8775.0,
            tcp_gamma_bytes: 4_194_304.0,
            crosstraffic: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Free,
    Latency,
    Running,
    Sleeping,
    /// Not an activity: the event-heap entry of a group's earliest member.
    Group,
}

const NO_GROUP: u32 = u32::MAX;
/// [`Activity::cpu`] of an activity that is not an execution on a CPU.
const NO_CPU: u32 = u32::MAX;
/// [`Activity::path`] of an activity that is not a transfer.
const NO_PATH: u32 = u32::MAX;
/// Distance (in pops) of the first stage of [`Engine::prefetch_upcoming`] from the runs' fronts.
const PREFETCH_STAGES: usize = 3;

#[derive(Debug, Clone)]
struct Activity {
    phase: Phase,
    var: Option<VarId>,
    remaining: f64,
    last_update: f64,
    last_rate: f64,
    rate_factor: f64,
    penalty_after_latency: f64,
    /// The group this activity is a member of ([`NO_GROUP`]), or for a [`Phase::Group`] slot
    /// the group it stands for.
    group: u32,
    /// While a member: the virtual date at which it completes, and its penalty.
    vfinish: f64,
    group_penalty: f64,
    /// The CPU of an execution or poll ([`NO_CPU`] otherwise).
    cpu: u32,
    /// The path of a transfer (`path`).
    path: u32,
}

impl Activity {
    /// Brings the remaining amount to `now` at the last rate (SimGrid's lazy update of an
    /// action's remains, `surf/precision`-rounded as `double_update`).
    fn advance(&mut self, now: f64) {
        if self.remaining > 0.0 {
            double_update(
                &mut self.remaining,
                self.last_rate * (now - self.last_update),
                MAXMIN_PRECISION * SURF_PRECISION,
            );
        }
        self.last_update = now;
    }

    fn new(phase: Phase, var: Option<VarId>, remaining: f64, now: f64) -> Self {
        Activity {
            phase,
            var,
            remaining,
            last_update: now,
            last_rate: 0.0,
            rate_factor: 1.0,
            penalty_after_latency: 0.0,
            group: NO_GROUP,
            vfinish: 0.0,
            group_penalty: 0.0,
            cpu: NO_CPU,
            path: NO_PATH,
        }
    }
}

/// The simulation clock and everything in progress.
#[derive(Debug)]
pub struct Engine {
    now: f64,
    lmm: System,
    net: NetworkConfig,
    link_cnst: Vec<CnstId>,
    link_bw: Vec<f64>,
    cpus: Vec<Cpu>,
    acts: Vec<Activity>,
    free: Vec<u32>,
    var_act: Vec<u32>,
    heap: IndexedHeap,
    /// Transfer paths (`path`): a transfer in its latency phase keeps its path's index, and its
    /// variable is made from it when the phase ends, so that a flow in its latency phase costs
    /// the max-min system nothing (no element to insert, then move to the active prefix).
    paths: path::Paths,
    /// Prefetch along the event heap and the groups' heaps ([`Engine::prefetch_upcoming`]).
    prefetching: bool,
    groups: Vec<GroupClock>,
    dirty_groups: Vec<u32>,
    group_slots: usize,
    /// Uncontended executions run without a variable (`cpu`); off only to test against that.
    fast_exec: bool,
    /// Rate updates after the solves, and those that left the rate unchanged ([`Engine::stats`]).
    rate_updates: u64,
    unchanged_rates: u64,
}

impl Engine {
    /// An engine at time 0 with the given network parameters and no resources.
    pub fn new(net: NetworkConfig) -> Self {
        Engine {
            now: 0.0,
            lmm: System::new(),
            net,
            link_cnst: Vec::new(),
            link_bw: Vec::new(),
            cpus: Vec::new(),
            acts: Vec::new(),
            free: Vec::new(),
            var_act: Vec::new(),
            heap: IndexedHeap::new(),
            paths: path::Paths::default(),
            prefetching: false,
            groups: Vec::new(),
            dirty_groups: Vec::new(),
            group_slots: 0,
            fast_exec: true,
            rate_updates: 0,
            unchanged_rates: 0,
        }
    }

    /// Makes room for `links` more links and `cpus` more CPUs ([`Engine::add_link`],
    /// [`Engine::add_cpu`]), so that a platform of thousands of hosts is added without
    /// growing (copying) the constraint arrays again and again.
    pub fn reserve(&mut self, links: usize, cpus: usize) {
        self.link_cnst.reserve(links);
        self.link_bw.reserve(links);
        self.cpus.reserve(cpus);
        self.lmm.reserve_constraints(links + cpus);
    }

    /// Forces full re-solves (debug/reference mode) instead of incremental ones.
    pub fn set_full_solve(&mut self, full: bool) {
        self.lmm.set_selective(!full);
    }

    /// `false`: every general solve fills its whole component instead of the region its
    /// changes reach ([`System::set_region_filling`]; results equal to rounding).
    pub fn set_region_filling(&mut self, on: bool) {
        self.lmm.set_region_filling(on);
    }

    /// `false`: every execution gets a max-min variable, as in SimGrid (the same dates: `cpu`
    /// module doc); for tests of the fast path against that.
    pub fn set_fast_exec(&mut self, fast: bool) {
        self.fast_exec = fast;
    }

    /// Hub thresholds of the max-min system ([`System::set_hub_thresholds`]): `u32::MAX`
    /// disables groups. Results do not depend on them beyond rounding.
    pub fn set_hub_thresholds(&mut self, on: u32, off: u32) {
        self.lmm.set_hub_thresholds(on, off);
    }

    /// When the max-min system starts registering for hubs ([`System::set_wake_ratio`]): 0 as
    /// soon as a constraint is crowded.
    pub fn set_wake_ratio(&mut self, ratio: u32) {
        self.lmm.set_wake_ratio(ratio);
    }

    /// Adds a link of `bandwidth_bytes_per_sec`; returns its index for routes.
    pub fn add_link(&mut self, bandwidth_bytes_per_sec: f64, fatpipe: bool) -> u32 {
        let sharing = if fatpipe {
            Sharing::FatPipe
        } else {
            Sharing::Shared
        };
        self.link_cnst
            .push(self.lmm.add_constraint(bandwidth_bytes_per_sec, sharing));
        self.link_bw.push(bandwidth_bytes_per_sec);
        self.link_cnst.len() as u32 - 1
    }

    /// Adds a CPU of `cores` cores at `speed_flops_per_sec` each; returns its index.
    pub fn add_cpu(&mut self, speed_flops_per_sec: f64, cores: u32) -> u32 {
        let cnst = self
            .lmm
            .add_constraint(f64::from(cores) * speed_flops_per_sec, Sharing::Shared);
        self.cpus.push(Cpu::new(cnst, speed_flops_per_sec, cores));
        self.cpus.len() as u32 - 1
    }

    /// Current simulated time in seconds.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// The date in seconds at which activity `id` completes if no rate changes before, as the
    /// last solve left it: `None` for an activity whose date is not known yet (an execution
    /// started since the last [`Engine::step`] on a CPU it shares, or a poll without end) or
    /// that is a member of a group of flows (its date is virtual, see the module doc).
    pub fn end_date(&self, id: ActivityId) -> Option<f64> {
        let act = self.acts.get(id.0 as usize)?;
        if act.phase == Phase::Free || act.group != NO_GROUP {
            return None;
        }
        self.heap.date(id.0)
    }

    /// Number of activities in progress.
    pub fn in_progress(&self) -> usize {
        self.acts.len() - self.free.len() - self.group_slots
    }

    fn alloc(&mut self, act: Activity) -> ActivityId {
        match self.free.pop() {
            Some(i) => {
                self.acts[i as usize] = act;
                ActivityId(i)
            }
            None => {
                self.acts.push(act);
                ActivityId(self.acts.len() as u32 - 1)
            }
        }
    }

    fn bind_var(&mut self, var: VarId, act: ActivityId) {
        if self.var_act.len() <= var.0 as usize {
            self.var_act.resize(var.0 as usize + 1, u32::MAX);
        }
        self.var_act[var.0 as usize] = act.0;
    }

    /// Starts executing `flops` on CPU `cpu`. While the CPU has cores to spare the execution
    /// runs at the core speed without a max-min variable (`cpu` module doc: the same date).
    pub fn start_exec(&mut self, cpu: u32, flops: f64) -> ActivityId {
        let c = &self.cpus[cpu as usize];
        if c.admits_fast() && self.fast_exec {
            let speed = c.speed;
            let id = self.alloc(Activity {
                last_rate: speed,
                penalty_after_latency: 1.0,
                cpu,
                ..Activity::new(Phase::Running, None, flops, self.now)
            });
            self.retouch_fast(cpu);
            self.cpus[cpu as usize].fast.push(id.0);
            self.heap.set(id.0, self.now + flops / speed);
            return id;
        }
        self.exec_on_system(cpu, flops, 1.0, Phase::Running)
    }

    /// An execution (or poll, penalty `1/share`) with a variable on CPU `cpu`'s constraint,
    /// after the CPU's fast executions got theirs.
    fn exec_on_system(&mut self, cpu: u32, amount: f64, penalty: f64, phase: Phase) -> ActivityId {
        self.lift_fast(cpu);
        let c = &mut self.cpus[cpu as usize];
        c.vars += 1;
        let (speed, cnst) = (c.speed, c.cnst);
        let var = self.lmm.add_variable(penalty, speed);
        self.lmm.expand(cnst, var, 1.0);
        let id = self.alloc(Activity {
            penalty_after_latency: penalty,
            cpu,
            ..Activity::new(phase, Some(var), amount, self.now)
        });
        self.bind_var(var, id);
        id
    }

    /// Brings CPU `cpu`'s fast executions' remaining flops and end dates up to date, as the
    /// solve after another execution arrives or leaves does for their variables (the same
    /// rounding, so the same dates bit for bit).
    fn retouch_fast(&mut self, cpu: u32) {
        let now = self.now;
        for i in 0..self.cpus[cpu as usize].fast.len() {
            let a = self.cpus[cpu as usize].fast[i];
            let act = &mut self.acts[a as usize];
            act.advance(now);
            let ttc = if act.remaining > 0.0 {
                act.remaining / act.last_rate
            } else {
                0.0
            };
            self.heap.set(a, now + ttc);
        }
    }

    /// Gives CPU `cpu`'s fast executions their variables (in start order), their remaining
    /// flops brought up to date at the core speed, as a re-solve would.
    fn lift_fast(&mut self, cpu: u32) {
        let fast = std::mem::take(&mut self.cpus[cpu as usize].fast);
        for &a in &fast {
            let (speed, cnst) = (self.cpus[cpu as usize].speed, self.cpus[cpu as usize].cnst);
            let var = self.lmm.add_variable(1.0, speed);
            self.lmm.expand(cnst, var, 1.0);
            let now = self.now;
            let act = &mut self.acts[a as usize];
            act.advance(now);
            act.var = Some(var);
            self.bind_var(var, ActivityId(a));
        }
        self.cpus[cpu as usize].vars += fast.len() as u32;
        let mut fast = fast;
        fast.clear();
        self.cpus[cpu as usize].fast = fast;
    }

    /// Starts a **poll** on CPU `cpu`: an execution that never ends (end it with
    /// [`Engine::cancel`]) and competes for the CPU's cores with `share` (> 0) times the weight
    /// of an execution (penalty `1/share`, bound one core). A timeless extension, not SimGrid:
    /// a rank blocked in an MPI call that spins in its progress loop. On a CPU with enough
    /// cores it takes an idle core and slows nobody; with k executions and m polls on C < k + m
    /// cores each execution gets `C/(k + share·m)` of a core.
    ///
    /// With `spin_secs` infinite a poll has no completion date: it is never in the event heap,
    /// so it neither ends nor keeps [`Engine::step`] from reporting that nothing can progress.
    /// With `spin_secs` finite it ends (reported done like an execution) once it has burnt
    /// `spin_secs` of one core's time (`spin_secs × speed` flops at its rate): a rank that
    /// spins that long, then yields.
    pub fn start_poll(&mut self, cpu: u32, share: f64, spin_secs: f64) -> ActivityId {
        debug_assert!(share > 0.0 && share.is_finite() && spin_secs >= 0.0);
        let speed = self.cpus[cpu as usize].speed;
        let remaining = if spin_secs.is_finite() {
            spin_secs * speed
        } else {
            f64::INFINITY
        };
        self.exec_on_system(cpu, remaining, 1.0 / share, Phase::Running)
    }

    /// Ends poll `id` (as [`Engine::cancel`]) and returns the CPU time its spin had left,
    /// seconds at its core's speed (0 if it had ended, infinite for an endless spin).
    pub fn cancel_poll_secs(&mut self, id: ActivityId) -> f64 {
        let a = id.0 as usize;
        if self.acts[a].phase == Phase::Free {
            return 0.0;
        }
        let now = self.now;
        self.acts[a].advance(now);
        let left = self.acts[a].remaining.max(0.0) / self.cpus[self.acts[a].cpu as usize].speed;
        self.cancel(id);
        left
    }

    /// Ends activity `id` before its completion (a poll of [`Engine::start_poll`]): its
    /// variable and slot are freed and it is not reported done. O(elements of its variable).
    pub fn cancel(&mut self, id: ActivityId) {
        let a = id.0;
        if self.acts[a as usize].phase == Phase::Free {
            return;
        }
        self.leave_group(a);
        self.heap.remove(a);
        self.release(a);
        self.free.push(a);
    }

    /// Frees activity `a`'s variable (or its place among its CPU's fast executions).
    fn release(&mut self, a: u32) {
        let act = &mut self.acts[a as usize];
        let cpu = act.cpu;
        let var = act.var.take();
        let path = act.path;
        act.phase = Phase::Free;
        act.cpu = NO_CPU;
        if let Some(var) = var {
            if path != NO_PATH {
                self.park_or_remove(path, var);
            } else {
                self.lmm.remove_variable(var);
            }
            if cpu != NO_CPU {
                self.cpus[cpu as usize].vars -= 1;
            }
        } else if cpu != NO_CPU {
            // Removed as a constraint removes an element (the last takes its place), so that
            // the others keep the order their variables would have.
            let fast = &mut self.cpus[cpu as usize].fast;
            let i = fast.iter().position(|&f| f == a);
            fast.swap_remove(i.expect("a fast execution is listed by its CPU"));
            self.retouch_fast(cpu);
        }
    }

    /// Starts a pure delay of `secs` seconds (SimGrid 3.32 `CpuCas01::sleep`: a positive
    /// duration is at least `surf/precision`).
    pub fn start_sleep(&mut self, secs: f64) -> ActivityId {
        let secs = if secs > 0.0 {
            secs.max(SURF_PRECISION)
        } else {
            0.0
        };
        let id = self.alloc(Activity::new(Phase::Sleeping, None, 0.0, self.now));
        self.heap.set(id.0, self.now + secs);
        id
    }

    /// The latency phase of transfer `a` ends: it gets its variable, with its penalty.
    fn end_latency(&mut self, a: u32) {
        let act = &mut self.acts[a as usize];
        act.phase = Phase::Running;
        act.last_update = self.now;
        let p = act.penalty_after_latency;
        self.begin_transfer(a, p);
    }

    /// What the kernel did since the engine was made: the max-min system's solves and the
    /// rate updates after them ([`KernelStats`](crate::KernelStats)).
    pub fn stats(&self) -> crate::KernelStats {
        crate::KernelStats {
            rate_updates: self.rate_updates,
            unchanged_rates: self.unchanged_rates,
            ..self.lmm.stats()
        }
    }

    /// Re-solves what changed, advances the clock to the next event and appends the activities
    /// completed at that instant to `done` (in completion-date order, ties in scheduling order).
    /// Returns `false` when nothing is in progress or nothing can progress (every remaining
    /// activity has rate 0): the caller then has a deadlock or is finished.
    pub fn step(&mut self, done: &mut Vec<ActivityId>) -> bool {
        self.lmm.solve();
        // Members that left their group get their remaining amount back first.
        for i in 0..self.lmm.group_left().len() {
            let var = self.lmm.group_left()[i];
            let a = self.var_act[var.0 as usize];
            // A parked variable (`path`) leaves its group after its transfer ended, and the
            // transfer's slot may hold another activity by now.
            if self.acts[a as usize].var == Some(var) {
                self.leave_group(a);
            }
        }
        for &var in self.lmm.touched() {
            let a = self.var_act[var.0 as usize];
            let act = &mut self.acts[a as usize];
            if act.phase != Phase::Running {
                continue;
            }
            debug_assert_eq!(
                act.group, NO_GROUP,
                "a group member has no value of its own"
            );
            act.advance(self.now);
            let rate = self.lmm.value(var) * act.rate_factor;
            self.rate_updates += 1;
            self.unchanged_rates += u64::from(rate == act.last_rate);
            act.last_rate = rate;
            if act.remaining == f64::INFINITY {
                // A poll: never completes.
                continue;
            }
            if rate > 0.0 {
                let ttc = if act.remaining > 0.0 {
                    act.remaining / rate
                } else {
                    0.0
                };
                self.heap.set(a, self.now + ttc);
            } else {
                self.heap.remove(a);
            }
        }
        for i in 0..self.lmm.groups_changed().len() {
            let g = self.lmm.groups_changed()[i];
            let share = self.lmm.group_share(g);
            let now = self.now;
            self.group_mut(g.0).set_share(now, share);
            self.mark_group(g.0);
        }
        for i in 0..self.lmm.group_joined().len() {
            let var = self.lmm.group_joined()[i];
            let g = self
                .lmm
                .group_of(var)
                .expect("a joined variable is in a group");
            self.join_group(self.var_act[var.0 as usize], g);
        }
        self.lmm.clear_group_events();
        for g in std::mem::take(&mut self.dirty_groups) {
            self.schedule_group(g);
        }
        let Some((date, _)) = self.heap.peek() else {
            return false;
        };
        self.now += date - self.now;
        let now = self.now;
        // `d == now` too: an overflowed date (inf - inf is NaN) still ends its activities, and
        // the replay reports an infinite time instead of spinning forever.
        while let Some((_, a)) = self
            .heap
            .pop_if(|d| d == now || double_equals(d, now, SURF_PRECISION))
        {
            if self.prefetching {
                self.prefetch_upcoming();
            }
            let act = &mut self.acts[a as usize];
            match act.phase {
                Phase::Latency => self.end_latency(a),
                Phase::Running | Phase::Sleeping => self.finish(a, done),
                Phase::Group => {
                    let g = act.group;
                    if self.prefetching {
                        self.prefetch_members(g);
                    }
                    let clock = &mut self.groups[g as usize];
                    let (_, member) = clock.members.pop().expect("a scheduled group has members");
                    self.acts[member as usize].group = NO_GROUP;
                    self.finish(member, done);
                    self.schedule_group(g);
                }
                Phase::Free => unreachable!("a free activity slot is never scheduled"),
            }
        }
        true
    }

    /// Software prefetch along the event heap (a cache hint, no effect on results): with
    /// thousands of flows the records an event's handling reads (the activity, its path, the
    /// variable it changes) have left the cache since the event was scheduled, each a pointer
    /// away from the one before. So at each pop the entry [`PREFETCH_STAGES`] places behind
    /// each run's front has its activity fetched, the one before it its path (a latency end),
    /// the one before that its variable ([`Engine::var_to_change`]): each stage reads only
    /// what the stage before brought in at the previous pop. The binary heap beside the runs
    /// gets the same in two stages: its top's children their activities, its top its
    /// variable. The activities' addresses are not checked: a prefetch never faults.
    #[inline]
    fn prefetch_upcoming(&self) {
        for r in 0..RUNS {
            self.prefetch_act(self.heap.run_id_at(r, PREFETCH_STAGES));
            if let Some(a) = self
                .acts
                .get(self.heap.run_id_at(r, PREFETCH_STAGES - 1) as usize)
            {
                if a.phase == Phase::Latency {
                    self.paths.prefetch(a.path);
                }
            }
            self.prefetch_var_of(self.heap.run_id_at(r, PREFETCH_STAGES - 2));
        }
        self.prefetch_act(self.heap.heap_id_at(1));
        self.prefetch_act(self.heap.heap_id_at(2));
        self.prefetch_var_of(self.heap.heap_id_at(0));
    }

    /// Prefetches activity slot `id`'s record (any `id`: a prefetch never faults).
    #[inline]
    fn prefetch_act(&self, id: u32) {
        prefetch(self.acts.as_ptr().wrapping_add(id as usize));
    }

    /// Prefetches the record of the variable activity `id`'s event will change, if any.
    #[inline]
    fn prefetch_var_of(&self, id: u32) {
        if let Some(v) = self.var_to_change(id) {
            self.lmm.prefetch_var(v);
        }
    }

    /// The variable the event of activity `id` changes: the parked variable of its path for a
    /// latency end, its own for a flow's end; `None` otherwise or for an id out of range.
    #[inline]
    fn var_to_change(&self, id: u32) -> Option<VarId> {
        let a = self.acts.get(id as usize)?;
        match a.phase {
            Phase::Latency => self.paths.parked_on(a.path),
            Phase::Running => a.var,
            _ => None,
        }
    }

    /// [`Engine::prefetch_upcoming`] for the members of group `g`, which complete one by one
    /// through the group's own heap: the member [`PREFETCH_STAGES`] places behind each of its
    /// runs' fronts has its activity fetched, the one before it its variable.
    #[inline]
    fn prefetch_members(&self, g: u32) {
        let members = &self.groups[g as usize].members;
        for r in 0..RUNS {
            self.prefetch_act(members.run_id_at(r, PREFETCH_STAGES));
            self.prefetch_var_of(members.run_id_at(r, PREFETCH_STAGES - 1));
        }
    }

    /// Turns the prefetch along the heaps on or off (module doc, "Prefetch along the heaps"):
    /// worth its instructions only with thousands of flows.
    pub fn set_prefetching(&mut self, on: bool) {
        self.prefetching = on;
    }

    /// Ends activity `a`: frees its variable and slot, reports it done.
    fn finish(&mut self, a: u32, done: &mut Vec<ActivityId>) {
        self.release(a);
        self.free.push(a);
        done.push(ActivityId(a));
    }

    fn group_mut(&mut self, g: u32) -> &mut GroupClock {
        if self.groups.len() <= g as usize {
            self.groups.resize_with(g as usize + 1, GroupClock::default);
        }
        &mut self.groups[g as usize]
    }

    fn mark_group(&mut self, g: u32) {
        let now = self.now;
        let clock = self.group_mut(g);
        clock.advance(now);
        if !clock.dirty {
            clock.dirty = true;
            self.dirty_groups.push(g);
        }
    }

    /// Running activity `a` joins group `g`: its remaining amount, brought up to date at its
    /// individual rate, becomes a virtual completion date.
    fn join_group(&mut self, a: u32, g: GroupId) {
        let now = self.now;
        self.mark_group(g.0);
        let act = &mut self.acts[a as usize];
        debug_assert_eq!(act.phase, Phase::Running);
        debug_assert_eq!(act.group, NO_GROUP);
        act.advance(now);
        let var = act.var.expect("a group member has a variable");
        let p = self.lmm.penalty(var);
        act.group = g.0;
        act.group_penalty = p;
        act.vfinish = self.groups[g.0 as usize].v + act.remaining * p / act.rate_factor;
        let vfinish = act.vfinish;
        self.heap.remove(a);
        self.groups[g.0 as usize].members.set(a, vfinish);
    }

    /// Member `a` leaves its group: its remaining amount is read off the group's virtual clock.
    /// Its rate is set by the solve that follows.
    fn leave_group(&mut self, a: u32) {
        let g = self.acts[a as usize].group;
        if g == NO_GROUP {
            return;
        }
        self.mark_group(g);
        let v = self.groups[g as usize].v;
        self.groups[g as usize].members.remove(a);
        let act = &mut self.acts[a as usize];
        act.remaining = (act.vfinish - v).max(0.0) * act.rate_factor / act.group_penalty;
        act.last_update = self.now;
        act.last_rate = 0.0;
        act.group = NO_GROUP;
    }

    /// Puts group `g`'s entry in the event heap at its earliest member's date.
    fn schedule_group(&mut self, g: u32) {
        let now = self.now;
        if self.groups[g as usize].slot == u32::MAX {
            let mut slot = Activity::new(Phase::Group, None, 0.0, now);
            slot.group = g;
            let id = self.alloc(slot);
            self.group_slots += 1;
            self.groups[g as usize].slot = id.0;
        }
        let clock = &mut self.groups[g as usize];
        clock.dirty = false;
        match clock.next_date(now) {
            Some(date) => self.heap.set(clock.slot, date),
            None => {
                self.heap.remove(clock.slot);
                clock.rebase(now);
            }
        }
    }
}

#[cfg(test)]
mod tests;
