//! Sub-communicators (trace extension `comm_def` / `comm=<id>`, README "Communicators").
//!
//! Golden: SimGrid 3.32 cannot replay sub-communicators, so the sub-communicator trace is built to
//! be equivalent to a world trace it can replay. `data/subcomm/world-*.txt` (2 ranks: bcast from
//! rank 1, allreduce, two isends to the same peer with tags 8 and 7, the matching recvs in the
//! opposite order, waitall, gather to rank 1) gave, with
//! `smpirun -np 2 -platform platforms/mycluster.xml -hostfile hostfile-2 -replay world-list.txt`,
//! rank 0 finishing at 0.01040760830631168 s and rank 1 at 0.01051750731258658 s.
//! `data/subcomm/sub-*.txt` runs the same program in a 4-rank world split into the
//! communicators [2, 0] and [1, 3] (comm rank order), plus a dup of each: the tags-8 message goes
//! on the dup with tag 7, so only per-communicator matching keeps the 10-byte receive from
//! matching the 1000-byte send (it would be truncated). On the symmetric cluster and with the
//! backbone far from saturation (2 flows of at most 125 MB/s on a 1.25 GB/s backbone), each
//! comm rank 0 (world 2 and 1) must finish as world rank 0 did, each comm rank 1 (world 0 and 3)
//! as world rank 1, whatever local ids each rank chose (rank 0 uses 4 and 9, rank 3 uses 3 and 5).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data(f: &str) -> String {
    format!("simulator/cli/tests/data/subcomm/{f}")
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

fn finish_times(list: &str, hostfile: &str) -> Vec<f64> {
    let (out, err, code) = run(&[
        "simulate",
        &data(list),
        "-p",
        "platforms/mycluster.xml",
        "--hostfile",
        &data(hostfile),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    v["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|r| r["finish_time"].as_f64().expect("finish_time"))
        .collect()
}

const SIMGRID_RANK0: f64 = 0.01040760830631168;
const SIMGRID_RANK1: f64 = 0.01051750731258658;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b
}

#[test]
fn world_reference_matches_simgrid() {
    let t = finish_times("world-list.txt", "hostfile-2");
    assert!(
        close(t[0], SIMGRID_RANK0) && close(t[1], SIMGRID_RANK1),
        "{t:?}"
    );
}

#[test]
fn sub_communicators_replay_as_their_world_equivalent() {
    let t = finish_times("sub-list.txt", "hostfile-4");
    // World ranks 2 and 1 are comm rank 0; 0 and 3 are comm rank 1.
    for (w, expect) in [
        (2, SIMGRID_RANK0),
        (1, SIMGRID_RANK0),
        (0, SIMGRID_RANK1),
        (3, SIMGRID_RANK1),
    ] {
        assert!(close(t[w], expect), "rank {w}: {} vs {expect}", t[w]);
    }
}

fn bad_trace(lines: &[&str]) -> (String, i32) {
    let dir = tempfile::tempdir().expect("tmp");
    let mut list = String::new();
    for r in 0..2 {
        let body: String = lines
            .iter()
            .map(|l| {
                format!(
                    "{}\n",
                    l.replace("R", &r.to_string())
                        .replace("P", &(1 - r).to_string())
                )
            })
            .collect();
        let p = dir.path().join(format!("r{r}.txt"));
        std::fs::write(&p, body).unwrap();
        list.push_str(&format!("{}\n", p.display()));
    }
    let lp = dir.path().join("list.txt");
    std::fs::write(&lp, list).unwrap();
    let hf = root().join(data("hostfile-2"));
    let (_, err, code) = run(&[
        "simulate",
        lp.to_str().unwrap(),
        "-p",
        "platforms/mycluster.xml",
        "--hostfile",
        hf.to_str().unwrap(),
    ]);
    (err, code)
}

#[test]
fn undefined_communicator_names_file_and_line() {
    let (err, code) = bad_trace(&["R init", "R send P 0 10 comm=3", "R finalize"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("r0.txt:2"), "{err}");
    assert!(err.contains("comm 3 is not"), "{err}");
}

#[test]
fn comm_field_on_compute_is_rejected() {
    let (err, code) = bad_trace(&["R init", "R compute 10 comm=0"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("r0.txt:2") && err.contains("no comm= field"),
        "{err}"
    );
}

#[test]
fn root_outside_the_communicator_is_an_error() {
    // Communicator {0} on rank 0 and {1} on rank 1 (a split into singletons): root P is not a member.
    let (err, code) = bad_trace(&["R init", "R comm_def 1 1 R", "R bcast 10 P comm=1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("root") && err.contains("not a member"),
        "{err}"
    );
}

#[test]
fn defining_a_communicator_one_is_not_in_is_an_error() {
    let (err, code) = bad_trace(&["R init", "R comm_def 1 1 P"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("without being one of its members"), "{err}");
}
