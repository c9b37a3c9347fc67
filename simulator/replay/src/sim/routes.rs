//! Transfer paths between hosts, built once per host pair and cached.
//!
//! A transfer needs its forward route and, with `network/crosstraffic`, the reverse one, whose
//! links carry the acknowledgements. The first transfer between two hosts asks the platform for
//! both and hands them to the kernel as one path ([`Engine::add_path`]: merged elements,
//! penalty and bound computed once); `paths` maps the (source host, destination host) pair to
//! it, so that a transfer costs one map lookup whatever the rank count, and the platform's
//! routing is asked once per pair for the whole replay.
//!
//! Example: the first transfer from host 3 to host 7 fetches 3 → 7 and, with cross-traffic,
//! 7 → 3, makes path 0 from them and stores `paths[(3, 7)] = 0`; every later transfer 3 → 7
//! starts on path 0 directly.
//!
//! The map ([`HostPaths`]) keeps each source host's first [`INLINE_PEERS`] destinations beside
//! it and scans them, and the others in a hash table: a ring's host sends to one peer, a
//! stencil's to four, most ranks of a binomial tree to a few, so a lookup compares a few
//! words instead of hashing and probing a table of every pair (on the 16-rank ring, ~35
//! instructions per message against ~10).
//!
//! [`Engine::add_path`]: timeless_kernel::Engine::add_path

use rustc_hash::FxHashMap as HashMap;
use timeless_kernel::PathId;
use timeless_platform::HostId;

use super::Simulation;
use crate::error::ReplayError;

/// How many destinations of a source host [`HostPaths`] keeps inline.
const INLINE_PEERS: usize = 4;

/// One source host's first destinations and their paths.
#[derive(Debug, Clone, Copy)]
struct Near {
    dst: [u32; INLINE_PEERS],
    path: [PathId; INLINE_PEERS],
    len: u8,
}

impl Default for Near {
    fn default() -> Self {
        Near {
            dst: [0; INLINE_PEERS],
            path: [PathId(0); INLINE_PEERS],
            len: 0,
        }
    }
}

/// Paths by (source host, destination host) (module doc).
#[derive(Debug, Default)]
pub(super) struct HostPaths {
    /// By source host.
    near: Vec<Near>,
    far: HashMap<(u32, u32), PathId>,
}

impl HostPaths {
    /// The path from `src_host` to `dst_host`, if made.
    #[inline]
    fn get(&self, src_host: u32, dst_host: u32) -> Option<PathId> {
        let near = self.near.get(src_host as usize)?;
        let n = near.len as usize;
        match near.dst[..n].iter().position(|&d| d == dst_host) {
            Some(i) => Some(near.path[i]),
            None if n < INLINE_PEERS => None,
            None => self.far.get(&(src_host, dst_host)).copied(),
        }
    }

    /// Records the path from `src_host` to `dst_host` (not recorded yet).
    fn insert(&mut self, src_host: u32, dst_host: u32, p: PathId) {
        let i = src_host as usize;
        if self.near.len() <= i {
            self.near.resize(i + 1, Near::default());
        }
        let near = &mut self.near[i];
        let n = near.len as usize;
        if n < INLINE_PEERS {
            near.dst[n] = dst_host;
            near.path[n] = p;
            near.len += 1;
        } else {
            self.far.insert((src_host, dst_host), p);
        }
    }
}

impl Simulation<'_> {
    /// The path of transfers `src_host → dst_host`, made at the first call. The forward route
    /// must exist (links or latency); the reverse route used for cross-traffic may be empty, as
    /// in SimGrid 3.32 (`NetworkCm02Model::comm_get_route_info` only asserts on the forward
    /// route).
    ///
    /// # Errors
    /// No forward route, or the platform's routing fails.
    pub(super) fn path(
        &mut self,
        src_host: u32,
        dst_host: u32,
        rank: u32,
    ) -> Result<PathId, ReplayError> {
        if let Some(p) = self.paths.get(src_host, dst_host) {
            return Ok(p);
        }
        let fwd = self.fetch_route(src_host, dst_host, rank)?;
        if fwd.0.is_empty() && fwd.1 <= 0.0 {
            let why = match self.platform.route(HostId(src_host), HostId(dst_host)) {
                Err(e) => e.to_string(),
                Ok(_) => "the route is empty".to_string(),
            };
            return Err(self.route_error(src_host, dst_host, rank, why));
        }
        let back = if self.cfg.net.crosstraffic {
            self.fetch_route(dst_host, src_host, rank)?.0
        } else {
            Vec::new()
        };
        let p = self.engine.add_path(&fwd.0, &back, fwd.1);
        self.paths.insert(src_host, dst_host, p);
        Ok(p)
    }

    fn route_error(&self, src_host: u32, dst_host: u32, rank: u32, why: String) -> ReplayError {
        ReplayError::Route {
            at: self.loc(rank),
            src: self.platform.hosts()[src_host as usize].name.clone(),
            dst: self.platform.hosts()[dst_host as usize].name.clone(),
            why,
        }
    }

    /// The links (indices) and raw latency (s) of the platform's route `src_host → dst_host`.
    fn fetch_route(
        &self,
        src_host: u32,
        dst_host: u32,
        rank: u32,
    ) -> Result<(Vec<u32>, f64), ReplayError> {
        let route = self
            .platform
            .route_or_empty(HostId(src_host), HostId(dst_host))
            .map_err(|e| self.route_error(src_host, dst_host, rank, e.to_string()))?;
        Ok((
            route.links.iter().map(|l| l.0).collect(),
            route.latency_secs,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{HostPaths, PathId, INLINE_PEERS};

    /// A host's first four destinations are kept inline, the fifth and later in the table;
    /// every pair finds its own path, and a pair never recorded finds none (inline or not).
    #[test]
    fn inline_then_table() {
        let mut m = HostPaths::default();
        assert_eq!(m.get(3, 7), None);
        for (k, dst) in [7u32, 1, 9, 2, 5, 0].into_iter().enumerate() {
            m.insert(3, dst, PathId(10 + k as u32));
        }
        m.insert(0, 3, PathId(99));
        assert_eq!(
            m.far.len(),
            2,
            "destinations 5 and 0 of host 3 in the table"
        );
        assert_eq!(m.near[3].len as usize, INLINE_PEERS);
        for (k, dst) in [7u32, 1, 9, 2, 5, 0].into_iter().enumerate() {
            assert_eq!(m.get(3, dst), Some(PathId(10 + k as u32)), "3 -> {dst}");
        }
        assert_eq!(m.get(0, 3), Some(PathId(99)));
        assert_eq!(m.get(0, 7), None, "inline, not recorded");
        assert_eq!(m.get(3, 4), None, "past the inline ones, not recorded");
        assert_eq!(m.get(8, 3), None, "a host beyond the table");
    }
}
