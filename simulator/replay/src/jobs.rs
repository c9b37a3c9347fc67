//! Several jobs on one platform (SimGrid's `replay_multiple`): each with its own ranks, hosts,
//! `MPI_COMM_WORLD` and start delay, sharing links and cores.
//!
//! # Design
//!
//! A multi-job replay is one [`crate::Simulation`] whose ranks are the jobs' ranks laid end to
//! end: with jobs A (2 ranks) and B (3 ranks), replay ranks 0-1 are A's ranks 0-1 and replay
//! ranks 2-4 are B's ranks 0-2. Each trace still names its job's own ranks, so every rank field
//! of an action read for B (peers, request keys, roots, `comm_def` members) is shifted by B's
//! first replay rank, 2, as it is read ([`shift_ranks`]); B's `MPI_COMM_WORLD` is the
//! communicator of replay ranks 2-4 (`Comms::with_jobs` in the private `comm` module), so B's collectives run
//! over B's three ranks and B's messages never match A's. Roots of world collectives are comm
//! ranks, which the shift turns into replay ranks and the sub-communicator path turns back.
//!
//! A job's start delay is SimGrid's `start_delay_flops` (`smpi_replay_init`): before reading its
//! trace, each rank of the job executes that many flops on its host, competing for the host's
//! cores with whatever runs there (a delayed job on a busy host starts later than on an idle
//! one). The delay belongs to no account of the rank: its accounts start at its `init`.
//!
//! # Worked example
//!
//! Jobs interfere only through resources: job A (one rank on host h1, computing 1 Gflop) and
//! job B (one rank on h1 too, delay 0, 1 Gflop) on a one-core 1 Gflop/s host share the core:
//! each gets 0.5 Gflop/s and both end at 2 s, where each alone takes 1 s (slowdown 2). With a
//! delay of 1 Gflop for B, A and B's delay share the core until 2 s, then B computes alone:
//! A ends at 2 s, B starts (its `init`) at 2 s and ends at 3 s.

pub mod description;

use timeless_platform::{HostId, Platform};
use timeless_trace::{Action, RequestKey, TraceSet};

use crate::{NoObserver, ReplayConfig, ReplayError, Simulation};

/// One job of a multi-job replay.
pub struct Job<'t> {
    /// Its name in reports (SimGrid's `instance_id`).
    pub name: String,
    /// Its ranks' actions (rank numbers local to the job).
    pub traces: &'t dyn TraceSet,
    /// Host of each of its ranks; its length is the job's size.
    pub hosts: Vec<HostId>,
    /// Flops each rank executes on its host before its trace starts (SimGrid's
    /// `start_delay_flops`, `smpi_replay_init`), >= 0.
    pub start_delay_flops: f64,
}

/// One job's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct JobReport {
    /// The job's name.
    pub name: String,
    /// Its first replay rank ([`crate::Report::ranks`] index); its ranks follow.
    pub first_rank: u32,
    /// Its number of ranks.
    pub ranks: u32,
    /// Date of the earliest `init` of its ranks (after the start delay), in seconds.
    pub start_secs: f64,
    /// Date its last rank finished, in seconds.
    pub end_secs: f64,
    /// Its "Simulation time" as SimGrid reports one job: the finish date of its last rank
    /// minus that rank's `init` date, in seconds.
    pub time_secs: f64,
}

/// Each job's time when it runs alone on the same hosts with the same delay (the baseline of
/// its slowdown), in seconds, in job order: one replay per job.
///
/// # Errors
/// As [`Simulation::run`].
pub fn alone_times_secs(
    platform: &Platform,
    jobs: &[Job<'_>],
    cfg: &ReplayConfig,
) -> Result<Vec<f64>, ReplayError> {
    jobs.iter()
        .map(|job| {
            let one = Job {
                name: job.name.clone(),
                traces: job.traces,
                hosts: job.hosts.clone(),
                start_delay_flops: job.start_delay_flops,
            };
            let report =
                Simulation::with_jobs(platform, &[one], cfg.clone())?.run(&mut NoObserver)?;
            Ok(report.jobs[0].time_secs)
        })
        .collect()
}

/// Shifts every rank an action names by `offset` (a job-local rank becomes a replay rank).
///
/// Ranks are peers of point-to-point actions, request keys, collective roots and `comm_def`
/// members. Panics never: a shift past `u32::MAX` saturates, and the replay then reports the
/// peer as outside the job's world.
pub fn shift_ranks(action: &mut Action, offset: u32) {
    if offset == 0 {
        return;
    }
    let s = |r: &mut u32| *r = r.saturating_add(offset);
    match action {
        Action::CommDef { world_ranks, .. } => world_ranks.iter_mut().for_each(s),
        Action::Send { dst, .. } => s(dst),
        Action::Recv { src, .. } => s(src),
        Action::Wait(RequestKey::Key { src, dst, .. })
        | Action::Test(RequestKey::Key { src, dst, .. }) => {
            s(src);
            s(dst);
        }
        Action::SendRecv { dst, src, .. } => {
            s(dst);
            s(src);
        }
        Action::Bcast { root, .. }
        | Action::Reduce { root, .. }
        | Action::Gather { root, .. }
        | Action::GatherV { root, .. }
        | Action::Scatter { root, .. }
        | Action::ScatterV { root, .. } => s(root),
        Action::Init { .. }
        | Action::Finalize
        | Action::CommNoop
        | Action::Location
        | Action::Compute { .. }
        | Action::Sleep { .. }
        | Action::Wait(RequestKey::Oldest)
        | Action::Test(RequestKey::Oldest)
        | Action::WaitAll
        | Action::Barrier
        | Action::AllReduce { .. }
        | Action::AllToAll { .. }
        | Action::AllToAllV { .. }
        | Action::AllGather { .. }
        | Action::AllGatherV { .. }
        | Action::ReduceScatter { .. }
        | Action::Scan { .. }
        | Action::ExScan { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_every_rank_field_and_nothing_else() {
        let mut a = Action::CommDef {
            id: 3,
            world_ranks: vec![0, 2].into(),
        };
        shift_ranks(&mut a, 5);
        assert_eq!(
            a,
            Action::CommDef {
                id: 3,
                world_ranks: vec![5, 7].into()
            }
        );
        let mut w = Action::Wait(RequestKey::Key {
            src: 1,
            dst: 0,
            tag: 4,
        });
        shift_ranks(&mut w, 10);
        assert_eq!(
            w,
            Action::Wait(RequestKey::Key {
                src: 11,
                dst: 10,
                tag: 4
            })
        );
        let mut b = Action::Bcast {
            count: 8,
            root: 1,
            dt: None,
        };
        shift_ranks(&mut b, 2);
        assert_eq!(
            b,
            Action::Bcast {
                count: 8,
                root: 3,
                dt: None
            }
        );
        let mut c = Action::Compute { flops: 1e6 };
        shift_ranks(&mut c, 2);
        assert_eq!(c, Action::Compute { flops: 1e6 });
    }
}
