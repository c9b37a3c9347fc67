//! Start-up measurements recorded with the trace: the reference speed that converts a burst's
//! CPU time into flops, and the tracer's own cost per recorded event.
//!
//! The reference speed is the rate of a fixed kernel (`y = a*x + y` on 512 doubles, 2 flops per
//! element, compiled at `-O2` in the C shim whatever the Rust profile) on the calling thread's
//! CPU clock: a burst of `t` CPU seconds is recorded as `t × speed` flops, so replaying it on a
//! host of that speed takes `t` again. `TIMELESS_REF_SPEED` (flop/s) replaces the measurement.

use crate::clock::thread_cpu_secs;
use crate::mpi::{daxpy_kernel, KERNEL_FLOPS_PER_REP};

/// Where the reference speed came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpeedSource {
    Kernel,
    Environment,
}

/// Result of the speed calibration of one rank.
#[derive(Debug, Clone, Copy)]
pub struct Calibration {
    /// Reference speed in flop/s.
    pub flops_per_sec: f64,
    pub source: SpeedSource,
    /// Flops of one timed kernel run (0 when taken from the environment).
    pub kernel_flops: f64,
    /// Thread CPU seconds of the fastest timed run.
    pub kernel_cpu_secs: f64,
}

/// Minimum CPU time of one timed kernel run.
const MIN_RUN_SECS: f64 = 0.02;

/// Measures (or reads from `TIMELESS_REF_SPEED`) this rank's reference speed.
pub fn reference_speed() -> Calibration {
    if let Some(v) = std::env::var("TIMELESS_REF_SPEED")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
    {
        return Calibration {
            flops_per_sec: v,
            source: SpeedSource::Environment,
            kernel_flops: 0.0,
            kernel_cpu_secs: 0.0,
        };
    }
    // Grow the repetition count until one run takes MIN_RUN_SECS, then keep the best of three.
    let mut reps: i64 = 256;
    let mut secs = timed(reps);
    while secs < MIN_RUN_SECS && reps < (1 << 40) {
        reps *= 4;
        secs = timed(reps);
    }
    for _ in 0..2 {
        secs = secs.min(timed(reps));
    }
    let flops = reps as f64 * KERNEL_FLOPS_PER_REP;
    Calibration {
        flops_per_sec: flops / secs.max(1e-9),
        source: SpeedSource::Kernel,
        kernel_flops: flops,
        kernel_cpu_secs: secs,
    }
}

fn timed(reps: i64) -> f64 {
    let t0 = thread_cpu_secs();
    std::hint::black_box(daxpy_kernel(reps));
    thread_cpu_secs() - t0
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
        assert!(c.kernel_cpu_secs >= MIN_RUN_SECS * 0.5 || c.source == SpeedSource::Environment);
    }
}
