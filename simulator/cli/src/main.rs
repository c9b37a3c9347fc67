//! `timeless`: predict how long an MPI application takes on a platform, by replaying its
//! time-independent trace as SimGrid 3.32's SMPI does.
//!
//! Exit codes: 0 success, 2 bad input (trace, platform, deployment, configuration), 3 the replay
//! deadlocked, 1 anything else (I/O on output files).

mod calibrate;
mod compensate;
mod compress;
mod flowgraph;
mod memory;
mod output;
mod profile;
mod proxy;
mod simulate;
mod sweep;
mod trace;
mod validate;

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
    /// Remove the tracer's overhead from a timed trace (004 §3) and write the approximated timelines.
    Compensate(compensate::CompensateArgs),
    /// Run an MPI program under the tracer: `timeless trace -n 4 -- ./app args`.
    Trace(trace::TraceArgs),
    /// Measure this machine (ping-pong, reference kernel) and write a calibrated platform.
    Calibrate(calibrate::CalibrateArgs),
    /// Compress a TI trace into one file (call signature table + grammars merged across ranks).
    Compress(compress::CompressArgs),
    /// Expand a compressed trace back into per-rank TI text files and a list file.
    Decompress(compress::DecompressArgs),
    /// Print the sizes of a compressed trace (ranks, actions, terminals, rules, bytes per part).
    Stats(compress::StatsArgs),
    /// Predicted vs measured run time of an MPI program: `timeless validate -n 2,4 -- ./app`.
    Validate(validate::ValidateArgs),
    /// Read communicator-centric profiles (mpisee-through): `timeless profile run.db`,
    /// `timeless profile diff measured.db simulated.db`.
    Profile(profile::ProfileArgs),
    /// Event flow graphs (002_*) of a trace, or a trace rebuilt from its graph:
    /// `timeless flowgraph TRACE -o g.tfg`, `timeless flowgraph --reconstruct g.tfg -o DIR`.
    Flowgraph(flowgraph::FlowgraphArgs),
    /// A C MPI proxy application of a trace (Pilgrim 000_* §5): `timeless proxy TRACE -o DIR`.
    Proxy(proxy::ProxyArgs),
    /// A parameter study: `timeless sweep study.toml [-o DIR] [-j N]` replays every point (traces x
    /// axes), appends the results to DIR/results.csv and results.db (a rerun resumes), and
    /// prints the best point and each axis's sensitivity.
    Sweep(sweep::SweepArgs),
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

/// An error and its causes, `: `-separated as anyhow's `{:#}`, but a cause whose text the
/// message before it already contains is said once (many errors embed their source's text in
/// their own message).
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut last = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !last.is_empty() && last.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
        last = text;
    }
    out
}

fn main() -> ExitCode {
    // Output into a closed pipe (`timeless ... | head`) ends the process quietly, as it ends
    // `cat` or `grep`, instead of a panic in the first `println!` after the reader left (Rust
    // ignores SIGPIPE by default, so every write would fail with EPIPE).
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    memory::keep_freed_memory();
    let cli = Cli::parse();
    // Huge pages are off from before `main` for `simulate`'s sake (`memory`): every other
    // command gets the policy the process inherited back at once, since the programs it starts
    // (the traced application, benchmarks) inherit the flag.
    if !matches!(cli.command, Command::Simulate(_)) {
        memory::restore_huge_pages();
    }
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(args),
        Command::Compensate(args) => compensate::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Compress(args) => compress::run_compress(args),
        Command::Decompress(args) => compress::run_decompress(args),
        Command::Stats(args) => compress::run_stats(args),
        Command::Validate(args) => validate::run(args),
        Command::Profile(args) => profile::run(args),
        Command::Flowgraph(args) => flowgraph::run(args),
        Command::Proxy(args) => proxy::run(args),
        Command::Sweep(args) => sweep::run(args),
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
            eprintln!("timeless: error: {}", message(&e));
            ExitCode::from(code)
        }
    }
}
