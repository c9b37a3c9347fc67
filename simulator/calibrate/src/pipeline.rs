//! The calibration pipelines behind `timeless calibrate`: ping-pong measurements → SimGrid
//! platform + SMPI configuration ([`calibrate_network_files`]), and the reference kernel's
//! speed ([`measure_speed`]).
//!
//! Measurements come from `validation/pingpong` run with mpirun (the CLI itself links no MPI), or
//! from a CSV or SKaMPI file. The other modules of this crate fit them; this one runs the
//! benchmark, replays the ping-pong (and the bidirectional exchange, when measured) on the
//! written platform with our simulator, and writes the files. Nothing is written to `--out`
//! unless every step succeeded.
//!
//! `--fold K` calibrates the network as a folded run sees it: the benchmark runs K ranks per
//! core on every core of this machine, launched as `timeless trace` and `timeless validate`
//! launch folded runs (`taskset`, `--oversubscribe --bind-to none --mca mpi_yield_when_idle 1`),
//! with every pair of ranks running the benchmark at once (`--busy-pairs`) and ranks 0 and 1
//! recording; a message then also waits for its receiver to get a core. `timeless validate`
//! uses `<calibration>/fold<K>/` for runs folded K per core. With `--unfolded DIR`, the written
//! model is the unfolded calibration's (DIR's `pingpong.csv`: segments, `os`, `or`, `ois`)
//! with every message's latency raised by that wait
//! (`timeless_calibrate::network::added_wait_secs`), and how concurrent flows share the route
//! and an extra wait per segment fitted on the folded ping-pong and exchange of the busy pairs
//! ([`crate::network::calibrate_folded_network`]). The benchmark is replayed as it ran: the
//! ping-pong on every measuring pair at once (the `exchange_ranks` count of the
//! measurements), a folded exchange after its barrier.

//!
//! ```no_run
//! use timeless_calibrate::pipeline::{calibrate_network_files, NetworkConfig, NoProgress};
//!
//! let mut config = NetworkConfig::new("calibration".into());
//! config.from_csv = Some("pingpong.csv".into()); // no benchmark run
//! config.speed = Some(1e9);
//! let cal = calibrate_network_files(&config, &mut NoProgress).expect("fitted");
//! cal.write(&config.out).expect("written");
//! print!("{}", cal.summary);
//! ```

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use timeless_kernel::PiecewiseFactor;
use timeless_platform::{Platform, PlatformOptions};

use crate::input;
use crate::measurement::{Measurements, Op};
use crate::network::{
    added_wait_secs, calibrate_folded_network, calibrate_network, ExchangePoint,
    NetworkCalibration, NetworkOptions,
};
use crate::pingpong_sim::{
    simulate_exchange, simulate_exchange_after_barrier, simulate_pingpong_pairs,
};
use crate::platform_xml::{platform_xml, HostSpec};
use crate::CalibrateError;
use timeless_launch::PathError;

/// What the calibration pipeline can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The ping-pong needs exactly 2 ranks.
    #[error("the ping-pong runs on exactly 2 ranks (got -n {0})")]
    Ranks(usize),
    /// Folding by 0 ranks per core.
    #[error("--fold needs K >= 1 ranks per core")]
    Fold,
    /// The hostfile names no host.
    #[error("{}: no host name", .0.display())]
    NoHost(PathBuf),
    /// The benchmark given does not exist.
    #[error("--bench {}: no such file", .0.display())]
    Bench(PathBuf),
    /// The benchmark is neither next to the executable nor on `PATH`.
    #[error("cannot find the benchmark 'timeless-pingpong' next to this executable or on PATH; build it with `cargo build --release -p timeless-pingpong` or pass --bench PATH")]
    NoBench,
    /// Bad measurements in the input files, or a fit that fails on them.
    #[error(transparent)]
    Input(CalibrateError),
    /// The unfolded calibration's measurements do not fit.
    #[error("{}: {error}", path.display())]
    Unfolded {
        /// Its `pingpong.csv`.
        path: PathBuf,
        /// Why.
        error: CalibrateError,
    },
    /// No size of the unfolded fit's first segment was measured folded.
    #[error("no ping-pong size of the first segment of {} in the folded measurements", .0.display())]
    NoCommonSize(PathBuf),
    /// The benchmark cannot be started.
    #[error("cannot run {program}")]
    Start {
        /// The program.
        program: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The benchmark failed: its exit status, command line and messages.
    #[error("the benchmark failed ({status}): {command}\n{log}(as root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)")]
    BenchFailed {
        /// Exit status.
        status: ExitStatus,
        /// The command line.
        command: String,
        /// Its standard error, progress lines left out.
        log: String,
    },
    /// The benchmark's measurements fail (read, monotonicity, simulation).
    #[error(transparent)]
    Measured(CalibrateError),
    /// The benchmark's measurements do not fit; `note` says where they were kept.
    #[error("{error}{note}")]
    Fit {
        /// Why.
        error: CalibrateError,
        /// `; the measurements are kept in FILE (re-fit with --from-csv)`, or empty.
        note: String,
    },
    /// The written platform does not load (a bug).
    #[error("the written platform does not load: {0}")]
    Platform(Box<timeless_platform::PlatformError>),
    /// A file cannot be read (the hostfile), or the output cannot be created or written.
    #[error(transparent)]
    File(#[from] PathError),
    /// Another I/O error (scratch directory, benchmark pipe).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl PipelineError {
    /// Whether the error comes from the input (options, files given), rather than from a run
    /// or an output (the binary's exit code 2 rather than 1).
    pub fn is_input(&self) -> bool {
        if let PipelineError::File(e) = self {
            return e.verb == "read";
        }
        matches!(
            self,
            PipelineError::Ranks(_)
                | PipelineError::Fold
                | PipelineError::NoHost(_)
                | PipelineError::Bench(_)
                | PipelineError::NoBench
                | PipelineError::Input(_)
                | PipelineError::Unfolded { .. }
                | PipelineError::NoCommonSize(_)
        )
    }
}

/// A stage of the pipeline shown with a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// The ping-pong benchmark runs (steps of the benchmark).
    Benchmark,
    /// The reference kernel runs ([`measure_speed`]).
    Kernel,
    /// The ping-pong is replayed size by size.
    SimulatePingPong,
    /// The exchange is replayed size by size.
    SimulateExchange,
}

/// What a front end sees of the pipeline's progress.
pub trait Progress {
    /// A stage of `len` steps begins.
    fn begin(&mut self, stage: Stage, len: u64);
    /// `done` of `len` steps are done (the benchmark tells its own count).
    fn position(&mut self, done: u64, len: u64);
    /// One more step is done.
    fn step(&mut self);
    /// The stage is over.
    fn end(&mut self);
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn begin(&mut self, _: Stage, _: u64) {}
    fn position(&mut self, _: u64, _: u64) {}
    fn step(&mut self) {}
    fn end(&mut self) {}
}

/// Median speed over `runs` (at least 1) measurements of the reference kernel, in flop/s,
/// with every measurement.
pub fn measure_speed(runs: usize, progress: &mut dyn Progress) -> (f64, Vec<f64>) {
    progress.begin(Stage::Kernel, runs as u64);
    let mut speeds = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        speeds.push(timeless_refkernel::reference_speed().flops_per_sec);
        progress.step();
    }
    progress.end();
    let median = crate::measurement::median(&speeds).expect("at least one run");
    (median, speeds)
}

/// What [`calibrate_network_files`] does, as `timeless calibrate network`'s options say.
/// Build it with [`NetworkConfig::new`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NetworkConfig {
    /// Ranks of the ping-pong (must be 2).
    pub np: usize,
    /// Open MPI hostfile; its distinct host names become the platform's hosts.
    pub hostfile: Option<PathBuf>,
    /// Output directory.
    pub out: PathBuf,
    /// Linear segments of the network model.
    pub segments: usize,
    /// Read SKaMPI output instead of running the benchmark.
    pub from_skampi: Option<PathBuf>,
    /// Read a measurements CSV instead of running the benchmark.
    pub from_csv: Option<PathBuf>,
    /// The benchmark binary (default: `timeless-pingpong` next to the executable or on PATH).
    pub bench: Option<PathBuf>,
    /// The mpirun command.
    pub mpirun: String,
    /// Extra mpirun arguments.
    pub mpirun_args: Vec<String>,
    /// Timed repetitions per size.
    pub reps: usize,
    /// Largest message size, bytes.
    pub max_size: u64,
    /// Route latency to write, seconds (default: from the fit).
    pub latency: Option<f64>,
    /// Route bandwidth to write, bytes/s (default: from the fit).
    pub bandwidth: Option<f64>,
    /// `smpi/send-is-detached-thresh`, bytes (default: detected).
    pub detached_thresh: Option<u64>,
    /// Host speed, flop/s (default: measured with the reference kernel).
    pub speed: Option<f64>,
    /// Largest tolerated drop of the ping-pong median from one size to the next (a fraction).
    pub monotonic_tolerance: f64,
    /// Fit how concurrent flows share the link from the exchange measurements.
    pub flow_sharing: bool,
    /// Cores per host (default: the cores of this machine).
    pub cores: Option<u32>,
    /// Measure folded: K ranks per core on every core.
    pub fold: Option<usize>,
    /// The folded measurements only raise the latency of the unfolded calibration in DIR.
    pub unfolded: Option<PathBuf>,
}

impl NetworkConfig {
    /// The defaults of `timeless calibrate network`, writing to `out`.
    pub fn new(out: PathBuf) -> Self {
        NetworkConfig {
            np: 2,
            hostfile: None,
            out,
            segments: 3,
            from_skampi: None,
            from_csv: None,
            bench: None,
            mpirun: "mpirun".into(),
            mpirun_args: Vec::new(),
            reps: 30,
            max_size: 16 << 20,
            latency: None,
            bandwidth: None,
            detached_thresh: None,
            speed: None,
            monotonic_tolerance: 0.5,
            flow_sharing: true,
            cores: None,
            fold: None,
            unfolded: None,
        }
    }
}

/// Distinct host names of an Open MPI (`name slots=N`) or SimGrid (`name:k`) hostfile, in order.
fn hostfile_hosts(path: &Path) -> Result<Vec<String>, PipelineError> {
    let text = std::fs::read_to_string(path).map_err(PathError::at("read", path))?;
    let mut hosts: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        let name = first.split(':').next().unwrap_or(first).to_string();
        if !hosts.contains(&name) {
            hosts.push(name);
        }
    }
    if hosts.is_empty() {
        return Err(PipelineError::NoHost(path.to_path_buf()));
    }
    Ok(hosts)
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

fn find_bench(given: &Option<PathBuf>) -> Result<PathBuf, PipelineError> {
    if let Some(b) = given {
        return if b.exists() {
            Ok(b.clone())
        } else {
            Err(PipelineError::Bench(b.clone()))
        };
    }
    timeless_launch::find_companion("timeless-pingpong").ok_or(PipelineError::NoBench)
}

/// Runs the benchmark under mpirun, reporting its `i/N sizes` messages to `progress`.
fn run_bench(
    args: &NetworkConfig,
    bench: &Path,
    csv: &Path,
    multi_host: bool,
    cores: u32,
    progress: &mut dyn Progress,
) -> Result<(), PipelineError> {
    let mut cmd = match args.fold {
        Some(k) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &format!("0-{}", cores.max(1) - 1), &args.mpirun])
                .args(["-np", &(k * cores.max(1) as usize).to_string()])
                .args(timeless_launch::line::OPEN_MPI_FOLDED_ARGS);
            c
        }
        None => {
            let mut c = Command::new(&args.mpirun);
            c.args(["-np", "2"]);
            c
        }
    };
    if let Some(h) = &args.hostfile {
        cmd.arg("--hostfile").arg(h);
        if multi_host {
            cmd.args(["--map-by", "node"]);
        }
    }
    cmd.args(&args.mpirun_args).arg(bench);
    if args.fold.is_some() {
        cmd.args(["--yield", "--busy-pairs"]);
    }
    cmd.args(["--reps", &args.reps.to_string()])
        .args(["--max-size", &args.max_size.to_string()])
        .arg("--out")
        .arg(csv)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().map_err(|source| PipelineError::Start {
        program: cmd.get_program().to_string_lossy().into_owned(),
        source,
    })?;
    progress.begin(Stage::Benchmark, 1);
    let mut stderr = child.stderr.take().expect("piped");
    let mut log = String::new();
    let mut pending = String::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut chunk) {
        if n == 0 {
            break;
        }
        pending.push_str(&String::from_utf8_lossy(&chunk[..n]));
        while let Some(i) = pending.find(['\r', '\n']) {
            let line: String = pending.drain(..=i).collect();
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("timeless-pingpong: ") {
                if let Some((done, total)) = rest
                    .split_whitespace()
                    .next()
                    .and_then(|f| f.split_once('/'))
                    .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                {
                    progress.position(done, total);
                    continue;
                }
            }
            if !line.is_empty() {
                log.push_str(line);
                log.push('\n');
            }
        }
    }
    let status = child.wait()?;
    progress.end();
    if !status.success() {
        return Err(PipelineError::BenchFailed {
            status,
            command: shown,
            log,
        });
    }
    Ok(())
}

/// One row of `fit.csv`: a message size, measured, fitted and simulated.
#[derive(Debug, Clone)]
pub struct FitRow {
    /// Message size, bytes.
    pub size_bytes: u64,
    /// Measured round trip (median), seconds.
    pub measured_secs: f64,
    /// Fastest measured round trip, seconds.
    pub min_secs: f64,
    /// Slowest measured round trip, seconds.
    pub max_secs: f64,
    /// One-way network time derived from the measurements, seconds.
    pub one_way_secs: f64,
    /// The fit's one-way time, seconds.
    pub fitted_one_way_secs: f64,
    /// The model's round trip (fit plus per-call overheads), seconds.
    pub model_secs: f64,
    /// The round trip replayed on the written platform, seconds.
    pub simulated_secs: f64,
    /// The exchange at this size, when measured.
    pub exchange: Option<ExchangeRow>,
}

/// The exchange at one size (`fit.csv`'s exchange columns).
#[derive(Debug, Clone)]
pub struct ExchangeRow {
    /// The measured point.
    pub point: ExchangePoint,
    /// Concurrent flows.
    pub flows: u64,
    /// The model's time, seconds.
    pub model_secs: f64,
    /// The exchange replayed on the written platform, seconds.
    pub simulated_secs: f64,
}

fn overhead(params: &[(String, String)], key: &str, size: u64) -> f64 {
    params
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| PiecewiseFactor::parse(v, 1).ok())
        .map_or(0.0, |f| f.overhead_secs(size as f64))
}

/// A network calibration, ready to write.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CalibrationFiles {
    /// Per size: measured, fitted, simulated.
    pub rows: Vec<FitRow>,
    /// The summary (`summary.txt`, what the binary prints).
    pub summary: String,
    /// The files to write, by name: `pingpong.csv`, `platform.xml`, `smpi.cfg`, `hostfile`,
    /// `fit.csv`, `summary.txt`.
    pub files: Vec<(&'static str, String)>,
}

impl CalibrationFiles {
    /// Writes [`CalibrationFiles::files`] into `out` (created).
    ///
    /// # Errors
    /// [`PipelineError::File`] naming the directory or file that cannot be created or written.
    pub fn write(&self, out: &Path) -> Result<(), PipelineError> {
        std::fs::create_dir_all(out).map_err(PathError::at("create", out))?;
        for (name, text) in &self.files {
            let path = out.join(name);
            std::fs::write(&path, text).map_err(PathError::at("write", &path))?;
        }
        Ok(())
    }
}

/// Runs the network calibration (module docs): measures (or reads) the ping-pong, fits the
/// model, writes the platform in memory and replays the ping-pong (and exchange) on it.
/// Nothing is written: see [`CalibrationFiles::write`].
///
/// # Errors
/// A [`PipelineError`]; [`PipelineError::is_input`] tells bad input from a failed run.
pub fn calibrate_network_files(
    args: &NetworkConfig,
    progress: &mut dyn Progress,
) -> Result<CalibrationFiles, PipelineError> {
    if args.np != 2 {
        return Err(PipelineError::Ranks(args.np));
    }
    if args.fold == Some(0) {
        return Err(PipelineError::Fold);
    }
    let hosts = match &args.hostfile {
        Some(h) => hostfile_hosts(h)?,
        None => vec![this_host()],
    };
    let cores = args
        .cores
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let scratch = tempfile::tempdir()?;
    let (m, source): (Measurements, String) = if let Some(f) = &args.from_skampi {
        (
            input::read_skampi(f).map_err(PipelineError::Input)?,
            format!("SKaMPI file {}", f.display()),
        )
    } else if let Some(f) = &args.from_csv {
        (
            input::read_csv(f).map_err(PipelineError::Input)?,
            format!("CSV file {}", f.display()),
        )
    } else {
        let bench = find_bench(&args.bench)?;
        let csv = scratch.path().join("pingpong.csv");
        run_bench(args, &bench, &csv, hosts.len() > 1, cores, progress)?;
        let m = input::read_csv(&csv).map_err(PipelineError::Measured)?;
        let how = match args.fold {
            Some(k) => format!(
                "{} -np {} folded {k} ranks per core on {cores} cores (every pair measuring, ranks 0 and 1 recorded)",
                args.mpirun,
                k * cores as usize
            ),
            None => format!("{} -np 2", args.mpirun),
        };
        (m, format!("{} run with {how}", bench.display()))
    };

    let mut opts = NetworkOptions {
        segments: args.segments,
        latency_secs: args.latency,
        bandwidth_bytes_per_sec: args.bandwidth,
        detached_thresh_bytes: args.detached_thresh,
        monotonic_tolerance: args.monotonic_tolerance,
        flow_sharing: args.flow_sharing,
        ..NetworkOptions::default()
    };
    // With --unfolded: the unfolded measurements, refitted with one SHARED link and every
    // message's latency raised by the wait the folded ping-pong shows.
    let mut unfolded_note = None;
    let unfolded_base = match &args.unfolded {
        Some(dir) => {
            let path = dir.join("pingpong.csv");
            let base = input::read_csv(&path).map_err(PipelineError::Input)?;
            let lone = NetworkOptions {
                flow_sharing: false,
                ..opts.clone()
            };
            let base_cal =
                calibrate_network(&base, &lone).map_err(|error| PipelineError::Unfolded {
                    path: path.clone(),
                    error,
                })?;
            m.check_monotonic(Op::PingPong, opts.monotonic_tolerance)
                .map_err(PipelineError::Measured)?;
            let wait = added_wait_secs(&m, &base, &base_cal.fit)
                .ok_or_else(|| PipelineError::NoCommonSize(path.clone()))?;
            let first = &base_cal.fit.segments[0];
            unfolded_note = Some(format!(
                "model: the unfolded calibration of {} (lone flow, os, or), every message {:.4e} s later: the folded minus the unfolded one-way time, median over S in [{}, {}] B; {}",
                path.display(),
                wait,
                first.first_size_bytes,
                first.last_size_bytes,
                if opts.flow_sharing && m.has(Op::Exchange) {
                    "flow sharing and an extra wait per segment fitted on the folded ping-pong and exchange"
                } else {
                    "one SHARED link"
                }
            ));
            opts.added_latency_secs = wait;
            Some(base)
        }
        None => None,
    };
    let fitted = match &unfolded_base {
        Some(base) => calibrate_folded_network(&m, base, &opts),
        None => calibrate_network(&m, &opts),
    };
    let cal = match fitted {
        Ok(c) => c,
        Err(e) if args.from_skampi.is_none() && args.from_csv.is_none() => {
            // Keep the measurements of a (long) benchmark run for inspection or a re-fit.
            let kept =
                std::env::temp_dir().join(format!("timeless-pingpong-{}.csv", std::process::id()));
            let note = match std::fs::write(&kept, m.to_csv()) {
                Ok(()) => format!(
                    "; the measurements are kept in {} (re-fit with --from-csv)",
                    kept.display()
                ),
                Err(_) => String::new(),
            };
            return Err(PipelineError::Fit { error: e, note });
        }
        Err(e) => return Err(PipelineError::Input(e)),
    };

    let speed = match args.speed {
        Some(s) => s,
        None => measure_speed(3, progress).0,
    };
    let host_specs: Vec<HostSpec> = hosts
        .iter()
        .map(|h| HostSpec {
            name: h.clone(),
            speed_flops_per_sec: speed,
            cores,
        })
        .collect();
    let comment = format!(
        "written by timeless calibrate network from {source}; SMPI configuration in smpi.cfg"
    );
    let xml = platform_xml(&host_specs, &cal.link, &comment);
    let platform = Platform::from_xml(&xml, "platform.xml", &PlatformOptions::default())
        .map_err(|e| PipelineError::Platform(Box::new(e)))?;
    let ends = [
        platform.host_by_name(&hosts[0]).expect("written host"),
        platform
            .host_by_name(hosts.get(1).unwrap_or(&hosts[0]))
            .expect("written host"),
    ];

    // Replay the ping-pong on the written platform, size by size.
    let cfg = cal.params.cfg_items();
    let medians = m.medians(Op::PingPong);
    // The benchmark's ping-pong ran on every measuring pair at once (the busy pairs of a
    // folded run): replayed the same way.
    let pp_ranks = match m.medians(Op::ExchangeRanks).as_slice() {
        [one] if one.size_bytes >= 2 => one.size_bytes & !1,
        _ => 2,
    };
    progress.begin(Stage::SimulatePingPong, medians.len() as u64);
    let mut simulated = Vec::with_capacity(medians.len());
    for p in &medians {
        let r = simulate_pingpong_pairs(
            &platform,
            ends,
            pp_ranks,
            &cfg,
            &[p.size_bytes],
            scratch.path(),
        )
        .map_err(PipelineError::Measured)?;
        simulated.push(r[0].1);
        progress.step();
    }
    progress.end();
    let mut exchanges = Vec::new();
    if let Some(sharing) = &cal.flow_sharing {
        progress.begin(Stage::SimulateExchange, sharing.points.len() as u64);
        for p in &sharing.points {
            // A folded benchmark's ranks leave its barrier a wait apart (module docs of
            // `network`): replayed with it. Two ranks leave Open MPI's two-process barrier
            // together, SimGrid's default barrier a latency apart: replayed without.
            let simulate_one = if sharing.flows > 2 {
                simulate_exchange_after_barrier
            } else {
                simulate_exchange
            };
            let r = simulate_one(
                &platform,
                ends,
                sharing.flows,
                &cfg,
                &[p.size_bytes],
                scratch.path(),
            )
            .map_err(PipelineError::Measured)?;
            exchanges.push(ExchangeRow {
                point: *p,
                flows: sharing.flows,
                model_secs: p.model_secs(sharing.aggregate_ratio, sharing.flows),
                simulated_secs: r[0].1,
            });
            progress.step();
        }
        progress.end();
    }

    let thresh = cal.params.detached_thresh_bytes;
    let rows: Vec<FitRow> = medians
        .iter()
        .zip(&simulated)
        .map(|(p, &sim)| {
            let s = p.size_bytes;
            let one_way = cal
                .one_way
                .iter()
                .find(|o| o.0 == s)
                .map_or(f64::NAN, |o| o.1);
            let fitted = cal.fit.predict_secs(s);
            // Concurrent pairs share the route: the transfer term slows by max(1, pairs/m).
            let seg = &cal.fit.segments[cal.fit.segment_index(s)];
            let transfer = seg.slope_secs_per_byte * (s as f64 + cal.fit.offset_bytes);
            let shared = cal.flow_sharing.as_ref().map_or(0.0, |f| {
                transfer * (((pp_ranks / 2) as f64 / f.aggregate_ratio).max(1.0) - 1.0)
            });
            let ov = if s < thresh {
                overhead(&cfg, "smpi/os", s) + overhead(&cfg, "smpi/or", s)
            } else {
                0.0
            };
            FitRow {
                size_bytes: s,
                measured_secs: p.time_secs,
                min_secs: p.min_secs,
                max_secs: p.max_secs,
                one_way_secs: one_way,
                fitted_one_way_secs: fitted,
                model_secs: 2.0 * (fitted + shared + ov),
                simulated_secs: sim,
                exchange: exchanges
                    .iter()
                    .position(|e| e.point.size_bytes == s)
                    .map(|i| exchanges.swap_remove(i)),
            }
        })
        .collect();
    let mut summary = summary(&cal, &rows, &source, &hosts, speed, cores, pp_ranks);
    if let Some(note) = unfolded_note {
        summary.insert_str(
            summary.find('\n').map_or(0, |i| i + 1),
            &format!("{note}\n"),
        );
    }

    let files = vec![
        ("pingpong.csv", m.to_csv()),
        ("platform.xml", xml),
        ("smpi.cfg", cal.params.cfg_file(&comment)),
        ("hostfile", hosts.join("\n") + "\n"),
        ("fit.csv", fit_csv(&rows)),
        ("summary.txt", summary.clone()),
    ];
    Ok(CalibrationFiles {
        rows,
        summary,
        files,
    })
}

fn fit_csv(rows: &[FitRow]) -> String {
    let mut s = String::from(
        "size_bytes,measured_rtt_secs,min_rtt_secs,max_rtt_secs,one_way_network_secs,fitted_one_way_secs,model_rtt_secs,simulated_rtt_secs,error_pct,measured_exchange_secs,exchange_transfer_secs,exchange_pair_ratio,exchange_in_fit,model_exchange_secs,simulated_exchange_secs,exchange_error_pct\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:.3},",
            r.size_bytes,
            r.measured_secs,
            r.min_secs,
            r.max_secs,
            r.one_way_secs,
            r.fitted_one_way_secs,
            r.model_secs,
            r.simulated_secs,
            100.0 * (r.simulated_secs - r.measured_secs) / r.measured_secs
        ));
        match &r.exchange {
            Some(e) => s.push_str(&format!(
                "{:e},{:e},{:.4},{},{:e},{:e},{:.3}\n",
                e.point.measured_secs,
                e.point.transfer_secs,
                e.point.ratio(e.flows),
                e.point.fitted,
                e.model_secs,
                e.simulated_secs,
                100.0 * (e.simulated_secs - e.point.measured_secs) / e.point.measured_secs
            )),
            None => s.push_str(",,,,,,\n"),
        }
    }
    s
}

fn summary(
    cal: &NetworkCalibration,
    rows: &[FitRow],
    source: &str,
    hosts: &[String],
    speed: f64,
    cores: u32,
    pp_ranks: u64,
) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "measurements: {source}");
    let _ = writeln!(
        s,
        "sizes: {} ({} B .. {} B)",
        rows.len(),
        rows.first().map_or(0, |r| r.size_bytes),
        rows.last().map_or(0, |r| r.size_bytes)
    );
    let _ = writeln!(
        s,
        "hosts: {} (speed {speed:.4e} flop/s, {cores} cores)",
        hosts.join(", ")
    );
    let _ = writeln!(
        s,
        "eager/rendezvous switch: smpi/send-is-detached-thresh = {} B ({:?})",
        cal.params.detached_thresh_bytes, cal.threshold_source
    );
    match (&cal.flow_sharing, cal.link.shared_bandwidth_bytes_per_sec()) {
        (Some(p), Some(shared)) => {
            let _ = writeln!(
                s,
                "link: latency {:e} s, bandwidth {:e} B/s per flow (FATPIPE), then a SHARED link of {:e} B/s: concurrent flows get together {:.4} times a lone flow's bandwidth",
                cal.link.latency_secs,
                cal.link.bandwidth_bytes_per_sec,
                shared,
                p.aggregate_ratio
            );
            let _ = writeln!(
                s,
                "concurrent flows: exchange of {} ranks at once at {} sizes, {} in the bandwidth regime fitted: ratio {:.4}{}",
                p.flows,
                p.points.len(),
                p.points.iter().filter(|q| q.fitted).count(),
                p.fitted_ratio,
                if p.fitted_ratio == p.aggregate_ratio {
                    String::new()
                } else {
                    format!(" (clamped to [1, {}]: {:.4})", p.flows, p.aggregate_ratio)
                }
            );
            if pp_ranks > 2 {
                let _ = writeln!(
                    s,
                    "  fitted together with the ping-pong of the {} busy pairs at once (both replayed that way)",
                    pp_ranks / 2
                );
            }
            let _ = writeln!(
                s,
                "exchange overhead: smpi/ois fitted on the (unfolded) exchange minus its flows, at least the MPI_Isend call: {}",
                cal.params
                    .ois
                    .iter()
                    .map(|e| format!(
                        "S > {} B: {:.4e} s + {:.4e} s/B",
                        e.threshold_bytes, e.intercept_secs, e.slope_secs_per_byte
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "link: latency {:e} s, bandwidth {:e} B/s, SHARED (lone-flow weight {}; effective {:e} B/s)",
                cal.link.latency_secs,
                cal.link.bandwidth_bytes_per_sec,
                cal.link.crosstraffic_weight,
                cal.link.effective_bandwidth_bytes_per_sec()
            );
        }
    }
    let _ = writeln!(
        s,
        "one-way network time T = a + b*(S + 16), {} segments (relative RMS {:.2}%):",
        cal.fit.segments.len(),
        100.0 * cal.fit.relative_rms
    );
    for ((seg, lat), bw) in cal
        .fit
        .segments
        .iter()
        .zip(&cal.params.lat_factor)
        .zip(&cal.params.bw_factor)
    {
        let _ = writeln!(
            s,
            "  S in [{}, {}] B ({} sizes): a = {:.4e} s, b = {:.4e} s/B ({:.4e} B/s); lat-factor {:.4}, bw-factor {:.4}",
            seg.first_size_bytes,
            seg.last_size_bytes,
            seg.points,
            seg.intercept_secs,
            seg.slope_secs_per_byte,
            if seg.slope_secs_per_byte > 0.0 { 1.0 / seg.slope_secs_per_byte } else { f64::INFINITY },
            lat.factor,
            bw.factor
        );
    }
    for (k, v) in cal.params.cfg_items() {
        let _ = writeln!(s, "  {k}:{v}");
    }
    let mut errs: Vec<(f64, u64)> = rows
        .iter()
        .map(|r| {
            (
                (r.simulated_secs - r.measured_secs).abs() / r.measured_secs,
                r.size_bytes,
            )
        })
        .collect();
    errs.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(max, at)) = errs.last() {
        let med = errs[errs.len() / 2].0;
        let _ = writeln!(
            s,
            "simulated vs measured ping-pong: median |error| {:.2}%, max |error| {:.2}% at {at} B",
            100.0 * med,
            100.0 * max
        );
    }
    let mut errs: Vec<(f64, u64)> = rows
        .iter()
        .filter_map(|r| {
            r.exchange.as_ref().map(|e| {
                (
                    (e.simulated_secs - e.point.measured_secs).abs() / e.point.measured_secs,
                    r.size_bytes,
                )
            })
        })
        .collect();
    errs.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(max, at)) = errs.last() {
        let med = errs[errs.len() / 2].0;
        let _ = writeln!(
            s,
            "simulated vs measured exchange: median |error| {:.2}%, max |error| {:.2}% at {at} B",
            100.0 * med,
            100.0 * max
        );
    }
    s
}
