//! Readers for ping-pong measurements: the benchmark's CSV and SKaMPI's `Pingpong_Send_Recv`
//! output (seed 003 §5). Every error names the file and line and says what was expected.

use std::path::Path;

use crate::measurement::{Measurements, Op};
use crate::CalibrateError;

fn read(path: &Path) -> Result<String, CalibrateError> {
    std::fs::read_to_string(path).map_err(|source| CalibrateError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a CSV file; see [`parse_csv`].
///
/// # Errors
/// As [`parse_csv`], or the file cannot be read.
pub fn read_csv(path: &Path) -> Result<Measurements, CalibrateError> {
    parse_csv(&read(path)?, &path.display().to_string())
}

/// Reads a SKaMPI output file; see [`parse_skampi`].
///
/// # Errors
/// As [`parse_skampi`], or the file cannot be read.
pub fn read_skampi(path: &Path) -> Result<Measurements, CalibrateError> {
    parse_skampi(&read(path)?, &path.display().to_string())
}

fn parse_time(origin: &str, line: u64, field: &str, scale: f64) -> Result<f64, CalibrateError> {
    let err = |what: String| CalibrateError::Parse {
        origin: origin.to_string(),
        line,
        what,
    };
    let v: f64 = field
        .trim()
        .parse()
        .map_err(|_| err(format!("time '{field}' is not a number")))?;
    if !v.is_finite() {
        return Err(err(format!("time '{field}' is not finite")));
    }
    if v < 0.0 {
        return Err(err(format!(
            "negative time '{field}' (a measured duration must be >= 0)"
        )));
    }
    Ok(v * scale)
}

fn parse_size(origin: &str, line: u64, field: &str) -> Result<u64, CalibrateError> {
    field
        .trim()
        .parse::<u64>()
        .map_err(|_| CalibrateError::Parse {
            origin: origin.to_string(),
            line,
            what: format!("message size '{field}' is not a non-negative integer (bytes)"),
        })
}

/// Parses measurement CSV: a header naming the columns `op`, `size_bytes` and `time_secs` (in any
/// order; other columns are ignored), then one row per sample. `op` is one of `pingpong`, `exchange`, `exchange_ranks`, `send`,
/// `send_burst`, `isend`, `recv`, `recv_burst`, `late`, `cold_allreduce` ([`Op`]); `size_bytes` is a non-negative integer; `time_secs` a
/// finite number >= 0. Lines starting with `#` are comments.
///
/// # Errors
/// [`CalibrateError::Parse`] with `origin:line` for a missing column, an unknown op, a bad size,
/// a bad or negative time, or a short row.
pub fn parse_csv(text: &str, origin: &str) -> Result<Measurements, CalibrateError> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let perr = |line: u64, what: String| CalibrateError::Parse {
        origin: origin.to_string(),
        line,
        what,
    };
    let headers = reader
        .headers()
        .map_err(|e| perr(1, format!("cannot read the CSV header: {e}")))?
        .clone();
    let header_line = reader.position().line().max(1);
    let column = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            perr(
                header_line,
                format!("the header has no '{name}' column (expected 'op,size_bytes,time_secs')"),
            )
        })
    };
    let (c_op, c_size, c_time) = (column("op")?, column("size_bytes")?, column("time_secs")?);
    let mut m = Measurements::default();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            perr(line, format!("malformed CSV row: {e}"))
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let field = |c: usize, name: &str| {
            record.get(c).ok_or_else(|| {
                perr(
                    line,
                    format!("row has {} field(s), no '{name}'", record.len()),
                )
            })
        };
        let op_text = field(c_op, "op")?;
        let op = Op::from_name(op_text).ok_or_else(|| {
            perr(
                line,
                format!("unknown op '{op_text}' (expected pingpong, exchange, exchange_ranks, send, send_burst, isend, recv, recv_burst, late or cold_allreduce)"),
            )
        })?;
        let size = parse_size(origin, line, field(c_size, "size_bytes")?)?;
        let time = parse_time(origin, line, field(c_time, "time_secs")?, 1.0)?;
        m.push(op, size, time);
    }
    Ok(m)
}

/// Parses SKaMPI 5 output and keeps the `Pingpong_Send_Recv` measurements as [`Op::PingPong`]
/// samples (round-trip times).
///
/// Format (as SKaMPI 5 writes it and SimGrid's old `calibrate_piecewise.py` read it): data lines
/// `count= <size_bytes> <countn> <time_us> <stddev_us> <iterations> <min_us> <max_us>`; the time
/// in the fourth field is the mean round trip in microseconds. `# begin result "<name>"` /
/// `# end result "<name>"` lines delimit results: data lines inside a result other than
/// `Pingpong_Send_Recv` are skipped; data lines outside any block are taken (some logs print
/// them after the block's end). Other `#` lines and blank lines are comments. A size measured
/// twice gives two samples.
///
/// # Errors
/// [`CalibrateError::Parse`] with `origin:line` for a `count=` line with fewer than 4 fields, a
/// size that is not an integer, or a time that is not a number >= 0; another non-comment line
/// is also an error (this is not a SKaMPI log).
pub fn parse_skampi(text: &str, origin: &str) -> Result<Measurements, CalibrateError> {
    let mut m = Measurements::default();
    let mut block: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('#') {
            let rest = rest.trim();
            if let Some(name) = rest.strip_prefix("begin result") {
                block = Some(name.trim().trim_matches('"').to_string());
            } else if rest.starts_with("end result") {
                block = None;
            }
            continue;
        }
        let Some(rest) = l.strip_prefix("count=") else {
            return Err(CalibrateError::Parse {
                origin: origin.to_string(),
                line,
                what: format!(
                    "unexpected line '{l}' (expected 'count= <size> <countn> <time_us> ...', a '#' comment, or a blank line)"
                ),
            });
        };
        if block.as_deref().is_some_and(|b| b != "Pingpong_Send_Recv") {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 3 {
            return Err(CalibrateError::Parse {
                origin: origin.to_string(),
                line,
                what: format!(
                    "'count=' line with {} field(s) after 'count=' (expected <size> <countn> <time_us> ...)",
                    fields.len()
                ),
            });
        }
        let size = parse_size(origin, line, fields[0])?;
        let time = parse_time(origin, line, fields[2], 1e-6)?;
        m.push(Op::PingPong, size, time);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_and_errors() {
        let m = parse_csv(
            "# from validation/pingpong\nop,size_bytes,time_secs\npingpong,1,2e-6\nsend,4096,1.5e-7\n",
            "x.csv",
        )
        .unwrap();
        assert_eq!(m.samples.len(), 2);
        assert_eq!(m.samples[0].op, Op::PingPong);
        assert_eq!(m.samples[1].size_bytes, 4096);
        assert_eq!(m.samples[1].time_secs, 1.5e-7);

        let e = parse_csv(
            "op,size_bytes,time_secs\npingpong,1,2e-6\npingpong,2,-1\n",
            "x.csv",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.csv:3: negative time '-1' (a measured duration must be >= 0)"
        );
        let e = parse_csv("op,size_bytes,time_secs\npingpong,1.5,2e-6\n", "x.csv").unwrap_err();
        assert!(
            e.to_string().starts_with("x.csv:2: message size '1.5'"),
            "{e}"
        );
        let e = parse_csv("op,size_bytes,time_secs\nping,1,2e-6\n", "x.csv").unwrap_err();
        assert!(
            e.to_string().starts_with("x.csv:2: unknown op 'ping'"),
            "{e}"
        );
        let e = parse_csv("op,size,time\n", "x.csv").unwrap_err();
        assert!(e.to_string().contains("no 'size_bytes' column"), "{e}");
        let e = parse_csv("op,size_bytes,time_secs\npingpong,1\n", "x.csv").unwrap_err();
        assert!(
            e.to_string().starts_with("x.csv:2: row has 2 field(s)"),
            "{e}"
        );
    }

    /// A hand-written log in SKaMPI 5's layout (the times are made up).
    const SKAMPI: &str = "\
# SKaMPI Version 5.0.4 rev. 355
# begin result \"Pingpong_Send_Recv\"
count= 1        1     100.0       0.2       32     99.0     101.0
count= 1024     1024     190.5       0.2       32     182.7     190.4
count= 1024     1024     193.5       0.3       32     185.9     193.0
# end result \"Pingpong_Send_Recv\"
# begin result \"Bcast\"
count= 8        8     999.0       0.2       32     99.0     101.0
# end result \"Bcast\"
count= 2048     2048     250.0       0.8       32     238.4     247.9
";

    #[test]
    fn skampi_pingpong_block() {
        let m = parse_skampi(SKAMPI, "log.ski").unwrap();
        let med = m.medians(Op::PingPong);
        // 1 B: 100 us; 1024 B: median of 190.5 and 193.5 = 192 us; 2048 B after the block; the
        // Bcast line is skipped.
        assert_eq!(med.len(), 3);
        assert_eq!(med[0].size_bytes, 1);
        assert!((med[0].time_secs - 100e-6).abs() < 1e-15);
        assert!((med[1].time_secs - 192e-6).abs() < 1e-15);
        assert!((med[2].time_secs - 250e-6).abs() < 1e-15);
    }

    #[test]
    fn skampi_errors_name_the_line() {
        let e = parse_skampi("# x\ncount= 1 1\n", "a.ski").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a.ski:2: 'count=' line with 2 field(s)"),
            "{e}"
        );
        let e = parse_skampi("count= 1 1 abc\n", "a.ski").unwrap_err();
        assert_eq!(e.to_string(), "a.ski:1: time 'abc' is not a number");
        let e = parse_skampi("count= 1 1 2.0\nhello world\n", "a.ski").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a.ski:2: unexpected line 'hello world'"),
            "{e}"
        );
    }
}
