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
//! This module holds the pipeline's configuration, errors and progress, and strings the steps
//! together ([`calibrate_network_files`]); `bench` launches the benchmark under mpirun, and
//! [`report`] holds what is written: the per-size rows of `fit.csv`, the summary and the
//! files.
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
//! measurements), a folded exchange with the barrier-exit skew of its longest pair (fitted on
//! its eager sizes, [`crate::network::fit_exchange_skew`]) and, fitted on it,
//! `timeless/rendezvous-late-wait` ([`crate::network::fit_rendezvous_late_wait`]);
//! without `--unfolded`, a folded exchange after SimGrid's barrier.
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

mod bench;
pub mod report;

use std::path::PathBuf;
use std::process::ExitStatus;

use timeless_platform::{Platform, PlatformOptions};

use crate::input;
use crate::measurement::{Measurements, Op};
use crate::network::{
    added_wait_secs, calibrate_folded_network, calibrate_network, exchange_skew_secs,
    fit_exchange_skew, fit_rendezvous_late_wait, NetworkOptions,
};
use crate::pingpong_sim::{
    simulate_exchange, simulate_exchange_after_barrier, simulate_pingpong_pairs,
};
use crate::platform_xml::{platform_xml, HostSpec};
use crate::CalibrateError;
use timeless_launch::PathError;

use bench::{find_bench, hostfile_hosts, run_bench, this_host};
use report::{fit_csv, overhead, summary};
pub use report::{CalibrationFiles, ExchangeRow, FitRow};

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
    /// Folded: breaks the folded fit may add where the folded data bend.
    pub folded_breaks: usize,
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
    /// Folded: rank r pinned to core r mod C (Open MPI `--map-by core --bind-to
    /// core:overload-allowed`) instead of unbound, as `timeless validate --pin` runs.
    pub pin: bool,
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
            folded_breaks: 1,
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
            pin: false,
            unfolded: None,
        }
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
        folded_breaks: args.folded_breaks,
        latency_secs: args.latency,
        bandwidth_bytes_per_sec: args.bandwidth,
        detached_thresh_bytes: args.detached_thresh,
        monotonic_tolerance: args.monotonic_tolerance,
        flow_sharing: args.flow_sharing,
        ..NetworkOptions::default()
    };
    // With --unfolded: the unfolded measurements, refitted, with every
    // message's latency raised by the wait the folded ping-pong shows.
    let mut unfolded_note = None;
    let unfolded_base = match &args.unfolded {
        Some(dir) => {
            let path = dir.join("pingpong.csv");
            let base = input::read_csv(&path).map_err(PipelineError::Input)?;
            // The unfolded fit as `calibrate_folded_network` makes it (its exchange helps
            // place the breaks), so that its first segment is the one the wait is taken on.
            let base_cal =
                calibrate_network(&base, &opts).map_err(|error| PipelineError::Unfolded {
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
                    "flow sharing m fitted with the lone flow's rate, then per segment an extra wait and a folded bandwidth factor, with extra breaks where the folded data bend, on the folded ping-pong and exchange; the exchange replayed with its skew and a late receiver's wait (below)"
                } else {
                    "one SHARED link"
                }
            ));
            opts.added_latency_secs = wait;
            Some((base, base_cal.fit))
        }
        None => None,
    };
    let fitted = match &unfolded_base {
        Some((base, _)) => calibrate_folded_network(&m, base, &opts),
        None => calibrate_network(&m, &opts),
    };
    let mut cal = match fitted {
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
    // A folded calibration without cold-call measurements of its own takes the unfolded one's.
    if let (None, Some((base, _))) = (cal.params.cold_call_secs, &unfolded_base) {
        cal.params.cold_call_secs = crate::network::cold_call_secs(base);
    }

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

    // The exchange first: a folded calibration's `timeless/rendezvous-late-wait` is fitted by
    // replaying it, and the ping-pong is then replayed with the final configuration.
    let mut exchanges = Vec::new();
    // A folded benchmark's exchange, timed from each rank's barrier exit, starts with the
    // skew of its longest pair (`exchange_skew_secs`), replayed as measured; without the
    // unfolded measurements, with SimGrid's barrier (ranks released a wait apart). Two ranks
    // leave Open MPI's two-process barrier together: replayed without.
    let skew = match (&unfolded_base, &cal.flow_sharing) {
        (Some((base, base_fit)), Some(sharing)) if sharing.flows > 2 => {
            exchange_skew_secs(&m, base, base_fit, sharing.flows / 2)
        }
        _ => None,
    };
    let mut exchange_note = None;
    if let Some(sharing) = cal.flow_sharing.clone() {
        let n = sharing.points.len() as u64;
        progress.begin(Stage::SimulateExchange, n);
        // The skew estimated from the ping-pong's waits, then fitted on the eager exchange.
        let skew = match skew {
            Some(estimate) => Some((
                estimate,
                fit_exchange_skew(
                    &platform,
                    ends,
                    &sharing,
                    &cal.params,
                    estimate,
                    scratch.path(),
                )
                .map_err(PipelineError::Measured)?,
            )),
            None => None,
        };
        let simulated = match skew {
            Some((_, skew)) => fit_rendezvous_late_wait(
                &platform,
                ends,
                &sharing,
                &cal.fit,
                &mut cal.params,
                skew,
                scratch.path(),
            )
            .map_err(PipelineError::Measured)?,
            None => {
                let cfg = cal.params.cfg_items();
                let mut out = Vec::with_capacity(sharing.points.len());
                for p in &sharing.points {
                    let one = [p.size_bytes];
                    let (platform, flows, dir) = (&platform, sharing.flows, scratch.path());
                    let r = if flows > 2 {
                        simulate_exchange_after_barrier(platform, ends, flows, &cfg, &one, dir)
                    } else {
                        simulate_exchange(platform, ends, flows, &cfg, &one, dir)
                    }
                    .map_err(PipelineError::Measured)?;
                    out.push(r[0].1);
                    progress.step();
                }
                out
            }
        };
        progress.position(n, n);
        progress.end();
        if let Some((estimate, skew)) = skew {
            let waits: Vec<String> = cal
                .params
                .rendezvous_late_wait
                .iter()
                .rev()
                .map(|e| format!("S > {} B: {:.4e} s", e.threshold_bytes, e.intercept_secs))
                .collect();
            exchange_note = Some(format!(
                "folded exchange replayed as the benchmark times it: rank 1 {skew:.4e} s late, the barrier-exit skew fitted on the exchange below the detached threshold (estimated from the folded ping-pong's waits, the median of the largest of the {} pairs' skews: {estimate:.4e} s); a rendezvous send whose receiver comes late waits for its acknowledgement, timeless/rendezvous-late-wait fitted on the exchange outside the bandwidth regime: {}\n",
                sharing.flows / 2,
                if waits.is_empty() {
                    "0 (not written)".to_string()
                } else {
                    waits.join("; ")
                }
            ));
        }
        for (p, sim) in sharing.points.iter().zip(simulated) {
            exchanges.push(ExchangeRow {
                point: *p,
                flows: sharing.flows,
                model_secs: p.model_secs(sharing.aggregate_ratio, sharing.flows),
                simulated_secs: sim,
            });
        }
    }

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
    if let Some(note) = exchange_note {
        let at = summary
            .find("one-way network time")
            .unwrap_or(summary.len());
        summary.insert_str(at, &note);
    }
    if let (Some((_, base_fit)), Some(_)) = (&unfolded_base, &cal.flow_sharing) {
        let at = summary
            .find("one-way network time")
            .unwrap_or(summary.len());
        summary.insert_str(
            at,
            &folded_segments_note(&cal.fit, base_fit, opts.added_latency_secs),
        );
    }
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

/// The folded fit's segments against the unfolded ones (`timeless_calibrate::network::
/// folded_fit`): per folded segment, the extra wait beyond the wait for a core and the folded
/// bandwidth factor β (the folded slope over the lone flow's).
fn folded_segments_note(
    folded: &crate::fit::PiecewiseFit,
    unfolded: &crate::fit::PiecewiseFit,
    wait_secs: f64,
) -> String {
    let parts: Vec<String> = folded
        .segments
        .iter()
        .map(|seg| {
            let base = &unfolded.segments[unfolded.segment_index(seg.first_size_bytes)];
            let beta = if base.slope_secs_per_byte > 0.0 {
                seg.slope_secs_per_byte / base.slope_secs_per_byte
            } else {
                1.0
            };
            format!(
                "S in [{}, {}] B: extra wait {:.4e} s, bandwidth factor {:.4}",
                seg.first_size_bytes,
                seg.last_size_bytes,
                seg.intercept_secs - base.intercept_secs - wait_secs,
                beta
            )
        })
        .collect();
    format!(
        "folded segments (the unfolded breaks and the folded fit's own; the lone flow's transfer times the bandwidth factor): {}\n",
        parts.join("; ")
    )
}
