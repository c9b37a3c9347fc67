//! What-if knobs of `timeless simulate` (issue 16), on a case derived by hand.
//!
//! Two 1 Gf hosts joined by one link of 1e8 B/s and 1 ms; SMPI's bandwidth and latency factors
//! set to 1 and cross-traffic off, so a message of S bytes takes 1 ms + (S + 16) / 1e8 s (SMPI
//! adds a 16-byte envelope, `timeless_replay::ENVELOPE_BYTES`). Rank 0 computes 2e9 flops,
//! sends 1e6 bytes to rank 1 and receives 1e6 bytes back; rank 1 computes 1e9 flops, receives,
//! sends back. Rank 1 waits for rank 0's message (rendezvous: 1e6 > 65536), so the run lasts
//! rank 0's compute plus two transfers:
//! * as is: 2 + 2 x (0.001 + 1,000,016 / 1e8) = 2.02200032 s;
//! * `--scale-compute 2`: 1 + 0.02200032 = 1.02200032 s;
//! * `--scale-latency 2 --scale-bandwidth 0.5`: 2 + 2 x (0.002 + 1,000,016 / 5e7) = 2.04400064 s;
//! * `--ideal-network`: 2 s, the longest per-rank compute time;
//! * `--ideal-compute`: 0.02200032 s, the communication alone.

use std::path::Path;
use std::process::Command;

const PLATFORM: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <link id="l" bandwidth="100MBps" latency="1ms"/>
    <route src="a" dst="b"><link_ctn id="l"/></route>
  </zone>
</platform>
"#;

fn simulate(dir: &Path, knobs: &[&str]) -> (f64, serde_json::Value) {
    let mut args = vec![
        "simulate",
        "list.txt",
        "-p",
        "p.xml",
        "--hostfile",
        "hosts",
        "--cfg",
        "smpi/bw-factor:0:1",
        "--cfg",
        "smpi/lat-factor:0:1",
        "--cfg",
        "network/crosstraffic:0",
        "--format",
        "json",
    ];
    args.extend_from_slice(knobs);
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["simulated_time"].as_f64().unwrap(), v)
}

#[test]
fn knobs_change_the_hand_derived_case_as_derived() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.xml"), PLATFORM).unwrap();
    std::fs::write(d.join("hosts"), "a\nb\n").unwrap();
    std::fs::write(
        d.join("r0.txt"),
        "0 init\n0 compute 2e9\n0 send 1 0 1000000\n0 recv 1 0 1000000\n0 finalize\n",
    )
    .unwrap();
    std::fs::write(
        d.join("r1.txt"),
        "1 init\n1 compute 1e9\n1 recv 0 0 1000000\n1 send 0 0 1000000\n1 finalize\n",
    )
    .unwrap();
    std::fs::write(d.join("list.txt"), "r0.txt\nr1.txt\n").unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.max(1e-9);
    for (knobs, expected) in [
        (vec![], 2.02200032),
        (vec!["--scale-compute", "2"], 1.02200032),
        (
            vec!["--scale-latency", "2", "--scale-bandwidth", "0.5"],
            2.04400064,
        ),
        (vec!["--ideal-network"], 2.0),
        (vec!["--ideal-compute"], 0.02200032),
    ] {
        let (t, v) = simulate(d, &knobs);
        assert!(close(t, expected), "{knobs:?}: {t} vs {expected}");
        // The report says what changed.
        assert_eq!(v.get("what_if").is_some(), !knobs.is_empty(), "{v}");
    }
    let (_, v) = simulate(d, &["--ideal-network"]);
    assert!(v["what_if"][0]
        .as_str()
        .unwrap()
        .starts_with("ideal network"));
    // A factor that is not positive is refused (exit 2).
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(d)
        .args([
            "simulate",
            "list.txt",
            "-p",
            "p.xml",
            "--hostfile",
            "hosts",
            "--scale-compute",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--scale-compute"));
}
