//! `timeless trace`: run an unmodified MPI program under the tracer ([`timeless_launch::trace`])
//! and print what its trace holds.
//!
//! The CLI does not link MPI: it finds the launcher (`mpirun`, else `mpiexec`), tells Open MPI
//! from MPICH by its `--version` text, and starts the program with the tracer library
//! (`libtimeless_preload.so`, built by `cargo build --release -p timeless-preload`) in
//! `LD_PRELOAD`. Acquisition modes (seed 003 §4.1):
//! * **regular**: one rank per core of this machine;
//! * **folding** (`--fold K`): K ranks per core, the run confined to ⌈N/K⌉ cores (`taskset` on
//!   the launcher, no binding, oversubscription allowed, idle ranks yield the core). Compute
//!   bursts are thread CPU time, so folding changes the wall time but not the trace;
//! * **scattered** (`--hostfile FILE`): ranks spread over the hosts of the file.
//!
//! The mode is written in `trace-meta.json` (`TIMELESS_MODE`). After the run every rank file
//! must exist and end with `finalize`; a summary names the ranks, actions, message bytes, and
//! the `timeless simulate` command to run next.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;
use timeless_launch::{
    check_online, check_text, counters_line, gathered, LaunchError, TraceConfig, TracedRun,
};

use crate::Failure;

/// Arguments of `timeless trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Number of MPI ranks.
    #[arg(short = 'n', long = "np", default_value_t = 1)]
    pub np: usize,
    /// Folding: K ranks per core, on ⌈N/K⌉ cores of this machine.
    #[arg(long, value_name = "K", conflicts_with = "hostfile")]
    pub fold: Option<usize>,
    /// Scattered mode: the launcher's hostfile (Open MPI `--hostfile`, MPICH `-f`).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Trace directory (created; old rank, list and metadata files in it are removed).
    #[arg(long, short = 'o', default_value = "timeless-trace")]
    pub out: PathBuf,
    /// Scattered mode without a shared file system: ranks write to a directory local to their
    /// host (the same temporary path on every host), and the tracer collects every rank's
    /// files into the output directory on rank 0's host over MPI at `MPI_Finalize` (k-nomial
    /// tree, seed 003 §4.3). Run `timeless trace` on rank 0's host.
    #[arg(long, requires = "hostfile")]
    pub gather: bool,
    /// Radix of the gather's k-nomial tree (⌈log_K N⌉ rounds).
    #[arg(long, value_name = "K", default_value_t = 4, requires = "gather",
          value_parser = clap::value_parser!(u32).range(2..))]
    pub gather_radix: u32,
    /// Also record every call's enter and exit times (`rank-<r>.timed.txt`, `timed-list.txt`),
    /// for `timeless compensate`.
    #[arg(long)]
    pub timestamps: bool,
    /// The MPI launcher to run (e.g. `mpirun.mpich` where several MPI implementations are
    /// installed); default `mpirun`, else `mpiexec`. The tracer library must be built against
    /// the same implementation (`TIMELESS_PRELOAD`).
    #[arg(long, value_name = "PROGRAM")]
    pub launcher: Option<String>,
    /// Online compression: the ranks compress their records as they run and merge them at
    /// MPI_Finalize; rank 0 writes `trace.tlg` (the format of `timeless compress`).
    #[arg(long)]
    pub compress: bool,
    /// With --compress: maximum relative error of each compute volume (0 = lossless).
    #[arg(long, requires = "compress", default_value_t = timeless_grammar::DEFAULT_PRECISION.as_f64())]
    pub precision: f64,
    /// With --compress: write only `trace.tlg`, no per-rank text files.
    #[arg(long, requires = "compress")]
    pub no_text: bool,
    /// Reference speed in flop/s that converts every rank's compute bursts (CPU seconds) into
    /// flops. Default: `TIMELESS_REF_SPEED` if set, else measured once here with the reference
    /// kernel (`timeless calibrate compute`'s) before the run; in scattered mode each host's
    /// ranks measure their own instead.
    #[arg(long, value_name = "FLOPS")]
    pub ref_speed: Option<f64>,
    /// Compute volumes from the hardware instruction counter (perf_event_open) instead of CPU
    /// time: instructions × the reference kernel's flops per instruction. Where a rank has no
    /// counter, CPU time × reference speed is used, with one notice (`TIMELESS_COUNTERS=1`).
    #[arg(long)]
    pub counters: bool,
    /// Also write a communicator-centric profile (mpisee, 001_*): `<out>/profile.db` (SQLite;
    /// read it with `timeless profile`), calls, bytes and wall time per communicator,
    /// operation, rank and message-size bucket.
    #[arg(long)]
    pub profile: bool,
    /// Write the profile only, no trace files (`<out>/profile.db`).
    #[arg(long, conflicts_with_all = ["profile", "compress", "timestamps", "gather"])]
    pub profile_only: bool,
    /// Also build each rank's event flow graph while the program runs (002_*):
    /// `<out>/flowgraph.tfg` (`timeless flowgraph --reconstruct` rebuilds the trace from it).
    #[arg(long)]
    pub flowgraph: bool,
    /// The flow graph only, no trace files (`<out>/flowgraph.tfg`).
    #[arg(long, conflicts_with_all = ["flowgraph", "compress", "timestamps", "gather", "profile_only"])]
    pub flowgraph_only: bool,
    /// Record the call site of every MPI call: each action line ends with `@cs=<id>`, and
    /// `<out>/callsites.txt` lists each id's module, offset, function, file and line (README
    /// "Call sites"). Such traces are replayed by timeless (SimGrid may misread the field).
    #[arg(long)]
    pub callsites: bool,
    /// The MPI program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

/// The exit-code class of a launch error.
pub(crate) fn failure(e: LaunchError) -> Failure {
    match e.kind() {
        timeless_launch::ErrorKind::Input => Failure::Input(e.into()),
        _ => Failure::Other(e.into()),
    }
}

/// Runs `timeless trace`.
pub fn run(args: TraceArgs) -> Result<(), Failure> {
    let mut config = TraceConfig::new(args.np, args.out.clone(), args.command.clone());
    config.fold = args.fold;
    config.hostfile = args.hostfile.clone();
    config.gather = args.gather;
    config.gather_radix = args.gather_radix;
    config.timestamps = args.timestamps;
    config.launcher = args.launcher.clone();
    config.compress = args.compress;
    config.precision = args.precision;
    config.no_text = args.no_text;
    config.ref_speed = args.ref_speed;
    config.counters = args.counters;
    config.profile = args.profile;
    config.profile_only = args.profile_only;
    config.flowgraph = args.flowgraph;
    config.flowgraph_only = args.flowgraph_only;
    config.callsites = args.callsites;
    let traced =
        timeless_launch::trace(&config, &mut |n| eprintln!("timeless: {n}")).map_err(failure)?;
    let out = traced.out.clone();
    if args.callsites {
        match timeless_launch::callsites::symbolise_dir(&out)
            .map_err(|e| Failure::Other(e.into()))?
        {
            Some((n, lines)) => println!(
                "call sites: {} ({n} sites, {lines} with a source line)",
                out.join(timeless_trace::callsites::FILE).display()
            ),
            None => eprintln!("timeless: the traced run wrote no call-site table"),
        }
    }
    if let Some(db) = &traced.profile_db {
        crate::profile::report_written(db)?;
        if args.profile_only {
            return Ok(());
        }
    }
    if let Some(graph_file) = traced.flowgraph_written().map_err(failure)? {
        println!(
            "flow graph: {} (`timeless flowgraph --reconstruct {} -o DIR`)",
            graph_file.display(),
            graph_file.display()
        );
        if args.flowgraph_only {
            return Ok(());
        }
    }
    if args.no_text {
        print_online(&out, args.np, false)?;
        if let Some(c) = counters_line(&out) {
            println!("  {c}");
        }
        return Ok(());
    }
    report(&traced, args.np)?;
    if args.compress {
        print_online(&out, args.np, true)?;
    }
    Ok(())
}

/// Checks every rank file and prints the summary.
fn report(traced: &TracedRun, np: usize) -> Result<(), Failure> {
    let out = traced.out.as_path();
    let total = check_text(out, np).map_err(|e| failure(traced.explain(e)))?;
    println!("Traced {np} ranks into {}", out.display());
    println!(
        "  {} actions, {} point-to-point bytes sent, {} bytes of trace",
        total.actions(),
        total.total.sent_bytes,
        total.file_bytes
    );
    let kinds: Vec<String> = total
        .total
        .actions
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!("  per kind: {}", kinds.join(", "));
    if let Some(g) = gathered(out) {
        println!("  {g}");
    }
    if let Some(c) = counters_line(out) {
        println!("  {c}");
    }
    println!(
        "Simulate with:\n  timeless simulate {} --platform PLATFORM.xml",
        out.join("trace-list.txt").display()
    );
    Ok(())
}

/// After `timeless trace --compress`: checks the online compressed trace of `np` ranks in
/// `out` and prints its summary; `text` when the text trace was written too.
fn print_online(out: &Path, np: usize, text: bool) -> Result<(), Failure> {
    let Some(c) = check_online(out, np, text).map_err(failure)? else {
        eprintln!(
            "timeless: no {}: online compression was abandoned (see the tracer's \
             message above); the text trace is complete",
            timeless_launch::ONLINE_FILE
        );
        return Ok(());
    };
    if !text {
        println!("Traced {np} ranks into {} (compressed only)", out.display());
    }
    let ratio = if text && c.bytes > 0 {
        format!(
            ", {:.1}x smaller than the text",
            c.text_bytes as f64 / c.bytes as f64
        )
    } else {
        String::new()
    };
    println!(
        "  compressed online: {} ({} bytes{ratio}; {} actions, {} terminals, {} unique grammars)",
        c.path.display(),
        c.bytes,
        c.stats.actions,
        c.stats.terminals,
        c.stats.unique_grammars
    );
    if text {
        println!(
            "  or, from the compressed trace:\n  timeless simulate {} --platform PLATFORM.xml",
            c.path.display()
        );
    } else {
        println!(
            "Simulate with:\n  timeless simulate {} --platform PLATFORM.xml",
            c.path.display()
        );
    }
    Ok(())
}
