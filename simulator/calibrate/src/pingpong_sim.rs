//! Ping-pong and exchange replayed on our own simulator: the model side of "predicted vs
//! measured".
//!
//! Ping-pong: for each size S, rank 0 runs `send 1 0 S; recv 1 0 S` and rank 1
//! `recv 0 0 S; send 0 0 S` (the TI traces of reference §11's ping-pong), and the simulated time
//! is the round trip; with F ranks ([`simulate_pingpong_pairs`], the busy pairs of a folded
//! calibration) every pair (2k, 2k + 1) runs it at once, F/2 concurrent flows each way.
//! Exchange (the benchmark's `exchange`): F ranks in pairs (2k, 2k + 1), each running
//! `irecv peer 0 S; isend peer 0 S; waitall` (F flows at once), and the simulated time is one
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
    simulate(platform, &hosts, cfg, sizes, scratch, |s| {
        format!(
            "0 init\n1 init\n0 send 1 0 {s}\n0 recv 1 0 {s}\n1 recv 0 0 {s}\n1 send 0 0 {s}\n0 finalize\n1 finalize\n"
        )
    })
}

/// Simulated round-trip times `(S, RTT(S) seconds)` of `ranks` ranks (an even number >= 2)
/// running the ping-pong in pairs (2k, 2k + 1) at once, the even ranks on `hosts[0]` and the
/// odd ones on `hosts[1]` (module docs): the pairs start together and are identical, so every
/// pair's round trip is the simulated time. `ranks = 2` is [`simulate_pingpong`].
///
/// # Errors
/// As [`simulate_pingpong`], and [`CalibrateError::Invalid`] for an odd or zero `ranks`.
pub fn simulate_pingpong_pairs(
    platform: &Platform,
    hosts: [HostId; 2],
    ranks: u64,
    cfg: &[(String, String)],
    sizes: &[u64],
    scratch: &Path,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    let placement = pair_placement(hosts, ranks)?;
    simulate(platform, &placement, cfg, sizes, scratch, |s| {
        pingpong_pairs_trace(s, ranks)
    })
}

/// The shared TI trace of `ranks / 2` concurrent ping-pongs of `size_bytes` bytes (module
/// docs); for 2 ranks, the trace of [`simulate_pingpong`].
pub fn pingpong_pairs_trace(size_bytes: u64, ranks: u64) -> String {
    let s = size_bytes;
    pairs_trace(ranks, |r, p| {
        if r % 2 == 0 {
            format!("{r} send {p} 0 {s}\n{r} recv {p} 0 {s}\n")
        } else {
            format!("{r} recv {p} 0 {s}\n{r} send {p} 0 {s}\n")
        }
    })
}

/// A shared TI trace of `ranks` ranks: every rank's `init`, then `body(rank, partner)` for each
/// rank in order (partner = rank ^ 1), then every rank's `finalize`.
fn pairs_trace(ranks: u64, body: impl Fn(u64, u64) -> String) -> String {
    let mut t = String::new();
    for r in 0..ranks {
        t.push_str(&format!("{r} init\n"));
    }
    for r in 0..ranks {
        t.push_str(&body(r, r ^ 1));
    }
    for r in 0..ranks {
        t.push_str(&format!("{r} finalize\n"));
    }
    t
}

fn pair_placement(hosts: [HostId; 2], ranks: u64) -> Result<Vec<HostId>, CalibrateError> {
    if ranks < 2 || ranks % 2 == 1 {
        return Err(CalibrateError::Invalid {
            what: format!("pairs of ranks need an even number of ranks >= 2, not {ranks}"),
        });
    }
    Ok((0..ranks).map(|r| hosts[(r % 2) as usize]).collect())
}

/// Simulated times `(S, seconds)` of one exchange of S bytes among `ranks` ranks (an even
/// number >= 2), the even ranks on `hosts[0]` and the odd ones on `hosts[1]` (module docs);
/// arguments and errors as [`simulate_pingpong`].
///
/// # Errors
/// As [`simulate_pingpong`], and [`CalibrateError::Invalid`] for an odd or zero `ranks`.
pub fn simulate_exchange(
    platform: &Platform,
    hosts: [HostId; 2],
    ranks: u64,
    cfg: &[(String, String)],
    sizes: &[u64],
    scratch: &Path,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    let placement = pair_placement(hosts, ranks)?;
    simulate(platform, &placement, cfg, sizes, scratch, |s| {
        exchange_trace(s, ranks)
    })
}

/// The shared TI trace of one exchange of `size_bytes` bytes among `ranks` ranks (module docs).
pub fn exchange_trace(size_bytes: u64, ranks: u64) -> String {
    let s = size_bytes;
    pairs_trace(ranks, |r, p| {
        format!("{r} irecv {p} 0 {s}\n{r} isend {p} 0 {s}\n{r} waitall\n")
    })
}

/// Simulated times `(S, seconds)` of one exchange as the benchmark times it: `ranks` ranks
/// (placed as [`simulate_exchange`]) leave a `barrier`, then exchange; each rank's own time
/// runs from its barrier exit to its last completion, and the exchange lasts the longest of
/// them. Each rank's barrier exit is its finish date in a replay of the barrier alone (the
/// replay is deterministic and the barrier comes first). With 2 ranks both leave SimGrid's
/// barrier together and this is [`simulate_exchange`]; with a folded run's wait per message,
/// ranks leave it a wait apart, and the first out waits for its partner.
///
/// # Errors
/// As [`simulate_exchange`].
pub fn simulate_exchange_after_barrier(
    platform: &Platform,
    hosts: [HostId; 2],
    ranks: u64,
    cfg: &[(String, String)],
    sizes: &[u64],
    scratch: &Path,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    let placement = pair_placement(hosts, ranks)?;
    let exits = replay(
        platform,
        &placement,
        cfg,
        scratch,
        0,
        &barrier_trace(ranks, None),
    )?;
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let r = replay(
            platform,
            &placement,
            cfg,
            scratch,
            s,
            &barrier_trace(ranks, Some(s)),
        )?;
        let longest = r
            .ranks
            .iter()
            .zip(&exits.ranks)
            .map(|(e, b)| e.finish_secs - b.finish_secs)
            .fold(0.0, f64::max);
        out.push((s, longest));
    }
    Ok(out)
}

/// Simulated times `(S, seconds)` of one exchange of a folded benchmark with its barrier-exit
/// skew replayed as measured (`crate::network::exchange_skew_secs`): `ranks` ranks (placed as
/// [`simulate_exchange`]) exchange, rank 1 starting `skew_secs` after the others (a `sleep`,
/// the partner of rank 0 leaving the barrier later); each rank's own time runs from its start
/// to its last completion, and the exchange lasts the longest of them, as the benchmark times
/// it. With `skew_secs = 0` this is [`simulate_exchange`]. The other pairs start together
/// (only the slowest pair matters for the longest time; at bandwidth-bound sizes another pair,
/// which shares the route with more flows at once, can be the longest).
///
/// # Errors
/// As [`simulate_exchange`].
pub fn simulate_exchange_after_skew(
    platform: &Platform,
    hosts: [HostId; 2],
    ranks: u64,
    cfg: &[(String, String)],
    sizes: &[u64],
    skew_secs: f64,
    scratch: &Path,
) -> Result<Vec<(u64, f64)>, CalibrateError> {
    let placement = pair_placement(hosts, ranks)?;
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let trace = skewed_exchange_trace(s, ranks, skew_secs);
        let r = replay(platform, &placement, cfg, scratch, s, &trace)?;
        let longest = r
            .ranks
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let start = if i == 1 { skew_secs } else { 0.0 };
                e.finish_secs - e.init_secs - start
            })
            .fold(0.0, f64::max);
        out.push((s, longest));
    }
    Ok(out)
}

/// The TI trace of [`simulate_exchange_after_skew`]: [`exchange_trace`] with rank 1 sleeping
/// `skew_secs` first (no sleep when 0).
pub fn skewed_exchange_trace(size_bytes: u64, ranks: u64, skew_secs: f64) -> String {
    let s = size_bytes;
    pairs_trace(ranks, |r, p| {
        let sleep = if r == 1 && skew_secs > 0.0 {
            format!("{r} sleep {skew_secs:e}\n")
        } else {
            String::new()
        };
        format!("{sleep}{r} irecv {p} 0 {s}\n{r} isend {p} 0 {s}\n{r} waitall\n")
    })
}

/// `ranks` ranks in a `barrier`, then (with a size) the exchange of [`exchange_trace`].
fn barrier_trace(ranks: u64, size_bytes: Option<u64>) -> String {
    pairs_trace(ranks, |r, p| match size_bytes {
        Some(s) => format!("{r} barrier\n{r} irecv {p} 0 {s}\n{r} isend {p} 0 {s}\n{r} waitall\n"),
        None => format!("{r} barrier\n"),
    })
}

fn replay(
    platform: &Platform,
    hosts: &[HostId],
    cfg: &[(String, String)],
    scratch: &Path,
    size_bytes: u64,
    trace: &str,
) -> Result<timeless_replay::Report, CalibrateError> {
    let config = config_of(cfg)?;
    let path = scratch.join("exchange.txt");
    std::fs::write(&path, trace).map_err(|source| CalibrateError::Io {
        path: path.clone(),
        source,
    })?;
    let fail = |e: &dyn std::fmt::Display| CalibrateError::Invalid {
        what: format!("replay at {size_bytes} B: {e}"),
    };
    let source = TraceSource::Shared(path.clone());
    Simulation::new(platform, hosts, &source, config)
        .map_err(|e| fail(&e))?
        .run(&mut NoObserver)
        .map_err(|e| fail(&e))
}

fn config_of(cfg: &[(String, String)]) -> Result<ReplayConfig, CalibrateError> {
    let mut config = ReplayConfig::default();
    for (k, v) in cfg {
        config
            .set(&format!("{k}:{v}"))
            .map_err(|e| CalibrateError::Invalid {
                what: format!("configuration {k}: {e}"),
            })?;
    }
    Ok(config)
}

fn simulate(
    platform: &Platform,
    hosts: &[HostId],
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
        let sim = Simulation::new(platform, hosts, &source, config.clone()).map_err(|e| {
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
