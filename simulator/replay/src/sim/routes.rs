//! Routes between hosts, looked up in the platform once per host pair and cached.
//!
//! A transfer needs its forward route (and, with `network/crosstraffic`, the reverse one, whose
//! links carry the acknowledgements). `route_list` holds each looked-up route as link indices and
//! a latency; `routes` maps a (source host, destination host) pair to its index there, so the
//! platform's routing is asked once per pair for the whole replay.

use timeless_platform::HostId;

use super::Simulation;
use crate::error::ReplayError;

/// A route as the kernel takes it.
pub(super) struct Route {
    pub(super) links: Vec<u32>,
    pub(super) latency_secs: f64,
}

impl Simulation<'_> {
    /// Route index for `src_host → dst_host`. A forward route must exist (links or latency);
    /// the reverse route used for cross-traffic may be empty, as in SimGrid 3.32
    /// (`NetworkCm02Model::comm_get_route_info` only asserts on the forward route).
    pub(super) fn route(
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
}
