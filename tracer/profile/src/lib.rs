//! Communicator-centric MPI profiles (mpisee, `001_*`), measured by the tracer or predicted by
//! a replay, stored in SQLite and read back as mpisee-through's tables.
//!
//! A profile attributes every MPI call to the communicator it ran on: per communicator,
//! operation, rank and power-of-two message-size bucket, the calls, the bytes (sent and
//! received separately for point-to-point; each rank's share of mpisee's lower-bound volume
//! for collectives) and the time inside the calls (sum, min, max). Wait and test time goes to
//! the communicator of the request completed.
//!
//! * [`naming`]: mpisee's names (`W`, `W_a1`, `W_s2.0`, `W_s2_c3.0`), computed from each rank's
//!   log of creation calls, consistent on every rank.
//! * [`volume`]: Appendix A's collective volumes, per rank. [`bucket`]: size buckets.
//!   [`action`]: what a time-independent action is as an MPI call (name, bytes).
//! * [`model`]: [`Profile`] = run metadata + communicators + rows. [`accumulate`]: what a rank
//!   (or a replayed rank) fills while it runs.
//! * [`store`]: the SQLite schema, atomic writes, checked reads.
//! * [`view`], [`diff`], [`check`], [`plot`]: tables, differences between two profiles, the
//!   point-to-point balance check of `001_*` §II, a bar chart.
//!
//! # Worked example
//!
//! Two ranks on `W`: rank 0 sends 40,000 bytes to rank 1 with `MPI_Send` in 2 ms; rank 1
//! receives them with `MPI_Recv` in 3 ms. The profile has two rows: (`W`, `MPI_Send`, rank 0,
//! bucket 16 = [32 KiB, 64 KiB), 1 call, 40,000 bytes sent, 0.002 s) and (`W`, `MPI_Recv`,
//! rank 1, bucket 16, 1 call, 40,000 bytes received, 0.003 s); sends balance receives.

pub mod accumulate;
pub mod action;
pub mod bucket;
pub mod check;
pub mod diff;
pub mod model;
pub mod naming;
pub mod op;
pub mod plot;
pub mod store;
pub mod view;
pub mod volume;

pub use model::{Communicator, LocalComm, Profile, Row, RunMeta, Source, Stats};
pub use store::StoreError;
