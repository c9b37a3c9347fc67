//! Flow graphs: hand-checked graphs (`002_*` Fig. 2 and Fig. 3), exact reconstruction of
//! generated and bundled traces, and damaged files.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use timeless_flowgraph::{format, FlowGraphs, RankGraph, Run};
use timeless_trace::TraceSource;

fn write_trace(dir: &Path, ranks: &[String]) -> PathBuf {
    let mut list = String::new();
    for (r, text) in ranks.iter().enumerate() {
        let f = dir.join(format!("r{r}.txt"));
        std::fs::write(&f, text).unwrap();
        list.push_str(&format!("{}\n", f.display()));
    }
    let l = dir.join("list.txt");
    std::fs::write(&l, list).unwrap();
    l
}

fn graphs_of(dir: &Path, ranks: &[String]) -> FlowGraphs {
    let list = write_trace(dir, ranks);
    let set = TraceSource::open(&list).unwrap();
    FlowGraphs::from_traces(&set, ranks.len() as u32).unwrap()
}

fn lines(prefix: u32, body: &[&str]) -> String {
    body.iter().map(|l| format!("{prefix} {l}\n")).collect()
}

/// Fig. 3 (without comm_rank): rank 0 runs barrier, send, barrier, recv, barrier, send,
/// finalize; rank 1 the mirror (recv where rank 0 sends). Nodes of rank 0 in order of first
/// visit: barrier 0, send(+1) 1, recv(+1) 2, finalize 3. Exits by hand: barrier leaves to send,
/// recv, send — three runs of one visit, sequence numbers 1..3 (a branch node); send leaves to
/// barrier then finalize (runs (0,1), (3,1)); recv to barrier (0,1). Rank 1's graph has recv
/// where rank 0 has send: a different graph.
#[test]
fn figure_three_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let r0 = lines(
        0,
        &[
            "barrier",
            "send 1 0 10",
            "barrier",
            "recv 1 0 10",
            "barrier",
            "send 1 0 10",
            "finalize",
        ],
    );
    let r1 = lines(
        1,
        &[
            "barrier",
            "recv 0 0 10",
            "barrier",
            "send 0 0 10",
            "barrier",
            "recv 0 0 10",
            "finalize",
        ],
    );
    let g = graphs_of(dir.path(), &[r0.clone(), r1]);
    assert_eq!(g.graphs.len(), 2);
    let g0 = g.rank_graph(0).unwrap();
    assert_eq!(g0.entry, Some(0));
    assert_eq!(g0.visits, [3, 2, 1, 1]);
    let run = |to, count| Run { to, count };
    assert_eq!(
        g0.exits,
        [
            vec![run(1, 1), run(2, 1), run(1, 1)],
            vec![run(0, 1), run(3, 1)],
            vec![run(0, 1)],
            vec![],
        ]
    );
    // Events = edges + 1 = 6 + 1.
    assert_eq!(g0.events(), 7);
    assert_eq!(g.rank_text(0, Path::new("x")).unwrap(), r0);
}

/// Parsed events of a TI text (rank `r`'s lines).
fn parsed(text: &str, n: u32) -> Vec<(timeless_trace::Action, u32)> {
    text.lines()
        .filter_map(|l| timeless_trace::parse_line(l, n).unwrap())
        .map(|rec| (rec.action, rec.comm))
        .collect()
}

/// Fig. 2: ten iterations of barrier; bcast if i < 5 else gather; reduce, on 2 ranks (SPMD: one
/// graph for both). Nodes: barrier 0, bcast 1, reduce 2, gather 3. Exits by hand: barrier ->
/// bcast 5 times then gather 5 times (two runs: (1,5), (3,5)); bcast -> reduce 5; reduce ->
/// barrier 9 times (the last reduce ends the trace); gather -> reduce 5. Edge counts 5, 5, 5, 9,
/// 5: 29 edges, 30 events.
#[test]
fn figure_two_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let rank = |r: u32| {
        let mut body = Vec::new();
        for i in 0..10 {
            body.push("barrier");
            body.push(if i < 5 { "bcast 100" } else { "gather 10 10" });
            body.push("reduce 1 0");
        }
        lines(r, &body)
    };
    let g = graphs_of(dir.path(), &[rank(0), rank(1)]);
    assert_eq!(g.graphs.len(), 1, "SPMD ranks share one graph");
    assert_eq!(g.ranks[1].graph, 0);
    let g0 = g.rank_graph(0).unwrap();
    let run = |to, count| Run { to, count };
    assert_eq!(
        g0.exits,
        [
            vec![run(1, 5), run(3, 5)],
            vec![run(2, 5)],
            vec![run(0, 9)],
            vec![run(2, 5)],
        ]
    );
    assert_eq!(g0.edge_count(2, 0), 9);
    assert_eq!(g0.events(), 30);
    let dot = timeless_flowgraph::dot::to_dot(&g);
    assert!(dot.contains("label=\"ranks 0-1\""), "{dot}");
    // The branch node's exits carry their sequence numbers: bcast first, gather second.
    assert!(dot.contains("g0n0 -> g0n1 [label=\"1:5\""), "{dot}");
    assert!(dot.contains("g0n0 -> g0n3 [label=\"2:5\""), "{dot}");
    // JSON: the branch node's two runs, in sequence order.
    let json: serde_json::Value =
        serde_json::from_str(&timeless_flowgraph::dot::to_json(&g)).unwrap();
    assert_eq!(json["graphs"][0]["ranks"], serde_json::json!([0, 1]));
    assert_eq!(
        json["graphs"][0]["nodes"][0]["exits"],
        serde_json::json!([{"to": 1, "count": 5}, {"to": 3, "count": 5}])
    );
    assert_eq!(json["graphs"][0]["nodes"][0]["label"], "barrier");
    // The rebuilt lines state the default root explicitly (`bcast 100 0`): same events.
    for r in 0..2 {
        assert_eq!(
            parsed(&g.rank_text(r, Path::new("x")).unwrap(), 2),
            parsed(&rank(r), 2)
        );
    }
}

/// The bundled traces rebuild line for line after a trip through the file format.
#[test]
fn bundled_traces_round_trip() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (list, n) in [
        ("traces/ring4/ring.txt", 4u32),
        ("traces/commsplit4/trace-list.txt", 4),
    ] {
        let p = root.join(list);
        let set = TraceSource::open(&p).unwrap();
        let g = FlowGraphs::from_traces(&set, n).unwrap();
        let bytes = format::encode(&g);
        let back = format::decode(&bytes, Path::new("g.tfg")).unwrap();
        assert_eq!(back, g);
        // Reconstructed text parses to the same events as the original.
        let dir = tempfile::tempdir().unwrap();
        back.reconstruct(dir.path(), Path::new("g.tfg")).unwrap();
        let orig = TraceSource::open(&p).unwrap();
        let rebuilt = TraceSource::open(&dir.path().join("trace-list.txt")).unwrap();
        use timeless_trace::TraceSet;
        for r in 0..n {
            let mut a = orig.open_stream(r, n).unwrap();
            let mut b = rebuilt.open_stream(r, n).unwrap();
            loop {
                let (x, y) = (a.next_event().unwrap(), b.next_event().unwrap());
                assert_eq!(
                    x.as_ref().map(|e| (&e.action, e.comm)),
                    y.as_ref().map(|e| (&e.action, e.comm)),
                    "{list} rank {r}"
                );
                if x.is_none() {
                    break;
                }
            }
        }
    }
}

/// A random program: nested loops, branches whose arm changes from one iteration to the next,
/// early exits; compute volumes vary.
fn program() -> impl Strategy<Value = Vec<(u8, Option<u64>)>> {
    let step = prop_oneof![
        (0u8..6).prop_map(|k| vec![(k, None)]),
        (1u64..1000).prop_map(|f| vec![(100, Some(f))]),
    ];
    let block = prop::collection::vec(step, 1..5).prop_map(|v| v.concat());
    (
        block.clone(),
        1usize..6,
        block.clone(),
        block,
        prop::collection::vec(any::<bool>(), 1..30),
        0usize..200,
    )
        .prop_map(|(head, loops, a, b, arms, stop)| {
            let mut out = head;
            for i in 0..loops {
                for (j, &arm) in arms.iter().enumerate() {
                    out.extend(if arm ^ (i % 2 == 1) {
                        a.clone()
                    } else {
                        b.clone()
                    });
                    out.push((j as u8 % 3, None));
                }
            }
            out.truncate(stop.max(1));
            out
        })
}

proptest! {
    #[test]
    fn reconstruct_of_graph_is_the_sequence(events in program()) {
        // Signatures: opcode-like bytes; volumes on the compute node (100).
        let sigs: Vec<Vec<u8>> = events.iter().map(|(k, _)| vec![*k]).collect();
        // Volumes: whole flops, and fractional ones for odd draws (both encodings).
        let vol = |x: u64| if x % 2 == 1 { x as f64 * 0.37 } else { x as f64 };
        let g = RankGraph::build(
            sigs.iter().zip(&events).map(|(s, (_, v))| (s.as_slice(), v.map(vol))),
        );
        let fg = FlowGraphs::group(vec![g]);
        let back = format::decode(&format::encode(&fg), Path::new("p.tfg")).unwrap();
        let g = back.rank_graph(0).unwrap();
        let walked: Vec<(u8, Option<u64>)> = g
            .walk()
            .map(|(n, v)| (g.signatures[n as usize][0], v.map(f64::to_bits)))
            .collect();
        let expected: Vec<(u8, Option<u64>)> =
            events.iter().map(|&(k, v)| (k, v.map(|x| vol(x).to_bits()))).collect();
        prop_assert_eq!(walked, expected);
    }
}

#[test]
fn damaged_files_give_offsets_never_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let set = TraceSource::open(&root.join("traces/commsplit4/trace-list.txt")).unwrap();
    let g = FlowGraphs::from_traces(&set, 4).unwrap();
    let bytes = format::encode(&g);
    for cut in 0..bytes.len() {
        let e = format::decode(&bytes[..cut], Path::new("g.tfg")).unwrap_err();
        assert!(e.to_string().starts_with("g.tfg: byte "), "{e}");
    }
    let mut rng = 0x9e3779b97f4a7c15u64;
    for _ in 0..2000 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut b = bytes.clone();
        let at = (rng % b.len() as u64) as usize;
        b[at] ^= (rng >> 32) as u8 | 1;
        if let Ok(g) = format::decode(&b, Path::new("g.tfg")) {
            // Structurally valid: reconstruction may still refuse a signature, never panic.
            let _ = g.rank_text(0, Path::new("g.tfg"));
        }
    }
    assert!(format::decode(b"TLFG\x02", Path::new("g.tfg"))
        .unwrap_err()
        .to_string()
        .contains("version 2"));
}

/// A timed trace (`<rank> <enter> <exit> <action>`): rank 0 sends twice (0.5 ms, then 1.5 ms)
/// and waits at a barrier (2 ms); rank 1 receives twice (1 ms, 3 ms) and waits 0.25 ms. By hand:
/// rank 0's send node min 0.5, max 1.5, total 2 ms; rank 1's recv node 1 / 3 / 4 ms. The graph
/// file keeps them.
#[test]
fn durations_from_a_timed_trace() {
    let dir = tempfile::tempdir().unwrap();
    let r0 = "0 0.0 0.0 init\n0 1.0 1.0005 send 1 0 8\n0 2.0 2.0015 send 1 0 8\n0 3.0 3.002 barrier\n0 4.0 4.0 finalize\n";
    let r1 = "1 0.0 0.0 init\n1 1.0 1.001 recv 0 0 8\n1 2.0 2.003 recv 0 0 8\n1 3.0 3.00025 barrier\n1 4.0 4.0 finalize\n";
    std::fs::write(dir.path().join("rank-0.timed.txt"), r0).unwrap();
    std::fs::write(dir.path().join("rank-1.timed.txt"), r1).unwrap();
    let list = dir.path().join("timed-list.txt");
    std::fs::write(&list, "rank-0.timed.txt\nrank-1.timed.txt\n").unwrap();
    let g = FlowGraphs::from_timed(&list).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    // Nodes in first-visit order: init 0, send/recv 1, barrier 2, finalize 3.
    let d = g.ranks[0].durations[1].unwrap();
    assert!(
        close(d.min_secs, 0.5e-3) && close(d.max_secs, 1.5e-3) && close(d.total_secs, 2e-3),
        "{d:?}"
    );
    let d = g.ranks[1].durations[1].unwrap();
    assert!(
        close(d.min_secs, 1e-3) && close(d.max_secs, 3e-3) && close(d.total_secs, 4e-3),
        "{d:?}"
    );
    assert_eq!(g.rank_graph(0).unwrap().visits, [1, 2, 1, 1]);
    let back = format::decode(&format::encode(&g), Path::new("t.tfg")).unwrap();
    assert_eq!(back, g);
    let json: serde_json::Value =
        serde_json::from_str(&timeless_flowgraph::dot::to_json(&g)).unwrap();
    assert!(close(
        json["graphs"][0]["nodes"][2]["seconds"]["total"]
            .as_f64()
            .unwrap(),
        2e-3
    ));
    // A line that is not timed TI: file:line.
    std::fs::write(
        dir.path().join("rank-1.timed.txt"),
        "1 0.0 0.0 init\n1 1.0 1.1 frobnicate\n",
    )
    .unwrap();
    let e = FlowGraphs::from_timed(&list).unwrap_err().to_string();
    assert!(e.contains("rank-1.timed.txt:2:"), "{e}");
}

/// LEB128 varint, as the file writes them.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A 20-byte file stating a huge expansion is refused with its offset, before anything of
/// that size is allocated: a barrier node whose one exit pattern (back to itself) is repeated
/// 2^40 times; a compute node looping 2^40 times with one run of 2^40 equal volumes.
#[test]
fn huge_expansions_are_refused_not_allocated() {
    let head = |sig: &[u8]| {
        let mut b = b"TLFG\x01".to_vec();
        varint(1, &mut b); // ranks
        varint(1, &mut b); // graphs
        varint(1, &mut b); // nodes
        varint(sig.len() as u64, &mut b);
        b.extend_from_slice(sig);
        varint(1, &mut b); // entry: node 0
        varint(1, &mut b); // segments of node 0
        varint(1, &mut b); // pattern length
        varint(0, &mut b); // to node 0
        b
    };
    // Barrier (opcode 12, world): run of 1 visit, repeated 2^40 times.
    let mut b = head(&[12, 0]);
    varint(1, &mut b);
    let at = b.len();
    varint(1 << 40, &mut b);
    varint(0, &mut b);
    let e = format::decode(&b, Path::new("h.tfg"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("h.tfg: byte ")
            && e.contains("1099511627776 exit runs for one node: more than 33554432 in the file"),
        "{e} (repeat at byte {at})"
    );
    // Compute (opcode 4, world): one run of 2^40 visits, then 2^40 volumes of 7 flops.
    let mut b = head(&[4, 0]);
    varint(1 << 40, &mut b);
    varint(1, &mut b); // repeat
    varint(0, &mut b); // rank 0 follows graph 0
    varint(1, &mut b); // one volume run
    let at = b.len();
    varint(((1u64 << 40) << 1) | 1, &mut b);
    varint(14, &mut b); // zigzag 7
    varint(0, &mut b); // no durations
    let e = format::decode(&b, Path::new("h.tfg"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!("h.tfg: byte {at}: a run of 1099511627776 volumes: more than 33554432 in the file")
    );
}

/// Issue 18, found by fuzzing (`validation/fuzz/regressions/flowgraph/huge-repeat.tfg`): an
/// 81-byte file whose repeated patterns expand to about 133 million exit runs took seconds and
/// gigabytes to decode; it is now refused, with the byte offset, before anything is expanded.
#[test]
fn regression_tiny_file_asking_for_millions_of_runs_is_corrupt() {
    let bytes: &[u8] = &[
        0x54, 0x4c, 0x46, 0x47, 0x01, 0x02, 0x02, 0x07, 0x03, 0x00, 0x00, 0x00, 0x08, 0x06, 0x02,
        0x08, 0xe8, 0x07, 0x00, 0x00, 0x00, 0x09, 0x06, 0x20, 0x12, 0xa4, 0xe8, 0x03, 0x01, 0x00,
        0x00, 0x08, 0x06, 0x02, 0x08, 0xd0, 0x0f, 0x00, 0x00, 0x00, 0x08, 0x06, 0x02, 0x08, 0xb8,
        0x17, 0x00, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x02, 0x01, 0x01, 0x03, 0x01, 0x01, 0x01, 0x01,
        0x80, 0x89, 0xc3, 0xbf, 0x00, 0x04, 0x01, 0x01, 0x80, 0x89, 0xc3, 0xbf, 0x00, 0x01, 0x01,
        0x03, 0x80, 0x89, 0xc3, 0xbf, 0x00,
    ];
    let start = std::time::Instant::now();
    let Err(e) = timeless_flowgraph::format::decode(bytes, std::path::Path::new("g.tfg")) else {
        panic!("a graph asking for 133 million runs is refused");
    };
    let text = e.to_string();
    assert!(text.starts_with("g.tfg: byte "), "{text}");
    assert!(
        text.contains("exit runs for one node: more than 33554432 in the file"),
        "{text}"
    );
    assert!(start.elapsed().as_secs() < 2, "took {:?}", start.elapsed());
}
