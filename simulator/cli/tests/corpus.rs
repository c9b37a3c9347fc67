//! Differential corpus: every case under `validation/corpus/` replayed by the `timeless` binary
//! must give SimGrid 3.32's simulated time (the golden `simgrid_time`, produced by
//! `validation/corpus/regenerate.sh`) to the precision SimGrid's number is stored with (12
//! significant digits: a relative 1e-11), and each rank's finish time (`simgrid_finish`, when
//! recorded) likewise. Each case runs twice: placed by its hostfile (as
//! SimGrid ran it) and by its deployment file.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Case {
    np: usize,
    platform: String,
    hostfile: String,
    deployment: String,
    traces: String,
    #[serde(default)]
    cfg: Vec<String>,
    simgrid_time: f64,
    #[serde(default)]
    simgrid_finish: Option<Vec<f64>>,
    /// Set when timeless deliberately differs from SimGrid 3.32 (a SimGrid bug we fix): the
    /// value timeless must give instead, with the reason in `differs_because`.
    #[serde(default)]
    timeless_time: Option<f64>,
}

/// Largest relative difference accepted: the goldens are written with 12 significant digits.
const TOLERANCE: f64 = 1e-11;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/corpus")
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

fn run(dir: &Path, case: &Case, placement: &[&str]) -> serde_json::Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timeless"));
    cmd.current_dir(dir)
        .arg("simulate")
        .arg(&case.traces)
        .args(["--platform", &case.platform])
        .args(placement)
        .args(["-n", &case.np.to_string(), "--format", "json"]);
    for c in &case.cfg {
        cmd.arg("--cfg").arg(c);
    }
    let out = cmd.output().expect("run timeless");
    assert!(
        out.status.success(),
        "{}: timeless failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

/// Every case directory, sorted.
fn case_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("case.toml").exists())
        .collect();
    dirs.sort();
    dirs
}

fn load(dir: &Path) -> Case {
    let text = std::fs::read_to_string(dir.join("case.toml")).expect("case.toml");
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// SimGrid's makespan for a case: the clock of the last `Simulation time` line of the command
/// `regenerate.sh` runs (`smpirun -np N -platform P -hostfile H -replay T [--cfg=..]`, clock
/// printed with 17 digits).
fn smpirun_makespan(dir: &Path, case: &Case) -> f64 {
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(dir)
        .args(["-np", &case.np.to_string()])
        .args(["-platform", &case.platform])
        .args(["-hostfile", &case.hostfile])
        .args(["-replay", &case.traces]);
    for c in &case.cfg {
        cmd.arg(format!("--cfg={c}"));
    }
    cmd.arg("--log=root.fmt:[%.17r]%e%m%n");
    let out = cmd.output().expect("run smpirun");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}: smpirun failed:\n{text}",
        dir.display()
    );
    text.lines()
        .rev()
        .filter(|l| l.contains("Simulation time"))
        .find_map(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{}: no 'Simulation time' line:\n{text}", dir.display()))
}

/// The stored goldens are what SimGrid prints now (so the replay is compared with SimGrid, not
/// with stale numbers). Needs smpirun (SimGrid 3.32); skipped with a notice without it.
#[test]
fn goldens_match_live_smpirun() {
    let available = Command::new("smpirun")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        eprintln!(
            "notice: smpirun not found; skipping the live SimGrid check of the corpus goldens"
        );
        return;
    }
    let mut failures = Vec::new();
    for dir in case_dirs() {
        let case = load(&dir);
        let live = smpirun_makespan(&dir, &case);
        if rel(live, case.simgrid_time) > TOLERANCE {
            failures.push(format!(
                "{}: SimGrid gives {live:.12e}, the golden is {:.12e}",
                dir.display(),
                case.simgrid_time
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_case_matches_simgrid() {
    let dirs = case_dirs();
    assert!(
        dirs.len() >= 30,
        "the corpus must hold at least 30 cases, found {}",
        dirs.len()
    );
    let mut failures = Vec::new();
    for dir in &dirs {
        let case = load(dir);
        let expected = case.timeless_time.unwrap_or(case.simgrid_time);
        for placement in [
            ["--hostfile", &case.hostfile],
            ["--deployment", &case.deployment],
        ] {
            let report = run(dir, &case, &placement);
            let got = report["simulated_time"].as_f64().expect("simulated_time");
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            if rel(got, expected) > TOLERANCE {
                failures.push(format!(
                    "{name} ({}): simulated {got:.12} vs golden {expected:.12}",
                    placement[0]
                ));
                continue;
            }
            if let (Some(fin), None) = (&case.simgrid_finish, case.timeless_time) {
                for (r, &want) in fin.iter().enumerate() {
                    let got = report["ranks"][r]["finish_time"]
                        .as_f64()
                        .expect("finish_time");
                    if rel(got, want) > TOLERANCE {
                        failures.push(format!(
                            "{name} ({}): rank {r} finishes at {got:.12}, SimGrid {want:.12}",
                            placement[0]
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatch(es):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
