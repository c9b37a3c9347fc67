//! Several jobs on one platform through the library, printed as `validation/multijob/driver`
//! prints SimGrid's: `job rank start end` per rank, then `makespan`, then each job's time and
//! its slowdown against running alone.
//!
//! `cargo run --release -p timeless-replay --example replay_jobs -- DESCRIPTION PLATFORM
//! [--deployment D | --hostfile H]`
use std::path::Path;

use timeless_platform::{Platform, PlatformOptions};
use timeless_replay::jobs::alone_times_secs;
use timeless_replay::jobs::description::{place_jobs, read_description, JobPlacement};
use timeless_replay::{NoObserver, ReplayConfig, Simulation};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err(
            "usage: replay_jobs DESCRIPTION PLATFORM [--deployment D | --hostfile H]".into(),
        );
    }
    let platform = Platform::from_file(Path::new(&args[1]), &PlatformOptions::default())?;
    let placement = match (args.get(2).map(String::as_str), args.get(3)) {
        (Some("--deployment"), Some(d)) => JobPlacement::Deployment(Path::new(d)),
        (Some("--hostfile"), Some(h)) => JobPlacement::Hostfile(Path::new(h)),
        _ => JobPlacement::Default,
    };
    let specs = read_description(Path::new(&args[0]))?;
    let inputs = place_jobs(&specs, placement, &platform)?;
    let jobs: Vec<_> = inputs.iter().map(|i| i.job()).collect();
    let cfg = ReplayConfig::default();
    let report = Simulation::with_jobs(&platform, &jobs, cfg.clone())?.run(&mut NoObserver)?;
    for j in &report.jobs {
        for r in j.first_rank..j.first_rank + j.ranks {
            let rr = &report.ranks[r as usize];
            println!(
                "{} {} {:.12} {:.12}",
                j.name,
                r - j.first_rank,
                rr.init_secs,
                rr.finish_secs
            );
        }
    }
    let end = report
        .ranks
        .iter()
        .map(|r| r.finish_secs)
        .fold(0.0, f64::max);
    println!("makespan {end:.12}");
    let alone = alone_times_secs(&platform, &jobs, &cfg)?;
    for (j, a) in report.jobs.iter().zip(alone) {
        println!(
            "job {} time {:.12} alone {:.12} slowdown {:.4}",
            j.name,
            j.time_secs,
            a,
            j.time_secs / a
        );
    }
    Ok(())
}
