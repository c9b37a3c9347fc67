//! Every committed seed and regression input runs through its target without a panic, and a
//! short deterministic campaign per target finds nothing (the bounded timed campaign is
//! `timeless-fuzz`, run by `validation/run-tests.sh`).

use std::time::Duration;

use timeless_fuzz::campaign::{run, run_one, Limits};
use timeless_fuzz::{find, seeds, TARGETS};

#[test]
fn every_target_has_seeds() {
    for t in TARGETS {
        assert!(!seeds(t.name).is_empty(), "no seed corpus for {}", t.name);
    }
}

#[test]
fn seeds_and_regressions_run_without_panic() {
    for t in TARGETS {
        for (i, input) in seeds(t.name).iter().enumerate() {
            if let Err(p) = run_one(t, input) {
                panic!("{} seed {i} panics: {p}", t.name);
            }
        }
    }
}

#[test]
fn short_campaigns_find_nothing() {
    for t in TARGETS {
        let limits = Limits {
            duration: Duration::from_secs(30),
            max_iterations: 300,
            seed: 18,
            hang_secs: 10,
        };
        match run(t, &limits, None) {
            Ok(s) => assert!(s.iterations >= 300, "{}: {} inputs", t.name, s.iterations),
            Err(c) => panic!(
                "{} crashes on {:?}: {}",
                t.name,
                String::from_utf8_lossy(&c.input),
                c.message
            ),
        }
    }
}

/// Issue 18, fuzzing: a probe (negative-count `recv`) nothing can satisfy is reported as a
/// deadlock instead of probing forever.
#[test]
fn regression_probe_never_satisfied_is_a_deadlock() {
    let t = find("trace_text").expect("target");
    let outcome = run_one(t, b"1 init\n1 recv 0 0 -1\n").expect("no panic");
    let e = outcome.expect_err("a deadlock");
    assert!(e.contains("deadlock"), "{e}");
    assert!(
        e.contains("waits for a message from rank 0 (tag 0) to probe"),
        "{e}"
    );
}
