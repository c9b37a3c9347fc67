//! Re-predicting an earlier validation: its measured times and its traces (`validate.csv` and
//! `traces/` of a `timeless validate --out DIR`), the replays run again with another
//! calibration or model setting (`--cfg`), no program run. A model change is then tried on a
//! whole set of cases against the same measurements, which on a shared machine cannot be
//! repeated: the same untraced runs judge every variant.
//!
//! Each row of `DIR/validate.csv` gives a case (label, ranks, the layouts of its untraced and
//! traced runs, the calibration it was replayed with, `base` or `fold<K>`) and its
//! measurements; its trace is `DIR/traces/<label>-n<ranks>[-f<K>][-tf<K>]` (the directory name
//! of [`crate::cases::Case::dir_name`]: the one that exists). The rows keep their measured
//! times, launch baseline, traced time and CPU share; everything predicted is replayed anew.
//!
//! Example: the external set measured once, then the same cases predicted with a setting
//! (`timeless validate --from ext-out --out ext-poll --cfg timeless/poll-cpu-share:0.3`).

use std::path::{Path, PathBuf};

use timeless_launch::PathError;

use crate::cases::Case;
use crate::prediction::Models;
use crate::report::{Row, SpeedSource};
use crate::{Progress, ValidateError, Validation};

/// Everything [`repredict`] needs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RepredictConfig {
    /// The earlier validation's output directory (`validate.csv`, `traces/`).
    pub from: PathBuf,
    /// Directory written by `timeless calibrate network`.
    pub calibration: PathBuf,
    /// Output directory of the new tables (may be `from`: its tables are then replaced).
    pub out: PathBuf,
    /// Host speed of the replay.
    pub source: SpeedSource,
    /// Remove the tracer's per-event overhead in the replay.
    pub compensate: bool,
    /// SimGrid settings (`KEY:VALUE`) applied after each calibration's `smpi.cfg`.
    pub extra_cfg: Vec<String>,
}

impl RepredictConfig {
    /// The validation in `from` re-predicted with `calibration` into `out`; the traced
    /// bursts' speed, compensation on, no extra setting.
    pub fn new(from: PathBuf, calibration: PathBuf, out: PathBuf) -> Self {
        RepredictConfig {
            from,
            calibration,
            out,
            source: SpeedSource::Trace,
            compensate: true,
            extra_cfg: Vec::new(),
        }
    }
}

/// Replays every case of the validation in `config.from` (module docs).
///
/// # Errors
/// [`ValidateError::EarlierValidation`] naming `validate.csv`'s file:line for a row that does
/// not parse, a missing trace directory or a calibration the row names that `config`'s
/// calibration directory lacks; otherwise as [`crate::validate`]'s replays.
pub fn repredict(
    config: &RepredictConfig,
    progress: &mut dyn Progress,
) -> Result<Validation, ValidateError> {
    let csv_path = config.from.join("validate.csv");
    let text = std::fs::read_to_string(&csv_path).map_err(|e| {
        ValidateError::EarlierValidation(format!(
            "cannot read {}: {e} (expected the output directory of an earlier `timeless validate`)",
            csv_path.display()
        ))
    })?;
    let rows = crate::report::parse_csv(&text)
        .map_err(|e| ValidateError::EarlierValidation(format!("{}:{e}", csv_path.display())))?;
    let models = Models::load(
        &config.calibration,
        &config.extra_cfg,
        config.source,
        config.compensate,
    )?;
    std::fs::create_dir_all(&config.out).map_err(PathError::at("create", &config.out))?;
    let out = std::fs::canonicalize(&config.out)?;
    progress.start(rows.len() as u64);
    let mut new_rows = Vec::with_capacity(rows.len());
    for (line, row) in rows {
        let tag = format!("{} N={}", row.label, row.np);
        let at = |what: String| {
            ValidateError::EarlierValidation(format!("{}:{line}: {what}", csv_path.display()))
        };
        let calib = models.named(&row.calibration).ok_or_else(|| {
            at(format!(
                "{tag} was replayed with the calibration `{}`, which {} does not have",
                row.calibration,
                config.calibration.display()
            ))
        })?;
        let trace_dir = trace_dir(&config.from, &row).map_err(at)?;
        progress.message(&format!("{tag}: simulating"));
        let runs = crate::prediction::trace_runs(&trace_dir);
        let (_, p) = models.predict_median(calib, row.np, &runs, &tag, progress)?;
        progress.step();
        new_rows.push(Row {
            kernel_speed: models.kernel_speed,
            trace_rate: p.trace_rate,
            rate_coverage: p.rate_coverage,
            trace_wall_rate: p.trace_wall_rate,
            traced_span_secs: p.traced_span_secs,
            removed_secs: p.removed_secs,
            predicted: p.predicted,
            ..row
        });
    }
    Ok(Validation {
        rows: new_rows,
        out,
        source: config.source,
        compensate: config.compensate,
    })
}

/// Ranks per core of a layout name (`folded x4`, `folded x4 on 2 cores`), `None` otherwise.
fn fold_of(mode: &str) -> Option<usize> {
    mode.strip_prefix("folded x")?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// The trace directory of `row` under `from/traces`: the case directory names its layouts
/// allow (with or without an explicit fold; with a traced-only fold when the traced run's
/// differs), the one that exists.
fn trace_dir(from: &Path, row: &Row) -> Result<PathBuf, String> {
    let (fold, trace_fold) = (fold_of(&row.mode), fold_of(&row.trace_mode));
    let tf = (trace_fold != fold).then_some(trace_fold).flatten();
    let mut found = Vec::new();
    for f in [None, fold] {
        let case = Case {
            label: row.label.clone(),
            np: row.np,
            fold: f,
            trace_fold: tf,
            reps: None,
            command: Vec::new(),
        };
        let dir = from.join("traces").join(case.dir_name());
        if !crate::prediction::trace_runs(&dir).is_empty() && !found.contains(&dir) {
            found.push(dir);
        }
    }
    match found.len() {
        1 => Ok(found.pop().expect("one")),
        0 => Err(format!(
            "no trace of {} on {} ranks under {} (expected {}-n{}...)",
            row.label,
            row.np,
            from.join("traces").display(),
            row.label,
            row.np
        )),
        _ => Err(format!(
            "two traces of {} on {} ranks under {}: {} and {}",
            row.label,
            row.np,
            from.join("traces").display(),
            found[0].display(),
            found[1].display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_of_layout_names() {
        assert_eq!(fold_of("regular"), None);
        assert_eq!(fold_of("folded x4"), Some(4));
        assert_eq!(fold_of("folded x2 on 1 core"), Some(2));
        assert_eq!(fold_of("scattered"), None);
    }
}
