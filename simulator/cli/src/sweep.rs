//! `timeless sweep SPEC.toml`: a parameter study (issue 17), run by `timeless-sweep`.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use timeless_sweep::{Options, Point, PointResult, Progress, Spec, SweepError};

use crate::Failure;

/// Arguments of `timeless sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The study file (TOML): platform, traces, `[[axis]]` name/values or `[[point]]` tables.
    pub spec: PathBuf,
    /// Results directory (`results.csv`, `results.db`, plots); a rerun resumes from it.
    /// Default: the spec file's name without `.toml`, next to it, plus `-results`.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Points replayed at once (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// Run at most this many of the pending points, then stop (rerun to continue).
    #[arg(long = "max-points")]
    pub max_points: Option<usize>,
    /// Do not draw `plot-AXIS.svg` (predicted time vs each axis, one line per trace).
    #[arg(long = "no-plot")]
    pub no_plot: bool,
    /// Replay the points on N MPI ranks: runs `mpirun -n N timeless-sweep-mpi` (found next to
    /// `timeless`, else on PATH); same results files, byte for byte.
    #[arg(long = "mpi", value_name = "N", conflicts_with = "jobs")]
    pub mpi: Option<usize>,
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, total: usize, done: usize) {
        self.0.set_length(total as u64);
        self.0.set_position(done as u64);
    }
    fn finished(&self, point: &Point, result: &Result<PointResult, String>) {
        self.0.inc(1);
        match result {
            Ok(r) => self
                .0
                .set_message(format!("{} {:.6} s", point.key, r.simulated_secs)),
            Err(e) => self.0.println(format!("failed: {}: {e}", point.key)),
        }
    }
}

fn input(e: SweepError) -> Failure {
    match e {
        SweepError::Spec { .. } | SweepError::Read { .. } | SweepError::Mismatch { .. } => {
            Failure::Input(e.into())
        }
        _ => Failure::Other(e.into()),
    }
}

/// Runs `timeless sweep`.
pub fn run(args: SweepArgs) -> Result<(), Failure> {
    let spec = Spec::from_file(&args.spec).map_err(input)?;
    let out = args.output.clone().unwrap_or_else(|| {
        let stem = args
            .spec
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
        spec.dir.join(format!("{stem}-results"))
    });
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .expect("valid template"),
    );
    let mut options = Options::default();
    options.jobs = args.jobs;
    options.max_points = args.max_points;
    let io = |e: std::io::Error| Failure::Other(e.into());
    let summary = match args.mpi {
        Some(n) => {
            run_mpi(&args, n, &out)?;
            // The MPI job wrote (and printed) the results; the summary for the plots is read
            // back from them (no point left to run, the files are rewritten unchanged).
            options.max_points = Some(0);
            timeless_sweep::run(&spec, &out, &options, &timeless_sweep::NoProgress)
                .map_err(input)?
        }
        None => {
            let s = timeless_sweep::run(&spec, &out, &options, &Bar(bar.clone())).map_err(input)?;
            bar.finish_and_clear();
            // A closed stdout (`| head`) is an I/O error the binary ends quietly on.
            let mut stdout = std::io::stdout().lock();
            write!(stdout, "{}", timeless_sweep::summary_text(&s)).map_err(io)?;
            s
        }
    };
    let mut stdout = std::io::stdout().lock();
    if !args.no_plot {
        match crate::calibrate::plot::font() {
            Ok(()) => {
                for p in timeless_sweep::plot(&summary, &out).map_err(input)? {
                    writeln!(stdout, "Plot: {}", p.display()).map_err(io)?;
                }
            }
            Err(why) => eprintln!("timeless: no plots: {why}"),
        }
    }
    if !summary.failed.is_empty() && args.mpi.is_none() {
        return Err(Failure::Input(anyhow::anyhow!(
            "{} point(s) failed; a rerun retries them",
            summary.failed.len()
        )));
    }
    Ok(())
}

/// `mpirun -n N timeless-sweep-mpi SPEC -o OUT [--max-points K]`, its output passed through.
fn run_mpi(args: &SweepArgs, n: usize, out: &std::path::Path) -> Result<(), Failure> {
    const DRIVER: &str = "timeless-sweep-mpi";
    let exe = timeless_launch::host::find_companion(DRIVER).ok_or_else(|| {
        Failure::Input(anyhow::anyhow!(
            "--mpi: {DRIVER} is neither next to timeless nor on PATH \
             (cargo build --release -p timeless-sweep-mpi; it needs Open MPI or MPICH)"
        ))
    })?;
    let (launcher, imp) = timeless_launch::host::find_launcher(None)
        .map_err(|e| Failure::Input(anyhow::Error::new(e).context("--mpi")))?;
    let mut cmd = std::process::Command::new(&launcher);
    cmd.arg("-n").arg(n.max(1).to_string());
    if imp == timeless_launch::Implementation::OpenMpi {
        // More ranks than cores is allowed (the points are independent).
        cmd.arg("--oversubscribe");
    }
    cmd.arg(exe).arg(&args.spec).arg("-o").arg(out);
    if let Some(k) = args.max_points {
        cmd.arg("--max-points").arg(k.to_string());
    }
    let status = cmd.status().map_err(|e| {
        Failure::Other(anyhow::Error::new(e).context(format!("cannot run {launcher}")))
    })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => Err(Failure::Input(anyhow::anyhow!(
            "{DRIVER} reported bad input or failed points"
        ))),
        _ => Err(Failure::Other(anyhow::anyhow!(
            "{launcher} {DRIVER} failed ({status})"
        ))),
    }
}
