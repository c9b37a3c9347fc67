//! Simulated communicator-centric profiles (`timeless simulate --profile`, `timeless profile`).

use std::path::{Path, PathBuf};
use std::process::Command;

use timeless_profile::{store, Profile};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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

const SUB: &str = "simulator/cli/tests/data/subcomm";

/// Replays `list` with `--profile`, returns the JSON report and the profile.
fn simulate(
    list: &str,
    hostfile: &str,
    extra: &[&str],
    out: &Path,
) -> (serde_json::Value, Profile) {
    let out_s = out.to_str().unwrap();
    let mut args = vec![
        "simulate",
        list,
        "--hostfile",
        hostfile,
        "--format",
        "json",
        "--profile",
        out_s,
    ];
    if !extra.contains(&"-p") {
        args.extend_from_slice(&["-p", "platforms/mycluster.xml"]);
    }
    args.extend_from_slice(extra);
    let (stdout, err, code) = run(&args);
    assert_eq!(code, 0, "{err}");
    (
        serde_json::from_str(&stdout).expect("json"),
        store::read(out).expect("profile"),
    )
}

/// The 4-rank sub-communicator trace (see tests/comms.rs): communicators [2, 0] and [1, 3]
/// and a dup of each.
#[test]
fn simulated_profile_of_sub_communicators() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sim.db");
    let (report, p) = simulate(
        &format!("{SUB}/sub-list.txt"),
        &format!("{SUB}/hostfile-4"),
        &[],
        &db,
    );
    // No measured profile next to the trace: names from the members (U<size>.<min>), the dups
    // second.
    let names: Vec<&str> = p.comms.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["W", "U2.0", "U2.0#2", "U2.1", "U2.1#2"]);
    assert_eq!(p.comm("U2.0").unwrap().members, [2, 0]);

    // Calls and bytes, by hand from sub-*.txt (each rank: bcast 1e6 from comm rank 0, allreduce
    // 1000, isend 1000 on the dup and 10 on the split, recv 10 and 1000, waitall, gather 500):
    // on U2.0 the bcast root (world 2 is comm rank 0) records 0 bytes, world 0 1,000,000; each
    // of the two ranks 1000 for the allreduce, 500 for the gather, 10 sent and 10 received.
    let op = |comm: &str, op: &str| {
        p.rows
            .iter()
            .filter(|r| r.comm == comm && r.op == op)
            .fold((0u64, 0u64, 0u64), |a, r| {
                (
                    a.0 + r.stats.calls,
                    a.1 + r.stats.bytes_sent,
                    a.2 + r.stats.bytes_recv,
                )
            })
    };
    assert_eq!(op("U2.0", "MPI_Bcast"), (2, 1_000_000, 0));
    assert_eq!(op("U2.0", "MPI_Allreduce"), (2, 2000, 0));
    assert_eq!(op("U2.0", "MPI_Gather"), (2, 1000, 0));
    assert_eq!(op("U2.0", "MPI_Isend"), (2, 20, 0));
    assert_eq!(op("U2.0", "MPI_Recv"), (2, 0, 20));
    assert_eq!(op("U2.0#2", "MPI_Isend"), (2, 2000, 0));
    assert_eq!(op("U2.0#2", "MPI_Recv"), (2, 0, 2000));
    // waitall goes to the communicator of the oldest request it completes: the dup's isend.
    assert_eq!(op("U2.0#2", "MPI_Waitall"), (2, 0, 0));
    assert_eq!(op("W", "MPI_Waitall"), (0, 0, 0));
    assert!(timeless_profile::check::p2p_balance(&p).is_empty());

    // The profile's time per rank is the replay's communication + wait + overhead time plus
    // the reductions' flops (the only compute in this trace), i.e. the finish time.
    for r in report["ranks"].as_array().unwrap() {
        let rank = r["rank"].as_u64().unwrap() as u32;
        let acct = ["comm_time", "wait_time", "sleep_time", "compute_time"]
            .iter()
            .map(|k| r[k].as_f64().unwrap())
            .sum::<f64>();
        let finish = r["finish_time"].as_f64().unwrap();
        let prof: f64 = p
            .rows
            .iter()
            .filter(|x| x.rank == rank)
            .map(|x| x.stats.time_sum_secs)
            .sum();
        assert!(
            (prof - acct).abs() <= 1e-12,
            "rank {rank}: {prof} vs {acct}"
        );
        assert!(
            (prof - finish).abs() <= 1e-12,
            "rank {rank}: {prof} vs {finish}"
        );
    }

    // The same names as a measured profile gives them, when one is next to the trace.
    let tdir = dir.path().join("trace");
    std::fs::create_dir(&tdir).unwrap();
    for f in [
        "sub-0.txt",
        "sub-1.txt",
        "sub-2.txt",
        "sub-3.txt",
        "sub-list.txt",
    ] {
        std::fs::copy(root().join(SUB).join(f), tdir.join(f)).unwrap();
    }
    let mut measured = p.clone();
    measured.meta.source = timeless_profile::Source::Measured;
    let rename = |n: &str| match n {
        "U2.0" => "W_s1.0".to_string(),
        "U2.1" => "W_s1.1".to_string(),
        "U2.0#2" => "W_s1_d2".to_string(),
        "U2.1#2" => "W_s1.1_d2".to_string(),
        other => other.to_string(),
    };
    for c in &mut measured.comms {
        c.name = rename(&c.name);
    }
    for l in &mut measured.locals {
        l.comm = rename(&l.comm);
    }
    for r in &mut measured.rows {
        r.comm = rename(&r.comm);
    }
    store::write(&tdir.join("profile.db"), &measured).unwrap();
    let (_, named) = simulate(
        tdir.join("sub-list.txt").to_str().unwrap(),
        &format!("{SUB}/hostfile-4"),
        &[],
        &dir.path().join("named.db"),
    );
    let names: Vec<&str> = named.comms.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["W", "W_s1.0", "W_s1_d2", "W_s1.1", "W_s1.1_d2"]);
    assert_eq!(op("U2.0#2", "MPI_Recv"), {
        let r: Vec<_> = named
            .rows
            .iter()
            .filter(|r| r.comm == "W_s1_d2" && r.op == "MPI_Recv")
            .collect();
        (
            r.iter().map(|r| r.stats.calls).sum(),
            0,
            r.iter().map(|r| r.stats.bytes_recv).sum(),
        )
    });
}

/// 8 ranks split into A = {0..3} (a 1 MB bcast) and B = {4..7} (an allreduce): changing the
/// bcast algorithm moves time on A's MPI_Bcast only.
#[test]
fn collective_algorithm_change_shows_on_its_communicator_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut list = String::new();
    for r in 0..8u32 {
        let (id, members, body) = if r < 4 {
            (1, "4 0 1 2 3", "bcast 1000000 0 comm=1")
        } else {
            (1, "4 4 5 6 7", "allreduce 100000 0 comm=1")
        };
        let f = dir.path().join(format!("r{r}.txt"));
        std::fs::write(
            &f,
            format!(
                "{r} init\n{r} comm_split\n{r} comm_def {id} {members}\n{r} {body}\n{r} finalize\n"
            ),
        )
        .unwrap();
        list.push_str(&format!("{}\n", f.display()));
    }
    let list_path = dir.path().join("list.txt");
    std::fs::write(&list_path, list).unwrap();
    let hosts: String = (0..8)
        .map(|i| format!("mycluster-{i}.mysite.fr\n"))
        .collect();
    // mycluster.xml with 8 hosts instead of 4.
    let plat = std::fs::read_to_string(root().join("platforms/mycluster.xml"))
        .unwrap()
        .replace("radical=\"0-3\"", "radical=\"0-7\"");
    let plat_path = dir.path().join("platform.xml");
    std::fs::write(&plat_path, plat).unwrap();
    let pp = plat_path.to_str().unwrap();
    let hostfile = dir.path().join("hostfile");
    std::fs::write(&hostfile, hosts).unwrap();
    let (a_db, b_db) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let (l, h) = (list_path.to_str().unwrap(), hostfile.to_str().unwrap());
    simulate(
        l,
        h,
        &["-p", pp, "--cfg", "smpi/bcast:binomial_tree"],
        &a_db,
    );
    simulate(l, h, &["-p", pp, "--cfg", "smpi/bcast:flattree"], &b_db);
    let (out, err, code) = run(&[
        "profile",
        "diff",
        a_db.to_str().unwrap(),
        b_db.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v["diff (B - A)"].as_array().unwrap();
    // Sorted by |delta|: A's bcast first (a flat tree sends 3 x 1 MB from the root's link one
    // after another, a binomial tree 2 rounds), then B's allreduce unchanged.
    assert_eq!(rows[0]["comm"], "U4.0");
    assert_eq!(rows[0]["op"], "MPI_Bcast");
    assert!(rows[0]["delta_s"].as_f64().unwrap() > 1e-3, "{}", rows[0]);
    for r in &rows[1..] {
        assert_eq!(r["delta_s"].as_f64().unwrap(), 0.0, "{r}");
        assert_eq!(r["comm"], "U4.4");
    }
}

#[test]
fn profile_command_reads_and_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sim.db");
    simulate(
        &format!("{SUB}/sub-list.txt"),
        &format!("{SUB}/hostfile-4"),
        &[],
        &db,
    );
    let d = db.to_str().unwrap();
    let (out, err, code) = run(&["profile", d, "--view", "op", "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("table,comm,op,calls,bytes_sent,bytes_recv,time_min_s"));
    assert!(
        out.contains("by operation,U2.0,MPI_Bcast,2,1000000,0,"),
        "{out}"
    );
    let svg = dir.path().join("p.svg");
    let (_, err, code) = run(&["profile", d, "--plot", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("MPI_Bcast"));
    // A file that is not a profile: exit 2, one message naming it.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![7u8; 5000]).unwrap();
    let (_, err, code) = run(&["profile", junk.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("junk.db") && err.contains("not a timeless profile"),
        "{err}"
    );
}
