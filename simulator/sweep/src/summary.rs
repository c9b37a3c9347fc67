//! What a sweep found: the best point of each trace, each axis's sensitivity, as text.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::{Point, PointResult, Spec};

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

#[allow(clippy::too_many_arguments)]
pub(crate) fn summarize(
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
