//! Launching the ping-pong benchmark (`timeless-pingpong`, from `validation/pingpong`) under
//! mpirun: finding it, the hosts of the hostfile, the command line of a plain or folded run,
//! and its progress messages.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use timeless_launch::PathError;

use super::{NetworkConfig, PipelineError, Progress, Stage};

/// Distinct host names of an Open MPI (`name slots=N`) or SimGrid (`name:k`) hostfile, in order.
pub(super) fn hostfile_hosts(path: &Path) -> Result<Vec<String>, PipelineError> {
    let text = std::fs::read_to_string(path).map_err(PathError::at("read", path))?;
    let mut hosts: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        let name = first.split(':').next().unwrap_or(first).to_string();
        if !hosts.contains(&name) {
            hosts.push(name);
        }
    }
    if hosts.is_empty() {
        return Err(PipelineError::NoHost(path.to_path_buf()));
    }
    Ok(hosts)
}

pub(super) fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

pub(super) fn find_bench(given: &Option<PathBuf>) -> Result<PathBuf, PipelineError> {
    if let Some(b) = given {
        return if b.exists() {
            Ok(b.clone())
        } else {
            Err(PipelineError::Bench(b.clone()))
        };
    }
    timeless_launch::find_companion("timeless-pingpong").ok_or(PipelineError::NoBench)
}

/// Runs the benchmark under mpirun, reporting its `i/N sizes` messages to `progress`.
pub(super) fn run_bench(
    args: &NetworkConfig,
    bench: &Path,
    csv: &Path,
    multi_host: bool,
    cores: u32,
    progress: &mut dyn Progress,
) -> Result<(), PipelineError> {
    let mut cmd = match args.fold {
        Some(k) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &format!("0-{}", cores.max(1) - 1), &args.mpirun])
                .args(["-np", &(k * cores.max(1) as usize).to_string()])
                .args(if args.pin {
                    &timeless_launch::line::OPEN_MPI_PINNED_FOLDED_ARGS[..]
                } else {
                    &timeless_launch::line::OPEN_MPI_FOLDED_ARGS[..]
                });
            c
        }
        None => {
            let mut c = Command::new(&args.mpirun);
            c.args(["-np", "2"]);
            c
        }
    };
    if let Some(h) = &args.hostfile {
        cmd.arg("--hostfile").arg(h);
        if multi_host {
            cmd.args(["--map-by", "node"]);
        }
    }
    cmd.args(&args.mpirun_args).arg(bench);
    if args.fold.is_some() {
        cmd.args(["--yield", "--busy-pairs"]);
    }
    cmd.args(["--reps", &args.reps.to_string()])
        .args(["--max-size", &args.max_size.to_string()])
        .arg("--out")
        .arg(csv)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().map_err(|source| PipelineError::Start {
        program: cmd.get_program().to_string_lossy().into_owned(),
        source,
    })?;
    progress.begin(Stage::Benchmark, 1);
    let mut stderr = child.stderr.take().expect("piped");
    let mut log = String::new();
    let mut pending = String::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut chunk) {
        if n == 0 {
            break;
        }
        pending.push_str(&String::from_utf8_lossy(&chunk[..n]));
        while let Some(i) = pending.find(['\r', '\n']) {
            let line: String = pending.drain(..=i).collect();
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("timeless-pingpong: ") {
                if let Some((done, total)) = rest
                    .split_whitespace()
                    .next()
                    .and_then(|f| f.split_once('/'))
                    .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                {
                    progress.position(done, total);
                    continue;
                }
            }
            if !line.is_empty() {
                log.push_str(line);
                log.push('\n');
            }
        }
    }
    let status = child.wait()?;
    progress.end();
    if !status.success() {
        return Err(PipelineError::BenchFailed {
            status,
            command: shown,
            log,
        });
    }
    Ok(())
}
