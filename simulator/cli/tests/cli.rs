//! Whole runs of the `timeless` binary on the bundled example (a real trace of
//! validation/programs/ring captured by `timeless trace`, traces/ring4/ring.txt; golden: SimGrid
//! 3.32's time for it on the seed's Figure 5 cluster, 0.223726707037 s) and on the seed's
//! Figure 1 ring (traces/ring4/ring-fig1.txt and ring-seed.txt; golden: SimGrid 3.32's
//! 0.039765971631 s, hand derivation in validation/corpus/01-fig1-ring/case.toml), and the
//! output formats.

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

/// SimGrid 3.32 on traces/ring4/ring.txt (shared mode), platforms/mycluster.xml, rank i on
/// mycluster-i: `smpirun -np 4 -platform mycluster.xml -hostfile H -replay L
/// --log=root.fmt:[%.17r]%e%m%n` printed `[0.22372670703708541] Simulation time 0.223727`.
const TRACED_RING_SIMGRID: f64 = 0.22372670703708541;

#[test]
fn no_arguments_runs_the_bundled_example() {
    let (out, err, code) = timeless(&["simulate"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Simulated time: 0.223726707037 s\nActions replayed: 76\n"),
        "{out}"
    );
    assert!(out.contains("mycluster-3.mysite.fr"), "{out}");
    assert!(err.contains("bundled example"), "{err}");
}

/// `--kernel-stats` adds one line on stderr and, in JSON, a `kernel` member, and changes
/// nothing else on stdout (the counts themselves are derived by hand in the kernel's
/// `the_kernel_counts_its_solves_and_unchanged_rates`).
#[test]
fn kernel_stats_go_to_stderr_and_the_json_report() {
    let (plain, _, code) = timeless(&["simulate"]);
    assert_eq!(code, 0);
    let (out, err, code) = timeless(&["simulate", "--kernel-stats"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, plain);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("timeless: kernel: "))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    let solves: u64 = lines[0]["timeless: kernel: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a solve count first");
    // 76 actions, 4 ranks passing messages around a ring: some solves, fewer than events.
    assert!(solves > 0 && solves < 1000, "{}", lines[0]);
    assert!(lines[0].contains("rate updates"), "{}", lines[0]);
    // The same counts in the JSON report's `kernel` member.
    let (out, err, code) = timeless(&["simulate", "--kernel-stats", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["kernel"]["solves"].as_u64(), Some(solves), "{out}");
    let (plain, _, _) = timeless(&["simulate", "--format", "json"]);
    let p: serde_json::Value = serde_json::from_str(&plain).expect("json");
    assert!(p.get("kernel").is_none(), "{plain}");
}

/// Corpus case 60 (16 ranks on a cluster with a backbone: bcast, a ring, allreduce, alltoall,
/// gather, allgather) takes the region path in 28 general solves by default and in none with
/// `--full-filling`; both give SimGrid 3.32's makespan, 0.0616702416807 s (its `case.toml`).
#[test]
fn full_filling_turns_the_region_path_off_with_the_same_times() {
    let case = "validation/corpus/60-cluster16-mixed";
    let args = |full: bool| {
        let mut a = vec![
            "simulate".to_string(),
            format!("{case}/traces.txt"),
            "--platform".into(),
            format!("{case}/platform.xml"),
            "--deployment".into(),
            format!("{case}/deployment.xml"),
            "--kernel-stats".into(),
            "--format".into(),
            "json".into(),
        ];
        if full {
            a.push("--full-filling".into());
        }
        a
    };
    let mut times = Vec::new();
    for full in [false, true] {
        let a = args(full);
        let (out, err, code) = timeless(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        let regions = v["kernel"]["region_solves"]
            .as_u64()
            .expect("region_solves");
        assert_eq!(regions == 0, full, "{}", v["kernel"]);
        let t = v["simulated_time"].as_f64().expect("simulated_time");
        assert!((t - 0.0616702416807).abs() <= 1e-11 * t, "{t}");
        times.push(t);
    }
    assert!((times[0] - times[1]).abs() <= 1e-15 * times[1], "{times:?}");
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
        "traces/ring4/ring-fig1.txt",
        "--platform",
        "platforms/mycluster-v3.xml",
        "-n",
        "4",
    ]);
    assert!((t - FIG1_SIMGRID).abs() < 1e-12, "{t}");
}

#[test]
fn the_bundled_traced_ring_gives_simgrid_s_time() {
    let t = json_time(&[
        "simulate",
        "traces/ring4/ring.txt",
        "--platform",
        "platforms/mycluster.xml",
        "--deployment",
        "deployments/mycluster-ring4.xml",
    ]);
    assert!(
        ((t - TRACED_RING_SIMGRID) / TRACED_RING_SIMGRID).abs() < 1e-9,
        "{t}"
    );
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
            "traces/ring4/ring-fig1.txt",
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
        "traces/ring4/ring-fig1.txt",
        "-p",
        "platforms/mycluster.xml",
        "-n",
        "4",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("expected a .json or .csv"), "{err}");
}

/// With no TRACE argument, each rank reads the file its deployment `<argument>` names
/// (relative to the deployment file).
#[test]
fn per_rank_traces_named_by_deployment_arguments() {
    let tmp = tempfile::tempdir().expect("tmp");
    let corpus = root().join("validation/corpus/01-fig1-ring");
    let mut dep = String::from("<?xml version='1.0'?>\n<platform version=\"4.1\">\n");
    for r in 0..4 {
        std::fs::copy(
            corpus.join(format!("rank{r}.txt")),
            tmp.path().join(format!("r{r}.trace")),
        )
        .unwrap();
        dep.push_str(&format!(
            "  <actor host=\"mycluster-{r}.mysite.fr\" function=\"{r}\"><argument value=\"r{r}.trace\"/></actor>\n"
        ));
    }
    dep.push_str("</platform>\n");
    let dep_path = tmp.path().join("dep.xml");
    std::fs::write(&dep_path, dep).unwrap();
    let t = json_time(&[
        "simulate",
        "--platform",
        "platforms/mycluster.xml",
        "--deployment",
        dep_path.to_str().unwrap(),
    ]);
    assert!((t - FIG1_SIMGRID).abs() < 1e-12, "{t}");
}

/// A host property `smpi/os` overrides the configuration for that host (SimGrid 3.32
/// `smpi_host.cpp`): corpus case 13 (golden from SimGrid with `--cfg smpi/os:...`) with the same
/// table given as a property of both hosts instead gives the same time.
#[test]
fn host_property_overrides_software_overhead() {
    let case = root().join("validation/corpus/13-overhead-os");
    let tmp = tempfile::tempdir().expect("tmp");
    for f in ["hostfile", "traces.txt", "rank0.txt", "rank1.txt"] {
        std::fs::copy(case.join(f), tmp.path().join(f)).unwrap();
    }
    let prop = r#"<prop id="smpi/os" value="0:1e-4:1e-8;10000:2e-4:5e-9"/>"#;
    let platform = std::fs::read_to_string(case.join("platform.xml"))
        .unwrap()
        .replace(
            r#"<host id="alpha" speed="1Gf"/>"#,
            &format!(r#"<host id="alpha" speed="1Gf">{prop}</host>"#),
        )
        .replace(
            r#"<host id="beta" speed="1Gf"/>"#,
            &format!(r#"<host id="beta" speed="1Gf">{prop}</host>"#),
        );
    assert!(platform.contains("smpi/os"));
    std::fs::write(tmp.path().join("platform.xml"), platform).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(tmp.path())
        .args([
            "simulate",
            "traces.txt",
            "-p",
            "platform.xml",
            "--hostfile",
            "hostfile",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = v["simulated_time"].as_f64().unwrap();
    assert!(((t - 0.00484619988371) / t).abs() < 1e-6, "{t}");
}

/// The case of the poll tests, in a fresh directory: `one.xml` and `three.xml` (one host `h` of
/// 1 and 3 cores at 1 Gf) and `trace.txt`, where ranks 0 and 2 compute 1 Gflop each while
/// rank 1 waits in a `recv` for rank 0's message.
fn poll_case() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tmp");
    let platform = |cores: u32| {
        format!(
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
             <platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\
             <host id=\"h\" speed=\"1Gf\" core=\"{cores}\"/></zone></platform>\n"
        )
    };
    std::fs::write(tmp.path().join("one.xml"), platform(1)).unwrap();
    std::fs::write(tmp.path().join("three.xml"), platform(3)).unwrap();
    std::fs::write(
        tmp.path().join("trace.txt"),
        "0 init\n1 init\n2 init\n0 compute 1e9\n0 send 1 0 1\n1 recv 0 0 1\n2 compute 1e9\n\
         0 finalize\n1 finalize\n2 finalize\n",
    )
    .unwrap();
    tmp
}

/// `timeless/poll-cpu-share:w` (a timeless extension): a rank blocked in a receive keeps w of a
/// core busy. Ranks 0 and 2 compute 1 Gflop each on a 1-core 1 Gf host while rank 1 waits for
/// rank 0's message: without polls they share the core (2 s); with a poll of share w beside
/// them each gets 1/(2 + w) of it (2 + w seconds); a core for each rank, nothing changes.
/// `timeless/poll-spin-secs` ends the poll after that much CPU time (hand derivation below).
#[test]
fn waiting_ranks_poll_a_share_of_the_core() {
    let tmp = poll_case();
    let time_spin = |platform: &str, share: &str, spin: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_timeless"));
        c.current_dir(tmp.path())
            .args(["simulate", "trace.txt", "-p", platform, "-n", "3"])
            .args(["--cfg", &format!("timeless/poll-cpu-share:{share}")]);
        if let Some(s) = spin {
            c.args(["--cfg", &format!("timeless/poll-spin-secs:{s}")]);
        }
        let o = c.args(["--format", "json"]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["simulated_time"].as_f64().unwrap()
    };
    let time = |platform: &str, share: &str| time_spin(platform, share, None);
    // `timeless/poll-spin-secs:T`: the poll ends after T seconds of CPU time. With share 1
    // and T = 0.5 s, three contenders get 1/3 of the core each, so the poll ends at 1.5 s
    // (when ranks 0 and 2 have done 0.5 Gflop each); the two then share the core for their
    // last 0.5 Gflop: 1 s more, 2.5 s. T = 0: no poll at all, 2 s.
    for (spin, expected) in [("0.5", 2.5), ("0", 2.0), ("1e9", 3.0)] {
        let t = time_spin("one.xml", "1", Some(spin));
        assert!(
            ((t - expected) / expected).abs() < 1e-6,
            "spin {spin}: {t} s, expected {expected}"
        );
    }
    for (platform, share, expected) in [
        ("one.xml", "0", 2.0),
        ("one.xml", "0.5", 2.5),
        ("one.xml", "1", 3.0),
        ("three.xml", "0", 1.0),
        ("three.xml", "1", 1.0),
    ] {
        let t = time(platform, share);
        assert!(
            ((t - expected) / expected).abs() < 1e-6,
            "{platform}, share {share}: {t} s, expected {expected}"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(tmp.path())
        .args(["simulate", "trace.txt", "-p", "one.xml", "-n", "3"])
        .args(["--cfg", "timeless/poll-cpu-share:-1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'-1' must be a finite number >= 0"));
}

/// `timeless/poll-cpu-from-trace` (a timeless extension): each MPI call adds the CPU time a
/// call cost the rank in the traced run (`in-call-times.csv` next to the trace: its in-call
/// CPU seconds over its calls) to the rank's budget, which a blocked rank polls away at the
/// share of a computing rank. The trace of `waiting_ranks_poll_a_share_of_the_core`: ranks 0
/// and 2 compute 1 Gflop each on a 1-core 1 Gf host while rank 1 waits in its one call, a
/// `recv`. With a budget of B s the three share the core until the poll has burnt B (at 3B),
/// then the two executions share it for their last 1 - B Gflop: 3B + 2(1 - B) = 2 + B
/// seconds (B = 0.5: 1 s of CPU over 2 calls; B = 0.25). A budget of 2 s outlasts the wait:
/// the executions end at 3 s, and so does the poll, with 1 s unspent. Three cores: 1 s.
/// Without the file: a notice, and waiting is free (2 s). A bad file: its line, exit 2.
#[test]
fn waiting_ranks_poll_their_traced_cpu_time() {
    let tmp = poll_case();
    let run = |platform: &str| {
        Command::new(env!("CARGO_BIN_EXE_timeless"))
            .current_dir(tmp.path())
            .args(["simulate", "trace.txt", "-p", platform, "-n", "3"])
            .args(["--cfg", "timeless/poll-cpu-from-trace:yes"])
            .args(["--format", "json"])
            .output()
            .unwrap()
    };
    let time = |platform: &str| {
        let o = run(platform);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (
            v["simulated_time"].as_f64().unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (t, notice) = time("one.xml");
    assert!((t - 2.0).abs() < 2e-6, "{t}");
    assert!(notice.contains("no in-call-times.csv in"), "{notice}");
    let table = |calls1: u32, cpu1: f64| {
        format!("rank,calls,wall_secs,cpu_secs\n0,1,0.1,0.1\n1,{calls1},9,{cpu1}\n2,0,0,0\n")
    };
    for (calls1, cpu1, platform, expected) in [
        (2, 1.0, "one.xml", 2.5),
        (1, 0.25, "one.xml", 2.25),
        (1, 2.0, "one.xml", 3.0),
        (2, 1.0, "three.xml", 1.0),
    ] {
        std::fs::write(tmp.path().join("in-call-times.csv"), table(calls1, cpu1)).unwrap();
        let (t, _) = time(platform);
        assert!(
            ((t - expected) / expected).abs() < 1e-6,
            "{platform}, rank 1: {cpu1} s of CPU in {calls1} calls: {t} s, expected {expected}"
        );
    }
    let bad = "rank,calls,wall_secs,cpu_secs\n0,x,1,1\n";
    std::fs::write(tmp.path().join("in-call-times.csv"), bad).unwrap();
    let o = run("one.xml");
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    let want = "in-call-times.csv:2: malformed 'in-call times': a count of calls, found 'x'";
    assert!(e.contains(want), "{e}");
}

/// `timeless/poll-cpu-from-trace:taken`: the budget keeps the share of a rank's in-call time
/// during which a core-mate computed (`timeless_calibrate::compute::taken_shares`). The case of
/// `waiting_ranks_poll_their_traced_cpu_time`, its traced run pinned on one core: ranks 0 and 2
/// computed over [0, 1] s, rank 1 was in its `recv` over [0, 2]: it took the core from them
/// half of its 2 s in calls. Its 1 s of CPU over 2 calls (0.5 s per call) becomes 0.25 s:
/// 2 + 0.25 = 2.25 s (against 2.5 with `yes`). The values `no` and `maybe`: 2 s, and exit 2
/// naming the three values; a rank without timestamps: exit 2 naming its file.
#[test]
fn waiting_ranks_poll_the_cpu_time_they_took() {
    let tmp = poll_case();
    let p = tmp.path();
    let table = "rank,calls,wall_secs,cpu_secs\n0,1,0.1,0.1\n1,2,9,1.0\n2,1,0.1,0.1\n";
    std::fs::write(p.join("in-call-times.csv"), table).unwrap();
    let timed = [
        "0 0 0 init\n0 1 1 finalize\n",
        "1 0 0 init\n1 0 2 recv 0 0 8\n1 2 2 finalize\n",
        "2 0 0 init\n2 1 1 finalize\n",
    ];
    for (r, t) in timed.iter().enumerate() {
        std::fs::write(p.join(format!("rank-{r}.txt")), "").unwrap();
        std::fs::write(p.join(format!("rank-{r}.timed.txt")), t).unwrap();
    }
    std::fs::write(
        p.join("trace-meta.json"),
        r#"{"ranks": 3, "rank_hosts": ["a", "a", "a"],
            "acquisition_mode": "folding: 3 ranks on 1 core (3 ranks per core)",
            "hosts": [{"name": "a", "cpus": 1}], "per_rank_bound_cpu": [0, 0, 0]}"#,
    )
    .unwrap();
    let run = |mode: &str| {
        Command::new(env!("CARGO_BIN_EXE_timeless"))
            .current_dir(p)
            .args([
                "simulate",
                "trace.txt",
                "-p",
                "one.xml",
                "-n",
                "3",
                "--no-compensation",
            ])
            .args(["--cfg", &format!("timeless/poll-cpu-from-trace:{mode}")])
            .args(["--format", "json"])
            .output()
            .unwrap()
    };
    for (mode, expected) in [("taken", 2.25), ("yes", 2.5), ("no", 2.0)] {
        let o = run(mode);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let t = v["simulated_time"].as_f64().unwrap();
        assert!(
            ((t - expected) / expected).abs() < 1e-6,
            "{mode}: {t} s, expected {expected}"
        );
    }
    let o = run("maybe");
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("'maybe' is not one of no, yes, taken"), "{e}");
    std::fs::remove_file(p.join("rank-1.timed.txt")).unwrap();
    let o = run("taken");
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("rank-1.timed.txt is missing"), "{e}");
}

/// `timeless/cold-call-secs:X` (a timeless extension): the MPI call after a burst of at least
/// `timeless/cold-call-after-secs` (1e-4 s at the host's speed) costs X more seconds of the
/// rank's core: by default only a collective (`timeless/cold-call-before:collective`, an
/// execution of X before it), with `any` every call (the burst lasts X longer). The poll case:
/// ranks 0 and 2 compute 1 Gflop each on a 1-core 1 Gf host (2 s shared), then rank 0 sends:
/// no collective, 2 s; with `any` and X = 0.25 each burst is 1.25 Gflop: 2.5 s, on three cores
/// 1.25 s; with the threshold at 2 s the bursts are short: 2 s. A barrier after the bursts
/// (rank 0 1 s, rank 1 0.1 s, each on its own core): rank 0's cold barrier starts 0.25 s later
/// and so ends the run 0.25 s later, both ways.
#[test]
fn a_call_after_a_long_burst_is_cold() {
    let tmp = poll_case();
    std::fs::write(
        tmp.path().join("barrier.txt"),
        "0 init\n1 init\n0 compute 1e9\n1 compute 1e8\n0 barrier\n1 barrier\n0 finalize\n1 finalize\n",
    )
    .unwrap();
    let time = |trace: &str, platform: &str, cfg: &[&str]| {
        let n = if trace == "trace.txt" { "3" } else { "2" };
        let mut c = Command::new(env!("CARGO_BIN_EXE_timeless"));
        c.current_dir(tmp.path())
            .args(["simulate", trace, "-p", platform, "-n", n])
            .args(["--format", "json"]);
        for item in cfg {
            c.args(["--cfg", item]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["simulated_time"].as_f64().unwrap()
    };
    let cold = "timeless/cold-call-secs:0.25";
    let any = "timeless/cold-call-before:any";
    for (platform, cfg, expected) in [
        ("one.xml", vec![], 2.0),
        ("one.xml", vec![cold], 2.0),
        ("one.xml", vec![cold, any], 2.5),
        ("three.xml", vec![cold, any], 1.25),
        (
            "one.xml",
            vec![cold, any, "timeless/cold-call-after-secs:2"],
            2.0,
        ),
    ] {
        let t = time("trace.txt", platform, &cfg);
        assert!(
            ((t - expected) / expected).abs() < 1e-6,
            "{platform} {cfg:?}: {t} s, expected {expected}"
        );
    }
    let plain = time("barrier.txt", "three.xml", &[]);
    for cfg in [vec![cold], vec![cold, any]] {
        let t = time("barrier.txt", "three.xml", &cfg);
        assert!(
            (t - plain - 0.25).abs() < 1e-9,
            "{cfg:?}: {t} s against {plain} s"
        );
    }
}

/// Writes `two.xml` into `dir`: one host `h` of 2 cores at 1 Gf in a Full zone.
fn write_two_core_host(dir: &std::path::Path) {
    std::fs::write(
        dir.join("two.xml"),
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
         <platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\
         <host id=\"h\" speed=\"1Gf\" core=\"2\"/></zone></platform>\n",
    )
    .unwrap();
}

/// `timeless/fold-slice-secs` (a timeless extension, `sim::slices`): ranks 0 and 2 share core 0
/// of a 2-core 1 Gf host (pinned), rank 1 has core 1. Rank 0 ping-pongs 8 B with rank 1 five
/// times while rank 2 computes 7e6 flops (7 ms). Each message takes d = 2.9553592978066307e-9 s
/// on the loopback (the model off: rank 0 ends at 10 d). With S = 2 ms, rank 2's slice starts
/// at rank 0's last turn: the first reply (at 2 d) is seen at 2 ms, the second and third at 4
/// and 6 ms, the fourth when rank 2's computation ends (7 ms, before the slice's 8 ms); the
/// fifth trip finds no mate computing: rank 0 ends at 7 ms + 2 d. Its waits: the four turns
/// (2 + 2 + 2 + 1 ms - 4 * 2 d) and each trip's wait for the reply's match (d): 7 ms - 3 d.
#[test]
fn a_wait_ends_at_a_computing_core_mates_slice() {
    let tmp = tempfile::tempdir().expect("tmp");
    write_two_core_host(tmp.path());
    let mut trace = String::from("0 init\n1 init\n2 init\n2 compute 7e6\n");
    for _ in 0..5 {
        trace.push_str("0 send 1 0 8\n0 recv 1 0 8\n1 recv 0 0 8\n1 send 0 0 8\n");
    }
    trace.push_str("0 finalize\n1 finalize\n2 finalize\n");
    std::fs::write(tmp.path().join("trace.txt"), trace).unwrap();
    let rank0 = |slice: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .current_dir(tmp.path())
            .args(["simulate", "trace.txt", "-p", "two.xml", "-n", "3"])
            .args(["--cfg", "timeless/pin-ranks:yes"])
            .args(["--cfg", &format!("timeless/fold-slice-secs:{slice}")])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = &v["ranks"][0];
        (
            r["finish_time"].as_f64().unwrap(),
            r["wait_time"].as_f64().unwrap(),
        )
    };
    let d = 2.9553592978066307e-9;
    let close = |a: f64, b: f64| ((a - b) / b).abs() < 1e-9;
    let (off, _) = rank0("0");
    assert!(
        close(off, 10.0 * d),
        "model off: {off} s, expected {}",
        10.0 * d
    );
    let (on, wait) = rank0("2e-3");
    assert!(
        close(on, 7e-3 + 2.0 * d),
        "slice 2 ms: {on} s, expected 7 ms + 2 d"
    );
    assert!(
        close(wait, 7e-3 - 3.0 * d),
        "slice 2 ms: waited {wait} s, expected 7 ms - 3 d"
    );
}

/// `timeless/pin-ranks` (a timeless extension): the k-th rank on a host runs on core k mod C.
/// Four ranks compute 1, 2, 3 and 4 Gflop on one 2-core 1 Gf host. Shared host-wide (SimGrid's
/// model, each gets min(1, 2/n) of a core): 0.5 core each until rank 0 ends at 2 s; then 2/3
/// each, rank 1 (1 Gflop left) ends at 3.5 s; ranks 2 and 3 (1 and 2 left) a core each: 4.5 and
/// 5.5 s. Pinned (ranks 0 and 2 on core 0, 1 and 3 on core 1): core 0 ends rank 0 at 2 s and
/// rank 2 at 4 s, core 1 rank 1 at 4 s and rank 3 at 6 s, while core 0 idles from 4 s.
#[test]
fn pinned_ranks_share_their_own_core() {
    let tmp = tempfile::tempdir().expect("tmp");
    write_two_core_host(tmp.path());
    std::fs::write(
        tmp.path().join("trace.txt"),
        "0 init\n1 init\n2 init\n3 init\n0 compute 1e9\n1 compute 2e9\n2 compute 3e9\n\
         3 compute 4e9\n0 finalize\n1 finalize\n2 finalize\n3 finalize\n",
    )
    .unwrap();
    let time = |pin: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .current_dir(tmp.path())
            .args(["simulate", "trace.txt", "-p", "two.xml", "-n", "4"])
            .args(["--cfg", &format!("timeless/pin-ranks:{pin}")])
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["simulated_time"].as_f64().unwrap()
    };
    for (pin, expected) in [("no", 5.5), ("yes", 6.0)] {
        let t = time(pin);
        assert!(
            ((t - expected) / expected).abs() < 1e-12,
            "pin-ranks {pin}: {t} s, expected {expected}"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(tmp.path())
        .args(["simulate", "trace.txt", "-p", "two.xml", "-n", "4"])
        .args(["--cfg", "timeless/pin-ranks:maybe"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("timeless/pin-ranks"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
