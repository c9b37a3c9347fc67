//! `timeless-run`: the simulate pipeline, one function for every front end (the `timeless`
//! binary, a Python binding, a sweep runner).
//!
//! [`simulate`] takes a [`SimulateConfig`] (paths and knobs, already parsed by the front end)
//! and goes: configuration (`--cfg-file` lines, then `--cfg` items) → platform (with the
//! what-if knobs of [`timeless_platform::WhatIf`] applied) → trace (a list file, a shared
//! file, a compressed `.tlg`, or the files named by the deployment) → rank placement
//! (deployment, hostfile, or all hosts round-robin) → tracer-overhead compensation
//! (`trace-meta.json` next to the trace or embedded in a compressed trace) → replay → the
//! optional simulated profile. It returns an [`Outcome`]: the replay's [`Report`], what the
//! compensation did ([`BurstStatus`]) and the what-if changes; rendering them (text table,
//! JSON) is the front end's job.
//!
//! The front end takes part through the [`Frontend`] trait: it receives the notices (keys that
//! do not affect a replay, platform notices) as they arise, and hands over the
//! [`Observer`] that sees every replayed action (a progress bar, a timeline writer) once the
//! inputs are loaded, so that nothing is created when an input is bad. Errors are typed
//! ([`SimulateError`]); [`SimulateError::kind`] tells bad input from a deadlocked replay and
//! from a failure to write an output, which the binary maps to its exit codes.
//!
//! ```no_run
//! use timeless_replay::{NoObserver, Observer};
//! use timeless_run::{simulate, Frontend, SimulateConfig};
//!
//! struct Quiet(NoObserver);
//! impl Frontend for Quiet {
//!     fn notice(&mut self, text: &str) {
//!         eprintln!("notice: {text}");
//!     }
//!     fn observer(&mut self) -> Result<&mut dyn Observer, timeless_run::FrontendError> {
//!         Ok(&mut self.0)
//!     }
//! }
//!
//! let mut config = SimulateConfig::new("platforms/mycluster.xml".into());
//! config.trace = Some("traces/ring4/ring.txt".into());
//! config.deployment = Some("deployments/mycluster-ring4.xml".into());
//! let outcome = simulate(&config, &mut Quiet(NoObserver)).expect("the bundled example replays");
//! println!("{:.12} s", outcome.report.simulated_time_secs); // 0.223726707037 s
//! ```

use std::path::{Path, PathBuf};

use timeless_compensate::{BurstStatus, CompensatedTrace, TraceMeta, META_FILE};
use timeless_platform::{deployment, Platform, PlatformOptions, WhatIf};
use timeless_replay::{KeyEffect, Observer, ReplayConfig, Report, Simulation};
use timeless_trace::{TraceSet, TraceSource};

mod error;
mod polls;

pub use error::{ErrorKind, SimulateError};

/// The error a [`Frontend`] may return when asked for its observer (e.g. a timeline file that
/// cannot be created).
pub type FrontendError = Box<dyn std::error::Error + Send + Sync>;

/// Everything [`simulate`] needs, as the front end parsed it. Build it with
/// [`SimulateConfig::new`] and set the fields that differ from the defaults.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SimulateConfig {
    /// Trace: a list file of per-rank trace files, one trace file shared by all ranks, or a
    /// compressed trace. `None`: the files named by the deployment's `<argument>`s.
    pub trace: Option<PathBuf>,
    /// Platform file (SimGrid XML). `None` fails with [`SimulateError::NoPlatform`] once the
    /// configuration is read (the order in which the binary reports missing inputs).
    pub platform: Option<PathBuf>,
    /// Deployment file (`<actor host function="rank">` per rank); wins over `hostfile`.
    pub deployment: Option<PathBuf>,
    /// SimGrid hostfile (`name` or `name:k` per line), ranks placed round-robin.
    pub hostfile: Option<PathBuf>,
    /// Number of ranks (default: from the deployment, hostfile or trace list).
    pub np: Option<usize>,
    /// SimGrid configuration items `KEY:VALUE`, applied after `cfg_file`.
    pub cfg: Vec<String>,
    /// A file of `KEY:VALUE` lines (`#` comments, optional `--cfg=` prefix).
    pub cfg_file: Option<PathBuf>,
    /// Remove the tracer's per-event overhead from compute bursts when metadata is found.
    pub compensation: bool,
    /// Re-solve the whole max-min system at every event (slow reference mode).
    pub full_solve: bool,
    /// Re-fill only the region of a component a change reaches (`timeless_kernel::lmm::region`);
    /// `false`: fill whole components in SimGrid's order (`--full-filling`).
    pub region_filling: bool,
    /// Decode the traces on a background thread when there are several ranks and cores.
    pub decode_ahead: bool,
    /// What-if changes to the platform (identity by default).
    pub what_if: WhatIf,
    /// Write the replay's communicator-centric profile to this SQLite file.
    pub profile: Option<PathBuf>,
    /// A measured profile whose communicator names the simulated profile takes (default:
    /// `profile.db` next to the trace, when there is one).
    pub profile_names: Option<PathBuf>,
    /// Several jobs at once: a SimGrid `replay_multiple` description file
    /// (`instance_id trace_list ranks [delay_flops]` per line) instead of `trace`; `deployment`
    /// is then a multi-job deployment and `hostfile` places the jobs' ranks in order
    /// (`timeless_replay::jobs::description`).
    pub jobs: Option<PathBuf>,
    /// With `jobs`: also replay each job alone on its hosts, for its slowdown.
    pub job_baselines: bool,
}

impl SimulateConfig {
    /// A configuration replaying on `platform` with every default: trace from the deployment,
    /// no `--cfg`, compensation on, decode-ahead on, no what-if change, no profile.
    pub fn new(platform: PathBuf) -> Self {
        SimulateConfig {
            platform: Some(platform),
            ..SimulateConfig::default()
        }
    }
}

impl Default for SimulateConfig {
    /// As [`SimulateConfig::new`], without a platform.
    fn default() -> Self {
        SimulateConfig {
            trace: None,
            platform: None,
            deployment: None,
            hostfile: None,
            np: None,
            cfg: Vec::new(),
            cfg_file: None,
            compensation: true,
            full_solve: false,
            region_filling: true,
            decode_ahead: true,
            what_if: WhatIf::default(),
            profile: None,
            profile_names: None,
            jobs: None,
            job_baselines: true,
        }
    }
}

/// What a front end contributes to [`simulate`].
pub trait Frontend {
    /// A notice for the user (a configuration key a replay ignores, a platform notice); not an
    /// error. Called as the notices arise.
    fn notice(&mut self, text: &str);

    /// The observer that sees every replayed action. Called once, after every input loaded
    /// and right before the replay starts.
    ///
    /// # Errors
    /// Whatever keeps the observer from being created; [`simulate`] returns it as
    /// [`SimulateError::Frontend`] (bad input).
    fn observer(&mut self) -> Result<&mut dyn Observer, FrontendError>;

    /// In a multi-job replay, the jobs before the observer is asked for: name, first replay
    /// rank and number of ranks of each (a timeline shows one process per job).
    fn jobs(&mut self, jobs: &[(String, u32, u32)]) {
        let _ = jobs;
    }

    /// The number of ranks the replay will run, once the deployment is known and before any
    /// per-rank state (decoders, rank states, mailboxes) is allocated: a front end may set
    /// process-wide policies by the replay's size (the `timeless` binary keeps transparent
    /// huge pages off below 4,096 ranks). Called once per [`simulate`] (in a multi-job
    /// replay, with the ranks of all jobs).
    fn replay_size(&mut self, ranks: usize) {
        let _ = ranks;
    }
}

/// One job of a multi-job replay ([`SimulateConfig::jobs`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JobOutcome {
    /// Its time, start and end in the shared run, and its ranks (`Report::ranks` indices).
    pub report: timeless_replay::JobReport,
    /// Its time replayed alone on the same hosts with the same delay, in seconds (when
    /// [`SimulateConfig::job_baselines`]).
    pub alone_secs: Option<f64>,
    /// Whether the tracer's overhead was removed from its bursts (`trace-meta.json` next to its
    /// traces).
    pub compensated: bool,
}

impl JobOutcome {
    /// Its time in the shared run over its time alone (1: no interference).
    pub fn slowdown(&self) -> Option<f64> {
        self.alone_secs.map(|a| self.report.time_secs / a)
    }
}

/// The result of [`simulate`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome {
    /// The replay's report: simulated time (s), per-rank times, warnings.
    pub report: Report,
    /// Whether the tracer's overhead was removed, and how much per rank.
    pub compensation: BurstStatus,
    /// The what-if changes, one sentence each (empty: the platform as written).
    pub what_if: Vec<String>,
    /// Number of ranks replayed.
    pub ranks: usize,
    /// The jobs of a multi-job replay (empty otherwise).
    pub jobs: Vec<JobOutcome>,
}

/// Applies one `KEY:VALUE` item to `cfg`; a key that does not affect a replay is reported to
/// `notice`.
///
/// # Errors
/// The message of [`ReplayConfig::set`] for an unknown key or a bad value.
pub fn apply_cfg(
    cfg: &mut ReplayConfig,
    item: &str,
    notice: &mut dyn FnMut(&str),
) -> Result<(), String> {
    match cfg.set(item)? {
        KeyEffect::Applied => {}
        KeyEffect::Ignored => notice(&format!("'{item}' does not affect a replay; ignored")),
    }
    Ok(())
}

/// Applies the `KEY:VALUE` lines of the file `path` to `cfg` (blank lines and `#` comments
/// skipped, an optional `--cfg=` prefix removed: the format `timeless calibrate` writes).
///
/// # Errors
/// [`SimulateError::Read`] when the file cannot be read, [`SimulateError::CfgFileLine`] for
/// the first invalid line.
pub fn read_cfg_file(
    path: &Path,
    cfg: &mut ReplayConfig,
    notice: &mut dyn FnMut(&str),
) -> Result<(), SimulateError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimulateError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let item = line.strip_prefix("--cfg=").unwrap_or(line);
        apply_cfg(cfg, item, notice).map_err(|message| SimulateError::CfgFileLine {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        })?;
    }
    Ok(())
}

/// A trace argument, opened by [`open_trace`].
pub struct OpenedTrace {
    /// The ranks' action streams.
    pub set: Box<dyn TraceSet>,
    /// First rank's file of a text trace: `trace-meta.json` is looked for next to it.
    pub first_file: Option<PathBuf>,
    /// `trace-meta.json` bytes embedded in a compressed trace (decoded once, with the trace).
    pub embedded_meta: Option<Vec<u8>>,
}

impl OpenedTrace {
    /// Its number of ranks: `np` when given, else as many as its list names.
    ///
    /// # Errors
    /// [`SimulateError::SharedNeedsRankCount`] for a shared file without `np`.
    pub fn rank_count(&self, np: Option<u32>, path: &Path) -> Result<u32, SimulateError> {
        match (np, self.set.ranks()) {
            (Some(n), _) => Ok(n),
            (None, Some(k)) => Ok(k as u32),
            (None, None) => Err(SimulateError::SharedNeedsRankCount {
                path: path.to_path_buf(),
            }),
        }
    }
}

/// Opens a trace argument: a compressed trace (recognised by its magic number) or a TI text
/// trace (list file or shared file).
///
/// # Errors
/// [`SimulateError::Read`] when the file cannot be read, [`SimulateError::Compressed`] for a
/// compressed trace that does not decode, [`SimulateError::Trace`] for a bad list file.
pub fn open_trace(path: &Path) -> Result<OpenedTrace, SimulateError> {
    let read_err = |source| SimulateError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut head = [0u8; 8];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(read_err)?;
        f.read(&mut head).map_err(read_err)?
    };
    if timeless_grammar::format::is_compressed(&head[..n]) {
        let (mut trace, _) = timeless_grammar::format::load(path)?;
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
    let source = TraceSource::open(path)?;
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

/// Parses the tracer metadata embedded in the compressed trace `path` (its `TRACER_META`
/// section, `bytes`); messages name it `<path>#trace-meta.json`.
///
/// # Errors
/// [`SimulateError::EmbeddedMetaNotUtf8`], or [`SimulateError::Meta`] when it is not valid
/// `trace-meta.json`.
pub fn embedded_tracer_meta(path: &Path, bytes: Vec<u8>) -> Result<TraceMeta, SimulateError> {
    let name = PathBuf::from(format!("{}#{META_FILE}", path.display()));
    let text = String::from_utf8(bytes)
        .map_err(|_| SimulateError::EmbeddedMetaNotUtf8 { name: name.clone() })?;
    Ok(TraceMeta::parse(&name, &text)?)
}

/// Runs the simulate pipeline (module docs): loads every input `config` names, replays the
/// trace with `frontend`'s observer, writes the simulated profile when asked, and returns the
/// report.
///
/// # Errors
/// A [`SimulateError`]; [`SimulateError::kind`] classes it (bad input, deadlock, output).
pub fn simulate(
    config: &SimulateConfig,
    frontend: &mut dyn Frontend,
) -> Result<Outcome, SimulateError> {
    if let Some(n) = config.np {
        if n > timeless_platform::deployment::MAX_RANKS {
            return Err(SimulateError::TooManyRanks { n });
        }
    }
    let mut cfg = ReplayConfig::default();
    if let Some(f) = &config.cfg_file {
        read_cfg_file(f, &mut cfg, &mut |n| frontend.notice(n))?;
    }
    for item in &config.cfg {
        apply_cfg(&mut cfg, item, &mut |n| frontend.notice(n)).map_err(|message| {
            SimulateError::Cfg {
                item: item.clone(),
                message,
            }
        })?;
    }
    let platform_path = config.platform.clone().ok_or(SimulateError::NoPlatform)?;
    let opts = PlatformOptions {
        loopback_bandwidth_bytes_per_sec: cfg.loopback_bandwidth_bytes_per_sec,
        loopback_latency_secs: cfg.loopback_latency_secs,
    };
    let platform = Platform::from_file(&platform_path, &opts)?;
    for notice in platform.notices() {
        frontend.notice(notice);
    }
    let what_if = config.what_if;
    what_if.validate()?;
    let platform = what_if.apply(platform);
    if what_if.ideal_network {
        cfg.ideal_network();
    }

    if let Some(description) = &config.jobs {
        return simulate_jobs(config, description, &platform, cfg, frontend, what_if);
    }
    let (traces, mut first_file, embedded) = match &config.trace {
        Some(t) => {
            let opened = open_trace(t)?;
            (Some(opened.set), opened.first_file, opened.embedded_meta)
        }
        None => (None, None, None),
    };
    let np = config
        .np
        .or_else(|| traces.as_ref().and_then(|t| t.ranks()));
    let dep = match (&config.deployment, &config.hostfile) {
        (Some(d), _) => deployment::from_file(d, &platform)?,
        (None, Some(h)) => deployment::from_hostfile(h, &platform, np)?,
        (None, None) => {
            let np = np.ok_or(SimulateError::UnknownRankCount)?;
            deployment::default_for(&platform, np)
        }
    };
    let mut placement: Vec<_> = dep.ranks.iter().map(|p| p.host).collect();
    if let Some(n) = config.np {
        if n > placement.len() && !placement.is_empty() {
            // SimGrid wraps ranks round-robin over the hostfile.
            placement = (0..n).map(|i| placement[i % placement.len()]).collect();
        }
        placement.truncate(n);
    }
    if placement.is_empty() {
        return Err(SimulateError::NoRank);
    }
    let traces = match traces {
        Some(t) => t,
        None => {
            let base = config
                .deployment
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(Path::new(""));
            let files = dep
                .ranks
                .iter()
                .enumerate()
                .map(|(rank, p)| {
                    p.args
                        .first()
                        .map(|a| base.join(a))
                        .ok_or(SimulateError::NoTraceArgument { rank })
                })
                .collect::<Result<Vec<_>, _>>()?;
            first_file = files.first().cloned();
            Box::new(TraceSource::PerRank(files))
        }
    };
    if let Some(listed) = traces.ranks() {
        if listed < placement.len() {
            return Err(SimulateError::TooFewTraces {
                deployed: placement.len(),
                listed,
            });
        }
    }

    let meta = match (config.compensation, embedded, &config.trace) {
        (false, _, _) => None,
        (true, Some(bytes), Some(t)) => Some(Ok(embedded_tracer_meta(t, bytes)?)),
        (true, _, _) => Some(TraceMeta::find_near(
            config.trace.as_deref(),
            first_file.as_deref(),
        )?),
    };
    polls::set_trace_polls(&mut cfg, config, first_file.as_deref(), frontend)?;
    let compensated = match &meta {
        Some(Ok(m)) => Some(CompensatedTrace::new(&*traces, m)),
        _ => None,
    };
    let trace_set: &dyn TraceSet = match &compensated {
        Some(c) => c,
        None => &*traces,
    };
    frontend.replay_size(placement.len());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ahead = if config.decode_ahead && cores > 1 && placement.len() > 1 {
        Some(timeless_trace::DecodeAhead::new(
            trace_set,
            placement.len() as u32,
        )?)
    } else {
        None
    };
    let trace_set: &dyn TraceSet = match &ahead {
        Some(a) => a,
        None => trace_set,
    };
    let mut sim = Simulation::new(&platform, &placement, trace_set, cfg)?;
    sim.set_full_solve(config.full_solve);
    sim.set_region_filling(config.region_filling);
    let observer = frontend.observer().map_err(SimulateError::Frontend)?;
    let mut recorder = config
        .profile
        .as_ref()
        .map(|_| timeless_replay::ProfileRecorder::new(placement.len() as u32));
    let report = match &mut recorder {
        Some(rec) => sim.run(&mut timeless_replay::Tee(observer, rec)),
        None => sim.run(observer),
    }?;
    if let (Some(rec), Some(out)) = (recorder, &config.profile) {
        write_simulated_profile(
            rec,
            out,
            config.profile_names.as_deref(),
            config.trace.as_deref(),
            placement.len() as u32,
            &platform_path,
            &config.cfg,
        )?;
    }
    let compensation = match (meta, &compensated) {
        (None, _) => BurstStatus::Off,
        (Some(Err(dirs)), _) => BurstStatus::NoMetadata(dirs),
        (Some(Ok(meta)), Some(c)) => BurstStatus::Applied {
            meta,
            accounts: c.accounts(),
        },
        (Some(Ok(_)), None) => unreachable!("metadata found implies a compensated trace"),
    };
    Ok(Outcome {
        report,
        compensation,
        what_if: what_if.describe(),
        ranks: placement.len(),
        jobs: Vec::new(),
    })
}

/// The multi-job part of [`simulate`]: jobs from `description`, placed by the deployment or
/// hostfile, each compensated when its metadata is found, replayed together, then each alone.
fn simulate_jobs(
    config: &SimulateConfig,
    description: &Path,
    platform: &Platform,
    cfg: ReplayConfig,
    frontend: &mut dyn Frontend,
    what_if: WhatIf,
) -> Result<Outcome, SimulateError> {
    use timeless_replay::jobs::description::{place_jobs, read_description, JobPlacement};
    for (given, option) in [
        (config.trace.is_some(), "a trace argument"),
        (config.profile.is_some(), "--profile"),
        (config.np.is_some(), "-n"),
    ] {
        if given {
            return Err(SimulateError::NotWithJobs { option });
        }
    }
    let specs = read_description(description)?;
    let placement = match (&config.deployment, &config.hostfile) {
        (Some(d), _) => JobPlacement::Deployment(d),
        (None, Some(h)) => JobPlacement::Hostfile(h),
        (None, None) => JobPlacement::Default,
    };
    let inputs = place_jobs(&specs, placement, platform)?;
    let mut metas = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let first = match &input.traces {
            TraceSource::PerRank(v) => v.first().cloned(),
            TraceSource::Shared(p) => Some(p.clone()),
        };
        metas.push(if config.compensation {
            TraceMeta::find_near(None, first.as_deref())?.ok()
        } else {
            None
        });
    }
    let compensated: Vec<Option<CompensatedTrace>> = inputs
        .iter()
        .zip(&metas)
        .map(|(i, m)| m.as_ref().map(|m| CompensatedTrace::new(&i.traces, m)))
        .collect();
    let jobs: Vec<timeless_replay::Job> = inputs
        .iter()
        .zip(&compensated)
        .map(|(i, c)| {
            let mut job = i.job();
            if let Some(c) = c {
                job.traces = c;
            }
            job
        })
        .collect();
    let mut first = 0u32;
    let listing: Vec<(String, u32, u32)> = jobs
        .iter()
        .map(|j| {
            let n = j.hosts.len() as u32;
            first += n;
            (j.name.clone(), first - n, n)
        })
        .collect();
    frontend.jobs(&listing);
    frontend.replay_size(first as usize);
    let mut sim = Simulation::with_jobs(platform, &jobs, cfg.clone())?;
    sim.set_full_solve(config.full_solve);
    sim.set_region_filling(config.region_filling);
    let observer = frontend.observer().map_err(SimulateError::Frontend)?;
    let report = sim.run(observer)?;
    let alone = if config.job_baselines {
        timeless_replay::jobs::alone_times_secs(platform, &jobs, &cfg)?
            .into_iter()
            .map(Some)
            .collect()
    } else {
        vec![None; jobs.len()]
    };
    let outcomes = report
        .jobs
        .iter()
        .zip(alone)
        .zip(&compensated)
        .map(|((r, alone_secs), c)| JobOutcome {
            report: r.clone(),
            alone_secs,
            compensated: c.is_some(),
        })
        .collect();
    let ranks = report.ranks.len();
    Ok(Outcome {
        report,
        compensation: BurstStatus::Off,
        what_if: what_if.describe(),
        ranks,
        jobs: outcomes,
    })
}

/// Writes the simulated profile of a replay (`rec`, `ranks` ranks) to `out`: communicator
/// names from the measured profile `names`, or from `profile.db` next to `trace` when it
/// exists, else from the members (see `timeless_replay::profile`); `platform` and `cfg` are
/// recorded in the run's metadata.
///
/// # Errors
/// [`SimulateError::ProfileNames`] when the naming profile cannot be read,
/// [`SimulateError::ProfileWrite`] when `out` cannot be written.
pub fn write_simulated_profile(
    rec: timeless_replay::ProfileRecorder,
    out: &Path,
    names: Option<&Path>,
    trace: Option<&Path>,
    ranks: u32,
    platform: &Path,
    cfg: &[String],
) -> Result<(), SimulateError> {
    let beside = trace
        .and_then(|t| t.parent())
        .map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
        })
        .map(|d| d.join("profile.db"))
        .filter(|p| p.is_file());
    let names_db = names.map(Path::to_path_buf).or(beside);
    let names = match &names_db {
        Some(p) => Some(timeless_profile::store::read(p).map_err(SimulateError::ProfileNames)?),
        None => None,
    };
    let meta = timeless_profile::RunMeta {
        source: timeless_profile::Source::Simulated,
        program: trace.map_or_else(|| "(deployment)".into(), |t| t.display().to_string()),
        ranks,
        mpi_library: format!("timeless replay on {}", platform.display()),
        // No wall-clock date: a simulated profile is a function of its inputs (same inputs, same
        // bytes; two runs straddling a second differed here).
        date: String::new(),
        notes: cfg.join(" "),
    };
    let p = rec.finish(meta, names.as_ref());
    timeless_profile::store::write(out, &p).map_err(SimulateError::ProfileWrite)
}
