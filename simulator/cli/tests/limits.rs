//! Issue 18: sizes taken from input are checked (bad input, exit 2, never an abort), huge times
//! print readably, bytes that are not UTF-8 are located, each cause is said once, and the same
//! simulation gives the same bytes twice.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The reference's platform P1: two 1 Gflop/s hosts, one 125 MB/s, 50 us link.
const P1: &str = include_str!("data/p1.xml");

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).expect("write test file");
}

fn timeless(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run timeless")
}

/// P1, a two-host hostfile, `rank0.txt`/`rank1.txt` listed in `traces.txt`.
fn setup(rank0: &[u8], rank1: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "platform.xml", P1.as_bytes());
    write(dir.path(), "hostfile", b"h0\nh1\n");
    write(dir.path(), "traces.txt", b"rank0.txt\nrank1.txt\n");
    write(dir.path(), "rank0.txt", rank0);
    write(dir.path(), "rank1.txt", rank1);
    dir
}

fn simulate(dir: &Path, trace: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "simulate",
        trace,
        "--platform",
        "platform.xml",
        "--hostfile",
        "hostfile",
    ];
    args.extend_from_slice(extra);
    timeless(dir, &args)
}

/// Exit code 2 and exactly `message` on stderr.
fn assert_error(o: &Output, message: &str) {
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e, format!("timeless: error: {message}\n"));
}

#[test]
fn rank_count_beyond_limit_is_bad_input_not_an_abort() {
    // Was: "memory allocation of 32000000000 bytes failed", exit 134.
    let d = setup(b"0 compute 1\n", b"1 compute 1\n");
    let o = simulate(d.path(), "traces.txt", &["-n", "1000000000"]);
    assert_error(
        &o,
        "-n 1000000000: more ranks than the limit of 16777216 (1 << 24)",
    );
}

#[test]
fn hostfile_count_beyond_limit_is_bad_input_not_an_abort() {
    let d = setup(b"0 compute 1\n", b"1 compute 1\n");
    write(d.path(), "hostfile", b"h0:1000000000\n");
    let o = simulate(d.path(), "traces.txt", &[]);
    assert_error(
        &o,
        "hostfile:1: 'h0:1000000000': the hostfile would place 1000000000 ranks, more than the limit of 16777216 (1 << 24)",
    );
}

#[test]
fn huge_simulated_time_prints_in_scientific_notation() {
    // Was: a 300-digit number. 2 × 1e308 flops at 1 Gflop/s = 2e299 s.
    let d = setup(b"0 compute 1e308\n0 compute 1e308\n", b"1 compute 1\n");
    let o = simulate(d.path(), "traces.txt", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let first = out.lines().next().unwrap();
    assert_eq!(first, "Simulated time: 2.00000000000e299 s");
    // Rank 1's 1 flop takes 1 ns: not below 1e-9, fixed notation.
    let rank1 = out
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap();
    assert!(rank1.contains(" 0.000000001000 "), "{rank1}");
    // JSON keeps the number.
    let o = simulate(d.path(), "traces.txt", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["simulated_time"].as_f64(), Some(2e299));
}

#[test]
fn overflowed_simulated_time_named_in_text_refused_in_json() {
    // 2 × 1e308 flops at 1 flop/s overflows f64: was an endless loop in the engine.
    let d = setup(b"0 compute 1e308\n0 compute 1e308\n", b"1 compute 1\n");
    write(d.path(), "platform.xml", P1.replace("1Gf", "1f").as_bytes());
    let o = simulate(d.path(), "traces.txt", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        out.lines().next().unwrap(),
        "Simulated time: overflow (inf) (a compute or sleep amount too large to add up in f64 seconds)"
    );
    let rank0 = out
        .lines()
        .find(|l| l.trim_start().starts_with("0 "))
        .unwrap();
    assert!(rank0.contains(" overflow (inf) "), "{rank0}");
    let o = simulate(d.path(), "traces.txt", &["--format", "json"]);
    assert!(o.stdout.is_empty());
    assert_error(
        &o,
        "the simulated time overflowed (inf): a compute or sleep amount is too large to add up in f64 seconds; the JSON report cannot represent it (the text report names it)",
    );
}

#[test]
fn non_utf8_first_line_of_shared_trace_names_file_line_and_offset() {
    // Was: "one.txt: cannot read: stream did not contain valid UTF-8: stream did not contain
    // valid UTF-8" (no line, the cause twice).
    let d = setup(b"", b"");
    write(d.path(), "one.txt", b"\xff\xfe\x00\x01 compute 1\n");
    let o = simulate(d.path(), "one.txt", &["-n", "2"]);
    assert_error(
        &o,
        "one.txt:1: not UTF-8 text: byte 0xff at byte offset 0 of the file (a TI trace is text; is this a binary file?)",
    );
}

#[test]
fn non_utf8_line_of_list_file_names_file_line_and_offset() {
    let d = setup(b"0 compute 1\n", b"1 compute 1\n");
    write(d.path(), "traces.txt", b"rank0.txt\nrank1\xe9.txt\n");
    let o = simulate(d.path(), "traces.txt", &[]);
    assert_error(
        &o,
        "traces.txt:2: not UTF-8 text: byte 0xe9 at byte offset 15 of the file (a TI trace is text; is this a binary file?)",
    );
}

#[test]
fn non_utf8_rank_trace_line_names_file_line_and_offset_cause_once() {
    let d = setup(b"0 compute 1\n0 comp\xffute 1\n", b"1 compute 1\n");
    let o = simulate(d.path(), "traces.txt", &[]);
    assert_error(
        &o,
        "rank0.txt:2: not UTF-8 text: byte 0xff at byte offset 18 of the file (a TI trace is text; is this a binary file?)",
    );
}

#[test]
fn list_file_naming_a_directory_says_so_once() {
    // Was: "sub:1: cannot read: Is a directory (os error 21): Is a directory (os error 21)".
    let d = setup(b"0 compute 1\n", b"1 compute 1\n");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    write(d.path(), "traces.txt", b"sub\nrank1.txt\n");
    let o = simulate(d.path(), "traces.txt", &[]);
    assert_error(
        &o,
        "traces.txt:1: 'sub' is a directory, expected a trace file",
    );
}

#[test]
fn io_error_cause_said_once() {
    let d = setup(b"0 compute 1\n", b"1 compute 1\n");
    let o = simulate(d.path(), "missing.txt", &[]);
    assert_error(
        &o,
        "cannot read missing.txt: No such file or directory (os error 2)",
    );
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// Text, JSON, the Perfetto timeline and the profile of the bundled example.
fn bundled_run(out: &Path) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>) {
    let path = |p: &str| repo(p).to_str().expect("UTF-8 path").to_owned();
    let base: Vec<String> = vec![
        "simulate".into(),
        path("traces/ring4/ring.txt"),
        "--platform".into(),
        path("platforms/mycluster.xml"),
        "--deployment".into(),
        path("deployments/mycluster-ring4.xml"),
    ];
    let run = |extra: &[String]| {
        let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .args(base.iter().chain(extra))
            .output()
            .expect("run timeless");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let text = run(&[]);
    let json = run(&["--format".into(), "json".into()]);
    let tl = out.join("x.json");
    run(&["--timeline".into(), tl.to_str().unwrap().into()]);
    let db = out.join("x.db");
    run(&["--profile".into(), db.to_str().unwrap().into()]);
    (
        text,
        json,
        std::fs::read(&tl).unwrap(),
        std::fs::read(&db).unwrap(),
    )
}

#[test]
fn same_simulation_twice_gives_same_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let (t1, j1, tl1, p1) = bundled_run(a.path());
    // Across a second boundary, so that a wall-clock date in any output shows (the simulated
    // profile carried one, and this test failed whenever its two runs straddled a second).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (t2, j2, tl2, p2) = bundled_run(b.path());
    assert!(String::from_utf8_lossy(&t1).starts_with("Simulated time: "));
    assert_eq!(t1, t2, "text report");
    assert_eq!(j1, j2, "JSON report");
    assert!(tl1.len() > 100, "timeline has events");
    assert_eq!(tl1, tl2, "timeline");
    assert!(p1.starts_with(b"SQLite format 3\0"), "profile is SQLite");
    // The SQLite files themselves: the store writes no timestamp, path or random id.
    assert_eq!(p1, p2, "profile file bytes");
}
