//! Host speed from a traced run (seed 003 §5): "determine the number of flops of each event as
//! long as the time spent to compute them. Then we can determine a flop rate of each single
//! action, compute a weighted average on each process, and get an average flop rate for all the
//! process set. Finally we repeat this procedure five times and compute an average".
//!
//! Input: trace directories written by `timeless trace --timestamps`: per rank, the TI file
//! `rank-<r>.txt` (the flops of every `compute` burst) and the timed file `rank-<r>.timed.txt`
//! (`<rank> <enter> <exit> <action ...>` for every record of the TI file but the bursts, in
//! the same order, `comm_def` included; a blocking probe, a comment in the TI file, is a call
//! there). A burst's wall time is
//! the sum of the gaps between calls since the previous burst: the gap between the exit of the
//! call before it and the enter of the call after it, plus the gaps the tracer carried over into
//! it (bursts shorter than its threshold join the next one) or that a probe split.
//!
//! **Ranks sharing cores.** The wall time of a burst only measures the host's speed when the
//! burst had a core to itself. When more bursts run at once on a host than it has cores (a
//! folded acquisition, `timeless trace --fold`), SimGrid's CPU model shares the host's cores
//! between them at replay (`cpu/model:Cas01`: an action gets at most one core, the host's
//! `core × speed` is shared max-min), so the measured wall time already contains the sharing the
//! replay adds again. Each burst is therefore timed in *core-seconds*: the integral over the
//! burst of `min(1, C / k(t))`, where `k(t)` is the number of bursts running on the host at `t`
//! and `C` the number of cores the traced run could use there (from the acquisition mode of
//! `trace-meta.json`: a folded run is confined to ⌈ranks/K⌉ cores). On a regular acquisition
//! (`k ≤ C`) this is the wall time. What is left in the rate is the share of its core a burst
//! really got (ranks polling in MPI calls, other processes), which the replay does not model
//! otherwise.
//!
//! **Ranks pinned to cores** (`timeless trace --pin`): a rank bound to one CPU shares that
//! core with the ranks bound to it only, so `k(t)` counts the bursts of the core's ranks and
//! `C` is 1. The CPU of each rank is `trace-meta.json`'s `per_rank_bound_cpu`; a trace written
//! before that field, folded with every rank allowed one CPU (`per_rank_allowed_cpus`), was
//! pinned by `--pin`, rank i of a host's ranks on core i mod C ([`RunRate::bound_cpus`]).
//! Pooling a pinned run's cores credits a burst with a core whenever the other core idles:
//! 8 ranks pinned 4 per core on 2 cores (CoMD, `validation/external`, run 9's traces)
//! measured 5.57-5.75 Gflop/s pooled against 6.00-6.04 per core, and 6.00-6.03 when the same
//! program ran 2 ranks on 2 cores: counted per core, a burst's rate is the core's speed.
//!
//! Example: ranks 0 and 2 pinned to core 0 compute 1e9 flops each over [0, 1] s, rank 1 on
//! core 1 computes 1e9 flops over [1, 2] s. Pooled over the 2 cores, k = 2 then 1: every burst
//! gets a whole core, 3 core-seconds, 1e9 flop/s. Per core, ranks 0 and 2 had half of core 0
//! each: 2 core-seconds, 1.5e9 flop/s, the speed every burst ran at.
//!
//! Only bursts whose gaps last at least [`MIN_RATE_BURST_SECS`] each on average count: a gap
//! also holds the tracer's own work around its timestamps, which dominates short gaps, and a
//! burst made of many short gaps (the tracer carries gaps shorter than its threshold into the
//! next written burst, up to 20 µs of CPU time) is as much tracer as a short one. Rate of a rank = Σ flops / Σ
//! core-seconds over its counted bursts (the flops-weighted mean of the per-burst rates). Rate of a run: [`RunRate::flops_per_sec`] pools the ranks (Σ flops / Σ
//! core-seconds over all bursts, which makes the replayed compute time of the run equal the
//! measured one; a rank that barely computes, e.g. a master, cannot drag it), while
//! [`RunRate::seed_flops_per_sec`] is the seed's mean over the ranks of their wall-clock rates.
//! Because the tracer converts thread CPU seconds into flops at its reference speed, the rate is
//! the reference speed times the share of the CPU the bursts actually got.

use std::path::{Path, PathBuf};

use crate::CalibrateError;

mod placement;
mod taken;

use placement::hosts_of;
pub use taken::{poll_secs_per_call, taken_shares};

/// One burst's wall-clock pieces, seconds on the traced run's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Start (exit of the call before), seconds.
    pub start_secs: f64,
    /// End (enter of the call after), seconds.
    pub end_secs: f64,
    /// Index of the burst in [`RankBursts::flops`].
    pub burst: u32,
}

/// One rank's compute bursts: flops per burst, and the wall-clock segments of all bursts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankBursts {
    /// Flops of each burst (a `compute` record of the TI file, with those it absorbed).
    pub flops: Vec<f64>,
    /// Wall-clock segments, in time order; several per burst when a probe or carried-over
    /// gaps split it.
    pub segments: Vec<Segment>,
    /// The rank's first call's enter and its last call's exit, seconds on the traced run's
    /// clock (`None` without calls).
    pub span: Option<(f64, f64)>,
}

/// Shortest burst (wall seconds, its gaps summed) that counts for the rate. A gap between two
/// calls also holds the tracer's work after the first call's exit timestamp and before the
/// second's enter timestamp, which the burst's CPU time leaves out: about 2 µs per call with
/// timestamps on this project's test machine (persistent: 14 µs of gaps for 3.6 µs of CPU per
/// iteration of 5 calls). Bursts of at least 100 µs keep that below a few percent of the rate;
/// shorter ones measure the tracer, not the host.
pub const MIN_RATE_BURST_SECS: f64 = 100e-6;

/// Smallest share of a run's flops that the bursts counted for the rate must hold for the rate
/// to stand for the run's computation ([`RunRate::usable_flops_per_sec`]).
pub const MIN_RATE_COVERAGE: f64 = 0.5;

/// One rank's bursts, summed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankRate {
    /// World rank.
    pub rank: usize,
    /// Flops of the bursts that count for the rate (at least [`MIN_RATE_BURST_SECS`] of wall
    /// time).
    pub flops: f64,
    /// Their wall time, seconds.
    pub wall_secs: f64,
    /// Their time in core-seconds (wall time × `min(1, cores / concurrent bursts)`).
    pub core_secs: f64,
    /// Number of such bursts.
    pub bursts: usize,
    /// Flops of all the bursts that have a wall time.
    pub all_flops: f64,
    /// Wall time of all these bursts, seconds.
    pub all_wall_secs: f64,
}

impl RankRate {
    /// `flops / core_secs` in flop/s (0 without bursts).
    pub fn flops_per_sec(&self) -> f64 {
        if self.core_secs > 0.0 {
            self.flops / self.core_secs
        } else {
            0.0
        }
    }

    /// `all_flops / all_wall_secs` in flop/s over every burst (0 without bursts): the seed's
    /// per-process rate.
    pub fn wall_flops_per_sec(&self) -> f64 {
        if self.all_wall_secs > 0.0 {
            self.all_flops / self.all_wall_secs
        } else {
            0.0
        }
    }
}

/// One traced run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRate {
    /// The trace directory.
    pub dir: PathBuf,
    /// Per rank, in rank order (ranks without bursts included, with 0 bursts).
    pub ranks: Vec<RankRate>,
    /// Per host of the run (in order of first rank): its name and the cores its ranks could
    /// use (`None`: unknown, no sharing correction).
    pub hosts: Vec<(String, Option<usize>)>,
    /// Per rank, the CPU it was bound to when every rank of its host was bound to one (module
    /// doc, "Ranks pinned to cores"): its bursts then share that core with its core-mates' only.
    pub bound_cpus: Vec<Option<u32>>,
    /// The traced run from the first call's enter (`MPI_Init`'s) to the last call's exit
    /// (`MPI_Finalize`'s) over all ranks, seconds: the span a replay's simulated time covers,
    /// without the launch, the program's work outside MPI and the tracer's start and end
    /// (`None` without calls).
    pub span_secs: Option<f64>,
}

impl RunRate {
    /// Pooled rate: Σ flops / Σ core-seconds over the bursts of all ranks, flop/s (0 without
    /// bursts). The default host speed of `timeless validate`.
    pub fn flops_per_sec(&self) -> f64 {
        let flops: f64 = self.ranks.iter().map(|r| r.flops).sum();
        let secs: f64 = self.ranks.iter().map(|r| r.core_secs).sum();
        if secs > 0.0 {
            flops / secs
        } else {
            0.0
        }
    }

    /// Share of the run's flops in the bursts that count for the rate (1 without bursts).
    pub fn coverage(&self) -> f64 {
        let all: f64 = self.ranks.iter().map(|r| r.all_flops).sum();
        if all > 0.0 {
            self.ranks.iter().map(|r| r.flops).sum::<f64>() / all
        } else {
            1.0
        }
    }

    /// [`RunRate::flops_per_sec`] when the bursts it counts hold at least
    /// [`MIN_RATE_COVERAGE`] of the run's flops, else `None` (a run that mostly communicates:
    /// its short bursts time the tracer, not the host).
    pub fn usable_flops_per_sec(&self) -> Option<f64> {
        let r = self.flops_per_sec();
        (r > 0.0 && self.coverage() >= MIN_RATE_COVERAGE).then_some(r)
    }

    /// The seed's rate: mean over the ranks that have bursts of their wall-clock rates over all
    /// their bursts, flop/s (0 without bursts). Only meaningful for a regular acquisition.
    pub fn seed_flops_per_sec(&self) -> f64 {
        let r: Vec<f64> = self
            .ranks
            .iter()
            .filter(|r| r.all_wall_secs > 0.0)
            .map(RankRate::wall_flops_per_sec)
            .collect();
        if r.is_empty() {
            0.0
        } else {
            r.iter().sum::<f64>() / r.len() as f64
        }
    }
}

fn read(path: &Path) -> Result<String, CalibrateError> {
    std::fs::read_to_string(path).map_err(|source| CalibrateError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Action lines (rank first), with their 1-based line numbers.
fn lines(text: &str) -> impl Iterator<Item = (u64, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.trim();
        (!l.is_empty() && !l.starts_with('#'))
            .then(|| (i as u64 + 1, l.split_whitespace().collect()))
    })
}

/// A call of the timed file.
struct Call<'a> {
    line: u64,
    keyword: &'a str,
    enter_secs: f64,
    exit_secs: f64,
}

/// The calls of a rank's timed file (`<rank> <enter> <exit> <action> ...` per line), in file
/// order.
///
/// # Errors
/// [`CalibrateError::Parse`] naming the file and line of a short line or a time that is not a
/// finite number.
fn timed_calls<'a>(timed: &'a str, origin: &str) -> Result<Vec<Call<'a>>, CalibrateError> {
    let perr = |line: u64, what: String| CalibrateError::Parse {
        origin: origin.to_string(),
        line,
        what,
    };
    let mut calls = Vec::new();
    for (line, f) in lines(timed) {
        if f.len() < 4 {
            return Err(perr(
                line,
                "expected '<rank> <enter> <exit> <action> ...'".into(),
            ));
        }
        let num = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| perr(line, format!("time '{s}' is not a number")))
        };
        calls.push(Call {
            line,
            keyword: f[3],
            enter_secs: num(f[1])?,
            exit_secs: num(f[2])?,
        });
    }
    Ok(calls)
}

/// The bursts of one rank, from its TI text and timed text.
///
/// # Errors
/// [`CalibrateError::Parse`] naming the file and line where the two files stop matching or a
/// number does not parse.
pub fn rank_bursts(
    ti: &str,
    ti_origin: &str,
    timed: &str,
    timed_origin: &str,
) -> Result<RankBursts, CalibrateError> {
    let perr = |origin: &str, line: u64, what: String| CalibrateError::Parse {
        origin: origin.to_string(),
        line,
        what,
    };
    let calls = timed_calls(timed, timed_origin)?;
    let mut out = RankBursts {
        span: calls.first().map(|c| {
            let last = calls
                .iter()
                .map(|c| c.exit_secs)
                .fold(c.exit_secs, f64::max);
            (c.enter_secs, last)
        }),
        ..RankBursts::default()
    };
    let mut next = 0usize; // index of the next timed call
    let mut pending_flops = 0.0;
    // Gaps since the previous burst: (start, end).
    let mut gaps: Vec<(f64, f64)> = Vec::new();
    let gap = |gaps: &mut Vec<(f64, f64)>, next: usize, enter: f64| {
        if next > 0 {
            let start = calls[next - 1].exit_secs;
            if enter > start {
                gaps.push((start, enter));
            }
        }
    };
    for (line, f) in lines(ti) {
        let Some(&kw) = f.get(1) else {
            return Err(perr(ti_origin, line, "no action after the rank".into()));
        };
        if kw == "compute" {
            let v = f
                .get(2)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| perr(ti_origin, line, "compute needs a number of flops".into()))?;
            pending_flops += v;
            continue;
        }
        // Blocking probes are calls of the timed file only (comments in the TI file).
        while kw != "probe" && calls.get(next).is_some_and(|c| c.keyword == "probe") {
            gap(&mut gaps, next, calls[next].enter_secs);
            next += 1;
        }
        let Some(call) = calls.get(next) else {
            return Err(perr(
                ti_origin,
                line,
                format!("'{kw}' has no matching call in {timed_origin}"),
            ));
        };
        if call.keyword != kw {
            return Err(perr(
                timed_origin,
                call.line,
                format!(
                    "call '{}' does not match '{kw}' at {ti_origin}:{line}",
                    call.keyword
                ),
            ));
        }
        gap(&mut gaps, next, call.enter_secs);
        if pending_flops > 0.0 {
            let burst = out.flops.len() as u32;
            out.flops.push(pending_flops);
            out.segments
                .extend(gaps.drain(..).map(|(start_secs, end_secs)| Segment {
                    start_secs,
                    end_secs,
                    burst,
                }));
            pending_flops = 0.0;
        }
        next += 1;
    }
    Ok(out)
}

/// Core-seconds of every segment of the ranks of one host with `cores` cores: for segment `s`,
/// `∫_s min(1, cores / k(t)) dt`, `k(t)` being the number of segments (of any of these ranks)
/// running at `t`. Returns, per rank, the values in the order of its segments.
pub fn core_secs(ranks: &[&RankBursts], cores: usize) -> Vec<Vec<f64>> {
    let cores = cores.max(1) as f64;
    // Sweep over segment ends: breakpoints and the integral F(t) of min(1, C/k) at each.
    let mut ends: Vec<(f64, i32)> = ranks
        .iter()
        .flat_map(|r| r.segments.iter())
        .flat_map(|s| [(s.start_secs, 1), (s.end_secs, -1)])
        .collect();
    ends.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut times: Vec<f64> = Vec::with_capacity(ends.len());
    let mut integral: Vec<f64> = Vec::with_capacity(ends.len());
    let mut share: Vec<f64> = Vec::with_capacity(ends.len()); // on [times[i], times[i+1])
    let mut k = 0i64;
    for &(t, d) in &ends {
        if let Some(&last) = times.last() {
            if t == last {
                k += i64::from(d);
                *share.last_mut().expect("same length") = slope(k, cores);
                continue;
            }
            let i = times.len() - 1;
            let f = integral[i] + (t - last) * share[i];
            integral.push(f);
        } else {
            integral.push(0.0);
        }
        k += i64::from(d);
        times.push(t);
        share.push(slope(k, cores));
    }
    let at = |t: f64| -> f64 {
        // Last breakpoint <= t (every segment end is a breakpoint).
        let i = times.partition_point(|&x| x <= t).saturating_sub(1);
        integral[i] + (t - times[i]) * share[i]
    };
    ranks
        .iter()
        .map(|r| {
            r.segments
                .iter()
                .map(|s| (at(s.end_secs) - at(s.start_secs)).max(0.0))
                .collect()
        })
        .collect()
}

/// Share of a core each of `k` concurrent bursts gets on `cores` cores (1 when none runs).
fn slope(k: i64, cores: f64) -> f64 {
    if k <= 0 {
        1.0
    } else {
        (cores / k as f64).min(1.0)
    }
}

/// Sums one rank's bursts with the core-seconds of its segments (`core_secs[i]` for
/// `bursts.segments[i]`); bursts whose segments last less than [`MIN_RATE_BURST_SECS`] on
/// average go to `all_*` only.
pub fn rank_rate(rank: usize, bursts: &RankBursts, core_secs: &[f64]) -> RankRate {
    // Per burst: (wall, core) seconds.
    let mut per_burst: Vec<(f64, f64)> = vec![(0.0, 0.0); bursts.flops.len()];
    let mut segments = vec![0u32; bursts.flops.len()];
    for (seg, &core) in bursts.segments.iter().zip(core_secs) {
        let b = seg.burst as usize;
        per_burst[b].0 += seg.end_secs - seg.start_secs;
        per_burst[b].1 += core;
        segments[b] += 1;
    }
    let mut r = RankRate {
        rank,
        flops: 0.0,
        wall_secs: 0.0,
        core_secs: 0.0,
        bursts: 0,
        all_flops: 0.0,
        all_wall_secs: 0.0,
    };
    for (b, &(wall, core)) in per_burst.iter().enumerate() {
        if segments[b] == 0 {
            continue;
        }
        r.all_flops += bursts.flops[b];
        r.all_wall_secs += wall;
        if wall >= MIN_RATE_BURST_SECS * f64::from(segments[b]) {
            r.flops += bursts.flops[b];
            r.wall_secs += wall;
            r.core_secs += core;
            r.bursts += 1;
        }
    }
    r
}

/// The TI and timed files of every rank of a trace directory (`rank-<r>.txt` and
/// `rank-<r>.timed.txt` for r = 0, 1, ... while the TI file exists).
///
/// # Errors
/// [`CalibrateError::Invalid`] without `rank-0.txt`, or for a rank without its timed file
/// (traced without `--timestamps`).
fn rank_files(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>, CalibrateError> {
    let mut out = Vec::new();
    for r in 0.. {
        let ti = dir.join(format!("rank-{r}.txt"));
        if !ti.exists() {
            break;
        }
        let timed = dir.join(format!("rank-{r}.timed.txt"));
        if !timed.exists() {
            return Err(CalibrateError::Invalid {
                what: format!(
                    "{} is missing: trace with `timeless trace --timestamps`",
                    timed.display()
                ),
            });
        }
        out.push((ti, timed));
    }
    if out.is_empty() {
        return Err(CalibrateError::Invalid {
            what: format!("{} holds no rank-0.txt", dir.display()),
        });
    }
    Ok(out)
}

/// Rates of one trace directory (`rank-<r>.txt` and `rank-<r>.timed.txt` for r = 0, 1, ...;
/// hosts and cores from `trace-meta.json` when present).
///
/// # Errors
/// No rank file, a rank without its timed file (trace taken without `--timestamps`), or the
/// errors of [`rank_bursts`].
pub fn run_rate(dir: &Path) -> Result<RunRate, CalibrateError> {
    let mut all = Vec::new();
    for (ti, timed) in rank_files(dir)? {
        all.push(rank_bursts(
            &read(&ti)?,
            &ti.display().to_string(),
            &read(&timed)?,
            &timed.display().to_string(),
        )?);
    }
    let first = all
        .iter()
        .filter_map(|b| b.span)
        .map(|s| s.0)
        .reduce(f64::min);
    let last = all
        .iter()
        .filter_map(|b| b.span)
        .map(|s| s.1)
        .reduce(f64::max);
    let span_secs = first.zip(last).map(|(a, b)| (b - a).max(0.0));
    let placement = hosts_of(dir, all.len());
    let mut ranks: Vec<Option<RankRate>> = vec![None; all.len()];
    let groups = placement.core_groups();
    for (members, cores) in groups {
        let bursts: Vec<&RankBursts> = members.iter().map(|&r| &all[r]).collect();
        // Unknown cores: as many as ranks, i.e. wall time.
        let secs = core_secs(&bursts, cores.unwrap_or(members.len()));
        for (i, &r) in members.iter().enumerate() {
            ranks[r] = Some(rank_rate(r, &all[r], &secs[i]));
        }
    }
    Ok(RunRate {
        dir: dir.to_path_buf(),
        ranks: ranks
            .into_iter()
            .map(|r| r.expect("every rank has a host"))
            .collect(),
        hosts: placement.hosts,
        bound_cpus: placement.bound_cpus,
        span_secs,
    })
}

#[cfg(test)]
mod tests;
