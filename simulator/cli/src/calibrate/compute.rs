//! `timeless calibrate compute`: the host speed in flop/s, measured with the reference kernel
//! (`timeless-refkernel`: the tracer converts CPU seconds into flops with the same kernel, so a
//! traced burst replays in its measured time on a host of this speed). With `--from-trace`, the
//! seed's method instead (003 §5): the flop rate of the compute bursts of traced runs
//! (`timeless trace --timestamps`), in flops per core-second so that folded acquisitions count
//! the cores their ranks shared (`timeless_calibrate::compute`), pooled over ranks, averaged
//! over runs; the seed's plain mean of per-rank wall-clock rates is printed next to it.

use clap::Args;

use crate::Failure;

/// Arguments of `timeless calibrate compute`.
#[derive(Debug, Args)]
pub struct ComputeArgs {
    /// Number of measurements; the median is reported (each takes about 0.1 s).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Trace directories of `timeless trace --timestamps` runs (repeat for several runs): report
    /// the bursts' wall-clock flop rate instead of running the kernel.
    #[arg(long, value_name = "DIR")]
    pub from_trace: Vec<std::path::PathBuf>,
}

/// Runs `timeless calibrate compute`.
pub fn run(args: ComputeArgs) -> Result<(), Failure> {
    if !args.from_trace.is_empty() {
        return from_trace(&args.from_trace);
    }
    let (speed, all) =
        timeless_calibrate::pipeline::measure_speed(args.runs, &mut super::Bars(None));
    let min = all.iter().copied().fold(f64::INFINITY, f64::min);
    let max = all.iter().copied().fold(0.0, f64::max);
    println!(
        "speed: {speed:.6e} flop/s (median of {} runs; min {min:.4e}, max {max:.4e})",
        all.len()
    );
    println!("kernel: daxpy y = a*x + y on 512 doubles, 2 flops per element, C -O2 scalar, thread CPU time");
    println!("platform: <host ... speed=\"{speed:.6e}f\"/>");
    Ok(())
}

fn from_trace(dirs: &[std::path::PathBuf]) -> Result<(), Failure> {
    use timeless_calibrate::compute::run_rate;
    let mut pooled = Vec::new();
    let mut seed = Vec::new();
    for dir in dirs {
        let run = run_rate(dir).map_err(|e| Failure::Input(e.into()))?;
        println!("{}:", dir.display());
        for (name, cores) in &run.hosts {
            match cores {
                Some(c) => println!("  host {name}: {c} core(s) for its ranks"),
                None => println!("  host {name}: cores unknown (no trace-meta.json): wall time taken as core time"),
            }
        }
        if run.bound_cpus.iter().any(Option::is_some) {
            let cpus: Vec<String> = run
                .bound_cpus
                .iter()
                .map(|c| c.map_or_else(|| "-".to_string(), |c| c.to_string()))
                .collect();
            println!(
                "  ranks pinned to CPUs {}: each burst shares its own core only",
                cpus.join(" ")
            );
        }
        for r in &run.ranks {
            println!(
                "  rank {}: {} bursts counted, {:.4e} flops in {:.6} s wall, {:.6} core-s: {:.4e} flop/s (all bursts: {:.4e} wall)",
                r.rank,
                r.bursts,
                r.flops,
                r.wall_secs,
                r.core_secs,
                r.flops_per_sec(),
                r.wall_flops_per_sec()
            );
        }
        let (p, m) = (run.flops_per_sec(), run.seed_flops_per_sec());
        println!(
            "  run: {p:.4e} flop/s pooled over ranks in core-seconds, from bursts of {:.0} us or more holding {:.1}% of the flops; seed's mean of wall rates {m:.4e}",
            timeless_calibrate::compute::MIN_RATE_BURST_SECS * 1e6,
            100.0 * run.coverage()
        );
        if run.usable_flops_per_sec().is_none() {
            eprintln!(
                "timeless: warning: {}: the counted bursts hold less than {:.0}% of the flops: the program mostly communicates and this rate times the tracer more than the host",
                dir.display(),
                100.0 * timeless_calibrate::compute::MIN_RATE_COVERAGE
            );
        }
        pooled.push(p);
        seed.push(m);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let speed = mean(&pooled);
    println!(
        "speed: {speed:.6e} flop/s (compute bursts' flops per core-second, mean of {} run(s); seed's mean of wall rates: {:.6e})",
        pooled.len(),
        mean(&seed)
    );
    println!("platform: <host ... speed=\"{speed:.6e}f\"/>");
    Ok(())
}
