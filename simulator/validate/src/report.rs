//! The results of `timeless validate`: one row per case, the table, the CSV and the summary
//! (median and maximum absolute error, and the spread of predictions across acquisition modes).

use std::fmt::Write;

use timeless_calibrate::measurement::median;

/// Where the replay's host speed comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeedSource {
    /// The flop rate of the traced run's own compute bursts (seed 003 §5), in flops per
    /// core-second.
    Trace,
    /// The reference kernel's speed of the calibrated platform (the speed the trace's volumes
    /// were converted with: a burst replays in its CPU time).
    Kernel,
}

impl SpeedSource {
    /// Name in tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            SpeedSource::Trace => "trace",
            SpeedSource::Kernel => "kernel",
        }
    }
}

/// Predicted times of one case, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Predictions {
    /// With the chosen speed source and compensation setting.
    pub secs: f64,
    /// Hosts at the calibrated kernel speed.
    pub kernel_secs: f64,
    /// Hosts at the traced run's flop rate (when it has one).
    pub trace_secs: Option<f64>,
    /// As `secs`, the other way round for the tracer overhead compensation.
    pub other_compensation_secs: f64,
    /// As `secs` on a network that costs nothing (no latency, unbounded bandwidth, no
    /// per-call overhead): the compute part.
    pub compute_only_secs: f64,
    /// As `secs` without computation (`smpi/simulate-computation:no`): the communication part.
    pub comm_only_secs: f64,
}

impl Predictions {
    /// Nothing predicted yet (NaN; no trace-rate prediction): a row read back by [`parse_csv`].
    pub(crate) fn unknown() -> Self {
        Predictions {
            secs: f64::NAN,
            kernel_secs: f64::NAN,
            trace_secs: None,
            other_compensation_secs: f64::NAN,
            compute_only_secs: f64::NAN,
            comm_only_secs: f64::NAN,
        }
    }
}

/// One case's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Program label.
    pub label: String,
    /// Ranks.
    pub np: usize,
    /// Layout of the untraced runs (`regular`, `folded xK`).
    pub mode: String,
    /// Layout of the traced run (`regular`, `folded xK on C cores`).
    pub trace_mode: String,
    /// The network calibration the case was replayed with: `base` (the calibration
    /// directory) or `fold<K>` (its `fold<K>/`, measured K ranks per core).
    pub calibration: String,
    /// Untraced run times minus the launch baseline, seconds (empty: not measured).
    pub measured: Vec<f64>,
    /// Median wall time of the launch baseline, seconds.
    pub baseline_secs: Option<f64>,
    /// Wall time of the traced run minus the launch baseline, seconds (the run the trace
    /// describes: its difference from `measured` is the tracer's perturbation).
    pub traced_secs: Option<f64>,
    /// The traced run from its first call's enter (`MPI_Init`) to its last call's exit
    /// (`MPI_Finalize`), seconds, from its timestamps: the span the replay's simulated time
    /// covers, without the launch, the program's work outside MPI or the tracer's start and
    /// end (`timeless_calibrate::compute::RunRate::span_secs`). The prediction against it is
    /// the replay's own error, free of run-to-run noise.
    pub traced_span_secs: Option<f64>,
    /// CPU time of the ranks / (ranks × wall time), median of the untraced runs.
    pub cpu_share: Option<f64>,
    /// The calibrated platform's speed, flop/s (the trace's `TIMELESS_REF_SPEED`).
    pub kernel_speed: f64,
    /// The traced bursts' flops per core-second, pooled over ranks, flop/s.
    pub trace_rate: Option<f64>,
    /// Share of the traced flops in the bursts the rate counts (long enough to time the host).
    pub rate_coverage: Option<f64>,
    /// The seed's rate: mean over ranks of the bursts' wall-clock rates, flop/s.
    pub trace_wall_rate: Option<f64>,
    /// Mean over ranks of the compute time the compensation removed, seconds.
    pub removed_secs: Option<f64>,
    /// Predictions.
    pub predicted: Predictions,
}

impl Row {
    /// (median, min, max) of the measured times.
    pub fn measured_stats(&self) -> Option<(f64, f64, f64)> {
        let m = median(&self.measured)?;
        let lo = self.measured.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.measured.iter().copied().fold(0.0, f64::max);
        Some((m, lo, hi))
    }

    /// Error of `predicted_secs` against the measured median, percent.
    pub fn error_pct_of(&self, predicted_secs: f64) -> Option<f64> {
        let (m, _, _) = self.measured_stats()?;
        (m > 0.0).then(|| 100.0 * (predicted_secs - m) / m)
    }

    /// Error of the prediction, percent.
    pub fn error_pct(&self) -> Option<f64> {
        self.error_pct_of(self.predicted.secs)
    }
}

/// Accuracy over the measured cases.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Cases with a measurement.
    pub cases: usize,
    /// Median of |error|, percent.
    pub median_abs_error_pct: f64,
    /// Largest |error|, percent, and its case (label, ranks).
    pub max_abs_error_pct: f64,
    /// The case of the largest error.
    pub worst: (String, usize),
}

/// The accuracy summary, `None` when no case was measured.
pub fn summary(rows: &[Row]) -> Option<Summary> {
    let errs: Vec<(f64, &Row)> = rows
        .iter()
        .filter_map(|r| r.error_pct().map(|e| (e.abs(), r)))
        .collect();
    let abs: Vec<f64> = errs.iter().map(|e| e.0).collect();
    let med = median(&abs)?;
    let (max, worst) = errs.iter().fold(
        (0.0, errs[0].1),
        |acc, &(e, r)| if e > acc.0 { (e, r) } else { acc },
    );
    Some(Summary {
        cases: errs.len(),
        median_abs_error_pct: med,
        max_abs_error_pct: max,
        worst: (worst.label.clone(), worst.np),
    })
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

fn pct(v: Option<f64>) -> String {
    opt(v, |e| format!("{e:+.1}%"))
}

/// The table printed and written to `validate.txt`.
pub fn table(rows: &[Row], source: SpeedSource, compensated: bool) -> String {
    let mut s = format!(
        "{:<12} {:>5}  {:<10} {:<22} {:<7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>10} {:>8} {:>8} {:>9} {:>9}\n",
        "program",
        "ranks",
        "mode",
        "traced",
        "network",
        "measured",
        "min",
        "max",
        "traced",
        "predicted",
        "error",
        "cpu",
        "rate",
        if source == SpeedSource::Trace { "@kernel" } else { "@rate" },
        if compensated { "uncomp." } else { "comp." },
        "compute",
        "comm",
    );
    for r in rows {
        let st = r.measured_stats();
        let other_speed = match source {
            SpeedSource::Trace => Some(r.predicted.kernel_secs),
            SpeedSource::Kernel => r.predicted.trace_secs,
        };
        let _ = writeln!(
            s,
            "{:<12} {:>5}  {:<10} {:<22} {:<7} {:>9} {:>9} {:>9} {:>9} {:>9.4} {:>7} {:>6} {:>10} {:>8} {:>8} {:>9.4} {:>9.4}",
            r.label,
            r.np,
            r.mode,
            r.trace_mode,
            r.calibration,
            opt(st.map(|x| x.0), |v| format!("{v:.4}")),
            opt(st.map(|x| x.1), |v| format!("{v:.4}")),
            opt(st.map(|x| x.2), |v| format!("{v:.4}")),
            opt(r.traced_secs, |v| format!("{v:.4}")),
            r.predicted.secs,
            pct(r.error_pct()),
            opt(r.cpu_share, |v| format!("{:.0}%", 100.0 * v)),
            opt(r.trace_rate, |v| format!("{v:.3e}")),
            pct(other_speed.and_then(|p| r.error_pct_of(p))),
            pct(r.error_pct_of(r.predicted.other_compensation_secs)),
            r.predicted.compute_only_secs,
            r.predicted.comm_only_secs,
        );
    }
    let _ = writeln!(
        s,
        "(seconds from MPI_Init to MPI_Finalize: measured = wall time of the launcher minus the median wall time of the\n \
         same launch of an empty MPI program; predicted = replay on the calibrated platform, hosts at the {} speed, tracer\n \
         overhead {}; network = the calibration replayed with (base, or foldK: measured K ranks per core, for runs folded\n \
         K per core); error = (predicted - measured median) / measured median; traced = the traced run's wall time minus the\n \
         baseline; cpu = CPU time of the ranks / (ranks x wall);\n \
         rate = the traced bursts' flops per core-second; @{} and {} = the error with the other speed source and with\n \
         the compensation {}; compute = replay on a free network; comm = replay without computation)",
        source.name(),
        if compensated { "compensated" } else { "not compensated" },
        if source == SpeedSource::Trace { "kernel" } else { "rate" },
        if compensated { "uncomp." } else { "comp." },
        if compensated { "off" } else { "on" },
    );
    if let Some(sm) = summary(rows) {
        let _ = writeln!(
            s,
            "accuracy over {} case(s): median |error| {:.1}% (target <= 10%), max |error| {:.1}% at {} on {} ranks (target <= 25%): {}",
            sm.cases,
            sm.median_abs_error_pct,
            sm.max_abs_error_pct,
            sm.worst.0,
            sm.worst.1,
            if sm.median_abs_error_pct <= 10.0 && sm.max_abs_error_pct <= 25.0 {
                "met"
            } else {
                "missed"
            }
        );
    }
    s.push_str(&acquisition(rows));
    s
}

/// For each (program, ranks) traced in more than one acquisition mode: the predictions of each
/// mode relative to the first (seed 003 §6.2: the prediction should not depend on the mode).
pub fn acquisition(rows: &[Row]) -> String {
    let mut s = String::new();
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for r in rows {
        let key = (r.label.as_str(), r.np);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let group: Vec<&Row> = rows
            .iter()
            .filter(|x| x.label == r.label && x.np == r.np)
            .collect();
        if group.iter().all(|x| x.trace_mode == group[0].trace_mode) {
            continue;
        }
        let first = group[0];
        let rel = |a: f64, b: f64| 100.0 * (a - b) / b;
        let _ = writeln!(
            s,
            "acquisition modes, {} on {} ranks (relative to the first):",
            r.label, r.np
        );
        for x in &group {
            let _ = writeln!(
                s,
                "  traced {:<24} predicted {:.4} s ({:+.2}%), at the kernel speed {:.4} s ({:+.2}%)",
                x.trace_mode,
                x.predicted.secs,
                rel(x.predicted.secs, first.predicted.secs),
                x.predicted.kernel_secs,
                rel(x.predicted.kernel_secs, first.predicted.kernel_secs),
            );
        }
    }
    s
}

/// `validate.csv`.
pub fn csv(rows: &[Row], source: SpeedSource, compensated: bool) -> String {
    let mut s = String::from(
        "program,ranks,mode,trace_mode,calibration,measured_median_secs,measured_min_secs,measured_max_secs,launch_baseline_secs,traced_secs,traced_span_secs,predicted_secs,error_pct,speed_source,compensated,cpu_share,kernel_speed_flops_per_sec,trace_rate_flops_per_sec,rate_coverage,trace_wall_rate_flops_per_sec,predicted_kernel_secs,predicted_trace_secs,predicted_other_compensation_secs,compute_only_secs,comm_only_secs,removed_per_rank_secs,measured_secs\n",
    );
    let f = |v: Option<f64>, p: usize| v.map_or(String::new(), |v| format!("{v:.p$}"));
    let e = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6e}"));
    for r in rows {
        let st = r.measured_stats();
        // Every digit (the shortest form that reads back the same double), so that a
        // re-prediction (`--from`) recomputes the same median, also of an even count.
        let all: Vec<String> = r.measured.iter().map(|x| format!("{x}")).collect();
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{:.9},{},{},{},{},{:.6e},{},{},{},{:.9},{},{:.9},{:.9},{:.9},{},{}",
            r.label,
            r.np,
            r.mode,
            r.trace_mode,
            r.calibration,
            f(st.map(|x| x.0), 6),
            f(st.map(|x| x.1), 6),
            f(st.map(|x| x.2), 6),
            f(r.baseline_secs, 6),
            f(r.traced_secs, 6),
            f(r.traced_span_secs, 6),
            r.predicted.secs,
            f(r.error_pct(), 2),
            source.name(),
            compensated,
            f(r.cpu_share, 3),
            r.kernel_speed,
            e(r.trace_rate),
            f(r.rate_coverage, 3),
            e(r.trace_wall_rate),
            r.predicted.kernel_secs,
            f(r.predicted.trace_secs, 9),
            r.predicted.other_compensation_secs,
            r.predicted.compute_only_secs,
            r.predicted.comm_only_secs,
            f(r.removed_secs, 6),
            all.join(" ")
        );
    }
    s
}

/// The rows of a `validate.csv` written by [`csv`], each with its line number: the case and
/// its measurements (label, ranks, layouts, calibration, measured times, launch baseline,
/// traced time, CPU share), nothing predicted yet (NaN; speeds 0).
///
/// # Errors
/// `LINE: what was expected` for a missing column or a field that does not parse.
pub fn parse_csv(text: &str) -> Result<Vec<(usize, Row)>, String> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines
        .next()
        .ok_or("1: empty file, expected the header of validate.csv")?;
    let names: Vec<&str> = header.split(',').collect();
    let col = |name: &str| {
        names
            .iter()
            .position(|&n| n == name)
            .ok_or(format!("1: no column `{name}` (not a validate.csv)"))
    };
    let [label, np, mode, trace_mode, calibration, baseline, traced, share, measured] = [
        "program",
        "ranks",
        "mode",
        "trace_mode",
        "calibration",
        "launch_baseline_secs",
        "traced_secs",
        "cpu_share",
        "measured_secs",
    ]
    .map(col);
    let (label, np, mode, trace_mode, calibration) =
        (label?, np?, mode?, trace_mode?, calibration?);
    let (baseline, traced, share, measured) = (baseline?, traced?, share?, measured?);
    let mut rows = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != names.len() {
            return Err(format!(
                "{n}: {} fields, expected {} as in the header",
                f.len(),
                names.len()
            ));
        }
        let number = |c: usize, what: &str| -> Result<Option<f64>, String> {
            if f[c].is_empty() {
                return Ok(None);
            }
            match f[c].parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                _ => Err(format!("{n}: {what} `{}` is not a number >= 0", f[c])),
            }
        };
        let ranks = f[np]
            .parse::<usize>()
            .ok()
            .filter(|&r| r >= 1)
            .ok_or(format!("{n}: ranks `{}` is not a number >= 1", f[np]))?;
        let times = f[measured]
            .split_whitespace()
            .map(|t| match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(format!("{n}: measured time `{t}` is not a number >= 0")),
            })
            .collect::<Result<Vec<f64>, String>>()?;
        rows.push((
            n,
            Row {
                label: f[label].to_string(),
                np: ranks,
                mode: f[mode].to_string(),
                trace_mode: f[trace_mode].to_string(),
                calibration: f[calibration].to_string(),
                measured: times,
                baseline_secs: number(baseline, "launch baseline")?,
                traced_secs: number(traced, "traced time")?,
                traced_span_secs: None,
                cpu_share: number(share, "CPU share")?,
                kernel_speed: 0.0,
                trace_rate: None,
                rate_coverage: None,
                trace_wall_rate: None,
                removed_secs: None,
                predicted: Predictions::unknown(),
            },
        ));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, np: usize, trace_mode: &str, measured: &[f64], predicted: f64) -> Row {
        Row {
            label: label.into(),
            np,
            mode: "regular".into(),
            trace_mode: trace_mode.into(),
            calibration: "base".into(),
            measured: measured.to_vec(),
            baseline_secs: Some(0.3),
            traced_secs: Some(1.5),
            traced_span_secs: Some(1.4),
            cpu_share: Some(0.9),
            kernel_speed: 4e9,
            trace_rate: Some(3e9),
            rate_coverage: Some(0.95),
            trace_wall_rate: Some(2e9),
            removed_secs: Some(0.001),
            predicted: Predictions {
                secs: predicted,
                kernel_secs: predicted * 0.75,
                trace_secs: Some(predicted),
                other_compensation_secs: predicted + 0.01,
                compute_only_secs: predicted - 0.1,
                comm_only_secs: 0.1,
            },
        }
    }

    /// Errors by hand: median of {1.0, 1.2, 0.9} is 1.0; 1.09 predicted: +9%. Second case:
    /// median 2.0, 1.5 predicted: -25%. Third: median of {4, 4} is 4, 4.2: +5%. |errors|
    /// 9, 25, 5: median 9, max 25 (b on 4 ranks). A case without measurement is left out.
    #[test]
    fn summary_takes_median_and_max_of_absolute_errors() {
        let rows = vec![
            row("a", 2, "regular", &[1.0, 1.2, 0.9], 1.09),
            row("b", 4, "regular", &[2.0, 2.2, 1.8], 1.5),
            row("c", 8, "regular", &[4.0, 4.0], 4.2),
            row("d", 8, "regular", &[], 9.0),
        ];
        assert!((rows[0].error_pct().unwrap() - 9.0).abs() < 1e-9);
        assert_eq!(rows[0].measured_stats(), Some((1.0, 0.9, 1.2)));
        assert_eq!(rows[3].error_pct(), None);
        let s = summary(&rows).unwrap();
        assert_eq!(s.cases, 3);
        assert!((s.median_abs_error_pct - 9.0).abs() < 1e-9);
        assert!((s.max_abs_error_pct - 25.0).abs() < 1e-9);
        assert_eq!(s.worst, ("b".to_string(), 4));
        assert_eq!(summary(&rows[3..]), None);
        let t = table(&rows, SpeedSource::Trace, true);
        assert!(t.contains("median |error| 9.0% (target <= 10%), max |error| 25.0% at b on 4 ranks (target <= 25%): met"), "{t}");
    }

    /// Acquisition modes: ring on 2 ranks traced regular (1.000 s) and folded (1.012 s):
    /// +1.20%; kernel-speed predictions 0.75 and 0.759: +1.20% too.
    #[test]
    fn acquisition_modes_are_compared() {
        let rows = vec![
            row("ring", 2, "regular", &[1.0], 1.0),
            row("ring", 2, "folded x2 on 1 core", &[], 1.012),
            row("pi", 2, "regular", &[1.0], 1.0),
        ];
        let s = acquisition(&rows);
        assert_eq!(
            s,
            "acquisition modes, ring on 2 ranks (relative to the first):\n  traced regular                  predicted 1.0000 s (+0.00%), at the kernel speed 0.7500 s (+0.00%)\n  traced folded x2 on 1 core      predicted 1.0120 s (+1.20%), at the kernel speed 0.7590 s (+1.20%)\n"
        );
    }

    /// A written validate.csv reads back with its measurements (the row of `row()`: measured
    /// 1.0 1.2 0.9 s, baseline 0.3 s, traced 1.5 s, CPU share 0.9), and a bad field is named
    /// with its line.
    #[test]
    fn csv_reads_back_the_measurements() {
        let rows = vec![
            row("a", 2, "regular", &[1.0, 1.2, 0.9], 1.09),
            row("d", 8, "folded x4 on 2 cores", &[], 9.0),
        ];
        let text = csv(&rows, SpeedSource::Trace, true);
        let back = parse_csv(&text).unwrap();
        assert_eq!(back.len(), 2);
        let (line, a) = &back[0];
        assert_eq!(*line, 2);
        assert_eq!((a.label.as_str(), a.np), ("a", 2));
        assert_eq!(a.measured, [1.0, 1.2, 0.9]);
        assert_eq!(a.baseline_secs, Some(0.3));
        assert_eq!(a.traced_secs, Some(1.5));
        assert_eq!(a.cpu_share, Some(0.9));
        assert_eq!(a.calibration, "base");
        let (line, d) = &back[1];
        assert_eq!(*line, 3);
        assert_eq!(d.trace_mode, "folded x4 on 2 cores");
        assert!(d.measured.is_empty());
        assert!(text.contains(",1 1.2 0.9\n"), "{text}");
        let bad = text.replace(",1 1.2 0.9", ",1 x 0.9");
        assert_eq!(
            parse_csv(&bad).unwrap_err(),
            "2: measured time `x` is not a number >= 0"
        );
        assert_eq!(
            parse_csv("program,ranks\n").unwrap_err(),
            "1: no column `mode` (not a validate.csv)"
        );
    }

    #[test]
    fn csv_has_one_line_per_case_and_empty_fields_for_missing_values() {
        let rows = vec![row("d", 8, "regular", &[], 9.0)];
        let c = csv(&rows, SpeedSource::Kernel, false);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1],
            "d,8,regular,regular,base,,,,0.300000,1.500000,1.400000,9.000000000,,kernel,false,0.900,4.000000e9,3.000000e9,0.950,2.000000e9,6.750000000,9.000000000,9.010000000,8.900000000,0.100000000,0.001000,"
        );
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
    }
}
