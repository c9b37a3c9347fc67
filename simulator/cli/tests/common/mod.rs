pub mod mpi;
pub mod trace;
