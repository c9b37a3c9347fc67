//! What the calibration round-trip tests share: the writer's hosts and links, the hand-chosen
//! true configuration and the "measurements" our simulator makes of it.
#![allow(dead_code)]

use timeless_calibrate::measurement::{Measurements, Op};
use timeless_calibrate::platform_xml::HostSpec;
use timeless_calibrate::simgrid::{
    LinkSpec, DEFAULT_TCP_GAMMA_BYTES, FATPIPE_LINK_WEIGHT, SHARED_LINK_WEIGHT,
};
use timeless_platform::{Platform, PlatformOptions};

pub fn hosts(names: &[&str]) -> Vec<HostSpec> {
    names
        .iter()
        .map(|n| HostSpec {
            name: n.to_string(),
            speed_flops_per_sec: 1e9,
            cores: 1,
        })
        .collect()
}

/// Reference §11's P1: hosts h0, h1, one SHARED link of 50 µs and 125 MB/s.
pub fn p1_link() -> LinkSpec {
    LinkSpec {
        latency_secs: 50e-6,
        bandwidth_bytes_per_sec: 125e6,
        crosstraffic_weight: SHARED_LINK_WEIGHT,
        tcp_gamma_bytes: DEFAULT_TCP_GAMMA_BYTES,
        flow_aggregate_ratio: None,
    }
}

/// P1's latency and bandwidth as a FATPIPE link plus a SHARED link of 1.05 × 1.4 × 125 MB/s:
/// two concurrent flows get 1.4 × 125e6 / 2 = 87.5e6 B/s each, a lone flow 125e6.
pub const TRUE_PAIR_RATIO: f64 = 1.4;
pub fn p1_pair_link() -> LinkSpec {
    LinkSpec {
        crosstraffic_weight: FATPIPE_LINK_WEIGHT,
        flow_aggregate_ratio: Some(TRUE_PAIR_RATIO),
        ..p1_link()
    }
}

pub fn load(xml: &str) -> Platform {
    Platform::from_xml(xml, "written.xml", &PlatformOptions::default()).expect("platform loads")
}

pub fn ids(p: &Platform, a: &str, b: &str) -> [timeless_platform::HostId; 2] {
    [p.host_by_name(a).unwrap(), p.host_by_name(b).unwrap()]
}

pub fn kv(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub const TRUE_LAT: [f64; 3] = [1.5, 2.5, 4.0];
pub const TRUE_BW: [f64; 3] = [0.4, 0.7, 0.96];

/// Hand-chosen truth. Segments on P = S + 16: P <= 1500 (S <= 1484), 1500 < P <= 65551
/// (S < 65536), P > 65551 (S >= 65536, the rendezvous sizes above SimGrid's default detached
/// threshold). os(S) = 1e-6 + 1e-10·S and or(S) = 5e-7 + 5e-11·S below the threshold,
/// ois(S) = 2e-7 + 1e-11·S at every size.
pub fn true_cfg() -> Vec<(String, String)> {
    kv(&[
        ("smpi/lat-factor", "65551:4;1500:2.5;0:1.5"),
        ("smpi/bw-factor", "65551:0.96;1500:0.7;0:0.4"),
        ("smpi/os", "0:1e-6:1e-10"),
        ("smpi/or", "0:5e-7:5e-11"),
        ("smpi/ois", "0:2e-7:1e-11"),
    ])
}

pub fn sizes() -> Vec<u64> {
    (0..=24).map(|k| 1u64 << k).collect() // 1 B .. 16 MiB
}

/// "Measurements" of the simulated machine: ping-pong times from our simulator, and the
/// per-call costs as the benchmark would see them (os, or by the formulas above; a send of a
/// rendezvous size waits for the receiver, which is 1 ms late).
pub fn measurements(rtt: &[(u64, f64)]) -> Measurements {
    let mut m = Measurements::default();
    m.push(Op::Late, 0, 1e-3);
    for &(s, t) in rtt {
        m.push(Op::PingPong, s, t);
        let x = s as f64;
        if s < 65536 {
            m.push(Op::Send, s, 1e-6 + 1e-10 * x);
            m.push(Op::Recv, s, 5e-7 + 5e-11 * x);
        } else {
            m.push(Op::Send, s, 1e-3 + 1e-9 * x);
        }
        m.push(Op::Isend, s, 2e-7 + 1e-11 * x);
    }
    m
}

pub fn within(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}
