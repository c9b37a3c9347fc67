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
use indicatif::{ProgressBar, ProgressStyle};
use timeless_calibrate::pipeline::{Progress, Stage};

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

/// The progress bars of the calibration stages.
pub(crate) struct Bars(Option<ProgressBar>);

impl Progress for Bars {
    fn begin(&mut self, stage: Stage, len: u64) {
        let template = match stage {
            Stage::Benchmark => {
                "{spinner} ping-pong benchmark {bar:30} {pos}/{len} steps {elapsed}"
            }
            Stage::Kernel => "{spinner} reference kernel {pos}/{len} {elapsed}",
            Stage::SimulatePingPong => "{spinner} simulating the ping-pong {bar:30} {pos}/{len}",
            _ => "{spinner} simulating the exchange {bar:30} {pos}/{len}",
        };
        let bar = ProgressBar::new(len);
        bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
        self.0 = Some(bar);
    }

    fn position(&mut self, done: u64, len: u64) {
        if let Some(b) = &self.0 {
            b.set_length(len);
            b.set_position(done);
        }
    }

    fn step(&mut self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    fn end(&mut self) {
        if let Some(b) = self.0.take() {
            b.finish_and_clear();
        }
    }
}
