//! mpisee-through's views of a profile: tables by communicator, by operation, by rank and by
//! size bucket, with min/avg/max across ranks, as text, CSV or JSON.
//!
//! Across-rank statistics are taken over a communicator's members: a member with no call of
//! the operation counts as 0 s. Example: `MPI_Allreduce` on `W` of 4 ranks, ranks 0-2 spending
//! 1 s each and rank 3 never calling it: min 0, avg 0.75, max 1, sum 3 s.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::bucket;
use crate::model::Profile;

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text.
    Text(String),
    /// A count (calls, bytes, ranks).
    Int(u64),
    /// Seconds.
    Secs(f64),
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(v) => v.to_string(),
            Cell::Secs(v) => format!("{v:.6}"),
        }
    }

    fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.clone()),
            Cell::Int(v) => Value::from(*v),
            Cell::Secs(v) => serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number),
        }
    }
}

/// A titled table.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// What it shows.
    pub title: String,
    /// Column names (units in the name: `time_sum_s`, `bytes`).
    pub columns: Vec<&'static str>,
    /// Rows of cells, one per column.
    pub rows: Vec<Vec<Cell>>,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns.
    Text,
    /// CSV with a header (one table per block, separated by an empty line).
    Csv,
    /// A JSON object: title -> array of row objects.
    Json,
}

/// Renders tables in `format`.
pub fn render(tables: &[Table], format: Format) -> String {
    match format {
        Format::Text => {
            let mut out = String::new();
            for t in tables {
                let cells: Vec<Vec<String>> = t
                    .rows
                    .iter()
                    .map(|r| r.iter().map(Cell::text).collect())
                    .collect();
                let mut width: Vec<usize> = t.columns.iter().map(|c| c.len()).collect();
                for r in &cells {
                    for (w, c) in width.iter_mut().zip(r) {
                        *w = (*w).max(c.len());
                    }
                }
                let _ = writeln!(out, "== {} ==", t.title);
                let head: Vec<String> = t
                    .columns
                    .iter()
                    .zip(&width)
                    .map(|(c, w)| format!("{c:>w$}"))
                    .collect();
                let _ = writeln!(out, "{}", head.join("  "));
                for r in &cells {
                    let line: Vec<String> = r
                        .iter()
                        .zip(&width)
                        .map(|(c, w)| format!("{c:>w$}"))
                        .collect();
                    let _ = writeln!(out, "{}", line.join("  "));
                }
                out.push('\n');
            }
            out
        }
        Format::Csv => {
            let mut out = String::new();
            for (i, t) in tables.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                let mut w = csv::Writer::from_writer(Vec::new());
                let mut head = vec!["table"];
                head.extend(t.columns.iter().copied());
                let _ = w.write_record(&head);
                for r in &t.rows {
                    let mut rec = vec![t.title.clone()];
                    rec.extend(r.iter().map(Cell::text));
                    let _ = w.write_record(&rec);
                }
                if let Ok(bytes) = w.into_inner() {
                    out.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
            out
        }
        Format::Json => {
            let mut obj = Map::new();
            for t in tables {
                let rows: Vec<Value> = t
                    .rows
                    .iter()
                    .map(|r| {
                        Value::Object(
                            t.columns
                                .iter()
                                .zip(r)
                                .map(|(c, v)| (c.to_string(), v.json()))
                                .collect(),
                        )
                    })
                    .collect();
                obj.insert(t.title.clone(), Value::Array(rows));
            }
            let mut s = serde_json::to_string_pretty(&Value::Object(obj)).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}

/// Min, avg and max of per-member values (members without a value count 0), and their sum.
fn spread(per_rank: &BTreeMap<u32, f64>, members: &[u32]) -> [f64; 4] {
    if members.is_empty() {
        return [0.0; 4];
    }
    let vals: Vec<f64> = members
        .iter()
        .map(|m| per_rank.get(m).copied().unwrap_or(0.0))
        .collect();
    let sum: f64 = vals.iter().sum();
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    [min, sum / vals.len() as f64, max, sum]
}

/// Calls, bytes sent, bytes received, seconds.
type Sums = (u64, u64, u64, f64);

#[derive(Default)]
struct Acc {
    calls: u64,
    sent: u64,
    recv: u64,
    time: BTreeMap<u32, f64>,
}

/// Per communicator: size, calls, bytes, time in MPI (min/avg/max across members, sum).
pub fn by_communicator(p: &Profile) -> Table {
    let mut acc: BTreeMap<&str, Acc> = BTreeMap::new();
    for r in &p.rows {
        let a = acc.entry(r.comm.as_str()).or_default();
        a.calls += r.stats.calls;
        a.sent += r.stats.bytes_sent;
        a.recv += r.stats.bytes_recv;
        *a.time.entry(r.rank).or_default() += r.stats.time_sum_secs;
    }
    let mut rows = Vec::new();
    for c in &p.comms {
        let Some(a) = acc.get(c.name.as_str()) else {
            continue;
        };
        let [min, avg, max, sum] = spread(&a.time, &c.members);
        rows.push(vec![
            Cell::Text(c.name.clone()),
            Cell::Int(u64::from(c.size())),
            Cell::Int(a.calls),
            Cell::Int(a.sent),
            Cell::Int(a.recv),
            Cell::Secs(min),
            Cell::Secs(avg),
            Cell::Secs(max),
            Cell::Secs(sum),
        ]);
    }
    Table {
        title: "by communicator".into(),
        columns: vec![
            "comm",
            "size",
            "calls",
            "bytes_sent",
            "bytes_recv",
            "time_min_s",
            "time_avg_s",
            "time_max_s",
            "time_sum_s",
        ],
        rows,
    }
}

/// Per (communicator, operation): calls, bytes, time across members.
pub fn by_operation(p: &Profile) -> Table {
    let mut acc: BTreeMap<(usize, &str), Acc> = BTreeMap::new();
    let index: BTreeMap<&str, usize> = p
        .comms
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    for r in &p.rows {
        let ci = index.get(r.comm.as_str()).copied().unwrap_or(usize::MAX);
        let a = acc.entry((ci, r.op.as_str())).or_default();
        a.calls += r.stats.calls;
        a.sent += r.stats.bytes_sent;
        a.recv += r.stats.bytes_recv;
        *a.time.entry(r.rank).or_default() += r.stats.time_sum_secs;
    }
    let rows = acc
        .into_iter()
        .filter_map(|((ci, op), a)| {
            let c = p.comms.get(ci)?;
            let [min, avg, max, sum] = spread(&a.time, &c.members);
            Some(vec![
                Cell::Text(c.name.clone()),
                Cell::Text(op.to_string()),
                Cell::Int(a.calls),
                Cell::Int(a.sent),
                Cell::Int(a.recv),
                Cell::Secs(min),
                Cell::Secs(avg),
                Cell::Secs(max),
                Cell::Secs(sum),
            ])
        })
        .collect();
    Table {
        title: "by operation".into(),
        columns: vec![
            "comm",
            "op",
            "calls",
            "bytes_sent",
            "bytes_recv",
            "time_min_s",
            "time_avg_s",
            "time_max_s",
            "time_sum_s",
        ],
        rows,
    }
}

/// Per (rank, communicator): calls, bytes, time.
pub fn by_rank(p: &Profile) -> Table {
    let index: BTreeMap<&str, usize> = p
        .comms
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let mut acc: BTreeMap<(u32, usize), Sums> = BTreeMap::new();
    for r in &p.rows {
        let ci = index.get(r.comm.as_str()).copied().unwrap_or(usize::MAX);
        let a = acc.entry((r.rank, ci)).or_default();
        a.0 += r.stats.calls;
        a.1 += r.stats.bytes_sent;
        a.2 += r.stats.bytes_recv;
        a.3 += r.stats.time_sum_secs;
    }
    let rows = acc
        .into_iter()
        .filter_map(|((rank, ci), (calls, sent, recv, time))| {
            Some(vec![
                Cell::Int(u64::from(rank)),
                Cell::Text(p.comms.get(ci)?.name.clone()),
                Cell::Int(calls),
                Cell::Int(sent),
                Cell::Int(recv),
                Cell::Secs(time),
            ])
        })
        .collect();
    Table {
        title: "by rank".into(),
        columns: vec![
            "rank",
            "comm",
            "calls",
            "bytes_sent",
            "bytes_recv",
            "time_s",
        ],
        rows,
    }
}

/// Per (communicator, operation, size bucket): calls, bytes, time across members.
pub fn by_bucket(p: &Profile) -> Table {
    let index: BTreeMap<&str, usize> = p
        .comms
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let mut acc: BTreeMap<(usize, &str, u8), Acc> = BTreeMap::new();
    for r in &p.rows {
        let ci = index.get(r.comm.as_str()).copied().unwrap_or(usize::MAX);
        let a = acc.entry((ci, r.op.as_str(), r.bucket)).or_default();
        a.calls += r.stats.calls;
        a.sent += r.stats.bytes_sent;
        a.recv += r.stats.bytes_recv;
        *a.time.entry(r.rank).or_default() += r.stats.time_sum_secs;
    }
    let rows = acc
        .into_iter()
        .filter_map(|((ci, op, b), a)| {
            let c = p.comms.get(ci)?;
            let [min, avg, max, sum] = spread(&a.time, &c.members);
            Some(vec![
                Cell::Text(c.name.clone()),
                Cell::Text(op.to_string()),
                Cell::Text(bucket::label(b)),
                Cell::Int(a.calls),
                Cell::Int(a.sent),
                Cell::Int(a.recv),
                Cell::Secs(min),
                Cell::Secs(avg),
                Cell::Secs(max),
                Cell::Secs(sum),
            ])
        })
        .collect();
    Table {
        title: "by size bucket".into(),
        columns: vec![
            "comm",
            "op",
            "bucket",
            "calls",
            "bytes_sent",
            "bytes_recv",
            "time_min_s",
            "time_avg_s",
            "time_max_s",
            "time_sum_s",
        ],
        rows,
    }
}

/// Communicators: name, parent, size, members.
pub fn communicators(p: &Profile) -> Table {
    let rows = p
        .comms
        .iter()
        .map(|c| {
            vec![
                Cell::Text(c.name.clone()),
                Cell::Text(c.parent.clone().unwrap_or_else(|| "-".into())),
                Cell::Int(u64::from(c.size())),
                Cell::Text(
                    c.members
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            ]
        })
        .collect();
    Table {
        title: "communicators".into(),
        columns: vec!["comm", "parent", "size", "members"],
        rows,
    }
}
