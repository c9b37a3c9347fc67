//! Several jobs on one platform: SimGrid 3.32 goldens, a hand-derived case, and the equivalence
//! of a job replayed next to a job it shares nothing with and the same job alone.

use std::path::{Path, PathBuf};

use timeless_platform::{Platform, PlatformOptions};
use timeless_replay::jobs::alone_times_secs;
use timeless_replay::jobs::description::{
    parse_description, place_jobs, read_description, JobPlacement, JobsError,
};
use timeless_replay::{Job, NoObserver, ReplayConfig, Report, Simulation};
use timeless_trace::TraceSource;

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/multijob/cases")
}

fn platform(path: &Path) -> Platform {
    Platform::from_file(path, &PlatformOptions::default()).unwrap()
}

fn run(platform: &Platform, jobs: &[Job<'_>]) -> Report {
    Simulation::with_jobs(platform, jobs, ReplayConfig::default())
        .unwrap()
        .run(&mut NoObserver)
        .unwrap()
}

struct Golden {
    /// `instance rank start end`.
    ranks: Vec<(String, u32, f64, f64)>,
    makespan: f64,
    /// `alone instance time`.
    alone: Vec<(String, f64)>,
}

/// `golden.txt`: `instance rank start end` per rank, `makespan`, then `alone instance time`.
fn golden(case: &Path) -> Golden {
    let text = std::fs::read_to_string(case.join("golden.txt")).unwrap();
    let mut ranks = Vec::new();
    let mut makespan = f64::NAN;
    let mut alone = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f[0] == "makespan" {
            makespan = f[1].parse().unwrap();
        } else if f[0] == "alone" {
            alone.push((f[1].to_string(), f[2].parse().unwrap()));
        } else {
            ranks.push((
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            ));
        }
    }
    Golden {
        ranks,
        makespan,
        alone,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-3)
}

/// Every rank's start (after its delay) and finish, the makespan, and each job's time alone
/// (its slowdown's baseline) equal SimGrid 3.32's (validation/multijob/regenerate.py) to 1e-9.
#[test]
fn simgrid_goldens() {
    let dir = cases();
    let plat = platform(&dir.join("platform.xml"));
    for name in ["shared-link", "staggered", "wrap"] {
        let case = dir.join(name);
        let specs = read_description(&case.join("description")).unwrap();
        let dep = case.join("deployment.xml");
        let host = case.join("hostfile");
        let placement = if dep.exists() {
            JobPlacement::Deployment(&dep)
        } else {
            JobPlacement::Hostfile(&host)
        };
        let inputs = place_jobs(&specs, placement, &plat).unwrap();
        let jobs: Vec<Job> = inputs.iter().map(|i| i.job()).collect();
        let report = run(&plat, &jobs);
        let Golden {
            ranks: want,
            makespan,
            alone,
        } = golden(&case);
        assert_eq!(want.len(), report.ranks.len(), "{name}: rank count");
        for (inst, rank, start, end) in want {
            let j = report.jobs.iter().find(|j| j.name == inst).unwrap();
            let r = &report.ranks[(j.first_rank + rank) as usize];
            assert!(
                close(r.init_secs, start),
                "{name} {inst}:{rank} start {} vs SimGrid {start}",
                r.init_secs
            );
            assert!(
                close(r.finish_secs, end),
                "{name} {inst}:{rank} end {} vs SimGrid {end}",
                r.finish_secs
            );
        }
        let end = report.jobs.iter().map(|j| j.end_secs).fold(0.0, f64::max);
        assert!(close(end, makespan), "{name}: makespan {end} vs {makespan}");
        let ours = alone_times_secs(&plat, &jobs, &ReplayConfig::default()).unwrap();
        assert_eq!(alone.len(), jobs.len());
        for ((inst, want), (job, got)) in alone.iter().zip(jobs.iter().zip(ours)) {
            assert_eq!(inst, &job.name);
            assert!(
                close(got, *want),
                "{name} {inst} alone {got} vs SimGrid {want}"
            );
        }
    }
}

/// shared-link: two ping-pong jobs (20 round trips of 4 MB after 2e6 flops each, i.e. 40 ms
/// of compute at 1 Gflop/s) on disjoint node pairs. Every message crosses the 100 MB/s
/// backbone, the bottleneck, and the two jobs send at the same moments, so each gets half of
/// it: the communication part of each job (time minus 40 ms) takes just under twice as long
/// (latencies do not double). SimGrid: 3.623488897195 s together, 1.837566248598 s alone.
#[test]
fn shared_backbone_slowdown() {
    let dir = cases();
    let plat = platform(&dir.join("platform.xml"));
    let case = dir.join("shared-link");
    let specs = read_description(&case.join("description")).unwrap();
    let host = case.join("hostfile");
    let inputs = place_jobs(&specs, JobPlacement::Hostfile(&host), &plat).unwrap();
    let jobs: Vec<Job> = inputs.iter().map(|i| i.job()).collect();
    let report = run(&plat, &jobs);
    let alone = alone_times_secs(&plat, &jobs, &ReplayConfig::default()).unwrap();
    // 40 ms of compute does not slow down; the 1.7976 s of transfers alone take twice as long.
    let compute = 20.0 * 2e6 / 1e9;
    for (j, a) in report.jobs.iter().zip(&alone) {
        assert!(close(*a, 1.837566248598), "alone {a}");
        assert!(close(j.time_secs, 3.623488897195), "shared {}", j.time_secs);
        let comm_alone = a - compute;
        let comm_shared = j.time_secs - compute;
        // Latencies do not double, bandwidth shares do: the ratio is just under 2.
        let ratio = comm_shared / comm_alone;
        assert!(
            ratio > 1.99 && ratio < 2.0,
            "communication slowdown {ratio}"
        );
    }
}

/// The module doc's worked example, derived by hand: on one 1 Gflop/s single-core host, job A
/// computes 1e9 flops and job B computes 1e9 flops. Together they share the core (0.5 Gflop/s
/// each): both end at 2 s, each alone takes 1 s. With B delayed by 1e9 flops, A and B's delay
/// share the core until 2 s; B starts at 2 s and computes alone until 3 s.
#[test]
fn shared_core_and_start_delay_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let plat_path = dir.path().join("p.xml");
    std::fs::write(
        &plat_path,
        r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full"><host id="h" speed="1Gf"/></zone></platform>"#,
    )
    .unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, "0 init\n0 compute 1e9\n0 finalize\n").unwrap();
    let plat = platform(&plat_path);
    let src = TraceSource::Shared(trace);
    let h = plat.host_by_name("h").unwrap();
    let job = |name: &str, delay: f64| Job {
        name: name.into(),
        traces: &src,
        hosts: vec![h],
        start_delay_flops: delay,
    };
    let together = run(&plat, &[job("A", 0.0), job("B", 0.0)]);
    for j in &together.jobs {
        assert!(close(j.time_secs, 2.0), "{} {}", j.name, j.time_secs);
    }
    let alone = alone_times_secs(
        &plat,
        &[job("A", 0.0), job("B", 0.0)],
        &ReplayConfig::default(),
    )
    .unwrap();
    assert!(close(alone[0], 1.0) && close(alone[1], 1.0), "{alone:?}");
    let delayed = run(&plat, &[job("A", 0.0), job("B", 1e9)]);
    let (a, b) = (&delayed.jobs[0], &delayed.jobs[1]);
    assert!(close(a.end_secs, 2.0), "A ends {}", a.end_secs);
    assert!(close(b.start_secs, 2.0), "B starts {}", b.start_secs);
    assert!(close(b.end_secs, 3.0), "B ends {}", b.end_secs);
    assert!(close(b.time_secs, 1.0), "B takes {}", b.time_secs);
    // The delay is in no account of B's rank.
    assert_eq!(delayed.ranks[1].compute_secs, b.time_secs);
}

/// A job with a sub-communicator, keyed waits and rooted collectives, placed second (its ranks
/// shifted by 1) next to a job on another host that only computes, replays exactly as alone:
/// every rank's finish time bit for bit.
#[test]
fn second_job_with_subcommunicator_equals_alone() {
    let dir = cases();
    let plat = platform(&dir.join("platform.xml"));
    let mixed = TraceSource::open(&dir.join("mixed-comm/list.txt")).unwrap();
    let compute = TraceSource::open(&dir.join("compute/list.txt")).unwrap();
    let n = |i: u32| plat.host_by_name(&format!("n{i}")).unwrap();
    let m = Job {
        name: "M".into(),
        traces: &mixed,
        hosts: vec![n(0), n(1), n(2)],
        start_delay_flops: 0.0,
    };
    let alone = run(&plat, std::slice::from_ref(&m));
    let c = Job {
        name: "C".into(),
        traces: &compute,
        hosts: vec![n(5)],
        start_delay_flops: 0.0,
    };
    let both = run(&plat, &[c, m]);
    assert_eq!(both.jobs[1].first_rank, 1);
    for r in 0..3 {
        assert_eq!(
            both.ranks[r + 1].finish_secs.to_bits(),
            alone.ranks[r].finish_secs.to_bits(),
            "rank {r}"
        );
    }
    assert!(
        close(both.jobs[0].time_secs, 0.04),
        "compute job: 4e7 flops at 1 Gflop/s"
    );
}

fn bad(err: JobsError) -> (String, u32, String) {
    match err {
        JobsError::Bad { path, line, what } => (path, line, what),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn description_errors_name_the_line() {
    let p = Path::new("/x/desc");
    let (path, line, what) = bad(parse_description("A l.txt 2\nB l.txt\n", p).unwrap_err());
    assert_eq!((path.as_str(), line), ("/x/desc", 2));
    assert!(what.contains("found 2 field(s)"), "{what}");
    let (_, line, what) = bad(parse_description("# c\nA l.txt 0\n", p).unwrap_err());
    assert_eq!(line, 2);
    assert!(what.contains("ranks '0' is not an integer >= 1"), "{what}");
    let (_, line, what) = bad(parse_description("A l.txt 1 -5\n", p).unwrap_err());
    assert_eq!(line, 1);
    assert!(what.contains("delay_flops '-5'"), "{what}");
    let (_, line, what) = bad(parse_description("A l.txt 1\n\nA m.txt 2\n", p).unwrap_err());
    assert_eq!(line, 3);
    assert!(what.contains("described twice (first at line 1)"), "{what}");
    let specs = parse_description("A l.txt 2 1e9\n", p).unwrap();
    assert_eq!(specs[0].trace_list, PathBuf::from("/x/l.txt"));
    assert_eq!(specs[0].start_delay_flops, 1e9);
}

#[test]
fn deployment_errors_name_the_actor() {
    let dir = cases();
    let plat = platform(&dir.join("platform.xml"));
    let tmp = tempfile::tempdir().unwrap();
    let desc = tmp.path().join("description");
    std::fs::write(
        &desc,
        format!("A {} 3 0\n", dir.join("mixed/list.txt").display()),
    )
    .unwrap();
    let specs = read_description(&desc).unwrap();
    let actor = |rank: &str, delay: &str| {
        format!(
            "  <actor host=\"n0\" function=\"A\"><argument value=\"A\"/><argument value=\"{rank}\"/>\
             <argument value=\"{}\"/><argument value=\"{delay}\"/></actor>\n",
            dir.join("mixed/rank0.txt").display()
        )
    };
    let write = |body: String| {
        let dep = tmp.path().join("d.xml");
        std::fs::write(
            &dep,
            format!("<?xml version='1.0'?>\n<platform version=\"4.1\">\n{body}</platform>\n"),
        )
        .unwrap();
        dep
    };
    let dep = write(actor("0", "0") + &actor("0", "0"));
    let (_, line, what) =
        bad(place_jobs(&specs, JobPlacement::Deployment(&dep), &plat).unwrap_err());
    assert_eq!(line, 4);
    assert!(what.contains("deployed twice (first at line 3)"), "{what}");
    let dep = write(actor("0", "0") + &actor("1", "5"));
    let (_, line, what) =
        bad(place_jobs(&specs, JobPlacement::Deployment(&dep), &plat).unwrap_err());
    assert_eq!(line, 4);
    assert!(what.contains("share one delay"), "{what}");
    let dep = write(actor("0", "0") + &actor("1", "0"));
    let (_, _, what) = bad(place_jobs(&specs, JobPlacement::Deployment(&dep), &plat).unwrap_err());
    assert!(what.contains("rank 2 of instance 'A'"), "{what}");
    let dep = write(actor("3", "0"));
    let (_, line, what) =
        bad(place_jobs(&specs, JobPlacement::Deployment(&dep), &plat).unwrap_err());
    assert_eq!(line, 3);
    assert!(what.contains("not an integer in 0..3"), "{what}");
}
