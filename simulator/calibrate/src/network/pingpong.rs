//! The lone flow: one-way network times from the blocking ping-pong, the eager/rendezvous
//! threshold, the piecewise fit and the `os`/`or` lines (seed 003 §5).
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
//! # Segments
//! `NetworkOptions::segments` (3, seed 003 §5) counts the breaks the data decides; the
//! eager/rendezvous switch, a forced break, adds one segment when it falls inside the measured
//! sizes, so that it does not take the place of a bend of the data. Open MPI's shared-memory
//! transport has two protocol switches and a cache cliff: on the EPYC machine
//! (`validation/calibration/README.md`) the detached threshold at 384 B, vader's single-copy
//! rendezvous at 4 KiB and the 3 MiB cache size. With the switch counted among the 3, the one
//! break left went to the cache cliff and a single line ran from 384 B to 2 MiB (ping-pong
//! +34 % at 384 B, −32 % at 4 KiB; exchange −33 % at 4160 B). The breaks are chosen on the
//! ping-pong and, when measured, the exchange together ([`crate::fit`], companion series): a
//! protocol switch moves both, and the exchange shows vader's 4 KiB switch more clearly
//! (+22 % from 4032 to 4096 B against +6 % one way).
//!
//! # Eager/rendezvous threshold
//! The benchmark times `MPI_Send` while the receiver posts late by `late` seconds: an eager send
//! returns at once, a rendezvous send waits for the receiver. The threshold is the smallest size
//! from which every send took more than `late/2`.

use super::exchange::{fit_flow_sharing, with_exchange_overhead};
use super::{finish, NetworkCalibration, NetworkOptions, ThresholdSource};
use crate::fit::{fit_piecewise, fit_range, FitOptions, PiecewiseFit};
use crate::measurement::{median, Measurements, Op};
use crate::simgrid::{OverheadEntry, SimgridParams, ENVELOPE_BYTES};
use crate::CalibrateError;

/// SimGrid's default `smpi/send-is-detached-thresh` (reference §9), used when the measurements
/// cannot tell the eager/rendezvous switch.
pub const DEFAULT_DETACHED_THRESH_BYTES: u64 = 65536;

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
    // The switch adds a segment when it falls inside the measured sizes (module docs,
    // "Segments"), and the exchange, when measured and used, helps place the free breaks.
    let switch_inside = pp.first().is_some_and(|p| p.size_bytes < thresh)
        && pp.last().is_some_and(|p| p.size_bytes >= thresh);
    let companion_points = if opts.flow_sharing {
        m.medians(Op::Exchange)
            .iter()
            .map(|p| (p.size_bytes, p.time_secs))
            .collect()
    } else {
        Vec::new()
    };
    let mut fit = fit_piecewise(
        &one_way,
        &FitOptions {
            segments: opts.segments + usize::from(switch_inside),
            min_points: opts.min_points,
            offset_bytes: ENVELOPE_BYTES,
            forced_breaks_bytes: vec![thresh],
            companion_points,
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
        rendezvous_late_wait: Vec::new(),
        cold_call_secs: cold_call_secs(m),
    };
    let flow_sharing = if opts.flow_sharing {
        fit_flow_sharing(m, &fit, &params, opts.min_points)?
    } else {
        None
    };
    let flow_sharing = flow_sharing.map(|f| with_exchange_overhead(f, m, &fit, &mut params));
    finish(one_way, fit, params, threshold_source, flow_sharing, opts)
}

/// `timeless/cold-call-secs` from the `cold_allreduce` rows (`timeless-pingpong`): the median
/// allreduce of the last rank to arrive after the largest streamed size minus the median after
/// the smallest, seconds (at least 0): what the MPI library's shared state costs to bring back
/// to the core after a burst that streamed through more than the caches hold. `None` with
/// fewer than two sizes.
///
/// Example: medians 0.22 µs after 8 KiB and 11.98 µs after 32 MiB give 11.76 µs (this
/// project's 2-core AMD EPYC VM, `validation/calibration/epyc`).
pub fn cold_call_secs(m: &Measurements) -> Option<f64> {
    let p = m.medians(Op::ColdAllreduce);
    let (warm, cold) = (p.first()?, p.last()?);
    (cold.size_bytes > warm.size_bytes).then(|| (cold.time_secs - warm.time_secs).max(0.0))
}
