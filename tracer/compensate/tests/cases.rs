//! Hand-derived timelines for each case of `004_*` §3. Every expected value is derived in the
//! comment next to its test, from the paper's equations; times are chosen so the arithmetic is
//! exact in binary where possible (tolerance 1e-12 otherwise).
//!
//! A tracer does its own work right after each timestamp, so a call's operation starts `O` after
//! its enter timestamp: the paper's `send` event is `enter.send_m + O` (and likewise the start
//! of a collective), while `recv` is `exit.recv_m` (see the engine's "Where an event's overhead
//! lies").

use timeless_compensate::{
    compensate, CollectSink, CollectedRecord, CopyCost, ErrorKind, NToNRule, Params, Summary,
    TimedItem, VecStream,
};
use timeless_compensate::{parse_line, Rank};

const LO: usize = 0;
const UP: usize = 1;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[track_caller]
fn assert_times(r: &CollectedRecord, enter: [f64; 2], exit: [f64; 2]) {
    for b in [LO, UP] {
        assert!(
            close(r.enter_a[b], enter[b]) && close(r.exit_a[b], exit[b]),
            "rank {} record {} bound {b}: got [{}, {}], expected [{}, {}]",
            r.rank,
            r.index,
            r.enter_a[b],
            r.exit_a[b],
            enter[b],
            exit[b]
        );
    }
}

/// Builds per-rank streams from trace lines (the text format), `nranks` ranks.
fn streams(nranks: u32, lines: &[&str]) -> Vec<VecStream> {
    let mut per: Vec<Vec<TimedItem>> = vec![Vec::new(); nranks as usize];
    for l in lines {
        if let Some((r, item)) = parse_line(l, nranks).unwrap() {
            per[r as usize].push(item);
        }
    }
    per.into_iter().map(VecStream::new).collect()
}

fn params(overhead: &[f64], copy_secs_per_byte: f64) -> Params {
    Params {
        overhead_secs: overhead.to_vec(),
        copy: CopyCost::uniform(copy_secs_per_byte),
        n_to_n: NToNRule::PerRank,
    }
}

fn run(nranks: u32, lines: &[&str], p: &Params) -> (CollectSink, Summary) {
    let mut sink = CollectSink::default();
    let s = compensate(streams(nranks, lines), p, &mut sink).unwrap();
    (sink, s)
}

fn rec(sink: &CollectSink, rank: Rank, index: u64) -> &CollectedRecord {
    sink.get(rank, index).expect("record exists")
}

#[test]
fn m1_a1_receiver_waits_for_the_compensated_send() {
    // O = 0.1 s on both ranks, C = 0.
    // Rank 0: region [0,1]: enter_a = 0 (first event), exit_a = 0 + (1 - 0 - 0.1) = 0.9.
    //         send [1,1.5]: send_a = 0.9 + max(0, 0 - 0.1) = 0.9; exit_a = 0.9 + (0.5 - 0.1) = 1.3.
    // Rank 1: recv [0.5,2]: enter.recv_a = 0.5 (first event).
    //   m.1: enter.recv_m 0.5 <= exit.send_m 1.5; send_m = enter.send_m + O = 1.1, so
    //   Comm_m = recv_m - send_m = 2 - 1.1 = 0.9 (eq. 2).
    //   a.1: send_a + Comm_m = 1.8 > 0.5, so recv_a = 1.8 (eq. 3), both bounds.
    // Late sender (from the send's enter): measured min(1, 2) - 0.5 = 0.5; approximated
    // min(0.9, 1.8) - 0.5 = 0.4.
    // Total: measured 2 - 0 = 2; approximated max(1.3, 1.8) - 0 = 1.8.
    let (sink, s) = run(
        2,
        &[
            "0 region 0 1 work",
            "0 send 1 1.5 1 0 8",
            "1 recv 0.5 2 0 0 8",
        ],
        &params(&[0.1], 0.0),
    );
    assert_times(rec(&sink, 0, 0), [0.0; 2], [0.9; 2]);
    assert_times(rec(&sink, 0, 1), [0.9; 2], [1.3; 2]);
    assert_times(rec(&sink, 1, 0), [0.5; 2], [1.8; 2]);
    assert_eq!(s.cases, [[1, 0, 0], [1, 0, 0]]);
    assert!(close(s.ranks[1].late_sender_m, 0.5));
    assert!(close(s.ranks[1].late_sender_a[LO], 0.4) && close(s.ranks[1].late_sender_a[UP], 0.4));
    assert!(close(s.total_m, 2.0));
    assert!(close(s.total_a[LO], 1.8) && close(s.total_a[UP], 1.8));
}

#[test]
fn m1_a2_message_already_there_costs_one_copy() {
    // O = 1 s on rank 0, 0 on rank 1; C = 1/32 s/byte, 8 bytes: copy = 0.25 s.
    // Rank 0: region [0,2]: exit_a = 0 + (2 - 1) = 1; send [2,3]: send_a = 1 + max(0, 0 - 1) = 1,
    //         exit_a = 1 + max(0, 1 - 1) = 1.
    // Rank 1: region [0,1.5]: exit_a = 1.5; recv [1.5,2.25]: enter.recv_a = 1.5.
    //   m.1: 1.5 <= exit.send_m 3; send_m = 2 + O = 3, Comm_m = 2.25 - 3 = -0.75 (eq. 2).
    //   a.2: send_a + Comm_m = 0.25 <= 1.5, so recv_a = enter.recv_a + copy = 1.75 (eq. 4).
    // Late sender: measured min(2, 2.25) - 1.5 = 0.5; approximated max(0, min(1, 1.75) - 1.5) = 0.
    // Total: measured 3, approximated max(1, 1.75) = 1.75.
    let (sink, s) = run(
        2,
        &[
            "0 region 0 2 work",
            "0 send 2 3 1 5 8",
            "1 region 0 1.5 work",
            "1 recv 1.5 2.25 0 5 8",
        ],
        &params(&[1.0, 0.0], 1.0 / 32.0),
    );
    assert_times(rec(&sink, 0, 1), [1.0; 2], [1.0; 2]);
    assert_times(rec(&sink, 1, 1), [1.5; 2], [1.75; 2]);
    assert_eq!(s.cases, [[0, 1, 0], [0, 1, 0]]);
    assert!(close(s.ranks[1].late_sender_m, 0.5));
    assert_eq!(s.ranks[1].late_sender_a, [0.0, 0.0]);
    assert!(close(s.total_m, 3.0));
    assert!(close(s.total_a[LO], 1.75) && close(s.total_a[UP], 1.75));
}

#[test]
fn m2_bounds_with_the_minimum_communication_time() {
    // O = 0.25 s on rank 0, 0.5 s on rank 1; C = 0.001 s/byte, 100 bytes: copy = 0.1 s.
    // Rank 0: region [0,1]: exit_a = 0.75; send [1,1.25]: send_a = 0.75 + max(0, 0 - 0.25) = 0.75,
    //         exit_a = 0.75 + max(0, 0.25 - 0.25) = 0.75.
    // Rank 1: region [0,1.5]: exit_a = 1.0; recv [1.5,3]: enter.recv_a = 1.0 + max(0, -0.5) = 1.0.
    //   m.2: enter.recv_m 1.5 > exit.send_m 1.25.
    //   Comm_min = (1.0 - 0.75) + 0.1 = 0.35 (eq. 8).
    //   lower: max(2 x 0.1, 0.35) = 0.35 (eq. 9) -> recv_a = 0.75 + 0.35 = 1.1 (the minimum binds).
    //   upper: send_m = enter.send_m + O = 1.25; max(3 - 1.25, 0.35) = 1.75 (eq. 10)
    //          -> recv_a = 0.75 + 1.75 = 2.5.
    // Totals: measured 3; lower 1.1; upper 2.5.
    let (sink, s) = run(
        2,
        &[
            "0 region 0 1 work",
            "0 send 1 1.25 1 0 100",
            "1 region 0 1.5 work",
            "1 recv 1.5 3 0 0 100",
        ],
        &params(&[0.25, 0.5], 0.001),
    );
    assert_times(rec(&sink, 0, 1), [0.75; 2], [0.75; 2]);
    assert_times(rec(&sink, 1, 1), [1.0; 2], [1.1, 2.5]);
    assert_eq!(s.cases, [[0, 0, 1], [0, 0, 1]]);
    assert!(close(s.total_m, 3.0));
    assert!(close(s.total_a[LO], 1.1) && close(s.total_a[UP], 2.5));
}

#[test]
fn m2_lower_bound_is_two_copies_when_the_minimum_does_not_bind() {
    // O = 0 on rank 0, 0.5 s on rank 1; copy = 0.001 s/byte x 100 bytes = 0.1 s.
    // Rank 0: send [1,1.25]: send_a = 1 (first event), exit_a = 1.25.
    // Rank 1: region [0,1.5]: exit_a = 1.0; recv [1.5,3]: enter.recv_a = 1.0.
    //   m.2 (1.5 > 1.25). Comm_min = (1.0 - 1.0) + 0.1 = 0.1 (eq. 8).
    //   lower: max(2 x 0.1, 0.1) = 0.2 (eq. 6, 9) -> recv_a = 1.2.
    //   upper: max(3 - 1, 0.1) = 2 (eq. 5, 10)    -> recv_a = 3 (= measured: the sender had no
    //   overhead to remove and the upper bound keeps the measured transfer time).
    let (sink, _) = run(
        2,
        &[
            "0 send 1 1.25 1 0 100",
            "1 region 0 1.5 work",
            "1 recv 1.5 3 0 0 100",
        ],
        &params(&[0.0, 0.5], 0.001),
    );
    assert_times(rec(&sink, 1, 1), [1.0; 2], [1.2, 3.0]);
}

#[test]
fn n_to_n_exits_follow_the_latest_compensated_enter() {
    // O = 0.1, 0.1, 0.7 s on ranks 0, 1, 2; C = 0.
    // Regions [0,1], [0,2], [0,2.5] end at 0.9, 1.9, 1.8; barrier enters at
    // 0.9, 1.9, 1.8 (gap 0 after the region: max(0, 0 - O) = 0).
    // The operations start at enter_m + O = 1.1, 2.1, 3.2.
    // j (latest measured start) = rank 2 at 3.2; k (latest approximated enter) = rank 1 at 1.9.
    // Eq. 13: exit_a^i = 1.9 + (exit_m^i - 3.2): rank 0: 1.9 + 0.8 = 2.7; rank 1: 1.9 + 0.9 = 2.8;
    //         rank 2: 1.9 + 1.0 = 2.9.
    // Eq. 12: l (earliest measured exit) = rank 0 at 4.0: every exit_a = 1.9 + 0.8 = 2.7.
    // Wait at N x N: measured 2.5 - enter_m = 1.5, 0.5, 0; approximated 1.9 - enter_a = 1.0, 0, 0.1
    // (the perturbation reversed who waits: rank 2 now waits for rank 1).
    let lines = [
        "0 region 0 1 a",
        "0 barrier 1 4.0 0",
        "1 region 0 2 a",
        "1 barrier 2 4.1 0",
        "2 region 0 2.5 a",
        "2 barrier 2.5 4.2 0",
    ];
    let mut p = params(&[0.1, 0.1, 0.7], 0.0);
    let (sink, s) = run(3, &lines, &p);
    assert_times(rec(&sink, 0, 1), [0.9; 2], [2.7; 2]);
    assert_times(rec(&sink, 1, 1), [1.9; 2], [2.8; 2]);
    assert_times(rec(&sink, 2, 1), [1.8; 2], [2.9; 2]);
    let wait_m: Vec<f64> = s.ranks.iter().map(|a| a.wait_nxn_m).collect();
    let wait_a: Vec<f64> = s.ranks.iter().map(|a| a.wait_nxn_a[LO]).collect();
    for (got, want) in wait_m.iter().zip([1.5, 0.5, 0.0]) {
        assert!(close(*got, want), "{wait_m:?}");
    }
    for (got, want) in wait_a.iter().zip([1.0, 0.0, 0.1]) {
        assert!(close(*got, want), "{wait_a:?}");
    }
    p.n_to_n = NToNRule::Common;
    let (sink, _) = run(3, &lines, &p);
    for r in 0..3 {
        assert!(close(rec(&sink, r, 1).exit_a[LO], 2.7));
    }
}

#[test]
fn one_to_n_receivers_use_the_upper_bound_from_the_root_enter() {
    // O = 0.1 s everywhere; C = 0.01 s/byte x 10 bytes = 0.1 s.
    // Rank 0 (root): region [0,2] -> exit_a 1.9; bcast [2,2.5]: enter_a 1.9, exit independent
    //   1.9 + (0.5 - 0.1) = 2.3.
    // Rank 1: bcast [0.5,2.75] is its first record: enter_a = 0.5. It is processed before the root
    //   (measured-time order), waits, and resumes when the root enters.
    //   send := root's start (send_m 2 + O = 2.1, send_a 1.9), recv := exit (recv_m 2.75).
    //   Comm_min = (0.5 - 1.9) + 0.1 = -1.3; comm = max(2.75 - 2.1, -1.3) = 0.65 (eqs. 8, 10)
    //   -> exit_a = 1.9 + 0.65 = 2.55.
    // Rank 2: region [0,3] -> 2.9; bcast [3,3.5]: enter_a 2.9.
    //   Comm_min = (2.9 - 1.9) + 0.1 = 1.1; comm = max(3.5 - 2.1, 1.1) = 1.4 -> exit_a = 3.3.
    let (sink, s) = run(
        3,
        &[
            "0 region 0 2 a",
            "0 bcast 2 2.5 10 root=0",
            "1 bcast 0.5 2.75 10 root=0",
            "2 region 0 3 a",
            "2 bcast 3 3.5 10 root=0",
        ],
        &params(&[0.1], 0.01),
    );
    assert_times(rec(&sink, 0, 1), [1.9; 2], [2.3; 2]);
    assert_times(rec(&sink, 1, 0), [0.5; 2], [2.55; 2]);
    assert_times(rec(&sink, 2, 1), [2.9; 2], [3.3; 2]);
    assert!(close(s.total_m, 3.5) && close(s.total_a[UP], 3.3));
}

#[test]
fn n_to_one_root_waits_for_the_last_member_message() {
    // Our mirror of 1-to-n. O = 0.25 s, C = 0.
    // Rank 0 (root): reduce [1,3] is its first record: enter_a = 1.
    // Rank 1: region [0,2] -> exit_a 1.75; reduce [2,2.5]: enter_a 1.75 + max(0, -0.25) = 1.75,
    //   exit independent: 1.75 + (0.5 - 0.25) = 2.0.
    // Root: message from rank 1, send := its start (2 + O = 2.25 measured, 1.75 approximated),
    //   recv := root exit (3): Comm_min = (1 - 1.75) + 0 = -0.75,
    //   comm = max(3 - 2.25, -0.75) = 0.75 -> 2.5; root exit_a = max(enter_a 1, 2.5) = 2.5.
    let (sink, _) = run(
        2,
        &[
            "0 reduce 1 3 8 root=0",
            "1 region 0 2 a",
            "1 reduce 2 2.5 8 root=0",
        ],
        &params(&[0.25], 0.0),
    );
    assert_times(rec(&sink, 1, 1), [1.75; 2], [2.0; 2]);
    assert_times(rec(&sink, 0, 0), [1.0; 2], [2.5; 2]);
}

#[test]
fn sub_communicator_collectives_match_by_member_list() {
    // Ranks 1 and 2 define the same communicator under different local ids; rank 0 is not in
    // it. O = 0: every time is kept, and the barrier exits are eq. 13 with nothing removed:
    // exit_a^i = enter_a^k + (exit_m^i - enter_m^j) = 2 + (exit_m^i - 2) = exit_m^i.
    let (sink, _) = run(
        3,
        &[
            "0 region 0 5 alone",
            "1 comm_def 4 2 1 2",
            "1 barrier 1 3 0 comm=4",
            "2 comm_def 1 2 1 2",
            "2 barrier 2 3.5 0 comm=1",
        ],
        &params(&[0.0], 0.0),
    );
    assert_times(rec(&sink, 1, 0), [1.0; 2], [3.0; 2]);
    assert_times(rec(&sink, 2, 0), [2.0; 2], [3.5; 2]);
}

#[test]
fn a_receive_without_send_names_the_stuck_rank() {
    let e = compensate(
        streams(2, &["0 region 0 1 a", "1 recv 0 1 0 7 8"]),
        &params(&[0.0], 0.0),
        &mut CollectSink::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Unmatched(_)));
    let msg = e.to_string();
    assert!(
        msg.contains("rank 1 waits at <memory>:0 for a message from rank 0 with tag 7"),
        "{msg}"
    );
}

#[test]
fn members_disagreeing_on_a_collective_is_an_error() {
    let e = compensate(
        streams(2, &["0 bcast 0 1 8 root=0", "1 bcast 0 1 8 root=1"]),
        &params(&[0.0], 0.0),
        &mut CollectSink::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("bcast with root 1 here but bcast with root 0 at <memory>:0"),
        "{e}"
    );
}

#[test]
fn a_long_ping_pong_keeps_the_window_flat() {
    // 20000 round trips: at most one message is ever queued (plus none open collectives).
    let mut lines = Vec::new();
    for i in 0..20_000 {
        let t = i as f64 * 4.0;
        lines.push(format!("0 send {} {} 1 0 8", t, t + 1.0));
        lines.push(format!("1 recv {} {} 0 0 8", t, t + 2.0));
        lines.push(format!("1 send {} {} 0 0 8", t + 2.0, t + 3.0));
        lines.push(format!("0 recv {} {} 1 0 8", t + 1.0, t + 4.0));
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut sink = timeless_compensate::NoSink;
    let s = compensate(streams(2, &refs), &params(&[0.0], 0.0), &mut sink).unwrap();
    assert_eq!(s.ranks[0].records, 40_000);
    assert_eq!(s.max_window, 1);
    // O = 0 keeps the measured times: total 80000 s.
    assert!(close(s.total_m, 80_000.0) && close(s.total_a[UP], 80_000.0));
}

#[test]
fn a_probe_waits_for_the_send_and_leaves_the_message_to_the_receive() {
    // O = 0.1 s, C = 0.01 s/byte x 10 bytes = 0.1 s.
    // Rank 0: region [0,2] -> exit_a 1.9; send [2,2.5]: send_a 1.9, exit_a 1.9 + 0.4 = 2.3.
    // The send event is enter.send_m + O = 2.1.
    // Rank 1: probe [0.5,2.25] (first record, enter_a 0.5): m.1 (0.5 <= 2.5),
    //   Comm_m = 2.25 - 2.1 = 0.15; a.1 (1.9 + 0.15 = 2.05 > 0.5): exit_a = 2.05.
    //   recv [2.25,2.5]: enter_a = 2.05 + max(0, 0 - 0.1) = 2.05; m.1 (2.25 <= 2.5),
    //   Comm_m = 2.5 - 2.1 = 0.4; a.1 (2.3 > 2.05): exit_a = 2.3.
    // Only the receive is counted as a message. Late sender: probe measured min(2, 2.25) - 0.5
    // = 1.5, approximated min(1.9, 2.05) - 0.5 = 1.4; the receive adds 0 to both.
    let (sink, s) = run(
        2,
        &[
            "0 region 0 2 a",
            "0 send 2 2.5 1 3 10",
            "1 probe 0.5 2.25 0 3",
            "1 recv 2.25 2.5 0 3 10",
        ],
        &params(&[0.1], 0.01),
    );
    assert_times(rec(&sink, 1, 0), [0.5; 2], [2.05; 2]);
    assert_times(rec(&sink, 1, 1), [2.05; 2], [2.3; 2]);
    assert_eq!(s.cases, [[1, 0, 0], [1, 0, 0]]);
    assert!(close(s.ranks[1].late_sender_m, 1.5));
    assert!(close(s.ranks[1].late_sender_a[LO], 1.4));
    assert_eq!(s.unreceived, 0);
}
