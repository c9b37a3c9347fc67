//! Online event flow graphs (`timeless trace --flowgraph`): on programs with wildcard receives,
//! sub-communicators, persistent requests and Fortran, the graph the ranks build while running
//! is byte for byte the graph of the trace they wrote, and `--flowgraph-only` writes the graph
//! alone, which rebuilds a trace that replays like a traced one. `--flowgraph-only` keys its
//! nodes by typed records without formatting them; with `TIMELESS_FLOWGRAPH_CHECK=<dir>` every
//! rank also builds its graph from the text of every line, in the same run, and compares, and
//! writes that text to `<dir>`: `timeless flowgraph` on it gives the online file byte for byte.

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
/// same graph bytes as a capture of every line's text in the same run, and the graph file is
/// byte for byte what `timeless flowgraph` builds offline from the text trace of the same run
/// (written aside by `TIMELESS_FLOWGRAPH_CHECK=<dir>`; compute volumes differ from run to run,
/// so two runs cannot be compared).
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
        let text_dir = tmp().join(format!("{program}-checked-text"));
        let _ = std::fs::remove_dir_all(&text_dir);
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
        let out = timeless_env(
            &a,
            &[("TIMELESS_FLOWGRAPH_CHECK", text_dir.to_str().unwrap())],
        );
        let (o, e) = text(&out);
        assert!(out.status.success(), "{program}: {o}{e}");
        for r in 0..4 {
            let ok = format!("rank {r}: flow graph checked against the text capture: identical");
            assert!(e.contains(&ok), "{program}: no '{ok}' in:\n{e}");
        }
        assert!(!e.contains("check failed"), "{program}: {e}");
        let files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            files,
            ["flowgraph.tfg"],
            "{program}: no trace in the output"
        );
        let bytes = std::fs::read(dir.join("flowgraph.tfg")).unwrap();
        assert!(bytes.len() > 16, "{program}: {} bytes", bytes.len());
        let list = text_dir.join("trace-list.txt");
        std::fs::write(&list, "rank-0.txt\nrank-1.txt\nrank-2.txt\nrank-3.txt\n").unwrap();
        let offline = text_dir.join("offline.tfg");
        let out = timeless(&[
            "flowgraph",
            list.to_str().unwrap(),
            "-o",
            offline.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{program}: {:?}", text(&out));
        assert_eq!(
            bytes,
            std::fs::read(&offline).unwrap(),
            "{program}: --flowgraph-only and the offline graph of the same run differ"
        );
    }
}

/// An event: (action, communicator, call site).
type Ev = (timeless_trace::Action, u32, Option<u32>);

/// The events of a trace, per rank.
fn events(list: &Path, n: u32) -> Vec<Vec<Ev>> {
    use timeless_trace::TraceSet;
    let set = timeless_trace::TraceSource::open(list).unwrap();
    (0..n)
        .map(|r| {
            let mut s = set.open_stream(r, n).unwrap();
            let mut v = Vec::new();
            while let Some(e) = s.next_event().unwrap() {
                v.push((e.action, e.comm, e.callsite));
            }
            v
        })
        .collect()
}

fn simulated_bits(list: &Path, n: &str) -> u64 {
    let out = timeless(&[
        "simulate",
        list.to_str().unwrap(),
        "-n",
        n,
        "-p",
        "platforms/mycluster.xml",
        "--no-compensation",
        "--format",
        "json",
    ]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    v["simulated_time"].as_f64().unwrap().to_bits()
}

/// Issue 14's exactness on every validation program that ends normally (`abort_midway` calls
/// `MPI_Abort`), at every rank count it runs at (1 for `callcost`, 4 exactly for
/// `commkinds` and `commfig1`, 2 and 4 otherwise; the call-site programs with `--callsites`): the graph of
/// the trace rebuilds the trace's events exactly (actions with their volumes, communicators,
/// call sites), the rebuilt trace replays to the same simulated time bit for bit, and the
/// graph the ranks built online (`--flowgraph`) is the offline one, byte for byte.
#[test]
fn every_validation_program_rebuilds_from_its_graph() {
    if !common::mpi::have_mpi("flow graph") {
        return;
    }
    // (program, arguments, rank counts, extra flags of `timeless trace`)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [u32],
        &'static [&'static str],
    );
    let cases: &[Case] = &[
        ("ring", &["3", "1000", "100000"], &[2, 4], &[]),
        ("stencil2d", &["8", "6"], &[2, 4], &[]),
        ("stencil3d", &["4", "3"], &[2, 4], &[]),
        ("wavefront", &["8", "2", "2"], &[2, 4], &[]),
        ("commsplit", &["2"], &[2, 4], &[]),
        ("commfig1", &[], &[4], &[]),
        ("coverage", &[], &[2, 4], &[]),
        ("persistent", &["3", "10"], &[2, 4], &[]),
        ("pi_mc", &["4", "2000"], &[2, 4], &[]),
        ("tracing_control", &["100000"], &[2, 4], &[]),
        ("callcost", &["50"], &[1], &[]),
        ("callsites", &["3"], &[2, 4], &["--callsites"]),
        ("callsites_f", &[], &[2, 4], &["--callsites"]),
        ("commkinds", &[], &[4], &[]),
        ("commkinds_f", &[], &[4], &[]),
        ("fortran_control", &[], &[2, 4], &[]),
        ("fortran_f08", &[], &[2, 4], &[]),
        ("fortran_mix", &["2"], &[2, 4], &[]),
    ];
    for &(program, args, counts, flags) in cases {
        for &n in counts {
            let _serial = common::mpi::MPI_JOBS
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let dir = tmp().join(format!("every-{program}-{n}"));
            let _ = std::fs::remove_dir_all(&dir);
            let exe = programs().join(program);
            let ns = n.to_string();
            let mut a = vec!["trace", "-n", &ns, "--ref-speed", "1e9", "--flowgraph"];
            a.extend_from_slice(flags);
            a.extend_from_slice(&["-o", dir.to_str().unwrap(), "--", exe.to_str().unwrap()]);
            a.extend_from_slice(args);
            let out = timeless_env(&a, &[("OMPI_MCA_topo", "basic")]);
            let (o, e) = text(&out);
            assert!(out.status.success(), "{program} on {n}: {o}{e}");
            assert!(!e.contains("tracing disabled"), "{program} on {n}: {e}");
            drop(_serial);
            let list = dir.join("trace-list.txt");
            let g = dir.join("offline.tfg");
            let out = timeless(&[
                "flowgraph",
                list.to_str().unwrap(),
                "-n",
                &ns,
                "-o",
                g.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "{program} on {n}: {:?}", text(&out));
            assert_eq!(
                std::fs::read(dir.join("flowgraph.tfg")).unwrap(),
                std::fs::read(&g).unwrap(),
                "{program} on {n}: online and offline graphs differ"
            );
            let re = dir.join("rebuilt");
            let out = timeless(&[
                "flowgraph",
                "--reconstruct",
                g.to_str().unwrap(),
                "-o",
                re.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "{program} on {n}: {:?}", text(&out));
            let rebuilt = re.join("trace-list.txt");
            let original = events(&list, n);
            assert!(
                original.iter().all(|r| r.len() >= 2),
                "{program} on {n}: {original:?}"
            );
            assert_eq!(
                events(&rebuilt, n),
                original,
                "{program} on {n}: the rebuilt events differ"
            );
            assert_eq!(
                simulated_bits(&rebuilt, &ns),
                simulated_bits(&list, &ns),
                "{program} on {n}: the rebuilt trace replays differently"
            );
        }
    }
}
