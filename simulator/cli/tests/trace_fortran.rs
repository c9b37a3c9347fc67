//! `timeless trace` on the Fortran programs of `validation/programs` (`use mpi` with the
//! `mpi_*_` wrappers, `use mpi_f08` with Open MPI's `ompi_*_f` entry points, and tracing
//! switched from Fortran), checked and simulated as the C programs are (`common::trace`).

mod common;

use common::trace::{have_mpi, trace_and_simulate};

#[test]
fn fortran_mix() {
    if have_mpi() {
        trace_and_simulate("fortran_mix", &["3"], "fortran_mix: done on 4 ranks, sum");
    }
}

#[test]
fn fortran_f08() {
    if have_mpi() {
        trace_and_simulate("fortran_f08", &[], "fortran_f08: done on 4 ranks, sum");
    }
}

#[test]
fn fortran_control() {
    if have_mpi() {
        trace_and_simulate("fortran_control", &[], "fortran_control: 4 ranks, checksum");
    }
}
