//! MPI-4 sessions: tracing a program that initialises MPI with `MPI_Session_init` instead of
//! (or besides) `MPI_Init`.
//!
//! A sessions program has no `MPI_COMM_WORLD` unless it also calls `MPI_Init`: it makes groups
//! from process sets (`MPI_Group_from_session_pset`) and communicators from groups
//! (`MPI_Comm_create_from_group`). The tracer needs three things the world model gave it:
//!
//! * **Ranks.** A trace names every peer by its world rank. Here the world is the
//!   `mpi://WORLD` process set, which every implementation must provide and whose group ranks
//!   are the `MPI_COMM_WORLD` ranks the same processes would have: rank r writes
//!   `rank-<r>.txt`, and every communicator is described (`comm_def`) in those ranks, as in a
//!   world-model trace. `MPI_COMM_WORLD` stays communicator 0 of the format (never used by a
//!   session-only program, so its records all carry `comm=<id>`).
//! * **A communicator of its own** for the start-up exchange and the end-of-run steps (the
//!   compression's merge, `--gather`, profile and flow-graph gathers), which run over
//!   `MPI_COMM_WORLD` otherwise ([`crate::mpi::base_comm`]). The tracer opens a *session of its
//!   own* at the program's first `MPI_Session_init` and builds this communicator from its
//!   `mpi://WORLD` group (`MPI_Comm_create_from_group`, tag `timeless.tracer`): a session of
//!   the tracer's, because the program may finalise the session it started with while it
//!   keeps another open, and a communicator must be freed before its session is finalised.
//!   Creating it is collective over all processes, inside the first `MPI_Session_init`, as the
//!   world-model start-up exchange is collective inside `MPI_Init`.
//! * **An end.** The trace ends at the program's last `MPI_Session_finalize` (open sessions
//!   are counted), before the library's call: the `finalize` record, the end-of-run steps,
//!   then the tracer frees its communicator and finalises its own session. While the world
//!   model is open (`MPI_Init` called, `MPI_Finalize` not yet), the trace ends at
//!   `MPI_Finalize` instead, whichever call started it.
//!
//! Mixed programs: the first of `MPI_Init`, `MPI_Init_thread` and `MPI_Session_init` starts the
//! tracer. Started by `MPI_Init`, it runs on `MPI_COMM_WORLD` and the sessions only add their
//! communicators (`MPI_Comm_create_from_group` records a `comm_def`); it ends at
//! `MPI_Finalize` (what a program does with MPI after `MPI_Finalize`, through a session still
//! open, is not recorded). Started by a session, it ends when the last of the program's
//! sessions and its world model closes.
//!
//! The wrappers exist only when the MPI library has sessions (`cfg(mpi_sessions)`, probed by
//! `build.rs`: MPICH 4.0 yes, Open MPI 4.1 no): built against Open MPI 4.1, the tracer exports
//! no session symbol and behaves as before. Under MPICH the Fortran bindings call these C
//! entry points, so a Fortran sessions program is traced the same way.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The world model is open: `MPI_Init` or `MPI_Init_thread` succeeded, `MPI_Finalize` is not
/// called yet.
static WORLD_OPEN: AtomicBool = AtomicBool::new(false);
/// The tracer was started by `MPI_Session_init`, on a session and communicator of its own.
static STARTED_BY_SESSION: AtomicBool = AtomicBool::new(false);
/// The program's open sessions: successful `MPI_Session_init` minus successful
/// `MPI_Session_finalize`.
static OPEN_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// Called by the `MPI_Init` wrappers once the library's call succeeded.
pub fn world_initialised() {
    WORLD_OPEN.store(true, Ordering::Release);
}

/// Called by the `MPI_Finalize` wrappers: closes the world model and says whether the trace
/// ends here (false when a session started it and one of the program's sessions is open: it
/// then ends at their last `MPI_Session_finalize`).
pub fn world_finalize_ends_trace() -> bool {
    WORLD_OPEN.store(false, Ordering::Release);
    !(STARTED_BY_SESSION.load(Ordering::Acquire) && OPEN_SESSIONS.load(Ordering::Acquire) > 0)
}

/// After the end-of-run steps: frees the tracer's communicator and finalises its session, if a
/// session started the tracer (nothing otherwise).
pub fn release_base() {
    #[cfg(mpi_sessions)]
    imp::release();
}

#[cfg(mpi_sessions)]
pub use imp::*;

#[cfg(mpi_sessions)]
mod imp {
    use std::ffi::{c_char, c_int};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    use mpi_sys::{MPI_Errhandler, MPI_Info, MPI_Session};

    use super::{OPEN_SESSIONS, STARTED_BY_SESSION, WORLD_OPEN};
    use crate::hooks::CommFromGroup;
    use crate::mpi::{self, handle_key, MPI_Comm, MPI_Group};
    use crate::runtime;
    use crate::tracer::Fail;

    /// The tracer's own session (its handle key) while it is open.
    static TRACER_SESSION: AtomicU64 = AtomicU64::new(0);
    /// The tracer's session and communicator were released.
    static RELEASED: AtomicBool = AtomicBool::new(false);

    /// The process set the tracer's ranks come from.
    const WORLD_PSET: &std::ffi::CStr = c"mpi://WORLD";
    /// The string tag of the tracer's communicator (`MPI_Comm_create_from_group`).
    const TRACER_TAG: &std::ffi::CStr = c"timeless.tracer";

    /// C `MPI_Session_init`: the library's call; the first successful one of a program not
    /// traced yet starts the tracer on a session of its own.
    ///
    /// # Safety
    /// Called by the MPI program with the arguments of the C binding.
    #[no_mangle]
    pub unsafe extern "C" fn MPI_Session_init(
        info: MPI_Info,
        errhandler: MPI_Errhandler,
        session: *mut MPI_Session,
    ) -> c_int {
        let ret = mpi_sys::PMPI_Session_init(info, errhandler, session);
        if ret == mpi::SUCCESS {
            OPEN_SESSIONS.fetch_add(1, Ordering::AcqRel);
            if !crate::setup::started() {
                crate::setup::start_with("MPI_Session_init", open_base);
            }
        }
        ret
    }

    /// C `MPI_Session_finalize`: the program's last open session, with no world model open,
    /// ends a trace a session started (before the library's call, which may tear MPI down).
    ///
    /// # Safety
    /// Called by the MPI program with the arguments of the C binding.
    #[no_mangle]
    pub unsafe extern "C" fn MPI_Session_finalize(session: *mut MPI_Session) -> c_int {
        if OPEN_SESSIONS.load(Ordering::Acquire) == 1
            && STARTED_BY_SESSION.load(Ordering::Acquire)
            && !WORLD_OPEN.load(Ordering::Acquire)
        {
            crate::finalize::before_finalize();
            release();
        }
        let ret = mpi_sys::PMPI_Session_finalize(session);
        if ret == mpi::SUCCESS {
            let _ = OPEN_SESSIONS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_sub(1))
            });
        }
        ret
    }

    /// C `MPI_Comm_create_from_group`: traced like `MPI_Comm_create` (the new communicator's
    /// `comm_def`, [`CommFromGroup`]).
    ///
    /// # Safety
    /// Called by the MPI program with the arguments of the C binding.
    #[no_mangle]
    pub unsafe extern "C" fn MPI_Comm_create_from_group(
        group: MPI_Group,
        stringtag: *const c_char,
        info: MPI_Info,
        errhandler: MPI_Errhandler,
        newcomm: *mut MPI_Comm,
    ) -> c_int {
        let Some(entry) = runtime::enter() else {
            return mpi_sys::PMPI_Comm_create_from_group(
                group, stringtag, info, errhandler, newcomm,
            );
        };
        let args = (group, stringtag, info, errhandler, newcomm);
        let stash = runtime::pre::<CommFromGroup, _>(&entry, &args);
        let ret = mpi_sys::PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
        runtime::post::<CommFromGroup, _>(&entry, &args, stash, ret, "MPI_Comm_create_from_group");
        ret
    }

    /// Opens the tracer's session, its `mpi://WORLD` group and its communicator, which becomes
    /// [`mpi::base_comm`]. Collective over the process set (`MPI_Comm_create_from_group`).
    fn open_base() -> Result<(), Fail> {
        let fail = |what: &str| Fail::new(format!("sessions: the tracer's {what} failed"));
        // SAFETY: handles are plain values filled by the library; out-parameters are locals;
        // the strings are NUL-terminated constants.
        unsafe {
            let mut s = std::mem::zeroed::<MPI_Session>();
            if mpi_sys::PMPI_Session_init(
                mpi_sys::RSMPI_INFO_NULL,
                mpi_sys::RSMPI_ERRORS_RETURN,
                &mut s,
            ) != mpi::SUCCESS
            {
                return Err(fail("MPI_Session_init"));
            }
            let mut g = std::mem::zeroed::<MPI_Group>();
            if mpi_sys::PMPI_Group_from_session_pset(s, WORLD_PSET.as_ptr(), &mut g) != mpi::SUCCESS
            {
                mpi_sys::PMPI_Session_finalize(&mut s);
                return Err(fail("MPI_Group_from_session_pset(\"mpi://WORLD\")"));
            }
            let mut c = std::mem::zeroed::<MPI_Comm>();
            let rc = mpi_sys::PMPI_Comm_create_from_group(
                g,
                TRACER_TAG.as_ptr(),
                mpi_sys::RSMPI_INFO_NULL,
                mpi_sys::RSMPI_ERRORS_RETURN,
                &mut c,
            );
            mpi_sys::PMPI_Group_free(&mut g);
            if rc != mpi::SUCCESS {
                mpi_sys::PMPI_Session_finalize(&mut s);
                return Err(fail("MPI_Comm_create_from_group"));
            }
            TRACER_SESSION.store(handle_key(s), Ordering::Release);
            mpi::set_base_comm(Some(c));
        }
        STARTED_BY_SESSION.store(true, Ordering::Release);
        Ok(())
    }

    /// Frees the tracer's communicator and finalises its session, once, after the end-of-run
    /// steps.
    pub(super) fn release() {
        if !STARTED_BY_SESSION.load(Ordering::Acquire) || RELEASED.swap(true, Ordering::AcqRel) {
            return;
        }
        runtime::guarded_startup("the release of the tracer's session", || {
            let mut c = mpi::base_comm();
            mpi::set_base_comm(None);
            // SAFETY: the communicator and session `open_base` created, released once; the
            // key came from `handle_key` of an `MPI_Session`.
            unsafe {
                mpi_sys::PMPI_Comm_free(&mut c);
                let mut s: MPI_Session = mpi::from_key(TRACER_SESSION.load(Ordering::Acquire));
                mpi_sys::PMPI_Session_finalize(&mut s);
            }
        });
    }
}
