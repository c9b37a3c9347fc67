//! `timeless trace`: run an unmodified MPI program under the tracer and check its trace.
//!
//! The CLI does not link MPI: it finds the launcher (`mpirun`, else `mpiexec`), tells Open MPI
//! from MPICH by its `--version` text, and starts the program with the tracer library
//! (`libtimeless_preload.so`, built by `cargo build --release -p timeless-preload`) in
//! `LD_PRELOAD`. Acquisition modes (seed 003 §4.1):
//! * **regular**: one rank per core of this machine;
//! * **folding** (`--fold K`): K ranks per core, the run confined to ⌈N/K⌉ cores (`taskset` on
//!   the launcher, no binding, oversubscription allowed, idle ranks yield the core). Compute
//!   bursts are thread CPU time, so folding changes the wall time but not the trace;
//! * **scattered** (`--hostfile FILE`): ranks spread over the hosts of the file.
//!
//! The mode is written in `trace-meta.json` (`TIMELESS_MODE`). After the run every rank file
//! must exist and end with `finalize`; a summary names the ranks, actions, message bytes, and
//! the `timeless simulate` command to run next.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context};
use clap::Args;
use timeless_trace::Datatype;

use crate::Failure;

/// Arguments of `timeless trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Number of MPI ranks.
    #[arg(short = 'n', long = "np", default_value_t = 1)]
    pub np: usize,
    /// Folding: K ranks per core, on ⌈N/K⌉ cores of this machine.
    #[arg(long, value_name = "K", conflicts_with = "hostfile")]
    pub fold: Option<usize>,
    /// Scattered mode: the launcher's hostfile (Open MPI `--hostfile`, MPICH `-f`).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// Trace directory (created; old rank, list and metadata files in it are removed).
    #[arg(long, short = 'o', default_value = "timeless-trace")]
    pub out: PathBuf,
    /// Scattered mode without a shared file system: ranks write to a directory local to their
    /// host (the same temporary path on every host), and the tracer collects every rank's
    /// files into the output directory on rank 0's host over MPI at `MPI_Finalize` (k-nomial
    /// tree, seed 003 §4.3). Run `timeless trace` on rank 0's host.
    #[arg(long, requires = "hostfile")]
    pub gather: bool,
    /// Radix of the gather's k-nomial tree (⌈log_K N⌉ rounds).
    #[arg(long, value_name = "K", default_value_t = 4, requires = "gather",
          value_parser = clap::value_parser!(u32).range(2..))]
    pub gather_radix: u32,
    /// Also record every call's enter and exit times (`rank-<r>.timed.txt`, `timed-list.txt`),
    /// for `timeless compensate`.
    #[arg(long)]
    pub timestamps: bool,
    /// The MPI launcher to run (e.g. `mpirun.mpich` where several MPI implementations are
    /// installed); default `mpirun`, else `mpiexec`. The tracer library must be built against
    /// the same implementation (`TIMELESS_PRELOAD`).
    #[arg(long, value_name = "PROGRAM")]
    pub launcher: Option<String>,
    /// Online compression: the ranks compress their records as they run and merge them at
    /// MPI_Finalize; rank 0 writes `trace.tlg` (the format of `timeless compress`).
    #[arg(long)]
    pub compress: bool,
    /// With --compress: maximum relative error of each compute volume (0 = lossless).
    #[arg(long, requires = "compress", default_value_t = timeless_grammar::DEFAULT_PRECISION.as_f64())]
    pub precision: f64,
    /// With --compress: write only `trace.tlg`, no per-rank text files.
    #[arg(long, requires = "compress")]
    pub no_text: bool,
    /// Reference speed in flop/s that converts every rank's compute bursts (CPU seconds) into
    /// flops. Default: `TIMELESS_REF_SPEED` if set, else measured once here with the reference
    /// kernel (`timeless calibrate compute`'s) before the run; in scattered mode each host's
    /// ranks measure their own instead.
    #[arg(long, value_name = "FLOPS")]
    pub ref_speed: Option<f64>,
    /// Compute volumes from the hardware instruction counter (perf_event_open) instead of CPU
    /// time: instructions × the reference kernel's flops per instruction. Where a rank has no
    /// counter, CPU time × reference speed is used, with one notice (`TIMELESS_COUNTERS=1`).
    #[arg(long)]
    pub counters: bool,
    /// Also write a communicator-centric profile (mpisee, 001_*): `<out>/profile.db` (SQLite;
    /// read it with `timeless profile`), calls, bytes and wall time per communicator,
    /// operation, rank and message-size bucket.
    #[arg(long)]
    pub profile: bool,
    /// Write the profile only, no trace files (`<out>/profile.db`).
    #[arg(long, conflicts_with_all = ["profile", "compress", "timestamps", "gather"])]
    pub profile_only: bool,
    /// Also build each rank's event flow graph while the program runs (002_*):
    /// `<out>/flowgraph.tfg` (`timeless flowgraph --reconstruct` rebuilds the trace from it).
    #[arg(long)]
    pub flowgraph: bool,
    /// The flow graph only, no trace files (`<out>/flowgraph.tfg`).
    #[arg(long, conflicts_with_all = ["flowgraph", "compress", "timestamps", "gather", "profile_only"])]
    pub flowgraph_only: bool,
    /// Record the call site of every MPI call: each action line ends with `@cs=<id>`, and
    /// `<out>/callsites.txt` lists each id's module, offset, function, file and line (README
    /// "Call sites"). Such traces are replayed by timeless (SimGrid may misread the field).
    #[arg(long)]
    pub callsites: bool,
    /// The MPI program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]")]
    pub command: Vec<OsString>,
}

/// The MPI implementation behind the launcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implementation {
    OpenMpi,
    Mpich,
}

/// Tells the implementation from the launcher's `--version` output.
pub fn implementation_of(version_text: &str) -> Option<Implementation> {
    if version_text.contains("Open MPI") || version_text.contains("OpenRTE") {
        Some(Implementation::OpenMpi)
    } else if version_text.contains("HYDRA") || version_text.contains("MPICH") {
        Some(Implementation::Mpich)
    } else {
        None
    }
}

/// How the run is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// One rank per core.
    Regular,
    /// `ranks_per_core` ranks per core on cores `0..cores`.
    Folding { ranks_per_core: usize, cores: usize },
    /// Ranks spread over the hosts of a hostfile.
    Scattered { hostfile: PathBuf },
}

impl Mode {
    /// The text written as `acquisition_mode` in the metadata.
    pub fn describe(&self, np: usize) -> String {
        match self {
            Mode::Regular => format!("regular: {np} ranks, one per core"),
            Mode::Folding {
                ranks_per_core,
                cores,
            } => format!(
                "folding: {np} ranks on {cores} core{} ({ranks_per_core} ranks per core)",
                if *cores == 1 { "" } else { "s" }
            ),
            Mode::Scattered { hostfile } => {
                format!(
                    "scattered: {np} ranks over the hosts of {}",
                    hostfile.display()
                )
            }
        }
    }
}

/// Chooses the mode: folding when asked, or when there are more ranks than cores.
pub fn mode_for(np: usize, fold: Option<usize>, hostfile: Option<&Path>, cores: usize) -> Mode {
    if let Some(h) = hostfile {
        return Mode::Scattered {
            hostfile: h.to_path_buf(),
        };
    }
    let k = match fold {
        Some(k) => k.max(1),
        None if np > cores => np.div_ceil(cores.max(1)),
        None => return Mode::Regular,
    };
    Mode::Folding {
        ranks_per_core: k,
        cores: np.div_ceil(k).max(1),
    }
}

/// A launcher command line: program and arguments, plus environment for the launcher itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(String, String)>,
}

/// Everything the launcher line depends on.
#[derive(Debug, Clone)]
pub struct Plan {
    pub implementation: Implementation,
    /// `mpirun` or `mpiexec`.
    pub launcher: String,
    pub np: usize,
    pub mode: Mode,
    /// The tracer library, put in `LD_PRELOAD`.
    pub preload: PathBuf,
    /// The directory the ranks write to (`TIMELESS_OUT`).
    pub out: PathBuf,
    /// Adds Open MPI's permission to run as root.
    pub as_root: bool,
    /// More `TIMELESS_*` variables for the ranks (`--timestamps`).
    pub extra_env: Vec<(&'static str, String)>,
}

/// Builds the launcher line running `command` as `plan` says; the mode's text goes to
/// `TIMELESS_MODE`.
pub fn launch_line(plan: &Plan, command: &[OsString]) -> Launch {
    let Plan {
        implementation: imp,
        ref launcher,
        np,
        ref mode,
        ref preload,
        ref out,
        as_root,
        ref extra_env,
    } = *plan;
    let mut args: Vec<OsString> = Vec::new();
    let mut env = Vec::new();
    let mut vars = vec![
        ("LD_PRELOAD", preload.display().to_string()),
        ("TIMELESS_OUT", out.display().to_string()),
        ("TIMELESS_MODE", mode.describe(np)),
    ];
    vars.extend(extra_env.iter().cloned());
    let mut program = OsString::from(launcher.as_str());
    match imp {
        Implementation::OpenMpi => {
            args.extend(["-np".into(), np.to_string().into()]);
            for (k, v) in &vars {
                args.extend(["-x".into(), format!("{k}={v}").into()]);
            }
            match mode {
                Mode::Regular => {}
                Mode::Folding { .. } => args.extend(
                    [
                        "--oversubscribe",
                        "--bind-to",
                        "none",
                        "--mca",
                        "mpi_yield_when_idle",
                        "1",
                    ]
                    .map(OsString::from),
                ),
                Mode::Scattered { hostfile } => {
                    args.extend(["--hostfile".into(), hostfile.clone().into_os_string()])
                }
            }
            if as_root {
                env.push(("OMPI_ALLOW_RUN_AS_ROOT".into(), "1".into()));
                env.push(("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".into(), "1".into()));
            }
        }
        Implementation::Mpich => {
            args.extend(["-n".into(), np.to_string().into()]);
            for (k, v) in vars {
                args.extend(["-genv".into(), k.into(), v.into()]);
            }
            match mode {
                Mode::Regular => {}
                Mode::Folding { .. } => args.extend(["-bind-to", "none"].map(OsString::from)),
                Mode::Scattered { hostfile } => {
                    args.extend(["-f".into(), hostfile.clone().into_os_string()])
                }
            }
        }
    }
    if let Mode::Folding { cores, .. } = mode {
        // The launcher and every rank it starts inherit the CPU set.
        let mut a: Vec<OsString> = vec!["-c".into(), format!("0-{}", cores - 1).into(), program];
        a.append(&mut args);
        program = "taskset".into();
        args = a;
    }
    args.extend(command.iter().cloned());
    Launch { program, args, env }
}

/// The tracer library: `$TIMELESS_PRELOAD`, else next to this executable (the newer of
/// `<dir>/libtimeless_preload.so` and `<dir>/deps/libtimeless_preload.so`: `cargo build` puts
/// the library in the first, `cargo test` refreshes only the second, so a stale copy can sit
/// in the first), else in the target directory this executable was built in (release first).
pub fn find_preload(exe: &Path) -> anyhow::Result<PathBuf> {
    const LIB: &str = "libtimeless_preload.so";
    if let Some(p) = std::env::var_os("TIMELESS_PRELOAD") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        bail!(
            "TIMELESS_PRELOAD names {}, which is not a file",
            p.display()
        );
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let beside = [dir.join(LIB), dir.join("deps").join(LIB)]
        .into_iter()
        .filter(|p| p.is_file())
        .max_by_key(|p| modified(p));
    if let Some(p) = beside {
        return Ok(p);
    }
    let mut candidates = Vec::new();
    // target/<profile>/timeless, or target/<profile>/deps/<test> for tests.
    for base in [dir.parent(), dir.parent().and_then(Path::parent)]
        .into_iter()
        .flatten()
    {
        candidates.push(base.join("release").join(LIB));
        candidates.push(base.join("debug").join(LIB));
    }
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        anyhow!(
            "the tracer library {LIB} was not found (set TIMELESS_PRELOAD, or build it with \
             `cargo build --release -p timeless-preload`; it needs mpicc and libclang)"
        )
    })
}

/// Whether this process runs as root (`Uid:` of `/proc/self/status`).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// Cores this process may run on.
fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Finds the launcher (`wanted`, else `mpirun`, else `mpiexec`) and its implementation.
fn find_launcher(wanted: Option<&str>) -> anyhow::Result<(String, Implementation)> {
    let mut seen = Vec::new();
    let candidates = match wanted {
        Some(w) => vec![w],
        None => vec!["mpirun", "mpiexec"],
    };
    for launcher in candidates {
        let Ok(out) = Command::new(launcher).arg("--version").output() else {
            continue;
        };
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(imp) = implementation_of(&text) {
            return Ok((launcher.to_string(), imp));
        }
        seen.push(format!(
            "{launcher}: {}",
            text.lines().next().unwrap_or("").trim()
        ));
    }
    if seen.is_empty() {
        if let Some(w) = wanted {
            bail!("the MPI launcher {w} cannot be run");
        }
        bail!("no MPI launcher found: neither mpirun nor mpiexec is on PATH (Debian: openmpi-bin)");
    }
    bail!(
        "unknown MPI implementation (neither Open MPI nor MPICH): {}",
        seen.join("; ")
    )
}

/// What a rank file holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RankSummary {
    /// Action records per keyword (`comm_def` included).
    pub actions: BTreeMap<String, u64>,
    /// Bytes of the point-to-point sends (`send`, `isend`, the send half of `sendRecv`).
    pub sent_bytes: u64,
    /// The last record is `finalize`.
    pub finalized: bool,
}

/// Reads one rank's trace text.
///
/// # Errors
/// A record whose datatype id is unknown or whose count is not a number, with its line.
pub fn summarize(text: &str) -> anyhow::Result<RankSummary> {
    let mut s = RankSummary::default();
    let mut last = "";
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line
            .split_whitespace()
            .filter(|f| !f.starts_with("comm="))
            .collect();
        let Some(&kw) = f.get(1) else {
            bail!("line {}: no action after the rank: '{line}'", i + 1);
        };
        last = kw;
        *s.actions.entry(kw.to_string()).or_default() += 1;
        let bytes = |count: usize, dt: usize| -> anyhow::Result<u64> {
            let n: f64 = f
                .get(count)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| anyhow!("line {}: bad count in '{line}'", i + 1))?;
            let size = match f.get(dt) {
                Some(d) => d
                    .parse::<u32>()
                    .ok()
                    .and_then(Datatype::from_id)
                    .ok_or_else(|| anyhow!("line {}: unknown datatype in '{line}'", i + 1))?
                    .size_bytes(),
                None => 1,
            };
            Ok(n as u64 * u64::from(size))
        };
        match kw {
            "send" | "isend" => s.sent_bytes += bytes(4, 5)?,
            "sendRecv" => s.sent_bytes += bytes(2, 6)?,
            _ => {}
        }
    }
    s.finalized = last == "finalize";
    Ok(s)
}

/// The reference speed every rank converts CPU seconds with, and where it came from (written to
/// `trace-meta.json` as `reference_speed.source`; no commas, which a launcher's `-x` might
/// split on).
#[derive(Debug, Clone, PartialEq)]
pub struct RefSpeed {
    pub flops_per_sec: f64,
    pub source: String,
}

/// Number of reference-kernel runs whose median is the speed `timeless trace` measures.
pub const SPEED_RUNS: usize = 3;

/// Chooses the reference speed: `--ref-speed`, else `TIMELESS_REF_SPEED` (`env`), else `None`
/// in scattered mode (the ranks of each host measure it at start-up), else `measure()`'s
/// median of [`SPEED_RUNS`] runs of the reference kernel on this host. Measuring once, before
/// the run, keeps every rank (and every run of a comparison) on one speed: a per-rank
/// start-up measurement varied by about 8 % from run to run on a loaded machine.
///
/// # Errors
/// A speed that is not a positive finite number.
pub fn choose_ref_speed(
    flag: Option<f64>,
    env: Option<&str>,
    mode: &Mode,
    measure: impl FnOnce() -> f64,
) -> anyhow::Result<Option<RefSpeed>> {
    let positive = |v: f64, what: &str| -> anyhow::Result<f64> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            bail!("{what} must be a positive number of flop/s, not {v}")
        }
    };
    if let Some(v) = flag {
        return Ok(Some(RefSpeed {
            flops_per_sec: positive(v, "--ref-speed")?,
            source: "--ref-speed given to timeless trace".into(),
        }));
    }
    if let Some(text) = env {
        let v: f64 = text
            .trim()
            .parse()
            .map_err(|_| anyhow!("TIMELESS_REF_SPEED='{text}' is not a number of flop/s"))?;
        return Ok(Some(RefSpeed {
            flops_per_sec: positive(v, "TIMELESS_REF_SPEED")?,
            source: "TIMELESS_REF_SPEED given to timeless trace".into(),
        }));
    }
    if matches!(mode, Mode::Scattered { .. }) {
        return Ok(None);
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    Ok(Some(RefSpeed {
        flops_per_sec: measure(),
        source: format!(
            "measured once by timeless trace on {} before the run (median of {SPEED_RUNS} \
             reference-kernel runs) and passed to every rank",
            host.trim()
        ),
    }))
}

/// Median of [`SPEED_RUNS`] runs of the reference kernel on the calling thread, flop/s.
fn measure_ref_speed() -> f64 {
    let mut v: Vec<f64> = (0..SPEED_RUNS)
        .map(|_| timeless_refkernel::reference_speed().flops_per_sec)
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs `timeless trace`.
pub fn run(args: TraceArgs) -> Result<(), Failure> {
    let input = |e: anyhow::Error| Failure::Input(e);
    if args.np == 0 {
        return Err(input(anyhow!("-n must be at least 1")));
    }
    let (launcher, imp) = find_launcher(args.launcher.as_deref()).map_err(input)?;
    let exe = std::env::current_exe()
        .context("cannot locate the timeless executable")
        .map_err(Failure::Other)?;
    let preload = find_preload(&exe).map_err(input)?;
    let preload = std::fs::canonicalize(&preload).unwrap_or(preload);
    let cores = available_cores();
    let mode = mode_for(args.np, args.fold, args.hostfile.as_deref(), cores);
    if let Mode::Folding { cores: c, .. } = mode {
        if c > cores {
            return Err(input(anyhow!(
                "folding {} ranks by {} needs {c} cores; {cores} are available",
                args.np,
                args.fold.unwrap_or(1)
            )));
        }
        if args.fold.is_none() {
            eprintln!(
                "timeless: more ranks than cores; {}",
                mode.describe(args.np)
            );
        }
    }

    let speed = choose_ref_speed(
        args.ref_speed,
        std::env::var("TIMELESS_REF_SPEED").ok().as_deref(),
        &mode,
        measure_ref_speed,
    )
    .map_err(input)?;
    let mut extra_env = Vec::new();
    if args.timestamps {
        extra_env.push(("TIMELESS_TIMESTAMPS", "1".to_string()));
    }
    if args.counters {
        extra_env.push(("TIMELESS_COUNTERS", "1".to_string()));
    }
    if args.callsites {
        extra_env.push(("TIMELESS_CALLSITES", "1".to_string()));
    }
    if let Some(s) = &speed {
        eprintln!(
            "timeless: reference speed {:.6e} flop/s ({})",
            s.flops_per_sec, s.source
        );
        extra_env.push(("TIMELESS_REF_SPEED", format!("{:e}", s.flops_per_sec)));
        extra_env.push(("TIMELESS_REF_SPEED_SOURCE", s.source.clone()));
    }

    let out = prepare_out(&args.out).map_err(Failure::Other)?;
    let profile_db = out.join("profile.db");
    if args.profile || args.profile_only {
        let _ = std::fs::remove_file(&profile_db);
        extra_env.push(("TIMELESS_PROFILE", profile_db.display().to_string()));
        if args.profile_only {
            extra_env.push(("TIMELESS_PROFILE_ONLY", "1".to_string()));
        }
    }
    let graph_file = out.join("flowgraph.tfg");
    if args.flowgraph || args.flowgraph_only {
        let _ = std::fs::remove_file(&graph_file);
        extra_env.push(("TIMELESS_FLOWGRAPH", graph_file.display().to_string()));
        if args.flowgraph_only {
            extra_env.push(("TIMELESS_FLOWGRAPH_ONLY", "1".to_string()));
        }
    }
    let local = if args.gather {
        // The same path on every host; the ranks create it.
        let l = std::env::temp_dir().join(format!("timeless-trace-{}", std::process::id()));
        prepare_out(&l).map_err(Failure::Other)?;
        extra_env.push(("TIMELESS_GATHER_OUT", out.display().to_string()));
        extra_env.push(("TIMELESS_GATHER_RADIX", args.gather_radix.to_string()));
        l
    } else {
        out.clone()
    };
    let mut plan = Plan {
        implementation: imp,
        launcher,
        np: args.np,
        mode,
        preload,
        out: local.clone(),
        as_root: running_as_root(),
        extra_env,
    };
    plan.extra_env.extend(
        crate::compress::online_env(args.compress, args.precision, args.no_text).map_err(input)?,
    );
    let launch = launch_line(&plan, &args.command);
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args);
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {}", launch.program.to_string_lossy()))
        .map_err(Failure::Other)?;
    if args.gather {
        // After a failed run nothing was gathered: keep this host's partial traces.
        let kept = if status.success() {
            0
        } else {
            salvage(&local, &out).map_err(Failure::Other)?
        };
        let _ = std::fs::remove_dir_all(&local);
        if !status.success() {
            return Err(Failure::Other(anyhow!(
                "the traced program failed ({status}); nothing was gathered: {kept} partial \
                 trace files of this host are in {}, the other hosts' in {} on each host",
                out.display(),
                local.display()
            )));
        }
    }
    if !status.success() {
        return Err(Failure::Other(anyhow!(
            "the traced program failed ({status}); partial traces are in {}",
            out.display()
        )));
    }
    if args.callsites {
        match crate::callsites::symbolise_dir(&out).map_err(Failure::Other)? {
            Some((n, lines)) => println!(
                "call sites: {} ({n} sites, {lines} with a source line)",
                out.join(timeless_trace::callsites::FILE).display()
            ),
            None => eprintln!("timeless: the traced run wrote no call-site table"),
        }
    }
    if args.profile || args.profile_only {
        crate::profile::report_written(&profile_db)?;
        if args.profile_only {
            return Ok(());
        }
    }
    if args.flowgraph || args.flowgraph_only {
        if !graph_file.is_file() {
            return Err(Failure::Other(anyhow!(
                "the traced run wrote no flow graph (see the tracer's messages)"
            )));
        }
        println!(
            "flow graph: {} (`timeless flowgraph --reconstruct {} -o DIR`)",
            graph_file.display(),
            graph_file.display()
        );
        if args.flowgraph_only {
            return Ok(());
        }
    }
    if args.no_text {
        crate::compress::report_online(&out, args.np, None).map_err(Failure::Other)?;
        if let Some(c) = counters_line(&out) {
            println!("  {c}");
        }
        return Ok(());
    }
    report(&out, args.np).map_err(Failure::Other)?;
    if args.compress {
        crate::compress::report_online(&out, args.np, Some(&out.join("trace-list.txt")))
            .map_err(Failure::Other)?;
    }
    Ok(())
}

/// Creates the trace directory and removes the files a previous trace left there, including a
/// `trace.tlg.part` that a run killed while rank 0 wrote its compressed trace left behind (the
/// tracer writes `trace.tlg` under that name and renames it when complete).
fn prepare_out(out: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create the trace directory {}", out.display()))?;
    let out = std::fs::canonicalize(out)?;
    for entry in std::fs::read_dir(&out)? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        let stale = (name.starts_with("rank-") && name.ends_with(".txt"))
            || name == "trace-list.txt"
            || name == "trace-meta.json"
            || name == "trace.tlg"
            || name == "trace.tlg.part"
            || name == timeless_trace::callsites::FILE;
        if stale {
            std::fs::remove_file(out.join(&*name))
                .with_context(|| format!("cannot remove the old {name} in {}", out.display()))?;
        }
    }
    Ok(out)
}

/// Moves the files of this host's node-local trace directory into `out` (after a failed run,
/// when the tracer gathered nothing); returns how many.
fn salvage(local: &Path, out: &Path) -> anyhow::Result<usize> {
    let Ok(entries) = std::fs::read_dir(local) else {
        return Ok(0);
    };
    let mut n = 0;
    for entry in entries {
        let p = entry?.path();
        if let (true, Some(name)) = (p.is_file(), p.file_name()) {
            std::fs::copy(&p, out.join(name))
                .with_context(|| format!("cannot copy {} into {}", p.display(), out.display()))?;
            n += 1;
        }
    }
    Ok(n)
}

/// Checks every rank file and prints the summary.
fn report(out: &Path, np: usize) -> anyhow::Result<()> {
    let mut total = RankSummary::default();
    let mut file_bytes = 0u64;
    for r in 0..np {
        let path = out.join(format!("rank-{r}.txt"));
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "rank {r} wrote no trace ({} is missing): was the tracer preloaded?",
                path.display()
            )
        })?;
        file_bytes += text.len() as u64;
        let s = summarize(&text).with_context(|| format!("{}", path.display()))?;
        if !s.finalized {
            bail!(
                "{} does not end with finalize: the trace of rank {r} is incomplete",
                path.display()
            );
        }
        for (k, v) in s.actions {
            *total.actions.entry(k).or_default() += v;
        }
        total.sent_bytes += s.sent_bytes;
    }
    let actions: u64 = total.actions.values().sum();
    println!("Traced {np} ranks into {}", out.display());
    println!(
        "  {actions} actions, {} point-to-point bytes sent, {file_bytes} bytes of trace",
        total.sent_bytes
    );
    let kinds: Vec<String> = total
        .actions
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!("  per kind: {}", kinds.join(", "));
    if let Some(g) = gathered(out) {
        println!("  {g}");
    }
    if let Some(c) = counters_line(out) {
        println!("  {c}");
    }
    println!(
        "Simulate with:\n  timeless simulate {} --platform PLATFORM.xml",
        out.join("trace-list.txt").display()
    );
    Ok(())
}

/// What `trace-meta.json` says of requested hardware counters (`compute_volume`), as one line;
/// `None` when they were not requested.
pub fn counters_line(out: &Path) -> Option<String> {
    let text = std::fs::read_to_string(out.join("trace-meta.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let c = v.get("compute_volume")?;
    if c.get("requested")? == false {
        return None;
    }
    Some(match c.get("fallback").and_then(|f| f.as_str()) {
        Some(why) => format!("counters not used: {why}"),
        None => {
            format!(
            "compute volumes from hardware counters: instructions x {:e} flops per instruction \
             (rank 0's host)",
            c["flops_per_instruction_rank_0"].as_f64().unwrap_or(f64::NAN)
        )
        }
    })
}

/// The `gather` member the tracer added to `trace-meta.json`, as one line.
fn gathered(out: &Path) -> Option<String> {
    let text = std::fs::read_to_string(out.join("trace-meta.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let g = v.get("gather")?;
    Some(format!(
        "gathered over MPI: {} files, {} bytes, {}-nomial tree in {} rounds, {:.3} s",
        g["files"],
        g["bytes"],
        g["radix"],
        g["rounds"],
        g["secs"].as_f64().unwrap_or(0.0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_library_beside_the_executable_wins() {
        if std::env::var_os("TIMELESS_PRELOAD").is_some() {
            return; // the environment overrides the search
        }
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("debug");
        std::fs::create_dir_all(profile.join("deps")).unwrap();
        let exe = profile.join("timeless");
        let stale = profile.join("libtimeless_preload.so");
        let fresh = profile.join("deps").join("libtimeless_preload.so");
        let t0 = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        for (p, secs) in [(&stale, 0), (&fresh, 60)] {
            let f = std::fs::File::create(p).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(secs))
                .unwrap();
        }
        assert_eq!(find_preload(&exe).unwrap(), fresh);
        let f = std::fs::File::options().write(true).open(&stale).unwrap();
        f.set_modified(t0 + std::time::Duration::from_secs(120))
            .unwrap();
        assert_eq!(find_preload(&exe).unwrap(), stale);
    }

    fn strings(l: &Launch) -> Vec<String> {
        std::iter::once(&l.program)
            .chain(&l.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_new_trace_removes_the_files_of_the_last_one_only() {
        let dir = tempfile::tempdir().unwrap();
        let stale = [
            "rank-0.txt",
            "rank-12.timed.txt",
            "trace-list.txt",
            "trace-meta.json",
            "trace.tlg",
            "trace.tlg.part",
        ];
        let kept = [
            "platform.xml",
            "notes.txt",
            "rank-0.txt.bak",
            "trace.tlg.old",
        ];
        for f in stale.iter().chain(&kept) {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        prepare_out(dir.path()).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "notes.txt",
                "platform.xml",
                "rank-0.txt.bak",
                "trace.tlg.old"
            ]
        );
    }

    #[test]
    fn tells_open_mpi_from_mpich() {
        assert_eq!(
            implementation_of("mpirun (Open MPI) 4.1.4\n\nReport bugs to"),
            Some(Implementation::OpenMpi)
        );
        assert_eq!(
            implementation_of("HYDRA build details:\n    Version: 4.0.2"),
            Some(Implementation::Mpich)
        );
        assert_eq!(implementation_of("Intel(R) something"), None);
    }

    #[test]
    fn folding_confines_the_run_to_ceil_n_over_k_cores() {
        assert_eq!(
            mode_for(8, Some(4), None, 2),
            Mode::Folding {
                ranks_per_core: 4,
                cores: 2
            }
        );
        assert_eq!(
            mode_for(5, Some(2), None, 8),
            Mode::Folding {
                ranks_per_core: 2,
                cores: 3
            }
        );
        assert_eq!(mode_for(2, None, None, 2), Mode::Regular);
        // More ranks than cores without --fold: folded onto all the cores.
        assert_eq!(
            mode_for(4, None, None, 2),
            Mode::Folding {
                ranks_per_core: 2,
                cores: 2
            }
        );
    }

    #[test]
    fn open_mpi_folded_launch_line() {
        let mode = mode_for(8, Some(4), None, 2);
        let plan = Plan {
            implementation: Implementation::OpenMpi,
            launcher: "mpirun".into(),
            np: 8,
            mode,
            preload: "/lib/libtimeless_preload.so".into(),
            out: "/t".into(),
            as_root: true,
            extra_env: Vec::new(),
        };
        let l = launch_line(&plan, &["./ring".into(), "3".into()]);
        assert_eq!(
            strings(&l),
            [
                "taskset",
                "-c",
                "0-1",
                "mpirun",
                "-np",
                "8",
                "-x",
                "LD_PRELOAD=/lib/libtimeless_preload.so",
                "-x",
                "TIMELESS_OUT=/t",
                "-x",
                "TIMELESS_MODE=folding: 8 ranks on 2 cores (4 ranks per core)",
                "--oversubscribe",
                "--bind-to",
                "none",
                "--mca",
                "mpi_yield_when_idle",
                "1",
                "./ring",
                "3"
            ]
        );
        assert!(l
            .env
            .contains(&("OMPI_ALLOW_RUN_AS_ROOT".into(), "1".into())));
    }

    #[test]
    fn mpich_scattered_launch_line() {
        let mode = mode_for(4, None, Some(Path::new("hosts")), 2);
        let plan = Plan {
            implementation: Implementation::Mpich,
            launcher: "mpiexec".into(),
            np: 4,
            mode,
            preload: "/p.so".into(),
            out: "/t".into(),
            as_root: false,
            extra_env: Vec::new(),
        };
        let l = launch_line(&plan, &["./a".into()]);
        assert_eq!(
            strings(&l),
            [
                "mpiexec",
                "-n",
                "4",
                "-genv",
                "LD_PRELOAD",
                "/p.so",
                "-genv",
                "TIMELESS_OUT",
                "/t",
                "-genv",
                "TIMELESS_MODE",
                "scattered: 4 ranks over the hosts of hosts",
                "-f",
                "hosts",
                "./a"
            ]
        );
        assert!(l.env.is_empty());
    }

    #[test]
    fn summary_counts_actions_and_bytes() {
        let s = summarize(
            "# header\n0 init\n0 compute 100\n0 send 1 0 10 0\n0 isend 2 3 5 1 comm=1\n\
             0 sendRecv 4 1 4 3 6 6\n0 comm_def 1 2 0 2\n0 finalize\n",
        )
        .unwrap();
        // 10 doubles + 5 ints + 4 bytes.
        assert_eq!(s.sent_bytes, 80 + 20 + 4);
        assert_eq!(s.actions["send"], 1);
        assert_eq!(s.actions["comm_def"], 1);
        assert!(s.finalized);
        assert!(!summarize("0 init\n0 send 1 0 1 0\n").unwrap().finalized);
        assert!(summarize("0 send 1 0 1 99\n").is_err());
    }

    #[test]
    fn the_reference_speed_is_measured_once_unless_given() {
        let regular = Mode::Regular;
        let never = || -> f64 { panic!("must not measure") };
        let s = choose_ref_speed(Some(2e9), Some("1e9"), &regular, never)
            .unwrap()
            .unwrap();
        assert_eq!(s.flops_per_sec, 2e9);
        assert_eq!(s.source, "--ref-speed given to timeless trace");
        let s = choose_ref_speed(None, Some(" 1.5e9 "), &regular, never)
            .unwrap()
            .unwrap();
        assert_eq!(s.flops_per_sec, 1.5e9);
        assert!(s.source.starts_with("TIMELESS_REF_SPEED"), "{}", s.source);
        let s = choose_ref_speed(None, None, &regular, || 3.25e9)
            .unwrap()
            .unwrap();
        assert_eq!(s.flops_per_sec, 3.25e9);
        assert!(s.source.starts_with("measured once by timeless trace"));
        // Scattered: each host measures its own.
        let scattered = Mode::Scattered {
            hostfile: "h".into(),
        };
        assert_eq!(
            choose_ref_speed(None, None, &scattered, never).unwrap(),
            None
        );
        assert!(choose_ref_speed(Some(-1.0), None, &regular, never).is_err());
        assert!(choose_ref_speed(None, Some("fast"), &regular, never).is_err());
    }
}
