//! Measured communicator-centric profiles (`timeless trace --profile`) of real MPI programs:
//! validation/programs/commkinds.c and its Fortran twin commkinds_f.f90 (every kind of
//! communicator creation, one communication on each), and commfig1.c (001_* Fig. 1).
//! Expected names, sizes, calls and bytes are derived by hand from the programs below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

use common::mpi::{text, timeless_env, MPI_JOBS};
use timeless_profile::{store, Profile};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("profile-mpi")
}

fn programs() -> &'static Path {
    common::mpi::programs(&tmp())
}

/// Traces `program` on 4 ranks with `flag` (`--profile` or `--profile-only`); the profile.
fn profile_of(program: &str, flag: &str) -> (Profile, PathBuf) {
    let exe = programs().join(program);
    let dir = tmp().join(format!("{program}{flag}"));
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    // Open MPI 4.1's treematch topology component livelocks now and then in
    // MPI_Dist_graph_create with more ranks than cores (5 of 12 untraced runs of commkinds hung
    // here); the basic component does not.
    let out = timeless_env(
        &[
            "trace",
            "-n",
            "4",
            flag,
            "-o",
            dir.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ],
        &[("OMPI_MCA_topo", "basic")],
    );
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(o.contains("profile: "), "{o}");
    (store::read(&dir.join("profile.db")).expect("profile"), dir)
}

/// (calls, bytes sent, bytes received) per (communicator, operation).
fn per_op(p: &Profile) -> BTreeMap<(String, String), (u64, u64, u64)> {
    let mut m = BTreeMap::new();
    for r in &p.rows {
        let e = m.entry((r.comm.clone(), r.op.clone())).or_insert((0, 0, 0));
        e.0 += r.stats.calls;
        e.1 += r.stats.bytes_sent;
        e.2 += r.stats.bytes_recv;
        assert!(r.stats.time_min_secs <= r.stats.time_max_secs);
        assert!(r.stats.time_sum_secs >= 0.0);
    }
    m
}

/// The hand derivation for commkinds (4 ranks; "count" is how many communicators a process
/// belongs to at the call: W plus the non-null results of its earlier creations).
///
/// Names: cart_create (count 1) W_a1; cart_sub of its rows {0,1}, {2,3} (2) W_a1_b2.0,
/// W_a1_b2.2; split by parity (3) W_s3.0 = {0,2}, W_s3.1 = {1,3}; split_type, all on one node
/// (4) W_t4.0; dup (5) W_d5; idup (6) W_i6; create of {0,3} (7) W_c7.0, ranks 1 and 2 get
/// MPI_COMM_NULL. create_group on W_s3.1 by ranks 1 (count 1+6 = 7) and 3 (1+7 = 8): W_s3_u8.0
/// (world 1 is rank 0 of W_s3.1). intercomm_create of the halves: counts 8, 8, 7, 9 -> 9, named
/// from world 0's parent W_s3.0 where it is rank 0: W_s3_x9.0 (members: W_s3.0's group, then
/// the remote one). intercomm_merge: counts 9, 9, 8, 10 -> W_s3_x9_m10. graph_create of a ring:
/// counts 10, 10, 9, 11 -> W_r11; dist_graph_create_adjacent (12) W_j12; dist_graph_create (13)
/// W_g13.
///
/// Calls and bytes: allreduce of one 4-byte int on W_a1 (4 x 4); bcast of 8 bytes in each row
/// (the root records 0, the other 8); send/recv of 100 bytes in each half; barrier on W_t4.0;
/// alltoall of 4 bytes per peer on W_d5 (4 peers x 4 bytes x 4 ranks = 64); MPI_Wait on the
/// idup's request (a collective's request: on W) and allgather of 4 bytes on W_i6 (4 x 4);
/// sendrecv of 50 bytes each way on W_c7.0; isend/irecv of 10 bytes and 2 waitalls on
/// W_s3_u8.0; reduce of one double on the merged communicator (4 x 8); neighbour allgather and
/// alltoall of 4 bytes with the 2 ring neighbours on W_r11 and W_j12 (each rank sends and
/// receives 8: 32 / 32; Appendix A's Σ n_i m), a barrier on W_g13. Creation calls count on
/// their parent, MPI_Comm_free on the communicator freed.
fn expected_commkinds() -> BTreeMap<(String, String), (u64, u64, u64)> {
    let rows: &[(&str, &str, u64, u64, u64)] = &[
        ("W", "MPI_Cart_create", 4, 0, 0),
        ("W", "MPI_Comm_create", 4, 0, 0),
        ("W", "MPI_Comm_dup", 4, 0, 0),
        ("W", "MPI_Comm_idup", 4, 0, 0),
        ("W", "MPI_Comm_split", 4, 0, 0),
        ("W", "MPI_Comm_split_type", 4, 0, 0),
        ("W", "MPI_Dist_graph_create", 4, 0, 0),
        ("W", "MPI_Dist_graph_create_adjacent", 4, 0, 0),
        ("W", "MPI_Graph_create", 4, 0, 0),
        ("W", "MPI_Wait", 4, 0, 0),
        ("W_a1", "MPI_Allreduce", 4, 16, 0),
        ("W_a1", "MPI_Cart_sub", 4, 0, 0),
        ("W_a1", "MPI_Comm_free", 4, 0, 0),
        ("W_a1_b2.0", "MPI_Bcast", 2, 8, 0),
        ("W_a1_b2.0", "MPI_Comm_free", 2, 0, 0),
        ("W_a1_b2.2", "MPI_Bcast", 2, 8, 0),
        ("W_a1_b2.2", "MPI_Comm_free", 2, 0, 0),
        ("W_s3.0", "MPI_Comm_free", 2, 0, 0),
        ("W_s3.0", "MPI_Intercomm_create", 2, 0, 0),
        ("W_s3.0", "MPI_Recv", 1, 0, 100),
        ("W_s3.0", "MPI_Send", 1, 100, 0),
        ("W_s3.1", "MPI_Comm_create_group", 2, 0, 0),
        ("W_s3.1", "MPI_Comm_free", 2, 0, 0),
        ("W_s3.1", "MPI_Intercomm_create", 2, 0, 0),
        ("W_s3.1", "MPI_Recv", 1, 0, 100),
        ("W_s3.1", "MPI_Send", 1, 100, 0),
        ("W_t4.0", "MPI_Barrier", 4, 0, 0),
        ("W_t4.0", "MPI_Comm_free", 4, 0, 0),
        ("W_d5", "MPI_Alltoall", 4, 64, 0),
        ("W_d5", "MPI_Comm_free", 4, 0, 0),
        ("W_i6", "MPI_Allgather", 4, 16, 0),
        ("W_i6", "MPI_Comm_free", 4, 0, 0),
        ("W_c7.0", "MPI_Comm_free", 2, 0, 0),
        ("W_c7.0", "MPI_Sendrecv", 2, 100, 100),
        ("W_s3_u8.0", "MPI_Comm_free", 2, 0, 0),
        ("W_s3_u8.0", "MPI_Irecv", 1, 0, 10),
        ("W_s3_u8.0", "MPI_Isend", 1, 10, 0),
        ("W_s3_u8.0", "MPI_Waitall", 2, 0, 0),
        ("W_s3_x9.0", "MPI_Comm_free", 4, 0, 0),
        ("W_s3_x9.0", "MPI_Intercomm_merge", 4, 0, 0),
        ("W_s3_x9_m10", "MPI_Comm_free", 4, 0, 0),
        ("W_s3_x9_m10", "MPI_Reduce", 4, 32, 0),
        ("W_r11", "MPI_Comm_free", 4, 0, 0),
        ("W_r11", "MPI_Neighbor_allgather", 4, 32, 32),
        ("W_j12", "MPI_Comm_free", 4, 0, 0),
        ("W_j12", "MPI_Neighbor_alltoall", 4, 32, 32),
        ("W_g13", "MPI_Barrier", 4, 0, 0),
        ("W_g13", "MPI_Comm_free", 4, 0, 0),
    ];
    rows.iter()
        .map(|&(c, o, n, s, r)| ((c.to_string(), o.to_string()), (n, s, r)))
        .collect()
}

fn check_commkinds(p: &Profile) {
    let comms: Vec<(&str, Option<&str>, &[u32])> = p
        .comms
        .iter()
        .map(|c| (c.name.as_str(), c.parent.as_deref(), c.members.as_slice()))
        .collect();
    let expected: Vec<(&str, Option<&str>, &[u32])> = vec![
        ("W", None, &[0, 1, 2, 3]),
        ("W_a1", Some("W"), &[0, 1, 2, 3]),
        ("W_a1_b2.0", Some("W_a1"), &[0, 1]),
        ("W_a1_b2.2", Some("W_a1"), &[2, 3]),
        ("W_s3.0", Some("W"), &[0, 2]),
        ("W_s3.1", Some("W"), &[1, 3]),
        ("W_t4.0", Some("W"), &[0, 1, 2, 3]),
        ("W_d5", Some("W"), &[0, 1, 2, 3]),
        ("W_i6", Some("W"), &[0, 1, 2, 3]),
        ("W_c7.0", Some("W"), &[0, 3]),
        ("W_s3_u8.0", Some("W_s3.1"), &[1, 3]),
        ("W_s3_x9.0", Some("W_s3.0"), &[0, 2, 1, 3]),
        ("W_s3_x9_m10", Some("W_s3_x9.0"), &[0, 2, 1, 3]),
        ("W_r11", Some("W"), &[0, 1, 2, 3]),
        ("W_j12", Some("W"), &[0, 1, 2, 3]),
        ("W_g13", Some("W"), &[0, 1, 2, 3]),
    ];
    assert_eq!(comms, expected);
    assert_eq!(per_op(p), expected_commkinds());
    assert!(timeless_profile::check::p2p_balance(p).is_empty());
    assert_eq!(p.meta.ranks, 4);
    assert_eq!(p.meta.source, timeless_profile::Source::Measured);
}

#[test]
fn every_communicator_kind_in_c() {
    if !common::mpi::have_mpi("profile") {
        return;
    }
    let (p, dir) = profile_of("commkinds", "--profile");
    check_commkinds(&p);
    // The trace is there too, and names each rank's communicator ids like the profile.
    assert!(dir.join("rank-3.txt").is_file());
    let r3: Vec<(u32, &str)> = p
        .locals
        .iter()
        .filter(|l| l.rank == 3)
        .map(|l| (l.local, l.comm.as_str()))
        .collect();
    assert_eq!(r3[0], (1, "W_a1"));
    assert!(r3.contains(&(8, "W_s3_u8.0")), "{r3:?}");
}

#[test]
fn every_communicator_kind_in_fortran() {
    if !common::mpi::have_mpi("profile") {
        return;
    }
    let (p, _) = profile_of("commkinds_f", "--profile");
    check_commkinds(&p);
}

#[test]
fn profile_only_writes_no_trace() {
    if !common::mpi::have_mpi("profile") {
        return;
    }
    let (p, dir) = profile_of("commkinds", "--profile-only");
    check_commkinds(&p);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["profile.db"]);
}

/// 001_* Fig. 1: cart_create (count 1) W_a1; split into {P0,P1}, {P2,P3} (count 2) W_s2.0,
/// W_s2.2; dup of W_s2.0 by P0, P1 (count 3): W_s2_d3; create on W_s2.2 of P2 alone (count 3,
/// P2 is rank 0 of W_s2.2): W_s2_c3.0, the figure's names.
#[test]
fn figure_one_names() {
    if !common::mpi::have_mpi("profile") {
        return;
    }
    let (p, _) = profile_of("commfig1", "--profile");
    let mut names: Vec<&str> = p.comms.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["W", "W_a1", "W_s2.0", "W_s2.2", "W_s2_c3.0", "W_s2_d3"]
    );
    assert_eq!(p.comm("W_s2_c3.0").unwrap().members, [2]);
    assert_eq!(p.comm("W_s2_d3").unwrap().members, [0, 1]);
    // One barrier per member on each communicator.
    let ops = per_op(&p);
    for (c, n) in [
        ("W_a1", 4),
        ("W_s2.0", 2),
        ("W_s2.2", 2),
        ("W_s2_d3", 2),
        ("W_s2_c3.0", 1),
    ] {
        assert_eq!(ops[&(c.to_string(), "MPI_Barrier".to_string())].0, n, "{c}");
    }
}
