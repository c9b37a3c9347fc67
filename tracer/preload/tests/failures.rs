//! End-to-end tests of the tracer's failure paths and of its gather: a trace directory that
//! cannot be written, a panic inside the tracer, `MPI_Abort`, ranks killed by the launcher
//! (their buffered records, the flusher's), and `--gather` moving every rank's files onto rank
//! 0 over MPI. Set-up and checks: `common` (`traced.rs` has the traced programs' contents).
//!
//! Needs `mpicc`, `mpif90` and `mpirun` (Debian: libopenmpi-dev openmpi-bin gfortran).

mod common;

use common::*;
use timeless_trace::Action;

#[test]
fn an_unwritable_trace_directory_disables_tracing_only() {
    let run = trace(
        "unwritable",
        "ring",
        2,
        &["2", "1000", "1000"],
        &[("TIMELESS_OUT", "/proc/none")],
    );
    assert!(run.out.status.success(), "{}", run.stderr());
    assert!(run.stdout().contains("ring: 2 rounds"));
    let err = run.stderr();
    assert_eq!(
        err.matches("tracing disabled").count(),
        2,
        "one message per rank:\n{err}"
    );
}

#[test]
fn a_panic_inside_the_tracer_never_reaches_the_program() {
    let run = trace(
        "panic",
        "stencil2d",
        4,
        &["16", "10"],
        &[("TIMELESS_INJECT_PANIC", "20")],
    );
    assert!(run.out.status.success(), "{}", run.stderr());
    assert!(run.stdout().contains("stencil2d: iteration 10"));
    let err = run.stderr();
    assert_eq!(
        err.matches("tracing disabled").count(),
        4,
        "one message per rank:\n{err}"
    );
    assert!(
        !err.contains("panicked at"),
        "the panic message leaked:\n{err}"
    );
    for r in 0..4usize {
        let last = run.lines[r].last().cloned().unwrap_or_default();
        assert!(
            last.starts_with("# tracing stopped here"),
            "rank {r} ends with '{last}'"
        );
        assert!(run.actions[r].len() < 20, "rank {r}");
    }
}

#[test]
fn mpi_abort_leaves_a_valid_trace() {
    // pi_mc aborts on a single rank.
    let run = trace("abort", "pi_mc", 1, &[], &[]);
    assert!(!run.out.status.success());
    let text = run.lines[0].join("\n");
    assert!(text.contains("0 bcast 2 0 4"), "{text}");
    assert!(text.ends_with("# MPI_Abort with error code 1"), "{text}");
}

/// Tags of the `send`s or `recv`s of a rank, in trace order.
fn tags(run: &Run, r: usize, kind: &str) -> Vec<i32> {
    run.actions[r]
        .iter()
        .filter_map(|a| match a {
            Action::Send { tag, .. } if kind == "send" => Some(*tag),
            Action::Recv { tag, .. } if kind == "recv" => Some(*tag),
            _ => None,
        })
        .collect()
}

/// Checks the ranks of `abort_midway` killed by the launcher: each file is a non-empty valid
/// prefix of the rank's actions (whole lines, `init` first, sends and receives in round order,
/// at least rounds `0..min_rounds` on every rank and round `0..=2`'s send on rank 0), ended by
/// the `SIGTERM` handler's comment or, for a rank that the launcher's `SIGKILL` reached before
/// its handler ran, by what the tracer had flushed. Returns how many ranks ran the handler.
fn assert_killed_prefixes(run: &Run, min_rounds: i32) -> usize {
    let mut handled = 0;
    for r in [0usize, 2, 3] {
        let text = std::fs::read_to_string(run.dir.join(format!("rank-{r}.txt"))).unwrap();
        assert!(text.ends_with('\n'), "rank {r}: a partial line:\n{text}");
        assert!(
            matches!(run.actions[r].first(), Some(Action::Init { .. })),
            "rank {r} does not start with init:\n{text}"
        );
        if run.lines[r].last().map(String::as_str)
            == Some("# terminated by SIGTERM: the trace stops here")
        {
            handled += 1;
        }
        let (sends, recvs) = (tags(run, r, "send"), tags(run, r, "recv"));
        let in_order = |v: &[i32]| v.iter().enumerate().all(|(i, &t)| t == i as i32);
        assert!(
            in_order(&sends) && in_order(&recvs),
            "rank {r}: {sends:?} {recvs:?}"
        );
        let expected: Vec<i32> = (0..min_rounds).collect();
        assert!(sends.starts_with(&expected), "rank {r}: sends {sends:?}");
        assert!(recvs.starts_with(&expected), "rank {r}: recvs {recvs:?}");
    }
    handled
}

#[test]
fn ranks_killed_after_mpi_abort_write_their_buffered_records() {
    // Rank 1 aborts in round 2; mpirun then sends SIGTERM to the others, blocked in MPI_Recv.
    let run = trace("abort_midway", "abort_midway", 4, &["2", "1"], &[]);
    assert!(!run.out.status.success());
    // The aborting rank: rounds 0 and 1 in full, the receive of round 2, then the abort.
    assert_eq!(tags(&run, 1, "recv"), vec![0, 1, 2]);
    assert_eq!(tags(&run, 1, "send"), vec![0, 1]);
    assert_eq!(
        run.lines[1].last().map(String::as_str),
        Some("# MPI_Abort with error code 3")
    );
    // The killed ranks: how far each got is a race with the launcher's signals; whatever it is,
    // the file holds at least the start-up records (written at once), as a valid prefix.
    let handled = assert_killed_prefixes(&run, 0);
    eprintln!("{handled} of the 3 killed ranks ran their SIGTERM handler");
}

/// A rank blocked for long in a call before it is killed keeps its records even if no
/// handler runs: the flusher thread wrote them (period 0.2 s; the aborting rank waits 1.5 s).
#[test]
fn ranks_blocked_before_they_are_killed_keep_what_the_flusher_wrote() {
    let run = trace(
        "abort_delayed",
        "abort_midway",
        4,
        &["2", "1", "1500"],
        &[("TIMELESS_FLUSH_SECS", "0.2")],
    );
    assert!(!run.out.status.success());
    // Every killed rank completed rounds 0 and 1 (rank 0 also sent round 2) before blocking.
    assert_killed_prefixes(&run, 2);
    assert!(tags(&run, 0, "send").starts_with(&[0, 1, 2]));
    assert_eq!(
        run.lines[1].last().map(String::as_str),
        Some("# MPI_Abort with error code 3")
    );
}

/// `--gather` over MPI: 5 ranks write to private directories (`%r` in `TIMELESS_OUT`, as if
/// each were on a node of its own), and at `MPI_Finalize` a binomial tree (radix 2: rounds
/// 0 ← 1, 2 ← 3; 0 ← 2; 0 ← 4, rank 2 staging rank 3's files) moves them into the gather
/// directory: byte-identical to the originals (kept with `TIMELESS_GATHER_KEEP`), timestamped
/// files over 1 MiB (sent in several chunks), the metadata gaining the gather's figures.
#[test]
fn the_gather_moves_every_rank_s_files_onto_rank_0_over_mpi() {
    let dir = tmp().join("traces").join("gather");
    let local = |r: u32| dir.join(format!("local-{r}"));
    let run = trace(
        "gather",
        "ring",
        5,
        &["12000", "8", "0"],
        &[
            ("TIMELESS_OUT", &format!("{}/local-%r", dir.display())),
            ("TIMELESS_GATHER_OUT", &dir.display().to_string()),
            ("TIMELESS_GATHER_RADIX", "2"),
            ("TIMELESS_GATHER_KEEP", "1"),
            ("TIMELESS_TIMESTAMPS", "1"),
            // 5 ranks on fewer cores: waiting ranks yield the core.
            ("OMPI_MCA_mpi_yield_when_idle", "1"),
            ("TIMELESS_REF_SPEED", "1e9"),
        ],
    );
    assert_ok(&run);
    assert!(
        run.stdout().contains("ring: 12000 rounds"),
        "{}",
        run.stdout()
    );
    for r in 0..5 {
        assert_eq!(run.count(r, "send"), 12000, "rank {r}");
    }
    assert_pairs_match(&run);
    let mut total = 0u64;
    for r in 0..5u32 {
        for name in [format!("rank-{r}.txt"), format!("rank-{r}.timed.txt")] {
            let original = std::fs::read(local(r).join(&name)).unwrap();
            let gathered = std::fs::read(dir.join(&name)).unwrap();
            assert!(original == gathered, "{name}: the gathered file differs");
            total += original.len() as u64;
        }
        let timed = std::fs::metadata(dir.join(format!("rank-{r}.timed.txt"))).unwrap();
        assert!(timed.len() > 1 << 20, "rank {r}: {} bytes", timed.len());
        // Only rank 0 writes the lists and the metadata; the staging directory is gone.
        assert_eq!(local(r).join("trace-list.txt").exists(), r == 0);
        assert!(!local(r).join(format!(".timeless-gather-{r}")).exists());
    }
    for name in ["trace-list.txt", "timed-list.txt", "in-call-times.csv"] {
        let original = std::fs::read(local(0).join(name)).unwrap();
        assert_eq!(original, std::fs::read(dir.join(name)).unwrap(), "{name}");
        total += original.len() as u64;
    }
    let original_meta = std::fs::read_to_string(local(0).join("trace-meta.json")).unwrap();
    let meta = run.file("trace-meta.json");
    let head = original_meta
        .trim_end()
        .strip_suffix('}')
        .unwrap()
        .trim_end();
    assert!(
        meta.starts_with(&format!("{head},\n  \"gather\": {{")),
        "{meta}"
    );
    total += original_meta.len() as u64;
    // 10 rank files, 2 lists, the in-call times and the metadata; 3 rounds for 5 ranks in a
    // binomial tree.
    for field in [
        "\"radix\": 2,".to_string(),
        "\"rounds\": 3,".to_string(),
        "\"files\": 14,".to_string(),
        format!("\"bytes\": {total},"),
    ] {
        assert!(meta.contains(&field), "{field}:\n{meta}");
    }
    assert_simgrid_replays(&run);
}

/// Without `TIMELESS_GATHER_KEEP` each rank removes what it sent, and its directory.
#[test]
fn the_gather_cleans_the_node_local_directories() {
    let dir = tmp().join("traces").join("gather_clean");
    let run = trace(
        "gather_clean",
        "stencil2d",
        4,
        &["64", "5"],
        &[
            ("TIMELESS_OUT", &format!("{}/local-%r", dir.display())),
            ("TIMELESS_GATHER_OUT", &dir.display().to_string()),
        ],
    );
    assert_ok(&run);
    assert_pairs_match(&run);
    for r in 0..4 {
        assert!(!dir.join(format!("local-{r}")).exists(), "rank {r}");
    }
    assert!(run.file("trace-meta.json").contains("\"radix\": 4,"));
    assert!(run.file("trace-meta.json").contains("\"rounds\": 1,"));
}
