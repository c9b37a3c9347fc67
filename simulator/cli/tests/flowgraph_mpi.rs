//! Online event flow graphs (`timeless trace --flowgraph`): on programs with wildcard receives,
//! sub-communicators, persistent requests and Fortran, the graph the ranks build while running
//! is byte for byte the graph of the trace they wrote, and `--flowgraph-only` writes the graph
//! alone, which rebuilds a trace that replays like a traced one.

use std::path::{Path, PathBuf};

mod common;

use common::mpi::{text, timeless};

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
