//! The discrete-event engine: a clock, the activities in progress and their completion dates.
//!
//! Three kinds of activity, each a client of the [`lmm`](crate::lmm) system:
//! * **execution** (CPU model Cas01, SimGrid 3.32 `src/surf/cpu_cas01.cpp`): a variable of
//!   penalty 1 and bound `speed` (one core) on its host's constraint of capacity
//!   `cores × speed`; it completes when its flops are done.
//! * **transfer** (network model CM02 with SMPI factors, `src/surf/network_cm02.cpp`): for a
//!   message of P bytes (payload + 16-byte envelope) over a route of raw latency `L` and links
//!   `B_i`, a latency phase of `lat_factor(P)·L` seconds (penalty 0: no bandwidth), then a
//!   variable of penalty `L + Σ weight_S/B_i` (`network/weight-S`, 8775 for SMPI) and bound
//!   `min(min_i B_i, TCP_gamma/(2L))` (`network/TCP-gamma`), weight 1 on every route link and,
//!   with `network/crosstraffic`, 0.05 on every link of the reverse route. The bytes drain at
//!   `bw_factor(P)·x`. If `L = 0` the penalty is 1 and there is no latency phase (a SimGrid quirk,
//!   reference §6.2).
//! * **sleep**: no resource, a fixed date (at least `surf/precision` after now if positive).
//!
//! Updates are lazy (`network/optim:Lazy`): an activity's remaining amount is brought up to date
//! only when its rate changes, and its completion date lives in an indexed heap. Events less than
//! `surf/precision` apart are processed together; equal dates in insertion order.

use crate::factors::PiecewiseFactor;
use crate::heap::IndexedHeap;
use crate::lmm::{CnstId, Sharing, System, VarId};
use crate::precision::{double_equals, double_update, MAXMIN_PRECISION, SURF_PRECISION};

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
}

#[derive(Debug, Clone)]
struct Activity {
    phase: Phase,
    var: Option<VarId>,
    remaining: f64,
    last_update: f64,
    last_rate: f64,
    rate_factor: f64,
    penalty_after_latency: f64,
}

/// The simulation clock and everything in progress.
#[derive(Debug)]
pub struct Engine {
    now: f64,
    lmm: System,
    net: NetworkConfig,
    link_cnst: Vec<CnstId>,
    link_bw: Vec<f64>,
    cpu_cnst: Vec<CnstId>,
    cpu_speed: Vec<f64>,
    acts: Vec<Activity>,
    free: Vec<u32>,
    var_act: Vec<u32>,
    heap: IndexedHeap,
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
            cpu_cnst: Vec::new(),
            cpu_speed: Vec::new(),
            acts: Vec::new(),
            free: Vec::new(),
            var_act: Vec::new(),
            heap: IndexedHeap::new(),
        }
    }

    /// Forces full re-solves (debug/reference mode) instead of incremental ones.
    pub fn set_full_solve(&mut self, full: bool) {
        self.lmm.set_selective(!full);
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
        self.cpu_cnst.push(
            self.lmm
                .add_constraint(f64::from(cores) * speed_flops_per_sec, Sharing::Shared),
        );
        self.cpu_speed.push(speed_flops_per_sec);
        self.cpu_cnst.len() as u32 - 1
    }

    /// Current simulated time in seconds.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Number of activities in progress.
    pub fn in_progress(&self) -> usize {
        self.acts.len() - self.free.len()
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

    /// Starts executing `flops` on CPU `cpu`.
    pub fn start_exec(&mut self, cpu: u32, flops: f64) -> ActivityId {
        let speed = self.cpu_speed[cpu as usize];
        let var = self.lmm.add_variable(1.0, speed);
        self.lmm.expand(self.cpu_cnst[cpu as usize], var, 1.0);
        let id = self.alloc(Activity {
            phase: Phase::Running,
            var: Some(var),
            remaining: flops,
            last_update: self.now,
            last_rate: 0.0,
            rate_factor: 1.0,
            penalty_after_latency: 1.0,
        });
        self.bind_var(var, id);
        id
    }

    /// Starts a pure delay of `secs` seconds (SimGrid 3.32 `CpuCas01::sleep`: a positive
    /// duration is at least `surf/precision`).
    pub fn start_sleep(&mut self, secs: f64) -> ActivityId {
        let secs = if secs > 0.0 {
            secs.max(SURF_PRECISION)
        } else {
            0.0
        };
        let id = self.alloc(Activity {
            phase: Phase::Sleeping,
            var: None,
            remaining: 0.0,
            last_update: self.now,
            last_rate: 0.0,
            rate_factor: 1.0,
            penalty_after_latency: 0.0,
        });
        self.heap.set(id.0, self.now + secs);
        id
    }

    /// Starts moving `bytes` (P, envelope included) along `route` (link indices, in order) whose
    /// raw latency is `route_latency_secs`; `back_route` is the reverse route, charged at 0.05 when
    /// `network/crosstraffic` is on.
    pub fn start_comm(
        &mut self,
        route: &[u32],
        back_route: &[u32],
        route_latency_secs: f64,
        bytes: f64,
    ) -> ActivityId {
        let l = route_latency_secs;
        let mut penalty = l;
        if self.net.weight_s_bytes > 0.0 {
            penalty += route
                .iter()
                .map(|&k| self.net.weight_s_bytes / self.link_bw[k as usize])
                .sum::<f64>();
        }
        let bw_factor = self.net.bw_factor.factor(bytes);
        let mut bound = route
            .iter()
            .map(|&k| self.link_bw[k as usize])
            .fold(-1.0f64, |b, bw| if b < 0.0 || bw < b { bw } else { b });
        if l > 0.0 {
            let gamma = self.net.tcp_gamma_bytes / (2.0 * l);
            bound = if bound < 0.0 { gamma } else { bound.min(gamma) };
        }
        let latency = l * self.net.lat_factor.factor(bytes);
        let (phase, initial_penalty) = if latency > 0.0 {
            (Phase::Latency, 0.0)
        } else {
            (Phase::Running, 1.0)
        };
        let var = self.lmm.add_variable(initial_penalty, bound);
        for &k in route {
            self.lmm.expand(self.link_cnst[k as usize], var, 1.0);
        }
        if self.net.crosstraffic {
            for &k in back_route {
                self.lmm.expand(self.link_cnst[k as usize], var, 0.05);
            }
        }
        let id = self.alloc(Activity {
            phase,
            var: Some(var),
            remaining: bytes,
            last_update: self.now,
            last_rate: 0.0,
            rate_factor: bw_factor,
            penalty_after_latency: penalty,
        });
        self.bind_var(var, id);
        if phase == Phase::Latency {
            self.heap.set(id.0, self.now + latency);
        }
        id
    }

    /// Re-solves what changed, advances the clock to the next event and appends the activities
    /// completed at that instant to `done` (in completion-date order, ties in scheduling order).
    /// Returns `false` when nothing is in progress or nothing can progress (every remaining
    /// activity has rate 0): the caller then has a deadlock or is finished.
    pub fn step(&mut self, done: &mut Vec<ActivityId>) -> bool {
        self.lmm.solve();
        for i in 0..self.lmm.touched().len() {
            let var = self.lmm.touched()[i];
            let a = self.var_act[var.0 as usize];
            let act = &mut self.acts[a as usize];
            if act.phase != Phase::Running {
                continue;
            }
            let delta = self.now - act.last_update;
            if act.remaining > 0.0 {
                double_update(
                    &mut act.remaining,
                    act.last_rate * delta,
                    MAXMIN_PRECISION * SURF_PRECISION,
                );
            }
            act.last_update = self.now;
            let rate = self.lmm.value(var) * act.rate_factor;
            act.last_rate = rate;
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
        let Some((date, _)) = self.heap.peek() else {
            return false;
        };
        self.now += date - self.now;
        while let Some((d, a)) = self.heap.peek() {
            if !double_equals(d, self.now, SURF_PRECISION) {
                break;
            }
            self.heap.pop();
            let act = &mut self.acts[a as usize];
            match act.phase {
                Phase::Latency => {
                    act.phase = Phase::Running;
                    act.last_update = self.now;
                    let (var, p) = (
                        act.var.expect("transfer has a variable"),
                        act.penalty_after_latency,
                    );
                    self.lmm.set_penalty(var, p);
                }
                Phase::Running | Phase::Sleeping => {
                    if let Some(var) = act.var.take() {
                        self.lmm.remove_variable(var);
                    }
                    act.phase = Phase::Free;
                    self.free.push(a);
                    done.push(ActivityId(a));
                }
                Phase::Free => unreachable!("a free activity slot is never scheduled"),
            }
        }
        true
    }
}

#[cfg(test)]
mod tests;
