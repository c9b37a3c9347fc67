//! `timeless trace --counters`: compute volumes from an instruction counter, the fallback to
//! CPU time where the machine has none, and the counter path end to end with a software
//! event standing in for instructions.

use std::process::{Command, Output};

mod common;

use common::mpi::{root, text, MPI_JOBS, PRELOAD};
use common::trace::{have_mpi, programs, tmp};

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
