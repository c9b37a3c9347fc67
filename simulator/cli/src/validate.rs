//! `timeless validate`: predicted vs measured run time of an MPI program on this machine.
//!
//! For each rank count N:
//! 1. **measured**: the program runs `--reps` times untraced under the launcher; each run's wall
//!    time minus the median launch baseline (the same launcher line running
//!    `timeless-pingpong --empty`, i.e. `MPI_Init` + `MPI_Finalize`; `true` if that binary is
//!    missing, which leaves MPI start-up in the measurement) estimates the time from
//!    `MPI_Init` to `MPI_Finalize`, the span SimGrid's "Simulation time" covers;
//! 2. **traced** once with the tracer (as `timeless trace` does), with `TIMELESS_REF_SPEED` set
//!    to the calibrated host speed, so that a burst of t CPU seconds replays in t seconds;
//! 3. **predicted**: the trace replayed on the calibrated platform (`platform.xml`, `smpi.cfg`
//!    and `hostfile` of `timeless calibrate network`), ranks placed round-robin on its hosts;
//!    and **predicted@rate**: the same with the hosts' speed set to the wall-clock flop rate of
//!    the traced run's compute bursts (seed 003 §5's flop-rate calibration; the trace is taken
//!    with timestamps for this), which folds the CPU share the ranks really got into the speed.
//!
//! The table also gives the ranks' CPU share in the untraced runs (CPU time / (ranks × wall
//! time), read from `/proc/self/stat`): the tracer records compute as thread CPU time, so on a
//! machine shared with other work the measured wall time exceeds the prediction by about the
//! inverse of the share that was lost.
//!
//! The acquisition mode follows `timeless trace`: with more ranks than cores the ranks are
//! folded (oversubscribed), for the untraced runs too. Output: a table on stdout,
//! `validate.csv` and `validate.png`/`.svg` in `--out`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use plotters::style::RGBColor;
use timeless_calibrate::measurement::median;
use timeless_platform::{deployment, Platform, PlatformOptions};
use timeless_replay::{NoObserver, ReplayConfig, Simulation};
use timeless_trace::TraceSource;

use crate::calibrate::plot::{self, Chart, Series};
use crate::trace::{self, Implementation, Launch, Mode, Plan};
use crate::Failure;

/// Arguments of `timeless validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Rank counts, comma-separated.
    #[arg(
        short = 'n',
        long = "np",
        value_delimiter = ',',
        default_value = "2,4,8"
    )]
    pub np: Vec<usize>,
    /// Untraced runs per rank count (median, min and max are reported).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Ranks per core when folding: `auto` (fold only with more ranks than cores) or K.
    #[arg(long, default_value = "auto")]
    pub fold: String,
    /// Directory written by `timeless calibrate network` (platform.xml, smpi.cfg, hostfile).
    #[arg(long, default_value = "calibration")]
    pub calibration: PathBuf,
    /// Output directory (traces, validate.csv, plots).
    #[arg(long, default_value = "validation-out")]
    pub out: PathBuf,
    /// The MPI program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

fn find_launcher() -> anyhow::Result<(String, Implementation)> {
    for launcher in ["mpirun", "mpiexec"] {
        let Ok(out) = Command::new(launcher).arg("--version").output() else {
            continue;
        };
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        if let Some(imp) = trace::implementation_of(&text) {
            return Ok((launcher.to_string(), imp));
        }
    }
    bail!("no Open MPI or MPICH launcher (mpirun/mpiexec) found on PATH")
}

/// The launch line without the tracer's variables (`-x LD_PRELOAD=...`, `-x TIMELESS_*=...`,
/// `-genv LD_PRELOAD ...`).
fn untraced(launch: &Launch) -> Launch {
    let mut args = Vec::with_capacity(launch.args.len());
    let mut i = 0;
    let tracer_var = |v: &OsString| {
        let v = v.to_string_lossy();
        v.starts_with("LD_PRELOAD") || v.starts_with("TIMELESS_")
    };
    while i < launch.args.len() {
        let a = &launch.args[i];
        if a == "-x" && launch.args.get(i + 1).is_some_and(tracer_var) {
            i += 2;
        } else if a == "-genv" && launch.args.get(i + 1).is_some_and(tracer_var) {
            i += 3;
        } else {
            args.push(a.clone());
            i += 1;
        }
    }
    Launch {
        program: launch.program.clone(),
        args,
        env: launch.env.clone(),
    }
}

/// Adds `name=value` to the environment of every rank, before the program.
fn export(launch: &mut Launch, imp: Implementation, command_len: usize, name: &str, value: &str) {
    let at = launch.args.len() - command_len;
    let extra: Vec<OsString> = match imp {
        Implementation::OpenMpi => vec!["-x".into(), format!("{name}={value}").into()],
        Implementation::Mpich => vec!["-genv".into(), name.into(), value.into()],
    };
    launch.args.splice(at..at, extra);
}

/// CPU seconds (user + system) of this process's waited-for descendants: `cutime` + `cstime` of
/// `/proc/self/stat`, in clock ticks of 1/100 s (Linux's `USER_HZ`). mpirun waits for its
/// ranks, so a finished run adds the CPU time of every rank. 0 where `/proc` is missing.
fn children_cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; cutime and cstime are fields 16 and 17.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(13) + tick(14)) / 100.0
}

/// Runs `launch` once and returns its wall time and the CPU time of its processes, in seconds.
fn timed_run(launch: &Launch) -> anyhow::Result<(f64, f64)> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    let cpu0 = children_cpu_secs();
    let t0 = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("cannot start {}", launch.program.to_string_lossy()))?;
    let secs = t0.elapsed().as_secs_f64();
    let cpu = children_cpu_secs() - cpu0;
    if !out.status.success() {
        bail!(
            "{:?} {:?} failed ({}): {}",
            launch.program,
            launch.args,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok((secs, cpu))
}

fn find_empty_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let here = exe.parent()?.join("timeless-pingpong");
    if here.exists() {
        return Some(here);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("timeless-pingpong"))
            .find(|p| p.exists())
    })
}

/// One rank count's results.
struct Row {
    np: usize,
    measured: Vec<f64>,
    /// CPU share of the ranks in the untraced runs: CPU seconds / (ranks × wall seconds),
    /// median over the runs. Open MPI ranks poll while they wait, so a share well below
    /// min(1, cores/ranks) means other processes took the cores.
    cpu_share: f64,
    baseline_secs: f64,
    predicted_secs: f64,
    /// Wall-clock flop rate of the traced run's compute bursts (seed 003 §5), flop/s.
    trace_rate: Option<f64>,
    /// The replay with every host at `trace_rate`.
    trace_rate_predicted_secs: Option<f64>,
    mode: String,
}

fn replay_config(path: &Path) -> anyhow::Result<ReplayConfig> {
    let mut cfg = ReplayConfig::default();
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let item = line.strip_prefix("--cfg=").unwrap_or(line);
        cfg.set(item)
            .map_err(|e| anyhow!("{}:{}: {e}", path.display(), i + 1))?;
    }
    Ok(cfg)
}

/// The calibrated host speed: the `speed` of the first `<host>` of the platform, in flop/s.
fn platform_speed(platform: &Platform) -> anyhow::Result<f64> {
    platform
        .hosts()
        .first()
        .map(|h| h.speed_flops_per_sec)
        .ok_or_else(|| anyhow!("the calibrated platform has no host"))
}

/// Runs `timeless validate`.
pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    let input = Failure::Input;
    if args.np.is_empty() || args.np.contains(&0) || args.reps == 0 {
        return Err(input(anyhow!("-n needs rank counts >= 1 and --reps >= 1")));
    }
    let fold = match args.fold.as_str() {
        "auto" => None,
        k => Some(
            k.parse::<usize>()
                .ok()
                .filter(|&k| k >= 1)
                .ok_or_else(|| input(anyhow!("--fold: '{k}' is not 'auto' or a number >= 1")))?,
        ),
    };
    let cal = &args.calibration;
    let platform_path = cal.join("platform.xml");
    let platform =
        Platform::from_file(&platform_path, &PlatformOptions::default()).map_err(|e| {
            input(anyhow!(
                "{e} (run `timeless calibrate network --out {}` first)",
                cal.display()
            ))
        })?;
    let cfg = replay_config(&cal.join("smpi.cfg")).map_err(input)?;
    let hostfile = cal.join("hostfile");
    let speed = platform_speed(&platform).map_err(input)?;
    let (launcher, imp) = find_launcher().map_err(input)?;
    let exe = std::env::current_exe().map_err(|e| Failure::Other(e.into()))?;
    let preload = trace::find_preload(&exe).map_err(input)?;
    let preload = std::fs::canonicalize(&preload).unwrap_or(preload);
    let empty = find_empty_program();
    if empty.is_none() {
        eprintln!("timeless: notice: timeless-pingpong not found; the launch baseline is `true`, so MPI start-up stays in the measured times");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))
        .map_err(Failure::Other)?;
    let out = std::fs::canonicalize(&args.out).map_err(|e| Failure::Other(e.into()))?;

    let total = args.np.len() as u64 * (2 * args.reps as u64 + 2);
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} validate {bar:30} {pos}/{len} runs {elapsed} {msg}",
        )
        .expect("valid template"),
    );
    let mut rows = Vec::new();
    for &np in &args.np {
        let mode = trace::mode_for(np, fold, None, cores);
        let trace_dir = out.join(format!("trace-n{np}"));
        std::fs::create_dir_all(&trace_dir).map_err(|e| Failure::Other(e.into()))?;
        for entry in std::fs::read_dir(&trace_dir).map_err(|e| Failure::Other(e.into()))? {
            let p = entry.map_err(|e| Failure::Other(e.into()))?.path();
            if p.is_file() {
                let _ = std::fs::remove_file(p);
            }
        }
        let plan = Plan {
            implementation: imp,
            launcher: launcher.clone(),
            np,
            mode: mode.clone(),
            preload: preload.clone(),
            out: trace_dir.clone(),
            as_root: running_as_root(),
            extra_env: Vec::new(),
        };
        let program = untraced(&trace::launch_line(&plan, &args.command));
        let empty_cmd: Vec<OsString> = match &empty {
            Some(p) => vec![p.clone().into_os_string(), "--empty".into()],
            None => vec!["true".into()],
        };
        let baseline_launch = untraced(&trace::launch_line(&plan, &empty_cmd));
        let mut baseline = Vec::new();
        let mut measured = Vec::new();
        let mut shares = Vec::new();
        for _ in 0..args.reps {
            bar.set_message(format!("N={np}: launch baseline"));
            baseline.push(timed_run(&baseline_launch).map_err(Failure::Other)?.0);
            bar.inc(1);
            bar.set_message(format!("N={np}: untraced run"));
            let (wall, cpu) = timed_run(&program).map_err(Failure::Other)?;
            measured.push(wall);
            shares.push(cpu / (np as f64 * wall));
            bar.inc(1);
        }
        let baseline_secs = median(&baseline).expect("reps >= 1");
        bar.set_message(format!("N={np}: traced run"));
        let mut traced = trace::launch_line(&plan, &args.command);
        export(
            &mut traced,
            imp,
            args.command.len(),
            "TIMELESS_REF_SPEED",
            &format!("{speed:e}"),
        );
        export(
            &mut traced,
            imp,
            args.command.len(),
            "TIMELESS_TIMESTAMPS",
            "1",
        );
        timed_run(&traced).map_err(Failure::Other)?;
        bar.inc(1);
        bar.set_message(format!("N={np}: simulating"));
        let traces = TraceSource::open(&trace_dir.join("trace-list.txt"))
            .map_err(|e| Failure::Other(anyhow!("the traced run left no usable trace: {e}")))?;
        let predicted_secs = replay(&platform, &hostfile, np, &traces, &cfg)?;
        // The seed's flop rate: the wall-clock rate of this run's compute bursts.
        let trace_rate = timeless_calibrate::compute::run_rate(&trace_dir)
            .ok()
            .map(|r| r.flops_per_sec())
            .filter(|&r| r > 0.0);
        let trace_rate_predicted_secs = match trace_rate {
            Some(rate) => {
                let xml = std::fs::read_to_string(&platform_path)
                    .map_err(|e| Failure::Other(e.into()))?;
                let p = Platform::from_xml(
                    &with_host_speed(&xml, rate),
                    &platform_path.display().to_string(),
                    &PlatformOptions::default(),
                )
                .map_err(|e| Failure::Other(e.into()))?;
                Some(replay(&p, &hostfile, np, &traces, &cfg)?)
            }
            None => None,
        };
        bar.inc(1);
        rows.push(Row {
            np,
            measured: measured
                .iter()
                .map(|m| (m - baseline_secs).max(0.0))
                .collect(),
            cpu_share: median(&shares).expect("reps >= 1"),
            baseline_secs,
            predicted_secs,
            trace_rate,
            trace_rate_predicted_secs,
            mode: mode_name(&mode),
        });
    }
    bar.finish_and_clear();
    let table = table(&rows);
    print!("{table}");
    let csv = csv(&rows);
    std::fs::write(out.join("validate.csv"), csv).map_err(|e| Failure::Other(e.into()))?;
    std::fs::write(out.join("validate.txt"), &table).map_err(|e| Failure::Other(e.into()))?;
    let pts = |f: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.np as f64, f(r))).collect()
    };
    let (med, lo, hi, pred) = (
        pts(&|r| median(&r.measured).expect("reps")),
        pts(&|r| r.measured.iter().copied().fold(f64::INFINITY, f64::min)),
        pts(&|r| r.measured.iter().copied().fold(0.0, f64::max)),
        pts(&|r| r.predicted_secs),
    );
    let pred_rate: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.trace_rate_predicted_secs.map(|v| (r.np as f64, v)))
        .collect();
    let title = format!(
        "{}: measured vs predicted",
        Path::new(&args.command[0])
            .file_name()
            .map_or_else(|| "program".into(), |n| n.to_string_lossy().to_string())
    );
    let chart = Chart {
        title: &title,
        x_label: "ranks",
        y_label: "time from MPI_Init to MPI_Finalize (s)",
        series: vec![
            Series {
                label: "measured median",
                points: &med,
                markers: false,
                color: RGBColor(0, 0, 0),
                filled: true,
                size: 0,
            },
            Series {
                label: "measured min",
                points: &lo,
                markers: true,
                color: RGBColor(120, 120, 120),
                filled: true,
                size: 3,
            },
            Series {
                label: "measured max",
                points: &hi,
                markers: true,
                color: RGBColor(120, 120, 120),
                filled: false,
                size: 3,
            },
            Series {
                label: "predicted at the traced bursts' flop rate (seed 003 §5)",
                points: &pred_rate,
                markers: false,
                color: RGBColor(31, 119, 180),
                filled: false,
                size: 0,
            },
            Series {
                label: "predicted (timeless on the calibrated platform)",
                points: &pred,
                markers: false,
                color: RGBColor(214, 39, 40),
                filled: false,
                size: 0,
            },
        ],
    };
    match plot::write(&chart, &out.join("validate.png"), &out.join("validate.svg")) {
        Ok(()) => println!(
            "written: {0}/validate.csv, {0}/validate.png, {0}/validate.svg",
            out.display()
        ),
        Err(e) => eprintln!("timeless: notice: no plot: {e}"),
    }
    Ok(())
}

/// Replays `traces` on `platform` with ranks placed round-robin on the hosts of `hostfile`.
fn replay(
    platform: &Platform,
    hostfile: &Path,
    np: usize,
    traces: &TraceSource,
    cfg: &ReplayConfig,
) -> Result<f64, Failure> {
    let dep = deployment::from_hostfile(hostfile, platform, Some(np))
        .map_err(|e| Failure::Input(e.into()))?;
    let hosts: Vec<_> = dep.ranks.iter().map(|r| r.host).collect();
    let placement: Vec<_> = (0..np).map(|i| hosts[i % hosts.len()]).collect();
    let sim = Simulation::new(platform, &placement, traces, cfg.clone())
        .map_err(|e| Failure::Other(e.into()))?;
    let report = sim
        .run(&mut NoObserver)
        .map_err(|e| Failure::Other(e.into()))?;
    Ok(report.simulated_time_secs)
}

/// `xml` with every `speed="..."` attribute set to `flops_per_sec` (the platforms written by
/// `timeless calibrate network` have no other `speed` attribute).
fn with_host_speed(xml: &str, flops_per_sec: f64) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find("speed=\"") {
        let value_start = i + "speed=\"".len();
        out.push_str(&rest[..value_start]);
        out.push_str(&format!("{flops_per_sec:e}f"));
        let end = rest[value_start..]
            .find('"')
            .map_or(rest.len(), |j| value_start + j);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn mode_name(mode: &Mode) -> String {
    match mode {
        Mode::Regular => "regular".into(),
        Mode::Folding { ranks_per_core, .. } => format!("folded x{ranks_per_core}"),
        Mode::Scattered { .. } => "scattered".into(),
    }
}

fn error_pct(r: &Row) -> f64 {
    let m = median(&r.measured).expect("reps");
    100.0 * (r.predicted_secs - m) / m
}

fn table(rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut s = String::from(
        "ranks  mode          measured median       min       max   predicted   error  cpu share   trace rate  predicted@rate   error\n",
    );
    for r in rows {
        let m = median(&r.measured).expect("reps");
        let lo = r.measured.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.measured.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "{:>5}  {:<12} {:>14.6} {:>9.6} {:>9.6} {:>11.6} {:>+6.1}% {:>9.0}% {:>12} {:>15} {:>7}",
            r.np,
            r.mode,
            m,
            lo,
            hi,
            r.predicted_secs,
            error_pct(r),
            100.0 * r.cpu_share,
            r.trace_rate.map_or("-".into(), |v| format!("{v:.3e}")),
            r.trace_rate_predicted_secs
                .map_or("-".into(), |v| format!("{v:.6}")),
            r.trace_rate_predicted_secs
                .map_or("-".into(), |v| format!("{:+.1}%", 100.0 * (v - m) / m)),
        );
    }
    let _ = writeln!(
        s,
        "(seconds; measured = wall time of the launcher minus the median launch baseline: {};\n cpu share = CPU time of the ranks / (ranks x wall time), median of the untraced runs;\n trace rate = wall-clock flop rate of the traced run's compute bursts (seed 003 §5), predicted@rate = replay with hosts at that speed)",
        rows.iter()
            .map(|r| format!("N={} {:.3} s", r.np, r.baseline_secs))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s
}

fn csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "ranks,mode,measured_median_secs,measured_min_secs,measured_max_secs,launch_baseline_secs,predicted_secs,error_pct,cpu_share,trace_rate_flops_per_sec,trace_rate_predicted_secs,measured_secs\n",
    );
    for r in rows {
        let m = median(&r.measured).expect("reps");
        let lo = r.measured.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = r.measured.iter().copied().fold(0.0, f64::max);
        let all: Vec<String> = r.measured.iter().map(|x| format!("{x:.6}")).collect();
        s.push_str(&format!(
            "{},{},{m:.6},{lo:.6},{hi:.6},{:.6},{:.9},{:.2},{:.3},{},{},{}\n",
            r.np,
            r.mode,
            r.baseline_secs,
            r.predicted_secs,
            error_pct(r),
            r.cpu_share,
            r.trace_rate.map_or(String::new(), |v| format!("{v:.6e}")),
            r.trace_rate_predicted_secs
                .map_or(String::new(), |v| format!("{v:.9}")),
            all.join(" ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_speed_is_replaced() {
        let xml = r#"<host id="a" speed="1e9f" core="2"/><host id="b" speed="2Gf"/>"#;
        assert_eq!(
            with_host_speed(xml, 3.5e9),
            r#"<host id="a" speed="3.5e9f" core="2"/><host id="b" speed="3.5e9f"/>"#
        );
    }

    #[test]
    fn tracer_variables_are_stripped() {
        let l = Launch {
            program: "mpirun".into(),
            args: [
                "-np",
                "2",
                "-x",
                "LD_PRELOAD=/x.so",
                "-x",
                "TIMELESS_OUT=/o",
                "-x",
                "FOO=1",
                "./a",
            ]
            .map(OsString::from)
            .to_vec(),
            env: vec![],
        };
        let u = untraced(&l);
        assert_eq!(
            u.args,
            ["-np", "2", "-x", "FOO=1", "./a"]
                .map(OsString::from)
                .to_vec()
        );
    }
}
