//! `timeless trace --compress` (online compression in the tracer, merged over MPI at
//! `MPI_Finalize`) on the MPI programs of `validation/programs`. For each run, the compressed
//! file `trace.tlg` written by rank 0 must
//! * decompress (`timeless decompress`) to exactly the actions, communicators included, of the
//!   text trace written in the same run (lossless, `--precision 0`);
//! * be the file `timeless compress` makes from that text trace (the online merge pairs ranks
//!   as the offline one does, then the same final pass and metadata): `timeless stats` gives
//!   the same numbers and the same bytes per part, but for the volume blocks, which the tracer
//!   compresses at a faster zstd level;
//! * give the same simulated time as the text trace (`timeless simulate`, as recorded and with
//!   overhead compensation from the metadata, which the file embeds).
//!
//! 4 ranks (one merge round pairing 0-1 and 2-3, then 0-2), 3 ranks (rank 2 idle in round 0)
//! and 8 ranks (three rounds). Needs `mpicc`, `mpif90` and `mpirun`; skipped with a notice
//! when `mpicc` is absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use timeless_trace::{Action, TraceSource};

mod common;

use common::mpi::{root, text, timeless, MPI_JOBS, PRELOAD};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("online-cli")
}

fn have_mpi() -> bool {
    common::mpi::have_mpi("`timeless trace --compress`")
}

/// Builds the programs (once) and makes sure the tracer library exists.
fn programs() -> &'static Path {
    common::mpi::programs(&tmp())
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Runs `timeless trace -n np <extra> -o dir -- program args` and checks it succeeded, printed
/// `result`, and nothing disabled the tracer or the compression.
fn trace(program: &str, np: usize, args: &[&str], extra: &[&str], result: &str) -> PathBuf {
    let exe = programs().join(program);
    let dir = tmp().join(format!("{program}-{np}{}", extra.join("")));
    let np_s = np.to_string();
    let mut targs = vec!["trace", "-n", &np_s];
    targs.extend(extra);
    targs.extend(["-o", s(&dir), "--", s(&exe)]);
    targs.extend(args);
    let out = {
        let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
        timeless(&targs)
    };
    let (o, e) = text(&out);
    assert!(out.status.success(), "timeless trace failed:\n{o}{e}");
    assert!(o.contains(result), "{o}");
    assert!(!e.contains("disabled"), "{e}");
    assert!(o.contains("compressed online: "), "{o}");
    dir
}

/// `timeless stats` of a compressed trace without the byte counts that depend on the zstd
/// level of the volume and compute placement blocks (`bytes_volumes`, `bytes_placement`,
/// `bytes_total`).
fn structure(tlg: &Path) -> Vec<String> {
    let out = timeless(&["stats", s(tlg)]);
    assert!(out.status.success(), "{}", text(&out).1);
    let lines: Vec<String> = text(&out)
        .0
        .lines()
        .filter(|l| {
            !["bytes_volumes", "bytes_placement", "bytes_total"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(str::to_string)
        .collect();
    assert!(lines.len() >= 16, "{lines:?}");
    lines
}

/// Where a trace directory's compressed trace is decompressed (outside it: `timeless trace`
/// only clears its own files there).
fn decompressed_dir(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().expect("named").to_os_string();
    name.push(".decompressed");
    dir.with_file_name(name)
}

/// Every rank's actions with their communicator ids, read from a list file.
fn actions(list: &Path, np: u32) -> Vec<Vec<(Action, u32)>> {
    let src = TraceSource::open(list).expect("list");
    (0..np)
        .map(|r| {
            let mut rd = src.open_rank(r, np).expect("rank file");
            let mut v = Vec::new();
            while let Some(ev) = rd.next_event().expect("valid trace") {
                v.push((ev.action, ev.comm));
            }
            v
        })
        .collect()
}

/// `(simulated_time, actions)` of `timeless simulate trace`, with `extra` options.
fn simulate(trace: &Path, extra: &[&str]) -> (f64, u64) {
    let platform = root().join("platforms/mycluster.xml");
    let mut a = vec![
        "simulate",
        s(trace),
        "--platform",
        s(&platform),
        "--format",
        "json",
    ];
    a.extend(extra);
    let out = timeless(&a);
    let (o, e) = text(&out);
    assert!(out.status.success(), "timeless simulate failed:\n{e}");
    let v: serde_json::Value = serde_json::from_str(&o).expect("json report");
    (
        v["simulated_time"].as_f64().expect("simulated_time"),
        v["actions"].as_u64().expect("actions"),
    )
}

/// Traces losslessly with compression on and checks the compressed file against the text
/// trace of the same run (see the module docs).
fn same_as_text(program: &str, np: usize, args: &[&str], result: &str) {
    if !have_mpi() {
        return;
    }
    let dir = trace(
        program,
        np,
        args,
        &["--compress", "--precision", "0"],
        result,
    );
    let list = dir.join("trace-list.txt");
    let tlg = dir.join("trace.tlg");

    let dec = decompressed_dir(&dir);
    let out = timeless(&["decompress", s(&tlg), "-o", s(&dec)]);
    assert!(out.status.success(), "{}", text(&out).1);
    let from_text = actions(&list, np as u32);
    let from_tlg = actions(&dec.join("traces.txt"), np as u32);
    for r in 0..np {
        assert!(from_text[r].len() > 2, "rank {r}: {:?}", from_text[r]);
        assert_eq!(from_tlg[r], from_text[r], "{program} rank {r}");
    }

    let off = dir.join("offline.tlg");
    let out = timeless(&["compress", s(&list), "-o", s(&off), "--precision", "0"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(
        structure(&tlg),
        structure(&off),
        "{program}: the online file differs from `timeless compress` of the text"
    );

    for opts in [&["--no-compensation"][..], &[][..]] {
        let (t_text, n_text) = simulate(&list, opts);
        let (t_tlg, n_tlg) = simulate(&tlg, opts);
        eprintln!("{program} -n {np} {opts:?}: text {t_text} s, compressed {t_tlg} s");
        assert!(t_text > 0.0);
        assert_eq!(n_tlg, n_text, "{program}: actions replayed");
        assert_eq!(
            t_tlg.to_bits(),
            t_text.to_bits(),
            "{program} {opts:?}: simulated time {t_tlg} s from the compressed trace, {t_text} s from the text"
        );
    }
}

#[test]
fn ring() {
    same_as_text("ring", 4, &[], "ring: 4 rounds of 1000000 bytes on 4 ranks");
}

#[test]
fn ring_on_3_ranks() {
    same_as_text("ring", 3, &[], "ring: 4 rounds of 1000000 bytes on 3 ranks");
}

#[test]
fn stencil2d() {
    same_as_text(
        "stencil2d",
        4,
        &["32", "10"],
        "stencil2d: iteration 10 residual",
    );
}

#[test]
fn stencil2d_on_8_ranks() {
    same_as_text(
        "stencil2d",
        8,
        &["32", "10"],
        "stencil2d: iteration 10 residual",
    );
}

#[test]
fn pi_mc() {
    same_as_text("pi_mc", 4, &["24", "20000"], "pi_mc: 480000 samples");
}

#[test]
fn commsplit() {
    same_as_text(
        "commsplit",
        4,
        &[],
        "commsplit: 4 ranks on a 2x2 grid, 2 rounds",
    );
}

#[test]
fn fortran_mix() {
    same_as_text(
        "fortran_mix",
        4,
        &["3"],
        "fortran_mix: done on 4 ranks, sum",
    );
}

/// Default precision (1e-3 relative per compute volume): the file is still the offline
/// compression of the text at that precision (but for the volume blocks' zstd level), and the simulated time moves by less than 0.1 %.
#[test]
fn default_precision_bounds_the_simulated_time() {
    if !have_mpi() {
        return;
    }
    let dir = trace(
        "stencil2d",
        4,
        &["32", "10"],
        &["--compress"],
        "stencil2d: iteration 10 residual",
    );
    let list = dir.join("trace-list.txt");
    let tlg = dir.join("trace.tlg");
    let off = dir.join("offline.tlg");
    let out = timeless(&["compress", s(&list), "-o", s(&off)]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(structure(&tlg), structure(&off));
    let (t_text, n_text) = simulate(&list, &["--no-compensation"]);
    let (t_tlg, n_tlg) = simulate(&tlg, &["--no-compensation"]);
    assert_eq!(n_tlg, n_text);
    assert!(
        ((t_tlg - t_text) / t_text).abs() < 1e-3,
        "text {t_text} s, compressed {t_tlg} s"
    );
}

/// `--no-text`: only the compressed trace and the metadata are written, and the trace
/// simulates. Ring on 4 ranks: each rank records init, 4 sends, 4 receives, finalize, and
/// compute bursts between them (their number depends on timing).
#[test]
fn no_text_writes_only_the_compressed_trace() {
    if !have_mpi() {
        return;
    }
    let dir = trace(
        "ring",
        4,
        &[],
        &["--compress", "--no-text"],
        "ring: 4 rounds of 1000000 bytes on 4 ranks",
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["trace-meta.json", "trace.tlg"]);
    let tlg = dir.join("trace.tlg");
    let dec = decompressed_dir(&dir);
    let out = timeless(&["decompress", s(&tlg), "-o", s(&dec)]);
    assert!(out.status.success(), "{}", text(&out).1);
    let all = actions(&dec.join("traces.txt"), 4);
    for (r, acts) in all.iter().enumerate() {
        let kinds = |k: &str| acts.iter().filter(|(a, _)| a.keyword() == k).count();
        assert_eq!(
            (
                kinds("init"),
                kinds("send"),
                kinds("recv"),
                kinds("finalize")
            ),
            (1, 4, 4, 1),
            "rank {r}"
        );
    }
    let total: u64 = all.iter().map(|v| v.len() as u64).sum();
    let (t, n) = simulate(&tlg, &["--no-compensation"]);
    assert_eq!(n, total);
    // 16 messages of 1e6 bytes in sequence around the ring: at least 16 x 1e6 B / 1.25e8 B/s
    // on mycluster's 1 Gb/s links.
    assert!(t > 16.0 * 1e6 / 1.25e8, "{t}");
}

/// `--compress` in scattered mode with `--gather` (a localhost hostfile, as `tests/trace_launch.rs`'s
/// scattered test): the ranks write into a node-local temporary directory, rank 0 merges the
/// compressed trace there at `MPI_Finalize` *before* the gather, which then moves it with the
/// text files: 4 rank files, the list, the in-call times, the metadata and trace.tlg, 8
/// files. The gathered trace.tlg is the gathered text trace (lossless), carries the run's
/// metadata and replays to the same time; no temporary directory is left.
#[test]
fn compression_in_a_gathered_scattered_run() {
    if !have_mpi() {
        return;
    }
    let exe = programs().join("ring");
    std::fs::create_dir_all(tmp()).unwrap();
    let hostfile = tmp().join("hostfile-localhost");
    std::fs::write(&hostfile, "localhost slots=4\n").unwrap();
    let dir = tmp().join("ring-4-gathered");
    let out = {
        let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
        timeless(&[
            "trace",
            "-n",
            "4",
            "--hostfile",
            s(&hostfile),
            "--gather",
            "--compress",
            "--precision",
            "0",
            "-o",
            s(&dir),
            "--",
            s(&exe),
        ])
    };
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(!e.contains("disabled"), "{e}");
    assert!(o.contains("gathered over MPI: 8 files"), "{o}");
    let tlg = dir.join("trace.tlg");
    assert!(
        o.contains(&format!("compressed online: {}", tlg.display())),
        "{o}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "in-call-times.csv",
            "rank-0.txt",
            "rank-1.txt",
            "rank-2.txt",
            "rank-3.txt",
            "trace-list.txt",
            "trace-meta.json",
            "trace.tlg"
        ]
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trace-meta.json")).unwrap())
            .unwrap();
    let local = meta["trace_directory"].as_str().unwrap();
    assert!(local.contains("timeless-trace-"), "{local}");
    assert!(!Path::new(local).exists(), "{local} left behind");

    let dec = decompressed_dir(&dir);
    let out = timeless(&["decompress", s(&tlg), "-o", s(&dec)]);
    assert!(out.status.success(), "{}", text(&out).1);
    let from_text = actions(&dir.join("trace-list.txt"), 4);
    let from_tlg = actions(&dec.join("traces.txt"), 4);
    for r in 0..4 {
        assert_eq!(
            from_text[r]
                .iter()
                .filter(|(a, _)| a.keyword() == "send")
                .count(),
            4,
            "rank {r}"
        );
        assert_eq!(from_tlg[r], from_text[r], "rank {r}");
    }
    // The metadata embedded in trace.tlg is the one rank 0 wrote in the node-local directory
    // (before the gather added its `gather` member to the gathered copy).
    let embedded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dec.join("trace-meta.json")).unwrap())
            .unwrap();
    assert_eq!(embedded["trace_directory"], meta["trace_directory"]);
    assert!(embedded["acquisition_mode"]
        .as_str()
        .unwrap()
        .starts_with("scattered: 4 ranks over the hosts of"));
    assert!(embedded.get("gather").is_none() && meta.get("gather").is_some());
    let (t_text, n_text) = simulate(&dir.join("trace-list.txt"), &[]);
    let (t_tlg, n_tlg) = simulate(&tlg, &[]);
    assert_eq!((t_tlg, n_tlg), (t_text, n_text));
}

/// A rank whose tracing stops (a panic injected at its 450th record: with 200 chunks of work,
/// pi_mc's master, rank 0, writes about 600 records besides its compute bursts, 3 per chunk and
/// 199 wildcard receives with their waits; each of the 3 workers about 275 in all, as many as 3
/// per chunk it draws) cannot contribute: it still takes part in the
/// agreement at `MPI_Finalize`, so nobody waits for it, one message says why, no compressed
/// file is written, and the program's output and exit are unchanged.
#[test]
fn a_rank_whose_tracing_stopped_abandons_the_compression_without_blocking() {
    if !have_mpi() {
        return;
    }
    let exe = programs().join("pi_mc");
    let dir = tmp().join("pi_mc-panic");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_timeless"));
    if let Some(Some(lib)) = PRELOAD.get() {
        cmd.env("TIMELESS_PRELOAD", lib);
    }
    cmd.current_dir(root())
        .env("TIMELESS_INJECT_PANIC", "450")
        .args(["trace", "-n", "4", "--compress", "-o", s(&dir), "--"])
        .arg(&exe)
        .args(["200", "2000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let mut child = cmd.spawn().expect("run timeless");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the traced run did not finish in 120 s: the merge blocked");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    let (o, e) = text(&out);
    assert!(o.contains("pi_mc: 400000 samples"), "{o}{e}");
    assert!(
        e.contains("rank 0: tracing disabled (internal panic"),
        "{e}"
    );
    assert_eq!(
        e.matches("online compression disabled").count(),
        1,
        "one message:\n{e}"
    );
    assert!(
        e.contains("rank 0 cannot be merged: its tracing was disabled"),
        "{e}"
    );
    assert!(!dir.join("trace.tlg").exists());
    // The text trace of rank 0 stops at the panic: `timeless trace` reports it.
    assert!(e.contains("does not end with finalize"), "{e}");
}
