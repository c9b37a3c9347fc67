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
use std::sync::{Mutex, OnceLock};

/// MPI jobs run one at a time (the machine may have two cores).
static MPI_JOBS: Mutex<()> = Mutex::new(());

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-cli")
}

fn have_mpi() -> bool {
    let ok = Command::new("mpicc").arg("--version").output().is_ok();
    if !ok {
        eprintln!("mpicc not installed: `timeless trace` tests skipped");
    }
    ok
}

/// The tracer library built by this test when the target directory has none.
static PRELOAD: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Builds the programs (once) and makes sure the tracer library exists.
fn programs() -> &'static Path {
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
            let target = tmp().join("preload-target");
            let st = Command::new(env!("CARGO"))
                .current_dir(root())
                .args(["build", "-p", "timeless-preload", "--target-dir"])
                .arg(&target)
                .status()
                .expect("cargo build -p timeless-preload");
            assert!(st.success(), "building the tracer library failed");
            Some(target.join("debug").join(lib))
        });
        let build = tmp().join("programs");
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

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn timeless(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timeless"));
    if let Some(Some(lib)) = PRELOAD.get() {
        cmd.env("TIMELESS_PRELOAD", lib);
    }
    cmd.current_dir(root())
        .args(args)
        .output()
        .expect("run timeless")
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

#[test]
fn scattered_mode_gathers_the_rank_files_of_the_hostfile_s_hosts() {
    if !have_mpi() {
        return;
    }
    let exe = programs().join("ring");
    let dir = tmp().join("scattered");
    std::fs::create_dir_all(tmp()).unwrap();
    let hostfile = tmp().join("hostfile-localhost");
    std::fs::write(&hostfile, "localhost slots=4\n").unwrap();
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let out = timeless(&[
        "trace",
        "-n",
        "4",
        "--hostfile",
        hostfile.to_str().unwrap(),
        "--gather",
        "-o",
        dir.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
    ]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(o.contains("Traced 4 ranks"), "{o}");
    let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
    assert!(
        meta.contains("\"acquisition_mode\": \"scattered: 4 ranks over the hosts of"),
        "{meta}"
    );
    for r in 0..4 {
        let t = std::fs::read_to_string(dir.join(format!("rank-{r}.txt"))).unwrap();
        assert!(t.ends_with(&format!("{r} finalize\n")), "rank {r}");
    }
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
