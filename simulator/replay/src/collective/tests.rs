//! Tests of the collective schedules.
//!
//! Three oracles run on the schedules of all ranks of communicators of 1 to 9 ranks, for every
//! algorithm, several roots and several payloads:
//! * [`check_matching`]: every send has exactly one receive at its peer with the same tag, in
//!   FIFO order per (source, destination, tag), posting at least the bytes sent;
//! * [`execute`]: a tiny abstract executor (a blocking `Send` of ≥ 65536 bytes waits for its
//!   match, smaller ones are detached; `Recv` and `WaitAll` block) must finish without deadlock.
//!   It also propagates "knowledge" along messages (a message carries everything its sender
//!   knew when posting it), so the final state tells whether the collective did its job: after
//!   an allreduce every rank has heard from every rank, after a bcast from the root, …;
//! * total bytes against the closed form of the algorithm where there is one.
//!
//! Plus exact schedules written by hand from the SimGrid 3.32 sources.

use std::collections::{HashMap, VecDeque};

use super::*;

/// Detached-send threshold of the executor (SimGrid's `smpi/send-is-detached-thresh`).
const DETACHED: u64 = 65536;

/// Appends the schedule of the given rank.
type Build<'a> = &'a dyn Fn(u32, &mut Vec<Op>) -> Result<(), CollectiveError>;

/// Builds the schedules of all ranks.
fn all_ranks(size: u32, f: Build) -> Vec<Vec<Op>> {
    (0..size)
        .map(|rank| {
            let mut out = Vec::new();
            f(rank, &mut out).unwrap_or_else(|e| panic!("rank {rank}/{size}: {e}"));
            out
        })
        .collect()
}

/// Static matching check; returns (messages, bytes sent).
fn check_matching(scheds: &[Vec<Op>]) -> Result<(usize, u64), String> {
    type Key = (u32, u32, i32);
    let mut sends: HashMap<Key, Vec<u64>> = HashMap::new();
    let mut recvs: HashMap<Key, Vec<u64>> = HashMap::new();
    let (mut messages, mut bytes_sent) = (0, 0);
    for (rank, sched) in scheds.iter().enumerate() {
        let rank = rank as u32;
        let mut pending = 0;
        for op in sched {
            match *op {
                Op::Isend { peer, bytes, tag } | Op::Send { peer, bytes, tag } => {
                    if peer as usize >= scheds.len() {
                        return Err(format!("rank {rank} sends to missing rank {peer}"));
                    }
                    sends.entry((rank, peer, tag)).or_default().push(bytes);
                    messages += 1;
                    bytes_sent += bytes;
                }
                Op::Irecv { peer, bytes, tag } | Op::Recv { peer, bytes, tag } => {
                    if peer as usize >= scheds.len() {
                        return Err(format!("rank {rank} receives from missing rank {peer}"));
                    }
                    recvs.entry((peer, rank, tag)).or_default().push(bytes);
                }
                Op::WaitAll | Op::WaitEach | Op::Exec { .. } => {}
            }
            match op {
                Op::Isend { .. } | Op::Irecv { .. } => pending += 1,
                Op::WaitAll | Op::WaitEach => {
                    if pending == 0 {
                        return Err(format!("rank {rank}: WaitAll with nothing pending"));
                    }
                    pending = 0;
                }
                _ => {}
            }
        }
        if pending > 0 {
            return Err(format!("rank {rank} ends with {pending} unwaited requests"));
        }
    }
    for (key, s) in &sends {
        let r = recvs.get(key).map_or(&[][..], Vec::as_slice);
        if s.len() != r.len() {
            return Err(format!(
                "{key:?}: {} sends but {} receives",
                s.len(),
                r.len()
            ));
        }
        for (k, (sent, posted)) in s.iter().zip(r).enumerate() {
            if posted < sent {
                return Err(format!(
                    "{key:?} message {k}: {sent} bytes sent, {posted} posted"
                ));
            }
        }
    }
    if let Some((key, r)) = recvs.iter().find(|(key, _)| !sends.contains_key(key)) {
        return Err(format!("{key:?}: {} receives without sends", r.len()));
    }
    Ok((messages, bytes_sent))
}

/// A request of the executor.
struct Req {
    matched: bool,
    /// A send below the detached threshold: complete as soon as posted.
    detached: bool,
}

/// Runs all schedules with blocking semantics; returns each rank's knowledge (bit i: has heard,
/// possibly indirectly, from rank i), or a description of the deadlock.
fn execute(scheds: &[Vec<Op>]) -> Result<Vec<u64>, String> {
    type Key = (u32, u32, i32);
    let n = scheds.len();
    let mut know: Vec<u64> = (0..n).map(|i| 1u64 << i).collect();
    let mut reqs: Vec<Req> = Vec::new();
    // Unmatched sends (request, knowledge carried) and receives (request) per key.
    let mut send_q: HashMap<Key, VecDeque<(usize, u64)>> = HashMap::new();
    let mut recv_q: HashMap<Key, VecDeque<usize>> = HashMap::new();
    let mut pc = vec![0usize; n];
    let mut pending: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Request of the blocking op at `pc`, once posted.
    let mut blocking: Vec<Option<usize>> = vec![None; n];

    let post_send = |reqs: &mut Vec<Req>,
                     send_q: &mut HashMap<Key, VecDeque<(usize, u64)>>,
                     recv_q: &mut HashMap<Key, VecDeque<usize>>,
                     know: &mut Vec<u64>,
                     me: u32,
                     peer: u32,
                     bytes: u64,
                     tag: i32|
     -> usize {
        let id = reqs.len();
        reqs.push(Req {
            matched: false,
            detached: bytes < DETACHED,
        });
        let carried = know[me as usize];
        if let Some(r) = recv_q
            .get_mut(&(me, peer, tag))
            .and_then(VecDeque::pop_front)
        {
            reqs[r].matched = true;
            reqs[id].matched = true;
            know[peer as usize] |= carried;
        } else {
            send_q
                .entry((me, peer, tag))
                .or_default()
                .push_back((id, carried));
        }
        id
    };

    loop {
        let mut progress = false;
        for me in 0..n {
            while let Some(&op) = scheds[me].get(pc[me]) {
                let me32 = me as u32;
                let advance = match op {
                    Op::Isend { peer, bytes, tag } => {
                        let id = post_send(
                            &mut reqs,
                            &mut send_q,
                            &mut recv_q,
                            &mut know,
                            me32,
                            peer,
                            bytes,
                            tag,
                        );
                        pending[me].push(id);
                        true
                    }
                    Op::Send { peer, bytes, tag } => {
                        let id = *blocking[me].get_or_insert_with(|| {
                            post_send(
                                &mut reqs,
                                &mut send_q,
                                &mut recv_q,
                                &mut know,
                                me32,
                                peer,
                                bytes,
                                tag,
                            )
                        });
                        reqs[id].matched || reqs[id].detached
                    }
                    Op::Irecv { peer, tag, .. } | Op::Recv { peer, tag, .. } => {
                        let is_blocking = matches!(op, Op::Recv { .. });
                        let id = match blocking[me] {
                            Some(id) => id,
                            None => {
                                let id = reqs.len();
                                reqs.push(Req {
                                    matched: false,
                                    detached: false,
                                });
                                let key = (peer, me32, tag);
                                if let Some((s, carried)) =
                                    send_q.get_mut(&key).and_then(VecDeque::pop_front)
                                {
                                    reqs[s].matched = true;
                                    reqs[id].matched = true;
                                    know[me] |= carried;
                                } else {
                                    recv_q.entry(key).or_default().push_back(id);
                                }
                                if is_blocking {
                                    blocking[me] = Some(id);
                                } else {
                                    pending[me].push(id);
                                }
                                id
                            }
                        };
                        !is_blocking || reqs[id].matched
                    }
                    Op::WaitAll | Op::WaitEach => pending[me]
                        .iter()
                        .all(|&id| reqs[id].matched || reqs[id].detached),
                    Op::Exec { .. } => true,
                };
                if !advance {
                    break;
                }
                if matches!(op, Op::WaitAll | Op::WaitEach) {
                    pending[me].clear();
                }
                blocking[me] = None;
                pc[me] += 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    let stuck: Vec<String> = (0..n)
        .filter(|&r| pc[r] < scheds[r].len())
        .map(|r| format!("rank {r} at op {} {:?}", pc[r], scheds[r][pc[r]]))
        .collect();
    if !stuck.is_empty() {
        return Err(format!("deadlock: {}", stuck.join("; ")));
    }
    if let Some(r) = pending.iter().position(|p| !p.is_empty()) {
        return Err(format!("rank {r} ends with unwaited requests"));
    }
    if let Some((key, q)) = send_q.iter().find(|(_, q)| !q.is_empty()) {
        return Err(format!("{key:?}: {} sends never received", q.len()));
    }
    if let Some((key, q)) = recv_q.iter().find(|(_, q)| !q.is_empty()) {
        return Err(format!("{key:?}: {} receives never matched", q.len()));
    }
    Ok(know)
}

/// What every rank must have heard of at the end.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Every rank has heard from every rank.
    All,
    /// Every rank has heard from the root.
    FromRoot(u32),
    /// The root has heard from every rank.
    ToRoot(u32),
    /// Rank r has heard from every rank ≤ r.
    Prefix,
    /// No requirement (payloads of 0 elements may legitimately send nothing).
    Nothing,
}

/// Runs the three oracles; returns (messages, bytes).
fn verify(what: &str, size: u32, expect: Expect, f: Build) -> (usize, u64) {
    let scheds = all_ranks(size, f);
    let stats = check_matching(&scheds).unwrap_or_else(|e| panic!("{what} n={size}: {e}"));
    let know = execute(&scheds).unwrap_or_else(|e| panic!("{what} n={size}: {e}"));
    let everyone = (1u64 << size) - 1;
    for (r, &k) in know.iter().enumerate() {
        let ok = match expect {
            Expect::All => k == everyone,
            Expect::FromRoot(root) => k & (1 << root) != 0,
            Expect::ToRoot(root) => r as u32 != root || k == everyone,
            Expect::Prefix => k & ((2u64 << r) - 1) == (2u64 << r) - 1,
            Expect::Nothing => true,
        };
        assert!(
            ok,
            "{what} n={size}: rank {r} knows {k:#b}, expected {expect:?}"
        );
    }
    stats
}

fn roots(size: u32) -> Vec<u32> {
    let mut r = vec![0, size - 1, size / 2];
    r.dedup();
    r.sort_unstable();
    r.dedup();
    r
}

/// Payloads exercised by the single-buffer collectives: tiny, not a multiple of the rank count,
/// above the detached threshold (blocking sends), mixed datatype sizes, empty.
const PAYLOADS: &[Payload] = &[
    Payload::new(3, 8),
    Payload::new(7, 1),
    Payload::new(20000, 4),
    Payload::new(131, 8),
    Payload::new(9000, 8),
    Payload::new(0, 8),
];

fn expect_or_nothing(data: Payload, expect: Expect) -> Expect {
    if data.count == 0 {
        Expect::Nothing
    } else {
        expect
    }
}

#[test]
fn barrier_all_algorithms() {
    for &algo in BarrierAlgo::ALL {
        let cfg = CollectiveConfig {
            barrier: algo,
            ..Default::default()
        };
        for size in 1..=9 {
            if algo == BarrierAlgo::OmpiTwoProcs && size != 2 {
                let mut out = Vec::new();
                assert!(barrier(&cfg, 0, size, &mut out).is_err());
                continue;
            }
            let what = format!("barrier {algo}");
            let (messages, bytes) = verify(&what, size, Expect::All, &|r, out| {
                barrier(&cfg, r, size, out)
            });
            assert_eq!(bytes, 0, "{what}");
            let n = size as usize;
            let log = (size as f64).log2().ceil() as usize;
            let expected = match algo {
                BarrierAlgo::Default | BarrierAlgo::OmpiBasicLinear => Some(2 * (n - 1)),
                BarrierAlgo::OmpiBruck | BarrierAlgo::Mpich => Some(n * log),
                BarrierAlgo::OmpiTree => Some(2 * (n - 1)),
                BarrierAlgo::OmpiDoubleRing => Some(2 * n),
                BarrierAlgo::Ompi if (4..8).contains(&size) => Some(2 * (n - 1)),
                _ if size.is_power_of_two() => Some(n * log),
                _ => None,
            };
            if let Some(expected) = expected {
                assert_eq!(messages, expected, "{what} n={size}");
            }
        }
    }
}

#[test]
fn bcast_all_algorithms() {
    for &algo in BcastAlgo::ALL {
        let cfg = CollectiveConfig {
            bcast: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for root in roots(size) {
                for &data in PAYLOADS {
                    let what = format!("bcast {algo} root {root} {data:?}");
                    let expect = expect_or_nothing(data, Expect::FromRoot(root));
                    let (_, bytes) = verify(&what, size, expect, &|r, out| {
                        bcast(&cfg, r, size, root, data, out)
                    });
                    let (n, b) = (u64::from(size), data.bytes());
                    let expected = match algo {
                        BcastAlgo::Default | BcastAlgo::BinomialTree | BcastAlgo::Flattree => {
                            Some((n - 1) * b)
                        }
                        BcastAlgo::FlattreePipeline => {
                            let seg = 8192 / data.dt_size;
                            let pipes = data.count / seg;
                            Some(
                                (n - 1)
                                    * if pipes == 0 {
                                        b
                                    } else {
                                        pipes * seg * data.dt_size
                                    },
                            )
                        }
                        // Binomial scatter of n blocks ((n/2) log2 n block moves) + allgather
                        // of n - 1 blocks per rank, when the blocks are even.
                        BcastAlgo::ScatterLrAllgather | BcastAlgo::ScatterRdbAllgather
                            if size.is_power_of_two() && b % n == 0 && b > 0 =>
                        {
                            let log = u64::from(size.trailing_zeros());
                            Some((n / 2 * log + n * (n - 1)) * (b / n))
                        }
                        _ => None,
                    };
                    if let Some(expected) = expected {
                        assert_eq!(bytes, expected, "{what} n={size}");
                    }
                }
            }
        }
    }
}

#[test]
fn reduce_all_algorithms() {
    for &algo in ReduceAlgo::ALL {
        let cfg = CollectiveConfig {
            reduce: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for root in roots(size) {
                for &data in PAYLOADS {
                    let what = format!("reduce {algo} root {root} {data:?}");
                    let expect = expect_or_nothing(data, Expect::ToRoot(root));
                    let (_, bytes) = verify(&what, size, expect, &|r, out| {
                        reduce(&cfg, r, size, root, data, out)
                    });
                    assert_eq!(bytes, u64::from(size - 1) * data.bytes(), "{what}");
                }
            }
        }
    }
}

#[test]
fn allreduce_all_algorithms() {
    for &algo in AllreduceAlgo::ALL {
        let cfg = CollectiveConfig {
            allreduce: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for &data in PAYLOADS {
                let what = format!("allreduce {algo} {data:?}");
                let expect = expect_or_nothing(data, Expect::All);
                let (_, bytes) = verify(&what, size, expect, &|r, out| {
                    allreduce(&cfg, r, size, data, out)
                });
                let (n, b) = (u64::from(size), data.bytes());
                let divisible = data.count % n == 0 && data.count >= n;
                let expected = match algo {
                    AllreduceAlgo::Default | AllreduceAlgo::Redbcast => Some(2 * (n - 1) * b),
                    AllreduceAlgo::Lr | AllreduceAlgo::Rab2 if divisible => Some(2 * (n - 1) * b),
                    AllreduceAlgo::Rdb if size.is_power_of_two() => {
                        Some(n * u64::from(size.trailing_zeros()) * b)
                    }
                    AllreduceAlgo::RabRdb | AllreduceAlgo::Rab1
                        if size.is_power_of_two() && divisible =>
                    {
                        Some(2 * (n - 1) * b)
                    }
                    _ => None,
                };
                if let Some(expected) = expected {
                    assert_eq!(bytes, expected, "{what} n={size}");
                }
            }
        }
    }
}

/// (send, recv) pairs for alltoall-like collectives.
const PAIRS: &[(Payload, Payload)] = &[
    (Payload::new(3, 8), Payload::new(3, 8)),
    (Payload::new(10000, 8), Payload::new(10000, 8)),
    (Payload::new(6, 4), Payload::new(3, 8)),
    (Payload::new(0, 4), Payload::new(0, 4)),
];

#[test]
fn alltoall_all_algorithms() {
    for &algo in AlltoallAlgo::ALL {
        let cfg = CollectiveConfig {
            alltoall: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for &(send, recv) in PAIRS {
                let what = format!("alltoall {algo} {send:?} {recv:?}");
                let expect = expect_or_nothing(send, Expect::All);
                let (_, bytes) = verify(&what, size, expect, &|r, out| {
                    alltoall(&cfg, r, size, send, recv, out)
                });
                let (n, b) = (u64::from(size), send.bytes());
                let direct = n * (n - 1) * b;
                let expected = match algo {
                    AlltoallAlgo::BasicLinear
                    | AlltoallAlgo::Pair
                    | AlltoallAlgo::Ring
                    | AlltoallAlgo::PairMpiBarrier
                    | AlltoallAlgo::PairOneBarrier
                    | AlltoallAlgo::RingMpiBarrier
                    | AlltoallAlgo::RingOneBarrier => Some(direct),
                    AlltoallAlgo::PairLightBarrier | AlltoallAlgo::RingLightBarrier => {
                        Some(direct + n * n.saturating_sub(2))
                    }
                    AlltoallAlgo::Bruck => {
                        let blocks: u64 = (1..size).map(|b| u64::from(b.count_ones())).sum();
                        Some(n * blocks * send.count * recv.dt_size)
                    }
                    AlltoallAlgo::Mvapich2ScatterDest if recv.count > 0 => Some(n * n * b),
                    // (With different send and receive types SimGrid's rdb mixes units.)
                    AlltoallAlgo::Rdb if size.is_power_of_two() && send == recv => {
                        // Each rank doubles what it holds at each of the log2 n steps.
                        Some(n * (n - 1) * n * b)
                    }
                    _ => None,
                };
                if let Some(expected) = expected {
                    assert_eq!(bytes, expected, "{what} n={size}");
                }
            }
        }
    }
}

/// Irregular per-rank counts (zeros included).
fn counts(size: u32, seed: u64) -> Vec<u64> {
    (0..u64::from(size))
        .map(|i| (i * 7 + seed * 3) % 5 * (1 + seed * 4000))
        .collect()
}

#[test]
fn alltoallv_all_algorithms() {
    for &algo in AlltoallvAlgo::ALL {
        let cfg = CollectiveConfig {
            alltoallv: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for seed in 0..3 {
                // Rank r sends (r + d) elements to rank d, so rank d receives (s + d) from s.
                let send_counts: Vec<Vec<u64>> = (0..u64::from(size))
                    .map(|r| (0..u64::from(size)).map(|d| r + d + seed * 9000).collect())
                    .collect();
                let what = format!("alltoallv {algo} seed {seed}");
                let (_, bytes) = verify(&what, size, Expect::All, &|r, out| {
                    let mine = &send_counts[r as usize];
                    let send = VarPayload::new(mine, 8);
                    // Received from s: what s sends to r = s + r (+ seed term).
                    let recv = VarPayload::new(mine, 8);
                    alltoallv(&cfg, r, size, send, recv, out)
                });
                let off_diagonal: u64 = (0..size)
                    .flat_map(|r| (0..size).filter(move |&d| d != r).map(move |d| (r, d)))
                    .map(|(r, d)| send_counts[r as usize][d as usize] * 8)
                    .sum();
                let extra = match algo {
                    AlltoallvAlgo::PairLightBarrier | AlltoallvAlgo::RingLightBarrier => {
                        u64::from(size) * u64::from(size.saturating_sub(2))
                    }
                    _ => 0,
                };
                assert_eq!(bytes, off_diagonal + extra, "{what} n={size}");
            }
        }
    }
}

#[test]
fn gather_scatter_all_algorithms() {
    for size in 1..=9u32 {
        for root in roots(size) {
            for &(send, recv) in PAIRS {
                let n = u64::from(size);
                for &algo in GatherAlgo::ALL {
                    let cfg = CollectiveConfig {
                        gather: algo,
                        ..Default::default()
                    };
                    let what = format!("gather {algo} root {root} {send:?}");
                    let (_, bytes) = verify(&what, size, Expect::ToRoot(root), &|r, out| {
                        gather(&cfg, r, size, root, send, recv, out)
                    });
                    if matches!(algo, GatherAlgo::Default | GatherAlgo::OmpiBasicLinear) {
                        assert_eq!(bytes, (n - 1) * send.bytes(), "{what}");
                    }
                }
                for &algo in ScatterAlgo::ALL {
                    let cfg = CollectiveConfig {
                        scatter: algo,
                        ..Default::default()
                    };
                    let what = format!("scatter {algo} root {root} {send:?}");
                    let (_, bytes) = verify(&what, size, Expect::FromRoot(root), &|r, out| {
                        scatter(&cfg, r, size, root, send, recv, out)
                    });
                    if !matches!(
                        algo,
                        ScatterAlgo::OmpiBinomial | ScatterAlgo::Mpich | ScatterAlgo::Ompi
                    ) {
                        assert_eq!(bytes, (n - 1) * send.bytes(), "{what}");
                    }
                }
            }
            for seed in 0..3 {
                let c = counts(size, seed);
                let cfg = CollectiveConfig::default();
                let what = format!("gatherv root {root} {c:?}");
                let (_, bytes) = verify(&what, size, Expect::ToRoot(root), &|r, out| {
                    gatherv(
                        &cfg,
                        r,
                        size,
                        root,
                        Payload::new(c[r as usize], 4),
                        VarPayload::new(&c, 4),
                        out,
                    )
                });
                let others: u64 = (0..size)
                    .filter(|&i| i != root)
                    .map(|i| c[i as usize] * 4)
                    .sum();
                assert_eq!(bytes, others, "{what}");
                let what = format!("scatterv root {root} {c:?}");
                let (_, bytes) = verify(&what, size, Expect::FromRoot(root), &|r, out| {
                    scatterv(
                        &cfg,
                        r,
                        size,
                        root,
                        VarPayload::new(&c, 4),
                        Payload::new(c[r as usize], 4),
                        out,
                    )
                });
                assert_eq!(bytes, others, "{what}");
            }
        }
    }
}

#[test]
fn binomial_gather_scatter_move_subtrees() {
    // In-order binomial tree: each non-root rank forwards its whole subtree once.
    for size in 1..=9u32 {
        for root in roots(size) {
            let block = Payload::new(5, 8);
            let subtree_blocks: u64 = (1..size)
                .map(|v| {
                    let low = v & v.wrapping_neg();
                    u64::from(low.min(size - v))
                })
                .sum();
            let cfg = CollectiveConfig {
                gather: GatherAlgo::OmpiBinomial,
                scatter: ScatterAlgo::OmpiBinomial,
                ..Default::default()
            };
            let (_, g) = verify("gather binomial", size, Expect::ToRoot(root), &|r, out| {
                gather(&cfg, r, size, root, block, block, out)
            });
            let (_, s) = verify(
                "scatter binomial",
                size,
                Expect::FromRoot(root),
                &|r, out| scatter(&cfg, r, size, root, block, block, out),
            );
            assert_eq!(
                g,
                subtree_blocks * block.bytes(),
                "gather n={size} root={root}"
            );
            assert_eq!(
                s,
                subtree_blocks * block.bytes(),
                "scatter n={size} root={root}"
            );
        }
    }
}

#[test]
fn allgather_all_algorithms() {
    for &algo in AllgatherAlgo::ALL {
        let cfg = CollectiveConfig {
            allgather: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for &(send, recv) in PAIRS {
                let what = format!("allgather {algo} {send:?} {recv:?}");
                let (_, bytes) = verify(&what, size, Expect::All, &|r, out| {
                    allgather(&cfg, r, size, send, recv, out)
                });
                let n = u64::from(size);
                let direct = n * (n - 1) * send.bytes();
                let expected = match algo {
                    AllgatherAlgo::Default
                    | AllgatherAlgo::Ring
                    | AllgatherAlgo::Pair
                    | AllgatherAlgo::Ntslr
                    | AllgatherAlgo::SpreadingSimple
                    | AllgatherAlgo::OmpiNeighborexchange
                    | AllgatherAlgo::Bruck => Some(direct),
                    // Plus the initial swap of each rank's block with its bit-reversed rank.
                    AllgatherAlgo::Rhv if size.is_power_of_two() => {
                        let bits = size.trailing_zeros();
                        let swapped = (0..size)
                            .filter(|&r| bits > 0 && r.reverse_bits() >> (32 - bits) != r)
                            .count() as u64;
                        Some(direct + swapped * send.bytes())
                    }
                    AllgatherAlgo::Rhv => Some(direct),
                    // (With different send and receive types SimGrid's rdb mixes units.)
                    AllgatherAlgo::Rdb if send == recv => Some(direct),
                    AllgatherAlgo::Gb => Some((n - 1) * send.bytes() + (n - 1) * n * recv.bytes()),
                    _ => None,
                };
                if send.bytes() == recv.bytes() {
                    if let Some(expected) = expected {
                        assert_eq!(bytes, expected, "{what} n={size}");
                    }
                }
            }
        }
    }
}

#[test]
fn allgatherv_all_algorithms() {
    for &algo in AllgathervAlgo::ALL {
        let cfg = CollectiveConfig {
            allgatherv: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for seed in 0..3 {
                let c: Vec<u64> = counts(size, seed).iter().map(|x| x + seed).collect();
                let what = format!("allgatherv {algo} {c:?}");
                let expect = if c.iter().all(|&x| x > 0) {
                    Expect::All
                } else {
                    Expect::Nothing
                };
                let (_, bytes) = verify(&what, size, expect, &|r, out| {
                    let send = Payload::new(c[r as usize], 4);
                    allgatherv(&cfg, r, size, send, VarPayload::new(&c, 4), &[], out)
                });
                let total: u64 = c.iter().sum::<u64>() * 4;
                let direct = (u64::from(size) - 1) * total;
                let expected = match algo {
                    // GB broadcasts the whole buffer; ompi may pick GB.
                    AllgathervAlgo::Gb | AllgathervAlgo::Ompi => None,
                    AllgathervAlgo::Mpich | AllgathervAlgo::MpichRdb if total == 0 => Some(0),
                    _ => Some(direct),
                };
                if let Some(expected) = expected {
                    assert_eq!(bytes, expected, "{what} n={size}");
                }
            }
        }
    }
}

#[test]
fn reduce_scatter_all_algorithms() {
    for &algo in ReduceScatterAlgo::ALL {
        let cfg = CollectiveConfig {
            reduce_scatter: algo,
            ..Default::default()
        };
        for size in 1..=9u32 {
            for seed in 0..4 {
                let c: Vec<u64> = if seed == 3 {
                    vec![6; size as usize]
                } else {
                    counts(size, seed).iter().map(|x| x + 1).collect()
                };
                let what = format!("reduce_scatter {algo} {c:?}");
                let (_, bytes) = verify(&what, size, Expect::All, &|r, out| {
                    reduce_scatter(&cfg, r, size, VarPayload::new(&c, 8), out)
                });
                let total: u64 = c.iter().sum::<u64>() * 8;
                if algo == ReduceScatterAlgo::MpichPair {
                    assert_eq!(bytes, (u64::from(size) - 1) * total, "{what}");
                }
                if algo == ReduceScatterAlgo::Default && seed == 3 {
                    // Reduce of everything to 0, then scatterv of the other ranks' blocks.
                    let expected = (u64::from(size) - 1) * total + (total - c[0] * 8);
                    assert_eq!(bytes, expected, "{what}");
                }
            }
        }
    }
}

#[test]
fn scan_and_exscan() {
    let cfg = CollectiveConfig::default();
    for size in 1..=9u32 {
        let data = Payload::new(4, 8);
        let n = u64::from(size);
        let (_, b1) = verify("scan", size, Expect::Prefix, &|r, out| {
            scan(&cfg, r, size, data, out)
        });
        let (_, b2) = verify("exscan", size, Expect::Prefix, &|r, out| {
            exscan(&cfg, r, size, data, out)
        });
        assert_eq!(b1, n * (n - 1) / 2 * 32);
        assert_eq!(b1, b2);
    }
}

#[test]
fn invalid_arguments() {
    let cfg = CollectiveConfig::default();
    let mut out = Vec::new();
    let d = Payload::new(1, 1);
    assert_eq!(
        bcast(&cfg, 0, 4, 4, d, &mut out),
        Err(CollectiveError::InvalidRoot { root: 4, size: 4 })
    );
    assert_eq!(
        barrier(&cfg, 5, 4, &mut out),
        Err(CollectiveError::InvalidRank { rank: 5, size: 4 })
    );
    assert_eq!(
        barrier(&cfg, 0, 0, &mut out),
        Err(CollectiveError::EmptyCommunicator)
    );
    assert!(matches!(
        alltoallv(
            &cfg,
            0,
            3,
            VarPayload::new(&[1, 2], 1),
            VarPayload::new(&[1, 2, 3], 1),
            &mut out
        ),
        Err(CollectiveError::WrongLength {
            got: 2,
            size: 3,
            ..
        })
    ));
    assert!(out.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Exact schedules, written by hand from the SimGrid 3.32 sources.

fn send(peer: u32, bytes: u64, tag: i32) -> Op {
    Op::Send { peer, bytes, tag }
}
fn recv(peer: u32, bytes: u64, tag: i32) -> Op {
    Op::Recv { peer, bytes, tag }
}
fn isend(peer: u32, bytes: u64, tag: i32) -> Op {
    Op::Isend { peer, bytes, tag }
}
fn irecv(peer: u32, bytes: u64, tag: i32) -> Op {
    Op::Irecv { peer, bytes, tag }
}
const W: Op = Op::WaitAll;

fn one(f: impl Fn(&mut Vec<Op>) -> Result<(), CollectiveError>) -> Vec<Op> {
    let mut out = Vec::new();
    f(&mut out).unwrap();
    out
}

/// bcast-binomial-tree.cpp, `bcast__binomial_tree`, 6 ranks, root 0: the root sends to 4, 2, 1;
/// 4 relays to 5, 2 to 3.
#[test]
fn exact_bcast_binomial() {
    let cfg = CollectiveConfig::default();
    let d = Payload::new(100, 1);
    let t = tags::BCAST;
    let s = |r| one(|o| bcast(&cfg, r, 6, 0, d, o));
    assert_eq!(
        s(0),
        vec![send(4, 100, t), send(2, 100, t), send(1, 100, t)]
    );
    assert_eq!(s(1), vec![recv(0, 100, t)]);
    assert_eq!(s(2), vec![recv(0, 100, t), send(3, 100, t)]);
    assert_eq!(s(3), vec![recv(2, 100, t)]);
    assert_eq!(s(4), vec![recv(0, 100, t), send(5, 100, t)]);
    assert_eq!(s(5), vec![recv(4, 100, t)]);
    // Root 2 of 5: relative ranks shift; rank 1 (relative 4) receives from 2 + 0.
    let s = |r| one(|o| bcast(&cfg, r, 5, 2, d, o));
    assert_eq!(
        s(2),
        vec![send(1, 100, t), send(4, 100, t), send(3, 100, t)]
    );
    assert_eq!(s(1), vec![recv(2, 100, t)]);
    assert_eq!(s(4), vec![recv(2, 100, t), send(0, 100, t)]);
}

/// barrier-ompi.cpp, `barrier__ompi_basic_linear` (the default), 4 ranks.
#[test]
fn exact_barrier_default() {
    let cfg = CollectiveConfig::default();
    let t = tags::BARRIER;
    assert_eq!(
        one(|o| barrier(&cfg, 0, 4, o)),
        vec![
            irecv(1, 0, t),
            irecv(2, 0, t),
            irecv(3, 0, t),
            W,
            isend(1, 0, t),
            isend(2, 0, t),
            isend(3, 0, t),
            W
        ]
    );
    assert_eq!(
        one(|o| barrier(&cfg, 2, 4, o)),
        vec![send(0, 0, t), recv(0, 0, t)]
    );
    assert!(one(|o| barrier(&cfg, 0, 1, o)).is_empty());
}

/// smpi_nbc_impl.cpp `colls::ireduce` + wait (reduce__default) then bcast-binomial-tree.cpp:
/// `allreduce__default`, 4 ranks.
#[test]
fn exact_allreduce_default() {
    let cfg = CollectiveConfig::default();
    let d = Payload::new(10, 8);
    let (tr, tb) = (tags::REDUCE, tags::BCAST);
    assert_eq!(
        one(|o| allreduce(&cfg, 0, 4, d, o)),
        vec![
            irecv(1, 80, tr),
            irecv(2, 80, tr),
            irecv(3, 80, tr),
            W,
            send(2, 80, tb),
            send(1, 80, tb)
        ]
    );
    assert_eq!(
        one(|o| allreduce(&cfg, 3, 4, d, o)),
        vec![isend(0, 80, tr), W, recv(2, 80, tb)]
    );
}

/// `colls::ireduce` + wait with root 1 of 3 (reduce__default).
#[test]
fn exact_reduce_default() {
    let cfg = CollectiveConfig::default();
    let d = Payload::new(3, 4);
    let t = tags::REDUCE;
    assert_eq!(
        one(|o| reduce(&cfg, 1, 3, 1, d, o)),
        vec![irecv(0, 12, t), irecv(2, 12, t), W]
    );
    assert_eq!(
        one(|o| reduce(&cfg, 2, 3, 1, d, o)),
        vec![isend(1, 12, t), W]
    );
}

/// alltoall-basic-linear.cpp: receives from rank+1, rank+2, …; sends to rank-1, rank-2, ….
#[test]
fn exact_alltoall_basic_linear() {
    let mut cfg = CollectiveConfig::default();
    cfg.set("smpi/alltoall", "basic_linear").unwrap();
    let d = Payload::new(2, 8);
    let t = tags::ALLTOALL;
    assert_eq!(
        one(|o| alltoall(&cfg, 1, 4, d, d, o)),
        vec![
            irecv(2, 16, t),
            irecv(3, 16, t),
            irecv(0, 16, t),
            isend(0, 16, t),
            isend(3, 16, t),
            isend(2, 16, t),
            W
        ]
    );
}

/// smpi_openmpi_selector.cpp `alltoall__ompi`: the reference's table, incl. the abort case
/// (N=3, 600000 B: pair, which SimGrid rejects; timeless runs it in ring order).
#[test]
fn alltoall_ompi_decisions() {
    use super::alltoall::ompi_choice;
    use AlltoallAlgo::*;
    assert_eq!(ompi_choice(3, 600000), Pair);
    assert_eq!(ompi_choice(3, 1048576), BasicLinear);
    assert_eq!(ompi_choice(2, 1), Pair);
    assert_eq!(ompi_choice(2, 2), BasicLinear);
    assert_eq!(ompi_choice(2, 100), Pair);
    assert_eq!(ompi_choice(2, 300000), BasicLinear);
    assert_eq!(ompi_choice(2, 2_000_000), Pair);
    assert_eq!(ompi_choice(12, 1 << 30), BasicLinear);
    assert_eq!(ompi_choice(20, 3), BasicLinear);
    assert_eq!(ompi_choice(20, 100), Bruck);
    assert_eq!(ompi_choice(100, 1000), Bruck);
    assert_eq!(ompi_choice(100, 300000), Pair);
    assert_eq!(ompi_choice(300, 40000), Pair);
    assert_eq!(ompi_choice(5000, 2047), Bruck);
    // The default runs the decision: with 3 ranks and 600000 B, the ring-order pairwise
    // exchange (step 0 is the local copy).
    let cfg = CollectiveConfig::default();
    let d = Payload::new(600000, 1);
    let t = tags::ALLTOALL;
    assert_eq!(
        one(|o| alltoall(&cfg, 0, 3, d, d, o)),
        vec![
            isend(1, 600000, t),
            irecv(2, 600000, t),
            W,
            isend(2, 600000, t),
            irecv(1, 600000, t),
            W
        ]
    );
}

/// smpi_coll.cpp `colls::scan`: irecv from lower ranks, isend to higher ones, tag -888, then
/// (replay's `MPI_OP_NULL` is not commutative) `Request::wait` on each in posting order.
#[test]
fn exact_scan() {
    let cfg = CollectiveConfig::default();
    let d = Payload::new(1, 8);
    let t = tags::SCAN;
    let each = Op::WaitEach;
    assert_eq!(
        one(|o| scan(&cfg, 1, 3, d, o)),
        vec![irecv(0, 8, t), isend(2, 8, t), each]
    );
    assert_eq!(
        one(|o| exscan(&cfg, 2, 3, d, o)),
        vec![irecv(0, 8, t), irecv(1, 8, t), each]
    );
}

/// smpi_default_selector.cpp `reduce_scatter__default`, regular counts: reduce__default to 0
/// then `colls::scatterv` from 0.
#[test]
fn exact_reduce_scatter_default_regular() {
    let cfg = CollectiveConfig::default();
    let c = [2u64, 2, 2];
    let v = VarPayload::new(&c, 8);
    assert_eq!(
        one(|o| reduce_scatter(&cfg, 0, 3, v, o)),
        vec![
            irecv(1, 48, tags::REDUCE),
            irecv(2, 48, tags::REDUCE),
            W,
            isend(1, 16, tags::SCATTERV),
            isend(2, 16, tags::SCATTERV),
            W
        ]
    );
    assert_eq!(
        one(|o| reduce_scatter(&cfg, 2, 3, v, o)),
        vec![
            isend(0, 48, tags::REDUCE),
            W,
            irecv(0, 16, tags::SCATTERV),
            W
        ]
    );
}

/// reduce_scatter-mpich.cpp, irregular counts below 524288 elements: `mpich_rdb`. 2 ranks,
/// counts [1, 3]: each sends the other's block and receives its own.
#[test]
fn exact_reduce_scatter_default_irregular() {
    let cfg = CollectiveConfig::default();
    let c = [1u64, 3];
    let v = VarPayload::new(&c, 4);
    let t = tags::REDUCE_SCATTER;
    assert_eq!(
        one(|o| reduce_scatter(&cfg, 0, 2, v, o)),
        vec![isend(1, 12, t), irecv(1, 4, t), W]
    );
    assert_eq!(
        one(|o| reduce_scatter(&cfg, 1, 2, v, o)),
        vec![isend(0, 4, t), irecv(0, 12, t), W]
    );
    // Above 524288 elements: mpich_pair, same messages for 2 ranks.
    let big = [1u64, 600000];
    let v = VarPayload::new(&big, 1);
    assert_eq!(
        one(|o| reduce_scatter(&cfg, 0, 2, v, o)),
        vec![isend(1, 600000, t), irecv(1, 1, t), W]
    );
}

/// allgather-rdb.cpp with 3 ranks (non-power-of-two fix-up): ranks 0-1 exchange, 0-2 exchange
/// (0 sends both blocks it has, 2 its own), then 0 forwards 2's block to 1.
#[test]
fn exact_allgather_rdb_three() {
    let mut cfg = CollectiveConfig::default();
    cfg.set("smpi/allgather", "rdb").unwrap();
    let d = Payload::new(1, 1);
    let t = tags::ALLGATHER;
    let s = |r| one(|o| allgather(&cfg, r, 3, d, d, o));
    assert_eq!(
        s(0),
        vec![
            isend(1, 1, t),
            irecv(1, 1, t),
            W,
            isend(2, 2, t),
            irecv(2, 2, t),
            W,
            send(1, 1, t)
        ]
    );
    assert_eq!(s(1), vec![isend(0, 1, t), irecv(0, 1, t), W, recv(0, 1, t)]);
    assert_eq!(s(2), vec![isend(0, 1, t), irecv(0, 2, t), W]);
}

/// bcast-scatter-LR-allgather.cpp, 4 ranks, root 0, 8 bytes: the binomial scatter sends 4 B to
/// 2 and 2 B to 1, 2 sends 2 B to 3; then 3 ring steps of 2 B.
#[test]
fn exact_bcast_scatter_lr() {
    let mut cfg = CollectiveConfig::default();
    cfg.set("smpi/bcast", "scatter_LR_allgather").unwrap();
    let d = Payload::new(8, 1);
    let t = tags::BCAST;
    let ring = |right, left| [isend(right, 2, t), irecv(left, 2, t), W];
    let s = |r| one(|o| bcast(&cfg, r, 4, 0, d, o));
    let mut r0 = vec![send(2, 4, t), send(1, 2, t)];
    for _ in 0..3 {
        r0.extend(ring(1, 3));
    }
    assert_eq!(s(0), r0);
    let mut r2 = vec![recv(0, 4, t), send(3, 2, t)];
    for _ in 0..3 {
        r2.extend(ring(3, 1));
    }
    assert_eq!(s(2), r2);
    // Rank 3 posts 8 - 3×2 = 2 bytes.
    assert_eq!(s(3)[0], recv(2, 2, t));
}

/// gather-ompi.cpp `gather__ompi_binomial`, 4 ranks, root 0: in-order binomial tree 0←{1,2},
/// 2←3; 2 forwards 2 blocks.
#[test]
fn exact_gather_binomial() {
    let mut cfg = CollectiveConfig::default();
    cfg.set("smpi/gather", "ompi_binomial").unwrap();
    let b = Payload::new(1, 8);
    let t = tags::GATHER;
    let s = |r| one(|o| gather(&cfg, r, 4, 0, b, b, o));
    assert_eq!(s(0), vec![recv(1, 8, t), recv(2, 16, t)]);
    assert_eq!(s(1), vec![send(0, 8, t)]);
    assert_eq!(s(2), vec![recv(3, 8, t), send(0, 16, t)]);
    assert_eq!(s(3), vec![send(2, 8, t)]);
}

/// alltoall-mvapich-scatter-dest.cpp: rounds of 4 peers, self included.
#[test]
fn exact_alltoall_scatter_dest() {
    let mut cfg = CollectiveConfig::default();
    cfg.set("smpi/alltoall", "mvapich2_scatter_dest").unwrap();
    let d = Payload::new(1, 1);
    let t = tags::ALLTOALL;
    assert_eq!(
        one(|o| alltoall(&cfg, 1, 5, d, d, o)),
        vec![
            irecv(1, 1, t),
            irecv(2, 1, t),
            irecv(3, 1, t),
            irecv(4, 1, t),
            isend(1, 1, t),
            isend(0, 1, t),
            isend(4, 1, t),
            isend(3, 1, t),
            W,
            irecv(0, 1, t),
            isend(2, 1, t),
            W
        ]
    );
}

/// allreduce-lr.cpp: count 5 over 2 ranks: two ring phases of 2 elements with tags
/// ALLREDUCE + 0, then the remainder 1 < 2 through redbcast (default reduce + binomial bcast).
#[test]
fn exact_allreduce_lr_remainder() {
    let mut cfg = CollectiveConfig::default();
    cfg.set("smpi/allreduce", "lr").unwrap();
    let d = Payload::new(5, 8);
    let t = tags::ALLREDUCE;
    assert_eq!(
        one(|o| allreduce(&cfg, 1, 2, d, o)),
        vec![
            isend(0, 16, t),
            irecv(0, 16, t),
            W,
            isend(0, 16, t),
            irecv(0, 16, t),
            W,
            isend(0, 8, tags::REDUCE),
            W,
            recv(0, 8, tags::BCAST)
        ]
    );
}

/// The algorithms whose sizes depend on the communicator's binary structure, on larger and
/// odd sizes than the sweeps above.
#[test]
fn structured_algorithms_on_larger_sizes() {
    let d = Payload::new(37, 8);
    for size in [12u32, 16, 17, 24, 31, 33, 63] {
        for name in [
            "rdb",
            "bruck",
            "ompi_neighborexchange",
            "rhv",
            "ompi",
            "mpich",
        ] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/allgather", name).unwrap();
            verify(
                &format!("allgather {name}"),
                size,
                Expect::All,
                &|r, out| allgather(&cfg, r, size, d, d, out),
            );
        }
        for name in ["rdb", "bruck", "ompi", "mpich", "pair_light_barrier"] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/alltoall", name).unwrap();
            verify(&format!("alltoall {name}"), size, Expect::All, &|r, out| {
                alltoall(&cfg, r, size, d, d, out)
            });
        }
        for name in ["rdb", "rab_rdb", "rab1", "rab2", "lr"] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/allreduce", name).unwrap();
            verify(
                &format!("allreduce {name}"),
                size,
                Expect::All,
                &|r, out| allreduce(&cfg, r, size, d, out),
            );
        }
        for name in ["scatter_rdb_allgather", "scatter_LR_allgather"] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/bcast", name).unwrap();
            for root in [0, size / 3, size - 1] {
                verify(
                    &format!("bcast {name}"),
                    size,
                    Expect::FromRoot(root),
                    &|r, out| bcast(&cfg, r, size, root, d, out),
                );
            }
        }
        let c: Vec<u64> = (0..u64::from(size)).map(|i| i % 4 + 1).collect();
        for name in [
            "mpich_rdb",
            "mpich_pair",
            "ompi_butterfly",
            "ompi_basic_recursivehalving",
        ] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/reduce_scatter", name).unwrap();
            verify(
                &format!("reduce_scatter {name}"),
                size,
                Expect::All,
                &|r, out| reduce_scatter(&cfg, r, size, VarPayload::new(&c, 4), out),
            );
        }
        for name in [
            "mpich_rdb",
            "ompi_bruck",
            "ompi_neighborexchange",
            "mpich_ring",
        ] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/allgatherv", name).unwrap();
            verify(
                &format!("allgatherv {name}"),
                size,
                Expect::All,
                &|r, out| {
                    let send = Payload::new(c[r as usize], 4);
                    allgatherv(&cfg, r, size, send, VarPayload::new(&c, 4), &[], out)
                },
            );
        }
        for name in [
            "ompi",
            "ompi_tree",
            "ompi_recursivedoubling",
            "mvapich2_pair",
            "ompi_bruck",
        ] {
            let mut cfg = CollectiveConfig::default();
            cfg.set("smpi/barrier", name).unwrap();
            verify(&format!("barrier {name}"), size, Expect::All, &|r, out| {
                barrier(&cfg, r, size, out)
            });
        }
    }
}
