//! Transfer paths: a route and its reverse route, prepared once for every transfer between two
//! hosts.
//!
//! A transfer's variable has weight 1 on each link of its route and 0.05 on each link of the
//! reverse route (cross-traffic), merged per link as SimGrid's `expand` merges them (a link on
//! both gets 1.05), the penalty `L + Σ weight_S/B_i` and the bound `min(min_i B_i, γ/(2L))`
//! (the parent module's doc). None of these depend on the message, so [`Engine::add_path`]
//! computes them once and every transfer on the path ([`Engine::start_path_comm`]) only looks up
//! its size's latency and bandwidth factors: no route walk, no merge, no copy of the links into
//! the latency phase (the activity keeps the path's index).
//!
//! Example: route up_3, B, down_7 and reverse route up_7, B, down_3 on a cluster of 125 MB/s
//! private links and a 2.25 GB/s backbone B, L = 600 µs: elements (up_3, 1), (B, 1.05),
//! (down_7, 1), (up_7, 0.05), (down_3, 0.05); penalty 600e-6 + 8775 × (2/1.25e8 + 1/2.25e9) =
//! 7.443e-4 s; bound min(1.25e8, 4194304 / (2 × 600e-6)) = 1.25e8 B/s.
//!
//! # Parked variables
//! An iterative application sends on the same paths every iteration. When a transfer ends, its
//! variable is not removed but **parked** on its path at penalty 0 ([`System::set_penalty`]):
//! its elements stay in their constraints, outside the active prefixes that solving walks, and
//! the next transfer on the path takes it back by giving it its penalty again. Either way the
//! active prefixes, the modified constraints and the list of active variables change exactly as
//! removing the variable and adding a new one would change them (a new element also enters at
//! the end of the active prefix), so the values and dates are the same bit for bit; what is
//! saved is freeing and allocating the variable and its elements and inserting them into the
//! constraints' lists. A path keeps at most one parked variable (a second transfer ending
//! there removes its own), so parking costs at most one variable per path used.
//!
//! Example: the 16-rank ring of `validation/bench` sends 10 kB from each rank to the next every
//! iteration: 16 paths, each with its variable parked between iterations; per transfer the
//! main thread executes 4.4 % fewer instructions than with a new variable each time.
//!
//! [`System::set_penalty`]: crate::lmm::System::set_penalty

use super::{Activity, ActivityId, Engine, Phase};
use crate::lmm::{CnstId, ShapeId, VarId};
use rustc_hash::FxHashMap;

/// A path made by [`Engine::add_path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathId(pub u32);

/// What every transfer on a path shares.
#[derive(Debug, Clone)]
pub(super) struct Path {
    /// The route's raw latency L (s).
    latency_secs: f64,
    /// The variable's penalty after the latency phase, `L + Σ weight_S/B_i` (s).
    penalty: f64,
    /// `min(min_i B_i, γ/(2L))` in B/s; negative: none (no link and no latency).
    bound: f64,
    /// Its elements, one per constraint, as a shape of the max-min system (so that a memo key
    /// names the path's elements in one word, `lmm::memo`).
    shape: ShapeId,
    /// The variable of an ended transfer, parked at penalty 0 for the next one (see the module
    /// doc), if any.
    parked: Option<VarId>,
    /// The last message size started on the path (bytes, NaN before the first) and its
    /// `(bw_factor, lat_factor · L)`: an iterative application sends the same size on a path
    /// every time, so the two table lookups are made once per size change.
    last_bytes: f64,
    last_factors: (f64, f64),
}

/// The paths of an engine (their elements are shapes of the max-min system).
#[derive(Debug, Default)]
pub(super) struct Paths {
    list: Vec<Path>,
    /// Scratch for merging a new path's elements.
    elems: Vec<(CnstId, f64)>,
    /// Paths made by [`Engine::start_comm`], by (route, reverse route, latency bits).
    interned: FxHashMap<(Vec<u32>, Vec<u32>, u64), PathId>,
}

impl Paths {
    /// How many paths there are.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// Prefetches path `path`'s record (a cache hint: for [`NO_PATH`](super::NO_PATH) an
    /// address outside the list, which a prefetch ignores).
    #[inline]
    pub(super) fn prefetch(&self, path: u32) {
        crate::prefetch::prefetch(self.list.as_ptr().wrapping_add(path as usize));
    }

    /// The variable parked on path `path` (an activity's path index), if any.
    #[inline]
    pub(super) fn parked_on(&self, path: u32) -> Option<VarId> {
        self.list.get(path as usize).and_then(|p| p.parked)
    }

    /// The variable parked on path `p`, if any.
    #[cfg(test)]
    pub(super) fn parked(&self, p: PathId) -> Option<VarId> {
        self.parked_on(p.0)
    }
}

impl Engine {
    /// Prepares the path of transfers over `route` (link indices, weight 1) with the reverse
    /// route `back_route` (weight 0.05 when `network/crosstraffic` is on, ignored otherwise) and
    /// the route's raw latency `route_latency_secs` (s): the merged elements, the penalty and the
    /// bound of the parent module's doc (SimGrid 3.32 `network/weight-S`, `network/TCP-gamma`).
    /// O(links²) once; the path lives as long as the engine.
    pub fn add_path(
        &mut self,
        route: &[u32],
        back_route: &[u32],
        route_latency_secs: f64,
    ) -> PathId {
        let l = route_latency_secs;
        let mut penalty = l;
        if self.net.weight_s_bytes > 0.0 {
            penalty += route
                .iter()
                .map(|&k| self.net.weight_s_bytes / self.link_bw[k as usize])
                .sum::<f64>();
        }
        let mut bound = route
            .iter()
            .map(|&k| self.link_bw[k as usize])
            .fold(-1.0f64, |b, bw| if b < 0.0 || bw < b { bw } else { b });
        if l > 0.0 {
            let gamma = self.net.tcp_gamma_bytes / (2.0 * l);
            bound = if bound < 0.0 { gamma } else { bound.min(gamma) };
        }
        let back_route = if self.net.crosstraffic {
            back_route
        } else {
            &[]
        };
        let link_cnst = &self.link_cnst;
        self.paths.elems.clear();
        self.lmm.merge_elements(
            route
                .iter()
                .map(|&k| (link_cnst[k as usize], 1.0))
                .chain(back_route.iter().map(|&k| (link_cnst[k as usize], 0.05))),
            &mut self.paths.elems,
        );
        let shape = self.lmm.add_shape(&self.paths.elems);
        self.paths.list.push(Path {
            latency_secs: l,
            penalty,
            bound,
            shape,
            parked: None,
            last_bytes: f64::NAN,
            last_factors: (1.0, l),
        });
        PathId(self.paths.list.len() as u32 - 1)
    }

    /// Starts transferring `bytes` over `route`: [`Engine::start_path_comm`] on the path of
    /// `route`, `back_route` and `route_latency_secs` ([`Engine::add_path`]), made at the first
    /// call with these links and latency and found in a map afterwards.
    pub fn start_comm(
        &mut self,
        route: &[u32],
        back_route: &[u32],
        route_latency_secs: f64,
        bytes: f64,
    ) -> ActivityId {
        let key = (
            route.to_vec(),
            back_route.to_vec(),
            route_latency_secs.to_bits(),
        );
        let path = match self.paths.interned.get(&key) {
            Some(&p) => p,
            None => {
                let p = self.add_path(route, back_route, route_latency_secs);
                self.paths.interned.insert(key, p);
                p
            }
        };
        self.start_path_comm(path, bytes)
    }

    /// Starts transferring `bytes` (payload and envelope) over `path`: a latency phase of
    /// `lat_factor(bytes) · L` seconds, then a variable with the path's penalty, bound and
    /// elements draining at `bw_factor(bytes)` times its share (parent module's doc; with no
    /// latency phase the penalty is 1, SimGrid 3.32's quirk).
    pub fn start_path_comm(&mut self, path: PathId, bytes: f64) -> ActivityId {
        let p = &mut self.paths.list[path.0 as usize];
        let penalty = p.penalty;
        // NaN before the first message: never equal.
        if p.last_bytes != bytes {
            p.last_bytes = bytes;
            p.last_factors = (
                self.net.bw_factor.factor(bytes),
                p.latency_secs * self.net.lat_factor.factor(bytes),
            );
        }
        let (bw_factor, latency) = p.last_factors;
        if latency > 0.0 {
            // The variable is made when the latency phase ends (`end_latency`).
            let id = self.alloc(Activity {
                rate_factor: bw_factor,
                penalty_after_latency: penalty,
                path: path.0,
                ..Activity::new(Phase::Latency, None, bytes, self.now)
            });
            self.heap.set(id.0, self.now + latency);
            return id;
        }
        let id = self.alloc(Activity {
            rate_factor: bw_factor,
            penalty_after_latency: penalty,
            path: path.0,
            ..Activity::new(Phase::Running, None, bytes, self.now)
        });
        self.begin_transfer(id.0, 1.0);
        id
    }

    /// Gives transfer `a` its variable: penalty `penalty` and its path's bound and elements
    /// (the path's parked variable if it has one).
    pub(super) fn begin_transfer(&mut self, a: u32, penalty: f64) {
        let p = &mut self.paths.list[self.acts[a as usize].path as usize];
        let var = match p.parked.take() {
            Some(var) => {
                self.lmm.set_penalty(var, penalty);
                var
            }
            None => self.lmm.add_variable_shaped(penalty, p.bound, p.shape),
        };
        self.acts[a as usize].var = Some(var);
        self.bind_var(var, ActivityId(a));
    }
}

impl Engine {
    /// The transfer on path `path` with variable `var` is over: the variable is parked on the
    /// path (penalty 0) if none is parked there yet, else removed.
    pub(super) fn park_or_remove(&mut self, path: u32, var: VarId) {
        let p = &mut self.paths.list[path as usize];
        if p.parked.is_none() {
            p.parked = Some(var);
            self.lmm.set_penalty(var, 0.0);
        } else {
            self.lmm.remove_variable(var);
        }
    }
}
