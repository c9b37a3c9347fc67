//! timeless simulation kernel: the weighted max-min solver, an indexed event heap and the
//! CPU (Cas01) and network (CM02 with SMPI factors) models driving a discrete-event clock.
//!
//! Layers only look down: [`lmm`] knows constraints and variables; [`engine`] maps CPUs and links
//! to constraints and executions, transfers and sleeps to variables and dates.

pub mod engine;
pub mod factors;
pub mod heap;
pub mod lmm;
pub mod precision;
pub mod prefetch;
pub mod stats;

pub use engine::{ActivityId, Engine, NetworkConfig, PathId};
pub use factors::PiecewiseFactor;
pub use stats::KernelStats;
