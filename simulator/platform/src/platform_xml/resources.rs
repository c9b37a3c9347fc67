//! `<host>`, `<link>`, `<backbone>`, `<cabinet>` and `<cluster>` elements.

use super::Walker;
use crate::cluster::{
    explode_radicals, BackboneArgs, CabinetArgs, ClusterArgs, ClusterSharing, Topology,
};
use crate::error::PlatformError;
use crate::units::UnitKind;
use crate::xml::Element;
use crate::{Host, SharingPolicy};

impl Walker {
    // ----------------------------------------------------------------- resources

    pub(super) fn host(&mut self, el: &Element, zone: usize) -> Result<(), PlatformError> {
        self.check_attrs(
            el,
            &[
                "id",
                "speed",
                "core",
                "pstate",
                "speed_file",
                "availability_file",
                "state_file",
                "coordinates",
            ],
            &["power", "availability", "state"],
        )?;
        let id = self.req(el, "id")?;
        let speed_text = self.speed_attr(el)?;
        let speeds = self.speeds(speed_text, format!("speed of host {id}"), el.line)?;
        let cores = self.int_attr(el, "core", "1")?;
        let pstate = self.int_attr(el, "pstate", "0.0")?;
        let loc = self.loc(el);
        if cores <= 0 {
            return Err(loc.invalid(format!(
                "Host {id} must have at least one core, not {cores}."
            )));
        }
        if pstate < 0 || pstate as usize >= speeds.len() {
            return Err(loc.invalid(format!(
                "Invalid parameters for CPU {id} (pstate {pstate} >= length of pstates {})",
                speeds.len()
            )));
        }
        if el.attr("availability_file").is_some_and(|v| !v.is_empty()) {
            self.b.notice(
                &loc,
                "The availability_file attribute in <host> is deprecated; use speed_file",
            );
        }
        self.ignored_file_attrs(el, &["speed_file", "availability_file", "state_file"]);
        for attr in ["availability", "state"] {
            if let Some(v) = el.attr(attr) {
                self.b.notice(
                    &loc,
                    format!("<host {attr}=\"{v}\"> (version 3 syntax) is ignored"),
                );
            }
        }
        for child in &el.children {
            match child.name.as_str() {
                "prop" => {}
                "disk" => self.disk(child)?,
                "mount" => return Err(self.removed(child, "v3.27")),
                _ => return Err(self.unexpected(child, el, &["prop", "disk"])),
            }
        }
        let host = Host {
            name: id.to_string(),
            speed_flops_per_sec: speeds[pstate as usize],
            cores: cores as u32,
            props: self.props(el)?,
        };
        self.b.create_host(zone, host, &loc)?;
        Ok(())
    }

    fn disk(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(el, &["id", "read_bw", "write_bw"], &[])?;
        let id = el.attr("id").unwrap_or("/").to_string();
        let read = self.req(el, "read_bw")?;
        let write = self.req(el, "write_bw")?;
        self.quantity(
            UnitKind::Bandwidth,
            read,
            format!("read_bw of disk {id}"),
            el.line,
        )?;
        self.quantity(
            UnitKind::Bandwidth,
            write,
            format!("write_bw of disk {id}"),
            el.line,
        )?;
        for child in &el.children {
            if child.name != "prop" {
                return Err(self.unexpected(child, el, &["prop"]));
            }
        }
        self.ignored_element(el);
        Ok(())
    }

    pub(super) fn link(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(
            el,
            &[
                "id",
                "bandwidth",
                "bandwidth_file",
                "latency",
                "latency_file",
                "state_file",
                "sharing_policy",
            ],
            &["state"],
        )?;
        let id = self.req(el, "id")?;
        let loc = self.loc(el);
        let bw_text = self.req(el, "bandwidth")?;
        // xbt_parse_get_bandwidths: split on ';' and ',' (wifi links have several).
        let bandwidths = bw_text
            .split([';', ','])
            .map(|t| {
                self.quantity(
                    UnitKind::Bandwidth,
                    t,
                    format!("bandwidth of link {id}"),
                    el.line,
                )
            })
            .collect::<Result<Vec<f64>, _>>()?;
        let latency = match el.attr("latency") {
            Some(text) => self.quantity(
                UnitKind::Time,
                text,
                format!("latency of link {id}"),
                el.line,
            )?,
            None => {
                self.b.notice(
                    &loc,
                    format!("link {id} has no latency: using 0 s as simgrid.dtd documents (SimGrid 3.32 itself fails with \"cannot parse number\")"),
                );
                0.0
            }
        };
        let policy_text = el.attr("sharing_policy").unwrap_or("SHARED");
        let split = match policy_text {
            "SHARED" => false,
            "FATPIPE" => false,
            "SPLITDUPLEX" => true,
            "FULLDUPLEX" => {
                self.b
                    .notice(&loc, "FULLDUPLEX is deprecated; it means SPLITDUPLEX");
                true
            }
            "WIFI" => return Err(loc.unsupported(format!("WIFI link {id}"))),
            _ => {
                return Err(self.bad_value(
                    el,
                    "sharing_policy",
                    policy_text,
                    "SHARED, SPLITDUPLEX, FULLDUPLEX, FATPIPE or WIFI",
                ))
            }
        };
        if bandwidths.len() != 1 {
            return Err(loc.invalid(format!(
                "link {id}: Non-WIFI links must use only 1 bandwidth (got {})",
                bandwidths.len()
            )));
        }
        self.ignored_file_attrs(el, &["bandwidth_file", "latency_file", "state_file"]);
        if let Some(v) = el.attr("state") {
            self.b.notice(
                &loc,
                format!("<link state=\"{v}\"> (version 3 syntax) is ignored"),
            );
        }
        for child in &el.children {
            if child.name != "prop" {
                return Err(self.unexpected(child, el, &["prop"]));
            }
        }
        let props = self.props(el)?;
        if split {
            self.b
                .create_split_duplex_link(id, bandwidths[0], latency, props, &loc)?;
        } else {
            let policy = if policy_text == "FATPIPE" {
                SharingPolicy::FatPipe
            } else {
                SharingPolicy::Shared
            };
            self.b
                .create_link(id, bandwidths[0], latency, policy, props, &loc)?;
        }
        Ok(())
    }

    pub(super) fn backbone(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(el, &["id", "bandwidth", "latency"], &[])?;
        let id = self.req(el, "id")?.to_string();
        let bw_text = self.req(el, "bandwidth")?;
        let lat_text = self.req(el, "latency")?;
        let bw = self.quantity(
            UnitKind::Bandwidth,
            bw_text,
            format!("bandwidth of backbone {id}"),
            el.line,
        )?;
        let lat = self.quantity(
            UnitKind::Time,
            lat_text,
            format!("latency of backbone {id}"),
            el.line,
        )?;
        self.b.zone_cluster.backbone = Some(BackboneArgs {
            id,
            bw,
            lat,
            loc: self.loc(el),
        });
        Ok(())
    }

    pub(super) fn cabinet(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(
            el,
            &["id", "prefix", "suffix", "radical", "speed", "bw", "lat"],
            &["power"],
        )?;
        let id = self.req(el, "id")?.to_string();
        let prefix = self.req(el, "prefix")?.to_string();
        let suffix = self.req(el, "suffix")?.to_string();
        let radical = self.req(el, "radical")?;
        let speed_text = self.speed_attr(el)?;
        let bw_text = self.req(el, "bw")?;
        let lat_text = self.req(el, "lat")?;
        let speed = self.quantity(
            UnitKind::Speed,
            speed_text,
            format!("speed of cabinet {id}"),
            el.line,
        )?;
        let bw = self.quantity(
            UnitKind::Bandwidth,
            bw_text,
            format!("bw of cabinet {id}"),
            el.line,
        )?;
        let lat = self.quantity(
            UnitKind::Time,
            lat_text,
            format!("lat of cabinet {id}"),
            el.line,
        )?;
        let radicals =
            explode_radicals(radical).map_err(|m| self.bad_value(el, "radical", radical, &m))?;
        self.b.zone_cluster.cabinets.push(CabinetArgs {
            prefix,
            suffix,
            radicals,
            speed,
            bw,
            lat,
            loc: self.loc(el),
        });
        Ok(())
    }

    pub(super) fn cluster(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(
            el,
            &[
                "id",
                "prefix",
                "suffix",
                "radical",
                "speed",
                "core",
                "bw",
                "lat",
                "sharing_policy",
                "topology",
                "topo_parameters",
                "bb_bw",
                "bb_lat",
                "bb_sharing_policy",
                "router_id",
                "limiter_link",
                "loopback_bw",
                "loopback_lat",
            ],
            &["power", "availability_file", "state_file"],
        )?;
        for child in &el.children {
            if child.name != "prop" {
                return Err(self.unexpected(child, el, &["prop"]));
            }
        }
        let loc = self.loc(el);
        let id = self.req(el, "id")?.to_string();
        let prefix = self.req(el, "prefix")?.to_string();
        let suffix = self.req(el, "suffix")?.to_string();
        let radical = self.req(el, "radical")?;
        let radicals =
            explode_radicals(radical).map_err(|m| self.bad_value(el, "radical", radical, &m))?;
        let speed_text = self.speed_attr(el)?;
        let speeds = self.speeds(speed_text, format!("speed of cluster {id}"), el.line)?;
        let cores = self.int_attr(el, "core", "1")?;
        if cores <= 0 {
            return Err(loc.invalid(format!(
                "cluster {id}: hosts must have at least one core, not {cores}."
            )));
        }
        let bw_text = self.req(el, "bw")?;
        let bw = self.quantity(
            UnitKind::Bandwidth,
            bw_text,
            format!("bw of cluster {id}"),
            el.line,
        )?;
        let lat_text = self.req(el, "lat")?;
        let lat = self.quantity(
            UnitKind::Time,
            lat_text,
            format!("lat of cluster {id}"),
            el.line,
        )?;
        let optional = |w: &mut Self, name: &str, kind: UnitKind| -> Result<f64, PlatformError> {
            match el.attr(name) {
                Some(text) if !text.is_empty() => {
                    w.quantity(kind, text, format!("{name} of cluster {id}"), el.line)
                }
                _ => Ok(0.0),
            }
        };
        let bb_bw = optional(self, "bb_bw", UnitKind::Bandwidth)?;
        let bb_lat = match el.attr("bb_lat") {
            Some(_) => optional(self, "bb_lat", UnitKind::Time)?,
            None => 0.0,
        };
        let limiter_link = optional(self, "limiter_link", UnitKind::Bandwidth)?;
        let loopback_bw = optional(self, "loopback_bw", UnitKind::Bandwidth)?;
        let loopback_lat = optional(self, "loopback_lat", UnitKind::Time)?;
        let topology = match el.attr("topology").unwrap_or("FLAT") {
            "FLAT" => Topology::Flat,
            "TORUS" => Topology::Torus,
            "FAT_TREE" => Topology::FatTree,
            "DRAGONFLY" => Topology::Dragonfly,
            other => {
                return Err(self.bad_value(
                    el,
                    "topology",
                    other,
                    "FLAT, TORUS, FAT_TREE or DRAGONFLY",
                ))
            }
        };
        let sharing = match el.attr("sharing_policy").unwrap_or("SPLITDUPLEX") {
            "SHARED" => ClusterSharing::Shared,
            "SPLITDUPLEX" => ClusterSharing::SplitDuplex,
            "FULLDUPLEX" => {
                self.b
                    .notice(&loc, "FULLDUPLEX is deprecated; it means SPLITDUPLEX");
                ClusterSharing::SplitDuplex
            }
            "FATPIPE" => {
                if topology == Topology::Flat {
                    self.b.notice(
                        &loc,
                        format!("cluster {id}: sharing_policy=\"FATPIPE\" gives SHARED private links in SimGrid 3.32 (reproduced)"),
                    );
                }
                ClusterSharing::FatPipe
            }
            other => {
                return Err(self.bad_value(
                    el,
                    "sharing_policy",
                    other,
                    "SHARED, SPLITDUPLEX, FULLDUPLEX or FATPIPE",
                ))
            }
        };
        let bb_policy = match el.attr("bb_sharing_policy").unwrap_or("SHARED") {
            "SHARED" => SharingPolicy::Shared,
            "FATPIPE" => SharingPolicy::FatPipe,
            other => {
                return Err(self.bad_value(el, "bb_sharing_policy", other, "SHARED or FATPIPE"))
            }
        };
        self.ignored_file_attrs(el, &["availability_file", "state_file"]);
        let args = ClusterArgs {
            id,
            prefix,
            suffix,
            radicals,
            speeds,
            cores: cores as u32,
            bw,
            lat,
            bb_bw,
            bb_lat,
            sharing,
            bb_policy,
            topology,
            topo_parameters: el.attr("topo_parameters").unwrap_or("").to_string(),
            router_id: el.attr("router_id").unwrap_or("").to_string(),
            limiter_link,
            loopback_bw,
            loopback_lat,
            props: self.props(el)?,
        };
        self.b.new_cluster(args, &loc)
    }
}
