//! Concurrent flows: how the flows of the benchmark's bidirectional exchange share the route,
//! and `smpi/ois`, what an exchange costs beyond its flows.
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

use crate::fit::{fit_weighted_line, relative_weights, PiecewiseFit};
use crate::measurement::{Measurements, Op};
use crate::simgrid::{overhead_at, OverheadEntry, SimgridParams};
use crate::CalibrateError;

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

pub(super) fn too_few_exchange_sizes(found: usize, min_points: usize) -> CalibrateError {
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
pub(super) fn exchange_ranks(m: &Measurements) -> Result<u64, CalibrateError> {
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
pub(super) fn exchange_points(
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

/// An `ois` term (intercept, or slope times the segment's last size) below this many
/// seconds is written as 0: it is the fit's rounding, far below anything measured, and a
/// positive sleep shorter than `surf/precision` (1e-9 s) lasts 1e-9 s in SimGrid.
pub const NEGLIGIBLE_OVERHEAD_SECS: f64 = 1e-12;

/// `smpi/ois` fitted on the exchange (module docs): one entry per segment of `fit`, the
/// relative least-squares line through the residuals
/// `max(E − a − u·D − [S < thresh]·or, isend call cost)` of the segment's exchange sizes, with
/// `u = max(1, F/m)` from `sharing`; the call cost is `params.ois` (the [`Op::Isend`] fit).
/// Weights `1/s²`, s the median exchange time of the size and its two neighbours (the
/// segments' rule, [`crate::fit`]): a size whose median caught the partner already sent (a
/// folded exchange of 0.3 µs among sizes of 8 µs) does not dominate the line.
/// A segment without exchange sizes keeps its call-cost entry. Thresholds as
/// `overhead_entries`: 0 for the first segment, its first size − 1 after.
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

/// Replaces `params.ois` by [`exchange_overhead_entries`] and recomputes the points' fixed
/// parts with it.
pub(super) fn with_exchange_overhead(
    mut sharing: FlowSharing,
    m: &Measurements,
    fit: &PiecewiseFit,
    params: &mut SimgridParams,
) -> FlowSharing {
    params.ois = exchange_overhead_entries(&sharing, fit, params);
    sharing.points = exchange_points(m, fit, params);
    sharing
}
