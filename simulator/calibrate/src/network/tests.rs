//! The network calibration's fits, checked by hand on small synthetic measurements.

use super::*;
use crate::measurement::{Measurements, Op};
use crate::simgrid::OverheadEntry;

#[test]
fn rounding_and_threshold_detection() {
    assert_eq!(round_sig(1.23456e-6, 4), 1.235e-6);
    assert_eq!(round_sig(9.8765e9, 2), 9.9e9);
    let mut m = Measurements::default();
    m.push(Op::Late, 0, 1e-3);
    for (s, t) in [(1024, 1e-7), (2048, 2e-7), (4096, 1.2e-3), (8192, 1.3e-3)] {
        m.push(Op::Send, s, t);
    }
    assert_eq!(detect_detached_thresh(&m), Some(4096));
    let mut eager = Measurements::default();
    eager.push(Op::Late, 0, 1e-3);
    eager.push(Op::Send, 10, 1e-7);
    assert_eq!(detect_detached_thresh(&eager), Some(11));
    assert_eq!(detect_detached_thresh(&Measurements::default()), None);
}

/// By hand: one segment T = 1 µs + 1 ns/B · P, no overheads. At S = 984, 1984, 3984
/// (P = 1000, 2000, 4000) the transfer term D = 1, 2, 4 µs is at least the latency: the
/// bandwidth regime; S = 0 (D = 16 ns) is not. Exchanges measured as 1 µs + 1.6·D give
/// u = 1.6, m = 2/1.6 = 1.25; measured as 1 µs + 0.5·D (each flow faster than alone) they
/// give m = 4, clamped to 2 (two flows: one pair).
#[test]
fn flow_sharing_by_hand() {
    use crate::fit::Segment;
    let fit = PiecewiseFit {
        offset_bytes: 16.0,
        segments: vec![Segment {
            first_size_bytes: 0,
            last_size_bytes: 4000,
            intercept_secs: 1e-6,
            slope_secs_per_byte: 1e-9,
            points: 4,
        }],
        relative_rms: 0.0,
    };
    let params = SimgridParams {
        lat_factor: vec![],
        bw_factor: vec![],
        os: vec![],
        or: vec![],
        ois: vec![],
        detached_thresh_bytes: 0,
        rendezvous_late_wait: Vec::new(),
        cold_call_secs: None,
    };
    let exchanges = |u: f64| {
        let mut m = Measurements::default();
        m.push(Op::Exchange, 0, 5e-6);
        for (s, d) in [(984u64, 1e-6), (1984, 2e-6), (3984, 4e-6)] {
            m.push(Op::Exchange, s, 1e-6 + u * d);
        }
        m
    };
    let p = fit_flow_sharing(&exchanges(1.6), &fit, &params, 3)
        .unwrap()
        .unwrap();
    assert!((p.aggregate_ratio - 1.25).abs() < 1e-9, "{p:?}");
    assert_eq!(p.points.len(), 4);
    assert!(!p.points[0].fitted && p.points[1..].iter().all(|q| q.fitted));
    assert!((p.points[2].ratio(2) - 1.25).abs() < 1e-9);
    assert!((p.points[3].model_secs(1.25, 2) - 7.4e-6).abs() < 1e-15);
    let p = fit_flow_sharing(&exchanges(0.5), &fit, &params, 3)
        .unwrap()
        .unwrap();
    assert!((p.fitted_ratio - 4.0).abs() < 1e-9, "{p:?}");
    assert_eq!(p.aggregate_ratio, 2.0);
    assert!(fit_flow_sharing(&Measurements::default(), &fit, &params, 3)
        .unwrap()
        .is_none());
    // Four ranks exchanging at once (4 flows): the same times give u = 1.6 = 4/m, m = 2.5.
    let mut four = exchanges(1.6);
    four.push(Op::ExchangeRanks, 4, 0.0);
    let p = fit_flow_sharing(&four, &fit, &params, 3).unwrap().unwrap();
    assert_eq!(p.flows, 4);
    assert!((p.aggregate_ratio - 2.5).abs() < 1e-9, "{p:?}");
    assert!((p.points[3].model_secs(2.5, 4) - 7.4e-6).abs() < 1e-15);
    four.push(Op::ExchangeRanks, 6, 0.0);
    let e = fit_flow_sharing(&four, &fit, &params, 3).unwrap_err();
    assert!(e.to_string().contains("found [4, 6]"), "{e}");
    let e = fit_flow_sharing(&exchanges(1.6), &fit, &params, 4).unwrap_err();
    assert!(
        matches!(
            e,
            CalibrateError::TooFewSizes {
                found: 3,
                needed: 4,
                ..
            }
        ),
        "{e}"
    );
}

fn one_segment() -> PiecewiseFit {
    use crate::fit::Segment;
    PiecewiseFit {
        offset_bytes: 16.0,
        segments: vec![Segment {
            first_size_bytes: 0,
            last_size_bytes: 8000,
            intercept_secs: 1e-6,
            slope_secs_per_byte: 1e-9,
            points: 4,
        }],
        relative_rms: 0.0,
    }
}

fn call_cost(ois_secs: f64) -> SimgridParams {
    SimgridParams {
        lat_factor: vec![],
        bw_factor: vec![],
        os: vec![],
        or: vec![],
        ois: vec![OverheadEntry {
            threshold_bytes: 0,
            intercept_secs: ois_secs,
            slope_secs_per_byte: 0.0,
        }],
        detached_thresh_bytes: 0,
        rendezvous_late_wait: Vec::new(),
        cold_call_secs: None,
    }
}

/// By hand: one segment T = 1 µs + 1 ns/B · P, isend call 0.1 µs, no `or` (threshold 0),
/// two flows that do not share (m = 2, u = 1). Exchanges measured as 1 µs + D + r with the
/// residual r = 0.2 µs + 0.1 ns/B · S at S = 984, 1984, 3984, 7984 give back ois = that
/// line exactly; residuals of 0.05 µs (below the call) give the call's 0.1 µs.
#[test]
fn exchange_overhead_by_hand() {
    let fit = one_segment();
    let params = call_cost(1e-7);
    let sharing = |r: &dyn Fn(f64) -> f64| {
        let mut m = Measurements::default();
        for s in [984u64, 1984, 3984, 7984] {
            let d = 1e-9 * (s as f64 + 16.0);
            m.push(Op::Exchange, s, 1e-6 + d + r(s as f64));
        }
        let mut f = fit_flow_sharing(&m, &fit, &params, 3).unwrap().unwrap();
        f.aggregate_ratio = 2.0;
        f
    };
    let e = exchange_overhead_entries(&sharing(&|s| 2e-7 + 1e-10 * s), &fit, &params);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].threshold_bytes, 0);
    assert!((e[0].intercept_secs - 2e-7).abs() < 1e-18, "{e:?}");
    assert!((e[0].slope_secs_per_byte - 1e-10).abs() < 1e-21, "{e:?}");
    let e = exchange_overhead_entries(&sharing(&|_| 5e-8), &fit, &params);
    assert!((e[0].intercept_secs - 1e-7).abs() < 1e-18, "{e:?}");
    assert_eq!(e[0].slope_secs_per_byte, 0.0);
}

/// By hand: the same segment, no overheads, 4 ranks (2 pairs) sharing an aggregate of
/// m = 1.5 lone flows. At S = 984, 1984, 3984, 7984 (D = 1, 2, 4, 8 µs >= a = 1 µs) the
/// pairs' one-way time is 1 µs + D·max(1, 2/1.5) (round trip twice that) and the exchange
/// 1 µs + D·4/1.5; the fit gives back m = 1.5. With m = 3 the pairs do not share
/// (2/3 < 1): 1 µs + D, and the exchange 1 µs + D·4/3, from which m = 3 again.
#[test]
fn folded_sharing_by_hand() {
    let fit = one_segment();
    let params = call_cost(0.0);
    for truth in [1.5f64, 3.0] {
        let mut m = Measurements::default();
        m.push(Op::ExchangeRanks, 4, 0.0);
        for s in [984u64, 1984, 3984, 7984] {
            let d = 1e-9 * (s as f64 + 16.0);
            m.push(Op::PingPong, s, 2.0 * (1e-6 + d * (2.0 / truth).max(1.0)));
            m.push(Op::Exchange, s, 1e-6 + d * 4.0 / truth);
        }
        let f = fit_folded_sharing(&m, &fit, &params, 3, 1)
            .unwrap()
            .unwrap();
        assert_eq!(f.sharing.flows, 4);
        assert!(
            (f.sharing.aggregate_ratio - truth).abs() < 1e-6,
            "{truth}: {f:?}"
        );
        // Exact data: the lone flow's rate (β = 1), no extra wait, no extra break.
        assert_eq!(f.fit.segments.len(), 1, "{f:?}");
        assert!(f.extra_wait_secs[0].abs() < 1e-15, "{f:?}");
        assert!((f.bandwidth_factors[0] - 1.0).abs() < 1e-9, "{f:?}");
    }
    assert!(
        fit_folded_sharing(&Measurements::default(), &fit, &params, 3, 1)
            .unwrap()
            .is_none()
    );
}

/// By hand: unfolded round trips 2 µs at 1, 2, 4 B and 10 µs at 1024 B; one segment of the
/// unfolded fit covering 1..=4 B. Folded: 4, 5, 8 µs at 1, 2, 4 B (one-way waits 1, 1.5,
/// 3 µs: median 1.5 µs) and 1 µs at 1024 B (outside the segment: ignored). Faster folded
/// runs give 0, and a folded set without those sizes gives None.
#[test]
fn added_wait_by_hand() {
    use crate::fit::Segment;
    let fit = PiecewiseFit {
        offset_bytes: 16.0,
        segments: vec![Segment {
            first_size_bytes: 1,
            last_size_bytes: 4,
            intercept_secs: 1e-6,
            slope_secs_per_byte: 0.0,
            points: 3,
        }],
        relative_rms: 0.0,
    };
    let mut unfolded = Measurements::default();
    for (s, t) in [(1, 2e-6), (2, 2e-6), (4, 2e-6), (1024, 10e-6)] {
        unfolded.push(Op::PingPong, s, t);
    }
    let mut folded = Measurements::default();
    for (s, t) in [(1, 4e-6), (2, 5e-6), (4, 8e-6), (1024, 1e-6)] {
        folded.push(Op::PingPong, s, t);
    }
    let w = added_wait_secs(&folded, &unfolded, &fit).unwrap();
    assert!((w - 1.5e-6).abs() < 1e-18, "{w}");
    assert_eq!(added_wait_secs(&unfolded, &folded, &fit), Some(0.0));
    let mut other = Measurements::default();
    other.push(Op::PingPong, 8, 1e-6);
    assert_eq!(added_wait_secs(&other, &unfolded, &fit), None);
}

/// By hand: the unfolded one-way time at 1 and 2 B is 1 µs (round trips of 2 µs), the folded
/// ping-pong's 10 round trips at 1 B and 2 B are 4, 6, ..., 22 µs: one-way waits of
/// 1, 2, ..., 10 µs. The median of the largest of n waits is the smallest w_(i) with
/// i >= 0.5^(1/n)·10: n = 1: i = 5 (5 µs, the lower median); n = 2: 0.7071 → i = 8 (8 µs);
/// n = 4: 0.8409 → i = 9 (9 µs). A size outside the first segment (1024 B) does not count.
#[test]
fn exchange_skew_by_hand() {
    use crate::fit::Segment;
    let fit = PiecewiseFit {
        offset_bytes: 16.0,
        segments: vec![Segment {
            first_size_bytes: 1,
            last_size_bytes: 2,
            intercept_secs: 1e-6,
            slope_secs_per_byte: 0.0,
            points: 2,
        }],
        relative_rms: 0.0,
    };
    let mut unfolded = Measurements::default();
    for s in [1, 2, 1024] {
        unfolded.push(Op::PingPong, s, 2e-6);
    }
    let mut folded = Measurements::default();
    for w in 1..=10 {
        let s = if w % 2 == 0 { 1 } else { 2 };
        folded.push(Op::PingPong, s, 2e-6 + 2.0 * w as f64 * 1e-6);
    }
    folded.push(Op::PingPong, 1024, 1.0);
    for (pairs, want) in [(1, 5e-6), (2, 8e-6), (4, 9e-6)] {
        let got = exchange_skew_secs(&folded, &unfolded, &fit, pairs).unwrap();
        assert!((got - want).abs() < 1e-15, "{pairs} pairs: {got}");
    }
    // Faster than unfolded: no skew. No size in both: none.
    assert_eq!(exchange_skew_secs(&unfolded, &folded, &fit, 2), Some(0.0));
    let mut other = Measurements::default();
    other.push(Op::PingPong, 8, 1e-6);
    assert_eq!(exchange_skew_secs(&other, &unfolded, &fit, 2), None);
}

/// By hand: segments [1, 1000] and [2000, 8000], rendezvous from 500 B. Rows at 100 B
/// (eager: not counted), 600, 800, 900 B (residuals 2, 3, 0.5 µs: median 2 µs) and 2000,
/// 4000 B (4 and 2 µs: median 3 µs). From those waits, residuals of 0 move nothing; a
/// residual of −5 µs takes the second segment's wait to 0 (not below); all waits 0 write
/// nothing.
#[test]
fn rendezvous_late_wait_by_hand() {
    use crate::fit::Segment;
    let seg = |first, last| Segment {
        first_size_bytes: first,
        last_size_bytes: last,
        intercept_secs: 1e-6,
        slope_secs_per_byte: 0.0,
        points: 2,
    };
    let fit = PiecewiseFit {
        offset_bytes: 16.0,
        segments: vec![seg(1, 1000), seg(2000, 8000)],
        relative_rms: 0.0,
    };
    let us = 1e-6;
    let rows = [
        (100, 10.0 * us, 1.0 * us),
        (600, 10.0 * us, 8.0 * us),
        (800, 10.0 * us, 7.0 * us),
        (900, 10.0 * us, 9.5 * us),
        (2000, 20.0 * us, 16.0 * us),
        (4000, 20.0 * us, 18.0 * us),
    ];
    let e = rendezvous_late_wait_entries(&rows, &fit, 500, &[]);
    assert_eq!(e.len(), 2);
    assert_eq!((e[0].threshold_bytes, e[1].threshold_bytes), (0, 1999));
    assert!((e[0].intercept_secs - 2.0 * us).abs() < 1e-18, "{e:?}");
    assert!((e[1].intercept_secs - 3.0 * us).abs() < 1e-18, "{e:?}");
    assert!(e.iter().all(|x| x.slope_secs_per_byte == 0.0));
    let exact: Vec<(u64, f64, f64)> = rows.iter().map(|&(s, m, _)| (s, m, m)).collect();
    assert_eq!(rendezvous_late_wait_entries(&exact, &fit, 500, &e), e);
    let shorter = [(600, 1.0 * us, 1.0 * us), (2000, 1.0 * us, 6.0 * us)];
    let f = rendezvous_late_wait_entries(&shorter, &fit, 500, &e);
    assert!((f[0].intercept_secs - 2.0 * us).abs() < 1e-18, "{f:?}");
    assert_eq!(f[1].intercept_secs, 0.0);
    // Only eager sizes, or no residual: nothing to write.
    assert!(rendezvous_late_wait_entries(&rows[..1], &fit, 500, &[]).is_empty());
    assert!(rendezvous_late_wait_entries(&exact, &fit, 500, &[]).is_empty());
}

#[test]
fn bad_measurements_are_typed_errors() {
    let mut m = Measurements::default();
    for s in [1u64, 2, 4, 8] {
        m.push(Op::PingPong, s, 1e-6);
    }
    let e = calibrate_network(&m, &NetworkOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            CalibrateError::TooFewSizes {
                found: 4,
                needed: 9,
                ..
            }
        ),
        "{e}"
    );
    let e = calibrate_network(&Measurements::default(), &NetworkOptions::default()).unwrap_err();
    assert!(matches!(e, CalibrateError::MissingSeries { .. }), "{e}");
    let mut m = Measurements::default();
    for (i, s) in [1u64, 2, 4, 8, 16, 32, 64, 128, 256].iter().enumerate() {
        m.push(
            Op::PingPong,
            *s,
            if i == 5 { 1e-7 } else { 1e-6 * (i + 1) as f64 },
        );
    }
    let e = calibrate_network(&m, &NetworkOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            CalibrateError::NonMonotonic {
                size_b_bytes: 32,
                ..
            }
        ),
        "{e}"
    );
    let mut m = Measurements::default();
    for s in [1u64, 2, 4, 8, 16, 32, 64, 128, 256] {
        m.push(Op::PingPong, s, 2e-6);
        m.push(Op::Send, s, 0.6e-6);
        m.push(Op::Recv, s, 0.6e-6);
    }
    let e = calibrate_network(&m, &NetworkOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("at 1 B the send and receive overheads"),
        "{e}"
    );
}

/// `timeless/cold-call-secs`: the median after the largest streamed size minus the median after
/// the smallest (by hand: 12 - 0.2 = 11.8 µs); nothing with one size or without the rows.
#[test]
fn cold_call_is_the_cold_median_minus_the_warm_one() {
    let mut m = Measurements::default();
    assert_eq!(cold_call_secs(&m), None);
    for t in [0.1e-6, 0.2e-6, 0.9e-6] {
        m.push(Op::ColdAllreduce, 8192, t);
    }
    assert_eq!(cold_call_secs(&m), None);
    for t in [30e-6, 11e-6, 12e-6] {
        m.push(Op::ColdAllreduce, 32 << 20, t);
    }
    let x = cold_call_secs(&m).unwrap();
    assert!((x - 11.8e-6).abs() < 1e-18, "{x}");
}
