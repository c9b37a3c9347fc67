//! The launcher line: which MPI implementation, how the ranks are laid out ([`Mode`]), and the
//! command line and environment that start a program under the tracer ([`launch_line`]), or
//! without it ([`untraced`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Open MPI's options for a folded run: oversubscribed, unbound, idle ranks yielding the core
/// (the launcher is also confined to the run's cores with `taskset`).
pub const OPEN_MPI_FOLDED_ARGS: [&str; 6] = [
    "--oversubscribe",
    "--bind-to",
    "none",
    "--mca",
    "mpi_yield_when_idle",
    "1",
];

/// Open MPI's options for a pinned folded run ([`Plan::pin`]): rank r bound to core r mod C.
pub const OPEN_MPI_PINNED_FOLDED_ARGS: [&str; 8] = [
    "--oversubscribe",
    "--map-by",
    "core",
    "--bind-to",
    "core:overload-allowed",
    "--mca",
    "mpi_yield_when_idle",
    "1",
];

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
    /// A folded run's ranks bound to cores, rank r on core r mod C (Open MPI `--map-by core
    /// --bind-to core:overload-allowed`, MPICH `-bind-to core`), instead of unbound: the same
    /// ranks share a core in every run, so that a trace of a dynamically balanced program
    /// (whose work went to the ranks that had a core to themselves) meets the same sharing
    /// when it is replayed or its proxy runs. No effect on regular and scattered runs.
    pub pin: bool,
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
        pin,
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
                Mode::Folding { .. } if pin => {
                    args.extend(OPEN_MPI_PINNED_FOLDED_ARGS.map(OsString::from))
                }
                Mode::Folding { .. } => args.extend(OPEN_MPI_FOLDED_ARGS.map(OsString::from)),
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
                Mode::Folding { .. } => {
                    let bind = if pin { "core" } else { "none" };
                    args.extend(["-bind-to", bind].map(OsString::from))
                }
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

/// The launch line without the tracer's variables (`-x LD_PRELOAD=...`, `-x TIMELESS_*=...`,
/// `-genv LD_PRELOAD ...`): the same program, launched the same way, untraced.
pub fn untraced(launch: &Launch) -> Launch {
    let mut args = Vec::with_capacity(launch.args.len());
    let mut i = 0;
    let tracer_var = |v: &OsString| {
        let v = v.to_string_lossy();
        v.starts_with("LD_PRELOAD") || v.starts_with("TIMELESS_")
    };
    while i < launch.args.len() {
        let a = &launch.args[i];
        if a == "-x" && launch.args.get(i + 1).is_some_and(tracer_var) {
            i += 2;
        } else if a == "-genv" && launch.args.get(i + 1).is_some_and(tracer_var) {
            i += 3;
        } else {
            args.push(a.clone());
            i += 1;
        }
    }
    Launch {
        program: launch.program.clone(),
        args,
        env: launch.env.clone(),
    }
}

/// Adds `name=value` to the environment of every rank of `launch` (an `imp` launcher line
/// whose last `command_len` arguments are the program and its arguments), before the program.
pub fn export(
    launch: &mut Launch,
    imp: Implementation,
    command_len: usize,
    name: &str,
    value: &str,
) {
    let at = launch.args.len() - command_len;
    let extra: Vec<OsString> = match imp {
        Implementation::OpenMpi => vec!["-x".into(), format!("{name}={value}").into()],
        Implementation::Mpich => vec!["-genv".into(), name.into(), value.into()],
    };
    launch.args.splice(at..at, extra);
}
