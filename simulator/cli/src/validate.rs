//! `timeless validate`: predicted vs measured run time of MPI programs on this machine.
//!
//! For each case (a program with its arguments at a rank count N; `-- PROGRAM ARGS` on every
//! `-n` count, or a `--cases` file, see [`cases`]):
//! 1. **measured**: the program runs `reps` times untraced under the launcher; each run's wall
//!    time minus the median launch baseline (the same launcher line running
//!    `timeless-pingpong --empty`, i.e. `MPI_Init` + `MPI_Finalize`, one baseline run before
//!    each program run; `true` if that binary is missing, which leaves MPI start-up in the
//!    measurement) estimates the time from `MPI_Init` to `MPI_Finalize`, the span SimGrid's
//!    "Simulation time" covers;
//! 2. **traced** once with the tracer (as `timeless trace` does), with timestamps and with
//!    `TIMELESS_REF_SPEED` set to the calibrated host speed, so that a burst of t CPU seconds
//!    is `t × speed` flops whichever acquisition mode and whatever the machine's load;
//! 3. **predicted**: the trace replayed on the calibrated platform (`platform.xml`, `smpi.cfg`
//!    and `hostfile` of `timeless calibrate network`), ranks placed round-robin on its hosts,
//!    so that ranks folded on a host's cores share them in the replay as they did in the run.
//!    A run folded K ranks per core is replayed with the calibration `fold<K>/` of the
//!    calibration directory when there is one (`timeless calibrate network --fold K`: the
//!    network as K ranks per core see it, each message also waiting for its receiver to get a
//!    core), with the hosts at the unfolded calibration's speed; else with the unfolded one.
//!
//! **Host speed** (`--compute-speed`): `trace` (default) sets the hosts to the flop rate of the
//! traced run's own compute bursts, in flops per core-second (seed 003 §5's calibration,
//! corrected for bursts sharing cores: `timeless_calibrate::compute`; from bursts of 100 µs or
//! more, and only if these hold half the flops, else the kernel speed); `kernel` keeps the
//! calibrated reference-kernel speed, which replays each burst in the CPU time it was measured
//! with. The rate folds in what CPU time does not show: the share of its core a burst really
//! got (ranks polling in MPI calls while others compute, other processes). With `trace` the
//! prediction does not depend on the reference speed at all (volumes and speed scale together).
//!
//! **Tracer overhead**: as `timeless simulate`, the replay removes the tracer's per-event cost
//! from the compute bursts (`trace-meta.json`, `timeless_compensate::CompensatedTrace`) unless
//! `--no-compensation`; the table shows the error the other way too.
//!
//! Diagnostics per case: the ranks' CPU share in the untraced runs (CPU time / (ranks × wall
//! time), from `/proc/self/stat`; the tracer records compute as thread CPU time, so on a
//! machine shared with other work the measured wall time exceeds the prediction by about the
//! inverse of the share that was lost), and the replay on a free network (the compute part)
//! and without computation (the communication part), to tell which action class an error
//! comes from.
//!
//! The acquisition mode follows `timeless trace`: with more ranks than cores the ranks are
//! folded (oversubscribed), for the untraced runs too; `--trace-fold K` (or `trace-fold=K` in a
//! cases file) folds the traced run only, to check that the acquisition mode does not change
//! the prediction (seed 003 §6.2). Output: a table on stdout and in `validate.txt`,
//! `validate.csv` and `validate.png`/`.svg` in `--out`, the traces in `--out`/`traces`.

mod cases;
mod plot;
mod report;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use timeless_calibrate::measurement::median;
use timeless_compensate::{CompensatedTrace, TraceMeta};
use timeless_platform::{deployment, Platform, PlatformOptions};
use timeless_replay::{NoObserver, ReplayConfig, Simulation};
use timeless_trace::{TraceSet, TraceSource};

use crate::Failure;
use cases::Case;
use report::{Predictions, Row, SpeedSource};
use timeless_launch::{self as trace, Implementation, Launch, Mode, Plan};

/// Arguments of `timeless validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Rank counts, comma-separated (with `-- PROGRAM`).
    #[arg(
        short = 'n',
        long = "np",
        value_delimiter = ',',
        default_value = "2,4,8"
    )]
    pub np: Vec<usize>,
    /// Untraced runs per case (median, min and max are reported).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Ranks per core when folding: `auto` (fold only with more ranks than cores) or K.
    #[arg(long, default_value = "auto")]
    pub fold: String,
    /// Fold the traced run only, K ranks per core on ⌈N/K⌉ cores (another acquisition mode).
    #[arg(long, value_name = "K")]
    pub trace_fold: Option<usize>,
    /// Host speed of the replay: the traced bursts' flop rate, or the calibrated kernel speed.
    #[arg(long, value_enum, default_value_t = SpeedSource::Trace)]
    pub compute_speed: SpeedSource,
    /// Replay the traces as recorded: do not remove the tracer's per-event overhead.
    #[arg(long)]
    pub no_compensation: bool,
    /// Directory written by `timeless calibrate network` (platform.xml, smpi.cfg, hostfile).
    #[arg(long, default_value = "calibration")]
    pub calibration: PathBuf,
    /// Output directory (traces, validate.csv, validate.txt, plots).
    #[arg(long, default_value = "validation-out")]
    pub out: PathBuf,
    /// Cases file: one `<label> <ranks> [fold=K] [trace-fold=K] [reps=R] <program> [args...]`
    /// per line, instead of `-- PROGRAM`.
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub cases: Option<PathBuf>,
    /// Directory of the programs named without a `/` in the cases file.
    #[arg(long, value_name = "DIR", requires = "cases")]
    pub bin_dir: Option<PathBuf>,
    /// The MPI program and its arguments, after `--`.
    #[arg(
        last = true,
        required_unless_present = "cases",
        value_name = "PROGRAM [ARGS]"
    )]
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

/// `program` if it names a file (a path with a directory part), else the first `PATH` entry
/// holding it.
fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
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

/// One network calibration: the files `timeless calibrate network` wrote in a directory.
struct Calibration {
    /// `base` for the calibration directory, `fold<K>` for its `fold<K>/`.
    name: String,
    /// The platform, hosts at the kernel speed.
    platform: Platform,
    /// Its text (hosts at the kernel speed).
    platform_xml: String,
    platform_path: PathBuf,
    hostfile: PathBuf,
    cfg: ReplayConfig,
}

/// Loads the calibration in `dir`; with `speed`, its hosts are set to that speed (a fold's
/// platform at the unfolded calibration's kernel speed, the one the traces are converted with).
fn load_calibration(dir: &Path, name: &str, speed: Option<f64>) -> anyhow::Result<Calibration> {
    let platform_path = dir.join("platform.xml");
    let text = std::fs::read_to_string(&platform_path).with_context(|| {
        format!(
            "cannot read {} (run `timeless calibrate network --out {}` first)",
            platform_path.display(),
            dir.display()
        )
    })?;
    let platform_xml = match speed {
        Some(v) => with_host_speed(&text, v),
        None => text,
    };
    let platform = Platform::from_xml(
        &platform_xml,
        &platform_path.display().to_string(),
        &PlatformOptions::default(),
    )?;
    Ok(Calibration {
        name: name.to_string(),
        platform,
        platform_xml,
        hostfile: dir.join("hostfile"),
        cfg: replay_config(&dir.join("smpi.cfg"))?,
        platform_path,
    })
}

/// The calibrations `<cal>/fold<K>/` (directories holding a `platform.xml`), by K.
fn load_fold_calibrations(
    cal: &Path,
    speed: f64,
) -> anyhow::Result<std::collections::BTreeMap<usize, Calibration>> {
    let mut folds = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(cal) else {
        return Ok(folds);
    };
    for entry in entries {
        let path = entry?.path();
        let Some(k) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("fold"))
            .and_then(|k| k.parse::<usize>().ok())
        else {
            continue;
        };
        if path.join("platform.xml").is_file() {
            folds.insert(
                k,
                load_calibration(&path, &format!("fold{k}"), Some(speed))?,
            );
        }
    }
    Ok(folds)
}

/// Everything the cases share.
struct Shared {
    launcher: String,
    imp: Implementation,
    preload: PathBuf,
    empty: Option<PathBuf>,
    cores: usize,
    /// The calibration directory's own (unfolded) calibration.
    base: Calibration,
    /// Its `fold<K>/` calibrations, by K.
    folds: std::collections::BTreeMap<usize, Calibration>,
    kernel_speed: f64,
    source: SpeedSource,
    compensate: bool,
    reps: usize,
    fold: Option<usize>,
    trace_fold: Option<usize>,
    out: PathBuf,
}

fn parse_fold(v: &str) -> Result<Option<usize>, Failure> {
    match v {
        "auto" => Ok(None),
        k => k
            .parse::<usize>()
            .ok()
            .filter(|&k| k >= 1)
            .map(Some)
            .ok_or_else(|| Failure::Input(anyhow!("--fold: '{k}' is not 'auto' or a number >= 1"))),
    }
}

/// Runs `timeless validate`.
pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    let input = Failure::Input;
    let fold = parse_fold(&args.fold)?;
    if args.trace_fold == Some(0) {
        return Err(input(anyhow!("--trace-fold needs a number >= 1")));
    }
    let cases = match &args.cases {
        Some(f) => cases::read(f, args.bin_dir.as_ref()).map_err(|e| input(anyhow!(e)))?,
        None => {
            if args.np.is_empty() || args.np.contains(&0) || args.reps == 0 {
                return Err(input(anyhow!("-n needs rank counts >= 1 and --reps >= 1")));
            }
            cases::from_command(&args.np, fold, &args.command)
        }
    };
    for case in &cases {
        let program = Path::new(&case.command[0]);
        if find_program(program).is_none() {
            return Err(input(anyhow!(
                "{} on {} ranks: program {} not found{}",
                case.label,
                case.np,
                program.display(),
                if program.components().count() > 1 {
                    ""
                } else {
                    " on PATH"
                }
            )));
        }
    }
    let cal = &args.calibration;
    let base = load_calibration(cal, "base", None).map_err(|e| {
        input(anyhow!(
            "{e:#} (run `timeless calibrate network --out {}` first)",
            cal.display()
        ))
    })?;
    let kernel_speed = platform_speed(&base.platform).map_err(input)?;
    let folds = load_fold_calibrations(cal, kernel_speed).map_err(|e| input(anyhow!("{e:#}")))?;
    let (launcher, imp) = find_launcher().map_err(input)?;
    let exe = std::env::current_exe().map_err(|e| Failure::Other(e.into()))?;
    let preload = trace::find_preload(&exe).map_err(|e| input(e.into()))?;
    let preload = std::fs::canonicalize(&preload).unwrap_or(preload);
    let empty = find_empty_program();
    if empty.is_none() {
        eprintln!("timeless: notice: timeless-pingpong not found; the launch baseline is `true`, so MPI start-up stays in the measured times");
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))
        .map_err(Failure::Other)?;
    let out = std::fs::canonicalize(&args.out).map_err(|e| Failure::Other(e.into()))?;
    let ctx = Shared {
        launcher,
        imp,
        preload,
        empty,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        base,
        folds,
        kernel_speed,
        source: args.compute_speed,
        compensate: !args.no_compensation,
        reps: args.reps,
        fold,
        trace_fold: args.trace_fold,
        out: out.clone(),
    };

    let total: u64 = cases
        .iter()
        .map(|c| 2 * c.reps.unwrap_or(args.reps) as u64 + 2)
        .sum();
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} validate {bar:30} {pos}/{len} runs {elapsed} {msg}",
        )
        .expect("valid template"),
    );
    let mut rows = Vec::new();
    for case in &cases {
        rows.push(run_case(case, &ctx, &bar)?);
    }
    bar.finish_and_clear();
    let table = report::table(&rows, ctx.source, ctx.compensate);
    print!("{table}");
    let write = |name: &str, text: &str| {
        std::fs::write(out.join(name), text)
            .with_context(|| format!("cannot write {}", out.join(name).display()))
            .map_err(Failure::Other)
    };
    write(
        "validate.csv",
        &report::csv(&rows, ctx.source, ctx.compensate),
    )?;
    write("validate.txt", &table)?;
    match plot::write(
        &rows,
        ctx.source,
        &out.join("validate.png"),
        &out.join("validate.svg"),
    ) {
        Ok(()) => println!(
            "written: {0}/validate.csv, {0}/validate.txt, {0}/validate.png, {0}/validate.svg",
            out.display()
        ),
        Err(e) => eprintln!("timeless: notice: no plot: {e}"),
    }
    Ok(())
}

/// Measures, traces and replays one case.
fn run_case(case: &Case, ctx: &Shared, bar: &ProgressBar) -> Result<Row, Failure> {
    let np = case.np;
    let tag = format!("{} N={np}", case.label);
    let mode = trace::mode_for(np, case.fold.or(ctx.fold), None, ctx.cores);
    let trace_mode = match case.trace_fold.or(ctx.trace_fold) {
        Some(k) => trace::mode_for(np, Some(k), None, ctx.cores),
        None => mode.clone(),
    };
    let calib = match &mode {
        Mode::Folding { ranks_per_core, .. } => match ctx.folds.get(ranks_per_core) {
            Some(c) => c,
            None => {
                bar.suspend(|| {
                    eprintln!(
                        "timeless: notice: {tag}: no fold{ranks_per_core}/ calibration (`timeless calibrate network --fold {ranks_per_core}`): replayed with the unfolded one"
                    )
                });
                &ctx.base
            }
        },
        _ => &ctx.base,
    };
    let trace_dir = ctx.out.join("traces").join(case.dir_name());
    std::fs::create_dir_all(&trace_dir)
        .with_context(|| format!("cannot create {}", trace_dir.display()))
        .map_err(Failure::Other)?;
    for entry in std::fs::read_dir(&trace_dir).map_err(|e| Failure::Other(e.into()))? {
        let p = entry.map_err(|e| Failure::Other(e.into()))?.path();
        if p.is_file() {
            let _ = std::fs::remove_file(p);
        }
    }
    let plan = |mode: &Mode| Plan {
        implementation: ctx.imp,
        launcher: ctx.launcher.clone(),
        np,
        mode: mode.clone(),
        preload: ctx.preload.clone(),
        out: trace_dir.clone(),
        as_root: running_as_root(),
        extra_env: Vec::new(),
    };
    let program = untraced(&trace::launch_line(&plan(&mode), &case.command));
    let empty_cmd: Vec<OsString> = match &ctx.empty {
        Some(p) => vec![p.clone().into_os_string(), "--empty".into()],
        None => vec!["true".into()],
    };
    let baseline_launch = untraced(&trace::launch_line(&plan(&mode), &empty_cmd));
    let mut baseline = Vec::new();
    let mut walls = Vec::new();
    let mut shares = Vec::new();
    for _ in 0..case.reps.unwrap_or(ctx.reps) {
        bar.set_message(format!("{tag}: launch baseline"));
        baseline.push(timed_run(&baseline_launch).map_err(Failure::Other)?.0);
        bar.inc(1);
        bar.set_message(format!("{tag}: untraced run"));
        let (wall, cpu) = timed_run(&program).map_err(Failure::Other)?;
        walls.push(wall);
        shares.push(cpu / (np as f64 * wall));
        bar.inc(1);
    }
    let baseline_secs = median(&baseline);
    bar.set_message(format!("{tag}: traced run"));
    let mut traced = trace::launch_line(&plan(&trace_mode), &case.command);
    let n = case.command.len();
    let speed = format!("{:e}", ctx.kernel_speed);
    export(&mut traced, ctx.imp, n, "TIMELESS_REF_SPEED", &speed);
    export(
        &mut traced,
        ctx.imp,
        n,
        "TIMELESS_REF_SPEED_SOURCE",
        "timeless validate: the calibrated platform's host speed",
    );
    export(&mut traced, ctx.imp, n, "TIMELESS_TIMESTAMPS", "1");
    let traced_wall = timed_run(&traced).map_err(Failure::Other)?.0;
    bar.inc(1);
    bar.set_message(format!("{tag}: simulating"));
    let traces = TraceSource::open(&trace_dir.join("trace-list.txt"))
        .map_err(|e| Failure::Other(anyhow!("the traced run left no usable trace: {e}")))?;
    let meta = TraceMeta::find(&trace_dir)
        .map_err(|e| Failure::Other(anyhow!("the traced run's metadata: {e}")))?
        .ok_or_else(|| {
            Failure::Other(anyhow!(
                "the traced run left no trace-meta.json in {}",
                trace_dir.display()
            ))
        })?;
    let rate = match timeless_calibrate::compute::run_rate(&trace_dir) {
        Ok(r) => Some(r),
        Err(e) => {
            bar.suspend(|| eprintln!("timeless: notice: {tag}: no flop rate from the trace: {e}"));
            None
        }
    };
    let trace_rate = rate.as_ref().and_then(|r| r.usable_flops_per_sec());
    let rate_coverage = rate.as_ref().map(|r| r.coverage());
    let trace_platform = match trace_rate {
        Some(rate) => Some(
            Platform::from_xml(
                &with_host_speed(&calib.platform_xml, rate),
                &calib.platform_path.display().to_string(),
                &PlatformOptions::default(),
            )
            .map_err(|e| Failure::Other(e.into()))?,
        ),
        None => None,
    };
    let chosen = match (ctx.source, &trace_platform) {
        (SpeedSource::Trace, Some(p)) => p,
        (SpeedSource::Trace, None) => {
            bar.suspend(|| {
                eprintln!(
                    "timeless: notice: {tag}: {:.0}% of the flops are in bursts whose gaps last {} us or more on average (below {:.0}%: the program mostly communicates): no flop rate, the kernel speed is used",
                    100.0 * rate_coverage.unwrap_or(0.0),
                    timeless_calibrate::compute::MIN_RATE_BURST_SECS * 1e6,
                    100.0 * timeless_calibrate::compute::MIN_RATE_COVERAGE
                )
            });
            &calib.platform
        }
        (SpeedSource::Kernel, _) => &calib.platform,
    };
    let replay = |platform: &Platform, cfg: &ReplayConfig, compensate: bool| {
        replay(
            platform,
            &calib.hostfile,
            np,
            &traces,
            &meta,
            cfg,
            compensate,
        )
    };
    let (kernel_secs, kernel_removed) = replay(&calib.platform, &calib.cfg, ctx.compensate)?;
    let trace_secs = match &trace_platform {
        Some(p) => Some(replay(p, &calib.cfg, ctx.compensate)?),
        None => None,
    };
    let (secs, removed) = match (ctx.source, trace_secs) {
        (SpeedSource::Trace, Some(t)) => t,
        _ => (kernel_secs, kernel_removed),
    };
    let trace_secs = trace_secs.map(|t| t.0);
    let other_compensation_secs = replay(chosen, &calib.cfg, !ctx.compensate)?.0;
    let compute_only_secs = replay(chosen, &free_network(&calib.cfg), ctx.compensate)?.0;
    let mut no_compute = calib.cfg.clone();
    no_compute
        .set("smpi/simulate-computation:no")
        .map_err(|e| Failure::Other(anyhow!(e)))?;
    let comm_only_secs = replay(chosen, &no_compute, ctx.compensate)?.0;
    bar.inc(1);
    Ok(Row {
        label: case.label.clone(),
        np,
        mode: mode_name(&mode, false),
        trace_mode: mode_name(&trace_mode, true),
        calibration: calib.name.clone(),
        measured: baseline_secs.map_or_else(Vec::new, |b| {
            walls.iter().map(|w| (w - b).max(0.0)).collect()
        }),
        baseline_secs,
        traced_secs: baseline_secs.map(|b| (traced_wall - b).max(0.0)),
        cpu_share: median(&shares),
        kernel_speed: ctx.kernel_speed,
        trace_rate,
        rate_coverage,
        trace_wall_rate: rate.map(|r| r.seed_flops_per_sec()).filter(|&r| r > 0.0),
        removed_secs: ctx.compensate.then_some(removed),
        predicted: Predictions {
            secs,
            kernel_secs,
            trace_secs,
            other_compensation_secs,
            compute_only_secs,
            comm_only_secs,
        },
    })
}

/// `cfg` on a network that costs nothing: no latency (`smpi/lat-factor` 0), a bandwidth a
/// million times the link's, and no per-call overheads (`smpi/os`, `smpi/or`, `smpi/ois`).
fn free_network(cfg: &ReplayConfig) -> ReplayConfig {
    let mut c = cfg.clone();
    for item in [
        "smpi/lat-factor:0:0",
        "smpi/bw-factor:0:1e6",
        "smpi/os:0:0:0",
        "smpi/or:0:0:0",
        "smpi/ois:0:0:0",
    ] {
        c.set(item).expect("valid setting");
    }
    c
}

/// Replays `traces` on `platform` with ranks placed round-robin on the hosts of `hostfile`,
/// the bursts compensated for the tracer's overhead when `compensate`. Returns the simulated
/// time and the mean compute time removed per rank, seconds.
fn replay(
    platform: &Platform,
    hostfile: &Path,
    np: usize,
    traces: &TraceSource,
    meta: &TraceMeta,
    cfg: &ReplayConfig,
    compensate: bool,
) -> Result<(f64, f64), Failure> {
    let dep = deployment::from_hostfile(hostfile, platform, Some(np))
        .map_err(|e| Failure::Input(e.into()))?;
    let hosts: Vec<_> = dep.ranks.iter().map(|r| r.host).collect();
    let placement: Vec<_> = (0..np).map(|i| hosts[i % hosts.len()]).collect();
    let compensated = compensate.then(|| CompensatedTrace::new(traces, meta));
    let set: &dyn TraceSet = match &compensated {
        Some(c) => c,
        None => traces,
    };
    let sim = Simulation::new(platform, &placement, set, cfg.clone())
        .map_err(|e| Failure::Other(e.into()))?;
    let report = sim
        .run(&mut NoObserver)
        .map_err(|e| Failure::Other(e.into()))?;
    let removed = compensated.map_or(0.0, |c| {
        let a = c.accounts();
        a.iter().map(|a| a.removed_secs).sum::<f64>() / a.len().max(1) as f64
    });
    Ok((report.simulated_time_secs, removed))
}

fn mode_name(mode: &Mode, cores: bool) -> String {
    match mode {
        Mode::Regular => "regular".into(),
        Mode::Folding {
            ranks_per_core,
            cores: c,
        } if cores => format!(
            "folded x{ranks_per_core} on {c} core{}",
            if *c == 1 { "" } else { "s" }
        ),
        Mode::Folding { ranks_per_core, .. } => format!("folded x{ranks_per_core}"),
        Mode::Scattered { .. } => "scattered".into(),
    }
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
