//! `TIMELESS_TIMESTAMPS` and `TIMELESS_INJECT_NS` end to end: pi_mc (master/worker, wildcard
//! receives completed by `MPI_Wait`, probes, a bcast and a reduce) traced on 4 ranks with 50 µs
//! injected per event. The timestamped files must decode and compensate (every receive matched
//! to its send, every collective complete), the metadata must carry the injected cost, and every
//! compute burst of the TI trace must hold the injected cost of the call before it.
//!
//! Needs `mpicc` and `mpirun` (Debian: libopenmpi-dev openmpi-bin).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::library;

use timeless_compensate::{compensate, CopyCost, NToNRule, NoSink, Params, TimedSource, TraceMeta};

fn pi_mc(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/programs/pi_mc.c");
    let exe = dir.join("pi_mc");
    let st = Command::new("mpicc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("mpicc (needs libopenmpi-dev)");
    assert!(st.success(), "building pi_mc failed");
    exe
}

const INJECT_NS: u64 = 50_000;

#[test]
fn timestamped_pi_mc_with_injected_overhead_compensates() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stamped");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let exe = pi_mc(&tmp);
    let out_dir = tmp.join("trace");
    let out = Command::new("mpirun")
        .args(["-np", "4", "--oversubscribe"])
        .arg("-x")
        .arg(format!("LD_PRELOAD={}", library().display()))
        .arg("-x")
        .arg(format!("TIMELESS_OUT={}", out_dir.display()))
        .args(["-x", "TIMELESS_TIMESTAMPS=1"])
        .arg("-x")
        .arg(format!("TIMELESS_INJECT_NS={INJECT_NS}"))
        .arg(&exe)
        .args(["12", "2000"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun (needs openmpi-bin)");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("pi_mc: 24000 samples"), "{text}");

    // The metadata carries the injected cost; compensation adds it to the tracer's own.
    let meta = TraceMeta::find(&out_dir).unwrap().expect("trace-meta.json");
    let raw = std::fs::read_to_string(out_dir.join("trace-meta.json")).unwrap();
    assert!(raw.contains("\"injected_per_event_secs\": 5e-5"), "{raw}");
    assert!(meta.overhead_secs.iter().all(|&o| o >= 5e-5), "{meta:?}");
    assert!(
        meta.event_overhead_secs.iter().all(|&o| o >= 5e-5),
        "{meta:?}"
    );

    // Every timestamped file decodes, and the whole trace compensates.
    let src = TimedSource::open(&out_dir).unwrap();
    assert_eq!(src.nranks(), 4);
    let streams: Vec<_> = (0..4).map(|r| src.open_rank(r).unwrap()).collect();
    let params = Params {
        overhead_secs: meta.event_overhead_secs.clone(),
        copy: CopyCost::free(),
        n_to_n: NToNRule::PerRank,
    };
    let s = compensate(streams, &params, &mut NoSink).unwrap();
    assert_eq!(s.unreceived, 0);
    // pi_mc: 12 chunks + 3 stops sent, 12 results back; each worker message probed first.
    let received: u64 = s.cases[0].iter().sum();
    assert_eq!(received, 12 + 3 + 12);
    assert!(s.total_a[0] <= s.total_m && s.total_a[1] <= s.total_m);

    // A compute burst after a call holds that call's injected exit cost: flops >= 50 µs x the
    // rank's speed (the burst clock is the spin's clock).
    for r in 0..4u32 {
        let ti = std::fs::read_to_string(out_dir.join(format!("rank-{r}.txt"))).unwrap();
        let speed = meta.speed_flops_per_sec[r as usize];
        let mut bursts = 0;
        let mut prev_was_action = false;
        let mut prev_init = false;
        for line in ti.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f[1] {
                "compute" if prev_init => {
                    // init is recorded at start-up, not by a wrapper: no injected cost.
                    prev_init = false;
                    prev_was_action = false;
                }
                "compute" => {
                    let flops: f64 = f[2].parse().unwrap();
                    assert!(
                        flops >= INJECT_NS as f64 * 1e-9 * speed * 0.999,
                        "rank {r}: burst of {flops} flops < injected cost: {line}"
                    );
                    bursts += 1;
                    prev_was_action = false;
                }
                "comm_def" => {}
                "finalize" => {}
                _ => {
                    prev_init = f[1] == "init";
                    assert!(
                        !prev_was_action,
                        "rank {r}: two calls without the injected burst between them, at {line}"
                    );
                    prev_was_action = true;
                }
            }
        }
        assert!(bursts > 0);
    }
}
