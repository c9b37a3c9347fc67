//! Ping-pong replayed on our own simulator: the model side of "predicted vs measured".
//!
//! For each size S, rank 0 runs `send 1 0 S; recv 1 0 S` and rank 1 `recv 0 0 S; send 0 0 S`
//! (the TI traces of reference §11's ping-pong), and the simulated time is the round trip.

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
        let trace = format!(
            "0 init\n1 init\n0 send 1 0 {s}\n0 recv 1 0 {s}\n1 recv 0 0 {s}\n1 send 0 0 {s}\n0 finalize\n1 finalize\n"
        );
        std::fs::write(&path, trace).map_err(|source| CalibrateError::Io {
            path: path.clone(),
            source,
        })?;
        let source = TraceSource::Shared(path.clone());
        let sim = Simulation::new(platform, &hosts, &source, config.clone()).map_err(|e| {
            CalibrateError::Invalid {
                what: format!("ping-pong replay: {e}"),
            }
        })?;
        let report = sim
            .run(&mut NoObserver)
            .map_err(|e| CalibrateError::Invalid {
                what: format!("ping-pong replay at {s} B: {e}"),
            })?;
        out.push((s, report.simulated_time_secs));
    }
    Ok(out)
}
