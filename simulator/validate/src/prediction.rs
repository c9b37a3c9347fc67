//! What a prediction is made of: the calibrations of a calibration directory (the unfolded
//! one and its `fold<K>/`), and the replays of one traced run on one of them ([`Models::predict`]:
//! at the kernel speed and at the trace's own flop rate, compensated or not, on a free network
//! and without computation). [`crate::validate`] calls it after measuring and tracing a case;
//! [`crate::repredict()`] calls it on the traces and measurements of an earlier validation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use timeless_compensate::{CompensatedTrace, TraceMeta};
use timeless_platform::{deployment, Platform, PlatformError, PlatformOptions};
use timeless_replay::{NoObserver, PollFromTrace, ReplayConfig, Simulation};
use timeless_trace::{TraceSet, TraceSource};

use crate::report::{Predictions, SpeedSource};
use crate::{chain, Progress, ValidateError};

/// The calibrations and replay settings every case of a validation is predicted with.
pub(crate) struct Models {
    /// The calibration directory's own (unfolded) calibration.
    pub base: Calibration,
    /// Its `fold<K>/` calibrations, by K.
    pub folds: BTreeMap<usize, Calibration>,
    /// Each of these with its ranks pinned to cores (`timeless/pin-ranks`), by name
    /// (`base-pinned`, `fold<K>-pinned`): the replays of pinned folded runs.
    pinned: BTreeMap<String, Calibration>,
    /// The unfolded calibration's host speed, flop/s (the traces' `TIMELESS_REF_SPEED`).
    pub kernel_speed: f64,
    pub source: SpeedSource,
    pub compensate: bool,
}

/// A case's replays: the predictions and what they were made from.
pub(crate) struct Prediction {
    pub trace_rate: Option<f64>,
    pub rate_coverage: Option<f64>,
    pub trace_wall_rate: Option<f64>,
    /// The traced run's span from `MPI_Init` to `MPI_Finalize` (`RunRate::span_secs`).
    pub traced_span_secs: Option<f64>,
    /// Mean compute time the compensation removed per rank, seconds (`None`: not compensated).
    pub removed_secs: Option<f64>,
    pub predicted: Predictions,
}

/// The traced runs of a case in `trace_dir`: the directory itself when it holds a trace
/// (`trace-list.txt`: one traced run), else its subdirectories `1/`, `2/`, ... that do (one per
/// traced run of `timeless validate --traces K`), in order; empty if neither.
pub(crate) fn trace_runs(trace_dir: &Path) -> Vec<PathBuf> {
    if trace_dir.join("trace-list.txt").is_file() {
        return vec![trace_dir.to_path_buf()];
    }
    (1..)
        .map(|i: usize| trace_dir.join(i.to_string()))
        .take_while(|d| d.join("trace-list.txt").is_file())
        .collect()
}

/// Index of the median of `values` (the lower middle one of an even count; the first of
/// equal values), `None` when empty. Example: [5.0, 3.0, 4.0] -> 2 (4.0); [1.0, 2.0] -> 0.
pub(crate) fn median_index(values: &[f64]) -> Option<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
    order.get(values.len().saturating_sub(1) / 2).copied()
}

impl Models {
    /// Replays each traced run of a case (`dirs`, [`trace_runs`]) as [`Models::predict`] does
    /// and returns the one whose prediction (the chosen speed source's time) is the median,
    /// with its index in `dirs`: several traced runs stand for the traced run's noise as the
    /// untraced repetitions stand for the measurement's.
    ///
    /// # Errors
    /// As [`Models::predict`]; [`ValidateError::NoUsableTrace`] if `dirs` is empty.
    pub fn predict_median(
        &self,
        calib: &Calibration,
        np: usize,
        dirs: &[PathBuf],
        tag: &str,
        bar: &mut dyn Progress,
    ) -> Result<(usize, Prediction), ValidateError> {
        let mut all = Vec::with_capacity(dirs.len());
        for (i, dir) in dirs.iter().enumerate() {
            let tag = if dirs.len() > 1 {
                format!("{tag} trace {}", i + 1)
            } else {
                tag.to_string()
            };
            all.push(self.predict(calib, np, dir, &tag, bar)?);
        }
        let secs: Vec<f64> = all.iter().map(|p| p.predicted.secs).collect();
        let i = median_index(&secs)
            .ok_or_else(|| ValidateError::NoUsableTrace("no traced run".into()))?;
        Ok((i, all.swap_remove(i)))
    }

    /// Loads the calibrations of `cal` and applies `extra_cfg` (`KEY:VALUE`) to each. The
    /// pinned ones replay with `timeless/pin-ranks` and, unless their `smpi.cfg` or
    /// `extra_cfg` set it, `timeless/poll-cpu-from-trace:taken` (crate doc, "Pinned runs").
    pub fn load(
        cal: &Path,
        extra_cfg: &[String],
        source: SpeedSource,
        compensate: bool,
    ) -> Result<Models, ValidateError> {
        let mut base =
            load_calibration(cal, "base", None).map_err(|e| ValidateError::Calibration {
                text: chain(&e),
                dir: cal.to_path_buf(),
            })?;
        let kernel_speed = platform_speed(&base.platform)?;
        let mut folds = load_fold_calibrations(cal, kernel_speed)
            .map_err(|e| ValidateError::FoldCalibration(chain(&e)))?;
        for c in std::iter::once(&mut base).chain(folds.values_mut()) {
            c.apply(extra_cfg)?;
        }
        // Pinned runs: `fold<K>-pinned/` when measured pinned (`calibrate network --fold K
        // --pin`), else the calibration itself; either with `timeless/pin-ranks`.
        let mut pinned = BTreeMap::new();
        for c in std::iter::once(&base).chain(folds.values()) {
            let name = format!("{}-pinned", c.name);
            let dir = cal.join(&name);
            let mut p = if c.name != "base" && dir.join("platform.xml").is_file() {
                let mut p = load_calibration(&dir, &name, Some(kernel_speed))
                    .map_err(|e| ValidateError::FoldCalibration(chain(&e)))?;
                p.apply(extra_cfg)?;
                p
            } else {
                let mut p = c.clone();
                p.name = name.clone();
                p
            };
            p.cfg.pin_ranks = true;
            if !p.poll_set {
                p.cfg.poll_cpu_from_trace = PollFromTrace::Taken;
            }
            pinned.insert(name, p);
        }
        Ok(Models {
            base,
            folds,
            pinned,
            kernel_speed,
            source,
            compensate,
        })
    }

    /// The calibration called `name` (`base`, `fold<K>`, either with `-pinned`), if loaded.
    pub fn named(&self, name: &str) -> Option<&Calibration> {
        if name == "base" {
            return Some(&self.base);
        }
        if let Some(p) = self.pinned.get(name) {
            return Some(p);
        }
        let k: usize = name.strip_prefix("fold")?.parse().ok()?;
        self.folds.get(&k)
    }

    /// `calib` (one of these) with its ranks pinned to cores, rank r of a host's ranks on
    /// core r mod C (`timeless/pin-ranks`).
    pub fn pinned<'a>(&'a self, calib: &'a Calibration) -> &'a Calibration {
        self.pinned
            .get(&format!("{}-pinned", calib.name))
            .unwrap_or(calib)
    }

    /// Replays the trace in `trace_dir` (`np` ranks) on `calib`: the chosen prediction and its
    /// diagnostics (module docs). `tag` names the case in notices.
    pub fn predict(
        &self,
        calib: &Calibration,
        np: usize,
        trace_dir: &Path,
        tag: &str,
        bar: &mut dyn Progress,
    ) -> Result<Prediction, ValidateError> {
        let traces = TraceSource::open(&trace_dir.join("trace-list.txt"))
            .map_err(|e| ValidateError::NoUsableTrace(e.to_string()))?;
        let meta = TraceMeta::find(trace_dir)
            .map_err(|e| ValidateError::TraceMeta(e.to_string()))?
            .ok_or_else(|| ValidateError::NoTraceMeta(trace_dir.to_path_buf()))?;
        let rate = match timeless_calibrate::compute::run_rate(trace_dir) {
            Ok(r) => Some(r),
            Err(e) => {
                bar.notice(&format!("{tag}: no flop rate from the trace: {e}"));
                None
            }
        };
        let trace_rate = rate.as_ref().and_then(|r| r.usable_flops_per_sec());
        let rate_coverage = rate.as_ref().map(|r| r.coverage());
        let trace_platform = match trace_rate {
            Some(rate) => Some(Platform::from_xml(
                &with_host_speed(&calib.platform_xml, rate),
                &calib.platform_path.display().to_string(),
                &PlatformOptions::default(),
            )?),
            None => None,
        };
        let chosen = match (self.source, &trace_platform) {
            (SpeedSource::Trace, Some(p)) => p,
            (SpeedSource::Trace, None) => {
                bar.notice(&format!(
                    "{tag}: {:.0}% of the flops are in bursts whose gaps last {} us or more on average (below {:.0}%: the program mostly communicates): no flop rate, the kernel speed is used",
                    100.0 * rate_coverage.unwrap_or(0.0),
                    timeless_calibrate::compute::MIN_RATE_BURST_SECS * 1e6,
                    100.0 * timeless_calibrate::compute::MIN_RATE_COVERAGE
                ));
                &calib.platform
            }
            (SpeedSource::Kernel, _) => &calib.platform,
        };
        let replay = |platform: &Platform, cfg: &ReplayConfig, compensate: bool| {
            replay(
                platform,
                &calib.hostfile,
                np,
                &traces,
                &meta,
                cfg,
                compensate,
            )
        };
        let cfg = with_trace_polls(&calib.cfg, trace_dir)?;
        let (kernel_secs, kernel_removed) = replay(&calib.platform, &cfg, self.compensate)?;
        let trace_secs = match &trace_platform {
            Some(p) => Some(replay(p, &cfg, self.compensate)?),
            None => None,
        };
        let (secs, removed) = match (self.source, trace_secs) {
            (SpeedSource::Trace, Some(t)) => t,
            _ => (kernel_secs, kernel_removed),
        };
        let trace_secs = trace_secs.map(|t| t.0);
        let other_compensation_secs = replay(chosen, &cfg, !self.compensate)?.0;
        let compute_only_secs = replay(chosen, &free_network(&cfg), self.compensate)?.0;
        let mut no_compute = cfg.clone();
        no_compute
            .set("smpi/simulate-computation:no")
            .map_err(ValidateError::Config)?;
        let comm_only_secs = replay(chosen, &no_compute, self.compensate)?.0;
        Ok(Prediction {
            trace_rate,
            rate_coverage,
            trace_wall_rate: rate
                .as_ref()
                .map(|r| r.seed_flops_per_sec())
                .filter(|&r| r > 0.0),
            traced_span_secs: rate.as_ref().and_then(|r| r.span_secs),
            removed_secs: self.compensate.then_some(removed),
            predicted: Predictions {
                secs,
                kernel_secs,
                trace_secs,
                other_compensation_secs,
                compute_only_secs,
                comm_only_secs,
            },
        })
    }
}

/// An error loading a calibration.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error("cannot read {} (run `timeless calibrate network --out {}` first)", path.display(), dir.display())]
    Read {
        path: PathBuf,
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Platform(Box<PlatformError>),
    #[error(transparent)]
    Cfg(#[from] timeless_run::SimulateError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<PlatformError> for LoadError {
    fn from(e: PlatformError) -> Self {
        LoadError::Platform(Box::new(e))
    }
}

/// The `smpi.cfg` of a calibration (keys a replay ignores are skipped silently).
fn replay_config(path: &Path) -> Result<ReplayConfig, LoadError> {
    let mut cfg = ReplayConfig::default();
    timeless_run::read_cfg_file(path, &mut cfg, &mut |_| {})?;
    Ok(cfg)
}

/// `cfg` with each rank's poll budget per call (`ReplayConfig::poll_cpu_secs_per_call`) from
/// `trace_dir`'s in-call times when `timeless/poll-cpu-from-trace` is on, with `taken` scaled
/// by the shares of its timestamps (`timeless_calibrate::compute::poll_secs_per_call`; a rank
/// without times, or a trace without the file, gets no budget: waiting is free, as without the
/// key).
///
/// # Errors
/// [`ValidateError::TraceMeta`] if the in-call file exists but does not parse, or with `taken`
/// the timestamps are missing or malformed.
fn with_trace_polls(cfg: &ReplayConfig, trace_dir: &Path) -> Result<ReplayConfig, ValidateError> {
    let mut cfg = cfg.clone();
    cfg.poll_cpu_secs_per_call =
        timeless_calibrate::compute::poll_secs_per_call(trace_dir, cfg.poll_cpu_from_trace)
            .map_err(|e| ValidateError::TraceMeta(e.to_string()))?
            .unwrap_or_default();
    Ok(cfg)
}

/// The calibrated host speed: the `speed` of the first `<host>` of the platform, in flop/s.
fn platform_speed(platform: &Platform) -> Result<f64, ValidateError> {
    platform
        .hosts()
        .first()
        .map(|h| h.speed_flops_per_sec)
        .ok_or(ValidateError::NoHost)
}

/// One network calibration: the files `timeless calibrate network` wrote in a directory.
#[derive(Clone)]
pub(crate) struct Calibration {
    /// `base` for the calibration directory, `fold<K>` for its `fold<K>/`.
    pub name: String,
    /// The platform, hosts at the kernel speed.
    platform: Platform,
    /// Its text (hosts at the kernel speed).
    platform_xml: String,
    platform_path: PathBuf,
    hostfile: PathBuf,
    cfg: ReplayConfig,
    /// Whether its `smpi.cfg` or the extra settings name `timeless/poll-cpu-from-trace`
    /// (else a pinned run's replay takes `taken`, [`Models::load`]).
    poll_set: bool,
}

impl Calibration {
    /// Applies the settings `extra_cfg` (`KEY:VALUE`) over its `smpi.cfg`.
    fn apply(&mut self, extra_cfg: &[String]) -> Result<(), ValidateError> {
        for item in extra_cfg {
            self.cfg
                .set(item)
                .map_err(|e| ValidateError::BadSetting(format!("--cfg {item}: {e}")))?;
            self.poll_set |= names_poll_key(item);
        }
        Ok(())
    }
}

/// Loads the calibration in `dir`; with `speed`, its hosts are set to that speed (a fold's
/// platform at the unfolded calibration's kernel speed, the one the traces are converted with).
fn load_calibration(dir: &Path, name: &str, speed: Option<f64>) -> Result<Calibration, LoadError> {
    let platform_path = dir.join("platform.xml");
    let text = std::fs::read_to_string(&platform_path).map_err(|source| LoadError::Read {
        path: platform_path.clone(),
        dir: dir.to_path_buf(),
        source,
    })?;
    let platform_xml = match speed {
        Some(v) => with_host_speed(&text, v),
        None => text,
    };
    let platform = Platform::from_xml(
        &platform_xml,
        &platform_path.display().to_string(),
        &PlatformOptions::default(),
    )?;
    Ok(Calibration {
        name: name.to_string(),
        platform,
        platform_xml,
        hostfile: dir.join("hostfile"),
        cfg: replay_config(&dir.join("smpi.cfg"))?,
        poll_set: std::fs::read_to_string(dir.join("smpi.cfg"))
            .is_ok_and(|t| t.lines().any(names_poll_key)),
        platform_path,
    })
}

/// Whether a `KEY:VALUE` setting (or a line of `smpi.cfg`) sets `timeless/poll-cpu-from-trace`.
fn names_poll_key(item: &str) -> bool {
    item.trim_start()
        .strip_prefix("timeless/poll-cpu-from-trace")
        .is_some_and(|rest| rest.starts_with(':'))
}

/// The calibrations `<cal>/fold<K>/` (directories holding a `platform.xml`), by K.
fn load_fold_calibrations(
    cal: &Path,
    speed: f64,
) -> Result<BTreeMap<usize, Calibration>, LoadError> {
    let mut folds = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(cal) else {
        return Ok(folds);
    };
    for entry in entries {
        let path = entry?.path();
        let Some(k) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("fold"))
            .and_then(|k| k.parse::<usize>().ok())
        else {
            continue;
        };
        if path.join("platform.xml").is_file() {
            folds.insert(
                k,
                load_calibration(&path, &format!("fold{k}"), Some(speed))?,
            );
        }
    }
    Ok(folds)
}

/// `cfg` on a network that costs nothing: no latency (`smpi/lat-factor` 0), a bandwidth a
/// million times the link's, and no per-call overheads (`smpi/os`, `smpi/or`, `smpi/ois`).
fn free_network(cfg: &ReplayConfig) -> ReplayConfig {
    let mut c = cfg.clone();
    for item in [
        "smpi/lat-factor:0:0",
        "smpi/bw-factor:0:1e6",
        "smpi/os:0:0:0",
        "smpi/or:0:0:0",
        "smpi/ois:0:0:0",
    ] {
        c.set(item).expect("valid setting");
    }
    c
}

/// Replays `traces` on `platform` with ranks placed round-robin on the hosts of `hostfile`,
/// the bursts compensated for the tracer's overhead when `compensate`. Returns the simulated
/// time and the mean compute time removed per rank, seconds.
fn replay(
    platform: &Platform,
    hostfile: &Path,
    np: usize,
    traces: &TraceSource,
    meta: &TraceMeta,
    cfg: &ReplayConfig,
    compensate: bool,
) -> Result<(f64, f64), ValidateError> {
    let dep = deployment::from_hostfile(hostfile, platform, Some(np))
        .map_err(|e| ValidateError::Deployment(Box::new(e)))?;
    let hosts: Vec<_> = dep.ranks.iter().map(|r| r.host).collect();
    let placement: Vec<_> = (0..np).map(|i| hosts[i % hosts.len()]).collect();
    let compensated = compensate.then(|| CompensatedTrace::new(traces, meta));
    let set: &dyn TraceSet = match &compensated {
        Some(c) => c,
        None => traces,
    };
    let sim = Simulation::new(platform, &placement, set, cfg.clone())?;
    let report = sim.run(&mut NoObserver)?;
    let removed = compensated.map_or(0.0, |c| {
        let a = c.accounts();
        a.iter().map(|a| a.removed_secs).sum::<f64>() / a.len().max(1) as f64
    });
    Ok((report.simulated_time_secs, removed))
}

/// `xml` with every `speed="..."` attribute set to `flops_per_sec` (the platforms written by
/// `timeless calibrate network` have no other `speed` attribute).
fn with_host_speed(xml: &str, flops_per_sec: f64) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find("speed=\"") {
        let value_start = i + "speed=\"".len();
        out.push_str(&rest[..value_start]);
        out.push_str(&format!("{flops_per_sec:e}f"));
        let end = rest[value_start..]
            .find('"')
            .map_or(rest.len(), |j| value_start + j);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibration directory of one 1 Gf host, `smpi.cfg` holding `cfg`.
    fn calibration_dir(cfg: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("platform.xml"),
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
             <platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\
             <host id=\"h\" speed=\"1Gf\" core=\"2\"/></zone></platform>\n",
        )
        .unwrap();
        std::fs::write(d.path().join("hostfile"), "h\n").unwrap();
        std::fs::write(d.path().join("smpi.cfg"), cfg).unwrap();
        d
    }

    /// Pinned runs replay with the `taken` poll budget unless `smpi.cfg` or `--cfg` say
    /// otherwise; unpinned ones without a budget.
    #[test]
    fn pinned_runs_poll_the_cpu_time_they_took() {
        let poll = |cfg: &str, extra: &[&str]| {
            let d = calibration_dir(cfg);
            let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
            let m = Models::load(d.path(), &extra, SpeedSource::Trace, true).unwrap();
            let base = m.named("base").unwrap().cfg.poll_cpu_from_trace;
            let pinned = m.named("base-pinned").unwrap();
            assert!(pinned.cfg.pin_ranks);
            (base, pinned.cfg.poll_cpu_from_trace)
        };
        use PollFromTrace::{InCall, No, Taken};
        assert_eq!(poll("", &[]), (No, Taken));
        assert_eq!(poll("", &["timeless/poll-cpu-from-trace:no"]), (No, No));
        assert_eq!(
            poll("timeless/poll-cpu-from-trace:yes\n", &[]),
            (InCall, InCall)
        );
        assert_eq!(poll("smpi/test:1e-7\n", &[]), (No, Taken));
    }

    #[test]
    fn host_speed_is_replaced() {
        let xml = r#"<host id="a" speed="1e9f" core="2"/><host id="b" speed="2Gf"/>"#;
        assert_eq!(
            with_host_speed(xml, 3.5e9),
            r#"<host id="a" speed="3.5e9f" core="2"/><host id="b" speed="3.5e9f"/>"#
        );
    }

    /// The median traced run: the middle value's index, the lower middle one of an even
    /// count, the first of equal ones.
    #[test]
    fn median_index_by_hand() {
        assert_eq!(median_index(&[]), None);
        assert_eq!(median_index(&[7.0]), Some(0));
        assert_eq!(median_index(&[5.0, 3.0, 4.0]), Some(2));
        assert_eq!(median_index(&[1.0, 2.0]), Some(0));
        assert_eq!(median_index(&[4.0, 1.0, 3.0, 2.0]), Some(3));
        assert_eq!(median_index(&[2.0, 1.0, 2.0]), Some(0));
    }

    /// A case directory with a trace is one traced run; without, its numbered subdirectories
    /// with traces are, in order, up to the first missing number.
    #[test]
    fn trace_runs_of_a_case_directory() {
        let base = std::env::temp_dir().join(format!("tl-trace-runs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let one = base.join("one");
        std::fs::create_dir_all(&one).unwrap();
        assert!(trace_runs(&one).is_empty());
        std::fs::write(one.join("trace-list.txt"), "").unwrap();
        assert_eq!(trace_runs(&one), vec![one.clone()]);
        let many = base.join("many");
        for i in ["1", "2", "3", "5"] {
            std::fs::create_dir_all(many.join(i)).unwrap();
            std::fs::write(many.join(i).join("trace-list.txt"), "").unwrap();
        }
        std::fs::create_dir_all(many.join("4")).unwrap();
        assert_eq!(
            trace_runs(&many),
            vec![many.join("1"), many.join("2"), many.join("3")]
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
