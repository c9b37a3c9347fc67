//! `timeless calibrate network`: ping-pong measurements → SimGrid platform + SMPI configuration.
//!
//! Measurements come from `validation/pingpong` run with mpirun (the CLI itself links no MPI), or
//! from a CSV or SKaMPI file. The library (`timeless-calibrate`) fits them; this module runs the
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
//! model is the unfolded calibration's (DIR's `pingpong.csv` refitted with one SHARED link, on
//! which concurrent flows split one bandwidth) with every message's latency raised by that wait
//! (`timeless_calibrate::network::added_wait_secs`): the folded ping-pong's own bandwidth is the
//! one of a pair sharing a core's cache, not what concurrent flows of a folded run get.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{anyhow, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use plotters::style::RGBColor;
use timeless_calibrate::input;
use timeless_calibrate::measurement::{Measurements, Op};
use timeless_calibrate::network::{
    added_wait_secs, calibrate_network, ExchangePoint, NetworkCalibration, NetworkOptions,
};
use timeless_calibrate::pingpong_sim::{simulate_exchange, simulate_pingpong};
use timeless_calibrate::platform_xml::{platform_xml, HostSpec};
use timeless_kernel::PiecewiseFactor;
use timeless_platform::{Platform, PlatformOptions};

use super::plot::{self, Chart, Series};
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
    /// Number of linear segments of the network model (seed 003 §5 uses 3).
    #[arg(long, default_value_t = 3)]
    pub segments: usize,
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
    /// The (folded) measurements only raise the latency of the unfolded calibration in DIR
    /// (module docs).
    #[arg(long, value_name = "DIR")]
    pub unfolded: Option<PathBuf>,
}

/// Open MPI's options for a folded run, as `timeless trace` gives them (`trace::launch_line`).
const FOLDED_MPIRUN_ARGS: [&str; 6] = [
    "--oversubscribe",
    "--bind-to",
    "none",
    "--mca",
    "mpi_yield_when_idle",
    "1",
];

fn input_err(e: impl Into<anyhow::Error>) -> Failure {
    Failure::Input(e.into())
}

/// Distinct host names of an Open MPI (`name slots=N`) or SimGrid (`name:k`) hostfile, in order.
fn hostfile_hosts(path: &Path) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))
        .map_err(input_err)?;
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
        return Err(input_err(anyhow!("{}: no host name", path.display())));
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

fn find_bench(given: &Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(b) = given {
        return if b.exists() {
            Ok(b.clone())
        } else {
            Err(input_err(anyhow!("--bench {}: no such file", b.display())))
        };
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let p = dir.join("timeless-pingpong");
        if p.exists() {
            return Ok(p);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("timeless-pingpong");
            if p.exists() {
                return Ok(p);
            }
        }
    }
    Err(input_err(anyhow!(
        "cannot find the benchmark 'timeless-pingpong' next to this executable or on PATH; build it with `cargo build --release -p timeless-pingpong` or pass --bench PATH"
    )))
}

/// Runs the benchmark under mpirun, driving a progress bar from its `i/N sizes` messages.
fn run_bench(
    args: &NetworkArgs,
    bench: &Path,
    csv: &Path,
    multi_host: bool,
    cores: u32,
) -> Result<(), Failure> {
    let mut cmd = match args.fold {
        Some(k) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &format!("0-{}", cores.max(1) - 1), &args.mpirun])
                .args(["-np", &(k * cores.max(1) as usize).to_string()])
                .args(FOLDED_MPIRUN_ARGS);
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
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run {}", cmd.get_program().to_string_lossy()))
        .map_err(Failure::Other)?;
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} ping-pong benchmark {bar:30} {pos}/{len} steps {elapsed}",
        )
        .expect("valid template"),
    );
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
                    bar.set_length(total);
                    bar.set_position(done);
                    continue;
                }
            }
            if !line.is_empty() {
                log.push_str(line);
                log.push('\n');
            }
        }
    }
    let status = child.wait().map_err(|e| Failure::Other(e.into()))?;
    bar.finish_and_clear();
    if !status.success() {
        return Err(Failure::Other(anyhow!(
            "the benchmark failed ({status}): {shown}\n{log}(as root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)"
        )));
    }
    Ok(())
}

/// One row of `fit.csv`.
struct Row {
    size_bytes: u64,
    measured_secs: f64,
    min_secs: f64,
    max_secs: f64,
    one_way_secs: f64,
    fitted_one_way_secs: f64,
    model_secs: f64,
    simulated_secs: f64,
    exchange: Option<ExchangeRow>,
}

/// The exchange at one size (`fit.csv`'s exchange columns).
struct ExchangeRow {
    point: ExchangePoint,
    flows: u64,
    model_secs: f64,
    simulated_secs: f64,
}

fn overhead(params: &[(String, String)], key: &str, size: u64) -> f64 {
    params
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| PiecewiseFactor::parse(v, 1).ok())
        .map_or(0.0, |f| f.overhead_secs(size as f64))
}

/// Runs `timeless calibrate network`.
pub fn run(args: NetworkArgs) -> Result<(), Failure> {
    if args.np != 2 {
        return Err(input_err(anyhow!(
            "the ping-pong runs on exactly 2 ranks (got -n {})",
            args.np
        )));
    }
    if args.fold == Some(0) {
        return Err(input_err(anyhow!("--fold needs K >= 1 ranks per core")));
    }
    let hosts = match &args.hostfile {
        Some(h) => hostfile_hosts(h)?,
        None => vec![this_host()],
    };
    let cores = args
        .cores
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let scratch = tempfile::tempdir().map_err(|e| Failure::Other(e.into()))?;
    let (m, source): (Measurements, String) = if let Some(f) = &args.from_skampi {
        (
            input::read_skampi(f).map_err(input_err)?,
            format!("SKaMPI file {}", f.display()),
        )
    } else if let Some(f) = &args.from_csv {
        (
            input::read_csv(f).map_err(input_err)?,
            format!("CSV file {}", f.display()),
        )
    } else {
        let bench = find_bench(&args.bench)?;
        let csv = scratch.path().join("pingpong.csv");
        run_bench(&args, &bench, &csv, hosts.len() > 1, cores)?;
        let m = input::read_csv(&csv).map_err(|e| Failure::Other(e.into()))?;
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
        flow_sharing: !args.no_flow_sharing,
        ..NetworkOptions::default()
    };
    // With --unfolded: the unfolded measurements, refitted with one SHARED link and every
    // message's latency raised by the wait the folded ping-pong shows.
    let mut unfolded_note = None;
    let fitted_m = match &args.unfolded {
        Some(dir) => {
            let path = dir.join("pingpong.csv");
            let base = input::read_csv(&path).map_err(input_err)?;
            opts.flow_sharing = false;
            let base_cal = calibrate_network(&base, &opts)
                .map_err(|e| input_err(anyhow!("{}: {e}", path.display())))?;
            m.check_monotonic(Op::PingPong, opts.monotonic_tolerance)
                .map_err(|e| Failure::Other(e.into()))?;
            let wait = added_wait_secs(&m, &base, &base_cal.fit).ok_or_else(|| {
                input_err(anyhow!(
                    "no ping-pong size of the first segment of {} in the folded measurements",
                    path.display()
                ))
            })?;
            let first = &base_cal.fit.segments[0];
            unfolded_note = Some(format!(
                "model: the unfolded calibration of {} (one SHARED link), every message {:.4e} s later: the folded minus the unfolded one-way time, median over S in [{}, {}] B",
                path.display(),
                wait,
                first.first_size_bytes,
                first.last_size_bytes
            ));
            opts.added_latency_secs = wait;
            base
        }
        None => m.clone(),
    };
    let cal = match calibrate_network(&fitted_m, &opts) {
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
            return Err(Failure::Other(anyhow!("{e}{note}")));
        }
        Err(e) => return Err(input_err(e)),
    };

    let speed = match args.speed {
        Some(s) => s,
        None => super::compute::measure_speed(3).0,
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
        .map_err(|e| Failure::Other(anyhow!("the written platform does not load: {e}")))?;
    let ends = [
        platform.host_by_name(&hosts[0]).expect("written host"),
        platform
            .host_by_name(hosts.get(1).unwrap_or(&hosts[0]))
            .expect("written host"),
    ];

    // Replay the ping-pong on the written platform, size by size.
    let cfg = cal.params.cfg_items();
    let medians = m.medians(Op::PingPong);
    let bar = ProgressBar::new(medians.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulating the ping-pong {bar:30} {pos}/{len}")
            .expect("valid template"),
    );
    let mut simulated = Vec::with_capacity(medians.len());
    for p in &medians {
        let r = simulate_pingpong(&platform, ends, &cfg, &[p.size_bytes], scratch.path())
            .map_err(|e| Failure::Other(e.into()))?;
        simulated.push(r[0].1);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut exchanges = Vec::new();
    if let Some(sharing) = &cal.flow_sharing {
        let bar = ProgressBar::new(sharing.points.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} simulating the exchange {bar:30} {pos}/{len}")
                .expect("valid template"),
        );
        for p in &sharing.points {
            let r = simulate_exchange(
                &platform,
                ends,
                sharing.flows,
                &cfg,
                &[p.size_bytes],
                scratch.path(),
            )
            .map_err(|e| Failure::Other(e.into()))?;
            exchanges.push(ExchangeRow {
                point: *p,
                flows: sharing.flows,
                model_secs: p.model_secs(sharing.aggregate_ratio, sharing.flows),
                simulated_secs: r[0].1,
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
    }

    let thresh = cal.params.detached_thresh_bytes;
    let rows: Vec<Row> = medians
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
            let ov = if s < thresh {
                overhead(&cfg, "smpi/os", s) + overhead(&cfg, "smpi/or", s)
            } else {
                0.0
            };
            Row {
                size_bytes: s,
                measured_secs: p.time_secs,
                min_secs: p.min_secs,
                max_secs: p.max_secs,
                one_way_secs: one_way,
                fitted_one_way_secs: fitted,
                model_secs: 2.0 * (fitted + ov),
                simulated_secs: sim,
                exchange: exchanges
                    .iter()
                    .position(|e| e.point.size_bytes == s)
                    .map(|i| exchanges.swap_remove(i)),
            }
        })
        .collect();
    let mut summary = summary(&cal, &rows, &source, &hosts, speed, cores);
    if let Some(note) = unfolded_note {
        summary.insert_str(
            summary.find('\n').map_or(0, |i| i + 1),
            &format!("{note}\n"),
        );
    }

    // Everything succeeded: write the files.
    let out = &args.out;
    let write = |name: &str, text: &str| -> Result<(), Failure> {
        let p = out.join(name);
        std::fs::write(&p, text)
            .with_context(|| format!("cannot write {}", p.display()))
            .map_err(Failure::Other)
    };
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create {}", out.display()))
        .map_err(Failure::Other)?;
    write("pingpong.csv", &m.to_csv())?;
    write("platform.xml", &xml)?;
    write("smpi.cfg", &cal.params.cfg_file(&comment))?;
    write("hostfile", &(hosts.join("\n") + "\n"))?;
    write("fit.csv", &fit_csv(&rows))?;
    write("summary.txt", &summary)?;
    let to_pts = |f: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> {
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

fn fit_csv(rows: &[Row]) -> String {
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
    rows: &[Row],
    source: &str,
    hosts: &[String],
    speed: f64,
    cores: u32,
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
