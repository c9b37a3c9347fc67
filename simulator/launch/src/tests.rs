//! Unit tests of the launcher line, the trace directory and the reference speed.

use std::path::Path;

use crate::*;

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

/// Issue 18, MPICH test suite (`init/session*`): a rank without a file names the calls that
/// start the tracer, MPI-4 sessions included.
#[test]
fn a_missing_rank_file_names_the_calls_that_start_the_tracer() {
    let e = LaunchError::MissingRank {
        rank: 0,
        path: Path::new("t/rank-0.txt").to_path_buf(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    assert_eq!(
        e.to_string(),
        "rank 0 wrote no trace (t/rank-0.txt is missing): was the tracer preloaded, and does the \
         program start MPI with MPI_Init, MPI_Init_thread or MPI_Session_init?"
    );
}

/// A sessions program (it imports `MPI_Session_init`) traced with a tracer library built
/// without sessions (Open MPI 4.1's): the missing rank file is explained as such, naming both
/// files and the build that supports it. With a tracer that exports the symbol, or a program
/// that does not import it, the error is left as it is.
#[test]
fn a_sessions_program_with_a_tracer_without_sessions_is_explained() {
    let dir = std::env::temp_dir().join(format!("timeless-sessions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (program, plain, with, without) = (
        dir.join("prog"),
        dir.join("plain"),
        dir.join("with.so"),
        dir.join("without.so"),
    );
    // Dynamic string tables: NUL-separated names.
    std::fs::write(
        &program,
        b"\x7fELF..\0MPI_Comm_rank\0MPI_Session_init\0MPI_Send\0",
    )
    .unwrap();
    std::fs::write(&plain, b"\x7fELF..\0MPI_Init\0MPI_Session_initialize\0").unwrap();
    std::fs::write(&with, b"\0MPI_Session_finalize\0MPI_Session_init\0").unwrap();
    std::fs::write(&without, b"\0MPI_Init\0MPI_Send\0").unwrap();
    assert!(names_symbol(&program, "MPI_Session_init"));
    assert!(
        !names_symbol(&plain, "MPI_Session_init"),
        "a longer name is not the symbol"
    );
    assert!(!names_symbol(&dir.join("absent"), "MPI_Session_init"));
    let missing = || LaunchError::MissingRank {
        rank: 0,
        path: dir.join("rank-0.txt"),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    let run = |program: &Path, preload: &Path| TracedRun {
        out: dir.clone(),
        profile_db: None,
        flowgraph: None,
        program: Some(program.to_path_buf()),
        preload: preload.to_path_buf(),
    };
    let e = run(&program, &without).explain(missing());
    assert!(matches!(e, LaunchError::SessionsNotSupported { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "the program {} uses MPI-4 sessions (MPI_Session_init) but the tracer library {} was \
             built against an MPI library without them",
            program.display(),
            without.display()
        )),
        "{text}"
    );
    assert!(text.contains("MPICC=mpicc.mpich"), "{text}");
    for (p, l) in [(&program, &with), (&plain, &without)] {
        let e = run(p, l).explain(missing());
        assert!(matches!(e, LaunchError::MissingRank { .. }), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
