//! `timeless calibrate`: measure the machine and write a platform and SMPI configuration that
//! reproduce it (seed 003 §5).
//!
//! * `network`: ping-pong → piecewise-linear fit → `platform.xml`, `smpi.cfg`, plot.
//! * `compute`: host speed in flop/s with the reference kernel (`timeless-refkernel`, the same
//!   kernel the tracer uses to convert CPU time into flops).

mod compute;
mod network;
pub mod plot;

use clap::{Args, Subcommand};

use crate::Failure;

/// Arguments of `timeless calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Calibrate the network model from a ping-pong (run here with mpirun, or read from a file).
    Network(Box<network::NetworkArgs>),
    /// Measure the host speed in flop/s with the reference kernel.
    Compute(compute::ComputeArgs),
}

/// Runs `timeless calibrate`.
pub fn run(args: CalibrateArgs) -> Result<(), Failure> {
    match args.what {
        What::Network(a) => network::run(*a),
        What::Compute(a) => compute::run(a),
    }
}
