//! Host speed from a traced run (seed 003 §5): "determine the number of flops of each event as
//! long as the time spent to compute them. Then we can determine a flop rate of each single
//! action, compute a weighted average on each process, and get an average flop rate for all the
//! process set. Finally we repeat this procedure five times and compute an average".
//!
//! Input: trace directories written by `timeless trace --timestamps`: per rank, the TI file
//! `rank-<r>.txt` (the flops of every `compute` burst) and the timed file `rank-<r>.timed.txt`
//! (`<rank> <enter> <exit> <action ...>` for every MPI call, in the same order, without the
//! bursts). A burst's wall time is the gap between the exit of the call before it and the
//! enter of the call after it.
//!
//! Rate of a rank = Σ flops / Σ wall seconds over its bursts (the flops-weighted mean of the
//! per-burst rates); rate of a run = mean over its ranks; result = mean over the runs. Because
//! the tracer converts thread CPU seconds into flops at its reference speed, this wall-clock rate
//! is the reference speed times the share of the CPU the bursts actually got.

use std::path::{Path, PathBuf};

use crate::CalibrateError;

/// One rank's bursts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankRate {
    /// World rank.
    pub rank: usize,
    /// Flops of the bursts that have a measurable wall time.
    pub flops: f64,
    /// Their wall time, seconds.
    pub wall_secs: f64,
    /// Number of such bursts.
    pub bursts: usize,
}

impl RankRate {
    /// `flops / wall_secs` in flop/s (0 without bursts).
    pub fn flops_per_sec(&self) -> f64 {
        if self.wall_secs > 0.0 {
            self.flops / self.wall_secs
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
}

impl RunRate {
    /// Mean rate over the ranks that have bursts, flop/s.
    pub fn flops_per_sec(&self) -> f64 {
        let r: Vec<f64> = self
            .ranks
            .iter()
            .filter(|r| r.bursts > 0)
            .map(RankRate::flops_per_sec)
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

/// The bursts of one rank, from its TI text and timed text.
///
/// # Errors
/// [`CalibrateError::Parse`] naming the file and line where the two files stop matching or a
/// number does not parse.
pub fn rank_rate(
    rank: usize,
    ti: &str,
    ti_origin: &str,
    timed: &str,
    timed_origin: &str,
) -> Result<RankRate, CalibrateError> {
    let perr = |origin: &str, line: u64, what: String| CalibrateError::Parse {
        origin: origin.to_string(),
        line,
        what,
    };
    let mut calls = Vec::new(); // (line, keyword, enter, exit)
    for (line, f) in lines(timed) {
        if f.len() < 4 {
            return Err(perr(
                timed_origin,
                line,
                "expected '<rank> <enter> <exit> <action> ...'".into(),
            ));
        }
        let num = |s: &str| {
            s.parse::<f64>()
                .map_err(|_| perr(timed_origin, line, format!("time '{s}' is not a number")))
        };
        calls.push((line, f[3].to_string(), num(f[1])?, num(f[2])?));
    }
    let mut out = RankRate {
        rank,
        flops: 0.0,
        wall_secs: 0.0,
        bursts: 0,
    };
    let mut next = 0usize; // index of the next timed call
    let mut pending_flops = 0.0;
    for (line, f) in lines(ti) {
        let Some(&kw) = f.get(1) else {
            return Err(perr(ti_origin, line, "no action after the rank".into()));
        };
        if kw == "compute" {
            let v = f
                .get(2)
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| perr(ti_origin, line, "compute needs a number of flops".into()))?;
            pending_flops += v;
            continue;
        }
        if kw == "comm_def" {
            continue;
        }
        let Some((tline, tkw, enter, exit)) = calls.get(next) else {
            return Err(perr(
                ti_origin,
                line,
                format!("'{kw}' has no matching call in {timed_origin}"),
            ));
        };
        if tkw != kw {
            return Err(perr(
                timed_origin,
                *tline,
                format!("call '{tkw}' does not match '{kw}' at {ti_origin}:{line}"),
            ));
        }
        if pending_flops > 0.0 && next > 0 {
            let wall = enter - calls[next - 1].3;
            if wall > 0.0 {
                out.flops += pending_flops;
                out.wall_secs += wall;
                out.bursts += 1;
            }
        }
        pending_flops = 0.0;
        let _ = exit;
        next += 1;
    }
    Ok(out)
}

/// Rates of one trace directory (`rank-<r>.txt` and `rank-<r>.timed.txt` for r = 0, 1, ...).
///
/// # Errors
/// No rank file, a rank without its timed file (trace taken without `--timestamps`), or the
/// errors of [`rank_rate`].
pub fn run_rate(dir: &Path) -> Result<RunRate, CalibrateError> {
    let mut ranks = Vec::new();
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
        ranks.push(rank_rate(
            r,
            &read(&ti)?,
            &ti.display().to_string(),
            &read(&timed)?,
            &timed.display().to_string(),
        )?);
    }
    if ranks.is_empty() {
        return Err(CalibrateError::Invalid {
            what: format!("{} holds no rank-0.txt", dir.display()),
        });
    }
    Ok(RunRate {
        dir: dir.to_path_buf(),
        ranks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: bursts of 2e6 flops between init (exit 10.0) and send (enter 10.004): 4 ms;
    /// 1e6 flops between send (exit 10.005) and recv (enter 10.006): 1 ms; a 0-flop gap after
    /// the recv is not a burst. Rank rate = 3e6 / 0.005 = 6e8 flop/s.
    #[test]
    fn bursts_are_timed_between_calls() {
        let ti = "# header\n0 init\n0 compute 2e6\n0 send 1 0 8 6\n0 compute 1e6\n0 recv 1 0 8 6\n0 finalize\n";
        let timed = "0 10.0 10.0 init\n0 10.004 10.005 send 1 0 8 6\n0 10.006 10.010 recv 1 0 8 6\n0 10.011 10.011 finalize\n";
        let r = rank_rate(0, ti, "rank-0.txt", timed, "rank-0.timed.txt").unwrap();
        assert_eq!(r.bursts, 2);
        assert!((r.flops - 3e6).abs() < 1e-6);
        assert!((r.wall_secs - 0.005).abs() < 1e-12);
        assert!((r.flops_per_sec() - 6e8).abs() < 1e-3);
        let run = RunRate {
            dir: PathBuf::new(),
            ranks: vec![
                r,
                RankRate {
                    rank: 1,
                    flops: 1e9,
                    wall_secs: 1.0,
                    bursts: 3,
                },
            ],
        };
        // Mean over the ranks: (6e8 + 1e9) / 2.
        assert!((run.flops_per_sec() - 8e8).abs() < 1e-3);
    }

    #[test]
    fn mismatched_files_name_the_line() {
        let ti = "0 init\n0 compute 5\n0 send 1 0 8 6\n";
        let timed = "0 1 1 init\n0 2 3 recv 1 0 8 6\n";
        let e = rank_rate(0, ti, "a.txt", timed, "a.timed.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.timed.txt:2: call 'recv' does not match 'send' at a.txt:3"
        );
    }
}
