//! What a network calibration writes: per size, the measured, fitted, modelled and simulated
//! times (`fit.csv`), the summary (`summary.txt`, what the binary prints) and the files of the
//! calibration directory.

use std::path::Path;

use timeless_kernel::PiecewiseFactor;
use timeless_launch::PathError;

use super::PipelineError;
use crate::network::{ExchangePoint, NetworkCalibration};

/// One row of `fit.csv`: a message size, measured, fitted and simulated.
#[derive(Debug, Clone)]
pub struct FitRow {
    /// Message size, bytes.
    pub size_bytes: u64,
    /// Measured round trip (median), seconds.
    pub measured_secs: f64,
    /// Fastest measured round trip, seconds.
    pub min_secs: f64,
    /// Slowest measured round trip, seconds.
    pub max_secs: f64,
    /// One-way network time derived from the measurements, seconds.
    pub one_way_secs: f64,
    /// The fit's one-way time, seconds.
    pub fitted_one_way_secs: f64,
    /// The model's round trip (fit plus per-call overheads), seconds.
    pub model_secs: f64,
    /// The round trip replayed on the written platform, seconds.
    pub simulated_secs: f64,
    /// The exchange at this size, when measured.
    pub exchange: Option<ExchangeRow>,
}

/// The exchange at one size (`fit.csv`'s exchange columns).
#[derive(Debug, Clone)]
pub struct ExchangeRow {
    /// The measured point.
    pub point: ExchangePoint,
    /// Concurrent flows.
    pub flows: u64,
    /// The model's time, seconds.
    pub model_secs: f64,
    /// The exchange replayed on the written platform, seconds.
    pub simulated_secs: f64,
}

pub(super) fn overhead(params: &[(String, String)], key: &str, size: u64) -> f64 {
    params
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| PiecewiseFactor::parse(v, 1).ok())
        .map_or(0.0, |f| f.overhead_secs(size as f64))
}

/// A network calibration, ready to write.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CalibrationFiles {
    /// Per size: measured, fitted, simulated.
    pub rows: Vec<FitRow>,
    /// The summary (`summary.txt`, what the binary prints).
    pub summary: String,
    /// The files to write, by name: `pingpong.csv`, `platform.xml`, `smpi.cfg`, `hostfile`,
    /// `fit.csv`, `summary.txt`.
    pub files: Vec<(&'static str, String)>,
}

impl CalibrationFiles {
    /// Writes [`CalibrationFiles::files`] into `out` (created).
    ///
    /// # Errors
    /// [`PipelineError::File`] naming the directory or file that cannot be created or written.
    pub fn write(&self, out: &Path) -> Result<(), PipelineError> {
        std::fs::create_dir_all(out).map_err(PathError::at("create", out))?;
        for (name, text) in &self.files {
            let path = out.join(name);
            std::fs::write(&path, text).map_err(PathError::at("write", &path))?;
        }
        Ok(())
    }
}

pub(super) fn fit_csv(rows: &[FitRow]) -> String {
    let mut s = String::from(
        "size_bytes,measured_rtt_secs,min_rtt_secs,max_rtt_secs,one_way_network_secs,fitted_one_way_secs,model_rtt_secs,simulated_rtt_secs,error_pct,measured_exchange_secs,exchange_transfer_secs,exchange_pair_ratio,exchange_in_fit,model_exchange_secs,simulated_exchange_secs,exchange_error_pct\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:.3},",
            r.size_bytes,
            r.measured_secs,
            r.min_secs,
            r.max_secs,
            r.one_way_secs,
            r.fitted_one_way_secs,
            r.model_secs,
            r.simulated_secs,
            100.0 * (r.simulated_secs - r.measured_secs) / r.measured_secs
        ));
        match &r.exchange {
            Some(e) => s.push_str(&format!(
                "{:e},{:e},{:.4},{},{:e},{:e},{:.3}\n",
                e.point.measured_secs,
                e.point.transfer_secs,
                e.point.ratio(e.flows),
                e.point.fitted,
                e.model_secs,
                e.simulated_secs,
                100.0 * (e.simulated_secs - e.point.measured_secs) / e.point.measured_secs
            )),
            None => s.push_str(",,,,,,\n"),
        }
    }
    s
}

pub(super) fn summary(
    cal: &NetworkCalibration,
    rows: &[FitRow],
    source: &str,
    hosts: &[String],
    speed: f64,
    cores: u32,
    pp_ranks: u64,
) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "measurements: {source}");
    let _ = writeln!(
        s,
        "sizes: {} ({} B .. {} B)",
        rows.len(),
        rows.first().map_or(0, |r| r.size_bytes),
        rows.last().map_or(0, |r| r.size_bytes)
    );
    let _ = writeln!(
        s,
        "hosts: {} (speed {speed:.4e} flop/s, {cores} cores)",
        hosts.join(", ")
    );
    let _ = writeln!(
        s,
        "eager/rendezvous switch: smpi/send-is-detached-thresh = {} B ({:?})",
        cal.params.detached_thresh_bytes, cal.threshold_source
    );
    if let Some(x) = cal.params.cold_call_secs {
        let _ = writeln!(
            s,
            "cold call: an allreduce after a burst that streamed through more than the caches costs {x:.4e} s more than a warm one (cold_allreduce rows): timeless/cold-call-secs"
        );
    }
    match (&cal.flow_sharing, cal.link.shared_bandwidth_bytes_per_sec()) {
        (Some(p), Some(shared)) => {
            let _ = writeln!(
                s,
                "link: latency {:e} s, bandwidth {:e} B/s per flow (FATPIPE), then a SHARED link of {:e} B/s: concurrent flows get together {:.4} times a lone flow's bandwidth",
                cal.link.latency_secs,
                cal.link.bandwidth_bytes_per_sec,
                shared,
                p.aggregate_ratio
            );
            let _ = writeln!(
                s,
                "concurrent flows: exchange of {} ranks at once at {} sizes, {} in the bandwidth regime fitted: ratio {:.4}{}",
                p.flows,
                p.points.len(),
                p.points.iter().filter(|q| q.fitted).count(),
                p.fitted_ratio,
                if p.fitted_ratio == p.aggregate_ratio {
                    String::new()
                } else {
                    format!(" (clamped to [1, {}]: {:.4})", p.flows, p.aggregate_ratio)
                }
            );
            if pp_ranks > 2 {
                let _ = writeln!(
                    s,
                    "  fitted together with the ping-pong of the {} busy pairs at once (both replayed that way)",
                    pp_ranks / 2
                );
            }
            let _ = writeln!(
                s,
                "exchange overhead: smpi/ois fitted on the (unfolded) exchange minus its flows, at least the MPI_Isend call: {}",
                cal.params
                    .ois
                    .iter()
                    .map(|e| format!(
                        "S > {} B: {:.4e} s + {:.4e} s/B",
                        e.threshold_bytes, e.intercept_secs, e.slope_secs_per_byte
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "link: latency {:e} s, bandwidth {:e} B/s, SHARED (lone-flow weight {}; effective {:e} B/s)",
                cal.link.latency_secs,
                cal.link.bandwidth_bytes_per_sec,
                cal.link.crosstraffic_weight,
                cal.link.effective_bandwidth_bytes_per_sec()
            );
        }
    }
    let _ = writeln!(
        s,
        "one-way network time T = a + b*(S + 16), {} segments (relative RMS {:.2}%):",
        cal.fit.segments.len(),
        100.0 * cal.fit.relative_rms
    );
    for ((seg, lat), bw) in cal
        .fit
        .segments
        .iter()
        .zip(&cal.params.lat_factor)
        .zip(&cal.params.bw_factor)
    {
        let _ = writeln!(
            s,
            "  S in [{}, {}] B ({} sizes): a = {:.4e} s, b = {:.4e} s/B ({:.4e} B/s); lat-factor {:.4}, bw-factor {:.4}",
            seg.first_size_bytes,
            seg.last_size_bytes,
            seg.points,
            seg.intercept_secs,
            seg.slope_secs_per_byte,
            if seg.slope_secs_per_byte > 0.0 { 1.0 / seg.slope_secs_per_byte } else { f64::INFINITY },
            lat.factor,
            bw.factor
        );
    }
    for (k, v) in cal.params.cfg_items() {
        let _ = writeln!(s, "  {k}:{v}");
    }
    let pingpong = rows.iter().map(|r| {
        (
            (r.simulated_secs - r.measured_secs).abs() / r.measured_secs,
            r.size_bytes,
        )
    });
    error_line(&mut s, "ping-pong", pingpong.collect());
    let exchange = rows.iter().filter_map(|r| {
        r.exchange.as_ref().map(|e| {
            (
                (e.simulated_secs - e.point.measured_secs).abs() / e.point.measured_secs,
                r.size_bytes,
            )
        })
    });
    error_line(&mut s, "exchange", exchange.collect());
    s
}

/// Appends `simulated vs measured <what>: median |error| …, max |error| … at <S> B` for the
/// relative errors `errs` (error, size in bytes); nothing when there are none.
fn error_line(s: &mut String, what: &str, mut errs: Vec<(f64, u64)>) {
    use std::fmt::Write;
    errs.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(max, at)) = errs.last() {
        let med = errs[errs.len() / 2].0;
        let _ = writeln!(
            s,
            "simulated vs measured {what}: median |error| {:.2}%, max |error| {:.2}% at {at} B",
            100.0 * med,
            100.0 * max
        );
    }
}
