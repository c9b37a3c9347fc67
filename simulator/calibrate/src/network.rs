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
//! # Eager/rendezvous threshold
//! The benchmark times `MPI_Send` while the receiver posts late by `late` seconds: an eager send
//! returns at once, a rendezvous send waits for the receiver. The threshold is the smallest size
//! from which every send took more than `late/2`.

use crate::fit::{fit_piecewise, fit_range, FitOptions, PiecewiseFit};
use crate::measurement::{median, Measurements, Op};
use crate::simgrid::{
    network_factors, LinkSpec, OverheadEntry, SimgridParams, DEFAULT_TCP_GAMMA_BYTES,
    ENVELOPE_BYTES, SHARED_LINK_WEIGHT,
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
    /// [`crate::platform_xml`] writes).
    pub crosstraffic_weight: f64,
    /// `smpi/send-is-detached-thresh` in bytes; default: detected (module docs), else 65536.
    pub detached_thresh_bytes: Option<u64>,
    /// Largest tolerated relative drop of the ping-pong median from one size to the next (0.5:
    /// a larger message taking less than half the time of the previous size is an error; smaller
    /// dips happen on a loaded machine, e.g. for multi-MiB messages near the cache size).
    pub monotonic_tolerance: f64,
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

/// Calibrates SimGrid's network model from ping-pong measurements (module docs).
///
/// # Errors
/// [`CalibrateError::MissingSeries`] without `pingpong` samples; [`CalibrateError::TooFewSizes`]
/// with fewer than `segments × min_points` sizes; [`CalibrateError::NonMonotonic`] when the
/// ping-pong medians drop by more than the tolerance; [`CalibrateError::Invalid`] when the
/// overheads exceed half the round trip at some size.
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
    let fit = fit_piecewise(
        &one_way,
        &FitOptions {
            segments: opts.segments,
            min_points: opts.min_points,
            offset_bytes: ENVELOPE_BYTES,
            forced_breaks_bytes: vec![thresh],
        },
    )?;
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
        round_sig(opts.crosstraffic_weight / b.clamp(1e-15, 1.0), 4)
    });
    let link = LinkSpec {
        latency_secs,
        bandwidth_bytes_per_sec,
        crosstraffic_weight: opts.crosstraffic_weight,
        tcp_gamma_bytes: DEFAULT_TCP_GAMMA_BYTES,
    };
    let (lat_factor, bw_factor) = network_factors(&fit, &link)?;
    let params = SimgridParams {
        lat_factor,
        bw_factor,
        os: overhead_entries(m, os_op, &fit, thresh),
        or: overhead_entries(m, or_op, &fit, thresh),
        ois: overhead_entries(m, Op::Isend, &fit, u64::MAX),
        detached_thresh_bytes: thresh,
    };
    Ok(NetworkCalibration {
        one_way,
        fit,
        link,
        params,
        threshold_source,
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
