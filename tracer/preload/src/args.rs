//! Argument kinds of the wrapper table: how each argument of an MPI function looks in the C
//! binding, and how the Fortran binding's by-reference argument is presented to the recorder.
//!
//! A kind's `C` type is exactly the C binding's type, so a table entry that disagrees with
//! `mpi.h` does not compile (the wrapper passes its arguments straight to `PMPI_*`). A Fortran
//! argument is always a pointer; the kind converts it to the C view before the call (`f_in`:
//! `MPI_*_f2c` for handles, the Fortran sentinels to the C ones), chooses what the real Fortran
//! routine receives (`f_pass`: the program's pointer, or the tracer's own status storage when
//! the program passed `MPI_STATUS(ES)_IGNORE`), and refreshes the view after the call
//! (`f_out`: output handles, 1-based indices, statuses). The C binding substitutes its ignore
//! sentinels the same way (`c_in`) so a wildcard receive's real source can always be read.
//! Substituting storage for an ignored status changes nothing the program can observe.

use std::ffi::{c_int, c_void};

use crate::fortran::sentinels;
use crate::mpi::{
    self, Fint, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Message, MPI_Op, MPI_Request, MPI_Status,
};

/// Number of `Fint`s in a Fortran status (`MPI_STATUS_SIZE`): Open MPI and MPICH both define
/// it as the size of the C struct in `int`s.
pub const STATUS_FINTS: usize = std::mem::size_of::<MPI_Status>() / std::mem::size_of::<Fint>();

/// One argument kind. See the module documentation.
pub trait Arg {
    /// The argument's type in the C binding.
    type C: Copy;
    /// Scratch storage owned by the wrapper's stack frame for the duration of one call.
    type Store;
    fn store() -> Self::Store;
    /// C binding, before the call: the value handed to `PMPI_*` (identity by default).
    ///
    /// # Safety
    /// `c` is the program's argument; `len` the length of an array argument.
    unsafe fn c_in(c: Self::C, _st: &mut Self::Store, _len: usize) -> Self::C {
        c
    }
    /// Fortran binding, before the call: the C view of the argument.
    ///
    /// # Safety
    /// `f` is the program's by-reference argument; `len` the length of an array argument.
    unsafe fn f_in(f: *mut c_void, st: &mut Self::Store, len: usize) -> Self::C;
    /// Fortran binding: the pointer handed to the library's Fortran routine.
    ///
    /// # Safety
    /// As [`Arg::f_in`].
    unsafe fn f_pass(f: *mut c_void, _st: &mut Self::Store, _len: usize) -> *mut c_void {
        f
    }
    /// Fortran binding, after the call: refresh the C view from what the routine wrote.
    ///
    /// # Safety
    /// As [`Arg::f_in`]; the call has returned.
    unsafe fn f_out(_f: *mut c_void, _st: &mut Self::Store, _c: &mut Self::C, _len: usize) {}
}

unsafe fn fint(f: *mut c_void) -> Fint {
    *(f as *const Fint)
}

/// Maps the Fortran `MPI_IN_PLACE` / `MPI_BOTTOM` to the C constants.
fn fbuf(f: *mut c_void) -> *const c_void {
    let s = sentinels();
    if s.is_in_place(f) {
        mpi::in_place()
    } else if s.is_bottom(f) {
        mpi::bottom()
    } else {
        f
    }
}

/// A send buffer (`const void *`).
pub struct SBuf;
impl Arg for SBuf {
    type C = *const c_void;
    type Store = ();
    fn store() {}
    unsafe fn f_in(f: *mut c_void, _: &mut (), _: usize) -> Self::C {
        fbuf(f)
    }
}

/// A receive or in-out buffer (`void *`).
pub struct RBuf;
impl Arg for RBuf {
    type C = *mut c_void;
    type Store = ();
    fn store() {}
    unsafe fn f_in(f: *mut c_void, _: &mut (), _: usize) -> Self::C {
        fbuf(f) as *mut c_void
    }
}

/// An `int` passed by value (count, rank, tag, color...).
pub struct Int;
impl Arg for Int {
    type C = c_int;
    type Store = ();
    fn store() {}
    unsafe fn f_in(f: *mut c_void, _: &mut (), _: usize) -> c_int {
        fint(f)
    }
}

/// A `const int *` array (counts, displacements); a Fortran `INTEGER` array is the same.
pub struct Ints;
impl Arg for Ints {
    type C = *const c_int;
    type Store = ();
    fn store() {}
    unsafe fn f_in(f: *mut c_void, _: &mut (), _: usize) -> Self::C {
        f as *const c_int
    }
}

/// An `int *` output (flag, outcount). A Fortran `LOGICAL` is read as non-zero = true.
pub struct IntOut;
impl Arg for IntOut {
    type C = *mut c_int;
    type Store = c_int;
    fn store() -> c_int {
        0
    }
    unsafe fn f_in(_: *mut c_void, st: &mut c_int, _: usize) -> Self::C {
        st
    }
    unsafe fn f_out(f: *mut c_void, st: &mut c_int, c: &mut Self::C, _: usize) {
        *st = fint(f);
        *c = st;
    }
}

/// An index output (`MPI_Waitany`, `MPI_Testany`): 1-based in Fortran.
pub struct Index;
impl Arg for Index {
    type C = *mut c_int;
    type Store = c_int;
    fn store() -> c_int {
        0
    }
    unsafe fn f_in(_: *mut c_void, st: &mut c_int, _: usize) -> Self::C {
        st
    }
    unsafe fn f_out(f: *mut c_void, st: &mut c_int, c: &mut Self::C, _: usize) {
        let v = fint(f);
        *st = if v == mpi::undefined() { v } else { v - 1 };
        *c = st;
    }
}

/// An array of indices (`MPI_Waitsome`, `MPI_Testsome`): 1-based in Fortran.
pub struct Indices;
impl Arg for Indices {
    type C = *mut c_int;
    type Store = Vec<c_int>;
    fn store() -> Vec<c_int> {
        Vec::new()
    }
    unsafe fn f_in(_: *mut c_void, st: &mut Vec<c_int>, len: usize) -> Self::C {
        st.resize(len, 0);
        st.as_mut_ptr()
    }
    unsafe fn f_out(f: *mut c_void, st: &mut Vec<c_int>, c: &mut Self::C, len: usize) {
        let src = std::slice::from_raw_parts(f as *const Fint, len);
        st.clear();
        st.extend(src.iter().map(|v| v - 1));
        *c = st.as_mut_ptr();
    }
}

macro_rules! handle_kind {
    ($(#[$doc:meta])* $kind:ident, $ty:ty, $f2c:ident) => {
        $(#[$doc])*
        pub struct $kind;
        impl Arg for $kind {
            type C = $ty;
            type Store = ();
            fn store() {}
            unsafe fn f_in(f: *mut c_void, _: &mut (), _: usize) -> $ty {
                mpi_sys::$f2c(fint(f))
            }
        }
    };
}
handle_kind!(
    /// A datatype handle.
    Type, MPI_Datatype, PMPI_Type_f2c
);
handle_kind!(
    /// A communicator handle.
    Comm, MPI_Comm, PMPI_Comm_f2c
);
handle_kind!(
    /// A reduction operation handle.
    Op, MPI_Op, PMPI_Op_f2c
);
handle_kind!(
    /// A group handle.
    Group, MPI_Group, PMPI_Group_f2c
);

macro_rules! handle_out_kind {
    ($(#[$doc:meta])* $kind:ident, $ty:ty, $null:expr, $f2c:ident, $read_in:expr) => {
        $(#[$doc])*
        pub struct $kind;
        impl Arg for $kind {
            type C = *mut $ty;
            type Store = $ty;
            fn store() -> $ty {
                $null
            }
            unsafe fn f_in(f: *mut c_void, st: &mut $ty, _: usize) -> *mut $ty {
                if $read_in {
                    *st = mpi_sys::$f2c(fint(f));
                }
                st
            }
            unsafe fn f_out(f: *mut c_void, st: &mut $ty, c: &mut *mut $ty, _: usize) {
                *st = mpi_sys::$f2c(fint(f));
                *c = st;
            }
        }
    };
}
handle_out_kind!(
    /// A request the call creates (`MPI_Isend`...).
    ReqOut, MPI_Request, mpi::request_null(), PMPI_Request_f2c, false
);
handle_out_kind!(
    /// A request the call completes or frees (`MPI_Wait`, `MPI_Test`, `MPI_Request_free`).
    Req, MPI_Request, mpi::request_null(), PMPI_Request_f2c, true
);
handle_out_kind!(
    /// A matched message the call creates (`MPI_Mprobe`, `MPI_Improbe`).
    MsgOut, MPI_Message, mpi::message_null(), PMPI_Message_f2c, false
);
handle_out_kind!(
    /// A matched message the call receives (`MPI_Mrecv`, `MPI_Imrecv`), freed by the call.
    MsgInOut, MPI_Message, mpi::message_null(), PMPI_Message_f2c, true
);
handle_out_kind!(
    /// A communicator the call creates.
    CommOut, MPI_Comm, mpi::comm_null(), PMPI_Comm_f2c, false
);
handle_out_kind!(
    /// A communicator the call frees (`MPI_Comm_free`).
    CommInOut, MPI_Comm, mpi::comm_null(), PMPI_Comm_f2c, true
);

/// An array of requests (`MPI_Waitall`...), converted element by element in Fortran.
pub struct Reqs;
impl Arg for Reqs {
    type C = *mut MPI_Request;
    type Store = Vec<MPI_Request>;
    fn store() -> Vec<MPI_Request> {
        Vec::new()
    }
    unsafe fn f_in(f: *mut c_void, st: &mut Vec<MPI_Request>, len: usize) -> Self::C {
        let src = std::slice::from_raw_parts(f as *const Fint, len);
        st.clear();
        st.extend(src.iter().map(|&h| mpi_sys::PMPI_Request_f2c(h)));
        st.as_mut_ptr()
    }
    unsafe fn f_out(f: *mut c_void, st: &mut Vec<MPI_Request>, c: &mut Self::C, len: usize) {
        *c = Self::f_in(f, st, len);
    }
}

/// An array of datatype handles (`MPI_Alltoallw`), converted element by element in Fortran
/// (its length is the communicator's size: `[@size comm]` in the table).
pub struct Types;
impl Arg for Types {
    type C = *const MPI_Datatype;
    type Store = Vec<MPI_Datatype>;
    fn store() -> Vec<MPI_Datatype> {
        Vec::new()
    }
    unsafe fn f_in(f: *mut c_void, st: &mut Vec<MPI_Datatype>, len: usize) -> Self::C {
        if f.is_null() {
            return std::ptr::null();
        }
        let src = std::slice::from_raw_parts(f as *const Fint, len);
        st.clear();
        st.extend(src.iter().map(|&h| mpi_sys::PMPI_Type_f2c(h)));
        st.as_ptr()
    }
}

/// Number of ranks of a Fortran communicator argument (the remote group's for an
/// intercommunicator), 0 if it cannot be told.
///
/// # Safety
/// `f` points to a Fortran communicator handle.
pub unsafe fn fortran_comm_size(f: *mut c_void) -> usize {
    if f.is_null() {
        return 0;
    }
    let comm = mpi_sys::PMPI_Comm_f2c(fint(f));
    let (mut inter, mut n) = (0, 0);
    if mpi_sys::PMPI_Comm_test_inter(comm, &mut inter) != mpi::SUCCESS {
        return 0;
    }
    let rc = if inter != 0 {
        mpi_sys::PMPI_Comm_remote_size(comm, &mut n)
    } else {
        mpi_sys::PMPI_Comm_size(comm, &mut n)
    };
    if rc == mpi::SUCCESS {
        n.max(0) as usize
    } else {
        0
    }
}

/// Storage for one status in both bindings.
pub struct StatusStore {
    c: MPI_Status,
    f: [Fint; STATUS_FINTS],
}

/// A status output; `MPI_STATUS_IGNORE` is replaced by the tracer's storage.
pub struct Status;
impl Arg for Status {
    type C = *mut MPI_Status;
    type Store = StatusStore;
    fn store() -> StatusStore {
        StatusStore {
            c: mpi::empty_status(),
            f: [0; STATUS_FINTS],
        }
    }
    unsafe fn c_in(c: Self::C, st: &mut StatusStore, _: usize) -> Self::C {
        if c == mpi::status_ignore() {
            &mut st.c
        } else {
            c
        }
    }
    unsafe fn f_in(_: *mut c_void, st: &mut StatusStore, _: usize) -> Self::C {
        &mut st.c
    }
    unsafe fn f_pass(f: *mut c_void, st: &mut StatusStore, _: usize) -> *mut c_void {
        if sentinels().is_status_ignore(f) {
            st.f.as_mut_ptr() as *mut c_void
        } else {
            f
        }
    }
    unsafe fn f_out(f: *mut c_void, st: &mut StatusStore, c: &mut Self::C, len: usize) {
        let passed = Self::f_pass(f, st, len) as *const Fint;
        mpi_sys::PMPI_Status_f2c(passed, &mut st.c);
        *c = &mut st.c;
    }
}

/// Storage for an array of statuses in both bindings.
pub struct StatusesStore {
    c: Vec<MPI_Status>,
    f: Vec<Fint>,
}

/// An array of statuses; `MPI_STATUSES_IGNORE` is replaced by the tracer's storage.
pub struct Statuses;
impl Arg for Statuses {
    type C = *mut MPI_Status;
    type Store = StatusesStore;
    fn store() -> StatusesStore {
        StatusesStore {
            c: Vec::new(),
            f: Vec::new(),
        }
    }
    unsafe fn c_in(c: Self::C, st: &mut StatusesStore, len: usize) -> Self::C {
        if c == mpi::statuses_ignore() {
            st.c.resize(len, mpi::empty_status());
            st.c.as_mut_ptr()
        } else {
            c
        }
    }
    unsafe fn f_in(_: *mut c_void, st: &mut StatusesStore, len: usize) -> Self::C {
        st.c.resize(len, mpi::empty_status());
        st.c.as_mut_ptr()
    }
    unsafe fn f_pass(f: *mut c_void, st: &mut StatusesStore, len: usize) -> *mut c_void {
        if sentinels().is_statuses_ignore(f) {
            st.f.resize(len * STATUS_FINTS, 0);
            st.f.as_mut_ptr() as *mut c_void
        } else {
            f
        }
    }
    unsafe fn f_out(f: *mut c_void, st: &mut StatusesStore, c: &mut Self::C, len: usize) {
        let passed = Self::f_pass(f, st, len) as *const Fint;
        st.c.resize(len, mpi::empty_status());
        for (i, s) in st.c.iter_mut().enumerate() {
            mpi_sys::PMPI_Status_f2c(passed.add(i * STATUS_FINTS), s);
        }
        *c = st.c.as_mut_ptr();
    }
}

handle_kind!(
    /// An info handle.
    Info, mpi_sys::MPI_Info, PMPI_Info_f2c
);
