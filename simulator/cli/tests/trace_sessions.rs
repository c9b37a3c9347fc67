//! MPI-4 sessions (issue 18), under MPICH >= 4.0 where it is installed: a program started with
//! `MPI_Session_init` is traced in the ranks of the `mpi://WORLD` process set, and one mixing
//! sessions and `MPI_Init` from the first start to the last end. Skipped with a notice
//! without MPICH >= 4.0. The MPICH tracer and launcher are `common::trace`'s.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::mpi::{root, text, MPI_JOBS};
use common::trace::{
    mpich_tracer_or_skip, plain_mpich, simulate_json, summary_actions, tmp, trace_mpich,
};

/// Builds `programs` of validation/programs with MPICH's `mpicc.mpich` into `build`; `None`
/// (with a notice) when MPICH has no MPI-4 sessions (before 4.0), which the Makefile reports.
fn mpich_sessions_programs(build: &Path, programs: &[&str]) -> Option<()> {
    let out = Command::new("make")
        .arg("-C")
        .arg(root().join("validation/programs"))
        .arg(format!("BUILD={}", build.display()))
        .arg("MPICC=mpicc.mpich")
        .args(programs.iter().map(|p| format!("{}/{p}", build.display())))
        .output()
        .expect("make");
    let (o, e) = text(&out);
    if o.contains("sessions: not built") {
        eprintln!("mpicc.mpich has no MPI-4 sessions (MPICH < 4.0): sessions test skipped\n{o}");
        return None;
    }
    assert!(out.status.success(), "{o}{e}");
    Some(())
}

/// The MPICH tracer and the directory of the sessions `programs` built with MPICH; `None`
/// (with a notice) without MPICH >= 4.0.
fn sessions_setup(programs: &[&str]) -> Option<(&'static Path, PathBuf)> {
    let lib = mpich_tracer_or_skip("sessions")?;
    let build = tmp().join("programs-mpich-sessions");
    mpich_sessions_programs(&build, programs)?;
    Some((lib, build))
}

/// Each rank's lines other than `compute` and comments.
fn records_but_compute(dir: &Path, np: usize) -> Vec<Vec<String>> {
    (0..np)
        .map(|r| {
            std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#') && l.split_whitespace().nth(1) != Some("compute"))
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// Issue 18: an MPI-4 sessions program (validation/programs/sessions.c: `MPI_Session_init`,
/// never `MPI_Init`) under MPICH >= 4.0 is traced in the ranks of the `mpi://WORLD` process set,
/// its communicators made with `MPI_Comm_create_from_group` described by `comm_def` records,
/// and the trace replays. Skipped with a notice without MPICH >= 4.0.
///
/// Expected records of world rank r of 4 (compute left out), from the program: three
/// communicators, 1 = the WORLD process set {0,1,2,3}, 2 = SELF {r}, 3 = the world group
/// reversed {3,2,1,0}; then 4 rounds of the ring on comm 3, whose rank k is world rank 3-k:
/// rank k sends to comm rank k+1 (world rank 3-(k+1 mod 4)) and receives from k-1 (world
/// 3-(k-1 mod 4)), comm rank 0 (world 3) sending first; one int to itself on comm 2 (`irecv`,
/// `send`, `wait`, tag 1, datatype id 1 = `MPI_INT`); `MPI_Reduce` of one int to root 0 on comm 1.
///
/// Replay on platforms/mycluster.xml (README "Worked example"): one 1e6-byte message between two
/// hosts takes 11.6436 x 3 x 16.67 us (latency x `smpi/lat-factor`) + (1e6 + 16) B /
/// (0.940694 x 125e6 B/s) (`smpi/bw-factor`) = 0.582296 ms + 8.504496 ms = 9.086792 ms, and the
/// ring is serial: 4 rounds x 4 hops = 16 messages, 145.388673 ms when the ring's records are
/// replayed alone (the trace without its compute, self message and reduce).
#[test]
fn a_sessions_program_is_traced_in_the_ranks_of_the_world_process_set() {
    let Some((lib, build)) = sessions_setup(&["sessions"]) else {
        return;
    };
    let exe = build.join("sessions");
    let dir = tmp().join("mpich-sessions");
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let o = trace_mpich(lib, 4, &["--ref-speed", "1e9"], &dir, &exe, &[]);
    let program_out = &o[..o.find("Traced 4 ranks into").expect("summary")];
    assert_eq!(
        program_out,
        "sessions: 4 rounds of 1000000 bytes on 4 ranks, reversed ring, rank sum 6: ok\n"
    );
    assert_eq!(program_out, plain_mpich(&exe, 4));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trace-meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["started_by"], "MPI_Session_init");
    assert!(meta["world"]
        .as_str()
        .unwrap()
        .starts_with("the mpi://WORLD process set"));
    // 16 ring messages of 1e6 bytes and 4 self messages of one 4-byte int.
    assert!(o.contains(" 16000016 point-to-point bytes sent, "), "{o}");
    let records = records_but_compute(&dir, 4);
    for (r, lines) in records.iter().enumerate() {
        let k = 3 - r; // rank in the reversed communicator
        let (next, prev) = (3 - (k + 1) % 4, 3 - (k + 3) % 4);
        let send = format!("{r} send {next} 0 1000000 6 comm=3");
        let recv = format!("{r} recv {prev} 0 1000000 6 comm=3");
        let mut want = vec![
            format!("{r} init"),
            format!("{r} comm_def 1 4 0 1 2 3"),
            format!("{r} comm_def 2 1 {r}"),
            format!("{r} comm_def 3 4 3 2 1 0"),
        ];
        for _ in 0..4 {
            if k == 0 {
                want.extend([send.clone(), recv.clone()]);
            } else {
                want.extend([recv.clone(), send.clone()]);
            }
        }
        want.extend([
            format!("{r} irecv {r} 1 1 1 comm=2"),
            format!("{r} send {r} 1 1 1 comm=2"),
            format!("{r} wait {r} {r} 1 comm=2"),
            format!("{r} reduce 1 0 0 1 comm=1"),
            format!("{r} finalize"),
        ]);
        assert_eq!(lines, &want, "rank {r}");
    }
    // The whole trace replays, every action.
    let actions = summary_actions(&o);
    let v = simulate_json(&dir.join("trace-list.txt"), "sessions", &[]);
    assert_eq!(v["actions"].as_u64(), Some(actions));
    // The ring alone: the records above without the self message and the reduce.
    let ring = tmp().join("mpich-sessions-ring");
    std::fs::create_dir_all(&ring).unwrap();
    for (r, lines) in records.iter().enumerate() {
        let kept: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !l.ends_with("comm=2") && !l.contains(" reduce "))
            .collect();
        std::fs::write(ring.join(format!("rank-{r}.txt")), kept.join("\n") + "\n").unwrap();
    }
    std::fs::copy(dir.join("trace-list.txt"), ring.join("trace-list.txt")).unwrap();
    let v = simulate_json(&ring.join("trace-list.txt"), "sessions ring", &[]);
    let hop = 11.6436 * 3.0 * 16.67e-6 + 1_000_016.0 / (0.940694 * 125e6);
    let want = 16.0 * hop; // 0.145388672849 s
    let got = v["simulated_time"].as_f64().unwrap();
    assert!(
        ((got - want) / want).abs() < 1e-9,
        "ring replay {got} s, hand-derived {want} s"
    );
    assert_eq!(v["actions"].as_u64(), Some(4 * (4 + 8 + 1)));
}

/// A program mixing sessions and the world model (validation/programs/sessions_mixed.c) in
/// the three orders of its argument, under MPICH >= 4.0: the tracer starts at the first of
/// `MPI_Session_init` and `MPI_Init` and ends at the last of `MPI_Session_finalize` and
/// `MPI_Finalize`, so every rank records, in program order, the session communicator's
/// `comm_def` (id 1, the world process set {0,1}), its barrier, the `MPI_COMM_WORLD` barrier,
/// the session communicator's second barrier, and `finalize` ("sf": the last barrier comes
/// after `MPI_Finalize`, while the session is still open). Skipped without MPICH >= 4.0.
#[test]
fn a_program_mixing_sessions_and_mpi_init_is_traced_from_the_first_start_to_the_last_end() {
    let Some((lib, build)) = sessions_setup(&["sessions_mixed"]) else {
        return;
    };
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    for (order, started_by) in [
        ("si", "MPI_Session_init"),
        ("sf", "MPI_Session_init"),
        ("is", "MPI_Init"),
    ] {
        let dir = tmp().join(format!("mpich-sessions-mixed-{order}"));
        let o = trace_mpich(
            lib,
            2,
            &["--ref-speed", "1e9"],
            &dir,
            &build.join("sessions_mixed"),
            &[order],
        );
        assert!(
            o.starts_with(&format!("sessions_mixed {order}: done\n")),
            "{o}"
        );
        let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
        assert!(
            meta.contains(&format!("\"started_by\": \"{started_by}\"")),
            "{order}: {meta}"
        );
        for (r, lines) in records_but_compute(&dir, 2).iter().enumerate() {
            let want: Vec<String> = [
                "init",
                "comm_def 1 2 0 1",
                "barrier comm=1",
                "barrier",
                "barrier comm=1",
                "finalize",
            ]
            .iter()
            .map(|l| format!("{r} {l}"))
            .collect();
            assert_eq!(lines, &want, "{order}: rank {r}");
        }
    }
}
