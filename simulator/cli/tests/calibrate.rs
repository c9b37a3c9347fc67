//! `timeless calibrate network` end to end on hand-made inputs: the factors written to
//! `smpi.cfg` are derived by hand next to each test; bad inputs exit 2, name the file and line,
//! and write nothing.

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

/// Hand-made ping-pong, round trip = 2 × (a + b·(S + 16)) with the nominal link given on the
/// command line (1 µs, 1e9 B/s; SHARED so B_eff = 1e9/1.05):
/// * S <= 1024: a = 2e-6, b = 1.05/0.5e9 → lat-factor 2, bw-factor 0.5;
/// * 2048 <= S <= 32768: a = 3e-6, b = 1.05/0.8e9 → lat-factor 3, bw-factor 0.8;
/// * S >= 65536: a = 10e-6, b = 1.05/1e9 → lat-factor 10, bw-factor 1.
///
/// No send/late series, so the detached threshold is SimGrid's 65536, which is also where the
/// third segment starts: the tests fit with `--segments 2` (two breaks where the data bends),
/// the switch adding the third. Factor thresholds: 0, 2048 + 15, 65536 + 15.
fn pingpong_csv() -> String {
    let mut s = String::from("op,size_bytes,time_secs\n");
    for k in 0..=20u32 {
        let size = 1u64 << k;
        let (a, bw) = if size <= 1024 {
            (2e-6, 0.5e9)
        } else if size <= 32768 {
            (3e-6, 0.8e9)
        } else {
            (10e-6, 1e9)
        };
        let t = 2.0 * (a + 1.05 / bw * (size as f64 + 16.0));
        for _ in 0..3 {
            s.push_str(&format!("pingpong,{size},{t:e}\n"));
        }
    }
    s
}

fn cfg_value<'a>(cfg: &'a str, key: &str) -> &'a str {
    cfg.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key} in\n{cfg}"))
}

/// `thr:factor;...` → sorted (threshold, factor) pairs.
fn entries(v: &str) -> Vec<(u64, f64)> {
    let mut e: Vec<(u64, f64)> = v
        .split(';')
        .map(|p| {
            let (t, f) = p.split_once(':').unwrap();
            (t.parse().unwrap(), f.parse().unwrap())
        })
        .collect();
    e.sort_by_key(|x| x.0);
    e
}

#[test]
fn network_from_csv_writes_the_hand_derived_factors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pp.csv"), pingpong_csv()).unwrap();
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "calibrate",
            "network",
            "--from-csv",
            "pp.csv",
            "--out",
            "cal",
            "--segments",
            "2",
            "--latency",
            "1e-6",
            "--bandwidth",
            "1e9",
            "--speed",
            "1e9",
            "--cores",
            "4",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("smpi/send-is-detached-thresh = 65536 B (Default)"),
        "{out}"
    );
    let cal = dir.path().join("cal");
    let cfg = std::fs::read_to_string(cal.join("smpi.cfg")).unwrap();
    let lat = entries(cfg_value(&cfg, "smpi/lat-factor"));
    let bw = entries(cfg_value(&cfg, "smpi/bw-factor"));
    let want_thr = [0u64, 2063, 65551];
    for (k, (&(lt, lf), &(bt, bf))) in lat.iter().zip(&bw).enumerate() {
        assert_eq!(lt, want_thr[k]);
        assert_eq!(bt, want_thr[k]);
        assert!((lf - [2.0, 3.0, 10.0][k]).abs() < 1e-9, "lat {lat:?}");
        assert!((bf - [0.5, 0.8, 1.0][k]).abs() < 1e-9, "bw {bw:?}");
    }
    assert_eq!(cfg_value(&cfg, "smpi/send-is-detached-thresh"), "65536");
    assert_eq!(cfg_value(&cfg, "smpi/os"), "0:0:0");
    let xml = std::fs::read_to_string(cal.join("platform.xml")).unwrap();
    assert!(xml.contains("speed=\"1000000000f\" core=\"4\""), "{xml}");
    assert!(
        xml.contains("bandwidth=\"1000000000Bps\" latency=\"0.000001s\""),
        "{xml}"
    );
    // The simulated ping-pong on the written files reproduces the input at every size.
    let fit = std::fs::read_to_string(cal.join("fit.csv")).unwrap();
    assert_eq!(fit.lines().count(), 22);
    let header: Vec<&str> = fit.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in fit.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let err_pct: f64 = fields[col("error_pct")].parse().unwrap();
        assert!(err_pct.abs() < 1e-3, "{line}");
        // No exchange in the input: its columns are empty.
        assert_eq!(fields[col("measured_exchange_secs")], "", "{line}");
    }
    for f in ["pingpong.csv", "hostfile", "summary.txt"] {
        assert!(cal.join(f).exists(), "{f}");
    }
    // And `timeless simulate` reads the written platform, hostfile and configuration. One
    // 1024-byte ping-pong: 2 × (2e-6 + 1040 × 1.05/0.5e9) = 8.368e-6 s.
    std::fs::write(
        dir.path().join("t.txt"),
        "0 init\n1 init\n0 send 1 0 1024\n0 recv 1 0 1024\n1 recv 0 0 1024\n1 send 0 0 1024\n0 finalize\n1 finalize\n",
    )
    .unwrap();
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "simulate",
            "t.txt",
            "-p",
            "cal/platform.xml",
            "--hostfile",
            "cal/hostfile",
            "-n",
            "2",
            "--cfg-file",
            "cal/smpi.cfg",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = v["simulated_time"].as_f64().unwrap();
    assert!((t - 8.368e-6).abs() < 1e-14, "{t}");
}

/// The same ping-pong plus a bidirectional exchange at every size, E = a + 1.25·b·P (the
/// pingpong_csv segments): each of two concurrent flows drains 1.25 times slower than alone,
/// so m = 2/1.25 = 1.6. With the nominal link of 1 µs and 1e9 B/s the route becomes a FATPIPE
/// link of 1e9 B/s (lone-flow weight 1, so the bw-factors are those of pingpong_csv × 1.05:
/// 0.5/1.05, 0.8/1.05, 1/1.05) plus a SHARED link of 1.05 × 1.6 × 1e9 = 1.68e9 B/s. The fit
/// counts the sizes where b·P >= a: 1024 (segment 1, from P = 952), 4096 .. 32768 (segment 2,
/// from P = 2286), 65536 .. 1 MiB (segment 3, from P = 9524): 10 of 21.
#[test]
fn network_with_exchange_writes_the_pair_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = pingpong_csv();
    for k in 0..=20u32 {
        let size = 1u64 << k;
        let (a, bw) = if size <= 1024 {
            (2e-6, 0.5e9)
        } else if size <= 32768 {
            (3e-6, 0.8e9)
        } else {
            (10e-6, 1e9)
        };
        let t = a + 1.25 * 1.05 / bw * (size as f64 + 16.0);
        csv.push_str(&format!("exchange,{size},{t:e}\n"));
    }
    std::fs::write(dir.path().join("pp.csv"), csv).unwrap();
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "calibrate",
            "network",
            "--from-csv",
            "pp.csv",
            "--out",
            "cal",
            "--segments",
            "2",
            "--latency",
            "1e-6",
            "--bandwidth",
            "1e9",
            "--speed",
            "1e9",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("concurrent flows get together 1.6000 times a lone flow's bandwidth"),
        "{out}"
    );
    assert!(
        out.contains(
            "exchange of 2 ranks at once at 21 sizes, 10 in the bandwidth regime fitted: ratio 1.6000\n"
        ),
        "{out}"
    );
    let cal = dir.path().join("cal");
    let cfg = std::fs::read_to_string(cal.join("smpi.cfg")).unwrap();
    let bw = entries(cfg_value(&cfg, "smpi/bw-factor"));
    for (k, &(_, f)) in bw.iter().enumerate() {
        assert!((f - [0.5, 0.8, 1.0][k] / 1.05).abs() < 1e-9, "bw {bw:?}");
    }
    let xml = std::fs::read_to_string(cal.join("platform.xml")).unwrap();
    assert!(
        xml.contains(
            "bandwidth=\"1000000000Bps\" latency=\"0.000001s\" sharing_policy=\"FATPIPE\""
        ),
        "{xml}"
    );
    let shared: f64 = xml
        .split("_shared\" bandwidth=\"")
        .nth(1)
        .and_then(|r| r.split("Bps").next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((shared - 1.68e9).abs() < 1.0, "{xml}");
    // The replayed exchange reproduces the input at every size.
    let fit = std::fs::read_to_string(cal.join("fit.csv")).unwrap();
    let header: Vec<&str> = fit.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in fit.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let err_pct: f64 = fields[col("exchange_error_pct")].parse().unwrap();
        assert!(err_pct.abs() < 1e-3, "{line}");
    }
}

/// `--unfolded DIR`: the folded measurements only raise the latency of DIR's calibration. The
/// folded ping-pong is pingpong_csv's with every round trip 2 µs longer (one-way wait 1 µs);
/// the written factors are pingpong_csv's refitted (one SHARED link: the bw-factors 0.5, 0.8,
/// 1 of the SHARED nominal link) with every latency 1 µs longer: lat-factors (2 + 1)/1,
/// (3 + 1)/1, (10 + 1)/1 on the nominal 1 µs.
#[test]
fn network_over_unfolded_adds_the_folded_wait() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("base")).unwrap();
    std::fs::write(dir.path().join("base/pingpong.csv"), pingpong_csv()).unwrap();
    let folded: String = pingpong_csv()
        .lines()
        .map(|l| match l.strip_prefix("pingpong,") {
            Some(rest) => {
                let (size, t) = rest.split_once(',').unwrap();
                let t: f64 = t.parse().unwrap();
                format!("pingpong,{size},{:e}\n", t + 2e-6)
            }
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(dir.path().join("folded.csv"), folded).unwrap();
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "calibrate",
            "network",
            "--from-csv",
            "folded.csv",
            "--unfolded",
            "base",
            "--out",
            "cal",
            "--segments",
            "2",
            "--latency",
            "1e-6",
            "--bandwidth",
            "1e9",
            "--speed",
            "1e9",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("every message 1.0000e-6 s later"), "{out}");
    let cfg = std::fs::read_to_string(dir.path().join("cal/smpi.cfg")).unwrap();
    let lat = entries(cfg_value(&cfg, "smpi/lat-factor"));
    let bw = entries(cfg_value(&cfg, "smpi/bw-factor"));
    for k in 0..3 {
        assert!((lat[k].1 - [3.0, 4.0, 11.0][k]).abs() < 1e-9, "lat {lat:?}");
        assert!((bw[k].1 - [0.5, 0.8, 1.0][k]).abs() < 1e-9, "bw {bw:?}");
    }
    // The written model reproduces the folded ping-pong at every size.
    let fit = std::fs::read_to_string(dir.path().join("cal/fit.csv")).unwrap();
    let header: Vec<&str> = fit.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "error_pct").unwrap();
    for line in fit.lines().skip(1) {
        let e: f64 = line.split(',').nth(col).unwrap().parse().unwrap();
        assert!(e.abs() < 1e-3, "{line}");
    }
}

/// A SKaMPI log with 9 sizes (1 B .. 256 B, times in µs, made up, increasing) fits one segment
/// per 3 sizes and writes the files.
#[test]
fn network_from_skampi() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = String::from("# SKaMPI Version 5.0.4\n# begin result \"Pingpong_Send_Recv\"\n");
    for (k, t) in [10.0, 10.1, 10.3, 12.0, 12.5, 13.2, 20.0, 22.0, 26.0]
        .iter()
        .enumerate()
    {
        let s = 1u64 << k;
        log.push_str(&format!("count= {s} {s} {t} 0.1 32 {t} {t}\n"));
    }
    log.push_str("# end result \"Pingpong_Send_Recv\"\n");
    std::fs::write(dir.path().join("log.ski"), log).unwrap();
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "calibrate",
            "network",
            "--from-skampi",
            "log.ski",
            "--out",
            "cal",
            "--speed",
            "1e9",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 segments"), "{out}");
    assert!(dir.path().join("cal/smpi.cfg").exists());
}

fn bad(input_name: &str, text: &str, flag: &str, want: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(input_name), text).unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "calibrate",
            "network",
            flag,
            input_name,
            "--out",
            "cal",
            "--speed",
            "1e9",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(want), "expected '{want}' in: {err}");
    assert!(
        !dir.path().join("cal").exists(),
        "no output may be written on bad input"
    );
}

#[test]
fn too_few_sizes_is_an_input_error() {
    bad(
        "pp.csv",
        "op,size_bytes,time_secs\npingpong,1,1e-6\npingpong,2,1.1e-6\npingpong,4,1.2e-6\n",
        "--from-csv",
        "ping-pong for a 3-segment model: 3 distinct message size(s), at least 9 needed",
    );
}

#[test]
fn non_monotonic_is_an_input_error() {
    let mut csv = String::from("op,size_bytes,time_secs\n");
    for k in 0..10 {
        // 64 B takes a tenth of 32 B.
        let t = if k == 6 {
            1e-7
        } else {
            1e-6 * (1.0 + k as f64)
        };
        csv.push_str(&format!("pingpong,{},{t:e}\n", 1u64 << k));
    }
    bad(
        "pp.csv",
        &csv,
        "--from-csv",
        "time is not monotonic in size: 6.0000e-6 s at 32 B but 1.0000e-7 s at 64 B",
    );
}

#[test]
fn negative_time_names_file_and_line() {
    bad(
        "pp.csv",
        "op,size_bytes,time_secs\npingpong,1,1e-6\npingpong,2,-1e-6\n",
        "--from-csv",
        "pp.csv:3: negative time '-1e-6'",
    );
}

#[test]
fn malformed_skampi_names_file_and_line() {
    bad(
        "log.ski",
        "# SKaMPI\ncount= 1 1 10.0 0.1 32 10 10\ncount= 2 2 ten 0.1 32 10 10\n",
        "--from-skampi",
        "log.ski:3: time 'ten' is not a number",
    );
}

/// `calibrate compute --from-trace`: rank 0 computes 3e6 flops in 5 ms of wall time (4 ms + 1 ms
/// between calls) and rank 1 2e6 flops in 10 ms: 6e8 and 2e8 flop/s. Without trace-meta.json
/// the cores are as many as the ranks, so core time = wall time. Pooled: 5e6 flops / 15 ms =
/// 3.333333e8 flop/s; the seed's mean over ranks is 4e8 flop/s.
#[test]
fn compute_from_trace_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("tr");
    std::fs::create_dir(&t).unwrap();
    std::fs::write(
        t.join("rank-0.txt"),
        "0 init\n0 compute 2e6\n0 send 1 0 8 6\n0 compute 1e6\n0 recv 1 0 8 6\n0 finalize\n",
    )
    .unwrap();
    std::fs::write(
        t.join("rank-0.timed.txt"),
        "0 10.0 10.0 init\n0 10.004 10.005 send 1 0 8 6\n0 10.006 10.010 recv 1 0 8 6\n0 10.011 10.011 finalize\n",
    )
    .unwrap();
    std::fs::write(
        t.join("rank-1.txt"),
        "1 init\n1 recv 0 0 8 6\n1 compute 2e6\n1 send 0 0 8 6\n1 finalize\n",
    )
    .unwrap();
    std::fs::write(
        t.join("rank-1.timed.txt"),
        "1 10.0 10.0 init\n1 10.0 10.005 recv 0 0 8 6\n1 10.015 10.016 send 0 0 8 6\n1 10.02 10.02 finalize\n",
    )
    .unwrap();
    let (out, err, code) = timeless(dir.path(), &["calibrate", "compute", "--from-trace", "tr"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rank 0: 2 bursts"), "{out}");
    assert!(out.contains("rank 1: 1 bursts"), "{out}");
    assert!(
        out.contains("speed: 3.333333e8 flop/s (compute bursts' flops per core-second, mean of 1 run(s); seed's mean of wall rates: 4.000000e8)"),
        "{out}"
    );
    std::fs::remove_file(t.join("rank-1.timed.txt")).unwrap();
    let (_, err, code) = timeless(dir.path(), &["calibrate", "compute", "--from-trace", "tr"]);
    assert_eq!(code, 2);
    assert!(err.contains("rank-1.timed.txt is missing"), "{err}");
}

/// Runs `calibrate network` with a stand-in launcher (a shell script given as `--mpirun`) and
/// checks it fails with `code`, a message containing `want`, and no output directory. The
/// temporary directory (`TMPDIR`) is the test's; returns the files the run left there.
fn bad_launch(script: Option<&str>, extra: &[&str], code: i32, want: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("bench");
    std::fs::write(&bench, "").unwrap();
    let mut args = vec!["calibrate", "network", "--out", "cal", "--speed", "1e9"];
    let launcher = dir.path().join("fake-mpirun");
    if let Some(s) = script {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&launcher, s).unwrap();
        std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();
        args.extend(["--mpirun", launcher.to_str().unwrap()]);
        args.extend(["--bench", bench.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The script was just written: a process another test forks at that moment holds it open
    // for writing until its exec (the descriptor is close-on-exec, but inherited until then),
    // and running the script meanwhile fails with ETXTBSY. Tried again then, after a pause.
    let mut attempts = 0;
    let o = loop {
        let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .args(&args)
            .output()
            .expect("run");
        attempts += 1;
        if attempts < 20 && String::from_utf8_lossy(&o.stderr).contains("Text file busy") {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        break o;
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    for w in want {
        assert!(err.contains(w), "expected '{w}' in: {err}");
    }
    assert!(
        !dir.path().join("cal").exists(),
        "no output may be written when the benchmark fails"
    );
    let mut kept: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    kept.sort();
    kept
}

#[test]
fn a_benchmark_that_cannot_start_writes_nothing() {
    let kept = bad_launch(
        None,
        &["--bench", "nowhere"],
        2,
        &["--bench nowhere: no such file"],
    );
    assert!(kept.is_empty(), "nothing measured, nothing kept: {kept:?}");
    let kept = bad_launch(
        None,
        &["--bench", "/bin/sh", "--mpirun", "/nonexistent/mpirun"],
        1,
        &["cannot run /nonexistent/mpirun"],
    );
    assert!(kept.is_empty(), "nothing measured, nothing kept: {kept:?}");
    // The launcher starts but the ranks do not: its message is passed on.
    let kept = bad_launch(
        Some("#!/bin/sh\necho 'fake-mpirun: not enough slots' >&2\nexit 1\n"),
        &[],
        1,
        &["the benchmark failed", "fake-mpirun: not enough slots"],
    );
    assert!(kept.is_empty(), "nothing measured, nothing kept: {kept:?}");
}

/// A benchmark run that measured too few sizes, or a time that drops with the size: the fit
/// refuses, the measurements are kept for inspection, nothing is written in --out.
#[test]
fn a_benchmark_run_with_bad_measurements_writes_nothing() {
    // The stand-in writes its CSV where the real benchmark would (`--out FILE`, last argument).
    let writes = |rows: &str| {
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do out=$a; done\nprintf 'op,size_bytes,time_secs\\n{rows}' > \"$out\"\n"
        )
    };
    let kept = bad_launch(
        Some(&writes(
            "pingpong,1,1e-6\\npingpong,2,1.1e-6\\npingpong,4,1.2e-6\\n",
        )),
        &[],
        1,
        &[
            "at least 9 needed",
            "the measurements are kept in",
            "(re-fit with --from-csv)",
        ],
    );
    // The kept file holds the 3 samples the benchmark wrote.
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0]
            .lines()
            .filter(|l| l.starts_with("pingpong,"))
            .count(),
        3,
        "{}",
        kept[0]
    );
    let mut rows = String::new();
    for k in 0..10 {
        let t = if k == 6 {
            1e-7
        } else {
            1e-6 * (1.0 + k as f64)
        };
        rows.push_str(&format!("pingpong,{},{t:e}\\n", 1u64 << k));
    }
    let kept = bad_launch(
        Some(&writes(&rows)),
        &[],
        1,
        &[
            "time is not monotonic in size: 6.0000e-6 s at 32 B but 1.0000e-7 s at 64 B",
            "the measurements are kept in",
        ],
    );
    assert_eq!(kept.len(), 1, "{kept:?}");
}
