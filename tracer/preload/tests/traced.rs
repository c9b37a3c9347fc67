//! End-to-end tests: build the MPI programs of `validation/programs`, run them under `mpirun`
//! with the tracer preloaded, and check the traces: every line decodes with `timeless-trace`,
//! actions per kind, bytes sent and received per pair of ranks, real sources and tags for
//! wildcard receives, request bookkeeping, and that SimGrid 3.32's `smpirun -replay` accepts
//! the traces (when `smpirun` is installed).
//!
//! Needs `mpicc`, `mpif90` and `mpirun` (Debian: libopenmpi-dev openmpi-bin gfortran).
//!
//! Shared set-up and checks: `common`; the failure paths (an unwritable directory, a panic, an
//! abort, killed ranks) and the gather over MPI: `failures.rs`; sub-communicators: `comms.rs`.

mod common;

use std::collections::BTreeMap;

use common::*;
use timeless_trace::{Action, Datatype, RecvCount};

#[test]
fn ring_traces_and_replays() {
    let run = trace("ring", "ring", 4, &[], &[]);
    assert_ok(&run);
    assert!(run
        .stdout()
        .contains("ring: 4 rounds of 1000000 bytes on 4 ranks"));
    for r in 0..4usize {
        assert_eq!(run.count(r, "send"), 4, "rank {r}");
        assert_eq!(run.count(r, "recv"), 4, "rank {r}");
        let peer_of = |a: &Action| match a {
            Action::Send { dst, count, dt, .. } => Some(("send", *dst, bytes(*count, *dt))),
            Action::Recv {
                src,
                count: RecvCount::Count(c),
                dt,
                ..
            } => Some(("recv", *src, bytes(*c, *dt))),
            _ => None,
        };
        for (kind, peer, b) in run.actions[r].iter().filter_map(peer_of) {
            let expected = if kind == "send" {
                (r as u32 + 1) % 4
            } else {
                (r as u32 + 3) % 4
            };
            assert_eq!((peer, b), (expected, 1_000_000), "rank {r} {kind}");
        }
        // Each round's burst holds the program's 1 Mflop loop: several compute records, and
        // at least one large one.
        let flops: Vec<f64> = run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Compute { flops } => Some(*flops),
                _ => None,
            })
            .collect();
        assert!(
            flops.iter().filter(|&&f| f > 2e5).count() >= 4,
            "rank {r} bursts: {flops:?}"
        );
    }
    assert_pairs_match(&run);
    let list = run.file("trace-list.txt");
    assert_eq!(list, "rank-0.txt\nrank-1.txt\nrank-2.txt\nrank-3.txt\n");
    let meta = run.file("trace-meta.json");
    for key in [
        "\"ranks\": 4",
        "\"mpi_library\": \"Open MPI",
        "\"acquisition_mode\"",
        "\"reference_speed_flops_per_sec\"",
        "\"per_event_secs_median\"",
        "\"declared_resolution_secs\"",
        "\"command_line\"",
        "\"tracer\": \"timeless-preload",
    ] {
        assert!(meta.contains(key), "metadata lacks {key}:\n{meta}");
    }
    assert_simgrid_replays(&run);
}

#[test]
fn stencil_nonblocking_exchange_with_derived_columns() {
    let run = trace("stencil2d", "stencil2d", 4, &["32", "20"], &[]);
    assert_ok(&run);
    // 2 x 2 grid: every rank has one north/south and one east/west neighbour.
    for r in 0..4usize {
        assert_eq!(run.count(r, "isend"), 40, "rank {r}");
        assert_eq!(run.count(r, "irecv"), 40, "rank {r}");
        assert_eq!(run.count(r, "waitall"), 20, "rank {r}");
        assert_eq!(run.count(r, "allreduce"), 2, "rank {r}");
        // Rows are 32 MPI_DOUBLE; columns a derived vector type: 32 x 8 bytes as MPI_BYTE.
        let column_bytes = run.actions[r].iter().any(|a| {
            matches!(
                a,
                Action::Send {
                    count: 256,
                    dt: Some(Datatype::BYTE),
                    blocking: false,
                    ..
                }
            )
        });
        let rows = run.actions[r].iter().any(|a| {
            matches!(
                a,
                Action::Send {
                    count: 32,
                    dt: Some(Datatype::DOUBLE),
                    blocking: false,
                    ..
                }
            )
        });
        assert!(
            column_bytes && rows,
            "rank {r}: {:?}",
            &run.actions[r][..12]
        );
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

/// stencil3d on 8 ranks: `MPI_Dims_create` gives a periodic 2 x 2 x 2 grid, so rank r's
/// neighbours across the x, y and z faces are r ^ 4, r ^ 2 and r ^ 1 (world rank =
/// (x·2 + y)·2 + z), each one on both sides. Per iteration, face f (0 = −x, 1 = +x, ... 5 = +z)
/// receives from the neighbour across f with tag f and sends to it with tag f ^ 1, n·n = 36
/// MPI_DOUBLE; one waitall; one allreduce at the end.
#[test]
fn stencil3d_exchanges_six_faces_with_its_periodic_neighbours() {
    let iters = 7usize;
    let run = trace("stencil3d", "stencil3d", 8, &["6", "7"], &[]);
    assert_ok(&run);
    assert!(
        run.stdout().contains("stencil3d: 2 x 2 x 2 ranks"),
        "{}",
        run.stdout()
    );
    for r in 0..8u32 {
        let ru = r as usize;
        assert_eq!(run.count(ru, "isend"), 6 * iters, "rank {r}");
        assert_eq!(run.count(ru, "irecv"), 6 * iters, "rank {r}");
        assert_eq!(run.count(ru, "waitall"), iters, "rank {r}");
        assert_eq!(run.count(ru, "allreduce"), 1, "rank {r}");
        let mut got: BTreeMap<(&str, u32, i32), usize> = BTreeMap::new();
        for a in &run.actions[ru] {
            let key = match a {
                Action::Send {
                    dst,
                    tag,
                    count: 36,
                    dt: Some(Datatype::DOUBLE),
                    blocking: false,
                } => ("isend", *dst, *tag),
                Action::Recv {
                    src,
                    tag,
                    count: RecvCount::Count(36),
                    dt: Some(Datatype::DOUBLE),
                    blocking: false,
                } => ("irecv", *src, *tag),
                Action::Send { .. } | Action::Recv { .. } => panic!("rank {r}: {a:?}"),
                _ => continue,
            };
            *got.entry(key).or_default() += 1;
        }
        let mut want = BTreeMap::new();
        for f in 0..6i32 {
            let peer = r ^ (4 >> (f / 2));
            want.insert(("irecv", peer, f), iters);
            want.insert(("isend", peer, f ^ 1), iters);
        }
        assert_eq!(got, want, "rank {r}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

#[test]
fn wildcard_receives_record_the_real_source_and_tag() {
    let run = trace("pi_mc", "pi_mc", 4, &["24", "20000"], &[]);
    assert_ok(&run);
    // Workers tag results 10 + rank: rank 0's receives must say who sent and with which tag.
    let mut results = 0;
    for a in &run.actions[0] {
        if let Action::Recv { src, tag, .. } = a {
            assert!((1..4).contains(src), "{a:?}");
            assert_eq!(*tag, 10 + *src as i32, "{a:?}");
            results += 1;
        }
    }
    assert_eq!(results, 24, "one receive per chunk");
    assert_eq!(
        run.count(0, "irecv"),
        23,
        "all but the first result through MPI_Irecv"
    );
    assert_eq!(run.count(0, "wait"), 23);
    assert!(
        !run.lines[0].iter().any(|l| l.contains("never completed")),
        "an irecv was left unresolved"
    );
    for r in 1..4usize {
        let probes = run.lines[r]
            .iter()
            .filter(|l| l.starts_with("# probe 0 "))
            .count();
        assert_eq!(
            probes,
            run.count(r, "recv"),
            "rank {r}: one probe per receive"
        );
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

#[test]
fn a_one_byte_buffer_writes_every_line_and_keeps_wildcard_holes_in_place() {
    let run = trace(
        "pi_mc_tiny_buffer",
        "pi_mc",
        3,
        &["8", "1000"],
        &[("TIMELESS_BUFFER_BYTES", "1")],
    );
    assert_ok(&run);
    let results = run.actions[0]
        .iter()
        .filter(|a| matches!(a, Action::Recv { src: 1 | 2, .. }))
        .count();
    assert_eq!(results, 8);
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
}

#[test]
fn every_traced_call_of_the_coverage_program() {
    let run = trace("coverage", "coverage", 4, &[], &[]);
    assert_ok(&run);
    for kw in [
        "send",
        "recv",
        "isend",
        "irecv",
        "wait",
        "waitall",
        "test",
        "sendRecv",
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "gatherv",
        "scatter",
        "scatterv",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "reducescatter",
        "scan",
        "exscan",
        "comm_split",
        "comm_dup",
    ] {
        for r in 0..4usize {
            assert!(run.count(r, kw) > 0, "rank {r} has no {kw}");
        }
    }
    let r0 = run.lines[0].join("\n");
    // Derived datatype: 2 x MPI_Type_contiguous(3, MPI_INT) = 24 bytes.
    assert!(r0.contains("0 bcast 24 0 6"), "{r0}");
    // Communicators: the even/odd split (1), the duplicate of the world (2), the create that
    // only rank 0 belongs to (3); each defined right after the call that created it.
    let def = |id: u32, m: &[u32]| CommDef {
        id,
        members: m.to_vec(),
    };
    // Then the MPI-3 section: the idup (4), the Cartesian grid (5), the even/odd split (6).
    let world = [0, 1, 2, 3];
    assert_eq!(
        run.comm_defs[0],
        vec![
            def(1, &[0, 2]),
            def(2, &world),
            def(3, &[0]),
            def(4, &world),
            def(5, &world),
            def(6, &[0, 2])
        ]
    );
    assert_eq!(
        run.comm_defs[1],
        vec![
            def(1, &[1, 3]),
            def(2, &world),
            def(3, &world),
            def(4, &world),
            def(5, &[1, 3])
        ]
    );
    assert!(r0.contains("0 comm_split\n0 comm_def 1 2 0 2\n"), "{r0}");
    assert!(r0.contains("0 comm_dup\n0 comm_def 2 4 0 1 2 3\n"), "{r0}");
    // The sub-communicator bcast: root is world rank 0 (rank 1's root is world rank 1).
    assert!(r0.contains("0 bcast 4 0 0 comm=1"), "{r0}");
    let r1 = run.lines[1].join("\n");
    assert!(r1.contains("1 bcast 4 1 0 comm=1"), "{r1}");
    assert!(r0.contains("0 allreduce 2 0 0 comm=2"), "{r0}");
    // Point-to-point on the split, in world ranks: tag 20 goes through isend/irecv/wait.
    assert!(r1.contains("1 isend 3 20 2 0 comm=1"), "{r1}");
    assert!(r1.contains("1 wait 1 3 20 comm=1"), "{r1}");
    assert_comms_agree(&run.comm_defs);
    // Matched probes: the receives name the sender and tag the probe matched.
    for r in 0..4u32 {
        let (prev, next) = ((r + 3) % 4, (r + 1) % 4);
        let text = run.lines[r as usize].join("\n");
        for expected in [
            format!("# mprobe {prev} 30"),
            format!("{r} recv {prev} 30 3 1"),
            format!("# improbe {next} 31"),
            format!("{r} irecv {next} 31 4 1"),
            format!("{r} wait {next} {r} 31"),
        ] {
            assert!(text.contains(&expected), "rank {r}: {expected}\n{text}");
        }
    }
    // MPI_IN_PLACE at the gather root sends the root's block of the receive buffer.
    assert_eq!(run.count(0, "gather"), 2);
    // Sendrecv from MPI_ANY_SOURCE with tag 5: expanded with the real source.
    assert!(r0.contains("0 irecv 3 5 6 1"), "{r0}");
    coverage_mpi3(&run);
    assert_pairs_match(&run);
    // The isend freed with MPI_Request_free stays in SimGrid's store (waited at the end).
    assert_requests_balanced(&run, 1);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

/// The MPI-3 section of `coverage` (4 ranks).
fn coverage_mpi3(run: &Run) {
    // Without the compute records, which fall between calls.
    let text = |r: usize| {
        run.lines[r]
            .iter()
            .filter(|l| !l.contains(" compute "))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    // MPI_Comm_idup: SimGrid's comm_dup and the new communicator's definition when posted.
    assert!(
        text(0).contains("0 comm_dup\n0 comm_def 4 4 0 1 2 3\n0 barrier comm=4\n"),
        "{}",
        text(0)
    );
    // MPI_Alltoallw in bytes: rank r sends 1 + r elements to peer i, ints (4 bytes) to even
    // peers, doubles (8) to odd ones, and receives 1 + j elements of its own parity's type
    // from peer j. Rank 0: sends 4 8 4 8 (24), receives 4 8 12 16 (40); rank 1: sends
    // 8 16 8 16 (48), receives 8 16 24 32 (80).
    assert!(
        text(0).contains("0 alltoallv 24 4 8 4 8 40 4 8 12 16 6 6\n"),
        "{}",
        text(0)
    );
    assert!(text(1).contains("1 alltoallv 48 8 16 8 16 80 8 16 24 32 6 6\n"));
    // Neighbourhood collectives on the 2 x 2 grid, periodic in dimension 0 only: rank 0 =
    // (0, 0) has world rank 2 on both sides of dimension 0 and rank 1 above it in dimension 1.
    // Tags: -1000 - 2d travelling down, -1001 - 2d travelling up (hooks::neighbor).
    let allgather = "0 irecv 2 -1001 2 1 comm=5\n0 irecv 2 -1000 2 1 comm=5\n\
        0 irecv 1 -1002 2 1 comm=5\n0 isend 2 -1000 2 1 comm=5\n0 isend 2 -1001 2 1 comm=5\n\
        0 isend 1 -1003 2 1 comm=5\n0 wait 2 0 -1001 comm=5\n0 wait 2 0 -1000 comm=5\n\
        0 wait 1 0 -1002 comm=5\n0 wait 0 2 -1000 comm=5\n0 wait 0 2 -1001 comm=5\n\
        0 wait 0 1 -1003 comm=5\n";
    assert!(text(0).contains(allgather), "{}", text(0));
    // The alltoall: the same messages with 3 ints.
    assert!(text(0).contains(&allgather.replace(" 2 1 comm", " 3 1 comm")));
    // Rank 3 = (1, 1): world rank 1 on both sides of dimension 0, rank 2 below it (its grid
    // is its communicator 4: rank 3 is not in MPI_Comm_create's communicator).
    assert!(
        text(3).contains(
            "3 irecv 1 -1001 2 1 comm=4\n3 irecv 1 -1000 2 1 comm=4\n\
             3 irecv 2 -1003 2 1 comm=4\n3 isend 1 -1000 2 1 comm=4\n\
             3 isend 1 -1001 2 1 comm=4\n3 isend 2 -1002 2 1 comm=4\n"
        ),
        "{}",
        text(3)
    );
    // MPI_Intercomm_create: a comment naming the local group, the intercommunicator's remote
    // group, and the exchange on it in world ranks.
    assert!(
        text(0).contains("# intercomm_create (tag 99): local group world ranks 0 2; not replayed"),
        "{}",
        text(0)
    );
    assert!(text(0).contains("with remote group world ranks 1 3"));
    assert!(text(1).contains("# intercomm_create (tag 99): local group world ranks 1 3;"));
    assert!(text(0).contains("0 isend 1 40 2 0\n"), "{}", text(0));
    assert!(text(3).contains("3 irecv 2 40 2 0\n"), "{}", text(3));
}

#[test]
fn fortran_calls_go_through_the_fortran_wrappers() {
    let run = trace("fortran_mix", "fortran_mix", 4, &["3"], &[]);
    assert_ok(&run);
    assert!(run.stdout().contains("fortran_mix: done on 4 ranks"));
    for r in 0..4usize {
        for (kw, n) in [
            ("send", 3),
            ("recv", 3),
            ("isend", 3 * 2 + 3 + 2),
            ("irecv", 3 * 2 + 3 + 2),
            ("alltoallv", 1),
            ("waitall", 3),
            ("bcast", 1),
            ("reduce", 1),
            ("allreduce", 1),
            ("gather", 1),
            ("alltoall", 1),
            ("barrier", 2),
            ("comm_split", 1),
        ] {
            assert_eq!(run.count(r, kw), n, "rank {r} {kw}");
        }
        // MPI_TEST loops until the message is there: one `test` per call, then one `wait`.
        assert!(run.count(r, "test") >= 1, "rank {r}");
        assert_eq!(
            run.count(r, "wait"),
            2 + 2 + 2 + 4,
            "rank {r}: sendrecv, waitany x2, test + wait, neighbour allgather"
        );
        // MPI_ALLTOALLW with MPI_INTEGER for every peer (handles converted one by one): 4 bytes
        // to and from each of the 4 ranks. The neighbour allgather on the periodic ring: one
        // MPI_INTEGER (id 47) from and to each side.
        let text = run.lines[r].join("\n");
        assert!(
            text.contains(&format!("{r} alltoallv 16 4 4 4 4 16 4 4 4 4 6 6")),
            "{text}"
        );
        let (prv, nxt) = ((r + 3) % 4, (r + 1) % 4);
        assert!(
            text.contains(&format!(
                "{r} irecv {prv} -1001 1 47 comm=2\n{r} irecv {nxt} -1000 1 47 comm=2\n\
                 {r} isend {prv} -1000 1 47 comm=2\n{r} isend {nxt} -1001 1 47 comm=2\n"
            )),
            "{text}"
        );
        // MPI_DOUBLE_PRECISION is written as id 40 (MPI_REAL8), MPI_INTEGER as 47 (INTEGER4).
        assert!(
            run.lines[r].iter().any(|l| l.ends_with(" 100 40")),
            "rank {r}"
        );
        assert!(
            run.lines[r]
                .iter()
                .any(|l| l.contains("gather 1 1 0 47 47")),
            "rank {r}"
        );
    }
    // Ranks 1..3 receive from MPI_ANY_SOURCE with MPI_STATUS_IGNORE: the source is still real.
    for r in 1..4u32 {
        let recvs: Vec<u32> = run.actions[r as usize]
            .iter()
            .filter_map(|a| match a {
                Action::Recv {
                    src,
                    blocking: true,
                    ..
                } => Some(*src),
                _ => None,
            })
            .collect();
        assert_eq!(recvs, vec![r - 1; 3], "rank {r}");
    }
    for r in 0..4u32 {
        let half: Vec<u32> = (0..4).filter(|w| w % 2 == r % 2).collect();
        assert_eq!(
            run.comm_defs[r as usize],
            vec![
                CommDef {
                    id: 1,
                    members: half
                },
                CommDef {
                    id: 2,
                    members: vec![0, 1, 2, 3]
                }
            ],
            "rank {r}"
        );
        let on_half: Vec<&Action> = run.actions[r as usize]
            .iter()
            .zip(&run.comms[r as usize])
            .filter(|(_, c)| **c == Some(1))
            .map(|(a, _)| a)
            .collect();
        assert_eq!(on_half, vec![&Action::Barrier], "rank {r}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

#[test]
fn fortran_2008_bindings_are_traced_through_open_mpi_s_common_implementation() {
    let run = trace("fortran_f08", "fortran_f08", 3, &[], &[]);
    assert_ok(&run);
    assert!(run.stdout().contains("fortran_f08: done on 3 ranks"));
    for r in 0..3u32 {
        let text = run.lines[r as usize].join("\n");
        let (prev, next) = ((r + 2) % 3, (r + 1) % 3);
        // The receive from MPI_ANY_SOURCE with MPI_STATUS_IGNORE still names its source.
        assert!(text.contains(&format!("{r} recv {prev} 1 50 40")), "{text}");
        assert!(text.contains(&format!("{r} send {next} 1 50 40")), "{text}");
        assert_eq!(run.count(r as usize, "waitall"), 1);
        assert!(text.contains(&format!("{r} allreduce 50 0 40")), "{text}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_simgrid_replays(&run);
}

#[test]
fn the_wavefront_pipeline_sends_each_boundary_once_per_plane_and_sweep() {
    // 2 x 2 grid, 48 x 48 blocks, 6 planes, 3 iterations: every rank has one downstream and
    // one upstream neighbour per direction it borders, i.e. 2 per sweep and plane.
    let run = trace("wavefront", "wavefront", 4, &["48", "6", "3"], &[]);
    assert_ok(&run);
    assert!(run
        .stdout()
        .contains("wavefront: 4 ranks on a 2x2 grid, n 48, nz 6, 3 iterations, norm"));
    for r in 0..4usize {
        assert_eq!(run.count(r, "send"), 36, "rank {r}");
        assert_eq!(run.count(r, "recv"), 36, "rank {r}");
        assert_eq!(run.count(r, "allreduce"), 3, "rank {r}");
        assert_eq!(run.count(r, "isend") + run.count(r, "irecv"), 0, "rank {r}");
        for a in &run.actions[r] {
            if let Action::Send { count, dt, .. } = a {
                assert_eq!((*count, *dt), (48, Some(Datatype::DOUBLE)), "rank {r}");
            }
        }
    }
    // Rank 3 (south-east corner) waits for its north (1) and west (2) neighbours first.
    let first_recvs: Vec<(u32, i32)> = run.actions[3]
        .iter()
        .filter_map(|a| match a {
            Action::Recv { src, tag, .. } => Some((*src, *tag)),
            _ => None,
        })
        .take(2)
        .collect();
    assert_eq!(first_recvs, vec![(1, 0), (2, 1000)]);
    // Rank 0 (north-west corner) first sends south (2) then east (1), plane 0.
    let first_sends: Vec<(u32, i32)> = run.actions[0]
        .iter()
        .filter_map(|a| match a {
            Action::Send { dst, tag, .. } => Some((*dst, *tag)),
            _ => None,
        })
        .take(2)
        .collect();
    assert_eq!(first_sends, vec![(2, 0), (1, 1000)]);
    assert_pairs_match(&run);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

/// Checks a pause/resume trace: messages of phases 1, 3 and 5 only, one heavy burst (phase
/// 1's; phases 2 and 4 ran paused), and the comments naming the switches.
fn assert_phases_1_3_5(run: &Run, pause: &str, resume: &str, info: &str) {
    for r in 0..run.nranks as usize {
        let tags: Vec<i32> = run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Send { tag, .. } => Some(*tag),
                _ => None,
            })
            .collect();
        assert_eq!(tags, vec![1, 3, 5], "rank {r}: sends");
        assert_eq!(run.count(r, "recv"), 3, "rank {r}");
        let flops: Vec<f64> = run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Compute { flops } => Some(*flops),
                _ => None,
            })
            .collect();
        let max = flops.iter().copied().fold(0.0, f64::max);
        assert_eq!(
            flops.iter().filter(|&&f| f > max / 4.0).count(),
            1,
            "rank {r}: one heavy burst: {flops:?}"
        );
        let text = run.lines[r].join("\n");
        for note in [
            format!("# tracing paused by {pause}"),
            format!("# tracing resumed by {resume}"),
            format!("# tracing paused by {info} TIMELESS_TRACING"),
            format!("# tracing resumed by {info} TIMELESS_TRACING"),
        ] {
            assert_eq!(text.matches(&note).count(), 1, "rank {r}: {note}\n{text}");
        }
    }
    assert_pairs_match(run);
    assert_collectives_agree(run);
}

#[test]
fn pcontrol_and_the_info_key_pause_and_resume_tracing_in_c() {
    let run = trace("tracing_control", "tracing_control", 3, &[], &[]);
    assert_ok(&run);
    // Phases 1..5 with values rank + phase, weighted by the phase: the ring shift.
    assert!(
        run.stdout()
            .contains("tracing_control: 3 ranks, checksum 210"),
        "{}",
        run.stdout()
    );
    assert_phases_1_3_5(&run, "MPI_Pcontrol(0)", "MPI_Pcontrol(1)", "MPI_Info_set");
    assert_simgrid_replays(&run);
}

#[test]
fn pcontrol_and_the_info_key_pause_and_resume_tracing_in_fortran() {
    let run = trace("fortran_control", "fortran_control", 3, &[], &[]);
    assert_ok(&run);
    assert!(
        run.stdout()
            .contains("fortran_control: 3 ranks, checksum 210"),
        "{}",
        run.stdout()
    );
    assert_phases_1_3_5(&run, "MPI_PCONTROL(0)", "MPI_PCONTROL(1)", "MPI_INFO_SET");
}

#[test]
fn persistent_requests_record_one_isend_or_irecv_per_start() {
    // 3 ranks, 2 iterations with MPI_Startall/MPI_Waitall, then one with MPI_Start/MPI_Wait.
    let run = trace("persistent", "persistent", 3, &["2", "10"], &[]);
    assert_ok(&run);
    assert!(
        run.stdout()
            .contains("persistent: 3 ranks, 2 iterations, total 182232.0"),
        "{}",
        run.stdout()
    );
    for r in 0..3u32 {
        let (left, right) = ((r + 2) % 3, (r + 1) % 3);
        assert_eq!(run.count(r as usize, "isend"), 6, "rank {r}");
        assert_eq!(run.count(r as usize, "irecv"), 6, "rank {r}");
        assert_eq!(run.count(r as usize, "waitall"), 2, "rank {r}");
        assert_eq!(run.count(r as usize, "wait"), 4, "rank {r}");
        // The MPI_ANY_SOURCE receive (tag 1) names the left neighbour each time it starts.
        let tag1: Vec<u32> = run.actions[r as usize]
            .iter()
            .filter_map(|a| match a {
                Action::Recv {
                    src,
                    tag: 1,
                    blocking: false,
                    ..
                } => Some(*src),
                _ => None,
            })
            .collect();
        assert_eq!(tag1, vec![left; 3], "rank {r}");
        let text = run.lines[r as usize].join("\n");
        assert!(
            text.contains(&format!(
                "{r} isend {right} 1 10 0\n{r} isend {left} 2 10 0"
            )),
            "{text}"
        );
        assert!(!text.contains("never completed"), "{text}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_simgrid_replays(&run);
}

/// The self-message loop of `callcost` (validation/tracing/run.py's per-call cost): one irecv,
/// send and wait per iteration, and the closing note of the chained CPU clock, which counts one
/// clock point at the entry and one at the exit of every traced call (start-up points too).
#[test]
fn the_callcost_loop_records_three_calls_per_iteration() {
    let run = trace("callcost", "callcost", 1, &["200"], &[]);
    assert_ok(&run);
    assert!(
        run.stdout().contains("callcost: 600 calls"),
        "{}",
        run.stdout()
    );
    assert_eq!(run.count(0, "irecv"), 200);
    assert_eq!(run.count(0, "send"), 200);
    assert_eq!(run.count(0, "wait"), 200);
    let text = run.lines[0].join("\n");
    assert!(text.contains("0 irecv 0 7 1 1\n"), "{text}");
    assert!(text.contains("0 wait 0 0 7\n"), "{text}");
    let note = run.lines[0]
        .iter()
        .find_map(|l| l.strip_prefix("# thread CPU clock: "))
        .expect("the clock note");
    let nums: Vec<u64> = note
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    // 601 traced calls (600 + MPI_Finalize), 2 points each.
    assert!(nums.len() >= 2 && nums[0] + nums[1] >= 1202, "{note}");
}
