//! Routes between hosts, looked up in the platform once per host pair and cached.
//!
//! A transfer needs its forward route (and, with `network/crosstraffic`, the reverse one, whose
//! links carry the acknowledgements). `route_list` holds each looked-up route as a latency and a
//! range of `route_links` (one arena of link indices for all routes); `routes` maps a (source
//! host, destination host) pair to the indices of its forward and reverse routes, so that a
//! transfer costs one map lookup whatever the rank count, and the platform's routing is asked
//! once per pair for the whole replay.
//!
//! Example: the first transfer from host 3 to host 7 fetches 3 → 7 (route 0, links
//! `route_links[0..3]`) and, with cross-traffic, 7 → 3 (route 1, `route_links[3..6]`) and
//! stores `routes[(3, 7)] = [0, 1]`; every later transfer 3 → 7 finds both in that one entry.

use timeless_platform::HostId;

use super::Simulation;
use crate::error::ReplayError;

/// A route as the kernel takes it: links `route_links[start..start + len]`.
pub(super) struct Route {
    start: u32,
    len: u32,
    pub(super) latency_secs: f64,
}

/// A reverse route not fetched yet (cross-traffic off).
const NO_ROUTE: u32 = u32::MAX;

impl Simulation<'_> {
    /// The forward route `src_host → dst_host` and, when `with_back`, the reverse one, as indices
    /// into `route_list`. The forward route must exist (links or latency); the reverse route used
    /// for cross-traffic may be empty, as in SimGrid 3.32 (`NetworkCm02Model::comm_get_route_info`
    /// only asserts on the forward route).
    ///
    /// # Errors
    /// No forward route, or the platform's routing fails.
    pub(super) fn routes(
        &mut self,
        src_host: u32,
        dst_host: u32,
        rank: u32,
        with_back: bool,
    ) -> Result<(u32, Option<u32>), ReplayError> {
        let [fwd, back] = match self.routes.get(&(src_host, dst_host)) {
            Some(&pair) => pair,
            None => {
                let fwd = self.fetch_route(src_host, dst_host, rank)?;
                let r = &self.route_list[fwd as usize];
                if r.len == 0 && r.latency_secs <= 0.0 {
                    let why = match self.platform.route(HostId(src_host), HostId(dst_host)) {
                        Err(e) => e.to_string(),
                        Ok(_) => "the route is empty".to_string(),
                    };
                    return Err(self.route_error(src_host, dst_host, rank, why));
                }
                self.routes.insert((src_host, dst_host), [fwd, NO_ROUTE]);
                [fwd, NO_ROUTE]
            }
        };
        if !with_back {
            return Ok((fwd, None));
        }
        if back != NO_ROUTE {
            return Ok((fwd, Some(back)));
        }
        let back = self.fetch_route(dst_host, src_host, rank)?;
        self.routes.insert((src_host, dst_host), [fwd, back]);
        Ok((fwd, Some(back)))
    }

    /// Route `i`'s links: a range of `route_links`.
    pub(super) fn route_range(&self, i: u32) -> std::ops::Range<usize> {
        let r = &self.route_list[i as usize];
        r.start as usize..(r.start + r.len) as usize
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
        let start = self.route_links.len() as u32;
        self.route_links.extend(route.links.iter().map(|l| l.0));
        self.route_list.push(Route {
            start,
            len: route.links.len() as u32,
            latency_secs: route.latency_secs,
        });
        Ok(self.route_list.len() as u32 - 1)
    }
}
