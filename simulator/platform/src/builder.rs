//! The platform under construction: SimGrid's `sg_platf.cpp` layer.
//!
//! The XML walker ([`crate::platform_xml`]) calls these methods in document order, as the
//! FleXML callbacks of `surfxml_sax_cb.cpp` call `sg_platf_new_*`. They create zones, hosts,
//! routers and links, expand split-duplex links, and check and store routes with the rules of
//! each zone kind. [`Builder::finish`] seals the zones (`NetZoneImpl::seal`), which adds the
//! loopback self-routes and runs Floyd–Warshall.

use crate::cluster::ZoneClusterArgs;
use crate::error::{Loc, PlatformError};
use crate::routing::floyd::MAX_FLOYD_VERTICES;
use crate::routing::full::RouteNames;
use crate::zone::{
    link_list_impl, BypassRoute, LinkInRoute, LocalRoute, NetPoint, NetPointKind, NpId, Routing,
    Zone, ZoneId,
};
use crate::{Host, HostId, Link, LinkId, Platform, PlatformOptions, SharingPolicy};
use rustc_hash::FxHashMap as HashMap;

/// At most this many "unit-less value" notices are kept; the rest are counted.
const MAX_UNITLESS_NOTICES: usize = 10;

pub(crate) struct Builder {
    pub p: Platform,
    pub path: String,
    /// SimGrid's `current_routing`.
    pub current: Option<ZoneId>,
    root: Option<ZoneId>,
    np_by_name: HashMap<String, NpId>,
    split_links: HashMap<String, (LinkId, LinkId)>,
    /// SimGrid's `zone_cluster` global (see [`crate::cluster`]).
    pub zone_cluster: ZoneClusterArgs,
    /// `FatTreeZone::add_processing_node`'s `static int position`.
    pub fat_tree_position: usize,
    /// `FatTreeZone::add_link`'s `static int uniqueId`.
    pub fat_tree_uid: u64,
    /// `DragonflyZone::generate_links`'s `static int uniqueId`.
    pub dragonfly_uid: u64,
    unitless_notices: usize,
    /// `StandardLinkImpl::latency_check`'s `static double last_warned_latency`.
    last_warned_latency: f64,
    zero_bandwidth_notices: usize,
}

impl Builder {
    pub(crate) fn new(path: &str, opts: &PlatformOptions) -> Self {
        let loopback = Link {
            name: "__loopback__".to_string(),
            bandwidth_bytes_per_sec: opts.loopback_bandwidth_bytes_per_sec,
            latency_secs: opts.loopback_latency_secs,
            policy: SharingPolicy::FatPipe,
        };
        let mut link_by_name = HashMap::default();
        link_by_name.insert(loopback.name.clone(), LinkId(0));
        Builder {
            p: Platform {
                origin: path.to_string(),
                hosts: Vec::new(),
                host_netpoints: Vec::new(),
                host_by_name: HashMap::default(),
                links: vec![loopback],
                link_props: vec![Vec::new()],
                link_by_name,
                loopback: LinkId(0),
                netpoints: Vec::new(),
                zones: Vec::new(),
                notices: Vec::new(),
                config: Vec::new(),
            },
            path: path.to_string(),
            current: None,
            root: None,
            np_by_name: HashMap::default(),
            split_links: HashMap::default(),
            zone_cluster: ZoneClusterArgs::default(),
            fat_tree_position: 0,
            fat_tree_uid: 0,
            dragonfly_uid: 0,
            unitless_notices: 0,
            last_warned_latency: 1e-9,
            zero_bandwidth_notices: 0,
        }
    }

    pub(crate) fn loc(&self, line: u32) -> Loc {
        Loc::new(&self.path, line)
    }

    pub(crate) fn notice(&mut self, loc: &Loc, message: impl AsRef<str>) {
        self.p
            .notices
            .push(format!("{}{}", loc.prefix(), message.as_ref()));
    }

    /// A "unit-less value" notice, rate-limited.
    pub(crate) fn unitless_notice(&mut self, loc: &Loc, message: String) {
        self.unitless_notices += 1;
        if self.unitless_notices <= MAX_UNITLESS_NOTICES {
            self.notice(loc, message);
        }
    }

    pub(crate) fn current_zone(&self, loc: &Loc, what: &str) -> Result<ZoneId, PlatformError> {
        self.current
            .ok_or_else(|| loc.invalid(format!("{what} must be declared inside a <zone>")))
    }

    fn register_netpoint(
        &mut self,
        name: &str,
        kind: NetPointKind,
        zone: Option<ZoneId>,
        loc: &Loc,
        what: &str,
    ) -> Result<NpId, PlatformError> {
        if self.np_by_name.contains_key(name) {
            return Err(loc.duplicate(what, name));
        }
        let id = self.p.netpoints.len();
        let vertex = match zone {
            Some(z) => {
                let vertices = &mut self.p.zones[z].vertices;
                vertices.push(id);
                vertices.len() - 1
            }
            None => 0,
        };
        self.p.netpoints.push(NetPoint {
            name: name.to_string(),
            kind,
            zone,
            vertex,
        });
        self.np_by_name.insert(name.to_string(), id);
        Ok(id)
    }

    /// Creates a zone as a child of the current zone (or as the root). Does not change the
    /// current zone. SimGrid: `NetZoneImpl::NetZoneImpl` and `set_parent`.
    pub(crate) fn new_zone(
        &mut self,
        name: &str,
        routing: Routing,
        loc: &Loc,
    ) -> Result<ZoneId, PlatformError> {
        let parent = self.current;
        if parent.is_none() && self.root.is_some() {
            return Err(loc.invalid(format!(
                "zone '{name}' is a second top-level zone; SimGrid 3.32 only routes through the first one (wrap them in a common zone)"
            )));
        }
        let zone_id = self.p.zones.len();
        // The netpoint must exist before the zone so that it can point to it.
        let np = self.register_netpoint(name, NetPointKind::Zone(zone_id), parent, loc, "zone")?;
        self.p.zones.push(Zone {
            name: name.to_string(),
            netpoint: np,
            parent,
            children: Vec::new(),
            vertices: Vec::new(),
            recursive: false,
            props: Vec::new(),
            bypass: HashMap::default(),
            routing,
        });
        match parent {
            Some(p) => {
                self.p.zones[p].children.push(zone_id);
                self.p.zones[p].recursive = true;
            }
            None => self.root = Some(zone_id),
        }
        Ok(zone_id)
    }

    /// Makes room for `hosts` more hosts (and their netpoints in `zone`) and `links` more
    /// links: a `<cluster>` of thousands of hosts then fills its tables without growing
    /// (rehashing, copying) them again and again.
    pub(crate) fn reserve(&mut self, zone: ZoneId, hosts: usize, links: usize) {
        let p = &mut self.p;
        p.hosts.reserve(hosts);
        p.host_netpoints.reserve(hosts);
        p.host_by_name.reserve(hosts);
        p.netpoints.reserve(hosts);
        p.zones[zone].vertices.reserve(hosts);
        self.np_by_name.reserve(hosts);
        p.links.reserve(links);
        p.link_props.reserve(links);
        p.link_by_name.reserve(links);
    }

    /// `NetZoneImpl::create_host`.
    pub(crate) fn create_host(
        &mut self,
        zone: ZoneId,
        host: Host,
        loc: &Loc,
    ) -> Result<(HostId, NpId), PlatformError> {
        if self.p.host_by_name.contains_key(&host.name) {
            return Err(loc.duplicate("host", &host.name));
        }
        let id = HostId(self.p.hosts.len() as u32);
        let np =
            self.register_netpoint(&host.name, NetPointKind::Host(id), Some(zone), loc, "host")?;
        self.p.host_by_name.insert(host.name.clone(), id);
        self.p.hosts.push(host);
        self.p.host_netpoints.push(np);
        Ok((id, np))
    }

    /// `NetZoneImpl::create_router`.
    pub(crate) fn create_router(
        &mut self,
        zone: ZoneId,
        name: &str,
        loc: &Loc,
    ) -> Result<NpId, PlatformError> {
        self.register_netpoint(name, NetPointKind::Router, Some(zone), loc, "router")
    }

    /// `NetZoneImpl::create_link` (a plain link).
    pub(crate) fn create_link(
        &mut self,
        name: &str,
        bandwidth: f64,
        latency: f64,
        policy: SharingPolicy,
        props: Vec<(String, String)>,
        loc: &Loc,
    ) -> Result<LinkId, PlatformError> {
        if self.p.link_by_name.contains_key(name) {
            return Err(loc.duplicate("link", name));
        }
        if latency != 0.0 && latency < self.last_warned_latency {
            // SimGrid warns once per new minimum (surf/precision is 1e-9 under smpirun).
            self.last_warned_latency = latency;
            self.notice(
                loc,
                format!("Latency for link {name} is smaller than surf/precision ({latency:e} < 1e-9) (SimGrid warns likewise)"),
            );
        }
        if bandwidth <= 0.0 && self.zero_bandwidth_notices < MAX_UNITLESS_NOTICES {
            self.zero_bandwidth_notices += 1;
            self.notice(
                loc,
                format!("link {name} has bandwidth {bandwidth} B/s: a message crossing it cannot complete"),
            );
        }
        let id = LinkId(self.p.links.len() as u32);
        self.p.links.push(Link {
            name: name.to_string(),
            bandwidth_bytes_per_sec: bandwidth,
            latency_secs: latency,
            policy,
        });
        self.p.link_props.push(props);
        self.p.link_by_name.insert(name.to_string(), id);
        Ok(id)
    }

    /// `NetZoneImpl::create_split_duplex_link`: two SHARED links `<name>_UP`, `<name>_DOWN`.
    pub(crate) fn create_split_duplex_link(
        &mut self,
        name: &str,
        bandwidth: f64,
        latency: f64,
        props: Vec<(String, String)>,
        loc: &Loc,
    ) -> Result<(LinkId, LinkId), PlatformError> {
        let up = self.create_link(
            &format!("{name}_UP"),
            bandwidth,
            latency,
            SharingPolicy::Shared,
            props.clone(),
            loc,
        )?;
        let down = self.create_link(
            &format!("{name}_DOWN"),
            bandwidth,
            latency,
            SharingPolicy::Shared,
            props,
            loc,
        )?;
        self.split_links.insert(name.to_string(), (up, down));
        Ok((up, down))
    }

    /// A netpoint by name (`sg_netpoint_by_name_or_null`).
    pub(crate) fn netpoint(&self, name: &str) -> Option<NpId> {
        self.np_by_name.get(name).copied()
    }

    /// Resolves a `<link_ctn id direction>` (`STag_surfxml_link___ctn`).
    pub(crate) fn link_ctn(
        &self,
        id: &str,
        direction: Option<bool>,
        loc: &Loc,
    ) -> Result<LinkInRoute, PlatformError> {
        match direction {
            None => match self.p.link_by_name.get(id) {
                Some(&link) => Ok(LinkInRoute::Plain(link)),
                None => {
                    let hint = if self.split_links.contains_key(id) {
                        "; it is a SPLITDUPLEX link: add direction=\"UP\" or direction=\"DOWN\""
                    } else {
                        ""
                    };
                    Err(loc.unknown("link", id, hint))
                }
            },
            Some(up) => match self.split_links.get(id) {
                Some(&(up_link, down_link)) => Ok(LinkInRoute::Split {
                    up_link,
                    down_link,
                    up,
                }),
                None => {
                    let hint = if self.p.link_by_name.contains_key(id) {
                        "; a direction is only allowed on SPLITDUPLEX links"
                    } else {
                        ""
                    };
                    Err(loc.unknown(
                        if up {
                            "split-duplex link (upward)"
                        } else {
                            "split-duplex link (downward)"
                        },
                        id,
                        hint,
                    ))
                }
            },
        }
    }

    fn np_zone_name(&self, np: NpId) -> String {
        match self.p.netpoints[np].zone {
            Some(z) => self.p.zones[z].name.clone(),
            None => "(no zone)".to_string(),
        }
    }

    /// Whether `np` is a component of zone `zone` or of one of its descendants
    /// (`NetZoneImpl::is_component_recursive`).
    fn is_component_recursive(&self, zone: ZoneId, np: NpId) -> bool {
        let mut current = self.p.netpoints[np].zone;
        while let Some(z) = current {
            if z == zone {
                return true;
            }
            current = self.p.zones[z].parent;
        }
        false
    }

    /// `add_route` of the current zone, with the checks of `RoutedZone::add_route_check_params`
    /// or `StarZone::check_add_route_param`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_route(
        &mut self,
        zone: ZoneId,
        src: NpId,
        dst: NpId,
        gateways: Option<(NpId, NpId)>,
        list: &[LinkInRoute],
        symmetrical: bool,
        loc: &Loc,
    ) -> Result<(), PlatformError> {
        let name = |np: NpId| self.p.netpoints[np].name.clone();
        let names = RouteNames {
            src: name(src),
            dst: name(dst),
            gw_src: gateways.map(|(g, _)| name(g)),
            gw_dst: gateways.map(|(_, g)| name(g)),
        };
        let z = &self.p.zones[zone];
        let recursive = z.recursive;
        match &z.routing {
            Routing::Full(_) | Routing::Floyd(_) | Routing::Dijkstra(_) => {
                self.check_routed_params(zone, src, dst, gateways, list, &names, loc)?;
            }
            Routing::Star(_) => {
                if src != dst {
                    return Err(loc.invalid(format!(
                        "Cannot add route from {} to {}. In a StarZone, route must be: i) from source netpoint to everyone, ii) from everyone to a single netpoint or iii) loopback, same source and destination",
                        names.src, names.dst
                    )));
                }
            }
            other => {
                return Err(loc.invalid(format!(
                    "NetZone '{}' does not accept new routes (wrong class: {})",
                    z.name,
                    other.kind_name()
                )))
            }
        }
        let (src_v, dst_v) = (self.p.netpoints[src].vertex, self.p.netpoints[dst].vertex);
        // RoutedZone::new_extended_route: gateways are recorded in recursive mode only, and
        // are then mandatory.
        let recorded = if recursive {
            match gateways {
                Some(g) => Some(g),
                None => {
                    return Err(loc.invalid(format!(
                        "route from {} to {}: zone '{}' contains sub-zones, so its routes must be <zoneRoute>s with gateways (SimGrid: \"nullptr is obviously a deficient gateway\")",
                        names.src, names.dst, self.p.zones[zone].name
                    )))
                }
            }
        } else {
            None
        };
        let forward = LocalRoute {
            links: link_list_impl(list, false),
            gw_src: recorded.map(|g| g.0),
            gw_dst: recorded.map(|g| g.1),
        };
        let reverse = symmetrical.then(|| {
            let mut links = link_list_impl(list, true);
            links.reverse();
            LocalRoute {
                links,
                gw_src: recorded.map(|g| g.1),
                gw_dst: recorded.map(|g| g.0),
            }
        });
        let result = match &mut self.p.zones[zone].routing {
            Routing::Full(r) => r.add_route(src_v, dst_v, forward, reverse, &names),
            Routing::Floyd(r) => r.add_route(src_v, dst_v, forward, reverse, &names),
            Routing::Dijkstra(r) => r.add_route(src_v, dst_v, forward, reverse, &names),
            Routing::Star(r) => {
                r.set_loopback(src_v, forward.links);
                Ok(())
            }
            _ => Ok(()),
        };
        result.map_err(|message| loc.invalid(message))
    }

    #[allow(clippy::too_many_arguments)]
    fn check_routed_params(
        &self,
        zone: ZoneId,
        src: NpId,
        dst: NpId,
        gateways: Option<(NpId, NpId)>,
        list: &[LinkInRoute],
        names: &RouteNames,
        loc: &Loc,
    ) -> Result<(), PlatformError> {
        let zone_name = &self.p.zones[zone].name;
        for (np, end) in [(src, "source"), (dst, "destination")] {
            if self.p.netpoints[np].zone != Some(zone) {
                return Err(loc.invalid(format!(
                    "route from {} to {}: the {end} '{}' belongs to zone '{}', not to zone '{zone_name}' where the route is declared",
                    names.src,
                    names.dst,
                    self.p.netpoints[np].name,
                    self.np_zone_name(np)
                )));
            }
        }
        let (src_np, dst_np) = (&self.p.netpoints[src], &self.p.netpoints[dst]);
        match gateways {
            None => {
                if list.is_empty() {
                    return Err(loc.invalid(format!(
                        "Empty route (between {} and {}) forbidden.",
                        names.src, names.dst
                    )));
                }
                for np in [src_np, dst_np] {
                    if np.is_zone() {
                        return Err(loc.invalid(format!(
                            "When defining a route, src and dst cannot be a netzone such as '{}'. Did you mean to have a zoneRoute?",
                            np.name
                        )));
                    }
                }
            }
            Some((gw_src, gw_dst)) => {
                for np in [src_np, dst_np] {
                    if !np.is_zone() {
                        return Err(loc.invalid(format!(
                            "When defining a zoneRoute, src and dst must be netzones but '{}' is not",
                            np.name
                        )));
                    }
                }
                for gw in [gw_src, gw_dst] {
                    if self.p.netpoints[gw].is_zone() {
                        return Err(loc.invalid(format!(
                            "When defining a zoneRoute, gw_src and gw_dst must be hosts or routers but '{}' is a zone",
                            self.p.netpoints[gw].name
                        )));
                    }
                }
                if gw_src == gw_dst {
                    return Err(loc.invalid(format!(
                        "Cannot define a zoneRoute from '{}' to itself",
                        self.p.netpoints[gw_src].name
                    )));
                }
                if list.is_empty() {
                    return Err(loc.invalid(format!(
                        "Empty route (between {} and {}) forbidden.",
                        names.src_label(),
                        names.dst_label()
                    )));
                }
                for (zone_np, gw, end) in [(src, gw_src, "gw_src"), (dst, gw_dst, "gw_dst")] {
                    let NetPointKind::Zone(z) = self.p.netpoints[zone_np].kind else {
                        continue;
                    };
                    if !self.is_component_recursive(z, gw) {
                        return Err(loc.invalid(format!(
                            "Invalid zoneRoute from {} to {}: {end} {} belongs to {}, not to {}.",
                            names.src_label(),
                            names.dst_label(),
                            self.p.netpoints[gw].name,
                            self.np_zone_name(gw),
                            self.p.zones[z].name
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// `NetZoneImpl::add_bypass_route`.
    pub(crate) fn add_bypass_route(
        &mut self,
        zone: ZoneId,
        src: NpId,
        dst: NpId,
        gateways: Option<(NpId, NpId)>,
        list: &[LinkInRoute],
        loc: &Loc,
    ) -> Result<(), PlatformError> {
        let label = |np: NpId, gw: Option<NpId>| match gw {
            Some(g) => format!("{}@{}", self.p.netpoints[np].name, self.p.netpoints[g].name),
            None => self.p.netpoints[np].name.clone(),
        };
        let (src_label, dst_label) = (
            label(src, gateways.map(|g| g.0)),
            label(dst, gateways.map(|g| g.1)),
        );
        if list.is_empty() {
            return Err(loc.invalid(format!(
                "Bypass route between {src_label} and {dst_label} cannot be empty."
            )));
        }
        let bypass = &mut self.p.zones[zone].bypass;
        if bypass.contains_key(&(src, dst)) {
            return Err(loc.invalid(format!(
                "The bypass route between {src_label} and {dst_label} already exists."
            )));
        }
        bypass.insert(
            (src, dst),
            BypassRoute {
                gw_src: gateways.map(|g| g.0),
                gw_dst: gateways.map(|g| g.1),
                links: link_list_impl(list, false),
            },
        );
        Ok(())
    }

    /// Seals every zone (`NetZoneImpl::seal` → `do_seal`) and returns the platform.
    pub(crate) fn finish(mut self) -> Result<Platform, PlatformError> {
        let loopback = self.p.loopback;
        for zone in &self.p.zones {
            if matches!(zone.routing, Routing::Floyd(_)) && zone.vertices.len() > MAX_FLOYD_VERTICES
            {
                return Err(PlatformError::Invalid {
                    path: self.path.clone(),
                    line: 0,
                    message: format!(
                        "Floyd zone '{}' has {} components; above {MAX_FLOYD_VERTICES} its n³ table computation is refused (use Full or Dijkstra)",
                        zone.name,
                        zone.vertices.len()
                    ),
                });
            }
        }
        for zone in &mut self.p.zones {
            let n = zone.vertices.len();
            let lb = (!zone.recursive).then_some(loopback);
            match &mut zone.routing {
                Routing::Full(r) => r.seal(n, lb),
                Routing::Floyd(r) => r.seal(n, lb),
                Routing::Dijkstra(r) => r.seal(lb),
                Routing::Star(r) => r.seal(n),
                _ => {}
            }
        }
        if self.unitless_notices > MAX_UNITLESS_NOTICES {
            let more = self.unitless_notices - MAX_UNITLESS_NOTICES;
            self.p.notices.push(format!(
                "{}: {more} more unit-less values were read with the default unit",
                self.path
            ));
        }
        Ok(self.p)
    }
}
