//! `timeless-validate`: predicted vs measured run time of MPI programs on this machine, the
//! pipeline behind `timeless validate`, for every front end.
//!
//! For each case (a program with its arguments at a rank count N; `-- PROGRAM ARGS` on every
//! `-n` count, or a `--cases` file, see [`cases`]):
//! 1. **measured**: the program runs `reps` times untraced under the launcher; each run's wall
//!    time minus the median launch baseline (the same launcher line running
//!    `timeless-pingpong --empty`, i.e. `MPI_Init` + `MPI_Finalize`, one baseline run before
//!    each program run; `true` if that binary is missing, which leaves MPI start-up in the
//!    measurement) estimates the time from `MPI_Init` to `MPI_Finalize`, the span SimGrid's
//!    "Simulation time" covers;
//! 2. **traced** once (or `--traces K` times, spread among the untraced runs: the prediction is
//!    then the median of the K traced runs' predictions) with the tracer (as `timeless trace`
//!    does), with timestamps and with
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
//! **Extra settings**: [`ValidateConfig::extra_cfg`] (`--cfg KEY:VALUE`) overrides the
//! calibrations' `smpi.cfg` in every replay, to try a model change on the cases.
//!
//! **Pinned runs** (`--pin`: rank r of a host's ranks bound to core r mod C, folded runs
//! included) replay with `timeless/pin-ranks` and `timeless/poll-cpu-from-trace:taken`: each
//! rank spends on its core the part of its traced in-call CPU time during which a core-mate
//! computed (`timeless_calibrate::compute::taken_shares`; none on a core of its own), as Open
//! MPI's progress loop took the core from computing ranks in the traced run. Checked on both
//! sets (`validation/external/README.md`, session 40: against the traced runs the external
//! set's mean error -6.5 -> -2.8 %, the corpus's -3.2 -> -1.0 %). A `smpi.cfg` or `--cfg` that
//! names the key wins (`--cfg timeless/poll-cpu-from-trace:no`: waiting free, as SimGrid).
//!
//! **Re-prediction** ([`repredict()`], `timeless validate --from DIR`): the measured times and
//! the traces of an earlier validation replayed again with another calibration or setting, no
//! program run, so that every model variant is judged by the same measurements.
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

//!
//! [`validate`] runs the cases of a [`ValidateConfig`] and returns a [`Validation`], whose
//! rows ([`report::Row`]) hold the measured and predicted times; [`report::table`] and
//! [`report::csv`] render them ([`Validation::write_tables`] writes both). A front end sees
//! the progress through the [`Progress`] trait (the binary draws a progress bar).
//!
//! ```no_run
//! use timeless_validate::{cases, validate, Progress, ValidateConfig};
//!
//! struct Quiet;
//! impl Progress for Quiet {
//!     fn message(&mut self, _: &str) {}
//!     fn step(&mut self) {}
//!     fn notice(&mut self, text: &str) {
//!         eprintln!("{text}");
//!     }
//! }
//!
//! let cases = cases::from_command(&[2, 4], None, &["./ring".into()]);
//! let config = ValidateConfig::new(cases, "calibration".into(), "validation-out".into());
//! let v = validate(&config, &mut Quiet).expect("validated");
//! for row in &v.rows {
//!     println!("{} on {}: {:+.1}%", row.label, row.np, row.error_pct().unwrap_or(f64::NAN));
//! }
//! ```

pub mod cases;
mod prediction;
pub mod report;
pub mod repredict;

pub use repredict::{repredict, RepredictConfig};

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use timeless_calibrate::measurement::median;
use timeless_launch::{self as launch, Implementation, LaunchError, Mode, PathError, Plan};
use timeless_platform::PlatformError;
use timeless_replay::ReplayError;

use cases::Case;
use prediction::Models;
use report::{Row, SpeedSource};

/// What [`validate`] can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ValidateError {
    /// A case's program is not a file (or not on `PATH` for a bare name).
    #[error(
        "{label} on {np} ranks: program {} not found{}",
        program.display(),
        if program.components().count() > 1 { "" } else { " on PATH" }
    )]
    ProgramNotFound {
        /// The case's label.
        label: String,
        /// Its ranks.
        np: usize,
        /// The program.
        program: PathBuf,
    },
    /// The calibration directory's own calibration does not load (the message says why).
    #[error("{text} (run `timeless calibrate network --out {}` first)", dir.display())]
    Calibration {
        /// What went wrong, with its causes.
        text: String,
        /// The calibration directory.
        dir: PathBuf,
    },
    /// A `fold<K>/` calibration does not load (the message says why, with its causes).
    #[error("{0}")]
    FoldCalibration(String),
    /// The calibrated platform has no host.
    #[error("the calibrated platform has no host")]
    NoHost,
    /// Neither an Open MPI nor an MPICH launcher is on `PATH`.
    #[error("no Open MPI or MPICH launcher (mpirun/mpiexec) found on PATH")]
    NoLauncher,
    /// The tracer library is missing, or a run failed.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// A directory cannot be created or a report file written.
    #[error(transparent)]
    File(#[from] PathError),
    /// Another I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The traced run's trace does not open.
    #[error("the traced run left no usable trace: {0}")]
    NoUsableTrace(String),
    /// The traced run's `trace-meta.json` does not decode.
    #[error("the traced run's metadata: {0}")]
    TraceMeta(String),
    /// The traced run left no `trace-meta.json`.
    #[error("the traced run left no trace-meta.json in {}", .0.display())]
    NoTraceMeta(PathBuf),
    /// The calibration's hostfile does not place the ranks.
    #[error(transparent)]
    Deployment(Box<PlatformError>),
    /// A platform at the traced run's flop rate does not load.
    #[error(transparent)]
    Platform(Box<PlatformError>),
    /// A replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A replay setting was refused.
    #[error("{0}")]
    Config(String),
    /// A setting of [`ValidateConfig::extra_cfg`] was refused (the message names it).
    #[error("{0}")]
    BadSetting(String),
    /// The earlier validation [`repredict()`] reads is unusable (the message names the file
    /// and line).
    #[error("{0}")]
    EarlierValidation(String),
}

impl From<PlatformError> for ValidateError {
    fn from(e: PlatformError) -> Self {
        ValidateError::Platform(Box::new(e))
    }
}

/// The class of a [`ValidateError`], which the binary maps to its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: cases, calibration, launcher, tracer library (exit 2).
    Input,
    /// A run, a replay or an output failed (exit 1).
    Other,
}

impl ValidateError {
    /// Which class of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ValidateError::ProgramNotFound { .. }
            | ValidateError::Calibration { .. }
            | ValidateError::FoldCalibration(_)
            | ValidateError::NoHost
            | ValidateError::NoLauncher
            | ValidateError::Deployment(_)
            | ValidateError::BadSetting(_)
            | ValidateError::EarlierValidation(_) => ErrorKind::Input,
            ValidateError::Launch(e) if e.kind() == launch::ErrorKind::Input => ErrorKind::Input,
            _ => ErrorKind::Other,
        }
    }
}

/// `e` and its causes, joined by `: ` (as the binary prints an error).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// What the front end sees of a validation in progress.
pub trait Progress {
    /// Called once before the first run with the number of steps to come (each case: two per
    /// repetition, the traced run, the replays).
    fn start(&mut self, _steps: u64) {}
    /// What is being done now (`<label> N=<ranks>: untraced run`).
    fn message(&mut self, text: &str);
    /// One step done.
    fn step(&mut self);
    /// A notice for the user (a missing fold calibration, no flop rate from a trace).
    fn notice(&mut self, text: &str);
}

/// Everything [`validate`] needs. Build it with [`ValidateConfig::new`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ValidateConfig {
    /// The cases ([`cases::from_command`], [`cases::read`]).
    pub cases: Vec<Case>,
    /// Untraced runs per case, unless the case says otherwise.
    pub reps: usize,
    /// Traced runs per case (at least 1). With more than one they are spread among the
    /// untraced runs (so that the machine's drift hits both alike), each goes to its own
    /// directory `traces/<case>/<i>/`, and the case's prediction is the median of theirs
    /// (the lower middle one of an even count): one traced run is one sample of the run's noise, which
    /// the prediction inherits. With one, it runs after the untraced runs, into
    /// `traces/<case>/`.
    pub traces: usize,
    /// Ranks per core of every case's runs (`None`: fold only with more ranks than cores).
    pub fold: Option<usize>,
    /// Ranks per core of the traced runs only.
    pub trace_fold: Option<usize>,
    /// Folded runs (untraced and traced) pinned, rank r bound to core r mod C
    /// ([`launch::Plan::pin`]) instead of unbound; replayed with their calibration's ranks
    /// pinned the same way (`timeless/pin-ranks`; the rows name it `fold<K>-pinned`).
    pub pin: bool,
    /// Host speed of the replay.
    pub source: SpeedSource,
    /// Remove the tracer's per-event overhead in the replay.
    pub compensate: bool,
    /// SimGrid settings (`KEY:VALUE`) applied after each calibration's `smpi.cfg`, in every
    /// replay (a model change tried on the cases without editing the calibration).
    pub extra_cfg: Vec<String>,
    /// Directory written by `timeless calibrate network` (`platform.xml`, `smpi.cfg`,
    /// `hostfile`, optionally `fold<K>/`).
    pub calibration: PathBuf,
    /// Output directory (traces in `traces/`, the tables).
    pub out: PathBuf,
}

impl ValidateConfig {
    /// `cases` with the calibration in `calibration` and the output in `out`; 5 repetitions,
    /// automatic folding, the traced bursts' speed, compensation on.
    pub fn new(cases: Vec<Case>, calibration: PathBuf, out: PathBuf) -> Self {
        ValidateConfig {
            cases,
            reps: 5,
            traces: 1,
            fold: None,
            trace_fold: None,
            pin: false,
            source: SpeedSource::Trace,
            compensate: true,
            extra_cfg: Vec::new(),
            calibration,
            out,
        }
    }
}

/// The results of [`validate`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Validation {
    /// One row per case, in order.
    pub rows: Vec<Row>,
    /// The output directory, canonical.
    pub out: PathBuf,
    /// The host speed source used.
    pub source: SpeedSource,
    /// Whether the replays were compensated.
    pub compensate: bool,
}

impl Validation {
    /// The table printed and written to `validate.txt` ([`report::table`]).
    pub fn table(&self) -> String {
        report::table(&self.rows, self.source, self.compensate)
    }

    /// Writes `validate.csv` and `validate.txt` into the output directory.
    ///
    /// # Errors
    /// [`ValidateError::File`] naming the file that cannot be written.
    pub fn write_tables(&self) -> Result<(), ValidateError> {
        let write = |name: &str, text: &str| {
            let path = self.out.join(name);
            std::fs::write(&path, text).map_err(PathError::at("write", &path))
        };
        write(
            "validate.csv",
            &report::csv(&self.rows, self.source, self.compensate),
        )?;
        Ok(write("validate.txt", &self.table())?)
    }
}

/// Measures, traces and replays every case of `config` (module docs), reporting to
/// `progress`.
///
/// # Errors
/// A [`ValidateError`]; [`ValidateError::kind`] tells bad input from a failed run.
pub fn validate(
    config: &ValidateConfig,
    progress: &mut dyn Progress,
) -> Result<Validation, ValidateError> {
    for case in &config.cases {
        let program = Path::new(&case.command[0]);
        if launch::find_program(program).is_none() {
            return Err(ValidateError::ProgramNotFound {
                label: case.label.clone(),
                np: case.np,
                program: program.to_path_buf(),
            });
        }
    }
    let models = Models::load(
        &config.calibration,
        &config.extra_cfg,
        config.source,
        config.compensate,
    )?;
    let (launcher, imp) = launch::find_launcher(None).map_err(|_| ValidateError::NoLauncher)?;
    let exe = std::env::current_exe()?;
    let preload = launch::find_preload(&exe)?;
    let preload = std::fs::canonicalize(&preload).unwrap_or(preload);
    let empty = launch::find_companion("timeless-pingpong");
    if empty.is_none() {
        progress.notice("timeless-pingpong not found; the launch baseline is `true`, so MPI start-up stays in the measured times");
    }
    std::fs::create_dir_all(&config.out).map_err(PathError::at("create", &config.out))?;
    let out = std::fs::canonicalize(&config.out)?;
    let ctx = Shared {
        launcher,
        imp,
        preload,
        empty,
        cores: launch::available_cores(),
        models,
        reps: config.reps,
        traces: config.traces.max(1),
        fold: config.fold,
        trace_fold: config.trace_fold,
        pin: config.pin,
        out: out.clone(),
    };
    let total: u64 = config
        .cases
        .iter()
        .map(|c| 2 * (c.reps.unwrap_or(config.reps) + config.traces.max(1)) as u64)
        .sum();
    progress.start(total);
    let mut rows = Vec::new();
    for case in &config.cases {
        rows.push(run_case(case, &ctx, progress)?);
    }
    Ok(Validation {
        rows,
        out,
        source: config.source,
        compensate: config.compensate,
    })
}

/// Everything the cases share.
struct Shared {
    launcher: String,
    imp: Implementation,
    preload: PathBuf,
    empty: Option<PathBuf>,
    cores: usize,
    models: Models,
    reps: usize,
    traces: usize,
    fold: Option<usize>,
    trace_fold: Option<usize>,
    pin: bool,
    out: PathBuf,
}

/// Measures, traces and replays one case.
fn run_case(case: &Case, ctx: &Shared, bar: &mut dyn Progress) -> Result<Row, ValidateError> {
    let np = case.np;
    let tag = format!("{} N={np}", case.label);
    let mode = launch::mode_for(np, case.fold.or(ctx.fold), None, ctx.cores);
    let trace_mode = match case.trace_fold.or(ctx.trace_fold) {
        Some(k) => launch::mode_for(np, Some(k), None, ctx.cores),
        None => mode.clone(),
    };
    let calib = match &mode {
        Mode::Folding { ranks_per_core, .. } => match ctx.models.folds.get(ranks_per_core) {
            Some(c) => c,
            None => {
                bar.notice(&format!(
                    "{tag}: no fold{ranks_per_core}/ calibration (`timeless calibrate network --fold {ranks_per_core}`): replayed with the unfolded one"
                ));
                &ctx.models.base
            }
        },
        _ => &ctx.models.base,
    };
    let folded = matches!(mode, Mode::Folding { .. }) || matches!(trace_mode, Mode::Folding { .. });
    let calib = if ctx.pin && folded {
        ctx.models.pinned(calib)
    } else {
        calib
    };
    let pinned = |name: String, m: &Mode| {
        if ctx.pin && matches!(m, Mode::Folding { .. }) {
            name + " pinned"
        } else {
            name
        }
    };
    let trace_dir = ctx.out.join("traces").join(case.dir_name());
    std::fs::create_dir_all(&trace_dir).map_err(PathError::at("create", &trace_dir))?;
    for entry in std::fs::read_dir(&trace_dir)? {
        let p = entry?.path();
        if p.is_file() {
            let _ = std::fs::remove_file(p);
        } else if p.join("trace-list.txt").is_file() {
            // A traced run of an earlier `--traces K` validation.
            let _ = std::fs::remove_dir_all(p);
        }
    }
    let k = ctx.traces;
    let run_dirs: Vec<PathBuf> = if k == 1 {
        vec![trace_dir.clone()]
    } else {
        (1..=k).map(|i| trace_dir.join(i.to_string())).collect()
    };
    for d in &run_dirs {
        std::fs::create_dir_all(d).map_err(PathError::at("create", d))?;
    }
    let plan = |mode: &Mode, out: &Path| Plan {
        implementation: ctx.imp,
        launcher: ctx.launcher.clone(),
        np,
        mode: mode.clone(),
        preload: ctx.preload.clone(),
        out: out.to_path_buf(),
        as_root: launch::running_as_root(),
        extra_env: Vec::new(),
        pin: ctx.pin,
    };
    let program = launch::untraced(&launch::launch_line(
        &plan(&mode, &trace_dir),
        &case.command,
    ));
    let empty_cmd: Vec<OsString> = match &ctx.empty {
        Some(p) => vec![p.clone().into_os_string(), "--empty".into()],
        None => vec!["true".into()],
    };
    let baseline_launch =
        launch::untraced(&launch::launch_line(&plan(&mode, &trace_dir), &empty_cmd));
    let traced_run = |dir: &Path, bar: &mut dyn Progress| -> Result<f64, ValidateError> {
        bar.message(&format!("{tag}: traced run"));
        let mut traced = launch::launch_line(&plan(&trace_mode, dir), &case.command);
        let n = case.command.len();
        let speed = format!("{:e}", ctx.models.kernel_speed);
        launch::export(&mut traced, ctx.imp, n, "TIMELESS_REF_SPEED", &speed);
        launch::export(
            &mut traced,
            ctx.imp,
            n,
            "TIMELESS_REF_SPEED_SOURCE",
            "timeless validate: the calibrated platform's host speed",
        );
        launch::export(&mut traced, ctx.imp, n, "TIMELESS_TIMESTAMPS", "1");
        let wall = launch::timed_run(&traced)?.0;
        bar.step();
        Ok(wall)
    };
    let reps = case.reps.unwrap_or(ctx.reps);
    let traced_after = traced_after(reps, k);
    let mut traced_walls = Vec::with_capacity(k);
    let mut baseline = Vec::new();
    let mut walls = Vec::new();
    let mut shares = Vec::new();
    while traced_walls.len() < k && traced_after[traced_walls.len()] == 0 {
        traced_walls.push(traced_run(&run_dirs[traced_walls.len()], bar)?);
    }
    for i in 0..reps {
        bar.message(&format!("{tag}: launch baseline"));
        baseline.push(launch::timed_run(&baseline_launch)?.0);
        bar.step();
        bar.message(&format!("{tag}: untraced run"));
        let (wall, cpu) = launch::timed_run(&program)?;
        walls.push(wall);
        shares.push(cpu / (np as f64 * wall));
        bar.step();
        while traced_walls.len() < k && traced_after[traced_walls.len()] == i + 1 {
            traced_walls.push(traced_run(&run_dirs[traced_walls.len()], bar)?);
        }
    }
    while traced_walls.len() < k {
        traced_walls.push(traced_run(&run_dirs[traced_walls.len()], bar)?);
    }
    let baseline_secs = median(&baseline);
    bar.message(&format!("{tag}: simulating"));
    let (chosen, p) = ctx.models.predict_median(calib, np, &run_dirs, &tag, bar)?;
    for _ in 0..k {
        bar.step();
    }
    let traced_wall = traced_walls[chosen];
    Ok(Row {
        label: case.label.clone(),
        np,
        mode: pinned(mode_name(&mode, false), &mode),
        trace_mode: pinned(mode_name(&trace_mode, true), &trace_mode),
        calibration: calib.name.clone(),
        measured: baseline_secs.map_or_else(Vec::new, |b| {
            walls.iter().map(|w| (w - b).max(0.0)).collect()
        }),
        baseline_secs,
        traced_secs: baseline_secs.map(|b| (traced_wall - b).max(0.0)),
        cpu_share: median(&shares),
        kernel_speed: ctx.models.kernel_speed,
        trace_rate: p.trace_rate,
        rate_coverage: p.rate_coverage,
        trace_wall_rate: p.trace_wall_rate,
        traced_span_secs: p.traced_span_secs,
        removed_secs: p.removed_secs,
        predicted: p.predicted,
    })
}

/// After which untraced run (1-based; 0: before any, `reps`: after all) each of `traces` traced
/// runs goes: one traced run after all of them (as always); several spread evenly, the i-th
/// (1-based) after run ⌊i·reps/(traces+1)⌋. Example: 25 runs and 3 traced runs: after runs 6,
/// 12 and 18.
fn traced_after(reps: usize, traces: usize) -> Vec<usize> {
    if traces <= 1 {
        return vec![reps; traces];
    }
    (1..=traces).map(|i| i * reps / (traces + 1)).collect()
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

#[cfg(test)]
mod tests {
    use super::traced_after;

    /// One traced run after all untraced runs; K spread at ⌊i·R/(K+1)⌋ (module doc example).
    #[test]
    fn traced_runs_are_spread_among_the_untraced_ones() {
        assert_eq!(traced_after(5, 1), vec![5]);
        assert_eq!(traced_after(0, 1), vec![0]);
        assert_eq!(traced_after(25, 3), vec![6, 12, 18]);
        assert_eq!(traced_after(5, 3), vec![1, 2, 3]);
        assert_eq!(traced_after(1, 3), vec![0, 0, 0]);
        assert_eq!(traced_after(0, 2), vec![0, 0]);
    }
}
