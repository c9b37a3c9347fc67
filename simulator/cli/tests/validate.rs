//! `timeless validate` on `validation/programs/ring`: runs, traces, simulates and reports one
//! row per rank count; its prediction must equal `timeless simulate` of the trace it kept on the
//! same calibrated platform. Needs `mpicc` and `mpirun`; skipped with a notice otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn timeless(dir: &Path, args: &[&str]) -> (String, String, i32) {
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(args)
        .output()
        .expect("run timeless");
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn missing_calibration_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "-n",
            "2",
            "--calibration",
            "nowhere",
            "--",
            "true",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nowhere/platform.xml"), "{err}");
    assert!(
        err.contains("timeless calibrate network --out nowhere"),
        "{err}"
    );
}

/// A calibration of a made-up machine: one host of 1 Gflop/s and 2 cores, link 1 µs / 1 GB/s,
/// factors from the 3-segment hand CSV of tests/calibrate.rs (any valid calibration will do).
fn calibration(dir: &Path) {
    calibration_into(dir, "cal", 2e-6, "1e9");
}

/// A one-segment ping-pong of one-way time `latency_secs` + P/1e9, calibrated into `out` with
/// the host speed `speed`.
fn calibration_into(dir: &Path, out: &str, latency_secs: f64, speed: &str) {
    let mut csv = String::from("op,size_bytes,time_secs\n");
    for k in 0..=20u32 {
        let s = 1u64 << k;
        let t = 2.0 * (latency_secs + (s as f64 + 16.0) / 1e9);
        csv.push_str(&format!("pingpong,{s},{t:e}\n"));
    }
    std::fs::write(dir.join("pp.csv"), csv).unwrap();
    let (_, err, code) = timeless(
        dir,
        &[
            "calibrate",
            "network",
            "--from-csv",
            "pp.csv",
            "--out",
            out,
            "--speed",
            speed,
            "--cores",
            "2",
        ],
    );
    assert_eq!(code, 0, "{err}");
}

/// A bad cases file or a missing program: exit 2 naming the file and line (or the program),
/// and no output directory.
#[test]
fn bad_cases_are_input_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    calibration(dir.path());
    std::fs::write(
        dir.path().join("cases.txt"),
        "ring 2 ring 3\nring 4 fold=x ring 3\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut a = vec!["validate", "--calibration", "cal", "--out", "val"];
        a.extend_from_slice(args);
        timeless(dir.path(), &a)
    };
    let (_, err, code) = run(&["--cases", "cases.txt"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cases.txt:2: fold: 'x' is not a number >= 1"),
        "{err}"
    );
    std::fs::write(dir.path().join("cases.txt"), "ring 2 ./no-such-program 3\n").unwrap();
    let (_, err, code) = run(&["--cases", "cases.txt"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ring on 2 ranks: program ./no-such-program not found"),
        "{err}"
    );
    let (_, err, code) = run(&["-n", "2", "--", "no-such-program-on-path"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("program no-such-program-on-path not found on PATH"),
        "{err}"
    );
    let (_, err, code) = run(&["--cfg", "smpi/no-such-key:1", "-n", "2", "--", "true"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--cfg smpi/no-such-key:1: unknown configuration key 'smpi/no-such-key'"),
        "{err}"
    );
    assert!(
        !dir.path().join("val").exists(),
        "no output may be written on bad input"
    );
}

/// The value of column `name` of a CSV line.
fn field<'a>(header: &str, line: &'a str, name: &str) -> &'a str {
    let i = header
        .split(',')
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header}"));
    line.split(',')
        .nth(i)
        .expect("as many fields as the header")
}

/// `timeless simulate`'s simulated time of the kept trace, with `extra` arguments.
fn simulate(dir: &Path, platform: &str, extra: &[&str]) -> f64 {
    simulate_with(dir, "ring-n2", platform, "cal/smpi.cfg", extra)
}

/// `timeless simulate`'s simulated time of the trace kept for `case`, on `platform` with the
/// configuration `cfg`.
fn simulate_with(dir: &Path, case: &str, platform: &str, cfg: &str, extra: &[&str]) -> f64 {
    let list = format!("val/traces/{case}/trace-list.txt");
    simulate_list(dir, &list, platform, "cal/hostfile", cfg, extra)
}

/// `timeless simulate`'s simulated time of the 2-rank trace `list` on `platform`, ranks placed
/// by `hostfile`, with the configuration `cfg` and `extra` arguments.
fn simulate_list(
    dir: &Path,
    list: &str,
    platform: &str,
    hostfile: &str,
    cfg: &str,
    extra: &[&str],
) -> f64 {
    let mut a = vec![
        "simulate",
        list,
        "-p",
        platform,
        "--hostfile",
        hostfile,
        "-n",
        "2",
        "--cfg-file",
        cfg,
        "--format",
        "json",
    ];
    a.extend_from_slice(extra);
    let (sim, err, code) = timeless(dir, &a);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&sim).unwrap();
    v["simulated_time"].as_f64().unwrap()
}

/// `a` (printed with 9 decimals in validate.csv) equals `b` within `rel` plus the rounding.
fn close(a: f64, b: f64, rel: f64, what: &str) {
    assert!(
        (a - b).abs() <= rel * b + 0.5e-9,
        "{what}: validate {a} vs simulate {b}"
    );
}

#[test]
fn ring_prediction_matches_simulate_on_the_kept_trace() {
    if Command::new("mpicc").arg("--version").output().is_err() {
        eprintln!("mpicc not installed: `timeless validate` test skipped");
        return;
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_timeless"));
    let profile_dir = exe.parent().expect("target/<profile>");
    if !profile_dir.join("libtimeless_preload.so").exists()
        && std::env::var_os("TIMELESS_PRELOAD").is_none()
    {
        let mut build = Command::new(env!("CARGO"));
        build.args(["build", "-p", "timeless-preload"]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        assert!(
            build.status().unwrap().success(),
            "building the tracer failed"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let progs = dir.path().join("programs");
    let made = Command::new("make")
        .arg("-C")
        .arg(root().join("validation/programs"))
        .arg(format!("BUILD={}", progs.display()))
        .arg(progs.join("ring"))
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    calibration(dir.path());
    let ring = progs.join("ring");
    let (out, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "-n",
            "2",
            "--reps",
            "1",
            "--calibration",
            "cal",
            "--out",
            "val",
            "--",
            ring.to_str().unwrap(),
            "3",
            "100000",
            "200000000",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // 3 rounds of 2e8 flops (about 0.2 s at a few Gflop/s): a run measurably longer than the
    // launch baseline even on a loaded machine (a measured time of 0 has no error).
    assert!(out.contains("accuracy over 1 case(s)"), "{out}");
    let csv = std::fs::read_to_string(dir.path().join("val/validate.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let row = lines.next().expect("one row");
    assert_eq!(lines.next(), None);
    let f = |name: &str| field(header, row, name);
    let num = |name: &str| -> f64 { f(name).parse().unwrap_or_else(|_| panic!("{name}: {row}")) };
    assert_eq!((f("program"), f("ranks")), ("ring", "2"));
    assert_eq!((f("speed_source"), f("compensated")), ("trace", "true"));
    // The kernel-speed prediction: the trace on the calibrated platform, compensated as
    // `timeless simulate` does by default.
    close(
        num("predicted_kernel_secs"),
        simulate(dir.path(), "cal/platform.xml", &[]),
        1e-9,
        "kernel speed",
    );
    // The default prediction: hosts at the traced flop rate (printed with 7 digits, hence the
    // tolerance), and the same without compensation and without computation.
    let rate = num("trace_rate_flops_per_sec");
    assert!(rate > 0.0, "{row}");
    let xml = std::fs::read_to_string(dir.path().join("cal/platform.xml")).unwrap();
    let at_rate = xml.replace("speed=\"1000000000f\"", &format!("speed=\"{rate:e}f\""));
    assert_ne!(
        at_rate, xml,
        "the calibrated platform names its speed 1000000000f"
    );
    std::fs::write(dir.path().join("rate.xml"), at_rate).unwrap();
    close(
        num("predicted_secs"),
        simulate(dir.path(), "rate.xml", &[]),
        1e-6,
        "trace rate",
    );
    close(
        num("predicted_other_compensation_secs"),
        simulate(dir.path(), "rate.xml", &["--no-compensation"]),
        1e-6,
        "trace rate, no compensation",
    );
    close(
        num("comm_only_secs"),
        simulate(
            dir.path(),
            "rate.xml",
            &["--cfg", "smpi/simulate-computation:no"],
        ),
        1e-6,
        "communication only",
    );
    // The trace's volumes were converted at the calibrated speed, and say so.
    let meta =
        std::fs::read_to_string(dir.path().join("val/traces/ring-n2/trace-meta.json")).unwrap();
    assert!(
        meta.contains("timeless validate: the calibrated platform's host speed"),
        "{meta}"
    );
    // The compensation removed the tracer's cost of the ring's 3 rounds of calls.
    assert!(num("removed_per_rank_secs") > 0.0, "{row}");

    // A run folded 2 per core is replayed with cal/fold2 (another latency: 20 µs), its hosts at
    // the unfolded calibration's speed (1e9, not fold2's 2e9: the traces are converted with it).
    calibration_into(dir.path(), "cal/fold2", 20e-6, "2e9");
    std::fs::remove_dir_all(dir.path().join("val")).unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "-n",
            "2",
            "--fold",
            "2",
            "--reps",
            "1",
            "--compute-speed",
            "kernel",
            "--calibration",
            "cal",
            "--out",
            "val",
            "--",
            ring.to_str().unwrap(),
            "3",
            "100000",
            "200000000",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let csv = std::fs::read_to_string(dir.path().join("val/validate.csv")).unwrap();
    let (header, row) = csv.split_once('\n').unwrap();
    let f = |name: &str| field(header, row.trim_end(), name);
    assert_eq!((f("mode"), f("calibration")), ("folded x2", "fold2"));
    let xml = std::fs::read_to_string(dir.path().join("cal/fold2/platform.xml")).unwrap();
    let at_base = xml.replace("speed=\"2000000000f\"", "speed=\"1000000000f\"");
    assert_ne!(at_base, xml, "fold2's platform names its speed 2000000000f");
    std::fs::write(dir.path().join("fold2.xml"), at_base).unwrap();
    let folded = simulate_with(
        dir.path(),
        "ring-n2-f2",
        "fold2.xml",
        "cal/fold2/smpi.cfg",
        &[],
    );
    close(
        f("predicted_secs").parse().unwrap(),
        folded,
        1e-9,
        "folded, fold2 calibration",
    );
    // And it is not the unfolded calibration's prediction (3 rounds of 2 messages of 100 kB:
    // 6 × 18 µs more latency).
    let unfolded = simulate_with(
        dir.path(),
        "ring-n2-f2",
        "cal/platform.xml",
        "cal/smpi.cfg",
        &[],
    );
    assert!(folded - unfolded > 6.0 * 17e-6, "{folded} vs {unfolded}");

    // Re-predicting that validation (`--from`): no program runs; with the same calibration
    // and settings the table is the same, byte for byte; with a model setting, the folded
    // prediction is the replay of the kept trace under that setting (here without
    // computation), and the measurements stay.
    let repredict = |out: &str, extra: &[&str]| {
        let mut a = vec![
            "validate",
            "--from",
            "val",
            "--compute-speed",
            "kernel",
            "--calibration",
            "cal",
            "--out",
            out,
        ];
        a.extend_from_slice(extra);
        timeless(dir.path(), &a)
    };
    let (_, err, code) = repredict("re", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("re/validate.csv")).unwrap(),
        csv
    );
    let (_, err, code) = repredict("re2", &["--cfg", "smpi/simulate-computation:no"]);
    assert_eq!(code, 0, "{err}");
    let csv2 = std::fs::read_to_string(dir.path().join("re2/validate.csv")).unwrap();
    let (header2, row2) = csv2.split_once('\n').unwrap();
    let g = |name: &str| field(header2, row2.trim_end(), name);
    assert_eq!(g("measured_secs"), f("measured_secs"));
    let no_compute = simulate_with(
        dir.path(),
        "ring-n2-f2",
        "fold2.xml",
        "cal/fold2/smpi.cfg",
        &["--cfg", "smpi/simulate-computation:no"],
    );
    close(
        g("predicted_secs").parse().unwrap(),
        no_compute,
        1e-9,
        "re-predicted without computation",
    );
    assert!(no_compute < folded, "{no_compute} vs {folded}");

    // `--pin`: the folded runs pinned, named so, replayed with `fold2-pinned` (fold2 with
    // `timeless/pin-ranks`: the kept trace's `simulate` with that setting), and re-predicted
    // by `--from` byte for byte.
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "-n",
            "2",
            "--fold",
            "2",
            "--pin",
            "--reps",
            "1",
            "--compute-speed",
            "kernel",
            "--calibration",
            "cal",
            "--out",
            "pin",
            "--",
            ring.to_str().unwrap(),
            "3",
            "100000",
            "200000000",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let pcsv = std::fs::read_to_string(dir.path().join("pin/validate.csv")).unwrap();
    let (ph, prow) = pcsv.split_once('\n').unwrap();
    let p = |name: &str| field(ph, prow.trim_end(), name);
    assert_eq!(
        (p("mode"), p("trace_mode"), p("calibration")),
        (
            "folded x2 pinned",
            "folded x2 on 1 core pinned",
            "fold2-pinned"
        )
    );
    let list = "pin/traces/ring-n2-f2/trace-list.txt";
    let pinned = simulate_list(
        dir.path(),
        list,
        "fold2.xml",
        "cal/fold2/hostfile",
        "cal/fold2/smpi.cfg",
        &["--cfg", "timeless/pin-ranks:yes"],
    );
    close(
        p("predicted_secs").parse().unwrap(),
        pinned,
        1e-9,
        "pinned, fold2-pinned calibration",
    );
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "--from",
            "pin",
            "--compute-speed",
            "kernel",
            "--calibration",
            "cal",
            "--out",
            "pin-re",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pin-re/validate.csv")).unwrap(),
        pcsv
    );
    // A fold calibration measured pinned (`calibrate network --fold 2 --pin`, here 40 µs of
    // latency) is what `fold2-pinned` then replays with, its hosts at the base speed.
    calibration_into(dir.path(), "cal/fold2-pinned", 40e-6, "2e9");
    let pxml = std::fs::read_to_string(dir.path().join("cal/fold2-pinned/platform.xml")).unwrap();
    std::fs::write(
        dir.path().join("fold2-pinned.xml"),
        pxml.replace("speed=\"2000000000f\"", "speed=\"1000000000f\""),
    )
    .unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "--from",
            "pin",
            "--compute-speed",
            "kernel",
            "--calibration",
            "cal",
            "--out",
            "pin-own",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let ocsv = std::fs::read_to_string(dir.path().join("pin-own/validate.csv")).unwrap();
    let (oh, orow) = ocsv.split_once('\n').unwrap();
    let own: f64 = field(oh, orow.trim_end(), "predicted_secs")
        .parse()
        .unwrap();
    let measured_pinned = simulate_list(
        dir.path(),
        list,
        "fold2-pinned.xml",
        "cal/fold2-pinned/hostfile",
        "cal/fold2-pinned/smpi.cfg",
        &["--cfg", "timeless/pin-ranks:yes"],
    );
    close(
        own,
        measured_pinned,
        1e-9,
        "pinned, measured fold2-pinned calibration",
    );
    // 3 rounds of 2 messages, each 20 µs later than with fold2.
    let fold2_pinned: f64 = p("predicted_secs").parse().unwrap();
    assert!(own - fold2_pinned > 6.0 * 19e-6, "{own} vs {fold2_pinned}");
    // An earlier validation that is not one: exit 2 naming the file (and line).
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "--from",
            "empty",
            "--calibration",
            "cal",
            "--out",
            "x",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("validate.csv"), "{err}");
    let bad = csv.replace("ring,2,", "ring,two,");
    std::fs::write(dir.path().join("val/validate.csv"), bad).unwrap();
    let (_, err, code) = repredict("re3", &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("val/validate.csv:2: ranks `two` is not a number >= 1"),
        "{err}"
    );

    // Three traced runs (`--traces 3`): each kept in its own directory, the prediction that
    // of the median one (the three replays of the kept traces, sorted), and `--from`
    // re-predicts the same table from the three.
    std::fs::remove_dir_all(dir.path().join("val")).unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "-n",
            "2",
            "--reps",
            "2",
            "--traces",
            "3",
            "--compute-speed",
            "kernel",
            "--calibration",
            "cal",
            "--out",
            "val",
            "--",
            ring.to_str().unwrap(),
            "3",
            "100000",
            "200000000",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!dir
        .path()
        .join("val/traces/ring-n2/trace-list.txt")
        .exists());
    let mut each: Vec<f64> = ["1", "2", "3"]
        .iter()
        .map(|i| {
            simulate_with(
                dir.path(),
                &format!("ring-n2/{i}"),
                "cal/platform.xml",
                "cal/smpi.cfg",
                &[],
            )
        })
        .collect();
    each.sort_by(f64::total_cmp);
    let csv3 = std::fs::read_to_string(dir.path().join("val/validate.csv")).unwrap();
    let (header3, row3) = csv3.split_once('\n').unwrap();
    let h = |name: &str| field(header3, row3.trim_end(), name);
    close(
        h("predicted_secs").parse().unwrap(),
        each[1],
        1e-9,
        "median of three traced runs",
    );
    assert_eq!(h("measured_secs").split(' ').count(), 2, "{row3}");
    let (_, err, code) = repredict("re4", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("re4/validate.csv")).unwrap(),
        csv3
    );
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "--traces",
            "0",
            "--calibration",
            "cal",
            "--out",
            "x",
            "--",
            "true",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--traces"), "{err}");

    // A program that fails under the launcher: exit 1 naming the run, no table written.
    std::fs::remove_dir_all(dir.path().join("val")).unwrap();
    let (_, err, code) = timeless(
        dir.path(),
        &[
            "validate",
            "-n",
            "2",
            "--reps",
            "1",
            "--calibration",
            "cal",
            "--out",
            "val",
            "--",
            "false",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("failed"), "{err}");
    assert!(!dir.path().join("val/validate.csv").exists());
}
