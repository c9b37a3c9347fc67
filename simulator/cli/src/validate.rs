//! `timeless validate`: predicted vs measured run time of MPI programs on this machine. The
//! pipeline is [`timeless_validate::validate`] (its docs tell how each number is obtained);
//! this module maps the options to its configuration, draws the progress bar, prints the
//! table and plots it (`validate.png`/`.svg`).

mod plot;

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use timeless_validate::report::SpeedSource;
use timeless_validate::{
    cases, ErrorKind, RepredictConfig, ValidateConfig, ValidateError, Validation,
};

use crate::Failure;

/// Where the replay's host speed comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Speed {
    /// The flop rate of the traced run's own compute bursts (seed 003 §5), in flops per
    /// core-second.
    Trace,
    /// The reference kernel's speed of the calibrated platform (the speed the trace's volumes
    /// were converted with: a burst replays in its CPU time).
    Kernel,
}

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
    /// Traced runs per case (>= 1): with K > 1 they are spread among the untraced runs, each
    /// kept in `traces/<case>/<i>/`, and the prediction is the median of their K predictions.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub traces: usize,
    /// Ranks per core when folding: `auto` (fold only with more ranks than cores) or K.
    #[arg(long, default_value = "auto")]
    pub fold: String,
    /// Fold the traced run only, K ranks per core on ⌈N/K⌉ cores (another acquisition mode).
    #[arg(long, value_name = "K")]
    pub trace_fold: Option<usize>,
    /// Folded runs pinned: rank r bound to core r mod C (Open MPI `--map-by core --bind-to
    /// core:overload-allowed`, MPICH `-bind-to core`), the untraced and the traced ones, instead
    /// of unbound; the replay pins rank r to core r mod C too (`timeless/pin-ranks`, the
    /// calibration named `fold<K>-pinned` in the table).
    #[arg(long)]
    pub pin: bool,
    /// Host speed of the replay: the traced bursts' flop rate, or the calibrated kernel speed.
    #[arg(long, value_enum, default_value_t = Speed::Trace)]
    pub compute_speed: Speed,
    /// Replay the traces as recorded: do not remove the tracer's per-event overhead.
    #[arg(long)]
    pub no_compensation: bool,
    /// SimGrid setting applied after the calibration's smpi.cfg in every replay (repeatable),
    /// e.g. `--cfg smpi/test:6.6e-8`.
    #[arg(long = "cfg", value_name = "KEY:VALUE")]
    pub cfg: Vec<String>,
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
    /// Re-predict an earlier validation: the measured times and traces of its output
    /// directory (`validate.csv`, `traces/`), only the replays run again, with this
    /// `--calibration`, `--cfg`, `--compute-speed` and compensation; tables and plots go to
    /// `--out`. No program runs.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["command", "cases"])]
    pub from: Option<PathBuf>,
    /// Directory of the programs named without a `/` in the cases file.
    #[arg(long, value_name = "DIR", requires = "cases")]
    pub bin_dir: Option<PathBuf>,
    /// The MPI program and its arguments, after `--`.
    #[arg(
        last = true,
        required_unless_present_any = ["cases", "from"],
        value_name = "PROGRAM [ARGS]"
    )]
    pub command: Vec<OsString>,
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

/// The exit-code class of a validation error.
fn failure(e: ValidateError) -> Failure {
    match e.kind() {
        ErrorKind::Input => Failure::Input(e.into()),
        _ => Failure::Other(e.into()),
    }
}

/// The progress bar, created when the runs start.
struct Bar(Option<ProgressBar>);

impl timeless_validate::Progress for Bar {
    fn start(&mut self, steps: u64) {
        let bar = ProgressBar::new(steps);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} validate {bar:30} {pos}/{len} runs {elapsed} {msg}",
            )
            .expect("valid template"),
        );
        self.0 = Some(bar);
    }

    fn message(&mut self, text: &str) {
        if let Some(b) = &self.0 {
            b.set_message(text.to_string());
        }
    }

    fn step(&mut self) {
        if let Some(b) = &self.0 {
            b.inc(1);
        }
    }

    fn notice(&mut self, text: &str) {
        match &self.0 {
            Some(b) => b.suspend(|| eprintln!("timeless: notice: {text}")),
            None => eprintln!("timeless: notice: {text}"),
        }
    }
}

/// Runs `timeless validate`.
pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    let input = Failure::Input;
    let fold = parse_fold(&args.fold)?;
    if args.trace_fold == Some(0) {
        return Err(input(anyhow!("--trace-fold needs a number >= 1")));
    }
    let source = match args.compute_speed {
        Speed::Trace => SpeedSource::Trace,
        Speed::Kernel => SpeedSource::Kernel,
    };
    if let Some(from) = &args.from {
        let mut config =
            RepredictConfig::new(from.clone(), args.calibration.clone(), args.out.clone());
        config.source = source;
        config.compensate = !args.no_compensation;
        config.extra_cfg = args.cfg.clone();
        let mut bar = Bar(None);
        let v = timeless_validate::repredict(&config, &mut bar).map_err(failure)?;
        if let Some(b) = bar.0 {
            b.finish_and_clear();
        }
        return report(&v);
    }
    if args.traces == 0 {
        return Err(input(anyhow!(
            "--traces needs at least 1 traced run per case"
        )));
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
    let mut config = ValidateConfig::new(cases, args.calibration.clone(), args.out.clone());
    config.reps = args.reps;
    config.traces = args.traces;
    config.fold = fold;
    config.trace_fold = args.trace_fold;
    config.pin = args.pin;
    config.source = source;
    config.compensate = !args.no_compensation;
    config.extra_cfg = args.cfg.clone();
    let mut bar = Bar(None);
    let v = timeless_validate::validate(&config, &mut bar).map_err(failure)?;
    if let Some(b) = bar.0 {
        b.finish_and_clear();
    }
    report(&v)
}

/// Prints the table and writes the tables and plots of `v`.
fn report(v: &Validation) -> Result<(), Failure> {
    let table = v.table();
    print!("{table}");
    v.write_tables().map_err(failure)?;
    let out = &v.out;
    match plot::write(
        &v.rows,
        v.source,
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
