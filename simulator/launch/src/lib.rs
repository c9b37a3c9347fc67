//! `timeless-launch`: running an unmodified MPI program under the timeless tracer, for every
//! front end (`timeless trace`, `timeless validate`, scripts).
//!
//! timeless links no MPI: it finds the launcher (`mpirun`, else `mpiexec`), tells Open MPI from
//! MPICH by its `--version` text ([`find_launcher`]), and starts the program with the tracer
//! library (`libtimeless_preload.so`, [`find_preload`]) in `LD_PRELOAD`. The pieces:
//!
//! * [`mod@line`]: the acquisition [`Mode`] (seed 003 §4.1) and the launcher command line with the
//!   tracer's environment ([`launch_line`]), or the same launch untraced ([`untraced`]):
//!   * **regular**: one rank per core of this machine;
//!   * **folding** (`fold K`): K ranks per core, the run confined to ⌈N/K⌉ cores (`taskset` on
//!     the launcher, no binding, oversubscription allowed, idle ranks yield the core);
//!   * **scattered** (`hostfile`): ranks spread over the hosts of the file;
//! * [`host`]: this machine (tracer library, launcher, companion programs, the trace
//!   directory, timing a run);
//! * [`speed`]: the reference speed bursts are converted with;
//! * [`summary`]: checking what the run wrote (rank files, the online compressed trace).
//!
//! [`trace`] strings them together as `timeless trace` does: it checks the configuration,
//! measures the reference speed, prepares the trace directory (`<out>/rank-<r>.txt`,
//! `trace-list.txt`, `trace-meta.json`, optionally `trace.tlg`, `profile.db`,
//! `flowgraph.tfg`), runs the program and returns where things are; [`check_text`] and
//! [`check_online`] then check the files. Printing is the front end's.
//!
//! ```no_run
//! use timeless_launch::{check_text, trace, TraceConfig};
//!
//! let config = TraceConfig::new(4, "ring-trace".into(), vec!["./ring".into()]);
//! let run = trace(&config, &mut |notice| eprintln!("{notice}")).expect("traced");
//! let summary = check_text(&run.out, 4).expect("every rank finalized");
//! println!("{} actions, {} bytes sent", summary.actions(), summary.total.sent_bytes);
//! ```
//!
//! A launch line can also be built without running anything:
//!
//! ```
//! use timeless_launch::{launch_line, mode_for, Implementation, Plan};
//!
//! let plan = Plan {
//!     implementation: Implementation::Mpich,
//!     launcher: "mpiexec".into(),
//!     np: 2,
//!     mode: mode_for(2, None, None, 8),
//!     preload: "/lib/libtimeless_preload.so".into(),
//!     out: "/t".into(),
//!     as_root: false,
//!     extra_env: Vec::new(),
//! };
//! let l = launch_line(&plan, &["./a".into()]);
//! assert_eq!(l.program, "mpiexec");
//! assert_eq!(l.args[..2], ["-n".into(), "2".into()] as [std::ffi::OsString; 2]);
//! ```

pub mod callsites;
pub mod host;
pub mod line;
pub mod speed;
pub mod summary;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use timeless_grammar::{GrammarError, Precision, PrecisionError};

pub use host::{
    available_cores, children_cpu_secs, find_companion, find_launcher, find_preload, find_program,
    prepare_out, running_as_root, salvage, timed_run,
};
pub use line::{export, implementation_of, launch_line, mode_for, untraced};
pub use line::{Implementation, Launch, Mode, Plan};
pub use speed::{choose_ref_speed, measure_ref_speed, RefSpeed, SPEED_RUNS};
pub use summary::{
    check_online, check_text, counters_line, gathered, summarize, OnlineSummary, RankSummary,
    SummaryError, TraceSummary, ONLINE_FILE,
};

/// An I/O error on a named file or directory: `cannot <verb> <path>`, with the I/O error as
/// its source. Shared by the pipelines that write reports (`timeless-validate`,
/// `timeless-calibrate`).
#[derive(Debug, thiserror::Error)]
#[error("cannot {verb} {}", path.display())]
pub struct PathError {
    /// What was being done: `read`, `create`, `write`.
    pub verb: &'static str,
    /// The file or directory.
    pub path: PathBuf,
    /// What the operating system said.
    #[source]
    pub source: std::io::Error,
}

impl PathError {
    /// A mapper for `map_err`: `cannot <verb> <path>`.
    pub fn at(verb: &'static str, path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| PathError { verb, path, source }
    }
}

/// What launching, tracing or checking a traced run can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// Zero ranks were asked for.
    #[error("-n must be at least 1")]
    NoRanks,
    /// The launcher asked for cannot be run.
    #[error("the MPI launcher {0} cannot be run")]
    LauncherNotRunnable(String),
    /// Neither `mpirun` nor `mpiexec` is on `PATH`.
    #[error("no MPI launcher found: neither mpirun nor mpiexec is on PATH (Debian: openmpi-bin)")]
    NoLauncher,
    /// The launchers found are neither Open MPI nor MPICH (their first `--version` lines).
    #[error("unknown MPI implementation (neither Open MPI nor MPICH): {0}")]
    UnknownImplementation(String),
    /// The running executable cannot be located (to find the tracer library next to it).
    #[error("cannot locate the timeless executable")]
    CurrentExe(#[source] std::io::Error),
    /// `TIMELESS_PRELOAD` names something that is not a file.
    #[error("TIMELESS_PRELOAD names {}, which is not a file", .0.display())]
    PreloadNotAFile(PathBuf),
    /// The tracer library is neither in `TIMELESS_PRELOAD`, next to the executable, nor in its
    /// target directory.
    #[error(
        "the tracer library libtimeless_preload.so was not found (set TIMELESS_PRELOAD, or build it with \
         `cargo build --release -p timeless-preload`; it needs mpicc and libclang)"
    )]
    PreloadNotFound,
    /// Folding needs more cores than this process may use.
    #[error("folding {np} ranks by {fold} needs {needed} cores; {available} are available")]
    FoldCores {
        /// Ranks.
        np: usize,
        /// Ranks per core asked for (1 when automatic).
        fold: usize,
        /// Cores the folding needs.
        needed: usize,
        /// Cores available.
        available: usize,
    },
    /// A reference speed that is not a positive number of flop/s.
    #[error("{0}")]
    RefSpeed(String),
    /// An online-compression precision out of range.
    #[error(transparent)]
    Precision(#[from] PrecisionError),
    /// The trace directory cannot be created.
    #[error("cannot create the trace directory {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A previous trace's file cannot be removed from the trace directory.
    #[error("cannot remove the old {name} in {}", dir.display())]
    RemoveStale {
        /// The file name.
        name: String,
        /// The trace directory.
        dir: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A node-local trace file cannot be copied into the trace directory.
    #[error("cannot copy {} into {}", from.display(), to.display())]
    Copy {
        /// The file.
        from: PathBuf,
        /// The trace directory.
        to: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// Another I/O error on the trace directory.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A program cannot be started.
    #[error("cannot start {program}")]
    Start {
        /// The program (launcher).
        program: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A timed run ([`timed_run`]) failed: its command line, exit status and standard error.
    #[error("{0}")]
    RunFailed(String),
    /// The traced program failed in a gathered run: nothing was gathered.
    #[error(
        "the traced program failed ({status}); nothing was gathered: {kept} partial \
         trace files of this host are in {}, the other hosts' in {} on each host",
        out.display(),
        local.display()
    )]
    GatheredRunFailed {
        /// Its exit status.
        status: ExitStatus,
        /// Files of this host copied into `out`.
        kept: usize,
        /// The trace directory.
        out: PathBuf,
        /// The node-local directory, the same path on every host.
        local: PathBuf,
    },
    /// The traced program failed.
    #[error("the traced program failed ({status}); partial traces are in {}", out.display())]
    RunFailedPartial {
        /// Its exit status.
        status: ExitStatus,
        /// The trace directory.
        out: PathBuf,
    },
    /// A flow graph was asked for and the run wrote none.
    #[error("the traced run wrote no flow graph (see the tracer's messages)")]
    NoFlowGraph,
    /// A rank wrote no trace file: the tracer was not preloaded, or never started because the
    /// program started MPI with none of `MPI_Init`, `MPI_Init_thread` and `MPI_Session_init`
    /// (a sessions program with a tracer built without sessions is
    /// [`LaunchError::SessionsNotSupported`]: see [`TracedRun::explain`]).
    #[error(
        "rank {rank} wrote no trace ({} is missing): was the tracer preloaded, and does the \
         program start MPI with MPI_Init, MPI_Init_thread or MPI_Session_init?",
        path.display()
    )]
    MissingRank {
        /// The rank.
        rank: usize,
        /// Its file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The program uses MPI-4 sessions (it imports `MPI_Session_init`) and wrote no trace: the
    /// tracer library has no session wrappers, having been built against an MPI library
    /// without sessions (Open MPI 4.1), so nothing started it.
    #[error(
        "the program {} uses MPI-4 sessions (MPI_Session_init) but the tracer library {} was \
         built against an MPI library without them (Open MPI 4.1 has none), so it never \
         started and no rank wrote a trace; build the tracer against a library with sessions \
         (MPICH >= 4.0: `MPICC=mpicc.mpich cargo build --release -p timeless-preload \
         --target-dir target-mpich`), set TIMELESS_PRELOAD to it and trace with `--launcher \
         mpirun.mpich`",
        program.display(),
        preload.display()
    )]
    SessionsNotSupported {
        /// The traced program.
        program: PathBuf,
        /// The tracer library used.
        preload: PathBuf,
    },
    /// A rank file has a record that cannot be read (the source names the line).
    #[error("{}", path.display())]
    BadRankFile {
        /// The file.
        path: PathBuf,
        /// The record at fault.
        #[source]
        source: SummaryError,
    },
    /// A rank file does not end with `finalize`.
    #[error(
        "{} does not end with finalize: the trace of rank {rank} is incomplete",
        path.display()
    )]
    NotFinalized {
        /// The rank.
        rank: usize,
        /// Its file.
        path: PathBuf,
    },
    /// Online compression without text output left no compressed trace.
    #[error(
        "{} is missing and no text trace was written (--no-text): online compression was \
         abandoned, see the tracer's message above",
        .0.display()
    )]
    OnlineMissing(PathBuf),
    /// The online compressed trace cannot be read or decoded.
    #[error(transparent)]
    Online(timeless_grammar::format::LoadError),
    /// The online compressed trace decodes but is inconsistent.
    #[error("{}: {error}", path.display())]
    OnlineInvalid {
        /// The file.
        path: PathBuf,
        /// What is inconsistent.
        error: GrammarError,
    },
    /// The online compressed trace holds another number of ranks than were traced.
    #[error("{} holds {held} ranks, {traced} were traced", path.display())]
    OnlineRanks {
        /// The file.
        path: PathBuf,
        /// Ranks in the file.
        held: u32,
        /// Ranks traced.
        traced: usize,
    },
}

/// The class of a [`LaunchError`], which the binary maps to its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input: options, environment, missing launcher or tracer library (exit 2).
    Input,
    /// The run or its files failed (exit 1).
    Other,
}

impl LaunchError {
    /// Which class of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            LaunchError::NoRanks
            | LaunchError::LauncherNotRunnable(_)
            | LaunchError::NoLauncher
            | LaunchError::UnknownImplementation(_)
            | LaunchError::PreloadNotAFile(_)
            | LaunchError::PreloadNotFound
            | LaunchError::FoldCores { .. }
            | LaunchError::RefSpeed(_)
            | LaunchError::Precision(_) => ErrorKind::Input,
            _ => ErrorKind::Other,
        }
    }
}

/// The tracer's environment for online compression (`compress`, relative error `precision`,
/// `no_text`: the compressed trace only); empty without `compress`.
///
/// # Errors
/// [`LaunchError::Precision`] for a precision outside 0 or
/// [`Precision::MIN_RELATIVE`, `Precision::MAX_RELATIVE`].
pub fn online_env(
    compress: bool,
    precision: f64,
    no_text: bool,
) -> Result<Vec<(&'static str, String)>, LaunchError> {
    if !compress {
        return Ok(Vec::new());
    }
    let p = Precision::from_flag(precision)?;
    let mut env = vec![
        ("TIMELESS_COMPRESS", "1".to_string()),
        ("TIMELESS_COMPRESS_PRECISION", format!("{:e}", p.as_f64())),
    ];
    if no_text {
        env.push(("TIMELESS_TEXT", "0".to_string()));
    }
    Ok(env)
}

/// What [`trace`] runs, as `timeless trace`'s options say. Build it with [`TraceConfig::new`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TraceConfig {
    /// MPI ranks (at least 1).
    pub np: usize,
    /// Folding: K ranks per core (`None`: folded only with more ranks than cores).
    pub fold: Option<usize>,
    /// Scattered mode: the launcher's hostfile.
    pub hostfile: Option<PathBuf>,
    /// Trace directory (created; the previous trace's files in it are removed).
    pub out: PathBuf,
    /// Ranks write node-local and the tracer gathers every file onto rank 0's host.
    pub gather: bool,
    /// Radix of the gather's k-nomial tree.
    pub gather_radix: u32,
    /// Also record every call's enter and exit times.
    pub timestamps: bool,
    /// The launcher to run (`None`: `mpirun`, else `mpiexec`).
    pub launcher: Option<String>,
    /// Online compression into `trace.tlg`.
    pub compress: bool,
    /// Online compression's relative error of compute volumes (0: lossless).
    pub precision: f64,
    /// With `compress`: no per-rank text files.
    pub no_text: bool,
    /// Reference speed, flop/s (`None`: `TIMELESS_REF_SPEED`, else measured here).
    pub ref_speed: Option<f64>,
    /// Compute volumes from hardware instruction counters.
    pub counters: bool,
    /// Also write the communicator-centric profile `profile.db`.
    pub profile: bool,
    /// The profile only, no trace files.
    pub profile_only: bool,
    /// Also build the event flow graph `flowgraph.tfg`.
    pub flowgraph: bool,
    /// The flow graph only, no trace files.
    pub flowgraph_only: bool,
    /// Record each call's call site (`TIMELESS_CALLSITES=1`): an `@cs=<id>` field on each
    /// action line and `callsites.txt`, the table of ids.
    pub callsites: bool,
    /// The MPI program and its arguments.
    pub command: Vec<OsString>,
}

impl TraceConfig {
    /// `np` ranks of `command` traced into `out`, every option at its default (regular or
    /// automatic folding, text trace, reference speed measured here, gather radix 4).
    pub fn new(np: usize, out: PathBuf, command: Vec<OsString>) -> Self {
        TraceConfig {
            np,
            fold: None,
            hostfile: None,
            out,
            gather: false,
            gather_radix: 4,
            timestamps: false,
            launcher: None,
            compress: false,
            precision: timeless_grammar::DEFAULT_PRECISION.as_f64(),
            no_text: false,
            callsites: false,
            ref_speed: None,
            counters: false,
            profile: false,
            profile_only: false,
            flowgraph: false,
            flowgraph_only: false,
            command,
        }
    }
}

/// Where a successful [`trace`] left its files.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TracedRun {
    /// The trace directory, canonical.
    pub out: PathBuf,
    /// `out/profile.db` when a profile was asked for.
    pub profile_db: Option<PathBuf>,
    /// `out/flowgraph.tfg` when a flow graph was asked for.
    pub flowgraph: Option<PathBuf>,
    /// The traced program's executable, when found (the command's first word, on `PATH`).
    pub program: Option<PathBuf>,
    /// The tracer library preloaded.
    pub preload: PathBuf,
}

impl TracedRun {
    /// `e`, or a clearer error when it is [`LaunchError::MissingRank`] for a program that uses
    /// MPI-4 sessions traced with a tracer library built without them
    /// ([`LaunchError::SessionsNotSupported`]).
    pub fn explain(&self, e: LaunchError) -> LaunchError {
        match (&e, &self.program) {
            (LaunchError::MissingRank { .. }, Some(program))
                if names_symbol(program, SESSION_INIT)
                    && !names_symbol(&self.preload, SESSION_INIT) =>
            {
                LaunchError::SessionsNotSupported {
                    program: program.clone(),
                    preload: self.preload.clone(),
                }
            }
            _ => e,
        }
    }

    /// The flow graph file, checked to exist; `Ok(None)` when none was asked for.
    ///
    /// # Errors
    /// [`LaunchError::NoFlowGraph`] when it was asked for and the run wrote none.
    pub fn flowgraph_written(&self) -> Result<Option<&std::path::Path>, LaunchError> {
        match &self.flowgraph {
            Some(g) if g.is_file() => Ok(Some(g)),
            Some(_) => Err(LaunchError::NoFlowGraph),
            None => Ok(None),
        }
    }
}

/// Runs `config.command` under the tracer as `timeless trace` does (module docs): finds the
/// launcher and the tracer library, chooses the mode and the reference speed, prepares the
/// trace directory, and runs the program, whose output is unchanged. `notice` receives the
/// choices made on the user's behalf (automatic folding, the reference speed), one sentence
/// each. The files are not checked: see [`check_text`], [`check_online`] and
/// [`TracedRun::flowgraph_written`].
///
/// # Errors
/// A [`LaunchError`]; [`LaunchError::kind`] tells bad input from a failed run.
pub fn trace(config: &TraceConfig, notice: &mut dyn FnMut(&str)) -> Result<TracedRun, LaunchError> {
    if config.np == 0 {
        return Err(LaunchError::NoRanks);
    }
    let (launcher, imp) = find_launcher(config.launcher.as_deref())?;
    let exe = std::env::current_exe().map_err(LaunchError::CurrentExe)?;
    let preload = find_preload(&exe)?;
    let preload = std::fs::canonicalize(&preload).unwrap_or(preload);
    let cores = available_cores();
    let mode = mode_for(config.np, config.fold, config.hostfile.as_deref(), cores);
    if let Mode::Folding { cores: c, .. } = mode {
        if c > cores {
            return Err(LaunchError::FoldCores {
                np: config.np,
                fold: config.fold.unwrap_or(1),
                needed: c,
                available: cores,
            });
        }
        if config.fold.is_none() {
            notice(&format!(
                "more ranks than cores; {}",
                mode.describe(config.np)
            ));
        }
    }

    let speed = choose_ref_speed(
        config.ref_speed,
        std::env::var("TIMELESS_REF_SPEED").ok().as_deref(),
        &mode,
        measure_ref_speed,
    )?;
    let mut extra_env = Vec::new();
    if config.timestamps {
        extra_env.push(("TIMELESS_TIMESTAMPS", "1".to_string()));
    }
    if config.counters {
        extra_env.push(("TIMELESS_COUNTERS", "1".to_string()));
    }
    if config.callsites {
        extra_env.push(("TIMELESS_CALLSITES", "1".to_string()));
    }
    if let Some(s) = &speed {
        notice(&format!(
            "reference speed {:.6e} flop/s ({})",
            s.flops_per_sec, s.source
        ));
        extra_env.push(("TIMELESS_REF_SPEED", format!("{:e}", s.flops_per_sec)));
        extra_env.push(("TIMELESS_REF_SPEED_SOURCE", s.source.clone()));
    }

    let out = prepare_out(&config.out)?;
    // A file rank 0 writes at the end (old copy removed), alone with the `_ONLY` variable.
    let mut at_end = |on: bool, only: bool, name: &str, var: &'static str, only_var| {
        let file = (on || only).then(|| out.join(name))?;
        let _ = std::fs::remove_file(&file);
        extra_env.push((var, file.display().to_string()));
        if only {
            extra_env.push((only_var, "1".to_string()));
        }
        Some(file)
    };
    let profile_db = at_end(
        config.profile,
        config.profile_only,
        "profile.db",
        "TIMELESS_PROFILE",
        "TIMELESS_PROFILE_ONLY",
    );
    let graph_file = at_end(
        config.flowgraph,
        config.flowgraph_only,
        "flowgraph.tfg",
        "TIMELESS_FLOWGRAPH",
        "TIMELESS_FLOWGRAPH_ONLY",
    );
    let local = if config.gather {
        // The same path on every host; the ranks create it.
        let l = std::env::temp_dir().join(format!("timeless-trace-{}", std::process::id()));
        prepare_out(&l)?;
        extra_env.push(("TIMELESS_GATHER_OUT", out.display().to_string()));
        extra_env.push(("TIMELESS_GATHER_RADIX", config.gather_radix.to_string()));
        l
    } else {
        out.clone()
    };
    let mut plan = Plan {
        implementation: imp,
        launcher,
        np: config.np,
        mode,
        preload,
        out: local.clone(),
        as_root: running_as_root(),
        extra_env,
    };
    plan.extra_env.extend(online_env(
        config.compress,
        config.precision,
        config.no_text,
    )?);
    let launch = launch_line(&plan, &config.command);
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args);
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    let status = cmd.status().map_err(|source| LaunchError::Start {
        program: launch.program.to_string_lossy().into_owned(),
        source,
    })?;
    if config.gather {
        // After a failed run nothing was gathered: keep this host's partial traces.
        let kept = if status.success() {
            0
        } else {
            salvage(&local, &out)?
        };
        let _ = std::fs::remove_dir_all(&local);
        if !status.success() {
            return Err(LaunchError::GatheredRunFailed {
                status,
                kept,
                out,
                local,
            });
        }
    }
    if !status.success() {
        return Err(LaunchError::RunFailedPartial { status, out });
    }
    Ok(TracedRun {
        out,
        profile_db,
        flowgraph: graph_file,
        program: config
            .command
            .first()
            .and_then(|p| find_program(Path::new(p))),
        preload: plan.preload,
    })
}

/// The entry point of MPI-4 sessions, which a sessions program imports and a tracer built
/// with sessions exports.
const SESSION_INIT: &str = "MPI_Session_init";

/// Whether the file at `path` holds `symbol` as a whole entry of a string table (the bytes
/// `\0symbol\0`, as in an ELF file's dynamic string table where its imported and exported
/// symbols are named): a cheap test that needs no ELF parser. False if the file cannot be read.
pub fn names_symbol(path: &Path, symbol: &str) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let mut needle = Vec::with_capacity(symbol.len() + 2);
    needle.push(0);
    needle.extend_from_slice(symbol.as_bytes());
    needle.push(0);
    bytes.windows(needle.len()).any(|w| w == needle.as_slice())
}

#[cfg(test)]
mod tests;
