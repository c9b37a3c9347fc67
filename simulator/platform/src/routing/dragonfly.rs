//! `<cluster topology="DRAGONFLY" topo_parameters="G,blue;C,black;R,green;N">`.
//!
//! Source: `src/kernel/routing/DragonflyZone.cpp`.
//!
//! `G` groups of `C` chassis of `R` routers (blades) of `N` nodes each. Node `r` has
//! coordinates `group = r / (C·R·N)`, `chassis`, `blade`, `node` in that mixed radix, and router
//! index `group·C·R + chassis·R + blade`. Links, all named with a global counter `<uid>` that
//! SimGrid keeps in a `static` (it continues across dragonfly clusters):
//!
//! * `local_link_from_router_<router>_to_node_<n>_<uid>`: node ↔ router (bandwidth `bw`);
//! * `green_link_in_chassis_<chassis>_between_routers_<j>_and_<k>_<uid>`: all-to-all between
//!   the routers of a chassis (`bw × green`), the UP half used from `j` to `k > j`;
//! * `black_link_in_group_<g>_between_chassis_<j>_and_<k>_blade_<l>_<uid>`: all-to-all between
//!   the same blade of the chassis of a group (`bw × black`);
//! * `blue_link_between_group_<i>_and_<j>_routers_<a>_and_<b>_<uid>`: one per pair of groups,
//!   attached to router `i·C·R + j` of group `i` and `j·C·R + i` of group `j` (`bw × blue`).
//!
//! SPLITDUPLEX clusters get `_UP`/`_DOWN` halves, other policies one SHARED link.
//!
//! Minimal routing from `s` to `t`: node→router UP link; if the groups differ, a green hop to
//! blade `t.group` of the source chassis (unless already there), a black hop to chassis 0
//! (unless already there), the blue hop, arriving at router (`t.group`, chassis 0, blade
//! `s.group`); then a green hop to the target blade if needed, a black hop to the target
//! chassis if needed; finally the router→node DOWN link. Router limiters are added where SimGrid
//! adds them, node limiters first and last. This assumes `G ≤ R`, as SimGrid does; other
//! shapes make SimGrid read out of bounds and are reported as errors here.

use super::add_link;
use super::cluster_base::{bounded_product, ClusterBase};
use crate::zone::{Gateways, NetPoint};
use crate::{Link, LinkId};

/// A dragonfly router.
#[derive(Debug, Clone)]
pub(crate) struct DfRouter {
    group: usize,
    chassis: usize,
    blade: usize,
    blue_link: Option<LinkId>,
    limiter: Option<LinkId>,
    black_links: Vec<Option<LinkId>>,
    green_links: Vec<Option<LinkId>>,
    my_nodes: Vec<Option<LinkId>>,
}

/// The parsed `topo_parameters` of a dragonfly.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DragonflyParams {
    pub groups: usize,
    pub blue: usize,
    pub chassis: usize,
    pub black: usize,
    pub routers: usize,
    pub green: usize,
    pub nodes: usize,
}

impl DragonflyParams {
    /// Number of leaves: `G·C·R·N`.
    pub(crate) fn leaf_count(&self) -> usize {
        self.groups * self.chassis * self.routers * self.nodes
    }
}

/// Parses `topo_parameters` like `DragonflyZone::parse_topo_parameters` and checks the values
/// like `DragonflyParams::DragonflyParams` (every number must be positive).
pub(crate) fn parse_topo_parameters(text: &str) -> Result<DragonflyParams, String> {
    let parts: Vec<&str> = text.split(';').collect();
    if parts.len() != 4 {
        return Err("Dragonfly are defined by the number of groups, chassis per groups, blades per chassis, nodes per blade (expected \"G,blue;C,black;R,green;N\")".to_string());
    }
    let number = |s: &str, what: &str| -> Result<usize, String> {
        match crate::platform_xml::stoi(s) {
            Some(v) if v > 0 => Ok(v as usize),
            Some(_) => Err(format!("Dragonfly: Invalid number of {what}, must be > 0")),
            None => Err(format!("Invalid number of {what}: {s}")),
        }
    };
    let pair = |s: &str, a: &str, b: &str| -> Result<(usize, usize), String> {
        let items: Vec<&str> = s.split(',').collect();
        if items.len() != 2 {
            return Err(
                "Dragonfly topologies are defined by 3 levels with 2 elements each, and one with one element"
                    .to_string(),
            );
        }
        Ok((number(items[0], a)?, number(items[1], b)?))
    };
    let (groups, blue) = pair(parts[0], "groups", "blue (groups) links")?;
    let (chassis, black) = pair(parts[1], "chassis", "black (chassis) links")?;
    let (routers, green) = pair(parts[2], "routers", "green (routers) links")?;
    let nodes = number(parts[3], "nodes")?;
    let routers_total = bounded_product(&[groups, chassis, routers], "dragonfly routers")?;
    bounded_product(&[routers_total, nodes, 2], "dragonfly nodes")?;
    Ok(DragonflyParams {
        groups,
        blue,
        chassis,
        black,
        routers,
        green,
        nodes,
    })
}

/// A dragonfly cluster's tables.
#[derive(Debug, Clone)]
pub(crate) struct DragonflyRouting {
    pub base: ClusterBase,
    params: DragonflyParams,
    /// 2 for SPLITDUPLEX clusters (UP and DOWN local links), 1 otherwise.
    links_per_link: usize,
    routers: Vec<DfRouter>,
}

impl DragonflyRouting {
    pub(crate) fn new(params: DragonflyParams, split_duplex: bool) -> Self {
        DragonflyRouting {
            base: ClusterBase::new(1),
            params,
            links_per_link: if split_duplex { 2 } else { 1 },
            routers: Vec::new(),
        }
    }

    /// `generate_routers` then `generate_links`.
    ///
    /// `limiter_for(id)` creates a router limiter (if the cluster has limiters);
    /// `make_link(name, multiplicity)` creates a link of `bw × multiplicity` and returns
    /// (up, down).
    pub(crate) fn build_upper_levels(
        &mut self,
        limiter_for: &mut dyn FnMut(usize) -> Result<Option<LinkId>, String>,
        has_limiter: bool,
        make_link: &mut dyn FnMut(String, usize) -> Result<(LinkId, LinkId), String>,
        unique_id: &mut u64,
    ) -> Result<(), String> {
        let p = self.params;
        let mut id = 2 * p.leaf_count();
        for i in 0..p.groups {
            for j in 0..p.chassis {
                for k in 0..p.routers {
                    let limiter = if has_limiter {
                        id -= 1;
                        limiter_for(id)?
                    } else {
                        None
                    };
                    self.routers.push(DfRouter {
                        group: i,
                        chassis: j,
                        blade: k,
                        blue_link: None,
                        limiter,
                        black_links: vec![None; p.chassis],
                        green_links: vec![None; p.routers],
                        my_nodes: vec![None; self.links_per_link * p.nodes],
                    });
                }
            }
        }
        let lpl = self.links_per_link;
        for i in 0..self.routers.len() {
            for j in (0..lpl * p.nodes).step_by(lpl) {
                let name = format!("local_link_from_router_{i}_to_node_{}_{unique_id}", j / lpl);
                let (up, down) = make_link(name, 1)?;
                self.routers[i].my_nodes[j] = Some(up);
                if lpl == 2 {
                    self.routers[i].my_nodes[j + 1] = Some(down);
                }
                *unique_id += 1;
            }
        }
        for i in 0..p.groups * p.chassis {
            for j in 0..p.routers {
                for k in j + 1..p.routers {
                    let name = format!(
                        "green_link_in_chassis_{}_between_routers_{j}_and_{k}_{unique_id}",
                        i % p.chassis
                    );
                    let (up, down) = make_link(name, p.green)?;
                    self.routers[i * p.routers + j].green_links[k] = Some(up);
                    self.routers[i * p.routers + k].green_links[j] = Some(down);
                    *unique_id += 1;
                }
            }
        }
        for i in 0..p.groups {
            for j in 0..p.chassis {
                for k in j + 1..p.chassis {
                    for l in 0..p.routers {
                        let name = format!(
                            "black_link_in_group_{i}_between_chassis_{j}_and_{k}_blade_{l}_{unique_id}"
                        );
                        let (up, down) = make_link(name, p.black)?;
                        let group_base = i * p.routers * p.chassis;
                        self.routers[group_base + j * p.routers + l].black_links[k] = Some(up);
                        self.routers[group_base + k * p.routers + l].black_links[j] = Some(down);
                        *unique_id += 1;
                    }
                }
            }
        }
        for i in 0..p.groups {
            for j in i + 1..p.groups {
                let ri = i * p.routers * p.chassis + j;
                let rj = j * p.routers * p.chassis + i;
                let name = format!(
                    "blue_link_between_group_{i}_and_{j}_routers_{ri}_and_{rj}_{unique_id}"
                );
                let (up, down) = make_link(name, p.blue)?;
                if ri >= self.routers.len() || rj >= self.routers.len() {
                    return Err(format!(
                        "Dragonfly with {} groups needs at least {} routers per group (SimGrid 3.32 writes out of bounds)",
                        p.groups, p.groups
                    ));
                }
                self.routers[ri].blue_link = Some(up);
                self.routers[rj].blue_link = Some(down);
                *unique_id += 1;
            }
        }
        Ok(())
    }

    /// (group, chassis, blade, node) of a leaf index (`rankId_to_coords`).
    fn coords(&self, rank: usize) -> (usize, usize, usize, usize) {
        let p = &self.params;
        let per_group = p.chassis * p.routers * p.nodes;
        let group = rank / per_group;
        let rank = rank % per_group;
        let chassis = rank / (p.routers * p.nodes);
        let rank = rank % (p.routers * p.nodes);
        (group, chassis, rank / p.nodes, rank % p.nodes)
    }

    fn router_index(&self, group: usize, chassis: usize, blade: usize) -> usize {
        group * (self.params.chassis * self.params.routers) + chassis * self.params.routers + blade
    }

    /// `DragonflyZone::get_local_route`.
    pub(crate) fn local_route(
        &self,
        src: &NetPoint,
        dst: &NetPoint,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        all: &[Link],
    ) -> Result<Gateways, String> {
        if src.is_router() || dst.is_router() {
            return Ok(Gateways::default());
        }
        let base = &self.base;
        if src.vertex == dst.vertex && base.has_loopback {
            let link = base.uplink_from(base.node_pos(src.vertex))?;
            add_link(links, lat, all, link);
            return Ok(Gateways::default());
        }
        let broken = || {
            format!(
                "dragonfly routing from '{}' to '{}' needs a link that does not exist (SimGrid 3.32 reads out of bounds)",
                src.name, dst.name
            )
        };
        let router = |index: usize| self.routers.get(index).ok_or_else(broken);
        let pick = |list: &[Option<LinkId>], index: usize| {
            list.get(index).copied().flatten().ok_or_else(broken)
        };

        let my = self.coords(src.vertex);
        let target = self.coords(dst.vertex);
        let my_router = self.router_index(my.0, my.1, my.2);
        let target_router = self.router_index(target.0, target.1, target.2);
        let mut current = my_router;
        let lpl = self.links_per_link;

        if base.has_limiter {
            links.push(base.uplink_from(base.node_pos_with_loopback(src.vertex))?);
        }
        add_link(
            links,
            lat,
            all,
            pick(&router(my_router)?.my_nodes, my.3 * lpl)?,
        );

        if target_router != my_router {
            if router(target_router)?.group != router(current)?.group {
                if router(current)?.blade != target.0 {
                    let r = router(current)?;
                    if let Some(limiter) = r.limiter {
                        links.push(limiter);
                    }
                    add_link(links, lat, all, pick(&r.green_links, target.0)?);
                    current = self.router_index(my.0, my.1, target.0);
                }
                if router(current)?.chassis != 0 {
                    let r = router(current)?;
                    if let Some(limiter) = r.limiter {
                        links.push(limiter);
                    }
                    add_link(links, lat, all, pick(&r.black_links, 0)?);
                    current = self.router_index(my.0, 0, target.0);
                }
                let r = router(current)?;
                add_link(links, lat, all, r.blue_link.ok_or_else(broken)?);
                if let Some(limiter) = r.limiter {
                    links.push(limiter);
                }
                current = self.router_index(target.0, 0, my.0);
            }
            if router(target_router)?.blade != router(current)?.blade {
                let r = router(current)?;
                if let Some(limiter) = r.limiter {
                    links.push(limiter);
                }
                add_link(links, lat, all, pick(&r.green_links, target.2)?);
                current = self.router_index(target.0, 0, target.2);
            }
            if router(target_router)?.chassis != router(current)?.chassis {
                let r = router(current)?;
                if let Some(limiter) = r.limiter {
                    links.push(limiter);
                }
                add_link(links, lat, all, pick(&r.black_links, target.1)?);
            }
        }
        let t = router(target_router)?;
        if let Some(limiter) = t.limiter {
            links.push(limiter);
        }
        add_link(
            links,
            lat,
            all,
            pick(&t.my_nodes, target.3 * lpl + lpl - 1)?,
        );
        if base.has_limiter {
            links.push(base.downlink_to(base.node_pos_with_loopback(dst.vertex))?);
        }
        Ok(Gateways::default())
    }
}
