//! The calling thread's CPU clock, in seconds: compute bursts, calibration and the tracer's
//! overhead are all measured with it.
//!
//! # Why the tracer does not read the CPU clock at every call
//!
//! `CLOCK_THREAD_CPUTIME_ID` is not served by the vDSO: each read is a system call (0.3-0.7 µs
//! on the development VM), and it makes the kernel bring the running task's scheduler
//! accounting up to date (`update_curr`), where Linux's EEVDF scheduler (≥ 6.6) also checks
//! whether the task has used its slice and, if so, reschedules it. An untraced rank
//! busy-polling in `MPI_Recv` is only preempted at a timer tick; a rank reading its CPU clock
//! around every call is preempted at the first read after its slice ends. On a machine whose
//! cores are shared with other jobs, that multiplied the involuntary context switches of a
//! latency-bound ring by 3-6 and its wall time by 2-10, each preemption stalling the partner
//! rank (measurements in `validation/tracing/README.md`). A `getppid` system call at the same
//! places costs nothing of the kind: the CPU clock read is the cause, not system calls in
//! general.
//!
//! So the tracer reads [`thread_cpu_chained_secs`]: the CPU time at a tracer point is the CPU
//! time at the thread's previous point plus the wall time in between (`CLOCK_MONOTONIC`, vDSO,
//! no system call) when that interval is at most a threshold (default
//! [`DEFAULT_EXACT_ABOVE_SECS`], `TIMELESS_EXACT_CPU_ABOVE_SECS`), and the real CPU clock
//! otherwise. A thread cannot have been descheduled for long during a short interval, so the
//! estimate errs by at most the threshold, and only for an interval in which the thread was
//! preempted for less than the threshold; every long interval (a compute burst, a call that
//! blocks or yields, any descheduling longer than the threshold) reads the real clock, which
//! also absorbs the earlier estimates' errors (the chain telescopes to the real CPU time).
//! A threshold of 0 reads the real clock at every point.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Default threshold of [`thread_cpu_chained_secs`], seconds.
pub const DEFAULT_EXACT_ABOVE_SECS: f64 = 20e-6;

/// Threshold in nanoseconds: intervals whose wall time exceeds it read the real CPU clock.
static EXACT_ABOVE_NS: AtomicU64 = AtomicU64::new(20_000);
/// Number of tracer points that read the real CPU clock, and that estimated it.
static EXACT_READS: AtomicU64 = AtomicU64::new(0);
static ESTIMATES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The thread's previous tracer point: (wall ns, CPU ns).
    static LAST_POINT: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

fn read_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets the threshold of [`thread_cpu_chained_secs`] (seconds; 0: always the real clock).
pub fn set_exact_above_secs(secs: f64) {
    let ns = (secs.max(0.0) * 1e9).round() as u64;
    EXACT_ABOVE_NS.store(ns, Ordering::Relaxed);
}

/// The threshold of [`thread_cpu_chained_secs`], seconds.
pub fn exact_above_secs() -> f64 {
    EXACT_ABOVE_NS.load(Ordering::Relaxed) as f64 * 1e-9
}

/// The calling thread's CPU time in seconds at a tracer point, read without a system call
/// when the wall time since the thread's previous point is at most the threshold (module
/// documentation). Successive values on one thread never decrease.
#[inline]
pub fn thread_cpu_chained_secs() -> f64 {
    let wall = read_ns(libc::CLOCK_MONOTONIC);
    let limit = EXACT_ABOVE_NS.load(Ordering::Relaxed);
    let cpu = LAST_POINT.with(|last| {
        let cpu = match last.get() {
            Some((w0, c0)) if wall.saturating_sub(w0) <= limit && limit > 0 => {
                ESTIMATES.fetch_add(1, Ordering::Relaxed);
                c0 + (wall - w0.min(wall))
            }
            prev => {
                EXACT_READS.fetch_add(1, Ordering::Relaxed);
                let exact = read_ns(libc::CLOCK_THREAD_CPUTIME_ID);
                // The real clock may be behind an over-estimate: never go backwards.
                prev.map_or(exact, |(_, c0)| exact.max(c0))
            }
        };
        last.set(Some((wall, cpu)));
        cpu
    });
    cpu as f64 * 1e-9
}

/// (real CPU clock reads, estimates) made by [`thread_cpu_chained_secs`] so far.
pub fn chained_reads() -> (u64, u64) {
    (
        EXACT_READS.load(Ordering::Relaxed),
        ESTIMATES.load(Ordering::Relaxed),
    )
}

fn read(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`), in seconds.
pub fn thread_cpu_secs() -> f64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Resolution the kernel declares for `CLOCK_THREAD_CPUTIME_ID` (`clock_getres`), in seconds.
pub fn thread_cpu_declared_resolution_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and out-pointer.
    unsafe { libc::clock_getres(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Smallest non-zero step observed between successive thread-CPU-time reads, in seconds: the
/// granularity a burst is actually measured with (reading the clock included).
pub fn thread_cpu_measured_granularity_secs() -> f64 {
    let mut best = f64::INFINITY;
    let mut prev = thread_cpu_secs();
    for _ in 0..2000 {
        let now = thread_cpu_secs();
        let d = now - prev;
        if d > 0.0 && d < best {
            best = d;
        }
        prev = now;
    }
    if best.is_finite() {
        best
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A busy loop of about 1 ms between two points: longer than the threshold, so the second
    /// point reads the real clock and the difference is real CPU time (at least the loop's
    /// wall time minus descheduling, at most its wall time). Points 1 µs apart are estimated
    /// from the wall clock without a system call.
    #[test]
    fn long_intervals_read_the_real_clock_short_ones_are_estimated() {
        set_exact_above_secs(DEFAULT_EXACT_ABOVE_SECS);
        let spin = |ns: u64| {
            let until = read_ns(libc::CLOCK_MONOTONIC) + ns;
            while read_ns(libc::CLOCK_MONOTONIC) < until {
                std::hint::spin_loop();
            }
        };
        let a = thread_cpu_chained_secs();
        let (exact0, est0) = chained_reads();
        spin(1_000_000);
        let b = thread_cpu_chained_secs();
        let (exact1, _) = chained_reads();
        assert!(exact1 > exact0, "a 1 ms interval reads the real clock");
        assert!(b - a > 0.0 && b - a < 0.1, "{a} {b}");
        let mut estimated = 0;
        let mut prev = b;
        for _ in 0..100 {
            let (_, e0) = chained_reads();
            let t = thread_cpu_chained_secs();
            let (_, e1) = chained_reads();
            estimated += usize::from(e1 > e0);
            assert!(t >= prev, "never backwards");
            prev = t;
        }
        // Successive points are far below 20 µs apart, unless the test thread is preempted.
        assert!(estimated >= 90, "{estimated} of 100 estimated ({est0})");
        // The chain stays within the threshold per point of the real clock.
        let real = thread_cpu_secs();
        assert!(
            (prev - real).abs() < 100.0 * DEFAULT_EXACT_ABOVE_SECS,
            "{prev} {real}"
        );
    }
}
