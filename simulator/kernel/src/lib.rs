//! Simulation kernel.
