//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use timeless_platform::{HostId, Platform, PlatformOptions, Route};

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

pub fn load(name: &str) -> Platform {
    Platform::from_file(&data(name), &PlatformOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn load_str(text: &str) -> Platform {
    Platform::from_xml(text, "inline.xml", &PlatformOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn load_err(text: &str) -> String {
    match Platform::from_xml(text, "bad.xml", &PlatformOptions::default()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

pub fn host(p: &Platform, name: &str) -> HostId {
    p.host_by_name(name)
        .unwrap_or_else(|| panic!("no host {name}"))
}

pub fn route(p: &Platform, src: &str, dst: &str) -> Route {
    p.route(host(p, src), host(p, dst))
        .unwrap_or_else(|e| panic!("{src} -> {dst}: {e}"))
}

/// The link names of the route `src → dst`.
pub fn names(p: &Platform, src: &str, dst: &str) -> Vec<String> {
    route(p, src, dst)
        .links
        .iter()
        .map(|l| p.link(*l).name.clone())
        .collect()
}

/// Sum of the latencies of `links` (by name) in the given order, as SimGrid adds them.
pub fn latency_sum(p: &Platform, links: &[&str]) -> f64 {
    let mut sum = 0.0;
    for name in links {
        sum += p.link(p.link_by_name(name).unwrap()).latency_secs;
    }
    sum
}

/// Wraps zone content into a 4.1 platform.
pub fn platform(body: &str) -> String {
    format!(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n{body}\n</platform>\n"
    )
}
