//! timeless's MPI tracer: an `LD_PRELOAD` library that records a time-independent trace of an
//! MPI program, one file per rank, in SimGrid 3.32's TI text format.
//!
//! ```text
//! mpirun -np 4 -x LD_PRELOAD=libtimeless_preload.so -x TIMELESS_OUT=trace ./ring
//! cd trace && smpirun -np 4 -platform P.xml -hostfile H -replay trace-list.txt
//! ```
//!
//! # Design
//!
//! * **One table** ([`table`]) lists every traced function with its arguments and record kind;
//!   a macro generates the C entry point (`MPI_Send` → `PMPI_Send`) and the four Fortran
//!   manglings (`mpi_send_`, `mpi_send__`, `MPI_SEND`, `mpi_send` → the library's
//!   `pmpi_send_`), plus `ompi_send_f`, which Open MPI's `use mpi_f08` bindings call. Open
//!   MPI's Fortran bindings call `PMPI_*` directly, so without the Fortran wrappers a Fortran
//!   program would not be traced at all.
//! * **Arguments** ([`args`]) know their C type (checked against `mpi.h` through `mpi-sys`) and
//!   how a Fortran argument maps to it: handles through `MPI_*_f2c`, the Fortran
//!   `MPI_IN_PLACE`/`MPI_BOTTOM` to the C ones, `MPI_STATUS(ES)_IGNORE` replaced by the
//!   tracer's storage so that a wildcard receive's real source is always known.
//! * **Record kinds** ([`hooks`]) write the actions; [`tracer`] holds per-rank state (world
//!   ranks of communicators, predefined datatypes, pending requests); [`writer`] buffers whole
//!   lines, holds back text behind an `irecv` whose source is not known yet, and writes as the
//!   buffer fills. The frequent records are typed values ([`record`]) whose `Display` is the
//!   text, so the online flow graph ([`flowcapture`], `TIMELESS_FLOWGRAPH`) finds their node
//!   by key without formatting them.
//! * **Safety** ([`runtime`]): each wrapper returns exactly what the library returned; tracer
//!   code runs under `catch_unwind`; a re-entrancy guard passes calls made from inside MPI
//!   straight through; an internal failure disables tracing with one message on stderr. A
//!   rank killed by `SIGTERM`, `SIGINT` or `SIGABRT` writes its buffered lines ([`signals`]).
//! * **Compute** between MPI calls is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) from
//!   the end of one wrapper to the start of the next, times a reference speed measured at
//!   start-up ([`calibrate`]); the tracer's own time is outside the bursts. On request
//!   (`TIMELESS_COUNTERS`), user-space instructions between the same points, times the
//!   reference kernel's flops per instruction ([`counters`]), where every rank has the counter.
//! * **Switching** ([`control`]): `MPI_Pcontrol` and the info key `TIMELESS_TRACING` pause
//!   and resume recording from inside the program.
//! * **Files** ([`meta`], [`setup`]): `rank-<r>.txt`, `trace-list.txt`, `trace-meta.json`;
//!   with `TIMELESS_TIMESTAMPS=1`, `rank-<r>.timed.txt` and `timed-list.txt` ([`stamps`], which
//!   also injects per-event cost for experiments, `TIMELESS_INJECT_NS`).
//! * **Online compression** ([`online`], `TIMELESS_COMPRESS=1`): each rank compresses its
//!   records as they are written; the ranks merge at `MPI_Finalize` and rank 0 writes
//!   `trace.tlg`, the format of `timeless compress`.
//! * **Call sites** ([`callsite`], `TIMELESS_CALLSITES=1`): each action record of a call ends
//!   with `@cs=<id>`, the program's return address found by unwinding, listed with its module
//!   and offset in `callsites.txt` (rank 0, at `MPI_Finalize`).
//! * **Sessions** ([`session`]): a program that starts MPI with `MPI_Session_init` (MPI-4) is
//!   traced from its first session on, in the ranks of the `mpi://WORLD` process set, with a
//!   session and communicator of the tracer's own for its collective steps, until its last
//!   `MPI_Session_finalize`. Only built where `mpi.h` has sessions (MPICH 4).
//! * **Gathering** ([`gather`], called from [`finalize`]): with `TIMELESS_GATHER_OUT`, the
//!   ranks' files travel to rank 0's node over MPI (k-nomial tree) before `MPI_Finalize`.

pub mod args;
pub mod burst;
pub mod calibrate;
pub mod callsite;
pub mod clock;
pub mod control;
pub mod counters;
pub mod finalize;
pub mod flowcapture;
pub mod fortran;
pub mod gather;
pub mod hooks;
pub mod incall;
pub mod init;
pub mod meta;
pub mod mpi;
pub mod online;
pub mod parts;
pub mod profile;
pub mod record;
pub mod runtime;
pub mod session;
pub mod setup;
pub mod signals;
pub mod stamps;
pub mod table;
pub mod tracer;
pub mod writer;
