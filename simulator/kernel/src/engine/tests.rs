use super::*;

fn run_to_end(e: &mut Engine) -> Vec<(ActivityId, f64)> {
    let mut out = Vec::new();
    let mut done = Vec::new();
    while e.step(&mut done) {
        for d in done.drain(..) {
            out.push((d, e.now()));
        }
    }
    out
}

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// Reference §11, platform P1: one SHARED link of 125 MB/s and 50 µs; S = 1000 bytes (P = 1016).
/// Closed form: 1.9503 × 50e-6 + 1016 / (125e6/1.05 × 0.341987) = 122.470335 µs.
#[test]
fn isolated_flow_matches_reference_closed_form() {
    let mut e = Engine::new(NetworkConfig::default());
    let l = e.add_link(125e6, false);
    let id = e.start_comm(&[l], &[l], 50e-6, 1016.0);
    let out = run_to_end(&mut e);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, id);
    assert!(rel(out[0].1, 122.470335e-6) < 1e-8, "{}", out[0].1);
}

/// Reference §11 "sendRecv" on SHARED P1: two simultaneous 1000-byte flows in opposite
/// directions; the link carries 2 × 1.05 of weight, each gets B/2.1: 0.000147425669 s.
#[test]
fn two_opposite_flows_share_the_link() {
    let mut e = Engine::new(NetworkConfig::default());
    let l = e.add_link(125e6, false);
    e.start_comm(&[l], &[l], 50e-6, 1016.0);
    e.start_comm(&[l], &[l], 50e-6, 1016.0);
    let out = run_to_end(&mut e);
    assert_eq!(out.len(), 2);
    for (_, t) in out {
        assert!(rel(t, 0.000147425669) < 1e-9, "{t}");
    }
}

/// Reference §11 case G: the link latency set to 100 ms, S = 1e6: the TCP-gamma bound
/// 4194304/(2 × 0.1) = 20.97 MB/s < B; one direction is half of 2.430101488050 s.
#[test]
fn tcp_gamma_bound() {
    let mut e = Engine::new(NetworkConfig::default());
    let l = e.add_link(125e6, false);
    e.start_comm(&[l], &[l], 0.1, 1_000_016.0);
    let out = run_to_end(&mut e);
    assert!(rel(out[0].1, 2.430101488050 / 2.0) < 1e-9, "{}", out[0].1);
}

/// Reference §7: two 1-Gflop execs on a 1-core 1 Gf host take 2 s; on 2 cores, 1 s.
#[test]
fn cpu_sharing() {
    for (cores, expected) in [(1, 2.0), (2, 1.0)] {
        let mut e = Engine::new(NetworkConfig::default());
        let c = e.add_cpu(1e9, cores);
        e.start_exec(c, 1e9);
        e.start_exec(c, 1e9);
        let out = run_to_end(&mut e);
        assert_eq!(out.len(), 2);
        for (_, t) in out {
            assert!(rel(t, expected) < 1e-12, "{cores} cores: {t}");
        }
    }
}

/// A sleep ends at its date and uses no CPU: an exec next to it runs at full speed.
#[test]
fn sleep_uses_no_cpu() {
    let mut e = Engine::new(NetworkConfig::default());
    let c = e.add_cpu(1e9, 1);
    let s = e.start_sleep(3.0);
    let x = e.start_exec(c, 1e9);
    let out = run_to_end(&mut e);
    assert_eq!(out, vec![(x, 1.0), (s, 3.0)]);
}

/// A poll of share w next to an execution on one core leaves it 1/(1 + w) of the core; on two
/// cores it takes the idle one and slows nothing. It never ends, and cancelling it gives the
/// core back: 1 Gflop with a poll of share 1 for the first second (0.5 Gflop done), alone
/// after: done at 1.5 s.
#[test]
fn polls_share_the_cores_until_cancelled() {
    for (cores, share, expected) in [(1, 0.5, 1.5), (1, 1.0, 2.0), (2, 1.0, 1.0)] {
        let mut e = Engine::new(NetworkConfig::default());
        let c = e.add_cpu(1e9, cores);
        let x = e.start_exec(c, 1e9);
        e.start_poll(c, share, f64::INFINITY);
        let out = run_to_end(&mut e);
        assert_eq!(out.len(), 1, "the poll never ends");
        assert_eq!(out[0].0, x);
        assert!(
            rel(out[0].1, expected) < 1e-12,
            "{cores} cores, share {share}: {}",
            out[0].1
        );
        assert_eq!(e.in_progress(), 1, "the poll is still there");
    }
    let mut e = Engine::new(NetworkConfig::default());
    let c = e.add_cpu(1e9, 1);
    let x = e.start_exec(c, 1e9);
    let p = e.start_poll(c, 1.0, f64::INFINITY);
    let s = e.start_sleep(1.0);
    let mut done = Vec::new();
    assert!(e.step(&mut done));
    assert_eq!((done.as_slice(), e.now()), ([s].as_slice(), 1.0));
    e.cancel(p);
    assert_eq!(e.in_progress(), 1);
    let out = run_to_end(&mut e);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, x);
    assert!(rel(out[0].1, 1.5) < 1e-12, "{}", out[0].1);
    assert_eq!(e.in_progress(), 0);
}

/// A poll that spins 0.5 s of CPU time next to an execution of 1 Gflop on one core of 1 Gflop/s
/// (share 1): each gets half the core, so the poll has burnt its 0.5 s of core time (0.5
/// Gflop at 0.5 Gflop/s) at 1.0 s and ends; the execution has done 0.5 Gflop by then and
/// the other 0.5 Gflop alone, done at 1.5 s. With share 0.25 the poll gets 0.2 of the core:
/// it ends at 0.5 / 0.2 = 2.5 s, when the execution (0.8 Gflop/s) has long finished at 1.25 s,
/// and alone it burns the rest (0.5 - 0.25 = 0.25 s of core time) from 1.25 s: ends at 1.5 s.
#[test]
fn a_spinning_poll_ends_after_its_cpu_time() {
    for (share, exec_end, poll_end) in [(1.0, 1.5, 1.0), (0.25, 1.25, 1.5)] {
        let mut e = Engine::new(NetworkConfig::default());
        let c = e.add_cpu(1e9, 1);
        let x = e.start_exec(c, 1e9);
        let p = e.start_poll(c, share, 0.5);
        let mut out = run_to_end(&mut e);
        out.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_eq!(out.len(), 2, "share {share}: {out:?}");
        let at = |id| out.iter().find(|(a, _)| *a == id).map(|o| o.1).unwrap();
        assert!(rel(at(x), exec_end) < 1e-12, "share {share}: {out:?}");
        assert!(rel(at(p), poll_end) < 1e-12, "share {share}: {out:?}");
        assert_eq!(e.in_progress(), 0);
    }
}

/// A cancelled poll says how much of its spin was left: share 1 next to a 1-Gflop execution
/// on one 1 Gflop/s core, spin 0.5 s: at 0.4 s it has burnt 0.2 s of core time, 0.3 s left;
/// an endless one has infinitely much left, an ended one nothing.
#[test]
fn a_cancelled_poll_returns_its_unspent_spin() {
    let mut e = Engine::new(NetworkConfig::default());
    let c = e.add_cpu(1e9, 1);
    e.start_exec(c, 1e9);
    let p = e.start_poll(c, 1.0, 0.5);
    let q = e.start_poll(c, 1.0, f64::INFINITY);
    let s = e.start_sleep(0.6);
    let mut done = Vec::new();
    assert!(e.step(&mut done));
    assert_eq!((done.as_slice(), e.now()), ([s].as_slice(), 0.6));
    // Three contenders for 0.6 s: each has had 0.2 s of core time.
    let left = e.cancel_poll_secs(p);
    assert!((left - 0.3).abs() < 1e-12, "{left}");
    assert_eq!(e.cancel_poll_secs(q), f64::INFINITY);
    assert_eq!(e.cancel_poll_secs(q), 0.0, "already cancelled");
}

/// Incremental and full re-solves give the same dates on a contended mix.
#[test]
fn full_and_incremental_solves_agree() {
    let run = |full: bool| {
        let mut e = Engine::new(NetworkConfig::default());
        e.set_full_solve(full);
        let a = e.add_link(1e9, false);
        let b = e.add_link(1e8, false);
        let s = e.add_link(1e8, false);
        e.start_comm(&[a, s], &[s, a], 10e-6, 1e7);
        e.start_comm(&[b, s], &[s, b], 1e-3, 1e7);
        e.start_comm(&[b], &[b], 1e-3, 5e6);
        run_to_end(&mut e)
            .into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(true), run(false));
}

/// A cluster of `hosts` hosts with private up/down links and a backbone, and a queue of flows
/// (src, dst, bytes): `width` flows start at 0, each completion starts the next one. Returns the
/// completion dates in completion order, with groups from `hub_on` variables (`u32::MAX`: none)
/// and registration waking with ratio `wake` (`lmm::hubs::dormant`).
fn cluster_run(
    hosts: u32,
    flows: &[(u32, u32, f64)],
    width: usize,
    hub_on: u32,
    wake: u32,
) -> Vec<f64> {
    cluster_run_prefetching(hosts, flows, width, hub_on, wake, false)
}

/// [`cluster_run`] with the event heap's prefetch on or off (`Engine::set_prefetching`).
fn cluster_run_prefetching(
    hosts: u32,
    flows: &[(u32, u32, f64)],
    width: usize,
    hub_on: u32,
    wake: u32,
    prefetching: bool,
) -> Vec<f64> {
    let mut e = Engine::new(NetworkConfig::default());
    e.set_prefetching(prefetching);
    if hub_on == u32::MAX {
        e.set_full_solve(true);
    } else {
        e.set_hub_thresholds(hub_on, 1);
        e.set_wake_ratio(wake);
    }
    let up: Vec<u32> = (0..hosts).map(|_| e.add_link(125e6, false)).collect();
    let down: Vec<u32> = (0..hosts).map(|_| e.add_link(125e6, false)).collect();
    let bb = e.add_link(1e9, false);
    let mut next = 0usize;
    let start = |e: &mut Engine, (s, d, bytes): (u32, u32, f64)| {
        let route = [up[s as usize], bb, down[d as usize]];
        let back = [up[d as usize], bb, down[s as usize]];
        e.start_comm(&route, &back, 600e-6, bytes);
    };
    while next < width.min(flows.len()) {
        start(&mut e, flows[next]);
        next += 1;
    }
    let mut dates = Vec::new();
    let mut done = Vec::new();
    while e.step(&mut done) {
        for _ in done.drain(..) {
            dates.push(e.now());
            if next < flows.len() {
                start(&mut e, flows[next]);
                next += 1;
            }
        }
    }
    dates
}

/// A transfer path as `engine/path.rs`'s doc derives it: route up_0, B, down_1 and reverse
/// route up_1, B, down_0 on 125 MB/s private links and a 2.25 GB/s backbone, L = 600 µs. A flow
/// of P = 1e6 B alone gets x = min(125e6 / 1 on up_0, 2.25e9 / 1.05 on B, bound 125e6) =
/// 125e6 B/s and drains at bw_factor(P) = 0.940694 times that after a latency phase of
/// lat_factor(P) × L = 11.6436 × 600e-6 s (SMPI defaults). `start_comm` with the same links
/// reuses the path and gives the same date.
#[test]
fn a_path_gives_the_derived_date_and_is_made_once() {
    let mut e = Engine::new(NetworkConfig::default());
    let (up0, up1) = (e.add_link(125e6, false), e.add_link(125e6, false));
    let (down0, down1) = (e.add_link(125e6, false), e.add_link(125e6, false));
    let bb = e.add_link(2.25e9, false);
    let (route, back) = ([up0, bb, down1], [up1, bb, down0]);
    let path = e.add_path(&route, &back, 600e-6);
    let expected = 11.6436 * 600e-6 + 1e6 / (0.940694 * 125e6);
    let mut done = Vec::new();
    e.start_path_comm(path, 1e6);
    while done.is_empty() && e.step(&mut done) {}
    assert_eq!(done.len(), 1);
    assert!(rel(e.now(), expected) < 1e-12, "{} vs {expected}", e.now());
    let t0 = e.now();
    e.start_comm(&route, &back, 600e-6, 1e6);
    e.start_comm(&route, &back, 600e-6, 1e6);
    done.clear();
    while done.len() < 2 && e.step(&mut done) {}
    // Two flows now share up_0 (125e6 / 2 each, B offers 2.25e9 / 2.1 more).
    let two = 11.6436 * 600e-6 + 1e6 / (0.940694 * 125e6 / 2.0);
    assert!(rel(e.now() - t0, two) < 1e-12, "{} vs {two}", e.now() - t0);
    assert_eq!(
        e.paths.len(),
        2,
        "the path made by add_path and one interned by start_comm"
    );
}

/// Parked variables (`engine/path.rs`): the path of `a_path_gives_the_derived_date_and_is_made_once`
/// (P = 1e6 B alone: 11.6436 × 600e-6 + 1e6 / (0.940694 × 125e6) s). After a transfer ends its
/// variable stays parked on the path at penalty 0: a transfer on the reverse path, which shares
/// the backbone and both private links' reverse elements with it, still gets the whole 125e6
/// B/s (the same date). The next transfer on the first path takes the parked variable back;
/// two at once share up_0 (125e6 / 2 each): one takes it, the other gets a new one, and when
/// both end one is parked and the other removed.
#[test]
fn an_ended_transfer_parks_its_variable_for_the_next() {
    let mut e = Engine::new(NetworkConfig::default());
    let (up0, up1) = (e.add_link(125e6, false), e.add_link(125e6, false));
    let (down0, down1) = (e.add_link(125e6, false), e.add_link(125e6, false));
    let bb = e.add_link(2.25e9, false);
    let there = e.add_path(&[up0, bb, down1], &[up1, bb, down0], 600e-6);
    let back = e.add_path(&[up1, bb, down0], &[up0, bb, down1], 600e-6);
    let alone = 11.6436 * 600e-6 + 1e6 / (0.940694 * 125e6);
    let two = 11.6436 * 600e-6 + 1e6 / (0.940694 * 125e6 / 2.0);
    let mut done = Vec::new();
    let mut t0 = 0.0;
    let mut took = 0;
    for (path, n, secs) in [(there, 1, alone), (back, 1, alone), (there, 2, two)] {
        let ids: Vec<ActivityId> = (0..n).map(|_| e.start_path_comm(path, 1e6)).collect();
        let parked = e.paths.parked(path);
        while done.len() < ids.len() && e.step(&mut done) {
            if parked.is_some() && e.acts[ids[0].0 as usize].var.is_some() {
                assert_eq!(
                    e.acts[ids[0].0 as usize].var, parked,
                    "the first transfer on the path takes its parked variable"
                );
                assert_ne!(e.acts[ids[1].0 as usize].var, parked);
                took += 1;
            }
        }
        assert_eq!(done.len(), ids.len());
        assert!(
            rel(e.now() - t0, secs) < 1e-12,
            "{} vs {secs}",
            e.now() - t0
        );
        assert!(e.paths.parked(path).is_some(), "parked");
        done.clear();
        t0 = e.now();
    }
    assert!(e.paths.parked(back).is_some());
    assert!(took > 0, "the third round took the parked variable");
    assert_eq!(e.in_progress(), 0);
}

/// Hand-derived group run: 40 flows of 1 MB between distinct host pairs on a 40-host cluster
/// (backbone 1 GB/s, private links 125 MB/s, route latency 600 µs), all starting at 0. P =
/// 1e6 B is above 65472 B, so bw_factor 0.940694 and lat_factor 11.6436 (SMPI defaults); every
/// flow has the same penalty p = 600e-6 + 8775 × (2/125e6 + 1/1e9), so each gets x = m/p with
/// m = 1e9 / (40 × 1.05 / p): x = 1e9 / 42 = 23.81 MB/s, below each private link's offer
/// (125e6 / 1.05 per flow): the backbone bottlenecks all 40 and they form one group (hubs from
/// 32 variables). All complete together at 11.6436 × 600e-6 + 1e6 / (0.940694 × 1e9 / 42).
#[test]
fn forty_flows_on_a_backbone_finish_together_as_derived() {
    let flows: Vec<(u32, u32, f64)> = (0..40).map(|i| (i, (i + 1) % 40, 1e6)).collect();
    let expected = 11.6436 * 600e-6 + 1e6 / (0.940694 * 1e9 / 42.0);
    for hub_on in [32, u32::MAX] {
        let dates = cluster_run(40, &flows, 40, hub_on, 0);
        assert_eq!(dates.len(), 40);
        for d in dates {
            assert!(
                rel(d, expected) < 1e-12,
                "{d} vs {expected} (hubs from {hub_on})"
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// Random flow queues on a cluster with a backbone: with groups (hubs from 2 or 4
    /// variables, registration waking at once or after 1 or 2 times the active variables'
    /// walks) the completion dates equal the full re-solve's at 1e-9 relative, and the event
    /// heap's prefetch (a cache hint) leaves every date bit for bit as it was.
    #[test]
    fn groups_give_the_full_solves_dates(
        flows in proptest::collection::vec((0u32..12, 0u32..12, 1u32..400), 1..80),
        width in 1usize..40,
        hub_on in proptest::prop_oneof![proptest::strategy::Just(2u32), proptest::strategy::Just(4u32)],
        wake in 0u32..3,
    ) {
        let flows: Vec<(u32, u32, f64)> = flows
            .into_iter()
            .map(|(s, d, kb)| (s, if d == s { (d + 1) % 12 } else { d }, f64::from(kb) * 1000.0))
            .collect();
        let reference = cluster_run(12, &flows, width, u32::MAX, 0);
        let grouped = cluster_run(12, &flows, width, hub_on, wake);
        let prefetched = cluster_run_prefetching(12, &flows, width, hub_on, wake, true);
        proptest::prop_assert_eq!(&prefetched, &grouped);
        proptest::prop_assert_eq!(reference.len(), grouped.len());
        for (a, b) in reference.iter().zip(&grouped) {
            proptest::prop_assert!(rel(*a, *b) < 1e-9, "{} vs {}", a, b);
        }
    }
}

/// The `cpu` module doc's example: a fast execution (1 Gflop on a 1-core 1 Gf host) gets a
/// variable when a second one starts at 0.5 s with 5e8 flops left; both then get 5e8 flop/s:
/// the first ends at 0.5 + 5e8/5e8 = 1.5 s, the second has 5e8 left then and ends at 2 s.
#[test]
fn a_fast_execution_becomes_a_variable_when_the_core_is_shared() {
    let mut e = Engine::new(NetworkConfig::default());
    let c = e.add_cpu(1e9, 1);
    let x = e.start_exec(c, 1e9);
    assert!(
        e.acts[x.0 as usize].var.is_none(),
        "alone on the core: no variable"
    );
    let s = e.start_sleep(0.5);
    let mut done = Vec::new();
    assert!(e.step(&mut done));
    assert_eq!((done.as_slice(), e.now()), ([s].as_slice(), 0.5));
    let y = e.start_exec(c, 1e9);
    assert!(e.acts[x.0 as usize].var.is_some(), "lifted into the system");
    assert_eq!(e.acts[x.0 as usize].remaining, 5e8);
    let out = run_to_end(&mut e);
    assert_eq!(out, vec![(x, 1.5), (y, 2.0)]);
    assert_eq!(e.cpus[c as usize].vars, 0);
    // With the system empty again, the next execution is fast.
    let z = e.start_exec(c, 1e9);
    assert!(e.acts[z.0 as usize].var.is_none());
    assert_eq!(run_to_end(&mut e), vec![(z, 3.0)]);
}

/// Fast executions end at the dates, bit for bit, that executions with variables give: staggered starts on 1 to 5 cores of a 3.4069 Gf host (n = cores
/// is fast on 1, 2 and 4 cores only, see `cpu`), with more executions than cores at times.
#[test]
fn fast_executions_give_the_reference_dates_bit_for_bit() {
    for cores in 1..=5u32 {
        let run = |fast: bool| {
            let mut e = Engine::new(NetworkConfig::default());
            e.set_fast_exec(fast);
            let c = e.add_cpu(3.4069e9, cores);
            let mut out = Vec::new();
            let mut done = Vec::new();
            for k in 0..12u32 {
                // Starts every 0.3 s; 1.7e9 .. 1.3e10 flops, so that 1 to 4 overlap.
                e.start_exec(c, 1.7e9 * f64::from(1 + k % 4) + 1234.5 * f64::from(k));
                let s = e.start_sleep(0.3);
                loop {
                    assert!(e.step(&mut done));
                    let stop = done.contains(&s);
                    out.extend(done.drain(..).filter(|&d| d != s).map(|d| (d, e.now())));
                    if stop {
                        break;
                    }
                }
            }
            out.extend(run_to_end(&mut e));
            out
        };
        let (fast, reference) = (run(true), run(false));
        assert_eq!(fast.len(), 12);
        assert_eq!(fast, reference, "{cores} cores");
    }
}

/// `Engine::stats` on two flows, derived by hand. Link A (12.5 MB/s) and link B (1.25 GB/s);
/// f1 crosses A and B (latency 1 µs), f2 crosses B only (latency 1 ms); each route is its own
/// back route, so each element weighs 1.05. Steps: (1) nothing running, an empty solve; (2)
/// f1's latency ends: a component {A, B} with f1, a filling of one round (A saturates first;
/// B then has no unfixed variable), 2 live constraints scanned, then 0; (3) f2's latency
/// ends: {A, B} with f1 and f2, A saturates first (C/1.05 against C_B/2.1), then B: two
/// rounds, 2 + 1 + 0 scanned, and f1's rate is bit for bit the one it had; (4) f2 (1 MB at
/// about 0.6 GB/s) ends long before f1 (1 MB at 12 MB/s): f1 alone again, one round, 2
/// scanned, its rate unchanged; (5) f1 ends: its constraints are left without an active
/// variable, nothing to solve. Rate updates: f1 at (2), (3), (4), f2 at (3): 4, of which 2
/// unchanged. The memo misses at (4): its walk starts from B, (2)'s from A. No constraint
/// ever has 32 active variables, so the hubs stay dormant (no wake) and nothing registers or
/// groups. The region
/// path (`lmm::region`, tested there) is off, so that every general solve walks its component.
#[test]
fn the_kernel_counts_its_solves_and_unchanged_rates() {
    let mut e = Engine::new(NetworkConfig::default());
    e.set_region_filling(false);
    let a = e.add_link(12.5e6, false);
    let b = e.add_link(1.25e9, false);
    let f1 = e.start_comm(&[a, b], &[a, b], 1e-6, 1e6);
    let f2 = e.start_comm(&[b], &[b], 1e-3, 1e6);
    let out = run_to_end(&mut e);
    assert_eq!(out.iter().map(|d| d.0).collect::<Vec<_>>(), vec![f2, f1]);
    assert_eq!(
        e.stats(),
        crate::KernelStats {
            solves: 5,
            rest_hits: 0,
            general_solves: 3,
            general_constraints: 6,
            memo_hits: 0,
            fillings: 3,
            filling_rounds: 4,
            live_scanned: 7,
            region_solves: 0,
            region_vars: 0,
            region_gave_up: 0,
            registrations: 0,
            wakes: 0,
            grouped: 0,
            rate_updates: 4,
            unchanged_rates: 2,
        }
    );
}
