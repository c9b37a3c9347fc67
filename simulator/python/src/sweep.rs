//! `timeless.sweep`: a study file run by `timeless_sweep::run`, as `timeless sweep` runs it.

use std::path::PathBuf;

use pyo3::prelude::*;
use timeless_sweep::{NoProgress, Options, Spec, SweepError};

use crate::{message, InputError, OutputError};

/// The result of one point of a sweep.
#[pyclass(frozen, get_all, module = "timeless")]
#[derive(Debug, Clone)]
pub struct PointResult {
    /// The point's key, `TRACE|AXIS=VALUE|...` (the `key` column of results.csv).
    pub key: String,
    /// Predicted run time, s.
    pub simulated_time: f64,
    /// Actions replayed.
    pub actions: u64,
    /// Wall-clock time of the replay, s (NaN for a point done by an earlier run and missing
    /// from wall.csv).
    pub wall_time: f64,
}

#[pymethods]
impl PointResult {
    fn __repr__(&self) -> String {
        format!(
            "PointResult(key={:?}, simulated_time={:?})",
            self.key, self.simulated_time
        )
    }
}

fn point(r: &timeless_sweep::PointResult) -> PointResult {
    PointResult {
        key: r.key.clone(),
        simulated_time: r.simulated_secs,
        actions: r.actions,
        wall_time: r.wall_secs,
    }
}

/// What `sweep` did and found.
#[pyclass(frozen, get_all, module = "timeless")]
#[derive(Debug)]
pub struct SweepSummary {
    /// Points in the study.
    pub total: usize,
    /// Points already in results.csv at the start (not run again).
    pub skipped: usize,
    /// Points run by this call.
    pub ran: usize,
    /// Points whose replay failed, as (key, message) pairs; a rerun retries them.
    pub failed: Vec<(String, String)>,
    /// Every known result, in point order (list of PointResult).
    pub results: Vec<PointResult>,
    /// Per trace label, the point with the smallest simulated time (dict str -> PointResult).
    pub best: std::collections::BTreeMap<String, PointResult>,
    /// Path of results.csv.
    pub csv: PathBuf,
    /// Path of results.db.
    pub db: PathBuf,
    text: String,
}

#[pymethods]
impl SweepSummary {
    /// The summary `timeless sweep` prints (counts, best point per trace, sensitivities).
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "SweepSummary(total={}, ran={}, skipped={}, failed={})",
            self.total,
            self.ran,
            self.skipped,
            self.failed.len()
        )
    }
}

fn to_py(e: &SweepError) -> PyErr {
    let m = message(e);
    match e {
        SweepError::Spec { .. } | SweepError::Read { .. } | SweepError::Mismatch { .. } => {
            InputError::new_err(m)
        }
        _ => OutputError::new_err(m),
    }
}

/// Run a parameter sweep: the study file's traces replayed at every point of its axes, in
/// parallel, results appended to out_dir/results.csv, results.db (SQLite) and wall.csv as
/// they finish; a rerun into the same directory resumes. At the end results.csv and
/// results.db are rewritten in canonical form (point order), the same bytes as
/// `timeless sweep SPEC -o OUT_DIR` writes.
///
/// Arguments:
///   spec: the study file (TOML; see the README's "Parameter sweeps").
///   out_dir: results directory (default: STEM-results next to the study file).
///   jobs: points replayed at once (default: all cores).
///   max_points: run at most this many of the pending points, then stop.
///
/// Returns a SweepSummary: total, skipped, ran, failed [(key, message)], results
/// [PointResult: key, simulated_time (s), actions, wall_time (s)], best {trace: PointResult},
/// csv, db; str() gives the CLI's summary text.
///
/// Raises InputError (bad study file, results of another study in out_dir) or OutputError (a
/// results file cannot be written). A point whose replay fails is listed in `failed`.
#[pyfunction]
#[pyo3(signature = (spec, out_dir=None, jobs=None, *, max_points=None))]
pub fn sweep(
    py: Python<'_>,
    spec: PathBuf,
    out_dir: Option<PathBuf>,
    jobs: Option<usize>,
    max_points: Option<usize>,
) -> PyResult<SweepSummary> {
    let study = Spec::from_file(&spec).map_err(|e| to_py(&e))?;
    let out = out_dir.unwrap_or_else(|| {
        let stem = spec
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
        study.dir.join(format!("{stem}-results"))
    });
    let mut options = Options::default();
    options.jobs = jobs;
    options.max_points = max_points;
    let s = py
        .detach(|| timeless_sweep::run(&study, &out, &options, &NoProgress))
        .map_err(|e| to_py(&e))?;
    Ok(SweepSummary {
        total: s.total,
        skipped: s.skipped,
        ran: s.ran,
        failed: s.failed.clone(),
        results: s.results.iter().map(point).collect(),
        best: s.best.iter().map(|(t, r)| (t.clone(), point(r))).collect(),
        csv: s.csv.clone(),
        db: s.db.clone(),
        text: timeless_sweep::summary_text(&s),
    })
}
