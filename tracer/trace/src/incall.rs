//! In-call times (timeless extension): per rank, how long the traced MPI calls lasted and how
//! much CPU time the rank's thread spent inside them, measured by the tracer in the traced run
//! (`timeless-preload`'s `incall` module) and written by rank 0 to [`FILE`] in the trace
//! directory.
//!
//! ```text
//! rank,calls,wall_secs,cpu_secs
//! 0,37473,3.184374886,0.194459207
//! 1,37473,3.217934560,0.286234643
//! ```
//!
//! A rank whose tracer did not close has empty fields (`2,,,`). The CPU share of a rank's
//! waits, [`InCallTimes::cpu_share`], is what a run folded K ranks per core took from the
//! core's other ranks while that rank was in MPI (`timeless/poll-cpu-from-trace` spends [`InCallTimes::cpu_secs_per_call`] per call).

use std::path::Path;

use crate::error::TraceError;

/// Name of the table inside a trace directory.
pub const FILE: &str = "in-call-times.csv";

/// Its header line.
pub const HEADER: &str = "rank,calls,wall_secs,cpu_secs";

/// One rank's line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InCallTimes {
    /// Traced calls.
    pub calls: u64,
    /// Their wall time, seconds.
    pub wall_secs: f64,
    /// The thread's CPU time inside them, seconds.
    pub cpu_secs: f64,
}

impl InCallTimes {
    /// `cpu_secs / wall_secs`, at most 1 (0 for no wall time): the share of a core the rank
    /// kept busy while inside MPI calls.
    pub fn cpu_share(&self) -> f64 {
        if self.wall_secs > 0.0 {
            (self.cpu_secs / self.wall_secs).min(1.0)
        } else {
            0.0
        }
    }
}

impl InCallTimes {
    /// `cpu_secs / calls`, seconds (0 without calls): what one call cost the rank's core on
    /// average.
    pub fn cpu_secs_per_call(&self) -> f64 {
        if self.calls > 0 {
            self.cpu_secs / self.calls as f64
        } else {
            0.0
        }
    }
}

/// Parses a table (`path` names it in errors): per rank in rank order, its times (`None`
/// for a rank without them).
///
/// # Errors
/// [`crate::error::TraceErrorKind::Malformed`] at the line of a wrong header, a line without 4 fields, a
/// rank out of order, or a field that is not a count or non-negative finite seconds.
pub fn parse_table(text: &str, path: &Path) -> Result<Vec<Option<InCallTimes>>, TraceError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad =
            |expected: String| TraceError::malformed(path, i as u64 + 1, "in-call times", expected);
        if i == 0 {
            if line.trim() != HEADER {
                return Err(bad(format!("the header '{HEADER}', found '{line}'")));
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 4 {
            return Err(bad(format!(
                "4 comma-separated fields (rank calls wall_secs cpu_secs), found {}",
                f.len()
            )));
        }
        if f[0].parse::<usize>().ok() != Some(out.len()) {
            return Err(bad(format!(
                "rank {} (ranks in order from 0), found '{}'",
                out.len(),
                f[0]
            )));
        }
        if f[1..].iter().all(|s| s.is_empty()) {
            out.push(None);
            continue;
        }
        let calls: u64 = f[1]
            .parse()
            .map_err(|_| bad(format!("a count of calls, found '{}'", f[1])))?;
        let secs = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| bad(format!("non-negative seconds, found '{s}'")))
        };
        out.push(Some(InCallTimes {
            calls,
            wall_secs: secs(f[2])?,
            cpu_secs: secs(f[3])?,
        }));
    }
    Ok(out)
}

/// Reads `dir`/[`FILE`]: `Ok(None)` when the trace has none (traced before the tracer wrote
/// it, or a profile-only run).
///
/// # Errors
/// [`crate::error::TraceErrorKind::Io`] if it exists but cannot be read; those of [`parse_table`].
pub fn read(dir: &Path) -> Result<Option<Vec<Option<InCallTimes>>>, TraceError> {
    crate::error::read_optional(&dir.join(FILE), parse_table)
}

/// Reads `dir`/[`FILE`] as each rank's [`InCallTimes::cpu_secs_per_call`] (0 for a rank
/// without times): what `timeless/poll-cpu-from-trace` adds to a rank's budget per call.
/// `Ok(None)` without the file.
///
/// # Errors
/// Those of [`read`].
pub fn read_cpu_secs_per_call(dir: &Path) -> Result<Option<Vec<f64>>, TraceError> {
    Ok(read(dir)?.map(|times| {
        times
            .iter()
            .map(|t| t.map_or(0.0, |t| t.cpu_secs_per_call()))
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module doc's table, plus a rank without times; the shares by hand:
    /// 0.194459207 / 3.184374886 = 0.06106668..., and a share above 1 (short calls counted at
    /// their wall time, then a clock read) is capped.
    #[test]
    fn table_and_shares_by_hand() {
        let text =
            "rank,calls,wall_secs,cpu_secs\n0,37473,3.184374886,0.194459207\n1,,,\n2,3,0.5,0.6\n";
        let t = parse_table(text, Path::new("t.csv")).unwrap();
        assert_eq!(t.len(), 3);
        let r0 = t[0].unwrap();
        assert_eq!(r0.calls, 37473);
        assert!((r0.cpu_share() - 0.194459207 / 3.184374886).abs() < 1e-15);
        assert!((r0.cpu_share() - 0.06106668).abs() < 1e-8);
        assert!((r0.cpu_secs_per_call() - 0.194459207 / 37473.0).abs() < 1e-18);
        assert_eq!(t[1], None);
        assert_eq!(t[2].unwrap().cpu_share(), 1.0);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let cases = [
            (
                "rank,calls\n",
                "t.csv:1: malformed 'in-call times': the header",
            ),
            (
                "rank,calls,wall_secs,cpu_secs\n1,3,0.5,0.1\n",
                "t.csv:2: malformed 'in-call times': rank 0 (ranks in order from 0), found '1'",
            ),
            (
                "rank,calls,wall_secs,cpu_secs\n0,3,-0.5,0.1\n",
                "t.csv:2: malformed 'in-call times': non-negative seconds, found '-0.5'",
            ),
            (
                "rank,calls,wall_secs,cpu_secs\n0,3,0.5\n",
                "t.csv:2: malformed 'in-call times': 4 comma-separated fields",
            ),
        ];
        for (text, want) in cases {
            let e = parse_table(text, Path::new("t.csv"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
