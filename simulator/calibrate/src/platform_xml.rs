//! Writer of a SimGrid platform file (DTD 4.1) describing the measured machine.
//!
//! Layout, one Full zone:
//! * one `<host>` per machine, with its calibrated `speed` (flop/s) and `core` count;
//! * a single machine: one SHARED link `<host>_self` and the self-route `<host> → <host>` over it,
//!   which replaces SimGrid's default `__loopback__` (10 GB/s, no latency, reference §6.2), so
//!   that ranks sharing the machine talk over the calibrated link;
//! * several machines: one SHARED link `link_<i>_<j>` per pair and a symmetrical route over it;
//!   ranks on the same machine keep the default loopback (the ping-pong measured only the pair).
//!
//! A lone message on such a link crosses it both ways (route and cross-traffic reverse route), so
//! its weight is 1.05 ([`crate::simgrid::SHARED_LINK_WEIGHT`]): the calibration accounts for it.
//!
//! With a fitted concurrent-flow ratio m ([`LinkSpec::flow_aggregate_ratio`]) each of these
//! links becomes two on the same route: the link itself, FATPIPE with the calibrated latency and
//! bandwidth B (a lone flow gets B: weight 1, reference §6.2), and `<id>_shared`, SHARED with no
//! latency and bandwidth 1.05·m·B, which k concurrent flows (each weighing 1.05 on it) split
//! into min(B, m·B/k) each.

use std::fmt::Write;

use crate::simgrid::LinkSpec;

/// One host of the platform.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpec {
    /// Host name (the hostfile's names, so that `--hostfile` keeps working).
    pub name: String,
    /// Speed of one core in flop/s.
    pub speed_flops_per_sec: f64,
    /// Number of cores.
    pub cores: u32,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The platform XML text for `hosts` connected by `link` (module docs). `comment` is written in
/// an XML comment at the top (`--` is replaced, as XML forbids it there).
pub fn platform_xml(hosts: &[HostSpec], link: &LinkSpec, comment: &str) -> String {
    let mut x = String::new();
    x.push_str("<?xml version='1.0'?>\n");
    x.push_str("<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n");
    let _ = writeln!(x, "<!-- {} -->", comment.replace("--", "- -"));
    x.push_str("<platform version=\"4.1\">\n");
    x.push_str("  <zone id=\"calibrated\" routing=\"Full\">\n");
    for h in hosts {
        let _ = writeln!(
            x,
            "    <host id=\"{}\" speed=\"{}f\" core=\"{}\"/>",
            escape(&h.name),
            h.speed_flops_per_sec,
            h.cores.max(1)
        );
    }
    let shared = link.shared_bandwidth_bytes_per_sec();
    let link_attrs = format!(
        "bandwidth=\"{}Bps\" latency=\"{}s\" sharing_policy=\"{}\"",
        link.bandwidth_bytes_per_sec,
        link.latency_secs,
        if shared.is_some() {
            "FATPIPE"
        } else {
            "SHARED"
        }
    );
    // Declares the link(s) named `id` and returns the route's `<link_ctn>` elements.
    let declare = |x: &mut String, id: &str| -> String {
        let _ = writeln!(x, "    <link id=\"{id}\" {link_attrs}/>");
        match shared {
            Some(bw) => {
                let _ = writeln!(
                    x,
                    "    <link id=\"{id}_shared\" bandwidth=\"{bw}Bps\" latency=\"0s\" sharing_policy=\"SHARED\"/>"
                );
                format!("<link_ctn id=\"{id}\"/><link_ctn id=\"{id}_shared\"/>")
            }
            None => format!("<link_ctn id=\"{id}\"/>"),
        }
    };
    let mut routes = String::new();
    if hosts.len() == 1 {
        let h = escape(&hosts[0].name);
        let ctn = declare(&mut x, &format!("{h}_self"));
        let _ = writeln!(routes, "    <route src=\"{h}\" dst=\"{h}\">{ctn}</route>");
    } else {
        for i in 0..hosts.len() {
            for j in i + 1..hosts.len() {
                let ctn = declare(&mut x, &format!("link_{i}_{j}"));
                let _ = writeln!(
                    routes,
                    "    <route src=\"{}\" dst=\"{}\">{ctn}</route>",
                    escape(&hosts[i].name),
                    escape(&hosts[j].name)
                );
            }
        }
    }
    x.push_str(&routes);
    x.push_str("  </zone>\n</platform>\n");
    x
}
