//! Star zones: flat `<cluster>`s and `<zone routing="Cluster">`.
//!
//! Source: `src/kernel/routing/StarZone.cpp`.
//!
//! Each component has a list of links *up* (towards the centre), a list of links *down* (from
//! the centre), an optional *loopback* list, and an optional gateway. The route `a → b` is
//! `up(a)` followed by `down(b)`, **each link at most once** (a link already added by this
//! route is skipped, latency included). With `a == b` and a loopback, the route is just the
//! loopback. Gateways are those of `a` and `b`.
//!
//! Declarations (`StarZone::add_route`): "from `a` to everyone" sets `up(a)` (and, when
//! symmetrical, `down(a)` = the reverse route: links reversed, UP/DOWN swapped); "from
//! everyone to `b`" sets `down(b)`; "from `a` to `a`" sets the loopback. A `<route>` between
//! two different components is an error. At seal time, components with no declaration get
//! empty up and down lists. A component whose up (down) list was never set has no route from
//! (to) it.
//!
//! For a flat cluster host `h` with private link `L` (split-duplex), backbone `B` and limiter
//! `M`: up = `[M, L_UP, B]`, down = `[B, L_DOWN, M]`. Hence, for two hosts,
//! `a → b = [M_a, L_a_UP, B, L_b_DOWN, M_b]`, and without loopback `a → a =
//! [M_a, L_a_UP, B, L_a_DOWN]` (the second `M_a` is a duplicate). With a SHARED private link
//! (`L_UP` and `L_DOWN` are the same link), `a → a` is `[L_a, B]`.

use super::add_link;
use crate::zone::{Gateways, NpId};
use crate::{LinkId, Platform};
use rustc_hash::FxHashMap as HashMap;

/// The per-component lists of a star zone (SimGrid's `StarRoute`).
#[derive(Debug, Clone, Default)]
pub(crate) struct StarRoute {
    pub links_up: Vec<LinkId>,
    pub links_down: Vec<LinkId>,
    pub loopback: Vec<LinkId>,
    pub links_up_set: bool,
    pub links_down_set: bool,
    pub gateway: Option<NpId>,
}

/// Routes of a star zone, by vertex.
#[derive(Debug, Clone, Default)]
pub(crate) struct StarRouting {
    routes: HashMap<usize, StarRoute>,
}

impl StarRouting {
    /// Makes room for `vertices` more routes.
    pub(crate) fn reserve(&mut self, vertices: usize) {
        self.routes.reserve(vertices);
    }

    /// Sets the loopback of vertex `v` (a route from a component to itself).
    pub(crate) fn set_loopback(&mut self, v: usize, links: Vec<LinkId>) {
        self.routes.entry(v).or_default().loopback = links;
    }

    /// "From `v` to everyone": the up list, and the down list when `down` is given
    /// (a symmetrical declaration; `down` is already reversed).
    pub(crate) fn set_up(
        &mut self,
        v: usize,
        up: Vec<LinkId>,
        down: Option<Vec<LinkId>>,
        gateway: Option<NpId>,
    ) {
        let route = self.routes.entry(v).or_default();
        route.links_up = up;
        route.gateway = gateway;
        route.links_up_set = true;
        if let Some(down) = down {
            route.links_down = down;
            route.links_down_set = true;
        }
    }

    /// "From everyone to `v`": the down list.
    pub(crate) fn set_down(&mut self, v: usize, down: Vec<LinkId>, gateway: Option<NpId>) {
        let route = self.routes.entry(v).or_default();
        route.links_down = down;
        route.gateway = gateway;
        route.links_down_set = true;
    }

    /// `StarZone::do_seal`: components never declared get empty up and down lists.
    pub(crate) fn seal(&mut self, vertices: usize) {
        for v in 0..vertices {
            self.routes.entry(v).or_insert_with(|| StarRoute {
                links_up_set: true,
                links_down_set: true,
                ..StarRoute::default()
            });
        }
    }

    /// `StarZone::get_local_route`.
    pub(crate) fn local_route(
        &self,
        platform: &Platform,
        src: NpId,
        dst: NpId,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
    ) -> Result<Gateways, String> {
        let src_np = &platform.netpoints[src];
        let dst_np = &platform.netpoints[dst];
        let missing = |np: &str| format!("the star zone has no routing entry for '{np}'");
        let src_route = self
            .routes
            .get(&src_np.vertex)
            .ok_or_else(|| missing(&src_np.name))?;
        let dst_route = self
            .routes
            .get(&dst_np.vertex)
            .ok_or_else(|| missing(&dst_np.name))?;
        let mut added: Vec<LinkId> = Vec::new();
        let mut add_once = |links: &mut Vec<LinkId>, lat: &mut f64, list: &[LinkId]| {
            for &l in list {
                if !added.contains(&l) {
                    added.push(l);
                    add_link(links, lat, &platform.links, l);
                }
            }
        };
        if src == dst && !src_route.loopback.is_empty() {
            add_once(links, lat, &src_route.loopback);
            return Ok(Gateways::default());
        }
        if !src_route.links_up_set {
            return Err(format!(
                "StarZone routing ({} - {}): no link UP from source node",
                src_np.name, dst_np.name
            ));
        }
        if !dst_route.links_down_set {
            return Err(format!(
                "StarZone routing ({} - {}): no link DOWN to destination node",
                src_np.name, dst_np.name
            ));
        }
        add_once(links, lat, &src_route.links_up);
        add_once(links, lat, &dst_route.links_down);
        Ok(Gateways {
            src: src_route.gateway,
            dst: dst_route.gateway,
        })
    }
}
