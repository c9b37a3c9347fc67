//! `timeless-sweep`: parameter sweeps (issue 17). A study file ([`Spec`], TOML) lists traces
//! and the axes to vary (any `--cfg` key, the what-if knobs, platform files, hostfiles,
//! deployments); [`points`] expands it (product of the axes, or explicit `[[point]]` tables)
//! and [`run`] replays the points in parallel (rayon), appending each result as it finishes to
//! `results.csv` and to the `points` table of `results.db` (SQLite) in the results directory.
//! A rerun skips the points already in `results.csv`, so an interrupted sweep resumes where it
//! stopped. The [`Summary`] names the best point of each trace and each axis's sensitivity.
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

mod plot;
mod spec;

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use timeless_replay::{NoObserver, Observer};
use timeless_run::{Frontend, FrontendError, SimulateConfig};

pub use plot::plot;
pub use spec::{Axis, AxisKind, Mode, Spec, Trace};

/// The results file names in the results directory.
pub const CSV_FILE: &str = "results.csv";
/// The SQLite results file.
pub const DB_FILE: &str = "results.db";

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
    /// Wall-clock time of the replay, s.
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

/// The sensitivity of the simulated time to one axis, for one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// Axis name.
    pub axis: String,
    /// Trace label.
    pub trace: String,
    /// `(max - min) / min` of the simulated time over the axis's values, the other axes at the
    /// values of the trace's first point (its baseline); `None` with fewer than two such
    /// points with a result.
    pub relative: Option<f64>,
    /// The points used: (axis value, simulated time), in point order.
    pub series: Vec<(String, f64)>,
}

/// What a sweep did and found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// Points in the study.
    pub total: usize,
    /// Points found in `results.csv` at the start and not run again.
    pub skipped: usize,
    /// Points run by this call.
    pub ran: usize,
    /// Points that failed (key, error); not written, so a rerun tries them again.
    pub failed: Vec<(String, String)>,
    /// Every result known (this run's and the earlier ones), in point order.
    pub results: Vec<PointResult>,
    /// Per trace (label), the point with the smallest simulated time.
    pub best: Vec<(String, PointResult)>,
    /// Per axis and trace, in that order.
    pub sensitivity: Vec<Sensitivity>,
    /// The CSV file.
    pub csv: PathBuf,
    /// The SQLite file.
    pub db: PathBuf,
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

/// The CSV header of a study.
pub fn csv_header(spec: &Spec) -> Vec<String> {
    let mut h = vec!["key".to_string(), "trace".to_string()];
    h.extend(spec.axes.iter().map(|a| a.name.clone()));
    h.extend(["simulated_time_s", "actions", "wall_s"].map(String::from));
    h
}

/// Reads the results already in `results.csv` (a missing file: none). A torn last line (a
/// sweep killed mid-write) is cut off.
fn read_csv(path: &Path, header: &[String]) -> Result<HashMap<String, PointResult>, SweepError> {
    let mut done = HashMap::new();
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(done),
        Err(source) => {
            return Err(SweepError::Read {
                path: path.into(),
                source,
            })
        }
    };
    let mut bytes = Vec::new();
    let rd = |source| SweepError::Read {
        path: path.into(),
        source,
    };
    file.read_to_end(&mut bytes).map_err(rd)?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
        file.set_len(keep as u64).map_err(rd)?;
        file.seek(SeekFrom::End(0)).map_err(rd)?;
    }
    if bytes.is_empty() {
        return Ok(done);
    }
    let csv_err = |source| SweepError::Csv {
        path: path.into(),
        source,
    };
    let mut r = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let found: Vec<String> = r
        .headers()
        .map_err(csv_err)?
        .iter()
        .map(String::from)
        .collect();
    if found != header {
        return Err(SweepError::Mismatch {
            path: path.into(),
            found,
            expected: header.to_vec(),
        });
    }
    let n = header.len();
    for rec in r.records() {
        let rec = rec.map_err(csv_err)?;
        let parsed = (|| {
            Some(PointResult {
                key: rec.get(0)?.to_string(),
                simulated_secs: rec.get(n - 3)?.parse().ok()?,
                actions: rec.get(n - 2)?.parse().ok()?,
                wall_secs: rec.get(n - 1)?.parse().ok()?,
            })
        })();
        if let Some(p) = parsed {
            done.insert(p.key.clone(), p);
        }
    }
    Ok(done)
}

struct Sinks {
    csv: csv::Writer<File>,
    db: rusqlite::Connection,
    csv_path: PathBuf,
    db_path: PathBuf,
}

impl Sinks {
    fn append(&mut self, spec: &Spec, point: &Point, r: &PointResult) -> Result<(), SweepError> {
        let mut row = vec![point.key.clone(), spec.traces[point.trace].label.clone()];
        row.extend(point.values.iter().map(|v| v.clone().unwrap_or_default()));
        row.push(r.simulated_secs.to_string());
        row.push(r.actions.to_string());
        row.push(r.wall_secs.to_string());
        let csv_err = |source| SweepError::Csv {
            path: self.csv_path.clone(),
            source,
        };
        self.csv.write_record(&row).map_err(csv_err)?;
        self.csv.flush().map_err(|source| SweepError::Write {
            path: self.csv_path.clone(),
            source,
        })?;
        self.insert(spec, point, r)
    }

    /// Inserts (or replaces) a point's row in the database.
    fn insert(&mut self, spec: &Spec, point: &Point, r: &PointResult) -> Result<(), SweepError> {
        let db_err = |source| SweepError::Db {
            path: self.db_path.clone(),
            source,
        };
        let tx = self.db.transaction().map_err(db_err)?;
        tx.execute(
            "INSERT OR REPLACE INTO points (key, trace, simulated_time_s, actions, wall_s) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![
                point.key,
                spec.traces[point.trace].label,
                r.simulated_secs,
                r.actions as i64,
                r.wall_secs
            ],
        )
        .map_err(db_err)?;
        for (a, v) in spec.axes.iter().zip(&point.values) {
            tx.execute(
                "INSERT OR REPLACE INTO point_axes (key, axis, value) VALUES (?1, ?2, ?3)",
                rusqlite::params![point.key, a.name, v],
            )
            .map_err(db_err)?;
        }
        tx.commit().map_err(db_err)
    }
}

fn open_db(path: &Path) -> Result<rusqlite::Connection, SweepError> {
    let db_err = |source| SweepError::Db {
        path: path.into(),
        source,
    };
    let db = rusqlite::Connection::open(path).map_err(db_err)?;
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, trace TEXT NOT NULL, \
         simulated_time_s REAL NOT NULL, actions INTEGER NOT NULL, wall_s REAL NOT NULL);
         CREATE TABLE IF NOT EXISTS point_axes (key TEXT NOT NULL, axis TEXT NOT NULL, \
         value TEXT, PRIMARY KEY (key, axis));",
    )
    .map_err(db_err)?;
    Ok(db)
}

/// Runs the points of `spec` not yet in `results_dir/results.csv`, in parallel, appending each
/// result to `results.csv` and `results.db` as it finishes.
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
    std::fs::create_dir_all(results_dir).map_err(|source| SweepError::Write {
        path: results_dir.into(),
        source,
    })?;
    let csv_path = results_dir.join(CSV_FILE);
    let db_path = results_dir.join(DB_FILE);
    let header = csv_header(spec);
    let mut done = read_csv(&csv_path, &header)?;
    let all = points(spec);
    let keys: HashSet<&str> = all.iter().map(|p| p.key.as_str()).collect();
    done.retain(|k, _| keys.contains(k.as_str()));
    let skipped = done.len();
    let mut pending: Vec<&Point> = all.iter().filter(|p| !done.contains_key(&p.key)).collect();
    if let Some(m) = options.max_points {
        pending.truncate(m);
    }

    let write_err = |source| SweepError::Write {
        path: csv_path.clone(),
        source,
    };
    let fresh = std::fs::metadata(&csv_path).map_or(true, |m| m.len() == 0);
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&csv_path)
        .map_err(write_err)?;
    let mut csv = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    if fresh {
        csv.write_record(&header)
            .map_err(|source| SweepError::Csv {
                path: csv_path.clone(),
                source,
            })?;
        csv.flush().map_err(write_err)?;
    }
    let sinks = Mutex::new(Sinks {
        csv,
        db: open_db(&db_path)?,
        csv_path: csv_path.clone(),
        db_path: db_path.clone(),
    });

    // A sweep killed between its CSV and database writes: the CSV is the reference.
    {
        let mut s = sinks.lock().unwrap_or_else(|e| e.into_inner());
        let mut in_db = HashSet::new();
        {
            let db_err = |source| SweepError::Db {
                path: db_path.clone(),
                source,
            };
            let mut q = s.db.prepare("SELECT key FROM points").map_err(db_err)?;
            let rows = q.query_map([], |r| r.get::<_, String>(0)).map_err(db_err)?;
            for k in rows {
                in_db.insert(k.map_err(db_err)?);
            }
        }
        for p in &all {
            if let Some(r) = done.get(&p.key) {
                if !in_db.contains(&p.key) {
                    s.insert(spec, p, r)?;
                }
            }
        }
    }

    progress.start(all.len(), skipped);
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
                    let mut s = sinks.lock().unwrap_or_else(|e| e.into_inner());
                    s.append(spec, p, ok)?;
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
            Ok(r) => {
                ran += 1;
                done.insert(p.key.clone(), r);
            }
            Err(e) => failed.push((p.key.clone(), e)),
        }
    }
    Ok(summarize(
        spec, &all, done, skipped, ran, failed, csv_path, db_path,
    ))
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    spec: &Spec,
    all: &[Point],
    mut done: HashMap<String, PointResult>,
    skipped: usize,
    ran: usize,
    failed: Vec<(String, String)>,
    csv: PathBuf,
    db: PathBuf,
) -> Summary {
    let results: Vec<PointResult> = all.iter().filter_map(|p| done.remove(&p.key)).collect();
    let by_key: HashMap<&str, &PointResult> = results.iter().map(|r| (r.key.as_str(), r)).collect();
    let mut best = Vec::new();
    for (t, trace) in spec.traces.iter().enumerate() {
        let b = all
            .iter()
            .filter(|p| p.trace == t)
            .filter_map(|p| by_key.get(p.key.as_str()))
            .min_by(|a, b| a.simulated_secs.total_cmp(&b.simulated_secs));
        if let Some(b) = b {
            best.push((trace.label.clone(), (*b).clone()));
        }
    }
    let mut sensitivity = Vec::new();
    for (ai, axis) in spec.axes.iter().enumerate() {
        for (t, trace) in spec.traces.iter().enumerate() {
            let mine: Vec<&Point> = all.iter().filter(|p| p.trace == t).collect();
            let Some(base) = mine.first() else { continue };
            let series: Vec<(String, f64)> = mine
                .iter()
                .filter(|p| {
                    p.values
                        .iter()
                        .zip(&base.values)
                        .enumerate()
                        .all(|(j, (v, b))| j == ai || v == b)
                })
                .filter_map(|p| {
                    by_key
                        .get(p.key.as_str())
                        .map(|r| (p.values[ai].clone().unwrap_or_default(), r.simulated_secs))
                })
                .collect();
            let relative = (series.len() >= 2).then(|| {
                let min = series.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
                let max = series.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
                (max - min) / min
            });
            sensitivity.push(Sensitivity {
                axis: axis.name.clone(),
                trace: trace.label.clone(),
                relative,
                series,
            });
        }
    }
    Summary {
        total: all.len(),
        skipped,
        ran,
        failed,
        results,
        best,
        sensitivity,
        csv,
        db,
    }
}

/// The summary as text: counts, the best point of each trace, each axis's sensitivity.
pub fn summary_text(s: &Summary) -> String {
    let mut t = format!(
        "Points: {} ({} run now, {} already done, {} failed)\nResults: {}, {}\n",
        s.total,
        s.ran,
        s.skipped,
        s.failed.len(),
        s.csv.display(),
        s.db.display()
    );
    if !s.best.is_empty() {
        t.push_str("\nBest point per trace:\n");
        for (trace, b) in &s.best {
            t.push_str(&format!(
                "  {trace}: {:.12} s  {}\n",
                b.simulated_secs, b.key
            ));
        }
    }
    if !s.sensitivity.is_empty() {
        t.push_str("\nSensitivity ((max - min) / min, other axes at the first point's values):\n");
        let aw = s
            .sensitivity
            .iter()
            .map(|x| x.axis.len())
            .max()
            .unwrap_or(0);
        let tw = s
            .sensitivity
            .iter()
            .map(|x| x.trace.len())
            .max()
            .unwrap_or(0);
        for x in &s.sensitivity {
            let rel = x
                .relative
                .map_or_else(|| "-".to_string(), |r| format!("{:.2} %", 100.0 * r));
            t.push_str(&format!("  {:<aw$}  {:<tw$}  {rel}\n", x.axis, x.trace));
        }
    }
    for (k, e) in &s.failed {
        t.push_str(&format!("failed: {k}: {e}\n"));
    }
    t
}
