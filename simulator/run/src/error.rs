//! What the simulate pipeline fails with ([`SimulateError`]) and the class of each failure
//! ([`ErrorKind`]), which the binary maps to its exit code: bad input 2, a deadlock 3, an
//! output that cannot be written 1.

use std::path::PathBuf;

use timeless_platform::PlatformError;
use timeless_replay::ReplayError;
use timeless_trace::TraceError;

use crate::FrontendError;

/// What [`simulate`](crate::simulate) and the functions of this crate can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimulateError {
    /// A file cannot be read (configuration file, trace); the I/O error is the source.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// Line `line` of a configuration file is not a valid setting.
    #[error("{}:{line}: {message}", path.display())]
    CfgFileLine {
        /// The configuration file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the setting.
        message: String,
    },
    /// A `--cfg KEY:VALUE` item is not a valid setting.
    #[error("--cfg {item}: {message}")]
    Cfg {
        /// The item as given.
        item: String,
        /// What is wrong with it.
        message: String,
    },
    /// No platform file was given.
    #[error("--platform FILE is required (a SimGrid platform XML)")]
    NoPlatform,
    /// The platform, deployment or hostfile does not load.
    #[error(transparent)]
    Platform(Box<PlatformError>),
    /// A what-if factor is not a positive finite number.
    #[error(transparent)]
    WhatIf(#[from] timeless_platform::WhatIfError),
    /// A TI trace (list file, rank file) cannot be opened or parsed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A compressed trace cannot be read or decoded.
    #[error(transparent)]
    Compressed(#[from] timeless_grammar::format::LoadError),
    /// The tracer metadata embedded in a compressed trace is not UTF-8.
    #[error("{}: not UTF-8", name.display())]
    EmbeddedMetaNotUtf8 {
        /// `<trace>#trace-meta.json`.
        name: PathBuf,
    },
    /// `trace-meta.json` exists but does not decode.
    #[error(transparent)]
    Meta(#[from] timeless_compensate::Error),
    /// `-n` asks for more ranks than a replay takes ([`timeless_platform::deployment::MAX_RANKS`]).
    #[error("-n {n}: more ranks than the limit of {max} (1 << 24)", max = timeless_platform::deployment::MAX_RANKS)]
    TooManyRanks {
        /// The rank count asked for.
        n: usize,
    },
    /// Neither `np`, a deployment, a hostfile nor the trace tells the number of ranks.
    #[error("cannot tell the number of ranks: give -n N, a deployment or a hostfile")]
    UnknownRankCount,
    /// The deployment places no rank.
    #[error("the deployment places no rank")]
    NoRank,
    /// No trace was given and a rank of the deployment names no trace file.
    #[error(
        "no trace given and rank {rank} has no <argument> naming its trace file in the deployment"
    )]
    NoTraceArgument {
        /// The rank without `<argument>`.
        rank: usize,
    },
    /// The trace list has fewer files than ranks are deployed.
    #[error("{deployed} ranks are deployed but the trace list names only {listed} files")]
    TooFewTraces {
        /// Ranks placed.
        deployed: usize,
        /// Files in the trace list.
        listed: usize,
    },
    /// The replay failed: a deadlock ([`ErrorKind::Deadlock`]) or a bad trace record.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The front end could not provide its observer ([`Frontend::observer`](crate::Frontend::observer)).
    #[error(transparent)]
    Frontend(FrontendError),
    /// The measured profile naming the simulated profile's communicators cannot be read.
    #[error(transparent)]
    ProfileNames(timeless_profile::StoreError),
    /// The simulated profile cannot be written.
    #[error(transparent)]
    ProfileWrite(timeless_profile::StoreError),
    /// A multi-job description or deployment is invalid.
    #[error(transparent)]
    Jobs(Box<timeless_replay::jobs::description::JobsError>),
    /// The in-call times or (with `taken`) the timestamps of a trace do not read for
    /// `timeless/poll-cpu-from-trace`.
    #[error(transparent)]
    PollBudget(Box<timeless_calibrate::CalibrateError>),
    /// A trace shared by all ranks in one file does not say how many ranks it has.
    #[error("{} is one file shared by all ranks: give the rank count with -n", path.display())]
    SharedNeedsRankCount {
        /// The trace.
        path: PathBuf,
    },
    /// An option that a multi-job replay does not take.
    #[error("{option} cannot be used with several jobs (--jobs)")]
    NotWithJobs {
        /// The option.
        option: &'static str,
    },
}

impl From<timeless_replay::jobs::description::JobsError> for SimulateError {
    fn from(e: timeless_replay::jobs::description::JobsError) -> Self {
        SimulateError::Jobs(Box::new(e))
    }
}

impl From<PlatformError> for SimulateError {
    fn from(e: PlatformError) -> Self {
        SimulateError::Platform(Box::new(e))
    }
}

/// The class of a [`SimulateError`], which the binary maps to its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: a trace, platform, deployment or configuration (exit 2).
    Input,
    /// The replay deadlocked (exit 3).
    Deadlock,
    /// An output could not be written (exit 1).
    Output,
}

impl SimulateError {
    /// Which class of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SimulateError::Replay(ReplayError::Deadlock { .. }) => ErrorKind::Deadlock,
            SimulateError::ProfileWrite(_) => ErrorKind::Output,
            _ => ErrorKind::Input,
        }
    }
}
