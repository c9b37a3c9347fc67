//! `timeless calibrate network`: ping-pong measurements → SimGrid platform + SMPI configuration.
//! The pipeline is [`timeless_calibrate::pipeline`] (its docs tell the steps and `--fold`);
//! this module maps the options, draws the progress bars, writes the plot and prints the
//! summary. Nothing is written to `--out` unless every step succeeded.

use std::path::PathBuf;

use clap::Args;
use plotters::style::RGBColor;
use timeless_calibrate::pipeline::{calibrate_network_files, ExchangeRow, FitRow, NetworkConfig};

use super::plot::{self, Chart, Series};
use super::Bars;
use crate::Failure;

/// Arguments of `timeless calibrate network`.
#[derive(Debug, Args)]
pub struct NetworkArgs {
    /// Number of ranks of the ping-pong (it needs exactly 2).
    #[arg(short = 'n', long = "np", default_value_t = 2)]
    pub np: usize,
    /// Open MPI hostfile for mpirun; its distinct host names become the platform's hosts (with
    /// two or more hosts the ranks are mapped by node, so the ping-pong crosses the network).
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// Output directory (created).
    #[arg(long, default_value = "calibration")]
    pub out: PathBuf,
    /// Number of linear segments of the network model where the data bends (seed 003 §5 uses 3); the eager/rendezvous switch, when inside the measured sizes, adds one
    #[arg(long, default_value_t = 3)]
    pub segments: usize,
    /// With --unfolded: breaks the folded fit may add to the unfolded ones where the folded ping-pong and exchange bend (each split must remove 2 % of the fit's cost)
    #[arg(long, default_value_t = 1)]
    pub folded_breaks: usize,
    /// Read SKaMPI `Pingpong_Send_Recv` output instead of running the benchmark.
    #[arg(long, conflicts_with = "from_csv")]
    pub from_skampi: Option<PathBuf>,
    /// Read measurements CSV (`op,size_bytes,time_secs`) instead of running the benchmark.
    #[arg(long)]
    pub from_csv: Option<PathBuf>,
    /// The benchmark binary (default: `timeless-pingpong` next to this executable, else on PATH).
    #[arg(long)]
    pub bench: Option<PathBuf>,
    /// The mpirun command.
    #[arg(long, default_value = "mpirun")]
    pub mpirun: String,
    /// Extra mpirun argument (repeat for several, e.g. `--mpirun-arg=--oversubscribe`).
    #[arg(long = "mpirun-arg", allow_hyphen_values = true)]
    pub mpirun_args: Vec<String>,
    /// Timed repetitions per size (large sizes get fewer, at least 10).
    #[arg(long, default_value_t = 30)]
    pub reps: usize,
    /// Largest message size in bytes.
    #[arg(long, default_value_t = 16 << 20)]
    pub max_size: u64,
    /// Route latency to write in the platform, seconds (default: derived from the fit).
    #[arg(long)]
    pub latency: Option<f64>,
    /// Route bandwidth to write in the platform, bytes/s (default: derived from the fit).
    #[arg(long)]
    pub bandwidth: Option<f64>,
    /// `smpi/send-is-detached-thresh` in bytes (default: detected from the benchmark, else 65536).
    #[arg(long)]
    pub detached_thresh: Option<u64>,
    /// Host speed in flop/s for the platform (default: measured with the reference kernel).
    #[arg(long)]
    pub speed: Option<f64>,
    /// Largest tolerated drop of the ping-pong median from one size to the next (a fraction).
    #[arg(long, default_value_t = 0.5)]
    pub monotonic_tolerance: f64,
    /// Ignore the exchange measurements: write one SHARED link, on which concurrent flows split
    /// one bandwidth, instead of fitting how they share it.
    #[arg(long)]
    pub no_flow_sharing: bool,
    /// Cores per host (default: the cores of this machine).
    #[arg(long)]
    pub cores: Option<u32>,
    /// Measure folded: K ranks per core on every core (module docs).
    #[arg(long, value_name = "K", conflicts_with = "hostfile")]
    pub fold: Option<usize>,
    /// Folded: pin rank r to core r mod C (as `timeless validate --pin` runs) instead of leaving
    /// the ranks unbound; write the result to `<calibration>/fold<K>-pinned/`, which `validate
    /// --pin` then uses for runs folded K per core.
    #[arg(long, requires = "fold")]
    pub pin: bool,
    /// The (folded) measurements only raise the latency of the unfolded calibration in DIR
    /// (module docs).
    #[arg(long, value_name = "DIR")]
    pub unfolded: Option<PathBuf>,
}

/// Runs `timeless calibrate network`.
pub fn run(args: NetworkArgs) -> Result<(), Failure> {
    let mut c = NetworkConfig::new(args.out.clone());
    c.np = args.np;
    c.hostfile = args.hostfile.clone();
    c.segments = args.segments;
    c.folded_breaks = args.folded_breaks;
    c.from_skampi = args.from_skampi.clone();
    c.from_csv = args.from_csv.clone();
    c.bench = args.bench.clone();
    c.mpirun = args.mpirun.clone();
    c.mpirun_args = args.mpirun_args.clone();
    c.reps = args.reps;
    c.max_size = args.max_size;
    c.latency = args.latency;
    c.bandwidth = args.bandwidth;
    c.detached_thresh = args.detached_thresh;
    c.speed = args.speed;
    c.pin = args.pin;
    c.monotonic_tolerance = args.monotonic_tolerance;
    c.flow_sharing = !args.no_flow_sharing;
    c.cores = args.cores;
    c.fold = args.fold;
    c.unfolded = args.unfolded.clone();
    let fail = |e: timeless_calibrate::pipeline::PipelineError| {
        if e.is_input() {
            Failure::Input(e.into())
        } else {
            Failure::Other(e.into())
        }
    };
    let cal = calibrate_network_files(&c, &mut Bars(None)).map_err(fail)?;
    let out = &args.out;
    cal.write(out).map_err(fail)?;
    let (rows, summary) = (&cal.rows, &cal.summary);
    let to_pts = |f: &dyn Fn(&FitRow) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.size_bytes as f64, f(r))).collect()
    };
    let (measured, model, sim) = (
        to_pts(&|r| r.measured_secs),
        to_pts(&|r| r.model_secs),
        to_pts(&|r| r.simulated_secs),
    );
    let exchange_pts = |f: &dyn Fn(&ExchangeRow) -> f64| -> Vec<(f64, f64)> {
        rows.iter()
            .filter_map(|r| r.exchange.as_ref().map(|e| (r.size_bytes as f64, f(e))))
            .collect()
    };
    let (ex_measured, ex_sim) = (
        exchange_pts(&|e| e.point.measured_secs),
        exchange_pts(&|e| e.simulated_secs),
    );
    let mut series = vec![
        Series {
            label: "measured (median)",
            points: &measured,
            markers: true,
            color: RGBColor(0, 0, 0),
            filled: true,
            size: 3,
        },
        Series {
            label: "fitted piecewise-linear model",
            points: &model,
            markers: false,
            color: RGBColor(31, 119, 180),
            filled: false,
            size: 0,
        },
        Series {
            label: "simulated (timeless, platform.xml + smpi.cfg)",
            points: &sim,
            markers: true,
            color: RGBColor(214, 39, 40),
            filled: false,
            size: 6,
        },
    ];
    if !ex_measured.is_empty() {
        series.push(Series {
            label: "exchange, both directions at once (measured)",
            points: &ex_measured,
            markers: true,
            color: RGBColor(44, 160, 44),
            filled: true,
            size: 3,
        });
        series.push(Series {
            label: "exchange (simulated)",
            points: &ex_sim,
            markers: true,
            color: RGBColor(148, 103, 189),
            filled: false,
            size: 6,
        });
    }
    let chart = Chart {
        title: "Ping-pong round trip and exchange: measured vs calibrated model",
        x_label: "message size (bytes)",
        y_label: "round-trip / exchange time (s)",
        series,
    };
    let plotted = plot::write(&chart, &out.join("pingpong.png"), &out.join("pingpong.svg"));
    print!("{summary}");
    match plotted {
        Ok(()) => println!("plot: {0}/pingpong.png, {0}/pingpong.svg", out.display()),
        Err(e) => eprintln!("timeless: notice: no plot: {e}"),
    }
    Ok(())
}
