//! Online event flow graphs (`timeless trace --flowgraph`): on programs with wildcard receives,
//! sub-communicators, persistent requests and Fortran, the graph the ranks build while running
//! is byte for byte the graph of the trace they wrote, and `--flowgraph-only` writes the graph
//! alone, which rebuilds a trace that replays like a traced one. `--flowgraph-only` keys its
//! nodes by typed records without formatting them; with `TIMELESS_FLOWGRAPH_CHECK=1` every rank
//! also builds its graph from the text of every line, in the same run, and compares.

use std::path::{Path, PathBuf};

mod common;

use common::mpi::{text, timeless, timeless_env};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("flowgraph-mpi")
}

fn programs() -> &'static Path {
    common::mpi::programs(&tmp())
}

fn trace(program: &str, args: &[&str], flag: &str) -> PathBuf {
    let exe = programs().join(program);
    let dir = tmp().join(format!("{program}{flag}"));
    let o = common::mpi::trace_into(&exe, args, 4, &dir, &[flag]);
    assert!(o.contains("flow graph: "), "{o}");
    dir
}

#[test]
fn online_graph_is_the_traces_graph() {
    if !common::mpi::have_mpi("flow graph") {
        return;
    }
    for (program, args) in [
        ("coverage", vec![]),
        ("commsplit", vec!["5"]),
        ("persistent", vec![]),
        ("pi_mc", vec!["8", "20000"]),
        ("fortran_mix", vec!["3"]),
    ] {
        let dir = trace(program, &args, "--flowgraph");
        let offline = dir.join("offline.tfg");
        let out = timeless(&[
            "flowgraph",
            dir.join("trace-list.txt").to_str().unwrap(),
            "-o",
            offline.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{:?}", text(&out));
        assert_eq!(
            std::fs::read(dir.join("flowgraph.tfg")).unwrap(),
            std::fs::read(&offline).unwrap(),
            "{program}: online and offline graphs differ"
        );
    }
}

#[test]
fn flowgraph_only_writes_the_graph_alone() {
    if !common::mpi::have_mpi("flow graph") {
        return;
    }
    let dir = trace("stencil2d", &["16", "20"], "--flowgraph-only");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["flowgraph.tfg"]);
    let re = dir.join("rebuilt");
    let out = timeless(&[
        "flowgraph",
        "--reconstruct",
        dir.join("flowgraph.tfg").to_str().unwrap(),
        "-o",
        re.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    let out = timeless(&[
        "simulate",
        re.join("trace-list.txt").to_str().unwrap(),
        "-p",
        "platforms/mycluster.xml",
    ]);
    let (o, e) = text(&out);
    assert!(
        out.status.success() && o.contains("Simulated time"),
        "{o}{e}"
    );
}

/// `--flowgraph-only` on the programs of `online_graph_is_the_traces_graph` and the stencil:
/// on every rank the typed capture (no text formatted for a record seen before) gives the
/// same graph bytes as a capture of every line's text in the same run (compute volumes
/// included, which differ from run to run so cannot be compared across runs).
#[test]
fn flowgraph_only_is_the_text_captures_graph() {
    if !common::mpi::have_mpi("flow graph") {
        return;
    }
    for (program, args) in [
        ("coverage", vec![]),
        ("commsplit", vec!["5"]),
        ("persistent", vec![]),
        ("pi_mc", vec!["8", "20000"]),
        ("fortran_mix", vec!["3"]),
        ("stencil2d", vec!["16", "20"]),
    ] {
        let _serial = common::mpi::MPI_JOBS
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let dir = tmp().join(format!("{program}-checked"));
        let _ = std::fs::remove_dir_all(&dir);
        let exe = programs().join(program);
        let mut a = vec![
            "trace",
            "-n",
            "4",
            "--ref-speed",
            "1e9",
            "--flowgraph-only",
            "-o",
            dir.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ];
        a.extend_from_slice(&args);
        let out = timeless_env(&a, &[("TIMELESS_FLOWGRAPH_CHECK", "1")]);
        let (o, e) = text(&out);
        assert!(out.status.success(), "{program}: {o}{e}");
        for r in 0..4 {
            let ok = format!("rank {r}: flow graph checked against the text capture: identical");
            assert!(e.contains(&ok), "{program}: no '{ok}' in:\n{e}");
        }
        assert!(!e.contains("check failed"), "{program}: {e}");
        let bytes = std::fs::read(dir.join("flowgraph.tfg")).unwrap();
        assert!(bytes.len() > 16, "{program}: {} bytes", bytes.len());
    }
}
