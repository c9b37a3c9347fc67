//! Network calibration end to end: ping-pong and per-call measurements → one-way network times
//! → piecewise fit → SimGrid parameters (seed 003 §5; reference §10).
//!
//! The calibration is split by what each part fits, each submodule documenting its model:
//! * [`pingpong`]: the lone flow, from the blocking ping-pong and the per-call costs: one-way
//!   network times, the eager/rendezvous threshold, the segments of the fit and the `os`/`or`
//!   lines ([`calibrate_network`]);
//! * [`exchange`]: concurrent flows, from the bidirectional exchange: how they share the route
//!   ([`fit_flow_sharing`]) and `smpi/ois`, what an exchange costs beyond its flows;
//! * [`folded`]: folded runs, the busy pairs together: the wait for a core, the exchange
//!   replayed as the benchmark times it ([`calibrate_folded_network`]);
//! * [`folded_fit`]: the folded fit on both series: the sharing, and per folded segment an
//!   extra wait and a bandwidth factor, with breaks of the fold's own ([`fit_folded_sharing`]).
//!
//! This module holds what they produce ([`NetworkOptions`] in, [`NetworkCalibration`] out) and
//! turns a fit into the route and its factors. The dependencies go one way: `folded` uses
//! `pingpong` and `folded_fit`, `folded_fit` and `pingpong` use `exchange`, and all of them
//! this module's types.

pub mod exchange;
pub mod folded;
pub mod folded_fit;
pub mod pingpong;

#[cfg(test)]
mod tests;

use crate::fit::PiecewiseFit;
use crate::simgrid::{
    network_factors, LinkSpec, SimgridParams, DEFAULT_TCP_GAMMA_BYTES, FATPIPE_LINK_WEIGHT,
    SHARED_LINK_WEIGHT,
};
use crate::CalibrateError;

pub use exchange::{
    exchange_overhead_entries, fit_flow_sharing, ExchangePoint, FlowSharing,
    BANDWIDTH_REGIME_SHARE, NEGLIGIBLE_OVERHEAD_SECS,
};
pub use folded::{
    added_wait_secs, calibrate_folded_network, exchange_skew_secs, fit_exchange_skew,
    fit_rendezvous_late_wait, rendezvous_late_wait_entries, LATE_WAIT_ROUNDS,
    LATE_WAIT_TOLERANCE_SECS,
};
pub use folded_fit::{fit_folded_sharing, FoldedSharing, MIN_BREAK_GAIN, RATIO_GRID_STEPS};
pub use pingpong::{
    calibrate_network, cold_call_secs, detect_detached_thresh, DEFAULT_DETACHED_THRESH_BYTES,
};

/// Options of [`calibrate_network`].
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkOptions {
    /// Number of segments the fit places where the data bends (3 in seed 003 §5); the
    /// eager/rendezvous switch, when inside the measured sizes, adds one ([`pingpong`] module
    /// docs, "Segments").
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
    /// Fit how concurrent flows share the route from the
    /// [`Op::Exchange`](crate::measurement::Op::Exchange) measurements, when present (true);
    /// false ignores them and writes one SHARED link (concurrent flows split one bandwidth).
    pub flow_sharing: bool,
    /// A per-message cost added to the intercept of every segment of the fit, seconds (0 by
    /// default): the wait for a core of a folded run, [`added_wait_secs`]; it goes into
    /// `smpi/lat-factor`.
    pub added_latency_secs: f64,
    /// Breaks a folded calibration may add to the unfolded ones where the folded data bend
    /// ([`folded_fit`] module docs, "Breaks"; 1 by default). Unused unfolded.
    pub folded_breaks: usize,
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
            folded_breaks: 1,
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
