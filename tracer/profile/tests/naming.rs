//! mpisee names from hand-built creation logs; every expected name is derived in the comments.

use timeless_profile::naming::{name_all, Child, Event, Kind, NamingError, RankLog};

fn made(kind: Kind, parent: u32, local: u32, members: &[u32]) -> Event {
    Event::Created {
        kind,
        parent,
        child: Some(Child {
            local,
            members: members.to_vec(),
        }),
    }
}

fn null(kind: Kind, parent: u32) -> Event {
    Event::Created {
        kind,
        parent,
        child: None,
    }
}

fn names(n: &timeless_profile::naming::Naming) -> Vec<&str> {
    n.comms.iter().map(|c| c.name.as_str()).collect()
}

/// `001_*` Fig. 1: cart_create, split, then dup on {P0, P1} and create on {P2, P3}.
#[test]
fn figure_one() {
    use Kind::*;
    // Local ids: 1 = cart, 2 = split half, 3 = dup / create result.
    let p01 = || RankLog {
        events: vec![
            made(CartCreate, 0, 1, &[0, 1, 2, 3]),
            made(Split, 0, 2, &[0, 1]),
            made(Dup, 2, 3, &[0, 1]),
        ],
    };
    let logs = vec![
        p01(),
        p01(),
        RankLog {
            events: vec![
                made(CartCreate, 0, 1, &[0, 1, 2, 3]),
                made(Split, 0, 2, &[2, 3]),
                made(Create, 2, 3, &[2]),
            ],
        },
        RankLog {
            events: vec![
                made(CartCreate, 0, 1, &[0, 1, 2, 3]),
                made(Split, 0, 2, &[2, 3]),
                null(Create, 2),
            ],
        },
    ];
    let n = name_all(&logs).unwrap();
    // cart_create: everyone belongs to W only -> 1: W_a1. split: W and W_a1 -> 2; halves'
    // smallest W ranks 0 and 2: W_s2.0, W_s2.2. dup on W_s2.0: P0, P1 belong to W, W_a1,
    // W_s2.0 -> 3, no dot part: W_s2_d3. create on W_s2.2: 3, P2 is rank 0 of W_s2.2:
    // W_s2_c3.0 (the figure's name). Listed in the order the calls were matched: the create
    // completes (P3's MPI_COMM_NULL arrives) in the same sweep as the split, the dup after.
    assert_eq!(
        names(&n),
        ["W", "W_a1", "W_s2.0", "W_s2.2", "W_s2_c3.0", "W_s2_d3"]
    );
    assert_eq!(n.name(2, 3), Some("W_s2_c3.0"));
    assert_eq!(n.name(3, 3), None, "P3 got MPI_COMM_NULL");
    assert_eq!(n.name(1, 3), Some("W_s2_d3"));
    assert_eq!(n.comms[4].parent.as_deref(), Some("W_s2.2"));
    assert_eq!(n.comms[4].members, [2]);
}

/// Both halves of a split dup themselves: the short names would collide, so the second keeps
/// its parent's whole name.
#[test]
fn sibling_names_stay_unique() {
    use Kind::*;
    let log = |half: &[u32]| RankLog {
        events: vec![made(Split, 0, 1, half), made(Dup, 1, 2, half)],
    };
    let logs = vec![log(&[0, 1]), log(&[0, 1]), log(&[2, 3]), log(&[2, 3])];
    let n = name_all(&logs).unwrap();
    // split: 1 -> W_s1.0, W_s1.2; dups: 2 -> W_s1_d2 (the {0,1} half's, matched first) and
    // W_s1.2_d2.
    assert_eq!(names(&n), ["W", "W_s1.0", "W_s1.2", "W_s1_d2", "W_s1.2_d2"]);
    assert_eq!(n.name(3, 2), Some("W_s1.2_d2"));
}

/// Every creation kind on 4 ranks.
#[test]
fn every_kind() {
    use Kind::*;
    let all = [0u32, 1, 2, 3];
    let mut logs: Vec<RankLog> = (0..4).map(|_| RankLog::default()).collect();
    for (r, log) in logs.iter_mut().enumerate() {
        let r = r as u32;
        let e = &mut log.events;
        // 1: cart_create on W (count 1) -> W_a1.
        e.push(made(CartCreate, 0, 1, &all));
        // 2: cart_sub of the 2x2 grid into rows {0,1}, {2,3} (count 2) -> W_a1_b2.0, W_a1_b2.2.
        let row: &[u32] = if r < 2 { &[0, 1] } else { &[2, 3] };
        e.push(made(CartSub, 1, 2, row));
        // 3: split of W by parity (count 3) -> W_s3.0 = {0,2}, W_s3.1 = {1,3}.
        let par: &[u32] = if r & 1 == 0 { &[0, 2] } else { &[1, 3] };
        e.push(made(Split, 0, 3, par));
        // 4: split_type of W, one node (count 4) -> W_t4.0.
        e.push(made(SplitType, 0, 4, &all));
        // 5: dup of W (count 5) -> W_d5. 6: idup of W (count 6) -> W_i6.
        e.push(made(Dup, 0, 5, &all));
        e.push(made(Idup, 0, 6, &all));
        // 7: create on W of group {0,3} (count 7) -> W_c7.0; ranks 1, 2 get MPI_COMM_NULL.
        if r == 0 || r == 3 {
            e.push(made(Create, 0, 7, &[0, 3]));
        } else {
            e.push(null(Create, 0));
        }
        // 8: create_group on W_s3.1 by ranks 1 and 3 only. Counts: rank 1 has W + 6 = 7,
        // rank 3 has W + 7 = 8 -> 8; ranks 1, 3 are ranks 0, 1 of W_s3.1 -> W_s3_u8.0.
        if r % 2 == 1 {
            e.push(made(CreateGroup, 3, 8, &[1, 3]));
        }
        // 9: graph_create on W. Counts: rank 0: 1 + 7 = 8, rank 1: 1 + 7 = 8, rank 2: 1 + 6 = 7,
        // rank 3: 1 + 8 = 9 -> W_r9.
        e.push(made(GraphCreate, 0, 9, &all));
        // 10: dist_graph_create_adjacent (max count 10) -> W_j10; dist_graph_create -> W_g11.
        e.push(made(DistGraphAdjacent, 0, 10, &all));
        e.push(made(DistGraphCreate, 0, 11, &all));
        // 11: intercomm_create between W_s3.0 = {0,2} and W_s3.1 = {1,3}: local group first.
        // Counts now: rank 0: 1 + 10 = 11, rank 1: 11, rank 2: 10, rank 3: 12 -> 12. Named
        // from the parent of world rank 0 (W_s3.0), where the union's smallest rank is 0:
        // W_s3_x12.0.
        let inter: &[u32] = if r & 1 == 0 {
            &[0, 2, 1, 3]
        } else {
            &[1, 3, 0, 2]
        };
        e.push(made(IntercommCreate, 3, 12, inter));
        // 12: intercomm_merge of it (counts 12, 12, 11, 13 -> 13): W_s3_x12_m13.
        e.push(made(IntercommMerge, 12, 13, &all));
    }
    let n = name_all(&logs).unwrap();
    assert_eq!(
        names(&n),
        [
            "W",
            "W_a1",
            "W_a1_b2.0",
            "W_a1_b2.2",
            "W_s3.0",
            "W_s3.1",
            "W_t4.0",
            "W_d5",
            "W_i6",
            "W_c7.0",
            "W_s3_u8.0",
            "W_r9",
            "W_j10",
            "W_g11",
            "W_s3_x12.0",
            "W_s3_x12_m13",
        ]
    );
    // Every rank agrees; rank 2's local 3 is W_s3.0, rank 3's local 8 is W_s3_u8.0.
    assert_eq!(n.name(2, 3), Some("W_s3.0"));
    assert_eq!(n.name(3, 8), Some("W_s3_u8.0"));
    assert_eq!(n.name(1, 12), Some("W_s3_x12.0"));
    assert_eq!(
        n.comm_sizes(),
        [4, 4, 2, 2, 2, 2, 4, 4, 4, 2, 2, 4, 4, 4, 4, 4]
    );
}

trait Sizes {
    fn comm_sizes(&self) -> Vec<u32>;
}
impl Sizes for timeless_profile::naming::Naming {
    fn comm_sizes(&self) -> Vec<u32> {
        self.comms.iter().map(|c| c.size()).collect()
    }
}

#[test]
fn seen_communicators_and_errors() {
    use Kind::*;
    // MPI_COMM_SELF seen on two ranks: U1.0 and U1.1.
    let logs = vec![
        RankLog {
            events: vec![Event::Seen(Child {
                local: 1,
                members: vec![0],
            })],
        },
        RankLog {
            events: vec![Event::Seen(Child {
                local: 1,
                members: vec![1],
            })],
        },
    ];
    let n = name_all(&logs).unwrap();
    assert_eq!(names(&n), ["W", "U1.0", "U1.1"]);
    assert_eq!(n.comms[1].parent, None);

    // A sessions program: two communicators made from process sets, seen in use, with the
    // same members, {0, 1} in order then reversed, and a third {0, 1} in order again: three
    // communicators, each rank's local ids 1, 2, 3 mapping to them alike (ordered members
    // and occurrence index, as comm_def records are matched).
    let seen = |local, members: &[u32]| {
        Event::Seen(Child {
            local,
            members: members.to_vec(),
        })
    };
    let rank_log = || RankLog {
        events: vec![seen(1, &[0, 1]), seen(2, &[1, 0]), seen(3, &[0, 1])],
    };
    let n = name_all(&[rank_log(), rank_log()]).unwrap();
    assert_eq!(n.comms.len(), 4, "{:?}", names(&n));
    assert_eq!(n.comms[1].members, [0, 1]);
    assert_eq!(n.comms[2].members, [1, 0]);
    assert_eq!(n.comms[3].members, [0, 1]);
    for r in 0..2 {
        assert_eq!(n.local[r].get(&1), Some(&1));
        assert_eq!(n.local[r].get(&2), Some(&2));
        assert_eq!(n.local[r].get(&3), Some(&3));
    }

    // A parent never defined.
    let bad = vec![RankLog {
        events: vec![made(Dup, 5, 1, &[0])],
    }];
    assert_eq!(
        name_all(&bad),
        Err(NamingError::UnknownParent {
            rank: 0,
            event: 0,
            local: 5
        })
    );
    // Rank 1 never makes the dup rank 0 made.
    let unmatched = vec![
        RankLog {
            events: vec![made(Dup, 0, 1, &[0, 1])],
        },
        RankLog::default(),
    ];
    let e = name_all(&unmatched).unwrap_err();
    assert!(
        matches!(
            e,
            NamingError::Unmatched {
                rank: 0,
                event: 0,
                ..
            }
        ),
        "{e}"
    );
    // Two members disagree on the split's result.
    let inconsistent = vec![
        RankLog {
            events: vec![made(Split, 0, 1, &[0, 1])],
        },
        RankLog {
            events: vec![made(Split, 0, 1, &[1])],
        },
    ];
    assert!(matches!(
        name_all(&inconsistent),
        Err(NamingError::Inconsistent { .. })
    ));
}

/// The logs of validation/programs/commkinds.c as the tracer wrote them (4 ranks).
#[test]
fn commkinds_logs() {
    let text = [
        "n a 0 1 0 1 2 3\nn b 1 2 0 1\nn s 0 3 0 2\nn t 0 4 0 1 2 3\nn d 0 5 0 1 2 3\nn i 0 6 0 1 2 3\nn c 0 7 0 3\nn x 3 8 0 2 1 3\nn m 8 9 0 2 1 3\n",
        "n a 0 1 0 1 2 3\nn b 1 2 0 1\nn s 0 3 1 3\nn t 0 4 0 1 2 3\nn d 0 5 0 1 2 3\nn i 0 6 0 1 2 3\nn c 0 -\nn u 3 7 1 3\nn x 3 8 1 3 0 2\nn m 8 9 0 2 1 3\n",
        "n a 0 1 0 1 2 3\nn b 1 2 2 3\nn s 0 3 0 2\nn t 0 4 0 1 2 3\nn d 0 5 0 1 2 3\nn i 0 6 0 1 2 3\nn c 0 -\nn x 3 7 0 2 1 3\nn m 7 8 0 2 1 3\n",
        "n a 0 1 0 1 2 3\nn b 1 2 2 3\nn s 0 3 1 3\nn t 0 4 0 1 2 3\nn d 0 5 0 1 2 3\nn i 0 6 0 1 2 3\nn c 0 7 0 3\nn u 3 8 1 3\nn x 3 9 1 3 0 2\nn m 9 10 0 2 1 3\n",
    ];
    let logs: Vec<RankLog> = text
        .iter()
        .map(|t| {
            timeless_profile::accumulate::RankPart::decode(t.as_bytes(), 4)
                .unwrap()
                .log
        })
        .collect();
    let n = name_all(&logs).unwrap();
    assert_eq!(
        names(&n),
        [
            "W",
            "W_a1",
            "W_a1_b2.0",
            "W_a1_b2.2",
            "W_s3.0",
            "W_s3.1",
            "W_t4.0",
            "W_d5",
            "W_i6",
            "W_c7.0",
            "W_s3_u8.0",
            "W_s3_x9.0",
            "W_s3_x9_m10",
        ]
    );
}
