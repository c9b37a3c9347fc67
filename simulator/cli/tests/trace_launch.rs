//! How `timeless trace` launches a traced run: folding onto fewer cores, a given reference
//! speed, scattered mode gathering the rank files over MPI, and the errors of a missing
//! program or tracer library.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::mpi::{text, timeless, MPI_JOBS};
use common::trace::{have_mpi, programs, tmp};

/// `timeless trace -n 2 <flags> -o <tmp>/<name> -- ring 2 1000 1000`, one MPI job at a time;
/// panics with the output if tracing fails. Returns the standard output and the directory.
fn trace_small_ring(name: &str, flags: &[&str]) -> (String, PathBuf) {
    let exe = programs().join("ring");
    let dir = tmp().join(name);
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let mut args = vec!["trace", "-n", "2"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-o", dir.to_str().unwrap(), "--", exe.to_str().unwrap()]);
    args.extend_from_slice(&["2", "1000", "1000"]);
    let out = timeless(&args);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    (o, dir)
}

#[test]
fn folding_confines_the_ranks_to_the_cores_it_names() {
    if !have_mpi() {
        return;
    }
    let (o, dir) = trace_small_ring("folded", &["--fold", "2"]);
    assert!(o.contains("Traced 2 ranks"), "{o}");
    let meta = std::fs::read_to_string(dir.join("trace-meta.json")).unwrap();
    assert!(
        meta.contains("\"acquisition_mode\": \"folding: 2 ranks on 1 core (2 ranks per core)\""),
        "{meta}"
    );
    // Each rank saw one allowed CPU (taskset on the launcher, no binding): the same one,
    // which the metadata names (the rate then shares that core between the two ranks).
    assert!(meta.contains("\"per_rank_allowed_cpus\": [1, 1]"), "{meta}");
    let m: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let cpus = m["per_rank_bound_cpu"]
        .as_array()
        .expect("per_rank_bound_cpu");
    assert_eq!(cpus.len(), 2, "{meta}");
    assert!(cpus[0].as_i64().is_some_and(|c| c >= 0), "{meta}");
    assert_eq!(cpus[0], cpus[1], "{meta}");
}

/// `--ref-speed` converts every rank's bursts with the given speed, and the metadata says so.
#[test]
fn a_given_reference_speed_reaches_every_rank() {
    if !have_mpi() {
        return;
    }
    let (_, dir) = trace_small_ring("ref-speed", &["--ref-speed", "2.5e9"]);
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
                "gathered over MPI: 7 files, {} bytes, {radix}-nomial tree in {rounds} rounds",
                (0..4)
                    .map(|r| std::fs::metadata(dir.join(format!("rank-{r}.txt")))
                        .unwrap()
                        .len())
                    .sum::<u64>()
                    + std::fs::metadata(dir.join("trace-list.txt")).unwrap().len()
                    + std::fs::metadata(dir.join("in-call-times.csv"))
                        .unwrap()
                        .len()
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

/// The traced program runs with the memory policy `timeless` itself inherited: the binary
/// turns transparent huge pages off for its own replays (`simulator/cli/src/memory.rs`), and
/// the flag is inherited across `exec`, so `trace` gives it back before it starts the run.
/// The program here (`grep` on its own status) is no MPI program: tracing then fails after it
/// ran, which does not matter to what it printed.
#[test]
fn the_traced_program_keeps_the_huge_page_policy() {
    if !have_mpi() {
        return;
    }
    let own = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let Some(line) = own.lines().find(|l| l.starts_with("THP_enabled:")) else {
        return; // a kernel before 5.0 does not report the flag
    };
    programs(); // the tracer library
    let dir = tmp().join("thp-policy");
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let out = timeless(&[
        "trace",
        "-n",
        "1",
        "-o",
        dir.to_str().unwrap(),
        "--",
        "grep",
        "THP_enabled",
        "/proc/self/status",
    ]);
    let (o, e) = text(&out);
    assert!(o.lines().any(|l| l == line), "expected '{line}':\n{o}{e}");
}
