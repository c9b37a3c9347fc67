//! `MPI_Init` and `MPI_Init_thread`, the two entry points outside the table: their Fortran
//! bindings take no `argc`/`argv`. Each calls the library, then starts the tracer
//! ([`crate::setup::start`]) if initialisation succeeded and no `MPI_Session_init` started it
//! already (see [`crate::session`]).

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::AtomicPtr;

use crate::fortran::resolve;
use crate::mpi::Fint;
use crate::setup::start;

/// C `MPI_Init`.
///
/// # Safety
/// Called by the MPI program with the arguments of the C binding.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    let ret = mpi_sys::PMPI_Init(argc, argv);
    if ret == crate::mpi::SUCCESS {
        crate::session::world_initialised();
        start("MPI_Init");
    }
    ret
}

/// C `MPI_Init_thread`.
///
/// # Safety
/// Called by the MPI program with the arguments of the C binding.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    let ret = mpi_sys::PMPI_Init_thread(argc, argv, required, provided);
    if ret == crate::mpi::SUCCESS {
        crate::session::world_initialised();
        start("MPI_Init_thread");
    }
    ret
}

static REAL_INIT: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static REAL_INIT_THREAD: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

unsafe fn fortran_init(ierr: *mut Fint) {
    let Some(p) = resolve(&REAL_INIT, "pmpi_init") else {
        crate::runtime::disable("no Fortran routine pmpi_init_ in the MPI library");
        *ierr = mpi_sys::MPI_ERR_INTERN as Fint;
        return;
    };
    // SAFETY: the library's `pmpi_init_(ierr)`.
    let real: unsafe extern "C" fn(*mut Fint) = std::mem::transmute(p);
    real(ierr);
    if *ierr == 0 {
        crate::session::world_initialised();
        start("MPI_INIT");
    }
}

unsafe fn fortran_init_thread(required: *mut Fint, provided: *mut Fint, ierr: *mut Fint) {
    let Some(p) = resolve(&REAL_INIT_THREAD, "pmpi_init_thread") else {
        crate::runtime::disable("no Fortran routine pmpi_init_thread_ in the MPI library");
        *ierr = mpi_sys::MPI_ERR_INTERN as Fint;
        return;
    };
    // SAFETY: the library's `pmpi_init_thread_(required, provided, ierr)`.
    let real: unsafe extern "C" fn(*mut Fint, *mut Fint, *mut Fint) = std::mem::transmute(p);
    real(required, provided, ierr);
    if *ierr == 0 {
        crate::session::world_initialised();
        start("MPI_INIT_THREAD");
    }
}

macro_rules! manglings {
    ($inner:ident $args:tt => $($sym:ident)*) => {
        $( manglings!(@one $inner $args $sym); )*
    };
    (@one $inner:ident ( $($a:ident),* ) $sym:ident) => {
        /// Fortran binding.
        ///
        /// # Safety
        /// Called by a Fortran program with by-reference arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $sym($($a: *mut Fint),*) {
            $inner($($a),*)
        }
    };
}

manglings!(fortran_init(ierr) => mpi_init_ mpi_init__ MPI_INIT mpi_init ompi_init_f);
manglings!(fortran_init_thread(required, provided, ierr) =>
    mpi_init_thread_ mpi_init_thread__ MPI_INIT_THREAD mpi_init_thread ompi_init_thread_f);
