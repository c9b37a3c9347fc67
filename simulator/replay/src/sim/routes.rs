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
//! [`Engine::add_path`]: timeless_kernel::Engine::add_path

use timeless_kernel::PathId;
use timeless_platform::HostId;

use super::Simulation;
use crate::error::ReplayError;

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
        if let Some(&p) = self.paths.get(&(src_host, dst_host)) {
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
        self.paths.insert((src_host, dst_host), p);
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
