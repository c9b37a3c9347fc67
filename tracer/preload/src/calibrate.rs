//! Start-up measurements recorded with the trace: the reference speed that converts a burst's
//! CPU time into flops, and the tracer's own cost per recorded event.
//!
//! The reference speed is the rate of the reference kernel of `timeless-refkernel` (the one
//! `timeless calibrate compute` runs) on the calling thread's CPU clock: a burst of `t` CPU
//! seconds is recorded as `t × speed` flops, so replaying it on a host of that speed takes `t`
//! again. `TIMELESS_REF_SPEED` (flop/s) replaces the measurement; `timeless trace` measures the
//! speed once and passes it to every rank that way, naming where it came from in
//! `TIMELESS_REF_SPEED_SOURCE` (written to the metadata).

use crate::clock::thread_cpu_secs;

/// Where the reference speed came from.
#[derive(Debug, Clone, PartialEq)]
pub enum SpeedSource {
    /// Each rank ran the reference kernel at start-up.
    Kernel,
    /// `TIMELESS_REF_SPEED`, with the origin `timeless trace` gave in
    /// `TIMELESS_REF_SPEED_SOURCE` (or a generic text when it was set by hand).
    Environment(String),
}

impl SpeedSource {
    /// The text written as `reference_speed.source` in the metadata.
    pub fn describe(&self) -> String {
        match self {
            SpeedSource::Kernel => {
                "reference kernel run by every rank at start-up (median of the ranks of a host)"
                    .to_string()
            }
            SpeedSource::Environment(s) => s.clone(),
        }
    }
}

/// Result of the speed calibration of one rank.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// Reference speed in flop/s.
    pub flops_per_sec: f64,
    pub source: SpeedSource,
    /// Flops of one timed kernel run (0 when taken from the environment).
    pub kernel_flops: f64,
    /// Thread CPU seconds of the fastest timed run (0 when taken from the environment).
    pub kernel_cpu_secs: f64,
}

/// The speed named by `TIMELESS_REF_SPEED` (flop/s), if it is a positive number.
pub fn speed_from_env() -> Option<f64> {
    std::env::var("TIMELESS_REF_SPEED")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// This rank's reference speed: `TIMELESS_REF_SPEED` if set, else one run of the reference
/// kernel (`timeless_refkernel::reference_speed`, about 0.1 s of CPU).
pub fn reference_speed() -> Calibration {
    if let Some(v) = speed_from_env() {
        let source = std::env::var("TIMELESS_REF_SPEED_SOURCE")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "TIMELESS_REF_SPEED set in the environment".to_string());
        return Calibration {
            flops_per_sec: v,
            source: SpeedSource::Environment(source),
            kernel_flops: 0.0,
            kernel_cpu_secs: 0.0,
        };
    }
    let k = timeless_refkernel::reference_speed();
    Calibration {
        flops_per_sec: k.flops_per_sec,
        source: SpeedSource::Kernel,
        kernel_flops: k.kernel_flops,
        kernel_cpu_secs: k.kernel_cpu_secs,
    }
}

/// Mean thread CPU seconds of `iters` runs of `event` (the tracer's work for one record). CPU
/// time, not wall time: a rank sharing its core with others is not charged for waiting.
pub fn per_event_secs(iters: u32, mut event: impl FnMut(u32)) -> f64 {
    event(0); // warm-up: first allocation, page faults
    let t0 = thread_cpu_secs();
    for i in 0..iters {
        event(i);
    }
    (thread_cpu_secs() - t0) / f64::from(iters.max(1))
}

/// Median of a non-empty slice (mean of the two middle values for an even length).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn kernel_speed_is_plausible() {
        let c = reference_speed();
        // Between 10 Mflop/s (a very slow emulator) and 1 Tflop/s for one scalar thread.
        assert!(c.flops_per_sec > 1e7 && c.flops_per_sec < 1e12, "{c:?}");
        assert!(
            c.kernel_cpu_secs >= timeless_refkernel::MIN_RUN_SECS * 0.5
                || matches!(c.source, SpeedSource::Environment(_))
        );
    }
}
