//! `timeless-sweep-mpi`: a `timeless sweep` whose points are replayed by the ranks of an MPI
//! job, e.g. `mpirun -n 4 timeless-sweep-mpi study.toml -o results/`. It is a thin driver over
//! `timeless_sweep`'s library: the study, the points, the replay of a point
//! ([`timeless_sweep::run_point`]) and the results directory ([`timeless_sweep::Store`]) are the
//! local sweep's, so the results files are the same bytes as `timeless sweep`'s.
//!
//! # Design
//!
//! Every rank reads the study file and expands the same [`timeless_sweep::points`]; the ranks
//! agree (one `MPI_Allreduce` of an error code) that all could, and that rank 0 could open the
//! results directory, before any work. Rank 0 then keeps a *dynamic work queue* of the pending
//! points (those not already in `results.csv`, so a rerun resumes, in MPI mode too): it sends
//! each worker [`DEPTH`] point indices ahead, and on each result sends that worker the next
//! pending point, so fast workers take more points and a long point does not hold up the
//! others. Between messages rank 0 replays points itself. Workers replay the points they are
//! sent in order and send back the result ([`wire`]: times as f64 bits, so nothing is rounded).
//! Rank 0 alone writes: [`timeless_sweep::Store::record`] in completion order while the sweep
//! runs, then [`timeless_sweep::Store::finish`] rewrites `results.csv` and `results.db` in point
//! order. With 1 rank, rank 0 replays everything.
//!
//! Worked example: 18 points on 3 ranks, [`DEPTH`] 2. Rank 0 sends points 0, 1 to rank 1 and
//! 2, 3 to rank 2, replays point 4 itself, then answers each result that arrived meanwhile with
//! the next point (5, 6, ...), replays the next one, and so on; when the queue is empty it
//! waits for the outstanding results and sends every worker a stop message. Whatever the
//! completion order, `results.csv` ends as the header and points 0 to 17.

pub mod wire;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use mpi::collective::SystemOperation;
use mpi::traits::*;
use timeless_sweep::{Point, PointResult, Spec, Store, Summary, SweepError};

/// Points sent ahead to each worker: one to replay, one waiting, so a worker never idles
/// while rank 0 is busy replaying a point of its own.
pub const DEPTH: usize = 2;

/// What a distributed sweep can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DistError {
    /// The study or the results directory (on this rank).
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// A lower rank could not read the study, or rank 0 could not open the results directory
    /// (that rank's error says why).
    #[error("rank {rank} failed before the sweep started (see its message)")]
    Peer {
        /// The lowest failing rank.
        rank: i32,
    },
    /// A worker sent a message that is not a result of a point it was given (a bug).
    #[error("rank {rank} sent a malformed message")]
    Protocol {
        /// The sender.
        rank: i32,
    },
}

impl DistError {
    /// Whether the error is bad input (exit code 2): a study file that cannot be read or is
    /// invalid, or results of another study.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            DistError::Sweep(
                SweepError::Spec { .. } | SweepError::Read { .. } | SweepError::Mismatch { .. }
            ) | DistError::Peer { .. }
        )
    }
}

/// How to run.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// Run at most this many of the pending points (the first in point order), then stop.
    pub max_points: Option<usize>,
}

/// Runs the sweep of the study file `spec_file` on every rank of `world` (collective: every
/// rank calls it with the same arguments). Rank 0 returns the [`Summary`], the others `None`.
///
/// # Errors
/// Before the sweep starts, on every rank: [`DistError::Sweep`] on a rank that cannot read the
/// study (or, on rank 0, open the results), [`DistError::Peer`] on the others. Once it has
/// started, an error (a results file that cannot be written, [`DistError::Protocol`]) is
/// printed and the job is ended with `MPI_Abort` (the other ranks would wait forever). Points
/// whose replay fails are not errors: they are listed in [`Summary::failed`].
pub fn run<C: Communicator>(
    world: &C,
    spec_file: &Path,
    results_dir: &Path,
    options: &Options,
) -> Result<Option<Summary>, DistError> {
    let rank = world.rank();
    let spec = Spec::from_file(spec_file);
    let all = spec
        .as_ref()
        .map(timeless_sweep::points)
        .unwrap_or_default();
    let store = match (&spec, rank) {
        (Ok(s), 0) => Some(Store::open(s, results_dir, &all)),
        _ => None,
    };
    // Agree that every rank can go on: the lowest failing rank, or `size` for none.
    let mine = if spec.is_err() || matches!(store, Some(Err(_))) {
        rank
    } else {
        world.size()
    };
    let mut first_bad = 0;
    world.all_reduce_into(&mine, &mut first_bad, SystemOperation::min());
    // Only the lowest failing rank says why (every rank fails alike on a bad study).
    if first_bad < world.size() && first_bad != rank {
        return Err(DistError::Peer { rank: first_bad });
    }
    let spec = spec?;
    let store = store.transpose()?;
    let r = match store {
        Some(store) => master(world, &spec, &all, store, options).map(Some),
        None => worker(world, &spec, &all).map(|()| None),
    };
    if let Err(e) = &r {
        // The other ranks wait for messages that will not come: end the job.
        eprintln!("timeless-sweep-mpi: rank {rank}: {}", chain(e));
        world.abort(1);
    }
    r
}

/// An error and its sources, `: `-separated.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}

fn master<C: Communicator>(
    world: &C,
    spec: &Spec,
    all: &[Point],
    mut store: Store,
    options: &Options,
) -> Result<Summary, DistError> {
    let mut queue: VecDeque<usize> = store
        .pending(all, options.max_points)
        .iter()
        .map(|p| p.index)
        .collect();
    let mut outstanding = 0usize;
    for r in 1..world.size() {
        for _ in 0..DEPTH {
            if let Some(i) = queue.pop_front() {
                world
                    .process_at_rank(r)
                    .send_with_tag(&wire::work(i), wire::TAG_WORK);
                outstanding += 1;
            }
        }
    }
    let mut ran = 0;
    let mut failed = Vec::new();
    let mut take = |store: &mut Store, index: usize, r: Result<PointResult, String>| {
        match r {
            Ok(ok) => {
                store.record(spec, &all[index], &ok)?;
                ran += 1;
            }
            Err(e) => failed.push((all[index].key.clone(), e)),
        }
        Ok::<(), DistError>(())
    };
    let key = |i: usize| all.get(i).map(|p| p.key.clone());
    while outstanding > 0 || !queue.is_empty() {
        // Answer the results that arrived; wait for one when there is nothing to replay here.
        loop {
            let status = if queue.is_empty() && outstanding > 0 {
                Some(world.any_process().probe_with_tag(wire::TAG_RESULT))
            } else {
                world
                    .any_process()
                    .immediate_probe_with_tag(wire::TAG_RESULT)
            };
            let Some(status) = status else { break };
            let from = status.source_rank();
            let (bytes, _) = world
                .process_at_rank(from)
                .receive_vec_with_tag::<u8>(wire::TAG_RESULT);
            let (index, r) =
                wire::parse_result(&bytes, key).ok_or(DistError::Protocol { rank: from })?;
            outstanding -= 1;
            if let Some(next) = queue.pop_front() {
                world
                    .process_at_rank(from)
                    .send_with_tag(&wire::work(next), wire::TAG_WORK);
                outstanding += 1;
            }
            take(&mut store, index, r)?;
            if outstanding == 0 {
                break;
            }
        }
        if let Some(i) = queue.pop_front() {
            let r = timeless_sweep::run_point(spec, &all[i]);
            take(&mut store, i, r)?;
        }
    }
    for r in 1..world.size() {
        world
            .process_at_rank(r)
            .send_with_tag(&[0u8; 0][..], wire::TAG_STOP);
    }
    Ok(store.finish(spec, all, ran, failed)?)
}

fn worker<C: Communicator>(world: &C, spec: &Spec, all: &[Point]) -> Result<(), DistError> {
    let root = world.process_at_rank(0);
    loop {
        let (bytes, status) = root.receive_vec::<u8>();
        if status.tag() == wire::TAG_STOP {
            return Ok(());
        }
        let index = wire::parse_work(&bytes)
            .filter(|&i| i < all.len())
            .ok_or(DistError::Protocol { rank: 0 })?;
        let r = timeless_sweep::run_point(spec, &all[index]);
        root.send_with_tag(&wire::result(index, &r)[..], wire::TAG_RESULT);
    }
}

/// The default results directory of a study file: `STEM-results` next to it, as
/// `timeless sweep` chooses.
pub fn default_output(spec_file: &Path) -> PathBuf {
    let stem = spec_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    let dir = spec_file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    dir.join(format!("{stem}-results"))
}
