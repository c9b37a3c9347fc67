//! SimGrid's own example platforms (`examples/platforms/*.xml` at tag v3.32) must parse.
//!
//! The files are LGPL and are not copied here: they are read from a git mirror of SimGrid,
//! `$SIMGRID_GIT` or `/work/.mirror/simgrid+simgrid/repo`. Without a mirror the test prints a
//! note and passes. The full differential comparison of every route against SimGrid itself
//! is `tools/differential.sh`.
#![allow(clippy::excessive_precision)]

use std::process::Command;
use timeless_platform::{Platform, PlatformOptions};

fn mirror() -> Option<String> {
    let dir = std::env::var("SIMGRID_GIT")
        .unwrap_or_else(|_| "/work/.mirror/simgrid+simgrid/repo".to_string());
    std::path::Path::new(&dir).exists().then_some(dir)
}

fn git(dir: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Files that need what timeless deliberately does not model.
const UNSUPPORTED: &[&str] = &[
    "cloud.xml",       // Vivaldi zone
    "data_center.xml", // Vivaldi zone
    "two_peers.xml",   // Vivaldi zone
    "vivaldi.xml",     // Vivaldi zone
    "wifi.xml",        // Wifi zone
    "wifi_energy.xml", // Wifi zone
    "wifi_ns3.xml",    // Wifi zone
];

#[test]
fn simgrid_example_platforms_parse() {
    let Some(dir) = mirror() else {
        eprintln!("no SimGrid mirror: skipped");
        return;
    };
    let Some(listing) = git(
        &dir,
        &["ls-tree", "--name-only", "v3.32", "examples/platforms/"],
    ) else {
        eprintln!("no v3.32 tag in {dir}: skipped");
        return;
    };
    let mut parsed = 0;
    for path in listing.lines().filter(|p| p.ends_with(".xml")) {
        let name = path.rsplit('/').next().unwrap();
        let text = git(&dir, &["show", &format!("v3.32:{path}")]).unwrap();
        let result = Platform::from_xml(&text, name, &PlatformOptions::default());
        if UNSUPPORTED.contains(&name) {
            let err = result.unwrap_err().to_string();
            assert!(err.contains("not supported"), "{name}: {err}");
            continue;
        }
        let platform = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!platform.hosts().is_empty(), "{name}: no host");
        parsed += 1;
        if name == "small_platform.xml" {
            // Values printed by SimGrid 3.32 (tools/route_oracle.cpp) for this file.
            let route = |s: &str, d: &str| {
                let r = platform
                    .route(
                        platform.host_by_name(s).unwrap(),
                        platform.host_by_name(d).unwrap(),
                    )
                    .unwrap();
                let names: Vec<String> = r
                    .links
                    .iter()
                    .map(|l| platform.link(*l).name.clone())
                    .collect();
                (names, r.latency_secs)
            };
            assert_eq!(
                route("Tremblay", "Jupiter"),
                (vec!["9".to_string()], 0.0014615170000000001)
            );
            assert_eq!(
                route("Bourassa", "Fafard"),
                (
                    vec!["7".to_string(), "6".to_string(), "8".to_string()],
                    0.00052042799999999997
                )
            );
            assert_eq!(
                route("Fafard", "Fafard"),
                (vec!["loopback".to_string()], 1.4999999999999999e-05)
            );
            assert_eq!(platform.hosts().len(), 7);
        }
    }
    assert!(parsed >= 40, "only {parsed} example platforms parsed");
}
