//! The platform file format: SimGrid's `simgrid.dtd` (version 4.1) walked element by element.
//!
//! Source: `src/surf/xml/simgrid.dtd`, `src/surf/xml/surfxml_sax_cb.cpp` (what each tag
//! does) and the FleXML parser generated from them (`simgrid_dtd.c`, which fixes the real
//! attribute defaults).
//!
//! Checks, like FleXML's: unknown elements and attributes, missing required attributes and
//! values outside an enumeration are errors naming the line. The DTD's structure is enforced
//! where it matters for routing: a zone contains either sub-zones/clusters or
//! hosts/routers/cabinets (not both), and its routes come after its components. `<prop>` may
//! appear anywhere in its parent (the DTD wants it first; the meaning is the same).
//!
//! Versions: `<platform version>` is read like SimGrid (`lround(100 × v)`); 4.1 and 4.0 are
//! current; 3.x is accepted with a notice (see the crate docs); below 3 and above 4.1 are
//! errors. Deprecated aliases are accepted: `<AS>` = `<zone>`, `<ASroute>` = `<zoneRoute>`,
//! `<bypassASroute>` = `<bypassZoneRoute>`, `FULLDUPLEX` = `SPLITDUPLEX`, `availability_file` =
//! `speed_file`; in version 3 files `power` = `speed` and `kind="POWER"` = `"SPEED"`.
//!
//! Ignored with a notice: `speed_file`, `state_file`, `bandwidth_file`, `latency_file`,
//! `<trace>`, `<trace_connect>`, `<random>`, `<model_prop>`, `<disk>` and actors declared in a
//! platform file. Refused: `<include>`, `<storage>`, `<storage_type>`, `<mount>` (removed from
//! SimGrid), `<peer>`, WIFI links and Vivaldi/Wifi zones (not modelled here).

use crate::builder::Builder;
use crate::cluster::HostLinkArgs;
use crate::error::{Loc, PlatformError};
use crate::routing::dijkstra::DijkstraRouting;
use crate::routing::floyd::FloydRouting;
use crate::routing::full::FullRouting;
use crate::routing::star::StarRouting;
use crate::units::{self, UnitError, UnitKind};
use crate::xml::{self, Element};
use crate::zone::Routing;
use crate::{Platform, PlatformOptions};

mod resources;
mod routes;

/// C++ `std::stoi`: leading blanks, a sign, decimal digits; the rest is ignored.
/// `None` if there is no digit or the value does not fit an `int`.
pub(crate) fn stoi(text: &str) -> Option<i64> {
    let s = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let bytes = s.as_bytes();
    let mut i = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut value: i64 = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        value = value
            .checked_mul(10)?
            .checked_add((bytes[i] - b'0') as i64)?;
        if value > i32::MAX as i64 + 1 {
            return None;
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    let value = if negative { -value } else { value };
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&value)
        .then_some(value)
}

/// Per-file parsing state on top of the builder.
struct Walker {
    b: Builder,
    /// Version 3 leniencies are on.
    v3: bool,
}

fn attr_list(names: &[&str]) -> String {
    names.join(", ")
}

impl Walker {
    fn loc(&self, el: &Element) -> Loc {
        self.b.loc(el.line)
    }

    /// Checks that `el` only has attributes from `allowed` (plus `power` etc. in v3 files).
    fn check_attrs(
        &self,
        el: &Element,
        allowed: &[&str],
        v3_extra: &[&str],
    ) -> Result<(), PlatformError> {
        for (key, _) in &el.attrs {
            let ok =
                allowed.contains(&key.as_str()) || (self.v3 && v3_extra.contains(&key.as_str()));
            if !ok {
                let mut expected = attr_list(allowed);
                if self.v3 && !v3_extra.is_empty() {
                    expected.push_str(", ");
                    expected.push_str(&attr_list(v3_extra));
                }
                return Err(PlatformError::UnknownAttribute {
                    path: self.b.path.clone(),
                    line: el.line,
                    element: el.name.clone(),
                    attribute: key.clone(),
                    expected,
                });
            }
        }
        Ok(())
    }

    fn req<'a>(&self, el: &'a Element, name: &str) -> Result<&'a str, PlatformError> {
        el.attr(name)
            .ok_or_else(|| PlatformError::MissingAttribute {
                path: self.b.path.clone(),
                line: el.line,
                element: el.name.clone(),
                attribute: name.to_string(),
            })
    }

    fn bad_value(
        &self,
        el: &Element,
        attribute: &str,
        value: &str,
        expected: &str,
    ) -> PlatformError {
        PlatformError::BadValue {
            path: self.b.path.clone(),
            line: el.line,
            element: el.name.clone(),
            attribute: attribute.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    /// `speed`, or `power` in version 3 files.
    fn speed_attr<'a>(&mut self, el: &'a Element) -> Result<&'a str, PlatformError> {
        match (el.attr("speed"), el.attr("power")) {
            (Some(s), None) => Ok(s),
            (None, Some(p)) if self.v3 => {
                let loc = self.loc(el);
                self.b.notice(
                    &loc,
                    format!("<{}>: 'power' read as 'speed' (version 3 syntax)", el.name),
                );
                Ok(p)
            }
            (Some(_), Some(_)) if self.v3 => Err(self
                .b
                .loc(el.line)
                .invalid(format!("<{}> has both 'speed' and 'power'", el.name))),
            _ => self.req(el, "speed"),
        }
    }

    /// Parses a quantity with SimGrid's unit tables (`xbt_parse_get_*`).
    fn quantity(
        &mut self,
        kind: UnitKind,
        text: &str,
        what: String,
        line: u32,
    ) -> Result<f64, PlatformError> {
        let loc = self.b.loc(line);
        match units::parse_value(kind, text) {
            Ok(q) => {
                if !q.unit_given && q.value != 0.0 {
                    self.b.unitless_notice(
                        &loc,
                        format!(
                            "unit-less value '{text}' for {what}: read in the default unit '{}' (SimGrid: \"Deprecated unit-less value\")",
                            kind.default_unit()
                        ),
                    );
                }
                Ok(q.value)
            }
            Err(UnitError::UnknownUnit(unit)) => Err(PlatformError::BadUnit {
                path: loc.path,
                line,
                what,
                value: text.to_string(),
                unit,
                accepted: kind.accepted_units().to_string(),
            }),
            Err(e) => Err(PlatformError::BadNumber {
                path: loc.path,
                line,
                what,
                value: text.to_string(),
                problem: match e {
                    UnitError::OutOfRange => "value out of range".to_string(),
                    UnitError::Hexadecimal => "hexadecimal numbers are not supported".to_string(),
                    _ => "cannot parse a number".to_string(),
                },
            }),
        }
    }

    /// `xbt_parse_get_all_speeds`: comma-separated pstate speeds, each trimmed.
    fn speeds(&mut self, text: &str, what: String, line: u32) -> Result<Vec<f64>, PlatformError> {
        text.split(',')
            .map(|s| self.quantity(UnitKind::Speed, s.trim(), what.clone(), line))
            .collect()
    }

    fn int_attr(&self, el: &Element, name: &str, default: &str) -> Result<i64, PlatformError> {
        let text = el.attr(name).unwrap_or(default);
        stoi(text).ok_or_else(|| self.bad_value(el, name, text, "an integer"))
    }

    fn ignored_file_attrs(&mut self, el: &Element, names: &[&str]) {
        for name in names {
            if let Some(v) = el.attr(name) {
                if !v.is_empty() {
                    let loc = self.loc(el);
                    self.b.notice(
                        &loc,
                        format!(
                            "<{} {name}=\"{v}\">: profiles are ignored by timeless",
                            el.name
                        ),
                    );
                }
            }
        }
    }

    /// The `<prop>` children of `el`, first occurrence of a key winning.
    fn props(&self, el: &Element) -> Result<Vec<(String, String)>, PlatformError> {
        let mut props: Vec<(String, String)> = Vec::new();
        for child in el.children.iter().filter(|c| c.name == "prop") {
            self.check_attrs(child, &["id", "value"], &[])?;
            let id = self.req(child, "id")?;
            let value = self.req(child, "value")?;
            if !props.iter().any(|(k, _)| k == id) {
                props.push((id.to_string(), value.to_string()));
            }
        }
        Ok(props)
    }

    fn unexpected(&self, child: &Element, parent: &Element, expected: &[&str]) -> PlatformError {
        PlatformError::UnexpectedElement {
            path: self.b.path.clone(),
            line: child.line,
            element: child.name.clone(),
            parent: parent.name.clone(),
            expected: expected.join(", "),
        }
    }

    fn removed(&self, el: &Element, version: &str) -> PlatformError {
        self.b.loc(el.line).invalid(format!(
            "<{}> was removed in SimGrid {version}; please stop using it",
            el.name
        ))
    }

    // ----------------------------------------------------------------- platform level

    fn platform(&mut self, root: &Element) -> Result<(), PlatformError> {
        const CHILDREN: &[&str] = &[
            "config",
            "random",
            "cluster",
            "cabinet",
            "peer",
            "zone",
            "AS",
            "trace",
            "trace_connect",
            "actor",
            "process",
        ];
        let mut actors = 0usize;
        for child in &root.children {
            match child.name.as_str() {
                "config" => self.config(child)?,
                "random" | "model_prop" => self.ignored_element(child),
                "include" => return Err(self.removed(child, "v3.18")),
                "cluster" => self.cluster(child)?,
                "cabinet" => self.cabinet(child)?,
                "peer" => return Err(self.loc(child).unsupported("<peer> (Vivaldi zones)")),
                "zone" | "AS" => self.zone(child)?,
                "trace" | "trace_connect" => self.ignored_element(child),
                "actor" | "process" => actors += 1,
                _ => return Err(self.unexpected(child, root, CHILDREN)),
            }
        }
        if actors > 0 {
            let loc = self.b.loc(root.line);
            self.b.notice(
                &loc,
                format!("{actors} actor(s) declared in the platform file are ignored; use a deployment file or a hostfile"),
            );
        }
        Ok(())
    }

    fn ignored_element(&mut self, el: &Element) {
        let loc = self.loc(el);
        self.b
            .notice(&loc, format!("<{}> is ignored by timeless", el.name));
    }

    fn config(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(el, &["id"], &[])?;
        if !self.b.p.zones.is_empty() {
            return Err(self.loc(el).invalid(
                "All <config> tags must be given before any platform elements (such as <zone>, <host>, <cluster>, <link>, etc).",
            ));
        }
        for child in &el.children {
            if child.name != "prop" {
                return Err(self.unexpected(child, el, &["prop"]));
            }
        }
        let props = self.props(el)?;
        self.b.p.config.extend(props);
        Ok(())
    }

    // ----------------------------------------------------------------- zones

    fn zone(&mut self, el: &Element) -> Result<(), PlatformError> {
        self.check_attrs(el, &["id", "routing"], &[])?;
        let id = self.req(el, "id")?;
        let routing_text = self.req(el, "routing")?;
        let loc = self.loc(el);
        let routing = match routing_text.to_ascii_lowercase().as_str() {
            "cluster" => Routing::Star(StarRouting::default()),
            "dijkstra" | "dijkstracache" => Routing::Dijkstra(DijkstraRouting::default()),
            "floyd" => Routing::Floyd(FloydRouting::default()),
            "full" => Routing::Full(FullRouting::default()),
            "none" => Routing::Empty,
            "vivaldi" | "wifi" => {
                return Err(loc.unsupported(format!("zone routing '{routing_text}'")))
            }
            _ => {
                return Err(PlatformError::UnknownRouting {
                    path: loc.path,
                    line: el.line,
                    zone: id.to_string(),
                    routing: routing_text.to_string(),
                })
            }
        };
        // sg_platf_new_zone_begin
        self.b.zone_cluster.routing = routing_text.to_string();
        let zone = self.b.new_zone(id, routing, &loc)?;
        self.b.current = Some(zone);
        self.zone_children(el, zone)?;
        self.b.p.zones[zone].props = self.props(el)?;
        self.b.zone_end(&loc)
    }

    fn zone_children(&mut self, el: &Element, zone: usize) -> Result<(), PlatformError> {
        const CHILDREN: &[&str] = &[
            "prop",
            "zone",
            "AS",
            "cluster",
            "host",
            "router",
            "link",
            "backbone",
            "cabinet",
            "host_link",
            "trace",
            "trace_connect",
            "route",
            "zoneRoute",
            "ASroute",
            "bypassRoute",
            "bypassZoneRoute",
            "bypassASroute",
        ];
        // Which alternative of the DTD's content model this zone follows.
        let mut subzone_side: Option<&Element> = None;
        let mut leaf_side: Option<&Element> = None;
        let mut first_route: Option<&Element> = None;
        for child in &el.children {
            let name = child.name.as_str();
            let is_route = matches!(
                name,
                "route"
                    | "zoneRoute"
                    | "ASroute"
                    | "bypassRoute"
                    | "bypassZoneRoute"
                    | "bypassASroute"
            );
            match name {
                "zone" | "AS" | "cluster" | "peer" | "zoneRoute" | "ASroute"
                | "bypassZoneRoute" | "bypassASroute" => {
                    subzone_side = subzone_side.or(Some(child))
                }
                "host" | "router" | "host_link" | "route" | "bypassRoute" | "storage"
                | "storage_type" => leaf_side = leaf_side.or(Some(child)),
                "cabinet" if el.name == "zone" => leaf_side = leaf_side.or(Some(child)),
                _ => {}
            }
            if let (Some(a), Some(b)) = (subzone_side, leaf_side) {
                let (first, second) = if a.line <= b.line { (a, b) } else { (b, a) };
                return Err(self.loc(second).invalid(format!(
                    "<{}> cannot appear in zone '{}' next to <{}> (line {}): by simgrid.dtd a zone holds either sub-zones and clusters, or hosts, routers and cabinets",
                    second.name,
                    self.b.p.zones[zone].name,
                    first.name,
                    first.line
                )));
            }
            if is_route {
                first_route = first_route.or(Some(child));
            } else if let Some(route) = first_route {
                if !matches!(name, "trace" | "trace_connect" | "prop") {
                    return Err(self.loc(child).invalid(format!(
                        "<{}> must come before the routes of zone '{}' (the first one is <{}> at line {}), as simgrid.dtd requires",
                        name,
                        self.b.p.zones[zone].name,
                        route.name,
                        route.line
                    )));
                }
            }
            match name {
                "prop" => {}
                "zone" | "AS" => self.zone(child)?,
                "include" => return Err(self.removed(child, "v3.18")),
                "storage" | "storage_type" | "mount" => return Err(self.removed(child, "v3.27")),
                "host" => self.host(child, zone)?,
                "cabinet" => self.cabinet(child)?,
                "router" => {
                    self.check_attrs(child, &["id", "coordinates"], &[])?;
                    let id = self.req(child, "id")?;
                    let loc = self.loc(child);
                    self.b.create_router(zone, id, &loc)?;
                }
                "link" => self.link(child)?,
                "backbone" => self.backbone(child)?,
                "trace" | "trace_connect" => self.ignored_element(child),
                "host_link" => {
                    self.check_attrs(child, &["id", "up", "down"], &[])?;
                    let args = HostLinkArgs {
                        id: self.req(child, "id")?.to_string(),
                        up: self.req(child, "up")?.to_string(),
                        down: self.req(child, "down")?.to_string(),
                        loc: self.loc(child),
                    };
                    self.b.zone_cluster.host_links.push(args);
                }
                "cluster" => self.cluster(child)?,
                "peer" => return Err(self.loc(child).unsupported("<peer> (Vivaldi zones)")),
                "route" => self.route(child, zone, false, false)?,
                "zoneRoute" | "ASroute" => self.route(child, zone, true, false)?,
                "bypassRoute" => self.route(child, zone, false, true)?,
                "bypassZoneRoute" | "bypassASroute" => self.route(child, zone, true, true)?,
                _ => return Err(self.unexpected(child, el, CHILDREN)),
            }
        }
        Ok(())
    }
}

/// Reads a version attribute like SimGrid: `lround(100 × strtod(v))`.
fn version_hundredths(text: &str) -> Option<i64> {
    let (v, _) = units::strtod_prefix(text).ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((100.0 * v).round() as i64)
}

/// Parses a whole platform file.
pub(crate) fn parse_platform(
    text: &str,
    origin: &str,
    opts: &PlatformOptions,
) -> Result<Platform, PlatformError> {
    let root = xml::parse_document(text, origin)?;
    let mut walker = Walker {
        b: Builder::new(origin, opts),
        v3: false,
    };
    if root.name != "platform" {
        return Err(PlatformError::UnexpectedElement {
            path: origin.to_string(),
            line: root.line,
            element: root.name.clone(),
            parent: "(document)".to_string(),
            expected: "platform".to_string(),
        });
    }
    walker.check_attrs(&root, &["version"], &[])?;
    let version_text = root.attr("version").unwrap_or("0.0");
    let loc = walker.b.loc(root.line);
    let version = version_hundredths(version_text).ok_or_else(|| {
        walker.bad_value(
            &root,
            "version",
            version_text,
            "a version number such as 4.1",
        )
    })?;
    if version > 410 {
        return Err(PlatformError::VersionTooNew {
            path: origin.to_string(),
            line: root.line,
            version: version_text.to_string(),
        });
    }
    if version < 300 {
        return Err(PlatformError::VersionTooOld {
            path: origin.to_string(),
            line: root.line,
            version: version_text.to_string(),
        });
    }
    if version < 400 {
        walker.v3 = true;
        walker.b.notice(
            &loc,
            format!("version {version_text} platform file accepted by timeless although SimGrid 3.32 rejects versions below 4.0 ('power' is read as 'speed', unit-less values use the default units)"),
        );
    } else if version < 410 {
        walker.b.notice(
            &loc,
            format!("version {version_text} platform file: fine, v4.1 is backward compatible"),
        );
    }
    walker.platform(&root)?;
    walker.b.finish()
}

#[cfg(test)]
mod tests {
    use super::stoi;

    #[test]
    fn stoi_like_cpp() {
        assert_eq!(stoi("12"), Some(12));
        assert_eq!(stoi(" -3x"), Some(-3));
        assert_eq!(stoi("0.0"), Some(0));
        assert_eq!(stoi("2.5"), Some(2));
        assert_eq!(stoi(""), None);
        assert_eq!(stoi("x1"), None);
        assert_eq!(stoi("99999999999"), None);
    }
}
