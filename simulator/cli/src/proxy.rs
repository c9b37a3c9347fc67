//! `timeless proxy`: a C MPI proxy application generated from a trace (Pilgrim `000_*` §5).
//! Logic lives in `timeless-proxy`; this parses, calls and prints.

use std::path::PathBuf;

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use timeless_proxy::{ComputeMode, ProxyOptions};

use crate::Failure;

/// Arguments of `timeless proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// A trace (list file, shared file or compressed `.tlg`).
    pub trace: PathBuf,
    /// Directory to write `proxy.c` and `Makefile` into (`make` there builds `proxy`).
    #[arg(short = 'o', long)]
    pub out: PathBuf,
    /// Compute bursts as calibrated busy work (`busy`), sleeps, or nothing.
    #[arg(long, value_enum, default_value_t = Compute::Busy)]
    pub compute: Compute,
    /// Multiply every compute duration by F (> 0).
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale_compute: f64,
    /// Multiply every message and collective size by F (> 0; at least one element).
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale_bytes: f64,
    /// Reference speed of the trace's flops, flop/s (default: each rank's from the tracer's
    /// `trace-meta.json` next to the trace, else 1e9).
    #[arg(long, value_name = "FLOP/S")]
    pub ref_speed: Option<f64>,
    /// Ranks whose computations before a call differ by less than this (relative) share code.
    #[arg(long, default_value_t = 0.05)]
    pub precision: f64,
    /// Ranks (default: as many as the trace list names).
    #[arg(short = 'n', long = "np")]
    pub np: Option<u32>,
    /// Keep the tracer's per-event cost in the compute bursts. By default it is removed, as
    /// `timeless simulate` does (KOJAK-style compensation, `trace-meta.json`): a program that
    /// makes millions of calls (an `MPI_Test` poll) would otherwise burn the tracer's time as
    /// busy work.
    #[arg(long)]
    pub no_compensation: bool,
}

/// `--compute` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compute {
    /// Busy work of the burst's duration on the reference machine.
    Busy,
    /// Sleep for that duration.
    Sleep,
    /// No computation.
    None,
}

/// Runs `timeless proxy`.
pub fn run(args: ProxyArgs) -> Result<(), Failure> {
    let input = |e: anyhow::Error| Failure::Input(e);
    for (name, v) in [
        ("--scale-compute", args.scale_compute),
        ("--scale-bytes", args.scale_bytes),
        ("--precision", args.precision),
        ("--ref-speed", args.ref_speed.unwrap_or(1.0)),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(input(anyhow!(
                "{name}: expected a finite number > 0, got {v}"
            )));
        }
    }
    let opened = timeless_run::open_trace(&args.trace).map_err(crate::simulate::failure)?;
    let n = opened
        .rank_count(args.np, &args.trace)
        .map_err(crate::simulate::failure)?;
    let meta = match opened.embedded_meta.clone() {
        Some(bytes) => Some(
            timeless_run::embedded_tracer_meta(&args.trace, bytes)
                .map_err(crate::simulate::failure)?,
        ),
        None => timeless_compensate::TraceMeta::find_near(
            Some(&args.trace),
            opened.first_file.as_deref(),
        )
        .map_err(|e| input(e.into()))?
        .ok(),
    };
    let speeds = match (args.ref_speed, &meta) {
        (Some(s), _) => vec![s],
        (None, Some(m)) => m.speed_flops_per_sec.clone(),
        (None, None) => vec![1e9],
    };
    let compensated = match (&meta, args.no_compensation) {
        (Some(m), false) => Some(timeless_compensate::CompensatedTrace::new(&*opened.set, m)),
        _ => None,
    };
    let set: &dyn timeless_trace::TraceSet = match &compensated {
        Some(c) => c,
        None => &*opened.set,
    };
    let opts = ProxyOptions {
        compute: match args.compute {
            Compute::Busy => ComputeMode::Busy,
            Compute::Sleep => ComputeMode::Sleep,
            Compute::None => ComputeMode::None,
        },
        scale_compute: args.scale_compute,
        scale_bytes: args.scale_bytes,
        precision: args.precision,
    };
    let proxy = timeless_proxy::generate(set, n, &speeds, &opts).map_err(|e| input(e.into()))?;
    proxy
        .write_to(&args.out)
        .context("writing the proxy")
        .map_err(Failure::Other)?;
    let m = &proxy.model;
    println!(
        "{} ranks, {} calls, {} distinct calls, {} grammars, {} rank groups, {:.6} s of computation -> {} ({} bytes of C)",
        m.nranks,
        m.calls,
        m.terminals.len(),
        m.grammars.len(),
        m.groups.len(),
        m.compute_secs,
        args.out.join("proxy.c").display(),
        proxy.source.len()
    );
    match (&compensated, args.no_compensation) {
        (Some(c), _) => {
            let a = c.accounts();
            let removed = a.iter().map(|a| a.removed_secs).sum::<f64>() / a.len().max(1) as f64;
            println!(
                "tracer overhead compensated: {removed:.6} s removed per rank (mean; --no-compensation keeps it)"
            );
        }
        (None, false) => {
            println!("tracer overhead not compensated: no trace-meta.json next to the trace")
        }
        (None, true) => {}
    }
    Ok(())
}
