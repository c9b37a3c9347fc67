//! `<cluster>`, and the `<backbone>`/`<host_link>`/`<cabinet>` of `routing="Cluster"` zones.
//!
//! Source: `src/surf/sg_platf.cpp` (`sg_platf_new_cluster_flat`,
//! `sg_platf_new_cluster_hierarchical`, `sg_platf_zone_cluster_populate`) and the zone files
//! it calls.
//!
//! # `<cluster topology="FLAT">` (the default)
//!
//! A star zone named after the cluster, with, in this order:
//!
//! * the backbone `<id>_backbone` (policy `bb_sharing_policy`, SHARED by default), only if
//!   `bb_bw > 0` or `bb_lat > 0`;
//! * for each radical `r` (e.g. `radical="0-3,7"`): host `<prefix><r><suffix>` with the
//!   cluster's speed, cores and props; the loopback `<id>_link_<r>_loopback` (FATPIPE) if
//!   `loopback_bw > 0` or `loopback_lat > 0`; the limiter `<id>_link_<r>_limiter` (SHARED,
//!   bandwidth `limiter_link`, latency 0) if `limiter_link > 0`; the private link
//!   `<id>_link_<r>`: split into `_UP`/`_DOWN` for SPLITDUPLEX (the default), otherwise **one
//!   SHARED link — also for `sharing_policy="FATPIPE"`**, a SimGrid 3.32 quirk verified by
//!   running it (`create_link` is called without setting the policy);
//! * the router `router_id`, or `<prefix><id>_router<suffix>` by default, with empty routes.
//!
//! Each host's up list is `[limiter] + link(UP) + [backbone]`, declared symmetrical, so its
//! down list is `[backbone] + link(DOWN) + [limiter]`; see [`crate::routing::star`] for the
//! resulting routes.
//!
//! # TORUS, FAT_TREE, DRAGONFLY
//!
//! A zone of that kind with `topo_parameters`; hosts are `<prefix><radical[i]><suffix>` for
//! `i` in `0..leaves` (a missing radical is an error, extra radicals are ignored). Loopbacks
//! are named after the radical, `<id>_link_<radical>_loopback`, but limiters after the leaf
//! index, `<id>_link_<i>_limiter` (and after a switch or router id for the fat-tree and
//! dragonfly ones). `bb_*` and `router_id` are ignored. `bw` must be > 0 and `lat` ≥ 0.
//!
//! # `<zone routing="Cluster">`
//!
//! SimGrid keeps one global record (`zone_cluster`) of the `<backbone>`, `<host_link>`s and
//! `<cabinet>`s met since the last Cluster zone was closed, plus the `routing` of the **last
//! opened** zone. When a zone closes and that routing is `Cluster`, the record is applied to it:
//! the backbone is created (SHARED), each `<host_link id up down>` gives host `id` the up list
//! `[up, backbone]` and the down list `[backbone, down]` (links named exactly, e.g. `l_UP`),
//! and each `<cabinet>` creates hosts `<prefix><r><suffix>` with links `link_<host>_UP` and
//! `link_<host>_DOWN` wired the same way. This is reproduced, including its consequence that a
//! nested zone opened inside a Cluster zone disables the population of the outer one.

use crate::builder::Builder;
use crate::error::{Loc, PlatformError};
use crate::routing::cluster_base::{bounded_product, ClusterBase};
use crate::routing::dragonfly::{self, DragonflyRouting};
use crate::routing::fat_tree::{self, FatTreeRouting};
use crate::routing::star::StarRouting;
use crate::routing::torus::TorusRouting;
use crate::zone::{link_list_impl, LinkInRoute, NpId, Routing, ZoneId};
use crate::{Host, LinkId, SharingPolicy};
use std::cell::RefCell;

/// Policy of a cluster's private links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClusterSharing {
    Shared,
    SplitDuplex,
    FatPipe,
}

/// `topology` of a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Topology {
    Flat,
    Torus,
    FatTree,
    Dragonfly,
}

/// SimGrid's `ClusterCreationArgs` (values in B/s, s, flop/s).
#[derive(Debug, Clone)]
pub(crate) struct ClusterArgs {
    pub id: String,
    pub prefix: String,
    pub suffix: String,
    pub radicals: Vec<i32>,
    pub speeds: Vec<f64>,
    pub cores: u32,
    pub bw: f64,
    pub lat: f64,
    pub bb_bw: f64,
    pub bb_lat: f64,
    pub sharing: ClusterSharing,
    pub bb_policy: SharingPolicy,
    pub topology: Topology,
    pub topo_parameters: String,
    pub router_id: String,
    pub limiter_link: f64,
    pub loopback_bw: f64,
    pub loopback_lat: f64,
    pub props: Vec<(String, String)>,
}

/// SimGrid's `CabinetCreationArgs`.
#[derive(Debug, Clone)]
pub(crate) struct CabinetArgs {
    pub prefix: String,
    pub suffix: String,
    pub radicals: Vec<i32>,
    pub speed: f64,
    pub bw: f64,
    pub lat: f64,
    pub loc: Loc,
}

/// A `<host_link>`.
#[derive(Debug, Clone)]
pub(crate) struct HostLinkArgs {
    pub id: String,
    pub up: String,
    pub down: String,
    pub loc: Loc,
}

/// A `<backbone>`.
#[derive(Debug, Clone)]
pub(crate) struct BackboneArgs {
    pub id: String,
    pub bw: f64,
    pub lat: f64,
    pub loc: Loc,
}

/// SimGrid's `zone_cluster` global.
#[derive(Debug, Clone, Default)]
pub(crate) struct ZoneClusterArgs {
    pub routing: String,
    pub backbone: Option<BackboneArgs>,
    pub host_links: Vec<HostLinkArgs>,
    pub cabinets: Vec<CabinetArgs>,
}

/// `explodesRadical`: `"1-4,6,9-11"` → `[1, 2, 3, 4, 6, 9, 10, 11]`.
pub(crate) fn explode_radicals(text: &str) -> Result<Vec<i32>, String> {
    let mut out = Vec::new();
    for group in text.split(',') {
        let ends: Vec<&str> = group.split('-').collect();
        let parse = |s: &str| {
            crate::platform_xml::stoi(s)
                .ok_or_else(|| format!("radical '{text}': '{s}' is not an int"))
        };
        let start = parse(ends[0])?;
        let end = match ends.len() {
            1 => start,
            2 => parse(ends[1])?,
            _ => return Err(format!("Malformed radical: {group}")),
        };
        let (start, end) = (start as i32, end as i32);
        if (end as i64 - start as i64) > 10_000_000 {
            return Err(format!("radical range {group} is too large"));
        }
        out.extend(start..=end);
        if out.len() > crate::routing::cluster_base::MAX_TOPOLOGY_ELEMENTS {
            return Err(format!("radical '{text}' gives too many hosts"));
        }
    }
    Ok(out)
}

impl Builder {
    /// `sg_platf_new_tag_cluster`.
    pub(crate) fn new_cluster(
        &mut self,
        args: ClusterArgs,
        loc: &Loc,
    ) -> Result<(), PlatformError> {
        match args.topology {
            Topology::Flat => self.cluster_flat(args, loc),
            _ => self.cluster_hierarchical(args, loc),
        }
    }

    fn cluster_host(
        &mut self,
        zone: ZoneId,
        args: &ClusterArgs,
        name: String,
        loc: &Loc,
    ) -> Result<NpId, PlatformError> {
        let host = Host {
            name,
            speed_flops_per_sec: args.speeds[0],
            cores: args.cores,
            props: args.props.clone(),
        };
        Ok(self.create_host(zone, host, loc)?.1)
    }

    fn cluster_flat(&mut self, args: ClusterArgs, loc: &Loc) -> Result<(), PlatformError> {
        let mut star = StarRouting::default();
        star.reserve(args.radicals.len());
        let zone = self.new_zone(&args.id, Routing::Star(star), loc)?;
        self.p.zones[zone].props = args.props.clone();
        // Per host at most a loopback, a limiter and a private link's two halves; one backbone.
        self.reserve(zone, args.radicals.len(), args.radicals.len() * 4 + 1);
        let backbone = if args.bb_bw > 0.0 || args.bb_lat > 0.0 {
            Some(self.create_link(
                &format!("{}_backbone", args.id),
                args.bb_bw,
                args.bb_lat,
                args.bb_policy,
                Vec::new(),
                loc,
            )?)
        } else {
            None
        };
        for &r in &args.radicals {
            let np = self.cluster_host(
                zone,
                &args,
                format!("{}{r}{}", args.prefix, args.suffix),
                loc,
            )?;
            let vertex = self.p.netpoints[np].vertex;
            let link_id = format!("{}_link_{r}", args.id);
            if args.loopback_bw > 0.0 || args.loopback_lat > 0.0 {
                let lb = self.create_link(
                    &format!("{link_id}_loopback"),
                    args.loopback_bw,
                    args.loopback_lat,
                    SharingPolicy::FatPipe,
                    Vec::new(),
                    loc,
                )?;
                self.star(zone).set_loopback(vertex, vec![lb]);
            }
            let limiter = if args.limiter_link > 0.0 {
                Some(self.create_link(
                    &format!("{link_id}_limiter"),
                    args.limiter_link,
                    0.0,
                    SharingPolicy::Shared,
                    Vec::new(),
                    loc,
                )?)
            } else {
                None
            };
            let private = if args.sharing == ClusterSharing::SplitDuplex {
                let (up_link, down_link) =
                    self.create_split_duplex_link(&link_id, args.bw, args.lat, Vec::new(), loc)?;
                LinkInRoute::Split {
                    up_link,
                    down_link,
                    up: true,
                }
            } else {
                LinkInRoute::Plain(self.create_link(
                    &link_id,
                    args.bw,
                    args.lat,
                    SharingPolicy::Shared,
                    Vec::new(),
                    loc,
                )?)
            };
            let mut list = Vec::new();
            list.extend(limiter.map(LinkInRoute::Plain));
            list.push(private);
            list.extend(backbone.map(LinkInRoute::Plain));
            let up = link_list_impl(&list, false);
            let mut down = link_list_impl(&list, true);
            down.reverse();
            self.star(zone).set_up(vertex, up, Some(down), None);
        }
        let router_name = if args.router_id.is_empty() {
            format!("{}{}_router{}", args.prefix, args.id, args.suffix)
        } else {
            args.router_id.clone()
        };
        let router = self.create_router(zone, &router_name, loc)?;
        let vertex = self.p.netpoints[router].vertex;
        self.star(zone)
            .set_up(vertex, Vec::new(), Some(Vec::new()), None);
        Ok(())
    }

    fn star(&mut self, zone: ZoneId) -> &mut StarRouting {
        match &mut self.p.zones[zone].routing {
            Routing::Star(s) => s,
            _ => unreachable!("star() is only called on star zones"),
        }
    }

    fn cluster_base(&mut self, zone: ZoneId) -> &mut ClusterBase {
        match &mut self.p.zones[zone].routing {
            Routing::Torus(t) => &mut t.base,
            Routing::FatTree(f) => &mut f.base,
            Routing::Dragonfly(d) => &mut d.base,
            _ => unreachable!("cluster_base() is only called on hierarchical clusters"),
        }
    }

    /// `ClusterBase::fill_leaf_from_cb` with the callbacks of `sg_platf.cpp`: the host, then
    /// its loopback, then its limiter. Returns (vertex, loopback, limiter).
    fn fill_leaf(
        &mut self,
        zone: ZoneId,
        args: &ClusterArgs,
        position: usize,
        loc: &Loc,
    ) -> Result<(usize, Option<LinkId>, Option<LinkId>), PlatformError> {
        let Some(&radical) = args.radicals.get(position) else {
            return Err(loc.invalid(format!(
                "Zone({}): error when creating host number {position} in the zone. Insufficient number of radicals available (total = {}). Check the 'radical' parameter in XML",
                args.id,
                args.radicals.len()
            )));
        };
        let np = self.cluster_host(
            zone,
            args,
            format!("{}{radical}{}", args.prefix, args.suffix),
            loc,
        )?;
        let vertex = self.p.netpoints[np].vertex;
        let mut loopback = None;
        if args.loopback_bw > 0.0 || args.loopback_lat > 0.0 {
            let lb = self.create_link(
                &format!("{}_link_{radical}_loopback", args.id),
                args.loopback_bw,
                args.loopback_lat,
                SharingPolicy::FatPipe,
                Vec::new(),
                loc,
            )?;
            let base = self.cluster_base(zone);
            base.set_loopback();
            let pos = base.node_pos(vertex);
            base.add_private_link_at(pos, (lb, lb));
            loopback = Some(lb);
        }
        let mut limiter = None;
        if args.limiter_link > 0.0 {
            let lim = self.create_limiter(args, position as i64, loc)?;
            let base = self.cluster_base(zone);
            base.set_limiter();
            let pos = base.node_pos_with_loopback(vertex);
            base.add_private_link_at(pos, (lim, lim));
            limiter = Some(lim);
        }
        Ok((vertex, loopback, limiter))
    }

    /// `sg_platf_cluster_create_limiter`: `<id>_link_<index>_limiter`.
    fn create_limiter(
        &mut self,
        args: &ClusterArgs,
        index: i64,
        loc: &Loc,
    ) -> Result<LinkId, PlatformError> {
        self.create_link(
            &format!("{}_link_{index}_limiter", args.id),
            args.limiter_link,
            0.0,
            SharingPolicy::Shared,
            Vec::new(),
            loc,
        )
    }

    /// A cable of a hierarchical cluster: split into `_UP`/`_DOWN`, or one SHARED link.
    fn cable(
        &mut self,
        args: &ClusterArgs,
        name: &str,
        bandwidth: f64,
        loc: &Loc,
    ) -> Result<(LinkId, LinkId), PlatformError> {
        if args.sharing == ClusterSharing::SplitDuplex {
            let up = self.create_link(
                &format!("{name}_UP"),
                bandwidth,
                args.lat,
                SharingPolicy::Shared,
                Vec::new(),
                loc,
            )?;
            let down = self.create_link(
                &format!("{name}_DOWN"),
                bandwidth,
                args.lat,
                SharingPolicy::Shared,
                Vec::new(),
                loc,
            )?;
            Ok((up, down))
        } else {
            let link = self.create_link(
                name,
                bandwidth,
                args.lat,
                SharingPolicy::Shared,
                Vec::new(),
                loc,
            )?;
            Ok((link, link))
        }
    }

    fn cluster_hierarchical(&mut self, args: ClusterArgs, loc: &Loc) -> Result<(), PlatformError> {
        let kind = match args.topology {
            Topology::Torus => "TorusZone",
            Topology::FatTree => "FatTreeZone",
            _ => "DragonflyZone",
        };
        if args.bb_bw > 0.0 || args.bb_lat > 0.0 || !args.router_id.is_empty() {
            self.notice(
                loc,
                format!(
                    "cluster '{}': bb_bw, bb_lat, bb_sharing_policy and router_id are ignored for a non-FLAT topology (as in SimGrid)",
                    args.id
                ),
            );
        }
        let invalid = |msg: String| loc.invalid(format!("cluster '{}': {msg}", args.id));
        match args.topology {
            Topology::Torus => {
                let dims = args
                    .topo_parameters
                    .split(',')
                    .map(|s| match crate::platform_xml::stoi(s) {
                        Some(v) if v > 0 => Ok(v as usize),
                        _ => Err(invalid(format!(
                            "TorusZone: incorrect dimensions parameter '{}', each value must be > 0",
                            args.topo_parameters
                        ))),
                    })
                    .collect::<Result<Vec<usize>, _>>()?;
                self.check_cable_characteristics(&args, kind, loc)?;
                let n_dims = dims.len();
                let total = bounded_product(&dims, "torus nodes").map_err(invalid)?;
                let zone = self.new_zone(
                    &args.id,
                    Routing::Torus(TorusRouting {
                        base: ClusterBase::new(n_dims),
                        dims: dims.clone(),
                    }),
                    loc,
                )?;
                let hosts = total.min(args.radicals.len());
                self.reserve(zone, hosts, hosts.saturating_mul(2 * n_dims + 2));
                for i in 0..total {
                    let (vertex, _, _) = self.fill_leaf(zone, &args, i, loc)?;
                    let position = self
                        .cluster_base(zone)
                        .node_pos_with_loopback_limiter(vertex);
                    // TorusZone::create_torus_links
                    let mut dim_product = 1usize;
                    for (j, &d) in dims.iter().enumerate() {
                        let neighbour = if (i / dim_product) % d == d - 1 {
                            i - (d - 1) * dim_product
                        } else {
                            i + dim_product
                        };
                        let name = format!("{}_link_from_{vertex}_to_{neighbour}", args.id);
                        let pair = self.cable(&args, &name, args.bw, loc)?;
                        self.cluster_base(zone)
                            .add_private_link_at(position + j, pair);
                        dim_product *= d;
                    }
                }
            }
            Topology::FatTree => {
                let (levels, down, up, count) =
                    fat_tree::parse_topo_parameters(&args.topo_parameters).map_err(invalid)?;
                self.check_cable_characteristics(&args, kind, loc)?;
                let routing = FatTreeRouting::new(levels, down, up, count);
                let total = routing.leaf_count();
                let zone = self.new_zone(&args.id, Routing::FatTree(routing), loc)?;
                let hosts = total.min(args.radicals.len());
                self.reserve(zone, hosts, hosts.saturating_mul(4));
                for i in 0..total {
                    let (_, loopback, limiter) = self.fill_leaf(zone, &args, i, loc)?;
                    let position = self.fat_tree_position;
                    self.fat_tree_position += 1;
                    if let Routing::FatTree(f) = &mut self.p.zones[zone].routing {
                        f.add_processing_node(i, position, limiter, loopback);
                    }
                }
                // Build the switches with the zone's routing taken out, so that the link
                // callbacks can borrow the builder.
                let Routing::FatTree(mut routing) =
                    std::mem::replace(&mut self.p.zones[zone].routing, Routing::Empty)
                else {
                    unreachable!()
                };
                let mut uid = self.fat_tree_uid;
                // Errors of the builder (duplicate names...) are kept whole in `pending`.
                let pending: RefCell<Option<PlatformError>> = RefCell::new(None);
                let result = {
                    let this = RefCell::new(&mut *self);
                    let stash = |e: PlatformError| {
                        let message = e.to_string();
                        pending.borrow_mut().get_or_insert(e);
                        message
                    };
                    let mut limiter_for = |k: i64| -> Result<Option<LinkId>, String> {
                        if args.limiter_link > 0.0 {
                            this.borrow_mut()
                                .create_limiter(&args, k, loc)
                                .map(Some)
                                .map_err(stash)
                        } else {
                            Ok(None)
                        }
                    };
                    let mut make_link = |name: String| -> Result<(LinkId, LinkId), String> {
                        this.borrow_mut()
                            .cable(&args, &name, args.bw, loc)
                            .map_err(stash)
                    };
                    routing.build_upper_levels(&mut limiter_for, &mut make_link, &mut uid)
                };
                self.fat_tree_uid = uid;
                self.p.zones[zone].routing = Routing::FatTree(routing);
                if let Some(e) = pending.into_inner() {
                    return Err(e);
                }
                result.map_err(invalid)?;
            }
            _ => {
                let params =
                    dragonfly::parse_topo_parameters(&args.topo_parameters).map_err(invalid)?;
                self.check_cable_characteristics(&args, kind, loc)?;
                let total = params.leaf_count();
                let zone = self.new_zone(
                    &args.id,
                    Routing::Dragonfly(DragonflyRouting::new(
                        params,
                        args.sharing == ClusterSharing::SplitDuplex,
                    )),
                    loc,
                )?;
                for i in 0..total {
                    self.fill_leaf(zone, &args, i, loc)?;
                }
                let Routing::Dragonfly(mut routing) =
                    std::mem::replace(&mut self.p.zones[zone].routing, Routing::Empty)
                else {
                    unreachable!()
                };
                let mut uid = self.dragonfly_uid;
                let has_limiter = args.limiter_link > 0.0;
                let pending: RefCell<Option<PlatformError>> = RefCell::new(None);
                let result = {
                    let this = RefCell::new(&mut *self);
                    let stash = |e: PlatformError| {
                        let message = e.to_string();
                        pending.borrow_mut().get_or_insert(e);
                        message
                    };
                    let mut limiter_for = |id: usize| -> Result<Option<LinkId>, String> {
                        this.borrow_mut()
                            .create_limiter(&args, id as i64, loc)
                            .map(Some)
                            .map_err(stash)
                    };
                    let mut make_link =
                        |name: String, mult: usize| -> Result<(LinkId, LinkId), String> {
                            this.borrow_mut()
                                .cable(&args, &name, args.bw * mult as f64, loc)
                                .map_err(stash)
                        };
                    routing.build_upper_levels(
                        &mut limiter_for,
                        has_limiter,
                        &mut make_link,
                        &mut uid,
                    )
                };
                self.dragonfly_uid = uid;
                self.p.zones[zone].routing = Routing::Dragonfly(routing);
                if let Some(e) = pending.into_inner() {
                    return Err(e);
                }
                result.map_err(invalid)?;
            }
        }
        Ok(())
    }

    fn check_cable_characteristics(
        &self,
        args: &ClusterArgs,
        kind: &str,
        loc: &Loc,
    ) -> Result<(), PlatformError> {
        if args.bw <= 0.0 {
            return Err(loc.invalid(format!(
                "cluster '{}': {kind}: incorrect bandwidth for internode communication, bw={}",
                args.id, args.bw
            )));
        }
        if args.lat < 0.0 {
            return Err(loc.invalid(format!(
                "cluster '{}': {kind}: incorrect latency for internode communication, lat={}",
                args.id, args.lat
            )));
        }
        Ok(())
    }

    /// `sg_platf_new_zone_seal` for the current zone: populates a Cluster zone if the last
    /// opened zone had `routing="Cluster"`, then returns to the parent zone.
    pub(crate) fn zone_end(&mut self, loc: &Loc) -> Result<(), PlatformError> {
        let zone = self.current_zone(loc, "</zone>")?;
        if self.zone_cluster.routing.eq_ignore_ascii_case("cluster") {
            let record = std::mem::take(&mut self.zone_cluster);
            self.zone_cluster_populate(zone, record, loc)?;
        }
        self.current = self.p.zones[zone].parent;
        Ok(())
    }

    /// `sg_platf_zone_cluster_populate`.
    fn zone_cluster_populate(
        &mut self,
        zone: ZoneId,
        record: ZoneClusterArgs,
        loc: &Loc,
    ) -> Result<(), PlatformError> {
        if !matches!(self.p.zones[zone].routing, Routing::Star(_)) {
            return Err(loc.invalid("Host_links are only valid for Cluster(Star) zones"));
        }
        let backbone = match record.backbone {
            Some(bb) => Some(self.create_link(
                &bb.id,
                bb.bw,
                bb.lat,
                SharingPolicy::Shared,
                Vec::new(),
                &bb.loc,
            )?),
            None => None,
        };
        for hl in &record.host_links {
            let Some(host) = self.p.host_by_name.get(&hl.id).copied() else {
                return Err(hl.loc.unknown("host", &hl.id, " (in <host_link>)"));
            };
            let np = self.p.host_netpoints[host.0 as usize];
            if self.p.netpoints[np].zone != Some(zone) {
                return Err(hl.loc.invalid(format!(
                    "<host_link id=\"{}\">: the host is not in the Cluster zone '{}' being closed",
                    hl.id, self.p.zones[zone].name
                )));
            }
            let find = |name: &str| self.p.link_by_name.get(name).copied();
            let up =
                find(&hl.up).ok_or_else(|| hl.loc.unknown("link", &hl.up, " (host_link up)"))?;
            let down = find(&hl.down)
                .ok_or_else(|| hl.loc.unknown("link", &hl.down, " (host_link down)"))?;
            self.set_hostlink(zone, np, up, down, backbone);
        }
        for cab in &record.cabinets {
            for &r in &cab.radicals {
                let name = format!("{}{r}{}", cab.prefix, cab.suffix);
                let host = Host {
                    name: name.clone(),
                    speed_flops_per_sec: cab.speed,
                    cores: 1,
                    props: Vec::new(),
                };
                let (_, np) = self.create_host(zone, host, &cab.loc)?;
                let up = self.create_link(
                    &format!("link_{name}_UP"),
                    cab.bw,
                    cab.lat,
                    SharingPolicy::Shared,
                    Vec::new(),
                    &cab.loc,
                )?;
                let down = self.create_link(
                    &format!("link_{name}_DOWN"),
                    cab.bw,
                    cab.lat,
                    SharingPolicy::Shared,
                    Vec::new(),
                    &cab.loc,
                )?;
                self.set_hostlink(zone, np, up, down, backbone);
            }
        }
        Ok(())
    }

    /// `sg_platf_cluster_set_hostlink`.
    fn set_hostlink(
        &mut self,
        zone: ZoneId,
        np: NpId,
        up: LinkId,
        down: LinkId,
        backbone: Option<LinkId>,
    ) {
        let vertex = self.p.netpoints[np].vertex;
        let star = self.star(zone);
        match backbone {
            Some(bb) => {
                star.set_up(vertex, vec![up, bb], None, None);
                star.set_down(vertex, vec![bb, down], None);
            }
            None => {
                star.set_up(vertex, vec![up], None, None);
                star.set_down(vertex, vec![down], None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::explode_radicals;

    #[test]
    fn radicals() {
        assert_eq!(explode_radicals("0-3").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(
            explode_radicals("1-4,6,9-11").unwrap(),
            vec![1, 2, 3, 4, 6, 9, 10, 11]
        );
        assert_eq!(explode_radicals("3-1").unwrap(), Vec::<i32>::new());
        assert!(explode_radicals("1-2-3").is_err());
        assert!(explode_radicals("").is_err());
        assert!(explode_radicals("a").is_err());
    }
}
