//! `timeless simulate`: arguments → [`timeless_run::SimulateConfig`] → [`timeless_run::simulate`]
//! → the report printed as text or JSON.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use timeless_replay::Observer;
use timeless_run::{simulate, ErrorKind, Frontend, FrontendError, SimulateConfig, SimulateError};

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
    /// Fill each changed max-min component whole, in SimGrid 3.32's order of rounds, instead
    /// of re-filling only the region a change reaches and checking the max-min certificate
    /// around it (the default; values equal to rounding, about 1e-15 relative): the filling
    /// SimGrid does bit for bit, slower on fat-trees and tori.
    #[arg(long)]
    pub full_filling: bool,
    /// Parse the traces on the replay's own thread instead of a background decoder thread (the
    /// default when the machine has more than one core and there are several ranks).
    #[arg(long)]
    pub no_decode_ahead: bool,
    /// Print what the kernel did on stderr: solves (from rest, on the general path), the
    /// components' size, the solution memo's hits, the fillings' rounds, hub registrations and
    /// the share of rate updates that left a rate unchanged (where a replay's time goes); with
    /// `--format json` the counts are also the report's `kernel` member.
    #[arg(long)]
    pub kernel_stats: bool,
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
    /// Several jobs on the platform at once: a SimGrid `replay_multiple` description file, one
    /// line per job: `instance_id trace_list ranks [delay_flops]`. `--deployment` is then a
    /// multi-job deployment (actor arguments `instance rank trace [delay]`), `--hostfile` places
    /// the jobs' ranks in order. Reports each job's time and its slowdown against running alone.
    #[arg(long, value_name = "DESCRIPTION", conflicts_with_all = ["trace", "np", "profile"])]
    pub jobs: Option<PathBuf>,
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

/// The binary's part in the pipeline: notices on stderr, the progress bar and the timeline.
struct Cli {
    timeline: Option<PathBuf>,
    progress: Option<Progress>,
    jobs: Vec<(String, u32, u32)>,
}

impl Frontend for Cli {
    fn notice(&mut self, text: &str) {
        eprintln!("timeless: notice: {text}");
    }

    fn observer(&mut self) -> Result<&mut dyn Observer, FrontendError> {
        let timeline = match &self.timeline {
            Some(p) => {
                let mut t = Timeline::create(p)?;
                t.set_jobs(&self.jobs);
                Some(t)
            }
            None => None,
        };
        Ok(self.progress.insert(Progress::new(timeline)))
    }

    fn jobs(&mut self, jobs: &[(String, u32, u32)]) {
        self.jobs = jobs.to_vec();
    }

    fn replay_size(&mut self, ranks: usize) {
        crate::memory::huge_pages_for_replay(ranks);
    }
}

/// The exit-code class of a pipeline error.
pub(crate) fn failure(e: SimulateError) -> Failure {
    match e.kind() {
        ErrorKind::Deadlock => Failure::Deadlock(e.into()),
        ErrorKind::Input => Failure::Input(e.into()),
        _ => Failure::Other(e.into()),
    }
}

/// Runs `timeless simulate`.
pub fn run(mut args: SimulateArgs) -> Result<(), Failure> {
    let defaults = args.trace.is_none()
        && args.jobs.is_none()
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
    let config = config(&args);
    let mut cli = Cli {
        timeline: args.timeline.clone(),
        progress: None,
        jobs: Vec::new(),
    };
    let result = simulate(&config, &mut cli);
    let timeline = cli.progress.and_then(Progress::finish);
    let outcome = result.map_err(failure)?;
    if let Some(t) = timeline {
        t.close().map_err(Failure::Other)?;
    }
    for w in &outcome.report.warnings {
        eprintln!("timeless: warning: {w}");
    }
    if args.kernel_stats {
        eprintln!("timeless: kernel: {}", outcome.report.kernel);
    }
    let out = match args.format {
        Format::Text => {
            let mut t = output::text(&outcome.report);
            if outcome.jobs.is_empty() {
                // Jobs say in their table whether they were compensated.
                t += &crate::compensate::burst_text(&outcome.compensation);
            }
            for c in &outcome.what_if {
                t.push_str(&format!("What-if: {c}\n"));
            }
            t + &output::jobs_text(&outcome.jobs)
        }
        Format::Json => {
            if let Some(m) = output::overflowed(&outcome.report) {
                return Err(Failure::Input(anyhow::anyhow!(m)));
            }
            let j = crate::compensate::burst_json(
                &output::json(&outcome.report),
                &outcome.compensation,
            );
            let j = output::with_what_if(&j, &outcome.what_if);
            let j = if args.kernel_stats {
                output::with_member(&j, "kernel", &output::kernel_json(&outcome.report))
            } else {
                j
            };
            if outcome.jobs.is_empty() {
                j
            } else {
                output::with_member(&j, "jobs", &output::jobs_json(&outcome.jobs))
            }
        }
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .map_err(|e| Failure::Other(e.into()))?;
    Ok(())
}

/// The pipeline's configuration from the arguments.
fn config(args: &SimulateArgs) -> SimulateConfig {
    let mut c = SimulateConfig::default();
    c.platform = args.platform.clone();
    c.trace = args.trace.clone();
    c.deployment = args.deployment.clone();
    c.hostfile = args.hostfile.clone();
    c.np = args.np;
    c.cfg = args.cfg.clone();
    c.cfg_file = args.cfg_file.clone();
    c.compensation = !args.no_compensation;
    c.full_solve = args.full_solve;
    c.region_filling = !args.full_filling;
    c.decode_ahead = !args.no_decode_ahead;
    c.what_if = timeless_platform::WhatIf {
        compute: args.scale_compute,
        bandwidth: args.scale_bandwidth,
        latency: args.scale_latency,
        ideal_network: args.ideal_network,
        ideal_compute: args.ideal_compute,
    };
    c.profile = args.profile.clone();
    c.profile_names = args.profile_names.clone();
    c.jobs = args.jobs.clone();
    c
}
