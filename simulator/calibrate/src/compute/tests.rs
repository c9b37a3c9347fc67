//! Tests of the flop rate from traced runs (the parent module), with hand-derived values.

use super::*;

fn bursts(segments: &[(f64, f64)], flops: &[f64]) -> RankBursts {
    RankBursts {
        flops: flops.to_vec(),
        segments: segments
            .iter()
            .enumerate()
            .map(|(i, &(start_secs, end_secs))| Segment {
                start_secs,
                end_secs,
                burst: i as u32,
            })
            .collect(),
        span: None,
    }
}

/// By hand: bursts of 2e6 flops between init (exit 10.0) and send (enter 10.004): 4 ms;
/// 1e6 flops between send (exit 10.005) and recv (enter 10.006): 1 ms; the gap after the
/// recv has no compute record and is not a burst. Rank rate = 3e6 / 0.005 = 6e8 flop/s.
#[test]
fn bursts_are_timed_between_calls() {
    let ti = "# header\n0 init\n0 compute 2e6\n0 send 1 0 8 6\n0 compute 1e6\n0 recv 1 0 8 6\n0 finalize\n";
    let timed = "0 10.0 10.0 init\n0 10.004 10.005 send 1 0 8 6\n0 10.006 10.010 recv 1 0 8 6\n0 10.011 10.011 finalize\n";
    let b = rank_bursts(ti, "rank-0.txt", timed, "rank-0.timed.txt").unwrap();
    assert_eq!(b.flops, vec![2e6, 1e6]);
    assert_eq!(b.segments.len(), 2);
    // From init's enter to finalize's exit.
    assert_eq!(b.span, Some((10.0, 10.011)));
    let secs = core_secs(&[&b], 1);
    let r = rank_rate(0, &b, &secs[0]);
    assert_eq!(r.bursts, 2);
    assert!((r.flops - 3e6).abs() < 1e-6);
    assert!((r.wall_secs - 0.005).abs() < 1e-12);
    assert!((r.core_secs - 0.005).abs() < 1e-12);
    assert!((r.flops_per_sec() - 6e8).abs() < 1e-3);
    let run = RunRate {
        dir: PathBuf::new(),
        ranks: vec![
            r,
            RankRate {
                rank: 1,
                flops: 1e9,
                wall_secs: 1.0,
                core_secs: 1.0,
                bursts: 3,
                all_flops: 1e9,
                all_wall_secs: 1.0,
            },
        ],
        hosts: vec![],
        bound_cpus: vec![],
        span_secs: None,
    };
    // The seed: mean over the ranks, (6e8 + 1e9) / 2; pooled: 1.003e9 / 1.005 s.
    assert!((run.seed_flops_per_sec() - 8e8).abs() < 1e-3);
    assert!((run.flops_per_sec() - 1.003e9 / 1.005).abs() < 1e-3);
}

/// A burst carried over 3 gaps of 60 µs (180 µs of wall time, 3e5 flops) is left out: 60 µs
/// per gap is mostly tracer; the 200 µs one-gap burst (4e5 flops: 2e9 flop/s) sets the rate.
#[test]
fn bursts_of_many_short_gaps_do_not_count_for_the_rate() {
    let ti =
        "0 init\n0 bcast 8 0\n0 barrier\n0 compute 3e5\n0 barrier\n0 compute 4e5\n0 finalize\n";
    let timed = "0 0 0 init\n0 60e-6 60e-6 bcast 8 0\n0 120e-6 120e-6 barrier\n\
                 0 180e-6 1.0 barrier\n0 1.0002 1.0002 finalize\n";
    let b = rank_bursts(ti, "t", timed, "tt").unwrap();
    assert_eq!(b.flops, vec![3e5, 4e5]);
    assert_eq!(b.segments.len(), 4);
    let r = rank_rate(0, &b, &core_secs(&[&b], 1)[0]);
    assert_eq!(r.bursts, 1);
    assert!(
        (r.flops_per_sec() - 2e9).abs() < 1e-3 * 2e9,
        "{}",
        r.flops_per_sec()
    );
    assert!((r.all_flops - 7e5).abs() < 1e-6);
}

/// A 50 µs burst (init exit 0 → send enter 50e-6) times the tracer more than the host: it
/// is left out of the rate (but not of the seed's), which the 2 ms burst (send exit 1.0 →
/// recv enter 1.002, 4e6 flops: 2e9 flop/s) sets. Covered: 4e6 of 4.5e6 flops.
#[test]
fn short_bursts_do_not_count_for_the_rate() {
    let ti = "0 init\n0 compute 5e5\n0 send 1 0 8 6\n0 compute 4e6\n0 recv 1 0 8 6\n";
    let timed = "0 0 0 init\n0 50e-6 1.0 send 1 0 8 6\n0 1.002 1.003 recv 1 0 8 6\n";
    let b = rank_bursts(ti, "t", timed, "tt").unwrap();
    let r = rank_rate(0, &b, &core_secs(&[&b], 1)[0]);
    assert_eq!(r.bursts, 1);
    assert!((r.flops_per_sec() - 2e9).abs() < 1e-3 * 2e9);
    assert!((r.all_flops - 4.5e6).abs() < 1e-6);
    // The seed's rate over both: 4.5e6 / 2.05e-3 s.
    assert!((r.wall_flops_per_sec() - 4.5e6 / 2.05e-3).abs() < 1.0);
    let run = RunRate {
        dir: PathBuf::new(),
        ranks: vec![r],
        hosts: vec![],
        bound_cpus: vec![],
        span_secs: None,
    };
    assert!((run.coverage() - 4.0 / 4.5).abs() < 1e-12);
    assert!(run.usable_flops_per_sec().is_some());
    // Only short bursts: no usable rate.
    let ti = "0 init\n0 compute 5e5\n0 send 1 0 8 6\n";
    let b = rank_bursts(ti, "t", "0 0 0 init\n0 50e-6 1.0 send 1 0 8 6\n", "tt").unwrap();
    let run = RunRate {
        dir: PathBuf::new(),
        ranks: vec![rank_rate(0, &b, &core_secs(&[&b], 1)[0])],
        hosts: vec![],
        bound_cpus: vec![],
        span_secs: None,
    };
    assert_eq!(run.coverage(), 0.0);
    assert_eq!(run.usable_flops_per_sec(), None);
}

/// A blocking probe is a call of the timed file only: it splits the burst that the TI file
/// records after its comment. Burst 1: bcast exit 1.0 → probe enter 1.5 (0.5 s) and probe
/// exit 3.0 → recv enter 3.25 (0.25 s): 0.75 s wall for 3e6 flops. A call with no compute
/// record before it (the recv after the send) passes its gap on to the next burst: send
/// exit 4.0 → recv enter 4.5 and recv exit 5.0 → finalize enter 5.5: 1 s for 1e6 flops.
#[test]
fn probes_and_carried_gaps_join_the_next_burst() {
    let ti = "0 init\n0 bcast 2 0 4\n# probe 0 1\n0 compute 3e6\n0 recv 0 1 1 4\n0 send 0 1 1 4\n0 recv 0 1 1 4\n0 compute 1e6\n0 finalize\n";
    let timed = "0 0.5 0.5 init\n0 0.75 1.0 bcast 2 0 4\n0 1.5 3.0 probe 0 1\n0 3.25 3.5 recv 0 1 1 4\n0 3.5 4.0 send 0 1 1 4\n0 4.5 5.0 recv 0 1 1 4\n0 5.5 5.5 finalize\n";
    let b = rank_bursts(ti, "t", timed, "tt").unwrap();
    assert_eq!(b.flops, vec![3e6, 1e6]);
    let seg: Vec<(f64, f64, u32)> = b
        .segments
        .iter()
        .map(|s| (s.start_secs, s.end_secs, s.burst))
        .collect();
    // The 0.25 s gap init exit → bcast enter holds no compute record: it joins burst 0.
    assert_eq!(
        seg,
        vec![
            (0.5, 0.75, 0),
            (1.0, 1.5, 0),
            (3.0, 3.25, 0),
            (4.0, 4.5, 1),
            (5.0, 5.5, 1)
        ]
    );
    let r = rank_rate(0, &b, &core_secs(&[&b], 1)[0]);
    assert!((r.wall_secs - 2.0).abs() < 1e-12);
    assert!((r.flops - 4e6).abs() < 1e-6);
}

/// Two ranks on one core: rank 0 computes over [0, 2], rank 1 over [1, 3]. Concurrency k
/// is 1, 2, 1 on [0,1), [1,2), [2,3): each burst gets 1 + 0.5 = 1.5 core-seconds, the CPU
/// time each really had. With 3e9 flops each the host speed is 2e9 flop/s, while the wall
/// rate says 1.5e9. With 2 cores nothing is shared: core-seconds = wall time.
#[test]
fn overlapping_bursts_share_the_cores() {
    let a = bursts(&[(0.0, 2.0)], &[3e9]);
    let b = bursts(&[(1.0, 3.0)], &[3e9]);
    let one = core_secs(&[&a, &b], 1);
    assert_eq!(one, vec![vec![1.5], vec![1.5]]);
    let ra = rank_rate(0, &a, &one[0]);
    assert!((ra.flops_per_sec() - 2e9).abs() < 1e-3);
    assert!((ra.wall_flops_per_sec() - 1.5e9).abs() < 1e-3);
    let two = core_secs(&[&a, &b], 2);
    assert_eq!(two, vec![vec![2.0], vec![2.0]]);
}

/// Three bursts on 2 cores, by hand: [0,4], [1,3], [2,6]. k = 1,2,3,2,1 on [0,1), [1,2),
/// [2,3), [3,4), [4,6): shares 1, 1, 2/3, 1, 1. Core-seconds: 4 - 1/3, 2 - 1/3, 4 - 1/3.
#[test]
fn three_bursts_on_two_cores() {
    let a = bursts(&[(0.0, 4.0)], &[1.0]);
    let b = bursts(&[(1.0, 3.0)], &[1.0]);
    let c = bursts(&[(2.0, 6.0)], &[1.0]);
    let s = core_secs(&[&a, &b, &c], 2);
    let want = [11.0 / 3.0, 5.0 / 3.0, 11.0 / 3.0];
    for (got, want) in s.iter().zip(want) {
        assert!((got[0] - want).abs() < 1e-12, "{got:?} vs {want}");
    }
}

/// `comm_def` records are in both files (stamped at the exit of the call that created the
/// communicator): the burst after them spans comm_def exit 2.0 → bcast enter 2.5.
#[test]
fn comm_defs_are_matched_in_both_files() {
    let ti = "0 init\n0 comm_split\n0 comm_def 1 2 0 1\n0 compute 1e6\n0 bcast 1 0 4 comm=1\n";
    let timed =
        "0 1 1 init\n0 1 2 comm_split\n0 2 2 comm_def 1 2 0 1\n0 2.5 3 bcast 1 0 4 comm=1\n";
    let b = rank_bursts(ti, "t", timed, "tt").unwrap();
    assert_eq!(b.flops, vec![1e6]);
    assert_eq!(
        b.segments,
        vec![Segment {
            start_secs: 2.0,
            end_secs: 2.5,
            burst: 0
        }]
    );
}

#[test]
fn mismatched_files_name_the_line() {
    let ti = "0 init\n0 compute 5\n0 send 1 0 8 6\n";
    let timed = "0 1 1 init\n0 2 3 recv 1 0 8 6\n";
    let e = rank_bursts(ti, "a.txt", timed, "a.timed.txt").unwrap_err();
    assert_eq!(
        e.to_string(),
        "a.timed.txt:2: call 'recv' does not match 'send' at a.txt:3"
    );
    let e = rank_bursts("0 init\n0 send 1 0 8 6\n", "a.txt", "0 1 1 init\n", "b").unwrap_err();
    assert_eq!(e.to_string(), "a.txt:2: 'send' has no matching call in b");
    let e = rank_bursts("0 init\n", "a.txt", "0 x 1 init\n", "b").unwrap_err();
    assert_eq!(e.to_string(), "b:1: time 'x' is not a number");
}

/// The module doc's example ("Ranks pinned to cores"), by hand: ranks 0 and 2 on core 0
/// compute 1e9 flops each over [0, 1], rank 1 on core 1 1e9 flops over [1, 2]. Per core:
/// 0.5, 1 and 0.5 core-seconds, 1.5e9 flop/s pooled over the ranks; the cores pooled: a
/// whole core each, 1e9 flop/s.
#[test]
fn pinned_ranks_share_their_own_core_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for (r, (t0, t1)) in [(0, 1), (1, 2), (0, 1)].into_iter().enumerate() {
        std::fs::write(
            p.join(format!("rank-{r}.txt")),
            format!("{r} init\n{r} compute 1e9\n{r} finalize\n"),
        )
        .unwrap();
        std::fs::write(
            p.join(format!("rank-{r}.timed.txt")),
            format!("{r} {t0} {t0} init\n{r} {t1} {t1} finalize\n"),
        )
        .unwrap();
    }
    let meta = |extra: &str| {
        format!(
            r#"{{"rank_hosts": ["a", "a", "a"], "hosts": [{{"name": "a", "cpus": 2}}], "acquisition_mode": "folding: 3 ranks on 2 cores (2 ranks per core)", {extra}}}"#
        )
    };
    let core_secs_of =
        |run: &RunRate| -> Vec<f64> { run.ranks.iter().map(|r| r.core_secs).collect() };
    // Bound CPUs recorded by the tracer.
    std::fs::write(
        p.join("trace-meta.json"),
        meta(r#""per_rank_allowed_cpus": [1, 1, 1], "per_rank_bound_cpu": [0, 1, 0]"#),
    )
    .unwrap();
    let run = run_rate(p).unwrap();
    assert_eq!(run.bound_cpus, vec![Some(0), Some(1), Some(0)]);
    assert_eq!(core_secs_of(&run), vec![0.5, 1.0, 0.5]);
    assert!((run.flops_per_sec() - 1.5e9).abs() < 1e-3);
    // An older trace: one allowed CPU each in a folded run, pinned by `--pin` (i mod C).
    std::fs::write(
        p.join("trace-meta.json"),
        meta(r#""per_rank_allowed_cpus": [1, 1, 1]"#),
    )
    .unwrap();
    let run = run_rate(p).unwrap();
    assert_eq!(run.bound_cpus, vec![Some(0), Some(1), Some(0)]);
    assert!((run.flops_per_sec() - 1.5e9).abs() < 1e-3);
    // Unbound (two allowed CPUs each), or one rank of the host not bound: the cores pooled.
    for extra in [
        r#""per_rank_allowed_cpus": [2, 2, 2]"#,
        r#""per_rank_allowed_cpus": [1, 2, 1], "per_rank_bound_cpu": [0, -1, 0]"#,
    ] {
        std::fs::write(p.join("trace-meta.json"), meta(extra)).unwrap();
        let run = run_rate(p).unwrap();
        assert_eq!(run.bound_cpus, vec![None, None, None], "{extra}");
        assert_eq!(core_secs_of(&run), vec![1.0, 1.0, 1.0], "{extra}");
        assert!((run.flops_per_sec() - 1e9).abs() < 1e-3, "{extra}");
    }
}

/// Hosts and cores from trace-meta.json: two ranks on host "a" with 1 allowed CPU each.
#[test]
fn run_rate_reads_the_cores_from_the_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("rank-0.txt"), "0 init\n0 compute 3e9\n0 finalize\n").unwrap();
    std::fs::write(p.join("rank-0.timed.txt"), "0 0 0 init\n0 2 2 finalize\n").unwrap();
    std::fs::write(p.join("rank-1.txt"), "1 init\n1 compute 3e9\n1 finalize\n").unwrap();
    std::fs::write(p.join("rank-1.timed.txt"), "1 1 1 init\n1 3 3 finalize\n").unwrap();
    let run = run_rate(p).unwrap();
    // Without metadata: as many cores as ranks, the wall rate 1.5e9.
    assert_eq!(run.hosts, vec![("?".to_string(), None)]);
    assert!((run.flops_per_sec() - 1.5e9).abs() < 1e-3);
    // Rank 0's init enters at 0, rank 1's finalize exits at 3.
    assert_eq!(run.span_secs, Some(3.0));
    std::fs::write(
        p.join("trace-meta.json"),
        r#"{"rank_hosts": ["a", "a"], "per_rank_allowed_cpus": [1, 1], "hosts": [{"name": "a", "cpus": 2}], "acquisition_mode": "folding: 2 ranks on 1 core (2 ranks per core)"}"#,
    )
    .unwrap();
    let run = run_rate(p).unwrap();
    assert_eq!(run.hosts, vec![("a".to_string(), Some(1))]);
    // The overlapping_bursts_share_the_cores case: 2e9.
    assert!((run.flops_per_sec() - 2e9).abs() < 1e-3);
    assert!((run.seed_flops_per_sec() - 1.5e9).abs() < 1e-3);
    // Regular: bound one per core, each rank sees 1 CPU, yet nothing is shared.
    std::fs::write(
        p.join("trace-meta.json"),
        r#"{"rank_hosts": ["a", "a"], "per_rank_allowed_cpus": [1, 1], "hosts": [{"name": "a", "cpus": 2}], "acquisition_mode": "regular: 2 ranks, one per core"}"#,
    )
    .unwrap();
    let run = run_rate(p).unwrap();
    assert_eq!(run.hosts, vec![("a".to_string(), Some(2))]);
    assert!((run.flops_per_sec() - 1.5e9).abs() < 1e-3);
}
