//! Setting up the compensation of a timed trace as `timeless compensate` does: the trace, its
//! metadata and the costs `O` and `C` chosen from the options or from `trace-meta.json`.
//!
//! ```no_run
//! use timeless_compensate::setup::prepare;
//! use timeless_compensate::{compensate, Compensated, NToNRule, Sink};
//!
//! struct Count(u64);
//! impl Sink for Count {
//!     fn record(&mut self, _: &Compensated<'_>) {
//!         self.0 += 1;
//!     }
//! }
//!
//! let p = prepare("run/timed-list.txt".as_ref(), None, None, NToNRule::PerRank).unwrap();
//! println!("O: {}", p.overhead_from);
//! let summary = compensate(p.streams, &p.params, &mut Count(0)).unwrap();
//! println!("{:.9} s measured", summary.total_m);
//! ```

use std::path::{Path, PathBuf};

use crate::cost::{CopyCost, NToNRule, Params};
use crate::format::{TimedReader, TimedSource};
use crate::meta::TraceMeta;

/// What [`prepare`] can fail with (all bad input).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The timed trace or its metadata cannot be read or decoded.
    #[error(transparent)]
    Trace(#[from] crate::Error),
    /// The timed trace has no record.
    #[error("{}: the timed trace has no record", .0.display())]
    Empty(PathBuf),
    /// `trace-meta.json` describes another number of ranks than the timed trace has.
    #[error("{} describes {meta_ranks} ranks but the timed trace has {ranks}", meta.display())]
    Ranks {
        /// The metadata file.
        meta: PathBuf,
        /// Its ranks.
        meta_ranks: u32,
        /// The timed trace's ranks.
        ranks: u32,
    },
    /// A cost option is negative or not finite (`--overhead-ns`, `--copy-ns-per-byte`).
    #[error("{option} {value}: expected a non-negative number of nanoseconds")]
    Cost {
        /// The option.
        option: &'static str,
        /// Its value.
        value: f64,
    },
}

/// A timed trace ready for [`crate::compensate`].
#[non_exhaustive]
pub struct Prepared {
    /// One stream per rank.
    pub streams: Vec<TimedReader>,
    /// The costs and the n-to-n rule.
    pub params: Params,
    /// Where `O` came from, one phrase (`12 ns (--overhead-ns)`, `[…] ns per rank (file)`).
    pub overhead_from: String,
}

/// Opens the timed trace `trace` (a shared file, a list, or a directory holding
/// `timed-list.txt`) and chooses the costs: `overhead_ns` (nanoseconds per event) and
/// `copy_ns_per_byte` when given, else those of `trace-meta.json` next to the trace, else 0.
///
/// # Errors
/// A [`SetupError`].
pub fn prepare(
    trace: &Path,
    overhead_ns: Option<f64>,
    copy_ns_per_byte: Option<f64>,
    n_to_n: NToNRule,
) -> Result<Prepared, SetupError> {
    let source = TimedSource::open(trace)?;
    let nranks = source.nranks();
    if nranks == 0 {
        return Err(SetupError::Empty(trace.to_path_buf()));
    }
    let meta = TraceMeta::find(&source.directory())?;
    if let Some(m) = &meta {
        if m.ranks != nranks {
            return Err(SetupError::Ranks {
                meta: m.path.clone(),
                meta_ranks: m.ranks,
                ranks: nranks,
            });
        }
    }
    for (option, v) in [
        ("--overhead-ns", overhead_ns),
        ("--copy-ns-per-byte", copy_ns_per_byte),
    ] {
        if let Some(value) = v {
            if !(value.is_finite() && value >= 0.0) {
                return Err(SetupError::Cost { option, value });
            }
        }
    }
    let (overhead_secs, overhead_from) = match (overhead_ns, &meta) {
        (Some(ns), _) => (vec![ns * 1e-9], format!("{ns} ns (--overhead-ns)")),
        (None, Some(m)) => {
            let ns: Vec<String> = m
                .event_overhead_secs
                .iter()
                .map(|s| format!("{:.1}", s * 1e9))
                .collect();
            (
                m.event_overhead_secs.clone(),
                format!("[{}] ns per rank ({})", ns.join(", "), m.path.display()),
            )
        }
        (None, None) => (
            vec![0.0],
            "none given (no --overhead-ns and no trace-meta.json): nothing to compensate"
                .to_string(),
        ),
    };
    let copy = match (
        copy_ns_per_byte,
        meta.as_ref().and_then(|m| m.copy_secs_per_byte),
    ) {
        (Some(ns), _) => CopyCost::uniform(ns * 1e-9),
        (None, Some(s)) => CopyCost::uniform(s),
        (None, None) => CopyCost::free(),
    };
    let streams = (0..nranks)
        .map(|r| source.open_rank(r))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Prepared {
        streams,
        params: Params {
            overhead_secs,
            copy,
            n_to_n,
        },
        overhead_from,
    })
}
