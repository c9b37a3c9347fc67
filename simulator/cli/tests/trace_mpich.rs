//! `timeless trace` with MPICH where it is installed next to Open MPI: the tracer built
//! against MPICH's library (`common::trace::mpich_tracer`), C and Fortran programs.

use std::process::Command;

mod common;

use common::mpi::{root, MPI_JOBS};
use common::trace::{
    mpich_tracer_or_skip, plain_mpich, simulate_json, summary_actions, tmp, trace_mpich,
};

/// MPICH, where it is installed next to Open MPI (Debian: `mpich libmpich-dev`, reached as
/// `mpicc.mpich` and `mpirun.mpich`): the tracer is built against MPICH's library
/// (`MPICC=mpicc.mpich`, which mpi-sys's probe and the shim's build honour) into a target
/// directory of its own, the C programs are compiled with `mpicc.mpich`, and `timeless trace
/// --launcher mpirun.mpich` traces them: same program output as untraced, MPICH named in the
/// metadata, the ring's records as under Open MPI, every action replayed. Then the Fortran
/// program (`use mpi`, compiled with `mpif90.mpich`): its records per kind as under Open MPI.
/// Skipped with a notice when MPICH is absent (`use mpi_f08` under MPICH is not supported: see
/// tracer/preload/README.md).
#[test]
fn mpich_traces_c_and_fortran_programs_when_installed() {
    let Some(lib) = mpich_tracer_or_skip("MPICH") else {
        return;
    };
    let build = tmp().join("programs-mpich");
    let out = Command::new("make")
        .arg("-C")
        .arg(root().join("validation/programs"))
        .arg(format!("BUILD={}", build.display()))
        .args(["MPICC=mpicc.mpich", "MPIF90=mpif90.mpich"])
        .args(
            ["ring", "stencil2d", "coverage", "fortran_mix"]
                .map(|p| format!("{}/{p}", build.display())),
        )
        .output()
        .expect("make");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    for (program, result) in [
        ("ring", "ring: 4 rounds of 1000000 bytes on 4 ranks"),
        ("stencil2d", "stencil2d: iteration 20"),
        ("coverage", "coverage: done on 4 ranks"),
        ("fortran_mix", "fortran_mix: done on 4 ranks"),
    ] {
        let exe = build.join(program);
        let dir = tmp().join(format!("mpich-{program}"));
        let o = trace_mpich(lib, 4, &[], &dir, &exe, &[]);
        let program_out = &o[..o.find("Traced 4 ranks into").expect("summary")];
        assert!(program_out.contains(result), "{program_out}");
        assert_eq!(program_out, plain_mpich(&exe, 4));
        let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
        assert!(meta.contains("\"mpi_library\": \"MPICH Version:"), "{meta}");
        if program == "ring" {
            assert!(
                o.contains("per kind: compute 36, finalize 4, init 4, recv 16, send 16"),
                "{o}"
            );
        }
        if program == "fortran_mix" {
            // As under Open MPI (tracer/preload/tests/traced.rs): 3 rounds of a blocking
            // ring and a 4-message exchange, then sendrecv, waitany, test, the collectives,
            // MPI_ALLTOALLW and a neighbour allgather on a periodic ring.
            for r in 0..4 {
                let t = std::fs::read_to_string(dir.join(format!("rank-{r}.txt"))).unwrap();
                let count = |kw: &str| {
                    t.lines()
                        .filter(|l| l.split_whitespace().nth(1) == Some(kw))
                        .count()
                };
                for (kw, n) in [
                    ("send", 3),
                    ("recv", 3),
                    ("isend", 11),
                    ("irecv", 11),
                    ("waitall", 3),
                    ("wait", 10),
                    ("alltoallv", 1),
                    ("comm_def", 2),
                ] {
                    assert_eq!(count(kw), n, "rank {r} {kw}:\n{t}");
                }
                assert!(t.contains(&format!("{r} alltoallv 16 4 4 4 4 16 4 4 4 4 6 6")));
            }
        }
        let actions = summary_actions(&o);
        let v = simulate_json(&dir.join("trace-list.txt"), program, &[]);
        assert_eq!(v["actions"].as_u64(), Some(actions), "{program}");
    }
}
