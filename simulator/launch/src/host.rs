//! This machine: the tracer library, the MPI launcher, companion programs, the trace
//! directory, and timing a launched run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::line::{implementation_of, Implementation, Launch};
use crate::LaunchError;

/// The tracer library: `$TIMELESS_PRELOAD`, else next to the executable `exe` (the newer of
/// `<dir>/libtimeless_preload.so` and `<dir>/deps/libtimeless_preload.so`: `cargo build` puts
/// the library in the first, `cargo test` refreshes only the second, so a stale copy can sit
/// in the first), else in the target directory `exe` was built in (release first).
///
/// # Errors
/// [`LaunchError::PreloadNotAFile`] when `TIMELESS_PRELOAD` names no file,
/// [`LaunchError::PreloadNotFound`] when the library is nowhere.
pub fn find_preload(exe: &Path) -> Result<PathBuf, LaunchError> {
    const LIB: &str = "libtimeless_preload.so";
    if let Some(p) = std::env::var_os("TIMELESS_PRELOAD") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(LaunchError::PreloadNotAFile(p));
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
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or(LaunchError::PreloadNotFound)
}

/// Whether this process runs as root (`Uid:` of `/proc/self/status`): Open MPI then needs its
/// permission variables.
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// Cores this process may run on (at least 1).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Finds the launcher (`wanted`, else `mpirun`, else `mpiexec`) and its implementation, told
/// from its `--version` text.
///
/// # Errors
/// [`LaunchError::LauncherNotRunnable`] (`wanted` cannot be run),
/// [`LaunchError::NoLauncher`] (neither default is on `PATH`), or
/// [`LaunchError::UnknownImplementation`] (the launchers found are neither Open MPI nor
/// MPICH).
pub fn find_launcher(wanted: Option<&str>) -> Result<(String, Implementation), LaunchError> {
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
            return Err(LaunchError::LauncherNotRunnable(w.to_string()));
        }
        return Err(LaunchError::NoLauncher);
    }
    Err(LaunchError::UnknownImplementation(seen.join("; ")))
}

/// `program` if it names a file (a path with a directory part), else the first `PATH` entry
/// holding it.
pub fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// A program shipped with timeless (e.g. `timeless-pingpong`): next to the running executable,
/// else on `PATH`.
pub fn find_companion(name: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let p = dir.join(name);
        if p.exists() {
            return Some(p);
        }
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|p| p.exists())
    })
}

/// CPU seconds (user + system) of this process's waited-for descendants: `cutime` + `cstime` of
/// `/proc/self/stat`, in clock ticks of 1/100 s (Linux's `USER_HZ`). mpirun waits for its
/// ranks, so a finished run adds the CPU time of every rank. 0 where `/proc` is missing.
pub fn children_cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; cutime and cstime are fields 16 and 17.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(13) + tick(14)) / 100.0
}

/// Runs `launch` once, its output discarded, and returns its wall time and the CPU time of its
/// processes, in seconds.
///
/// # Errors
/// [`LaunchError::Start`] when it cannot be started, [`LaunchError::RunFailed`] (with its
/// standard error) when it exits unsuccessfully.
pub fn timed_run(launch: &Launch) -> Result<(f64, f64), LaunchError> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    let cpu0 = children_cpu_secs();
    let t0 = Instant::now();
    let out = cmd.output().map_err(|source| LaunchError::Start {
        program: launch.program.to_string_lossy().into_owned(),
        source,
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let cpu = children_cpu_secs() - cpu0;
    if !out.status.success() {
        return Err(LaunchError::RunFailed(format!(
            "{:?} {:?} failed ({}): {}",
            launch.program,
            launch.args,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok((secs, cpu))
}

/// Creates the trace directory `out` and removes the files a previous trace left there,
/// including a `trace.tlg.part` that a run killed while rank 0 wrote its compressed trace left
/// behind (the tracer writes `trace.tlg` under that name and renames it when complete).
/// Returns the directory's canonical path.
///
/// # Errors
/// [`LaunchError::CreateDir`], [`LaunchError::RemoveStale`] or [`LaunchError::Io`].
pub fn prepare_out(out: &Path) -> Result<PathBuf, LaunchError> {
    std::fs::create_dir_all(out).map_err(|source| LaunchError::CreateDir {
        path: out.to_path_buf(),
        source,
    })?;
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
            std::fs::remove_file(out.join(&*name)).map_err(|source| LaunchError::RemoveStale {
                name: name.to_string(),
                dir: out.clone(),
                source,
            })?;
        }
    }
    Ok(out)
}

/// Copies the files of this host's node-local trace directory `local` into `out` (after a
/// failed gathered run, when the tracer gathered nothing); returns how many.
///
/// # Errors
/// [`LaunchError::Copy`] or [`LaunchError::Io`].
pub fn salvage(local: &Path, out: &Path) -> Result<usize, LaunchError> {
    let Ok(entries) = std::fs::read_dir(local) else {
        return Ok(0);
    };
    let mut n = 0;
    for entry in entries {
        let p = entry?.path();
        if let (true, Some(name)) = (p.is_file(), p.file_name()) {
            std::fs::copy(&p, out.join(name)).map_err(|source| LaunchError::Copy {
                from: p.clone(),
                to: out.to_path_buf(),
                source,
            })?;
            n += 1;
        }
    }
    Ok(n)
}
