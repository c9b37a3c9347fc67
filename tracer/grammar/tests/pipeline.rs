//! End to end: encode ranks, merge, write, read, replay; corrupt files never panic.

use std::sync::Arc;

use proptest::prelude::*;
use timeless_grammar::format::{read, write};
use timeless_grammar::text::write_action;
use timeless_grammar::{
    merge_pair, merge_rounds, CompressedTrace, MergedRanks, Precision, RankEncoder,
};
use timeless_trace::{parse_line, Action, Datatype, RecvCount, RequestKey};

/// A 1D ring with `iters` steps; rank r sends to r+1 mod P (so rank P-1's displacement differs).
fn ring(p: u32, iters: usize) -> Vec<Vec<Action>> {
    (0..p)
        .map(|r| {
            let mut v = vec![Action::Init {
                double_default: false,
            }];
            for i in 0..iters {
                v.push(Action::Compute {
                    flops: 1e6 + (i % 3) as f64,
                });
                v.push(Action::Recv {
                    src: (r + p - 1) % p,
                    tag: 0,
                    count: RecvCount::Count(1000),
                    dt: None,
                    blocking: false,
                });
                v.push(Action::Send {
                    dst: (r + 1) % p,
                    tag: 0,
                    count: 1000,
                    dt: None,
                    blocking: true,
                });
                v.push(Action::Wait(RequestKey::Key {
                    src: (r + p - 1) % p,
                    dst: r,
                    tag: 0,
                }));
            }
            v.push(Action::AllReduce {
                count: 8,
                flops: 8.0,
                dt: Some(Datatype::DOUBLE),
            });
            v.push(Action::Finalize);
            v
        })
        .collect()
}

fn compress(traces: &[Vec<Action>], precision: Precision) -> CompressedTrace {
    let groups: Vec<MergedRanks> = traces
        .iter()
        .enumerate()
        .map(|(r, acts)| {
            let mut e = RankEncoder::new(r as u32, precision);
            for a in acts {
                e.push(a, 0, None);
            }
            MergedRanks::from(e.finish())
        })
        .collect();
    let (m, _) = merge_rounds(groups).unwrap();
    CompressedTrace::from_merged(m, traces.len() as u32, precision).unwrap()
}

fn replay_all(t: CompressedTrace) -> Vec<Vec<Action>> {
    let t = Arc::new(t);
    (0..t.nranks)
        .map(|r| {
            let mut s = t.rank_stream(r).unwrap();
            let mut v = Vec::new();
            while let Some((a, comm, _, _)) = s.next_action().unwrap() {
                assert_eq!(comm, 0);
                v.push(a);
            }
            v
        })
        .collect()
}

#[test]
fn ring_round_trips_through_the_file_and_dedups_grammars() {
    let traces = ring(8, 200);
    let t = compress(&traces, Precision::Lossless);
    let s = t.stats();
    // Ranks 1..=6 are identical (displacements -1, +1); rank 0 receives from +7, rank 7 sends
    // to -7: three unique grammars. Volumes (1e6, 1e6+1, 1e6+2 repeating) are the same on every
    // rank: one stream.
    assert_eq!(s.unique_grammars, 3);
    assert_eq!(s.unique_volume_streams, 1);
    assert_eq!(s.actions, 8 * (3 + 4 * 200));
    // The final Sequitur pass stores the three grammars in fewer symbols than their words.
    let words: usize = t.grammars.iter().map(|g| g.to_words().len()).sum();
    assert!(
        t.meta.symbol_count() < words,
        "{} symbols for {words} words",
        t.meta.symbol_count()
    );
    let (bytes, sizes) = write(&t);
    assert_eq!(sizes.total(), bytes.len());
    // Deterministic: the same input gives the same bytes.
    assert_eq!(write(&compress(&traces, Precision::Lossless)).0, bytes);
    let (back, sizes2) = read(&bytes).unwrap();
    assert_eq!(sizes, sizes2);
    assert_eq!(replay_all(back), traces);
}

#[test]
fn merge_order_does_not_change_the_streams() {
    let traces = ring(5, 30);
    let groups = |tr: &[Vec<Action>]| -> Vec<MergedRanks> {
        tr.iter()
            .enumerate()
            .map(|(r, acts)| {
                let mut e = RankEncoder::new(r as u32, Precision::Lossless);
                acts.iter().for_each(|a| {
                    e.push(a, 0, None);
                });
                MergedRanks::from(e.finish())
            })
            .collect()
    };
    let sequential = groups(&traces).into_iter().reduce(merge_pair).unwrap();
    // Each round's exchange as bytes (what two tracer processes would send each other).
    let wire = groups(&traces)
        .into_iter()
        .map(|g| MergedRanks::from_bytes(&g.to_bytes()).unwrap())
        .reduce(|a, b| MergedRanks::from_bytes(&merge_pair(a, b).to_bytes()).unwrap())
        .unwrap();
    assert_eq!(wire.grammars, sequential.grammars);
    assert_eq!(wire.ranks, sequential.ranks);
    let (tree, rounds) = merge_rounds(groups(&traces)).unwrap();
    assert_eq!(rounds, 3); // ⌈log2 5⌉
    for m in [sequential, tree, wire] {
        let t = CompressedTrace::from_merged(m, 5, Precision::Lossless).unwrap();
        assert_eq!(replay_all(t), traces);
    }
}

#[test]
fn binned_volumes_stay_within_the_bound() {
    let traces = ring(3, 50);
    let t = compress(&traces, Precision::Relative(1e-3));
    for (got, want) in replay_all(t).iter().zip(&traces) {
        for (g, w) in got.iter().zip(want) {
            match (g, w) {
                (Action::Compute { flops: a }, Action::Compute { flops: b }) => {
                    assert!((a / b - 1.0).abs() <= 1e-3 + 1e-12, "{a} vs {b}")
                }
                _ => assert_eq!(g, w),
            }
        }
    }
}

#[test]
fn every_action_kind_survives_text_and_signature() {
    let n = 4;
    let dt = Some(Datatype(1));
    let actions = vec![
        Action::Init {
            double_default: true,
        },
        Action::CommNoop,
        Action::Location,
        Action::Compute { flops: 2.5e-3 },
        Action::Compute { flops: 123456789.0 },
        Action::Sleep { secs: 0.125 },
        Action::Send {
            dst: 3,
            tag: -4,
            count: 7,
            dt,
            blocking: false,
        },
        Action::Recv {
            src: 0,
            tag: 9,
            count: RecvCount::Probe,
            dt: None,
            blocking: true,
        },
        Action::Recv {
            src: 2,
            tag: 0,
            count: RecvCount::FromSender,
            dt: Some(Datatype::BYTE),
            blocking: false,
        },
        Action::Wait(RequestKey::Oldest),
        Action::Test(RequestKey::Key {
            src: 1,
            dst: 2,
            tag: 5,
        }),
        Action::WaitAll,
        Action::SendRecv {
            send_count: 5,
            dst: 0,
            recv_count: 6,
            src: 3,
            send_dt: dt,
            recv_dt: Some(Datatype::BYTE),
        },
        Action::Barrier,
        Action::Bcast {
            count: 10,
            root: 2,
            dt: None,
        },
        Action::Reduce {
            count: 10,
            flops: 1e7,
            root: 1,
            dt,
        },
        Action::AllReduce {
            count: 10,
            flops: 3.5,
            dt: None,
        },
        Action::AllToAll {
            send_count: 1,
            recv_count: 2,
            send_dt: dt,
            recv_dt: None,
        },
        Action::AllToAllV {
            send_counts: vec![1, 2, 3, 4].into(),
            recv_counts: vec![4, 3, 2, 1].into(),
            send_dt: dt,
            recv_dt: dt,
        },
        Action::Gather {
            send_count: 1,
            recv_count: 4,
            root: 3,
            send_dt: None,
            recv_dt: None,
        },
        Action::AllGather {
            send_count: 1,
            recv_count: 4,
            send_dt: dt,
            recv_dt: dt,
        },
        Action::GatherV {
            send_count: 1,
            recv_counts: vec![1, 1, 2, 2].into(),
            root: 0,
            send_dt: dt,
            recv_dt: dt,
        },
        Action::AllGatherV {
            send_count: 2,
            recv_counts: vec![2; 4].into(),
            send_dt: dt,
            recv_dt: dt,
            disps: vec![0, 2, 4, 6].into(),
        },
        Action::AllGatherV {
            send_count: 2,
            recv_counts: vec![2; 4].into(),
            send_dt: None,
            recv_dt: None,
            disps: vec![0, 2, 4, 6].into(),
        },
        Action::Scatter {
            send_count: 3,
            recv_count: 3,
            root: 1,
            send_dt: dt,
            recv_dt: None,
        },
        Action::ScatterV {
            send_counts: vec![1, 2, 3, 4].into(),
            recv_count: 2,
            root: 2,
            send_dt: None,
            recv_dt: None,
        },
        Action::ReduceScatter {
            recv_counts: vec![1, 1, 1, 1].into(),
            flops: 4.0,
            dt,
        },
        Action::Scan {
            count: 3,
            flops: 1.0,
            dt: None,
        },
        Action::ExScan {
            count: 3,
            flops: 1.0,
            dt,
        },
        Action::Finalize,
    ];
    let mut text = String::new();
    for a in &actions {
        text.clear();
        write_action(&mut text, 2, a, n).unwrap();
        let rec = parse_line(&text, n).unwrap().unwrap();
        assert_eq!((rec.rank, &rec.action), (2, a), "line {text:?}");
    }
    let traces = vec![actions.clone(), actions.clone(), actions.clone(), actions];
    // Peers are absolute in the actions above, so each rank gets its own signatures.
    let t = compress(&traces, Precision::Lossless);
    let (bytes, _) = write(&t);
    assert_eq!(replay_all(read(&bytes).unwrap().0), traces);
}

/// A 2D-stencil-like iteration (4 irecv, 4 isend, waitall) with compute records wherever a
/// traced run's noise puts them: the grammar must not see them.
fn noisy_stencil(
    rank: u32,
    iters: usize,
    compute_at: impl Fn(usize, usize) -> bool,
) -> Vec<Action> {
    let peers = [rank + 1, rank + 2, rank + 3, rank + 4];
    let mut v = vec![Action::Init {
        double_default: false,
    }];
    let mut k = 0;
    for i in 0..iters {
        let mut step = Vec::new();
        for &p in &peers {
            step.push(Action::Recv {
                src: p,
                tag: 1,
                count: RecvCount::Count(32),
                dt: Some(Datatype::DOUBLE),
                blocking: false,
            });
        }
        for &p in &peers {
            step.push(Action::Send {
                dst: p,
                tag: 1,
                count: 32,
                dt: Some(Datatype::DOUBLE),
                blocking: false,
            });
        }
        step.push(Action::WaitAll);
        for (j, a) in step.into_iter().enumerate() {
            if compute_at(i, j) {
                k += 1;
                v.push(Action::Compute {
                    flops: 1000.0 + (k * 7919 % 1013) as f64,
                });
            }
            v.push(a);
        }
    }
    v.push(Action::Finalize);
    v
}

/// Compute records are placed by gaps outside the grammar (`placement`): ranks whose calls
/// are the same but whose compute records fall at different places (noise decides where a
/// burst crosses the tracer's threshold) share one grammar, and the file replays exactly.
#[test]
fn compute_placement_does_not_reach_the_grammar() {
    // Ranks 0, 1, 2 (peers are displacements: the same signatures on every rank).
    let regular = noisy_stencil(0, 300, |_, j| j == 0);
    let noisy = noisy_stencil(1, 300, |i, j| j == 0 || (i * 31 + j * 17) % 23 == 0);
    // Consecutive computes, computes first and last (before finalize and after it).
    let mut edge = noisy_stencil(2, 300, |i, j| (i * 7 + j) % 5 == 0);
    edge.insert(0, Action::Compute { flops: 1.0 });
    edge.insert(5, Action::Compute { flops: 2.0 });
    edge.insert(5, Action::Compute { flops: 3.0 });
    edge.push(Action::Compute { flops: 4.0 });
    edge.push(Action::Compute { flops: 5.0 });
    // Ranks 3..8 only initialise and finalise (the world must hold the peers).
    let mut traces = vec![regular.clone(), noisy, edge];
    traces.extend((3..8).map(|_| {
        vec![
            Action::Init {
                double_default: false,
            },
            Action::Finalize,
        ]
    }));
    let t = compress(&traces, Precision::Lossless);
    let s = t.stats();
    assert_eq!(
        s.unique_grammars, 2,
        "one grammar for the three placements, one for init + finalize"
    );
    assert_eq!(s.unique_volume_streams, 4);
    assert_eq!(s.terminals, 11, "init, 4 irecv, 4 isend, waitall, finalize");
    let computes = |v: &[Action]| {
        v.iter()
            .filter(|a| matches!(a, Action::Compute { .. }))
            .count()
    };
    assert_eq!(
        s.computes as usize,
        traces.iter().map(|v| computes(v)).sum::<usize>()
    );
    assert_eq!(
        s.actions as usize,
        traces.iter().map(Vec::len).sum::<usize>()
    );
    // A loop of 300 identical iterations: a handful of rules, whatever the computes do.
    assert!(s.symbols <= 20, "{} symbols", s.symbols);
    let (bytes, sizes) = write(&t);
    assert!(sizes.placement > 0);
    assert_eq!(replay_all(read(&bytes).unwrap().0), traces);
    // With the compute of every iteration at the same place, the gaps are constant: 9 actions
    // per iteration, the first one after init: a few bytes.
    let mut alone = vec![regular];
    alone.extend((1..5).map(|_| vec![Action::Finalize]));
    let t = compress(&alone, Precision::Lossless);
    let (_, sizes) = write(&t);
    assert!(
        sizes.placement < 40,
        "{} bytes of placement",
        sizes.placement
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any interleaving of computes with other actions (sleeps among them: their volumes
    /// share the stream) round-trips exactly, and the grammar depends only on the non-compute
    /// actions.
    #[test]
    fn computes_anywhere_round_trip(
        layout in prop::collection::vec((0u8..4, any::<bool>(), 1.0f64..1e9), 0..400),
    ) {
        let mut acts = Vec::new();
        let mut calls = Vec::new();
        for &(kind, compute_first, flops) in &layout {
            if compute_first {
                acts.push(Action::Compute { flops });
            }
            let a = match kind {
                0 => Action::Barrier,
                1 => Action::WaitAll,
                2 => Action::Sleep { secs: flops * 1e-9 },
                _ => Action::Compute { flops: flops * 0.5 },
            };
            if !matches!(a, Action::Compute { .. }) {
                calls.push(a.clone());
            }
            acts.push(a);
        }
        let t = compress(&[acts.clone(), calls.clone()], Precision::Lossless);
        prop_assert!(t.stats().unique_grammars == 1);
        let (bytes, _) = write(&t);
        let back = replay_all(read(&bytes).unwrap().0);
        prop_assert_eq!(&back[0], &acts);
        prop_assert_eq!(&back[1], &calls);
    }
}

/// The tracer's metadata is stored as one zstd frame and comes back verbatim; a damaged frame
/// is an error at the section's offset.
#[test]
fn tracer_metadata_round_trips_compressed() {
    let mut t = compress(&ring(4, 10), Precision::Lossless);
    let json: Vec<u8> = format!(
        "{{\"ranks\": 4, \"rank_files\": [{}]}}",
        (0..400)
            .map(|r| format!("\"rank-{r}.txt\""))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .into_bytes();
    t.tracer_meta = Some(json.clone());
    let (bytes, sizes) = write(&t);
    assert!(
        sizes.tracer_meta * 4 < json.len(),
        "{} bytes for {}",
        sizes.tracer_meta,
        json.len()
    );
    assert_eq!(read(&bytes).unwrap().0.tracer_meta, Some(json));
    // The section is the last one: damage its frame header (after zstd's 4-byte magic).
    let at = bytes.len() - sizes.tracer_meta;
    let mut bad = bytes.clone();
    bad[at] ^= 0xff;
    let e = read(&bad).unwrap_err().to_string();
    assert!(e.starts_with(&format!("byte {at}: TRACER_META: ")), "{e}");
}

#[test]
fn older_versions_are_refused_by_name() {
    let (mut bytes, _) = write(&compress(&ring(2, 3), Precision::Lossless));
    for old in [1u8, 2] {
        bytes[8] = old;
        bytes[9] = 0;
        assert_eq!(
            read(&bytes).unwrap_err().to_string(),
            format!(
                "byte 8: format version {old}, this build reads versions 3..=4 \
                 (compress the text trace again)"
            )
        );
    }
}

#[test]
fn a_call_site_table_makes_a_version_4_file_and_comes_back() {
    let mut t = compress(&ring(2, 3), Precision::Lossless);
    let (plain, _) = write(&t);
    assert_eq!(u16::from_le_bytes([plain[8], plain[9]]), 3);
    let table = b"# timeless call sites\n7\tapp\t0x10\tmain\tapp.c\t3\n".to_vec();
    t.callsites = Some(table.clone());
    let (bytes, sizes) = write(&t);
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 4);
    assert!(sizes.callsites > 0);
    assert_eq!(sizes.total(), bytes.len());
    let (back, _) = read(&bytes).unwrap();
    assert_eq!(back.callsites, Some(table));
    assert_eq!(read(&plain).unwrap().0.callsites, None);
}

#[test]
fn corrupt_headers_name_the_byte() {
    let (bytes, _) = write(&compress(&ring(4, 10), Precision::Lossless));
    let e = |b: &[u8]| read(b).unwrap_err().to_string();
    assert_eq!(
        e(&bytes[..5]),
        "byte 0: truncated: expected 8 bytes of magic number, 5 left"
    );
    let mut b = bytes.clone();
    b[1] = b'X';
    assert_eq!(
        e(&b),
        "byte 0: not a timeless compressed trace (bad magic number)"
    );
    let mut b = bytes.clone();
    b[10] = 1;
    b[11] = 2;
    assert_eq!(
        e(&b),
        "byte 10: byte order mark 0x0201, expected 0x0102 (little-endian)"
    );
    let cut = e(&bytes[..bytes.len() - 1]);
    assert!(cut.contains("past the end of the"), "{cut}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Flipped bytes and truncations give Err or Ok, never a panic; an Ok file replays
    /// (to an Err or to the end) without panicking either.
    #[test]
    fn corrupt_files_never_panic(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let (mut bytes, _) = write(&compress(&ring(4, 20), Precision::Relative(1e-2)));
        for (i, v) in flips {
            let i = i.index(bytes.len());
            bytes[i] ^= v;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        if let Ok((t, _)) = read(&bytes) {
            // What decodes re-encodes to a file that decodes to the same grammars.
            let (again, _) = write(&t);
            prop_assert_eq!(&read(&again).unwrap().0.grammars, &t.grammars);
            let t = Arc::new(t);
            for r in 0..t.nranks.min(8) {
                let mut s = t.rank_stream(r).unwrap();
                for _ in 0..10_000 {
                    match s.next_action() {
                        Ok(Some(_)) => {}
                        _ => break,
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The merge-round wire encoding rejects damaged input with an error, never a panic.
    #[test]
    fn corrupt_wire_groups_never_panic(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let groups: Vec<MergedRanks> = ring(3, 10)
            .iter()
            .enumerate()
            .map(|(r, acts)| {
                let mut e = RankEncoder::new(r as u32, Precision::Lossless);
                acts.iter().for_each(|a| {
                    e.push(a, 0, None);
                });
                MergedRanks::from(e.finish())
            })
            .collect();
        let mut bytes = merge_rounds(groups).unwrap().0.to_bytes();
        for (i, v) in flips {
            let i = i.index(bytes.len());
            bytes[i] ^= v;
        }
        bytes.truncate(cut.index(bytes.len() + 1).max(bytes.len() / 2));
        let _ = MergedRanks::from_bytes(&bytes);
    }
}
