//! Whole runs of the `timeless` binary on the bundled example (golden: SimGrid 3.32's time for
//! the seed's Figure 1 ring on its Figure 5 cluster, 0.039765971631 s; hand derivation in
//! README.md and validation/corpus/01-fig1-ring/case.toml) and its output formats.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn timeless(args: &[&str]) -> (String, String, i32) {
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("run");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

fn json_time(args: &[&str]) -> f64 {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (out, err, code) = timeless(&a);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    v["simulated_time"].as_f64().expect("simulated_time")
}

const FIG1_SIMGRID: f64 = 0.039765971631;

#[test]
fn no_arguments_runs_the_bundled_example() {
    let (out, err, code) = timeless(&["simulate"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Simulated time: 0.039765971631 s\n"),
        "{out}"
    );
    assert!(out.contains("mycluster-3.mysite.fr"), "{out}");
    assert!(err.contains("bundled example"), "{err}");
}

#[test]
fn seed_figure_5_in_v3_form_with_seed_format_trace_gives_the_same_time() {
    let t = json_time(&[
        "simulate",
        "traces/ring4/ring-seed.txt",
        "--platform",
        "platforms/mycluster-v3.xml",
        "--deployment",
        "deployments/mycluster-ring4-v3.xml",
    ]);
    assert!((t - FIG1_SIMGRID).abs() < 1e-12, "{t}");
    let t = json_time(&[
        "simulate",
        "traces/ring4/ring.txt",
        "--platform",
        "platforms/mycluster-v3.xml",
        "-n",
        "4",
    ]);
    assert!((t - FIG1_SIMGRID).abs() < 1e-12, "{t}");
}

#[test]
fn full_and_incremental_solves_agree() {
    let dir = root().join("validation/corpus/60-cluster16-mixed");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "simulate",
            "traces.txt",
            "--platform",
            "platform.xml",
            "--hostfile",
            "hostfile",
            "--format",
            "json",
        ];
        a.extend(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .current_dir(&dir)
            .args(&a)
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).expect("utf8")
    };
    // Same inputs, same bytes.
    assert_eq!(run(&[]), run(&[]));
    // The slow full re-solve gives the same dates (up to rounding of the lazy updates).
    let a: serde_json::Value = serde_json::from_str(&run(&[])).unwrap();
    let b: serde_json::Value = serde_json::from_str(&run(&["--full-solve"])).unwrap();
    let close = |x: &serde_json::Value, y: &serde_json::Value| {
        (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-12
    };
    assert!(close(&a["simulated_time"], &b["simulated_time"]));
    for r in 0..16 {
        assert!(
            close(&a["ranks"][r]["finish_time"], &b["ranks"][r]["finish_time"]),
            "rank {r}"
        );
    }
}

#[test]
fn timelines_list_every_action() {
    let tmp = tempfile::tempdir().expect("tmp");
    let json = tmp.path().join("t.json");
    let csv = tmp.path().join("t.csv");
    for f in [&json, &csv] {
        let (_, err, code) = timeless(&[
            "simulate",
            "--timeline",
            f.to_str().unwrap(),
            "traces/ring4/ring.txt",
            "-p",
            "platforms/mycluster.xml",
            "-n",
            "4",
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    assert_eq!(events.len(), 20, "5 actions per rank × 4 ranks");
    // Rank 1's send starts after rank 0's compute (854.70 µs), rank 0's transfer (9086.79 µs)
    // and its own compute (854.70 µs): 10796.19 µs.
    let send1 = events
        .iter()
        .find(|e| e["tid"] == 1 && e["name"] == "send")
        .expect("rank 1 send");
    let start_us = send1["ts"].as_f64().unwrap();
    assert!((start_us - 10_796.19).abs() < 0.01, "{start_us}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("rank,action,line,start_s,end_s"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 20);
    let last_end: f64 = rows
        .iter()
        .map(|r| r.rsplit(',').next().unwrap().parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert!((last_end - FIG1_SIMGRID).abs() < 1e-11, "{last_end}");
}

#[test]
fn bad_timeline_extension_is_an_input_error() {
    let (_, err, code) = timeless(&[
        "simulate",
        "--timeline",
        "/tmp/x.txt",
        "traces/ring4/ring.txt",
        "-p",
        "platforms/mycluster.xml",
        "-n",
        "4",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("expected a .json or .csv"), "{err}");
}
