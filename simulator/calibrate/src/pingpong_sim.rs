//! Ping-pong and exchange replayed on our own simulator: the model side of "predicted vs
//! measured".
//!
//! Ping-pong: for each size S, rank 0 runs `send 1 0 S; recv 1 0 S` and rank 1
//! `recv 0 0 S; send 0 0 S` (the TI traces of reference §11's ping-pong), and the simulated time
//! is the round trip. Exchange (the benchmark's `exchange`, two flows in opposite directions):
//! each rank runs `irecv peer 0 S; isend peer 0 S; waitall`, and the simulated time is one
//! exchange.

use std::path::Path;

use timeless_platform::{HostId, Platform};
use timeless_replay::{NoObserver, ReplayConfig, Simulation};
use timeless_trace::TraceSource;

use crate::CalibrateError;

/// Simulated round-trip times `(S, RTT(S) seconds)` of a blocking ping-pong between ranks on
/// `hosts`, with the `KEY:VALUE` settings `cfg` (SimGrid keys, e.g. from
/// [`crate::simgrid::SimgridParams::cfg_items`]). `scratch` is a directory for the trace file.
///
/// # Errors
/// [`CalibrateError::Invalid`] for a rejected setting or a failed replay;
/// [`CalibrateError::Io`] when the trace cannot be written.
pub fn simulate_pingpong(
    platform: &Platform,
    hosts: [HostId; 2],
    cfg: &[(String, String)],
    sizes: &[u64],
    scratch: &Path,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    simulate(platform, hosts, cfg, sizes, scratch, |s| {
        format!(
            "0 init\n1 init\n0 send 1 0 {s}\n0 recv 1 0 {s}\n1 recv 0 0 {s}\n1 send 0 0 {s}\n0 finalize\n1 finalize\n"
        )
    })
}

/// Simulated times `(S, seconds)` of one bidirectional exchange of S bytes between ranks on
/// `hosts` (module docs); arguments and errors as [`simulate_pingpong`].
///
/// # Errors
/// As [`simulate_pingpong`].
pub fn simulate_exchange(
    platform: &Platform,
    hosts: [HostId; 2],
    cfg: &[(String, String)],
    sizes: &[u64],
    scratch: &Path,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    simulate(platform, hosts, cfg, sizes, scratch, exchange_trace)
}

/// The shared TI trace of one exchange of `size_bytes` bytes (module docs).
pub fn exchange_trace(size_bytes: u64) -> String {
    let s = size_bytes;
    format!(
        "0 init\n1 init\n0 irecv 1 0 {s}\n0 isend 1 0 {s}\n0 waitall\n1 irecv 0 0 {s}\n1 isend 0 0 {s}\n1 waitall\n0 finalize\n1 finalize\n"
    )
}

fn simulate(
    platform: &Platform,
    hosts: [HostId; 2],
    cfg: &[(String, String)],
    sizes: &[u64],
    scratch: &Path,
    trace_of: impl Fn(u64) -> String,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    let mut config = ReplayConfig::default();
    for (k, v) in cfg {
        config
            .set(&format!("{k}:{v}"))
            .map_err(|e| CalibrateError::Invalid {
                what: format!("configuration {k}: {e}"),
            })?;
    }
    let path = scratch.join("pingpong.txt");
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let trace = trace_of(s);
        std::fs::write(&path, trace).map_err(|source| CalibrateError::Io {
            path: path.clone(),
            source,
        })?;
        let source = TraceSource::Shared(path.clone());
        let sim = Simulation::new(platform, &hosts, &source, config.clone()).map_err(|e| {
            CalibrateError::Invalid {
                what: format!("replay at {s} B: {e}"),
            }
        })?;
        let report = sim
            .run(&mut NoObserver)
            .map_err(|e| CalibrateError::Invalid {
                what: format!("replay at {s} B: {e}"),
            })?;
        out.push((s, report.simulated_time_secs));
    }
    Ok(out)
}
