//! timeless-calibrate: instantiate a platform and SMPI configuration from measurements of the
//! real machine (seed 003 §5), with no MPI dependency.
//!
//! Pipeline (network):
//! 1. [`input`] reads ping-pong samples: the CSV of `validation/pingpong` (ping-pong round trips
//!    and the per-call costs of `MPI_Send`, `MPI_Isend`, `MPI_Recv`) or SKaMPI's
//!    `Pingpong_Send_Recv` log.
//! 2. [`measurement`] reduces them to per-size medians.
//! 3. [`network`] derives one-way network times, finds the eager/rendezvous switch and fits them
//!    with K linear segments whose breakpoints [`fit`] places by least squares (3 segments, 8
//!    parameters in the seed).
//! 4. [`simgrid`] turns each segment into `smpi/lat-factor` and `smpi/bw-factor` entries for the
//!    link written by [`platform_xml`], plus `smpi/os`, `smpi/or`, `smpi/ois` and
//!    `smpi/send-is-detached-thresh`, so that SimGrid's model reproduces the fitted line.
//! 5. [`pingpong_sim`] replays the ping-pong on our simulator with the written platform and
//!    configuration, to check the model against the measurements.
//!
//! [`pipeline`] strings the network steps together as `timeless calibrate network` runs them
//! (benchmark under mpirun, fit, platform, replay, files), with typed errors.
//!
//! Compute: [`compute`] derives a host's wall-clock flop rate from a traced run with
//! timestamps (seed 003 §5); the reference-kernel speed is in `timeless-refkernel`.

pub mod compute;
mod error;
pub mod fit;
pub mod input;
pub mod measurement;
pub mod network;
pub mod pingpong_sim;
pub mod pipeline;
pub mod platform_xml;
pub mod simgrid;

pub use error::CalibrateError;
