//! Trace replay.
pub mod collective;
