//! Platform model: what hosts and links exist and which links a message crosses.
//!
//! This crate reads SimGrid platform files (DTD 4.1, and version 3 files leniently) and
//! answers routes exactly as SimGrid 3.32's `NetZoneImpl::get_global_route` does: same links,
//! same order, and the same latency sum computed in the same floating-point order. The
//! simulator builds its network model on top: one constraint per [`Link`], one flow per
//! message over [`Platform::route`].
//!
//! # Model
//!
//! * A [`Host`] has a speed in flop/s (the speed of its current pstate), a number of cores and
//!   its `<prop>`s (the simulator reads `smpi/os`, `smpi/or` and `smpi/ois` there).
//! * A [`Link`] has a bandwidth in B/s, a latency in s and a [`SharingPolicy`]. A
//!   `sharing_policy="SPLITDUPLEX"` link (alias `FULLDUPLEX`) is expanded into two SHARED
//!   links `<id>_UP` and `<id>_DOWN` (SimGrid's `create_split_duplex_link`); a route names
//!   one of them with `<link_ctn id="<id>" direction="UP|DOWN">`.
//! * The network model's `__loopback__` link (FATPIPE, [`PlatformOptions`]: 10 GB/s, 0 s by
//!   default, SimGrid's `network/loopback-bw` and `network/loopback-lat`) always exists; Full,
//!   Floyd and Dijkstra zones without sub-zones route a host to itself through it unless the
//!   file declares a self-route.
//! * Hosts, routers and links live in a tree of netzones (the private `zone` module's docs),
//!   each with a routing kind: `Full`, `Floyd`, `Dijkstra`/`DijkstraCache`, `None`, `Cluster`
//!   (a star), and the cluster topologies FLAT (a star), TORUS, FAT_TREE and DRAGONFLY.
//!
//! # Differences from SimGrid 3.32, all deliberate
//!
//! * Version 3 files are accepted (SimGrid 3.32 rejects anything below 4.0): `power` is read
//!   as `speed`, `<AS>`/`<ASroute>`/`<process>` work as in 4.1, and unit-less numbers use the
//!   default units. Each such leniency is reported in [`Platform::notices`].
//! * A `<link>` without `latency` gets 0 s with a notice (the DTD says so, but SimGrid 3.32's
//!   parser actually passes an empty string and fails with "cannot parse number").
//! * Files SimGrid parses but then mishandles (out-of-bounds reads, endless loops, crashes)
//!   give a [`PlatformError`] here. WIFI links, `<peer>` and Vivaldi/Wifi zones are refused as
//!   unsupported; speed, bandwidth, latency and state profiles are ignored with a notice.
//! * Two netpoints (hosts, routers, zones) may not share a name (SimGrid tolerates a host named
//!   like a router and then resolves the name to whichever was declared last).
//! * A `<host_link>` must name a host of the `routing="Cluster"` zone it belongs to (SimGrid
//!   would silently overwrite the entry of whichever host of that zone has the same index).
//! * Platforms with several top-level zones are refused (SimGrid only seals and routes
//!   through the first one).
//!
//! See the module docs of [`units`], [`deployment`], [`hostfile`] and the routing modules for
//! the rules of each part, with the SimGrid source file they come from.
//!
//! # API (the contract the simulator relies on)
//!
//! ```ignore
//! pub struct HostId(pub u32);   // index into Platform::hosts()
//! pub struct LinkId(pub u32);   // index into Platform::links()
//! pub enum SharingPolicy { Shared, FatPipe }   // SPLITDUPLEX is expanded into <id>_UP/<id>_DOWN
//! pub struct Host { pub name: String, pub speed_flops_per_sec: f64, pub cores: u32, pub props: Vec<(String, String)> }
//! pub struct Link { pub name: String, pub bandwidth_bytes_per_sec: f64, pub latency_secs: f64, pub policy: SharingPolicy }
//! pub struct Route { pub links: Vec<LinkId>, pub latency_secs: f64 }
//! pub struct PlatformOptions { pub loopback_bandwidth_bytes_per_sec: f64 /*10e9*/, pub loopback_latency_secs: f64 /*0*/ }
//! impl Platform {
//!     pub fn from_file(path: &Path, opts: &PlatformOptions) -> Result<Platform, PlatformError>;
//!     pub fn from_xml(text: &str, origin: &str, opts: &PlatformOptions) -> Result<Platform, PlatformError>;
//!     pub fn hosts(&self) -> &[Host];
//!     pub fn links(&self) -> &[Link];
//!     pub fn host_by_name(&self, name: &str) -> Option<HostId>;
//!     pub fn route(&self, src: HostId, dst: HostId) -> Result<Route, PlatformError>;
//!     pub fn route_or_empty(&self, src: HostId, dst: HostId) -> Result<Route, PlatformError>; // for cross-traffic
//!     pub fn notices(&self) -> &[String];
//!     pub fn config(&self) -> &[(String, String)];
//!     // and: host, link, link_by_name, host_prop, link_props, loopback_link, origin, zone_names, host_zone
//! }
//! pub mod deployment { pub struct Deployment { pub ranks: Vec<Placement> } pub struct Placement { pub host: HostId, pub args: Vec<String> }
//!     pub fn from_file(path: &Path, platform: &Platform) -> Result<Deployment, PlatformError>;
//!     pub fn from_xml(text: &str, origin: &str, platform: &Platform) -> Result<Deployment, PlatformError>;
//!     pub fn from_hostfile(path: &Path, platform: &Platform, np: Option<usize>) -> Result<Deployment, PlatformError>;
//!     pub fn from_hostfile_text(text: &str, origin: &str, platform: &Platform, np: Option<usize>) -> Result<Deployment, PlatformError>;
//!     pub fn default_for(platform: &Platform, np: usize) -> Deployment; }
//! ```

mod builder;
mod cluster;
pub mod deployment;
mod error;
pub mod hostfile;
pub(crate) mod platform_xml;
pub(crate) mod routing;
pub mod units;
pub mod whatif;
mod xml;
pub(crate) mod zone;

pub use error::PlatformError;
pub use whatif::{WhatIf, WhatIfError};

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;
use zone::{NetPoint, Zone};

/// Index of a host in [`Platform::hosts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostId(pub u32);

/// Index of a link in [`Platform::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u32);

/// How concurrent flows share a link (SimGrid's `s4u::Link::SharingPolicy`).
///
/// SPLITDUPLEX does not appear here: it is expanded into two [`SharingPolicy::Shared`] links
/// `<id>_UP` and `<id>_DOWN` at parse time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharingPolicy {
    /// The flows' weighted rates add up to at most the bandwidth.
    Shared,
    /// Each flow may use the whole bandwidth (the maximum of the weighted rates is bounded).
    FatPipe,
}

/// A host (SimGrid's `s4u::Host` with its Cas01 CPU).
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// The host id as written in the platform (or generated by a cluster).
    pub name: String,
    /// Peak speed of the current pstate, in flop/s (`<host speed>`, `pstate` selects the
    /// entry of a comma-separated list).
    pub speed_flops_per_sec: f64,
    /// Number of cores (`<host core>`, default 1).
    pub cores: u32,
    /// `<prop id value>` children in file order; for a duplicated key the first one wins
    /// (SimGrid's `try_emplace`). Cluster hosts get the cluster's props.
    pub props: Vec<(String, String)>,
}

/// A link (SimGrid's `StandardLinkImpl`).
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The link id (`<id>_UP`/`<id>_DOWN` for the halves of a split-duplex link).
    pub name: String,
    /// Bandwidth in bytes per second.
    pub bandwidth_bytes_per_sec: f64,
    /// Latency in seconds.
    pub latency_secs: f64,
    /// Sharing policy.
    pub policy: SharingPolicy,
}

/// A host-to-host route as SimGrid computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The links crossed, in SimGrid's order.
    pub links: Vec<LinkId>,
    /// Sum of the link latencies in seconds, summed in SimGrid's order (the "raw" latency,
    /// before any latency factor).
    pub latency_secs: f64,
}

/// Parameters of the network model that the platform depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlatformOptions {
    /// Bandwidth of the `__loopback__` link in B/s (SimGrid `network/loopback-bw`, 10e9).
    pub loopback_bandwidth_bytes_per_sec: f64,
    /// Latency of the `__loopback__` link in s (SimGrid `network/loopback-lat`, 0).
    pub loopback_latency_secs: f64,
}

impl Default for PlatformOptions {
    fn default() -> Self {
        PlatformOptions {
            loopback_bandwidth_bytes_per_sec: 10e9,
            loopback_latency_secs: 0.0,
        }
    }
}

/// A parsed platform: hosts, links, and the zone tree that answers routes.
///
/// Immutable once built (a what-if variant is a new platform, [`WhatIf::apply`]); all queries
/// take `&self` and cache nothing.
#[derive(Debug, Clone)]
pub struct Platform {
    pub(crate) origin: String,
    pub(crate) hosts: Vec<Host>,
    /// Netpoint of each host.
    pub(crate) host_netpoints: Vec<usize>,
    pub(crate) host_by_name: HashMap<String, HostId>,
    pub(crate) links: Vec<Link>,
    pub(crate) link_props: Vec<Vec<(String, String)>>,
    pub(crate) link_by_name: HashMap<String, LinkId>,
    pub(crate) loopback: LinkId,
    pub(crate) netpoints: Vec<NetPoint>,
    pub(crate) zones: Vec<Zone>,
    pub(crate) notices: Vec<String>,
    pub(crate) config: Vec<(String, String)>,
}

impl Platform {
    /// Reads a platform file.
    pub fn from_file(path: &Path, opts: &PlatformOptions) -> Result<Platform, PlatformError> {
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| PlatformError::Io {
            path: origin.clone(),
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        Self::from_xml(&text, &origin, opts)
    }

    /// Reads a platform from XML text; `origin` names it in messages (usually the file path).
    pub fn from_xml(
        text: &str,
        origin: &str,
        opts: &PlatformOptions,
    ) -> Result<Platform, PlatformError> {
        platform_xml::parse_platform(text, origin, opts)
    }

    /// All hosts, in declaration order; [`HostId`] indexes this slice.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// All links, in creation order (`__loopback__` first); [`LinkId`] indexes this slice.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The host called `name`, if any.
    pub fn host_by_name(&self, name: &str) -> Option<HostId> {
        self.host_by_name.get(name).copied()
    }

    /// The link called `name` (`<id>_UP`/`<id>_DOWN` for split-duplex halves), if any.
    pub fn link_by_name(&self, name: &str) -> Option<LinkId> {
        self.link_by_name.get(name).copied()
    }

    /// The host with index `id`. Panics if `id` does not come from this platform.
    pub fn host(&self, id: HostId) -> &Host {
        &self.hosts[id.0 as usize]
    }

    /// The link with index `id`. Panics if `id` does not come from this platform.
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0 as usize]
    }

    /// The value of host property `key` (e.g. `smpi/os`), if set.
    pub fn host_prop(&self, id: HostId, key: &str) -> Option<&str> {
        self.hosts
            .get(id.0 as usize)?
            .props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `<prop>`s of a link, in file order.
    pub fn link_props(&self, id: LinkId) -> &[(String, String)] {
        self.link_props
            .get(id.0 as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The network model's `__loopback__` link.
    pub fn loopback_link(&self) -> LinkId {
        self.loopback
    }

    /// The `<prop id value>` entries of `<config>` elements, in file order.
    ///
    /// SimGrid applies them (sorted by key) only to settings still at their default, i.e. not
    /// set on the command line; that precedence is the caller's business.
    pub fn config(&self) -> &[(String, String)] {
        &self.config
    }

    /// Everything accepted with a warning: deprecated syntax, unit-less values, ignored
    /// profiles... Each notice starts with `file:line: `.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The file name or origin given at construction.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Names of the zones, parent before children, in creation order.
    pub fn zone_names(&self) -> Vec<&str> {
        self.zones.iter().map(|z| z.name.as_str()).collect()
    }

    /// Name of the zone that directly contains host `id`.
    pub fn host_zone(&self, id: HostId) -> Option<&str> {
        let np = *self.host_netpoints.get(id.0 as usize)?;
        let zone = self.netpoints[np].zone?;
        Some(self.zones[zone].name.as_str())
    }

    fn check_host(&self, id: HostId) -> Result<usize, PlatformError> {
        self.host_netpoints
            .get(id.0 as usize)
            .copied()
            .ok_or(PlatformError::BadIndex {
                kind: "host",
                index: id.0,
                count: self.hosts.len(),
            })
    }

    /// The route from `src` to `dst`, as SimGrid's `Host::route_to` gives it.
    ///
    /// An empty route (no link) is an error, as it is for a SimGrid communication ("there is
    /// no connecting path between these two hosts"). Use [`Platform::route_or_empty`] for the
    /// reverse route that SimGrid looks up for cross-traffic, where emptiness is allowed.
    pub fn route(&self, src: HostId, dst: HostId) -> Result<Route, PlatformError> {
        let route = self.route_or_empty(src, dst)?;
        if route.links.is_empty() && route.latency_secs <= 0.0 {
            return Err(PlatformError::NoRoute {
                src: self.hosts[src.0 as usize].name.clone(),
                dst: self.hosts[dst.0 as usize].name.clone(),
                reason: "there is no connecting path between these two hosts (the route is empty)"
                    .to_string(),
            });
        }
        Ok(route)
    }

    /// Like [`Platform::route`], but an empty link list is returned instead of an error.
    ///
    /// SimGrid (`NetworkCm02Model::comm_get_route_info`) only checks the forward route of a
    /// communication; the reverse route used for cross-traffic may be empty (for instance with
    /// an asymmetric `symmetrical="NO"` route), in which case there is no cross-traffic.
    /// Other failures (unknown zone route, Floyd/Dijkstra "No route"...) are errors, as they
    /// abort SimGrid in either direction.
    pub fn route_or_empty(&self, src: HostId, dst: HostId) -> Result<Route, PlatformError> {
        let src_np = self.check_host(src)?;
        let dst_np = self.check_host(dst)?;
        let mut links = Vec::new();
        let mut latency = 0.0;
        self.global_route(src_np, dst_np, &mut links, &mut latency, 0)
            .map_err(|reason| PlatformError::NoRoute {
                src: self.hosts[src.0 as usize].name.clone(),
                dst: self.hosts[dst.0 as usize].name.clone(),
                reason,
            })?;
        Ok(Route {
            links,
            latency_secs: latency,
        })
    }
}
