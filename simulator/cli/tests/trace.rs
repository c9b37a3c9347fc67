//! `timeless trace` on the MPI programs of `validation/programs`, then `timeless simulate` on
//! each trace: the tracer must not change what the program prints, every rank file must end
//! with `finalize`, and the replay must replay every recorded action (sub-communicator traces
//! included, through the communicator extension). World-only traces are also replayed by
//! SimGrid 3.32 (`smpirun -replay`, when installed) on the same platform:
//! both simulated times must agree to 1e-6 relative.
//!
//! Needs `mpicc`, `mpif90` and `mpirun`; skipped with a notice when `mpicc` is absent. The
//! tracer library is the one `cargo test --workspace` builds; when it is absent (`cargo test -p
//! timeless` on a fresh target directory) it is built with `cargo build -p timeless-preload`
//! into a target directory of its own (the main one is locked by the running `cargo test`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::mpi::{root, text, timeless, MPI_JOBS, PRELOAD};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-cli")
}

fn have_mpi() -> bool {
    common::mpi::have_mpi("`timeless trace`")
}

/// Builds the programs (once) and makes sure the tracer library exists.
fn programs() -> &'static Path {
    common::mpi::programs(&tmp())
}

/// The program's own output, run without the tracer.
fn plain(program: &Path, np: usize, args: &[&str]) -> String {
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
fn smpirun_time(dir: &Path, np: usize, platform: &Path, hostfile: &str) -> Option<f64> {
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
fn trace_and_simulate(program: &str, args: &[&str], result: &str) -> PathBuf {
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
    let sim = timeless(&[
        "simulate",
        list.to_str().unwrap(),
        "--platform",
        platform.to_str().unwrap(),
        "--format",
        "json",
        // As recorded, like `smpirun -replay` (no overhead compensation).
        "--no-compensation",
    ]);
    let (so, se) = text(&sim);
    let uses_comms = (0..4).any(|r| {
        std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
            .unwrap()
            .contains(" comm_def ")
    });
    assert!(sim.status.success(), "timeless simulate failed:\n{se}");
    let v: serde_json::Value = serde_json::from_str(&so).expect("json report");
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

#[test]
fn ring() {
    if have_mpi() {
        trace_and_simulate("ring", &[], "ring: 4 rounds of 1000000 bytes on 4 ranks");
    }
}

#[test]
fn stencil2d() {
    if have_mpi() {
        trace_and_simulate(
            "stencil2d",
            &["32", "10"],
            "stencil2d: iteration 10 residual",
        );
    }
}

#[test]
fn pi_mc() {
    if have_mpi() {
        trace_and_simulate("pi_mc", &["24", "20000"], "pi_mc: 480000 samples");
    }
}

#[test]
fn coverage() {
    if have_mpi() {
        trace_and_simulate("coverage", &[], "coverage: done on 4 ranks, checksum");
    }
}

#[test]
fn fortran_mix() {
    if have_mpi() {
        trace_and_simulate("fortran_mix", &["3"], "fortran_mix: done on 4 ranks, sum");
    }
}

#[test]
fn fortran_f08() {
    if have_mpi() {
        trace_and_simulate("fortran_f08", &[], "fortran_f08: done on 4 ranks, sum");
    }
}

#[test]
fn wavefront() {
    if have_mpi() {
        trace_and_simulate("wavefront", &[], "wavefront: 4 ranks on a 2x2 grid");
    }
}

#[test]
fn commsplit() {
    if have_mpi() {
        trace_and_simulate(
            "commsplit",
            &[],
            "commsplit: 4 ranks on a 2x2 grid, 2 rounds",
        );
    }
}

#[test]
fn persistent() {
    if have_mpi() {
        trace_and_simulate(
            "persistent",
            &[],
            "persistent: 4 ranks, 5 iterations, total",
        );
    }
}

#[test]
fn tracing_control() {
    if have_mpi() {
        trace_and_simulate("tracing_control", &[], "tracing_control: 4 ranks, checksum");
    }
}

#[test]
fn fortran_control() {
    if have_mpi() {
        trace_and_simulate("fortran_control", &[], "fortran_control: 4 ranks, checksum");
    }
}

#[test]
fn folding_confines_the_ranks_to_the_cores_it_names() {
    if !have_mpi() {
        return;
    }
    let exe = programs().join("ring");
    let dir = tmp().join("folded");
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let out = timeless(&[
        "trace",
        "-n",
        "2",
        "--fold",
        "2",
        "-o",
        dir.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "2",
        "1000",
        "1000",
    ]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(o.contains("Traced 2 ranks"), "{o}");
    let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
    assert!(
        meta.contains("\"acquisition_mode\": \"folding: 2 ranks on 1 core (2 ranks per core)\""),
        "{meta}"
    );
    // Each rank saw one allowed CPU (taskset on the launcher, no binding).
    assert!(meta.contains("\"per_rank_allowed_cpus\": [1, 1]"), "{meta}");
}

/// `--ref-speed` converts every rank's bursts with the given speed, and the metadata says so.
#[test]
fn a_given_reference_speed_reaches_every_rank() {
    if !have_mpi() {
        return;
    }
    let exe = programs().join("ring");
    let dir = tmp().join("ref-speed");
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let out = timeless(&[
        "trace",
        "-n",
        "2",
        "--ref-speed",
        "2.5e9",
        "-o",
        dir.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "2",
        "1000",
        "1000",
    ]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trace-meta.json")).unwrap())
            .unwrap();
    assert_eq!(
        m["reference_speed"]["source"],
        "--ref-speed given to timeless trace"
    );
    assert_eq!(
        m["reference_speed"]["per_rank_flops_per_sec"],
        serde_json::json!([2.5e9, 2.5e9])
    );
    assert_eq!(m["hosts"][0]["reference_speed_flops_per_sec"], 2.5e9);
    // No kernel ran in the ranks.
    assert_eq!(
        m["reference_speed"]["per_rank_kernel_cpu_secs"],
        serde_json::json!([0.0, 0.0])
    );
    let r0 = std::fs::read_to_string(dir.join("rank-0.txt")).unwrap();
    assert!(r0.contains("x 2.5e9 flop/s"), "{r0}");
}

/// Scattered mode with `--gather` on a localhost hostfile: the ranks write to a node-local
/// temporary directory and the tracer moves the files into `-o` over MPI at `MPI_Finalize`
/// (4 ranks, radix 4: one round; radix 2: two), leaving no temporary directory behind.
#[test]
fn scattered_mode_gathers_the_rank_files_over_mpi() {
    if !have_mpi() {
        return;
    }
    let exe = programs().join("ring");
    std::fs::create_dir_all(tmp()).unwrap();
    let hostfile = tmp().join("hostfile-localhost");
    std::fs::write(&hostfile, "localhost slots=4\n").unwrap();
    for (radix, rounds) in [("4", 1), ("2", 2)] {
        let dir = tmp().join(format!("scattered-{radix}"));
        let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
        let out = timeless(&[
            "trace",
            "-n",
            "4",
            "--hostfile",
            hostfile.to_str().unwrap(),
            "--gather",
            "--gather-radix",
            radix,
            "-o",
            dir.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ]);
        let (o, e) = text(&out);
        assert!(out.status.success(), "{o}{e}");
        assert!(o.contains("Traced 4 ranks"), "{o}");
        assert!(
            o.contains(&format!(
                "gathered over MPI: 6 files, {} bytes, {radix}-nomial tree in {rounds} rounds",
                (0..4)
                    .map(|r| std::fs::metadata(dir.join(format!("rank-{r}.txt")))
                        .unwrap()
                        .len())
                    .sum::<u64>()
                    + std::fs::metadata(dir.join("trace-list.txt")).unwrap().len()
                    + gathered_meta_len(&dir)
            )),
            "{o}"
        );
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("trace-meta.json")).unwrap())
                .unwrap();
        assert!(
            m["acquisition_mode"]
                .as_str()
                .unwrap()
                .starts_with("scattered: 4 ranks over the hosts of"),
            "{m}"
        );
        assert_eq!(m["gather"]["rounds"], rounds);
        // Each host measured its own reference speed.
        assert!(m["reference_speed"]["source"]
            .as_str()
            .unwrap()
            .starts_with("reference kernel run by every rank"));
        let local = m["trace_directory"].as_str().unwrap();
        assert!(local.contains("timeless-trace-"), "{local}");
        assert!(!Path::new(local).exists(), "{local} left behind");
        for r in 0..4 {
            let t = std::fs::read_to_string(dir.join(format!("rank-{r}.txt"))).unwrap();
            assert!(t.ends_with(&format!("{r} finalize\n")), "rank {r}");
        }
    }
}

/// Size of the metadata file as rank 0 sent it: the gathered file without the `gather` member
/// the tracer appended.
fn gathered_meta_len(dir: &Path) -> u64 {
    let text = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
    let cut = text.find(",\n  \"gather\": {").expect("a gather member");
    (text[..cut].len() + "\n}\n".len()) as u64
}

/// The committed sub-communicator trace (traces/commsplit4, see its README): every action
/// line is replayed, and the report is the same bytes on a second run.
#[test]
fn the_committed_commsplit_trace_replays_every_action() {
    let dir = root().join("traces/commsplit4");
    let actions: usize = (0..4)
        .map(|r| {
            std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .count()
        })
        .sum();
    let run = || {
        timeless(&[
            "simulate",
            "traces/commsplit4/trace-list.txt",
            "--platform",
            "platforms/mycluster.xml",
            "--format",
            "json",
        ])
    };
    let (a, b) = (run(), run());
    let (o, e) = text(&a);
    assert!(a.status.success(), "{e}");
    assert_eq!(a.stdout, b.stdout, "same inputs, same bytes");
    let v: serde_json::Value = serde_json::from_str(&o).expect("json");
    assert_eq!(v["actions"].as_u64(), Some(actions as u64));
}

#[test]
fn a_missing_program_is_reported_with_the_launcher_s_failure() {
    if !have_mpi() {
        return;
    }
    programs();
    let dir = tmp().join("missing");
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let out = timeless(&[
        "trace",
        "-n",
        "2",
        "-o",
        dir.to_str().unwrap(),
        "--",
        "/nonexistent/program",
    ]);
    let (_, e) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("the traced program failed"), "{e}");
}

#[test]
fn a_missing_tracer_library_names_the_build_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .env("TIMELESS_PRELOAD", "/nonexistent/libtimeless_preload.so")
        .args(["trace", "-n", "2", "--", "true"])
        .output()
        .expect("run");
    let (_, e) = text(&out);
    if e.contains("no MPI launcher") {
        return; // checked before the library
    }
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("TIMELESS_PRELOAD"), "{e}");
}

/// The tracer built against MPICH (`MPICC=mpicc.mpich`) into a target directory of its own,
/// once for the tests that need it; `None` when MPICH (`mpicc.mpich`, `mpirun.mpich`) is not
/// installed.
fn mpich_tracer() -> Option<&'static Path> {
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
    let Some(lib) = mpich_tracer() else {
        eprintln!("MPICH (mpicc.mpich, mpirun.mpich) not installed: MPICH test skipped");
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
        let traced = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .env("TIMELESS_PRELOAD", lib)
            .args(["trace", "-n", "4", "--launcher", "mpirun.mpich", "-o"])
            .arg(&dir)
            .arg("--")
            .arg(&exe)
            .output()
            .expect("timeless trace");
        let (o, e) = text(&traced);
        assert!(traced.status.success(), "{program}:\n{o}{e}");
        let plain = Command::new("mpirun.mpich")
            .args(["-n", "4"])
            .arg(&exe)
            .output()
            .expect("mpirun.mpich");
        let program_out = &o[..o.find("Traced 4 ranks into").expect("summary")];
        assert!(program_out.contains(result), "{program_out}");
        assert_eq!(program_out, String::from_utf8_lossy(&plain.stdout));
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
        let actions: u64 = o
            .lines()
            .find_map(|l| l.trim().strip_suffix(" bytes of trace"))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .expect("action count");
        let sim = timeless(&[
            "simulate",
            dir.join("trace-list.txt").to_str().unwrap(),
            "--platform",
            root().join("platforms/mycluster.xml").to_str().unwrap(),
            "--format",
            "json",
        ]);
        let (so, se) = text(&sim);
        assert!(sim.status.success(), "{program}: {se}");
        let v: serde_json::Value = serde_json::from_str(&so).unwrap();
        assert_eq!(v["actions"].as_u64(), Some(actions), "{program}");
    }
}

/// Builds `programs` of validation/programs with MPICH's `mpicc.mpich` into `build`; `None`
/// (with a notice) when MPICH has no MPI-4 sessions (before 4.0), which the Makefile reports.
fn mpich_sessions_programs(build: &Path, programs: &[&str]) -> Option<()> {
    let out = Command::new("make")
        .arg("-C")
        .arg(root().join("validation/programs"))
        .arg(format!("BUILD={}", build.display()))
        .arg("MPICC=mpicc.mpich")
        .args(programs.iter().map(|p| format!("{}/{p}", build.display())))
        .output()
        .expect("make");
    let (o, e) = text(&out);
    if o.contains("sessions: not built") {
        eprintln!("mpicc.mpich has no MPI-4 sessions (MPICH < 4.0): sessions test skipped\n{o}");
        return None;
    }
    assert!(out.status.success(), "{o}{e}");
    Some(())
}

/// Each rank's lines other than `compute` and comments.
fn records_but_compute(dir: &Path, np: usize) -> Vec<Vec<String>> {
    (0..np)
        .map(|r| {
            std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#') && l.split_whitespace().nth(1) != Some("compute"))
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// Issue 18: an MPI-4 sessions program (validation/programs/sessions.c: `MPI_Session_init`,
/// never `MPI_Init`) under MPICH >= 4.0 is traced in the ranks of the `mpi://WORLD` process set,
/// its communicators made with `MPI_Comm_create_from_group` described by `comm_def` records,
/// and the trace replays. Skipped with a notice without MPICH >= 4.0.
///
/// Expected records of world rank r of 4 (compute left out), from the program: three
/// communicators, 1 = the WORLD process set {0,1,2,3}, 2 = SELF {r}, 3 = the world group
/// reversed {3,2,1,0}; then 4 rounds of the ring on comm 3, whose rank k is world rank 3-k:
/// rank k sends to comm rank k+1 (world rank 3-(k+1 mod 4)) and receives from k-1 (world
/// 3-(k-1 mod 4)), comm rank 0 (world 3) sending first; one int to itself on comm 2 (`irecv`,
/// `send`, `wait`, tag 1, datatype id 1 = `MPI_INT`); `MPI_Reduce` of one int to root 0 on comm 1.
///
/// Replay on platforms/mycluster.xml (README "Worked example"): one 1e6-byte message between two
/// hosts takes 11.6436 x 3 x 16.67 us (latency x `smpi/lat-factor`) + (1e6 + 16) B /
/// (0.940694 x 125e6 B/s) (`smpi/bw-factor`) = 0.582296 ms + 8.504496 ms = 9.086792 ms, and the
/// ring is serial: 4 rounds x 4 hops = 16 messages, 145.388673 ms when the ring's records are
/// replayed alone (the trace without its compute, self message and reduce).
#[test]
fn a_sessions_program_is_traced_in_the_ranks_of_the_world_process_set() {
    let Some(lib) = mpich_tracer() else {
        eprintln!("MPICH (mpicc.mpich, mpirun.mpich) not installed: sessions test skipped");
        return;
    };
    let build = tmp().join("programs-mpich-sessions");
    if mpich_sessions_programs(&build, &["sessions"]).is_none() {
        return;
    }
    let exe = build.join("sessions");
    let dir = tmp().join("mpich-sessions");
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let traced = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .env("TIMELESS_PRELOAD", lib)
        .args([
            "trace",
            "-n",
            "4",
            "--launcher",
            "mpirun.mpich",
            "--ref-speed",
            "1e9",
        ])
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(&exe)
        .output()
        .expect("timeless trace");
    let (o, e) = text(&traced);
    assert!(traced.status.success(), "{o}{e}");
    let plain = Command::new("mpirun.mpich")
        .args(["-n", "4"])
        .arg(&exe)
        .output()
        .expect("mpirun.mpich");
    let program_out = &o[..o.find("Traced 4 ranks into").expect("summary")];
    assert_eq!(
        program_out,
        "sessions: 4 rounds of 1000000 bytes on 4 ranks, reversed ring, rank sum 6: ok\n"
    );
    assert_eq!(program_out, String::from_utf8_lossy(&plain.stdout));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trace-meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["started_by"], "MPI_Session_init");
    assert!(meta["world"]
        .as_str()
        .unwrap()
        .starts_with("the mpi://WORLD process set"));
    // 16 ring messages of 1e6 bytes and 4 self messages of one 4-byte int.
    assert!(o.contains(" 16000016 point-to-point bytes sent, "), "{o}");
    let records = records_but_compute(&dir, 4);
    for (r, lines) in records.iter().enumerate() {
        let k = 3 - r; // rank in the reversed communicator
        let (next, prev) = (3 - (k + 1) % 4, 3 - (k + 3) % 4);
        let send = format!("{r} send {next} 0 1000000 6 comm=3");
        let recv = format!("{r} recv {prev} 0 1000000 6 comm=3");
        let mut want = vec![
            format!("{r} init"),
            format!("{r} comm_def 1 4 0 1 2 3"),
            format!("{r} comm_def 2 1 {r}"),
            format!("{r} comm_def 3 4 3 2 1 0"),
        ];
        for _ in 0..4 {
            if k == 0 {
                want.extend([send.clone(), recv.clone()]);
            } else {
                want.extend([recv.clone(), send.clone()]);
            }
        }
        want.extend([
            format!("{r} irecv {r} 1 1 1 comm=2"),
            format!("{r} send {r} 1 1 1 comm=2"),
            format!("{r} wait {r} {r} 1 comm=2"),
            format!("{r} reduce 1 0 0 1 comm=1"),
            format!("{r} finalize"),
        ]);
        assert_eq!(lines, &want, "rank {r}");
    }
    // The whole trace replays, every action.
    let actions: u64 = o
        .lines()
        .find_map(|l| l.trim().strip_suffix(" bytes of trace"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .expect("action count");
    let platform = root().join("platforms/mycluster.xml");
    let simulate = |list: &Path| {
        let sim = timeless(&[
            "simulate",
            list.to_str().unwrap(),
            "--platform",
            platform.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let (so, se) = text(&sim);
        assert!(sim.status.success(), "{se}");
        serde_json::from_str::<serde_json::Value>(&so).unwrap()
    };
    let v = simulate(&dir.join("trace-list.txt"));
    assert_eq!(v["actions"].as_u64(), Some(actions));
    // The ring alone: the records above without the self message and the reduce.
    let ring = tmp().join("mpich-sessions-ring");
    std::fs::create_dir_all(&ring).unwrap();
    for (r, lines) in records.iter().enumerate() {
        let kept: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !l.ends_with("comm=2") && !l.contains(" reduce "))
            .collect();
        std::fs::write(ring.join(format!("rank-{r}.txt")), kept.join("\n") + "\n").unwrap();
    }
    std::fs::copy(dir.join("trace-list.txt"), ring.join("trace-list.txt")).unwrap();
    let v = simulate(&ring.join("trace-list.txt"));
    let hop = 11.6436 * 3.0 * 16.67e-6 + 1_000_016.0 / (0.940694 * 125e6);
    let want = 16.0 * hop; // 0.145388672849 s
    let got = v["simulated_time"].as_f64().unwrap();
    assert!(
        ((got - want) / want).abs() < 1e-9,
        "ring replay {got} s, hand-derived {want} s"
    );
    assert_eq!(v["actions"].as_u64(), Some(4 * (4 + 8 + 1)));
}

/// A program mixing sessions and the world model (validation/programs/sessions_mixed.c) in
/// the three orders of its argument, under MPICH >= 4.0: the tracer starts at the first of
/// `MPI_Session_init` and `MPI_Init` and ends at the last of `MPI_Session_finalize` and
/// `MPI_Finalize`, so every rank records, in program order, the session communicator's
/// `comm_def` (id 1, the world process set {0,1}), its barrier, the `MPI_COMM_WORLD` barrier,
/// the session communicator's second barrier, and `finalize` ("sf": the last barrier comes
/// after `MPI_Finalize`, while the session is still open). Skipped without MPICH >= 4.0.
#[test]
fn a_program_mixing_sessions_and_mpi_init_is_traced_from_the_first_start_to_the_last_end() {
    let Some(lib) = mpich_tracer() else {
        eprintln!("MPICH (mpicc.mpich, mpirun.mpich) not installed: sessions test skipped");
        return;
    };
    let build = tmp().join("programs-mpich-sessions");
    if mpich_sessions_programs(&build, &["sessions_mixed"]).is_none() {
        return;
    }
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    for (order, started_by) in [
        ("si", "MPI_Session_init"),
        ("sf", "MPI_Session_init"),
        ("is", "MPI_Init"),
    ] {
        let dir = tmp().join(format!("mpich-sessions-mixed-{order}"));
        let traced = Command::new(env!("CARGO_BIN_EXE_timeless"))
            .env("TIMELESS_PRELOAD", lib)
            .args([
                "trace",
                "-n",
                "2",
                "--launcher",
                "mpirun.mpich",
                "--ref-speed",
                "1e9",
            ])
            .arg("-o")
            .arg(&dir)
            .arg("--")
            .arg(build.join("sessions_mixed"))
            .arg(order)
            .output()
            .expect("timeless trace");
        let (o, e) = text(&traced);
        assert!(traced.status.success(), "{order}: {o}{e}");
        assert!(
            o.starts_with(&format!("sessions_mixed {order}: done\n")),
            "{o}"
        );
        let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
        assert!(
            meta.contains(&format!("\"started_by\": \"{started_by}\"")),
            "{order}: {meta}"
        );
        for (r, lines) in records_but_compute(&dir, 2).iter().enumerate() {
            let want: Vec<String> = [
                "init",
                "comm_def 1 2 0 1",
                "barrier comm=1",
                "barrier",
                "barrier comm=1",
                "finalize",
            ]
            .iter()
            .map(|l| format!("{r} {l}"))
            .collect();
            assert_eq!(lines, &want, "{order}: rank {r}");
        }
    }
}

/// `timeless trace -n 2 --ref-speed 1e9 <extra> -- ring 4 1000 10000000` with `env` added:
/// the run's output, its metadata, and each rank's record lines (comments left out).
fn traced_ring(
    name: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Output, serde_json::Value, Vec<Vec<String>>) {
    let exe = programs().join("ring");
    let dir = tmp().join(name);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timeless"));
    if let Some(Some(lib)) = PRELOAD.get() {
        cmd.env("TIMELESS_PRELOAD", lib);
    }
    cmd.current_dir(root())
        .env_remove("TIMELESS_COUNTERS")
        .env_remove("TIMELESS_COUNTERS_TEST_EVENT")
        .envs(env.iter().copied())
        .args(["trace", "-n", "2", "--ref-speed", "1e9"])
        .args(extra)
        .arg("-o")
        .arg(&dir)
        .arg("--")
        .arg(&exe)
        .args(["4", "1000", "10000000"]);
    let out = cmd.output().expect("run timeless trace");
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(o.contains("ring: 4 rounds of 1000 bytes on 2 ranks"), "{o}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trace-meta.json")).unwrap())
            .unwrap();
    let lines = (0..2)
        .map(|r| {
            std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect()
        })
        .collect();
    (out, meta, lines)
}

/// The records other than `compute`: bursts under the minimum (1 µs of CPU) carry over to the
/// next one, so whether a tiny burst between two calls gets a record of its own depends on
/// timing, in either mode.
fn communication(lines: &[Vec<String>]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|r| {
            r.iter()
                .filter(|l| l.split_whitespace().nth(1) != Some("compute"))
                .cloned()
                .collect()
        })
        .collect()
}

/// Volumes of the compute records of at least `min` flops, per rank.
fn large_bursts(lines: &[Vec<String>], min: f64) -> Vec<Vec<f64>> {
    lines
        .iter()
        .map(|r| {
            r.iter()
                .filter_map(|l| l.strip_prefix(|c: char| c.is_ascii_digit()))
                .filter_map(|l| l.trim().strip_prefix("compute "))
                .map(|v| v.parse::<f64>().unwrap())
                .filter(|&v| v >= min)
                .collect()
        })
        .collect()
}

/// `--counters` on a machine without hardware counters (this VM: `perf_event_open` fails with
/// ENOENT): the run completes, one notice names the errno and says CPU time is used, the
/// summary and the metadata say so, and the trace is an ordinary one (same records other than
/// `compute`, the same four 10 Mflop bursts per rank). On a machine with counters, the
/// metadata names the instruction counter and its ratio instead, and no notice is written.
#[test]
fn counters_fall_back_to_cpu_time_with_one_notice_where_the_machine_has_none() {
    if !have_mpi() {
        return;
    }
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let (_, plain_meta, plain) = traced_ring("counters-off", &[], &[]);
    assert_eq!(plain_meta["compute_volume"]["requested"], false);
    assert_eq!(plain_meta["compute_volume"]["source"], "thread CPU time");
    let (out, meta, counted) = traced_ring("counters-on", &["--counters"], &[]);
    let (o, e) = text(&out);
    let cv = &meta["compute_volume"];
    assert_eq!(cv["requested"], "instructions");
    let notices: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("hardware counters requested"))
        .collect();
    if cv["source"] == "thread CPU time" {
        assert_eq!(notices.len(), 1, "one notice for the run:\n{e}");
        let n = notices[0];
        assert!(n.starts_with("timeless-preload: "), "{n}");
        assert!(
            n.contains(
                "perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) failed on 2 of 2 ranks with errno "
            ),
            "{n}"
        );
        assert!(
            n.ends_with("compute volumes are thread CPU time x reference speed instead"),
            "{n}"
        );
        let fallback = cv["fallback"].as_str().unwrap();
        assert!(n.ends_with(fallback), "{n} / {fallback}");
        assert!(
            o.contains(&format!("  counters not used: {fallback}")),
            "{o}"
        );
        assert_eq!(
            meta["volume_units"]["compute"],
            "flops: thread CPU seconds of the burst x the host's reference speed"
        );
    } else {
        assert_eq!(cv["source"], "hardware counter");
        assert!(notices.is_empty(), "{e}");
        let ratio = cv["flops_per_instruction_rank_0"].as_f64().unwrap();
        assert!(ratio > 0.05 && ratio < 2.0, "{ratio}");
        assert!(o.contains("compute volumes from hardware counters"), "{o}");
    }
    assert_eq!(communication(&counted), communication(&plain));
    // ring.c's compute(1e7) per round: 4 bursts of at least 1e6 flops per rank in both.
    for bursts in [large_bursts(&plain, 1e6), large_bursts(&counted, 1e6)] {
        assert!(bursts.iter().all(|b| b.len() == 4), "{bursts:?}");
    }
}

/// The counter path end to end on a machine without hardware counters, with the software
/// event `PERF_COUNT_SW_TASK_CLOCK` (CPU nanoseconds) standing in for instructions
/// (`TIMELESS_COUNTERS_TEST_EVENT=task-clock`). Every rank opens its counter, so no notice;
/// the kernel's "flops per instruction" is its flops per CPU nanosecond, so a burst of `n` ns
/// is `n × ratio` flops and `volume / ratio` is the burst's CPU time in ns. Both ranks'
/// 10 Mflop bursts must then take the same CPU time as the CPU-clock trace's (its volumes at
/// --ref-speed 1e9 are ns too), within 30 % (two runs on a shared machine).
#[test]
fn the_counter_path_with_a_software_stand_in_gives_cpu_time_volumes() {
    if !have_mpi() {
        return;
    }
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let (_, _, plain) = traced_ring("counters-stand-in-off", &[], &[]);
    let (out, meta, counted) = traced_ring(
        "counters-stand-in",
        &["--counters"],
        &[("TIMELESS_COUNTERS_TEST_EVENT", "task-clock")],
    );
    let (o, e) = text(&out);
    if meta["compute_volume"]["source"] != "hardware counter" {
        eprintln!("software perf events unavailable too: stand-in test skipped ({e})");
        return;
    }
    assert!(!e.contains("hardware counters requested"), "{e}");
    let cv = &meta["compute_volume"];
    assert!(
        cv["counter"]
            .as_str()
            .unwrap()
            .starts_with("PERF_COUNT_SW_TASK_CLOCK"),
        "{cv}"
    );
    let ratios: Vec<f64> = cv["per_rank_flops_per_instruction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    // Flops per CPU ns of the scalar daxpy: between 0.01 (10 Mflop/s) and 100 (100 Gflop/s).
    assert!(ratios.iter().all(|&r| r > 0.01 && r < 100.0), "{ratios:?}");
    let ratio = cv["flops_per_instruction_rank_0"].as_f64().unwrap();
    assert!(
        o.contains(&format!("instructions x {ratio:e} flops per instruction")),
        "{o}"
    );
    assert_eq!(
        meta["volume_units"]["compute"],
        "flops: user-space instructions of the burst x the reference kernel's flops per \
         instruction (compute_volume)"
    );
    assert_eq!(communication(&counted), communication(&plain));
    let cpu_ns = |bursts: Vec<Vec<f64>>, per_ns: f64| -> Vec<f64> {
        bursts.into_iter().flatten().map(|v| v / per_ns).collect()
    };
    // Plain: 1e9 flop/s is 1 flop per ns.
    let plain_ns = cpu_ns(large_bursts(&plain, 1e6), 1.0);
    let counted_ns = cpu_ns(large_bursts(&counted, 1e6 * ratio), ratio);
    assert_eq!(
        (plain_ns.len(), counted_ns.len()),
        (8, 8),
        "{plain_ns:?} {counted_ns:?}"
    );
    let (p, c) = (plain_ns.iter().sum::<f64>(), counted_ns.iter().sum::<f64>());
    assert!((c / p - 1.0).abs() < 0.3, "CPU ns: counted {c}, plain {p}");
    let rank0 = std::fs::read_to_string(tmp().join("counters-stand-in/rank-0.txt")).unwrap();
    assert!(
        rank0.contains("intervals counted, 0 measured with the CPU clock instead"),
        "{rank0}"
    );
}
