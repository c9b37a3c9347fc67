//! `timeless`: predict how long an MPI application takes on a platform, by replaying its
//! time-independent trace as SimGrid 3.32's SMPI does.
//!
//! Exit codes: 0 success, 2 bad input (trace, platform, deployment, configuration), 3 the replay
//! deadlocked, 1 anything else (I/O on output files).

mod calibrate;
mod output;
mod simulate;
mod trace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Predict MPI run times by replaying time-independent traces (SimGrid 3.32 compatible).
#[derive(Debug, Parser)]
#[command(name = "timeless", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay a time-independent trace on a platform and print the predicted run time.
    Simulate(simulate::SimulateArgs),
    /// Run an MPI program under the tracer: `timeless trace -n 4 -- ./app args`.
    Trace(trace::TraceArgs),
    /// Measure this machine (ping-pong, reference kernel) and write a calibrated platform.
    Calibrate(calibrate::CalibrateArgs),
}

/// Errors the binary maps to exit codes.
#[derive(Debug)]
pub enum Failure {
    /// Bad input: exit 2.
    Input(anyhow::Error),
    /// Deadlocked replay: exit 3.
    Deadlock(anyhow::Error),
    /// Anything else: exit 1.
    Other(anyhow::Error),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Calibrate(args) => calibrate::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let (code, e) = match f {
                Failure::Input(e) => (2, e),
                Failure::Deadlock(e) => (3, e),
                Failure::Other(e) => (1, e),
            };
            // A closed stdout (e.g. `| head`) is not worth a message.
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("timeless: error: {e:#}");
            ExitCode::from(code)
        }
    }
}
