//! Fortran side of the interposition: the real `pmpi_*_` routines, found with `dlsym`, and the
//! addresses of the Fortran sentinels (`MPI_IN_PLACE`, `MPI_BOTTOM`, `MPI_STATUS(ES)_IGNORE`).
//!
//! Open MPI's `mpif.h` and `use mpi` bindings (`libmpi_mpifh`) call `PMPI_*` directly, so the C
//! wrappers never see a Fortran call: each Fortran mangling (`mpi_send_`, `mpi_send__`,
//! `MPI_SEND`, `mpi_send`) is wrapped too and calls the library's `pmpi_send_` with the
//! original arguments. Handles are converted (`MPI_*_f2c`) only to record the call. The
//! tracer does not link `libmpi_mpifh`: a C program never loads it, a Fortran one always does.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

/// Looks up the first of the manglings of a profiling routine (`pmpi_send_`, `pmpi_send__`,
/// `pmpi_send`, `PMPI_SEND`) that the process defines, caching the answer in `slot`.
///
/// `lower` is the lower-case name without trailing underscore, NUL-terminated variants are
/// built on first use. Returns `None` if no mangling exists (then the call cannot be made).
pub fn resolve(slot: &AtomicPtr<c_void>, lower: &str) -> Option<*mut c_void> {
    let p = slot.load(Ordering::Acquire);
    if !p.is_null() {
        return Some(p);
    }
    let upper = lower.to_ascii_uppercase();
    for name in [
        format!("{lower}_"),
        format!("{lower}__"),
        lower.to_string(),
        upper,
    ] {
        let cname = std::ffi::CString::new(name).ok()?;
        // SAFETY: dlsym with a valid NUL-terminated name; RTLD_NEXT skips this library.
        let sym = unsafe { libc::dlsym(libc::RTLD_NEXT, cname.as_ptr()) };
        if !sym.is_null() {
            slot.store(sym, Ordering::Release);
            return Some(sym);
        }
    }
    None
}

/// Addresses of the Fortran sentinel objects, under each mangling the process defines.
#[derive(Debug, Default)]
pub struct Sentinels {
    in_place: Vec<usize>,
    bottom: Vec<usize>,
    status_ignore: Vec<usize>,
    statuses_ignore: Vec<usize>,
}

extern "C" {
    fn timeless_f_status_ignore() -> *const c_void;
    fn timeless_f_statuses_ignore() -> *const c_void;
}

/// The address stored in the pointer variable `name` of the process (MPICH keeps its Fortran
/// sentinels' addresses in `MPIR_F_MPI_IN_PLACE`, `MPIR_F_MPI_BOTTOM`), or the address of the
/// object `name` itself (`deref == false`: MPICH's `mpi_f08` objects).
fn symbol(name: &str, deref: bool) -> Option<usize> {
    let cname = std::ffi::CString::new(name).ok()?;
    // SAFETY: dlsym with a valid NUL-terminated name.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, cname.as_ptr()) };
    if sym.is_null() {
        return None;
    }
    // SAFETY: a pointer variable of the MPI library when `deref`.
    let addr = if deref {
        unsafe { *(sym as *const usize) }
    } else {
        sym as usize
    };
    (addr != 0).then_some(addr)
}

/// Adds MPICH's names and the standard C view of the status sentinels to Open MPI's.
fn with_others(mut found: Vec<usize>, what: &str) -> Vec<usize> {
    let others = match what {
        "in_place" => vec![
            symbol("MPIR_F_MPI_IN_PLACE", true),
            symbol("MPIR_F08_MPI_IN_PLACE", false),
        ],
        "bottom" => vec![
            symbol("MPIR_F_MPI_BOTTOM", true),
            symbol("MPIR_F08_MPI_BOTTOM", false),
        ],
        // SAFETY: the shim returns constants of mpi.h.
        "status_ignore" => vec![
            Some(unsafe { timeless_f_status_ignore() } as usize),
            symbol("MPIR_F08_MPI_STATUS_IGNORE_OBJ", false),
        ],
        "statuses_ignore" => vec![
            Some(unsafe { timeless_f_statuses_ignore() } as usize),
            symbol("MPIR_F08_MPI_STATUSES_IGNORE_OBJ", false),
        ],
        _ => Vec::new(),
    };
    for a in others.into_iter().flatten() {
        if a != 0 && !found.contains(&a) {
            found.push(a);
        }
    }
    found
}

/// Open MPI names its sentinels `mpi_fortran_<what>` (common blocks); MPICH's are found by
/// [`with_others`].
fn lookup(what: &str) -> Vec<usize> {
    let lower = format!("mpi_fortran_{what}");
    let upper = lower.to_ascii_uppercase();
    let mut out = Vec::new();
    for name in [
        format!("{lower}_"),
        format!("{lower}__"),
        lower.clone(),
        upper,
    ] {
        let Ok(cname) = std::ffi::CString::new(name) else {
            continue;
        };
        // SAFETY: dlsym with a valid name; RTLD_DEFAULT finds the definition the program uses
        // (the executable's copy of a common block if it has one).
        let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, cname.as_ptr()) };
        if !sym.is_null() && !out.contains(&(sym as usize)) {
            out.push(sym as usize);
        }
    }
    out
}

pub fn sentinels() -> &'static Sentinels {
    static S: OnceLock<Sentinels> = OnceLock::new();
    S.get_or_init(|| Sentinels {
        in_place: with_others(lookup("in_place"), "in_place"),
        bottom: with_others(lookup("bottom"), "bottom"),
        status_ignore: with_others(lookup("status_ignore"), "status_ignore"),
        statuses_ignore: with_others(lookup("statuses_ignore"), "statuses_ignore"),
    })
}

impl Sentinels {
    pub fn is_in_place(&self, p: *const c_void) -> bool {
        self.in_place.contains(&(p as usize))
    }
    pub fn is_bottom(&self, p: *const c_void) -> bool {
        self.bottom.contains(&(p as usize))
    }
    pub fn is_status_ignore(&self, p: *const c_void) -> bool {
        self.status_ignore.contains(&(p as usize))
    }
    pub fn is_statuses_ignore(&self, p: *const c_void) -> bool {
        self.statuses_ignore.contains(&(p as usize))
    }
}
