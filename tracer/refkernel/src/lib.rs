//! The reference compute kernel of timeless: the rate at which it runs defines a host's speed in
//! flop/s, both for the tracer (which turns a burst of `t` CPU seconds into `t × speed` flops)
//! and for `timeless calibrate compute` (which writes that speed into the platform). Replaying a
//! burst on a host of the calibrated speed then takes `t` again (seed 003 §5 calibrates "the
//! number of floating operations a CPU can compute in one second").
//!
//! Contract (the tracer, `tracer/preload`, calls this crate rather than carrying a copy):
//! `y = a*x + y` on 512 doubles, 2 flops per element ([`KERNEL_FLOPS_PER_REP`] per repetition),
//! C at `-O2 -fno-tree-vectorize`, timed on the calling thread's CPU clock; the repetition count
//! grows ×4 from 256 until one run takes [`MIN_RUN_SECS`], and the best of three runs counts.

extern "C" {
    fn timeless_refkernel_daxpy(reps: std::ffi::c_long) -> f64;
    fn timeless_refkernel_thread_cpu_secs() -> f64;
}

/// Flops of one repetition of [`daxpy`] (512 elements × 2).
pub const KERNEL_FLOPS_PER_REP: f64 = 1024.0;

/// Minimum CPU time of one timed run, seconds.
pub const MIN_RUN_SECS: f64 = 0.02;

/// Serialises calls: the C kernel works on static arrays, so two
/// threads running it at once would corrupt each other's checksum.
static KERNEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs the kernel `reps` times; returns a checksum (so the work cannot be optimised away).
/// Calls from several threads are serialised.
pub fn daxpy(reps: i64) -> f64 {
    let _guard = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: C function on its own static arrays, which the lock keeps to one caller.
    unsafe { timeless_refkernel_daxpy(reps as std::ffi::c_long) }
}

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`), seconds.
pub fn thread_cpu_secs() -> f64 {
    // SAFETY: reads a clock into a local struct.
    unsafe { timeless_refkernel_thread_cpu_secs() }
}

/// One speed measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelSpeed {
    /// Speed in flop/s.
    pub flops_per_sec: f64,
    /// Flops of one timed run.
    pub kernel_flops: f64,
    /// Thread CPU seconds of the fastest of the three timed runs.
    pub kernel_cpu_secs: f64,
}

fn timed(reps: i64) -> f64 {
    let t0 = thread_cpu_secs();
    std::hint::black_box(daxpy(reps));
    thread_cpu_secs() - t0
}

/// Measures the calling thread's speed with the reference kernel (crate docs).
pub fn reference_speed() -> KernelSpeed {
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
    KernelSpeed {
        flops_per_sec: flops / secs.max(1e-9),
        kernel_flops: flops,
        kernel_cpu_secs: secs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum is deterministic: y_i = 1 + reps·a·x_i, so for reps = 1 the sum is
    /// 512 + 1.0000001 × 1e-9 × (0 + 1 + ... + 511) = 512 + 1.0000001e-9 × 130816.
    #[test]
    fn checksum_by_hand() {
        let expect = 512.0 + 1.0000001e-9 * 130816.0;
        assert!((daxpy(1) - expect).abs() < 1e-9, "{}", daxpy(1));
    }

    #[test]
    fn speed_is_plausible() {
        let s = reference_speed();
        // Between 10 Mflop/s (a very slow emulator) and 1 Tflop/s for one scalar thread.
        assert!(s.flops_per_sec > 1e7 && s.flops_per_sec < 1e12, "{s:?}");
        assert!(s.kernel_cpu_secs >= MIN_RUN_SECS * 0.5, "{s:?}");
    }
}
