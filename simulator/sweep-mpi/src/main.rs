//! `timeless-sweep-mpi SPEC.toml [-o DIR] [--max-points K]`, run under `mpirun`: the sweep of
//! `timeless sweep` with its points replayed by the MPI ranks (`timeless_sweep_mpi`). Rank 0
//! prints the summary. Exit codes as `timeless`: 0 success, 2 bad input or failed points,
//! 1 other errors.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mpi::traits::Communicator;

/// A `timeless sweep` distributed over the ranks of an MPI job.
#[derive(Debug, Parser)]
#[command(name = "timeless-sweep-mpi", version)]
struct Args {
    /// The study file (TOML), as `timeless sweep`'s.
    spec: PathBuf,
    /// Results directory (`results.csv`, `results.db`, `wall.csv`); a rerun resumes from it.
    /// Default: `STEM-results` next to the study file.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Run at most this many of the pending points, then stop (rerun to continue).
    #[arg(long = "max-points")]
    max_points: Option<usize>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(universe) = mpi::initialize() else {
        eprintln!("timeless-sweep-mpi: MPI is already initialised");
        return ExitCode::from(1);
    };
    let world = universe.world();
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| timeless_sweep_mpi::default_output(&args.spec));
    let mut options = timeless_sweep_mpi::Options::default();
    options.max_points = args.max_points;
    let code = match timeless_sweep_mpi::run(&world, &args.spec, &out, &options) {
        Ok(None) => 0,
        Ok(Some(summary)) => {
            print!("{}", timeless_sweep::summary_text(&summary));
            if summary.failed.is_empty() {
                0
            } else {
                eprintln!(
                    "timeless-sweep-mpi: {} point(s) failed; a rerun retries them",
                    summary.failed.len()
                );
                2
            }
        }
        Err(e) => {
            // A peer's failure is printed by that rank; rank 0 says which.
            if world.rank() == 0 || !matches!(e, timeless_sweep_mpi::DistError::Peer { .. }) {
                eprintln!("timeless-sweep-mpi: {}", timeless_sweep_mpi::chain(&e));
            }
            if e.is_input() {
                2
            } else {
                1
            }
        }
    };
    drop(universe);
    ExitCode::from(code)
}
