//! `timeless calibrate compute`: the host speed in flop/s, measured with the reference kernel
//! (`timeless-refkernel`: the tracer converts CPU seconds into flops with the same kernel, so a
//! traced burst replays in its measured time on a host of this speed).

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::Failure;

/// Arguments of `timeless calibrate compute`.
#[derive(Debug, Args)]
pub struct ComputeArgs {
    /// Number of measurements; the median is reported (each takes about 0.1 s).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

/// Median speed over `runs` measurements of the reference kernel, in flop/s, with a progress
/// bar. Also returns every measurement.
pub fn measure_speed(runs: usize) -> (f64, Vec<f64>) {
    let bar = ProgressBar::new(runs as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} reference kernel {pos}/{len} {elapsed}")
            .expect("valid template"),
    );
    let mut speeds = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        speeds.push(timeless_refkernel::reference_speed().flops_per_sec);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let median = timeless_calibrate::measurement::median(&speeds).expect("at least one run");
    (median, speeds)
}

/// Runs `timeless calibrate compute`.
pub fn run(args: ComputeArgs) -> Result<(), Failure> {
    let (speed, all) = measure_speed(args.runs);
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
