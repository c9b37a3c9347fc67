//! `timeless trace` on the C programs of `validation/programs`, then `timeless simulate` on
//! each trace: the tracer must not change what the program prints, every rank file must end
//! with `finalize`, and the replay must replay every recorded action (sub-communicator traces
//! included, through the communicator extension). World-only traces are also replayed by
//! SimGrid 3.32 (`smpirun -replay`, when installed) on the same platform: both simulated
//! times must agree to 1e-6 relative. Setup and the check are `common::trace`'s.

mod common;

use common::mpi::{root, text, timeless};
use common::trace::{have_mpi, trace_and_simulate};

/// Also the tracer's in-call times (`in-call-times.csv`, `timeless_trace::incall`): a line
/// per rank, one call per action line of its trace but `init`, `finalize` and `compute` (the
/// ring writes one record per call; the tracer starts after `MPI_Init` and closes inside
/// `MPI_Finalize`), some wall time in them, and no more CPU time than wall time (a thread
/// cannot be on a core longer than it exists; the chained clock counts a short interval's
/// wall time as its CPU time, never more).
#[test]
fn ring() {
    if have_mpi() {
        let dir = trace_and_simulate("ring", &[], "ring: 4 rounds of 1000000 bytes on 4 ranks");
        let times = timeless_trace::incall::read(&dir)
            .expect("in-call times parse")
            .expect("the tracer writes in-call-times.csv");
        assert_eq!(times.len(), 4);
        for (r, t) in times.iter().enumerate() {
            let t = t.unwrap_or_else(|| panic!("rank {r} has in-call times"));
            let calls = std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .filter(|l| {
                    !matches!(
                        l.split_whitespace().nth(1),
                        Some("init" | "finalize" | "compute")
                    )
                })
                .count() as u64;
            assert_eq!(t.calls, calls, "rank {r}");
            assert!(t.wall_secs > 0.0, "rank {r}: {t:?}");
            assert!(
                t.cpu_secs <= t.wall_secs + 1e-9 * t.calls as f64,
                "rank {r}: {t:?}"
            );
        }
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
