//! Netzones and netpoints: the tree that routes are computed on.
//!
//! SimGrid (`include/simgrid/kernel/routing/NetZoneImpl.hpp`, `NetPoint.hpp`) organises a
//! platform as a tree of *netzones*. Every host, router and sub-zone is a *netpoint* and
//! belongs to exactly one zone, its *englobing zone*, in which it has a *vertex index*: its rank
//! among the zone's components in creation order (`NetZoneImpl::add_component`). A sub-zone's
//! netpoint gets its index in the parent when the sub-zone is attached (`set_parent`), that is
//! when its start tag is read (for a `<cluster>`: when its end tag is read).
//!
//! Each zone has a routing kind that answers *local* routes between two of its own
//! components (`get_local_route`); [`crate::routing`] combines local routes into global ones.
//! A zone that has at least one sub-zone is in *recursive* mode (`RoutingMode::recursive`):
//! its declared routes must carry gateways, and the Full, Floyd and Dijkstra kinds then add no
//! `__loopback__` self-routes.
//!
//! Indices (`NpId`, `ZoneId`) are positions in the platform's `netpoints` and `zones` vectors.

use crate::routing::dijkstra::DijkstraRouting;
use crate::routing::dragonfly::DragonflyRouting;
use crate::routing::fat_tree::FatTreeRouting;
use crate::routing::floyd::FloydRouting;
use crate::routing::full::FullRouting;
use crate::routing::star::StarRouting;
use crate::routing::torus::TorusRouting;
use crate::{HostId, LinkId};
use rustc_hash::FxHashMap as HashMap;

/// Index into the platform's netpoints.
pub(crate) type NpId = usize;
/// Index into the platform's zones.
pub(crate) type ZoneId = usize;

/// What a netpoint stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetPointKind {
    Host(HostId),
    Router,
    Zone(ZoneId),
}

/// A host, router or zone as seen by the routing.
#[derive(Debug, Clone)]
pub(crate) struct NetPoint {
    pub name: String,
    pub kind: NetPointKind,
    /// The zone this netpoint is a component of (`None` for the root zone's own netpoint).
    pub zone: Option<ZoneId>,
    /// Rank among the components of `zone` (SimGrid's `NetPoint::id()`).
    pub vertex: usize,
}

impl NetPoint {
    pub(crate) fn is_zone(&self) -> bool {
        matches!(self.kind, NetPointKind::Zone(_))
    }
    pub(crate) fn is_router(&self) -> bool {
        matches!(self.kind, NetPointKind::Router)
    }
}

/// A route stored in a zone (SimGrid's `Route`): links, plus gateways in recursive zones.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalRoute {
    pub links: Vec<LinkId>,
    pub gw_src: Option<NpId>,
    pub gw_dst: Option<NpId>,
}

/// A `<bypassRoute>` or `<bypassZoneRoute>` (SimGrid's `BypassRoute`).
#[derive(Debug, Clone)]
pub(crate) struct BypassRoute {
    pub gw_src: Option<NpId>,
    pub gw_dst: Option<NpId>,
    pub links: Vec<LinkId>,
}

/// Gateways returned by a local route (both `None` between two leaves).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Gateways {
    pub src: Option<NpId>,
    pub dst: Option<NpId>,
}

/// The routing kind of a zone and its tables.
#[derive(Debug, Clone)]
pub(crate) enum Routing {
    /// `routing="Full"`: one explicit route per ordered pair (`FullZone.cpp`).
    Full(FullRouting),
    /// `routing="Floyd"`: shortest paths by link count over declared routes (`FloydZone.cpp`).
    Floyd(FloydRouting),
    /// `routing="Dijkstra"` / `"DijkstraCache"` (`DijkstraZone.cpp`).
    Dijkstra(DijkstraRouting),
    /// `routing="None"`: no routes at all (`EmptyZone.hpp`).
    Empty,
    /// `routing="Cluster"` and flat `<cluster>`: a star (`StarZone.cpp`).
    Star(StarRouting),
    /// `<cluster topology="TORUS">` (`TorusZone.cpp`).
    Torus(TorusRouting),
    /// `<cluster topology="FAT_TREE">` (`FatTreeZone.cpp`).
    FatTree(FatTreeRouting),
    /// `<cluster topology="DRAGONFLY">` (`DragonflyZone.cpp`).
    Dragonfly(DragonflyRouting),
}

impl Routing {
    /// Whether this kind accepts `<route>`-like declarations (`RoutedZone` or `StarZone`).
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Routing::Full(_) => "Full",
            Routing::Floyd(_) => "Floyd",
            Routing::Dijkstra(_) => "Dijkstra",
            Routing::Empty => "None",
            Routing::Star(_) => "Cluster",
            Routing::Torus(_) => "Torus cluster",
            Routing::FatTree(_) => "Fat-tree cluster",
            Routing::Dragonfly(_) => "Dragonfly cluster",
        }
    }
}

/// A netzone.
#[derive(Debug, Clone)]
pub(crate) struct Zone {
    pub name: String,
    /// This zone's own netpoint (a component of the parent zone).
    pub netpoint: NpId,
    pub parent: Option<ZoneId>,
    pub children: Vec<ZoneId>,
    /// Components in creation order; `vertices[np.vertex] == np`.
    pub vertices: Vec<NpId>,
    /// SimGrid's `RoutingMode::recursive`: set when a sub-zone is attached.
    pub recursive: bool,
    pub props: Vec<(String, String)>,
    pub bypass: HashMap<(NpId, NpId), BypassRoute>,
    pub routing: Routing,
}

/// One `<link_ctn>`: a link, and for split-duplex links the direction.
#[derive(Debug, Clone)]
pub(crate) enum LinkInRoute {
    /// A plain link (SHARED or FATPIPE, or one half of a split-duplex link named explicitly).
    Plain(LinkId),
    /// A split-duplex link used upward (`up == true`) or downward.
    Split {
        up_link: LinkId,
        down_link: LinkId,
        up: bool,
    },
}

/// SimGrid's `NetZoneImpl::get_link_list_impl`: the links of a route, or of its reverse when
/// `backroute` (in which case UP and DOWN are swapped; the caller reverses the order).
pub(crate) fn link_list_impl(list: &[LinkInRoute], backroute: bool) -> Vec<LinkId> {
    list.iter()
        .map(|l| match *l {
            LinkInRoute::Plain(id) => id,
            LinkInRoute::Split {
                up_link,
                down_link,
                up,
            } => {
                if up != backroute {
                    up_link
                } else {
                    down_link
                }
            }
        })
        .collect()
}
