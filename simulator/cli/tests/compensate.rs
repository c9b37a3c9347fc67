//! Whole runs of `timeless compensate` on a hand-made timed trace. Expected numbers are derived
//! by hand in the comments (the m.2 case of `tracer/compensate/tests/cases.rs`, extended by a
//! barrier).

use std::path::Path;
use std::process::Command;

fn timeless(dir: &Path, args: &[&str]) -> (String, String, i32) {
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

// O = 0.25 s (both ranks), C = 1 ms/byte, 100 bytes: copy = 0.1 s.
// Rank 0: region [0,1] -> [0, 0.75]; send [1,1.25] -> [0.75, 0.75] (gaps 0 and 0.25 - O = 0).
// Rank 1: region [0,1.5] -> [0, 1.25]; recv [1.5,3]: enter 1.25; m.2 (1.5 > 1.25);
//   Comm_min = (1.25 - 0.75) + 0.1 = 0.6; lower max(0.2, 0.6) -> 1.35; upper: the send event
//   is enter.send_m + O = 1.25, max(3 - 1.25, 0.6) = 1.75 -> 0.75 + 1.75 = 2.5.
// Barrier: rank 0 enters 0.75 + max(0, 0 - 0.25) = 0.75 (measured 1.25), rank 1 enters at its
//   recv exit (1.35 / 2.5, measured 3). The operations start at enter_m + O = 1.5 and 3.25:
//   j = rank 1 (3.25), k = rank 1: exits = k + (3.5 - 3.25): lower 1.6, upper 2.75.
//   Totals: measured 3.5, lower 1.6, upper 2.75.
// Wait at N x N of rank 0: measured 3 - 1.25 = 1.75; lower 1.35 - 0.75 = 0.6;
//   upper 2.5 - 0.75 = 1.75.
const TRACE: &str = "# m.2 then a barrier
0 region 0 1 work
0 send 1 1.25 1 0 100
1 region 0 1.5 work
1 recv 1.5 3 0 0 100
0 barrier 1.25 3.5 0
1 barrier 3 3.5 0
";

#[test]
fn csv_summary_and_timeline_carry_the_hand_derived_times() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.txt"), TRACE).unwrap();
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "compensate",
            "t.txt",
            "-o",
            "tl.csv",
            "--overhead-ns",
            "250000000",
            "--copy-ns-per-byte",
            "1000000",
            "--format",
            "csv",
            "--timeline",
            "tl.json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1],
        "0,3,3.500000000,1.600000000,2.750000000,0.000000000,0.000000000,0.000000000,1.750000000,0.600000000,1.750000000"
    );
    assert_eq!(
        lines[3],
        "total,6,3.500000000,1.600000000,2.750000000,0.000000000,0.000000000,0.000000000,1.750000000,0.600000000,1.750000000"
    );
    let tl = std::fs::read_to_string(dir.path().join("tl.csv")).unwrap();
    assert!(
        tl.contains(
            "1,1,5,recv,,1.500000000,3.000000000,1.250000000,1.350000000,1.250000000,2.500000000\n"
        ),
        "{tl}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("tl.json")).unwrap())
            .unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    // 3 process names + 6 records x 3 timelines.
    assert_eq!(events.len(), 3 + 18);
    let recv_upper = events
        .iter()
        .find(|e| e["name"] == "recv" && e["pid"] == 2)
        .unwrap();
    assert_eq!(recv_upper["tid"], 1);
    assert!((recv_upper["ts"].as_f64().unwrap() - 1.25e6).abs() < 1e-6);
    assert!((recv_upper["dur"].as_f64().unwrap() - 1.25e6).abs() < 1e-6);
}

#[test]
fn text_summary_uses_trace_metadata_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.txt"), TRACE).unwrap();
    std::fs::write(
        dir.path().join("trace-meta.json"),
        r#"{"ranks": 2, "copy_secs_per_byte": 1e-3,
            "hosts": [{"name": "h", "ranks": [0, 1], "reference_speed_flops_per_sec": 1e9}],
            "tracer_overhead": {"per_rank_per_event_secs": [0.25, 0.25]}}"#,
    )
    .unwrap();
    let (out, err, code) = timeless(dir.path(), &["compensate", "t.txt", "-o", "tl.txt"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("[250000000.0, 250000000.0] ns per rank"),
        "{out}"
    );
    assert!(
        out.contains("Measured total time:              3.500000000 s"),
        "{out}"
    );
    assert!(
        out.contains("Approximated total time (lower):  1.600000000 s"),
        "{out}"
    );
    assert!(
        out.contains("Approximated total time (upper):  2.750000000 s"),
        "{out}"
    );
    let tl = std::fs::read_to_string(dir.path().join("tl.txt")).unwrap();
    assert_eq!(tl.lines().count(), 2 + 6, "{tl}");
}

#[test]
fn without_overhead_nothing_is_compensated_and_bad_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.txt"), TRACE).unwrap();
    let (out, err, code) = timeless(dir.path(), &["compensate", "t.txt", "-o", "tl.txt"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing to compensate"), "{out}");
    std::fs::write(
        dir.path().join("bad.txt"),
        "0 region 0 1 a\n1 recv 0 1 0 3 8\n",
    )
    .unwrap();
    let (_, err, code) = timeless(dir.path(), &["compensate", "bad.txt", "-o", "x.txt"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("rank 1 waits at bad.txt:2 for a message from rank 0 with tag 3"),
        "{err}"
    );
    std::fs::write(dir.path().join("bad.txt"), "0 region 0 1\n").unwrap();
    let (_, err, code) = timeless(dir.path(), &["compensate", "bad.txt", "-o", "x.txt"]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.txt:1: region needs a name"), "{err}");
}

fn platform() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../platforms/mycluster.xml")
        .display()
        .to_string()
}

/// A two-rank TI trace with its `trace-meta.json`: reference speed 1e9 flop/s, O = 100 µs on
/// rank 0 and 200 µs on rank 1, i.e. 1e5 and 2e5 flops per event.
fn ti_trace(dir: &Path) {
    std::fs::write(
        dir.join("rank-0.txt"),
        "0 init\n0 compute 1170000\n0 comm_size\n0 comm_size\n0 compute 2340000\n0 finalize\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("rank-1.txt"),
        "1 init\n1 compute 585000\n1 finalize\n",
    )
    .unwrap();
    std::fs::write(dir.join("trace-list.txt"), "rank-0.txt\nrank-1.txt\n").unwrap();
    std::fs::write(
        dir.join("trace-meta.json"),
        r#"{"ranks": 2,
 "hosts": [{"name": "h", "ranks": [0, 1], "cpus": 2, "reference_speed_flops_per_sec": 1e9}],
 "tracer_overhead": {"per_event_secs_median": 1.5e-4, "per_rank_per_event_secs": [1e-4, 2e-4]}}"#,
    )
    .unwrap();
}

#[test]
fn simulate_removes_the_overhead_charged_to_each_burst() {
    // Rank 0: burst 1 spans 1 event (init): 1170000 - 1e5 = 1070000 flops; burst 2 spans 2
    //   (comm_size x 2): 2340000 - 2e5 = 2140000. Removed 3e5 flops = 300 µs at 1e9 flop/s.
    // Rank 1: burst spans init: 585000 - 2e5 = 385000. Removed 2e5 flops = 200 µs.
    // On mycluster's 1.17 Gflop/s hosts (one rank per host), init, comm_size and finalize take
    // no time: rank 0 finishes at 3210000 / 1.17e9 = 2.743589743590 ms (3 ms uncompensated),
    // rank 1 at 385000 / 1.17e9 = 0.329059829060 ms (0.5 ms).
    let dir = tempfile::tempdir().unwrap();
    ti_trace(dir.path());
    let p = platform();
    let (out, err, code) = timeless(
        dir.path(),
        &["simulate", "trace-list.txt", "-p", &p, "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12;
    assert!(close(&v["simulated_time"], 3_210_000.0 / 1.17e9), "{out}");
    assert!(
        close(&v["ranks"][1]["finish_time"], 385_000.0 / 1.17e9),
        "{out}"
    );
    let c = &v["compensation"];
    assert_eq!(c["applied"], true);
    assert!(close(&c["ranks"][0]["removed_flops"], 300_000.0), "{out}");
    assert!(close(&c["ranks"][1]["removed_flops"], 200_000.0), "{out}");
    assert!(close(&c["ranks"][0]["removed_secs"], 3e-4), "{out}");
    assert_eq!(c["ranks"][0]["events"], 4);
    assert_eq!(c["ranks"][0]["bursts"], 2);
    assert!(close(&c["removed_flops"], 500_000.0), "{out}");

    let (out, err, code) = timeless(
        dir.path(),
        &["simulate", "trace-list.txt", "-p", &p, "--no-compensation"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Simulated time: 0.003000000000 s\n"),
        "{out}"
    );
    assert!(
        out.contains("Overhead compensation: off (--no-compensation)"),
        "{out}"
    );

    let (out, _, _) = timeless(dir.path(), &["simulate", "trace-list.txt", "-p", &p]);
    assert!(
        out.starts_with("Simulated time: 0.002743589744 s\n"),
        "{out}"
    );
    assert!(
        out.contains("total  removed 500000.0 flops, 0.000500000 s of rank time"),
        "{out}"
    );
}

#[test]
fn simulate_without_metadata_says_nothing_is_compensated() {
    let dir = tempfile::tempdir().unwrap();
    ti_trace(dir.path());
    std::fs::remove_file(dir.path().join("trace-meta.json")).unwrap();
    let p = platform();
    let (out, err, code) = timeless(dir.path(), &["simulate", "trace-list.txt", "-p", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Simulated time: 0.003000000000 s\n"),
        "{out}"
    );
    assert!(
        out.contains("nothing to compensate (no trace-meta.json in"),
        "{out}"
    );
    let (out, _, _) = timeless(
        dir.path(),
        &["simulate", "trace-list.txt", "-p", &p, "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["compensation"]["applied"], false);
    std::fs::write(dir.path().join("trace-meta.json"), "{\"ranks\": 2}").unwrap();
    let (_, err, code) = timeless(dir.path(), &["simulate", "trace-list.txt", "-p", &p]);
    assert_eq!(code, 2);
    assert!(err.contains("trace-meta.json: bad trace metadata"), "{err}");
}
