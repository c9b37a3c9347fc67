//! How much of each rank's time inside MPI calls took a core away from a computing rank, from
//! a timestamped trace (`timeless trace --timestamps`): the share that
//! `timeless/poll-cpu-from-trace:taken` keeps of the rank's in-call CPU time.
//!
//! **Why.** In a run folded several ranks per core, a rank inside an MPI call spins on its
//! core (Open MPI's progress loop): the cores are busy for the compute plus this in-call CPU
//! time (`validation/external/README.md`, session 39). That spin delays someone only while a
//! core-mate wants the core to compute; while every rank of the core waits, the spin burns
//! free core time. Charging the whole in-call CPU time at replay
//! (`timeless/poll-cpu-from-trace:yes`) therefore overshoots on programs whose ranks mostly
//! wait together (the calibration corpus's fortran_mix: +18 % at 8 ranks), while the
//! mini-apps, whose ranks compute while a core-mate is in a call 67-97 % of that time, need
//! most of it.
//!
//! **What.** For rank `r` of a group of ranks that share `C` cores (a pinned core's ranks,
//! `C = 1`; an unpinned folded host's ranks on its cores; the groups of the parent module):
//! the share of `r`'s in-call wall time (Σ over its calls of exit − enter) during which at
//! least `C` other ranks of the group were between two calls (computing), so that `r`'s spin
//! took a core from one of them. The rank's own gaps never overlap its calls, so the count
//! over the whole group is the count of the others. A group whose cores are unknown, or with
//! no more ranks than cores, takes nothing: share 0. This assumes the rank's in-call CPU time
//! is spread evenly over its in-call wall time (the tracer sums both per rank only).
//!
//! Worked example: ranks 0 and 1 pinned to one core (`C = 1`). Rank 0 is in calls over
//! [0, 1] and [3, 4] s, so it computes over [1, 3]; rank 1 is in calls over [0, 2] and
//! [2.5, 4], computing over [2, 2.5]. Some rank computes over [1, 3]. Rank 0's calls miss it:
//! share 0 (its core-mate computed only while rank 0 did too). Rank 1's calls meet it over
//! [1, 2] and [2.5, 3]: 1.5 s of its 3.5 s in calls, share 3/7.
//! `validation/external/incall_overlap.py` computes the same figures for one trace directory.

use std::path::Path;

use timeless_replay::PollFromTrace;

use super::{hosts_of, rank_files, read, timed_calls};
use crate::CalibrateError;

/// Per rank, the CPU seconds each of its MPI calls adds to its poll budget under `mode`
/// (`timeless/poll-cpu-from-trace`, `ReplayConfig::poll_cpu_secs_per_call`): `None` when
/// `mode` is `no` or the trace directory has no in-call times (traced before the tracer wrote
/// them); with `yes` the in-call CPU seconds per call (`timeless_trace::incall`); with `taken`
/// those times [`taken_shares`] (a rank the timestamps do not cover: 0).
///
/// # Errors
/// [`CalibrateError::Trace`] for a malformed in-call table; with `taken`, the errors of
/// [`taken_shares`].
pub fn poll_secs_per_call(
    dir: &Path,
    mode: PollFromTrace,
) -> Result<Option<Vec<f64>>, CalibrateError> {
    if !mode.is_on() {
        return Ok(None);
    }
    let Some(mut per_call) = timeless_trace::incall::read_cpu_secs_per_call(dir)? else {
        return Ok(None);
    };
    if mode == PollFromTrace::Taken {
        let shares = taken_shares(dir)?;
        for (r, secs) in per_call.iter_mut().enumerate() {
            *secs *= shares.get(r).copied().unwrap_or(0.0);
        }
    }
    Ok(Some(per_call))
}

/// Per rank (world rank order), the share in [0, 1] of its in-call wall time during which it
/// took a core from a computing rank of its group (module doc), from the trace directory's
/// `rank-<r>.timed.txt` and `trace-meta.json` (hosts, cores, the CPU each rank was bound to;
/// without it every share is 0).
///
/// # Errors
/// [`CalibrateError::Invalid`] without `rank-0.txt` or with a rank whose timed file is missing
/// (traced without `--timestamps`); [`CalibrateError::Io`] for an unreadable file;
/// [`CalibrateError::Parse`] naming file:line of a malformed timed line.
pub fn taken_shares(dir: &Path) -> Result<Vec<f64>, CalibrateError> {
    let mut calls: Vec<Vec<(f64, f64)>> = Vec::new();
    for (_, timed) in rank_files(dir)? {
        let text = read(&timed)?;
        let rank_calls = timed_calls(&text, &timed.display().to_string())?;
        calls.push(
            rank_calls
                .iter()
                .map(|c| (c.enter_secs, c.exit_secs))
                .collect(),
        );
    }
    let mut shares = vec![0.0; calls.len()];
    for (members, cores) in hosts_of(dir, calls.len()).core_groups() {
        let Some(cores) = cores else { continue };
        let of: Vec<&[(f64, f64)]> = members.iter().map(|&r| calls[r].as_slice()).collect();
        for (&r, share) in members.iter().zip(group_shares(&of, cores)) {
            shares[r] = share;
        }
    }
    Ok(shares)
}

/// The shares of one group's ranks (module doc): `calls[i]` is member `i`'s (enter, exit)
/// seconds per call in time order; `cores` the cores the group shares.
fn group_shares(calls: &[&[(f64, f64)]], cores: usize) -> Vec<f64> {
    let saturated = saturated(calls, cores.max(1));
    calls
        .iter()
        .map(|own| {
            let wall: f64 = own.iter().map(|&(a, b)| (b - a).max(0.0)).sum();
            if wall > 0.0 {
                own.iter().map(|&c| overlap(c, &saturated)).sum::<f64>() / wall
            } else {
                0.0
            }
        })
        .collect()
}

/// The disjoint intervals, in time order, during which at least `cores` ranks compute: are
/// between two of their calls.
fn saturated(calls: &[&[(f64, f64)]], cores: usize) -> Vec<(f64, f64)> {
    // (time, +1 at a gap's start / -1 at its end); an end sorts before a start at equal times.
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for own in calls {
        for w in own.windows(2) {
            let (start, end) = (w[0].1, w[1].0);
            if end > start {
                edges.push((start, 1));
                edges.push((end, -1));
            }
        }
    }
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut computing = 0usize;
    let mut since = 0.0;
    for (t, delta) in edges {
        let before = computing;
        computing = if delta > 0 {
            computing + 1
        } else {
            computing - 1
        };
        if before < cores && computing >= cores {
            since = t;
        } else if before >= cores && computing < cores && t > since {
            out.push((since, t));
        }
    }
    out
}

/// Length of `(a, b)` inside the disjoint, time-ordered `intervals`, seconds.
fn overlap((a, b): (f64, f64), intervals: &[(f64, f64)]) -> f64 {
    let first = intervals.partition_point(|&(_, end)| end <= a);
    intervals[first..]
        .iter()
        .take_while(|&&(start, _)| start < b)
        .map(|&(start, end)| (end.min(b) - start.max(a)).max(0.0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module doc's example: rank 0 takes nothing, rank 1 1.5 s of its 3.5 s in calls.
    #[test]
    fn two_ranks_on_one_core_by_hand() {
        let r0 = [(0.0, 1.0), (3.0, 4.0)];
        let r1 = [(0.0, 2.0), (2.5, 4.0)];
        let s = group_shares(&[&r0, &r1], 1);
        assert_eq!(s[0], 0.0);
        assert!((s[1] - 1.5 / 3.5).abs() < 1e-15, "{s:?}");
    }

    /// Three ranks on 2 cores (unpinned): a rank's call takes a core only while both others
    /// compute. Rank 0 computes over [1, 3], rank 1 over [2, 4], rank 2 is in one call over
    /// [0, 5]: both compute over [2, 3] only, 1 s of its 5 s; ranks 0 and 1 are never in a call
    /// while the two others compute.
    #[test]
    fn a_rank_takes_a_core_only_when_the_others_fill_them() {
        let r0 = [(0.0, 1.0), (3.0, 5.0)];
        let r1 = [(0.0, 2.0), (4.0, 5.0)];
        let r2 = [(0.0, 5.0)];
        let s = group_shares(&[&r0, &r1, &r2], 2);
        assert_eq!(s, vec![0.0, 0.0, 0.2]);
        // On one core, rank 2 takes it whenever one of them computes: over [1, 4], 3 of 5 s;
        // rank 0's calls meet rank 1's gap over [3, 4], 1 of its 3 s; rank 1's calls meet
        // rank 0's gap over [1, 2], 1 of its 3 s.
        let s = group_shares(&[&r0, &r1, &r2], 1);
        assert_eq!(s, vec![1.0 / 3.0, 1.0 / 3.0, 0.6]);
    }

    #[test]
    fn a_rank_alone_or_without_calls_takes_nothing() {
        assert_eq!(group_shares(&[&[(0.0, 1.0), (2.0, 3.0)]], 1), vec![0.0]);
        let none: [(f64, f64); 0] = [];
        assert_eq!(group_shares(&[&none, &[(0.0, 1.0)]], 1), vec![0.0, 0.0]);
    }

    /// A trace directory: two ranks pinned to core 0 (the module doc's example), one on core 1
    /// whose calls meet nobody's gap; a bad timed line names file:line.
    #[test]
    fn shares_of_a_trace_directory() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let timed = [
            "0 0 1 init\n0 3 4 finalize\n",
            "1 0 2 init\n1 2.5 4 finalize\n",
            "2 0 1 init\n2 1 4 finalize\n",
        ];
        for (r, t) in timed.iter().enumerate() {
            std::fs::write(p.join(format!("rank-{r}.txt")), "").unwrap();
            std::fs::write(p.join(format!("rank-{r}.timed.txt")), t).unwrap();
        }
        std::fs::write(
            p.join("trace-meta.json"),
            r#"{"rank_hosts": ["a", "a", "a"],
                "acquisition_mode": "folding: 3 ranks on 2 cores (2 ranks per core)",
                "hosts": [{"name": "a", "cpus": 2}],
                "per_rank_bound_cpu": [0, 0, 1]}"#,
        )
        .unwrap();
        let s = taken_shares(p).unwrap();
        assert_eq!(s[0], 0.0);
        assert!((s[1] - 1.5 / 3.5).abs() < 1e-15, "{s:?}");
        assert_eq!(s[2], 0.0);
        std::fs::write(p.join("rank-1.timed.txt"), "1 0 x init\n").unwrap();
        let e = taken_shares(p).unwrap_err().to_string();
        assert!(e.contains("rank-1.timed.txt") && e.contains(":1"), "{e}");
        std::fs::write(p.join("rank-1.timed.txt"), timed[1]).unwrap();
        std::fs::remove_file(p.join("rank-2.timed.txt")).unwrap();
        let e = taken_shares(p).unwrap_err().to_string();
        assert!(e.contains("rank-2.timed.txt is missing"), "{e}");
    }
}
