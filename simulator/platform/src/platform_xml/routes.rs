//! `<route>`, `<zoneRoute>`, `<bypassRoute>` and `<bypassZoneRoute>` (and the `AS` aliases).

use super::Walker;
use crate::error::PlatformError;
use crate::xml::Element;
use crate::zone::{LinkInRoute, NpId};

impl Walker {
    // ----------------------------------------------------------------- routes

    fn netpoint_attr(&self, el: &Element, attr: &str) -> Result<NpId, PlatformError> {
        let name = self.req(el, attr)?;
        self.b.netpoint(name).ok_or_else(|| {
            self.b.loc(el.line).unknown(
                "node",
                name,
                &format!(
                    " ({} {attr}=; a node is a host, a router or a zone)",
                    el.name
                ),
            )
        })
    }

    pub(super) fn route(
        &mut self,
        el: &Element,
        zone: usize,
        with_gateways: bool,
        bypass: bool,
    ) -> Result<(), PlatformError> {
        let mut allowed = vec!["src", "dst"];
        if with_gateways {
            allowed.extend(["gw_src", "gw_dst"]);
        }
        if !bypass {
            allowed.push("symmetrical");
        }
        self.check_attrs(el, &allowed, &[])?;
        let src = self.netpoint_attr(el, "src")?;
        let dst = self.netpoint_attr(el, "dst")?;
        let gateways = if with_gateways {
            Some((
                self.netpoint_attr(el, "gw_src")?,
                self.netpoint_attr(el, "gw_dst")?,
            ))
        } else {
            None
        };
        let symmetrical = match el.attr("symmetrical") {
            None | Some("YES") | Some("yes") => true,
            Some("NO") | Some("no") => false,
            Some(other) => {
                return Err(self.bad_value(el, "symmetrical", other, "YES, NO, yes or no"))
            }
        };
        let mut list: Vec<LinkInRoute> = Vec::new();
        for child in &el.children {
            if child.name != "link_ctn" {
                return Err(self.unexpected(child, el, &["link_ctn"]));
            }
            self.check_attrs(child, &["id", "direction"], &[])?;
            let id = self.req(child, "id")?;
            let direction = match child.attr("direction") {
                None | Some("NONE") => None,
                Some("UP") => Some(true),
                Some("DOWN") => Some(false),
                Some(other) => {
                    return Err(self.bad_value(child, "direction", other, "UP, DOWN or NONE"))
                }
            };
            list.push(self.b.link_ctn(id, direction, &self.b.loc(child.line))?);
        }
        let loc = self.loc(el);
        if bypass {
            self.b
                .add_bypass_route(zone, src, dst, gateways, &list, &loc)
        } else {
            self.b
                .add_route(zone, src, dst, gateways, &list, symmetrical, &loc)
        }
    }
}
