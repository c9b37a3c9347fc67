//! The calling thread's CPU clock, in seconds: compute bursts, calibration and the tracer's
//! overhead are all measured with it.

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
