//! Compiles `src/shim.c` (constants `mpi.h` defines as macros) with the MPI compiler wrapper
//! (`$MPICC`, default `mpicc`), and probes whether that library has MPI-4 sessions
//! (`src/probe_sessions.c`): if it compiles, the crate is built with `cfg(mpi_sessions)` and
//! the session wrappers of `src/session.rs` exist. Open MPI 4.1 has no sessions: its build
//! exports none of those symbols.

use std::path::Path;
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-changed=src/probe_sessions.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rustc-check-cfg=cfg(mpi_sessions)");
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
    cc::Build::new()
        .compiler(&mpicc)
        .file("src/shim.c")
        .opt_level(2)
        .warnings(true)
        .compile("timeless_shim");
    if has_sessions(&mpicc) {
        println!("cargo:rustc-cfg=mpi_sessions");
    }
}

/// Whether `mpi.h` of `mpicc` declares the MPI-4 session functions the tracer wraps.
fn has_sessions(mpicc: &str) -> bool {
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let obj = Path::new(&out).join("probe_sessions.o");
    Command::new(mpicc)
        .args(["-c", "-o"])
        .arg(&obj)
        .arg("src/probe_sessions.c")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
