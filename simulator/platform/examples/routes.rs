//! Prints the hosts, links and every host-to-host route of a platform file, in the format of
//! the SimGrid-based oracle of `tools/route_oracle.cpp`, for differential testing:
//!
//! ```text
//! cargo run -p timeless-platform --example routes -- platform.xml [src dst]
//! ```
use std::path::Path;
use timeless_platform::{Platform, PlatformOptions, SharingPolicy};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: routes <platform.xml> [src dst]");
        std::process::exit(2);
    };
    let platform = match Platform::from_file(Path::new(path), &PlatformOptions::default()) {
        Ok(p) => p,
        Err(e) => {
            println!("LOADERROR {e}");
            return;
        }
    };
    for notice in platform.notices() {
        eprintln!("notice: {notice}");
    }
    let mut hosts: Vec<_> = (0..platform.hosts().len() as u32)
        .map(timeless_platform::HostId)
        .collect();
    hosts.sort_by(|a, b| platform.host(*a).name.cmp(&platform.host(*b).name));
    for &h in &hosts {
        let host = platform.host(h);
        let mut props = host.props.clone();
        props.sort();
        print!(
            "HOST {} speed={:?} cores={}",
            host.name, host.speed_flops_per_sec, host.cores
        );
        for (k, v) in props {
            print!(" {k}={v}");
        }
        println!();
    }
    let mut links: Vec<_> = platform.links().iter().collect();
    links.sort_by(|a, b| a.name.cmp(&b.name));
    for l in links {
        let policy = match l.policy {
            SharingPolicy::FatPipe => 0,
            SharingPolicy::Shared => 1,
        };
        println!(
            "LINK {} bw={:?} lat={:?} policy={policy}",
            l.name, l.bandwidth_bytes_per_sec, l.latency_secs
        );
    }
    for &s in &hosts {
        for &d in &hosts {
            let (sn, dn) = (&platform.host(s).name, &platform.host(d).name);
            if args.len() > 3 && (&args[2] != sn || &args[3] != dn) {
                continue;
            }
            match platform.route_or_empty(s, d) {
                Ok(r) => {
                    let names: Vec<&str> = r
                        .links
                        .iter()
                        .map(|l| platform.link(*l).name.as_str())
                        .collect();
                    let sep = if names.is_empty() { "" } else { " " };
                    println!(
                        "ROUTE {sn} -> {dn} | {:?} |{sep}{}",
                        r.latency_secs,
                        names.join(",")
                    );
                }
                Err(e) => println!("ROUTE {sn} -> {dn} | ERROR {e}"),
            }
        }
    }
}
