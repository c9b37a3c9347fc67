//! What the MPI test suites (`trace_*.rs`, `online.rs`...) share: building the MPI programs and
//! the tracer library once, running `timeless`, serialising MPI jobs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// MPI jobs run one at a time (the machine may have two cores).
pub static MPI_JOBS: Mutex<()> = Mutex::new(());

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `mpicc` is installed; if not, says that the tests of `what` are skipped.
pub fn have_mpi(what: &str) -> bool {
    let ok = Command::new("mpicc").arg("--version").output().is_ok();
    if !ok {
        eprintln!("mpicc not installed: {what} tests skipped");
    }
    ok
}

/// The tracer library built by this test when the target directory has none.
pub static PRELOAD: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Builds the programs (once per test binary) into `tmp`/programs and makes sure the tracer
/// library exists (built into `tmp`/preload-target when the target directory has none).
pub fn programs(tmp: &Path) -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_timeless"));
        let profile_dir = exe.parent().expect("target/<profile>");
        let lib = "libtimeless_preload.so";
        let present = profile_dir.join(lib).exists()
            || profile_dir.join("deps").join(lib).exists()
            || std::env::var_os("TIMELESS_PRELOAD").is_some();
        PRELOAD.get_or_init(|| {
            if present {
                return None;
            }
            let target = tmp.join("preload-target");
            let st = Command::new(env!("CARGO"))
                .current_dir(root())
                .args(["build", "-p", "timeless-preload", "--target-dir"])
                .arg(&target)
                .status()
                .expect("cargo build -p timeless-preload");
            assert!(st.success(), "building the tracer library failed");
            Some(target.join("debug").join(lib))
        });
        let build = tmp.join("programs");
        let out = Command::new("make")
            .arg("-C")
            .arg(root().join("validation/programs"))
            .arg(format!("BUILD={}", build.display()))
            .output()
            .expect("make");
        assert!(
            out.status.success(),
            "building the MPI programs failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        build
    })
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub fn timeless(args: &[&str]) -> Output {
    timeless_env(args, &[])
}

/// `timeless` with extra environment variables (passed on to the launcher, e.g. `OMPI_MCA_*`).
pub fn timeless_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timeless"));
    if let Some(Some(lib)) = PRELOAD.get() {
        cmd.env("TIMELESS_PRELOAD", lib);
    }
    cmd.envs(env.iter().copied())
        .current_dir(root())
        .args(args)
        .output()
        .expect("run timeless")
}

/// Traces `exe args` on `n` ranks into `dir` (removed first) with `--ref-speed 1e9` and the
/// extra `flags`, one MPI job at a time; panics with the output if tracing fails. Returns the
/// standard output.
pub fn trace_into(exe: &Path, args: &[&str], n: u32, dir: &Path, flags: &[&str]) -> String {
    trace_into_env(exe, args, n, dir, flags, &[])
}

/// [`trace_into`] with the launcher's environment extended by `env` (e.g. `OMPI_MCA_topo=basic`:
/// Open MPI 4.1's `treematch` topology component fails on graph communicators with more ranks
/// than cores).
pub fn trace_into_env(
    exe: &Path,
    args: &[&str],
    n: u32,
    dir: &Path,
    flags: &[&str],
    env: &[(&str, &str)],
) -> String {
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let _ = std::fs::remove_dir_all(dir);
    let n = n.to_string();
    let mut targs = vec!["trace", "-n", &n, "--ref-speed", "1e9"];
    targs.extend_from_slice(flags);
    targs.extend_from_slice(&["-o", dir.to_str().unwrap(), "--", exe.to_str().unwrap()]);
    targs.extend_from_slice(args);
    let out = timeless_env(&targs, env);
    let (o, e) = text(&out);
    assert!(out.status.success(), "tracing {}: {o}{e}", exe.display());
    o
}
