//! What every generated wrapper does around the real call, and the tracer's failure policy.
//!
//! A wrapper calls [`enter`] first. It returns `None` — and the wrapper then only calls the
//! library — when tracing is not active (before `MPI_Init`, after `MPI_Finalize`, or after a
//! failure) or when the thread is already inside a wrapper (an MPI call made by the library
//! itself or by the tracer). Otherwise the wrapper reads the thread CPU clock (chained: no
//! system call on short intervals, see `clock`), runs the record
//! kind's `pre` step, calls the library, runs `post`, and returns exactly the library's result.
//!
//! Both steps run under `catch_unwind` and the tracer's lock. A panic or an I/O error disables
//! tracing for good: one message on stderr, what is already recorded is written out with a
//! comment saying where the trace stops, and the program keeps running untraced.

use std::cell::Cell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, Once};

use crate::clock::thread_cpu_chained_secs;
use crate::stamps;
use crate::tracer::{Fail, Tracer};

static ACTIVE: AtomicBool = AtomicBool::new(false);
static DISABLED: AtomicBool = AtomicBool::new(false);
/// Recording paused by the program (see `control`).
static PAUSED: AtomicBool = AtomicBool::new(false);
static RANK: AtomicI64 = AtomicI64::new(-1);
static TRACER: Mutex<Option<Tracer>> = Mutex::new(None);

thread_local! {
    /// Set while this thread runs tracer code (a wrapper, or start-up).
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// One record kind: what to do before and after the library call. `A` is the tuple of the
/// call's arguments in their C form (see `args`).
pub trait Hook<A> {
    /// State carried from `pre` to `post` (request handles read before the call frees them).
    type Stash: Default;
    /// Whether the kind runs while recording is paused (state bookkeeping, end of the run).
    const WHILE_PAUSED: bool = false;
    /// Before the call; by default keeps nothing.
    fn pre(_t: &mut Tracer, _a: &A) -> Result<Self::Stash, Fail> {
        Ok(Self::Stash::default())
    }
    /// After a successful call (`MPI_SUCCESS`): writes the records. A failed call never
    /// reaches it; [`post`] writes a comment instead.
    fn post(t: &mut Tracer, a: &A, stash: Self::Stash) -> Result<(), Fail>;
}

/// Proof that the current call is traced; holds the CPU time at entry (and the wall-clock
/// time, when calls are timestamped).
pub struct Entry {
    t_in: f64,
    wall_in: f64,
    /// Instruction counter at entry, when counters are used (see `counters`).
    ins_in: Option<crate::counters::Reading>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        BUSY.with(|b| b.set(false));
    }
}

/// Starts a traced call, or returns `None` if this call must only be passed through.
#[inline]
pub fn enter() -> Option<Entry> {
    if !ACTIVE.load(Ordering::Acquire) || DISABLED.load(Ordering::Relaxed) {
        return None;
    }
    let was_busy = BUSY.with(|b| b.replace(true));
    if was_busy {
        return None;
    }
    let wall_in = if stamps::stamps_enabled() || crate::profile::active() {
        stamps::wall_secs()
    } else {
        0.0
    };
    if crate::profile::only() {
        return Some(Entry {
            t_in: 0.0,
            wall_in,
            ins_in: None,
        });
    }
    let t_in = thread_cpu_chained_secs();
    let ins_in = if crate::counters::active() {
        crate::counters::thread_instructions()
    } else {
        None
    };
    // Injected cost of the enter event: after the call's enter timestamp, as a tracer writes
    // its enter record; inside the call, outside the compute burst.
    stamps::inject();
    Some(Entry {
        t_in,
        wall_in,
        ins_in,
    })
}

/// Runs `H::pre` after recording the compute burst that ended at entry.
pub fn pre<H: Hook<A> + 'static, A>(e: &Entry, a: &A) -> Option<H::Stash> {
    if PAUSED.load(Ordering::Acquire) {
        if !H::WHILE_PAUSED {
            return None;
        }
        // The compute since the pause is not recorded.
        return with_tracer("pre", |t| {
            t.resume();
            t.capture_callsite();
            H::pre(t, a)
        });
    }
    with_tracer("pre", |t| {
        if !crate::profile::only() {
            t.burst(e.t_in, e.ins_in, std::any::TypeId::of::<H>())?;
        }
        t.set_call(e.wall_in, e.wall_in);
        t.capture_callsite();
        if let Some(p) = &mut t.profile {
            p.begin_call();
        }
        H::pre(t, a)
    })
}

/// Runs `H::post` if `pre` succeeded and the call returned `MPI_SUCCESS` (a failed call is
/// recorded as a comment), adds the call `op` (its MPI name) to the profile when one is kept,
/// then marks the end of the tracer's time.
pub fn post<H: Hook<A>, A>(
    e: &Entry,
    a: &A,
    stash: Option<H::Stash>,
    ret: c_int,
    op: &'static str,
) {
    let wall_out = if stamps::stamps_enabled() || crate::profile::active() {
        stamps::wall_secs()
    } else {
        0.0
    };
    if let Some(stash) = stash {
        with_tracer("post", |t| {
            t.set_call(e.wall_in, wall_out);
            let r = if ret == crate::mpi::SUCCESS {
                H::post(t, a, stash)
            } else {
                t.note(format_args!(
                    "an MPI call failed with error {ret}: not recorded"
                ))
            };
            if let Some(p) = &mut t.profile {
                p.end_call(op, wall_out - e.wall_in);
            }
            r.and(t.end_event())
        });
    }
    // Injected cost of the exit event: after the clock read that starts the next burst.
    stamps::inject();
}

/// Pauses (`on == false`) or resumes recording, with a comment naming `why` in the trace. The
/// compute before a pause is kept; the compute during it is dropped.
pub fn set_recording(e: &Entry, on: bool, why: &str) {
    if PAUSED.load(Ordering::Acquire) != on {
        return;
    }
    with_tracer("tracing switch", |t| {
        if on {
            t.resume();
            t.note(format_args!("tracing resumed by {why}"))
        } else {
            // A pause is a site of its own.
            t.burst(e.t_in, e.ins_in, std::any::TypeId::of::<Entry>())?;
            t.note(format_args!("tracing paused by {why}"))
        }
    });
    PAUSED.store(!on, Ordering::Release);
}

/// Runs `f` on the tracer, under its lock and `catch_unwind`. `None` if there is no open
/// tracer, or if `f` failed (tracing is then disabled).
pub fn with_tracer<R>(what: &str, f: impl FnOnce(&mut Tracer) -> Result<R, Fail>) -> Option<R> {
    let res = catch_unwind(AssertUnwindSafe(|| {
        let mut guard = match TRACER.lock() {
            Ok(g) => g,
            Err(_) => return Err(Fail::new("tracer state poisoned by an earlier panic")),
        };
        match guard.as_mut() {
            Some(t) if !t.is_closed() => match f(t) {
                Ok(r) => Ok(Some(r)),
                Err(e) => {
                    t.abandon(&e.to_string());
                    Err(e)
                }
            },
            _ => Ok(None),
        }
    }));
    match res {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            disable(&format!("{what}: {e}"));
            None
        }
        Err(payload) => {
            let msg = panic_message(&payload);
            disable(&format!("internal panic in {what}: {msg}"));
            salvage(&msg);
            None
        }
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// After a panic under the lock: write out what the poisoned tracer holds, best effort.
fn salvage(msg: &str) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let mut guard = TRACER.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = guard.as_mut() {
            t.abandon(msg);
        }
    }));
}

/// Disables tracing for the rest of the run, with one message on stderr.
pub fn disable(reason: &str) {
    if !DISABLED.swap(true, Ordering::AcqRel) {
        let rank = RANK.load(Ordering::Relaxed);
        eprintln!(
            "timeless-preload: rank {rank}: tracing disabled ({reason}); the program continues untraced"
        );
    }
}

/// Whether tracing was disabled by a failure.
pub fn is_disabled() -> bool {
    DISABLED.load(Ordering::Relaxed)
}

/// Installs the tracer built by `MPI_Init`'s wrapper and starts tracing.
pub fn install(t: Tracer) {
    RANK.store(i64::from(t.rank()), Ordering::Relaxed);
    let mut guard = TRACER.lock().unwrap_or_else(|p| p.into_inner());
    *guard = Some(t);
    ACTIVE.store(true, Ordering::Release);
}

/// Records the rank for messages before the tracer exists.
pub fn set_rank(rank: i64) {
    RANK.store(rank, Ordering::Relaxed);
}

/// Runs start-up code as tracer code: panics are caught (and silenced by the hook), and MPI
/// calls made meanwhile are not traced.
pub fn guarded_startup(what: &str, f: impl FnOnce()) {
    install_panic_hook();
    let was_busy = BUSY.with(|b| b.replace(true));
    if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
        disable(&format!("internal panic in {what}: {}", panic_message(&p)));
    }
    BUSY.with(|b| b.set(was_busy));
}

/// Chains a panic hook that stays silent for panics raised inside tracer code (they are
/// reported by [`disable`]) and defers to the program's hook otherwise.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !BUSY.with(|b| b.get()) {
                prev(info);
            }
        }));
    });
}

/// Starts the flusher thread: every `period_secs` it writes the lines the tracer has buffered
/// for at least that long, so that records reach the file even while the program is blocked
/// in a call (and a rank killed with `SIGKILL`, which no handler sees, keeps them). It never
/// calls MPI, takes the tracer's lock only if it is free, and stops when the trace is closed.
pub fn start_flusher(period_secs: f64) {
    if !(period_secs > 0.0 && period_secs.is_finite()) {
        return;
    }
    let period = std::time::Duration::from_secs_f64(period_secs);
    let _ = std::thread::Builder::new()
        .name("timeless-flush".into())
        .spawn(move || loop {
            std::thread::sleep(period);
            let open = catch_unwind(|| match TRACER.try_lock() {
                Ok(mut guard) => match guard.as_mut() {
                    Some(t) if !t.is_closed() => {
                        if let Err(e) = t.flush_if_due(crate::clock::wall_secs()) {
                            t.abandon(&e.to_string());
                            drop(guard);
                            disable(&format!("periodic flush: {e}"));
                            return false;
                        }
                        true
                    }
                    _ => false,
                },
                Err(std::sync::TryLockError::WouldBlock) => true,
                Err(std::sync::TryLockError::Poisoned(_)) => false,
            });
            if !matches!(open, Ok(true)) {
                return;
            }
        });
}

/// From a signal handler: writes the buffered whole lines and `last`, if the tracer is not in
/// use (see `signals`). Async-signal-safe: no allocation, no waiting.
pub fn flush_on_signal(last: &'static [u8]) {
    if let Ok(mut guard) = TRACER.try_lock() {
        if let Some(t) = guard.as_mut() {
            t.flush_on_signal(last);
        }
    }
}

/// `atexit` handler: a program that exits without `MPI_Finalize` still gets its records.
pub extern "C" fn at_exit() {
    let _ = catch_unwind(|| {
        if let Ok(mut guard) = TRACER.try_lock() {
            if let Some(t) = guard.as_mut() {
                if !t.is_closed() {
                    let _ = t.close("# the program exited without MPI_Finalize");
                }
            }
        }
    });
}
