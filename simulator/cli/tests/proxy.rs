//! `timeless proxy` without MPI: what the generated source holds (the MPI runs are in
//! `proxy_mpi.rs`).

use std::path::Path;
use std::process::Command;

/// Writes a 2-rank trace with a `trace-meta.json` charging 1 ms per traced call at 1 Gflop/s.
/// Rank 0: `init`, 5e6 flops, `send`, 3e6 flops, `finalize`; rank 1: `init`, `recv`, 2e6
/// flops, `finalize`.
fn trace(dir: &Path) {
    std::fs::write(
        dir.join("rank-0.txt"),
        "0 init\n0 compute 5e6\n0 send 1 0 8\n0 compute 3e6\n0 finalize\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("rank-1.txt"),
        "1 init\n1 recv 0 0 8\n1 compute 2e6\n1 finalize\n",
    )
    .unwrap();
    std::fs::write(dir.join("trace-list.txt"), "rank-0.txt\nrank-1.txt\n").unwrap();
    std::fs::write(
        dir.join("trace-meta.json"),
        r#"{"ranks": 2,
  "hosts": [{"name": "a", "ranks": [0, 1], "cpus": 2, "reference_speed_flops_per_sec": 1e9}],
  "tracer_overhead": {"per_event_secs_median": 1e-3, "per_rank_per_event_secs": [1e-3, 1e-3]}}"#,
    )
    .unwrap();
}

fn proxy(dir: &Path, out: &str, extra: &[&str]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args(["proxy", "trace-list.txt", "-o", out])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        std::fs::read_to_string(dir.join(out).join("proxy.c")).unwrap(),
    )
}

/// The tracer's cost is removed from the bursts as `timeless simulate` removes it (one event
/// before each burst here, 1 ms = 1e6 flops each, rank 1's burst follows two events and goes
/// to 0): rank 0 computes 4 ms before its send and 2 ms before finalize, rank 1 nothing (2 ms
/// removed from each rank);
/// `--no-compensation` keeps 5, 3 and 2 ms. The totals per rank size the kernel's
/// calibration (`proxy_compute_secs`).
#[test]
fn proxies_compute_what_the_program_computed_without_the_tracer() {
    let tmp = tempfile::tempdir().unwrap();
    trace(tmp.path());
    let (out, c) = proxy(tmp.path(), "comp", &[]);
    assert!(
        out.contains("tracer overhead compensated: 0.002000 s removed per rank"),
        "{out}"
    );
    for want in ["compute(4e-3)", "compute(2e-3)", "return 6e-3;"] {
        assert!(c.contains(want), "{want} missing:\n{c}");
    }
    for absent in ["compute(5e-3)", "compute(3e-3)"] {
        assert!(!c.contains(absent), "{absent} present:\n{c}");
    }
    let (out, c) = proxy(tmp.path(), "raw", &["--no-compensation"]);
    assert!(!out.contains("compensated"), "{out}");
    for want in [
        "compute(5e-3)",
        "compute(3e-3)",
        "compute(2e-3)",
        "return 8e-3;",
        "return 2e-3;",
    ] {
        assert!(c.contains(want), "{want} missing:\n{c}");
    }
}

/// Output into a closed pipe (`timeless proxy ... | true`, as a shell runs it) ends the
/// process quietly: no panic message (Rust's `println!` panics on EPIPE unless SIGPIPE has its
/// default action).
#[test]
fn a_closed_stdout_is_no_panic() {
    let tmp = tempfile::tempdir().unwrap();
    trace(tmp.path());
    let exe = env!("CARGO_BIN_EXE_timeless");
    let out = Command::new("sh")
        .current_dir(tmp.path())
        .arg("-c")
        .arg(format!("'{exe}' proxy trace-list.txt -o out | true"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}
