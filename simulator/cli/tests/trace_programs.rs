//! `timeless trace` on the C programs of `validation/programs`, then `timeless simulate` on
//! each trace: the tracer must not change what the program prints, every rank file must end
//! with `finalize`, and the replay must replay every recorded action (sub-communicator traces
//! included, through the communicator extension). World-only traces are also replayed by
//! SimGrid 3.32 (`smpirun -replay`, when installed) on the same platform: both simulated
//! times must agree to 1e-6 relative. Setup and the check are `common::trace`'s.

mod common;

use common::mpi::{root, text, timeless};
use common::trace::{have_mpi, trace_and_simulate};

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
