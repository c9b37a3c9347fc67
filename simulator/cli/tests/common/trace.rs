//! What the `timeless trace` suites (`trace_*.rs`) share: the scratch directory, the programs
//! and the tracer library, the program suite's trace-and-simulate check, and MPICH: the tracer
//! built against it, tracing with its launcher and running a program under it untraced.
//!
//! Needs `mpicc`, `mpif90` and `mpirun`; the tests are skipped with a notice when `mpicc` is
//! absent. The tracer library is the one `cargo test --workspace` builds; when it is absent
//! (`cargo test -p timeless` on a fresh target directory) it is built with `cargo build -p
//! timeless-preload` into a target directory of its own (the main one is locked by the running
//! `cargo test`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::mpi::{root, text, timeless, MPI_JOBS};

/// The suites' scratch directory (one for all of them: the programs are built once).
pub fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-cli")
}

pub fn have_mpi() -> bool {
    super::mpi::have_mpi("`timeless trace`")
}

/// Builds the programs (once) and makes sure the tracer library exists.
pub fn programs() -> &'static Path {
    super::mpi::programs(&tmp())
}

/// The program's own output, run without the tracer.
pub fn plain(program: &Path, np: usize, args: &[&str]) -> String {
    let out = Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["-np", &np.to_string(), "--oversubscribe"])
        .arg(program)
        .args(args)
        .output()
        .expect("mpirun");
    let (o, e) = text(&out);
    assert!(
        out.status.success(),
        "{} failed untraced:\n{o}{e}",
        program.display()
    );
    o
}

/// Simulated time of SimGrid 3.32 replaying `dir`'s trace on `platform` (hosts in `hostfile`):
/// the clock of the last "Simulation time" line.
pub fn smpirun_time(dir: &Path, np: usize, platform: &Path, hostfile: &str) -> Option<f64> {
    if Command::new("smpirun").arg("--version").output().is_err() {
        eprintln!("smpirun not installed: SimGrid comparison skipped");
        return None;
    }
    std::fs::write(dir.join("hostfile"), hostfile).unwrap();
    let out = Command::new("smpirun")
        .current_dir(dir)
        .args(["-np", &np.to_string(), "-platform"])
        .arg(platform)
        .args(["-hostfile", "hostfile", "-replay", "trace-list.txt"])
        .arg("--log=root.fmt:[%.17r]%e%m%n")
        .output()
        .expect("smpirun");
    let (o, e) = text(&out);
    assert!(out.status.success(), "smpirun -replay failed:\n{o}{e}");
    let last = format!("{o}{e}")
        .lines()
        .rfind(|l| l.contains("Simulation time"))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no simulated time in the smpirun output:\n{o}{e}"));
    let clock = last
        .trim_start_matches('[')
        .split(']')
        .next()
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("cannot read the clock of '{last}'"));
    Some(clock)
}

/// Traces `program args` on 4 ranks with `timeless trace`, checks the program's output is
/// unchanged, and simulates the trace. Returns the trace directory.
pub fn trace_and_simulate(program: &str, args: &[&str], result: &str) -> PathBuf {
    let exe = programs().join(program);
    let dir = tmp().join(program);
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let mut targs = vec![
        "trace",
        "-n",
        "4",
        "-o",
        dir.to_str().expect("utf-8 path"),
        "--",
    ];
    let exe_s = exe.to_str().expect("utf-8 path");
    targs.push(exe_s);
    targs.extend(args);
    let out = timeless(&targs);
    let (o, e) = text(&out);
    assert!(out.status.success(), "timeless trace failed:\n{o}{e}");
    assert!(!e.contains("tracing disabled"), "{e}");
    // Folded onto the available cores when they are fewer than 4.
    let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
    assert!(
        meta.contains("\"acquisition_mode\": \"regular: 4 ranks")
            || meta.contains("\"acquisition_mode\": \"folding: 4 ranks"),
        "{meta}"
    );

    // One reference speed, measured once by `timeless trace`, for every rank.
    let m: serde_json::Value = serde_json::from_str(&meta).expect("metadata is JSON");
    let source = m["reference_speed"]["source"].as_str().unwrap_or_default();
    assert!(
        source.starts_with("measured once by timeless trace"),
        "{source}"
    );
    let speeds: Vec<f64> = m["reference_speed"]["per_rank_flops_per_sec"]
        .as_array()
        .expect("per-rank speeds")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(speeds.len(), 4);
    assert!(
        speeds.iter().all(|&s| s == speeds[0] && s > 1e7),
        "{speeds:?}"
    );
    assert!(
        e.contains(&format!("timeless: reference speed {:.6e}", speeds[0])),
        "{e}"
    );

    // The program's lines come first, then the summary.
    let split = o.find("Traced 4 ranks into").expect("summary");
    let (program_out, summary) = o.split_at(split);
    assert!(program_out.contains(result), "{program_out}");
    assert_eq!(
        program_out,
        plain(&exe, 4, args),
        "the tracer changed the program's output"
    );
    let actions: u64 = summary
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no action count in:\n{summary}"));
    assert!(summary.contains("timeless simulate"), "{summary}");

    let list = dir.join("trace-list.txt");
    let platform = root().join("platforms/mycluster.xml");
    let uses_comms = (0..4).any(|r| {
        std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
            .unwrap()
            .contains(" comm_def ")
    });
    // As recorded, like `smpirun -replay` (no overhead compensation).
    let v = simulate_json(&list, program, &["--no-compensation"]);
    assert_eq!(
        v["actions"].as_u64(),
        Some(actions),
        "every action replayed"
    );
    let t = v["simulated_time"].as_f64().expect("simulated_time");
    assert!(t > 0.0, "{t}");
    if !uses_comms {
        let hosts: String = (0..4)
            .map(|i| format!("mycluster-{i}.mysite.fr\n"))
            .collect();
        if let Some(sg) = smpirun_time(&dir, 4, &platform, &hosts) {
            eprintln!("{program}: timeless {t} s, SimGrid {sg} s");
            assert!(
                ((t - sg) / sg).abs() < 1e-6,
                "{program}: timeless {t} s, SimGrid {sg} s"
            );
        }
    }
    dir
}

/// The tracer built against MPICH (`MPICC=mpicc.mpich`) into a target directory of its own,
/// once for the tests that need it; `None` when MPICH (`mpicc.mpich`, `mpirun.mpich`) is not
/// installed.
pub fn mpich_tracer() -> Option<&'static Path> {
    static LIB: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let have = |p: &str| Command::new(p).arg("-show").output().is_ok();
        if !have("mpicc.mpich")
            || Command::new("mpirun.mpich")
                .arg("--version")
                .output()
                .is_err()
        {
            return None;
        }
        let target = tmp().join("preload-mpich-target");
        let st = Command::new(env!("CARGO"))
            .current_dir(root())
            .env("MPICC", "mpicc.mpich")
            .args(["build", "-p", "timeless-preload", "--target-dir"])
            .arg(&target)
            .status()
            .expect("cargo build -p timeless-preload");
        assert!(st.success(), "building the tracer against MPICH failed");
        Some(target.join("debug/libtimeless_preload.so"))
    })
    .as_deref()
}

/// The MPICH tracer, or `None` with a notice that the `what` test is skipped.
pub fn mpich_tracer_or_skip(what: &str) -> Option<&'static Path> {
    let lib = mpich_tracer();
    if lib.is_none() {
        eprintln!("MPICH (mpicc.mpich, mpirun.mpich) not installed: {what} test skipped");
    }
    lib
}

/// `timeless trace -n <np> --launcher mpirun.mpich <flags> -o <dir> -- <exe> <args>` with the
/// MPICH tracer `lib`; panics with the output if tracing fails. Returns the standard output.
pub fn trace_mpich(
    lib: &Path,
    np: usize,
    flags: &[&str],
    dir: &Path,
    exe: &Path,
    args: &[&str],
) -> String {
    let traced = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .env("TIMELESS_PRELOAD", lib)
        .args(["trace", "-n", &np.to_string(), "--launcher", "mpirun.mpich"])
        .args(flags)
        .arg("-o")
        .arg(dir)
        .arg("--")
        .arg(exe)
        .args(args)
        .output()
        .expect("timeless trace");
    let (o, e) = text(&traced);
    assert!(
        traced.status.success(),
        "{} {args:?}:\n{o}{e}",
        exe.display()
    );
    o
}

/// The program's own output under MPICH (`mpirun.mpich -n <np>`), untraced.
pub fn plain_mpich(exe: &Path, np: usize) -> String {
    let plain = Command::new("mpirun.mpich")
        .args(["-n", &np.to_string()])
        .arg(exe)
        .output()
        .expect("mpirun.mpich");
    String::from_utf8_lossy(&plain.stdout).into_owned()
}

/// The action count of `timeless trace`'s summary (`<n> actions, <b> bytes of trace`).
pub fn summary_actions(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.trim().strip_suffix(" bytes of trace"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .expect("action count")
}

/// `timeless simulate <list> --platform platforms/mycluster.xml --format json <flags>`: the
/// report; panics with the error output if the simulation fails (`what` names the case).
pub fn simulate_json(list: &Path, what: &str, flags: &[&str]) -> serde_json::Value {
    let platform = root().join("platforms/mycluster.xml");
    let mut args = vec![
        "simulate",
        list.to_str().unwrap(),
        "--platform",
        platform.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(flags);
    let sim = timeless(&args);
    let (so, se) = text(&sim);
    assert!(sim.status.success(), "{what}: {se}");
    serde_json::from_str(&so).unwrap()
}
