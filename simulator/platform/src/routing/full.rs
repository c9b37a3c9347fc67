//! `routing="Full"`: every route is declared explicitly.
//!
//! Source: `src/kernel/routing/FullZone.cpp`.
//!
//! * A declared route fills one entry of the `src × dst` table; a second declaration of the
//!   same pair is an error ("routes are symmetrical by default"). A symmetrical route also
//!   fills `dst × src` with the links reversed and UP/DOWN swapped, unless `src == dst`.
//! * When sealing a zone in *base* mode (no sub-zone), every component without a self-route
//!   gets the network model's `__loopback__` link (FATPIPE, `network/loopback-bw` = 10 GB/s,
//!   `network/loopback-lat` = 0).
//! * A missing entry is **not** an error here: the local route is empty. The caller decides
//!   (an empty host-to-host route makes SimGrid abort the communication; an empty zone-level
//!   route has no gateways, which is the "Bad gateways" error).

use super::add_links;
use crate::zone::{Gateways, LocalRoute};
use crate::{Link, LinkId};
use rustc_hash::FxHashMap as HashMap;

/// Tables of a Full zone, indexed by vertex.
#[derive(Debug, Clone, Default)]
pub(crate) struct FullRouting {
    table: HashMap<(usize, usize), LocalRoute>,
}

impl FullRouting {
    /// `FullZone::add_route`. `reverse` is the reverse route when symmetrical.
    pub(crate) fn add_route(
        &mut self,
        src: usize,
        dst: usize,
        forward: LocalRoute,
        reverse: Option<LocalRoute>,
        names: &RouteNames,
    ) -> Result<(), String> {
        if self.table.contains_key(&(src, dst)) {
            return Err(format!(
                "The route between {} and {} already exists (Rq: routes are symmetrical by default).",
                names.src_label(),
                names.dst_label()
            ));
        }
        self.table.insert((src, dst), forward);
        if let Some(reverse) = reverse {
            if src != dst {
                if self.table.contains_key(&(dst, src)) {
                    return Err(format!(
                        "The route between {} and {} already exists. You should not declare the reverse path as symmetrical.",
                        names.dst_label(),
                        names.src_label()
                    ));
                }
                self.table.insert((dst, src), reverse);
            }
        }
        Ok(())
    }

    /// `FullZone::do_seal`: the loopback on the diagonal, in base mode only.
    pub(crate) fn seal(&mut self, vertices: usize, loopback: Option<LinkId>) {
        if let Some(loopback) = loopback {
            for i in 0..vertices {
                self.table.entry((i, i)).or_insert_with(|| LocalRoute {
                    links: vec![loopback],
                    gw_src: None,
                    gw_dst: None,
                });
            }
        }
    }

    /// `FullZone::get_local_route`.
    pub(crate) fn local_route(
        &self,
        src: usize,
        dst: usize,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        all: &[Link],
    ) -> Gateways {
        match self.table.get(&(src, dst)) {
            Some(route) => {
                add_links(links, lat, all, &route.links);
                Gateways {
                    src: route.gw_src,
                    dst: route.gw_dst,
                }
            }
            None => Gateways::default(),
        }
    }
}

/// Names used in route error messages: `src`, or `src@gw_src` for zone routes.
#[derive(Debug, Clone)]
pub(crate) struct RouteNames {
    pub src: String,
    pub dst: String,
    pub gw_src: Option<String>,
    pub gw_dst: Option<String>,
}

impl RouteNames {
    pub(crate) fn src_label(&self) -> String {
        match &self.gw_src {
            Some(gw) => format!("{}@{}", self.src, gw),
            None => self.src.clone(),
        }
    }
    pub(crate) fn dst_label(&self) -> String {
        match &self.gw_dst {
            Some(gw) => format!("{}@{}", self.dst, gw),
            None => self.dst.clone(),
        }
    }
}
