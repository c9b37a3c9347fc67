//! timeless replay: time-independent MPI traces replayed on a platform with SMPI's semantics.
//!
//! [`Simulation`] reads each rank's actions as a stream, turns each into steps (posting sends
//! and receives, waiting, executing flops), matches messages as SimGrid 3.32's SMPI does
//! (reference §4) and lets the [`timeless_kernel`] engine time them. Collectives are decomposed
//! into point-to-point schedules by [`collective`].

mod calls;
pub mod collective;
mod collectives;
mod comm;
pub mod config;
pub mod error;
pub mod jobs;
mod mailbox;
pub mod profile;
mod rank;
pub mod report;
mod sim;

pub use config::{KeyEffect, PollFromTrace, ReplayConfig};
pub use error::{BlockedRank, Location, ReplayError};
pub use jobs::{Job, JobReport};
pub use profile::ProfileRecorder;
pub use report::{CallInfo, NoObserver, Observer, RankReport, Report, Tee};
pub use sim::{Simulation, ENVELOPE_BYTES};
