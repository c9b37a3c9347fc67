//! Global routes: combining the local routes of the zones, as SimGrid 3.32 does.
//!
//! Source: `src/kernel/routing/NetZoneImpl.cpp` (`get_global_route_with_netzones`,
//! `find_common_ancestors`, `get_bypass_route`).
//!
//! To route from netpoint `src` to netpoint `dst`:
//!
//! 1. Find the *common ancestor* zone and, below it, the two children `src_ancestor` and
//!    `dst_ancestor` that contain `src` and `dst`. When both are in the same zone, all three
//!    are that zone.
//! 2. If the common ancestor holds a bypass route matching the pair (or, for hosts in
//!    sub-zones, a `<bypassZoneRoute>` between their ancestor zones, searched in a fixed
//!    order), use it: the route to its source gateway, its links, and the route from its
//!    destination gateway.
//! 3. If `src_ancestor == dst_ancestor` (the *base case*), the zone's local route between
//!    `src` and `dst` is the answer.
//! 4. Otherwise take the local route of the common ancestor between the two ancestor zones:
//!    it carries gateways `gw_src` and `gw_dst` (an error if it does not). The result is
//!    route(`src` → `gw_src`) + the zone-level links + route(`gw_dst` → `dst`), each part
//!    computed recursively, and skipped when the gateway is the endpoint itself.
//!
//! The latency is the sum of the latencies of the links, accumulated **in the order SimGrid
//! visits them**, which is not always the order of the final list (the zone-level part of
//! step 4 is summed first; Dijkstra zones prepend their links). Floating-point addition is
//! not associative, so this order is kept to reproduce SimGrid's sums bit for bit.
//!
//! Local routes follow each kind's own rules; see the submodules.

pub(crate) mod cluster_base;
pub(crate) mod dijkstra;
pub(crate) mod dragonfly;
pub(crate) mod fat_tree;
pub(crate) mod floyd;
pub(crate) mod full;
pub(crate) mod star;
pub(crate) mod torus;

use crate::zone::{Gateways, NpId, Routing, ZoneId};
use crate::{Link, LinkId, Platform};

/// Recursion bound: a platform whose gateways send the resolution in circles would make
/// SimGrid overflow its stack; we stop with an error instead.
const MAX_DEPTH: usize = 256;

/// Appends one link and adds its latency (SimGrid's `add_link_latency` for one link).
pub(crate) fn add_link(links: &mut Vec<LinkId>, lat: &mut f64, all: &[Link], link: LinkId) {
    links.push(link);
    *lat += all[link.0 as usize].latency_secs;
}

/// Appends links in order, adding their latencies in order (`add_link_latency` for a list).
pub(crate) fn add_links(links: &mut Vec<LinkId>, lat: &mut f64, all: &[Link], list: &[LinkId]) {
    for &link in list {
        add_link(links, lat, all, link);
    }
}

/// SimGrid's `insert_link_latency`: inserts `list` **reversed** at the front of `links`, and
/// adds the latencies in the list's own order. Used by Dijkstra zones.
pub(crate) fn insert_links_front(
    links: &mut Vec<LinkId>,
    lat: &mut f64,
    all: &[Link],
    list: &[LinkId],
) {
    links.splice(0..0, list.iter().rev().copied());
    for &link in list {
        *lat += all[link.0 as usize].latency_secs;
    }
}

impl Platform {
    fn np_name(&self, np: NpId) -> &str {
        &self.netpoints[np].name
    }

    /// The chain of zones from the englobing zone of `np` up to the root.
    fn path_to_root(&self, np: NpId) -> Result<Vec<ZoneId>, String> {
        let mut path = Vec::new();
        let mut current = self.netpoints[np].zone;
        if current.is_none() {
            return Err(format!("'{}' is in no netzone", self.np_name(np)));
        }
        while let Some(z) = current {
            path.push(z);
            current = self.zones[z].parent;
            if path.len() > self.zones.len() {
                return Err("the zone tree has a cycle".to_string());
            }
        }
        Ok(path)
    }

    /// `find_common_ancestors`: (common ancestor, src ancestor, dst ancestor).
    fn common_ancestors(&self, src: NpId, dst: NpId) -> Result<(ZoneId, ZoneId, ZoneId), String> {
        let src_zone = self.netpoints[src].zone;
        if let (Some(z), true) = (src_zone, src_zone == self.netpoints[dst].zone) {
            return Ok((z, z, z));
        }
        let mut path_src = self.path_to_root(src)?;
        let mut path_dst = self.path_to_root(dst)?;
        let mut parent = None;
        while path_src.len() > 1 && path_dst.len() > 1 && path_src.last() == path_dst.last() {
            parent = path_src.pop();
            path_dst.pop();
        }
        let src_anc = *path_src.last().expect("paths are never empty");
        let dst_anc = *path_dst.last().expect("paths are never empty");
        if src_anc == dst_anc {
            Ok((src_anc, src_anc, dst_anc))
        } else {
            match parent {
                Some(common) => Ok((common, src_anc, dst_anc)),
                None => Err(format!(
                    "'{}' and '{}' have no common ancestor zone",
                    self.np_name(src),
                    self.np_name(dst)
                )),
            }
        }
    }

    /// `get_bypass_route`, called on the common ancestor. Returns whether a bypass was used.
    fn bypass_route(
        &self,
        zone: ZoneId,
        src: NpId,
        dst: NpId,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        depth: usize,
    ) -> Result<bool, String> {
        let bypass = &self.zones[zone].bypass;
        if bypass.is_empty() {
            return Ok(false);
        }
        if self.netpoints[src].zone == Some(zone) && self.netpoints[dst].zone == Some(zone) {
            if let Some(route) = bypass.get(&(src, dst)) {
                add_links(links, lat, &self.links, &route.links);
                return Ok(true);
            }
            return Ok(false);
        }
        let mut path_src = self.path_to_root(src)?;
        let mut path_dst = self.path_to_root(dst)?;
        while path_src.len() > 1 && path_dst.len() > 1 && path_src.last() == path_dst.last() {
            path_src.pop();
            path_dst.pop();
        }
        let lookup = |i: usize, j: usize| -> Option<(NpId, NpId)> {
            if i < path_src.len() && j < path_dst.len() {
                let key = (
                    self.zones[path_src[i]].netpoint,
                    self.zones[path_dst[j]].netpoint,
                );
                if bypass.contains_key(&key) {
                    return Some(key);
                }
            }
            None
        };
        // The search order of SimGrid: for growing `max`, pairs (i, max) and (max, i) with
        // i < max, then (max, max).
        let mut found = None;
        let max_index = path_src.len().max(path_dst.len());
        'outer: for max in 0..max_index {
            for i in 0..max {
                if let Some(key) = lookup(i, max).or_else(|| lookup(max, i)) {
                    found = Some(key);
                    break 'outer;
                }
            }
            if let Some(key) = lookup(max, max) {
                found = Some(key);
                break;
            }
        }
        let Some(key) = found else {
            return Ok(false);
        };
        let route = &bypass[&key];
        if src != key.0 {
            let gw = route.gw_src.ok_or_else(|| {
                format!(
                    "the bypass route from '{}' to '{}' has no source gateway",
                    self.np_name(key.0),
                    self.np_name(key.1)
                )
            })?;
            self.global_route(src, gw, links, lat, depth + 1)?;
        }
        add_links(links, lat, &self.links, &route.links);
        if dst != key.1 {
            let gw = route.gw_dst.ok_or_else(|| {
                format!(
                    "the bypass route from '{}' to '{}' has no destination gateway",
                    self.np_name(key.0),
                    self.np_name(key.1)
                )
            })?;
            self.global_route(gw, dst, links, lat, depth + 1)?;
        }
        Ok(true)
    }

    /// `get_global_route_with_netzones`: appends the route `src → dst` to `links`.
    pub(crate) fn global_route(
        &self,
        src: NpId,
        dst: NpId,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        depth: usize,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "route resolution from '{}' to '{}' does not terminate (gateways form a cycle)",
                self.np_name(src),
                self.np_name(dst)
            ));
        }
        let (common, src_anc, dst_anc) = self.common_ancestors(src, dst)?;
        if self.bypass_route(common, src, dst, links, lat, depth)? {
            return Ok(());
        }
        if src_anc == dst_anc {
            self.local_route(common, src, dst, links, lat, depth)?;
            return Ok(());
        }
        let mut zone_links = Vec::new();
        let gw = self.local_route(
            common,
            self.zones[src_anc].netpoint,
            self.zones[dst_anc].netpoint,
            &mut zone_links,
            lat,
            depth,
        )?;
        let (Some(gw_src), Some(gw_dst)) = (gw.src, gw.dst) else {
            return Err(format!(
                "Bad gateways for route from '{}' to '{}' (no zoneRoute from '{}' to '{}' in zone '{}')",
                self.np_name(src),
                self.np_name(dst),
                self.zones[src_anc].name,
                self.zones[dst_anc].name,
                self.zones[common].name
            ));
        };
        if src != gw_src {
            self.global_route(src, gw_src, links, lat, depth + 1)?;
        }
        links.extend_from_slice(&zone_links);
        if gw_dst != dst {
            self.global_route(gw_dst, dst, links, lat, depth + 1)?;
        }
        Ok(())
    }

    /// `get_local_route` of `zone` between two of its components.
    pub(crate) fn local_route(
        &self,
        zone: ZoneId,
        src: NpId,
        dst: NpId,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        depth: usize,
    ) -> Result<Gateways, String> {
        let z = &self.zones[zone];
        let src_np = &self.netpoints[src];
        let dst_np = &self.netpoints[dst];
        match &z.routing {
            Routing::Full(r) => {
                Ok(r.local_route(src_np.vertex, dst_np.vertex, links, lat, &self.links))
            }
            Routing::Floyd(r) => r.local_route(self, z, src, dst, links, lat, depth),
            Routing::Dijkstra(r) => r.local_route(self, z, src, dst, links, lat),
            Routing::Empty => Err(format!(
                "There can't be route in an Empty zone ('{}' has routing None)",
                z.name
            )),
            Routing::Star(r) => r.local_route(self, src, dst, links, lat),
            Routing::Torus(r) => r.local_route(src_np, dst_np, links, lat, &self.links),
            Routing::FatTree(r) => r.local_route(src_np, dst_np, links, lat, &self.links),
            Routing::Dragonfly(r) => r.local_route(src_np, dst_np, links, lat, &self.links),
        }
    }
}
