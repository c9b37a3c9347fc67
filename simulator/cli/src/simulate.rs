//! `timeless simulate`: raw arguments → validated inputs → replay → report.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use timeless_platform::{deployment, Platform, PlatformOptions};
use timeless_replay::{KeyEffect, ReplayConfig, ReplayError, Simulation};
use timeless_trace::{TraceSet, TraceSource};

use crate::output::{self, Progress, Timeline};
use crate::Failure;

/// Output format of the report.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Human-readable table.
    Text,
    /// One JSON object.
    Json,
}

/// Arguments of `timeless simulate`. With no argument at all, the bundled example runs.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Trace: a list file of per-rank trace files (SimGrid's `-replay` argument), or one trace
    /// file shared by all ranks. Omitted: the files named by the deployment's `<argument>`s.
    pub trace: Option<PathBuf>,
    /// Platform file (SimGrid XML, DTD 4.1; version 3 accepted).
    #[arg(long, short = 'p')]
    pub platform: Option<PathBuf>,
    /// Deployment file: `<actor host function="rank">` per rank.
    #[arg(long, short = 'd', conflicts_with = "hostfile")]
    pub deployment: Option<PathBuf>,
    /// SimGrid hostfile: one host per line (`name:k` for k ranks), ranks placed round-robin.
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// Number of ranks (default: from the deployment, hostfile or trace list).
    #[arg(short = 'n', long = "np")]
    pub np: Option<usize>,
    /// SimGrid configuration, `KEY:VALUE` (e.g. `network/crosstraffic:0`, `smpi/bcast:flattree`).
    #[arg(long = "cfg", value_name = "KEY:VALUE")]
    pub cfg: Vec<String>,
    /// File of `KEY:VALUE` lines (as written by `timeless calibrate`), applied before `--cfg`.
    #[arg(long = "cfg-file")]
    pub cfg_file: Option<PathBuf>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write every action's start and end: Chrome/Perfetto JSON (`.json`) or CSV (`.csv`).
    #[arg(long)]
    pub timeline: Option<PathBuf>,
    /// Replay the trace as recorded: do not remove the tracer's per-event overhead from compute
    /// bursts (applied by default when `trace-meta.json` is next to the trace).
    #[arg(long)]
    pub no_compensation: bool,
    /// Re-solve the whole max-min system at every event (slow reference mode, for checking).
    #[arg(long, hide = true)]
    pub full_solve: bool,
    /// Parse the traces on the replay's own thread instead of a background decoder thread (the
    /// default when the machine has more than one core and there are several ranks).
    #[arg(long)]
    pub no_decode_ahead: bool,
    /// What-if: multiply every host's speed by F.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale_compute: f64,
    /// What-if: multiply every link's bandwidth by F.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale_bandwidth: f64,
    /// What-if: multiply every link's latency by F.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale_latency: f64,
    /// What-if: zero latency, unlimited bandwidth and no per-message software overheads (the
    /// run's bound without communication costs).
    #[arg(long, conflicts_with_all = ["scale_bandwidth", "scale_latency"])]
    pub ideal_network: bool,
    /// What-if: hosts of unlimited speed (the run's communication-only bound).
    #[arg(long, conflicts_with = "scale_compute")]
    pub ideal_compute: bool,
    /// Write the replay's communicator-centric profile (simulated seconds per communicator,
    /// operation, rank and size bucket; SQLite, `timeless profile` reads it).
    #[arg(long, value_name = "OUT.db")]
    pub profile: Option<PathBuf>,
    /// A measured profile of the traced run whose communicator names the simulated profile
    /// takes (default: `profile.db` next to the trace, when there is one).
    #[arg(long, value_name = "DB", requires = "profile")]
    pub profile_names: Option<PathBuf>,
}

/// The bundled example: a trace of validation/programs/ring on the seed's Figure 5 cluster.
fn bundled(name: &str) -> PathBuf {
    let here = PathBuf::from(name);
    if here.exists() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name)
}

fn input<T>(r: Result<T, impl Into<anyhow::Error>>) -> Result<T, Failure> {
    r.map_err(|e| Failure::Input(e.into()))
}

/// Runs `timeless simulate`.
pub fn run(mut args: SimulateArgs) -> Result<(), Failure> {
    let defaults = args.trace.is_none()
        && args.platform.is_none()
        && args.deployment.is_none()
        && args.hostfile.is_none();
    if defaults {
        args.platform = Some(bundled("platforms/mycluster.xml"));
        args.deployment = Some(bundled("deployments/mycluster-ring4.xml"));
        args.trace = Some(bundled("traces/ring4/ring.txt"));
        eprintln!(
            "timeless: no input given; running the bundled example (a trace of validation/programs/ring on 4 ranks, on the seed's Figure 5 cluster):\n  {} {} {}",
            args.trace.as_ref().expect("set").display(),
            args.platform.as_ref().expect("set").display(),
            args.deployment.as_ref().expect("set").display()
        );
    }
    let mut cfg = ReplayConfig::default();
    if let Some(f) = &args.cfg_file {
        let text = input(
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display())),
        )?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let item = line.strip_prefix("--cfg=").unwrap_or(line);
            apply(&mut cfg, item)
                .map_err(|e| Failure::Input(anyhow!("{}:{}: {e}", f.display(), i + 1)))?;
        }
    }
    for item in &args.cfg {
        apply(&mut cfg, item).map_err(|e| Failure::Input(anyhow!("--cfg {item}: {e}")))?;
    }

    let platform_path = args.platform.clone().ok_or_else(|| {
        Failure::Input(anyhow!(
            "--platform FILE is required (a SimGrid platform XML)"
        ))
    })?;
    let opts = PlatformOptions {
        loopback_bandwidth_bytes_per_sec: cfg.loopback_bandwidth_bytes_per_sec,
        loopback_latency_secs: cfg.loopback_latency_secs,
    };
    let platform = input(Platform::from_file(&platform_path, &opts))?;
    for notice in platform.notices() {
        eprintln!("timeless: notice: {notice}");
    }
    let what_if = timeless_platform::WhatIf {
        compute: args.scale_compute,
        bandwidth: args.scale_bandwidth,
        latency: args.scale_latency,
        ideal_network: args.ideal_network,
        ideal_compute: args.ideal_compute,
    };
    input(what_if.validate())?;
    let platform = what_if.apply(platform);
    if what_if.ideal_network {
        cfg.ideal_network();
    }

    let (traces, mut first_file, embedded) = match &args.trace {
        Some(t) => {
            let opened = open_traces(t)?;
            (Some(opened.set), opened.first_file, opened.embedded_meta)
        }
        None => (None, None, None),
    };
    let np = args.np.or_else(|| traces.as_ref().and_then(|t| t.ranks()));
    let dep = match (&args.deployment, &args.hostfile) {
        (Some(d), _) => input(deployment::from_file(d, &platform))?,
        (None, Some(h)) => input(deployment::from_hostfile(h, &platform, np))?,
        (None, None) => {
            let np = np.ok_or_else(|| {
                Failure::Input(anyhow!(
                    "cannot tell the number of ranks: give -n N, a deployment or a hostfile"
                ))
            })?;
            deployment::default_for(&platform, np)
        }
    };
    let mut placement: Vec<_> = dep.ranks.iter().map(|p| p.host).collect();
    if let Some(n) = args.np {
        if n > placement.len() && !placement.is_empty() {
            // SimGrid wraps ranks round-robin over the hostfile.
            placement = (0..n).map(|i| placement[i % placement.len()]).collect();
        }
        placement.truncate(n);
    }
    if placement.is_empty() {
        return Err(Failure::Input(anyhow!("the deployment places no rank")));
    }
    let traces = match traces {
        Some(t) => t,
        None => {
            let base = args
                .deployment
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(Path::new(""));
            let files = dep
                .ranks
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    p.args.first().map(|a| base.join(a)).ok_or_else(|| {
                        Failure::Input(anyhow!(
                            "no trace given and rank {i} has no <argument> naming its trace file in the deployment"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            first_file = files.first().cloned();
            Box::new(TraceSource::PerRank(files))
        }
    };
    if let Some(k) = traces.ranks() {
        if k < placement.len() {
            return Err(Failure::Input(anyhow!(
                "{} ranks are deployed but the trace list names only {k} files",
                placement.len()
            )));
        }
    }

    let meta = match (args.no_compensation, embedded, &args.trace) {
        (true, _, _) => None,
        (false, Some(bytes), Some(t)) => Some(Ok(crate::compress::embedded_tracer_meta(t, bytes)?)),
        (false, _, _) => Some(crate::compensate::find_meta(
            args.trace.as_deref(),
            first_file.as_deref(),
        )?),
    };
    let compensated = match &meta {
        Some(Ok(m)) => Some(timeless_compensate::CompensatedTrace::new(&*traces, m)),
        _ => None,
    };
    let trace_set: &dyn timeless_trace::TraceSet = match &compensated {
        Some(c) => c,
        None => &*traces,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ahead = if !args.no_decode_ahead && cores > 1 && placement.len() > 1 {
        Some(input(timeless_trace::DecodeAhead::new(
            trace_set,
            placement.len() as u32,
        ))?)
    } else {
        None
    };
    let trace_set: &dyn timeless_trace::TraceSet = match &ahead {
        Some(a) => a,
        None => trace_set,
    };
    let mut sim = input(Simulation::new(&platform, &placement, trace_set, cfg))?;
    sim.set_full_solve(args.full_solve);
    let timeline = match &args.timeline {
        Some(p) => Some(Timeline::create(p).map_err(Failure::Input)?),
        None => None,
    };
    let mut observer = Progress::new(timeline);
    let mut recorder = args
        .profile
        .as_ref()
        .map(|_| timeless_replay::ProfileRecorder::new(placement.len() as u32));
    let result = match &mut recorder {
        Some(rec) => sim.run(&mut timeless_replay::Tee(&mut observer, rec)),
        None => sim.run(&mut observer),
    };
    let timeline = observer.finish();
    let report = match result {
        Ok(r) => r,
        Err(e @ ReplayError::Deadlock { .. }) => return Err(Failure::Deadlock(e.into())),
        Err(e) => return Err(Failure::Input(e.into())),
    };
    if let Some(t) = timeline {
        t.close().map_err(Failure::Other)?;
    }
    for w in &report.warnings {
        eprintln!("timeless: warning: {w}");
    }
    if let (Some(rec), Some(out)) = (recorder, &args.profile) {
        crate::profile::write_simulated(
            rec,
            out,
            args.profile_names.as_deref(),
            args.trace.as_deref(),
            placement.len() as u32,
            &platform_path,
            &args.cfg,
        )?;
    }
    let burst = match (meta, &compensated) {
        (None, _) => crate::compensate::BurstStatus::Off,
        (Some(Err(dirs)), _) => crate::compensate::BurstStatus::NoMetadata(dirs),
        (Some(Ok(meta)), Some(c)) => crate::compensate::BurstStatus::Applied {
            meta,
            accounts: c.accounts(),
        },
        (Some(Ok(_)), None) => unreachable!("metadata found implies a compensated trace"),
    };
    let changes = what_if.describe();
    let out = match args.format {
        Format::Text => {
            let mut t = output::text(&report) + &crate::compensate::burst_text(&burst);
            for c in &changes {
                t.push_str(&format!("What-if: {c}\n"));
            }
            t
        }
        Format::Json => {
            let j = crate::compensate::burst_json(&output::json(&report), &burst);
            output::with_what_if(&j, &changes)
        }
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .map_err(|e| Failure::Other(e.into()))?;
    Ok(())
}

/// Opens a trace argument: a compressed trace (recognised by its magic number) or a TI text
/// trace (list file or shared file).
pub(crate) fn open_traces(path: &Path) -> Result<OpenedTrace, Failure> {
    let mut head = [0u8; 8];
    let n = {
        use std::io::Read;
        let mut f = input(
            std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display())),
        )?;
        input(
            f.read(&mut head)
                .with_context(|| format!("cannot read {}", path.display())),
        )?
    };
    if timeless_grammar::format::is_compressed(&head[..n]) {
        let (mut trace, _) = crate::compress::load(path)?;
        let embedded_meta = trace.tracer_meta.take();
        return Ok(OpenedTrace {
            set: Box::new(timeless_grammar::CompressedTraceSet::new(
                trace,
                path.to_path_buf(),
            )),
            first_file: None,
            embedded_meta,
        });
    }
    let source = input(TraceSource::open(path))?;
    let first_file = match &source {
        TraceSource::PerRank(v) => v.first().cloned(),
        TraceSource::Shared(p) => Some(p.clone()),
    };
    Ok(OpenedTrace {
        set: Box::new(source),
        first_file,
        embedded_meta: None,
    })
}

/// A trace argument, opened.
pub(crate) struct OpenedTrace {
    pub(crate) set: Box<dyn TraceSet>,
    /// First rank's file of a text trace: `trace-meta.json` is looked for next to it.
    pub(crate) first_file: Option<PathBuf>,
    /// `trace-meta.json` bytes embedded in a compressed trace (decoded once, with the trace).
    pub(crate) embedded_meta: Option<Vec<u8>>,
}

fn apply(cfg: &mut ReplayConfig, item: &str) -> Result<(), String> {
    match cfg.set(item)? {
        KeyEffect::Applied => {}
        KeyEffect::Ignored => {
            eprintln!("timeless: notice: '{item}' does not affect a replay; ignored")
        }
    }
    Ok(())
}
