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
    let mut csv = String::from("op,size_bytes,time_secs\n");
    for k in 0..=20u32 {
        let s = 1u64 << k;
        let t = 2.0 * (2e-6 + (s as f64 + 16.0) / 1e9);
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
            "cal",
            "--speed",
            "1e9",
            "--cores",
            "2",
        ],
    );
    assert_eq!(code, 0, "{err}");
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
            "1000000",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ranks  mode"), "{out}");
    let csv = std::fs::read_to_string(dir.path().join("val/validate.csv")).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).expect("one row").split(',').collect();
    assert_eq!(row[0], "2");
    let predicted: f64 = row[6].parse().unwrap();
    assert!(predicted > 0.0, "{csv}");
    // The same trace, platform and configuration through `timeless simulate`.
    let (sim, err, code) = timeless(
        dir.path(),
        &[
            "simulate",
            "val/trace-n2/trace-list.txt",
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
            // `validate` replays the trace as recorded.
            "--no-compensation",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&sim).unwrap();
    let t = v["simulated_time"].as_f64().unwrap();
    assert!(
        (t - predicted).abs() <= 1e-9 * t,
        "validate {predicted} vs simulate {t}"
    );
}
