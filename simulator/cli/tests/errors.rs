//! Bad input gives one clear message naming file:line and what was expected, and exit code 2;
//! a deadlocked replay names every blocked rank (exit code 3). Never a panic.

use std::path::Path;
use std::process::{Command, Output};

/// The reference's platform P1: two 1 Gflop/s hosts, one 125 MB/s, 50 us link.
const P1: &str = include_str!("data/p1.xml");

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write test file");
}

/// Runs `timeless simulate traces.txt --platform platform.xml --hostfile hostfile` in `dir`.
fn simulate(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args([
            "simulate",
            "traces.txt",
            "--platform",
            "platform.xml",
            "--hostfile",
            "hostfile",
        ])
        .args(extra)
        .output()
        .expect("run timeless")
}

/// A two-rank setup on P1 with the given per-rank traces.
fn setup(rank0: &str, rank1: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "platform.xml", P1);
    write(dir.path(), "hostfile", "h0\nh1\n");
    write(dir.path(), "traces.txt", "rank0.txt\nrank1.txt\n");
    write(dir.path(), "rank0.txt", rank0);
    write(dir.path(), "rank1.txt", rank1);
    dir
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_input_error(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {e}");
    assert!(!e.contains("panicked"), "panic: {e}");
    for n in needles {
        assert!(e.contains(n), "stderr lacks '{n}': {e}");
    }
}

#[test]
fn ping_pong_runs() {
    // Reference §11, P1, S = 1000: 2 × 122.470335 µs = 0.000244940669 s.
    let d = setup(
        "0 init\n0 send 1 0 1000\n0 recv 1 0 1000\n",
        "1 init\n1 recv 0 0 1000\n1 send 0 0 1000\n",
    );
    let o = simulate(d.path(), &["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = v["simulated_time"].as_f64().unwrap();
    assert!((t - 0.000244940669).abs() < 1e-12, "{t}");
    assert_eq!(v["ranks"][1]["host"], "h1");
}

#[test]
fn malformed_line_names_file_and_line() {
    let d = setup(
        "0 init\n0 compute 1e6\n0 send 1 0 lots\n",
        "1 init\n1 recv 0 0 10\n",
    );
    assert_input_error(
        &simulate(d.path(), &[]),
        &[
            "rank0.txt:3",
            "<count> must be a finite number, found 'lots'",
        ],
    );
}

#[test]
fn unknown_action_names_file_and_line() {
    let d = setup("0 init\n0 ssend 1 0 10\n", "1 init\n");
    assert_input_error(
        &simulate(d.path(), &[]),
        &["rank0.txt:2", "unknown action 'ssend'"],
    );
}

#[test]
fn unknown_datatype_names_file_and_line() {
    let d = setup("0 init\n", "1 init\n\n1 recv 0 0 10 77\n");
    assert_input_error(
        &simulate(d.path(), &[]),
        &["rank1.txt:3", "unknown datatype id '77'"],
    );
}

#[test]
fn rank_without_trace_is_named() {
    let d = setup("0 init\n", "1 init\n");
    write(d.path(), "traces.txt", "rank0.txt\nrank1.txt\n");
    let o = simulate(d.path(), &["-n", "3"]);
    assert_input_error(
        &o,
        &["3 ranks are deployed but the trace list names only 2 files"],
    );
}

#[test]
fn unknown_host_in_hostfile_is_named() {
    let d = setup("0 init\n", "1 init\n");
    write(d.path(), "hostfile", "h0\nnowhere\n");
    assert_input_error(&simulate(d.path(), &[]), &["hostfile:2", "nowhere"]);
}

#[test]
fn missing_route_names_hosts_and_line() {
    let d = setup("0 init\n0 send 1 0 10\n", "1 init\n1 recv 0 0 10\n");
    // Only h0 -> h1 is declared, and asymmetrically: the reply h1 -> h0 has no route.
    write(
        d.path(),
        "platform.xml",
        &P1.replace(
            r#"<route src="h0" dst="h1">"#,
            r#"<route src="h0" dst="h1" symmetrical="NO">"#,
        ),
    );
    write(d.path(), "rank0.txt", "0 init\n0 recv 1 0 10\n");
    write(d.path(), "rank1.txt", "1 init\n1 send 0 0 10\n");
    assert_input_error(
        &simulate(d.path(), &[]),
        &["rank1.txt:2", "no route from host 'h1' to host 'h0'"],
    );
}

#[test]
fn bad_unit_names_platform_line() {
    let d = setup("0 init\n", "1 init\n");
    write(d.path(), "platform.xml", &P1.replace("125MBps", "125KBps"));
    assert_input_error(&simulate(d.path(), &[]), &["platform.xml:6", "KBps"]);
}

#[test]
fn truncated_receive_is_an_error() {
    let d = setup("0 init\n0 send 1 0 1000\n", "1 init\n1 recv 0 0 10\n");
    assert_input_error(
        &simulate(d.path(), &[]),
        &[
            "message truncated",
            "receive of 10 bytes",
            "send of 1000 bytes",
        ],
    );
}

#[test]
fn bad_cfg_is_an_error() {
    let d = setup("0 init\n", "1 init\n");
    assert_input_error(
        &simulate(d.path(), &["--cfg", "smpi/bw-factor:1"]),
        &["smpi/bw-factor", "needs 1 value"],
    );
    assert_input_error(
        &simulate(d.path(), &["--cfg", "smpi/bcast:nonsense"]),
        &["smpi/bcast"],
    );
}

#[test]
fn deadlock_names_every_blocked_rank() {
    // Both ranks receive first: nobody sends.
    let d = setup(
        "0 init\n0 recv 1 5 100\n0 send 1 5 100\n",
        "1 init\n1 recv 0 5 100\n1 send 0 5 100\n",
    );
    let o = simulate(d.path(), &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(e.contains("deadlock"), "{e}");
    assert!(
        e.contains("rank 0 blocked in 'recv' at") && e.contains("rank0.txt:2"),
        "{e}"
    );
    assert!(
        e.contains("rank 1 blocked in 'recv' at") && e.contains("rank1.txt:2"),
        "{e}"
    );
    assert!(e.contains("recv from rank 1 (tag 5, 100 bytes)"), "{e}");
}

/// Issue 18, found by fuzzing (`validation/fuzz/regressions/trace_text/`): a negative-count
/// `recv` (probe, then receive) whose sender never sends used to probe forever, the replay
/// never ending; now it is a deadlock naming the probe, also when the other rank probes too.
#[test]
fn probe_that_nothing_can_satisfy_is_a_deadlock_not_a_hang() {
    let d = setup("0 init\n0 compute 1e6\n", "1 init\n1 recv 0 0 -1\n");
    let o = simulate(d.path(), &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(
        e.contains("rank 1 blocked in 'recv' at") && e.contains("rank1.txt:2"),
        "{e}"
    );
    assert!(
        e.contains("waits for a message from rank 0 (tag 0) to probe"),
        "{e}"
    );
    assert!(!e.contains("rank 0 blocked"), "rank 0 finished: {e}");

    let d = setup("0 init\n0 recv 1 3 -1\n", "1 init\n1 recv 0 4 -1\n");
    let o = simulate(d.path(), &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(
        e.contains("waits for a message from rank 1 (tag 3) to probe"),
        "{e}"
    );
    assert!(
        e.contains("waits for a message from rank 0 (tag 4) to probe"),
        "{e}"
    );

    // A probe whose message comes after a long compute still completes.
    let d = setup(
        "0 init\n0 compute 1e9\n0 send 1 0 10\n",
        "1 init\n1 recv 0 0 -1\n",
    );
    let o = simulate(d.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn unmatched_send_is_reported() {
    // Rank 0's rendezvous send is never received.
    let d = setup("0 init\n0 send 1 0 100000\n", "1 init\n");
    let o = simulate(d.path(), &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(
        e.contains("rank 0 blocked in 'send'") && e.contains("rank0.txt:2"),
        "{e}"
    );
    assert!(
        e.contains("send to rank 1 (tag 0, 100000 bytes) to be received"),
        "{e}"
    );
}

#[test]
fn collective_not_entered_by_all_deadlocks_with_report() {
    let d = setup("0 init\n0 barrier\n", "1 init\n");
    let o = simulate(d.path(), &[]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{e}");
    assert!(
        e.contains("rank 0 blocked in 'barrier'") && e.contains("collective tag"),
        "{e}"
    );
}

/// The reverse route only carries cross-traffic and may be missing, as in SimGrid 3.32: with
/// `symmetrical="NO"`, a 1000-byte send h0 → h1 runs with weight 1 on the link instead of 1.05:
/// 1.9503 × 50 µs + 1016 / (0.341987 × 125e6) = 0.000121281985 s (the reference's FATPIPE
/// value, which is the same w = 1 case).
#[test]
fn missing_reverse_route_only_drops_crosstraffic() {
    let d = setup("0 init\n0 send 1 0 1000\n", "1 init\n1 recv 0 0 1000\n");
    write(
        d.path(),
        "platform.xml",
        &P1.replace(
            r#"<route src="h0" dst="h1">"#,
            r#"<route src="h0" dst="h1" symmetrical="NO">"#,
        ),
    );
    let o = simulate(d.path(), &["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = v["simulated_time"].as_f64().unwrap();
    assert!((t - 0.000121281985).abs() < 1e-12, "{t}");
}
