//! `timeless-sweep`: parameter sweeps (issue 17). A study file ([`Spec`], TOML) lists traces
//! and the axes to vary (any `--cfg` key, the what-if knobs, platform files, hostfiles,
//! deployments); [`points`] expands it (product of the axes, or explicit `[[point]]` tables)
//! and [`run`] replays the points in parallel (rayon), appending each result as it finishes to
//! `results.csv` and to the `points` table of `results.db` (SQLite) in the results directory.
//! A rerun skips the points already in `results.csv`, so an interrupted sweep resumes where it
//! stopped. At the end both files are rewritten in canonical form (point order, no wall-clock
//! column; [`Store`]), so a study gives the same bytes on 1 or 8 threads, or distributed over
//! MPI ranks by `timeless-sweep-mpi`, which drives the same [`Store`] and [`run_point`]. The
//! [`Summary`] names the best point of each trace and each axis's sensitivity.
//!
//! ```toml
//! platform = "../platforms/mycluster.xml"
//! deployment = "../deployments/mycluster-ring4.xml"
//! traces = ["../traces/ring4/ring.txt"]
//!
//! [[axis]]
//! name = "scale-bandwidth"
//! values = [0.5, 1, 2]
//!
//! [[axis]]
//! name = "smpi/bcast"
//! values = ["binomial_tree", "flattree"]
//! ```
//!
//! This study has 1 trace × 3 × 2 = 6 points, keyed
//! `../traces/ring4/ring.txt|scale-bandwidth=0.5|smpi/bcast=binomial_tree`, ...; its
//! `results.csv` is
//!
//! ```text
//! key,trace,scale-bandwidth,smpi/bcast,simulated_time_s,actions
//! ../traces/ring4/ring.txt|scale-bandwidth=0.5|smpi/bcast=binomial_tree,../traces/ring4/ring.txt,0.5,binomial_tree,...,76
//! ```

mod plot;
mod spec;
mod store;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use timeless_replay::{NoObserver, Observer};
use timeless_run::{Frontend, FrontendError, SimulateConfig};

pub use plot::plot;
pub use spec::{Axis, AxisKind, Mode, Spec, Trace};
pub use store::{csv_header, Store, CSV_FILE, DB_FILE, WALL_FILE};
pub use summary::{summary_text, Sensitivity, Summary};

/// What a sweep can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The study file is not valid.
    #[error("{}: `{key}`: {message}", file.display())]
    Spec {
        /// The spec file.
        file: PathBuf,
        /// The bad key (`axis[1].name`, `point[0].scale-latency`, `mode`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A results file cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The existing `results.csv` belongs to another study (its header differs).
    #[error("{} has columns {found:?}, this study writes {expected:?}: use another results directory", path.display())]
    Mismatch {
        /// The CSV file.
        path: PathBuf,
        /// Its header.
        found: Vec<String>,
        /// This study's header.
        expected: Vec<String>,
    },
    /// The CSV results cannot be read or written.
    #[error("{}: {source}", path.display())]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// The error.
        #[source]
        source: csv::Error,
    },
    /// The SQLite results cannot be written.
    #[error("{}: {source}", path.display())]
    Db {
        /// The database.
        path: PathBuf,
        /// The error.
        #[source]
        source: rusqlite::Error,
    },
    /// A plot cannot be drawn or written.
    #[error("{}: cannot draw the plot: {why}", path.display())]
    Plot {
        /// The SVG file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The thread pool cannot be built.
    #[error("cannot start the worker threads: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
}

/// One point of a sweep: a trace and a value for each axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Position in [`points`]' order.
    pub index: usize,
    /// The stable key identifying it in the results: `TRACE|AXIS=VALUE|...` (an axis a
    /// `[[point]]` leaves unset is written `AXIS=`).
    pub key: String,
    /// Index into [`Spec::traces`].
    pub trace: usize,
    /// One value per axis of [`Spec::axes`] (`None`: left at the spec's fixed input).
    pub values: Vec<Option<String>>,
}

/// The points of a study, trace-major, then the axes in file order (the last axis varies
/// fastest in product mode; the `[[point]]` order in points mode).
pub fn points(spec: &Spec) -> Vec<Point> {
    let combos: Vec<Vec<Option<String>>> = match &spec.mode {
        Mode::Points(p) => p.clone(),
        Mode::Product => {
            let mut combos = vec![Vec::new()];
            for a in &spec.axes {
                let mut next = Vec::with_capacity(combos.len() * a.values.len());
                for c in &combos {
                    for v in &a.values {
                        let mut c = c.clone();
                        c.push(Some(v.clone()));
                        next.push(c);
                    }
                }
                combos = next;
            }
            combos
        }
    };
    let mut out = Vec::new();
    for (t, trace) in spec.traces.iter().enumerate() {
        for c in &combos {
            let mut key = trace.label.clone();
            for (a, v) in spec.axes.iter().zip(c) {
                key.push('|');
                key.push_str(&a.name);
                key.push('=');
                key.push_str(v.as_deref().unwrap_or(""));
            }
            out.push(Point {
                index: out.len(),
                key,
                trace: t,
                values: c.clone(),
            });
        }
    }
    out
}

/// The [`SimulateConfig`] of a point: the spec's fixed inputs, then each axis's value.
pub fn config(spec: &Spec, point: &Point) -> SimulateConfig {
    let mut c = SimulateConfig::default();
    c.platform = spec.platform.clone();
    c.deployment = spec.deployment.clone();
    c.hostfile = spec.hostfile.clone();
    c.np = spec.np;
    c.cfg = spec.cfg.clone();
    c.cfg_file = spec.cfg_file.clone();
    c.compensation = spec.compensation;
    c.trace = Some(spec.traces[point.trace].path.clone());
    // The points already run in parallel.
    c.decode_ahead = false;
    for (a, v) in spec.axes.iter().zip(&point.values) {
        let Some(v) = v else { continue };
        // Values were checked when the spec was parsed.
        let num = || v.parse::<f64>().unwrap_or(f64::NAN);
        match a.kind {
            AxisKind::Cfg => c.cfg.push(format!("{}:{v}", a.name)),
            AxisKind::ScaleCompute => c.what_if.compute = num(),
            AxisKind::ScaleBandwidth => c.what_if.bandwidth = num(),
            AxisKind::ScaleLatency => c.what_if.latency = num(),
            AxisKind::IdealNetwork => c.what_if.ideal_network = v == "true",
            AxisKind::IdealCompute => c.what_if.ideal_compute = v == "true",
            AxisKind::Platform => c.platform = Some(spec.dir.join(v)),
            AxisKind::Hostfile => {
                c.hostfile = Some(spec.dir.join(v));
                c.deployment = None;
            }
            AxisKind::Deployment => c.deployment = Some(spec.dir.join(v)),
            AxisKind::Np => c.np = v.parse().ok(),
        }
    }
    c
}

/// The result of one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The point's key.
    pub key: String,
    /// Simulated time, s.
    pub simulated_secs: f64,
    /// Actions replayed.
    pub actions: u64,
    /// Wall-clock time of the replay, s (written to `wall.csv` only: it varies from run to run;
    /// NaN for a result read back without one).
    pub wall_secs: f64,
}

/// Told about the sweep's progress (from the worker threads).
pub trait Progress: Sync {
    /// Before the first point: points in the study, and how many are already done.
    fn start(&self, total: usize, done: usize) {
        let _ = (total, done);
    }
    /// A point finished (or failed: `Err` with the message).
    fn finished(&self, point: &Point, result: &Result<PointResult, String>) {
        let _ = (point, result);
    }
}

/// A [`Progress`] that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;
impl Progress for NoProgress {}

/// How to run a sweep.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// Worker threads (default: all cores).
    pub jobs: Option<usize>,
    /// Run at most this many of the pending points (the first ones in [`points`]' order), then
    /// stop: a sweep in chunks (and a way to test resuming).
    pub max_points: Option<usize>,
}

struct Quiet(NoObserver);
impl Frontend for Quiet {
    fn notice(&mut self, _text: &str) {}
    fn observer(&mut self) -> Result<&mut dyn Observer, FrontendError> {
        Ok(&mut self.0)
    }
}

/// Replays one point.
///
/// # Errors
/// The simulate error, as text.
pub fn run_point(spec: &Spec, point: &Point) -> Result<PointResult, String> {
    let cfg = config(spec, point);
    let t0 = Instant::now();
    let outcome = timeless_run::simulate(&cfg, &mut Quiet(NoObserver)).map_err(|e| {
        let mut s = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(x) = src {
            s.push_str(": ");
            s.push_str(&x.to_string());
            src = x.source();
        }
        s
    })?;
    Ok(PointResult {
        key: point.key.clone(),
        simulated_secs: outcome.report.simulated_time_secs,
        actions: outcome.report.actions,
        wall_secs: t0.elapsed().as_secs_f64(),
    })
}

/// Runs the points of `spec` not yet in `results_dir/results.csv`, in parallel, appending each
/// result to `results.csv`, `results.db` and `wall.csv` as it finishes, then rewrites
/// `results.csv` and `results.db` in canonical form ([`Store::finish`]).
///
/// # Errors
/// A results file that cannot be read or written, or that belongs to another study. A point
/// whose replay fails is not an error: it is listed in [`Summary::failed`].
pub fn run(
    spec: &Spec,
    results_dir: &Path,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Summary, SweepError> {
    let all = points(spec);
    let store = Store::open(spec, results_dir, &all)?;
    let pending = store.pending(&all, options.max_points);
    progress.start(
        all.len(),
        all.len() - all.iter().filter(|p| !store.is_done(p)).count(),
    );
    let store = Mutex::new(store);
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(j) = options.jobs {
        pool = pool.num_threads(j.max(1));
    }
    let pool = pool.build()?;
    let outcomes: Vec<Result<Result<PointResult, String>, SweepError>> = pool.install(|| {
        pending
            .par_iter()
            .map(|p| {
                let r = run_point(spec, p);
                if let Ok(ok) = &r {
                    let mut s = store.lock().unwrap_or_else(|e| e.into_inner());
                    s.record(spec, p, ok)?;
                }
                progress.finished(p, &r);
                Ok(r)
            })
            .collect()
    });
    let mut failed = Vec::new();
    let mut ran = 0;
    for (p, o) in pending.iter().zip(outcomes) {
        match o? {
            Ok(_) => ran += 1,
            Err(e) => failed.push((p.key.clone(), e)),
        }
    }
    let store = store.into_inner().unwrap_or_else(|e| e.into_inner());
    store.finish(spec, &all, ran, failed)
}
