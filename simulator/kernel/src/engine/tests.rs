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
