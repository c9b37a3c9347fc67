//! `routing="Floyd"`: shortest paths over the declared routes, by link count.
//!
//! Source: `src/kernel/routing/FloydZone.cpp`.
//!
//! Each declared route is an edge whose cost is its number of links. When the zone is sealed,
//! the Floyd–Warshall algorithm runs over the vertices in index order (`c`, then `a`, then
//! `b`), and a path replaces the current one only if it is **strictly** cheaper, so among equal
//! costs the first path found in that order is kept. "No path" is `u32::MAX` (SimGrid's
//! `ULONG_MAX`; costs are link counts and never come close). The tables take `8 n²` bytes and
//! `n³` steps, as in SimGrid; zones above [`MAX_FLOYD_VERTICES`] components are refused.
//!
//! * In base mode, vertices without a declared self-route get the `__loopback__` link with
//!   cost 1 before the algorithm runs.
//! * A symmetrical route also installs the reverse edge; for `src == dst` this collides with
//!   the forward edge and is an error, as in SimGrid (declare self-routes `symmetrical="NO"`).
//! * A local route walks the predecessor table back from `dst` and concatenates the edges.
//!   In recursive mode, when two consecutive zone-level edges do not share their gateway,
//!   the global route between the two gateways is inserted between them.

use super::add_links;
use super::full::RouteNames;
use crate::zone::{Gateways, LocalRoute, NpId, Zone};
use crate::{LinkId, Platform};
use rustc_hash::FxHashMap as HashMap;

/// Largest Floyd zone accepted (512 MB of tables, 5·10¹¹ steps).
pub(crate) const MAX_FLOYD_VERTICES: usize = 8192;

/// Tables of a Floyd zone.
#[derive(Debug, Clone, Default)]
pub(crate) struct FloydRouting {
    link_table: HashMap<(usize, usize), LocalRoute>,
    /// `predecessor[a * n + b]`, or -1; filled by `seal`.
    predecessor: Vec<i32>,
    size: usize,
}

impl FloydRouting {
    /// `FloydZone::add_route`.
    pub(crate) fn add_route(
        &mut self,
        src: usize,
        dst: usize,
        forward: LocalRoute,
        reverse: Option<LocalRoute>,
        names: &RouteNames,
    ) -> Result<(), String> {
        if self.link_table.contains_key(&(src, dst)) {
            return Err(format!(
                "The route between {} and {} already exists (Rq: routes are symmetrical by default).",
                names.src_label(),
                names.dst_label()
            ));
        }
        self.link_table.insert((src, dst), forward);
        if let Some(reverse) = reverse {
            if self.link_table.contains_key(&(dst, src)) {
                return Err(format!(
                    "The route between {} and {} already exists. You should not declare the reverse path as symmetrical.",
                    names.dst_label(),
                    names.src_label()
                ));
            }
            self.link_table.insert((dst, src), reverse);
        }
        Ok(())
    }

    /// `FloydZone::do_seal`: loopbacks (base mode) and the Floyd–Warshall closure.
    pub(crate) fn seal(&mut self, n: usize, loopback: Option<LinkId>) {
        if let Some(loopback) = loopback {
            for i in 0..n {
                self.link_table.entry((i, i)).or_insert_with(|| LocalRoute {
                    links: vec![loopback],
                    gw_src: None,
                    gw_dst: None,
                });
            }
        }
        // Costs are link counts, far below u32::MAX, which stands for SimGrid's ULONG_MAX.
        let mut cost = vec![u32::MAX; n * n];
        let mut pred = vec![-1i32; n * n];
        for (&(a, b), route) in &self.link_table {
            if a < n && b < n {
                cost[a * n + b] = route.links.len().min(u32::MAX as usize - 1) as u32;
                pred[a * n + b] = a as i32;
            }
        }
        for c in 0..n {
            for a in 0..n {
                let ac = cost[a * n + c];
                if ac == u32::MAX {
                    continue;
                }
                for b in 0..n {
                    let cb = cost[c * n + b];
                    if cb < u32::MAX {
                        let ab = cost[a * n + b];
                        let through = ac.saturating_add(cb);
                        if ab == u32::MAX || through < ab {
                            cost[a * n + b] = through;
                            pred[a * n + b] = pred[c * n + b];
                        }
                    }
                }
            }
        }
        self.predecessor = pred;
        self.size = n;
    }

    /// `FloydZone::get_local_route`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn local_route(
        &self,
        platform: &Platform,
        zone: &Zone,
        src: NpId,
        dst: NpId,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        depth: usize,
    ) -> Result<Gateways, String> {
        let n = self.size;
        let s = platform.netpoints[src].vertex;
        let d = platform.netpoints[dst].vertex;
        let no_route = || {
            format!(
                "No route from '{}' to '{}'",
                platform.netpoints[src].name, platform.netpoints[dst].name
            )
        };
        if s >= n || d >= n {
            return Err(no_route());
        }
        let mut stack: Vec<&LocalRoute> = Vec::new();
        let mut cur = d;
        loop {
            let pred = self.predecessor[s * n + cur];
            if pred < 0 || stack.len() > n {
                return Err(no_route());
            }
            let pred = pred as usize;
            stack.push(self.link_table.get(&(pred, cur)).ok_or_else(no_route)?);
            cur = pred;
            if cur == s {
                break;
            }
        }
        let mut gateways = Gateways::default();
        if zone.recursive {
            gateways.src = stack.last().and_then(|r| r.gw_src);
            gateways.dst = stack.first().and_then(|r| r.gw_dst);
        }
        let mut prev_dst_gw: Option<NpId> = None;
        while let Some(route) = stack.pop() {
            if zone.recursive {
                if let Some(prev) = prev_dst_gw {
                    let gw_src = route.gw_src.ok_or_else(no_route)?;
                    if prev != gw_src {
                        platform.global_route(prev, gw_src, links, lat, depth + 1)?;
                    }
                }
            }
            add_links(links, lat, &platform.links, &route.links);
            prev_dst_gw = route.gw_dst;
        }
        Ok(gateways)
    }
}
