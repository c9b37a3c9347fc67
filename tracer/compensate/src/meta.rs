//! What the compensation needs from the tracer's `trace-meta.json` (written by
//! `timeless-preload` next to the rank files, `tracer/preload/src/meta.rs` and `setup.rs`).
//!
//! Read fields: `ranks`; `tracer_overhead.per_rank_per_event_secs` (or, failing that,
//! `tracer_overhead.per_event_secs_median`) for the per-event overhead `O`, plus
//! `tracer_overhead.injected_per_event_secs` when the run injected extra cost (once per timed
//! event and once per call in a burst: see `timeless-preload`'s `stamps`); `hosts[]` with their
//! `ranks` and `reference_speed_flops_per_sec`, the speed each rank's compute volumes were
//! converted with ("each rank converts with the median speed of the ranks on its host"); and an
//! optional `copy_secs_per_byte` for `C`. Other fields are ignored.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, ErrorKind};

/// Name of the metadata file in a trace directory.
pub const META_FILE: &str = "trace-meta.json";

/// The compensation inputs of one traced run.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceMeta {
    /// The file read.
    pub path: PathBuf,
    /// Number of ranks.
    pub ranks: u32,
    /// Tracer overhead charged to compute bursts per traced call (TI record) of each rank,
    /// seconds: the tracer's per-event cost plus the injected cost.
    pub overhead_secs: Vec<f64>,
    /// Per-event overhead `O` of each rank for timed traces (`004_*` eq. 1, two events per
    /// call), seconds: the tracer's per-event cost plus the injected cost.
    pub event_overhead_secs: Vec<f64>,
    /// Reference speed of each rank, flop/s (the one its compute volumes were recorded with).
    pub speed_flops_per_sec: Vec<f64>,
    /// Per-byte buffer copy time, seconds, when the tracer measured it.
    pub copy_secs_per_byte: Option<f64>,
}

fn meta_err(path: &Path, msg: impl Into<String>) -> Error {
    Error::new(path, 0, ErrorKind::Metadata(msg.into()))
}

impl TraceMeta {
    /// Reads `dir/trace-meta.json`; `Ok(None)` if there is no such file.
    ///
    /// # Errors
    /// The file exists but cannot be read, is not JSON, or lacks the fields above (the error
    /// names the missing field).
    pub fn find(dir: &Path) -> Result<Option<TraceMeta>, Error> {
        let path = dir.join(META_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        TraceMeta::read(&path).map(Some)
    }

    /// Finds `trace-meta.json` next to a trace argument (a list file or shared trace) or next to
    /// rank 0's file, in that order (where `timeless simulate` looks). `Ok(Err(dirs))`: there
    /// is none, with the directories looked in (an empty path is the current directory).
    ///
    /// # Errors
    /// A metadata file exists but does not decode (see [`TraceMeta::find`]).
    pub fn find_near(
        trace_arg: Option<&Path>,
        first_rank_file: Option<&Path>,
    ) -> Result<Result<TraceMeta, Vec<std::path::PathBuf>>, Error> {
        let mut dirs: Vec<std::path::PathBuf> = Vec::new();
        let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        if let Some(t) = trace_arg {
            dirs.push(parent(t));
        }
        if let Some(f) = first_rank_file {
            let d = parent(f);
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        for d in &dirs {
            if let Some(m) = TraceMeta::find(d)? {
                return Ok(Ok(m));
            }
        }
        Ok(Err(dirs))
    }

    /// Reads the metadata file at `path`.
    ///
    /// # Errors
    /// See [`TraceMeta::find`].
    pub fn read(path: &Path) -> Result<TraceMeta, Error> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::new(path, 0, ErrorKind::Io(e)))?;
        TraceMeta::parse(path, &text)
    }

    /// Decodes the text of a metadata file (e.g. one embedded in a compressed trace); `path`
    /// names it in messages.
    ///
    /// # Errors
    /// See [`TraceMeta::find`].
    pub fn parse(path: &Path, text: &str) -> Result<TraceMeta, Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            Error::new(
                path,
                e.line() as u64,
                ErrorKind::Metadata(format!("not JSON: {e}")),
            )
        })?;
        let ranks = v
            .get("ranks")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0 && n <= u64::from(u32::MAX))
            .ok_or_else(|| meta_err(path, "expected \"ranks\": a positive integer"))?
            as u32;
        let n = ranks as usize;
        let ov = v.get("tracer_overhead");
        let overhead_secs = match ov
            .and_then(|o| o.get("per_rank_per_event_secs"))
            .and_then(Value::as_array)
        {
            Some(a) if a.len() == n => a
                .iter()
                .map(|x| x.as_f64().filter(|s| s.is_finite() && *s >= 0.0))
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| {
                    meta_err(
                        path,
                        "tracer_overhead.per_rank_per_event_secs: expected non-negative seconds",
                    )
                })?,
            _ => {
                let m = ov
                    .and_then(|o| o.get("per_event_secs_median"))
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        meta_err(
                            path,
                            format!("expected tracer_overhead.per_rank_per_event_secs ({n} entries) or tracer_overhead.per_event_secs_median"),
                        )
                    })?;
                vec![m; n]
            }
        };
        // Cost injected for experiments (`TIMELESS_INJECT_NS`) adds to the tracer's own: once
        // per event of a timed trace, and once per call in a TI burst (the exit event's; the
        // enter event's falls inside the call).
        let injected = ov
            .and_then(|o| o.get("injected_per_event_secs"))
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(0.0);
        let overhead_secs: Vec<f64> = overhead_secs.into_iter().map(|o| o + injected).collect();
        let event_overhead_secs = overhead_secs.clone();
        let mut speed = vec![f64::NAN; n];
        for h in v
            .get("hosts")
            .and_then(Value::as_array)
            .ok_or_else(|| meta_err(path, "expected \"hosts\": an array"))?
        {
            let s = h
                .get("reference_speed_flops_per_sec")
                .and_then(Value::as_f64)
                .filter(|s| s.is_finite() && *s > 0.0)
                .ok_or_else(|| {
                    meta_err(
                        path,
                        "hosts[].reference_speed_flops_per_sec: expected a positive flop/s",
                    )
                })?;
            for r in h
                .get("ranks")
                .and_then(Value::as_array)
                .ok_or_else(|| meta_err(path, "hosts[].ranks: expected an array of ranks"))?
            {
                let r = r.as_u64().filter(|&r| r < n as u64).ok_or_else(|| {
                    meta_err(path, format!("hosts[].ranks: expected ranks below {n}"))
                })?;
                speed[r as usize] = s;
            }
        }
        if let Some(r) = speed.iter().position(|s| s.is_nan()) {
            return Err(meta_err(
                path,
                format!("rank {r} is on no host of \"hosts\""),
            ));
        }
        let copy_secs_per_byte = v
            .get("copy_secs_per_byte")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s >= 0.0);
        Ok(TraceMeta {
            path: path.to_path_buf(),
            ranks,
            overhead_secs,
            event_overhead_secs,
            speed_flops_per_sec: speed,
            copy_secs_per_byte,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{
  "ranks": 3,
  "hosts": [
    {"name": "a", "ranks": [0, 2], "cpus": 2, "reference_speed_flops_per_sec": 1e9},
    {"name": "b", "ranks": [1], "cpus": 2, "reference_speed_flops_per_sec": 2e9}
  ],
  "tracer_overhead": {
    "per_event_secs_median": 2e-6,
    "per_rank_per_event_secs": [1e-6, 2e-6, 3e-6]
  }
}"#;

    #[test]
    fn reads_per_rank_overhead_and_host_speed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(META_FILE), META).unwrap();
        let m = TraceMeta::find(dir.path()).unwrap().unwrap();
        assert_eq!(m.ranks, 3);
        assert_eq!(m.overhead_secs, vec![1e-6, 2e-6, 3e-6]);
        assert_eq!(m.speed_flops_per_sec, vec![1e9, 2e9, 1e9]);
        assert_eq!(m.copy_secs_per_byte, None);
    }

    #[test]
    fn missing_file_is_none_and_bad_files_say_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(TraceMeta::find(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join(META_FILE), "{\"ranks\": 2, \"hosts\": []}").unwrap();
        let e = TraceMeta::find(dir.path()).unwrap_err().to_string();
        assert!(e.contains("per_event_secs_median"), "{e}");
        let only_median = META.replace(
            "\"per_rank_per_event_secs\": [1e-6, 2e-6, 3e-6]",
            "\"x\": 0",
        );
        std::fs::write(dir.path().join(META_FILE), only_median).unwrap();
        assert_eq!(
            TraceMeta::find(dir.path()).unwrap().unwrap().overhead_secs,
            vec![2e-6; 3]
        );
        let injected = META.replace(
            "\"per_event_secs_median\": 2e-6,",
            "\"per_event_secs_median\": 2e-6, \"injected_per_event_secs\": 1e-5,",
        );
        std::fs::write(dir.path().join(META_FILE), injected).unwrap();
        let o = TraceMeta::find(dir.path()).unwrap().unwrap().overhead_secs;
        assert!(
            (o[0] - 1.1e-5).abs() < 1e-18 && (o[2] - 1.3e-5).abs() < 1e-18,
            "{o:?}"
        );
        std::fs::write(dir.path().join(META_FILE), "{ranks").unwrap();
        let e = TraceMeta::find(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("trace-meta.json:1: bad trace metadata: not JSON"),
            "{e}"
        );
    }
}
