//! Rendering a report (text, JSON), writing timelines (Perfetto JSON, CSV) and the progress bar.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use timeless_replay::{Observer, Report};

/// The report as a table. Times with 12 significant digits, as SimGrid's `%.12r`.
pub fn text(r: &Report) -> String {
    let t = r.simulated_time_secs;
    let mut s = if t.is_finite() {
        format!("Simulated time: {} s\n", fmt_secs(t))
    } else {
        format!(
            "Simulated time: {} (a compute or sleep amount too large to add up in f64 seconds)\n",
            fmt_secs(t)
        )
    };
    s.push_str(&format!("Actions replayed: {}\n\n", r.actions));
    let host_w = r
        .ranks
        .iter()
        .map(|k| k.host.len())
        .max()
        .unwrap_or(4)
        .max(4);
    // One line per rank, 111 bytes and the host column: reserved at once, since at thousands
    // of ranks growing the string by doubling copied it into fresh memory again and again
    // (the 4,096-rank empty replay spent a sixth of its time zeroing those pages).
    s.reserve((r.ranks.len() + 1) * (host_w + 112));
    let _ = writeln!(
        s,
        "{:>5}  {:<host_w$}  {:>18}  {:>18}  {:>18}  {:>18}  {:>14}",
        "rank", "host", "finish (s)", "compute (s)", "comm (s)", "wait (s)", "sleep (s)"
    );
    for k in &r.ranks {
        let _ = writeln!(
            s,
            "{:>5}  {:<host_w$}  {:>18}  {:>18}  {:>18}  {:>18}  {:>14}",
            k.rank,
            k.host,
            Secs(k.finish_secs),
            Secs(k.compute_secs),
            Secs(k.comm_secs),
            Secs(k.wait_secs),
            Secs(k.sleep_secs),
        );
    }
    s
}

/// A time in seconds as [`fmt_secs`] writes it, as a `Display` that honours width and alignment
/// (a table's columns) without a `String` per value.
struct Secs(f64);

impl std::fmt::Display for Secs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x.is_nan() {
            f.pad("overflow (NaN)")
        } else if x.is_infinite() {
            f.pad("overflow (inf)")
        } else {
            let mut buf = SmallText::default();
            if x != 0.0 && !(1e-9..1e9).contains(&x.abs()) {
                write!(buf, "{x:.11e}")?;
            } else {
                write!(buf, "{x:.12}")?;
            }
            f.pad(buf.as_str())
        }
    }
}

/// A number's text on the stack: `{:.12}` of a value below 1e9 s or `{:.11e}` of any `f64`
/// is at most 23 bytes.
#[derive(Default)]
struct SmallText {
    bytes: [u8; 32],
    len: usize,
}

impl SmallText {
    fn as_str(&self) -> &str {
        // Only whole `&str`s are written (`write_str`).
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for SmallText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Seconds with 12 decimals; beyond 1e9 s or below 1e-9 s (non-zero) in scientific notation
/// with 12 significant digits, so that a huge time is not printed with 300 digits; an infinite or
/// NaN time (the sum of the bursts overflowed) is named as such ([`Secs`]).
pub(crate) fn fmt_secs(x: f64) -> String {
    Secs(x).to_string()
}

/// The report's times that are infinite or NaN, named (a JSON report cannot hold them: JSON has
/// no infinity, and serde_json would write `null`).
pub fn overflowed(r: &Report) -> Option<String> {
    if !r.simulated_time_secs.is_finite() {
        return Some(format!(
            "the simulated time overflowed ({}): a compute or sleep amount is too large to add up in f64 seconds; the JSON report cannot represent it (the text report names it)",
            r.simulated_time_secs
        ));
    }
    r.ranks.iter().find_map(|k| {
        [k.finish_secs, k.compute_secs, k.comm_secs, k.wait_secs, k.sleep_secs]
            .iter()
            .any(|x| !x.is_finite())
            .then(|| {
                format!(
                    "rank {}'s times overflowed: a compute or sleep amount is too large to add up in f64 seconds; the JSON report cannot represent it (the text report names it)",
                    k.rank
                )
            })
    })
}

#[derive(Serialize)]
struct JsonRank<'a> {
    rank: u32,
    host: &'a str,
    finish_time: f64,
    compute_time: f64,
    comm_time: f64,
    wait_time: f64,
    sleep_time: f64,
    actions: u64,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    simulated_time: f64,
    actions: u64,
    ranks: Vec<JsonRank<'a>>,
    warnings: &'a [String],
}

/// The report as one JSON object (`simulated_time` in seconds, `ranks[]` with `rank`, `host`,
/// `finish_time`, ...).
pub fn json(r: &Report) -> String {
    let j = JsonReport {
        simulated_time: r.simulated_time_secs,
        actions: r.actions,
        ranks: r
            .ranks
            .iter()
            .map(|k| JsonRank {
                rank: k.rank,
                host: &k.host,
                finish_time: k.finish_secs,
                compute_time: k.compute_secs,
                comm_time: k.comm_secs,
                wait_time: k.wait_secs,
                sleep_time: k.sleep_secs,
                actions: k.actions,
            })
            .collect(),
        warnings: &r.warnings,
    };
    let mut s = serde_json::to_string_pretty(&j).expect("plain data serializes");
    s.push('\n');
    s
}

enum Sink {
    Perfetto { w: BufWriter<File>, first: bool },
    Csv(Box<csv::Writer<File>>),
}

/// A timeline file being written, streamed action by action.
pub struct Timeline {
    sink: Sink,
    error: Option<std::io::Error>,
    /// Multi-job replay: each job's first replay rank and size (Perfetto: one process each).
    jobs: Vec<(u32, u32)>,
}

impl Timeline {
    /// Creates `path`; the extension chooses the format (`.json` Perfetto, `.csv`).
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let file = || {
            File::create(path).with_context(|| format!("cannot create timeline {}", path.display()))
        };
        let sink = match ext.as_str() {
            "json" => {
                let mut w = BufWriter::new(file()?);
                w.write_all(b"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n")?;
                Sink::Perfetto { w, first: true }
            }
            "csv" => {
                let mut w = csv::Writer::from_writer(file()?);
                w.write_record(["rank", "action", "line", "start_s", "end_s"])?;
                Sink::Csv(Box::new(w))
            }
            _ => {
                return Err(anyhow!(
                    "timeline {}: expected a .json or .csv file name",
                    path.display()
                ))
            }
        };
        Ok(Timeline {
            sink,
            error: None,
            jobs: Vec::new(),
        })
    }

    /// A multi-job replay: Perfetto shows job j as process j, named after the job, whose
    /// threads are the job's ranks (CSV keeps replay ranks).
    pub fn set_jobs(&mut self, jobs: &[(String, u32, u32)]) {
        self.jobs = jobs.iter().map(|&(_, first, n)| (first, n)).collect();
        if let Sink::Perfetto { w, first } = &mut self.sink {
            for (pid, (name, _, _)) in jobs.iter().enumerate() {
                let sep = if *first { "" } else { ",\n" };
                *first = false;
                let name = serde_json::to_string(&format!("job {name}")).unwrap_or_default();
                if let Err(e) = write!(
                    w,
                    "{sep}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"name\":{name}}}}}"
                ) {
                    self.error = Some(e);
                }
            }
        }
    }

    /// Perfetto process and thread of replay rank `rank`: (job, rank in the job), or (0, rank).
    fn pid_tid(&self, rank: u32) -> (usize, u32) {
        self.jobs
            .iter()
            .position(|&(first, n)| rank >= first && rank < first + n)
            .map_or((0, rank), |j| (j, rank - self.jobs[j].0))
    }

    fn record(&mut self, rank: u32, kw: &str, line: u64, start: f64, end: f64) {
        if self.error.is_some() {
            return;
        }
        let (pid, tid) = self.pid_tid(rank);
        let r = match &mut self.sink {
            Sink::Perfetto { w, first } => {
                let sep = if *first { "" } else { ",\n" };
                *first = false;
                // Chrome trace events: complete events ("X") in microseconds, one thread per rank.
                write!(
                    w,
                    "{sep}{{\"name\":\"{kw}\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{:.6},\"dur\":{:.6},\"args\":{{\"line\":{line}}}}}",
                    start * 1e6,
                    (end - start) * 1e6
                )
            }
            Sink::Csv(w) => w
                .write_record([
                    rank.to_string(),
                    kw.to_string(),
                    line.to_string(),
                    format!("{start:.12}"),
                    format!("{end:.12}"),
                ])
                .map_err(std::io::Error::other),
        };
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    /// Finishes the file.
    pub fn close(self) -> anyhow::Result<()> {
        if let Some(e) = self.error {
            return Err(e.into());
        }
        match self.sink {
            Sink::Perfetto { mut w, .. } => {
                w.write_all(b"\n]}\n")?;
                w.flush()?;
            }
            Sink::Csv(mut w) => w.flush()?,
        }
        Ok(())
    }
}

/// Observer that feeds the timeline and shows a progress bar on a terminal once the replay has
/// run for more than a second.
pub struct Progress {
    timeline: Option<Timeline>,
    started: Instant,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress observer writing to `timeline` if given.
    pub fn new(timeline: Option<Timeline>) -> Self {
        Progress {
            timeline,
            started: Instant::now(),
            bar: None,
        }
    }

    /// Clears the bar and returns the timeline.
    pub fn finish(self) -> Option<Timeline> {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
        self.timeline
    }
}

impl Observer for Progress {
    fn wants_actions(&self) -> bool {
        self.timeline.is_some()
    }

    fn action(
        &mut self,
        rank: u32,
        keyword: &'static str,
        line: u64,
        start_secs: f64,
        end_secs: f64,
    ) {
        if let Some(t) = &mut self.timeline {
            t.record(rank, keyword, line, start_secs, end_secs);
        }
    }

    fn progress(&mut self, actions: u64, now_secs: f64) {
        if self.bar.is_none() && self.started.elapsed() > Duration::from_secs(1) {
            // indicatif draws nothing when stderr is not a terminal.
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid template"),
            );
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "{actions} actions replayed, simulated clock {now_secs:.6} s"
            ));
            b.tick();
        }
    }
}

/// The JSON report with a `what_if` member listing the platform changes (omitted when none).
pub fn with_what_if(report_json: &str, changes: &[String]) -> String {
    if changes.is_empty() {
        return report_json.to_string();
    }
    let member = serde_json::to_string(changes).unwrap_or_else(|_| "[]".into());
    with_member(report_json, "what_if", &member)
}

/// The report's kernel counts (`--kernel-stats`) as a JSON object, by
/// `timeless_kernel::KernelStats::named`'s names.
pub fn kernel_json(report: &Report) -> String {
    let v: serde_json::Map<String, serde_json::Value> = report
        .kernel
        .named()
        .into_iter()
        .map(|(name, n)| (name.to_string(), n.into()))
        .collect();
    serde_json::to_string(&v).unwrap_or_else(|_| "{}".into())
}

/// A pretty-printed JSON object with the member `key: value_json` added before its closing
/// brace.
pub fn with_member(object_json: &str, key: &str, value_json: &str) -> String {
    let body = object_json
        .trim_end()
        .strip_suffix('}')
        .unwrap_or(object_json)
        .trim_end();
    format!("{body},\n  \"{key}\": {value_json}\n}}\n")
}

/// The jobs table of a multi-job replay (empty string for one job): per job its ranks, start
/// (after its delay), end, time, time alone and slowdown.
pub fn jobs_text(jobs: &[timeless_run::JobOutcome]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let mut t = String::from(
        "Jobs (rank: replay ranks above):\n  job        rank       start (s)        end (s)       time (s)      alone (s)  slowdown\n",
    );
    for j in jobs {
        let r = &j.report;
        let alone = j.alone_secs.map_or("-".to_string(), |a| format!("{a:.9}"));
        let slow = j.slowdown().map_or("-".to_string(), |s| format!("{s:.4}"));
        let ranks = if r.ranks == 1 {
            r.first_rank.to_string()
        } else {
            format!("{}-{}", r.first_rank, r.first_rank + r.ranks - 1)
        };
        t.push_str(&format!(
            "  {:<10} {:>6} {:>14.9} {:>14.9} {:>14.9} {:>14} {:>9}{}\n",
            r.name,
            ranks,
            r.start_secs,
            r.end_secs,
            r.time_secs,
            alone,
            slow,
            if j.compensated { "  (compensated)" } else { "" }
        ));
    }
    t
}

/// The `jobs` member of the JSON report: an array of objects with `name`, `first_rank`,
/// `ranks`, `start_s`, `end_s`, `time_s`, `alone_s` (null without baselines), `slowdown`,
/// `compensated`.
pub fn jobs_json(jobs: &[timeless_run::JobOutcome]) -> String {
    let v: Vec<serde_json::Value> = jobs
        .iter()
        .map(|j| {
            let r = &j.report;
            serde_json::json!({
                "name": r.name,
                "first_rank": r.first_rank,
                "ranks": r.ranks,
                "start_s": r.start_secs,
                "end_s": r.end_secs,
                "time_s": r.time_secs,
                "alone_s": j.alone_secs,
                "slowdown": j.slowdown(),
                "compensated": j.compensated,
            })
        })
        .collect();
    serde_json::Value::Array(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::fmt_secs;

    #[test]
    fn huge_tiny_and_overflowed_times_are_readable() {
        assert_eq!(fmt_secs(0.0), "0.000000000000");
        assert_eq!(fmt_secs(0.000244940669), "0.000244940669");
        assert_eq!(fmt_secs(999_999_999.5), "999999999.500000000000");
        assert_eq!(fmt_secs(1e9), "1.00000000000e9");
        assert_eq!(fmt_secs(2e299), "2.00000000000e299");
        assert_eq!(fmt_secs(5e-10), "5.00000000000e-10");
        assert_eq!(fmt_secs(f64::INFINITY), "overflow (inf)");
        assert_eq!(fmt_secs(f64::NAN), "overflow (NaN)");
    }
}
