//! SimGrid `replay_multiple` inputs: the description file, and where each job's ranks run.
//!
//! The description file has one line per job, `instance_id trace_list ranks [delay_flops]`
//! (SimGrid's `examples/smpi/replay_multiple/README`), blank lines and `#` comments skipped:
//!
//! ```text
//! 1 smpi_replay.txt 32 0
//! 2 smpi_replay.txt 32 125000000000
//! ```
//!
//! starts job `1` (32 ranks, traces listed in `smpi_replay.txt`, a list file in SimGrid's
//! `-replay` format, resolved against the description file's directory) at once and job `2`
//! after each of its ranks has executed 1.25e11 flops on its host.
//!
//! Placement, in [`place_jobs`]:
//! * a **deployment** as SimGrid's `generate_multiple_deployment.sh` writes it: one `<actor>`
//!   per rank whose arguments are `instance_id rank trace_file [delay_flops]`. As in SimGrid
//!   the actor's trace file and delay are the ones replayed (the description gives the jobs
//!   and their sizes); relative trace paths are resolved against the deployment's directory,
//!   then the current directory. Every rank of every job must be deployed exactly once, and
//!   the actors of one job must give the same delay.
//! * a **hostfile** (or the platform's hosts sorted by name when there is none): ranks are
//!   placed in job order, the k-th rank overall on host `k % hosts` (the script's order).

use std::path::{Path, PathBuf};

use timeless_platform::{deployment, HostId, Platform, PlatformError};
use timeless_trace::{TraceError, TraceSource};

/// Why multi-job inputs could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobsError {
    /// A file cannot be read.
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A line of the description or an actor of the deployment is wrong.
    #[error("{path}:{line}: {what}")]
    Bad {
        path: String,
        line: u32,
        what: String,
    },
    /// The deployment or hostfile is invalid.
    #[error(transparent)]
    Platform(Box<PlatformError>),
    /// A trace list cannot be opened.
    #[error(transparent)]
    Trace(Box<TraceError>),
}

impl From<PlatformError> for JobsError {
    fn from(e: PlatformError) -> Self {
        JobsError::Platform(Box::new(e))
    }
}

impl From<TraceError> for JobsError {
    fn from(e: TraceError) -> Self {
        JobsError::Trace(Box::new(e))
    }
}

/// One line of a description file.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// `instance_id`.
    pub name: String,
    /// `trace_list`, resolved against the description file's directory.
    pub trace_list: PathBuf,
    /// `ranks` (>= 1).
    pub ranks: u32,
    /// `delay_flops` (finite, >= 0; 0 when absent).
    pub start_delay_flops: f64,
    /// Its 1-based line.
    pub line: u32,
}

/// A job ready to replay: its traces, hosts and delay (see [`crate::Job`]).
#[derive(Debug)]
pub struct JobInput {
    /// `instance_id`.
    pub name: String,
    /// Its ranks' traces.
    pub traces: TraceSource,
    /// Host of each rank.
    pub hosts: Vec<HostId>,
    /// Flops before its trace starts.
    pub start_delay_flops: f64,
}

impl JobInput {
    /// The [`crate::Job`] view of this input.
    pub fn job(&self) -> crate::Job<'_> {
        crate::Job {
            name: self.name.clone(),
            traces: &self.traces,
            hosts: self.hosts.clone(),
            start_delay_flops: self.start_delay_flops,
        }
    }
}

/// Parses a description file.
///
/// # Errors
/// [`JobsError::Io`], or [`JobsError::Bad`] naming the line: fewer than 3 fields, a rank count
/// that is not an integer >= 1, a delay that is not a finite number >= 0, a duplicate
/// `instance_id`, more than 4 fields, or no job at all.
pub fn read_description(path: &Path) -> Result<Vec<JobSpec>, JobsError> {
    let text = std::fs::read_to_string(path).map_err(|source| JobsError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_description(&text, path)
}

/// [`read_description`] on the file's text; `path` names it and anchors relative trace lists.
pub fn parse_description(text: &str, path: &Path) -> Result<Vec<JobSpec>, JobsError> {
    let base = path.parent().unwrap_or(Path::new(""));
    let bad = |line: usize, what: String| JobsError::Bad {
        path: path.display().to_string(),
        line: line as u32,
        what,
    };
    let mut jobs: Vec<JobSpec> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if fields.len() < 3 || fields.len() > 4 {
            return Err(bad(
                line,
                format!(
                    "expected 'instance_id trace_list ranks [delay_flops]', found {} field(s)",
                    fields.len()
                ),
            ));
        }
        let ranks = fields[2]
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                bad(
                    line,
                    format!("ranks '{}' is not an integer >= 1", fields[2]),
                )
            })?;
        let start_delay_flops = match fields.get(3) {
            None => 0.0,
            Some(v) => parse_delay(v).ok_or_else(|| {
                bad(
                    line,
                    format!("delay_flops '{v}' is not a finite number >= 0"),
                )
            })?,
        };
        if let Some(first) = jobs.iter().find(|j| j.name == fields[0]) {
            return Err(bad(
                line,
                format!(
                    "instance '{}' is described twice (first at line {})",
                    fields[0], first.line
                ),
            ));
        }
        jobs.push(JobSpec {
            name: fields[0].to_string(),
            trace_list: base.join(fields[1]),
            ranks,
            start_delay_flops,
            line: line as u32,
        });
    }
    if jobs.is_empty() {
        return Err(bad(0, "no job described".to_string()));
    }
    Ok(jobs)
}

fn parse_delay(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0)
}

/// Where the jobs' ranks run.
#[derive(Debug, Clone, Copy)]
pub enum JobPlacement<'a> {
    /// SimGrid's multi-job deployment (actor arguments `instance rank trace [delay]`).
    Deployment(&'a Path),
    /// An smpirun hostfile, ranks in job order round-robin.
    Hostfile(&'a Path),
    /// The platform's hosts sorted by name, ranks in job order round-robin.
    Default,
}

/// Gives each described job its traces, hosts and delay.
///
/// # Errors
/// A trace list or trace file that cannot be opened, an invalid hostfile or deployment, or a
/// deployment that does not deploy each rank of each job exactly once (named by line).
pub fn place_jobs(
    specs: &[JobSpec],
    placement: JobPlacement<'_>,
    platform: &Platform,
) -> Result<Vec<JobInput>, JobsError> {
    let total: usize = specs.iter().map(|s| s.ranks as usize).sum();
    let round_robin = |hosts: Vec<HostId>| -> Result<Vec<JobInput>, JobsError> {
        let mut k = 0usize;
        let mut out = Vec::with_capacity(specs.len());
        for s in specs {
            let traces = TraceSource::open(&s.trace_list)?;
            let mine = (0..s.ranks)
                .map(|_| {
                    let h = hosts[k % hosts.len()];
                    k += 1;
                    h
                })
                .collect();
            out.push(JobInput {
                name: s.name.clone(),
                traces,
                hosts: mine,
                start_delay_flops: s.start_delay_flops,
            });
        }
        Ok(out)
    };
    match placement {
        JobPlacement::Hostfile(h) => {
            let d = deployment::from_hostfile(h, platform, None)?;
            round_robin(d.ranks.into_iter().map(|p| p.host).collect())
        }
        JobPlacement::Default => {
            let d = deployment::default_for(platform, total.max(1));
            if d.ranks.is_empty() {
                return Err(JobsError::Bad {
                    path: "(platform)".to_string(),
                    line: 0,
                    what: "the platform has no host to run the jobs on".to_string(),
                });
            }
            round_robin(d.ranks.into_iter().map(|p| p.host).collect())
        }
        JobPlacement::Deployment(path) => from_deployment(specs, path, platform),
    }
}

fn from_deployment(
    specs: &[JobSpec],
    path: &Path,
    platform: &Platform,
) -> Result<Vec<JobInput>, JobsError> {
    let origin = path.display().to_string();
    let base = path.parent().unwrap_or(Path::new(""));
    let bad = |line: u32, what: String| JobsError::Bad {
        path: origin.clone(),
        line,
        what,
    };
    // Per job, per rank: (host, trace file, line).
    let mut slots: Vec<Vec<Option<(HostId, PathBuf, u32)>>> =
        specs.iter().map(|s| vec![None; s.ranks as usize]).collect();
    let mut delays: Vec<Option<(f64, u32)>> = vec![None; specs.len()];
    for a in deployment::actors_from_file(path, platform)? {
        let args = &a.placement.args;
        if args.len() < 3 || args.len() > 4 {
            return Err(bad(
                a.line,
                format!(
                    "a multi-job actor has arguments 'instance rank trace_file [delay_flops]', found {}",
                    args.len()
                ),
            ));
        }
        let j = specs
            .iter()
            .position(|s| s.name == args[0])
            .ok_or_else(|| {
                bad(
                    a.line,
                    format!(
                        "instance '{}' is not in the description (instances: {})",
                        args[0],
                        specs
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
        let size = specs[j].ranks;
        let rank = args[1]
            .parse::<u32>()
            .ok()
            .filter(|&r| r < size)
            .ok_or_else(|| {
                bad(
                    a.line,
                    format!(
                        "rank '{}' of instance '{}' is not an integer in 0..{size}",
                        args[1], args[0]
                    ),
                )
            })?;
        let delay = match args.get(3) {
            None => 0.0,
            Some(v) => parse_delay(v).ok_or_else(|| {
                bad(
                    a.line,
                    format!("delay_flops '{v}' is not a finite number >= 0"),
                )
            })?,
        };
        match delays[j] {
            None => delays[j] = Some((delay, a.line)),
            Some((d, first)) if d != delay => {
                return Err(bad(
                    a.line,
                    format!(
                        "instance '{}' starts with delay {delay} here but {d} at line {first}; \
                         the ranks of one job share one delay",
                        args[0]
                    ),
                ))
            }
            Some(_) => {}
        }
        let candidate = base.join(&args[2]);
        let trace = if candidate.exists() {
            candidate
        } else {
            PathBuf::from(&args[2])
        };
        if !trace.exists() {
            return Err(bad(
                a.line,
                format!("trace file '{}' does not exist", args[2]),
            ));
        }
        let slot = &mut slots[j][rank as usize];
        if let Some((_, _, first)) = slot {
            return Err(bad(
                a.line,
                format!(
                    "rank {rank} of instance '{}' is deployed twice (first at line {first})",
                    args[0]
                ),
            ));
        }
        *slot = Some((a.placement.host, trace, a.line));
    }
    let mut out = Vec::with_capacity(specs.len());
    for ((s, ranks), delay) in specs.iter().zip(slots).zip(delays) {
        let mut hosts = Vec::with_capacity(ranks.len());
        let mut files = Vec::with_capacity(ranks.len());
        for (r, slot) in ranks.into_iter().enumerate() {
            let (h, f, _) = slot.ok_or_else(|| {
                bad(
                    0,
                    format!(
                        "rank {r} of instance '{}' ({} ranks, description line {}) is not deployed",
                        s.name, s.ranks, s.line
                    ),
                )
            })?;
            hosts.push(h);
            files.push(f);
        }
        let traces = if files.len() == 1 {
            TraceSource::Shared(files.pop().expect("one file"))
        } else {
            TraceSource::PerRank(files)
        };
        out.push(JobInput {
            name: s.name.clone(),
            traces,
            hosts,
            start_delay_flops: delay.map_or(0.0, |(d, _)| d),
        });
    }
    Ok(out)
}
