//! Folded runs: the busy pairs of a run folded K ranks per core, calibrated together.
//!
//! # Folded runs: the busy pairs together
//! A folded calibration ([`calibrate_folded_network`]) runs the benchmark on every pair of a
//! folded run at once (F ranks, F/2 pairs): its ping-pong is F/2 concurrent lone flows, its
//! exchange F. Its model is the unfolded one (lone-flow segments, `os`, `or`) with every
//! segment's latency raised by the wait for a core ([`added_wait_secs`]), concurrent flows
//! sharing an aggregate m times a lone flow's bandwidth, per folded segment an extra wait and
//! a folded bandwidth factor, with a break of the fold's own (module [`super::folded_fit`],
//! [`fit_folded_sharing`]: all fitted on both series), and the unfolded `ois`. Fitting what
//! the folded exchange takes beyond its flows into `ois` would charge every isend of a folded
//! application a second wait (commsplit folded, replayed with it: +90–100 %); the exchange is
//! replayed as the benchmark times it instead (below).
//!
//! # The folded exchange as the benchmark times it
//! Each rank times its exchange from its own barrier exit, and the exchange lasts the longest
//! of the ranks. In a fold the ranks leave the barrier as their cores come round, each pair's
//! two a wait for a core apart, so the first out of the slowest pair waits for its partner
//! (1 B, 2 ranks per core: 5.9 µs against 2.6 µs one way). The replay
//! ([`crate::pingpong_sim::simulate_exchange_after_skew`]) starts rank 1 that skew late,
//! fitted on the exchange below the detached threshold ([`fit_exchange_skew`]: an eager
//! exchange is the skew, one message and the overheads, nothing else unknown) from an
//! estimate: the median of the largest of the F/2 pairs' skews, each distributed as the
//! folded ping-pong's waits ([`exchange_skew_secs`]). The estimate takes one wait per pair,
//! but the measuring barrier releases its F ranks over several rounds of messages, each
//! waiting for a core: on the EPYC machine it fell short of the eager exchange by 2.1 µs
//! with 2 ranks per core (estimate 3.2 µs, fitted 5.4 µs) and by 14 µs with 4 (9.8 against
//! 23.9 µs), and the late wait fitted after it took the difference (5.8 µs from 384 B with 2
//! per core, where the eager-sized rendezvous exchange of 384 B – 4 KiB costs no more than
//! the eager one). At rendezvous sizes the partner that comes
//! late finds the request-to-send waiting, copies and acknowledges, and the sender, which
//! yielded its core while it waited, sees the acknowledgement only once it gets a core again:
//! `timeless/rendezvous-late-wait` (a replay option, 0 by default: SimGrid's rendezvous ends
//! when the transfer does), per segment, fitted on the exchange by replaying it
//! ([`fit_rendezvous_late_wait`], [`rendezvous_late_wait_entries`]). A ping-pong's receiver is
//! always there first, so the ping-pong and its fit do not change.

use std::path::Path;

use timeless_platform::{HostId, Platform};

use super::folded_fit::fit_folded_sharing;
use super::{calibrate_network, finish, FlowSharing, NetworkCalibration, NetworkOptions};
use crate::fit::PiecewiseFit;
use crate::measurement::{median, Measurements, Op};
use crate::pingpong_sim::simulate_exchange_after_skew;
use crate::simgrid::{OverheadEntry, SimgridParams};
use crate::CalibrateError;

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

/// The network of a run folded K ranks per core (module docs, "Folded runs"): the unfolded
/// calibration of `unfolded` (segments, `os`, `or`, `ois`, threshold; `opts.added_latency_secs`
/// is the wait for a core, added to every segment), and from `folded`, the busy pairs'
/// benchmark, the sharing ratio m and the folded segments (extra wait and bandwidth factor
/// each, `opts.folded_breaks` breaks more than the unfolded ones; [`fit_folded_sharing`]).
/// `ois` is not refitted on the folded exchange: what it takes beyond its flows there is the
/// ranks leaving the barrier a wait apart and a late receiver's acknowledgement (module docs,
/// "The folded exchange as the benchmark times it"; the pipeline replays the first and fits
/// the second, [`fit_rendezvous_late_wait`]), not a cost per message. Without a folded
/// exchange (or with `opts.flow_sharing` false) the route is one SHARED link, the model of
/// [`calibrate_network`] with the wait.
///
/// # Errors
/// Those of [`calibrate_network`] on `unfolded`, and of [`fit_folded_sharing`] on `folded`.
pub fn calibrate_folded_network(
    folded: &Measurements,
    unfolded: &Measurements,
    opts: &NetworkOptions,
) -> Result<NetworkCalibration, CalibrateError> {
    let base = calibrate_network(unfolded, opts)?;
    let folded_sharing = if opts.flow_sharing {
        fit_folded_sharing(
            folded,
            &base.fit,
            &base.params,
            opts.min_points,
            opts.folded_breaks,
        )?
    } else {
        None
    };
    let (fit, flow_sharing) = match folded_sharing {
        Some(f) => (f.fit, Some(f.sharing)),
        None => (base.fit, None),
    };
    finish(
        base.one_way,
        fit,
        base.params,
        base.threshold_source,
        flow_sharing,
        opts,
    )
}

/// The barrier-exit skew of a folded exchange's longest pair, seconds: what the benchmark's
/// exchange, timed from each rank's own barrier exit and lasting the longest of the ranks,
/// starts with (module docs, "The folded exchange as the benchmark times it"). Each rank leaves
/// the barrier when its core comes round, so each pair's ranks leave it a wait for a core apart,
/// distributed as the folded ping-pong's waits: every sample's one-way time (half the round
/// trip) minus the unfolded median one-way time at its size, over the sizes of
/// `unfolded_fit`'s first segment (those of [`added_wait_secs`]). The exchange lasts as long as
/// the pair with the largest of the `pairs` skews, whose median is the `0.5^(1/pairs)`
/// quantile of the waits (`P(max <= x) = F(x)^pairs`): the smallest wait `w_(i)` with
/// `i >= 0.5^(1/pairs)·N`, N waits in increasing order. One pair: the median wait (the lower
/// one for an even N). At least 0; `None` without a sample of a size in both sets.
pub fn exchange_skew_secs(
    folded: &Measurements,
    unfolded: &Measurements,
    unfolded_fit: &PiecewiseFit,
    pairs: u64,
) -> Option<f64> {
    let first = unfolded_fit.segments.first()?;
    let mut waits: Vec<f64> = Vec::new();
    for p in unfolded
        .medians(Op::PingPong)
        .iter()
        .filter(|p| p.size_bytes >= first.first_size_bytes && p.size_bytes <= first.last_size_bytes)
    {
        waits.extend(
            folded
                .samples
                .iter()
                .filter(|s| s.op == Op::PingPong && s.size_bytes == p.size_bytes)
                .map(|s| (s.time_secs - p.time_secs) / 2.0),
        );
    }
    if waits.is_empty() {
        return None;
    }
    waits.sort_by(f64::total_cmp);
    let q = 0.5f64.powf(1.0 / pairs.max(1) as f64);
    let i = ((q * waits.len() as f64).ceil() as usize).clamp(1, waits.len());
    Some(waits[i - 1].max(0.0))
}

/// Fits the barrier-exit skew of a folded exchange (module docs, "The folded exchange as the
/// benchmark times it") on the exchange sizes below the detached threshold, starting from
/// `estimate_secs` ([`exchange_skew_secs`]): replay those sizes as the benchmark times them
/// ([`simulate_exchange_after_skew`] on `platform` with `params`), move the skew by the median
/// of measured minus replayed (at least 0), and again, until it moves by at most
/// [`LATE_WAIT_TOLERANCE_SECS`] (at most [`LATE_WAIT_ROUNDS`] rounds). An eager exchange is
/// the skew, one message and the overheads, without a rendezvous wait, so the skew is its only
/// unknown there; the replay grows by at most the skew's move (the late rank's partner pays
/// its `ois` meanwhile), so no round overshoots the fixed point. Returns
/// `estimate_secs` when no exchange size is below the threshold. The skew is the benchmark's
/// (how its ranks leave its barrier), not the platform's: it is not written to the
/// configuration, but the late wait fitted after it ([`fit_rendezvous_late_wait`]) is.
///
/// # Errors
/// Those of [`simulate_exchange_after_skew`].
pub fn fit_exchange_skew(
    platform: &Platform,
    hosts: [HostId; 2],
    sharing: &FlowSharing,
    params: &SimgridParams,
    estimate_secs: f64,
    scratch: &Path,
) -> Result<f64, CalibrateError> {
    let eager: Vec<(u64, f64)> = sharing
        .points
        .iter()
        .filter(|p| p.size_bytes < params.detached_thresh_bytes)
        .map(|p| (p.size_bytes, p.measured_secs))
        .collect();
    if eager.is_empty() {
        return Ok(estimate_secs);
    }
    let cfg = params.cfg_items();
    let sizes: Vec<u64> = eager.iter().map(|p| p.0).collect();
    let mut skew = estimate_secs.max(0.0);
    for _ in 0..LATE_WAIT_ROUNDS {
        let replayed = simulate_exchange_after_skew(
            platform,
            hosts,
            sharing.flows,
            &cfg,
            &sizes,
            skew,
            scratch,
        )?;
        let diffs: Vec<f64> = eager
            .iter()
            .zip(&replayed)
            .map(|(&(_, measured), &(_, sim))| measured - sim)
            .collect();
        let next = median(&diffs).map_or(skew, |d| (skew + d).max(0.0));
        let moved = (next - skew).abs();
        skew = next;
        if moved <= LATE_WAIT_TOLERANCE_SECS {
            break;
        }
    }
    Ok(skew)
}

/// `timeless/rendezvous-late-wait` for a folded calibration (module docs), one round of its
/// fit: per segment of `fit`, the segment's wait in `current` (0 without an entry) plus the
/// median, over the segment's exchange sizes of at least `detached_thresh_bytes` (the
/// rendezvous sends the wait applies to), of the measured minus the replayed exchange, at least
/// 0; `exchange` holds `(S, measured, replayed with current)` for the sizes to fit on (the
/// pipeline passes those outside the bandwidth regime, where a fixed cost shows). A segment
/// without such sizes keeps its wait. Thresholds as [`exchange_overhead_entries`]: 0 for the
/// first segment, its first size − 1 after. Empty when every wait is 0 (nothing to write).
/// The pipeline repeats replay and round until no wait moves: the wait overlaps what the late
/// rank's partner pays anyway (its `ois`), so the replay grows by less than the wait when it
/// is short.
///
/// [`exchange_overhead_entries`]: super::exchange_overhead_entries
pub fn rendezvous_late_wait_entries(
    exchange: &[(u64, f64, f64)],
    fit: &PiecewiseFit,
    detached_thresh_bytes: u64,
    current: &[OverheadEntry],
) -> Vec<OverheadEntry> {
    let entries: Vec<OverheadEntry> = fit
        .segments
        .iter()
        .enumerate()
        .map(|(k, seg)| {
            let diffs: Vec<f64> = exchange
                .iter()
                .filter(|&&(s, _, _)| s >= detached_thresh_bytes && fit.segment_index(s) == k)
                .map(|&(_, measured, replayed)| measured - replayed)
                .collect();
            let now = current.get(k).map_or(0.0, |e| e.intercept_secs);
            OverheadEntry {
                threshold_bytes: if k == 0 {
                    0
                } else {
                    seg.first_size_bytes.saturating_sub(1)
                },
                intercept_secs: median(&diffs).map_or(now, |d| (now + d).max(0.0)),
                slope_secs_per_byte: 0.0,
            }
        })
        .collect();
    if entries.iter().all(|e| e.intercept_secs == 0.0) {
        Vec::new()
    } else {
        entries
    }
}

/// At most this many fit-and-replay rounds in [`fit_rendezvous_late_wait`].
pub const LATE_WAIT_ROUNDS: usize = 8;

/// A round of [`fit_rendezvous_late_wait`] that moves no segment's wait by more than this many
/// seconds is its last.
pub const LATE_WAIT_TOLERANCE_SECS: f64 = 1e-10;

/// Fits `timeless/rendezvous-late-wait` on a folded exchange by replaying it as the benchmark
/// times it ([`simulate_exchange_after_skew`] with `skew_secs`, the longest pair's skew,
/// [`exchange_skew_secs`]) on `platform` with `params`: replay every size of `sharing.points`,
/// one round of [`rendezvous_late_wait_entries`] on those outside the bandwidth regime (a wait
/// is a fixed cost, seen where fixed costs dominate), into `params.rendezvous_late_wait`, and
/// again, until no segment's wait moves by more than [`LATE_WAIT_TOLERANCE_SECS`] (at most
/// [`LATE_WAIT_ROUNDS`] rounds). Returns the exchange times replayed with the final
/// `params`, in the order of `sharing.points`.
///
/// # Errors
/// Those of [`simulate_exchange_after_skew`].
pub fn fit_rendezvous_late_wait(
    platform: &Platform,
    hosts: [HostId; 2],
    sharing: &FlowSharing,
    fit: &PiecewiseFit,
    params: &mut SimgridParams,
    skew_secs: f64,
    scratch: &Path,
) -> Result<Vec<f64>, CalibrateError> {
    let replay_all = |params: &SimgridParams| -> Result<Vec<f64>, CalibrateError> {
        let cfg = params.cfg_items();
        let sizes: Vec<u64> = sharing.points.iter().map(|p| p.size_bytes).collect();
        let r = simulate_exchange_after_skew(
            platform,
            hosts,
            sharing.flows,
            &cfg,
            &sizes,
            skew_secs,
            scratch,
        )?;
        Ok(r.into_iter().map(|(_, t)| t).collect())
    };
    let mut simulated = replay_all(params)?;
    for _ in 0..LATE_WAIT_ROUNDS {
        let rows: Vec<(u64, f64, f64)> = sharing
            .points
            .iter()
            .zip(&simulated)
            .filter(|(p, _)| !p.fitted)
            .map(|(p, &sim)| (p.size_bytes, p.measured_secs, sim))
            .collect();
        let before = params.rendezvous_late_wait.clone();
        params.rendezvous_late_wait =
            rendezvous_late_wait_entries(&rows, fit, params.detached_thresh_bytes, &before);
        let at = |e: &[OverheadEntry], k: usize| e.get(k).map_or(0.0, |e| e.intercept_secs);
        let moved = (0..fit.segments.len()).any(|k| {
            (at(&params.rendezvous_late_wait, k) - at(&before, k)).abs() > LATE_WAIT_TOLERANCE_SECS
        });
        if !moved {
            break;
        }
        simulated = replay_all(params)?;
    }
    Ok(simulated)
}
