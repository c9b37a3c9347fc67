//! The reference speed every rank converts CPU seconds into flops with.

use crate::line::Mode;
use crate::LaunchError;

/// The reference speed every rank converts CPU seconds with, and where it came from (written to
/// `trace-meta.json` as `reference_speed.source`; no commas, which a launcher's `-x` might
/// split on).
#[derive(Debug, Clone, PartialEq)]
pub struct RefSpeed {
    /// flop/s.
    pub flops_per_sec: f64,
    /// Where it came from, one phrase.
    pub source: String,
}

/// Number of reference-kernel runs whose median is the speed `timeless trace` measures.
pub const SPEED_RUNS: usize = 3;

/// Chooses the reference speed: `--ref-speed` (`flag`), else `TIMELESS_REF_SPEED` (`env`), else
/// `None` in scattered mode (the ranks of each host measure it at start-up), else `measure()`'s
/// median of [`SPEED_RUNS`] runs of the reference kernel on this host. Measuring once, before
/// the run, keeps every rank (and every run of a comparison) on one speed: a per-rank
/// start-up measurement varied by about 8 % from run to run on a loaded machine.
///
/// # Errors
/// [`LaunchError::RefSpeed`]: a speed that is not a positive finite number.
pub fn choose_ref_speed(
    flag: Option<f64>,
    env: Option<&str>,
    mode: &Mode,
    measure: impl FnOnce() -> f64,
) -> Result<Option<RefSpeed>, LaunchError> {
    let positive = |v: f64, what: &str| -> Result<f64, LaunchError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(LaunchError::RefSpeed(format!(
                "{what} must be a positive number of flop/s, not {v}"
            )))
        }
    };
    if let Some(v) = flag {
        return Ok(Some(RefSpeed {
            flops_per_sec: positive(v, "--ref-speed")?,
            source: "--ref-speed given to timeless trace".into(),
        }));
    }
    if let Some(text) = env {
        let v: f64 = text.trim().parse().map_err(|_| {
            LaunchError::RefSpeed(format!(
                "TIMELESS_REF_SPEED='{text}' is not a number of flop/s"
            ))
        })?;
        return Ok(Some(RefSpeed {
            flops_per_sec: positive(v, "TIMELESS_REF_SPEED")?,
            source: "TIMELESS_REF_SPEED given to timeless trace".into(),
        }));
    }
    if matches!(mode, Mode::Scattered { .. }) {
        return Ok(None);
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    Ok(Some(RefSpeed {
        flops_per_sec: measure(),
        source: format!(
            "measured once by timeless trace on {} before the run (median of {SPEED_RUNS} \
             reference-kernel runs) and passed to every rank",
            host.trim()
        ),
    }))
}

/// Median of [`SPEED_RUNS`] runs of the reference kernel on the calling thread, flop/s.
pub fn measure_ref_speed() -> f64 {
    let mut v: Vec<f64> = (0..SPEED_RUNS)
        .map(|_| timeless_refkernel::reference_speed().flops_per_sec)
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
