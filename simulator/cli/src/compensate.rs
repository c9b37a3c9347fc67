//! `timeless compensate`: remove the tracer's intrusion from a timed trace (KOJAK's algorithms,
//! `004_*` §3, in `timeless-compensate`) and write the approximated timelines.
//!
//! Outputs: the summary (total time and per-rank late-sender and n-to-n waiting time, measured
//! and approximated with the lower and upper bounds) on stdout; the per-record timeline in
//! `-o OUT` (text table or CSV); optionally a Chrome/Perfetto trace-event JSON timeline with one
//! process per timeline (measured, lower bound, upper bound) and one thread per rank, in the
//! conventions of `timeless simulate --timeline` (complete `X` events in microseconds). Records
//! are written as they are approximated, so memory stays flat on long traces.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use timeless_compensate::{compensate, BurstStatus, NToNRule, Params, RecordKind, Sink, Summary};

use crate::Failure;

/// Output format of the summary and of `-o`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Aligned tables.
    Text,
    /// Comma-separated values with a header row.
    Csv,
}

/// n-to-n collective rule.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum NToN {
    /// Eq. 13 of 004: each member keeps its own measured synchronisation time.
    PerRank,
    /// Eq. 12 of 004: one common exit.
    Common,
}

/// Arguments of `timeless compensate`.
#[derive(Debug, Args)]
pub struct CompensateArgs {
    /// Timed trace: a shared timed trace file, a list of per-rank timed files, or a directory
    /// holding `timed-list.txt` (format: `timeless-compensate` crate docs, module `format`).
    pub trace: PathBuf,
    /// Output file for the approximated timeline (one row per record).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Per-event tracer overhead O in nanoseconds (default: `trace-meta.json` next to the trace,
    /// per rank; without it, 0).
    #[arg(long = "overhead-ns")]
    pub overhead_ns: Option<f64>,
    /// Buffer copy time C in nanoseconds per byte (default: `copy_secs_per_byte` of
    /// `trace-meta.json`, else 0).
    #[arg(long = "copy-ns-per-byte")]
    pub copy_ns_per_byte: Option<f64>,
    /// Rule for n-to-n collective exits.
    #[arg(long = "n-to-n", value_enum, default_value_t = NToN::PerRank)]
    pub n_to_n: NToN,
    /// Format of the summary (stdout) and of the `-o` timeline.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write a Chrome/Perfetto trace-event JSON timeline (measured, lower, upper).
    #[arg(long)]
    pub timeline: Option<PathBuf>,
}

fn input<T>(r: Result<T, impl Into<anyhow::Error>>) -> Result<T, Failure> {
    r.map_err(|e| Failure::Input(e.into()))
}

/// Runs `timeless compensate`.
pub fn run(args: CompensateArgs) -> Result<(), Failure> {
    let n_to_n = match args.n_to_n {
        NToN::PerRank => NToNRule::PerRank,
        NToN::Common => NToNRule::Common,
    };
    let prepared = input(timeless_compensate::setup::prepare(
        &args.trace,
        args.overhead_ns,
        args.copy_ns_per_byte,
        n_to_n,
    ))?;
    let (streams, params, overhead_from) =
        (prepared.streams, prepared.params, prepared.overhead_from);

    let mut sink = Writers::create(&args.output, args.format, args.timeline.as_ref())
        .map_err(Failure::Input)?;
    let summary = input(compensate(streams, &params, &mut sink))?;
    sink.close().map_err(Failure::Other)?;

    let mut out = String::new();
    if args.format == Format::Text {
        out.push_str(&format!("Overhead per event: {overhead_from}\n"));
    }
    out.push_str(&match args.format {
        Format::Text => text(&summary, &params),
        Format::Csv => csv_summary(&summary).map_err(Failure::Other)?,
    });
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .map_err(|e| Failure::Other(e.into()))?;
    if args.format == Format::Csv {
        eprintln!("timeless: overhead per event: {overhead_from}");
    }
    if summary.clock_violations > 0 {
        eprintln!(
            "timeless: warning: {} messages were received before they were sent in the measured trace (unsynchronised clocks?)",
            summary.clock_violations
        );
    }
    if summary.unreceived > 0 {
        eprintln!(
            "timeless: warning: {} messages were sent and never received",
            summary.unreceived
        );
    }
    Ok(())
}

fn secs(x: f64) -> String {
    format!("{x:.9}")
}

fn text(s: &Summary, p: &Params) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "Measured total time:              {} s\n",
        secs(s.total_m)
    ));
    o.push_str(&format!(
        "Approximated total time (lower):  {} s\n",
        secs(s.total_a[0])
    ));
    o.push_str(&format!(
        "Approximated total time (upper):  {} s\n",
        secs(s.total_a[1])
    ));
    let removed = |t: f64| {
        if s.total_m > 0.0 {
            100.0 * (s.total_m - t) / s.total_m
        } else {
            0.0
        }
    };
    o.push_str(&format!(
        "Time removed: {:.3} % (lower), {:.3} % (upper)\n",
        removed(s.total_a[0]),
        removed(s.total_a[1])
    ));
    o.push_str(&format!(
        "Messages: m.1/a.1 {} {}, m.1/a.2 {} {}, m.2 {} {} (lower, upper); copy cost of 1 KiB {} s; largest window {}\n\n",
        s.cases[0][0], s.cases[1][0], s.cases[0][1], s.cases[1][1], s.cases[0][2], s.cases[1][2],
        secs(p.copy.copy_secs(1024)), s.max_window
    ));
    o.push_str("Finish times from the earliest measured enter.\n");
    o.push_str(&format!(
        "{:>5}  {:>8}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}\n",
        "rank",
        "records",
        "finish (s)",
        "finish lo (s)",
        "finish up (s)",
        "late snd (s)",
        "late lo (s)",
        "late up (s)",
        "wait NxN (s)",
        "NxN lo (s)",
        "NxN up (s)"
    ));
    for (r, a) in s.ranks.iter().enumerate() {
        o.push_str(&format!(
            "{:>5}  {:>8}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}  {:>14}\n",
            r,
            a.records,
            secs(a.last_exit_m - s.start_m),
            secs(a.last_exit_a[0] - s.start_m),
            secs(a.last_exit_a[1] - s.start_m),
            secs(a.late_sender_m),
            secs(a.late_sender_a[0]),
            secs(a.late_sender_a[1]),
            secs(a.wait_nxn_m),
            secs(a.wait_nxn_a[0]),
            secs(a.wait_nxn_a[1]),
        ));
    }
    o
}

fn csv_summary(s: &Summary) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rank",
        "records",
        "finish_s",
        "finish_lower_s",
        "finish_upper_s",
        "late_sender_s",
        "late_sender_lower_s",
        "late_sender_upper_s",
        "wait_nxn_s",
        "wait_nxn_lower_s",
        "wait_nxn_upper_s",
    ])?;
    for (r, a) in s.ranks.iter().enumerate() {
        w.write_record([
            r.to_string(),
            a.records.to_string(),
            secs(a.last_exit_m - s.start_m),
            secs(a.last_exit_a[0] - s.start_m),
            secs(a.last_exit_a[1] - s.start_m),
            secs(a.late_sender_m),
            secs(a.late_sender_a[0]),
            secs(a.late_sender_a[1]),
            secs(a.wait_nxn_m),
            secs(a.wait_nxn_a[0]),
            secs(a.wait_nxn_a[1]),
        ])?;
    }
    let sum = |f: &dyn Fn(&timeless_compensate::RankAccount) -> f64| {
        secs(s.ranks.iter().map(f).sum::<f64>())
    };
    w.write_record([
        "total".to_string(),
        s.ranks.iter().map(|a| a.records).sum::<u64>().to_string(),
        secs(s.total_m),
        secs(s.total_a[0]),
        secs(s.total_a[1]),
        sum(&|a| a.late_sender_m),
        sum(&|a| a.late_sender_a[0]),
        sum(&|a| a.late_sender_a[1]),
        sum(&|a| a.wait_nxn_m),
        sum(&|a| a.wait_nxn_a[0]),
        sum(&|a| a.wait_nxn_a[1]),
    ])?;
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The `-o` and `--timeline` files, written record by record.
struct Writers {
    table: Table,
    perfetto: Option<BufWriter<File>>,
    error: Option<anyhow::Error>,
}

enum Table {
    Text(BufWriter<File>),
    Csv(Box<csv::Writer<File>>),
}

impl Writers {
    fn create(
        output: &PathBuf,
        format: Format,
        timeline: Option<&PathBuf>,
    ) -> anyhow::Result<Writers> {
        let file =
            |p: &PathBuf| File::create(p).with_context(|| format!("cannot create {}", p.display()));
        let table = match format {
            Format::Text => {
                let mut w = BufWriter::new(file(output)?);
                writeln!(
                    w,
                    "# approximated timeline: times in seconds; m = measured, lo/up = lower/upper-bound approximation (004 §3)"
                )?;
                writeln!(
                    w,
                    "{:>5} {:>8} {:<14} {:>16} {:>16} {:>16} {:>16} {:>16} {:>16}",
                    "rank",
                    "index",
                    "record",
                    "enter_m",
                    "exit_m",
                    "enter_lo",
                    "exit_lo",
                    "enter_up",
                    "exit_up"
                )?;
                Table::Text(w)
            }
            Format::Csv => {
                let mut w = csv::Writer::from_writer(file(output)?);
                w.write_record([
                    "rank",
                    "index",
                    "line",
                    "record",
                    "name",
                    "enter_s",
                    "exit_s",
                    "enter_lower_s",
                    "exit_lower_s",
                    "enter_upper_s",
                    "exit_upper_s",
                ])?;
                Table::Csv(Box::new(w))
            }
        };
        let perfetto = match timeline {
            Some(p) => {
                if p.extension()
                    .and_then(|e| e.to_str())
                    .map(str::to_ascii_lowercase)
                    != Some("json".into())
                {
                    return Err(anyhow!(
                        "timeline {}: expected a .json file name",
                        p.display()
                    ));
                }
                let mut w = BufWriter::new(file(p)?);
                w.write_all(b"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n")?;
                // Process names: one process per timeline.
                for (pid, name) in [(0, "measured"), (1, "lower bound"), (2, "upper bound")] {
                    let sep = if pid == 0 { "" } else { ",\n" };
                    write!(
                        w,
                        "{sep}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"name\":\"{name}\"}}}}"
                    )?;
                }
                Some(w)
            }
            None => None,
        };
        Ok(Writers {
            table,
            perfetto,
            error: None,
        })
    }

    fn write(&mut self, c: &timeless_compensate::Compensated<'_>) -> anyhow::Result<()> {
        let kw = c.kind.keyword();
        let name = match c.kind {
            RecordKind::Region { name } => name.as_str(),
            _ => "",
        };
        match &mut self.table {
            Table::Text(w) => writeln!(
                w,
                "{:>5} {:>8} {:<14} {:>16} {:>16} {:>16} {:>16} {:>16} {:>16}",
                c.rank,
                c.index,
                if name.is_empty() { kw } else { name },
                secs(c.enter_m),
                secs(c.exit_m),
                secs(c.enter_a[0]),
                secs(c.exit_a[0]),
                secs(c.enter_a[1]),
                secs(c.exit_a[1]),
            )?,
            Table::Csv(w) => w.write_record([
                c.rank.to_string(),
                c.index.to_string(),
                c.line.to_string(),
                kw.to_string(),
                name.to_string(),
                secs(c.enter_m),
                secs(c.exit_m),
                secs(c.enter_a[0]),
                secs(c.exit_a[0]),
                secs(c.enter_a[1]),
                secs(c.exit_a[1]),
            ])?,
        }
        if let Some(w) = &mut self.perfetto {
            let label = if name.is_empty() { kw } else { name };
            let label = json_string(label);
            for (pid, (t0, t1)) in [
                (c.enter_m, c.exit_m),
                (c.enter_a[0], c.exit_a[0]),
                (c.enter_a[1], c.exit_a[1]),
            ]
            .into_iter()
            .enumerate()
            {
                write!(
                    w,
                    ",\n{{\"name\":{label},\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{:.6},\"dur\":{:.6},\"args\":{{\"line\":{}}}}}",
                    c.rank,
                    t0 * 1e6,
                    (t1 - t0) * 1e6,
                    c.line
                )?;
            }
        }
        Ok(())
    }

    fn close(self) -> anyhow::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        match self.table {
            Table::Text(mut w) => w.flush()?,
            Table::Csv(mut w) => w.flush()?,
        }
        if let Some(mut w) = self.perfetto {
            w.write_all(b"\n]}\n")?;
            w.flush()?;
        }
        Ok(())
    }
}

impl Sink for Writers {
    fn record(&mut self, c: &timeless_compensate::Compensated<'_>) {
        if self.error.is_none() {
            if let Err(e) = self.write(c) {
                self.error = Some(e);
            }
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The compensation section of `timeless simulate`'s text report.
pub fn burst_text(s: &BurstStatus) -> String {
    let show = |d: &PathBuf| {
        if d.as_os_str().is_empty() {
            ".".to_string()
        } else {
            d.display().to_string()
        }
    };
    match s {
        BurstStatus::Off => "\nOverhead compensation: off (--no-compensation)\n".to_string(),
        BurstStatus::NoMetadata(dirs) => format!(
            "\nOverhead compensation: nothing to compensate (no trace-meta.json in {})\n",
            dirs.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        BurstStatus::Applied { meta, accounts } => {
            let mut o = format!(
                "\nOverhead compensation: each compute burst lost (MPI events it spans) x O, at the rank's reference speed ({})\n",
                meta.path.display()
            );
            o.push_str(&format!(
                "{:>5}  {:>14}  {:>16}  {:>8}  {:>8}  {:>18}  {:>14}  {:>8}\n",
                "rank",
                "O (s)",
                "speed (flop/s)",
                "events",
                "bursts",
                "removed (flops)",
                "removed (s)",
                "clamped"
            ));
            for (r, a) in accounts.iter().enumerate() {
                o.push_str(&format!(
                    "{:>5}  {:>14.9}  {:>16.6e}  {:>8}  {:>8}  {:>18.1}  {:>14.9}  {:>8}\n",
                    r,
                    meta.overhead_secs[r],
                    meta.speed_flops_per_sec[r],
                    a.events,
                    a.bursts,
                    a.removed_flops,
                    a.removed_secs,
                    a.clamped_bursts
                ));
            }
            o.push_str(&format!(
                "total  removed {:.1} flops, {:.9} s of rank time\n",
                accounts.iter().map(|a| a.removed_flops).sum::<f64>(),
                accounts.iter().map(|a| a.removed_secs).sum::<f64>()
            ));
            o
        }
    }
}

/// Adds a `"compensation"` member to `timeless simulate`'s JSON report.
pub fn burst_json(report_json: &str, s: &BurstStatus) -> String {
    let value = match s {
        BurstStatus::Off => serde_json::json!({"applied": false, "reason": "--no-compensation"}),
        BurstStatus::NoMetadata(_) => serde_json::json!({
            "applied": false,
            "reason": "no trace-meta.json next to the trace: nothing to compensate"
        }),
        BurstStatus::Applied { meta, accounts } => serde_json::json!({
            "applied": true,
            "metadata": meta.path.display().to_string(),
            "ranks": accounts.iter().enumerate().map(|(r, a)| serde_json::json!({
                "rank": r,
                "overhead_secs": meta.overhead_secs[r],
                "reference_speed_flops_per_sec": meta.speed_flops_per_sec[r],
                "events": a.events,
                "bursts": a.bursts,
                "removed_flops": a.removed_flops,
                "removed_secs": a.removed_secs,
                "clamped_bursts": a.clamped_bursts,
            })).collect::<Vec<_>>(),
            "removed_flops": accounts.iter().map(|a| a.removed_flops).sum::<f64>(),
            "removed_secs": accounts.iter().map(|a| a.removed_secs).sum::<f64>(),
        }),
    };
    let member = serde_json::to_string_pretty(&value)
        .expect("plain data serializes")
        .replace('\n', "\n  ");
    crate::output::with_member(report_json, "compensation", &member)
}
