//! `timeless flowgraph`: graph -> reconstruction -> replay gives the original's simulated time
//! bit for bit; damaged graph files exit 2 with the byte offset.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> (String, String, i32) {
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

fn simulated(trace: &[&str]) -> f64 {
    let mut args = vec!["simulate"];
    args.extend_from_slice(trace);
    args.extend_from_slice(&[
        "-p",
        "platforms/mycluster.xml",
        "--no-compensation",
        "--format",
        "json",
    ]);
    let (out, err, code) = run(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["simulated_time"].as_f64().unwrap()
}

#[test]
fn reconstruction_replays_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    for (name, trace) in [
        ("ring", vec!["traces/ring4/ring.txt", "-n", "4"]),
        ("commsplit", vec!["traces/commsplit4/trace-list.txt"]),
    ] {
        let g = dir.path().join(format!("{name}.tfg"));
        let mut args = vec!["flowgraph"];
        args.extend_from_slice(&trace);
        args.extend_from_slice(&["-o", g.to_str().unwrap()]);
        let (_, err, code) = run(&args);
        assert_eq!(code, 0, "{err}");
        let re = dir.path().join(name);
        let (_, err, code) = run(&[
            "flowgraph",
            "--reconstruct",
            g.to_str().unwrap(),
            "-o",
            re.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let rebuilt = re.join("trace-list.txt");
        let a = simulated(&trace);
        let b = simulated(&[rebuilt.to_str().unwrap()]);
        assert_eq!(a.to_bits(), b.to_bits(), "{name}: {a} vs {b}");
    }
    // The ring's SimGrid 3.32 time (README), through its graph.
    let r = dir.path().join("ring/trace-list.txt");
    assert_eq!(
        format!("{:.12}", simulated(&[r.to_str().unwrap()])),
        "0.223726707037"
    );
}

#[test]
fn damaged_graph_exits_2_with_offset() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.tfg");
    let (_, err, code) = run(&[
        "flowgraph",
        "traces/commsplit4/trace-list.txt",
        "-o",
        g.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&g).unwrap();
    std::fs::write(&g, &bytes[..bytes.len() / 2]).unwrap();
    let (_, err, code) = run(&[
        "flowgraph",
        "--reconstruct",
        g.to_str().unwrap(),
        "-o",
        dir.path().join("re").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("g.tfg: byte "), "{err}");
}

/// Issue 18, found by fuzzing: an 81-byte graph file asking for ~133 million exit runs is one
/// clear error with exit code 2, at once (it took seconds and gigabytes).
#[test]
fn graph_file_expanding_past_the_limit_exits_2_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rebuilt");
    let start = std::time::Instant::now();
    let (_, err, code) = run(&[
        "flowgraph",
        "--reconstruct",
        "validation/fuzz/regressions/flowgraph/huge-repeat.tfg",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one message: {err}");
    assert!(
        err.contains("huge-repeat.tfg: byte ")
            && err.contains("exit runs for one node: more than 33554432 in the file"),
        "{err}"
    );
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
}
