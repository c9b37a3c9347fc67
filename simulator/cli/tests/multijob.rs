//! `timeless simulate --jobs`: several jobs on one platform, end to end. Each job's end, time
//! and time alone equal SimGrid 3.32's (validation/multijob/cases/*/golden.txt, written by
//! validation/multijob/regenerate.py) to 1e-9; the Perfetto timeline has one process per job;
//! a bad description line is an input error naming the file and line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/multijob/cases")
}

fn timeless(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run timeless")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-3)
}

/// (job name, seconds) per job.
type PerJob = Vec<(String, f64)>;

/// Per job: the latest end of its ranks and its `alone` time, and the makespan, from
/// `golden.txt`.
fn golden(case: &Path) -> (PerJob, PerJob, f64) {
    let text = std::fs::read_to_string(case.join("golden.txt")).unwrap();
    let mut ends: PerJob = Vec::new();
    let mut alone = Vec::new();
    let mut makespan = 0.0;
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f[0] {
            "makespan" => makespan = f[1].parse().unwrap(),
            "alone" => alone.push((f[1].to_string(), f[2].parse().unwrap())),
            job => {
                let end: f64 = f[3].parse().unwrap();
                match ends.iter_mut().find(|(j, _)| j == job) {
                    Some(e) => e.1 = e.1.max(end),
                    None => ends.push((job.to_string(), end)),
                }
            }
        }
    }
    (ends, alone, makespan)
}

#[test]
fn jobs_match_simgrid_and_report_slowdowns() {
    for name in ["shared-link", "staggered", "wrap"] {
        let dir = cases().join(name);
        let place = if dir.join("deployment.xml").exists() {
            ["-d", "deployment.xml"]
        } else {
            ["--hostfile", "hostfile"]
        };
        let out = timeless(
            &dir,
            &[
                "simulate",
                "--jobs",
                "description",
                "-p",
                "../platform.xml",
                place[0],
                place[1],
                "--format",
                "json",
            ],
        );
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let (ends, alone, makespan) = golden(&dir);
        let jobs = j["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), ends.len(), "{name}");
        for ((job, (gname, end)), (aname, a)) in jobs.iter().zip(&ends).zip(&alone) {
            assert_eq!(job["name"].as_str().unwrap(), gname);
            assert_eq!(gname, aname);
            let got_end = job["end_s"].as_f64().unwrap();
            assert!(
                close(got_end, *end),
                "{name} {gname}: end {got_end} vs {end}"
            );
            let got_alone = job["alone_s"].as_f64().unwrap();
            assert!(
                close(got_alone, *a),
                "{name} {gname}: alone {got_alone} vs {a}"
            );
            let slow = job["slowdown"].as_f64().unwrap();
            let time = job["time_s"].as_f64().unwrap();
            assert!(close(slow, time / a), "{name} {gname}: slowdown {slow}");
        }
        let end = jobs
            .iter()
            .map(|j| j["end_s"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert!(close(end, makespan), "{name}: makespan {end} vs {makespan}");
    }
}

#[test]
fn timeline_has_one_process_per_job() {
    let dir = cases().join("wrap");
    let tl = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("multijob-timeline.json");
    let out = timeless(
        &dir,
        &[
            "simulate",
            "--jobs",
            "description",
            "-p",
            "../platform.xml",
            "--hostfile",
            "hostfile",
            "--timeline",
            tl.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Jobs (rank: replay ranks above):"), "{text}");
    assert!(text.contains("  C               5"), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&tl).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["job A", "job B", "job C"]);
    // Job C's single rank is thread 0 of process 2; nothing runs on a thread 1 of process 2.
    assert!(events
        .iter()
        .any(|e| e["pid"] == 2 && e["tid"] == 0 && e["name"] == "compute"));
    assert!(!events.iter().any(|e| e["pid"] == 2 && e["tid"] == 1));
    // Job B has two ranks.
    assert!(events.iter().any(|e| e["pid"] == 1 && e["tid"] == 1));
}

#[test]
fn bad_description_is_an_input_error_with_its_line() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("multijob-bad");
    std::fs::create_dir_all(&tmp).unwrap();
    let desc = tmp.join("description");
    std::fs::write(&desc, "A x.txt 2\nB y.txt two\n").unwrap();
    let plat = cases().join("platform.xml");
    let out = timeless(
        &tmp,
        &[
            "simulate",
            "--jobs",
            desc.to_str().unwrap(),
            "-p",
            plat.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:2: ranks 'two' is not an integer >= 1",
            desc.display()
        )),
        "{err}"
    );
    // A trace argument and --jobs do not go together.
    let out = timeless(
        &tmp,
        &[
            "simulate",
            "t.txt",
            "--jobs",
            "d",
            "-p",
            plat.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}
