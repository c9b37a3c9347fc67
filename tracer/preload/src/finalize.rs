//! `MPI_Finalize`, outside the table: besides its record it runs the end-of-run steps that are
//! collective over `MPI_COMM_WORLD` (in a sessions program, over the tracer's communicator of
//! the `mpi://WORLD` process set, at the last `MPI_Session_finalize`: see `session`) (the merge of the online compression,
//! [`crate::online::merge`], then the `--gather` of [`crate::gather`], which moves the merged
//! `trace.tlg` with the other files), which every rank must reach, traced or not: a table wrapper passes the call straight to the library when tracing
//! is off (paused, disabled by a failure, or nested), and a rank skipping a collective step would
//! leave the others waiting.

use std::ffi::{c_int, c_void};
use std::sync::atomic::AtomicPtr;

use crate::fortran::resolve;
use crate::hooks::Finalize;
use crate::mpi::Fint;
use crate::runtime;

/// What every rank does before the library's `MPI_Finalize`: the `finalize` record and the end
/// of the trace when the call is traced, then the collective steps: the compression's merge
/// (rank 0 writes `trace.tlg`), then the gather.
pub(crate) fn before_finalize() {
    if let Some(e) = runtime::enter() {
        let stash = runtime::pre::<Finalize, ()>(&e, &());
        runtime::post::<Finalize, ()>(&e, &(), stash, crate::mpi::SUCCESS, "MPI_Finalize");
    }
    runtime::guarded_startup(
        "the profile's gather at MPI_Finalize",
        crate::profile::at_finalize,
    );
    runtime::guarded_startup(
        "the flow graph's gather at MPI_Finalize",
        crate::flowcapture::at_finalize,
    );
    runtime::guarded_startup(
        "the call sites' gather at MPI_Finalize",
        crate::callsite::at_finalize,
    );
    runtime::guarded_startup(
        "the in-call times' gather at MPI_Finalize",
        crate::incall::at_finalize,
    );
    runtime::guarded_startup(
        "the compression's merge at MPI_Finalize",
        crate::online::merge::at_finalize_once,
    );
    runtime::guarded_startup("the gather at MPI_Finalize", crate::gather::at_finalize);
}

/// C `MPI_Finalize`.
///
/// # Safety
/// Called by the MPI program.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    at_mpi_finalize();
    mpi_sys::PMPI_Finalize()
}

/// The end of the world model: the end of the trace, unless the tracer was started by a
/// session still open (it then ends at the last `MPI_Session_finalize`, see `session`).
fn at_mpi_finalize() {
    if crate::session::world_finalize_ends_trace() {
        before_finalize();
        crate::session::release_base();
    }
}

static REAL_FINALIZE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

unsafe fn fortran_finalize(ierr: *mut Fint) {
    let Some(p) = resolve(&REAL_FINALIZE, "pmpi_finalize") else {
        runtime::disable("no Fortran routine pmpi_finalize_ in the MPI library");
        if !ierr.is_null() {
            *ierr = mpi_sys::MPI_ERR_INTERN as Fint;
        }
        return;
    };
    at_mpi_finalize();
    // SAFETY: the library's `pmpi_finalize_(ierr)`.
    let real: unsafe extern "C" fn(*mut Fint) = std::mem::transmute(p);
    real(ierr);
}

macro_rules! manglings {
    ($($sym:ident)*) => {
        $(
            /// Fortran binding.
            ///
            /// # Safety
            /// Called by a Fortran program with by-reference arguments.
            #[no_mangle]
            pub unsafe extern "C" fn $sym(ierr: *mut Fint) {
                fortran_finalize(ierr)
            }
        )*
    };
}

manglings!(mpi_finalize_ mpi_finalize__ MPI_FINALIZE mpi_finalize ompi_finalize_f);
