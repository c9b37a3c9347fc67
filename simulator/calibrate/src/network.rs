//! Network calibration end to end: ping-pong and per-call measurements → one-way network times
//! → piecewise fit → SimGrid parameters (seed 003 §5; reference §10).
//!
//! # One-way network time
//! In SimGrid's replay of a blocking ping-pong (`send; recv` against `recv; send`), a message of
//! S bytes below `smpi/send-is-detached-thresh` costs `os(S)` before the transfer, the transfer
//! `T(S)`, and `or(S)` after it at the receiver; at or above the threshold the send is a
//! rendezvous and costs only `T(S)` (reference §4.2, §4.3). The round trip is twice that, so
//!
//! `T(S) = RTT(S)/2 − os(S) − or(S)` for S < threshold, and `T(S) = RTT(S)/2` otherwise,
//!
//! with `os` and `or` the measured per-call medians (zero when not measured): the steady-state
//! burst series ([`Op::SendBurst`], [`Op::RecvBurst`]) when present, else the single calls. `T` is fitted with
//! K segments on P = S + 16 and converted by [`crate::simgrid::network_factors`]; `os`, `or` and
//! `ois` are fitted with one line per segment of the same split.
//!
//! # Concurrent flows: the exchange
//! In the benchmark's exchange ([`Op::Exchange`]) F ranks ([`Op::ExchangeRanks`], 2 by default:
//! one pair; every pair of a folded run with `--busy-pairs`) start at once, each posting
//! `MPI_Irecv` + `MPI_Isend` of S bytes to its partner and waiting for both: F flows of S bytes.
//! In SimGrid's replay of it (`irecv; isend; waitall` on every rank) each rank costs `ois(S)`,
//! then the F transfers run together (latency `a(S)` each, not shared), then `or(S)` for S below
//! the detached threshold:
//!
//! `E(S) = ois(S) + a(S) + u · D(S) + [S < thresh] · or(S)`, with `D(S) = b(S) · P`,
//!
//! where `a + b·P` is the lone flow's fitted one-way time and `u = max(1, F/m)` how much slower
//! each flow drains when F share the route: m is the aggregate bandwidth of concurrent flows
//! over a lone flow's (m = 1: one SHARED link, the flows split one bandwidth; m = F: no sharing
//! among the F; [`crate::simgrid::LinkSpec`] writes it as a FATPIPE link plus a SHARED link of
//! 1.05·m·B). `u` is fitted by relative least squares over the sizes of the bandwidth regime
//! (`D(S)` at least half of `a(S) + D(S)`; below it the exchange time says nothing about
//! sharing): `u = Σ D(E − c)/E² / Σ D²/E²` with `c = ois + a + or`, and `m = F/u` clamped to
//! [1, F] (max-min sharing can neither make the flows slower together than one flow alone
//! splitting its bandwidth, nor faster than F lone flows).
//!
//! # What an exchange costs beyond its flows: `smpi/ois`
//! An exchange of S bytes also pays what a lone message one way does not: each rank posts two
//! requests and completes both, and at rendezvous sizes (Open MPI's vader above 4 KiB) the
//! sender's request ends only when the receiver's acknowledgement comes back, a control
//! message the ping-pong overlaps with the reply. In the replay the only per-message cost an
//! exchange pays and a blocking ping-pong does not is `ois` (a blocking send above the
//! detached threshold sleeps nothing, SimGrid 3.32 `smpi_request.cpp`, `Request::start`), so
//! `ois` is fitted on the exchange, once m is: with one line per segment of the fit,
//! relative least squares (weights from the exchange times, [`exchange_overhead_entries`]) on
//! the residual
//!
//! `r(S) = E(S) − a(S) − u·D(S) − [S < thresh]·or(S)`,
//!
//! each residual floored at the measured `MPI_Isend` call cost ([`Op::Isend`]): an isend
//! costs at least its call. On a machine whose exchange is exactly SimGrid's, r = ois and the
//! fit gives back the call cost. Measured here (README): 0.15 µs below 384 B, 0.16 µs + 0.05
//! ns/B to 24 KiB, 0.58 µs above, against a call cost of 0.07–0.2 µs.
//!
//! # Folded runs: the busy pairs together
//! A folded calibration ([`calibrate_folded_network`]) runs the benchmark on every pair of a
//! folded run at once (F ranks, F/2 pairs): its ping-pong is F/2 concurrent lone flows, its
//! exchange F. Its model is the unfolded one (lone-flow segments, `os`, `or`) with every
//! segment's latency raised by the wait for a core ([`added_wait_secs`]) and by an extra
//! wait per segment (a rendezvous needs the peer scheduled more than once: 4 ranks per core,
//! 4 KiB – 32 KiB took 1.5–2.5 µs more than the 1-byte wait), concurrent flows sharing an
//! aggregate m times a lone flow's bandwidth, m and the extra waits fitted on both series at
//! once ([`fit_folded_sharing`]), and the unfolded `ois`. The folded exchange, timed from each
//! rank's own barrier exit, also holds the ranks leaving the barrier a wait apart (4 ranks per
//! core: about one wait more than a lone message); the replay of the benchmark with its barrier
//! ([`crate::pingpong_sim::simulate_exchange_after_barrier`]) shows that, and fitting it into
//! `ois` would charge every isend of a folded application a second wait (commsplit folded,
//! replayed with it: +90–100 %).
//!
//! # Eager/rendezvous threshold
//! The benchmark times `MPI_Send` while the receiver posts late by `late` seconds: an eager send
//! returns at once, a rendezvous send waits for the receiver. The threshold is the smallest size
//! from which every send took more than `late/2`.

use crate::fit::{
    fit_piecewise, fit_range, fit_weighted_line, relative_weights, FitOptions, PiecewiseFit,
};
use crate::measurement::{median, Measurements, Op};
use crate::simgrid::{
    network_factors, overhead_at, LinkSpec, OverheadEntry, SimgridParams, DEFAULT_TCP_GAMMA_BYTES,
    ENVELOPE_BYTES, FATPIPE_LINK_WEIGHT, SHARED_LINK_WEIGHT,
};
use crate::CalibrateError;

/// SimGrid's default `smpi/send-is-detached-thresh` (reference §9), used when the measurements
/// cannot tell the eager/rendezvous switch.
pub const DEFAULT_DETACHED_THRESH_BYTES: u64 = 65536;

/// Options of [`calibrate_network`].
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkOptions {
    /// Number of segments (3 in seed 003 §5).
    pub segments: usize,
    /// Minimum number of sizes per segment.
    pub min_points: usize,
    /// Route latency written in the platform, seconds; default: the first segment's intercept
    /// (the one-way time of an empty message), rounded to 4 significant digits.
    pub latency_secs: Option<f64>,
    /// Route bandwidth written in the platform, bytes/s; default: the highest segment bandwidth
    /// (1 / smallest slope) times the cross-traffic weight, rounded to 4 significant digits, so
    /// that every bandwidth factor is at most 1, as in SimGrid's defaults.
    pub bandwidth_bytes_per_sec: Option<f64>,
    /// Cross-traffic weight of the written link ([`SHARED_LINK_WEIGHT`] for the SHARED link
    /// [`crate::platform_xml`] writes). Ignored when the measurements hold a bidirectional
    /// exchange: the route is then a FATPIPE link ([`FATPIPE_LINK_WEIGHT`]) plus a SHARED one.
    pub crosstraffic_weight: f64,
    /// `smpi/send-is-detached-thresh` in bytes; default: detected (module docs), else 65536.
    pub detached_thresh_bytes: Option<u64>,
    /// Largest tolerated relative drop of the ping-pong median from one size to the next (0.5:
    /// a larger message taking less than half the time of the previous size is an error; smaller
    /// dips happen on a loaded machine, e.g. for multi-MiB messages near the cache size).
    pub monotonic_tolerance: f64,
    /// Fit how concurrent flows share the route from the [`Op::Exchange`] measurements, when
    /// present (true); false ignores them and writes one SHARED link (concurrent flows split
    /// one bandwidth).
    pub flow_sharing: bool,
    /// A per-message cost added to the intercept of every segment of the fit, seconds (0 by
    /// default): the wait for a core of a folded run, [`added_wait_secs`]; it goes into
    /// `smpi/lat-factor`.
    pub added_latency_secs: f64,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        NetworkOptions {
            segments: 3,
            min_points: 3,
            latency_secs: None,
            bandwidth_bytes_per_sec: None,
            crosstraffic_weight: SHARED_LINK_WEIGHT,
            detached_thresh_bytes: None,
            monotonic_tolerance: 0.5,
            flow_sharing: true,
            added_latency_secs: 0.0,
        }
    }
}

/// Where the eager/rendezvous threshold came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdSource {
    /// Given by the user.
    Given,
    /// Detected from the late-receiver `MPI_Send` test.
    Detected,
    /// SimGrid's default (no `send`/`late` measurements).
    Default,
}

/// The result of [`calibrate_network`].
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkCalibration {
    /// `(S, T(S))`: derived one-way network times in seconds, by size.
    pub one_way: Vec<(u64, f64)>,
    /// The fit of `one_way` on P = S + 16.
    pub fit: PiecewiseFit,
    /// The route the factors refer to.
    pub link: LinkSpec,
    /// The SMPI configuration.
    pub params: SimgridParams,
    /// Where `params.detached_thresh_bytes` came from.
    pub threshold_source: ThresholdSource,
    /// How two concurrent flows share the route, when the exchange was measured.
    pub flow_sharing: Option<FlowSharing>,
}

/// Smallest share of the lone flow's one-way time `a(S) + D(S)` that its transfer term `D(S)`
/// must have for size S to count in the fit of [`FlowSharing`] (module docs).
pub const BANDWIDTH_REGIME_SHARE: f64 = 0.5;

/// One size of the bidirectional exchange (module docs), seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExchangePoint {
    /// S in bytes.
    pub size_bytes: u64,
    /// Measured median time of one exchange.
    pub measured_secs: f64,
    /// `c = ois + a + or`: the exchange without its transfer term.
    pub fixed_secs: f64,
    /// `D = b·P`: the lone flow's transfer term.
    pub transfer_secs: f64,
    /// Whether the size is in the bandwidth regime and counted in the fit.
    pub fitted: bool,
}

impl ExchangePoint {
    /// The model's exchange time when `flows` concurrent flows get an aggregate m times a lone
    /// flow's bandwidth: `c + D · max(1, flows/m)`.
    pub fn model_secs(&self, aggregate_ratio: f64, flows: u64) -> f64 {
        self.fixed_secs + self.transfer_secs * (flows as f64 / aggregate_ratio).max(1.0)
    }

    /// The ratio m this size alone implies with `flows` concurrent flows, `F·D / (E − c)`
    /// (infinite when the measured exchange is no longer than its fixed part).
    pub fn ratio(&self, flows: u64) -> f64 {
        let r = self.measured_secs - self.fixed_secs;
        if r > 0.0 {
            flows as f64 * self.transfer_secs / r
        } else {
            f64::INFINITY
        }
    }
}

/// How concurrent flows share the route (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSharing {
    /// F: the flows of one exchange (the ranks that exchanged at once).
    pub flows: u64,
    /// m, clamped to [1, F]: what the platform is written with.
    pub aggregate_ratio: f64,
    /// The least-squares m before clamping (infinite when the fitted u is <= 0).
    pub fitted_ratio: f64,
    /// Every measured size, in size order.
    pub points: Vec<ExchangePoint>,
}

/// Fits m, the aggregate bandwidth of concurrent flows over a lone flow's, from the
/// [`Op::Exchange`] medians and the [`Op::ExchangeRanks`] count (2 when absent), given the lone
/// flow's fit and the overheads the replay will charge (module docs). `None` when the exchange
/// was not measured.
///
/// # Errors
/// [`CalibrateError::TooFewSizes`] when fewer than `min_points` sizes are in the bandwidth
/// regime; [`CalibrateError::Invalid`] for an exchange of fewer than 2 ranks or two different
/// counts.
pub fn fit_flow_sharing(
    m: &Measurements,
    fit: &PiecewiseFit,
    params: &SimgridParams,
    min_points: usize,
) -> Result<Option<FlowSharing>, CalibrateError> {
    let medians = m.medians(Op::Exchange);
    if medians.is_empty() {
        return Ok(None);
    }
    let flows = exchange_ranks(m)?;
    let points = exchange_points(m, fit, params);
    let fitted: Vec<&ExchangePoint> = points.iter().filter(|p| p.fitted).collect();
    if fitted.len() < min_points.max(1) {
        return Err(too_few_exchange_sizes(fitted.len(), min_points));
    }
    let (mut num, mut den) = (0.0, 0.0);
    for p in &fitted {
        let w = 1.0 / p.measured_secs.max(1e-15).powi(2);
        num += w * p.transfer_secs * (p.measured_secs - p.fixed_secs);
        den += w * p.transfer_secs * p.transfer_secs;
    }
    let u = num / den;
    let f = flows as f64;
    let fitted_ratio = if u > 0.0 { f / u } else { f64::INFINITY };
    Ok(Some(FlowSharing {
        flows,
        aggregate_ratio: fitted_ratio.clamp(1.0, f),
        fitted_ratio,
        points,
    }))
}

fn too_few_exchange_sizes(found: usize, min_points: usize) -> CalibrateError {
    CalibrateError::TooFewSizes {
        what: format!(
            "exchange sizes in the bandwidth regime (transfer >= {}% of the one-way time)",
            100.0 * BANDWIDTH_REGIME_SHARE
        ),
        found,
        needed: min_points.max(1),
    }
}

/// F, the ranks that exchanged at once: the [`Op::ExchangeRanks`] count, 2 when absent.
fn exchange_ranks(m: &Measurements) -> Result<u64, CalibrateError> {
    let counts = m.medians(Op::ExchangeRanks);
    match counts.as_slice() {
        [] => Ok(2),
        [one] if one.size_bytes >= 2 => Ok(one.size_bytes),
        _ => Err(CalibrateError::Invalid {
            what: format!(
                "'exchange_ranks' must be one count >= 2 (the ranks that exchanged at once), found {:?}",
                counts.iter().map(|c| c.size_bytes).collect::<Vec<_>>()
            ),
        }),
    }
}

/// The exchange points of `m` (module docs): for every measured size, `c = ois + a + or` and
/// `D = b·P` from `fit` and `params`, in size order.
fn exchange_points(
    m: &Measurements,
    fit: &PiecewiseFit,
    params: &SimgridParams,
) -> Vec<ExchangePoint> {
    m.medians(Op::Exchange)
        .iter()
        .map(|p| {
            let s = p.size_bytes;
            let seg = &fit.segments[fit.segment_index(s)];
            let a = seg.intercept_secs;
            let d = seg.slope_secs_per_byte * (s as f64 + fit.offset_bytes);
            let or = if s < params.detached_thresh_bytes {
                overhead_at(&params.or, s)
            } else {
                0.0
            };
            ExchangePoint {
                size_bytes: s,
                measured_secs: p.time_secs,
                fixed_secs: overhead_at(&params.ois, s) + a + or,
                transfer_secs: d,
                fitted: d > 0.0 && d >= BANDWIDTH_REGIME_SHARE * (a + d),
            }
        })
        .collect()
}

/// Number of candidate ratios of [`fit_folded_sharing`]'s grid over [1, F], before the
/// golden-section refinement.
pub const RATIO_GRID_STEPS: usize = 2000;

/// What [`fit_folded_sharing`] fits on a folded run's busy pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldedSharing {
    /// m, and the exchange points (their fixed parts with the extra waits).
    pub sharing: FlowSharing,
    /// Per segment of the fit, seconds: what a folded message waits beyond the wait already
    /// in the fit's intercepts (a rendezvous needs the peer scheduled more than once);
    /// `a_k + extra_k >= 0`.
    pub extra_wait_secs: Vec<f64>,
}

/// Fits m for a folded calibration (module docs) on both series of the busy pairs, with an
/// extra wait per segment. For a candidate m, each segment's extra wait `e_k` is the median,
/// over the segment's ping-pong sizes, of the measured one-way time (half the round trip)
/// minus the model's, `a_k + D·max(1, (F/2)/m) + [S < thresh]·(os + or)` for the F/2
/// concurrent pairs; the cost is the sum of squared relative errors of that ping-pong model
/// plus `e_k` at every size, and of the exchange of F flows,
/// `ois + a_k + e_k + D·max(1, F/m) + [S < thresh]·or`, over the sizes of its bandwidth regime
/// (`D >= a`). m minimises it: a
/// grid of [`RATIO_GRID_STEPS`] over [1, F], then golden-section search around the best.
/// `fit` holds the lone flow's segments with the wait already added. `None` when the exchange
/// was not measured.
///
/// # Errors
/// As [`fit_flow_sharing`]: too few exchange sizes in the bandwidth regime, a bad rank count.
pub fn fit_folded_sharing(
    m: &Measurements,
    fit: &PiecewiseFit,
    params: &SimgridParams,
    min_points: usize,
) -> Result<Option<FoldedSharing>, CalibrateError> {
    if m.medians(Op::Exchange).is_empty() {
        return Ok(None);
    }
    let flows = exchange_ranks(m)?;
    let f = flows as f64;
    let pairs = (flows / 2).max(1) as f64;
    let points = exchange_points(m, fit, params);
    let in_regime = points.iter().filter(|p| p.fitted).count();
    if in_regime < min_points.max(1) {
        return Err(too_few_exchange_sizes(in_regime, min_points));
    }
    let thresh = params.detached_thresh_bytes;
    let nseg = fit.segments.len();
    // Ping-pong sizes: (segment, a + overheads, D, measured one-way).
    let pp: Vec<(usize, f64, f64, f64)> = m
        .medians(Op::PingPong)
        .iter()
        .map(|p| {
            let s = p.size_bytes;
            let k = fit.segment_index(s);
            let seg = &fit.segments[k];
            let d = seg.slope_secs_per_byte * (s as f64 + fit.offset_bytes);
            let ov = if s < thresh {
                overhead_at(&params.os, s) + overhead_at(&params.or, s)
            } else {
                0.0
            };
            (k, seg.intercept_secs + ov, d, p.time_secs / 2.0)
        })
        .collect();
    let extras = |ratio: f64| -> Vec<f64> {
        (0..nseg)
            .map(|k| {
                let diffs: Vec<f64> = pp
                    .iter()
                    .filter(|q| q.0 == k)
                    .map(|&(_, fixed, d, t)| t - fixed - d * (pairs / ratio).max(1.0))
                    .collect();
                median(&diffs).map_or(0.0, |e| e.max(-fit.segments[k].intercept_secs))
            })
            .collect()
    };
    let cost = |ratio: f64| -> f64 {
        let e = extras(ratio);
        let mut c = 0.0;
        for &(k, fixed, d, t) in &pp {
            c += ((fixed + e[k] + d * (pairs / ratio).max(1.0) - t) / t).powi(2);
        }
        for p in points.iter().filter(|p| p.fitted) {
            let model = p.model_secs(ratio, flows) + e[fit.segment_index(p.size_bytes)];
            c += ((model - p.measured_secs) / p.measured_secs).powi(2);
        }
        c
    };
    let step = (f - 1.0) / RATIO_GRID_STEPS as f64;
    let mut best = (cost(1.0), 1.0);
    for i in 1..=RATIO_GRID_STEPS {
        let r = 1.0 + step * i as f64;
        let c = cost(r);
        if c < best.0 {
            best = (c, r);
        }
    }
    // Golden-section search on [best - step, best + step] (within [1, F]).
    let (mut lo, mut hi) = ((best.1 - step).max(1.0), (best.1 + step).min(f));
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let x1 = hi - g * (hi - lo);
        let x2 = lo + g * (hi - lo);
        if cost(x1) <= cost(x2) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    let r = (lo + hi) / 2.0;
    let ratio = if cost(r) < best.0 { r } else { best.1 };
    let extra_wait_secs = extras(ratio);
    let mut waited = fit.clone();
    for (seg, e) in waited.segments.iter_mut().zip(&extra_wait_secs) {
        seg.intercept_secs += e;
    }
    Ok(Some(FoldedSharing {
        sharing: FlowSharing {
            flows,
            aggregate_ratio: ratio,
            fitted_ratio: ratio,
            points: exchange_points(m, &waited, params),
        },
        extra_wait_secs,
    }))
}

/// `smpi/ois` fitted on the exchange (module docs): one entry per segment of `fit`, the
/// relative least-squares line through the residuals
/// `max(E − a − u·D − [S < thresh]·or, isend call cost)` of the segment's exchange sizes, with
/// `u = max(1, F/m)` from `sharing`; the call cost is `params.ois` (the [`Op::Isend`] fit).
/// Weights `1/s²`, s the median exchange time of the size and its two neighbours (the
/// segments' rule, [`crate::fit`]): a size whose median caught the partner already sent (a
/// folded exchange of 0.3 µs among sizes of 8 µs) does not dominate the line.
/// A segment without exchange sizes keeps its call-cost entry. Thresholds as
/// `overhead_entries`: 0 for the first segment, its first size − 1 after.
/// An `ois` term (intercept, or slope times the segment's last size) below this many
/// seconds is written as 0: it is the fit's rounding, far below anything measured, and a
/// positive sleep shorter than `surf/precision` (1e-9 s) lasts 1e-9 s in SimGrid.
pub const NEGLIGIBLE_OVERHEAD_SECS: f64 = 1e-12;

pub fn exchange_overhead_entries(
    sharing: &FlowSharing,
    fit: &PiecewiseFit,
    params: &SimgridParams,
) -> Vec<OverheadEntry> {
    let u = (sharing.flows as f64 / sharing.aggregate_ratio).max(1.0);
    let mut out = Vec::with_capacity(fit.segments.len());
    for (k, seg) in fit.segments.iter().enumerate() {
        let threshold_bytes = if k == 0 {
            0
        } else {
            seg.first_size_bytes.saturating_sub(1)
        };
        let here: Vec<&ExchangePoint> = sharing
            .points
            .iter()
            .filter(|p| fit.segment_index(p.size_bytes) == k)
            .collect();
        let times: Vec<f64> = here.iter().map(|p| p.measured_secs).collect();
        let pts: Vec<(f64, f64, f64)> = here
            .iter()
            .zip(relative_weights(&times))
            .map(|(p, w)| {
                let call = overhead_at(&params.ois, p.size_bytes);
                // fixed_secs = call + a + or: the residual is E − u·D − (fixed − call).
                let r = p.measured_secs - u * p.transfer_secs - (p.fixed_secs - call);
                (p.size_bytes as f64, r.max(call), w)
            })
            .collect();
        match fit_weighted_line(&pts) {
            Some((a, b)) => {
                // Rounding noise (a line through residuals of exactly 0 gives ~1e-25 s) would
                // become a 1 ns sleep: SimGrid rounds a positive sleep up to surf/precision.
                let last = seg.last_size_bytes.max(1) as f64;
                let negligible = |x: f64| x.abs() < NEGLIGIBLE_OVERHEAD_SECS;
                out.push(OverheadEntry {
                    threshold_bytes,
                    intercept_secs: if negligible(a) { 0.0 } else { a },
                    slope_secs_per_byte: if negligible(b * last) { 0.0 } else { b },
                })
            }
            None => {
                // No exchange size here: the call cost's line through the segment's ends.
                let (s0, s1) = (
                    seg.first_size_bytes.max(1),
                    seg.last_size_bytes.max(seg.first_size_bytes.max(1) + 1),
                );
                let (c0, c1) = (overhead_at(&params.ois, s0), overhead_at(&params.ois, s1));
                let b = ((c1 - c0) / (s1 - s0) as f64).max(0.0);
                out.push(OverheadEntry {
                    threshold_bytes,
                    intercept_secs: (c0 - b * s0 as f64).max(0.0),
                    slope_secs_per_byte: b,
                });
            }
        }
    }
    out
}

fn round_sig(x: f64, digits: i32) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let e = digits - 1 - x.log10().floor() as i32;
    // Scale by an exact power of ten on the side that keeps the result exactly representable.
    if e >= 0 {
        let p = 10f64.powi(e);
        (x * p).round() / p
    } else {
        let p = 10f64.powi(-e);
        (x / p).round() * p
    }
}

/// Detects the eager/rendezvous switch from [`Op::Send`] and [`Op::Late`] samples (module docs).
/// `None` when either series is missing; the largest size + 1 when no send ever waited.
pub fn detect_detached_thresh(m: &Measurements) -> Option<u64> {
    let late: Vec<f64> = m
        .samples
        .iter()
        .filter(|s| s.op == Op::Late)
        .map(|s| s.time_secs)
        .collect();
    let late = median(&late)?;
    let sends = m.medians(Op::Send);
    let last = sends.last()?;
    let mut thresh = last.size_bytes + 1;
    for p in sends.iter().rev() {
        if p.time_secs > late / 2.0 {
            thresh = p.size_bytes;
        } else {
            break;
        }
    }
    Some(thresh)
}

/// Fits the overhead series `op` with one line per segment of `fit` (sizes below `below_bytes`
/// only), as `smpi/os`-style entries. Empty when `op` was not measured.
fn overhead_entries(
    m: &Measurements,
    op: Op,
    fit: &PiecewiseFit,
    below_bytes: u64,
) -> Vec<OverheadEntry> {
    let pts: Vec<(u64, f64)> = m
        .medians(op)
        .iter()
        .filter(|p| p.size_bytes < below_bytes)
        .map(|p| (p.size_bytes, p.time_secs))
        .collect();
    let mut out = Vec::new();
    for (k, seg) in fit.segments.iter().enumerate() {
        let first = if k == 0 { 0 } else { seg.first_size_bytes };
        let last = fit
            .segments
            .get(k + 1)
            .map_or(u64::MAX, |n| n.first_size_bytes - 1);
        if let Some((a, b)) = fit_range(&pts, first, last, 0.0) {
            out.push(OverheadEntry {
                threshold_bytes: if out.is_empty() {
                    0
                } else {
                    seg.first_size_bytes.saturating_sub(1)
                },
                intercept_secs: a,
                slope_secs_per_byte: b,
            });
        }
    }
    out
}

/// The wait for a core that a folded run adds to every message, seconds: half the median, over
/// the sizes of `unfolded_fit`'s first segment (the latency regime) measured in both sets, of
/// the folded minus the unfolded ping-pong round trip (`None` when no size is in both, 0 when
/// the folded run is not slower).
pub fn added_wait_secs(
    folded: &Measurements,
    unfolded: &Measurements,
    unfolded_fit: &PiecewiseFit,
) -> Option<f64> {
    let first = unfolded_fit.segments.first()?;
    let diffs: Vec<f64> = unfolded
        .medians(Op::PingPong)
        .iter()
        .filter(|p| p.size_bytes >= first.first_size_bytes && p.size_bytes <= first.last_size_bytes)
        .filter_map(|p| {
            folded
                .median_at(Op::PingPong, p.size_bytes)
                .map(|f| (f - p.time_secs) / 2.0)
        })
        .collect();
    median(&diffs).map(|d| d.max(0.0))
}

/// Calibrates SimGrid's network model from ping-pong measurements (module docs).
///
/// # Errors
/// [`CalibrateError::MissingSeries`] without `pingpong` samples; [`CalibrateError::TooFewSizes`]
/// with fewer than `segments × min_points` sizes; [`CalibrateError::NonMonotonic`] when the
/// ping-pong medians drop by more than the tolerance; [`CalibrateError::Invalid`] when the
/// overheads exceed half the round trip at some size; the errors of [`fit_flow_sharing`].
pub fn calibrate_network(
    m: &Measurements,
    opts: &NetworkOptions,
) -> Result<NetworkCalibration, CalibrateError> {
    if !m.has(Op::PingPong) {
        return Err(CalibrateError::MissingSeries {
            op: Op::PingPong.name().into(),
        });
    }
    let pp = m.medians(Op::PingPong);
    let needed = opts.segments * opts.min_points.max(2);
    if pp.len() < needed {
        return Err(CalibrateError::TooFewSizes {
            what: format!("ping-pong for a {}-segment model", opts.segments),
            found: pp.len(),
            needed,
        });
    }
    m.check_monotonic(Op::PingPong, opts.monotonic_tolerance)?;
    let (thresh, threshold_source) = match (opts.detached_thresh_bytes, detect_detached_thresh(m)) {
        (Some(t), _) => (t, ThresholdSource::Given),
        (None, Some(t)) => (t, ThresholdSource::Detected),
        (None, None) => (DEFAULT_DETACHED_THRESH_BYTES, ThresholdSource::Default),
    };
    let os_op = if m.has(Op::SendBurst) {
        Op::SendBurst
    } else {
        Op::Send
    };
    let or_op = if m.has(Op::RecvBurst) {
        Op::RecvBurst
    } else {
        Op::Recv
    };
    let mut one_way = Vec::with_capacity(pp.len());
    for p in &pp {
        let s = p.size_bytes;
        let mut t = p.time_secs / 2.0;
        if s < thresh {
            let os = m.median_at(os_op, s).unwrap_or(0.0);
            let or = m.median_at(or_op, s).unwrap_or(0.0);
            t -= os + or;
            if t <= 0.0 {
                return Err(CalibrateError::Invalid {
                    what: format!(
                        "at {s} B the send and receive overheads ({os:e} s + {or:e} s) exceed half the ping-pong time ({:e} s)",
                        p.time_secs / 2.0
                    ),
                });
            }
        }
        one_way.push((s, t));
    }
    let mut fit = fit_piecewise(
        &one_way,
        &FitOptions {
            segments: opts.segments,
            min_points: opts.min_points,
            offset_bytes: ENVELOPE_BYTES,
            forced_breaks_bytes: vec![thresh],
        },
    )?;
    if opts.added_latency_secs != 0.0 {
        if !(opts.added_latency_secs.is_finite() && opts.added_latency_secs > 0.0) {
            return Err(CalibrateError::Invalid {
                what: format!(
                    "an added latency must be a finite number of seconds > 0, not {}",
                    opts.added_latency_secs
                ),
            });
        }
        for seg in &mut fit.segments {
            seg.intercept_secs += opts.added_latency_secs;
        }
    }
    let os = overhead_entries(m, os_op, &fit, thresh);
    let or = overhead_entries(m, or_op, &fit, thresh);
    let ois = overhead_entries(m, Op::Isend, &fit, u64::MAX);
    let mut params = SimgridParams {
        lat_factor: Vec::new(),
        bw_factor: Vec::new(),
        os,
        or,
        ois,
        detached_thresh_bytes: thresh,
    };
    let flow_sharing = if opts.flow_sharing {
        fit_flow_sharing(m, &fit, &params, opts.min_points)?
    } else {
        None
    };
    let flow_sharing = flow_sharing.map(|f| with_exchange_overhead(f, m, &fit, &mut params));
    finish(one_way, fit, params, threshold_source, flow_sharing, opts)
}

/// Replaces `params.ois` by [`exchange_overhead_entries`] and recomputes the points' fixed
/// parts with it.
fn with_exchange_overhead(
    mut sharing: FlowSharing,
    m: &Measurements,
    fit: &PiecewiseFit,
    params: &mut SimgridParams,
) -> FlowSharing {
    params.ois = exchange_overhead_entries(&sharing, fit, params);
    sharing.points = exchange_points(m, fit, params);
    sharing
}

/// The network of a run folded K ranks per core (module docs, "Folded runs"): the unfolded
/// calibration of `unfolded` (segments, `os`, `or`, `ois`, threshold; `opts.added_latency_secs`
/// is the wait for a core, added to every segment), and from `folded`, the busy pairs'
/// benchmark, the sharing ratio m and an extra wait per segment ([`fit_folded_sharing`]).
/// `ois` is not refitted on the folded exchange: what it takes beyond its flows there is the
/// ranks leaving the barrier a wait apart (the replay of the benchmark,
/// [`crate::pingpong_sim::simulate_exchange_after_barrier`], shows it), not a cost per
/// message. Without a folded exchange (or with `opts.flow_sharing` false) the route is one
/// SHARED link, the model of [`calibrate_network`] with the wait.
///
/// # Errors
/// Those of [`calibrate_network`] on `unfolded`, and of [`fit_folded_sharing`] on `folded`.
pub fn calibrate_folded_network(
    folded: &Measurements,
    unfolded: &Measurements,
    opts: &NetworkOptions,
) -> Result<NetworkCalibration, CalibrateError> {
    let base = calibrate_network(unfolded, opts)?;
    let mut fit = base.fit.clone();
    let folded_sharing = if opts.flow_sharing {
        fit_folded_sharing(folded, &fit, &base.params, opts.min_points)?
    } else {
        None
    };
    let flow_sharing = folded_sharing.map(|f| {
        for (seg, e) in fit.segments.iter_mut().zip(&f.extra_wait_secs) {
            seg.intercept_secs += e;
        }
        f.sharing
    });
    finish(
        base.one_way,
        fit,
        base.params,
        base.threshold_source,
        flow_sharing,
        opts,
    )
}

/// The route and the factors for a fit (module docs of [`crate::simgrid`]).
fn finish(
    one_way: Vec<(u64, f64)>,
    fit: PiecewiseFit,
    mut params: SimgridParams,
    threshold_source: ThresholdSource,
    flow_sharing: Option<FlowSharing>,
    opts: &NetworkOptions,
) -> Result<NetworkCalibration, CalibrateError> {
    let crosstraffic_weight = if flow_sharing.is_some() {
        FATPIPE_LINK_WEIGHT
    } else {
        opts.crosstraffic_weight
    };
    let latency_secs = opts.latency_secs.unwrap_or_else(|| {
        let a = fit.segments[0].intercept_secs;
        round_sig(if a > 0.0 { a } else { one_way[0].1 }, 4)
    });
    let bandwidth_bytes_per_sec = opts.bandwidth_bytes_per_sec.unwrap_or_else(|| {
        let b = fit
            .segments
            .iter()
            .map(|s| s.slope_secs_per_byte)
            .filter(|&b| b > 0.0)
            .fold(f64::INFINITY, f64::min);
        round_sig(crosstraffic_weight / b.clamp(1e-15, 1.0), 4)
    });
    let link = LinkSpec {
        latency_secs,
        bandwidth_bytes_per_sec,
        crosstraffic_weight,
        tcp_gamma_bytes: DEFAULT_TCP_GAMMA_BYTES,
        flow_aggregate_ratio: flow_sharing.as_ref().map(|p| p.aggregate_ratio),
    };
    (params.lat_factor, params.bw_factor) = network_factors(&fit, &link)?;
    Ok(NetworkCalibration {
        one_way,
        fit,
        link,
        params,
        threshold_source,
        flow_sharing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let f = fit_folded_sharing(&m, &fit, &params, 3).unwrap().unwrap();
            assert_eq!(f.sharing.flows, 4);
            assert!(
                (f.sharing.aggregate_ratio - truth).abs() < 1e-6,
                "{truth}: {f:?}"
            );
            assert!(f.extra_wait_secs[0].abs() < 1e-15, "{f:?}");
        }
        assert!(
            fit_folded_sharing(&Measurements::default(), &fit, &params, 3)
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
        let e =
            calibrate_network(&Measurements::default(), &NetworkOptions::default()).unwrap_err();
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
}
