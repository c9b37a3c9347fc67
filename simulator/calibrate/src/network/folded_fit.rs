//! The folded fit: the busy pairs' segments, their waits and bandwidth factors, and how their
//! flows share the route.
//!
//! # Model
//! A folded calibration's benchmark (module [`super::folded`]) measures two series with every
//! pair of a run folded K ranks per core busy at once: the ping-pong (F/2 concurrent flows,
//! one per pair) and the exchange (F flows). The fit starts from the unfolded lone flow's
//! segments, `a_k + b_k·P` (P = S + 16) with the wait for a core already in `a_k`, and fits
//! on both series at once, per folded segment k,
//!
//! * `A_k`, the intercept: the unfolded one with the fold's extra wait (a rendezvous needs the
//!   peer scheduled more than once: 4 ranks per core, 4 KiB – 32 KiB took 1.5–2.5 µs more than
//!   the 1-byte wait);
//! * `β_k`, a **folded bandwidth factor**: the lone flow's transfer `D = b_k·P` becomes
//!   `β_k·D` in a fold. With every pair copying at once the caches hold less of each pair's
//!   buffers, and the rate falls earlier than alone (EPYC, 2 ranks per core: below the unfolded
//!   segment's rate from 1 MiB, 2 MiB earlier than alone; Xeon: 48–786 KiB faster than the
//!   unfolded segment predicts and 1.5–3 MiB up to 2.5 times slower);
//!
//! and, for all segments, the **sharing ratio m** (FATPIPE B + SHARED 1.05·m·B,
//! [`crate::simgrid::LinkSpec`]): n concurrent flows drain at `max(1, n/m)` times a lone
//! flow's transfer time. The models, with `ov = [S < thresh]·(os + or)` and `c = ois + [S <
//! thresh]·or` (the unfolded overheads):
//!
//! * ping-pong, one way: `ov + A_k + β_k·D·max(1, (F/2)/m)`;
//! * exchange: `c + A_k + β_k·D·max(1, F/m)`, over the sizes of its bandwidth regime
//!   (`D >= a`, [`super::exchange`]).
//!
//! In SimGrid's model a flow's effective rate is its max-min share times its size's
//! `smpi/bw-factor` (reference §6.2), so writing `β_k` into the segment's slope (its
//! bandwidth factor divided by `β_k`) gives every flow of the segment, alone or sharing,
//! `β_k` times the lone transfer: the replay reads exactly this model.
//!
//! # Fit
//! **Stage 1, m.** With the lone flow's rate at every size (β_k = 1), each segment's
//! `A_k − a_k` is the median over its ping-pong sizes of measured minus model, and m
//! minimises the sum of squared relative errors of both series over [1, F] (a grid of
//! [`RATIO_GRID_STEPS`], then golden-section search around the best). The lone flow is the
//! anchor: with β_k free as well, the ping-pong would fix only `β_k·max(1, (F/2)/m)` and the
//! exchange `β_k·max(1, F/m)`, whose ratio is F/(F/2) = 2 for every m <= F/2, so m and the
//! lone folded rate would not be told apart.
//!
//! **Stage 2, the bandwidth factors, m fixed.** Each segment with at least `min_points` sizes
//! in the bandwidth regime (`D >= a`) gets the relative least-squares line `(A_k, β_k)`
//! through both series' points (`y = t − ov` or `t − c` against `x = D·max(1, n/m)`, weights
//! `1/t²`, [`crate::fit::fit_weighted_line`]: `A_k >= 0`, `β_k > 0`); the others (the latency
//! segments, where a line would follow the noise) keep stage 1's β_k = 1 and median wait.
//!
//! **Breaks.** The unfolded breaks stay (protocol switches do not move in a fold) and
//! `folded_breaks` more are placed where the folded data bend: greedily, each the split of one
//! segment at a ping-pong size (at least `min_points` sizes on each side) whose stage-2 fit
//! costs least. A split that gains less than [`MIN_BREAK_GAIN`] of the cost (or less than
//! [`NEGLIGIBLE_COST`]) is not made: exact data, a straight segment.
//!
//! # Worked example
//! One unfolded segment `a = 1 µs`, `b = 1 ns/B`, no overheads, 4 ranks (2 pairs), m = 1.5,
//! sizes 984 … 31984 B (D = 1 … 32 µs), truth A = 1 µs, β = 1 below 7984 B and 1.25 from it.
//! At 7984 B (D = 8 µs) the pairs' one-way time is 1 + 1.25·8·(2/1.5) = 14.333 µs and the
//! exchange 1 + 1.25·8·(4/1.5) = 27.667 µs. One line over all sizes has β between 1 and 1.25
//! and misses both ends; the split at 7984 B is the only one that fits exactly, and its two
//! lines are the truth (`folded_bandwidth_factor_by_hand`). Measured (Xeon, 2 ranks per core;
//! validation/calibration/README.md): the split goes at 1.5 MiB, β = 1.76 from there to
//! 3 MiB (2.42 with 4 ranks per core), and the ping-pong's median error falls from 11.5 to
//! 7.3 %.

use super::exchange::{exchange_points, exchange_ranks, too_few_exchange_sizes};
use super::FlowSharing;
use crate::fit::{fit_weighted_line, PiecewiseFit, Segment};
use crate::measurement::{median, Measurements, Op};
use crate::simgrid::{overhead_at, SimgridParams};
use crate::CalibrateError;

/// Number of candidate ratios of [`fit_folded_sharing`]'s grid over [1, F], before the
/// golden-section refinement.
pub const RATIO_GRID_STEPS: usize = 2000;

/// Smallest share of the cost an extra folded break must remove to be made (module docs,
/// "Breaks").
pub const MIN_BREAK_GAIN: f64 = 0.02;

/// A cost (sum of squared relative errors) below which a fit is exact: no break is made for
/// less.
pub const NEGLIGIBLE_COST: f64 = 1e-12;

/// What [`fit_folded_sharing`] fits on a folded run's busy pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldedSharing {
    /// The folded segments: the unfolded breaks and the extra ones, intercepts `A_k`, slopes
    /// `β_k·b_k` (s/B); `relative_rms` is the folded ping-pong's one-way model's.
    pub fit: PiecewiseFit,
    /// m, and the exchange points (their fixed parts and transfers those of `fit`).
    pub sharing: FlowSharing,
    /// Per folded segment, seconds: `A_k − a_k`, what a folded message waits beyond the wait
    /// already in the unfolded intercepts.
    pub extra_wait_secs: Vec<f64>,
    /// Per folded segment: `β_k`, the folded transfer over the lone flow's (1 where the
    /// segment has too few sizes in the bandwidth regime).
    pub bandwidth_factors: Vec<f64>,
}

/// A ping-pong or exchange size in the fit: `y = t − overheads` against the lone transfer.
#[derive(Debug, Clone, Copy)]
struct Point {
    size_bytes: u64,
    /// Measured one-way (ping-pong) or exchange time, s.
    measured_secs: f64,
    /// The overheads the model adds, s (`ov` or `c`, module docs).
    overhead_secs: f64,
    /// The lone flow's transfer `D = b·P`, s.
    transfer_secs: f64,
    /// The unfolded intercept `a` of the size, s (wait included).
    base_intercept_secs: f64,
    /// Concurrent flows: F/2 for the ping-pong, F for the exchange.
    flows: f64,
    /// A ping-pong size (else an exchange one).
    pingpong: bool,
}

impl Point {
    fn transfer_at(&self, ratio: f64) -> f64 {
        self.transfer_secs * (self.flows / ratio).max(1.0)
    }
}

/// A folded segment's line for a candidate m.
#[derive(Debug, Clone, Copy)]
struct Line {
    intercept_secs: f64,
    factor: f64,
}

/// A segmentation: each segment's first ping-pong size (the first one's is 0: every size).
struct Split<'a> {
    firsts: Vec<u64>,
    points: &'a [Point],
    min_points: usize,
    /// Fit `β_k` where the segment allows it (stage 2), else 1 everywhere (stage 1).
    free_factors: bool,
}

impl Split<'_> {
    fn index(&self, size: u64) -> usize {
        self.firsts
            .partition_point(|&f| f <= size)
            .saturating_sub(1)
    }

    fn lines(&self, ratio: f64) -> Vec<Line> {
        (0..self.firsts.len())
            .map(|k| {
                let here: Vec<&Point> = self
                    .points
                    .iter()
                    .filter(|p| self.index(p.size_bytes) == k)
                    .collect();
                segment_line(&here, ratio, self.min_points, self.free_factors)
            })
            .collect()
    }

    fn cost(&self, ratio: f64) -> (f64, Vec<Line>) {
        let lines = self.lines(ratio);
        let c = self
            .points
            .iter()
            .map(|p| {
                let l = lines[self.index(p.size_bytes)];
                let model = p.overhead_secs + l.intercept_secs + l.factor * p.transfer_at(ratio);
                ((model - p.measured_secs) / p.measured_secs).powi(2)
            })
            .sum();
        (c, lines)
    }

    /// m minimising the cost over [1, flows]: grid, then golden section around the best.
    fn best_ratio(&self, flows: f64) -> (f64, f64) {
        let step = (flows - 1.0) / RATIO_GRID_STEPS as f64;
        let mut best = (self.cost(1.0).0, 1.0);
        for i in 1..=RATIO_GRID_STEPS {
            let r = 1.0 + step * i as f64;
            let c = self.cost(r).0;
            if c < best.0 {
                best = (c, r);
            }
        }
        let (mut lo, mut hi) = ((best.1 - step).max(1.0), (best.1 + step).min(flows));
        let g = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..60 {
            let x1 = hi - g * (hi - lo);
            let x2 = lo + g * (hi - lo);
            if self.cost(x1).0 <= self.cost(x2).0 {
                hi = x2;
            } else {
                lo = x1;
            }
        }
        let r = (lo + hi) / 2.0;
        let c = self.cost(r).0;
        if c < best.0 {
            (c, r)
        } else {
            best
        }
    }
}

/// One segment's `(A, β)` for a candidate m (module docs, "Fit").
fn segment_line(points: &[&Point], ratio: f64, min_points: usize, free_factor: bool) -> Line {
    let base = points.first().map_or(0.0, |p| p.base_intercept_secs);
    let in_regime = points
        .iter()
        .filter(|p| p.transfer_secs > 0.0 && p.transfer_secs >= p.base_intercept_secs)
        .count();
    if free_factor && in_regime >= min_points.max(2) {
        let xy: Vec<(f64, f64, f64)> = points
            .iter()
            .map(|p| {
                (
                    p.transfer_at(ratio),
                    p.measured_secs - p.overhead_secs,
                    p.measured_secs.powi(-2),
                )
            })
            .collect();
        if let Some((a, b)) = fit_weighted_line(&xy) {
            if b > 0.0 {
                return Line {
                    intercept_secs: a,
                    factor: b,
                };
            }
        }
    }
    let diffs: Vec<f64> = points
        .iter()
        .filter(|p| p.pingpong)
        .map(|p| p.measured_secs - p.overhead_secs - base - p.transfer_at(ratio))
        .collect();
    let extra = median(&diffs).map_or(0.0, |e| e.max(-base));
    Line {
        intercept_secs: base + extra,
        factor: 1.0,
    }
}

/// Fits a folded calibration's segments, bandwidth factors and m on both series of the busy
/// pairs (module docs). `fit` holds the lone flow's segments with the wait already added,
/// `params` the unfolded overheads; `folded_breaks` extra breaks at most. `None` when the
/// exchange was not measured.
///
/// # Errors
/// As [`fit_flow_sharing`](super::fit_flow_sharing): too few exchange sizes in the bandwidth
/// regime, a bad rank count.
pub fn fit_folded_sharing(
    m: &Measurements,
    fit: &PiecewiseFit,
    params: &SimgridParams,
    min_points: usize,
    folded_breaks: usize,
) -> Result<Option<FoldedSharing>, CalibrateError> {
    if m.medians(Op::Exchange).is_empty() {
        return Ok(None);
    }
    let flows = exchange_ranks(m)?;
    let f = flows as f64;
    let pairs = (flows / 2).max(1) as f64;
    let exchange = exchange_points(m, fit, params);
    let in_regime = exchange.iter().filter(|p| p.fitted).count();
    if in_regime < min_points.max(1) {
        return Err(too_few_exchange_sizes(in_regime, min_points));
    }
    let thresh = params.detached_thresh_bytes;
    let lone = |s: u64| {
        let seg = &fit.segments[fit.segment_index(s)];
        (
            seg.intercept_secs,
            seg.slope_secs_per_byte * (s as f64 + fit.offset_bytes),
        )
    };
    let mut points: Vec<Point> = m
        .medians(Op::PingPong)
        .iter()
        .map(|p| {
            let s = p.size_bytes;
            let (a, d) = lone(s);
            let ov = if s < thresh {
                overhead_at(&params.os, s) + overhead_at(&params.or, s)
            } else {
                0.0
            };
            Point {
                size_bytes: s,
                measured_secs: p.time_secs / 2.0,
                overhead_secs: ov,
                transfer_secs: d,
                base_intercept_secs: a,
                flows: pairs,
                pingpong: true,
            }
        })
        .collect();
    let pingpong_sizes: Vec<u64> = points.iter().map(|p| p.size_bytes).collect();
    points.extend(exchange.iter().filter(|p| p.fitted).map(|p| {
        let (a, d) = lone(p.size_bytes);
        Point {
            size_bytes: p.size_bytes,
            measured_secs: p.measured_secs,
            overhead_secs: p.fixed_secs - a,
            transfer_secs: d,
            base_intercept_secs: a,
            flows: f,
            pingpong: false,
        }
    }));

    // The unfolded breaks, then the extra ones, greedily.
    // Stage 1: m with the lone flow's rate (β = 1) at every size.
    let unfolded_firsts: Vec<u64> = fit
        .segments
        .iter()
        .enumerate()
        .map(|(k, s)| if k == 0 { 0 } else { s.first_size_bytes })
        .collect();
    let stage1 = Split {
        firsts: unfolded_firsts.clone(),
        points: &points,
        min_points: min_points.max(2),
        free_factors: false,
    };
    let ratio = stage1.best_ratio(f).1;
    // Stage 2: the bandwidth factors and the extra breaks, m fixed.
    let mut split = Split {
        free_factors: true,
        ..stage1
    };
    place_breaks(&mut split, ratio, &pingpong_sizes, folded_breaks);
    let lines = split.lines(ratio);
    let folded = folded_segments(fit, &split, &lines, &pingpong_sizes);
    let pp_sq: f64 = points
        .iter()
        .filter(|p| p.pingpong)
        .map(|p| {
            let l = lines[split.index(p.size_bytes)];
            let model = p.overhead_secs + l.intercept_secs + l.factor * p.transfer_at(ratio);
            ((model - p.measured_secs) / p.measured_secs).powi(2)
        })
        .sum();
    let folded_fit = PiecewiseFit {
        offset_bytes: fit.offset_bytes,
        segments: folded,
        relative_rms: (pp_sq / pingpong_sizes.len().max(1) as f64).sqrt(),
    };
    let extra_wait_secs = folded_fit
        .segments
        .iter()
        .map(|s| {
            s.intercept_secs - fit.segments[fit.segment_index(s.first_size_bytes)].intercept_secs
        })
        .collect();
    Ok(Some(FoldedSharing {
        sharing: FlowSharing {
            flows,
            aggregate_ratio: ratio,
            fitted_ratio: ratio,
            points: exchange_points(m, &folded_fit, params),
        },
        fit: folded_fit,
        extra_wait_secs,
        bandwidth_factors: lines.iter().map(|l| l.factor).collect(),
    }))
}

/// Adds up to `breaks` breaks to `split` (module docs, "Breaks"), each at the ping-pong size
/// whose split costs least at m = `ratio`, while one gains [`MIN_BREAK_GAIN`] of the cost (and
/// more than [`NEGLIGIBLE_COST`]).
fn place_breaks(split: &mut Split, ratio: f64, sizes: &[u64], breaks: usize) {
    let mut cost = split.cost(ratio).0;
    for _ in 0..breaks {
        let mut candidate: Option<(f64, u64)> = None;
        for (i, &s) in sizes.iter().enumerate() {
            let k = split.index(s);
            let before = sizes[..i].iter().filter(|&&x| split.index(x) == k).count();
            let after = sizes[i..].iter().filter(|&&x| split.index(x) == k).count();
            if before < split.min_points || after < split.min_points {
                continue;
            }
            let mut firsts = split.firsts.clone();
            firsts.insert(k + 1, s);
            let trial = Split {
                firsts,
                points: split.points,
                min_points: split.min_points,
                free_factors: true,
            };
            let c = trial.cost(ratio).0;
            if candidate.is_none_or(|(best, _)| c < best) {
                candidate = Some((c, s));
            }
        }
        match candidate {
            Some((c, s)) if c < cost * (1.0 - MIN_BREAK_GAIN) && cost - c > NEGLIGIBLE_COST => {
                let k = split.index(s);
                split.firsts.insert(k + 1, s);
                cost = c;
            }
            _ => break,
        }
    }
}

/// The folded segments of `split`: each one's measured sizes, its line's intercept and the
/// unfolded slope of its sizes times its factor.
fn folded_segments(
    fit: &PiecewiseFit,
    split: &Split,
    lines: &[Line],
    sizes: &[u64],
) -> Vec<Segment> {
    lines
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let here: Vec<u64> = sizes
                .iter()
                .copied()
                .filter(|&s| split.index(s) == k)
                .collect();
            let first = here.first().copied().unwrap_or(split.firsts[k]);
            let base = &fit.segments[fit.segment_index(first)];
            Segment {
                first_size_bytes: first,
                last_size_bytes: here.last().copied().unwrap_or(first),
                intercept_secs: l.intercept_secs,
                slope_secs_per_byte: base.slope_secs_per_byte * l.factor,
                points: here.len(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand (stage 2, m given): one unfolded segment `a = 1 µs`, `b = 1 ns/B`, no
    /// overheads, 4 ranks (2 pairs), m = 1.5, so the pairs' transfer is `β·D·4/3` and the
    /// exchange's `β·D·8/3`. Sizes 984 … 31984 B (D = 1, 2, 4, 8, 16, 32 µs, P = S + 16);
    /// truth A = 1 µs everywhere, β = 1 below 7984 B and 1.25 from it: at 7984 B the
    /// one-way time is 1 + 1.25·8·4/3 = 14.333 µs and the exchange 1 + 1.25·8·8/3 =
    /// 27.667 µs. One extra break goes at 7984 B, the only split with cost 0 (3 sizes a side
    /// at least), and each side's
    /// line is the truth; with no break allowed the segment keeps one line between the two.
    #[test]
    fn folded_bandwidth_factor_by_hand() {
        let sizes = [984u64, 1984, 3984, 7984, 15984, 31984];
        let mut points = Vec::new();
        for &s in &sizes {
            let d = 1e-9 * (s as f64 + 16.0);
            let beta = if s < 7984 { 1.0 } else { 1.25 };
            for (flows, pingpong) in [(2.0, true), (4.0, false)] {
                points.push(Point {
                    size_bytes: s,
                    measured_secs: 1e-6 + beta * d * flows / 1.5,
                    overhead_secs: 0.0,
                    transfer_secs: d,
                    base_intercept_secs: 1e-6,
                    flows,
                    pingpong,
                });
            }
        }
        assert!((points[6].measured_secs - 14.333_333_333_333e-6).abs() < 1e-15);
        assert!((points[7].measured_secs - 27.666_666_666_666e-6).abs() < 1e-15);
        let mut split = Split {
            firsts: vec![0],
            points: &points,
            min_points: 3,
            free_factors: true,
        };
        let one = split.lines(1.5);
        assert!(one[0].factor > 1.0 && one[0].factor < 1.25, "{one:?}");
        place_breaks(&mut split, 1.5, &sizes, 1);
        assert_eq!(split.firsts, vec![0, 7984]);
        let lines = split.lines(1.5);
        for (line, beta) in lines.iter().zip([1.0, 1.25]) {
            assert!((line.factor - beta).abs() < 1e-9, "{lines:?}");
            assert!((line.intercept_secs - 1e-6).abs() < 1e-15, "{lines:?}");
        }
        assert!(split.cost(1.5).0 < 1e-20);
        // A second break gains nothing on exact data: none is made.
        place_breaks(&mut split, 1.5, &sizes, 1);
        assert_eq!(split.firsts, vec![0, 7984]);
        // Stage 1 (β = 1 everywhere) keeps the lone flow's rate.
        let fixed = Split {
            free_factors: false,
            ..split
        };
        assert!(fixed.lines(1.5).iter().all(|l| l.factor == 1.0));
    }
}
