//! End-to-end tests of the communicator extension: sub-communicators traced (every record
//! names its communicator, every `comm_def` agrees across its members) and the committed
//! commsplit trace checked against the identity rule. Set-up and checks: `common`.
//!
//! Needs `mpicc`, `mpif90` and `mpirun` (Debian: libopenmpi-dev openmpi-bin gfortran).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use timeless_trace::Action;

#[test]
fn the_committed_commsplit_trace_follows_the_communicator_identity_rule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/commsplit4");
    let defs: Vec<Vec<CommDef>> = (0..4)
        .map(|r| {
            std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .expect("committed trace")
                .lines()
                .filter_map(|l| split_comm(l).expect("valid record").0)
                .collect()
        })
        .collect();
    assert_eq!(defs[0].len(), 10);
    assert_eq!(defs[1].len(), 9);
    assert_comms_agree(&defs);
}

/// Actions per (keyword, communicator id) of one rank.
fn kinds(run: &Run, rank: usize) -> BTreeMap<(&'static str, Option<u32>), usize> {
    let mut m = BTreeMap::new();
    for (a, c) in run.actions[rank].iter().zip(&run.comms[rank]) {
        *m.entry((a.keyword(), *c)).or_insert(0) += 1;
    }
    m
}

#[test]
fn sub_communicators_are_defined_and_named_on_every_record() {
    // 2 x 2 grid: rank r is in row r / 2 and column r % 2.
    let run = trace("commsplit", "commsplit", 4, &["2"], &[]);
    assert_ok(&run);
    assert!(run
        .stdout()
        .contains("commsplit: 4 ranks on a 2x2 grid, 2 rounds, checksum"));
    for r in 0..4u32 {
        let (row, col) = (r / 2, r % 2);
        let row_members = vec![2 * row, 2 * row + 1];
        let def = |id: u32, members: Vec<u32>| CommDef { id, members };
        // In creation order: row split, column split, row duplicate, Cartesian grid, its row
        // slice, then MPI_COMM_SELF at first use.
        assert_eq!(
            run.comm_defs[r as usize],
            vec![
                def(1, row_members.clone()),
                def(2, vec![col, col + 2]),
                def(3, row_members.clone()),
                def(4, vec![0, 1, 2, 3]),
                def(5, row_members.clone()),
                def(6, vec![r]),
            ]
            .into_iter()
            .chain([def(7, vec![col, col + 2])])
            // The even ranks' communicator, made by them only.
            .chain((r % 2 == 0).then(|| def(8, vec![0, 2])))
            // The intercommunicator between the rows takes the next id (described by comments,
            // see below); then rows 0 and 1 merged, row 0 first.
            .chain([def(if r % 2 == 0 { 10 } else { 9 }, vec![0, 1, 2, 3])])
            // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): one machine, every rank.
            .chain([def(if r % 2 == 0 { 11 } else { 10 }, vec![0, 1, 2, 3])])
            .collect::<Vec<_>>(),
            "rank {r}"
        );
        let k = kinds(&run, r as usize);
        let expected: BTreeMap<(&str, Option<u32>), usize> = [
            (("init", None), 1),
            // SimGrid's no-op actions (3 comm_split, 2 comm_dup) decode as one kind.
            (("comm_size", None), 5),
            (("barrier", Some(7)), 1),
            (("bcast", Some(1)), 2),
            (("allreduce", Some(1)), 2),
            (("alltoall", Some(1)), 2),
            // Sendrecv with tag 7 → isend, irecv, wait, wait; then isend/irecv + waitall.
            (("isend", Some(1)), 4),
            (("irecv", Some(1)), 4),
            (("wait", Some(1)), 4),
            (("waitall", None), 2),
            (("reduce", Some(2)), 2),
            (("allgather", Some(2)), 2),
            (("allreduce", None), 2),
            (("barrier", Some(3)), 1),
            (("allreduce", Some(5)), 1),
            (("allreduce", Some(6)), 1),
            (("reduce", None), 1),
            (("finalize", None), 1),
        ]
        .into_iter()
        // Even ranks: on their own communicator (8), on the merged one (10), on the node (11);
        // odd ranks: on the merged one (9), on the node (10).
        .chain(if r % 2 == 0 {
            vec![
                (("allreduce", Some(8)), 1),
                (("allreduce", Some(10)), 1),
                (("barrier", Some(11)), 1),
            ]
        } else {
            vec![(("allreduce", Some(9)), 1), (("barrier", Some(10)), 1)]
        })
        .collect();
        let without_compute: BTreeMap<_, _> = k
            .into_iter()
            .filter(|((kw, _), _)| *kw != "compute")
            .collect();
        assert_eq!(without_compute, expected, "rank {r}");
        // MPI_Intercomm_create: the comment naming the local row, then the intercommunicator's.
        let (inter, other) = (if r % 2 == 0 { 9 } else { 8 }, 1 - row);
        let text = run.lines[r as usize].join("\n");
        assert!(
            text.contains(&format!(
                "# intercomm_create (tag 11): local group world ranks {} {}; not replayed: \
                 the leaders' exchange; point-to-point on the intercommunicator is written in \
                 world ranks, its collectives as comments\n# comm {inter} (intercommunicator) \
                 with remote group world ranks {} {}",
                2 * row,
                2 * row + 1,
                2 * other,
                2 * other + 1
            )),
            "rank {r}:\n{text}"
        );
        // Roots and peers are world ranks: the row's bcast root is its first rank, the
        // column's reduce root its last, and the ring shift's peer the other row member.
        let peer = 2 * row + (1 - col);
        for (a, c) in run.actions[r as usize].iter().zip(&run.comms[r as usize]) {
            match (a, c) {
                (Action::Bcast { root, .. }, Some(1)) => assert_eq!(*root, 2 * row),
                (Action::Reduce { root, .. }, Some(2)) => assert_eq!(*root, col + 2),
                (Action::Send { dst, .. }, Some(1)) => assert_eq!(*dst, peer),
                (Action::Recv { src, .. }, Some(1)) => assert_eq!(*src, peer, "wildcard source"),
                _ => {}
            }
        }
    }
    assert_comms_agree(&run.comm_defs);
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
}
