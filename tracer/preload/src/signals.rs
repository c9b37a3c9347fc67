//! Writing the trace out when the process is killed: `SIGTERM` (what `mpirun` sends the other
//! ranks when one calls `MPI_Abort` or fails), `SIGINT` (Ctrl-C) and `SIGABRT` (`abort()`).
//! Best effort: Open MPI sends `SIGKILL` a second after `SIGTERM`, and a rank that does not get
//! the CPU in time dies without running its handler; what the tracer flushed before (at
//! start-up, and periodically: `runtime::start_flusher`) is then the trace.
//!
//! A signal handler may only do async-signal-safe work, so it does not format, allocate or
//! wait: it takes the tracer's lock only if it is free (a rank killed while inside the tracer
//! loses its buffered lines), writes the buffered whole lines before the first unresolved
//! `irecv` with `write(2)`, then a comment naming the signal, and marks the trace closed. Then
//! the previous disposition runs: the default action (the signal is raised again, so the
//! process dies of it as it would have), or the program's or library's own handler.

use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::runtime;

const SIGNALS: [(c_int, &[u8]); 3] = [
    (
        libc::SIGTERM,
        b"# terminated by SIGTERM: the trace stops here\n",
    ),
    (
        libc::SIGINT,
        b"# interrupted by SIGINT: the trace stops here\n",
    ),
    (
        libc::SIGABRT,
        b"# aborted by SIGABRT: the trace stops here\n",
    ),
];

/// The previous handler of each signal of `SIGNALS` (`sa_sigaction` value), or `SIG_DFL`.
static PREVIOUS: [AtomicUsize; 3] = [
    AtomicUsize::new(libc::SIG_DFL),
    AtomicUsize::new(libc::SIG_DFL),
    AtomicUsize::new(libc::SIG_DFL),
];
/// Whether the previous handler took `(sig, info, context)` (`SA_SIGINFO`).
static PREVIOUS_SIGINFO: [AtomicUsize; 3] = [
    AtomicUsize::new(0),
    AtomicUsize::new(0),
    AtomicUsize::new(0),
];

/// Installs the handlers, keeping whatever handler was there to run after ours. Signals the
/// process ignores stay ignored.
pub fn install() {
    for (i, &(sig, _)) in SIGNALS.iter().enumerate() {
        // SAFETY: sigaction with zeroed structures owned by this frame.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            PREVIOUS[i].store(old.sa_sigaction, Ordering::Relaxed);
            PREVIOUS_SIGINFO[i].store(
                usize::from(old.sa_flags & libc::SA_SIGINFO != 0),
                Ordering::Relaxed,
            );
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(sig, &new, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_signal(sig: c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let Some(i) = SIGNALS.iter().position(|&(s, _)| s == sig) else {
        return;
    };
    runtime::flush_on_signal(SIGNALS[i].1);
    let prev = PREVIOUS[i].load(Ordering::Relaxed);
    // SAFETY: restores or calls the disposition that was installed before ours.
    unsafe {
        if prev == libc::SIG_DFL {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
            libc::raise(sig);
        } else if PREVIOUS_SIGINFO[i].load(Ordering::Relaxed) != 0 {
            let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(prev);
            f(sig, info, context);
        } else {
            let f: extern "C" fn(c_int) = std::mem::transmute(prev);
            f(sig);
        }
    }
}
