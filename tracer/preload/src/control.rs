//! Tracing switched off and on from inside the program.
//!
//! * `MPI_Pcontrol(level)` (C and Fortran): level 0 pauses recording, any other level resumes
//!   it (the MPI standard leaves the meaning of levels to the profiling library; 1 is "on").
//! * `MPI_Info_set(info, "TIMELESS_TRACING", "OFF" | "ON")` on any info object (C and
//!   Fortran; the value is case-insensitive, surrounding blanks ignored).
//!
//! While paused, calls are passed straight to the library and nothing is recorded, except
//! what keeps the tracer's state right (`MPI_Comm_free`, `MPI_Request_free`) and the end of
//! the run (`MPI_Finalize`, `MPI_Abort`). The compute between the pause and the resumption is
//! dropped; the compute before the pause is written before the next record. A pause and a
//! resumption each leave a comment in the trace. Pausing is the program's decision: ranks
//! that pause around different communication leave traces whose sends and receives do not
//! match.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::AtomicPtr;

use crate::fortran::resolve;
use crate::mpi::Fint;
use crate::runtime;

/// The info key that switches tracing.
pub const INFO_KEY: &str = "TIMELESS_TRACING";

/// `Some(true)` for `ON`, `Some(false)` for `OFF`, `None` for anything else or another key.
pub fn info_switch(key: &[u8], value: &[u8]) -> Option<bool> {
    if trim(key) != INFO_KEY.as_bytes() {
        return None;
    }
    match trim(value).to_ascii_uppercase().as_slice() {
        b"ON" => Some(true),
        b"OFF" => Some(false),
        _ => None,
    }
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// C `MPI_Pcontrol`. Declared without the variadic part, which the standard leaves unused and
/// the C calling convention lets a callee ignore.
///
/// # Safety
/// Called by the MPI program.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    let entry = runtime::enter();
    if let Some(e) = &entry {
        runtime::set_recording(e, level != 0, &format!("MPI_Pcontrol({level})"));
    }
    mpi_sys::PMPI_Pcontrol(level)
}

/// C `MPI_Info_set`.
///
/// # Safety
/// Called by the MPI program with NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_set(
    info: mpi_sys::MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    let entry = runtime::enter();
    if let (Some(e), false, false) = (&entry, key.is_null(), value.is_null()) {
        let (k, v) = (
            CStr::from_ptr(key).to_bytes(),
            CStr::from_ptr(value).to_bytes(),
        );
        if let Some(on) = info_switch(k, v) {
            runtime::set_recording(e, on, &format!("MPI_Info_set {INFO_KEY}"));
        }
    }
    mpi_sys::PMPI_Info_set(info, key, value)
}

static REAL_PCONTROL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static REAL_INFO_SET: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// `MPI_PCONTROL(LEVEL)`: the Fortran binding has no `IERROR`.
unsafe fn fortran_pcontrol(level: *mut Fint) {
    let entry = runtime::enter();
    if let (Some(e), false) = (&entry, level.is_null()) {
        let l = *level;
        runtime::set_recording(e, l != 0, &format!("MPI_PCONTROL({l})"));
    }
    if let Some(p) = resolve(&REAL_PCONTROL, "pmpi_pcontrol") {
        // SAFETY: the library's `pmpi_pcontrol_(level)`.
        let real: unsafe extern "C" fn(*mut Fint) = std::mem::transmute(p);
        real(level);
    }
}

/// A Fortran `CHARACTER` argument: pointer and hidden length (passed as `size_t` by gfortran,
/// as `int` by some callers: only the low 32 bits are read).
unsafe fn fstr<'a>(p: *const c_char, len: usize) -> &'a [u8] {
    if p.is_null() {
        return &[];
    }
    std::slice::from_raw_parts(p as *const u8, len as u32 as usize)
}

unsafe fn fortran_info_set(
    info: *mut Fint,
    key: *const c_char,
    value: *const c_char,
    ierr: *mut Fint,
    key_len: usize,
    value_len: usize,
) {
    let Some(p) = resolve(&REAL_INFO_SET, "pmpi_info_set") else {
        runtime::disable("no Fortran routine pmpi_info_set_ in the MPI library");
        if !ierr.is_null() {
            *ierr = mpi_sys::MPI_ERR_INTERN as Fint;
        }
        return;
    };
    let entry = runtime::enter();
    if let Some(e) = &entry {
        if let Some(on) = info_switch(fstr(key, key_len), fstr(value, value_len)) {
            runtime::set_recording(e, on, &format!("MPI_INFO_SET {INFO_KEY}"));
        }
    }
    // SAFETY: the library's `pmpi_info_set_(info, key, value, ierr, key_len, value_len)`,
    // given the caller's arguments unchanged.
    type Real =
        unsafe extern "C" fn(*mut Fint, *const c_char, *const c_char, *mut Fint, usize, usize);
    let real: Real = std::mem::transmute(p);
    real(info, key, value, ierr, key_len, value_len);
}

macro_rules! manglings {
    ($inner:ident $args:tt => $($sym:ident)*) => {
        $( manglings!(@one $inner $args $sym); )*
    };
    (@one $inner:ident ( $($a:ident : $t:ty),* ) $sym:ident) => {
        /// Fortran binding.
        ///
        /// # Safety
        /// Called by a Fortran program with by-reference arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $sym($($a: $t),*) {
            $inner($($a),*)
        }
    };
}

manglings!(fortran_pcontrol(level: *mut Fint) =>
    mpi_pcontrol_ mpi_pcontrol__ MPI_PCONTROL mpi_pcontrol ompi_pcontrol_f);
manglings!(fortran_info_set(info: *mut Fint, key: *const c_char, value: *const c_char,
    ierr: *mut Fint, key_len: usize, value_len: usize) =>
    mpi_info_set_ mpi_info_set__ MPI_INFO_SET mpi_info_set ompi_info_set_f);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tracing_key_with_on_or_off_switches() {
        assert_eq!(info_switch(b"TIMELESS_TRACING", b"OFF"), Some(false));
        assert_eq!(info_switch(b"TIMELESS_TRACING   ", b" on  "), Some(true));
        assert_eq!(info_switch(b"TIMELESS_TRACING", b"maybe"), None);
        assert_eq!(info_switch(b"cb_nodes", b"ON"), None);
    }
}
