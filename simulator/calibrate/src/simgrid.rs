//! Conversion of fitted lines into SimGrid 3.32's SMPI parameters, and the `--cfg` file.
//!
//! SimGrid's SMPI network model gives an isolated message of S bytes (P = S + 16 on the wire) the
//! time (reference §6.2)
//!
//! `T(S) = lat_factor(P) · L + P / (bw_factor(P) · B_eff)`, with
//! `B_eff = min(B / w, B, TCP_gamma / (2L))`,
//!
//! where L and B are the route's latency and bandwidth as declared in the platform, and w the
//! summed cross-traffic weight on the link (1.05 for one SHARED link crossed both ways, 1 for a
//! FATPIPE or split-duplex link). A fitted segment `T = a + b·P` is therefore reproduced exactly
//! by `lat_factor = a / L` and `bw_factor = 1 / (b · B_eff)` (SimGrid's platform-calibration
//! `Analysis.Rmd`: "lat-factor = DelayIntercept / expected_latency, bw-factor =
//! 1/(DelaySize × expected_bandwidth)", reference §10).
//!
//! Thresholds: SimGrid picks the entry with the largest threshold strictly below P (§6.1), so a
//! segment whose first measured size is s starts at threshold `s + 15` (P > s + 15 ⇔ S ≥ s).
//! The overheads `smpi/os`, `smpi/or`, `smpi/ois` are looked up with the raw size S, also
//! strictly (§4.3), so their segments start at `s − 1`.

use crate::fit::PiecewiseFit;
use crate::CalibrateError;

/// SimGrid's `network/TCP-gamma` default in bytes (reference §9).
pub const DEFAULT_TCP_GAMMA_BYTES: f64 = 4_194_304.0;

/// Cross-traffic weight of a lone flow on one SHARED link crossed both ways (reference §6.2).
pub const SHARED_LINK_WEIGHT: f64 = 1.05;

/// SimGrid's envelope: every message moves S + 16 bytes (reference §12.1).
pub const ENVELOPE_BYTES: f64 = 16.0;

/// Largest bandwidth factor written: a segment whose time does not grow with size (slope 0)
/// gets this instead of infinity.
pub const MAX_BW_FACTOR: f64 = 1e3;

/// Cross-traffic weight of a lone flow on a FATPIPE link (or a split-duplex half): the route
/// and reverse-route weights combine by max there (reference §6.2).
pub const FATPIPE_LINK_WEIGHT: f64 = 1.0;

/// The route a calibrated message travels in the written platform.
///
/// Without `flow_aggregate_ratio` the route is one SHARED link of bandwidth B: concurrent flows
/// share B (k flows get B/(1.05·k) each). With it, m = `flow_aggregate_ratio`, the route is a
/// FATPIPE link of bandwidth B (each flow alone gets up to B) followed by a SHARED link of
/// bandwidth 1.05·m·B: a lone flow gets B (m >= 1), k concurrent flows min(B, m·B/k) each
/// (reference §6.3, §6.4; [`crate::platform_xml`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpec {
    /// Route latency L in seconds (sum over the route's links).
    pub latency_secs: f64,
    /// Route bandwidth B in bytes per second (the slowest link).
    pub bandwidth_bytes_per_sec: f64,
    /// Summed LMM weight w of a lone flow on the bottleneck link ([`SHARED_LINK_WEIGHT`] for
    /// the single SHARED link, [`FATPIPE_LINK_WEIGHT`] with `flow_aggregate_ratio`).
    pub crosstraffic_weight: f64,
    /// `network/TCP-gamma` in bytes.
    pub tcp_gamma_bytes: f64,
    /// m >= 1: the aggregate bandwidth of concurrent flows over a lone flow's, fitted from an
    /// exchange ([`crate::network::fit_flow_sharing`]); `None`: one SHARED link (m = 1).
    pub flow_aggregate_ratio: Option<f64>,
}

impl LinkSpec {
    /// Bandwidth of the SHARED link that bounds concurrent flows when `flow_aggregate_ratio`
    /// is m: `1.05 · m · B` bytes/s (k flows, each weighing 1.05 on it, get m·B/k each; a lone
    /// flow is bounded by the FATPIPE link's B since m >= 1). `None` without a ratio.
    pub fn shared_bandwidth_bytes_per_sec(&self) -> Option<f64> {
        self.flow_aggregate_ratio
            .map(|m| SHARED_LINK_WEIGHT * m * self.bandwidth_bytes_per_sec)
    }

    /// `B_eff = min(B / w, B, TCP_gamma / (2L))` in bytes per second (reference §6.2).
    pub fn effective_bandwidth_bytes_per_sec(&self) -> f64 {
        let b = self.bandwidth_bytes_per_sec;
        let mut e = (b / self.crosstraffic_weight).min(b);
        if self.latency_secs > 0.0 {
            e = e.min(self.tcp_gamma_bytes / (2.0 * self.latency_secs));
        }
        e
    }
}

/// One `threshold:factor` entry of `smpi/lat-factor` or `smpi/bw-factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactorEntry {
    /// Applies to network sizes P strictly above this, bytes.
    pub threshold_bytes: u64,
    /// Dimensionless factor.
    pub factor: f64,
}

/// One `threshold:intercept:slope` entry of `smpi/os`, `smpi/or` or `smpi/ois`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverheadEntry {
    /// Applies to raw sizes S strictly above this, bytes (the lowest entry also below it).
    pub threshold_bytes: u64,
    /// Seconds.
    pub intercept_secs: f64,
    /// Seconds per byte.
    pub slope_secs_per_byte: f64,
}

/// The cost in seconds of `entries` (`smpi/os`, `smpi/or` or `smpi/ois`) for a message of
/// `size_bytes` raw bytes: the entry with the largest threshold strictly below the size, else
/// the lowest entry (reference §4.3); 0 without entries.
pub fn overhead_at(entries: &[OverheadEntry], size_bytes: u64) -> f64 {
    let pick = entries
        .iter()
        .filter(|e| e.threshold_bytes < size_bytes)
        .max_by_key(|e| e.threshold_bytes)
        .or_else(|| entries.iter().min_by_key(|e| e.threshold_bytes));
    pick.map_or(0.0, |e| {
        e.intercept_secs + e.slope_secs_per_byte * size_bytes as f64
    })
}

/// The SMPI configuration that reproduces a calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct SimgridParams {
    /// `smpi/lat-factor`, in increasing threshold order.
    pub lat_factor: Vec<FactorEntry>,
    /// `smpi/bw-factor`, in increasing threshold order.
    pub bw_factor: Vec<FactorEntry>,
    /// `smpi/os` (cost of a blocking detached send).
    pub os: Vec<OverheadEntry>,
    /// `smpi/or` (cost of receiving a detached message).
    pub or: Vec<OverheadEntry>,
    /// `smpi/ois` (cost of an isend).
    pub ois: Vec<OverheadEntry>,
    /// `smpi/send-is-detached-thresh` in bytes: sends of fewer bytes are eager.
    pub detached_thresh_bytes: u64,
    /// `timeless/rendezvous-late-wait` (a timeless key, not SimGrid's): what a rendezvous send
    /// whose receiver comes late waits beyond its transfer, per segment
    /// ([`crate::network::rendezvous_late_wait_entries`]). Empty (not written) but for a
    /// folded calibration.
    pub rendezvous_late_wait: Vec<OverheadEntry>,
    /// `timeless/cold-call-secs` (a timeless key): what a collective right after a long burst
    /// costs beyond the warm one, seconds ([`crate::network::cold_call_secs`]); `None` (not
    /// written) without `cold_allreduce` measurements.
    pub cold_call_secs: Option<f64>,
}

/// Factor thresholds for the segments of `fit`: 0 for the first, `first_size + 15` after.
pub fn factor_thresholds(fit: &PiecewiseFit) -> Vec<u64> {
    fit.segments
        .iter()
        .enumerate()
        .map(|(k, s)| if k == 0 { 0 } else { s.first_size_bytes + 15 })
        .collect()
}

/// Converts a fit of one-way network times (offset 16 bytes, i.e. `T = a + b·P`) into
/// `smpi/lat-factor` and `smpi/bw-factor` entries for `link` (see the module docs).
///
/// # Errors
/// [`CalibrateError::Invalid`] when the fit was not made on P (offset != 16) or the link has a
/// latency or bandwidth that is not > 0.
pub fn network_factors(
    fit: &PiecewiseFit,
    link: &LinkSpec,
) -> Result<(Vec<FactorEntry>, Vec<FactorEntry>), CalibrateError> {
    if fit.offset_bytes != ENVELOPE_BYTES {
        return Err(CalibrateError::Invalid {
            what: format!(
                "network fit made with an offset of {} bytes; SimGrid's factors need P = S + 16",
                fit.offset_bytes
            ),
        });
    }
    if !(link.latency_secs > 0.0 && link.bandwidth_bytes_per_sec > 0.0) {
        return Err(CalibrateError::Invalid {
            what: format!(
                "link latency ({} s) and bandwidth ({} B/s) must be > 0",
                link.latency_secs, link.bandwidth_bytes_per_sec
            ),
        });
    }
    let b_eff = link.effective_bandwidth_bytes_per_sec();
    let thresholds = factor_thresholds(fit);
    let mut lat = Vec::new();
    let mut bw = Vec::new();
    for (s, &thr) in fit.segments.iter().zip(&thresholds) {
        lat.push(FactorEntry {
            threshold_bytes: thr,
            factor: s.intercept_secs / link.latency_secs,
        });
        let f = if s.slope_secs_per_byte > 0.0 {
            (1.0 / (s.slope_secs_per_byte * b_eff)).min(MAX_BW_FACTOR)
        } else {
            MAX_BW_FACTOR
        };
        bw.push(FactorEntry {
            threshold_bytes: thr,
            factor: f,
        });
    }
    Ok((lat, bw))
}

fn format_factors(entries: &[FactorEntry]) -> String {
    let mut v: Vec<String> = entries
        .iter()
        .map(|e| format!("{}:{}", e.threshold_bytes, e.factor))
        .collect();
    v.reverse(); // SimGrid's own defaults list the largest threshold first
    v.join(";")
}

fn format_overheads(entries: &[OverheadEntry]) -> String {
    if entries.is_empty() {
        return "0:0:0".to_string();
    }
    let mut v: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{}:{:e}:{:e}",
                e.threshold_bytes, e.intercept_secs, e.slope_secs_per_byte
            )
        })
        .collect();
    v.reverse();
    v.join(";")
}

impl SimgridParams {
    /// The `KEY:VALUE` settings, in a fixed order: `smpi/lat-factor`, `smpi/bw-factor`,
    /// `smpi/os`, `smpi/or`, `smpi/ois`, `smpi/send-is-detached-thresh`.
    pub fn cfg_items(&self) -> Vec<(String, String)> {
        let mut items = vec![
            ("smpi/lat-factor".into(), format_factors(&self.lat_factor)),
            ("smpi/bw-factor".into(), format_factors(&self.bw_factor)),
            ("smpi/os".into(), format_overheads(&self.os)),
            ("smpi/or".into(), format_overheads(&self.or)),
            ("smpi/ois".into(), format_overheads(&self.ois)),
            (
                "smpi/send-is-detached-thresh".into(),
                self.detached_thresh_bytes.to_string(),
            ),
        ];
        // A polling call (`MPI_Test`, `MPI_Iprobe`) costs what a receive's fixed overhead
        // costs, without SimGrid's growing back-off: a trace holds the loop's real number of
        // calls, so the back-off (100 µs doubled after each failure, meant to keep simulated
        // polling loops from spinning) would only add waiting (SNAP: 0.95 s of back-off in a
        // 6 s replay whose run spent 0.15 s in all its MPI calls; validation/external README).
        let poll_secs = self.or.first().map_or(0.0, |e| e.intercept_secs);
        items.push(("smpi/test".into(), format!("{poll_secs:e}")));
        items.push(("smpi/iprobe".into(), format!("{poll_secs:e}")));
        items.push(("smpi/grow-injected-times".into(), "no".into()));
        if !self.rendezvous_late_wait.is_empty() {
            items.push((
                "timeless/rendezvous-late-wait".into(),
                format_overheads(&self.rendezvous_late_wait),
            ));
        }
        if let Some(secs) = self.cold_call_secs {
            items.push(("timeless/cold-call-secs".into(), format!("{secs:e}")));
        }
        items
    }

    /// The configuration file `timeless simulate --cfg-file` reads: `#` comment lines (each line
    /// of `header` is prefixed with `# `), then one `KEY:VALUE` per line. For smpirun, pass each
    /// line as `--cfg=KEY:VALUE`, but for `timeless/` keys (SimGrid does not know them).
    pub fn cfg_file(&self, header: &str) -> String {
        let mut out = String::new();
        for l in header.lines() {
            out.push_str("# ");
            out.push_str(l);
            out.push('\n');
        }
        for (k, v) in self.cfg_items() {
            out.push_str(&format!("{k}:{v}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::{PiecewiseFit, Segment};

    /// Reference §11, P1 worked example at S = 1000: latf 1.9503, bwf 0.341987 over one SHARED
    /// link of 50 µs and 125 MB/s give a = 1.9503 × 50e-6 = 97.515e-6 s and
    /// b = 1/(0.341987 × 125e6/1.05) s/B. Converting that line back must give those factors.
    #[test]
    fn factors_invert_simgrids_formula() {
        let link = LinkSpec {
            latency_secs: 50e-6,
            bandwidth_bytes_per_sec: 125e6,
            crosstraffic_weight: SHARED_LINK_WEIGHT,
            tcp_gamma_bytes: DEFAULT_TCP_GAMMA_BYTES,
            flow_aggregate_ratio: None,
        };
        let b_eff = 125e6 / 1.05;
        assert!((link.effective_bandwidth_bytes_per_sec() - b_eff).abs() < 1e-6);
        let fit = PiecewiseFit {
            offset_bytes: 16.0,
            segments: vec![
                Segment {
                    first_size_bytes: 1,
                    last_size_bytes: 512,
                    intercept_secs: 2.0 * 50e-6,
                    slope_secs_per_byte: 1.0 / (0.5 * b_eff),
                    points: 3,
                },
                Segment {
                    first_size_bytes: 1000,
                    last_size_bytes: 8000,
                    intercept_secs: 97.515e-6,
                    slope_secs_per_byte: 1.0 / (0.341987 * b_eff),
                    points: 3,
                },
            ],
            relative_rms: 0.0,
        };
        // S = 1000 with these segments: 97.515 µs + 1016 B / (0.341987 × B/1.05) = 122.470335 µs
        // (the reference's worked value).
        assert!((fit.predict_secs(1000) - 122.470335e-6).abs() < 1e-12);
        let (lat, bw) = network_factors(&fit, &link).unwrap();
        assert_eq!(lat[0].threshold_bytes, 0);
        assert_eq!(lat[1].threshold_bytes, 1015);
        assert!((lat[0].factor - 2.0).abs() < 1e-12);
        assert!((lat[1].factor - 1.9503).abs() < 1e-12);
        assert!((bw[0].factor - 0.5).abs() < 1e-12);
        assert!((bw[1].factor - 0.341987).abs() < 1e-12);
    }

    /// The gamma bound: L = 100 ms gives γ/(2L) = 4194304/0.2 = 20971520 B/s < 125e6/1.05.
    #[test]
    fn gamma_bound_caps_the_effective_bandwidth() {
        let link = LinkSpec {
            latency_secs: 0.1,
            bandwidth_bytes_per_sec: 125e6,
            crosstraffic_weight: 1.05,
            tcp_gamma_bytes: DEFAULT_TCP_GAMMA_BYTES,
            flow_aggregate_ratio: None,
        };
        assert_eq!(link.effective_bandwidth_bytes_per_sec(), 20_971_520.0);
    }

    /// Reference §4.3: the entry with the largest threshold strictly below S, else the lowest.
    /// Entries 0:1e-6:0 and 100:2e-6:1e-9: S = 100 → 1e-6 (100 is not below 100), S = 101 →
    /// 2e-6 + 101e-9 = 2.101e-6, S = 0 → the lowest entry, 1e-6.
    #[test]
    fn overhead_lookup_is_strict() {
        let e = [
            OverheadEntry {
                threshold_bytes: 0,
                intercept_secs: 1e-6,
                slope_secs_per_byte: 0.0,
            },
            OverheadEntry {
                threshold_bytes: 100,
                intercept_secs: 2e-6,
                slope_secs_per_byte: 1e-9,
            },
        ];
        assert_eq!(overhead_at(&e, 100), 1e-6);
        assert!((overhead_at(&e, 101) - 2.101e-6).abs() < 1e-18);
        assert_eq!(overhead_at(&e, 0), 1e-6);
        assert_eq!(overhead_at(&[], 5), 0.0);
    }

    #[test]
    fn cfg_file_syntax() {
        let p = SimgridParams {
            lat_factor: vec![
                FactorEntry {
                    threshold_bytes: 0,
                    factor: 1.5,
                },
                FactorEntry {
                    threshold_bytes: 1039,
                    factor: 2.0,
                },
            ],
            bw_factor: vec![FactorEntry {
                threshold_bytes: 0,
                factor: 0.5,
            }],
            os: vec![OverheadEntry {
                threshold_bytes: 0,
                intercept_secs: 1e-6,
                slope_secs_per_byte: 1e-10,
            }],
            or: vec![],
            ois: vec![],
            detached_thresh_bytes: 4096,
            rendezvous_late_wait: vec![],
            cold_call_secs: None,
        };
        assert_eq!(
            p.cfg_file("calibrated\nby hand"),
            "# calibrated\n# by hand\nsmpi/lat-factor:1039:2;0:1.5\nsmpi/bw-factor:0:0.5\nsmpi/os:0:1e-6:1e-10\nsmpi/or:0:0:0\nsmpi/ois:0:0:0\nsmpi/send-is-detached-thresh:4096\nsmpi/test:0e0\nsmpi/iprobe:0e0\nsmpi/grow-injected-times:no\n"
        );
        // A polling call costs the receive overhead's intercept (here 2 µs), without back-off.
        let polled = SimgridParams {
            or: vec![OverheadEntry {
                threshold_bytes: 0,
                intercept_secs: 2e-6,
                slope_secs_per_byte: 1e-9,
            }],
            ..p.clone()
        };
        assert!(polled.cfg_file("").ends_with(
            "smpi/or:0:2e-6:1e-9\nsmpi/ois:0:0:0\nsmpi/send-is-detached-thresh:4096\nsmpi/test:2e-6\nsmpi/iprobe:2e-6\nsmpi/grow-injected-times:no\n"
        ));
        // A folded calibration's late-receiver wait is written after them.
        let folded = SimgridParams {
            rendezvous_late_wait: vec![
                OverheadEntry {
                    threshold_bytes: 0,
                    intercept_secs: 0.0,
                    slope_secs_per_byte: 0.0,
                },
                OverheadEntry {
                    threshold_bytes: 4095,
                    intercept_secs: 3e-6,
                    slope_secs_per_byte: 0.0,
                },
            ],
            ..p
        };
        assert!(folded.cfg_file("").ends_with(
            "smpi/grow-injected-times:no\ntimeless/rendezvous-late-wait:4095:3e-6:0e0;0:0e0:0e0\n"
        ));
        // The cold call's cost comes last when measured.
        let cold = SimgridParams {
            cold_call_secs: Some(1.2e-5),
            ..folded
        };
        assert!(cold.cfg_file("").ends_with(
            "timeless/rendezvous-late-wait:4095:3e-6:0e0;0:0e0:0e0\ntimeless/cold-call-secs:1.2e-5\n"
        ));
    }
}
